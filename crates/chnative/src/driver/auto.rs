//! `compression=auto` on one connection: the codec of each query chosen by
//! `chnative_proto::compression::auto` (shared per server through the config),
//! and what the query is measured by when it ends (wire bytes, uncompressed
//! bytes, wall time, time spent waiting for the socket).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use chnative_proto::compression::auto::{statement_key, Direction, Sample, MIN_SAMPLE_BYTES};
use chnative_proto::compression::Method;
use chnative_proto::connection::Event;

use super::{map_err, Driver};
use crate::config::Compression;
use crate::error::Result;

/// A query running under `compression=auto`: what it is measured by when it ends.
pub(super) struct AutoRun {
    pub(super) key: u64,
    pub(super) direction: Direction,
    pub(super) method: Method,
    pub(super) started: Instant,
    pub(super) wire_at_start: u64,
    /// The bulk's uncompressed bytes: the result's (ProfileInfo) or the blocks sent.
    pub(super) raw: u64,
    /// Time spent waiting for the socket.
    pub(super) io_wait: std::time::Duration,
    /// The server's count of queries under `auto` under way (this one
    /// included until the run is dropped), and what it was when this one began.
    pub(super) running: Arc<AtomicU32>,
    pub(super) running_at_start: u32,
}

impl Drop for AutoRun {
    /// However the query ends (its end, an exception, a cancel, the connection
    /// dropped), it no longer runs.
    fn drop(&mut self) {
        self.running.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Driver {
    /// The codec a query under `compression=auto` runs with, set on the machine
    /// (the blocks we send) and measured when the query ends.
    pub(super) fn choose_compression(&mut self, sql: &str, insert: bool) -> Result<Method> {
        let direction = if insert { Direction::Write } else { Direction::Read };
        let key = statement_key(sql, direction);
        let (choice, running) = self.cfg.auto_links.with(&self.cfg, |a, running| (a.choose(key), running.clone()));
        tracing::debug!(compression = ?choice.method, reason = choice.reason.as_str(), "compression=auto");
        self.proto.set_compression(Some(choice.method).filter(|m| *m != Method::None)).map_err(map_err)?;
        // Counted from here: the run's Drop takes it back.
        let running_at_start = running.fetch_add(1, Ordering::Relaxed) + 1;
        self.auto = Some(AutoRun {
            key,
            direction,
            method: choice.method,
            started: Instant::now(),
            wire_at_start: self.wire_bytes,
            raw: 0,
            io_wait: std::time::Duration::ZERO,
            running,
            running_at_start,
        });
        Ok(choice.method)
    }

    /// Adds the time since `started` to the running query's socket wait (see `AutoRun`).
    pub(super) fn add_io_wait(&mut self, started: Option<Instant>) {
        if let (Some(t), Some(run)) = (started, &mut self.auto) {
            run.io_wait += t.elapsed();
        }
    }

    /// What the running (or last) query's blocks are compressed with.
    pub(crate) fn compression_used(&self) -> Compression {
        self.used.map_or(Compression::None, Compression::of)
    }

    /// Under `compression=auto`, takes in what the query's events say: its
    /// result's size, and its end (when the measurement is recorded).
    pub(super) fn observe_auto(&mut self, event: &Event) {
        let Some(run) = &mut self.auto else { return };
        match event {
            Event::ProfileInfo(p) if run.direction == Direction::Read => run.raw = run.raw.saturating_add(p.bytes),
            // A small query teaches the policy nothing (`Auto::record` drops it):
            // no lock of the shared state for it.
            Event::EndOfStream if run.raw < MIN_SAMPLE_BYTES => self.auto = None,
            Event::EndOfStream => {
                let sample = Sample {
                    key: run.key,
                    direction: run.direction,
                    method: run.method,
                    wire_bytes: self.wire_bytes - run.wire_at_start,
                    raw_bytes: run.raw,
                    elapsed: run.started.elapsed(),
                    io_wait: run.io_wait,
                    concurrent: run.running_at_start.max(run.running.load(Ordering::Relaxed)),
                };
                self.auto = None;
                self.cfg.auto_links.with(&self.cfg, |a, _| a.record(&sample));
            }
            Event::Exception(_) => self.auto = None,
            _ => {}
        }
    }
}
