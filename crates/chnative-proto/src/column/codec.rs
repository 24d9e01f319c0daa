//! The operations every column family implements, so that a family is one file.
//!
//! Each family (fixed-width, String, Nullable, Array, Tuple, LowCardinality,
//! Variant, Dynamic, JSON, self-delimiting rows) is a struct that owns its
//! buffers and implements [`ColumnCodec`] in its own module, decoding and
//! encoding side by side. [`ColumnData`](super::ColumnData) is an enum with one
//! newtype variant per family, and its methods forward to the family through a
//! single `dispatch!` in `column.rs`: the dispatch is one static `match` per
//! column (never per value), and a family's hot loop (a fixed-width read is one
//! copy into the aligned buffer) stays inside the family.
//!
//! Resuming: decoders read from a [`Reader`] over whatever input has arrived.
//! When it runs out they return [`ProtoError::Incomplete`](crate::ProtoError::Incomplete)
//! with the input length they need, and the caller decodes the column again from
//! its start once that much has arrived ([`Block::read`](crate::Block::read)
//! resumes at the column that was cut short; buffers are overwritten on every
//! read, so a failed attempt leaves nothing behind that matters). Measuring
//! steps over the same bytes without decoding or allocating, keeping the progress
//! of VarUInt-prefixed string runs in a [`ScanMemo`], so a column arriving in
//! many pieces is scanned once and decoded once.

use crate::buffer::BufferPool;
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::{Budget, Reader};

use super::check::Reason;
use super::{BodyForm, Layout, ScanMemo};

/// One column family's storage and codec. Crate-internal: the public surface is
/// [`ColumnData`](super::ColumnData).
pub(crate) trait ColumnCodec: Sized {
    /// Empty storage of the same shape, with buffers from `pool`.
    fn empty_like(&self, pool: &mut BufferPool) -> Self;

    /// Gives every buffer back to `pool`.
    fn recycle(self, pool: &mut BufferPool);

    /// Rows held.
    fn rows(&self) -> usize;

    /// Drops every row, keeping the buffers and the per-block structure.
    fn clear(&mut self);

    /// A short description of the shape, for "… cannot hold T" errors.
    fn shape_name(&self) -> String;

    /// The columns that carry their own serialization info in the block header,
    /// in order: a Tuple's elements, JSON's typed paths; none for the others.
    fn info_elements(&self) -> &[super::ColumnData] {
        &[]
    }

    /// Reads the state prefix (written once before any data). Most families have none.
    fn read_prefix(&mut self, _r: &mut Reader<'_>) -> Result<()> {
        Ok(())
    }

    /// Steps over the state prefix; `false` when the family is not measured.
    fn measure_prefix(&self, _r: &mut Reader<'_>) -> Result<bool> {
        Ok(true)
    }

    /// Writes the state prefix.
    fn write_prefix(&self, _out: &mut Vec<u8>) {}

    /// Reads `rows` rows of plain (dense) data, laid out as `form` says, replacing
    /// what was held. Short input is `Incomplete` (see the module docs).
    fn read_body(&mut self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, pool: &mut BufferPool) -> Result<()>;

    /// Steps over `rows` rows of plain data without decoding; `false` when the
    /// family (or one inside it) is not measured and must be decoded directly.
    fn measure_body(&self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, memo: &mut ScanMemo) -> Result<bool>;

    /// Writes the data of every row.
    fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()>;

    /// Appends the rows of `src` that `idx` picks; `u64::MAX` picks the type's
    /// default (zero, empty, NULL). What it allocates is charged to `budget` first.
    fn append_from(&mut self, src: &Self, idx: &[u64], pool: &mut BufferPool, budget: &mut Budget) -> Result<()>;

    /// Checks that this data is a valid column of `ty` (already reduced to its
    /// wire shape). `nulls` is the null map over it, when it is a Nullable's
    /// values. Data of another family is `wrong`.
    fn check_fits(&self, ty: &DataType, nulls: Option<&[u8]>) -> Result<(), Reason>;

    /// Appends one value in RowBinary (`serializeBinary`) form: how Dynamic's shared
    /// variant and JSON's shared data hold values. `ty` is this column's type,
    /// reduced to its wire shape; a family that has no RowBinary decoding, or
    /// a type it does not hold, says so.
    fn push_row_binary(&mut self, ty: &DataType, _r: &mut Reader<'_>) -> Result<()> {
        Err(no_row_binary(ty))
    }

    /// Appends the type's default value (0, empty, NULL); `ty` as for
    /// [`ColumnCodec::push_row_binary`].
    fn push_default(&mut self, ty: &DataType) -> Result<()> {
        Err(no_default(ty))
    }
}

/// The error for a RowBinary value of a type the column does not decode.
pub(super) fn no_row_binary(ty: &DataType) -> ProtoError {
    ProtoError::ty(ty.to_string(), "no RowBinary decoding for this type")
}

/// The error for a default value the column cannot append.
pub(super) fn no_default(ty: &DataType) -> ProtoError {
    ProtoError::ty(ty.to_string(), "no default value for this column shape")
}

/// The prefix methods of a family that wraps one column (Array, Nullable): its
/// state prefix is the wrapped column's, as the wrapper writes none of its own.
macro_rules! prefix_of {
    ($inner:ident) => {
        fn read_prefix(&mut self, r: &mut $crate::wire::Reader<'_>) -> $crate::error::Result<()> {
            self.$inner.read_prefix(r)
        }

        fn measure_prefix(&self, r: &mut $crate::wire::Reader<'_>) -> $crate::error::Result<bool> {
            self.$inner.measure_prefix(r)
        }

        fn write_prefix(&self, out: &mut Vec<u8>) {
            self.$inner.write_prefix(out)
        }
    };
}
pub(super) use prefix_of;

/// The measuring methods of a family that is never measured (Variant, Dynamic,
/// JSON): where their bytes end depends on discriminators and types that only
/// decoding follows, so such a column is decoded directly.
macro_rules! not_measured {
    () => {
        /// Not measured: decoded directly.
        fn measure_prefix(&self, _: &mut $crate::wire::Reader<'_>) -> $crate::error::Result<bool> {
            Ok(false)
        }

        fn measure_body(
            &self,
            _: &mut $crate::wire::Reader<'_>,
            _: usize,
            _: $crate::column::BodyForm<'_>,
            _: &mut $crate::column::ScanMemo,
        ) -> $crate::error::Result<bool> {
            Ok(false)
        }
    };
}
pub(super) use not_measured;
