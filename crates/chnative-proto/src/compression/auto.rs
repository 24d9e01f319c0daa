//! `compression=auto`: the codec of each query chosen from what the link did.
//!
//! No socket here: the driver reports what each finished query moved and how
//! long it took ([`Sample`]), and asks before each query which codec to use
//! ([`Auto::choose`]). The policy:
//!
//! - **A fast link is left uncompressed.** Compression costs CPU on both ends
//!   and pays only when the link, not the server or the client, limits a
//!   transfer. Each query that moved at least [`MIN_SAMPLE_BYTES`] is evidence
//!   ([`link_evidence`]): wire bytes at [`FAST_LINK`] or more over its wall
//!   time prove a fast link; an uncompressed one that was slower shows a slow
//!   link only if the client spent most of it waiting for the socket
//!   ([`Sample::io_wait`]) — a client busy with its rows (or a debug build) is
//!   not a slow link, and compressing would only add to its work; a
//!   compressed one that was slower proves nothing (its codec may be what took
//!   the time). Until some query is evidence, or while a recent one shows a
//!   fast link, every query goes uncompressed. On loopback and fast LANs this
//!   is the whole policy: no query ever pays for exploring.
//! - **On a slower link, each statement learns its codec.** How much a codec
//!   saves depends on the data (random strings hardly shrink, sequences shrink
//!   8×) and what it costs depends on which end compresses, so no rule from
//!   the link alone picks right for every table (measured on a 1 Gbit link:
//!   ZSTD(1) read 1M hits rows fastest, LZ4 read 20M integers fastest). A
//!   statement (its text, the direction) first runs once with each of LZ4,
//!   ZSTD(1) and none, then uses the one with the least wall time per
//!   uncompressed byte, the best of its last [`KEEP`] runs (a run slowed by
//!   something else on the machine does not turn the choice); a codec within
//!   [`TIE`] of a cheaper one loses to it (none is cheaper than LZ4, LZ4 than
//!   ZSTD). Every [`REEXPLORE`]th run tries another codec again, so a choice
//!   follows data and links that change.
//! - Statements not seen before on a slow link start with LZ4 (the cheap codec
//!   that never moves more bytes than none).
//!
//! Small queries (under [`MIN_SAMPLE_BYTES`] uncompressed) teach nothing: their
//! time is round trips, not bytes.

use std::collections::HashMap;
use std::time::Duration;

use super::Method;

/// A transfer at this rate or more (bytes per second of wall time) shows a link
/// compression cannot speed up: 400 MB/s, above what LZ4 compresses per core on
/// the servers measured and about 3.2 Gbit.
pub const FAST_LINK: f64 = 400e6;

/// The least uncompressed volume a query must move to count as a sample (4 MiB).
pub const MIN_SAMPLE_BYTES: u64 = 4 << 20;

/// How much faster (as a fraction of wall time per byte) a costlier codec must
/// be to win over a cheaper one: 5 %.
pub const TIE: f64 = 0.05;

/// Every this many runs of a statement on a slow link, one run tries another codec.
pub const REEXPLORE: u32 = 32;

/// How many recent runs of each codec a statement keeps; its cost is their best.
pub const KEEP: usize = 4;

/// How many statements are remembered (a full table starts again).
const MAX_STATEMENTS: usize = 1024;

/// How many recent fast-or-not observations decide whether the link is fast.
const LINK_MEMORY: u32 = 8;

/// The codecs auto chooses among, cheapest first.
pub const CANDIDATES: [Method; 3] = [Method::None, Method::Lz4, Method::Zstd { level: 1 }];

/// Which way a query's bulk moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Direction {
    /// A query whose result comes from the server.
    Read,
    /// An INSERT whose data goes to the server.
    Write,
}

/// Why [`Auto::choose`] chose what it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// No query has moved enough bytes yet to measure the link.
    Unmeasured,
    /// A recent transfer ran at [`FAST_LINK`] or more.
    FastLink,
    /// The statement has not run with this codec yet (or is due to try it again).
    Exploring,
    /// The codec with the least wall time per byte in this statement's runs.
    Learned,
    /// A statement not seen before, on a slow link.
    SlowLinkDefault,
}

impl Reason {
    /// A short name, for spans and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Unmeasured => "link not measured yet",
            Reason::FastLink => "fast link",
            Reason::Exploring => "exploring",
            Reason::Learned => "learned",
            Reason::SlowLinkDefault => "slow link, new statement",
        }
    }
}

