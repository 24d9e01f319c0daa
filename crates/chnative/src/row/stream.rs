//! Reading typed rows: a [`QueryStream`] plus the bound fields and the current
//! block's resolved readers.

use std::mem::ManuallyDrop;

use chnative_proto::view::ColumnView;
use chnative_proto::Block;

use super::{OwnedRow, ReadContext, Row};
use crate::error::{Error, Result};
use crate::stream::QueryStream;

/// A SELECT read as typed rows: `next().await` yields one `T` at a time.
///
/// For rows that borrow (`&str` fields), each row borrows the stream and must be
/// dropped before the next call, like blocks. Dropping the stream before the end
/// cancels the query.
pub struct RowStream<'c, T: Row> {
    // Declared before `inner` so it is dropped first: it points into the block
    // that `inner` owns.
    readers: Option<T::Readers<'static>>,
    inner: QueryStream<'c>,
    ctx: ReadContext,
    binding: Option<Vec<Option<usize>>>,
    row: usize,
    rows: usize,
    done: bool,
}

/// Forgets the lifetime of a block's readers so they can be kept next to the
/// stream that owns the block.
///
/// # Safety
/// The caller must not use the result after the block the readers borrow from is
/// changed or dropped, and may only lend it out at a lifetime that ends first.
unsafe fn erase<'r, T: Row>(readers: T::Readers<'r>) -> T::Readers<'static> {
    let readers = ManuallyDrop::new(readers);
    // SAFETY: the two types differ only in a lifetime, so they have the same layout;
    // `ManuallyDrop` keeps the original from being dropped twice. Validity of the
    // borrowed data is the caller's obligation (see above).
    unsafe { std::ptr::read((&*readers as *const T::Readers<'r>).cast::<T::Readers<'static>>()) }
}

impl<'c, T: Row> RowStream<'c, T> {
    pub(crate) fn new(inner: QueryStream<'c>, ctx: ReadContext) -> Self {
        RowStream { readers: None, inner, ctx, binding: None, row: 0, rows: 0, done: false }
    }

    /// The next row, or `None` at the end of the result.
    ///
    /// The first call binds the fields to the result's columns and checks their
    /// types; a mismatch is an error before any row is produced.
    pub async fn next(&mut self) -> Result<Option<T::Value<'_>>> {
        loop {
            if self.row < self.rows {
                let i = self.row;
                self.row += 1;
                let Some(readers) = self.readers.as_ref() else {
                    return Err(Error::internal("rows without readers"));
                };
                let readers = (readers as *const T::Readers<'static>).cast::<T::Readers<'_>>();
                // SAFETY: the readers point into `self.inner`'s current block, which
                // lives in heap buffers that stay put and unchanged until
                // `self.inner.next()` runs or the stream is dropped. Both need
                // `&mut self`, so they cannot happen while the returned row (which
                // borrows `self`) is alive; `self.readers` is cleared before either.
                return T::read(unsafe { &*readers }, i).map(Some).map_err(Error::from);
            }
            self.readers = None;
            self.rows = 0;
            self.row = 0;
            if !self.load_block().await? {
                return Ok(None);
            }
        }
    }

