//! A session: one pooled connection pinned for a sequence of calls.

use crate::driver::ServerInfo;
use crate::error::Result;
use crate::pool::{Client, Lease};

/// One pooled connection held for a sequence of calls that share server-side
/// state: `SET`, `USE`, temporary tables and roles set by one call are seen by
/// the next.
///
/// In the native protocol a session *is* its socket: the server keeps that
/// state per TCP connection and has no session id to resume it on another
/// one. So a session holds its connection for its whole life, and when it is
/// dropped the connection is **closed** rather than returned to the pool,
/// because its changed settings, current database and temporary tables would
/// otherwise leak into unrelated calls. The pool slot is free again at once.
///
/// ```no_run
/// # async fn demo(client: chnative::Client) -> chnative::Result<()> {
/// let mut s = client.session().await?;
/// s.execute("CREATE TEMPORARY TABLE ids (id UInt64)").await?;
/// s.execute("INSERT INTO ids SELECT number FROM numbers(10)").await?;
/// s.execute("SET max_threads = 1").await?;
/// let n: u64 = s.fetch_scalar("SELECT count() FROM ids").await?;
/// assert_eq!(n, 10);
/// # Ok(()) }
/// ```
pub struct Session {
    lease: Lease,
    info: ServerInfo,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("server", &self.info.display_name).field("usable", &self.is_usable()).finish()
    }
}

impl Session {
    pub(crate) fn new(mut lease: Lease, info: ServerInfo) -> Session {
        lease.discard = true;
        Session { lease, info }
    }

    crate::executor::single_socket_api!(lease.slot);
}

impl Client {
    /// Pins one pooled connection for calls that share server-side state
    /// (see [`Session`]).
    pub async fn session(&self) -> Result<Session> {
        let lease = self.shared().acquire().await?;
        Ok(Session::new(lease, self.shared().info().clone()))
    }
}

impl crate::executor::sealed::Sealed for Session {
    fn via(&mut self) -> crate::via::Via<'_> {
        Session::via(self)
    }
}
impl crate::executor::Executor for Session {}
