//! Blocks: BlockInfo, the column headers, and typed views of column data.

use crate::buffer::{AlignedBuf, BufferPool};
use crate::column::{ColumnData, Layout, ScanMemo, SerInfo};
use crate::error::{ProtoError, Result};
use crate::revision;
use crate::types::DataType;
use crate::view::ColumnView;
use crate::wire::{Budget, Reader, WriteExt};

/// Limits on what a block may announce and on the memory it may take.
#[derive(Debug, Clone, Copy)]
pub struct BlockLimits {
    /// Columns per block.
    pub max_columns: u64,
    /// Rows per block.
    pub max_rows: u64,
    /// Bytes the decoded block may take: every buffer a decoder fills (names
    /// included) is charged before it is allocated. Sparse, replicated and
    /// COMPACT Variant columns expand on decode, so this, not the wire size, is
    /// what bounds a hostile block's memory.
    pub max_bytes: u64,
}

/// [`BlockLimits::max_bytes`] by default: the client's default `max_block_bytes`.
pub const DEFAULT_MAX_BLOCK_BYTES: u64 = 256 << 20;

impl Default for BlockLimits {
    fn default() -> Self {
        // 64M rows is far above any server's max_block_size default (65409);
        // memory is bounded by max_bytes.
        BlockLimits { max_columns: 1 << 20, max_rows: 1 << 26, max_bytes: DEFAULT_MAX_BLOCK_BYTES }
    }
}

/// Block metadata sent before the columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockInfo {
    /// Set for the overflow row of `GROUP BY … WITH TOTALS` under `max_rows_to_group_by`.
    pub is_overflows: bool,
    /// Two-level aggregation bucket, -1 for none.
    pub bucket_num: i32,
    /// Field 3 (revision ≥ 54480): out-of-order buckets of distributed aggregation.
    pub out_of_order_buckets: Vec<i32>,
}

impl Default for BlockInfo {
    fn default() -> Self {
        BlockInfo { is_overflows: false, bucket_num: -1, out_of_order_buckets: Vec::new() }
    }
}

impl BlockInfo {
    /// Reads fields until the terminating field number 0.
    pub fn read(&mut self, r: &mut Reader<'_>) -> Result<()> {
        self.is_overflows = false;
        self.bucket_num = -1;
        self.out_of_order_buckets.clear();
        loop {
            match r.varuint()? {
                0 => return Ok(()),
                1 => self.is_overflows = r.bool()?,
                2 => self.bucket_num = r.i32_le()?,
                3 => {
                    let n = r.varuint_bounded("out-of-order buckets", 256)?;
                    for _ in 0..n {
                        let b = r.i32_le()?;
                        self.out_of_order_buckets.push(b);
                    }
                }
                f => return Err(ProtoError::violation(format!("unknown BlockInfo field {f}"))),
            }
        }
    }

    /// Writes the fields the revision has.
    pub fn write(&self, out: &mut Vec<u8>, revision: u64) {
        out.put_varuint(1);
        out.put_u8(self.is_overflows as u8);
        out.put_varuint(2);
        out.put_i32_le(self.bucket_num);
        if revision >= revision::OUT_OF_ORDER_BUCKETS_IN_AGGREGATION {
            out.put_varuint(3);
            out.put_varuint(self.out_of_order_buckets.len() as u64);
            for b in &self.out_of_order_buckets {
                out.put_i32_le(*b);
            }
        }
        out.put_varuint(0);
    }
}

/// One column of a block: its name, its type, and its data. Cloning shares the
/// data's buffers (no copy); see [`Block`].
#[derive(Debug, Clone)]
pub struct Column {
    /// The name, or when its bytes are not UTF-8 their lossy text (each
    /// invalid sequence a U+FFFD).
    name: String,
    type_name: String,
    ty: DataType,
    /// What few columns have, behind one pointer (a column stays small).
    rare: Option<Box<Rare>>,
    data: ColumnData,
}

