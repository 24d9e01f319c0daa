//! The connection pool behind [`Client`].
//!
//! A connection is lent out as a [`Lease`] and comes back when the lease is
//! dropped, wherever that happens (a finished call, an error, a future
//! dropped at any await point). It goes back to the idle list only when the
//! protocol state machine says it is idle. One left busy (a query still
//! running, an insert half sent) is abandoned: the machine undoes, drains or
//! closes it, and a drain runs in a background task that holds the pool slot
//! until the connection is idle again or closed. A closed connection is never
//! handed out again.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::Config;
use crate::driver::{Driver, ServerInfo};
use crate::error::{Error, Result};
use crate::hosts::Connector;
use crate::slot::Slot;

/// Counts open connections: one lives beside each pooled connection, so
/// the count stays right however the connection goes away.
struct OpenToken(Arc<AtomicUsize>);

impl OpenToken {
    fn new(open: &Arc<AtomicUsize>) -> Self {
        open.fetch_add(1, Ordering::SeqCst);
        OpenToken(open.clone())
    }
}

impl Drop for OpenToken {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What the pool knows about one connection besides its socket.
struct Meta {
    created: Instant,
    _open: OpenToken,
}

struct Idle {
    conn: Box<Driver>,
    meta: Meta,
    since: Instant,
}

/// The pool shared by all clones of a [`Client`].
pub(crate) struct Shared {
    connector: Connector,
    permits: Arc<Semaphore>,
    /// Most recently returned last (handed out first: warm, least likely to
    /// have been closed by the server).
    idle: Mutex<Vec<Idle>>,
    open: Arc<AtomicUsize>,
    /// Whether the connection returned last had been closed (for `is_usable`).
    last_closed: AtomicBool,
    info: ServerInfo,
    /// [`Client::extension`]'s values, one per type.
    extensions: Mutex<Vec<Arc<dyn std::any::Any + Send + Sync>>>,
    /// Typed INSERTs' column buffers, kept for the next ones.
    pub(crate) kept_buffers: crate::row::kept::KeptBuffers,
}

/// How many connections a [`Client`]'s pool has, and how they are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStatus {
    /// Open connections (idle, lent out, or finishing an abandoned query).
    pub size: usize,
    /// Open connections waiting in the pool.
    pub idle: usize,
    /// Connections lent out, or finishing an abandoned query in the background.
    pub in_use: usize,
    /// The most the pool opens at once.
    pub max_size: usize,
}

/// One pooled connection lent out; it goes back (or is closed) on drop.
pub(crate) struct Lease {
    shared: Arc<Shared>,
    pub(crate) slot: Slot,
    meta: Option<Meta>,
    permit: Option<OwnedSemaphorePermit>,
    /// Close the connection instead of pooling it (a session's state must not leak).
    pub(crate) discard: bool,
}

