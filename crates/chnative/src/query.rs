//! A query: SQL text plus parameters, settings and an id.

use crate::params::{Params, ToParam};

/// SQL with its parameters, settings and id.
///
/// ```
/// use chnative::Query;
/// let q = Query::new("SELECT * FROM t WHERE id > {min:UInt64}")
///     .bind("min", 10u64)
///     .setting("max_threads", "2");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub(crate) sql: String,
    pub(crate) params: Vec<(String, String)>,
    pub(crate) settings: Vec<(String, String)>,
    pub(crate) id: Option<String>,
    pub(crate) trace: Option<crate::trace::TraceContext>,
    pub(crate) observer: crate::observe::ObserverSlot,
    /// This query's deadline, overriding the config's (`ZERO`: none).
    pub(crate) timeout: Option<std::time::Duration>,
    /// Roles to run this query with (`SET ROLE` first on its connection), if any.
    pub(crate) roles: Option<Vec<String>>,
}

impl Query {
    /// A query with no parameters. With the `opentelemetry` feature it carries the
    /// current OpenTelemetry span's context (see [`Query::trace_context`]).
    pub fn new(sql: impl Into<String>) -> Self {
        Query { sql: sql.into(), trace: crate::trace::TraceContext::ambient(), ..Default::default() }
    }

    /// Fills the `{name:Type}` placeholder `name`.
    ///
    /// `name` must be an identifier (an ASCII letter or `_`, then letters, digits
    /// and `_`); any other name, the empty one included, is refused with
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) when the query
    /// is sent, before any of it is written.
    pub fn bind(mut self, name: impl Into<String>, value: impl ToParam) -> Self {
        self.params.push((name.into(), value.to_param()));
        self
    }

    /// Adds several parameters.
    pub fn params(mut self, params: Params) -> Self {
        self.params.extend(params.0);
        self
    }

    /// A server setting for this query only. A name that is not an identifier is
    /// refused like a bad parameter name (see [`Query::bind`]).
    pub fn setting(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((name.into(), value.into()));
        self
    }

    crate::observe::trace_and_observer!("the query's progress, profile, logs, totals and extremes");

    /// A deadline for this query, instead of [`crate::Config::query_timeout`];
    /// `Duration::ZERO` means none, even when the config sets one.
    ///
    /// It runs from the call that starts the query (`fetch_blocks`, `execute`,
    /// `fetch_scalar`, …; waiting for a connection counts) to the end of its
    /// result, the time between [`crate::QueryStream::next`] calls included.
    /// When it passes, the call (or the next `next()`) fails at once with
    /// an [`ErrorKind::Timeout`](crate::ErrorKind::Timeout) error, whatever the server does: Cancel is sent and
    /// the rest of the answer is read off the caller's path (see
    /// [`crate::Config::query_timeout`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let q = chnative::Query::new("SELECT count() FROM big").timeout(Duration::from_secs(5));
    /// ```
    pub fn timeout(mut self, d: std::time::Duration) -> Self {
        self.timeout = Some(d);
        self
    }

    /// Uses this query id instead of a generated one.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Runs this query with these roles active instead of the user's default roles (an
    /// empty list: with none), as HTTP's `role=` parameter does.
    ///
    /// The native protocol has no per-query roles (a `role` setting is refused as
    /// UNKNOWN_SETTING), and `SET ROLE` holds for the whole connection. So a
    /// [`Client`](crate::Client) sends `SET ROLE r1, r2` (or `SET ROLE NONE`) on the pooled
    /// connection it takes, runs the query there, and then closes that connection instead
    /// of pooling it, so the roles reach no other call: one extra round trip and one new
    /// connection per such query. For many queries under the same roles, use a
    /// [`Session`](crate::Session) and `SET ROLE` once. On a `Session` or a
    /// [`Connection`](crate::Connection) (whose later calls `SET ROLE` would change) it is
    /// refused with [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput), before
    /// anything is sent.
    ///
    /// A role not granted to the user fails the query with the server's
    /// `SET_NON_GRANTED_ROLE` (512); an unknown one with `UNKNOWN_ROLE` (511).
    ///
    /// ```
    /// let q = chnative::Query::new("SELECT count() FROM payroll").roles(["hr_reader"]);
    /// ```
    pub fn roles<I, S>(mut self, roles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.roles = Some(roles.into_iter().map(Into::into).collect());
        self
    }
}

impl From<&str> for Query {
    fn from(sql: &str) -> Self {
        Query::new(sql)
    }
}

impl From<String> for Query {
    fn from(sql: String) -> Self {
        Query::new(sql)
    }
}

impl From<(&str, Params)> for Query {
    fn from((sql, params): (&str, Params)) -> Self {
        Query::new(sql).params(params)
    }
}
