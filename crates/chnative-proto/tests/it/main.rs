//! chnative-proto's integration tests, one module per area, in one binary. Allocation
//! counters are per thread (`chnative_testkit::alloc`), so the tests that count allocations
//! are not disturbed by the others running beside them.

#[global_allocator]
static ALLOC: chnative_testkit::alloc::Counting = chnative_testkit::alloc::Counting;

mod bounded;
mod chunked;
mod connection;
mod direct_fill;
mod golden;
mod golden_dynamic;
mod golden_kinds;
mod proptest_codecs;
mod steady_state_reads;
