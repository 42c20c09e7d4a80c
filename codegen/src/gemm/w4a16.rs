//! W4A16 (placeholder).
