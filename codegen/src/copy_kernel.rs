//! [`emit_copy`]: CUDA C++ for a [`CopyPlan`], translation-validated before it is returned.
//!
//! The kernel is one function `laycert_copy(src, dst)`: phase 1 loads the CTA's tile with
//! vector loads along the tile's first axis and scatters it into shared memory; after
//! `__syncthreads()` phase 2 gathers along the store axis and writes with vector stores.
//! Elements are moved as unsigned integers of their width (a copy moves bits).
//! Every index the kernel computes is one of the strings in [`PhaseText`]; those exact strings
//! are parsed and evaluated by [`crate::validate`] against the layouts before the text is
//! returned. A plan with ragged edges ([`CopyPlan::ragged`]) also carries a guard: each
//! vector access is skipped unless its first element's logical coordinate passes
//! `c<first> < E_first && c<second> < E_second` (only the bounds a tile overhangs are written);
//! the guard text is validated too. Only the edge CTAs run the guarded phases: a CTA whose
//! tile lies inside the tensor (`bx < E_first / T0 && by < E_second / T1`, validated to imply
//! it) runs the same phases without the guard.

use solver::{Along, CopyPlan, Phase, Separable};

use crate::error::CodegenError;
use crate::validate::{validate, validate_interior, Validation};

/// The index expressions of one phase, exactly as they appear in the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseText {
    /// Tile coordinate along the first axis, in `t`, `k`, `e`.
    pub f: String,
    /// Tile coordinate along the second axis, in `t`, `k`, `e`.
    pub s: String,
    /// Logical coordinate `c<d>` per dimension, in `bx`, `by`, `bz`, `f`, `s`.
    pub coords: Vec<String>,
    /// Global element offset, in the `c<d>`.
    pub global: String,
    /// Shared-memory offset before the swizzle, `o`, in `f`, `s`.
    pub smem_linear: String,
    /// Shared-memory offset, in `o`.
    pub smem: String,
    /// The predicate in the `c<d>` (ragged plans): the access happens iff it is nonzero.
    pub guard: Option<String>,
}

/// An emitted kernel.
#[derive(Clone, Debug)]
pub struct CopyKernel {
    /// CUDA C++ source.
    pub source: String,
    /// Entry point.
    pub name: String,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Threads per CTA.
    pub threads: u32,
    /// Phase 1 (global load, shared store) expressions.
    pub load: PhaseText,
    /// Phase 2 (shared load, global store) expressions.
    pub store: PhaseText,
    /// The condition (in `bx`, `by`) under which a CTA runs the unguarded phases: every cell of
    /// such a CTA is inside the tensor (validated). `None` for plans without ragged edges.
    pub interior: Option<String>,
    /// What translation validation checked.
    pub validation: Validation,
}

/// `term_d(var)` as C: `((var / P) % e) * s` per mode, summed.
fn term_text(modes: &[(i64, i64)], var: &str) -> String {
    let mut parts = Vec::new();
    let mut below = 1i64;
    for (i, &(e, s)) in modes.iter().enumerate() {
        if s != 0 {
            let mut x = if below == 1 {
                var.to_string()
            } else {
                format!("{var} / {below}")
            };
            if i + 1 < modes.len() {
                x = format!("({x}) % {e}");
            }
            parts.push(if s == 1 { x } else { format!("({x}) * {s}LL") });
        }
        below = below.saturating_mul(e);
    }
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join(" + ")
    }
}

fn offset_text(layout: &Separable) -> String {
    let terms: Vec<String> = layout
        .dims()
        .iter()
        .enumerate()
        .map(|(d, m)| term_text(m, &format!("c{d}")))
        .filter(|t| t != "0")
        .collect();
    if terms.is_empty() {
        "0".into()
    } else {
        terms.join(" + ")
    }
}

