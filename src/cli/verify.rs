//! `laycert verify`, the main job. PLACEHOLDER until the corpus issue lands: it checks the
//! worked vectors of the specs (spec/axe.md, cute.md, linear.md) embedded below, by parsing,
//! printing, re-parsing and evaluating them, one line per check and a summary. The corpus issue
//! replaces this with the embedded corpus and the certified deciders.

use serde_json::json;

use layout::axis::format_point;
use layout::Layout;

use super::Report;

/// One evaluation: logical shape (None: the layout's own), coordinate, expected point set.
type Eval = (Option<&'static [i64]>, &'static [i64], &'static str);

/// A worked vector of a spec.
struct Vector {
    /// Where it comes from.
    name: &'static str,
    /// The layout text as the spec writes it.
    text: &'static str,
    /// The tensor shape the text needs (Triton attributes), if any.
    tensor_shape: Option<&'static [i64]>,
    /// Expected spans `(axis, span)` (Axe layouts).
    spans: &'static [(&'static str, i64)],
    /// Expected evaluations.
    evals: &'static [Eval],
}

const VECTORS: &[Vector] = &[
    Vector {
        name: "axe.md 2, tensor-core tile",
        text: "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid",
        tensor_shape: None,
        spans: &[("laneid", 32), ("reg", 2), ("warpid", 6)],
        evals: &[(Some(&[8, 16]), &[2, 9], "{{laneid:8, reg:1, warpid:6}, {laneid:8, reg:1, warpid:10}}")],
    },
    Vector {
        name: "axe.md 2, tensor-core tile, register on m",
        text: "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid",
        tensor_shape: None,
        spans: &[],
        evals: &[
            (Some(&[8, 16]), &[7, 15], "{{laneid:31, m:1, warpid:6}, {laneid:31, m:1, warpid:10}}"),
            (Some(&[8, 16]), &[0, 8], "{{laneid:0, m:0, warpid:6}, {laneid:0, m:0, warpid:10}}"),
        ],
    },
    Vector {
        name: "axe.md 2, Blackwell TMEM",
        text: "S[(2,128,112):(112@TCol,1@TLane,1@TCol)]",
        tensor_shape: None,
        spans: &[],
        evals: &[(Some(&[2, 128, 112]), &[1, 127, 111], "{{TCol:223, TLane:127}}")],
    },
    Vector {
        name: "axe.md 2, 2x2 mesh, fully sharded",
        text: "S[(2,32,2,64):(1@gpuid,128@m,2@gpuid,1@m)]",
        tensor_shape: None,
        spans: &[],
        evals: &[(Some(&[64, 128]), &[40, 100], "{{gpuid:3, m:1060}}")],
    },
    Vector {
        name: "axe.md 2, 2x2 mesh, row-sharded and replicated",
        text: "S[(2,32,128):(1@gpuid,128@m,1@m)] + R[2:2@gpuid]",
        tensor_shape: None,
        spans: &[],
        evals: &[(Some(&[64, 128]), &[40, 100], "{{gpuid:1, m:1124}, {gpuid:3, m:1124}}")],
    },
    Vector {
        name: "axe.md 2, Trainium SBUF",
        text: "S[(2,128,512):(512@F,1@P,1@F)]",
        tensor_shape: None,
        spans: &[("F", 1024), ("P", 128)],
        evals: &[(Some(&[2, 128, 512]), &[1, 5, 7], "{{F:519, P:5}}")],
    },
    Vector {
        name: "axe.md 4, span",
        text: "S[(8,8,8):(64@F,1@P,1@F)]",
        tensor_shape: None,
        spans: &[("F", 456), ("P", 8)],
        evals: &[],
    },
    Vector {
        name: "cute.md 1, hierarchical layout",
        text: "(4,(2,4)):(2,(1,8))",
        tensor_shape: None,
        spans: &[],
        evals: &[(None, &[3, 5], "{{m:23}}"), (Some(&[32]), &[9], "{{m:10}}")],
    },
    Vector {
        name: "cute.md 3, swizzled layout",
        text: "Sw<3,4,3> o (8,64):(64,1)",
        tensor_shape: None,
        spans: &[],
        evals: &[(None, &[1, 0], "{{m:64}}"), (None, &[2, 0], "{{m:144}}")],
    },
    Vector {
        name: "linear.md 1, figure 1 layout A",
        text: "#ttg.linear<{register=[[0,1],[1,0]], lane=[[0,2],[0,4],[0,8],[2,0],[4,0]], \
               warp=[[8,0]], block=[]}>",
        tensor_shape: Some(&[16, 16]),
        spans: &[],
        evals: &[(None, &[1, 9, 0, 0], "{{dim0:2, dim1:3}}")],
    },
    Vector {
        name: "linear.md 1, figure 1 as #ttg.blocked",
        text: "#ttg.blocked<{sizePerThread=[2,2], threadsPerWarp=[4,8], warpsPerCTA=[2,1], order=[1,0]}>",
        tensor_shape: Some(&[16, 16]),
        spans: &[],
        evals: &[(None, &[1, 9, 0, 0], "{{dim0:2, dim1:3}}")],
    },
    Vector {
        name: "linear.md 3, Triton MMAv2 16x16, instrShape [16,8], 1 warp",
        text: "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], \
               instrShape = [16, 8]}>",
        tensor_shape: Some(&[16, 16]),
        spans: &[],
        // register 5 = bits 0,2 -> (0,1)^(0,8); lane 6 = bits 1,2 -> (0,4)^(1,0).
        evals: &[(None, &[5, 6, 0, 0], "{{dim0:1, dim1:13}}")],
    },
];

