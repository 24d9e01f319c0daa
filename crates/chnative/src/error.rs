//! The one error type of the client.

use chnative_proto::packet::Exception;
use chnative_proto::ProtoError;

/// An exception raised by the server, with its nested chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    /// ClickHouse error code (e.g. 516 AUTHENTICATION_FAILED, 60 UNKNOWN_TABLE).
    pub code: i32,
    /// Exception class name, e.g. `DB::Exception`.
    pub name: String,
    /// Message text.
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

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "code {}: {}", self.code, self.message)?;
        for n in &self.nested {
            write!(f, " (caused by: {n})")?;
        }
        Ok(())
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
    #[error("server exception {0}")]
    Server(ServerError),
    /// Socket error, including the server closing the connection.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The connection could not be made: TCP connect or the handshake failed at
    /// the socket level. No query was sent.
    #[error("connecting: {0}")]
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
    /// A connect or read deadline passed (the connection is closed). The text
    /// says what was being waited for; `"connecting"` means no query was sent.
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
    /// connection): make a new [`crate::Client`].
    ///
    /// False for errors that leave the connection as it was: server exceptions,
    /// cancelled queries, invalid input caught before sending, type mismatches and
    /// conversions. ClickHouse itself closes the connection after a few server
    /// exceptions (an unknown setting, for one); [`crate::Client::is_usable`] is
    /// the authority on a live client.
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
    /// - [`Error::Timeout`] while `"connecting"` (TCP connect plus handshake);
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
            Error::Timeout(what) => *what == TIMEOUT_CONNECTING,
            Error::Server(e) => RETRYABLE_SERVER_CODES.contains(&e.code),
            _ => false,
        }
    }
}

/// What [`Error::Timeout`] says while connecting.
pub(crate) const TIMEOUT_CONNECTING: &str = "connecting";

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
        assert!(Error::Timeout(TIMEOUT_CONNECTING).is_retryable());
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
