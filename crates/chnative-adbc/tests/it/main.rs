//! chnative-adbc's integration tests (the driver from Python's ADBC driver manager, and from
//! Rust over TLS), one module per area, in one binary.

#[path = "../../../chnative/tests/common_tls/mod.rs"]
mod common_tls;

mod python;
mod tls;
