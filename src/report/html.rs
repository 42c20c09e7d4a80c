//! The HTML report of `laycert verify --report DIR`: `DIR/index.html` with the summary table
//! and one row per check (verdicts, deciders, time, source, evidence), each beside pictures of
//! its layouts; pictures are SVG files under `DIR/pictures/`, one per distinct layout,
//! drawn when the tile has at most [`MAX_REPORT_CELLS`] cells.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::io;
use std::path::{Path, PathBuf};

use layout::Layout;

use super::picture::picture;
use super::svg::{escape, render};
use super::table::Table;
use crate::cli::verify::check::{Check, Subject};

/// Largest tile drawn in the report (larger ones are named, not drawn).
pub const MAX_REPORT_CELLS: i64 = 1024;

const STYLE: &str = "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}\
td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}\
tr.fail{background:#fdd}code{font-size:90%}figure{display:inline-block;margin:4px}\
figcaption{font-size:80%;max-width:40em}img{max-width:42em}";

/// Creates the report's directories (`dir` and its `pictures`), so that a path that cannot hold
/// the report is refused before the run it reports on; returns the pictures' directory.
pub fn prepare(dir: &Path) -> io::Result<PathBuf> {
    let pictures = dir.join("pictures");
    std::fs::create_dir_all(&pictures)?;
    Ok(pictures)
}

/// Writes the report; returns the path of `index.html`.
pub fn write(dir: &Path, about: &str, summary: &Table, checks: &[Check]) -> io::Result<PathBuf> {
    let pictures = prepare(dir)?;
    let mut drawn: BTreeMap<Subject, Result<String, String>> = BTreeMap::new();
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>laycert verify</title>\
         <style>{STYLE}</style></head><body>\n<h1>laycert verify</h1>\n<p>{}</p>\n",
        escape(about)
    );
    let failed = checks.iter().filter(|c| !c.passed()).count();
    let _ = writeln!(
        html,
        "<p><b>{} passed, {failed} failed</b></p>",
        checks.len() - failed
    );
    html += &table_html(summary);
    html += "<h2>Checks</h2>\n<table>\n<tr><th>status</th><th>check</th><th>verdict</th>\
             <th>pictures</th></tr>\n";
    for c in checks {
        let mut figures = String::new();
        for s in &c.subjects {
            let key = Subject {
                role: String::new(),
                ..s.clone()
            };
            let next = drawn.len();
            let entry = drawn.entry(key).or_insert_with(|| draw(s, &pictures, next));
            let caption = format!("{}: <code>{}</code>", escape(&s.role), escape(&s.text));
            let _ = match entry {
                Ok(file) => write!(
                    figures,
                    "<figure><img src=\"pictures/{file}\" loading=\"lazy\" alt=\"{}\">\
                     <figcaption>{caption}</figcaption></figure>",
                    escape(&s.text)
                ),
                Err(why) => write!(
                    figures,
                    "<figure><figcaption>{caption} (not drawn: {})</figcaption></figure>",
                    escape(why)
                ),
            };
        }
        let _ = writeln!(
            html,
            "<tr class=\"{}\"><td>{}</td><td>{} <b>{}</b><br><small>{}</small></td>\
             <td>expected {}<br>got <b>{}</b><br><small>{} &middot; {} us{}</small></td>\
             <td>{figures}</td></tr>",
            if c.passed() { "ok" } else { "fail" },
            if c.passed() { "ok" } else { "FAIL" },
            c.kind,
            escape(&c.name),
            escape(&c.source),
            escape(&c.expected),
            escape(&c.got),
            escape(&c.deciders.join(", ")),
            c.micros,
            c.detail
                .as_ref()
                .map(|d| format!("<br>{}", escape(d)))
                .unwrap_or_default(),
        );
    }
    html += "</table>\n</body></html>\n";
    let index = dir.join("index.html");
    std::fs::write(&index, html)?;
    Ok(index)
}

fn table_html(t: &Table) -> String {
    let mut s = String::from("<table>\n<tr>");
    for h in t.headers() {
        let _ = write!(s, "<th>{}</th>", escape(h));
    }
    s += "</tr>\n";
    for r in t.rows() {
        s += "<tr>";
        for c in r {
            let _ = write!(s, "<td>{}</td>", escape(c));
        }
        s += "</tr>\n";
    }
    s + "</table>\n"
}

/// Draws one subject into `pictures/pNNNN.svg`; the file name, or why it is not drawn.
fn draw(s: &Subject, pictures: &Path, n: usize) -> Result<String, String> {
    let l = Layout::parse(&s.text, s.tensor_shape.as_deref()).map_err(|e| e.to_string())?;
    let shape = s
        .shape
        .clone()
        .filter(|_| !matches!(l, Layout::Tv(_) | Layout::Linear(_)));
    let cells = match &l {
        Layout::Tv(tv) => tv.tile().iter().product(),
        Layout::Linear(f) => f.outs().iter().map(|o| o.size()).product(),
        other => shape
            .as_ref()
            .map(|s| s.iter().product())
            .unwrap_or_else(|| other.domain_size()),
    };
    if cells > MAX_REPORT_CELLS {
        return Err(format!(
            "{cells} cells, the report draws at most {MAX_REPORT_CELLS}"
        ));
    }
    let grid = picture(&l, shape.as_deref(), &s.text).map_err(|e| e.to_string())?;
    let file = format!("p{n:04}.svg");
    std::fs::write(pictures.join(&file), render(&grid)).map_err(|e| e.to_string())?;
    Ok(file)
}
