//! Text notations: parse and print, for every formalism. Printing is exact: parsing printed text
//! gives the same value back.
//!
//! - [`axe`]: TIRx/Axe `S[(8,8):(8,1)] + R[2:4@warpid] + 5@warpid`
//! - [`cute`]: CuTe `(4, (2, 4)):(2, (1, 8))`, swizzled `Sw<3,4,3> o (8,64):(64,1)`, TV
//!   `((4,8),(2,2)):((32,1),(16,8)) -> (16,8)`
//! - [`nki`]: AWS NKI access patterns `t.ap(pattern=[[16, 16], [1, 8]], offset=8)` (read into
//!   Axe)
//! - [`tvm`]: TVM index maps `T.index_map(lambda i, j: (i // 16, j // 16, i % 16, j % 16))`
//!   on a buffer shape (read into Axe)
//! - [`tvm_layout`]: TVM data-layout strings `bijective_layout("NCHW", "NCHW16c")` (read into
//!   Axe through their index map)
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
pub mod nki;
pub mod tvm;
pub mod tvm_layout;

/// Which notation a text is written in, judged from its first characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notation {
    /// `S[...]`
    Axe,
    /// `shape:stride`
    Cute,
    /// `shape:stride` with CuTe ScaledBasis strides, `(_64,_8):(_1@0,_1@1)` (read into Axe;
    /// also a coordinate tensor's print `ArithTuple(_0,_0) o (_64,_8):(_1@0,_1@1)`)
    CuteBasis,
    /// `Sw<B,M,S> o shape:stride`
    Swizzled,
    /// `shape:stride -> (tile)`
    Tv,
    /// `#ttg.linear<{...}>` (or `#ttg.generic_linear<{...}>`)
    LinearAttr,
    /// `LinearLayout::toString()` text
    LinearText,
    /// An NKI access pattern `t.ap(pattern=[[step, num], ...], offset=...)`, a bare
    /// `[[step, num], ...]`, or `nl.ndarray(...)` declarations before one (read into Axe)
    NkiAp,
    /// A TVM index map `T.index_map(lambda i, j: ..)`, with the buffers declared around it
    /// (read into Axe)
    TvmIndexMap,
    /// A TVM data-layout string in its call, `bijective_layout("NCHW", "NCHW16c")`,
    /// `layout("NCHW16c")`, `layout_transform(x, src_layout=.., dst_layout=..)` (read into Axe)
    TvmDataLayout,
    /// Another `#ttg.` attribute (blocked, nvidia_mma, ...), or a Gluon constructor
    /// (`ttgl.BlockedLayout(...)`)
    TritonAttr,
}

impl Notation {
    /// Detects the notation of `text`. Text a tool prints around a layout (a CuTe tensor's
    /// pointer, a CuTe DSL type) is looked through.
    pub fn detect(text: &str) -> Notation {
        let t = text.trim_start();
        if tvm::is_index_map(t) {
            return Notation::TvmIndexMap;
        }
        if tvm_layout::is_data_layout(t) {
            return Notation::TvmDataLayout;
        }
        if nki::is_access_pattern(t) {
            return Notation::NkiAp;
        }
        if let Ok(Some(inner)) = cute::dsl_tensor(t) {
            return Notation::detect(&inner);
        }
        if t.starts_with("tensor<") {
            // A TTGIR tensor type: the notation of its encoding.
            return match crate::triton::tensor_type(t) {
                Ok(Some((encoding, _))) if !encoding.trim_start().starts_with("tensor<") => {
                    Notation::detect(&encoding)
                }
                _ => Notation::TritonAttr,
            };
        }
        if let Ok(Some(desc)) = crate::triton::memdesc::memdesc_type(t) {
            return Notation::detect(&desc.encoding);
        }
        let inner = cute::past_envelope(t);
        let head = inner.split("->").next().unwrap_or(inner);
        let swizzle = inner.starts_with("Sw<") || inner.starts_with("S<");
        if t.starts_with("S[") || t.starts_with("S [") || axe::is_tile_layout_call(t) {
            Notation::Axe
        } else if !t.starts_with('#') && !swizzle && has_scaled_basis(head) {
            Notation::CuteBasis
        } else if head.contains('@') && !t.starts_with('#') && !swizzle {
            // TIRx's docstring form, a shard with named axes and no `S[..]`.
            Notation::Axe
        } else if swizzle || t.starts_with("ComposedLayout<") {
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
            Notation::CuteBasis => "cute-basis",
            Notation::Swizzled => "swizzled",
            Notation::Tv => "tv",
            Notation::LinearAttr => "linear-attr",
            Notation::LinearText => "linear-text",
            Notation::TritonAttr => "triton",
            Notation::NkiAp => "nki-ap",
            Notation::TvmIndexMap => "tvm-index-map",
            Notation::TvmDataLayout => "tvm-data-layout",
        }
    }
}

/// Whether a CuTe stride names a codomain mode after `@` (`_1@0`), where an Axe stride names
/// an axis (`1@laneid`).
fn has_scaled_basis(text: &str) -> bool {
    text.match_indices('@').any(|(i, _)| {
        text[i + 1..]
            .trim_start()
            .starts_with(|c: char| c.is_ascii_digit())
    })
}
