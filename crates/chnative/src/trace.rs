//! Observability: `tracing` spans for queries and inserts, and W3C trace
//! context sent to the server.
//!
//! Spans carry ids, counts and times only: never SQL text, parameters,
//! settings or credentials (SQL can hold secrets, e.g. `CREATE USER … IDENTIFIED BY`).

use std::time::Instant;

use chnative_proto::packet;
use tracing::field::Empty;

use crate::error::{Error, Result};

/// A W3C trace context (`traceparent` and `tracestate`) to continue on the
/// server: ClickHouse records its spans for the query under this trace
/// (in `system.opentelemetry_span_log`, when the trace is sampled).
///
/// ```
/// use chnative::{Query, TraceContext};
/// let tc = TraceContext::from_w3c("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "vendor=x").unwrap();
/// assert!(tc.is_sampled());
/// let q = Query::new("SELECT 1").trace_context(tc);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct TraceContext(pub(crate) packet::TraceContext);

impl std::fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TraceContext({})", self.traceparent())
    }
}

fn hex<const N: usize>(s: &str, what: &str) -> Result<u128> {
    if s.len() != N || !s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(Error::invalid_input(format!("traceparent: {what} must be {N} lowercase hex digits, got `{s}`")));
    }
    u128::from_str_radix(s, 16).map_err(|_| Error::invalid_input(format!("traceparent: bad {what} `{s}`")))
}

impl TraceContext {
    /// Parses a `traceparent` header (`00-<trace id>-<parent id>-<flags>`)
    /// and the `tracestate` that goes with it (may be empty).
    pub fn from_w3c(traceparent: &str, tracestate: &str) -> Result<TraceContext> {
        let parts: Vec<&str> = traceparent.trim().split('-').collect();
        let [version, trace_id, span_id, flags] = parts[..] else {
            return Err(Error::invalid_input(format!(
                "traceparent `{traceparent}` is not version-traceid-parentid-flags"
            )));
        };
        let version = hex::<2>(version, "version")?;
        // Version ff is forbidden; 00 has exactly four fields (checked above).
        if version == 0xff {
            return Err(Error::invalid_input("traceparent: version ff is invalid"));
        }
        let trace_id = hex::<32>(trace_id, "trace id")?;
        let span_id = hex::<16>(span_id, "parent id")? as u64;
        let flags = hex::<2>(flags, "flags")? as u8;
        if trace_id == 0 || span_id == 0 {
            return Err(Error::invalid_input("traceparent: an all-zero trace id or parent id is invalid"));
        }
        if tracestate.len() > 512 || tracestate.contains(['\r', '\n']) {
            return Err(Error::invalid_input("tracestate: longer than 512 bytes or has a line break"));
        }
        Ok(TraceContext(packet::TraceContext {
            trace_id,
            span_id,
            tracestate: tracestate.to_string(),
            trace_flags: flags,
        }))
    }

    /// The `traceparent` form (version 00).
    pub fn traceparent(&self) -> String {
        format!("00-{:032x}-{:016x}-{:02x}", self.0.trace_id, self.0.span_id, self.0.trace_flags)
    }

    /// The `tracestate` given.
    pub fn tracestate(&self) -> &str {
        &self.0.tracestate
    }

    /// Whether the caller sampled the trace (flag 01): the server records
    /// spans for sampled traces.
    pub fn is_sampled(&self) -> bool {
        self.0.trace_flags & 1 == 1
    }

    /// The context of the current OpenTelemetry span, when there is a valid one
    /// (feature `opentelemetry`). Queries and inserts created without an explicit
    /// [`TraceContext`] take this one, so the server's spans join the caller's trace.
    #[cfg(feature = "opentelemetry")]
    pub fn current() -> Option<TraceContext> {
        use opentelemetry::trace::TraceContextExt;
        let cx = opentelemetry::Context::current();
        let span = cx.span();
        let sc = span.span_context();
        if !sc.is_valid() {
            return None;
        }
        Some(TraceContext(packet::TraceContext {
            trace_id: u128::from_be_bytes(sc.trace_id().to_bytes()),
            span_id: u64::from_be_bytes(sc.span_id().to_bytes()),
            tracestate: sc.trace_state().header(),
            trace_flags: sc.trace_flags().to_u8(),
        }))
    }

