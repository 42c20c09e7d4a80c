//! The layout-algebra commands: Axe (`canon`, `group`, `tile`, `tile-of`, `slice`,
//! `direct-sum`) and CuTe (`cute OP ...`). The result layout alone is stdout's first line; a
//! "no" of the algebra (not a tile, not a slice of this form, not a direct sum, not groupable)
//! is an answer too: printed as `not a tile: <reason>` on the first line, exit 1. A question
//! left undecided within a limit (a large `slice` region no construction covers) prints
//! `unknown: <reason>`, exit 3.

use serde_json::json;

use layout::axe::{self, AxeLayout};
use layout::notation::axe::{parse, print};
use layout::{AxisRegistry, LayoutError};

use super::{input, BadInput, Report};

/// Exit status of an algebraic "no".
pub const NO: u8 = 1;

fn axe_arg(text: &str, what: &str) -> Result<AxeLayout, BadInput> {
    let text = atom_text(text, "Axe", |t| parse(t).is_ok())?;
    let text = text.as_str();
    parse(text).map_err(|e| input::render(&e, what, text))
}

/// `atom:NAME` as the atom's layout text, when that text is in the notation the command
/// reads (`fits`); otherwise an error naming the atom's notation. Other text is unchanged.
/// A CuTe thread-value atom `L -> (tile)` is its layout `L` (CUTLASS's `ALayout` /
/// `BLayout` / `CLayout`: (thread, value) -> offset in the column-major tile).
fn atom_text(text: &str, notation: &str, fits: impl Fn(&str) -> bool) -> Result<String, BadInput> {
    let Some(name) = text.trim().strip_prefix("atom:") else {
        return Ok(text.to_string());
    };
    let atom = input::atom(name.trim())?;
    if fits(&atom.layout) {
        return Ok(atom.layout);
    }
    let head = atom.layout.split("->").next().unwrap_or("").trim();
    if notation == "CuTe" && atom.layout.contains("->") && fits(head) {
        return Ok(head.to_string());
    }
    let kind = match layout::notation::Notation::detect(&atom.layout) {
        layout::notation::Notation::Axe => "Axe",
        layout::notation::Notation::Cute => "CuTe",
        layout::notation::Notation::CuteBasis => "CuTe ScaledBasis",
        layout::notation::Notation::Swizzled => "swizzled CuTe",
        layout::notation::Notation::Tv => "CuTe thread-value",
        layout::notation::Notation::LinearAttr | layout::notation::Notation::LinearText => "linear",
        layout::notation::Notation::TritonAttr => "Triton",
        layout::notation::Notation::NkiAp => "NKI access pattern",
        layout::notation::Notation::TvmIndexMap => "TVM index map",
        layout::notation::Notation::TvmDataLayout => "TVM data layout",
    };
    Err(BadInput {
        message: format!(
            "error: atom:{}: its layout `{}` is {kind} notation; this command takes {notation} \
             layouts (`laycert convert` translates)",
            atom.name, atom.layout
        ),
    })
}

fn list(text: &str, what: &str) -> Result<Vec<i64>, BadInput> {
    layout::shape::parse_list(text).map_err(|e| input::render(&e, what, text))
}

/// Turns an operation's result into the report: a layout, an algebraic "no", or bad input.
fn answer(
    r: Result<Vec<String>, LayoutError>,
    what: &str,
    text: &str,
    as_json: bool,
) -> Result<Report, BadInput> {
    match r {
        Ok(lines) => Ok(if as_json {
            Report::json(json!({ "result": lines[0], "details": lines[1..] }))
        } else {
            Report::ok(lines)
        }),
        Err(
            e @ (LayoutError::NotATile { .. }
            | LayoutError::NotADirectSum { .. }
            | LayoutError::NotASlice { .. }
            | LayoutError::NotGroupable { .. }),
        ) => {
            let mut rep = if as_json {
                Report::json(json!({ "result": null, "no": e.to_string() }))
            } else {
                Report::ok(vec![e.to_string()])
            };
            rep.code = NO;
            Ok(rep)
        }
        Err(LayoutError::Undecided { reason }) => {
            let mut rep = if as_json {
                Report::json(json!({ "result": null, "unknown": reason }))
            } else {
                Report::ok(vec![format!("unknown: {reason}")])
            };
            rep.code = super::equiv::UNKNOWN;
            Ok(rep)
        }
        Err(e) => Err(input::render(&e, what, text)),
    }
}

/// `canon L [--target cuda]`: the canonical form, then the gap condition per axis.
pub fn canon(text: &str, target: Option<&str>, as_json: bool) -> Result<Report, BadInput> {
    let l = axe_arg(text, "the layout")?;
    let r = axe::canonicalize_on(&l, AxisRegistry::builtin(), target).map(|c| {
        let gc: Vec<String> = c
            .gap_condition
            .iter()
            .map(|(a, ok)| format!("{a}={}", if *ok { "yes" } else { "no" }))
            .collect();
        let note = if c.gc_holds() {
            ""
        } else {
            " (canonical comparison is not a proof here)"
        };
        vec![
            print(&c.layout),
            format!(
                "gap condition: {}{note}",
                if gc.is_empty() {
                    "-".into()
                } else {
                    gc.join(" ")
                }
            ),
        ]
    });
    answer(r, "canonicalize", text, as_json)
}

