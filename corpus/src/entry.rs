//! One entry of a corpus file (a `[[atom]]`, `[[claim]]` or `[[vector]]` table) and typed
//! access to its fields, each failure a [`CorpusError::Field`] naming file, entry and field.
//! Every field an entry does not declare is an error too, so a misspelt key never passes
//! silently.

use std::collections::BTreeSet;

use layout::Layout;
use toml::{Table, Value};

use crate::error::CorpusError;

/// A table of a corpus file being read.
pub struct Entry<'a> {
    file: &'a str,
    label: String,
    table: &'a Table,
    used: BTreeSet<&'static str>,
}

impl<'a> Entry<'a> {
    /// The `index`-th (from 1) entry of the array `kind` in `file`.
    pub fn new(file: &'a str, kind: &str, index: usize, table: &'a Table) -> Entry<'a> {
        let name = table.get("name").and_then(Value::as_str);
        let label = match name {
            Some(n) => format!("[[{kind}]] #{index} {n:?}"),
            None => format!("[[{kind}]] #{index}"),
        };
        Entry {
            file,
            label,
            table,
            used: BTreeSet::new(),
        }
    }

    /// The file this entry is in.
    pub fn file(&self) -> &str {
        self.file
    }

    /// The error for `field` of this entry.
    pub fn error(&self, field: &str, why: impl Into<String>) -> CorpusError {
        CorpusError::Field {
            file: self.file.to_string(),
            entry: self.label.clone(),
            field: field.to_string(),
            why: why.into(),
        }
    }

    fn get(&mut self, field: &'static str) -> Option<&'a Value> {
        self.used.insert(field);
        self.table.get(field)
    }

    /// A required string.
    pub fn str(&mut self, field: &'static str) -> Result<String, CorpusError> {
        self.opt_str(field)?
            .ok_or_else(|| self.error(field, "missing (a string is required)"))
    }

    /// An optional string.
    pub fn opt_str(&mut self, field: &'static str) -> Result<Option<String>, CorpusError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(Value::String(_)) => Err(self.error(field, "is empty")),
            Some(v) => Err(self.error(field, format!("expected a string, found {}", v.type_str()))),
        }
    }

    /// An optional boolean.
    pub fn opt_bool(&mut self, field: &'static str) -> Result<Option<bool>, CorpusError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => Err(self.error(
                field,
                format!("expected true or false, found {}", v.type_str()),
            )),
        }
    }

    /// An optional list of integers.
    pub fn opt_ints(&mut self, field: &'static str) -> Result<Option<Vec<i64>>, CorpusError> {
        match self.get(field) {
            None => Ok(None),
            Some(v) => ints(v).map(Some).map_err(|why| self.error(field, why)),
        }
    }

    /// An optional list of `[lo, hi]` pairs.
    pub fn opt_pairs(
        &mut self,
        field: &'static str,
    ) -> Result<Option<Vec<(i64, i64)>>, CorpusError> {
        let Some(v) = self.get(field) else {
            return Ok(None);
        };
        let bad = |e: &Entry, why: String| e.error(field, why);
        let Value::Array(items) = v else {
            return Err(bad(
                self,
                format!("expected a list of [lo, hi] pairs, found {}", v.type_str()),
            ));
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match ints(item).map_err(|why| bad(self, format!("item {i}: {why}")))?[..] {
                [lo, hi] => out.push((lo, hi)),
                _ => return Err(bad(self, format!("item {i}: expected [lo, hi]"))),
            }
        }
        Ok(Some(out))
    }

    /// An optional array of tables.
    pub fn opt_tables(&mut self, field: &'static str) -> Result<Vec<&'a Table>, CorpusError> {
        match self.get(field) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.as_table()
                        .ok_or_else(|| self.error(field, format!("item {i} is not a table")))
                })
                .collect(),
            Some(v) => Err(self.error(
                field,
                format!("expected a list of tables, found {}", v.type_str()),
            )),
        }
    }

    /// An optional table of `key = integer`.
    pub fn opt_int_map(&mut self, field: &'static str) -> Result<Vec<(String, i64)>, CorpusError> {
        match self.get(field) {
            None => Ok(Vec::new()),
            Some(Value::Table(t)) => t
                .iter()
                .map(|(k, v)| {
                    v.as_integer()
                        .map(|n| (k.clone(), n))
                        .ok_or_else(|| self.error(field, format!("`{k}` is not an integer")))
                })
                .collect(),
            Some(v) => Err(self.error(field, format!("expected a table, found {}", v.type_str()))),
        }
    }

    /// The names of fields starting with `prefix` (views such as `elements16`), sorted.
    pub fn fields_with_prefix(&self, prefix: &str) -> Vec<String> {
        self.table
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect()
    }

    /// A string field named at run time; pass its name to [`Entry::finish_with`].
    pub fn dynamic_str(&mut self, field: &str) -> Result<String, CorpusError> {
        let Some(key) = self.table.keys().find(|k| *k == field) else {
            return Err(self.error(field, "missing"));
        };
        match &self.table[key] {
            Value::String(s) => Ok(s.clone()),
            v => Err(self.error(field, format!("expected a string, found {}", v.type_str()))),
        }
    }

    /// Checks that `text` is a layout (with the tensor shape Triton attributes need).
    pub fn check_layout(
        &self,
        field: &str,
        text: &str,
        shape: Option<&[i64]>,
    ) -> Result<Layout, CorpusError> {
        Layout::parse(text, shape).map_err(|e| self.error(field, format!("{text:?}: {e}")))
    }

    /// Fails on any field not read (nor in `also`, fields read under run-time names).
    pub fn finish_with(&self, also: &[String]) -> Result<(), CorpusError> {
        for key in self.table.keys() {
            if !self.used.contains(key.as_str()) && !also.contains(key) {
                return Err(self.error(key, "unknown field"));
            }
        }
        Ok(())
    }
}

fn ints(v: &Value) -> Result<Vec<i64>, String> {
    let Value::Array(items) = v else {
        return Err(format!(
            "expected a list of integers, found {}",
            v.type_str()
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_integer()
                .ok_or_else(|| format!("item {i} is {}, not an integer", x.type_str()))
        })
        .collect()
}