/// What one finished query did, as the driver measured it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// [`statement_key`] of the query's text.
    pub key: u64,
    /// Which way its bulk moved.
    pub direction: Direction,
    /// The codec it ran with.
    pub method: Method,
    /// Bytes on the wire in both directions while it ran.
    pub wire_bytes: u64,
    /// Its bulk uncompressed: the result's bytes (ProfileInfo) for a read, the
    /// blocks' bytes for a write.
    pub raw_bytes: u64,
    /// From sending the query to its end.
    pub elapsed: Duration,
    /// The part of `elapsed` spent waiting for the socket (to bring bytes, or
    /// to take them).
    pub io_wait: Duration,
    /// Bulk transfers to the same server under way at once, this one included
    /// (the more of the counts when it joined them and at its end; 0 counts as 1). They share
    /// the link: its rate is theirs together, about this many times this one's.
    pub concurrent: u32,
}

/// The codec for one query, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The codec ([`Method::None`]: uncompressed).
    pub method: Method,
    /// Why.
    pub reason: Reason,
}

/// A statement key: a hash of the query's text (FNV-1a, stable across runs).
pub fn statement_key(sql: &str, direction: Direction) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ direction as u64;
    for b in sql.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// What is known of one statement: seconds per uncompressed byte of the last
/// [`KEEP`] runs of each codec (0.0: no run), and how many times it has run.
#[derive(Debug, Default, Clone)]
struct Statement {
    recent: [[f64; KEEP]; CANDIDATES.len()],
    /// Where each codec's next run is written in `recent`.
    next: [usize; CANDIDATES.len()],
    runs: u32,
    /// A first run of each codec under way: the statement's run count when it
    /// began (see [`EXPLORING_RUNS`]).
    exploring: [Option<u32>; CANDIDATES.len()],
}

/// For how many runs of its statement a codec's first run counts as under way:
/// meanwhile, runs of the statement at the same time (parallel INSERTs of one
/// statement) do not all try the same untried codec at once. A run that never
/// reports (too small, cancelled, failed) frees it after this many.
const EXPLORING_RUNS: u32 = 16;

impl Statement {
    /// Each codec's best recent cost, `None` for a codec not run yet.
    fn costs(&self) -> [Option<f64>; CANDIDATES.len()] {
        self.recent.map(|r| r.iter().copied().filter(|c| *c > 0.0).reduce(f64::min))
    }
}

/// The learned state of one link (one server): share it between the
/// connections to that server.
#[derive(Debug, Clone)]
pub struct Auto {
    /// The rate from which a link counts as fast ([`FAST_LINK`] unless set).
    fast_link: f64,
    /// Recent large transfers, newest in bit 0: 1 where it was fast.
    fast_bits: u32,
    /// How many large transfers have been seen (up to `LINK_MEMORY`).
    observed: u32,
    statements: HashMap<u64, Statement>,
    /// The handshake's round trip, when the driver reported one.
    handshake_rtt: Option<Duration>,
}

impl Default for Auto {
    fn default() -> Self {
        Auto { fast_link: FAST_LINK, fast_bits: 0, observed: 0, statements: HashMap::new(), handshake_rtt: None }
    }
}

fn index_of(m: Method) -> Option<usize> {
    CANDIDATES.iter().position(|c| *c == m)
}

impl Auto {
    /// Nothing known yet: every query goes uncompressed until one measures the link.
    pub fn new() -> Auto {
        Auto::default()
    }

    /// Counts a link as fast from `bytes_per_second` (wire bytes over wall
    /// time) instead of [`FAST_LINK`]: `f64::INFINITY` treats every link as
    /// slow (every large transfer is evidence of a slow link), so every
    /// statement explores; 0 never compresses.
    pub fn set_fast_link(&mut self, bytes_per_second: f64) {
        self.fast_link = bytes_per_second;
    }

    /// Notes the handshake's round trip (reported, not used to choose: a
    /// rate-limited link can have a loopback's round trip).
    pub fn note_handshake(&mut self, rtt: Duration) {
        self.handshake_rtt = Some(rtt);
    }

    /// The last handshake's round trip.
    pub fn handshake_rtt(&self) -> Option<Duration> {
        self.handshake_rtt
    }