/// The parts of a [`Column`] that most columns do without.
#[derive(Debug, Clone, Default)]
struct Rare {
    /// The type as views walk it, when that differs from `ty` (Map, Nested, geo
    /// aliases, …): resolved once per type so views never build types.
    shape: Option<DataType>,
    /// The name's bytes as the server sent them, kept only when they are not
    /// UTF-8 (column names are bytes on the wire: `SELECT 1 AS "\xAA"`).
    raw_name: Option<Box<[u8]>>,
}

impl Column {
    /// A column from parts (for building insert blocks).
    ///
    /// The data is checked against the type: its shape and widths, every length,
    /// offsets, LowCardinality keys, and Enum and Bool values. Data that does not
    /// fit is a [`ProtoError::InvalidColumn`] naming the column, the type and the
    /// problem, so it is refused here rather than by the server.
    pub fn new(name: impl Into<String>, type_name: impl Into<String>, data: ColumnData) -> Result<Column> {
        let (name, type_name) = (name.into(), type_name.into());
        let ty = DataType::parse(&type_name)?;
        if let Err(reason) = data.check_fits(&ty) {
            return Err(ProtoError::InvalidColumn { column: name, ty: type_name, reason });
        }
        let mut c = Column { name, type_name, rare: None, ty, data };
        c.set_shape();
        Ok(c)
    }

    /// Column name. Names are bytes on the wire: a name that is not UTF-8 is
    /// given here as its lossy text (each invalid sequence a U+FFFD), and
    /// exactly by [`Column::name_bytes`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The column name's bytes exactly as the server sent them (the UTF-8 of
    /// [`Column::name`] unless the name is not UTF-8).
    pub fn name_bytes(&self) -> &[u8] {
        self.rare.as_ref().and_then(|r| r.raw_name.as_deref()).unwrap_or(self.name.as_bytes())
    }

    /// Takes `bytes` as the name (see [`Column::name_bytes`]).
    fn set_name(&mut self, bytes: &[u8]) {
        self.name.clear();
        let raw = match std::str::from_utf8(bytes) {
            Ok(s) => {
                self.name.push_str(s);
                None
            }
            Err(_) => {
                self.name.push_str(&String::from_utf8_lossy(bytes));
                Some(bytes.into())
            }
        };
        if raw.is_some() || self.rare.as_ref().is_some_and(|r| r.raw_name.is_some()) {
            self.rare.get_or_insert_with(Default::default).raw_name = raw;
            self.tidy();
        }
    }

    /// Resolves `ty`'s view shape (kept only when it differs from `ty`).
    fn set_shape(&mut self) {
        let shape = match self.ty.view_shape() {
            std::borrow::Cow::Owned(shape) => Some(shape),
            std::borrow::Cow::Borrowed(_) => None,
        };
        if shape.is_some() || self.rare.as_ref().is_some_and(|r| r.shape.is_some()) {
            self.rare.get_or_insert_with(Default::default).shape = shape;
            self.tidy();
        }
    }

    /// Drops an empty `rare`.
    fn tidy(&mut self) {
        if self.rare.as_ref().is_some_and(|r| r.shape.is_none() && r.raw_name.is_none()) {
            self.rare = None;
        }
    }

    /// Type name exactly as the server spelled it.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// Parsed type.
    pub fn data_type(&self) -> &DataType {
        &self.ty
    }

    /// Raw storage.
    pub fn data(&self) -> &ColumnData {
        &self.data
    }

    /// Rows held.
    pub fn rows(&self) -> usize {
        self.data.rows()
    }

    /// A typed view; see [`ColumnView`].
    pub fn view(&self) -> ColumnView<'_> {
        let shape = self.rare.as_ref().and_then(|r| r.shape.as_ref()).unwrap_or(&self.ty);
        ColumnView::with_shape(&self.name, &self.ty, shape, &self.type_name, &self.data)
    }
}

