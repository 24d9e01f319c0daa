//! An [ADBC](https://arrow.apache.org/adbc/) driver for ClickHouse over the native
//! TCP protocol, built on `chnative` and `chnative-arrow`.
//!
//! The crate builds a shared library (`libchnative_adbc.so`, `.dylib`, `.dll`)
//! exporting the standard entry point `AdbcDriverInit` (and `ChnativeAdbcDriverInit`),
//! so any ADBC driver manager loads it: Python's `adbc_driver_manager`, C, or
//! Rust's `adbc_driver_manager`. From Rust it can also be used directly through
//! the `adbc_core` traits ([`ChDriver`]).
//!
//! ```python
//! import adbc_driver_manager.dbapi as dbapi
//! conn = dbapi.connect(driver="/path/to/libchnative_adbc.so",
//!                      db_kwargs={"uri": "clickhouse://127.0.0.1:9000/default"})
//! cur = conn.cursor()
//! cur.execute("SELECT number, toString(number) AS s FROM numbers(10)")
//! table = cur.fetch_arrow_table()
//! ```
//!
//! # Options
//!
//! | level | key | meaning |
//! |---|---|---|
//! | database | `uri` | a chnative connection string: `clickhouse://user:password@host:9000/db?option=value` (`clickhouses://` for TLS) |
//! | database | `username`, `password` | override the URI's |
//! | database | `adbc.clickhouse.<option>` | any option of the connection string (`secure`, `tls_ca_file`, `tls_cert_file`, `tls_key_file`, `tls_server_name`, `compression`, `set_<setting>`, …) |
//! | connection | `adbc.connection.catalog` | the database used (a catalog is a ClickHouse database) |
//! | connection | `adbc.connection.autocommit` | always `true` (see below) |
//! | statement | `adbc.ingest.target_table`, `adbc.ingest.target_catalog`, `adbc.ingest.mode` | bulk ingest over native INSERT |
//!
//! # What ADBC's concepts mean here
//!
//! - **Catalogs are databases**; every database has one schema, named `""`.
//! - **Transactions**: ClickHouse has none across statements, so a connection is
//!   always in autocommit mode: every statement takes effect when it succeeds.
//!   Setting autocommit off, commit and rollback fail with `NotImplemented`.
//! - **Connections**: an ADBC connection is a pool of native connections
//!   (`chnative::Client`); statements do not share session state (`SET`,
//!   temporary tables). Put settings in the URI (`set_<name>=<value>`).
//! - **Parameters**: `{name:Type}` placeholders are filled from the bound batch's
//!   column of that name, or, when no column has the placeholder's name (DB-API's
//!   positional parameters), by position in order of first appearance. Values go
//!   to the server as query parameters, never spliced into the SQL. A query binds
//!   one row; `execute_update` runs once per bound row.
//! - **Ingest**: `create` (CREATE TABLE, failing if it exists), `append`,
//!   `replace` (DROP + CREATE) and `create_append` (CREATE TABLE IF NOT EXISTS),
//!   then one native INSERT of every bound batch. Tables are created as
//!   `MergeTree ORDER BY tuple()` with the column types of
//!   `chnative_arrow::clickhouse_type`.
//! - **Partitions**: `execute_partitions` returns one partition per query (the
//!   query and its parameters); `read_partition` runs it, on any connection to the
//!   same server.
//! - **Cancel** sends the protocol's Cancel for the running query; the reader then
//!   ends with an error.
//!
//! # Memory
//!
//! With the feature `region-alloc` (on by default; Linux) the library is its own global
//! allocator for large buffers: a block's columns (64 KiB to 16 MiB) are carved from 64 MiB
//! regions that the kernel faults in 2 MiB at a time, which cuts the CPU of a large read
//! where page faults are dear. A Rust program linking this crate with a
//! `#[global_allocator]` of its own turns it off (`default-features = false`).
#![warn(missing_docs)]

mod connection;
mod params;
#[cfg(all(feature = "region-alloc", target_os = "linux"))]
mod region_alloc;
mod statement;