impl Shared {
    fn lock_idle(&self) -> std::sync::MutexGuard<'_, Vec<Idle>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn cfg(&self) -> &Config {
        self.connector.config()
    }

    /// What the server said at the first connection.
    pub(crate) fn info(&self) -> &ServerInfo {
        &self.info
    }

    /// The configured per-query deadline.
    pub(crate) fn query_timeout(&self) -> Option<Duration> {
        self.cfg().query_timeout
    }

    fn expired(&self, meta: &Meta, idle_since: Option<Instant>, now: Instant) -> bool {
        let o = &self.cfg().net.pool;
        o.max_lifetime.is_some_and(|d| now.duration_since(meta.created) >= d)
            || idle_since.zip(o.idle_timeout).is_some_and(|(since, d)| now.duration_since(since) >= d)
    }

    /// A connection, idle or new, with its slot in the pool.
    pub(crate) async fn acquire(self: &Arc<Self>) -> Result<Lease> {
        let wait = self.permits.clone().acquire_owned();
        let permit = match self.cfg().net.pool.acquire_timeout {
            Some(d) => tokio::time::timeout(d, wait)
                .await
                .map_err(|_| Error::timeout("waiting for a free connection in the pool"))?,
            None => wait.await,
        }
        .map_err(|_| Error::closed("the pool is closed"))?;
        loop {
            let Some(idle) = self.lock_idle().pop() else { break };
            let now = Instant::now();
            if self.expired(&idle.meta, Some(idle.since), now) {
                continue;
            }
            let Idle { mut conn, meta, since } = idle;
            // A server that closed the connection while it sat idle (a restart,
            // its idle timeout) is noticed here without a round trip.
            if !conn.is_reusable() {
                continue;
            }
            let check = self.cfg().net.pool.health_check_after;
            // The health check and opening a connection are boxed: they are rare, and
            // inline they would make every query's future several KiB larger (it is
            // moved as it is built and first polled: a memcpy of its whole size).
            if check.is_some_and(|d| now.duration_since(since) >= d) && Box::pin(conn.ping()).await.is_err() {
                continue;
            }
            return Ok(self.lease(conn, meta, permit));
        }
        let conn = Box::new(Box::pin(self.connector.connect()).await?);
        let meta = Meta { created: Instant::now(), _open: OpenToken::new(&self.open) };
        Ok(self.lease(conn, meta, permit))
    }

    fn lease(self: &Arc<Self>, conn: Box<Driver>, meta: Meta, permit: OwnedSemaphorePermit) -> Lease {
        Lease {
            shared: self.clone(),
            slot: Slot::from_box(conn),
            meta: Some(meta),
            permit: Some(permit),
            discard: false,
        }
    }

    /// Takes a connection back: idle ones wait for the next caller, others close.
    fn give_back(&self, conn: Box<Driver>, meta: Meta) {
        let closed = conn.is_broken() || !conn.is_idle();
        self.last_closed.store(closed, Ordering::SeqCst);
        if closed || self.expired(&meta, None, Instant::now()) {
            return;
        }
        self.lock_idle().push(Idle { conn, meta, since: Instant::now() });
    }

    /// Closes idle connections past their time and opens new ones up to `min_idle`.
    async fn maintain(self: &Arc<Self>) {
        let now = Instant::now();
        self.lock_idle().retain(|i| !self.expired(&i.meta, Some(i.since), now));
        let want = self.cfg().net.pool.min_idle;
        while self.lock_idle().len() < want {
            let Ok(permit) = self.permits.clone().try_acquire_owned() else { return };
            match self.connector.connect().await {
                Ok(conn) => {
                    let meta = Meta { created: Instant::now(), _open: OpenToken::new(&self.open) };
                    self.give_back(Box::new(conn), meta);
                    drop(permit);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "could not open an idle connection for the pool");
                    return;
                }
            }
        }
    }

    fn status(&self) -> PoolStatus {
        let size = self.open.load(Ordering::SeqCst);
        let idle = self.lock_idle().len();
        PoolStatus { size, idle, in_use: size.saturating_sub(idle), max_size: self.cfg().net.pool.max_size }
    }
}

/// Keeps `min_idle` and the idle timeout while the client lives.
fn spawn_maintenance(shared: &Arc<Shared>) {
    let o = &shared.cfg().net.pool;
    if o.min_idle == 0 && o.idle_timeout.is_none() {
        return;
    }
    let every = o
        .idle_timeout
        .map_or(Duration::from_secs(1), |d| (d / 2).clamp(Duration::from_millis(100), Duration::from_secs(30)));
    let weak: Weak<Shared> = Arc::downgrade(shared);
    tokio::spawn(async move {
        loop {
            let Some(shared) = weak.upgrade() else { return };
            shared.maintain().await;
            drop(shared);
            tokio::time::sleep(every).await;
        }
    });
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(meta) = self.meta.take() else { return };
        let permit = self.permit.take();
        let shared = self.shared.clone();
        let (conn, draining) = self.slot.take_parts();
        if self.discard {
            // Dropping the connection closes it; an abandoned query dies with it.
            return;
        }
        if let Some(rx) = draining {
            // A stream dropped mid-query is being read to its end already.
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    if let Ok(conn) = rx.await {
                        shared.give_back(conn, meta);
                    }
                    drop(permit);
                });
            }
            return;
        }
        let Some(mut conn) = conn else {
            shared.last_closed.store(true, Ordering::SeqCst);
            return;
        };
        if !conn.is_broken() && !conn.is_idle() {
            // Left mid-operation: cancel or undo what can be without waiting.
            conn.abandon();
            conn.write_now();
        }
        if conn.is_broken() || conn.is_idle() {
            shared.give_back(conn, meta);
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    // Errors close the connection; give_back then drops it.
                    let _ = conn.prepare().await;
                    shared.give_back(conn, meta);
                    drop(permit);
                });
            }
            // No runtime to finish it on: close it.
            Err(_) => shared.last_closed.store(true, Ordering::SeqCst),
        }
    }
}

