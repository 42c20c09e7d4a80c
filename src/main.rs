//! `laycert`: the command line. Argument parsing and dispatch only; every computation lives in the
//! library crates and the rendering in [`cli`].
//!
//! Output contract: the answer is stdout's first line (`--json`: one JSON object instead); exit 0
//! on success, 1 when `verify` finds a failing check, 2 on bad input (the message on stderr, parse
//! errors with a caret under the offending text), 101 on an internal error (never a backtrace).

mod cli;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// laycert: a verification-first tensor-layout solver and prover.
#[derive(Parser)]
#[command(name = "laycert", version, about, long_about = None)]
struct Args {
    /// Print one JSON object instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show a layout: its printed form, notation, domain, span per axis and facts.
    Show {
        /// The layout, in any notation (Axe `S[..]`, CuTe `(4,2):(2,1)`, `Sw<..> o ..`, TV
        /// `.. -> (16,8)`, Triton `#ttg.*` attributes, `LinearLayout::toString()` text).
        layout: String,
        /// Logical shape, e.g. `8,16` (default: the layout's own; Triton attributes need one).
        #[arg(long)]
        shape: Option<String>,
    },
    /// Evaluate a layout at one coordinate; prints the set of points it maps to.
    Eval {
        /// The layout, in any notation.
        layout: String,
        /// Logical shape, e.g. `8,16` (default: the layout's own).
        #[arg(long)]
        shape: Option<String>,
        /// Coordinate, e.g. `2,9`; linear layouts also take in-dim names: `register=1,lane=9`.
        #[arg(long, allow_hyphen_values = true)]
        coord: String,
    },
    /// Convert a layout to another formalism, exactly, or say why it has no exact form there.
    Convert {
        /// The layout, in any notation.
        layout: String,
        /// Target formalism: `axe`, `cute` or `linear`.
        #[arg(long)]
        to: String,
        /// Logical shape, e.g. `8,16` (default: the layout's own).
        #[arg(long)]
        shape: Option<String>,
    },
    /// Decide whether two layouts (any notations) are equivalent as relations between logical
    /// coordinates and physical points; prints the evidence or a counterexample.
    /// Exit 0 equivalent, 1 not equivalent, 3 unknown, 2 bad input.
    Equiv {
        /// Left layout.
        a: String,
        /// Right layout.
        b: String,
        /// Logical shape (and the tensor shape of Triton attributes), e.g. `16,8`.
        #[arg(long)]
        shape: Option<String>,
        /// Write the certificate (versioned JSON) here.
        #[arg(long)]
        cert: Option<String>,
    },
    /// Decide a property of one layout: injective, surjective (onto its image's bounding box)
    /// or bijective. Exit 0 proved, 1 refuted, 3 unknown, 2 bad input.
    ProveProperty {
        /// `injective`, `surjective` or `bijective`.
        property: String,
        /// The layout, in any notation.
        layout: String,
        /// Logical shape (and the tensor shape of Triton attributes), e.g. `16,8`.
        #[arg(long)]
        shape: Option<String>,
    },
    /// Re-verify a certificate from scratch: `valid` (exit 0) or `invalid: why` (exit 1).
    Check {
        /// The certificate file.
        cert: String,
    },
    /// Axe: the canonical form (D0/D1, C0-C2, sorted R) and the gap condition per axis.
    Canon {
        /// An Axe layout.
        layout: String,
        /// Fuse axes by this registry target's relations (e.g. `cuda`: tx = laneid + 32*warpid).
        #[arg(long)]
        target: Option<String>,
    },
    /// Axe: group by a shape, or by several at once (their common refinement).
    Group {
        /// An Axe layout.
        layout: String,
        /// A shape, e.g. `6,5`; repeat for several.
        #[arg(long = "shape", required = true)]
        shapes: Vec<String>,
    },
    /// Axe: the Kronecker tile of an inner layout by an outer one.
    Tile {
        /// Inner layout (the atom).
        inner: String,
        /// Outer layout.
        outer: String,
        /// Inner logical shape.
        #[arg(long)]
        inner_shape: String,
        /// Outer logical shape.
        #[arg(long)]
        outer_shape: String,
    },
    /// Axe: is L a tile of this inner atom (recover the outer) or of this outer (recover the inner)?
    TileOf {
        /// The tiled layout.
        layout: String,
        /// Its logical shape.
        #[arg(long)]
        shape: String,
        /// The inner atom.
        #[arg(long, requires = "inner_shape", conflicts_with = "outer")]
        inner: Option<String>,
        /// The inner atom's shape.
        #[arg(long)]
        inner_shape: Option<String>,
        /// The outer layout.
        #[arg(long, requires = "outer_shape")]
        outer: Option<String>,
        /// The outer layout's shape.
        #[arg(long)]
        outer_shape: Option<String>,
    },
    /// Axe: the layout of a rectangular region, e.g. `--region 2:3,6:10` (half-open).
    Slice {
        /// An Axe layout.
        layout: String,
        /// Its logical shape.
        #[arg(long)]
        shape: String,
        /// `begin:end` per dimension.
        #[arg(long)]
        region: String,
    },
    /// Axe: the direct sum of two layouts over interleaved domains (no span scaling).
    DirectSum {
        /// First layout.
        a: String,
        /// Second layout.
        b: String,
        /// Their shapes, `A_SHAPE/B_SHAPE`, e.g. `2,2/2,2`.
        #[arg(long)]
        shapes: String,
    },
    /// CuTe algebra, printed as pycute prints: coalesce, compose, complement, divide, product,
    /// left-inverse, right-inverse, recast.
    Cute {
        /// The operation.
        op: String,
        /// Its operands (layouts in CuTe notation, integers, variant names).
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Prove rewrite rules (rule files) for every parameter assignment within their bounds:
    /// one line per rule, PROVED / REFUTED (with a counterexample) / UNKNOWN (why).
    /// Exit 1 on REFUTED (and on UNKNOWN with --strict), 2 on bad input.
    Prove {
        /// Rule files (`corpus/rules/*.rules`).
        #[arg(required = true)]
        files: Vec<String>,
        /// Write JUnit XML here.
        #[arg(long)]
        junit: Option<String>,
        /// Write one certificate per rule into this directory.
        #[arg(long)]
        cert_dir: Option<String>,
        /// Also exit 1 when a rule is UNKNOWN.
        #[arg(long)]
        strict: bool,
        /// Largest parameter grid enumerated exhaustively (default 200000).
        #[arg(long)]
        max_instances: Option<u64>,
    },
    /// Validate concrete rewrites a compiler logged: JSON lines
    /// `{"before": L, "after": L, "relation": "equal"}`; same outputs and exit codes as prove.
    Validate {
        /// The JSON-lines file.
        pairs: String,
        /// Write JUnit XML here.
        #[arg(long)]
        junit: Option<String>,
        /// Write one certificate per pair into this directory.
        #[arg(long)]
        cert_dir: Option<String>,
        /// Also exit 1 when a pair is UNKNOWN.
        #[arg(long)]
        strict: bool,
    },
    /// Simplify a layout expression with the e-graph (only PROVED rules; concrete subterms
    /// folded): prints the cheapest equivalent form (cost: number of modes).
    Simplify {
        /// An expression, e.g. `coalesce(compose((4,8):(1,4), (2,4):(1,2)))`.
        expr: String,
        /// Rule files (default: the corpus rules compiled in).
        #[arg(long = "rules")]
        rules: Vec<String>,
        /// Write the explanation certificate here.
        #[arg(long)]
        cert: Option<String>,
    },
    /// Prove two layout expressions equal by saturation. Exit 0 equal, 3 unknown.
    EquivExpr {
        /// Left expression.
        a: String,
        /// Right expression.
        b: String,
        /// Rule files (default: the corpus rules compiled in).
        #[arg(long = "rules")]
        rules: Vec<String>,
        /// Write the explanation certificate here.
        #[arg(long)]
        cert: Option<String>,
    },
    /// The main job. Placeholder until the corpus issue: checks the spec's worked vectors.
    Verify,
}

fn main() -> ExitCode {
    cli::install_panic_hook();
    let args = Args::parse();
    let result = match &args.command {
        Command::Show { layout, shape } => cli::show::run(layout, shape.as_deref(), args.json),
        Command::Eval {
            layout,
            shape,
            coord,
        } => cli::eval::run(layout, shape.as_deref(), coord, args.json),
        Command::Convert { layout, to, shape } => {
            cli::convert::run(layout, to, shape.as_deref(), args.json)
        }
        Command::Equiv { a, b, shape, cert } => {
            cli::equiv::run(a, b, shape.as_deref(), cert.as_deref(), args.json)
        }
        Command::ProveProperty {
            property,
            layout,
            shape,
        } => cli::property::run(property, layout, shape.as_deref(), args.json),
        Command::Check { cert } => cli::check::run(cert, args.json),
        Command::Canon { layout, target } => {
            cli::algebra::canon(layout, target.as_deref(), args.json)
        }
        Command::Group { layout, shapes } => cli::algebra::group(layout, shapes, args.json),
        Command::Tile {
            inner,
            outer,
            inner_shape,
            outer_shape,
        } => cli::algebra::tile(inner, outer, inner_shape, outer_shape, args.json),
        Command::TileOf {
            layout,
            shape,
            inner,
            inner_shape,
            outer,
            outer_shape,
        } => cli::algebra::tile_of(
            layout,
            shape,
            inner.as_deref().zip(inner_shape.as_deref()),
            outer.as_deref().zip(outer_shape.as_deref()),
            args.json,
        ),
        Command::Slice {
            layout,
            shape,
            region,
        } => cli::algebra::slice(layout, shape, region, args.json),
        Command::DirectSum { a, b, shapes } => cli::algebra::direct_sum(a, b, shapes, args.json),
        Command::Cute { op, args: operands } => cli::algebra::cute(op, operands, args.json),
        Command::Prove {
            files,
            junit,
            cert_dir,
            strict,
            max_instances,
        } => cli::prove::run(
            files,
            &cli::prove::Outputs {
                junit: junit.as_deref(),
                cert_dir: cert_dir.as_deref(),
                strict: *strict,
                max_instances: *max_instances,
            },
            args.json,
        ),
        Command::Validate {
            pairs,
            junit,
            cert_dir,
            strict,
        } => cli::prove::validate(
            pairs,
            &cli::prove::Outputs {
                junit: junit.as_deref(),
                cert_dir: cert_dir.as_deref(),
                strict: *strict,
                max_instances: None,
            },
            args.json,
        ),
        Command::Simplify { expr, rules, cert } => {
            cli::simplify::simplify(expr, rules, cert.as_deref(), args.json)
        }
        Command::EquivExpr { a, b, rules, cert } => {
            cli::simplify::equiv_expr(a, b, rules, cert.as_deref(), args.json)
        }
        Command::Verify => Ok(cli::verify::run(args.json)),
    };
    match result {
        Ok(report) => {
            let mut out = std::io::stdout().lock();
            // A closed stdout (e.g. `| head -1`) is not an error of the command.
            let _ = out
                .write_all(report.stdout.as_bytes())
                .and_then(|_| out.flush());
            ExitCode::from(report.code)
        }
        Err(e) => {
            eprintln!("{}", e.message);
            ExitCode::from(cli::BAD_INPUT)
        }
    }
}
