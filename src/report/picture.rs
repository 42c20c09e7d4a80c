//! Pictures of layouts as grids of the logical tile, computed from the layout semantics:
//!
//! - a TV layout (CuTe `... -> (M,N)`), a Triton distributed layout, or an Axe layout over
//!   thread axes: each cell labelled `T{thread} V{value}` and coloured by thread, as CuTe's
//!   `print_latex` draws a TV layout (thread = `tx`, or `laneid + 32*warpid`; value = `reg`,
//!   or `m`, or the linear layout's `register`);
//! - a memory layout (CuTe, swizzled, Axe, Triton shared): each cell labelled with its offset;
//! - a shared-memory bank map ([`bank_map`]): each cell coloured by its 4-byte bank,
//!   `bank = (byte address / 4) mod 32`, cells of a conflicting access marked.
//!
//! A cell reached more than once (replicas, broadcast) shows its first occupant and `+k`.
//! Example: the SM80 C atom `((4,8),(2,2)):((32,1),(16,8)) -> (16,8)` puts `T0 V0` at (0,0),
//! `T0 V1` at (0,1) and `T4 V0` at (1,0).

use std::collections::{BTreeMap, BTreeSet};

use layout::axis::Point;
use layout::{Axis, Layout, LayoutError, LinearLayout, TvLayout};

/// The largest grid drawn.
pub const MAX_CELLS: i64 = 1 << 14;

/// What a cell's colour means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colour {
    /// Coloured by thread (8 colours, as `print_latex`).
    Thread(i64),
    /// Coloured by shared-memory bank (32 hues).
    Bank(i64),
    /// Coloured by offset.
    Offset(i64),
}

/// One cell of a picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Text lines inside the cell.
    pub lines: Vec<String>,
    /// Its colour.
    pub colour: Colour,
    /// Drawn with a red border (a bank conflict, several occupants).
    pub marked: bool,
}

/// A picture: a grid of cells with a title and notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    /// The title line.
    pub title: String,
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Row-major cells; `None` where nothing maps.
    pub cells: Vec<Option<Cell>>,
    /// Lines under the grid (legend, conflicts).
    pub notes: Vec<String>,
}

impl Grid {
    fn new(title: String, shape: &[i64]) -> Result<Grid, LayoutError> {
        let size = layout::shape::size_of(shape)?;
        if size > MAX_CELLS {
            return Err(LayoutError::invalid(
                format!("picture of a {shape:?} tile"),
                format!("{size} cells; at most {MAX_CELLS} are drawn"),
            ));
        }
        let (rows, cols) = match shape {
            [] => (1, 1),
            [n] if *n > 32 => ((n + 31) / 32, 32),
            [n] => (1, *n),
            [.., last] => (size / last, *last),
        };
        Ok(Grid {
            title,
            rows: rows as usize,
            cols: cols as usize,
            cells: vec![None; (rows * cols) as usize],
            notes: Vec::new(),
        })
    }

    /// The cell index of a logical coordinate of `shape` (a 1-D tile wraps at 32 columns;
    /// leading dims of a tile of rank > 2 are flattened row-major into rows).
    fn place(&self, shape: &[i64], coord: &[i64]) -> Result<usize, LayoutError> {
        let (row, col) = match (shape, coord) {
            ([_], [i]) => (i / self.cols as i64, i % self.cols as i64),
            (_, [.., last]) if coord.len() == shape.len() => (
                layout::shape::flatten_row_major(
                    &shape[..shape.len() - 1],
                    &coord[..coord.len() - 1],
                )?,
                *last,
            ),
            _ => (0, 0),
        };
        Ok(row as usize * self.cols + col as usize)
    }
}

/// Occupants of each cell, in order of discovery: `(thread, value)` or an offset label.
type Occupants = BTreeMap<usize, Vec<(Vec<String>, Colour)>>;

fn fill(grid: &mut Grid, occupants: Occupants) {
    for (i, occ) in occupants {
        let (mut lines, colour) = occ[0].clone();
        if occ.len() > 1 {
            lines.push(format!("+{}", occ.len() - 1));
        }
        grid.cells[i] = Some(Cell {
            lines,
            colour,
            marked: occ.len() > 1,
        });
    }
}

fn tv_label(t: i64, v: i64) -> (Vec<String>, Colour) {
    (vec![format!("T{t}"), format!("V{v}")], Colour::Thread(t))
}

