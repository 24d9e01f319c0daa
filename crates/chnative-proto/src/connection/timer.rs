//! Time as an input: the command deadline and the Cancel bound.
//!
//! The machine reads no clock. The caller sets the outstanding command's
//! deadline ([`Connection::set_deadline`]), asks when the machine next needs
//! to be woken ([`Connection::poll_timeout`]), sleeps no longer than that
//! while it waits for the socket, and then reports the time
//! ([`Connection::handle_timeout`]). The policy is the machine's:
//!
//! - a query past its deadline is cancelled (Cancel written, Busy(Cancelled))
//!   and the timeout reported at once; the rest of the answer is drained by
//!   whoever owns the connection next, within the Cancel bound;
//! - a cancelled query not over within the Cancel bound
//!   ([`Options::cancel_timeout`](super::Options::cancel_timeout), started by
//!   [`Connection::cancel`] or [`Connection::abandon`]) closes the connection;
//! - any other command past its deadline (an INSERT, whose data may or may
//!   not be stored; a ping; a query whose packet is half written, which a
//!   Cancel cannot follow) closes the connection.

use std::time::Instant;

use super::{Connection, Phase, State};

/// What [`Connection::handle_timeout`] did when a timer had passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Timeout {
    /// The query's deadline passed: Cancel was written (the caller sends it)
    /// and the connection is Busy(Cancelled), to be drained within the
    /// Cancel bound. The query failed; the connection may be reused.
    QueryCancelled,
    /// The deadline passed where the command cannot be cancelled (an INSERT,
    /// a ping, a packet half written): the connection is closed.
    DeadlineClosed,
    /// A cancelled query did not end within the Cancel bound: the connection
    /// is closed.
    CancelUnanswered,
}

impl Timeout {
    /// What the timeout interrupted, for an error message.
    pub fn what(self) -> &'static str {
        match self {
            Timeout::QueryCancelled => "the query deadline passed; the query was cancelled",
            Timeout::DeadlineClosed => "the query deadline passed",
            Timeout::CancelUnanswered => "waiting for the server to end a cancelled query",
        }
    }

    /// Whether the connection was closed.
    pub fn closed(self) -> bool {
        !matches!(self, Timeout::QueryCancelled)
    }
}

impl Connection {
    /// Sets when the outstanding command must be over (`None`: never). It
    /// applies to the command started last and ends with it; a new command
    /// starts with none. Cancelling the command replaces it with the Cancel
    /// bound.
    pub fn set_deadline(&mut self, at: Option<Instant>) {
        if matches!(self.state, State::Busy(phase) if phase != Phase::Cancelled) {
            self.deadline = at;
        }
    }

