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
    /// Counted among the server's bulk transfers under way, once it has moved
    /// [`BULK_WIRE_BYTES`] (see `Sample::concurrent`).
    pub(super) bulk: Option<Bulk>,
}

/// Wire bytes after which a query counts as a bulk transfer sharing the link:
/// small queries running beside a large one do not make the link look faster.
const BULK_WIRE_BYTES: u64 = MIN_SAMPLE_BYTES / 8;

/// A run counted in its server's number of bulk transfers under way.
pub(super) struct Bulk {
    running: Arc<AtomicU32>,
    /// The count when this one joined it (itself included).
    at_start: u32,
}

impl Drop for Bulk {
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
        let choice = self.cfg.auto_links.with(&self.cfg, |a, _| a.choose(key));
        tracing::debug!(compression = ?choice.method, reason = choice.reason.as_str(), "compression=auto");
        self.proto.set_compression(Some(choice.method).filter(|m| *m != Method::None)).map_err(map_err)?;
        self.auto = Some(AutoRun {
            key,
            direction,
            method: choice.method,
            started: Instant::now(),
            wire_at_start: self.wire_bytes,
            raw: 0,
            io_wait: std::time::Duration::ZERO,
            bulk: None,
        });
        Ok(choice.method)
    }

    /// Adds the time since `started` to the running query's socket wait (see
    /// `AutoRun`), and counts the query among its server's bulk transfers once
    /// it has moved enough bytes to be one (the shared state's lock is taken
    /// then, once per large transfer, never for a small query).
    pub(super) fn add_io_wait(&mut self, started: Option<Instant>) {
        let (Some(t), Some(run)) = (started, &mut self.auto) else { return };
        run.io_wait += t.elapsed();
        if run.bulk.is_none() && self.wire_bytes - run.wire_at_start >= BULK_WIRE_BYTES {
            let running = self.cfg.auto_links.with(&self.cfg, |_, running| running.clone());
            let at_start = running.fetch_add(1, Ordering::Relaxed) + 1;
            run.bulk = Some(Bulk { running, at_start });
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
                    concurrent: run.bulk.as_ref().map_or(1, |b| b.at_start.max(b.running.load(Ordering::Relaxed))),
                };
                self.auto = None;
                self.cfg.auto_links.with(&self.cfg, |a, _| a.record(&sample));
            }
            Event::Exception(_) => self.auto = None,
            _ => {}
        }
    }
}
