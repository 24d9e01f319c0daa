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

/// A column was read or written as a type it does not have; see
/// [`Error::as_type_mismatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TypeMismatch {
    /// The column's name.
    pub column: String,
    /// What the caller asked for (a Rust type, with the field it is for).
    pub requested: String,
    /// The column's ClickHouse type.
    pub actual: String,
}

impl std::fmt::Display for TypeMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "column `{}` is {}, not {}", self.column, self.actual, self.requested)
    }
}

/// Everything that can fail in chnative.
///
/// One pointer wide (the details are boxed), so that a `Result<T>` is no
/// bigger than it must be for `T`: a typed row is returned as a `Result`.
///
/// Ask it what it is rather than matching on its inside (which is private):
///
/// - [`Error::kind`] says what kind of failure it is ([`ErrorKind`]);
/// - [`Error::server_code`] and [`Error::as_server`] give a server exception's code
///   and details;
/// - [`Error::as_io`], [`Error::as_protocol`], [`Error::as_type_mismatch`] and
///   [`Error::as_conversion`] give the details of the other kinds that have any;
/// - [`Error::is_connect`], [`Error::is_closed`] and [`Error::is_retryable`] answer
///   what to do next.
///
/// `Display` is one line for people; do not parse it.
///
/// ```
/// # fn handle(e: chnative::Error) {
/// use chnative::ErrorKind;
/// match e.kind() {
///     ErrorKind::Server if e.server_code() == Some(60) => { /* UNKNOWN_TABLE */ }
///     ErrorKind::Server => eprintln!("the server refused: {}", e.as_server().unwrap().message),
///     ErrorKind::NoRows => { /* fetch_one found nothing */ }
///     ErrorKind::TypeMismatch => eprintln!("column {}", e.as_type_mismatch().unwrap().column),
///     _ if e.is_retryable() => { /* run it again */ }
///     _ => eprintln!("{e}"),
/// }
/// # }
/// ```
pub struct Error(Box<Repr>);

// The reason for the box: every typed row is read as a `Result<T, Error>`.
const _: () = assert!(std::mem::size_of::<Error>() <= 16);