use std::sync::{Arc, OnceLock};

use adbc_core::error::{Error, Result, Status};
use adbc_core::options::{OptionConnection, OptionDatabase, OptionValue};
use adbc_core::{Driver, Optionable};

pub use connection::ChConnection;
pub use statement::ChStatement;

/// Large buffers (a block's columns) come from page-populated regions: see `region_alloc`.
#[cfg(all(feature = "region-alloc", target_os = "linux"))]
#[global_allocator]
static ALLOC: region_alloc::RegionAlloc = region_alloc::RegionAlloc::new();

/// Keeps the allocator's lock consistent across `fork` (a child of a process whose other
/// thread held it would wait for it forever): taken before, released after, on both sides.
#[cfg(all(feature = "region-alloc", target_os = "linux"))]
fn guard_allocator_across_fork() {
    extern "C" fn prepare() {
        ALLOC.lock();
    }
    extern "C" fn release() {
        ALLOC.unlock();
    }
    // SAFETY: registers plain functions with no captured state; they only take and release
    // the allocator's lock.
    unsafe { libc::pthread_atfork(Some(prepare), Some(release), Some(release)) };
}

/// The runtime every driver call runs its async work on (two worker threads,
/// made on first use).
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        // Before the first thread of ours exists: from then on a fork may find the lock held.
        #[cfg(all(feature = "region-alloc", target_os = "linux"))]
        guard_allocator_across_fork();
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("chnative-adbc")
            .enable_all()
            .build()
            .expect("start the chnative-adbc runtime")
    })
}

/// An ADBC error from a client error, with the status that fits it.
pub(crate) fn client_error(e: chnative::Error) -> Error {
    use chnative::ErrorKind as K;
    let status = match e.kind() {
        K::Cancelled => Status::Cancelled,
        K::Timeout => Status::Timeout,
        K::Io | K::Closed => Status::IO,
        K::Config => Status::InvalidArguments,
        K::InvalidInput | K::TypeMismatch => Status::InvalidArguments,
        K::Conversion => Status::InvalidData,
        K::Server => match e.server_code() {
            Some(57) => Status::AlreadyExists,       // TABLE_ALREADY_EXISTS
            Some(60) | Some(81) => Status::NotFound, // UNKNOWN_TABLE, UNKNOWN_DATABASE
            Some(516) => Status::Unauthenticated,    // AUTHENTICATION_FAILED
            Some(497) => Status::Unauthorized,       // ACCESS_DENIED
            Some(394) => Status::Cancelled,          // QUERY_WAS_CANCELLED
            Some(159) => Status::Timeout,            // TIMEOUT_EXCEEDED
            // The query itself is wrong (DB-API's ProgrammingError): SYNTAX_ERROR,
            // UNKNOWN_IDENTIFIER, UNKNOWN_FUNCTION, NUMBER_OF_ARGUMENTS_DOESNT_MATCH,
            // ILLEGAL_TYPE_OF_ARGUMENT, BAD_ARGUMENTS, NO_SUCH_COLUMN_IN_TABLE, TYPE_MISMATCH,
            // UNKNOWN_QUERY_PARAMETER, BAD_QUERY_PARAMETER, UNKNOWN_SETTING.
            Some(62 | 47 | 46 | 42 | 43 | 36 | 16 | 53 | 456 | 457 | 115) => Status::InvalidArguments,
            // The data does not fit: CANNOT_PARSE_TEXT, CANNOT_PARSE_*, CANNOT_CONVERT_TYPE.
            Some(6 | 27 | 38 | 41 | 70 | 72) => Status::InvalidData,
            _ => Status::Internal,
        },
        _ => Status::Internal,
    };
    let mut err = Error::with_message_and_status(e.to_string(), status);
    if let Some(server) = e.as_server() {
        // ADBC 1.1 callers (every current driver manager) get the error through its private
        // data, which takes the place of vendor_code; the code and its name travel as error
        // details as well (Python: `err.details`).
        err.vendor_code = server.code;
        let mut details = vec![("clickhouse.error_code".to_string(), server.code.to_string().into_bytes())];
        if let Some(name) = server.code_name() {
            details.push(("clickhouse.error_name".to_string(), name.as_bytes().to_vec()));
        }
        err.details = Some(details);
    }
    err
}

