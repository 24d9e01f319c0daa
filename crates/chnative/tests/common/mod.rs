//! Shared helpers for the integration tests: a real ClickHouse server on loopback
//! (`chnative_testkit::server`, re-exported here), clients of it, and the fake server.
#![allow(dead_code)]

#[allow(unused_imports)] // not every binary has fake-server tests
pub use chnative_testkit::fake_server;

/// A server of a test's own (stopped on drop), for tests that must not touch the shared one.
pub mod own_server;

/// A tracing capture on the test's own thread.
pub mod capture;

/// Revisions the core suite runs at (oldest first); the last is the default.
pub const REVISIONS: [u64; 5] = [54460, 54465, 54473, 54483, 54492];

pub use chnative_testkit::server::*;

/// A client at a given revision and compression ("lz4", "zstd", "none").
pub async fn client_at(revision: u64, compression: &str) -> chnative::Client {
    chnative::Client::connect(&url(&format!("revision={revision}&compression={compression}")))
        .await
        .unwrap_or_else(|e| panic!("connect at revision {revision}: {e}"))
}

/// A default client.
pub async fn client() -> chnative::Client {
    chnative::Client::connect(&url("")).await.expect("connect")
}
