//! The derives' compile errors, as the user sees them: each `ui/*.rs` must fail to compile
//! with exactly the message in its `ui/*.stderr` twin (trybuild). The cases use no item of
//! chnative (a derive that refuses its input emits only the error), so the crate under test is
//! the only dependency they build.
//!
//! After changing a message: `TRYBUILD=overwrite cargo test -p chnative-derive --test ui`, then
//! review the `.stderr` diff.

#[test]
fn derive_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
