//! Equivalence claims and the decision policy.
//!
//! Two layouts are EQUIVALENT over a logical shape when they relate the same (logical
//! coordinate, physical point) pairs, after putting physical points in one vocabulary (aliases
//! resolved, `tx = laneid + 32*warpid`; `layout::relation`). Direction does not matter: a TV or
//! linear layout (hardware -> logical) is compared with an Axe or CuTe layout (logical ->
//! hardware) as relations.
//!
//! Policy: run every decider the domain allows; a verdict needs one decider, and the report
//! names all that ran; two deciders that disagree are an error, never a verdict. A
//! counterexample is returned only after both layouts are re-evaluated at it by the trusted
//! semantics and differ there, and a proof only after [`semantic_recheck`] agrees. Where the
//! semantics cannot re-evaluate within their limits, the verdict is `unknown` and
//! [`Report::unconfirmed`] says why: never "a decider is wrong", which is kept for the
//! semantics disagreeing with a decider.

use std::collections::BTreeSet;
use std::time::Instant;

use layout::relation::normalize;
use layout::{Axis, Layout, LayoutError, Point};

use crate::decider::{Counterexample, DeciderKind, Outcome};
use crate::domain::{resolve, Domain};
use crate::exhaustive;
use crate::forward::{forward, Forward};
use crate::normal_form;
use crate::recheck::{semantic_recheck, RecheckError};
use crate::smt;

/// Which deciders run and their limits.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Largest domain the exhaustive decider enumerates.
    pub exhaustive_limit: i64,
    /// z3 resource limit per query.
    pub rlimit: u32,
    /// Run z3 at all.
    pub use_smt: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            exhaustive_limit: exhaustive::DEFAULT_LIMIT,
            rlimit: smt::DEFAULT_RLIMIT,
            use_smt: true,
        }
    }
}

/// One decider's run.
#[derive(Clone, Debug)]
pub struct Run {
    /// Which decider.
    pub decider: DeciderKind,
    /// What it answered.
    pub outcome: Outcome,
    /// Wall time in microseconds.
    pub micros: u128,
}

/// The decision of an equivalence claim.
#[derive(Clone, Debug)]
pub struct Report {
    /// The logical shape compared over (`domain.shape`).
    pub shape: Vec<i64>,
    /// The claim's domain: the shape, which rule chose it, and how each side reads it.
    pub domain: Domain,
    /// The axes of the points in counterexamples.
    pub axes: Vec<Axis>,
    /// Every decider that ran, in order.
    pub runs: Vec<Run>,
    /// The SMT-LIB2 query, when z3 ran.
    pub smt_query: Option<String>,
    /// The checked counterexample, when refuted.
    pub counterexample: Option<Counterexample>,
    /// When proved: how many coordinates the trusted semantics re-checked
    /// ([`semantic_recheck`]: all of a small domain, boundary and sample of a large one).
    pub rechecked: Option<usize>,
    /// Why a decider's verdict stands unconfirmed: the trusted semantics could not re-check the
    /// proof, or re-evaluate the counterexample, within their limits. The verdict is then
    /// `unknown`.
    pub unconfirmed: Option<String>,
}

impl Report {
    /// `equivalent`, `not equivalent` or `unknown` (also when a verdict stands
    /// [`unconfirmed`](Report::unconfirmed)).
    pub fn verdict(&self) -> &'static str {
        if self.unconfirmed.is_some() {
            "unknown"
        } else if self
            .runs
            .iter()
            .any(|r| matches!(r.outcome, Outcome::Proved { .. }))
        {
            "equivalent"
        } else if self.counterexample.is_some() {
            "not equivalent"
        } else {
            "unknown"
        }
    }

    /// Deciders that reached a verdict.
    pub fn deciding(&self) -> Vec<DeciderKind> {
        self.runs
            .iter()
            .filter(|r| !matches!(r.outcome, Outcome::Unknown { .. }))
            .map(|r| r.decider)
            .collect()
    }
}

