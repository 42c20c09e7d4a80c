//! Shared-memory layouts (paper algorithm 1, step 6): candidates from the alignment
//! constraints, and every access's instruction options scored by the bank model.
//!
//! A shared tensor's candidates: the layout the program gives, else each unit-stride order of
//! the tile (an access of `w` elements per thread needs `w` consecutive aligned elements, so
//! only orders with unit stride along a dimension some access vectorizes are kept) under the
//! CuTe swizzles `Sw<B,M,S>` whose base `M` keeps the widest access's vectors whole; on sm90
//! also the canonical GMMA/TMA atom tilings (`Layout_K_SW{32,64,128}` and `INTER`). Each
//! candidate is a table `cell -> element`; instruction options are checked on the tables
//! (certify re-decides the chosen ones) and scored with [`layout::bank::wavefronts`].

use layout::cute::make_layout;
use layout::{CuteLayout, Layout, Swizzle, SwizzledLayout};

use super::program::{SynthError, Tensor};

/// A candidate shared layout.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The layout.
    pub layout: Layout,
    /// `cell (column-major) -> element`.
    pub table: Vec<i64>,
    /// The canonical atom it tiles (name, atom text), if any.
    pub canonical: Option<(String, String)>,
    /// Human label (`row-major Sw<3,3,3>`).
    pub label: String,
}

/// Offsets of every cell of `shape` (column-major) under a memory layout.
pub fn table_of(l: &Layout, shape: &[i64]) -> Result<Vec<i64>, SynthError> {
    certify::synthesis::mem_table(l, shape).map_err(SynthError::Internal)
}

fn log2(x: i64) -> Option<u32> {
    (x > 0 && x & (x - 1) == 0).then(|| x.trailing_zeros())
}

/// Candidates for shared tensor `t`. `vec_elems`: the widest vector (elements) any access
/// wants; `fast_dims`: dimensions some access wants contiguous; `atoms`: canonical atoms (name,
/// layout in elements) to tile.
pub fn candidates(
    t: &Tensor,
    vec_elems: i64,
    fast_dims: &[usize],
    atoms: &[(String, SwizzledLayout)],
) -> Result<Vec<Candidate>, SynthError> {
    if let Some(l) = &t.layout {
        return Ok(vec![Candidate {
            table: table_of(l, &t.shape)?,
            layout: l.clone(),
            canonical: None,
            label: "given".into(),
        }]);
    }
    let shape = &t.shape;
    let cells: i64 = shape.iter().product();
    let mut out = Vec::new();
    let orders: Vec<usize> = if shape.len() == 1 {
        vec![0]
    } else {
        fast_dims.to_vec()
    };
    let bits = log2(cells).unwrap_or(0);
    let m = log2(vec_elems).unwrap_or(0);
    for &fast in &orders {
        let (base, name) = if shape.len() == 1 {
            (CuteLayout::from_flat(&[shape[0]], &[1])?, "linear")
        } else if fast == 1 {
            (CuteLayout::from_flat(shape, &[shape[1], 1])?, "row-major")
        } else {
            (
                CuteLayout::from_flat(shape, &[1, shape[0]])?,
                "column-major",
            )
        };
        let plain: Vec<i64> = table_of(&Layout::Cute(base.clone()), shape)?;
        let mut sws = vec![Swizzle::identity()];
        for b in 1..=3u32 {
            for s in 3..=7u32 {
                if b <= s && b + m + s <= bits {
                    sws.push(Swizzle::new(b, m, s as i32)?);
                }
            }
        }
        for sw in sws {
            let table = plain
                .iter()
                .map(|&o| sw.apply(o))
                .collect::<Result<Vec<_>, _>>()?;
            let label = if sw == Swizzle::identity() {
                name.to_string()
            } else {
                format!("{name} Sw<{},{},{}>", sw.bits(), sw.base(), sw.shift())
            };
            out.push(Candidate {
                layout: if sw == Swizzle::identity() {
                    Layout::Cute(base.clone())
                } else {
                    Layout::Swizzled(SwizzledLayout::new(sw, base.clone())?)
                },
                table,
                canonical: None,
                label,
            });
        }
    }
    if shape.len() == 2 {
        for (name, atom) in atoms {
            if let Some(c) = canonical(shape, atom)? {
                out.push(Candidate {
                    canonical: Some((name.clone(), atom.to_string())),
                    label: format!("canonical {name}"),
                    ..c
                });
            }
        }
    }
    Ok(out)
}

