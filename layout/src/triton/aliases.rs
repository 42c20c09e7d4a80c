//! Attribute aliases of a TTGIR file: `#blocked = #ttg.blocked<{...}>` lines, as MLIR prints
//! them at the top of a module, so a layout can be named the way the file names it.
//!
//! [`Aliases::parse`] reads every `#name = value` definition (a value may continue over
//! several lines while its brackets are open); [`Aliases::expand`] replaces each `#name` in a
//! text by its definition, recursively (an alias may use others, e.g. `parent = #mma`), and
//! leaves dialect attributes (`#ttg.blocked<..>`) alone. [`Aliases::shape_of`] finds the shape
//! of the first tensor or memdesc type of the file whose encoding is that alias.
//!
//! Example: with `#mma = #ttg.nvidia_mma<{..}>` and `#dot = #ttg.dot_op<{opIdx = 0, parent =
//! #mma, kWidth = 2}>`, expanding `#dot` gives the `dot_op` text with the `nvidia_mma`
//! attribute in place of `#mma`.

use std::collections::BTreeMap;

use crate::error::{LayoutError, Result};

/// Expansion stops past this many nested aliases (a cycle is reported before).
const MAX_DEPTH: usize = 32;
/// Expanded text beyond this many bytes is refused (aliases used many times over).
const MAX_EXPANDED: usize = 1 << 20;

/// One alias definition: its value as written and the 1-based line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    /// The value text (`#ttg.blocked<{...}>`), whitespace-trimmed.
    pub value: String,
    /// Line of the definition in the file, from 1.
    pub line: usize,
}

/// The aliases defined in one file, by name (without `#`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Aliases {
    defs: BTreeMap<String, Alias>,
    /// Names a split lit file (`// -----` sections) defines differently in two sections, with
    /// both lines: using one is an error, since which definition is meant is not known.
    ambiguous: BTreeMap<String, (usize, usize)>,
    /// The file text, for shape lookup.
    text: String,
    /// The lines that are no alias definition, joined by newlines.
    body: String,
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.'
}

/// The alias name starting at byte `i` of `s` (just after a `#`), if any.
fn name_at(s: &str, i: usize) -> &str {
    let rest = &s[i..];
    let first_ok = rest
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok {
        return "";
    }
    let end = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
    &rest[..end]
}

