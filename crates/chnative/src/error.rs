//! The one error type of the client.

use chnative_proto::packet::Exception;
use chnative_proto::ProtoError;

/// An exception raised by the server, with its nested chain.
///
/// `Display` is one line: the code's name and number, then the server's
/// message (`UNKNOWN_TABLE (60): Table default.x does not exist. …`), then
/// each nested exception after `; caused by: `. `Debug` shows every field but
/// the stack trace, which it counts (the trace is in [`ServerError::stack_trace`]).
#[derive(Clone, PartialEq, Eq)]
pub struct ServerError {
    /// ClickHouse error code (e.g. 516 AUTHENTICATION_FAILED, 60 UNKNOWN_TABLE);
    /// [`ServerError::code_name`] has its name.
    pub code: i32,
    /// Exception class name, e.g. `DB::Exception`.
    pub name: String,
    /// Message text, as the server sent it (starting with the class name, e.g.
    /// `DB::Exception: `).
    pub message: String,
    /// Server-side stack trace (may be empty).
    pub stack_trace: String,
    /// Nested exceptions, outermost first.
    pub nested: Vec<ServerError>,
}

impl From<Exception> for ServerError {
    fn from(e: Exception) -> Self {
        ServerError {
            code: e.code,
            name: e.name,
            message: e.message,
            stack_trace: e.stack_trace,
            nested: e.nested.into_iter().map(ServerError::from).collect(),
        }
    }
}

impl ServerError {
    /// The name of the code in ClickHouse's list of error codes
    /// (`Some("UNKNOWN_TABLE")` for 60), `None` for a code this version of
    /// chnative does not know (see [`chnative_proto::error_codes`]).
    pub fn code_name(&self) -> Option<&'static str> {
        chnative_proto::error_codes::name(self.code)
    }

    /// The message without the class name the server puts before it
    /// (`DB::Exception: `).
    fn text(&self) -> &str {
        let m = self.message.as_str();
        [self.name.as_str(), "DB::Exception"]
            .iter()
            .filter(|p| !p.is_empty())
            .find_map(|p| m.strip_prefix(p).and_then(|r| r.strip_prefix(": ")))
            .unwrap_or(m)
    }

    /// `NAME (code): message` on one line.
    fn fmt_one(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code_name() {
            Some(name) => write!(f, "{name} ({}):", self.code)?,
            None => write!(f, "code {}:", self.code)?,
        }
        // A multi-line message is joined into one line (the field keeps it as sent).
        for line in self.text().lines().map(str::trim).filter(|l| !l.is_empty()) {
            write!(f, " {line}")?;
        }
        Ok(())
    }
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.fmt_one(f)?;
        // Depth-first: the server sends the chain flat, outermost first.
        for n in &self.nested {
            write!(f, "; caused by: {n}")?;
        }
        Ok(())
    }
}

/// Every field but the stack trace, which is counted in lines: a trace is
/// dozens of raw addresses that would bury the message wherever `{:?}` is
/// printed (`main` returning an error, `unwrap`).
impl std::fmt::Debug for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("ServerError");
        d.field("code", &self.code);
        if let Some(name) = self.code_name() {
            d.field("code_name", &format_args!("{name}"));
        }
        d.field("name", &self.name).field("message", &self.message);
        match self.stack_trace.lines().count() {
            0 => d.field("stack_trace", &format_args!("<empty>")),
            1 => d.field("stack_trace", &format_args!("<1 line>")),
            n => d.field("stack_trace", &format_args!("<{n} lines>")),
        };
        d.field("nested", &self.nested).finish()
    }
}