/// A shared ClickHouse client: a pool of connections behind a handle that is
/// cheap to clone and `Send + Sync`, so many tasks can query at once.
///
/// Each call borrows an idle connection (or opens one, up to
/// [`Config::pool_max_size`], 20 by default) and gives it back when it is
/// done; a [`QueryStream`](crate::QueryStream) holds its connection until it is dropped. A call
/// dropped halfway never leaves a connection in an unknown state in the
/// pool: the connection is finished in the background or closed.
///
/// ```no_run
/// # async fn demo() -> chnative::Result<()> {
/// let client = chnative::Client::connect("clickhouse://default@127.0.0.1:9000/default").await?;
/// let mut tasks = Vec::new();
/// for i in 0..8u64 {
///     let client = client.clone();
///     tasks.push(tokio::spawn(async move { client.fetch_scalar::<u64>(("SELECT {i:UInt64} * 2", chnative::params! {"i" => i})).await }));
/// }
/// for t in tasks {
///     println!("{}", t.await.unwrap()?);
/// }
/// println!("{:?}", client.pool_status());
/// # Ok(()) }
/// ```
///
/// Statements that change a connection's server-side state (`SET`, `USE`,
/// temporary tables) land on whichever connection ran them: use a
/// [`Session`](crate::Session) for those, or per-query settings ([`Query::setting`](crate::Query::setting)).
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.shared.info.display_name)
            .field("pool", &self.pool_status())
            .finish()
    }
}

impl Client {
    /// Connects with a connection string (see [`Config::from_url`]): opens the
    /// first connection, so a wrong address or password fails here.
    pub async fn connect(url: &str) -> Result<Client> {
        Self::connect_with(Config::from_url(url)?).await
    }

    /// Connects with a [`Config`].
    pub async fn connect_with(config: Config) -> Result<Client> {
        let connector = Connector::new(config)?;
        let max = connector.config().net.pool.max_size.max(1);
        let open = Arc::new(AtomicUsize::new(0));
        let conn = connector.connect().await?;
        let info = ServerInfo::of(&conn);
        let shared = Arc::new(Shared {
            connector,
            permits: Arc::new(Semaphore::new(max)),
            idle: Mutex::new(Vec::new()),
            open: open.clone(),
            last_closed: AtomicBool::new(false),
            info,
            extensions: Mutex::new(Vec::new()),
            kept_buffers: Default::default(),
        });
        shared.give_back(Box::new(conn), Meta { created: Instant::now(), _open: OpenToken::new(&open) });
        spawn_maintenance(&shared);
        Ok(Client { shared })
    }

    /// The pool, for the query surface (see `executor.rs`).
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// What the server said about itself (at the first connection).
    pub fn server_info(&self) -> ServerInfo {
        self.shared.info.clone()
    }

    /// The value of type `T` this client and its clones keep for crates built
    /// on chnative (made with `T::default()` on first use; one per type).
    /// chnative-arrow keeps there what an INSERT learned about its table (the
    /// column types, conversion buffers) for the next INSERT into it.
    pub fn extension<T: std::any::Any + Send + Sync + Default>(&self) -> Arc<T> {
        let mut all = self.shared.extensions.lock().unwrap_or_else(|e| e.into_inner());
        for e in all.iter() {
            if let Ok(t) = e.clone().downcast::<T>() {
                return t;
            }
        }
        let t = Arc::new(T::default());
        all.push(t.clone());
        t
    }

    /// How many connections are open, idle and in use.
    pub fn pool_status(&self) -> PoolStatus {
        self.shared.status()
    }

    /// False when the connection that last came back to the pool had been
    /// closed after an error (the pool opens a new one for the next call).
    pub fn is_usable(&self) -> bool {
        !self.shared.last_closed.load(Ordering::SeqCst)
    }
}