/// The picture of `l` over `shape` (its logical shape; a Triton attribute was already
/// imported with its tensor shape).
pub fn picture(l: &Layout, shape: Option<&[i64]>, title: &str) -> Result<Grid, LayoutError> {
    match l {
        Layout::Tv(tv) => tv_picture(tv, title),
        Layout::Linear(f) => linear_picture(f, title),
        Layout::Axe(_) | Layout::Cute(_) | Layout::Swizzled(_) => {
            let shape = shape
                .map(<[i64]>::to_vec)
                .unwrap_or_else(|| l.default_shape());
            let mut grid = Grid::new(title.to_string(), &shape)?;
            let mut occupants = Occupants::new();
            for (coord, points) in cells(l, &shape)? {
                let at = grid.place(&shape, &coord)?;
                for p in points {
                    occupants.entry(at).or_default().push(point_label(&p));
                }
            }
            fill(&mut grid, occupants);
            grid.notes.push(legend(l));
            Ok(grid)
        }
    }
}

/// Logical coordinates with their points.
type CoordPoints = Vec<(Vec<i64>, BTreeSet<Point>)>;

/// Every logical coordinate of `shape` with the points `l` relates it to.
fn cells(l: &Layout, shape: &[i64]) -> Result<CoordPoints, LayoutError> {
    let size = layout::shape::size_of(shape)?;
    // Every coordinate's replica points are labelled: bound the points, not just the cells.
    let per = match l {
        Layout::Axe(a) => a.replica_count(),
        _ => 1,
    };
    let points = size.checked_mul(per).unwrap_or(i64::MAX);
    if points > MAX_CELLS * 16 {
        return Err(LayoutError::invalid(
            "picture",
            format!(
                "{size} cells x {per} replicas is {points} points; at most {} are drawn",
                MAX_CELLS * 16
            ),
        ));
    }
    (0..size)
        .map(|x| {
            let c = layout::shape::unflatten_row_major(shape, x)?;
            let p = l.eval(Some(shape), &c)?;
            Ok((c, p))
        })
        .collect()
}

fn axis_value(p: &Point, name: &str) -> Option<i64> {
    Axis::new(name).ok().and_then(|a| p.get(&a).copied())
}

/// `T V` for a point over thread axes, else its coordinates (`m` alone: the offset).
fn point_label(p: &Point) -> (Vec<String>, Colour) {
    let thread = axis_value(p, "tx").or_else(|| {
        let lane = axis_value(p, "laneid");
        let warp = axis_value(p, "warpid");
        (lane.is_some() || warp.is_some()).then(|| lane.unwrap_or(0) + 32 * warp.unwrap_or(0))
    });
    if let Some(t) = thread {
        let v = axis_value(p, "reg")
            .or_else(|| axis_value(p, "m"))
            .unwrap_or(0);
        return tv_label(t, v);
    }
    let values: Vec<i64> = p.values().copied().collect();
    let text: Vec<String> = values.iter().map(i64::to_string).collect();
    (
        vec![text.join(",")],
        Colour::Offset(values.first().copied().unwrap_or(0)),
    )
}

fn legend(l: &Layout) -> String {
    format!(
        "{} layout {}",
        l.notation().name(),
        l.print().replace('\n', " ")
    )
}

fn tv_picture(tv: &TvLayout, title: &str) -> Result<Grid, LayoutError> {
    let tile = tv.tile().to_vec();
    let mut grid = Grid::new(title.to_string(), &tile)?;
    let mut occupants = Occupants::new();
    for v in 0..tv.values() {
        for t in 0..tv.threads() {
            let at = grid.place(&tile, &tv.eval(t, v)?)?;
            occupants.entry(at).or_default().push(tv_label(t, v));
        }
    }
    fill(&mut grid, occupants);
    grid.notes.push(format!(
        "CuTe TV layout {tv}: cell (row, col) holds thread T, value V"
    ));
    Ok(grid)
}

