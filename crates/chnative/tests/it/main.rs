//! chnative's integration tests, one module per area, in one binary (one link instead of one
//! per file). They share the real test server (`common`), so each test uses tables of its own
//! (`common::unique_table`); allocation counters are per thread (`chnative_testkit::alloc`).
//! Tests that stop, restart or start servers, or watch server-wide or process-wide state, are
//! in `tests/servers` instead, where they take turns.

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
mod compression_auto;
mod conversions;
mod deadline;
mod direct_read;
mod errors;
mod errors_hints;
mod faults;
mod handshake;
mod hostile;
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
mod qbit;
mod retry;
mod roundtrip_random;
mod rows;
mod rows_alloc;
mod select1_alloc;
mod serialization_kinds;
mod session;
mod state;
mod stream_reuse;
mod surface;
mod tls;
mod types_conformance;
mod types_dynamic;
mod types_read;
mod user_input;
mod uuid;
mod values;
mod view_alloc;
mod widening;
mod zones;