/// Decides whether `a` and `b` are equivalent over the claim's domain: `shape` when given,
/// else the one [`crate::domain::resolve`] picks from both sides (never one side's silently).
/// Errors: bad or ambiguous domains, deciders that disagree, or a counterexample the semantics
/// do not confirm.
pub fn equivalent(
    a: &Layout,
    b: &Layout,
    shape: Option<&[i64]>,
    policy: &Policy,
) -> Result<Report, LayoutError> {
    let domain = resolve(a, b, shape)?;
    // The domain is the pasted layouts' own; renamed sides (Axe) are read over it.
    let unfused;
    let (a, b) = match wavefront_axes(a, b)? {
        Some(pair) => {
            unfused = pair;
            (&unfused.0, &unfused.1)
        }
        None => (a, b),
    };
    let shape = domain.shape.clone();
    let (fa, fb) = match forms(a, b, &shape) {
        Ok(f) => f,
        // No forward form (a table past its limit): the F2 normal forms, which need none, may
        // still prove the claim (two identical swizzled shared layouts of 4096 x 4096); else
        // the claim is well-formed but past the deciders' reach.
        Err(e) if crate::forward::beyond_table(&e) => {
            let t = Instant::now();
            let nf = normal_form::decide_f2_without_forms(a, b, &shape);
            let mut runs = vec![Run {
                decider: DeciderKind::NormalForm,
                outcome: nf,
                micros: t.elapsed().as_micros(),
            }];
            runs.push(Run {
                decider: DeciderKind::Exhaustive,
                outcome: Outcome::Unknown {
                    reason: e.to_string(),
                },
                micros: 0,
            });
            let (rechecked, unconfirmed) = if matches!(runs[0].outcome, Outcome::Proved { .. }) {
                cross_check(a, b, &shape)?
            } else {
                (None, None)
            };
            return Ok(Report {
                shape,
                domain,
                axes: Vec::new(),
                runs,
                smt_query: None,
                counterexample: None,
                rechecked,
                unconfirmed,
            });
        }
        Err(e) => return Err(e),
    };
    let axes = fa.axes.clone();
    let mut runs = Vec::new();
    let mut smt_query = None;
    let t = Instant::now();
    let nf = normal_form::decide(a, b, &shape, &fa, &fb);
    runs.push(Run {
        decider: DeciderKind::NormalForm,
        outcome: nf,
        micros: t.elapsed().as_micros(),
    });
    let t = Instant::now();
    let ex = exhaustive::decide(&fa, &fb, policy.exhaustive_limit);
    runs.push(Run {
        decider: DeciderKind::Exhaustive,
        outcome: ex,
        micros: t.elapsed().as_micros(),
    });
    if policy.use_smt {
        let t = Instant::now();
        let (o, q) = smt::decide(&fa, &fb, policy.rlimit);
        smt_query = q;
        runs.push(Run {
            decider: DeciderKind::Smt,
            outcome: o,
            micros: t.elapsed().as_micros(),
        });
    }
    let words: BTreeSet<&str> = runs
        .iter()
        .map(|r| r.outcome.word())
        .filter(|w| *w != "unknown")
        .collect();
    if words.len() > 1 {
        let detail: Vec<String> = runs
            .iter()
            .map(|r| format!("{} says {}", r.decider.name(), r.outcome.word()))
            .collect();
        return Err(LayoutError::invalid(
            "decision",
            format!("deciders disagree: {}", detail.join(", ")),
        ));
    }
    let mut counterexample = None;
    let mut unconfirmed = None;
    for r in &runs {
        if let Outcome::Refuted { counterexample: c } = &r.outcome {
            match confirm(a, b, &shape, c) {
                Ok(()) => counterexample = Some(c.clone()),
                // Past the semantics' limits: not confirmed, and not a fault either way.
                Err(LayoutError::Undecided { reason }) => {
                    let at: Vec<String> = c.coord.iter().map(i64::to_string).collect();
                    unconfirmed = Some(format!(
                        "{} refuted the claim at logical ({}), but the trusted semantics cannot re-evaluate it there: {reason}",
                        r.decider.name(),
                        at.join(",")
                    ))
                }
                Err(e) => return Err(e),
            }
            break;
        }
    }
    // A proof is cross-checked by a path that shares no code with the deciders.
    let mut rechecked = None;
    if words.contains("proved") {
        let (n, why) = cross_check(a, b, &shape)?;
        rechecked = n;
        if why.is_some() {
            unconfirmed = why;
        }
    }
    Ok(Report {
        shape,
        domain,
        axes,
        runs,
        smt_query,
        counterexample,
        rechecked,
        unconfirmed,
    })
}