fn linear_picture(f: &LinearLayout, title: &str) -> Result<Grid, LayoutError> {
    let shape: Vec<i64> = f.outs().iter().map(|o| o.size()).collect();
    let mut grid = Grid::new(title.to_string(), &shape)?;
    let sizes: Vec<i64> = f.ins().iter().map(|d| 1i64 << d.bases.len()).collect();
    let total = layout::shape::size_of(&sizes)?;
    if total > MAX_CELLS * 64 {
        return Err(LayoutError::invalid(
            "picture",
            "too many inputs to enumerate",
        ));
    }
    let names: Vec<&str> = f.ins().iter().map(|d| d.name.as_str()).collect();
    let memory = names.contains(&"offset");
    let mut occupants = Occupants::new();
    for x in 0..total {
        let input = layout::shape::unflatten_col_major(&sizes, x)?;
        let out = f.apply(&input)?;
        let at = grid.place(&shape, &out)?;
        let label = if memory {
            let o = input[names.iter().position(|n| *n == "offset").unwrap_or(0)];
            (vec![o.to_string()], Colour::Offset(o))
        } else {
            // Thread = lane + 32 * warp (+ block beyond), value = register.
            let (mut thread, mut scale, mut value) = (0, 1, 0);
            for ((name, v), size) in names.iter().zip(&input).zip(&sizes) {
                if *name == "register" {
                    value = *v;
                } else {
                    thread += v * scale;
                    scale *= size;
                }
            }
            tv_label(thread, value)
        };
        occupants.entry(at).or_default().push(label);
    }
    fill(&mut grid, occupants);
    grid.notes.push(if memory {
        "linear shared layout: cell (dim0, dim1) holds its offset".to_string()
    } else {
        "linear layout: T = lane + 32*warp, V = register".to_string()
    });
    Ok(grid)
}

/// Conflicting accesses listed one by one under a bank map; the rest are counted.
const MAX_CONFLICT_NOTES: usize = 8;

/// Which cells one access (a warp's 128-byte transaction) reads together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Consecutive cells along each row, 128 bytes at a time.
    Rows,
    /// Consecutive cells down each column, 128 bytes at a time.
    Cols,
}

impl Access {
    /// Parses `row` or `col`.
    pub fn parse(s: &str) -> Result<Access, LayoutError> {
        match s {
            "row" | "rows" => Ok(Access::Rows),
            "col" | "cols" | "column" => Ok(Access::Cols),
            other => Err(LayoutError::invalid(
                format!("access {other:?}"),
                "expected row or col",
            )),
        }
    }
}

