//! A plain-text table with aligned columns, also serializable to JSON (one object per row).

use serde_json::{Map, Value};

/// Rows of cells under headers.
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column headers.
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells are empty).
    pub fn row(&mut self, mut cells: Vec<String>) {
        cells.resize(self.headers.len(), String::new());
        self.rows.push(cells);
    }

    /// The headers.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    /// The rows.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// Lines of text: headers, then rows, columns padded to their widest cell.
    pub fn render(&self) -> Vec<String> {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let fmt = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            padded.join("  ").trim_end().to_string()
        };
        let mut out = vec![fmt(&self.headers)];
        out.extend(self.rows.iter().map(|r| fmt(r)));
        out
    }

    /// One JSON object per row, keyed by header.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.rows
                .iter()
                .map(|r| {
                    let m: Map<String, Value> = self
                        .headers
                        .iter()
                        .zip(r)
                        .map(|(h, c)| (h.clone(), Value::String(c.clone())))
                        .collect();
                    Value::Object(m)
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn columns_align_to_the_widest_cell() {
        let mut t = Table::new(&["kind", "n"]);
        t.row(vec!["claim".into(), "207".into()]);
        t.row(vec!["atom".into()]);
        assert_eq!(t.render(), ["kind   n", "claim  207", "atom"]);
        assert_eq!(t.to_json()[0]["n"], "207");
    }
}
