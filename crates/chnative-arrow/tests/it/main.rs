//! chnative-arrow's integration tests, one module per area, in one binary.

#[global_allocator]
static ALLOC: chnative_testkit::alloc::Counting = chnative_testkit::alloc::Counting;

#[path = "../common/mod.rs"]
mod common;

mod alloc_insert;
mod alloc_read;
mod dynamic;
mod insert;
mod types;
