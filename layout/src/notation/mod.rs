//! Text notations: parse and print, for every formalism. Printing is exact: parsing printed text
//! gives the same value back.
//!
//! - [`axe`]: TIRx/Axe `S[(8,8):(8,1)] + R[2:4@warpid] + 5@warpid`
//! - [`cute`]: CuTe `(4, (2, 4)):(2, (1, 8))`, swizzled `Sw<3,4,3> o (8,64):(64,1)`, TV
//!   `((4,8),(2,2)):((32,1),(16,8)) -> (16,8)`
//! - [`linear`]: Triton's `#ttg.linear<{...}>` and `LinearLayout::toString()` text
//! - Triton distributed/shared attributes live in [`crate::triton`].

pub mod axe;
pub(crate) mod cursor;
pub mod cute;
pub mod dtensor;
pub mod hlo;
pub mod hlo_module;
pub mod jax;
pub mod linear;

/// Which notation a text is written in, judged from its first characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notation {
    /// `S[...]`
    Axe,
    /// `shape:stride`
    Cute,
    /// `Sw<B,M,S> o shape:stride`
    Swizzled,
    /// `shape:stride -> (tile)`
    Tv,
    /// `#ttg.linear<{...}>` (or `#ttg.generic_linear<{...}>`)
    LinearAttr,
    /// `LinearLayout::toString()` text
    LinearText,
    /// Another `#ttg.` attribute (blocked, nvidia_mma, ...), or a Gluon constructor
    /// (`ttgl.BlockedLayout(...)`)
    TritonAttr,
}

impl Notation {
    /// Detects the notation of `text`.
    pub fn detect(text: &str) -> Notation {
        let t = text.trim_start();
        let head = t.split("->").next().unwrap_or(t);
        if t.starts_with("S[") || t.starts_with("S [") || t.starts_with("TileLayout(") {
            Notation::Axe
        } else if head.contains('@') && !t.starts_with('#') && !t.starts_with("Sw<") {
            // TIRx's docstring form, a shard with named axes and no `S[..]`.
            Notation::Axe
        } else if t.starts_with("Sw<") || t.starts_with("ComposedLayout<") {
            Notation::Swizzled
        } else if t.starts_with("#ttg.linear")
            || t.starts_with("#triton_gpu.linear")
            || t.starts_with("#ttg.generic_linear")
        {
            Notation::LinearAttr
        } else if t.starts_with('#') || crate::triton::gluon::is_gluon(t) {
            Notation::TritonAttr
        } else if t.starts_with('-') || t.contains("where out dims are") {
            Notation::LinearText
        } else if t.contains("->") {
            Notation::Tv
        } else {
            Notation::Cute
        }
    }

    /// The notation's name, as error messages and `--json` output say it.
    pub fn name(self) -> &'static str {
        match self {
            Notation::Axe => "axe",
            Notation::Cute => "cute",
            Notation::Swizzled => "swizzled",
            Notation::Tv => "tv",
            Notation::LinearAttr => "linear-attr",
            Notation::LinearText => "linear-text",
            Notation::TritonAttr => "triton",
        }
    }
}