    /// Whether the link is known to be fast: the latest large transfer, or any
    /// of the recent ones, ran at [`FAST_LINK`] or more (a slow transfer on a
    /// fast link is the server or the client being slow; a fast one proves the
    /// link).
    pub fn link_is_fast(&self) -> Option<bool> {
        (self.observed > 0).then_some(self.fast_bits != 0)
    }

    /// The codec for the next run of statement `key`.
    pub fn choose(&mut self, key: u64) -> Choice {
        let pick = |method, reason| Choice { method, reason };
        match self.link_is_fast() {
            None => return pick(Method::None, Reason::Unmeasured),
            Some(true) => return pick(Method::None, Reason::FastLink),
            Some(false) => {}
        }
        let Some(s) = self.statements.get_mut(&key) else {
            return pick(Method::Lz4, Reason::SlowLinkDefault);
        };
        s.runs = s.runs.wrapping_add(1);
        let runs = s.runs;
        let costs = s.costs();
        let under_way = |since: Option<u32>| since.is_some_and(|b| runs.wrapping_sub(b) < EXPLORING_RUNS);
        if let Some(i) = (0..CANDIDATES.len()).find(|&i| costs[i].is_none() && !under_way(s.exploring[i])) {
            s.exploring[i] = Some(runs);
            return pick(CANDIDATES[i], Reason::Exploring);
        }
        if costs.iter().all(Option::is_none) {
            // Every untried codec's first run is under way: wait for one to report.
            return pick(Method::Lz4, Reason::SlowLinkDefault);
        }
        let best = best_of(&costs);
        if s.runs % REEXPLORE == 0 {
            let other = (best + 1 + (s.runs / REEXPLORE) as usize % (CANDIDATES.len() - 1)) % CANDIDATES.len();
            return pick(CANDIDATES[other], Reason::Exploring);
        }
        pick(CANDIDATES[best], Reason::Learned)
    }

    /// Takes in what a finished query did.
    pub fn record(&mut self, s: &Sample) {
        if s.raw_bytes < MIN_SAMPLE_BYTES || s.elapsed.is_zero() {
            return;
        }
        let secs = s.elapsed.as_secs_f64();
        if let Some(fast) = link_evidence(s, self.fast_link) {
            self.fast_bits = ((self.fast_bits << 1) | u32::from(fast)) & ((1 << LINK_MEMORY) - 1);
            self.observed = (self.observed + 1).min(LINK_MEMORY);
        }
        let Some(i) = index_of(s.method) else { return };
        if self.statements.len() >= MAX_STATEMENTS && !self.statements.contains_key(&s.key) {
            self.statements.clear();
        }
        let st = self.statements.entry(s.key).or_default();
        st.exploring[i] = None;
        st.recent[i][st.next[i]] = secs / s.raw_bytes as f64;
        st.next[i] = (st.next[i] + 1) % KEEP;
    }
}

/// What a large transfer says of the link: `Some(true)` fast (or not what
/// limited the transfer), `Some(false)` slow, `None` nothing (see the module
/// documentation). `fast_link` is the rate in bytes per second.
pub fn link_evidence(s: &Sample, fast_link: f64) -> Option<bool> {
    if fast_link == f64::INFINITY {
        return Some(false);
    }
    let secs = s.elapsed.as_secs_f64();
    // Transfers running beside this one share the link: judge the link by their
    // rate together (16 parallel INSERTs held back by a busy server each move a
    // sixteenth of what the link carries, and each looks like a slow link alone).
    let together = s.wire_bytes as f64 * f64::from(s.concurrent.max(1));
    if together >= fast_link * secs {
        return Some(true);
    }
    if s.method != Method::None {
        return None;
    }
    // Slower than a fast link, uncompressed: the link limited it if the client
    // mostly waited for the socket; if the client was mostly busy, it did not.
    Some(s.io_wait.as_secs_f64() * 2.0 < secs)
}

