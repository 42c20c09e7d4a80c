//! # egraph — layout terms in an e-graph
//!
//! Will hold the egg `Language` of layout terms (every operator of the Axe, CuTe and F2 algebras
//! plus concrete layout leaves), an `Analysis` that folds concrete subterms with `layout`'s
//! algebra, rewrites generated only from rules that `certify` PROVED, saturation, extraction
//! under a cost model, and explanations turned into certificates. Nothing lives here yet: the
//! rewrite-rules issue builds it.
#![warn(missing_docs)]
