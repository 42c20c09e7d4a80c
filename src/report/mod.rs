//! Presentation of results beyond one-line answers: terminal tables ([`table`]), pictures of
//! layouts as SVG ([`picture`] computes the grid from the layout semantics, [`svg`] draws it)
//! and the HTML report of `laycert verify --report` ([`html`]).

pub mod html;
pub mod picture;
pub mod svg;
pub mod table;