/// The cheapest codec whose cost is within `TIE` of the least cost.
fn best_of(cost: &[Option<f64>; CANDIDATES.len()]) -> usize {
    let least = cost.iter().flatten().fold(f64::INFINITY, |a, &b| a.min(b));
    cost.iter().position(|c| c.is_some_and(|c| c <= least * (1.0 + TIE))).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1_000_000;

    /// A run that waited for the socket all along (a link-bound transfer).
    fn sample(key: u64, method: Method, raw_mb: u64, wire_mb: u64, ms: u64) -> Sample {
        Sample {
            key,
            direction: Direction::Read,
            method,
            wire_bytes: wire_mb * MB,
            raw_bytes: raw_mb * MB,
            elapsed: Duration::from_millis(ms),
            io_wait: Duration::from_millis(ms),
            concurrent: 1,
        }
    }

    /// Parallel runs of one statement on a slow link: one at a time tries each
    /// untried codec, the others use the best one measured so far.
    #[test]
    fn parallel_runs_do_not_all_explore_the_same_codec() {
        let mut a = Auto::new();
        a.record(&sample(9, Method::None, 10, 10, 1000)); // another statement: a slow link
        a.record(&sample(1, Method::Lz4, 100, 50, 1000));
        // LZ4 measured; none and ZSTD untried: the first two runs try them, the
        // rest (running beside them) use LZ4.
        let picks: Vec<Choice> = (0..6).map(|_| a.choose(1)).collect();
        assert_eq!(picks[0], Choice { method: Method::None, reason: Reason::Exploring });
        assert_eq!(picks[1], Choice { method: Method::Zstd { level: 1 }, reason: Reason::Exploring });
        assert!(picks[2..].iter().all(|c| *c == Choice { method: Method::Lz4, reason: Reason::Learned }), "{picks:?}");
        // A first run that never reports frees its codec after EXPLORING_RUNS runs.
        let later: Vec<Choice> = (0..EXPLORING_RUNS).map(|_| a.choose(1)).collect();
        assert!(later.iter().any(|c| c.method == Method::None && c.reason == Reason::Exploring), "{later:?}");
    }

    /// 16 transfers at once, each at a sixteenth of a fast link and waiting for
    /// the socket all along: the link carried them all, so it is fast; one such
    /// transfer alone is a slow link.
    #[test]
    fn concurrent_transfers_are_judged_together() {
        // 25 MB in 1 s each: 25 MB/s alone, 400 MB/s for 16 together.
        let one = sample(1, Method::None, 25, 25, 1000);
        assert_eq!(link_evidence(&one, FAST_LINK), Some(false));
        let sixteen = Sample { concurrent: 16, ..one };
        assert_eq!(link_evidence(&sixteen, FAST_LINK), Some(true));
        let mut a = Auto::new();
        for _ in 0..16 {
            a.record(&sixteen);
        }
        assert_eq!(a.choose(1), Choice { method: Method::None, reason: Reason::FastLink });
        // On a link that is slow even for 16 together, they explore as one would.
        let slow = Sample { concurrent: 16, ..sample(2, Method::None, 5, 5, 1000) };
        let mut b = Auto::new();
        b.record(&slow);
        assert_eq!(b.choose(2).reason, Reason::Exploring);
    }

    #[test]
    fn unmeasured_and_fast_links_stay_uncompressed() {
        let mut a = Auto::new();
        assert_eq!(a.choose(1), Choice { method: Method::None, reason: Reason::Unmeasured });
        // A small query teaches nothing.
        a.record(&sample(1, Method::None, 1, 1, 1));
        assert_eq!(a.choose(1).reason, Reason::Unmeasured);
        // 1 GB in 1.5 s: 667 MB/s, a fast link.
        a.record(&sample(1, Method::None, 1000, 1000, 1500));
        assert_eq!(a.choose(1), Choice { method: Method::None, reason: Reason::FastLink });
        // A slow transfer (a slow server) does not make a fast link slow.
        a.record(&sample(2, Method::None, 100, 100, 2000));
        assert_eq!(a.choose(2).method, Method::None);
    }

    #[test]
    fn a_compressed_transfer_proves_only_a_fast_link() {
        let mut a = Auto::new();
        // LZ4 at 1 Gbit: 80 MB in 0.675 s, the client decompressing while the link
        // kept filling the socket (0.19 s of waiting): nothing said of the link.
        let lz4 = Sample { io_wait: Duration::from_millis(189), ..sample(1, Method::Lz4, 160, 80, 675) };
        assert_eq!(link_evidence(&lz4, FAST_LINK), None);
        a.record(&lz4);
        assert_eq!(a.link_is_fast(), None);
        // 500 MB in 1 s, compressed or not: a fast link.
        let quick = sample(1, Method::Zstd { level: 1 }, 900, 500, 1000);
        assert_eq!(link_evidence(&quick, FAST_LINK), Some(true));
    }

    #[test]
    fn a_busy_client_is_not_a_slow_link() {
        let mut a = Auto::new();
        // 100 MB in 2 s of wall time (50 MB/s), of which 0.1 s waiting for the socket.
        a.record(&Sample { io_wait: Duration::from_millis(100), ..sample(1, Method::None, 100, 100, 2000) });
        assert_eq!(a.link_is_fast(), Some(true));
        let mut a = Auto::new();
        a.record(&Sample { io_wait: Duration::ZERO, ..sample(1, Method::None, 100, 100, 2000) });
        assert_eq!(a.link_is_fast(), Some(true));
        let mut a = Auto::new();
        a.record(&Sample { io_wait: Duration::from_millis(1900), ..sample(1, Method::None, 100, 100, 2000) });
        assert_eq!(a.link_is_fast(), Some(false));
    }

    #[test]
    fn a_slow_link_explores_each_codec_then_keeps_the_fastest() {
        let mut a = Auto::new();
        // 1 Gbit: 1019 MB in 8.7 s uncompressed.
        a.record(&sample(7, Method::None, 1019, 1019, 8700));
        assert_eq!(a.link_is_fast(), Some(false));
        assert_eq!(a.choose(8), Choice { method: Method::Lz4, reason: Reason::SlowLinkDefault });
        // Statement 7 has a none run; it tries LZ4, then ZSTD.
        assert_eq!(a.choose(7), Choice { method: Method::Lz4, reason: Reason::Exploring });
        a.record(&sample(7, Method::Lz4, 1019, 912, 7900));
        assert_eq!(a.choose(7), Choice { method: Method::Zstd { level: 1 }, reason: Reason::Exploring });
        a.record(&sample(7, Method::Zstd { level: 1 }, 1019, 745, 6700));
        for _ in 0..(REEXPLORE - 4) {
            assert_eq!(a.choose(7), Choice { method: Method::Zstd { level: 1 }, reason: Reason::Learned });
        }
        // Integers on the same link: LZ4 wins, ZSTD's server time loses.
        a.record(&sample(9, Method::None, 160, 160, 1340));
        a.record(&sample(9, Method::Lz4, 160, 80, 862));
        a.record(&sample(9, Method::Zstd { level: 1 }, 160, 20, 1058));
        assert_eq!(a.choose(9), Choice { method: Method::Lz4, reason: Reason::Learned });
    }

    #[test]
    fn a_near_tie_goes_to_the_cheaper_codec_and_runs_reexplore() {
        let mut a = Auto::new();
        a.record(&sample(3, Method::None, 100, 100, 1000));
        a.record(&sample(3, Method::Lz4, 100, 60, 980));
        a.record(&sample(3, Method::Zstd { level: 1 }, 100, 40, 990));
        let mut explored = 0;
        for _ in 0..(2 * REEXPLORE) {
            let c = a.choose(3);
            match c.reason {
                Reason::Learned => assert_eq!(c.method, Method::None),
                Reason::Exploring => explored += 1,
                r => panic!("{r:?}"),
            }
        }
        assert_eq!(explored, 2);
    }

    #[test]
    fn one_slow_run_does_not_turn_a_choice() {
        let mut a = Auto::new();
        a.record(&sample(4, Method::None, 160, 160, 1340));
        a.record(&sample(4, Method::Lz4, 160, 80, 670));
        a.record(&sample(4, Method::Zstd { level: 1 }, 160, 20, 560));
        assert_eq!(a.choose(4).method, Method::Zstd { level: 1 });
        // The machine was busy during one run.
        a.record(&sample(4, Method::Zstd { level: 1 }, 160, 20, 900));
        assert_eq!(a.choose(4).method, Method::Zstd { level: 1 });
        // Only runs that stay slow (the last KEEP) move it.
        for _ in 0..KEEP {
            a.record(&sample(4, Method::Zstd { level: 1 }, 160, 20, 900));
        }
        assert_eq!(a.choose(4).method, Method::Lz4);
    }

    #[test]
    fn keys_differ_by_text_and_direction() {
        let k = statement_key("SELECT 1", Direction::Read);
        assert_eq!(k, statement_key("SELECT 1", Direction::Read));
        assert_ne!(k, statement_key("SELECT 1", Direction::Write));
        assert_ne!(k, statement_key("SELECT 2", Direction::Read));
    }
}