/// The outcome of one check.
struct Check {
    name: String,
    failure: Option<String>,
}

/// Runs every check of one vector.
fn check_vector(v: &Vector) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut push = |what: String, r: Result<(), String>| {
        checks.push(Check {
            name: format!("{}: {what}", v.name),
            failure: r.err(),
        })
    };
    let l = match Layout::parse(v.text, v.tensor_shape) {
        Ok(l) => l,
        Err(e) => {
            push(format!("parse {}", v.text), Err(e.to_string()));
            return checks;
        }
    };
    let printed = l.print();
    let round_trip = match Layout::parse(&printed, v.tensor_shape) {
        Ok(back) if back == l => Ok(()),
        Ok(back) => Err(format!("re-parsing {printed:?} gave {:?}", back.print())),
        Err(e) => Err(format!("re-parsing {printed:?} failed: {e}")),
    };
    let shown = if printed.contains('\n') {
        String::new()
    } else {
        format!(" {printed}")
    };
    push(format!("parse, print{shown}, re-parse"), round_trip);
    for &(axis, want) in v.spans {
        let got = match &l {
            Layout::Axe(a) => layout::Axis::new(axis)
                .map(|ax| a.span(&ax))
                .map_err(|e| e.to_string()),
            _ => Err("span is defined for Axe layouts".to_string()),
        };
        let r = match got {
            Ok(s) if s == want => Ok(()),
            Ok(s) => Err(format!("got {s}")),
            Err(e) => Err(e),
        };
        push(format!("span {axis} = {want}"), r);
    }
    for &(shape, coord, want) in v.evals {
        let got = l.eval(shape, coord).map(|ps| {
            let body: Vec<String> = ps.iter().map(format_point).collect();
            format!("{{{}}}", body.join(", "))
        });
        let r = match got {
            Ok(s) if s == want => Ok(()),
            Ok(s) => Err(format!("got {s}")),
            Err(e) => Err(e.to_string()),
        };
        push(format!("{coord:?} -> {want}"), r);
    }
    checks
}

/// Runs `verify` (the placeholder): exit 0 when every check passes, 1 otherwise.
pub fn run(as_json: bool) -> Report {
    let checks: Vec<Check> = VECTORS.iter().flat_map(check_vector).collect();
    let failed = checks.iter().filter(|c| c.failure.is_some()).count();
    let passed = checks.len() - failed;
    let code = u8::from(failed > 0);
    if as_json {
        let list: Vec<serde_json::Value> = checks
            .iter()
            .map(|c| json!({ "check": c.name, "ok": c.failure.is_none(), "why": c.failure }))
            .collect();
        let value = json!({
            "placeholder": "laycert verify is a placeholder until the corpus issue: it checks the specs' worked vectors",
            "checks": list,
            "passed": passed,
            "failed": failed,
        });
        return Report {
            stdout: format!("{value}\n"),
            code,
        };
    }
    let mut out = String::from(
        "laycert verify: PLACEHOLDER until the corpus issue lands; checking the specs' worked vectors\n",
    );
    for c in &checks {
        match &c.failure {
            None => out += &format!("ok    {}\n", c.name),
            Some(why) => out += &format!("FAIL  {}: {why}\n", c.name),
        }
    }
    out += &format!("{passed} passed, {failed} failed\n");
    Report { stdout: out, code }
}