/// Whether a name is a dialect attribute (`ttg.blocked`) rather than an alias.
fn is_dialect(name: &str) -> bool {
    ["ttg.", "triton_gpu.", "ttng.", "tt.", "amdg.", "amdgpu."]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Net bracket depth change of a line (`<`, `{`, `[`, `(` open; their pairs close; `->` is no
/// bracket).
fn depth_change(line: &str) -> i64 {
    let mut d = 0i64;
    let mut prev = ' ';
    for c in line.chars() {
        match c {
            '<' | '{' | '[' | '(' => d += 1,
            '>' if prev != '-' => d -= 1,
            '}' | ']' | ')' => d -= 1,
            _ => {}
        }
        prev = c;
    }
    d
}

impl Aliases {
    /// Reads the alias definitions of a TTGIR file (or snippet). A name defined twice in one
    /// module is an error naming both lines. A lit test split into modules by `// -----` lines
    /// may define a name again in another module: the same definition is one alias; a
    /// different one makes the name ambiguous, an error only where it is used.
    pub fn parse(text: &str) -> Result<Aliases> {
        let mut defs: BTreeMap<String, Alias> = BTreeMap::new();
        let mut ambiguous: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        // The `// -----` section of each definition.
        let mut section_of: BTreeMap<String, usize> = BTreeMap::new();
        let mut section = 0usize;
        let lines: Vec<&str> = text.lines().collect();
        let mut body: Vec<&str> = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i].trim_start();
            let start = i;
            i += 1;
            if line.trim_end() == "// -----" {
                section += 1;
                continue;
            }
            let Some(rest) = line.strip_prefix('#') else {
                body.push(lines[start]);
                continue;
            };
            let name = name_at(rest, 0);
            if name.is_empty() || is_dialect(name) {
                body.push(lines[start]);
                continue;
            }
            let Some(value) = rest[name.len()..].trim_start().strip_prefix('=') else {
                body.push(lines[start]);
                continue;
            };
            let mut value = value.trim().to_string();
            let mut depth = depth_change(&value);
            // A value continues while its brackets are open (at most 4096 lines).
            while depth > 0 && i < lines.len() && i - start < 4096 {
                value.push(' ');
                value.push_str(lines[i].trim());
                depth += depth_change(lines[i]);
                i += 1;
            }
            if let Some(old) = defs.get(name) {
                if section_of.get(name) == Some(&section) {
                    return Err(LayoutError::invalid(
                        format!("alias #{name} (line {})", start + 1),
                        format!("it is already defined on line {}", old.line),
                    ));
                }
                if old.value != value {
                    ambiguous
                        .entry(name.to_string())
                        .or_insert((old.line, start + 1));
                }
                section_of.insert(name.to_string(), section);
                continue;
            }
            section_of.insert(name.to_string(), section);
            defs.insert(
                name.to_string(),
                Alias {
                    value,
                    line: start + 1,
                },
            );
        }
        Ok(Aliases {
            defs,
            ambiguous,
            text: text.to_string(),
            body: body.join("\n"),
        })
    }

    /// The text's lines that are no alias definition: in a pasted snippet (`#shared = ..` lines,
    /// then a type using `#shared`), the part that uses the aliases.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// A snippet pasted with the definitions of the aliases it uses, `#shared = #ttg..<..>`
    /// lines then a type or attribute naming `#shared`: the snippet with its aliases replaced.
    /// `None` when `text` defines no alias or has nothing besides its definitions.
    pub fn expand_pasted(text: &str) -> Result<Option<String>> {
        if !text.contains('=') || !text.trim_start().starts_with('#') {
            return Ok(None);
        }
        let aliases = Aliases::parse(text)?;
        if aliases.defs.is_empty() || aliases.body.trim().is_empty() {
            return Ok(None);
        }
        aliases.expand(aliases.body.trim()).map(Some)
    }

    /// The definition of `name` (without `#`).
    pub fn get(&self, name: &str) -> Option<&Alias> {
        self.defs.get(name)
    }

    /// Every alias name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.defs.keys().map(String::as_str)
    }

    /// `text` with every alias reference replaced by its (expanded) definition. An unknown
    /// name is an error naming it, where it is used, and the aliases the file defines.
    pub fn expand(&self, text: &str) -> Result<String> {
        let mut stack = Vec::new();
        self.expand_in(text, "the layout argument", &mut stack)
    }

    fn expand_in(&self, text: &str, place: &str, stack: &mut Vec<String>) -> Result<String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('#') {
            out.push_str(&rest[..at]);
            let name = name_at(rest, at + 1);
            if name.is_empty() || is_dialect(name) {
                out.push('#');
                rest = &rest[at + 1..];
                continue;
            }
            let Some(def) = self.defs.get(name) else {
                return Err(self.missing(name, place));
            };
            if let Some((first, second)) = self.ambiguous.get(name) {
                return Err(LayoutError::invalid(
                    format!("#{name} in {place}"),
                    format!(
                        "the file's `// -----` sections define it differently (lines {first} and \
                         {second}); pass the section that defines the one you mean"
                    ),
                ));
            }
            if stack.iter().any(|n| n == name) {
                return Err(LayoutError::invalid(
                    format!("alias #{name} (line {})", def.line),
                    format!("it refers to itself: #{} -> #{name}", stack.join(" -> #")),
                ));
            }
            if stack.len() >= MAX_DEPTH {
                return Err(LayoutError::invalid(
                    format!("alias #{name} (line {})", def.line),
                    format!("aliases nest more than {MAX_DEPTH} deep"),
                ));
            }
            stack.push(name.to_string());
            let inner = self.expand_in(
                &def.value,
                &format!("alias #{name} (line {})", def.line),
                stack,
            )?;
            stack.pop();
            out.push_str(&inner);
            if out.len() > MAX_EXPANDED {
                return Err(LayoutError::invalid(
                    format!("alias #{name}"),
                    format!("its expansion is longer than {MAX_EXPANDED} bytes"),
                ));
            }
            rest = &rest[at + 1 + name.len()..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn missing(&self, name: &str, place: &str) -> LayoutError {
        let known: Vec<String> = self.defs.keys().map(|n| format!("#{n}")).collect();
        let list = if known.is_empty() {
            "the file defines no aliases".to_string()
        } else {
            format!("the file defines {}", known.join(", "))
        };
        LayoutError::invalid(
            format!("#{name} in {place}"),
            format!("no alias of that name; {list}"),
        )
    }

    /// The shape of the first `tensor<AxBx..xT, #name>` or `memdesc<AxBx..xT, #name..>` type
    /// of the file whose encoding is `#name`.
    pub fn shape_of(&self, name: &str) -> Option<Vec<i64>> {
        let needle = format!("#{name}");
        for opener in ["tensor<", "memdesc<"] {
            let mut from = 0;
            while let Some(at) = self.text[from..].find(opener) {
                let body = &self.text[from + at + opener.len()..];
                from += at + opener.len();
                let Some(comma) = body.find(',') else {
                    continue;
                };
                let enc = body[comma + 1..].trim_start();
                let after = enc.get(needle.len()..).and_then(|s| s.chars().next());
                if !enc.starts_with(&needle) || after.is_some_and(is_name_char) {
                    continue;
                }
                let dims: Vec<&str> = body[..comma].split('x').collect();
                let shape: Vec<i64> = dims
                    .iter()
                    .map_while(|d| d.trim().parse::<i64>().ok())
                    .collect();
                if !shape.is_empty() && shape.len() + 1 == dims.len() {
                    return Some(shape);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 16], isTransposed = true}>
#dotop = #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth=4}>
module attributes {\"ttg.num-warps\" = 4 : i32} {
  tt.func @f(%a: tensor<32x64xf16, #dotop>, %b: tensor<128x16xf32, #blocked>) {
    tt.return
  }
}
";

    #[test]
    fn expand_replaces_aliases_recursively() {
        let a = Aliases::parse(FILE).unwrap();
        assert_eq!(a.get("dotop").unwrap().line, 3);
        let dot = a.expand("#dotop").unwrap();
        assert!(dot.starts_with("#ttg.dot_op<{opIdx = 0, parent = #ttg.amd_mfma<{versionMajor"));
        let sliced = a
            .expand("#ttg.slice<{dim = 0, parent = #blocked}>")
            .unwrap();
        assert!(
            sliced.contains("parent = #ttg.blocked<{sizePerThread"),
            "{sliced}"
        );
    }

    #[test]
    fn shape_of_reads_the_tensor_type_using_the_alias() {
        let a = Aliases::parse(FILE).unwrap();
        assert_eq!(a.shape_of("dotop"), Some(vec![32, 64]));
        assert_eq!(a.shape_of("blocked"), Some(vec![128, 16]));
        assert_eq!(a.shape_of("mma"), None);
    }

    #[test]
    fn missing_and_cyclic_aliases_are_errors_naming_them() {
        let a = Aliases::parse(FILE).unwrap();
        let e = a.expand("#blocked2").unwrap_err().to_string();
        assert!(
            e.contains("#blocked2") && e.contains("#blocked, #dotop, #mma"),
            "{e}"
        );
        let bad = Aliases::parse("#a = #ttg.slice<{dim = 0, parent = #b}>\n\n#b = #ttg.slice<{dim = 0, parent = #nope}>\n").unwrap();
        let e = bad.expand("#a").unwrap_err().to_string();
        assert!(e.contains("#nope") && e.contains("line 3"), "{e}");
        let cyc = Aliases::parse(
            "#a = #ttg.slice<{dim = 0, parent = #b}>\n#b = #ttg.slice<{dim = 0, parent = #a}>\n",
        )
        .unwrap();
        let e = cyc.expand("#a").unwrap_err().to_string();
        assert!(e.contains("refers to itself"), "{e}");
        let twice = Aliases::parse("#a = #ttg.x<{}>\n#a = #ttg.y<{}>\n")
            .unwrap_err()
            .to_string();
        assert!(
            twice.contains("line 1") && twice.contains("line 2"),
            "{twice}"
        );
    }

    /// A lit test split by `// -----` may define a name in each module: the same definition is
    /// one alias; different ones are an error where the name is used, naming both lines.
    #[test]
    fn split_lit_files_may_repeat_a_name_across_sections() {
        let text = "#b = #ttg.x<{}>\n#m = #ttg.m<{}>\n// -----\n#b = #ttg.y<{}>\n#m = #ttg.m<{}>\n";
        let a = Aliases::parse(text).unwrap();
        assert_eq!(a.expand("#m").unwrap(), "#ttg.m<{}>");
        let e = a.expand("#b").unwrap_err().to_string();
        assert!(e.contains("lines 1 and 4") && e.contains("-----"), "{e}");
        // Within one module a second definition is still an error.
        let e = Aliases::parse("// -----\n#b = #ttg.x<{}>\n#b = #ttg.x<{}>\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("line 3"), "{e}");
    }

    #[test]
    fn a_value_may_continue_over_lines() {
        let a = Aliases::parse("#b = #ttg.blocked<{sizePerThread = [1],\n    threadsPerWarp = [32], warpsPerCTA = [4],\n    order = [0]}>\n").unwrap();
        assert_eq!(
            a.get("b").unwrap().value,
            "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
        );
    }

    #[test]
    fn expansion_blowup_is_refused() {
        let mut text = String::from("#a0 = #ttg.x<{}>\n");
        for i in 1..30 {
            text += &format!("#a{i} = #ttg.p<{{a = #a{0}, b = #a{0}}}>\n", i - 1);
        }
        let a = Aliases::parse(&text).unwrap();
        assert!(a
            .expand("#a29")
            .unwrap_err()
            .to_string()
            .contains("longer than"));
    }
}
