//! chnative-cli's integration tests (`chn` run as a process, the interactive ones in a pty),
//! one module per area, in one binary.

#[path = "../common/mod.rs"]
mod common;

mod conformance;
mod cpp_client;
mod formats;
mod insert;
mod interactive;
mod queries;