    /// When the machine must be told the time ([`Connection::handle_timeout`])
    /// if nothing else happens first: the outstanding command's deadline, or
    /// for a cancelled query the Cancel bound. `None` when no timer runs.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.state {
            State::Busy(Phase::Cancelled) => self.cancel_by,
            State::Busy(_) => self.deadline,
            _ => None,
        }
    }

    /// Tells the machine the time. Before [`Connection::poll_timeout`] this
    /// does nothing and returns `None`; at or after it, the machine applies
    /// its policy (see the module docs) and says what it did. Bytes it queues
    /// (Cancel) are in [`Connection::transmit`].
    pub fn handle_timeout(&mut self, now: Instant) -> Option<Timeout> {
        let at = self.poll_timeout()?;
        if now < at {
            return None;
        }
        let State::Busy(phase) = self.state else { return None };
        let timeout = match phase {
            Phase::Cancelled => Timeout::CancelUnanswered,
            Phase::Query if !self.is_mid_packet() => {
                self.write_cancel(now);
                return Some(Timeout::QueryCancelled);
            }
            _ => Timeout::DeadlineClosed,
        };
        self.close(format!("timed out: {}", timeout.what()));
        Some(timeout)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::connection::{Discard, Error, Event, Options, Poll};
    use crate::packet::{ClientHello, ClientInfo, Query};

    const HELLO_54492: &[u8] = include_bytes!("../../tests/data/captures/hello_54492.bin");

    fn idle(cancel_timeout: Option<Duration>) -> Connection {
        let options = Options { revision: 54492, compression: None, cancel_timeout, ..Options::default() };
        let mut c = Connection::new(options);
        let hello = ClientHello {
            client_name: "t",
            version_major: 0,
            version_minor: 1,
            revision: 54492,
            database: "",
            user: "default",
            password: "",
        };
        c.start_handshake(&hello, "").unwrap();
        c.recv_buffer(HELLO_54492.len()).extend_from_slice(HELLO_54492);
        assert_eq!(c.poll(&mut Discard).unwrap(), Poll::Event(Event::Hello));
        flush(&mut c);
        c
    }

    fn flush(c: &mut Connection) -> Vec<u8> {
        let out = c.transmit().to_vec();
        c.advance(out.len());
        out
    }

    fn query(sql: &str) -> Query<'_> {
        Query {
            query_id: "q",
            client_info: ClientInfo { client_name: "t", version_minor: 1, ..ClientInfo::default() },
            settings: &[],
            compression: false,
            sql,
            parameters: &[],
        }
    }

    const CANCEL: u8 = 3;
    const END_OF_STREAM: u8 = 5;

    #[test]
    fn no_timer_without_a_deadline() {
        let mut c = idle(Some(Duration::from_secs(1)));
        assert_eq!(c.poll_timeout(), None);
        c.set_deadline(Some(Instant::now())); // idle: nothing to bound
        assert_eq!(c.poll_timeout(), None);
        c.query(&query("SELECT 1")).unwrap();
        assert_eq!(c.poll_timeout(), None);
        assert_eq!(c.handle_timeout(Instant::now() + Duration::from_secs(3600)), None);
        assert_eq!(c.state(), State::Busy(Phase::Query));
    }

    #[test]
    fn query_past_its_deadline_is_cancelled_then_bounded() {
        let t0 = Instant::now();
        let mut c = idle(Some(Duration::from_secs(5)));
        c.query(&query("SELECT sleep(3)")).unwrap();
        flush(&mut c);
        c.set_deadline(Some(t0 + Duration::from_secs(2)));
        assert_eq!(c.poll_timeout(), Some(t0 + Duration::from_secs(2)));
        // Early: nothing happens.
        assert_eq!(c.handle_timeout(t0 + Duration::from_secs(1)), None);
        assert!(!c.has_output());
        // Due: Cancel is queued and the Cancel bound runs from now.
        let now = t0 + Duration::from_secs(2);
        assert_eq!(c.handle_timeout(now), Some(Timeout::QueryCancelled));
        assert_eq!(c.state(), State::Busy(Phase::Cancelled));
        assert_eq!(flush(&mut c), [CANCEL]);
        assert_eq!(c.poll_timeout(), Some(now + Duration::from_secs(5)));
        // A deadline set now does not replace the bound.
        c.set_deadline(Some(t0));
        assert_eq!(c.poll_timeout(), Some(now + Duration::from_secs(5)));
        // The end of the answer within the bound: Idle, no timer.
        c.recv_buffer(1).push(END_OF_STREAM);
        assert_eq!(c.poll(&mut Discard).unwrap(), Poll::Event(Event::EndOfStream));
        assert_eq!(c.state(), State::Idle);
        assert_eq!(c.poll_timeout(), None);
    }

    #[test]
    fn cancel_bound_passing_closes() {
        let t0 = Instant::now();
        let mut c = idle(Some(Duration::from_secs(5)));
        c.query(&query("SELECT 1")).unwrap();
        flush(&mut c);
        c.cancel(t0).unwrap();
        assert_eq!(c.poll_timeout(), Some(t0 + Duration::from_secs(5)));
        assert_eq!(c.handle_timeout(t0 + Duration::from_secs(4)), None);
        assert_eq!(c.handle_timeout(t0 + Duration::from_secs(5)), Some(Timeout::CancelUnanswered));
        assert!(c.is_closed());
        assert!(c.close_reason().unwrap().contains("cancelled query"), "{:?}", c.close_reason());
        assert_eq!(c.poll_timeout(), None);
        assert!(matches!(c.poll(&mut Discard), Err(Error::Closed(_))));
    }

    #[test]
    fn abandoned_query_gets_the_bound_and_none_means_unbounded() {
        let t0 = Instant::now();
        let mut c = idle(Some(Duration::from_secs(5)));
        c.query(&query("SELECT 1")).unwrap();
        flush(&mut c);
        c.abandon(t0);
        assert_eq!(c.state(), State::Busy(Phase::Cancelled));
        assert_eq!(c.poll_timeout(), Some(t0 + Duration::from_secs(5)));

        let mut c = idle(None);
        c.query(&query("SELECT 1")).unwrap();
        flush(&mut c);
        c.cancel(t0).unwrap();
        assert_eq!(c.poll_timeout(), None);
    }

    #[test]
    fn uncancellable_commands_close_at_their_deadline() {
        let t0 = Instant::now();
        // An INSERT: its data may or may not be stored.
        let mut c = idle(Some(Duration::from_secs(5)));
        c.insert(&query("INSERT INTO t VALUES")).unwrap();
        flush(&mut c);
        c.set_deadline(Some(t0));
        assert_eq!(c.handle_timeout(t0), Some(Timeout::DeadlineClosed));
        assert!(c.is_closed());
        // A query whose packet is half written: a Cancel cannot follow it.
        let mut c = idle(Some(Duration::from_secs(5)));
        c.query(&query("SELECT 1")).unwrap();
        c.advance(3);
        c.set_deadline(Some(t0));
        assert_eq!(c.handle_timeout(t0), Some(Timeout::DeadlineClosed));
        assert!(c.is_closed());
        // A ping.
        let mut c = idle(Some(Duration::from_secs(5)));
        c.ping().unwrap();
        c.set_deadline(Some(t0));
        assert_eq!(c.handle_timeout(t0), Some(Timeout::DeadlineClosed));
        assert!(c.is_closed());
    }

    #[test]
    fn a_new_command_starts_without_the_last_ones_timers() {
        let t0 = Instant::now();
        let mut c = idle(Some(Duration::from_secs(5)));
        c.query(&query("SELECT 1")).unwrap();
        flush(&mut c);
        c.set_deadline(Some(t0));
        c.recv_buffer(1).push(END_OF_STREAM);
        assert_eq!(c.poll(&mut Discard).unwrap(), Poll::Event(Event::EndOfStream));
        c.query(&query("SELECT 2")).unwrap();
        assert_eq!(c.poll_timeout(), None);
        assert_eq!(c.handle_timeout(t0 + Duration::from_secs(60)), None);
    }
}
