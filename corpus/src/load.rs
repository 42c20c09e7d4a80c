//! Loading corpus files: parse, read every entry, check names are unique, resolve `atom:`
//! references. Every failure is a [`CorpusError`] naming file, entry and field.

use std::collections::BTreeMap;
use std::path::Path;

use toml::{Table, Value};

use crate::atom::Atom;
use crate::claim::{Claim, Operand};
use crate::embedded::FILES;
use crate::entry::Entry;
use crate::error::CorpusError;
use crate::real::RealLayout;
use crate::vector::Vector;

/// The corpus: every atom, claim and spec vector, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Corpus {
    /// The files read, relative to the corpus root, sorted.
    pub files: Vec<String>,
    /// Atoms.
    pub atoms: Vec<Atom>,
    /// Claims, their atom references resolved.
    pub claims: Vec<Claim>,
    /// Spec vectors.
    pub vectors: Vec<Vector>,
    /// Real layout strings (`real/*.toml`).
    pub reals: Vec<RealLayout>,
}

impl Corpus {
    /// The corpus embedded in the binary (`corpus/data`).
    pub fn embedded() -> Result<Corpus, CorpusError> {
        let files: Vec<(String, String)> = FILES
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        Corpus::from_texts(&files, &[])
    }

    /// Reads `(path, text)` pairs as one corpus; `atom:` references may also name atoms of
    /// `known` (e.g. the embedded corpus, when checking a file of one's own).
    pub fn from_texts(files: &[(String, String)], known: &[Atom]) -> Result<Corpus, CorpusError> {
        let mut corpus = Corpus::default();
        let mut sorted: Vec<&(String, String)> = files.iter().collect();
        sorted.sort();
        for (path, text) in sorted {
            corpus.read_file(path, text)?;
        }
        corpus.resolve(known)?;
        Ok(corpus)
    }

    /// Reads a directory (every `*.toml` below it) or a single file from disk; the embedded
    /// atoms stay available to `atom:` references of a single file.
    pub fn from_path(path: &Path) -> Result<Corpus, CorpusError> {
        let io = |p: &Path, e: std::io::Error| CorpusError::Io {
            file: p.display().to_string(),
            why: e.to_string(),
        };
        if path.is_dir() {
            let mut found = Vec::new();
            collect_toml(path, path, &mut found).map_err(|e| io(path, e))?;
            let mut files = Vec::new();
            for rel in found {
                let text = read_text(&path.join(&rel)).map_err(|e| io(&path.join(&rel), e))?;
                files.push((rel, text));
            }
            return Corpus::from_texts(&files, &[]);
        }
        let text = read_text(path).map_err(|e| io(path, e))?;
        let known = Corpus::embedded()?.atoms;
        Corpus::from_texts(&[(path.display().to_string(), text)], &known)
    }

    /// The atom named `name`.
    pub fn atom(&self, name: &str) -> Option<&Atom> {
        self.atoms.iter().find(|a| a.name == name)
    }

    fn read_file(&mut self, path: &str, text: &str) -> Result<(), CorpusError> {
        let table: Table = text
            .parse()
            .map_err(|e: toml::de::Error| CorpusError::Toml {
                file: path.to_string(),
                why: e.to_string().trim_end().to_string(),
            })?;
        for (key, value) in &table {
            let Value::Array(items) = value else {
                return Err(CorpusError::File {
                    file: path.to_string(),
                    why: format!("top-level `{key}` must be an array of tables ([[{key}]])"),
                });
            };
            for (i, item) in items.iter().enumerate() {
                let Some(t) = item.as_table() else {
                    return Err(CorpusError::File {
                        file: path.to_string(),
                        why: format!("item {} of `{key}` is not a table", i + 1),
                    });
                };
                let mut e = Entry::new(path, key, i + 1, t);
                match key.as_str() {
                    "atom" => self.atoms.push(Atom::read(&mut e)?),
                    "claim" => self.claims.push(Claim::read(&mut e)?),
                    "vector" => self.vectors.push(Vector::read(&mut e)?),
                    "real" => self.reals.push(RealLayout::read(&mut e)?),
                    // Instruction atoms for synthesis: read and validated by solver::synth::instr.
                    "instruction" => {}
                    other => {
                        return Err(CorpusError::File {
                            file: path.to_string(),
                            why: format!(
                                "unknown table [[{other}]] (expected atom, claim, vector or real)"
                            ),
                        })
                    }
                }
            }
        }
        self.files.push(path.to_string());
        Ok(())
    }