/// The axes a 64-lane wavefront's claim is decided on: `wavelane` and `wave`.
pub const WAVEFRONT_AXES: [(&str, &str); 2] = [("laneid", "wavelane"), ("warpid", "wave")];

/// Whether `l` is a 64-lane wavefront layout: it names its threads by lane and warp only
/// (`laneid`, `warpid`; no `tx`, no warpgroup axes), its lane values span more than a CUDA
/// warp's 32, and it has warps: a warp component, or a Triton linear layout's `warp` in-dim
/// (Triton keeps lanes and warps apart, whatever their sizes). The fusion `tx = laneid +
/// 32*warpid` would merge such a layout's points, or read Triton's `threadsPerWarp = [64]` as
/// two warps. Decided on the layout alone, so its reading never depends on what it is
/// compared with. (An Axe layout on lanes alone, `S[64:1@laneid]`, reads fused: lane 40 is
/// thread 40.)
pub fn is_wavefront(l: &Layout) -> Result<bool, LayoutError> {
    Ok(Threads::of(l)?.wavefront)
}

/// What decides a layout's thread reading: its thread axes and its lane values.
struct Threads {
    /// Canonical names of the thread axes it reaches.
    axes: BTreeSet<String>,
    /// Its lane values, `(min, max)`.
    lanes: Option<(i64, i64)>,
    /// Lanes and warps only, lanes spanning more than 32 values, and warps ([`is_wavefront`]).
    wavefront: bool,
}

impl Threads {
    fn of(l: &Layout) -> Result<Threads, LayoutError> {
        let axes = layout::relation::thread_axes(l)?;
        let lanes = layout::relation::lane_range(l)?;
        let warps = axes.contains("warpid") || matches!(l, Layout::Linear(_));
        let mut t = Threads {
            axes,
            lanes,
            wavefront: false,
        };
        t.wavefront = t.lane_warp_only() && warps && t.wide_lanes();
        Ok(t)
    }

    /// Thread axes `laneid` and `warpid` only.
    fn lane_warp_only(&self) -> bool {
        self.axes
            .iter()
            .all(|x| matches!(x.as_str(), "laneid" | "warpid"))
    }

    /// Lane values spanning more than a CUDA warp's 32.
    fn wide_lanes(&self) -> bool {
        self.lanes
            .is_some_and(|(lo, hi)| hi.saturating_sub(lo) >= 32)
    }

    /// `lo..hi` of the lanes.
    fn lane_span(&self) -> String {
        let (lo, hi) = self.lanes.unwrap_or((0, 0));
        format!("{lo}..{hi}")
    }
}

/// The sides of a claim with `laneid` and `warpid` renamed to [`WAVEFRONT_AXES`], which the
/// `cuda` fusion leaves apart, where a side is a 64-lane wavefront layout ([`is_wavefront`]):
/// both are then compared lane by lane and warp by warp, as Triton's linear layouts compare.
/// `None` where neither side is one (both are compared fused, `tx = laneid + 32*warpid`).
///
/// One definition of a layout's threads, whatever it is compared with: a wavefront layout is
/// read apart only, any other fused only, except that against a wavefront both sides are
/// compared apart; there a side that is no wavefront has lanes spanning fewer than 32 values
/// (wide lanes without warps are refused), so it never equals the wavefront, read either way.
/// So verdicts chain. Before, the reading was chosen for the pair: `S[64:1@laneid]` was equivalent to
/// `S[64:1@tx]` (read fused), `S[64:1@tx]` to `S[(2,32):(1@warpid,1@laneid)]`, yet the first
/// and the last differed (read apart, since the pair had wide lanes and warps: the deciders
/// audit); now all three read fused and are equivalent. A wavefront against a side that names
/// `tx` or warpgroups has no common reading and is refused by name, as is a wavefront layout
/// with no exact Axe form (an XOR of lanes).
pub fn wavefront_axes(a: &Layout, b: &Layout) -> Result<Option<(Layout, Layout)>, LayoutError> {
    Ok(wavefront_renamed(&[a, b])?.map(|mut v| {
        let b = v.pop().expect("two sides");
        (v.pop().expect("two sides"), b)
    }))
}