/// An ADBC error from a chnative-arrow error.
pub(crate) fn arrow_error(e: chnative_arrow::Error) -> Error {
    match e {
        chnative_arrow::Error::Client(e) => client_error(e),
        chnative_arrow::Error::Mismatch { .. } | chnative_arrow::Error::Conversion(_) => {
            Error::with_message_and_status(e.to_string(), Status::InvalidData)
        }
        chnative_arrow::Error::Usage(_) => Error::with_message_and_status(e.to_string(), Status::InvalidArguments),
        chnative_arrow::Error::Unsupported { .. } => {
            Error::with_message_and_status(e.to_string(), Status::NotImplemented)
        }
        e => Error::with_message_and_status(e.to_string(), Status::Internal),
    }
}

pub(crate) fn not_implemented(what: &str) -> Error {
    Error::with_message_and_status(format!("{what} is not supported by the ClickHouse driver"), Status::NotImplemented)
}

pub(crate) fn invalid(msg: impl Into<String>) -> Error {
    Error::with_message_and_status(msg.into(), Status::InvalidArguments)
}

/// The driver: makes databases.
#[derive(Debug, Default)]
pub struct ChDriver;

impl Driver for ChDriver {
    type DatabaseType = ChDatabase;

    fn new_database(&mut self) -> Result<ChDatabase> {
        Ok(ChDatabase::default())
    }

    fn new_database_with_opts(
        &mut self,
        opts: impl IntoIterator<Item = (OptionDatabase, OptionValue)>,
    ) -> Result<ChDatabase> {
        let mut db = ChDatabase::default();
        for (k, v) in opts {
            db.set_option(k, v)?;
        }
        Ok(db)
    }
}

/// Where to connect: the options of an ADBC database.
#[derive(Debug, Default, Clone)]
pub struct ChDatabase {
    uri: Option<String>,
    username: Option<String>,
    password: Option<String>,
    /// `adbc.clickhouse.<option>` values, appended to the URI's query.
    extra: Vec<(String, String)>,
}

/// The prefix of database options passed through to the connection string.
pub const OPTION_PREFIX: &str = "adbc.clickhouse.";

fn string_value(key: &str, v: OptionValue) -> Result<String> {
    match v {
        OptionValue::String(s) => Ok(s),
        OptionValue::Int(i) => Ok(i.to_string()),
        OptionValue::Double(d) => Ok(d.to_string()),
        OptionValue::Bytes(_) => Err(invalid(format!("option {key} takes a string"))),
        _ => Err(invalid(format!("option {key}: unknown value kind"))),
    }
}

impl ChDatabase {
    /// The client configuration these options describe.
    pub fn config(&self) -> Result<chnative::Config> {
        let uri = self.uri.clone().unwrap_or_else(|| "clickhouse://127.0.0.1:9000/default".to_string());
        let mut url = uri;
        for (k, v) in &self.extra {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(k);
            url.push('=');
            url.push_str(v);
        }
        let mut config = chnative::Config::from_url(&url).map_err(client_error)?;
        if let Some(u) = &self.username {
            config = config.user(u.clone());
        }
        if let Some(p) = &self.password {
            config = config.password(p.clone());
        }
        Ok(config)
    }
}

impl Optionable for ChDatabase {
    type Option = OptionDatabase;