/// A decoded block. Decoding into an existing block reuses its allocations.
///
/// `clone()` (or `to_owned()`) gives an owned block that shares the
/// column buffers instead of copying them: it can be kept after the stream moves on,
/// sent to another task, or stored. The stream's next decode then writes into fresh
/// buffers for the columns the kept block still shares, and keeps reusing the rest.
#[derive(Debug, Default)]
pub struct Block {
    /// Block metadata.
    pub info: BlockInfo,
    rows: usize,
    columns: Vec<Column>,
    /// Columns a narrower block left over (last column first), kept with their
    /// buffers for the next wider block instead of going back to the pool.
    spare: Vec<Column>,
    partial: Option<Partial>,
    /// Progress of the measure of the column that was cut short.
    scan: ScanMemo,
}

/// Where a decode that ran out of input stopped.
#[derive(Debug, Clone, Copy)]
struct Partial {
    /// The column that was cut short.
    column: usize,
    /// Input offset of that column's header.
    offset: usize,
    columns: usize,
    rows: usize,
    /// The memory budget as it was before that column (after it, for a
    /// direct fill, which is not read again from its header).
    budget: Budget,
    /// The decode that stopped here (the connection's number for the packet),
    /// when it was given one: its caller may then let go of the input before
    /// `offset` ([`Block::release_input`]), so the decode can only go on in
    /// this block. (A number, not a struct, keeps `Block` small.)
    token: Option<DirectToken>,
    /// Set while the column (plain fixed-width) has its values filled as they
    /// arrive: its header is consumed, its buffer holds what has arrived and
    /// has room for all `rows`.
    fill: Option<Fill>,
}

/// How the values of a column being filled as they arrive come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// Straight from the socket into [`Block::direct_spare`] (the column was
    /// missing at least [`DIRECT_MIN_BYTES`] when it started).
    Slot,
    /// Through the input, taken into the column piece by piece.
    Input,
}

type DirectToken = std::num::NonZeroU64;

/// The least a fixed-width column must still be missing for the rest of it to
/// be read straight into its buffer rather than through the input buffer: below
/// this the extra read and poll cost more than the copy they save.
pub(crate) const DIRECT_MIN_BYTES: usize = 256 << 10;

impl Clone for Block {
    fn clone(&self) -> Block {
        Block {
            info: self.info.clone(),
            rows: self.rows,
            columns: self.columns.clone(),
            spare: Vec::new(),
            partial: None,
            scan: ScanMemo::default(),
        }
    }
}

impl Block {
    /// An empty block.
    pub fn new() -> Self {
        Self::default()
    }

