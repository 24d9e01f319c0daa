//! The test kit of the chnative workspace: what the crates' integration tests share.
//!
//! Not published (`publish = false`); the crates take it as a path-only dev-dependency, which
//! `cargo package` drops from the published manifests.
//!
//! - [`server`]: the real ClickHouse test server (started by `scripts/server.sh` when none
//!   answers), its HTTP interface as the reference, tables dropped at the end of a test.
//! - [`cluster`]: the local cluster of `scripts/cluster.sh` (2 shards × 2 replicas).
//! - [`alloc`]: a counting global allocator whose counters are per thread, so a test that
//!   counts allocations is not disturbed by the other tests of the same binary.
//! - [`fake_server`]: a server of one scripted connection, for replies a real server cannot
//!   send.
//! - [`packets`]: server packets built by hand, for bytes a real server cannot send.
//! - [`rows`]: result rows as TSV text and their comparison with ClickHouse's (Arrow
//!   batches with the feature `arrow`).

pub mod alloc;
pub mod cluster;
pub mod fake_server;
pub mod packets;
pub mod rows;
pub mod server;