/// [`wavefront_axes`] of one layout, for a property of it (`prove-property`, `show`): the
/// layout with `laneid` and `warpid` renamed to [`WAVEFRONT_AXES`] where it is a 64-lane
/// wavefront layout.
pub fn wavefront_axes_of(l: &Layout) -> Result<Option<Layout>, LayoutError> {
    Ok(wavefront_renamed(&[l])?.and_then(|mut v| v.pop()))
}

fn wavefront_renamed(sides: &[&Layout]) -> Result<Option<Vec<Layout>>, LayoutError> {
    let name = |i: usize| match (sides.len(), i) {
        (1, _) => "the layout",
        (_, 0) => "the left side",
        _ => "the right side",
    };
    let threads: Vec<Threads> = sides
        .iter()
        .map(|l| Threads::of(l))
        .collect::<Result<_, _>>()?;
    let Some(w) = threads.iter().position(|t| t.wavefront) else {
        return Ok(None);
    };
    let why = format!(
        "{}'s lanes span {}, more than a CUDA warp's 32: a 64-lane wavefront layout, compared \
         lane by lane and warp by warp (as `wavelane` and `wave`)",
        name(w),
        threads[w].lane_span()
    );
    for (i, t) in threads.iter().enumerate() {
        // Wide lanes without warps read fused (CUDA threads): against a wavefront no reading
        // is both sides' own.
        if !t.wavefront && t.lane_warp_only() && t.wide_lanes() {
            return Err(LayoutError::invalid(
                "thread fusion",
                format!(
                    "{why}; {}'s lanes span {} without warps, read as CUDA threads (lane 40 is \
                     thread 40): no reading is both sides' own; compare them lane by lane with \
                     `--axes laneid=lane64,warpid=wave64`",
                    name(i),
                    t.lane_span()
                ),
            ));
        }
        if let Some(x) = t
            .axes
            .iter()
            .find(|x| !matches!(x.as_str(), "laneid" | "warpid"))
        {
            return Err(LayoutError::invalid(
                "thread fusion",
                format!(
                    "{why}; {} names threads on `{x}`, which has no lane and warp apart (laycert \
                     reads tx = laneid + 32*warpid, CUDA's 32-lane warps): write it on laneid \
                     and warpid",
                    name(i)
                ),
            ));
        }
    }
    let map: Vec<(Axis, Axis)> = WAVEFRONT_AXES
        .iter()
        .map(|(f, t)| Ok((Axis::new(f)?, Axis::new(t)?)))
        .collect::<Result<_, LayoutError>>()?;
    sides
        .iter()
        .enumerate()
        .map(|(i, l)| {
            rename_axes(l, &map).map_err(|e| {
                LayoutError::invalid(
                    "thread fusion",
                    format!("{why}; {} has no lane-by-lane form: {e}", name(i)),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The trusted cross-check of a proof ([`semantic_recheck`]): the coordinates it agreed at, or
/// why it could not run; an error when the semantics differ (a decider is wrong).
fn cross_check(
    a: &Layout,
    b: &Layout,
    shape: &[i64],
) -> Result<(Option<usize>, Option<String>), LayoutError> {
    match semantic_recheck(a, b, shape) {
        Ok(n) => Ok((Some(n), None)),
        Err(RecheckError::Beyond(why)) => Ok((
            None,
            Some(format!(
                "the deciders proved the claim, but the trusted cross-check is past its limits: {why}"
            )),
        )),
        Err(RecheckError::Differ(why)) => Err(LayoutError::invalid(
            "decision",
            format!("a decider proved the claim, but {why}: a decider is wrong"),
        )),
    }
}

/// Re-evaluates both layouts at the counterexample with the trusted semantics.
fn confirm(a: &Layout, b: &Layout, shape: &[i64], c: &Counterexample) -> Result<(), LayoutError> {
    let (pa, pb) = (
        semantic_points(a, shape, &c.coord)?,
        semantic_points(b, shape, &c.coord)?,
    );
    if pa == pb {
        return Err(LayoutError::invalid(
            "counterexample",
            format!(
                "at {:?} the semantics agree ({} points each); a decider is wrong",
                c.coord,
                pa.len()
            ),
        ));
    }
    Ok(())
}

/// The physical points related to logical `coord`, by the trusted semantics (each point as
/// `layout::relation::point_of` defines it: components added per axis, then normalized).
pub fn semantic_points(
    l: &Layout,
    shape: &[i64],
    coord: &[i64],
) -> Result<BTreeSet<Point>, LayoutError> {
    match layout::relation::Inputs::of(l) {
        // Read backwards: the inputs holding `coord`, found and checked by `Preimages`.
        Some(inputs) => layout::relation::points_at(&inputs, coord),
        None => l.eval(Some(shape), coord)?.iter().map(normalize).collect(),
    }
}

/// The forward forms of both sides over common axes (for tools that decide by themselves).
pub fn forms(a: &Layout, b: &Layout, shape: &[i64]) -> Result<(Forward, Forward), LayoutError> {
    // Both sides' points are compared fused: the fusion must keep the two sides' points apart.
    layout::relation::check_fusion(&[a, b])?;
    let (fa, fb) = (forward(a, Some(shape))?, forward(b, Some(shape))?);
    let axes: Vec<Axis> = fa
        .axes
        .iter()
        .chain(&fb.axes)
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    Ok((fa.widen(&axes), fb.widen(&axes)))
}

/// Applies an axis correspondence to a layout: each `(from, to)` renames physical axis `from`
/// to `to` (a user's names onto the registry's, e.g. `lane_id -> laneid`), so two layouts
/// written with different axis names can be compared. CuTe, TV and power-of-two linear layouts
/// are first converted exactly to Axe (their implicit axes are `m`, `tx`/`reg`, and the
/// registry's in-dim axes). Refused: a target axis the layout already has, two sources onto
/// one target (that would add coordinates, not rename them), and renaming the address of a
/// swizzled layout (its swizzle acts on that one axis).
///
/// ```
/// use certify::claim::rename_axes;
/// use layout::{Axis, Layout};
/// let l = Layout::parse("S[(4,8):(1@lane_id,4@lane_id)]", None)?;
/// let r = rename_axes(&l, &[(Axis::new("lane_id")?, Axis::new("laneid")?)])?;
/// assert_eq!(r.print(), "S[(4,8):(1@laneid,4@laneid)]");
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn rename_axes(l: &Layout, map: &[(Axis, Axis)]) -> Result<Layout, LayoutError> {
    use layout::convert::{convert, Target};
    if map.is_empty() {
        return Ok(l.clone());
    }
    let bad = |why: String| LayoutError::invalid("--axes", why);
    for (i, (from, to)) in map.iter().enumerate() {
        if map[..i].iter().any(|(f, t)| f == from || t == to) {
            return Err(bad(format!(
                "{from} or {to} appears twice: a correspondence renames each axis once"
            )));
        }
    }
    let axe = match l {
        Layout::Axe(a) => a.clone(),
        Layout::Swizzled(s) => {
            return Err(bad(format!(
                "{s} is a swizzled layout; its swizzle acts on the address axis m, which cannot be renamed"
            )))
        }
        other => match convert(other, Target::Axe, None) {
            Ok(Layout::Axe(a)) => a,
            Ok(_) => unreachable!("convert to Axe gives Axe"),
            Err(e) => return Err(bad(format!("the layout has no Axe form to rename: {e}"))),
        },
    };
    let axes = axe.axes();
    let rename = |x: &Axis| -> Axis {
        map.iter()
            .find(|(f, _)| f == x)
            .map_or_else(|| x.clone(), |(_, t)| t.clone())
    };
    for (from, to) in map {
        if axes.contains(from) && axes.contains(to) && !map.iter().any(|(f, _)| f == to) {
            return Err(bad(format!(
                "renaming {from} to {to}, which the layout already has, would add their coordinates"
            )));
        }
    }
    // An alias of, or an axis related through the registry to, an axis the layout keeps would
    // add coordinates just the same (`lane` is `laneid`; `tx = laneid + 32*warpid`).
    for (from, to) in map.iter().filter(|(f, _)| axes.contains(f)) {
        for a in axes.iter().filter(|a| *a != from) {
            let kept = rename(a);
            if let Some(how) = overlap(to, &kept) {
                return Err(bad(format!(
                    "renaming {from} to {to} would add its coordinates onto {kept}, which the layout already has ({how})"
                )));
            }
        }
    }
    let iters = |its: &[layout::Iter]| -> Vec<layout::Iter> {
        its.iter()
            .map(|it| layout::Iter::new(it.extent, it.stride, rename(&it.axis)))
            .collect()
    };
    let offset = axe.offset().iter().map(|(a, v)| (rename(a), *v)).collect();
    Ok(Layout::Axe(layout::AxeLayout::new(
        iters(axe.shard()),
        iters(axe.replica()),
        offset,
    )?))
}

/// How two axis names denote overlapping coordinates in the built-in registry, if they do:
/// the same canonical axis (an alias), or one derived from the other through a relation of
/// some target (`tx = laneid + 32*warpid` relates tx to laneid and warpid, not laneid to warpid).
fn overlap(x: &Axis, y: &Axis) -> Option<String> {
    let reg = layout::AxisRegistry::builtin();
    let (cx, cy) = (reg.resolve(x), reg.resolve(y));
    if cx == cy {
        return Some(if x == y {
            format!("{x} is {y}")
        } else {
            format!("{x} and {y} are both {cx}")
        });
    }
    let derived = |from: &Axis, to: &Axis| {
        // Every axis `from` expands to through the relations, transitively.
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(a) = todo.pop() {
            for r in reg.targets().flat_map(|t| &t.relations) {
                if reg.resolve(&r.axis) == a {
                    for (_, t) in &r.terms {
                        let t = reg.resolve(t);
                        if seen.insert(t.clone()) {
                            todo.push(t);
                        }
                    }
                }
            }
        }
        seen.contains(to)
    };
    let relation = |d: &Axis| {
        reg.targets()
            .flat_map(|t| &t.relations)
            .find(|r| reg.resolve(&r.axis) == *d)
            .map(|r| {
                let terms: Vec<String> = r.terms.iter().map(|(c, a)| format!("{c}*{a}")).collect();
                format!("{} = {}", r.axis, terms.join(" + "))
            })
            .unwrap_or_default()
    };
    if derived(&cx, &cy) {
        Some(format!(
            "the registry relates {cx} to {cy}: {}",
            relation(&cx)
        ))
    } else if derived(&cy, &cx) {
        Some(format!(
            "the registry relates {cy} to {cx}: {}",
            relation(&cy)
        ))
    } else {
        None
    }
}

/// Parses `--axes from=to,from=to`.
pub fn parse_axes(text: &str) -> Result<Vec<(Axis, Axis)>, LayoutError> {
    text.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (f, t) = p.split_once('=').ok_or_else(|| {
                LayoutError::invalid(
                    format!("--axes {text:?}"),
                    format!("{p:?} is not from=to (e.g. lane_id=laneid)"),
                )
            })?;
            Ok((Axis::new(f.trim())?, Axis::new(t.trim())?))
        })
        .collect()
}
