//! chnative-arrow's integration tests, one module per area, in one binary.

#[path = "../common/mod.rs"]
mod common;

mod insert;
mod types;
