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
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server raised an exception.
    #[error("server exception {0}")]
    Server(ServerError),
    /// Socket error, including the server closing the connection.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
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
    /// A connect or read deadline passed (the connection is closed).
    #[error("timed out {0}")]
    Timeout(&'static str),
    /// A bad connection string or option.
    #[error("configuration: {0}")]
    Config(String),
    /// A request that cannot be sent as given (caught before any data is sent).
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

impl Error {
    /// The server error code, if this is a server exception.
    pub fn server_code(&self) -> Option<i32> {
        match self {
            Error::Server(e) => Some(e.code),
            _ => None,
        }
    }
}

/// Result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;