/// The bank map of a memory layout with `elem_bytes`-byte elements: each cell coloured by
/// its bank; cells of an access where two different 4-byte words share a bank are marked,
/// and each conflicting access is listed with its wavefront count.
pub fn bank_map(
    l: &Layout,
    shape: Option<&[i64]>,
    elem_bytes: i64,
    access: Access,
    title: &str,
) -> Result<Grid, LayoutError> {
    if !(1..=16).contains(&elem_bytes) {
        return Err(LayoutError::invalid(
            format!("element size {elem_bytes} bytes"),
            "expected 1 to 16",
        ));
    }
    let mut grid = picture(l, shape, title)?;
    // Offsets per cell, from the memory picture: one offset, on one axis, per element.
    let offsets: Vec<Option<i64>> = grid
        .cells
        .iter()
        .map(|c| match c {
            None => Ok(None),
            Some(Cell {
                colour: Colour::Offset(o),
                lines,
                ..
            }) if *lines == [o.to_string()] => Ok(Some(*o)),
            Some(_) => Err(LayoutError::invalid(
                "bank map",
                "needs a memory layout (one offset per element, on one axis)",
            )),
        })
        .collect::<Result<_, _>>()?;
    let per_access = (128 / elem_bytes).max(1) as usize;
    let (rows, cols) = (grid.rows, grid.cols);
    let lines: Vec<Vec<usize>> = match access {
        Access::Rows => (0..rows)
            .map(|r| (0..cols).map(|c| r * cols + c).collect())
            .collect(),
        Access::Cols => (0..cols)
            .map(|c| (0..rows).map(|r| r * cols + c).collect())
            .collect(),
    };
    let mut conflicted = 0;
    let mut accesses = 0;
    for (li, line) in lines.iter().enumerate() {
        for (ci, group) in line.chunks(per_access).enumerate() {
            accesses += 1;
            let mut words: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
            for &i in group {
                if let Some(o) = offsets[i] {
                    let word = o
                        .checked_mul(elem_bytes)
                        .ok_or(LayoutError::Overflow { op: "byte address" })?
                        / 4;
                    words.entry(word % 32).or_default().insert(word);
                }
            }
            let wavefronts = words.values().map(BTreeSet::len).max().unwrap_or(0);
            if wavefronts > 1 {
                conflicted += 1;
                let what = if access == Access::Rows { "row" } else { "col" };
                if conflicted <= MAX_CONFLICT_NOTES {
                    grid.notes.push(format!(
                        "{what} {li} access {ci}: {wavefronts} wavefronts ({wavefronts}-way bank conflict)"
                    ));
                }
            }
            for &i in group {
                if let (Some(o), Some(cell)) = (offsets[i], grid.cells[i].as_mut()) {
                    let word = o * elem_bytes / 4;
                    let bank = word % 32;
                    cell.colour = Colour::Bank(bank);
                    cell.lines = vec![o.to_string(), format!("b{bank}")];
                    cell.marked = words[&bank].len() > 1;
                }
            }
        }
    }
    if conflicted > MAX_CONFLICT_NOTES {
        grid.notes.push(format!(
            "... and {} more conflicting accesses",
            conflicted - MAX_CONFLICT_NOTES
        ));
    }
    grid.notes.insert(
        0,
        format!(
            "bank = (offset * {elem_bytes} B / 4) mod 32; one access = 128 bytes along a {}; \
             {conflicted} of {accesses} accesses conflict",
            if access == Access::Rows {
                "row"
            } else {
                "column"
            }
        ),
    );
    Ok(grid)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn cell(g: &Grid, r: usize, c: usize) -> &Cell {
        g.cells[r * g.cols + c].as_ref().expect("drawn")
    }

    #[test]
    fn sm80_c_atom_places_threads_as_the_spec_says() {
        let l = Layout::parse("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)", None).unwrap();
        let g = picture(&l, None, "C").unwrap();
        assert_eq!((g.rows, g.cols), (16, 8));
        assert_eq!(cell(&g, 0, 0).lines, ["T0", "V0"]);
        assert_eq!(cell(&g, 0, 1).lines, ["T0", "V1"]);
        assert_eq!(cell(&g, 1, 0).lines, ["T4", "V0"]);
        assert_eq!(cell(&g, 8, 0).lines, ["T0", "V2"]);
        assert!(g
            .cells
            .iter()
            .all(|c| c.as_ref().is_some_and(|c| !c.marked)));
    }

    #[test]
    fn triton_and_axe_pictures_match_the_cute_picture() {
        let cute = Layout::parse("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)", None).unwrap();
        let mma = Layout::parse(
            "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>",
            Some(&[16, 8]),
        )
        .unwrap();
        let axe = Layout::parse("S[(2,8,4,2):(2@reg,4@laneid,1@laneid,1@reg)]", None).unwrap();
        let g = picture(&cute, None, "").unwrap();
        let lines = |g: &Grid| -> Vec<Vec<String>> {
            g.cells
                .iter()
                .map(|c| c.as_ref().unwrap().lines.clone())
                .collect()
        };
        assert_eq!(lines(&picture(&mma, None, "").unwrap()), lines(&g));
        assert_eq!(
            lines(&picture(&axe, Some(&[16, 8]), "").unwrap()),
            lines(&g)
        );
    }

    #[test]
    fn replicas_are_marked_with_their_count() {
        let l = Layout::parse("((8,4),128):((128,0),1) -> (1024)", None).unwrap();
        let g = picture(&l, None, "").unwrap();
        assert_eq!((g.rows, g.cols), (32, 32));
        let c = cell(&g, 0, 0);
        assert_eq!(c.lines, ["T0", "V0", "+3"]);
        assert!(c.marked);
    }

    #[test]
    fn memory_layout_cells_hold_offsets() {
        let l = Layout::parse("Sw<3,4,3> o (8,64):(64,1)", None).unwrap();
        let g = picture(&l, None, "").unwrap();
        assert_eq!(cell(&g, 1, 0).lines, ["64"]);
        assert_eq!(cell(&g, 2, 0).lines, ["144"]);
    }

    #[test]
    fn row_major_16bit_columns_conflict_and_swizzled_do_not() {
        // 8 rows of 64 halves (128 B): a column access hits one bank 8 times.
        let plain = Layout::parse("(8,64):(64,1)", None).unwrap();
        let g = bank_map(&plain, None, 2, Access::Cols, "").unwrap();
        assert!(
            g.notes[0].ends_with("64 of 64 accesses conflict"),
            "{:?}",
            g.notes
        );
        assert!(cell(&g, 0, 0).marked);
        let swizzled = Layout::parse("Sw<3,3,3> o (8,64):(64,1)", None).unwrap();
        let g = bank_map(&swizzled, None, 2, Access::Cols, "").unwrap();
        // Columns 0 and 1 share a 4-byte word per row: 8 words over 8 distinct banks.
        assert!(
            g.notes[0].ends_with("0 of 64 accesses conflict"),
            "{:?}",
            g.notes
        );
        assert_eq!(cell(&g, 1, 0).lines, ["72", "b4"]);
    }

    #[test]
    fn bank_map_refuses_thread_layouts() {
        let l = Layout::parse("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)", None).unwrap();
        assert!(bank_map(&l, None, 2, Access::Rows, "").is_err());
    }

    /// Every TV atom of the corpus small enough to draw: each (thread, value) is in the cell
    /// the semantics put it in (first occupant, or counted in its `+k`).
    #[test]
    fn corpus_tv_pictures_agree_with_the_semantics() {
        let corpus = corpus::Corpus::embedded().unwrap();
        let mut drawn = 0;
        for a in &corpus.atoms {
            let Ok(Layout::Tv(tv)) = Layout::parse(&a.layout, None) else {
                continue;
            };
            let Ok(g) = picture(&Layout::Tv(tv.clone()), None, "") else {
                continue;
            };
            drawn += 1;
            let mut count = vec![0usize; g.cells.len()];
            for t in 0..tv.threads() {
                for v in 0..tv.values() {
                    let at = g.place(tv.tile(), &tv.eval(t, v).unwrap()).unwrap();
                    count[at] += 1;
                }
            }
            for (i, c) in g.cells.iter().enumerate() {
                let lines = c.as_ref().map(|c| c.lines.len()).unwrap_or(0);
                let expected = match count[i] {
                    0 => 0,
                    1 => 2,
                    _ => 3,
                };
                assert_eq!(lines, expected, "{} cell {i}", a.name);
            }
        }
        assert!(drawn >= 50, "{drawn} TV atoms drawn");
    }

    fn cute_layout() -> impl Strategy<Value = (i64, i64, i64, i64)> {
        (1i64..=8, 1i64..=40, 0i64..=40, 0i64..=40)
    }

    proptest! {
        /// A memory picture holds, at row i and column j, the offset the layout gives (i, j).
        #[test]
        fn memory_picture_is_the_evaluation((r, c, dr, dc) in cute_layout()) {
            let l = Layout::parse(&format!("({r},{c}):({dr},{dc})"), None).unwrap();
            let g = picture(&l, None, "").unwrap();
            prop_assert_eq!((g.rows, g.cols), (r as usize, c as usize));
            for i in 0..r {
                for j in 0..c {
                    let want = (i * dr + j * dc).to_string();
                    prop_assert_eq!(&cell(&g, i as usize, j as usize).lines, &vec![want]);
                }
            }
        }

        /// Banks are (byte address / 4) mod 32, and a cell is marked exactly when its
        /// 128-byte row access has another cell on its bank at a different 4-byte word.
        #[test]
        fn bank_map_matches_a_brute_force_count(
            (r, c, dr, dc) in cute_layout(),
            bytes in prop::sample::select(vec![1i64, 2, 4, 8]),
        ) {
            let l = Layout::parse(&format!("({r},{c}):({dr},{dc})"), None).unwrap();
            let g = bank_map(&l, None, bytes, Access::Rows, "").unwrap();
            let per = 128 / bytes;
            for i in 0..r {
                for j in 0..c {
                    let word = |j: i64| (i * dr + j * dc) * bytes / 4;
                    let group = (j / per * per)..((j / per + 1) * per).min(c);
                    let conflict = group.clone().any(|k| word(k) % 32 == word(j) % 32 && word(k) != word(j));
                    let cl = cell(&g, i as usize, j as usize);
                    prop_assert_eq!(&cl.lines[1], &format!("b{}", word(j) % 32));
                    prop_assert_eq!(cl.marked, conflict, "cell ({}, {})", i, j);
                }
            }
        }
    }
}
