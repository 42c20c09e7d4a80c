//! Rule files (`corpus/rules/*.rules`, compiled in): every rule of the sound files must be
//! PROVED and every rule of `unsound/` REFUTED, by `certify::rules` (bounded proofs, exhaustive
//! over the parameter grid or z3). With a PATH, the `*.rules` files below it are used instead
//! (a rule is expected REFUTED when its file lies in a directory named `unsound`).

use std::path::Path;
use std::time::Instant;

use certify::rules::{parse_source, prove_rule, Options, Rule};

use super::check::{Check, Suite};

/// The embedded rule files: `(path relative to corpus/, text)`, sorted by path.
pub const FILES: &[(&str, &str)] = &[
    (
        "rules/axe.rules",
        include_str!("../../../corpus/rules/axe.rules"),
    ),
    (
        "rules/cute.rules",
        include_str!("../../../corpus/rules/cute.rules"),
    ),
    (
        "rules/f2.rules",
        include_str!("../../../corpus/rules/f2.rules"),
    ),
    (
        "rules/swizzle.rules",
        include_str!("../../../corpus/rules/swizzle.rules"),
    ),
    (
        "rules/unsound/f2_wrong.rules",
        include_str!("../../../corpus/rules/unsound/f2_wrong.rules"),
    ),
    (
        "rules/unsound/wrong.rules",
        include_str!("../../../corpus/rules/unsound/wrong.rules"),
    ),
];

/// One rule to prove, or a file that does not parse (a failed check naming it).
enum Item {
    Rule {
        file: String,
        rule: Box<Rule>,
        expect: &'static str,
    },
    Broken {
        file: String,
        why: String,
    },
}

/// The rules of some files.
pub struct Rules {
    items: Vec<Item>,
}

impl Rules {
    /// From `(name, text)` pairs; a file is unsound when a directory of its path is `unsound`.
    pub fn new(files: &[(String, String)]) -> Rules {
        let mut items = Vec::new();
        for (name, text) in files {
            let unsound = Path::new(name)
                .components()
                .any(|c| c.as_os_str() == "unsound");
            let expect = if unsound { "REFUTED" } else { "PROVED" };
            match parse_source(name, text) {
                Ok(f) => items.extend(f.rules.into_iter().map(|rule| Item::Rule {
                    file: name.clone(),
                    rule: Box::new(rule),
                    expect,
                })),
                Err(e) => items.push(Item::Broken {
                    file: name.clone(),
                    why: e.to_string(),
                }),
            }
        }
        Rules { items }
    }

    /// The embedded rule files.
    pub fn embedded() -> Rules {
        let files: Vec<(String, String)> = FILES
            .iter()
            .map(|(n, t)| (format!("corpus/{n}"), t.to_string()))
            .collect();
        Rules::new(&files)
    }

    /// The `*.rules` files at or below `path` (sorted), or none.
    pub fn from_path(path: &Path) -> std::io::Result<Rules> {
        let mut found = Vec::new();
        collect(path, &mut found)?;
        found.sort();
        let files = found
            .into_iter()
            .map(|p| Ok((p.display().to_string(), corpus::read_text(&p)?)))
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(Rules::new(&files))
    }
}

fn collect(path: &Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    if path.is_dir() {
        for entry in std::fs::read_dir(path)? {
            collect(&entry?.path(), out)?;
        }
    } else if path.extension().is_some_and(|e| e == "rules") {
        out.push(path.to_path_buf());
    }
    Ok(())
}

impl Suite for Rules {
    fn kind(&self) -> &'static str {
        "rule"
    }

    fn len(&self) -> usize {
        self.items.len()
    }

    fn run(&self, i: usize) -> Check {
        let t = Instant::now();
        let (name, source, expected, got, detail, deciders) = match &self.items[i] {
            Item::Broken { file, why } => (
                file.clone(),
                file.clone(),
                "parses".to_string(),
                "parse error".to_string(),
                Some(why.clone()),
                vec![],
            ),
            Item::Rule { file, rule, expect } => {
                let r = prove_rule(rule, &Options::default());
                let detail = (r.word() != "PROVED").then(|| r.line());
                // The decider's name only (`exhaustive`, `z3`); the details are in `prove`.
                let method = r
                    .method
                    .iter()
                    .filter_map(|m| m.split_whitespace().next())
                    .map(str::to_string)
                    .collect();
                (
                    rule.name.clone(),
                    file.clone(),
                    expect.to_string(),
                    r.word().to_string(),
                    detail,
                    method,
                )
            }
        };
        Check {
            kind: self.kind(),
            name,
            source,
            expected,
            got,
            detail,
            deciders,
            micros: t.elapsed().as_micros(),
            subjects: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded list names exactly the `*.rules` files under `corpus/rules`.
    #[test]
    fn embedded_list_matches_the_directory() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
        let mut found = Vec::new();
        collect(&root.join("rules"), &mut found).unwrap();
        let mut names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        names.sort();
        let listed: Vec<String> = FILES.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(names, listed);
        for (n, text) in FILES {
            assert_eq!(std::fs::read_to_string(root.join(n)).unwrap(), *text, "{n}");
        }
    }

    #[test]
    fn a_broken_rule_file_is_a_failed_check_naming_it() {
        let r = Rules::new(&[("x/bad.rules".into(), "rule".into())]);
        let c = r.run(0);
        assert!(!c.passed());
        assert_eq!(c.name, "x/bad.rules");
    }
}
