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
