//! Every worked vector of spec/axe.md section 2, cute.md sections 1 and 3, linear.md sections 1
//! and 3, as tests.

use std::collections::BTreeSet;

use layout::axis::format_point;
use layout::{Layout, Swizzle, TirxSwizzle, TritonSwizzle};

fn points(text: &str, shape: &[i64], coord: &[i64]) -> Vec<String> {
    let l = Layout::parse(text, None).unwrap();
    l.eval(Some(shape), coord)
        .unwrap()
        .iter()
        .map(format_point)
        .collect()
}

#[test]
fn axe_tensor_core_tile_worked_vector() {
    let text = "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid";
    assert_eq!(
        points(text, &[8, 16], &[2, 9]),
        [
            "{laneid:8, reg:1, warpid:6}",
            "{laneid:8, reg:1, warpid:10}"
        ]
    );
    // Flat index 41, digits (2,1,0,1).
    assert_eq!(
        layout::shape::flatten_row_major(&[8, 16], &[2, 9]).unwrap(),
        41
    );
}

#[test]
fn axe_tensor_core_tile_on_axis_m() {
    let text = "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid";
    assert_eq!(
        points(text, &[8, 16], &[7, 15]),
        ["{laneid:31, m:1, warpid:6}", "{laneid:31, m:1, warpid:10}"]
    );
    assert_eq!(
        points(text, &[8, 16], &[0, 8]),
        ["{laneid:0, m:0, warpid:6}", "{laneid:0, m:0, warpid:10}"]
    );
}

#[test]
fn axe_tmem_mesh_and_sbuf_vectors() {
    assert_eq!(
        points(
            "S[(2,128,112):(112@TCol,1@TLane,1@TCol)]",
            &[2, 128, 112],
            &[1, 127, 111]
        ),
        ["{TCol:223, TLane:127}"]
    );
    // 2x2 mesh, 64x128 tensor, fully sharded: (33, 70) -> gpu (1*1 + 1*2) = 3, m = 1*128 + 6.
    assert_eq!(
        points(
            "S[(2,32,2,64):(1@gpuid,128@m,2@gpuid,1@m)]",
            &[64, 128],
            &[33, 70]
        ),
        ["{gpuid:3, m:134}"]
    );
    // Row-sharded and replicated over the second mesh dimension.
    assert_eq!(
        points(
            "S[(2,32,128):(1@gpuid,128@m,1@m)] + R[2:2@gpuid]",
            &[64, 128],
            &[33, 70]
        ),
        ["{gpuid:1, m:198}", "{gpuid:3, m:198}"]
    );
    assert_eq!(
        points("S[(2,128,512):(512@F,1@P,1@F)]", &[256, 512], &[129, 3]),
        ["{F:515, P:1}"]
    );
}

#[test]
fn cute_colexicographic_worked_vector() {
    let l = Layout::parse("(4,(2,4)):(2,(1,8))", None).unwrap();
    let Layout::Cute(c) = &l else { panic!("cute") };
    assert_eq!(c.eval_index(13).unwrap(), 11);
    assert_eq!(c.size(), 32);
    assert_eq!(c.cosize(), 32);
    assert_eq!(l.print(), "(4, (2, 4)):(2, (1, 8))");
}

#[test]
fn swizzle_vectors() {
    let sw = Swizzle::new(3, 4, 3).unwrap();
    assert_eq!(sw.apply(0x80).unwrap(), 0x90);
    for o in 0..4096 {
        assert_eq!(sw.apply(sw.apply(o).unwrap()).unwrap(), o);
    }
    let t = TirxSwizzle {
        per_element: 4,
        swizzle_len: 3,
        atom_len: 3,
    };
    assert_eq!(t.to_cute().unwrap(), sw);
    for m in 0..8192 {
        assert_eq!(t.apply(m).unwrap(), sw.apply(m).unwrap());
    }
    let tri = TritonSwizzle::new(8, 1, 8, vec![1, 0]).unwrap();
    let cute = tri.to_cute(64).unwrap();
    for i in 0..16 {
        for j in 0..64 {
            assert_eq!(
                tri.offset_2d(i, j, 64).unwrap(),
                cute.apply(i * 64 + j).unwrap()
            );
        }
    }
    let sl = Layout::parse("Sw<3,4,3> o (8,1024):(1024,1)", None).unwrap();
    assert_eq!(sl.print(), "Sw<3,4,3> o (8, 1024):(1024, 1)");
    let img: BTreeSet<_> = (0..8192)
        .map(|i| {
            if let Layout::Swizzled(s) = &sl {
                s.eval_index(i).unwrap()
            } else {
                0
            }
        })
        .collect();
    assert_eq!(img.len(), 8192);
}

#[test]
fn linear_figure1_vector() {
    let l = Layout::parse(
        "#ttg.linear<{register = [[0, 1], [1, 0]], lane = [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]], warp = [[8, 0]], block = []}>",
        Some(&[16, 16]),
    )
    .unwrap();
    let Layout::Linear(ll) = &l else {
        panic!("linear")
    };
    assert_eq!(
        ll.apply_named(&[("lane", 9), ("register", 1)]).unwrap(),
        vec![2, 3]
    );
    let b = Layout::parse(
        "#ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [4, 8], warpsPerCTA = [2, 1], order = [1, 0]}>",
        Some(&[16, 16]),
    )
    .unwrap();
    assert_eq!(b, l);
}