    fn set_option(&mut self, key: OptionDatabase, value: OptionValue) -> Result<()> {
        match key {
            OptionDatabase::Uri => self.uri = Some(string_value("uri", value)?),
            OptionDatabase::Username => self.username = Some(string_value("username", value)?),
            OptionDatabase::Password => self.password = Some(string_value("password", value)?),
            OptionDatabase::Other(k) => match k.strip_prefix(OPTION_PREFIX) {
                Some(name) if !name.is_empty() => {
                    let v = string_value(&k, value)?;
                    self.extra.retain(|(n, _)| n != name);
                    self.extra.push((name.to_string(), v));
                }
                _ => {
                    return Err(Error::with_message_and_status(
                        format!(
                            "unknown database option {k} (connection string options go as {OPTION_PREFIX}<option>)"
                        ),
                        Status::NotImplemented,
                    ))
                }
            },
            other => return Err(not_implemented(&format!("database option {}", other.as_ref()))),
        }
        Ok(())
    }

    fn get_option_string(&self, key: OptionDatabase) -> Result<String> {
        match key {
            OptionDatabase::Uri => {
                self.uri.clone().ok_or_else(|| Error::with_message_and_status("uri not set", Status::NotFound))
            }
            OptionDatabase::Username => self
                .username
                .clone()
                .ok_or_else(|| Error::with_message_and_status("username not set", Status::NotFound)),
            OptionDatabase::Other(k) => k
                .strip_prefix(OPTION_PREFIX)
                .and_then(|n| self.extra.iter().find(|(e, _)| e == n))
                .map(|(_, v)| v.clone())
                .ok_or_else(|| Error::with_message_and_status(format!("{k} not set"), Status::NotFound)),
            other => Err(Error::with_message_and_status(format!("{} not readable", other.as_ref()), Status::NotFound)),
        }
    }

    fn get_option_bytes(&self, key: OptionDatabase) -> Result<Vec<u8>> {
        Err(Error::with_message_and_status(format!("{} is not a bytes option", key.as_ref()), Status::NotFound))
    }

    fn get_option_int(&self, key: OptionDatabase) -> Result<i64> {
        Err(Error::with_message_and_status(format!("{} is not an int option", key.as_ref()), Status::NotFound))
    }

    fn get_option_double(&self, key: OptionDatabase) -> Result<f64> {
        Err(Error::with_message_and_status(format!("{} is not a double option", key.as_ref()), Status::NotFound))
    }
}

impl adbc_core::Database for ChDatabase {
    type ConnectionType = ChConnection;

    fn new_connection(&self) -> Result<ChConnection> {
        ChConnection::connect(self.config()?)
    }

    fn new_connection_with_opts(
        &self,
        opts: impl IntoIterator<Item = (OptionConnection, OptionValue)>,
    ) -> Result<ChConnection> {
        let mut config = self.config()?;
        let mut rest = Vec::new();
        for (k, v) in opts {
            match k {
                OptionConnection::CurrentCatalog => config = config.database(string_value(k.as_ref(), v)?),
                k => rest.push((k, v)),
            }
        }
        let mut conn = ChConnection::connect(config)?;
        for (k, v) in rest {
            conn.set_option(k, v)?;
        }
        Ok(conn)
    }
}

/// The connection's running query, for the ADBC cancel handle (taken once, when the
/// statement is made): a statement begins a query before it is sent, and hands over the
/// query's cancel handle once the query stream exists. A cancel that comes in between (the
/// server may already run the query) is kept and applied when the handle arrives: before,
/// it found no handle and was lost, and the query ran to its end.
#[derive(Debug, Clone, Default)]
pub(crate) struct CancelSlot(Arc<std::sync::Mutex<SlotState>>);

#[derive(Debug, Default)]
struct SlotState {
    /// The ticket of the next query begun.
    next: u64,
    running: Query,
}

#[derive(Debug, Default)]
enum Query {
    #[default]
    Idle,
    /// Query `ticket` is being started: no cancel handle yet.
    Starting {
        ticket: u64,
        cancelled: bool,
    },
    Started {
        ticket: u64,
        handle: chnative::CancelHandle,
    },
}

/// Ends its query in the slot when dropped (on every path of the task running it).
pub(crate) struct SlotTicket {
    slot: CancelSlot,
    ticket: u64,
}