/// A compact layout storing the tile's cells in the order a CuTe memory layout `l` stores them
/// (its modes sorted by stride, restrided densely): the shared layout that keeps every
/// contiguous run of `l` contiguous and aligned, whatever its modes. `(8, 24):(25, 1)` gives
/// `(8, 24):(24, 1)`. None for a layout that is not CuTe with one top mode per dimension.
pub fn storage_order(l: &Layout, shape: &[i64]) -> Result<Option<Candidate>, SynthError> {
    let Layout::Cute(c) = l else {
        return Ok(None);
    };
    let dims: Vec<Vec<(i64, i64)>> = c.modes().iter().map(|m| m.flat_modes()).collect();
    if dims.len() != shape.len() {
        return Ok(None);
    }
    let mut order: Vec<(i64, usize, usize)> = Vec::new();
    for (d, modes) in dims.iter().enumerate() {
        for (k, &(_, s)) in modes.iter().enumerate() {
            order.push((s, d, k));
        }
    }
    order.sort_unstable();
    let mut strides: Vec<Vec<i64>> = dims.iter().map(|m| vec![0; m.len()]).collect();
    let mut next = 1i64;
    for &(_, d, k) in &order {
        let e = dims[d][k].0;
        strides[d][k] = if e == 1 { 0 } else { next };
        next = next
            .checked_mul(e)
            .ok_or_else(|| SynthError::Internal("storage order overflows".into()))?;
    }
    let parts = dims
        .iter()
        .zip(&strides)
        .map(|(m, s)| {
            let e: Vec<i64> = m.iter().map(|&(e, _)| e).collect();
            CuteLayout::from_flat(&e, s)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let layout = Layout::Cute(make_layout(&parts)?);
    Ok(Some(Candidate {
        table: table_of(&layout, shape)?,
        layout,
        canonical: None,
        label: "global order".into(),
    }))
}

/// The column-major tiling of a K-major atom `(8, W)` over `(R, C)`, or None when it does not
/// tile: `((8, R/8), (W, C/W)) : ((W, 8W), (1, 8W R/8))` under the atom's swizzle.
pub fn canonical(shape: &[i64], atom: &SwizzledLayout) -> Result<Option<Candidate>, SynthError> {
    let ext = atom.layout().top_shape();
    let (r, c) = (shape[0], shape[1]);
    if ext.len() != 2 || r % ext[0] != 0 || c % ext[1] != 0 {
        return Ok(None);
    }
    let (ar, w) = (ext[0], ext[1]);
    let rows = CuteLayout::from_flat(&[ar, r / ar], &[w, ar * w])?;
    let cols = CuteLayout::from_flat(&[w, c / w], &[1, ar * w * (r / ar)])?;
    let l = SwizzledLayout::new(*atom.swizzle(), make_layout(&[rows, cols])?)?;
    let layout = Layout::Swizzled(l);
    Ok(Some(Candidate {
        table: table_of(&layout, shape)?,
        layout,
        canonical: None,
        label: String::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::program::{Elem, Scope};

    fn tensor(shape: &[i64]) -> Tensor {
        Tensor {
            name: "s".into(),
            scope: Scope::Shared,
            dtype: Elem::F16,
            shape: shape.to_vec(),
            layout: None,
            bounds: None,
            line: 1,
        }
    }

    #[test]
    fn every_candidate_is_a_bijection_on_the_tile() {
        let t = tensor(&[128, 32]);
        let atom = match Layout::parse("Sw<2,3,3> o (8,32):(32,1)", None).unwrap() {
            Layout::Swizzled(s) => s,
            _ => unreachable!(),
        };
        let cs = candidates(&t, 8, &[1, 0], &[("SW64".into(), atom)]).unwrap();
        assert!(cs.len() > 10);
        for c in &cs {
            let mut s = c.table.clone();
            s.sort();
            assert_eq!(s, (0..4096).collect::<Vec<_>>(), "{}", c.label);
        }
        assert!(cs.iter().any(|c| c.canonical.is_some()));
    }
}
