//! chnative's integration tests, one module per area, all in this one binary (one link instead
//! of one per file), run in parallel. They share the real test server (`common`), so each test
//! uses tables of its own (`common::unique_table`); allocation counters are per thread
//! (`chnative_testkit::alloc`). Nothing here may disturb the others:
//! - a test that kills, restarts or reconfigures a server, or counts every socket or query of
//!   one, does so on a server of its own (`common::own_server::OwnServer`: faults_restart,
//!   hosts, chunked, pool_stress, cluster), never on the shared one;
//! - a test that captures tracing output sets its subscriber for its own thread
//!   (`tracing::subscriber::set_default` on a current-thread runtime), never the global one;
//! - cluster's tests use the servers of scripts/cluster.sh, which only they use;
//! - full_server's tests start full servers (roles, query_log) and a replicated cluster with
//!   ZooKeeper of their own (`common::replicated`), on ports the kernel picked.

#[global_allocator]
static ALLOC: chnative_testkit::alloc::Counting = chnative_testkit::alloc::Counting;

#[path = "../common/mod.rs"]
mod common;
#[path = "../common_proxy/mod.rs"]
mod common_proxy;
#[path = "../common_tls/mod.rs"]
mod common_tls;

mod aggregate_states;
mod alloc;
mod cancel;
mod cancel_safety;
mod chunked;
mod cluster;
mod compression_auto;
mod conversions;
mod deadline;
mod direct_read;
mod errors;
mod errors_hints;
mod faults;
mod faults_restart;
mod full_server;
mod handshake;
mod hostile;
mod hosts;
mod insert;
mod insert_blocks;
mod insert_variant;
mod inserter;
mod keepalive;
mod observe;
mod observer_log;
mod owned_blocks;
mod packets;
mod pool;
mod pool_stress;
mod qbit;
mod retry;
mod roundtrip_random;
mod rows;
mod rows_alloc;
mod select1_alloc;
mod serialization_kinds;
mod server_rendering;
mod session;
mod state;
mod stream_reuse;
mod surface;
mod tls;
mod tracing;
mod types_conformance;
mod types_dynamic;
mod types_read;
mod user_input;
mod uuid;
mod values;
mod view_alloc;
mod widening;
mod zones;