impl CancelSlot {
    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A query of this connection begins: from now on a cancel ends it.
    pub(crate) fn begin(&self) -> SlotTicket {
        let mut st = self.state();
        let ticket = st.next;
        st.next += 1;
        st.running = Query::Starting { ticket, cancelled: false };
        SlotTicket { slot: self.clone(), ticket }
    }
}

impl SlotTicket {
    /// The query's cancel handle, now that its stream exists; used at once if a cancel
    /// came while the query was starting.
    pub(crate) fn running(&self, handle: chnative::CancelHandle) {
        let mut st = self.slot.state();
        match st.running {
            Query::Starting { ticket, cancelled } if ticket == self.ticket => {
                if cancelled {
                    handle.cancel();
                }
                st.running = Query::Started { ticket, handle };
            }
            // A later query of the connection began meanwhile: the slot is its.
            _ => {}
        }
    }
}

impl Drop for SlotTicket {
    fn drop(&mut self) {
        let mut st = self.slot.state();
        let ours = match st.running {
            Query::Starting { ticket, .. } | Query::Started { ticket, .. } => ticket == self.ticket,
            Query::Idle => false,
        };
        if ours {
            st.running = Query::Idle;
        }
    }
}

impl adbc_core::CancelHandle for CancelSlot {
    fn try_cancel(&self) -> Result<()> {
        match &mut self.state().running {
            Query::Started { handle, .. } => handle.cancel(),
            Query::Starting { cancelled, .. } => *cancelled = true,
            // Nothing running (not started, or already finished: a timer racing the end of a
            // query): nothing to cancel, as with other drivers.
            Query::Idle => {}
        }
        Ok(())
    }
}

thread_local! {
    /// The error that ended the result stream this thread read last, for
    /// `ErrorFromArrayStream` (the consumer asks on the thread whose `get_next` failed).
    static STREAM_ERROR: std::cell::RefCell<Option<Error>> = const { std::cell::RefCell::new(None) };
}

/// Records (or, with `None`, forgets) the error ending this thread's current result stream.
pub(crate) fn set_stream_error(e: Option<Error>) {
    STREAM_ERROR.with(|s| *s.borrow_mut() = e);
}

/// The C entry points: `ChnativeAdbcDriverInit` and the standard fallback
/// `AdbcDriverInit`, which ADBC driver managers look up in the shared library.
///
/// adbc_ffi's driver table, with `ErrorFromArrayStream` filled in (adbc_ffi leaves it
/// empty): a driver manager then turns an error that ends a result stream into an ADBC
/// error with its status and details (in Python, the DB-API exception class of the status
/// instead of pyarrow's `ArrowInvalid`).
#[allow(missing_docs)]
mod ffi {
    use std::os::raw::{c_int, c_void};

    use adbc_core::constants::{ADBC_STATUS_INVALID_ARGUMENT, ADBC_STATUS_NOT_IMPLEMENTED, ADBC_STATUS_OK};
    use adbc_core::error::{AdbcStatusCode, Error, Status};
    use adbc_core::options::AdbcVersion;
    use adbc_ffi::{FFIDriver, FFI_AdbcDriver, FFI_AdbcError};
    use arrow_array::ffi_stream::FFI_ArrowArrayStream;

    thread_local! {
        /// The last error handed out by `error_from_array_stream` on this thread: it must
        /// outlive the call (the caller reads it, and may release it, afterwards).
        static EXPORTED: std::cell::RefCell<Option<Box<FFI_AdbcError>>> = const { std::cell::RefCell::new(None) };
    }

    unsafe extern "C" fn error_from_array_stream(
        _stream: *mut FFI_ArrowArrayStream,
        status: *mut AdbcStatusCode,
    ) -> *const FFI_AdbcError {
        let Some(err) = super::STREAM_ERROR.with(|s| s.borrow_mut().take()) else {
            return std::ptr::null();
        };
        let code = AdbcStatusCode::from(err.status);
        let Ok(mut ffi) = FFI_AdbcError::try_from(err) else {
            return std::ptr::null();
        };
        // The 1.1 layout: the details live in private_data, which this marker announces.
        ffi.vendor_code = adbc_core::constants::ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA;
        if !status.is_null() {
            // SAFETY: a non-null `status` points to a status code the caller owns.
            unsafe { *status = code };
        }
        EXPORTED.with(|e| {
            let boxed = Box::new(ffi);
            let ptr: *const FFI_AdbcError = &*boxed;
            // Dropping the previous one releases it, unless the caller already did.
            *e.borrow_mut() = Some(boxed);
            ptr
        })
    }