fn phase_text(plan: &CopyPlan, p: &Phase, global: &Separable) -> PhaseText {
    let (along, across) = if p.segs == 1 {
        (
            format!("(t % {}) * {} + e", p.lanes, p.vec),
            format!("t / {} + k * {}", p.lanes, p.rows),
        )
    } else {
        (
            format!(
                "(t % {}) * {} + e + (k % {}) * {}",
                p.lanes,
                p.vec,
                p.segs,
                p.lanes * p.vec
            ),
            format!("t / {} + (k / {}) * {}", p.lanes, p.segs, p.rows),
        )
    };
    let (f, s) = match p.along {
        Along::First => (along, across),
        Along::Second => (across, along),
    };
    let coords = (0..plan.shape.len())
        .map(|d| {
            if d == plan.tile_dims[0] {
                format!("bx * {} + f", plan.tile[0])
            } else if d == plan.tile_dims[1] {
                format!("by * {} + s", plan.tile[1])
            } else {
                "bz".into()
            }
        })
        .collect();
    let base = plan.smem.layout.layout().flat_modes();
    let smem_linear = format!("f * {} + s * {}", base[0].1, base[1].1);
    let sw = plan.smem.layout.swizzle();
    let smem = if sw.bits() == 0 {
        "o".into()
    } else {
        format!("o ^ ((o & {}) >> {})", sw.source_mask(), sw.shift())
    };
    PhaseText {
        f,
        s,
        coords,
        global: offset_text(global),
        smem_linear,
        smem,
        guard: guard_text(plan),
    }
}

/// `c<d> < E && ...` over the tile axes whose tiles overhang the tensor; `None` when none does.
fn guard_text(plan: &CopyPlan) -> Option<String> {
    let terms: Vec<String> = (0..2)
        .filter(|&a| plan.grid[a] * plan.tile[a] != plan.guard[a])
        .map(|a| format!("c{} < {}", plan.tile_dims[a], plan.guard[a]))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" && "))
}

/// `bx < F0 && by < F1` (F = the full tiles along an axis) over the axes whose tiles overhang
/// the tensor; `None` when none does.
fn interior_text(plan: &CopyPlan) -> Option<String> {
    let terms: Vec<String> = (0..2)
        .filter(|&a| plan.grid[a] * plan.tile[a] != plan.guard[a])
        .map(|a| format!("{} < {}", ["bx", "by"][a], plan.guard[a] / plan.tile[a]))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" && "))
}

/// `if (!(guard)) continue;` for a ragged plan, else nothing.
fn guard_line(text: &PhaseText, indent: &str) -> String {
    match &text.guard {
        Some(g) => format!("{indent}if (!({g})) continue;\n"),
        None => String::new(),
    }
}

fn word_type(bytes: i64) -> &'static str {
    match bytes {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        8 => "w8_t",
        _ => "w16_t",
    }
}

/// The global vector store. 8- and 16-byte stores are written as `st.global.v2/v4.u32` so the
/// compiler cannot split them (it splits a union member's aggregate store into 32-bit stores).
fn global_store(bytes: i64, offset: &str) -> String {
    let at = format!("dst + ({offset})");
    match bytes {
        16 => format!(
            "asm volatile(\"st.global.v4.u32 [%0], {{%1, %2, %3, %4}};\" :: \"l\"({at}), \
             \"r\"(w.v.x), \"r\"(w.v.y), \"r\"(w.v.z), \"r\"(w.v.w) : \"memory\");"
        ),
        8 => format!(
            "asm volatile(\"st.global.v2.u32 [%0], {{%1, %2}};\" :: \"l\"({at}), \"r\"(w.v.x), \
             \"r\"(w.v.y) : \"memory\");"
        ),
        _ => format!("*reinterpret_cast<{}*>({at}) = w.v;", word_type(bytes)),
    }
}

