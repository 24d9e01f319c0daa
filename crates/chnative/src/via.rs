//! Where a call's connection comes from ([`Via`]: the slot of a single-socket
//! client, or a pool) and where it goes back to ([`Home`]: that slot, or the
//! lease of one pooled connection).

use std::marker::PhantomData;
use std::sync::Arc;

use crate::driver::{Driver, ServerInfo};
use crate::error::Result;
use crate::pool::{Lease, Shared};
use crate::slot::Slot;

/// Where a call gets its connection: the one socket of a [`Connection`](crate::Connection) or
/// [`Session`](crate::Session) (borrowed for `'c`), or a pooled [`Client`](crate::Client)'s pool (held by
/// value, so what it makes is `'static`). Every call of the query surface is
/// written once, on `Via` (in `executor.rs`).
pub struct Via<'c>(pub(crate) Src<'c>);

pub(crate) enum Src<'c> {
    Slot(&'c mut Slot, &'c ServerInfo),
    Pool(Arc<Shared>),
}

impl<'c> Via<'c> {
    pub(crate) fn slot(slot: &'c mut Slot, info: &'c ServerInfo) -> Self {
        Via(Src::Slot(slot, info))
    }

    pub(crate) fn pool(shared: &Arc<Shared>) -> Via<'static> {
        Via(Src::Pool(shared.clone()))
    }

    /// A second call on the same source (a slot borrowed again, the pool shared).
    pub(crate) fn reborrow(&mut self) -> Via<'_> {
        match &mut self.0 {
            Src::Slot(s, i) => Via(Src::Slot(s, i)),
            Src::Pool(p) => Via(Src::Pool(p.clone())),
        }
    }

    /// Where typed INSERTs keep their column buffers for the next ones.
    pub(crate) fn kept_buffers(&self) -> &crate::row::kept::KeptBuffers {
        match &self.0 {
            Src::Slot(s, _) => &s.kept_buffers,
            Src::Pool(p) => &p.kept_buffers,
        }
    }

    pub(crate) fn info(&self) -> &ServerInfo {
        match &self.0 {
            Src::Slot(_, i) => i,
            Src::Pool(p) => p.info(),
        }
    }

    /// Where the connection goes back to: the borrowed slot, or a lease of a
    /// pooled connection (taken now, and held until the `Home` is dropped).
    pub(crate) async fn home(self) -> Result<Home<'c>> {
        Ok(match self.0 {
            Src::Slot(s, _) => Home::Slot(s),
            Src::Pool(p) => Home::Lease(p.acquire().await?, PhantomData),
        })
    }
}

/// Where a stream returns its connection: the single-socket slot it borrows,
/// or the pool lease it owns.
pub(crate) enum Home<'c> {
    Slot(&'c mut Slot),
    Lease(Lease, PhantomData<&'c ()>),
}

impl Home<'_> {
    pub(crate) fn slot(&mut self) -> &mut Slot {
        match self {
            Home::Slot(s) => s,
            Home::Lease(l, _) => &mut l.slot,
        }
    }

    pub(crate) fn put(&mut self, conn: Box<Driver>) {
        self.slot().put(conn)
    }

    pub(crate) fn drain_in_background(&mut self, conn: Box<Driver>) {
        self.slot().drain_in_background(conn)
    }
}
