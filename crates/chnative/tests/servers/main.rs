//! chnative's integration tests that must not run beside the others: they stop or restart
//! the shared test server (faults_restart, hosts), start servers of their own (chunked, and
//! cluster with scripts/cluster.sh), count this process's sockets and the server's running
//! queries after a storm of cancelled calls (pool_stress) or set the process-wide tracing
//! subscriber (tracing). Cargo runs test
//! binaries one after another, so nothing of `tests/it` runs meanwhile; within this binary
//! every test takes [`alone`] first, so they take turns.

// The guard of `alone()` is held across awaits on purpose: it orders whole tests, each on a
// runtime of its own, and is never taken twice within one runtime.
#![allow(clippy::await_holding_lock)]

use std::sync::{Mutex, MutexGuard};

#[path = "../common/mod.rs"]
mod common;
#[path = "../common_proxy/mod.rs"]
mod common_proxy;
#[path = "../common_tls/mod.rs"]
mod common_tls;

/// Held for the whole of a test: one test of this binary at a time (a failed test's poisoned
/// lock is taken over).
pub fn alone() -> MutexGuard<'static, ()> {
    static ALONE: Mutex<()> = Mutex::new(());
    ALONE.lock().unwrap_or_else(|e| e.into_inner())
}

mod chunked;
mod cluster;
mod faults_restart;
mod hosts;
mod pool_stress;
mod tracing;