/// Everything that can fail in chnative.
///
/// Match on [`Error::kind`] rather than on variants or message text: variants
/// may be added, and messages are for people.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server raised an exception.
    #[error("server error {0}")]
    Server(ServerError),
    /// Socket error, including the server closing the connection.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The connection could not be made: TCP connect or the handshake failed at
    /// the socket level. No query was sent. The text names the host and port
    /// (`connecting to db1:9000 failed: Connection refused`).
    #[error("{0}")]
    Connect(std::io::Error),
    /// The server's bytes broke the protocol (the connection is closed).
    #[error("protocol: {0}")]
    Protocol(ProtoError),
    /// A column was asked for as a type it does not have.
    #[error("column `{column}` is {actual}, not {requested}")]
    TypeMismatch {
        /// Column name.
        column: String,
        /// What the caller asked for.
        requested: String,
        /// The column's ClickHouse type.
        actual: String,
    },
    /// A read, write or query deadline passed. The text says what was being
    /// waited for. (A connect deadline is [`Error::Connect`] naming the host,
    /// with [`ErrorKind::Timeout`].)
    #[error("timed out {0}")]
    Timeout(&'static str),
    /// A bad connection string or option.
    #[error("configuration: {0}")]
    Config(String),
    /// A request that cannot be sent as given: a malformed setting, parameter or
    /// table name, or column data that does not fit. Caught before any of the
    /// request is sent, so the connection stays usable.
    #[error("{0}")]
    Usage(String),
    /// A column value could not be converted to the Rust type asked for.
    #[error("conversion: {0}")]
    Convert(chnative_proto::convert::ConvertError),
    /// The query was cancelled by the caller.
    #[error("query cancelled")]
    Cancelled,
    /// The connection was left in an unknown state earlier and has been closed.
    #[error("connection is closed: {0}")]
    Closed(String),
}

/// What kind of failure an [`Error`] is; see [`Error::kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server raised an exception ([`Error::server_code`] has its code).
    Server,
    /// A socket error, or the server closed the connection.
    Io,
    /// A connect, read or write deadline passed.
    Timeout,
    /// The server's bytes broke the protocol, or a compressed frame was corrupt.
    Protocol,
    /// The connection had already been closed by an earlier error.
    Closed,
    /// The caller cancelled the query.
    Cancelled,
    /// A bad connection string or [`crate::Config`] value, or a server this
    /// client cannot talk to (too old, or insisting on chunked framing the
    /// client's options refuse).
    Config,
    /// A request the caller built wrongly (malformed setting, parameter or table
    /// name; column data that does not fit its type; wrong row counts). Fix the
    /// call; retrying it unchanged fails the same way.
    InvalidInput,
    /// A column was read or written as a type it does not have.
    TypeMismatch,
    /// A value could not be converted to the Rust type asked for.
    Conversion,
}

impl From<ProtoError> for Error {
    fn from(e: ProtoError) -> Self {
        match e {
            ProtoError::TypeMismatch { column, requested, actual } => Error::TypeMismatch { column, requested, actual },
            // The caller's own data or lookup, not the server's bytes.
            e @ (ProtoError::InvalidColumn { .. } | ProtoError::NoSuchColumn { .. }) => Error::Usage(e.to_string()),
            e => Error::Protocol(e),
        }
    }
}

impl From<chnative_proto::convert::ConvertError> for Error {
    fn from(e: chnative_proto::convert::ConvertError) -> Self {
        Error::Convert(e)
    }
}

/// Server error codes that prove the query was refused before it started:
/// 202 TOO_MANY_SIMULTANEOUS_QUERIES is raised while registering the query in the
/// process list, before anything is read, written or executed. (Codes such as
/// 745 SERVER_OVERLOADED or 203 NO_FREE_CONNECTION can also be raised in the
/// middle of a query, so they do not qualify.)
const RETRYABLE_SERVER_CODES: [i32; 1] = [202];

