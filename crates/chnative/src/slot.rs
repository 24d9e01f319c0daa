//! Where a single-socket client keeps its connection between calls.

use crate::driver::Driver;
use crate::error::{Error, Result};

/// Where a client keeps its connection. While a stream runs, the stream owns the
/// connection; an abandoned stream (dropped early, or ended by the query
/// deadline) hands it to a background task that finishes the query, and the
/// next call waits for that task to give it back (a wait its own query
/// deadline bounds; the task itself is bounded by the Cancel bound, past which
/// it closes the connection).
#[derive(Default)]
pub(crate) struct Slot {
    conn: Option<Box<Driver>>,
    draining: Option<tokio::sync::oneshot::Receiver<Box<Driver>>>,
    /// The config's query timeout (known while the connection is away).
    query_timeout: Option<std::time::Duration>,
    /// Typed INSERTs' column buffers, kept for the next ones on this connection.
    pub(crate) kept_buffers: crate::row::kept::KeptBuffers,
}

impl Slot {
    pub(crate) fn new(conn: Driver) -> Self {
        Self::from_box(Box::new(conn))
    }

    pub(crate) fn from_box(conn: Box<Driver>) -> Self {
        let query_timeout = conn.cfg.query_timeout;
        Slot { conn: Some(conn), draining: None, query_timeout, kept_buffers: Default::default() }
    }

    /// The config's query timeout, for the deadline of a query on this slot.
    pub(crate) fn query_timeout(&self) -> Option<std::time::Duration> {
        self.query_timeout
    }

    /// Gives the connection back to the slot.
    pub(crate) fn put(&mut self, conn: Box<Driver>) {
        self.conn = Some(conn);
    }

    /// Finishes an abandoned query off the caller's path, when a runtime is at hand.
    pub(crate) fn drain_in_background(&mut self, mut conn: Box<Driver>) {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                handle.spawn(async move {
                    // Errors close the connection; the next call reports them.
                    let _ = conn.prepare().await;
                    let _ = tx.send(conn);
                });
                self.draining = Some(rx);
            }
            // No runtime (dropped outside one): the next call drains first.
            Err(_) => self.conn = Some(conn),
        }
    }

    async fn settle(&mut self) -> Result<()> {
        // The receiver stays in the slot while it is awaited: a caller dropped
        // here must not lose the connection the drain will hand back.
        if let Some(rx) = self.draining.as_mut() {
            let res = rx.await;
            self.draining = None;
            match res {
                Ok(conn) => self.conn = Some(conn),
                Err(_) => return Err(Error::closed("the connection was lost while finishing a cancelled query")),
            }
        }
        Ok(())
    }

    /// The connection, once any background drain has finished.
    pub(crate) async fn get(&mut self) -> Result<&mut Driver> {
        self.settle().await?;
        self.conn.as_deref_mut().ok_or_else(|| Error::closed("the connection is gone"))
    }

    /// Takes the connection out (for a stream to own).
    pub(crate) async fn take(&mut self) -> Result<Box<Driver>> {
        self.settle().await?;
        self.conn.take().ok_or_else(|| Error::closed("the connection is gone"))
    }

    /// The connection if it is here right now.
    pub(crate) fn peek(&self) -> Option<&Driver> {
        self.conn.as_deref()
    }

    /// The connection if it is here right now, to change.
    pub(crate) fn peek_mut(&mut self) -> Option<&mut Driver> {
        self.conn.as_deref_mut()
    }

    /// Empties the slot: the connection, or the drain that will return it.
    #[allow(clippy::type_complexity)]
    pub(crate) fn take_parts(&mut self) -> (Option<Box<Driver>>, Option<tokio::sync::oneshot::Receiver<Box<Driver>>>) {
        (self.conn.take(), self.draining.take())
    }
}
