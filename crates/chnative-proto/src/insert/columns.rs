//! The columns of one INSERT checked as a whole: their shapes once
//! ([`InsertColumns`]), then their fit to the table's header
//! ([`TypedInsert`]), which encodes rows `lo..hi` as a Native block.

use std::borrow::Cow;

use super::InsertData;
use crate::block::{write_block_head, write_column_head, BlockInfo};
use crate::column::Layout;
use crate::error::{ProtoError, Result};
use crate::splice::Splices;
use crate::{Block, DataType};

/// The columns of an INSERT, their shapes checked once: every column valid on
/// its own ([`InsertData::validate`]) and all of the same length. `N` is the
/// column name: `String`, or `&str` for callers that keep their names elsewhere.
#[derive(Debug)]
pub struct InsertColumns<'s, 'a, N = String> {
    columns: &'s [(N, InsertData<'a>)],
    rows: usize,
}

impl<N> Clone for InsertColumns<'_, '_, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<N> Copy for InsertColumns<'_, '_, N> {}

impl<'s, 'a, N: AsRef<str>> InsertColumns<'s, 'a, N> {
    /// Checks the shapes of `columns` (name, data).
    pub fn new(columns: &'s [(N, InsertData<'a>)]) -> Result<Self> {
        let rows = columns.first().map_or(0, |(_, d)| d.rows());
        for (name, data) in columns {
            let name = name.as_ref();
            if data.rows() != rows {
                let reason = format!("{} rows, but column `{}` has {rows}", data.rows(), columns[0].0.as_ref());
                return Err(ProtoError::invalid_column(name, data.describe(), reason));
            }
            data.validate(name)?;
        }
        Ok(InsertColumns { columns, rows })
    }

    /// Rows in every column.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Checks every column against the server's INSERT header block (see
    /// [`InsertData::check_type`]) and fixes the type names to send.
    pub fn with_header(self, header: &Block) -> Result<TypedInsert<'s, 'a, N>> {
        self.with_header_in(header, Vec::new())
    }

    /// [`InsertColumns::with_header`] with the type names written into `types`
    /// (cleared first), e.g. the vector of the previous block's
    /// [`TypedInsert::into_wire_types`]: an INSERT of many blocks then
    /// allocates nothing for them after its first block.
    pub fn with_header_in(self, header: &Block, mut types: Vec<Cow<'static, str>>) -> Result<TypedInsert<'s, 'a, N>> {
        types.clear();
        types.reserve(self.columns.len());
        let heads = header.columns();
        for (i, (name, data)) in self.columns.iter().enumerate() {
            let name = name.as_ref();
            // The columns usually come in the header's order: look there first.
            let h = match heads.get(i) {
                Some(h) if h.name() == name => Some(h),
                _ => header.column(name),
            };
            let Some(h) = h else {
                let present: Vec<String> = heads.iter().map(|c| format!("`{}`", c.name())).collect();
                let reason = format!("the table has no such column (it has {})", present.join(", "));
                return Err(ProtoError::invalid_column(name, data.describe(), reason));
            };
            types.push(data.check_type(name, h.data_type(), h.type_name())?);
        }
        Ok(TypedInsert { columns: self, types })
    }
}

/// INSERT columns checked in shape and against the table: what the encoder takes.
#[derive(Debug, Clone)]
pub struct TypedInsert<'s, 'a, N = String> {
    columns: InsertColumns<'s, 'a, N>,
    types: Vec<Cow<'static, str>>,
}

impl<'a, N: AsRef<str>> TypedInsert<'_, 'a, N> {
    /// Rows in every column.
    pub fn rows(&self) -> usize {
        self.columns.rows
    }

    /// Rows per block so that a block holds about `target_bytes` (at least one row,
    /// at most `max_rows`): the connection keeps its encode buffers at the size of the
    /// largest block it sent, so a block bound keeps that memory bounded too.
    pub fn block_rows(&self, target_bytes: usize, max_rows: usize) -> usize {
        let rows = self.rows().max(1);
        let total: usize = self.columns.columns.iter().map(|(_, d)| d.wire_bytes()).sum();
        let per_row = total.div_ceil(rows).max(1);
        (target_bytes / per_row).clamp(1, max_rows.max(1))
    }

    /// Whether the rows may be sent in several blocks; a [`Column`](crate::Column) is sent whole.
    pub fn splittable(&self) -> bool {
        self.columns.columns.iter().all(|(_, d)| d.splittable())
    }

    /// Whether the INSERT has a column called `name`.
    pub fn has_column(&self, name: &str) -> bool {
        self.columns.columns.iter().any(|(n, _)| n.as_ref() == name)
    }

    /// The type name each column is sent as.
    pub fn wire_types(&self) -> &[Cow<'static, str>] {
        &self.types
    }

    /// The type names' vector, to reuse for the next block
    /// ([`InsertColumns::with_header_in`]).
    pub fn into_wire_types(self) -> Vec<Cow<'static, str>> {
        self.types
    }

    /// Encodes rows `lo..hi` as one Native block (BlockInfo, headers and data)
    /// for `revision`, with the same block and column head writers as
    /// [`Block::write`].
    pub fn write_block(&self, out: &mut Vec<u8>, revision: u64, lo: usize, hi: usize) -> Result<()> {
        self.encode_block(out, None, revision, lo, hi)
    }

    /// [`TypedInsert::write_block`], with the runs of the caller's data that
    /// are already in wire layout left where they are: recorded in `splices`
    /// at their place in `out` instead of copied (see [`Splices`]). `out`
    /// with the runs put in gives the bytes [`TypedInsert::write_block`] writes.
    pub fn write_block_spliced(
        &self,
        out: &mut Vec<u8>,
        splices: &mut Splices<'a>,
        revision: u64,
        lo: usize,
        hi: usize,
    ) -> Result<()> {
        self.encode_block(out, Some(splices), revision, lo, hi)
    }

    fn encode_block(
        &self,
        out: &mut Vec<u8>,
        mut sp: Option<&mut Splices<'a>>,
        revision: u64,
        lo: usize,
        hi: usize,
    ) -> Result<()> {
        let rows = self.rows();
        if lo > hi || hi > rows {
            return Err(ProtoError::violation(format!("rows {lo}..{hi} of an INSERT of {rows}")));
        }
        if !self.splittable() && (lo, hi) != (0, rows) {
            return Err(ProtoError::violation(format!("rows {lo}..{hi}: a column read from a block is sent whole")));
        }
        write_block_head(out, revision, &BlockInfo::default(), self.types.len(), hi - lo);
        let layout = Layout::for_revision(revision);
        for ((name, data), ty) in self.columns.columns.iter().zip(&self.types) {
            write_column_head(out, revision, name.as_ref(), ty);
            // No rows, no bytes: the Native format writes neither the prefixes nor the data of
            // an empty block's columns, and the server reads none (a LowCardinality or Variant
            // prefix sent here would be read as the next column's name).
            if lo == hi {
                continue;
            }
            // A LowCardinality type inside a composite one (chosen by check_type for plain
            // data) is encoded by walking the wire type; a column from a block encodes itself.
            if ty.contains("LowCardinality(") && !matches!(data, InsertData::Column(_)) {
                let wire = DataType::parse(ty)?;
                data.encode_prefix_as(&wire, out);
                data.encode_as(&wire, lo, hi, out, layout)?;
            } else {
                data.encode_prefix(out);
                data.encode(lo, hi, out, layout, sp.as_deref_mut())?;
            }
        }
        Ok(())
    }
}
