//! The F2 linear-layout commands: `laycert linear compose|invert-and-compose A B` and
//! `laycert shuffle A B`. Operands are linear layouts in any spelling (`#ttg.linear<{..}>`,
//! `LinearLayout::toString()` text, Triton attributes with `--shape`). The result layout is
//! stdout's first line.

use clap::Subcommand;
use serde_json::json;

use layout::linear::LinearLayout;
use layout::shuffle::{execute, shuffle_plan};
use layout::Layout;

use super::{input, BadInput, Report};

/// `laycert linear OP`.
#[derive(Subcommand)]
pub enum LinearCommand {
    /// The linear layout of a Triton attribute (blocked, nvidia_mma, dot_op, slice,
    /// swizzled_shared, nvmma_shared, linear; multi-CTA fields included) on a tensor shape:
    /// `#ttg.linear` text first, then Triton's `toString()` text.
    From {
        /// The attribute, as TTGIR prints it.
        attr: String,
        /// The tensor shape, e.g. `128,128`.
        #[arg(long)]
        shape: String,
    },
    /// `A ∘ B`: apply B, then A (B's out-dims are A's in-dims, matched by name).
    Compose {
        /// The outer layout A.
        a: String,
        /// The inner layout B.
        b: String,
        /// Tensor shape for Triton attributes, e.g. `128,128`.
        #[arg(long)]
        shape: Option<String>,
    },
    /// `B^-1 ∘ A`: for every input of A, an input of B holding the same element (B ∘ result =
    /// A).
    ///
    /// Where several inputs of B hold it (B not injective), the free variables are 0: B's bases
    /// that are combinations of earlier ones (in-dims in order) are never used. That is not
    /// always the input with the fewest set bits.
    InvertAndCompose {
        /// A.
        a: String,
        /// B.
        b: String,
        /// Tensor shape for Triton attributes, e.g. `128,128`.
        #[arg(long)]
        shape: Option<String>,
    },
}

/// Two linear-layout operands read with one `--shape` (for Triton attributes), named `what`
/// in errors.
pub fn linear_pair(
    a: &str,
    b: &str,
    shape: Option<&str>,
    what: [&str; 2],
) -> Result<(LinearLayout, LinearLayout), BadInput> {
    let shape = input::shape(shape)?;
    Ok((
        linear_arg(a, shape.as_deref(), what[0])?,
        linear_arg(b, shape.as_deref(), what[1])?,
    ))
}

/// Parses an operand that must be a linear layout.
pub fn linear_arg(text: &str, shape: Option<&[i64]>, what: &str) -> Result<LinearLayout, BadInput> {
    match input::layout(text, shape)? {
        Layout::Linear(l) => Ok(l),
        // A thread-value layout (a CuTe atom by name, `atom:SM80_16x8x16_F16F16F16F16_TN.A`)
        // is read as its linear layout when it has one (power-of-two extents and strides).
        Layout::Tv(t) => {
            layout::convert::tv_to_linear(&t).map_err(|e| input::render(&e, what, text))
        }
        other => Err(BadInput {
            message: format!(
                "error: {what}: expected a linear layout (#ttg.linear, LinearLayout text, a \
                 Triton attribute or a thread-value atom), found {} notation",
                other.notation().name()
            ),
        }),
    }
}

/// Runs `laycert linear OP`.
pub fn run(op: &LinearCommand, as_json: bool) -> Result<Report, BadInput> {
    let (a, b, shape, result) = match op {
        LinearCommand::From { attr, shape } => return from(attr, shape, as_json),
        LinearCommand::Compose { a, b, shape } => (a, b, shape, "compose"),
        LinearCommand::InvertAndCompose { a, b, shape } => (a, b, shape, "invert-and-compose"),
    };
    let (la, lb) = linear_pair(a, b, shape.as_deref(), ["A", "B"])?;
    let out = if result == "compose" {
        la.compose(&lb)
    } else {
        la.invert_and_compose(&lb)
    }
    .map_err(|e| input::render(&e, result, a))?;
    let lines = super::layout_lines(&Layout::Linear(out.clone()));
    if as_json {
        return Ok(Report::json(json!({
            "op": result,
            "layout": lines[0],
            "text": layout::notation::linear::print_to_string(&out),
        })));
    }
    Ok(Report::ok(lines))
}