    /// # Safety
    /// `driver` points to an `AdbcDriver` of the ADBC 1.1.0 layout; `error` is null or a
    /// valid `AdbcError`.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn ChnativeAdbcDriverInit(
        version: c_int,
        driver: *mut c_void,
        error: *mut FFI_AdbcError,
    ) -> AdbcStatusCode {
        let fail = |status: Status, code: AdbcStatusCode, message: String| {
            // SAFETY: `error` is null or a valid AdbcError (the caller's contract).
            unsafe { adbc_ffi::export_error(error, Error::with_message_and_status(message, status)) };
            code
        };
        if AdbcVersion::try_from(version).ok() != Some(AdbcVersion::V110) {
            return fail(
                Status::NotImplemented,
                ADBC_STATUS_NOT_IMPLEMENTED,
                format!("unsupported ADBC version {version} (this driver implements 1.1.0)"),
            );
        }
        if driver.is_null() {
            return fail(Status::InvalidArguments, ADBC_STATUS_INVALID_ARGUMENT, "driver is null".into());
        }
        let mut table = <super::ChDriver as FFIDriver>::ffi_driver();
        table.ErrorFromArrayStream = Some(error_from_array_stream);
        // SAFETY: `driver` is non-null and, for version 1.1.0 (checked), points to a struct of
        // FFI_AdbcDriver's layout for us to fill.
        unsafe { std::ptr::write_unaligned(driver as *mut FFI_AdbcDriver, table) };
        ADBC_STATUS_OK
    }

    /// # Safety
    /// As [`ChnativeAdbcDriverInit`].
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn AdbcDriverInit(
        version: c_int,
        driver: *mut c_void,
        error: *mut FFI_AdbcError,
    ) -> AdbcStatusCode {
        // SAFETY: the same contract.
        unsafe { ChnativeAdbcDriverInit(version, driver, error) }
    }
}

#[cfg(test)]
mod cancel_slot_tests {
    use super::CancelSlot;
    use adbc_core::CancelHandle as _;

    #[test]
    fn a_cancel_while_the_query_starts_is_applied_when_its_handle_arrives() {
        // Regression: the cancel found no handle yet (the server already ran the query) and
        // was lost; the query ran to its end (pytest's test_cancel_a_running_query, fresh clone).
        let slot = CancelSlot::default();
        let ticket = slot.begin();
        slot.try_cancel().unwrap();
        let handle = chnative::CancelHandle::default();
        ticket.running(handle.clone());
        assert!(handle.is_cancelled());
    }

    #[test]
    fn a_cancel_before_or_after_a_query_touches_no_query() {
        let slot = CancelSlot::default();
        slot.try_cancel().unwrap();
        let ticket = slot.begin();
        let handle = chnative::CancelHandle::default();
        ticket.running(handle.clone());
        assert!(!handle.is_cancelled());
        drop(ticket);
        slot.try_cancel().unwrap();
        assert!(!handle.is_cancelled());
    }

    #[test]
    fn the_slot_belongs_to_the_latest_query() {
        let slot = CancelSlot::default();
        let first = slot.begin();
        let second = slot.begin();
        let (h1, h2) = (chnative::CancelHandle::default(), chnative::CancelHandle::default());
        second.running(h2.clone());
        first.running(h1.clone()); // the first query's late handle does not take the slot
        drop(first); // nor does its end clear the second's
        slot.try_cancel().unwrap();
        assert!(h2.is_cancelled() && !h1.is_cancelled());
    }
}
