//! Recognizing a shard from its values: given `f` on `[0, n)`, find a shard `D` with
//! `D(x) = f(x) - f(0)` for every `x`, or prove that none exists.
//!
//! Every shard of size `n` can be rewritten, without changing its map, into a *normalized* one:
//! delete iters of extent 1 (D0) and merge adjacent iters whose stride vectors satisfy
//! `s_i = e_{i+1} * s_{i+1}` (D1; stride-0 iters merge whatever their axis). In a normalized
//! shard the fastest iter `(e, s)` is found from the values alone: `s = f(1) - f(0)` (one axis,
//! or zero), and `e` is the length of the run `f(j) - f(0) = j*s`, because at `j = e` the next
//! iter's stride appears and D1 would have merged it if it were `e*s`. So the recognizer takes
//! that run, checks `f(j) = f(e*floor(j/e)) + (j mod e)*s` for every `j` and recurses on
//! `j -> f(e*j)` (the remaining iters). Each step is forced, so when a check fails no shard has
//! this map: the answer "no" is a proof, not a limit of the search. The work is at most `2n`
//! evaluations of `f`.
//!
//! Worked example (a test checks it): `f = 0, 1, 2, 5, 6, 7` (row-major `S[(2,3):(5,1)]` read
//! over shape `[3,2]`): the run `0, 1, 2` breaks at 5, so the fastest iter is `3:1`; then
//! `j -> f(3j)` is `0, 5`, the iter `2:5`: `S[(2,3):(5,1)]`. `f = 0, 1, 2, 5` runs `3:1` too, but
//! 3 does not divide 4: no shard.

use super::Iter;
use crate::arith;
use crate::axis::Axis;
use crate::error::Result;

/// The answer of [`shard_of`]: the normalized shard (slowest iter first), or why none exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recognized {
    /// A shard with `D(x) = f(x) - f(0)`; normalized (no extent 1, no D1 merge applies).
    Shard(Vec<Iter>),
    /// No shard has this map; the first forced step that fails, with indices into `[0, n)`.
    NotAShard(String),
}

/// The shard of size `n` whose map is `x -> f(x) - f(0)`, where `f(x)` gives one coordinate per
/// axis of `axes` (same order). Stride-0 iters are put on axis `m`.
///
/// ```
/// use layout::axe::shard_of::{shard_of, Recognized};
/// use layout::{notation::axe::print, AxeLayout, Axis};
/// let f = [0, 1, 2, 5, 6, 7];
/// let Recognized::Shard(d) = shard_of(&[Axis::m()], 6, |x| Ok(vec![f[x as usize]]))? else {
///     panic!("a shard")
/// };
/// assert_eq!(print(&AxeLayout::from_shard(d)?), "S[(2,3):(5,1)]");
/// let g = [0, 1, 2, 5];
/// let r = shard_of(&[Axis::m()], 4, |x| Ok(vec![g[x as usize]]))?;
/// assert!(matches!(r, Recognized::NotAShard(_)));
/// # Ok::<(), layout::LayoutError>(())
/// ```
pub fn shard_of(
    axes: &[Axis],
    n: i64,
    mut f: impl FnMut(i64) -> Result<Vec<i64>>,
) -> Result<Recognized> {
    let origin = f(0)?;
    let mut g = |x: i64| -> Result<Vec<i64>> { minus(&f(x)?, &origin) };
    // The remaining iters' map is `i -> g(i*scale)` on `[0, rest)`.
    let (mut scale, mut rest, mut fastest_first) = (1i64, n, Vec::new());
    while rest > 1 {
        let step = g(scale)?;
        let Some((axis, stride)) = on_one_axis(axes, &step) else {
            return Ok(Recognized::NotAShard(format!(
                "the step from index 0 to index {scale} is {}, on more than one axis (a stride \
                 lies on one axis)",
                show(axes, &step)
            )));
        };
        let run = run_length(&mut g, &step, scale, rest)?;
        if rest % run != 0 {
            return Ok(Recognized::NotAShard(format!(
                "from index 0 the values run in steps of {} for {run} indices (every {scale}), \
                 and {run} does not divide the {rest} indices left",
                show(axes, &step)
            )));
        }
        if let Some(why) = check_run(&mut g, axes, &step, scale, rest, run)? {
            return Ok(Recognized::NotAShard(why));
        }
        fastest_first.push(Iter::new(run, stride, axis));
        scale = arith::mul(scale, run, "shard recognition")?;
        rest /= run;
    }
    fastest_first.reverse();
    Ok(Recognized::Shard(fastest_first))
}