    /// Takes the next block and resolves its readers; `false` at the end of the result.
    /// The caller has dropped the previous block's readers.
    async fn load_block(&mut self) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let block = match self.inner.next().await? {
            Some(b) => b,
            None => {
                self.done = true;
                if self.binding.is_none() {
                    // No rows: still check the types against the header.
                    if let Some(h) = self.inner.header() {
                        T::bind(h.columns())?;
                    }
                }
                return Ok(false);
            }
        };
        let binding = match self.binding.take() {
            Some(b) if same_columns(&b, block, T::FIELDS) => b,
            _ => T::bind(block.columns())?,
        };
        let cols: Vec<Option<ColumnView<'_>>> =
            binding.iter().map(|idx| idx.map(|k| block.columns()[k].view())).collect();
        let readers = T::readers(&cols, &self.ctx)?;
        self.binding = Some(binding);
        self.rows = block.rows();
        // SAFETY: see `next`'s use of `self.readers`; they are dropped before the
        // block changes (the callers clear them first) and before `inner` (field order).
        self.readers = Some(unsafe { erase::<T>(readers) });
        Ok(true)
    }

    /// The rows of the next block as a plain iterator, or `None` at the end of the
    /// result; rows that [`next`](RowStream::next) left in the current block come first.
    ///
    /// The same rows as `next`, a block at a time: the loop over a block's rows is
    /// ordinary synchronous code the compiler can see through (a row is often built
    /// straight where it is used), where every `next().await` hands a whole row back
    /// through the stream's future. Rows the iterator does not yield before it is
    /// dropped are still there for the next call.
    ///
    /// ```no_run
    /// # async fn run(client: chnative::Client) -> chnative::Result<()> {
    /// #[derive(chnative::Row)]
    /// struct Hit<'a> {
    ///     url: &'a str,
    ///     hits: u64,
    /// }
    /// let mut rows = client.fetch::<Hit<'_>>("SELECT url, hits FROM pages").await?;
    /// let mut total = 0;
    /// while let Some(block) = rows.next_block().await? {
    ///     for hit in block {
    ///         let hit = hit?;
    ///         total += hit.hits + hit.url.len() as u64;
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn next_block(&mut self) -> Result<Option<BlockRows<'_, T>>> {
        while self.row >= self.rows {
            self.readers = None;
            self.rows = 0;
            self.row = 0;
            if !self.load_block().await? {
                return Ok(None);
            }
        }
        let Some(readers) = self.readers.as_ref() else {
            return Err(Error::internal("rows without readers"));
        };
        let readers = (readers as *const T::Readers<'static>).cast::<T::Readers<'_>>();
        // SAFETY: as in `next`: the readers point into the current block, which stays
        // put until `self.inner.next()` runs or the stream is dropped; both need
        // `&mut self`, which the returned iterator borrows.
        let readers = unsafe { &*readers };
        Ok(Some(BlockRows { readers, row: self.row, rows: self.rows, taken: &mut self.row }))
    }

    /// The underlying block stream (progress, totals, profile info, cancel handle).
    pub fn blocks(&self) -> &QueryStream<'c> {
        &self.inner
    }

    /// Stops the query: sends Cancel and drains the server's answer.
    pub async fn cancel(mut self) -> Result<()> {
        self.readers = None;
        let RowStream { inner, .. } = self;
        inner.cancel().await
    }
}

/// The typed rows of one block, from [`RowStream::next_block`].
pub struct BlockRows<'s, T: Row> {
    readers: &'s T::Readers<'s>,
    row: usize,
    rows: usize,
    /// The stream's position in the block, written back on drop so rows not taken
    /// stay for later. (Not written per row: a store through it each row may alias
    /// the caller's loop variables, which then cannot stay in registers.)
    taken: &'s mut usize,
}

impl<'s, T: Row> Iterator for BlockRows<'s, T> {
    type Item = Result<T::Value<'s>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let i = self.row;
        if i >= self.rows {
            return None;
        }
        self.row = i + 1;
        Some(T::read(self.readers, i).map_err(Error::from))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.rows - self.row;
        (left, Some(left))
    }
}

impl<T: Row> Drop for BlockRows<'_, T> {
    fn drop(&mut self) {
        *self.taken = self.row;
    }
}

impl<T: Row> ExactSizeIterator for BlockRows<'_, T> {}

fn same_columns(binding: &[Option<usize>], block: &Block, fields: &[super::Field]) -> bool {
    if binding.len() != fields.len() {
        // Bound by position (single values, tuples: no named fields).
        return block.columns().len() == binding.len();
    }
    binding.iter().zip(fields).all(|(idx, f)| match idx {
        Some(k) => block.columns().get(*k).is_some_and(|c| c.name() == f.column),
        None => block.column(f.column).is_none(),
    })
}

impl<'c, T: OwnedRow> RowStream<'c, T> {
    /// Reads the remaining rows into a `Vec`.
    pub async fn collect(mut self) -> Result<Vec<T>> {
        let mut out = Vec::new();
        while let Some(r) = self.next().await? {
            out.push(r);
        }
        Ok(out)
    }
}
