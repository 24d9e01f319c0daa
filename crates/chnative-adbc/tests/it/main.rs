//! chnative-adbc's integration tests (the Python package built on the driver and its pytest
//! suite; the driver from Rust over TLS), one module per area, in one binary.

#[path = "../../../chnative/tests/common_tls/mod.rs"]
mod common_tls;

mod python;
mod tls;