/// `linear from ATTR --shape S`.
fn from(attr: &str, shape: &str, as_json: bool) -> Result<Report, BadInput> {
    let shape = input::shape(Some(shape))?;
    let l = linear_arg(attr, shape.as_deref(), "the attribute")?;
    let lines = super::layout_lines(&Layout::Linear(l.clone()));
    if as_json {
        return Ok(Report::json(json!({
            "layout": lines[0],
            "text": layout::notation::linear::print_to_string(&l),
        })));
    }
    Ok(Report::ok(lines))
}

/// Parses a `--dtype` name into bytes per element.
pub fn dtype_bytes(name: &str) -> Result<u32, BadInput> {
    Ok(match name {
        "i8" | "u8" | "f8" | "fp8" | "e4m3" | "e5m2" => 1,
        "f16" | "bf16" | "i16" | "u16" => 2,
        "f32" | "tf32" | "i32" | "u32" => 4,
        "f64" | "i64" | "u64" => 8,
        _ => {
            return Err(BadInput {
                message: format!(
                    "error: --dtype {name:?}: expected one of i8, f8, f16, bf16, f32, tf32, i32, \
                     f64, i64"
                ),
            })
        }
    })
}

/// `laycert shuffle A B [--dtype f16]`: the warp-shuffle plan converting A into B, executed by
/// the simulator before it is printed.
pub fn shuffle(
    a: &str,
    b: &str,
    dtype: &str,
    shape: Option<&str>,
    as_json: bool,
) -> Result<Report, BadInput> {
    let bytes = dtype_bytes(dtype)?;
    let (la, lb) = linear_pair(a, b, shape, ["A", "B"])?;
    let plan = shuffle_plan(&la, &lb, bytes).map_err(|e| input::render(&e, "shuffle", a))?;
    execute(&plan, &la, &lb).map_err(|e| input::render(&e, "the plan's simulation", a))?;
    // A shuffle moves 32 bits: an 8-byte element is two of them.
    let per = if plan.elem_bytes > 4 {
        format!(
            "one {}-byte element per {} shuffles",
            plan.elem_bytes,
            plan.elem_bytes / 4
        )
    } else {
        format!("{} element(s) per shuffle", 1u32 << plan.src_vector.len())
    };
    let head = format!(
        "{} shuffles in {} rounds, {per}; simulated: every register of B holds its element",
        plan.instructions(),
        plan.rounds,
    );
    if as_json {
        return Ok(Report::json(json!({ "summary": head, "plan": plan })));
    }
    let opt = |v: &Option<i64>| v.map_or("-".to_string(), |x| x.to_string());
    let mut lines = vec![head];
    lines.push(format!(
        "vector: A registers bits {:?} -> B register bits {:?}",
        plan.src_vector, plan.dst_vector
    ));
    lines.push(format!(
        "in-lane moves: {} vector(s) per warp already in their B lane (register moves, no shuffle)",
        plan.moves.len()
    ));
    // Each shuffle prints a line per warp of 32 lanes; past MAX_LISTED the text names the
    // count (`--json` holds the whole plan).
    const MAX_LISTED: usize = 64;
    for (k, s) in plan.shuffles.iter().enumerate().take(MAX_LISTED) {
        let reads: Vec<String> = s
            .src_lane
            .iter()
            .zip(&s.recv)
            .enumerate()
            .filter_map(|(l, (src, r))| src.map(|src| format!("{l}<-{src}:r{}", opt(r))))
            .collect();
        let sends: Vec<String> = s.send.iter().map(opt).collect();
        lines.push(format!(
            "shuffle {k}: send [{}]; lane<-src:dst_reg {}",
            sends.join(" "),
            reads.join(" ")
        ));
    }
    if plan.shuffles.len() > MAX_LISTED {
        lines.push(format!(
            "... {} more shuffles not listed (--json lists the whole plan)",
            plan.shuffles.len() - MAX_LISTED
        ));
    }
    Ok(Report::ok(lines))
}