    /// Unique names; every `atom:` reference names a known atom.
    fn resolve(&mut self, known: &[Atom]) -> Result<(), CorpusError> {
        let mut own: BTreeMap<&str, &str> = BTreeMap::new();
        for a in &self.atoms {
            if let Some(first) = own.insert(&a.name, &a.file) {
                return Err(duplicate("atom", &a.file, &a.name, first));
            }
        }
        // The corpus's own atoms shadow known ones of the same name.
        let mut atoms: BTreeMap<&str, &Atom> = known.iter().map(|a| (a.name.as_str(), a)).collect();
        atoms.extend(self.atoms.iter().map(|a| (a.name.as_str(), a)));
        let mut names: BTreeMap<&str, &str> = BTreeMap::new();
        for c in &self.claims {
            if let Some(first) = names.insert(&c.name, &c.file) {
                return Err(duplicate("claim", &c.file, &c.name, first));
            }
        }
        let mut resolved = Vec::new();
        for c in &self.claims {
            let mut c = c.clone();
            resolve_operand(&mut c.left, "left", &c.file, &c.name, &atoms)?;
            if let Some(r) = c.right.as_mut() {
                resolve_operand(r, "right", &c.file, &c.name, &atoms)?;
            }
            resolved.push(c);
        }
        self.claims = resolved;
        Ok(())
    }
}

fn duplicate(kind: &str, file: &str, name: &str, first: &str) -> CorpusError {
    CorpusError::Field {
        file: file.to_string(),
        entry: format!("[[{kind}]] {name:?}"),
        field: "name".to_string(),
        why: format!("duplicate: already defined in {first}"),
    }
}

fn resolve_operand(
    o: &mut Operand,
    field: &str,
    file: &str,
    claim: &str,
    atoms: &BTreeMap<&str, &Atom>,
) -> Result<(), CorpusError> {
    let Some(name) = &o.atom else {
        return Ok(());
    };
    let a = atoms.get(name.as_str()).ok_or_else(|| CorpusError::Field {
        file: file.to_string(),
        entry: format!("[[claim]] {claim:?}"),
        field: field.to_string(),
        why: format!("no atom named {name:?}"),
    })?;
    o.text = a.layout.clone();
    o.tensor_shape = a.shape.clone();
    Ok(())
}

/// Paths of `*.toml` files below `dir`, relative to `root`, with `/` separators.
pub fn collect_toml(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            collect_toml(root, &p, out)?;
        } else if p.extension().is_some_and(|x| x == "toml") {
            let rel = p.strip_prefix(root).unwrap_or(&p);
            let parts: Vec<String> = rel
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
    Ok(())
}

/// Most bytes an input file (a corpus, rule, certificate, plan or TTGIR file) is read for: a
/// larger (or endless, `/dev/zero`) file is an error, not read whole.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The text of the file at `path`, read for at most [`MAX_FILE_BYTES`].
pub fn read_text(path: &Path) -> std::io::Result<String> {
    read_text_at_most(path, MAX_FILE_BYTES)
}

/// The text of the file at `path`, read for at most `max` bytes: more is an
/// [`std::io::ErrorKind::InvalidData`] error saying so, as is text that is not UTF-8.
pub fn read_text_at_most(path: &Path, max: u64) -> std::io::Result<String> {
    use std::io::Read;
    let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(max + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(invalid(format!(
            "more than {max} bytes; at most {max} are read"
        )));
    }
    String::from_utf8(bytes).map_err(|e| invalid(format!("not UTF-8 ({e})")))
}