impl Error {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Server(_) => ErrorKind::Server,
            Error::Connect(e) if e.kind() == std::io::ErrorKind::TimedOut => ErrorKind::Timeout,
            Error::Io(_) | Error::Connect(_) => ErrorKind::Io,
            Error::Protocol(ProtoError::TypeMismatch { .. }) | Error::TypeMismatch { .. } => ErrorKind::TypeMismatch,
            Error::Protocol(_) => ErrorKind::Protocol,
            Error::Timeout(_) => ErrorKind::Timeout,
            Error::Config(_) => ErrorKind::Config,
            Error::Usage(_) => ErrorKind::InvalidInput,
            Error::Convert(_) => ErrorKind::Conversion,
            Error::Cancelled => ErrorKind::Cancelled,
            Error::Closed(_) => ErrorKind::Closed,
        }
    }

    /// The server error code, if this is a server exception.
    pub fn server_code(&self) -> Option<i32> {
        match self {
            Error::Server(e) => Some(e.code),
            _ => None,
        }
    }

    /// True when the connection this error came from can no longer be used
    /// (socket errors, timeouts, protocol violations, an already closed
    /// connection).
    ///
    /// With the pooled [`crate::Client`] there is nothing to do: the pool drops
    /// a closed connection when it comes back and the next call takes another
    /// one or opens a new one, so keep using the same `Client`. A
    /// [`crate::Connection`] or [`crate::Session`] is one connection: after such
    /// an error make a new one.
    ///
    /// False for errors that leave the connection as it was: server exceptions,
    /// cancelled queries, invalid input caught before sending, type mismatches and
    /// conversions. ClickHouse itself closes the connection after a few server
    /// exceptions (an unknown setting, for one); on a `Connection` or `Session`,
    /// `is_usable()` is the authority on whether it is still open.
    pub fn is_closed(&self) -> bool {
        match self {
            Error::Io(_) | Error::Connect(_) | Error::Timeout(_) | Error::Closed(_) => true,
            Error::Protocol(e) => !matches!(e, ProtoError::TypeMismatch { .. }),
            Error::Server(_)
            | Error::Config(_)
            | Error::Usage(_)
            | Error::TypeMismatch { .. }
            | Error::Convert(_)
            | Error::Cancelled => false,
        }
    }

    /// True when running the same request again on a **new** connection cannot
    /// duplicate work: this error proves the server did not start on it.
    ///
    /// That holds for exactly these errors:
    /// - [`Error::Connect`]: connecting failed at the socket level, so no query
    ///   was sent;
    ///   this includes the connect timeout (TCP connect plus handshake), whose
    ///   [`Error::kind`] is [`ErrorKind::Timeout`];
    /// - a server exception with code 202 TOO_MANY_SIMULTANEOUS_QUERIES, which
    ///   the server raises while admitting the query, before running any of it.
    ///
    /// Everything else is false, including socket errors and timeouts after the
    /// query was sent (the server may have run it, and an INSERT may have stored
    /// some blocks), server errors in general (a failed INSERT … SELECT may have
    /// written parts), and input errors (a retry fails the same way). To retry an
    /// INSERT safely after such an error, resend it with the same
    /// [`crate::Insert::deduplication_token`].
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Connect(_) => true,
            Error::Server(e) => RETRYABLE_SERVER_CODES.contains(&e.code),
            _ => false,
        }
    }
}