fn header(plan: &CopyPlan) -> String {
    let mut h = vec![
        "// laycert copy kernel (generated; every index below was translation-validated)".into(),
        format!("// shape {:?}, dtype {}", plan.shape, plan.dtype),
        format!("// source      {}", plan.src_layout.print()),
        format!("// destination {}", plan.dst_layout.print()),
        format!(
            "// tile {}x{} over logical dims ({}, {}), z dim {}, grid {:?}, {} threads",
            plan.tile[0],
            plan.tile[1],
            plan.tile_dims[0],
            plan.tile_dims[1],
            plan.z_dim.map_or("-".into(), |z| z.to_string()),
            plan.grid,
            plan.threads
        ),
        format!("// load TV  {}  (vector {})", plan.load_tv, plan.load.vec),
        format!("// store TV {}  (vector {})", plan.store_tv, plan.store.vec),
        format!(
            "// shared   {}  (stores of {}, loads of {} elements; chosen among {} candidates)",
            plan.smem.layout, plan.smem.store_vec, plan.smem.load_vec, plan.smem.candidates
        ),
        format!(
            "// predicted wavefronts per CTA: shared stores {} over {} instructions (ideal {}), \
             shared loads {} over {} instructions (ideal {})",
            plan.smem.stores.wavefronts,
            plan.smem.stores.instructions,
            plan.smem.stores.ideal,
            plan.smem.loads.wavefronts,
            plan.smem.loads.instructions,
            plan.smem.loads.ideal
        ),
    ];
    if plan.ragged() {
        h.push(format!(
            "// ragged edges: accesses predicated on x[{}] < {} and x[{}] < {}",
            plan.tile_dims[0], plan.guard[0], plan.tile_dims[1], plan.guard[1]
        ));
    }
    for c in &plan.certificate.claims {
        h.push(format!("// {} {}: {}", c.verdict, c.name, c.statement));
    }
    h.push(format!("// certificate sha256:{}", plan.certificate.digest));
    h.join("\n")
}

fn coord_lines(text: &PhaseText, indent: &str) -> String {
    text.coords
        .iter()
        .enumerate()
        .map(|(d, c)| format!("{indent}const long long c{d} = {c};\n"))
        .collect()
}

/// Phase 2's guard block (before the shared loads), or nothing.
fn store_guard(text: &PhaseText) -> String {
    if text.guard.is_none() {
        return String::new();
    }
    format!(
        "        {{\n            const int e = 0;\n            const int f = {};\n            \
         const int s = {};\n{}{}        }}\n",
        text.f,
        text.s,
        coord_lines(text, "            "),
        guard_line(text, "            ")
    )
}

/// Phase 1, the barrier and phase 2 for the given texts (guarded when they carry a guard).
fn phases(plan: &CopyPlan, load: &PhaseText, store: &PhaseText) -> String {
    let b = plan.dtype.bytes();
    let (lv, sv) = (plan.load.vec, plan.store.vec);
    let (lw, sw) = (plan.load.smem_vec, plan.store.smem_vec);
    let mut k = String::new();
    k += &format!(
        "    // phase 1: global loads of {lv} along the first axis, shared stores of {lw}\n\
         #pragma unroll\n    for (int k = 0; k < {}; ++k) {{\n        load_vec_t r;\n        {{\n            \
         const int e = 0;\n            const int f = {};\n            const int s = {};\n{}{}            \
         r.v = *reinterpret_cast<const {}*>(src + ({}));\n        }}\n\
         #pragma unroll\n        for (int e = 0; e < {lv}; e += {lw}) {{\n            \
         const int f = {};\n            const int s = {};\n            const int o = {};\n            \
         *reinterpret_cast<{}*>(smem + ({})) = *reinterpret_cast<const {}*>(&r.e[e]);\n        }}\n    }}\n",
        plan.load.iters,
        load.f,
        load.s,
        coord_lines(load, "            "),
        guard_line(load, "            "),
        word_type(lv * b),
        load.global,
        load.f,
        load.s,
        load.smem_linear,
        word_type(lw * b),
        load.smem,
        word_type(lw * b),
    );
    k += "    __syncthreads();\n";
    k += &format!(
        "    // phase 2: shared loads of {sw}, global stores of {sv} along the store axis\n\
         #pragma unroll\n    for (int k = 0; k < {}; ++k) {{\n        store_vec_t w;\n{}\
         #pragma unroll\n        for (int e = 0; e < {sv}; e += {sw}) {{\n            \
         const int f = {};\n            const int s = {};\n            const int o = {};\n            \
         *reinterpret_cast<{}*>(&w.e[e]) = *reinterpret_cast<const {}*>(smem + ({}));\n        }}\n        \
         {{\n            const int e = 0;\n            const int f = {};\n            const int s = {};\n{}            \
         {}\n        }}\n    }}\n",
        plan.store.iters,
        store_guard(store),
        store.f,
        store.s,
        store.smem_linear,
        word_type(sw * b),
        word_type(sw * b),
        store.smem,
        store.f,
        store.s,
        coord_lines(store, "            "),
        global_store(sv * b, &store.global),
    );
    k
}