    /// A block from columns of equal length.
    pub fn from_columns(columns: Vec<Column>) -> Result<Block> {
        let rows = columns.first().map_or(0, Column::rows);
        if let Some(c) = columns.iter().find(|c| c.rows() != rows) {
            let reason = format!("{} rows, but column `{}` has {rows}", c.rows(), columns[0].name);
            return Err(ProtoError::InvalidColumn { column: c.name.clone(), ty: c.type_name.clone(), reason });
        }
        Ok(Block {
            info: BlockInfo::default(),
            rows,
            columns,
            spare: Vec::new(),
            partial: None,
            scan: ScanMemo::default(),
        })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The columns in order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The column called `name`, or a [`ProtoError::NoSuchColumn`] that lists
    /// the columns the block has.
    pub fn try_column(&self, name: &str) -> Result<&Column> {
        self.column(name).ok_or_else(|| ProtoError::NoSuchColumn {
            column: name.to_string(),
            present: self.columns.iter().map(|c| c.name.clone()).collect(),
        })
    }

    /// The same column names and types with no rows and no buffers (allocates
    /// only the names): a result header that leaves the decoded block, and its
    /// pooled buffers, free to be reused for the data that follows.
    pub fn empty_like(&self) -> Block {
        let mut none = BufferPool::new();
        let columns = self
            .columns
            .iter()
            .map(|c| Column {
                name: c.name.clone(),
                type_name: c.type_name.clone(),
                ty: c.ty.clone(),
                rare: c.rare.clone(),
                data: c.data.empty_like(&mut none),
            })
            .collect();
        Block { info: self.info.clone(), rows: 0, columns, spare: Vec::new(), partial: None, scan: ScanMemo::default() }
    }

    /// Returns every buffer to `pool` and empties the block (names are kept for reuse).
    ///
    /// Columns go back last first: the pool hands out the most recently returned
    /// buffer, so the next block of the same shape gets each column's buffers back.
    pub fn recycle(&mut self, pool: &mut BufferPool) {
        for c in self.spare.drain(..).chain(self.columns.drain(..).rev()) {
            c.data.recycle(pool);
        }
        self.rows = 0;
        self.partial = None;
        self.scan.clear();
    }

    /// Decodes a block (after the packet's table name) into `self`, reusing
    /// columns whose name and type match the previous block's.
    ///
    /// When this fails with [`ProtoError::Incomplete`], the block remembers the
    /// column that was cut short: call again with the same input, extended, and
    /// decoding resumes at that column instead of starting over (so a wide block
    /// arriving in pieces is decoded once, not once per piece). Within a column
    /// whose size the input does not state up front (VarUInt-prefixed strings),
    /// the scan for its end resumes too, and the column is decoded once it has
    /// fully arrived. Call [`Block::forget_partial`] before decoding a different
    /// input.
    ///
    /// What the decoded block may allocate is bounded by `limits.max_bytes`
    /// ([`ProtoError::TooLarge`] before the allocation); the reader's own budget
    /// is left as it was.
    pub fn read(
        &mut self,
        r: &mut Reader<'_>,
        revision: u64,
        limits: &BlockLimits,
        pool: &mut BufferPool,
    ) -> Result<()> {
        let outer = r.budget();
        let res = self.read_with(r, revision, limits, pool, None);
        r.set_budget(outer);
        res
    }

    /// [`Block::read`] for a caller that lets go of its input as the block
    /// takes it, when `direct` is the decode's token: after an `Incomplete`,
    /// [`Block::release_input`] says how much of the input's front the block no
    /// longer needs (the decode then resumes on the rest). A plain fixed-width
    /// column that has not fully arrived takes the input's part of its values
    /// into its buffer, and the rest as it comes: through the input, or, when
    /// it still misses at least [`DIRECT_MIN_BYTES`], written straight into
    /// [`Block::direct_spare`]. The reader's budget is left as the block
    /// charged it (the caller's reader is its own).
    pub(crate) fn read_with(
        &mut self,
        r: &mut Reader<'_>,
        revision: u64,
        limits: &BlockLimits,
        pool: &mut BufferPool,
        direct: Option<u64>,
    ) -> Result<()> {
        let (first, ncols, rows) = match self.partial.take() {
            Some(p) => {
                r.bytes(p.offset)?;
                r.set_budget(p.budget);
                match p.fill {
                    None => (p.column, p.columns, p.rows),
                    Some(_) => {
                        // The column's header is behind us; the input's part of its
                        // values goes into its buffer, whether or not that completes it.
                        let Some((buf, total)) = self.direct_buf(p.column, p.rows) else {
                            return Err(ProtoError::violation("a direct fill lost its column"));
                        };
                        let missing = total.saturating_sub(buf.len());
                        let here = missing.min(r.remaining());
                        buf.extend_from(r.bytes(here)?);
                        if here < missing {
                            let offset = r.position();
                            self.partial = Some(Partial { offset, ..p });
                            return Err(ProtoError::Incomplete { needed: offset.saturating_add(missing - here) });
                        }
                        self.scan.clear();
                        (p.column + 1, p.columns, p.rows)
                    }
                }
            }
            None => {
                self.scan.clear();
                r.set_budget(Budget::new(limits.max_bytes));
                self.info.read(r)?;
                let ncols = r.varuint_bounded("column count", limits.max_columns)?;
                let rows = r.varuint_bounded("row count", limits.max_rows)?;
                // Each column needs at least its name and type length bytes.
                r.need(ncols.saturating_mul(2))?;
                // Keep surplus columns for a later, wider block: the empty block
                // that ends a result has no columns, and must not cost the data
                // block its buffers.
                while self.columns.len() > ncols {
                    if let Some(c) = self.columns.pop() {
                        self.spare.push(c);
                    }
                }
                (0, ncols, rows)
            }
        };
        let layout = Layout::for_revision(revision);
        let token = direct.and_then(DirectToken::new);
        for i in first..ncols {
            let offset = r.position();
            let budget = r.budget();
            match self.read_column(i, r, rows, revision, layout, limits, pool, token) {
                Ok(None) => self.scan.clear(),
                Ok(Some((fill, missing))) => {
                    // Everything up to the reader's position is in the block now.
                    let (offset, budget) = (r.position(), r.budget());
                    let columns = ncols;
                    self.partial = Some(Partial { column: i, offset, columns, rows, budget, token, fill: Some(fill) });
                    return Err(ProtoError::Incomplete { needed: offset.saturating_add(missing) });
                }
                Err(ProtoError::Incomplete { needed }) => {
                    let columns = ncols;
                    self.partial = Some(Partial { column: i, offset, columns, rows, budget, token, fill: None });
                    return Err(ProtoError::Incomplete { needed });
                }
                Err(e) => {
                    self.scan.clear();
                    return Err(e);
                }
            }
        }
        self.rows = rows;
        Ok(())
    }

    /// Drops the state of a decode that ended in `Incomplete`.
    pub fn forget_partial(&mut self) {
        self.partial = None;
        self.scan.clear();
    }

    /// The buffer of column `i` when it is a plain fixed-width column, and its
    /// size for `rows` rows.
    fn direct_buf(&mut self, i: usize, rows: usize) -> Option<(&mut AlignedBuf, usize)> {
        match self.columns.get_mut(i).map(|c| &mut c.data) {
            Some(ColumnData::Fixed(f)) => Some((&mut f.data, rows.checked_mul(f.width)?)),
            _ => None,
        }
    }

    /// The fill in progress: its column buffer and total size.
    fn filling(&mut self) -> Option<(&mut AlignedBuf, usize)> {
        let p = self.partial?;
        p.fill?;
        self.direct_buf(p.column, p.rows)
    }

    /// The fill in progress that takes its values straight from the socket:
    /// its column buffer and total size.
    fn direct_fill(&mut self) -> Option<(&mut AlignedBuf, usize)> {
        if self.partial?.fill? != Fill::Slot {
            return None;
        }
        self.filling()
    }

    /// Whether this block holds the decode `token` stopped in.
    pub(crate) fn holds_direct(&self, token: u64) -> bool {
        self.partial.and_then(|p| p.token).is_some_and(|d| d.get() == token)
    }

    /// After a read with a token that ended in `Incomplete`: lets go of the
    /// input the block no longer needs, so the caller's input holds only the
    /// column being decoded. `None` when the decode stopped before its first
    /// column (it starts over from the input's start). Otherwise: how many
    /// bytes from the input's start the caller consumes (asked again it is 0;
    /// `needed` shrinks by as much), and for a column being filled, how many
    /// bytes it still misses and whether they are to come through
    /// [`Block::direct_spare`].
    ///
    /// A column being filled has taken the input's part of its values; any
    /// other column is decoded from its header once it has fully arrived, so
    /// only what comes before that header goes.
    pub(crate) fn release_input(&mut self) -> Option<(usize, Option<(usize, bool)>)> {
        let p = self.partial.as_mut()?;
        p.token?;
        let consumed = std::mem::take(&mut p.offset);
        let fill = p.fill;
        // The measure's positions count from the input's start.
        self.scan.shift(consumed);
        let missing = match self.filling() {
            Some((buf, total)) => total.saturating_sub(buf.len()),
            None => return Some((consumed, None)),
        };
        Some((consumed, Some((missing, fill == Some(Fill::Slot)))))
    }

    /// Takes the front of `src` (at most what the column misses) into the
    /// direct fill; returns how many bytes it took.
    pub(crate) fn direct_absorb(&mut self, src: &[u8]) -> usize {
        let Some((buf, total)) = self.direct_fill() else { return 0 };
        let n = total.saturating_sub(buf.len()).min(src.len());
        buf.extend_from(&src[..n]);
        n
    }

    /// Exactly the bytes the direct fill still misses (empty when it has all).
    pub(crate) fn direct_spare(&mut self) -> &mut [u8] {
        match self.direct_fill() {
            Some((buf, total)) => buf.spare_mut(total),
            None => &mut [],
        }
    }

    /// Takes the first `n` bytes written into [`Block::direct_spare`] in (at
    /// most what the column misses); returns how many it took.
    pub(crate) fn direct_commit(&mut self, n: usize) -> usize {
        let Some((buf, total)) = self.direct_fill() else { return 0 };
        let n = n.min(total.saturating_sub(buf.len()));
        buf.commit(n);
        n
    }

    #[allow(clippy::too_many_arguments)]
    fn read_column(
        &mut self,
        i: usize,
        r: &mut Reader<'_>,
        rows: usize,
        revision: u64,
        layout: Layout,
        limits: &BlockLimits,
        pool: &mut BufferPool,
        token: Option<DirectToken>,
    ) -> Result<Option<(Fill, usize)>> {
        // Names come from the query text (an expression's name is its text), so
        // their bound is the block's, not a small constant; they count against it.
        // Bytes, not necessarily UTF-8 (see `Column::name_bytes`).
        let name = r.string_bytes(limits.max_bytes)?;
        r.charge(name.len())?;
        let type_name = r.string(limits.max_bytes)?;
        r.charge(type_name.len())?;
        if i >= self.columns.len() {
            if let Some(c) = self.spare.pop() {
                self.columns.push(c);
            } else {
                let ty = DataType::parse(type_name)?;
                let data = ColumnData::for_type(&ty, pool)?;
                let mut c = Column { name: String::new(), type_name: type_name.to_owned(), rare: None, ty, data };
                c.set_shape();
                c.set_name(name);
                self.columns.push(c);
            }
        }
        // A reused column (from the previous block or a spare) takes this block's name and type.
        let col = &mut self.columns[i];
        if col.name_bytes() != name {
            col.set_name(name);
        }
        if col.type_name != type_name {
            let ty = DataType::parse(type_name)?;
            let data = ColumnData::for_type(&ty, pool)?;
            std::mem::replace(&mut col.data, data).recycle(pool);
            col.ty = ty;
            col.set_shape();
            col.type_name.clear();
            col.type_name.push_str(type_name);
        }
        let info = if revision >= revision::CUSTOM_SERIALIZATION && r.bool()? {
            Some(SerInfo::read(r, &col.data)?)
        } else {
            None
        };
        if let (Some(_), None, ColumnData::Fixed(f)) = (token, &info, &mut col.data) {
            // A plain fixed-width column has no prefix and its size is known: if
            // it has not fully arrived, it takes what has, and the rest as it
            // comes, so the input never has to hold it whole. When much of it is
            // still to come, the rest goes straight into its buffer.
            let total = crate::column::checked_len(rows, f.width)?;
            let missing = total.saturating_sub(r.remaining());
            if missing > 0 {
                // Charged before the buffer is reserved, as `read_body` would.
                r.charge(total)?;
                let here = r.bytes(r.remaining())?;
                f.data.clear();
                f.data.reserve_total(total);
                f.data.extend_from(here);
                let fill = if missing >= DIRECT_MIN_BYTES { Fill::Slot } else { Fill::Input };
                return Ok(Some((fill, missing)));
            }
        }
        let name_error = |e, name: &str| match e {
            ProtoError::Type { ty, reason } => ProtoError::Type { ty, reason: format!("column `{name}`: {reason}") },
            e => e,
        };
        if rows > 0 && info.is_none() && !layout.sized_strings {
            if let ColumnData::String(s) = &mut col.data {
                // A plain String column in the VarUInt layout decodes its lengths as
                // they arrive, once (measuring first would read them once more).
                s.read_var_resuming(r, rows, &mut self.scan).map_err(|e| name_error(e, &col.name))?;
                return Ok(None);
            }
        }
        if rows > 0 {
            // Wait for the whole column before decoding it, when its size can be
            // measured: a decode cut short would start over on the next piece.
            let mut probe = r.clone();
            let measured = col.data.measure_prefix(&mut probe).and_then(|prefix_known| {
                Ok(prefix_known && col.data.measure_data(&mut probe, rows, info.as_ref(), layout, &mut self.scan)?)
            });
            if let Err(ProtoError::Incomplete { needed }) = measured {
                return Err(ProtoError::Incomplete { needed });
            }
            col.data.read_prefix(r)?;
            col.data.read_data(r, rows, info.as_ref(), layout, pool).map_err(|e| name_error(e, &col.name))?;
        } else {
            col.data.read_data(r, 0, None, layout, pool)?;
        }
        Ok(None)
    }

    /// Encodes the block (BlockInfo, headers and data) for the revision.
    pub fn write(&self, out: &mut Vec<u8>, revision: u64) -> Result<()> {
        write_block(
            out,
            revision,
            &self.info,
            self.rows,
            self.columns.iter().map(|c| (c.name(), c.type_name(), &c.data)),
        )
    }
}

/// Writes a block from (name, type, data) triples.
pub fn write_block<'a>(
    out: &mut Vec<u8>,
    revision: u64,
    info: &BlockInfo,
    rows: usize,
    columns: impl ExactSizeIterator<Item = (&'a str, &'a str, &'a ColumnData)>,
) -> Result<()> {
    write_block_head(out, revision, info, columns.len(), rows);
    let layout = Layout::for_revision(revision);
    for (name, ty, data) in columns {
        write_column_head(out, revision, name, ty);
        if rows > 0 {
            data.write_prefix(out);
            data.write_data(out, layout)?;
        }
    }
    Ok(())
}

/// Writes what precedes a block's columns: BlockInfo, the column count and the row count.
pub fn write_block_head(out: &mut Vec<u8>, revision: u64, info: &BlockInfo, columns: usize, rows: usize) {
    info.write(out, revision);
    out.put_varuint(columns as u64);
    out.put_varuint(rows as u64);
}

/// Writes what precedes a column's data: its name, its type and (from revision
/// 54454) the custom-serialization flag, always 0 since we send plain columns.
pub fn write_column_head(out: &mut Vec<u8>, revision: u64, name: &str, type_name: &str) {
    out.put_string(name);
    out.put_string(type_name);
    if revision >= revision::CUSTOM_SERIALIZATION {
        out.put_u8(0);
    }
}

/// Writes an empty block: the end-of-data marker.
pub fn write_empty_block(out: &mut Vec<u8>, revision: u64) {
    write_block_head(out, revision, &BlockInfo::default(), 0, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::AlignedBuf;
    use crate::column::FixedColumn;

    fn sample(revision: u64) -> Vec<u8> {
        let mut pool = BufferPool::new();
        let mut ids = ColumnData::for_type(&DataType::UInt64, &mut pool).unwrap();
        let mut names = ColumnData::for_type(&DataType::String, &mut pool).unwrap();
        let mut b = Vec::new();
        for i in 0..1000u64 {
            b.put_u64_le(i);
        }
        ids.read_data(&mut Reader::new(&b), 1000, None, Layout::for_revision(0), &mut pool).unwrap();
        let mut s = Vec::new();
        for i in 0..1000u64 {
            s.put_string(i.to_string());
        }
        names.read_data(&mut Reader::new(&s), 1000, None, Layout::for_revision(0), &mut pool).unwrap();
        let block = Block::from_columns(vec![
            Column::new("id", "UInt64", ids).unwrap(),
            Column::new("name", "String", names).unwrap(),
        ])
        .unwrap();
        let mut out = Vec::new();
        block.write(&mut out, revision).unwrap();
        out
    }

    #[test]
    fn try_column_names_the_missing_column_and_the_present_ones() {
        let block = Block::new();
        let bytes = sample(54492);
        let mut full = Block::new();
        full.read(&mut Reader::new(&bytes), 54492, &BlockLimits::default(), &mut BufferPool::new()).unwrap();
        assert_eq!(full.try_column("name").unwrap().name(), "name");
        let err = full.try_column("nmae").unwrap_err();
        assert_eq!(err, ProtoError::NoSuchColumn { column: "nmae".into(), present: vec!["id".into(), "name".into()] });
        assert_eq!(err.to_string(), "no column `nmae` in the block (it has `id`, `name`)");
        assert_eq!(block.try_column("x").unwrap_err().to_string(), "no column `x` in the block (it has no columns)");
    }

    #[test]
    fn column_new_refuses_data_that_does_not_fit_the_type() {
        // Two u32 values offered as UInt64: the server refused these with code 432.
        let mut data = AlignedBuf::new();
        data.set_from(&[1, 0, 0, 0, 2, 0, 0, 0]);
        let err = Column::new("v", "UInt64", ColumnData::Fixed(FixedColumn { width: 4, data })).unwrap_err();
        assert_eq!(
            err,
            ProtoError::InvalidColumn {
                column: "v".into(),
                ty: "UInt64".into(),
                reason: "values are 4 bytes wide, UInt64 needs 8".into()
            }
        );
        assert_eq!(err.to_string(), "column `v` (UInt64): values are 4 bytes wide, UInt64 needs 8");
        let mut data = AlignedBuf::new();
        data.set_from(&[1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(Column::new("v", "UInt32", ColumnData::Fixed(FixedColumn { width: 4, data })).unwrap().rows(), 2);
    }

    #[test]
    fn from_columns_refuses_columns_of_different_lengths() {
        let col = |name: &str, rows: usize| {
            let mut data = AlignedBuf::new();
            data.set_from(&vec![0; rows]);
            Column::new(name, "UInt8", ColumnData::Fixed(FixedColumn { width: 1, data })).unwrap()
        };
        let err = Block::from_columns(vec![col("a", 2), col("b", 3)]).unwrap_err();
        assert_eq!(err.to_string(), "column `b` (UInt8): 3 rows, but column `a` has 2");
    }

    #[test]
    fn resumes_where_the_input_ran_out() {
        for revision in [54460, 54492] {
            let bytes = sample(revision);
            let mut pool = BufferPool::new();
            let mut block = Block::new();
            let mut have = 1;
            let mut attempts = 0;
            loop {
                attempts += 1;
                match block.read(&mut Reader::new(&bytes[..have]), revision, &BlockLimits::default(), &mut pool) {
                    Ok(()) => break,
                    Err(ProtoError::Incomplete { needed }) => {
                        assert!(needed > have && needed <= bytes.len(), "{needed} {have}");
                        have = needed;
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            if revision >= 54492 {
                // Exact size hints: a few retries per column header and body, none
                // of which re-decodes a finished column.
                assert!(attempts <= 32, "{attempts}");
            }
            assert_eq!(block.rows(), 1000);
            assert_eq!(block.column("id").unwrap().view().values::<u64>().unwrap()[999], 999);
            assert_eq!(block.column("name").unwrap().view().as_strings().unwrap().str(999).unwrap(), "999");
            let mut again = Vec::new();
            block.write(&mut again, revision).unwrap();
            assert_eq!(again, bytes);
        }
    }
}