/// Result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: i32) -> Error {
        Error::Server(ServerError {
            code,
            name: "DB::Exception".into(),
            message: String::new(),
            stack_trace: String::new(),
            nested: Vec::new(),
        })
    }

    fn exception(code: i32, name: &str, message: &str, nested: Vec<ServerError>) -> ServerError {
        ServerError {
            code,
            name: name.into(),
            message: message.into(),
            stack_trace: "0. ? @ 0x000000001d967133\n1. ? @ 0x000000000e717b9e\n".into(),
            nested,
        }
    }

    #[test]
    fn server_errors_display_on_one_line_with_the_code_name() {
        let e = exception(60, "DB::Exception", "DB::Exception: Table default.x does not exist.", vec![]);
        assert_eq!(e.code_name(), Some("UNKNOWN_TABLE"));
        assert_eq!(e.to_string(), "UNKNOWN_TABLE (60): Table default.x does not exist.");
        assert_eq!(Error::Server(e).to_string(), "server error UNKNOWN_TABLE (60): Table default.x does not exist.");
        // Another class's prefix, a message without one, an unknown code, several lines.
        let e = exception(210, "DB::NetException", "DB::NetException: Connection reset by peer", vec![]);
        assert_eq!(e.to_string(), "NETWORK_ERROR (210): Connection reset by peer");
        let e = exception(99999, "DB::Exception", "no prefix here\n  second line\n\nthird", vec![]);
        assert_eq!((e.code_name(), e.to_string().as_str()), (None, "code 99999: no prefix here second line third"));
        // Nested exceptions follow on the same line, outermost first.
        let inner = exception(241, "DB::Exception", "DB::Exception: Memory limit exceeded", vec![]);
        let middle = exception(210, "DB::Exception", "DB::Exception: from shard 2", vec![inner]);
        let e = exception(279, "DB::Exception", "DB::Exception: All connection tries failed", vec![middle]);
        assert_eq!(
            e.to_string(),
            "ALL_CONNECTION_TRIES_FAILED (279): All connection tries failed; caused by: NETWORK_ERROR (210): \
             from shard 2; caused by: MEMORY_LIMIT_EXCEEDED (241): Memory limit exceeded"
        );
    }

    #[test]
    fn server_error_debug_counts_the_stack_trace_lines() {
        let e = Error::Server(exception(62, "DB::Exception", "DB::Exception: Syntax error", vec![]));
        let d = format!("{e:?}");
        assert_eq!(
            d,
            "Server(ServerError { code: 62, code_name: SYNTAX_ERROR, name: \"DB::Exception\", \
             message: \"DB::Exception: Syntax error\", stack_trace: <2 lines>, nested: [] })"
        );
        let mut s = exception(99999, "X", "m", vec![]);
        s.stack_trace.clear();
        assert!(format!("{s:?}").contains("code: 99999, name: \"X\", message: \"m\", stack_trace: <empty>"));
        assert!(!format!("{s:#?}").contains("0x"));
    }

    #[test]
    fn kinds() {
        let io = || std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        assert_eq!(server(60).kind(), ErrorKind::Server);
        assert_eq!(Error::Io(io()).kind(), ErrorKind::Io);
        assert_eq!(Error::Connect(io()).kind(), ErrorKind::Io);
        assert_eq!(Error::Protocol(ProtoError::violation("x")).kind(), ErrorKind::Protocol);
        assert_eq!(Error::from(ProtoError::violation("x")).kind(), ErrorKind::Protocol);
        let mismatch = ProtoError::TypeMismatch { column: "c".into(), requested: "u8".into(), actual: "String".into() };
        assert_eq!(Error::from(mismatch.clone()).kind(), ErrorKind::TypeMismatch);
        assert_eq!(Error::Protocol(mismatch).kind(), ErrorKind::TypeMismatch);
        assert_eq!(Error::Timeout("waiting for the server").kind(), ErrorKind::Timeout);
        assert_eq!(Error::Config("x".into()).kind(), ErrorKind::Config);
        assert_eq!(Error::Usage("x".into()).kind(), ErrorKind::InvalidInput);
        assert_eq!(Error::Cancelled.kind(), ErrorKind::Cancelled);
        assert_eq!(Error::Closed("x".into()).kind(), ErrorKind::Closed);
        assert_eq!(server(202).server_code(), Some(202));
        assert_eq!(Error::Cancelled.server_code(), None);
    }

    #[test]
    fn closed_means_the_connection_is_gone() {
        let io = || std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        for e in [
            Error::Io(io()),
            Error::Connect(io()),
            Error::Timeout("writing"),
            Error::Protocol(ProtoError::violation("x")),
            Error::Closed("x".into()),
        ] {
            assert!(e.is_closed(), "{e:?}");
        }
        for e in [server(395), Error::Usage("x".into()), Error::Cancelled, Error::Config("x".into())] {
            assert!(!e.is_closed(), "{e:?}");
        }
    }

    #[test]
    fn retryable_only_when_the_server_cannot_have_started() {
        let io = || std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(Error::Connect(io()).is_retryable());
        let timed_out =
            Error::Connect(std::io::Error::new(std::io::ErrorKind::TimedOut, "connecting to h:9000 failed"));
        assert!(timed_out.is_retryable());
        assert_eq!(timed_out.kind(), ErrorKind::Timeout);
        assert!(!Error::Timeout("connecting").is_retryable());
        assert!(server(202).is_retryable());
        for e in [
            Error::Io(io()),
            Error::Timeout("waiting for the server"),
            Error::Timeout("writing"),
            server(516),
            server(241),
            server(252),
            server(319),
            Error::Protocol(ProtoError::violation("x")),
            Error::Closed("x".into()),
            Error::Cancelled,
            Error::Usage("x".into()),
            Error::Config("x".into()),
        ] {
            assert!(!e.is_retryable(), "{e:?}");
        }
    }
}
