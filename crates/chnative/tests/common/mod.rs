//! Shared helpers for the integration tests: a real ClickHouse server on loopback
//! (`chnative_testkit::server`, re-exported here), clients of it, and the fake server.
#![allow(dead_code)]

#[allow(unused_imports)] // not every binary has fake-server tests
pub use chnative_testkit::fake_server;

/// A server of a test's own (stopped on drop), for tests that must not touch the shared one.
pub mod own_server;

/// Full servers (roles, query_log) and a replicated cluster with ZooKeeper, of a test's own.
pub mod replicated;

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

/// xorshift64*: a seeded, reproducible source of test values and choices.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A float in [-1, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 * 2.0 - 1.0
    }
}

/// Waits (bounded: 15 s in 50 ms steps) until `f` holds; false if it never did.
pub async fn eventually(mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..300 {
        if f() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    f()
}

/// The shared test server's protocol revision (from a client's handshake).
pub async fn server_revision() -> u64 {
    client().await.server_info().revision
}

/// The expression that hashes a whole row for table digests (`groupBitXor(<it>)`):
/// `cityHash64(*)`, or on 24.x, which cannot hash a NULL inside an Array(Nullable(…))
/// (NOT_IMPLEMENTED), the hash of the row's text.
pub fn row_hash() -> &'static str {
    if version() >= (25, 0, 0) {
        "cityHash64(*)"
    } else {
        "cityHash64(toString(tuple(*)))"
    }
}