/// `group L --shape A [--shape B ...]`: grouped by one shape or the common refinement.
pub fn group(text: &str, shapes: &[String], as_json: bool) -> Result<Report, BadInput> {
    let l = axe_arg(text, "the layout")?;
    let shapes: Vec<Vec<i64>> = shapes
        .iter()
        .map(|s| list(s, "--shape"))
        .collect::<Result<_, _>>()?;
    let r = match shapes.as_slice() {
        [] => {
            return Err(BadInput {
                message: "error: group needs at least one --shape".into(),
            })
        }
        [one] => axe::group(&l, one).map(|g| {
            let blocks: Vec<String> = g
                .blocks
                .iter()
                .map(|b| format!("{}..{}", b.start, b.end))
                .collect();
            vec![print(&g.layout), format!("blocks: {}", blocks.join(" "))]
        }),
        many => axe::group_many(&l, many).map(|g| {
            let shape: Vec<String> = g.grouped.shape.iter().map(i64::to_string).collect();
            vec![
                print(&g.grouped.layout),
                format!("common refinement: ({})", shape.join(",")),
            ]
        }),
    };
    answer(r, "group", text, as_json)
}

/// `tile INNER OUTER --inner-shape .. --outer-shape ..`: the canonical tiled layout.
pub fn tile(
    inner: &str,
    outer: &str,
    inner_shape: &str,
    outer_shape: &str,
    as_json: bool,
) -> Result<Report, BadInput> {
    let (b, a) = (
        axe_arg(inner, "the inner layout")?,
        axe_arg(outer, "the outer layout")?,
    );
    let (sb, sa) = (
        list(inner_shape, "--inner-shape")?,
        list(outer_shape, "--outer-shape")?,
    );
    let r = axe::tile(&b, &a, &sb, &sa).and_then(|t| {
        let shape: Vec<String> = axe::tile::tile_shape(&sb, &sa)?
            .iter()
            .map(i64::to_string)
            .collect();
        Ok(vec![
            print(&axe::canonicalize(&t)?.layout),
            format!("shape: ({})", shape.join(",")),
        ])
    });
    answer(r, "tile", inner, as_json)
}

/// `tile-of L --shape .. (--inner B --inner-shape .. | --outer C --outer-shape ..)`.
pub fn tile_of(
    text: &str,
    shape: &str,
    inner: Option<(&str, &str)>,
    outer: Option<(&str, &str)>,
    as_json: bool,
) -> Result<Report, BadInput> {
    let l = axe_arg(text, "the layout")?;
    let shape = list(shape, "--shape")?;
    let r =
        match (inner, outer) {
            (Some((b, sb)), None) => axe::tile_of(
                &l,
                &shape,
                &axe_arg(b, "--inner")?,
                &list(sb, "--inner-shape")?,
            ),
            (None, Some((c, sc))) => axe::tile_of_given_outer(
                &l,
                &shape,
                &axe_arg(c, "--outer")?,
                &list(sc, "--outer-shape")?,
            ),
            _ => return Err(BadInput {
                message:
                    "error: tile-of takes --inner with --inner-shape, or --outer with --outer-shape"
                        .into(),
            }),
        };
    answer(r.map(|x| vec![print(&x)]), "tile-of", text, as_json)
}

/// `slice L --shape .. --region b:e,b:e`: the layout of the region (half-open ranges).
pub fn slice(text: &str, shape: &str, region: &str, as_json: bool) -> Result<Report, BadInput> {
    let swizzled = layout::notation::Notation::detect(text) == layout::notation::Notation::Swizzled;
    let shape = list(shape, "--shape")?;
    let mut ranges = Vec::new();
    for part in region.split(',') {
        let bad = || BadInput {
            message: format!("error: --region {region:?}: {part:?} is not begin:end"),
        };
        let (b, e) = part.split_once(':').ok_or_else(bad)?;
        ranges.push((
            b.trim().parse().map_err(|_| bad())?,
            e.trim().parse().map_err(|_| bad())?,
        ));
    }
    let r = if swizzled {
        let s = layout::notation::cute::parse_swizzled(text)
            .map_err(|e| input::render(&e, "the layout", text))?;
        axe::slice_swizzled(&s, &shape, &ranges).map(|x| vec![x.to_string()])
    } else {
        let l = axe_arg(text, "the layout")?;
        axe::slice(&l, &shape, &ranges).map(|x| vec![print(&x)])
    };
    answer(r, "slice", text, as_json)
}

/// `direct-sum A B --shapes SA/SB`: the canonical direct sum.
pub fn direct_sum(a: &str, b: &str, shapes: &str, as_json: bool) -> Result<Report, BadInput> {
    let (la, lb) = (
        axe_arg(a, "the first layout")?,
        axe_arg(b, "the second layout")?,
    );
    let (sa, sb) = shapes.split_once('/').ok_or_else(|| BadInput {
        message: format!("error: --shapes {shapes:?}: expected A_SHAPE/B_SHAPE, e.g. 2,2/2,2"),
    })?;
    let (sa, sb) = (list(sa, "--shapes")?, list(sb, "--shapes")?);
    let r = axe::direct_sum(&la, &lb, &sa, &sb)
        .and_then(|s| Ok(vec![print(&axe::canonicalize(&s)?.layout)]));
    answer(r, "direct-sum", a, as_json)
}

/// `cute OP ARGS...`: CuTe algebra, printed exactly as pycute prints it.
pub fn cute(op: &str, args: &[String], as_json: bool) -> Result<Report, BadInput> {
    let is_cute = |t: &str| layout::notation::cute::parse_layout(t).is_ok();
    let args = args
        .iter()
        .map(|a| atom_text(a, "CuTe", is_cute))
        .collect::<Result<Vec<_>, _>>()?;
    let args = &args[..];
    let joined = args.join(" ");
    answer(
        layout::cute::cli_op(op, args).map(|s| vec![s]),
        &format!("cute {op}"),
        &joined,
        as_json,
    )
}