    /// What a new query or insert carries unless told otherwise: the current
    /// OpenTelemetry context with the `opentelemetry` feature, else none.
    pub(crate) fn ambient() -> Option<TraceContext> {
        #[cfg(feature = "opentelemetry")]
        return TraceContext::current();
        #[cfg(not(feature = "opentelemetry"))]
        None
    }
}

/// The span of one query or insert, closed with its outcome.
pub(crate) struct OpSpan {
    span: tracing::Span,
    started: Instant,
    rows: u64,
    done: bool,
}

/// An operation span: the name differs (a literal, as `tracing` needs it), the
/// fields are the same.
macro_rules! op_span {
    ($name:literal, $query_id:expr) => {
        OpSpan::new(tracing::debug_span!(
            $name,
            query_id = $query_id,
            compression = Empty,
            rows = Empty,
            bytes = Empty,
            elapsed_us = Empty,
            outcome = Empty
        ))
    };
}

impl OpSpan {
    pub(crate) fn query(query_id: &str) -> OpSpan {
        op_span!("chnative.query", query_id)
    }

    pub(crate) fn insert(query_id: &str) -> OpSpan {
        op_span!("chnative.insert", query_id)
    }

    fn new(span: tracing::Span) -> OpSpan {
        OpSpan { span, started: Instant::now(), rows: 0, done: false }
    }

    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Records the codec the query's blocks use.
    pub(crate) fn compression(&self, c: crate::config::Compression) {
        self.span.record("compression", tracing::field::display(c));
    }

    /// Counts result rows as blocks arrive.
    pub(crate) fn add_rows(&mut self, rows: usize) {
        self.rows += rows as u64;
    }

    /// Records the totals and the outcome (`ok`, `error`, `cancelled`, `abandoned`).
    pub(crate) fn finish(&mut self, rows: Option<u64>, bytes: u64, outcome: &'static str) {
        if self.done {
            return;
        }
        self.done = true;
        let rows = rows.unwrap_or(self.rows);
        let elapsed_us = self.started.elapsed().as_micros() as u64;
        self.span.record("rows", rows);
        self.span.record("bytes", bytes);
        self.span.record("elapsed_us", elapsed_us);
        self.span.record("outcome", outcome);
        tracing::debug!(parent: &self.span, rows, bytes, elapsed_us, outcome, "finished");
    }
}

impl Drop for OpSpan {
    fn drop(&mut self) {
        self.finish(None, 0, "abandoned");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_round_trip_and_refusals() {
        let tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let t = TraceContext::from_w3c(tp, "a=1").unwrap();
        assert_eq!(t.traceparent(), tp);
        assert_eq!(t.0.trace_id, 0x0af7651916cd43dd8448eb211c80319c);
        assert_eq!(t.0.span_id, 0xb7ad6b7169203331);
        assert!(t.is_sampled());
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1",
        ] {
            assert!(TraceContext::from_w3c(bad, "").is_err(), "{bad}");
        }
        assert!(TraceContext::from_w3c(tp, "a=1\r\nx").is_err());
    }

    /// The trace context lands in ClientInfo's OpenTelemetry fields, byte for byte.
    #[test]
    fn client_info_carries_the_trace_context() {
        let t = TraceContext::from_w3c("00-0102030405060708090a0b0c0d0e0f10-1112131415161718-01", "k=v").unwrap();
        let info =
            |trace| packet::ClientInfo { client_name: "c", version_minor: 1, trace, ..packet::ClientInfo::default() };
        let (mut with, mut without) = (Vec::new(), Vec::new());
        info(Some(&t.0)).write(&mut with, 54492);
        info(None).write(&mut without, 54492);
        // Without a trace the flag byte 0 stands where the fields go.
        let at = without.iter().zip(&with).position(|(a, b)| a != b).unwrap();
        assert_eq!((without[at], with[at]), (0, 1));
        let fields = &with[at + 1..at + 1 + 8 + 8 + 8 + 1 + 3 + 1];
        let expected: Vec<u8> = [
            &[0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01][..], // trace id, high half LE
            &[0x10, 0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09][..], // trace id, low half LE
            &[0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11][..], // parent span id LE
            &[3, b'k', b'=', b'v'][..],                            // tracestate
            &[0x01][..],                                           // flags
        ]
        .concat();
        assert_eq!(fields, &expected[..]);
        assert_eq!(with[at + 1 + expected.len()..], without[at + 1..]);
    }
}