/// Emits the kernel for `plan` and validates every index expression in it.
pub fn emit_copy(plan: &CopyPlan) -> Result<CopyKernel, CodegenError> {
    let load = phase_text(plan, &plan.load, &plan.src);
    let store = phase_text(plan, &plan.store, &plan.dst);
    let interior = interior_text(plan);
    let mut validation = validate(plan, &load, &store)?;
    if let Some(cond) = &interior {
        validation.interior_ctas = validate_interior(plan, cond)?;
    }
    let b = plan.dtype.bytes();
    let cells = plan.tile[0] * plan.tile[1];
    let (lv, sv) = (plan.load.vec, plan.store.vec);
    let mut k = String::new();
    k += &header(plan);
    k += &format!(
        "\n\ntypedef {} elem_t;\n\
         struct __align__(8) w8_t {{ unsigned int x, y; }};\n\
         struct __align__(16) w16_t {{ unsigned int x, y, z, w; }};\n\
         union load_vec_t {{ {} v; elem_t e[{lv}]; }};\n\
         union store_vec_t {{ {} v; elem_t e[{sv}]; }};\n\n",
        word_type(b),
        word_type(lv * b),
        word_type(sv * b),
    );
    k += &format!(
        "extern \"C\" __global__ void __launch_bounds__({threads}) laycert_copy(\n    \
         const elem_t* __restrict__ src, elem_t* __restrict__ dst)\n{{\n    \
         __shared__ __align__(16) elem_t smem[{cells}];\n    \
         const int t = threadIdx.x;\n    \
         const long long bx = blockIdx.{}, by = blockIdx.{}, bz = blockIdx.z;\n",
        if plan.store_major { "y" } else { "x" },
        if plan.store_major { "x" } else { "y" },
        threads = plan.threads
    );
    match &interior {
        None => k += &phases(plan, &load, &store),
        Some(cond) => {
            let (mut fl, mut fs) = (load.clone(), store.clone());
            fl.guard = None;
            fs.guard = None;
            k += &format!(
                "    // interior CTAs (every cell inside the tensor) run unguarded; the edge CTAs \
                 check each access\n    if ({cond}) {{\n{}    }} else {{\n{}    }}\n",
                phases(plan, &fl, &fs),
                phases(plan, &load, &store)
            );
        }
    }
    k += "}\n";
    let to_u32 = |v: i64| u32::try_from(v).map_err(|_| CodegenError::Overflow("launch size"));
    Ok(CopyKernel {
        source: k,
        name: "laycert_copy".into(),
        grid: if plan.store_major {
            [
                to_u32(plan.grid[1])?,
                to_u32(plan.grid[0])?,
                to_u32(plan.grid[2])?,
            ]
        } else {
            [
                to_u32(plan.grid[0])?,
                to_u32(plan.grid[1])?,
                to_u32(plan.grid[2])?,
            ]
        },
        threads: to_u32(plan.threads)?,
        load,
        store,
        interior,
        validation,
    })
}
