//! SVG drawing of a [`Grid`]: a title, column and row indices, one rectangle per cell with its
//! text lines, the colour of its thread (8 colours, as CuTe's `print_latex`), bank (32 hues)
//! or offset, a red border on marked cells, and notes underneath. Plain SVG 1.1 (rectangles
//! and text only) so any renderer (browsers, `rsvg-convert`) draws it.

use std::fmt::Write;

use super::picture::{Colour, Grid};

/// The colours CuTe's `print_latex` gives threads `t % 8`.
const THREAD_COLOURS: [(u8, u8, u8); 8] = [
    (175, 175, 255),
    (175, 255, 175),
    (255, 255, 175),
    (255, 175, 175),
    (210, 210, 255),
    (210, 255, 210),
    (255, 255, 210),
    (255, 210, 210),
];

const LINE_HEIGHT: usize = 12;
const CHAR_WIDTH: usize = 7;
const MARGIN: usize = 36;

/// Escapes text for XML.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn fill(c: Colour) -> String {
    match c {
        Colour::Thread(t) => {
            let (r, g, b) = THREAD_COLOURS[t.rem_euclid(8) as usize];
            format!("#{r:02x}{g:02x}{b:02x}")
        }
        Colour::Offset(o) => {
            let (r, g, b) = THREAD_COLOURS[o.rem_euclid(8) as usize];
            format!("#{r:02x}{g:02x}{b:02x}")
        }
        Colour::Bank(b) => hsl(b.rem_euclid(32) as f64 * 360.0 / 32.0, 0.65, 0.78),
    }
}

fn hsl(h: f64, s: f64, l: f64) -> String {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let x = c * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
    let m = l - c / 2.0;
    let (r, g, b) = match (h / 60.0) as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let byte = |v: f64| ((v + m) * 255.0).round() as u8;
    format!("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b))
}

/// The SVG document of `g`.
pub fn render(g: &Grid) -> String {
    let widest = g
        .cells
        .iter()
        .flatten()
        .flat_map(|c| c.lines.iter().map(|l| l.chars().count()))
        .max()
        .unwrap_or(1);
    let tallest = g
        .cells
        .iter()
        .flatten()
        .map(|c| c.lines.len())
        .max()
        .unwrap_or(1);
    let cw = (widest * CHAR_WIDTH + 8).max(28);
    let ch = tallest * LINE_HEIGHT + 8;
    let top = MARGIN + 16;
    let grid_w = g.cols * cw;
    let notes_h = (g.notes.len() + 1) * 16;
    let width = (MARGIN + grid_w + 16).max(
        g.notes
            .iter()
            .chain(std::iter::once(&g.title))
            .map(|n| n.chars().count() * CHAR_WIDTH + 2 * MARGIN)
            .max()
            .unwrap_or(0),
    );
    let height = top + g.rows * ch + notes_h + 8;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, monospace" font-size="10">"##
    );
    let _ = writeln!(
        s,
        r##"<rect width="{width}" height="{height}" fill="white"/>"##
    );
    let _ = writeln!(
        s,
        r##"<text x="{MARGIN}" y="18" font-size="13">{}</text>"##,
        escape(&g.title)
    );
    for c in 0..g.cols {
        let x = MARGIN + c * cw + cw / 2;
        let _ = writeln!(
            s,
            r##"<text x="{x}" y="{}" text-anchor="middle" fill="#555">{c}</text>"##,
            top - 4
        );
    }
    for r in 0..g.rows {
        let y = top + r * ch + ch / 2 + 4;
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{y}" text-anchor="end" fill="#555">{r}</text>"##,
            MARGIN - 4
        );
    }
    for (i, cell) in g.cells.iter().enumerate() {
        let (x, y) = (MARGIN + (i % g.cols) * cw, top + (i / g.cols) * ch);
        let Some(cell) = cell else {
            let _ = writeln!(
                s,
                r##"<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="#eeeeee" stroke="black" stroke-width="0.5"/>"##
            );
            continue;
        };
        let (stroke, sw) = if cell.marked {
            ("#d00000", 2.5)
        } else {
            ("black", 0.5)
        };
        let _ = writeln!(
            s,
            r##"<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{}" stroke="{stroke}" stroke-width="{sw}"/>"##,
            fill(cell.colour)
        );
        let first = y + (ch - cell.lines.len() * LINE_HEIGHT) / 2 + LINE_HEIGHT - 2;
        for (k, line) in cell.lines.iter().enumerate() {
            let _ = writeln!(
                s,
                r##"<text x="{}" y="{}" text-anchor="middle">{}</text>"##,
                x + cw / 2,
                first + k * LINE_HEIGHT,
                escape(line)
            );
        }
    }
    for (k, note) in g.notes.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<text x="{MARGIN}" y="{}" fill="#333">{}</text>"##,
            top + g.rows * ch + 18 + k * 16,
            escape(note)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use layout::Layout;

    use super::*;
    use crate::report::picture::{bank_map, picture, Access};

    fn sm80_a() -> String {
        let l = Layout::parse("((4,8),(2,2,2)):((32,1),(16,8,128)) -> (16,16)", None).unwrap();
        render(&picture(&l, None, "SM80 16x8x16 A").unwrap())
    }

    #[test]
    fn svg_has_one_rectangle_per_cell_and_escapes_text() {
        let svg = sm80_a();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert_eq!(svg.matches("<rect ").count(), 1 + 16 * 16);
        assert!(svg.contains(">T0</text>") && svg.contains(">V7</text>"));
        assert_eq!(escape("Sw<3,4,3> & o"), "Sw&lt;3,4,3&gt; &amp; o");
        assert_eq!(svg, sm80_a(), "deterministic");
    }

    #[test]
    fn bank_colours_are_distinct_per_bank() {
        let colours: std::collections::BTreeSet<String> =
            (0..32).map(|b| fill(Colour::Bank(b))).collect();
        assert_eq!(colours.len(), 32);
    }

    /// Renders real SVGs to PNG with `rsvg-convert` (Debian: librsvg2-bin) when installed.
    #[test]
    fn svg_renders_to_png_with_rsvg_convert() {
        if Command::new("rsvg-convert")
            .arg("--version")
            .output()
            .is_err()
        {
            // Straight to stderr, past the test harness's capture, so the skip is visible.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"SKIP svg_renders_to_png_with_rsvg_convert: rsvg-convert not installed\n",
            );
            return;
        }
        let dir = std::env::temp_dir().join(format!("laycert-svg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let smem = Layout::parse("(8,64):(64,1)", None).unwrap();
        let banks = render(&bank_map(&smem, None, 2, Access::Cols, "banks").unwrap());
        for (name, svg) in [("a", sm80_a()), ("banks", banks)] {
            let (svg_path, png_path) = (
                dir.join(format!("{name}.svg")),
                dir.join(format!("{name}.png")),
            );
            std::fs::write(&svg_path, svg).unwrap();
            let out = Command::new("rsvg-convert")
                .arg(&svg_path)
                .arg("-o")
                .arg(&png_path)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let png = std::fs::read(&png_path).unwrap();
            assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
            // IHDR width and height are the SVG's.
            let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
            assert!(w > 300, "{name}: width {w}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
