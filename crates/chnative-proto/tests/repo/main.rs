//! chnative-proto's tests that read the repository outside the crate (the fuzz corpus and
//! harness, the `.hex` twins of the fixtures): a binary of their own so that the published
//! package, which leaves `tests/repo/` out, still has a complete `tests/it`.

mod fixtures_hex;
mod fuzz_regressions;