/// The largest `e <= rest` with `g(j*scale) = j*step` for every `j < e`.
fn run_length(
    g: &mut impl FnMut(i64) -> Result<Vec<i64>>,
    step: &[i64],
    scale: i64,
    rest: i64,
) -> Result<i64> {
    let mut want = step.to_vec();
    let mut e = 2;
    while e < rest {
        want = plus(&want, step)?;
        if g(e * scale)? != want {
            break;
        }
        e += 1;
    }
    Ok(e)
}

/// Checks `g(i*scale) = g((i - i mod run)*scale) + (i mod run)*step` for every `i < rest`; the
/// first failure, if any, as a reason.
fn check_run(
    g: &mut impl FnMut(i64) -> Result<Vec<i64>>,
    axes: &[Axis],
    step: &[i64],
    scale: i64,
    rest: i64,
    run: i64,
) -> Result<Option<String>> {
    let mut base = Vec::new();
    for i in 0..rest {
        let got = g(i * scale)?;
        if i % run == 0 {
            base = got;
            continue;
        }
        let want = plus(&base, &times(step, i % run)?)?;
        if got != want {
            return Ok(Some(format!(
                "index {} lies {} from index 0, but the fastest iter {run}:{} found from index \
                 0 puts it at {}",
                i * scale,
                show(axes, &got),
                show(axes, step),
                show(axes, &want)
            )));
        }
    }
    Ok(None)
}

/// The step as one iter's `(axis, stride)`: zero goes on `m`; two non-zero axes are `None`.
fn on_one_axis(axes: &[Axis], step: &[i64]) -> Option<(Axis, i64)> {
    let mut nonzero = axes.iter().zip(step).filter(|(_, &v)| v != 0);
    match (nonzero.next(), nonzero.next()) {
        (None, _) => Some((Axis::m(), 0)),
        (Some((a, &v)), None) => Some((a.clone(), v)),
        _ => None,
    }
}

fn show(axes: &[Axis], v: &[i64]) -> String {
    let parts: Vec<String> = axes
        .iter()
        .zip(v)
        .filter(|(_, &x)| x != 0)
        .map(|(a, x)| format!("{x}@{a}"))
        .collect();
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join(" + ")
    }
}

fn plus(a: &[i64], b: &[i64]) -> Result<Vec<i64>> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| arith::add(x, y, "shard recognition"))
        .collect()
}

fn minus(a: &[i64], b: &[i64]) -> Result<Vec<i64>> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| arith::sub(x, y, "shard recognition"))
        .collect()
}

fn times(a: &[i64], k: i64) -> Result<Vec<i64>> {
    a.iter()
        .map(|&x| arith::mul(x, k, "shard recognition"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::axe::print;
    use crate::AxeLayout;

    fn on_m(f: &[i64]) -> Recognized {
        shard_of(&[Axis::m()], f.len() as i64, |x| Ok(vec![f[x as usize]])).unwrap()
    }

    fn printed(r: Recognized) -> String {
        match r {
            Recognized::Shard(d) => print(&AxeLayout::from_shard(d).unwrap()),
            Recognized::NotAShard(why) => format!("no: {why}"),
        }
    }

    #[test]
    fn module_example_holds() {
        assert_eq!(printed(on_m(&[0, 1, 2, 5, 6, 7])), "S[(2,3):(5,1)]");
        let no = printed(on_m(&[0, 1, 2, 5]));
        assert!(no.contains("3 does not divide the 4"), "{no}");
    }

    #[test]
    fn repeats_and_negative_steps_are_shards() {
        assert_eq!(printed(on_m(&[15, 15, 20, 20])), "S[(2,2):(5,0)]");
        assert_eq!(printed(on_m(&[7, 4, 1, 8, 5, 2])), "S[(2,3):(1,-3)]");
        assert_eq!(printed(on_m(&[3])), "S[():()]");
    }

    #[test]
    fn a_broken_pattern_is_no_shard_with_the_index() {
        // Runs 2:1 from 0, then 10, 11, then 20, 22: index 5 breaks the third run.
        let no = printed(on_m(&[0, 1, 10, 11, 20, 22]));
        assert!(no.starts_with("no: index 5 lies 22@m from index 0"), "{no}");
    }

    #[test]
    fn a_step_on_two_axes_is_no_stride() {
        let axes = [Axis::m(), Axis::new("laneid").unwrap()];
        let f = [[0, 0], [1, 1]];
        let r = shard_of(&axes, 2, |x| Ok(f[x as usize].to_vec())).unwrap();
        assert!(matches!(&r, Recognized::NotAShard(w) if w.contains("more than one axis")));
        let f = [[0, 0], [0, 1], [4, 0], [4, 1]];
        let r = shard_of(&axes, 4, |x| Ok(f[x as usize].to_vec())).unwrap();
        assert_eq!(printed(r), "S[(2,2):(4,1@laneid)]");
    }
}
