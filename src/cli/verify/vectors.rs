//! The specs' worked vectors (`corpus/data/spec/vectors.toml`): parse, print, re-parse, spans
//! and evaluations, each a check decided by the layout semantics.

use std::time::Instant;

use corpus::Vector;
use layout::axis::format_point;
use layout::Layout;

use super::check::{subject, Check, Suite};

/// One check of one vector.
enum Step {
    RoundTrip,
    Span(usize),
    Eval(usize),
}

/// Every vector's checks, in order.
pub struct Vectors {
    steps: Vec<(Vector, Step)>,
}

impl Vectors {
    /// The checks of `vectors`.
    pub fn new(vectors: &[Vector]) -> Vectors {
        let mut steps = Vec::new();
        for v in vectors {
            steps.push((v.clone(), Step::RoundTrip));
            steps.extend((0..v.spans.len()).map(|i| (v.clone(), Step::Span(i))));
            steps.extend((0..v.evals.len()).map(|i| (v.clone(), Step::Eval(i))));
        }
        Vectors { steps }
    }
}

impl Suite for Vectors {
    fn kind(&self) -> &'static str {
        "spec-vector"
    }

    fn len(&self) -> usize {
        self.steps.len()
    }

    fn run(&self, i: usize) -> Check {
        let (v, step) = &self.steps[i];
        let t = Instant::now();
        let (what, result) = match Layout::parse(&v.layout, v.tensor_shape.as_deref()) {
            Err(e) => ("parse".to_string(), Err(e.to_string())),
            Ok(l) => match step {
                Step::RoundTrip => round_trip(v, &l),
                Step::Span(k) => span(&l, &v.spans[*k]),
                Step::Eval(k) => eval(&l, &v.evals[*k]),
            },
        };
        let (got, detail) = match result {
            Ok(()) => ("ok".to_string(), None),
            Err(why) => ("wrong".to_string(), Some(why)),
        };
        Check {
            kind: self.kind(),
            name: format!("{}: {what}", v.name),
            source: v.source.clone(),
            expected: "ok".into(),
            got,
            detail,
            deciders: vec!["semantics".into()],
            micros: t.elapsed().as_micros(),
            subjects: vec![subject("layout", &v.layout, v.tensor_shape.as_deref())],
        }
    }
}

fn round_trip(v: &Vector, l: &Layout) -> (String, Result<(), String>) {
    let printed = l.print();
    let r = match Layout::parse(&printed, v.tensor_shape.as_deref()) {
        Ok(back) if back == *l => Ok(()),
        Ok(back) => Err(format!("re-parsing {printed:?} gave {:?}", back.print())),
        Err(e) => Err(format!("re-parsing {printed:?} failed: {e}")),
    };
    let shown = if printed.contains('\n') {
        String::new()
    } else {
        format!(" {printed}")
    };
    (format!("parse, print{shown}, re-parse"), r)
}

fn span(l: &Layout, (axis, want): &(String, i64)) -> (String, Result<(), String>) {
    let got = match l {
        Layout::Axe(a) => layout::Axis::new(axis)
            .map(|ax| a.span(&ax))
            .map_err(|e| e.to_string()),
        _ => Err("span is defined for Axe layouts".to_string()),
    };
    let r = match got {
        Ok(s) if s == *want => Ok(()),
        Ok(s) => Err(format!("got {s}")),
        Err(e) => Err(e),
    };
    (format!("span {axis} = {want}"), r)
}

fn eval(l: &Layout, e: &corpus::vector::Evaluation) -> (String, Result<(), String>) {
    let got = l.eval(e.shape.as_deref(), &e.coord).map(|ps| {
        let body: Vec<String> = ps.iter().map(format_point).collect();
        format!("{{{}}}", body.join(", "))
    });
    let r = match got {
        Ok(s) if s == e.points => Ok(()),
        Ok(s) => Err(format!("got {s}")),
        Err(err) => Err(err.to_string()),
    };
    (format!("{:?} -> {}", e.coord, e.points), r)
}
