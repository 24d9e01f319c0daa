//! Fuzz harnesses for chnative-proto.
//!
//! The decoding logic lives in [`harness`] (not in the libFuzzer entry points) so the
//! regression tests in `crates/chnative-proto/tests/fuzz_regressions.rs` replay a crash
//! through exactly the code the fuzzer ran: they include that file with `#[path]`.
pub mod harness;