/// What an [`Error`] holds. Private: the public surface is the accessors, so
/// that what is kept (and how) can change without breaking callers.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Repr {
    /// The server raised an exception.
    #[error("server error {0}")]
    Server(ServerError),
    /// Socket error, including the server closing the connection.
    #[error("I/O: {0}")]
    Io(#[source] std::io::Error),
    /// The connection could not be made: TCP connect or the handshake failed at
    /// the socket level. No query was sent. The text names the host and port
    /// (`connecting to db1:9000 failed: Connection refused`).
    #[error("{0}")]
    Connect(std::io::Error),
    /// The server's bytes broke the protocol (the connection is closed). Never a
    /// `ProtoError::TypeMismatch`: that is [`Repr::TypeMismatch`].
    #[error("protocol: {0}")]
    Protocol(ProtoError),
    /// A column was asked for as a type it does not have.
    #[error("{0}")]
    TypeMismatch(TypeMismatch),
    /// A read, write or query deadline passed. The text says what was being
    /// waited for. (A connect deadline is [`Repr::Connect`] naming the host.)
    #[error("timed out {0}")]
    Timeout(&'static str),
    /// A bad connection string or option, or a server this client cannot talk to.
    #[error("configuration: {0}")]
    Config(String),
    /// A request that cannot be sent as given: a malformed setting, parameter or
    /// table name, or column data that does not fit. Caught before any of the
    /// request is sent, so the connection stays usable.
    #[error("{0}")]
    InvalidInput(String),
    /// A query that had to return a row returned none.
    #[error("{0}")]
    NoRows(&'static str),
    /// A query that had to return at most one row returned more.
    #[error("{0}")]
    TooManyRows(&'static str),
    /// A column value could not be converted to the Rust type asked for.
    #[error("conversion: {0}")]
    Convert(chnative_proto::convert::ConvertError),
    /// The query was cancelled by the caller.
    #[error("query cancelled")]
    Cancelled,
    /// The connection was left in an unknown state earlier and has been closed.
    #[error("connection is closed: {0}")]
    Closed(String),
    /// An invariant of chnative itself did not hold: a bug.
    #[error("internal error (a bug in chnative; please report it): {0}")]
    Internal(String),
    /// An error from one shard/replica of a cluster (see `crate::cluster`): the
    /// place, then the error itself; every accessor looks through to the inner error.
    #[error("{0}")]
    Located(Box<Located>),
}

/// Where in a cluster an error happened, and the error.
#[derive(Debug)]
pub(crate) struct Located {
    pub(crate) place: String,
    pub(crate) shard: usize,
    pub(crate) replica: Option<String>,
    pub(crate) error: Error,
}

impl std::fmt::Display for Located {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.place, self.error)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

/// Shows what the error holds (`Server(ServerError { code: 60, … })`).
impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// What kind of failure an [`Error`] is; see [`Error::kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server raised an exception ([`Error::server_code`] has its code,
    /// [`Error::as_server`] the rest).
    Server,
    /// A socket error, or the server closed the connection ([`Error::as_io`]).
    Io,
    /// A connect, read or write deadline passed.
    Timeout,
    /// The server's bytes broke the protocol, or a compressed frame was corrupt
    /// ([`Error::as_protocol`]).
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
    /// A column was read or written as a type it does not have
    /// ([`Error::as_type_mismatch`]).
    TypeMismatch,
    /// A value could not be converted to the Rust type asked for
    /// ([`Error::as_conversion`]).
    Conversion,
    /// A query that must return a row returned none: `fetch_one`,
    /// `fetch_scalar`. (`fetch_optional` returns `Ok(None)` instead.)
    NoRows,
    /// A query that may return at most one row returned more: `fetch_one`,
    /// `fetch_optional`.
    TooManyRows,
    /// An invariant of chnative itself did not hold: a bug in chnative, to be
    /// reported with the error's text. Says nothing about the connection.
    Internal,
}

impl From<Repr> for Error {
    #[cold]
    fn from(r: Repr) -> Self {
        Error(Box::new(r))
    }
}

impl From<ProtoError> for Error {
    #[cold]
    fn from(e: ProtoError) -> Self {
        match e {
            ProtoError::TypeMismatch { column, requested, actual } => {
                Repr::TypeMismatch(TypeMismatch { column, requested, actual }).into()
            }
            // The caller's own data or lookup, not the server's bytes.
            e @ (ProtoError::InvalidColumn { .. } | ProtoError::NoSuchColumn { .. }) => {
                Repr::InvalidInput(e.to_string()).into()
            }
            e => Repr::Protocol(e).into(),
        }
    }
}

impl From<chnative_proto::convert::ConvertError> for Error {
    #[cold]
    fn from(e: chnative_proto::convert::ConvertError) -> Self {
        Repr::Convert(e).into()
    }
}

/// The type system's error (`chnative::row`, sans-IO in chnative-proto), as the
/// same kind with the same text: a column error as a `ProtoError`, a conversion as
/// [`ErrorKind::Conversion`], the caller's input as [`ErrorKind::InvalidInput`], a
/// bug as [`ErrorKind::Internal`].
impl From<chnative_proto::row::RowError> for Error {
    #[cold]
    fn from(e: chnative_proto::row::RowError) -> Self {
        use chnative_proto::row::RowErrorKind as K;
        match e.into_kind() {
            K::Column(e) => Error::from(e),
            K::Convert(e) => Repr::Convert(e).into(),
            K::InvalidInput(m) => Repr::InvalidInput(m).into(),
            K::Internal(m) => Repr::Internal(m).into(),
        }
    }
}

impl From<std::io::Error> for Error {
    #[cold]
    fn from(e: std::io::Error) -> Self {
        Repr::Io(e).into()
    }
}

impl From<TypeMismatch> for Error {
    #[cold]
    fn from(m: TypeMismatch) -> Self {
        Repr::TypeMismatch(m).into()
    }
}

impl From<ServerError> for Error {
    #[cold]
    fn from(e: ServerError) -> Self {
        Repr::Server(e).into()
    }
}

/// Server error codes that prove the query was refused before it started:
/// 202 TOO_MANY_SIMULTANEOUS_QUERIES is raised while registering the query in the
/// process list (`ProcessList::insert`), before anything is read, written or
/// executed.
///
/// Codes considered and left out, because the server can raise them after some of
/// the query ran: 745 SERVER_OVERLOADED and 203 NO_FREE_CONNECTION (raised in the
/// middle of a query too); 209 SOCKET_TIMEOUT and 210 NETWORK_ERROR (the server's
/// own socket reads, e.g. from a shard in the middle of a distributed query);
/// 242 TABLE_IS_READ_ONLY (a replicated table's sink raises it when committing a
/// part, after earlier parts of the same INSERT were committed); 216
/// QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING (proves this attempt did nothing, but
/// the running one is usually an earlier attempt of the same request).
const RETRYABLE_SERVER_CODES: [i32; 1] = [202];

/// Constructors, for the crate only: callers see errors, they do not make them
/// (conversions from `std::io::Error`, `ProtoError` and `ConvertError` aside).
impl Error {
    pub(crate) fn server(e: impl Into<ServerError>) -> Error {
        Repr::Server(e.into()).into()
    }
    #[cold]
    pub(crate) fn connect(e: std::io::Error) -> Error {
        Repr::Connect(e).into()
    }
    #[cold]
    pub(crate) fn timeout(what: &'static str) -> Error {
        Repr::Timeout(what).into()
    }
    #[cold]
    pub(crate) fn config(why: impl Into<String>) -> Error {
        Repr::Config(why.into()).into()
    }
    #[cold]
    pub(crate) fn invalid_input(why: impl Into<String>) -> Error {
        Repr::InvalidInput(why.into()).into()
    }
    #[cold]
    pub(crate) fn no_rows(what: &'static str) -> Error {
        Repr::NoRows(what).into()
    }
    #[cold]
    pub(crate) fn too_many_rows(what: &'static str) -> Error {
        Repr::TooManyRows(what).into()
    }
    #[cold]
    pub(crate) fn cancelled() -> Error {
        Repr::Cancelled.into()
    }
    #[cold]
    pub(crate) fn closed(why: impl Into<String>) -> Error {
        Repr::Closed(why.into()).into()
    }
    #[cold]
    pub(crate) fn internal(what: impl Into<String>) -> Error {
        Repr::Internal(what.into()).into()
    }

    /// What the error holds.
    /// (A [`Repr::Located`] wrapper is looked through.)
    pub(crate) fn repr(&self) -> &Repr {
        match &*self.0 {
            Repr::Located(l) => l.error.repr(),
            r => r,
        }
    }
    /// What the error holds, to change a message in place.
    pub(crate) fn repr_mut(&mut self) -> &mut Repr {
        match &mut *self.0 {
            Repr::Located(l) => l.error.repr_mut(),
            r => r,
        }
    }
    /// What the error holds, by value (without a cluster location).
    pub(crate) fn into_repr(self) -> Repr {
        match *self.0 {
            Repr::Located(l) => l.error.into_repr(),
            r => r,
        }
    }

    /// This error, said to have happened at `place` (e.g. "shard 2 (replica
    /// 127.0.0.1:9000)") of shard index `shard` (from 0), at `replica` if known.
    #[cold]
    pub(crate) fn located(self, place: String, shard: usize, replica: Option<String>) -> Error {
        Repr::Located(Box::new(Located { place, shard, replica, error: self })).into()
    }

    /// The place of a located error.
    pub(crate) fn place(&self) -> Option<&str> {
        match &*self.0 {
            Repr::Located(l) => Some(&l.place),
            _ => None,
        }
    }

    /// This error without its (outermost) location.
    pub(crate) fn unlocated(self) -> Error {
        match *self.0 {
            Repr::Located(l) => l.error,
            r => Error(Box::new(r)),
        }
    }

    /// This error without its (outermost) location, borrowed.
    pub(crate) fn unlocated_ref(&self) -> &Error {
        match &*self.0 {
            Repr::Located(l) => &l.error,
            _ => self,
        }
    }
}

impl Error {
    /// For an error from a cluster operation (see [`crate::cluster`]): the index
    /// (from 0, in the topology's order) of the shard it came from.
    pub fn shard(&self) -> Option<usize> {
        match &*self.0 {
            Repr::Located(l) => Some(l.shard),
            _ => None,
        }
    }

    /// For an error from a cluster operation: the replica (`host:port`) it came
    /// from, when one was in use.
    pub fn replica(&self) -> Option<&str> {
        match &*self.0 {
            Repr::Located(l) => l.replica.as_deref(),
            _ => None,
        }
    }
}

impl Error {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self.repr() {
            Repr::Server(_) => ErrorKind::Server,
            Repr::Connect(e) if e.kind() == std::io::ErrorKind::TimedOut => ErrorKind::Timeout,
            Repr::Io(_) | Repr::Connect(_) => ErrorKind::Io,
            Repr::Protocol(ProtoError::TypeMismatch { .. }) | Repr::TypeMismatch(_) => ErrorKind::TypeMismatch,
            Repr::Protocol(_) => ErrorKind::Protocol,
            Repr::Timeout(_) => ErrorKind::Timeout,
            Repr::Config(_) => ErrorKind::Config,
            Repr::InvalidInput(_) => ErrorKind::InvalidInput,
            Repr::NoRows(_) => ErrorKind::NoRows,
            Repr::TooManyRows(_) => ErrorKind::TooManyRows,
            Repr::Convert(_) => ErrorKind::Conversion,
            Repr::Cancelled => ErrorKind::Cancelled,
            Repr::Closed(_) => ErrorKind::Closed,
            Repr::Internal(_) => ErrorKind::Internal,
            // `repr()` looks through it, so never seen here.
            Repr::Located(l) => l.error.kind(),
        }
    }

    /// The server error code, if this is a server exception
    /// ([`ServerError::code_name`] has its name).
    pub fn server_code(&self) -> Option<i32> {
        self.as_server().map(|e| e.code)
    }

    /// The server's exception (code, message, nested exceptions, stack trace), if
    /// this is one ([`ErrorKind::Server`]).
    pub fn as_server(&self) -> Option<&ServerError> {
        match self.repr() {
            Repr::Server(e) => Some(e),
            _ => None,
        }
    }

    /// The socket error, if this is one ([`ErrorKind::Io`], or a connect failure
    /// of any kind: see [`Error::is_connect`]).
    pub fn as_io(&self) -> Option<&std::io::Error> {
        match self.repr() {
            Repr::Io(e) | Repr::Connect(e) => Some(e),
            _ => None,
        }
    }

    /// True when the connection could not be made: TCP connect, TLS or the
    /// handshake failed at the socket level, or the connect deadline passed
    /// ([`Error::kind`] is then [`ErrorKind::Timeout`]). No query was sent. The
    /// text names the host and port (`connecting to db1:9000 failed: Connection
    /// refused`), and [`Error::as_io`] has the socket error.
    pub fn is_connect(&self) -> bool {
        matches!(self.repr(), Repr::Connect(_))
    }

    /// How the server's bytes broke the protocol, if they did
    /// ([`ErrorKind::Protocol`]).
    pub fn as_protocol(&self) -> Option<&ProtoError> {
        match self.repr() {
            Repr::Protocol(e) => Some(e),
            _ => None,
        }
    }

    /// The column, the type asked for and the column's type, if this is a type
    /// mismatch ([`ErrorKind::TypeMismatch`]).
    pub fn as_type_mismatch(&self) -> Option<&TypeMismatch> {
        match self.repr() {
            Repr::TypeMismatch(m) => Some(m),
            _ => None,
        }
    }

    /// Why a value did not convert, if this is a conversion error
    /// ([`ErrorKind::Conversion`]).
    pub fn as_conversion(&self) -> Option<&chnative_proto::convert::ConvertError> {
        match self.repr() {
            Repr::Convert(e) => Some(e),
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
    /// cancelled queries, invalid input caught before sending, type mismatches,
    /// conversions and row counts. ClickHouse itself closes the connection after a
    /// few server exceptions (an unknown setting, for one); on a `Connection` or
    /// `Session`, `is_usable()` is the authority on whether it is still open (and
    /// the only one after an [`ErrorKind::Internal`] error).
    pub fn is_closed(&self) -> bool {
        match self.repr() {
            Repr::Io(_) | Repr::Connect(_) | Repr::Timeout(_) | Repr::Closed(_) => true,
            Repr::Protocol(e) => !matches!(e, ProtoError::TypeMismatch { .. }),
            Repr::Server(_)
            | Repr::Config(_)
            | Repr::InvalidInput(_)
            | Repr::NoRows(_)
            | Repr::TooManyRows(_)
            | Repr::TypeMismatch(_)
            | Repr::Convert(_)
            | Repr::Cancelled
            | Repr::Internal(_)
            | Repr::Located(_) => false,
        }
    }

    /// True when running the same request again on a **new** connection cannot
    /// duplicate work: this error proves the server did not start on it.
    ///
    /// The decision is by kind and server code, never by message text. It holds
    /// for exactly these errors:
    /// - connect failures ([`Error::is_connect`]): connecting failed at the socket
    ///   level, so no query was sent; this includes the connect timeout (TCP
    ///   connect plus handshake), whose [`Error::kind`] is [`ErrorKind::Timeout`];
    /// - a server exception with code 202 TOO_MANY_SIMULTANEOUS_QUERIES, which
    ///   the server raises while admitting the query, before running any of it.
    ///
    /// Everything else is false, including socket errors and timeouts after the
    /// query was sent (the server may have run it, and an INSERT may have stored
    /// some blocks), server errors in general (a failed INSERT … SELECT may have
    /// written parts; 209 SOCKET_TIMEOUT, 210 NETWORK_ERROR and 242
    /// TABLE_IS_READ_ONLY among them, as the server raises them mid-query too),
    /// and input errors (a retry fails the same way). To retry an INSERT safely
    /// after such an error, resend it with the same
    /// [`crate::Insert::deduplication_token`].
    ///
    /// One limit: ClickHouse passes a shard's exception on with the shard's code,
    /// so in a distributed query a 202 may be a shard refusing while others had
    /// started. That only matters for a distributed INSERT, which the same
    /// deduplication token makes safe to resend.
    pub fn is_retryable(&self) -> bool {
        match self.repr() {
            Repr::Connect(_) => true,
            Repr::Server(e) => RETRYABLE_SERVER_CODES.contains(&e.code),
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
        Error::server(ServerError {
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
    fn an_error_is_one_pointer() {
        // Was 112 bytes (16-aligned by the u128 checksums of ProtoError), and so was
        // every `Result<row>`.
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
        assert_eq!(std::mem::size_of::<Option<Error>>(), std::mem::size_of::<usize>());
        assert_eq!(std::mem::size_of::<Result<()>>(), std::mem::size_of::<usize>());
        assert_eq!(std::mem::size_of::<Result<u64>>(), 16);
        assert_eq!(std::mem::size_of::<Result<String>>(), std::mem::size_of::<String>());
    }

    #[test]
    fn server_errors_display_on_one_line_with_the_code_name() {
        let e = exception(60, "DB::Exception", "DB::Exception: Table default.x does not exist.", vec![]);
        assert_eq!(e.code_name(), Some("UNKNOWN_TABLE"));
        assert_eq!(e.to_string(), "UNKNOWN_TABLE (60): Table default.x does not exist.");
        assert_eq!(Error::server(e).to_string(), "server error UNKNOWN_TABLE (60): Table default.x does not exist.");
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
        let e = Error::server(exception(62, "DB::Exception", "DB::Exception: Syntax error", vec![]));
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
        assert_eq!(Error::from(io()).kind(), ErrorKind::Io);
        assert_eq!(Error::connect(io()).kind(), ErrorKind::Io);
        assert_eq!(Error::from(ProtoError::violation("x")).kind(), ErrorKind::Protocol);
        let mismatch = ProtoError::TypeMismatch { column: "c".into(), requested: "u8".into(), actual: "String".into() };
        let e = Error::from(mismatch);
        assert_eq!(e.kind(), ErrorKind::TypeMismatch);
        let m = e.as_type_mismatch().unwrap();
        assert_eq!((m.column.as_str(), m.requested.as_str(), m.actual.as_str()), ("c", "u8", "String"));
        assert_eq!(e.to_string(), "column `c` is String, not u8");
        assert_eq!(Error::timeout("waiting for the server").kind(), ErrorKind::Timeout);
        assert_eq!(Error::config("x").kind(), ErrorKind::Config);
        assert_eq!(Error::invalid_input("x").kind(), ErrorKind::InvalidInput);
        assert_eq!(Error::no_rows("none").kind(), ErrorKind::NoRows);
        assert_eq!(Error::too_many_rows("two").kind(), ErrorKind::TooManyRows);
        assert_eq!(Error::internal("x").kind(), ErrorKind::Internal);
        assert_eq!(Error::cancelled().kind(), ErrorKind::Cancelled);
        assert_eq!(Error::closed("x").kind(), ErrorKind::Closed);
        assert_eq!(server(202).server_code(), Some(202));
        assert_eq!(server(202).as_server().map(|s| s.code), Some(202));
        assert_eq!(Error::cancelled().server_code(), None);
        assert!(Error::cancelled().as_server().is_none());
        // The accessors give what the kind promises, and nothing for the others.
        assert_eq!(Error::from(io()).as_io().map(|e| e.kind()), Some(std::io::ErrorKind::UnexpectedEof));
        assert!(Error::connect(io()).as_io().is_some() && Error::connect(io()).is_connect());
        assert!(!Error::from(io()).is_connect());
        assert!(matches!(Error::from(ProtoError::violation("x")).as_protocol(), Some(ProtoError::Violation(_))));
        let c = chnative_proto::convert::ConvertError::OutOfRange { value: "300".into(), target: "u8".into() };
        assert_eq!(Error::from(c.clone()).as_conversion(), Some(&c));
        let all = [server(1), Error::from(io()), Error::config("x"), Error::no_rows("x"), Error::internal("x")];
        for e in &all {
            let some = [
                e.as_server().is_some(),
                e.as_io().is_some(),
                e.as_protocol().is_some(),
                e.as_type_mismatch().is_some(),
                e.as_conversion().is_some(),
            ];
            assert!(some.iter().filter(|&&s| s).count() <= 1, "{e:?}");
        }
        // The caller's own column data or lookup is invalid input, not a protocol error.
        let bad = ProtoError::NoSuchColumn { column: "x".into(), present: vec!["a".into()] };
        assert_eq!(Error::from(bad).kind(), ErrorKind::InvalidInput);
    }

    #[test]
    fn the_source_is_kept() {
        use std::error::Error as _;
        let e = Error::from(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(e.source().is_some());
        assert!(Error::invalid_input("x").source().is_none());
    }

    #[test]
    fn closed_means_the_connection_is_gone() {
        let io = || std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        for e in [
            Error::from(io()),
            Error::connect(io()),
            Error::timeout("writing"),
            Error::from(ProtoError::violation("x")),
            Error::closed("x"),
        ] {
            assert!(e.is_closed(), "{e:?}");
        }
        for e in [
            server(395),
            Error::invalid_input("x"),
            Error::cancelled(),
            Error::config("x"),
            Error::no_rows("x"),
            Error::too_many_rows("x"),
            Error::internal("x"),
        ] {
            assert!(!e.is_closed(), "{e:?}");
        }
    }

    #[test]
    fn retryable_only_when_the_server_cannot_have_started() {
        let io = || std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(Error::connect(io()).is_retryable());
        let timed_out =
            Error::connect(std::io::Error::new(std::io::ErrorKind::TimedOut, "connecting to h:9000 failed"));
        assert!(timed_out.is_retryable());
        assert_eq!(timed_out.kind(), ErrorKind::Timeout);
        assert!(!Error::timeout("connecting").is_retryable());
        assert!(server(202).is_retryable());
        // Decided by the code: the message plays no part.
        let mut e = exception(202, "DB::Exception", "DB::Exception: anything at all", vec![]);
        assert!(Error::server(e.clone()).is_retryable());
        e.code = 209;
        e.message = "DB::Exception: Too many simultaneous queries".into();
        assert!(!Error::server(e).is_retryable());
        for e in [
            Error::from(io()),
            Error::timeout("waiting for the server"),
            Error::timeout("writing"),
            server(516),
            server(241),
            server(252),
            server(319),
            // Raised mid-query too (a shard's socket, a replicated commit).
            server(209),
            server(210),
            server(242),
            server(216),
            server(745),
            Error::from(ProtoError::violation("x")),
            Error::closed("x"),
            Error::cancelled(),
            Error::invalid_input("x"),
            Error::config("x"),
            Error::no_rows("x"),
            Error::internal("x"),
        ] {
            assert!(!e.is_retryable(), "{e:?}");
        }
    }

    #[test]
    fn type_system_errors_keep_their_kind_and_text() {
        use chnative_proto::convert::ConvertError;
        use chnative_proto::row::RowError;
        let inexact = || ConvertError::Inexact { value: "1.5".into(), target: "u8".into() };
        let cases: Vec<(RowError, Error, ErrorKind)> = vec![
            (RowError::invalid_input("x"), Error::invalid_input("x"), ErrorKind::InvalidInput),
            (RowError::internal("x"), Error::internal("x"), ErrorKind::Internal),
            (RowError::from(inexact()), Error::from(inexact()), ErrorKind::Conversion),
            (
                RowError::type_mismatch("c", "u8", "String"),
                Error::from(TypeMismatch { column: "c".into(), requested: "u8".into(), actual: "String".into() }),
                ErrorKind::TypeMismatch,
            ),
            (
                RowError::from(ProtoError::violation("index 3 is out of bounds")),
                Error::from(ProtoError::violation("index 3 is out of bounds")),
                ErrorKind::Protocol,
            ),
        ];
        for (row, direct, kind) in cases {
            // The type system's own text is the client's.
            assert_eq!(row.to_string(), direct.to_string());
            let e = Error::from(row);
            assert_eq!(e.kind(), kind, "{e}");
            assert_eq!(e.to_string(), direct.to_string());
            assert_eq!(e.is_closed(), direct.is_closed(), "{e}");
        }
        let e = Error::from(RowError::type_mismatch("c", "u8", "String"));
        assert_eq!(e.as_type_mismatch().map(|m| m.column.as_str()), Some("c"));
    }
}
