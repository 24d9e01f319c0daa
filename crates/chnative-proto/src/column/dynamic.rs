//! Variant, Dynamic and JSON columns.
//!
//! Wire layouts, as ClickHouse 26.9 sends them in Native blocks (verified against
//! captures in `tests/data/captures/`, see `tests/golden_dynamic.rs`):
//!
//! * **Variant(T1..Tn)**: prefix = UInt64 discriminator mode (0 BASIC, 1 COMPACT), then
//!   each alternative's prefix. Data = one UInt8 discriminator per row (255 = NULL; in
//!   COMPACT mode granules of `VarUInt rows, UInt8 format (0 plain / 1 single), bytes`),
//!   then each alternative's rows, densely, in alternative order.
//! * **Dynamic**: prefix = UInt64 structure version. V1 (1, revision < 54473):
//!   `VarUInt n` twice, then n type names; V2 (2, revision ≥ 54473): `VarUInt n`, n type
//!   names. Then the prefix of the inner `Variant(types…, SharedVariant)` whose
//!   alternatives are sorted by name; SharedVariant is a String column whose values are
//!   a binary type encoding followed by the value in RowBinary. FLATTENED (3, with
//!   `output_format_native_use_flattened_dynamic_and_json_serialization = 1`): `VarUInt n`,
//!   n type names, each type's prefix; data = one index per row (UInt8/16/32/64, the
//!   smallest that holds n; n = NULL), then each type's rows.
//! * **JSON**: prefix = UInt64 version. V1 (0) / V2 (2): [V1: VarUInt] VarUInt n, n
//!   sorted dynamic path names, the typed paths' prefixes, each dynamic path's Dynamic
//!   prefix. Data = typed path columns, dynamic path columns, then the shared data
//!   `Map(String, String)` (path → binary type + RowBinary value): u64 offsets, then
//!   paths and values with VarUInt lengths even at revision 54492. STRING (1, with
//!   `output_format_native_write_json_as_string = 1`): one JSON text per row, always
//!   VarUInt-length-prefixed (even at revision 54492). FLATTENED (3): like V2 without
//!   shared data; every non-typed path is a FLATTENED Dynamic column.
//!
//! Dynamic V3 and JSON V3 (version 4, binary type names and bucketed shared data) are
//! not sent on the Native protocol by 26.9 and are rejected with [`ProtoError::Type`].

use crate::buffer::{AlignedBuf, BufferPool};
use crate::error::{ProtoError, Result};
use crate::types::{DataType, JsonType};
use crate::wire::{Budget, Reader, WriteExt};

use super::{ColumnData, Layout, SerInfo};

/// The discriminator of a NULL Variant row.
pub const NULL_DISCRIMINATOR: u8 = 255;
/// Variant discriminators mode: one byte per row.
pub const VARIANT_MODE_BASIC: u64 = 0;
/// Variant discriminators mode: granules that may collapse to a single discriminator.
pub const VARIANT_MODE_COMPACT: u64 = 1;
const GRANULE_PLAIN: u8 = 0;
const GRANULE_SINGLE: u8 = 1;

/// Dynamic structure version 1 (sent below revision 54473).
pub const DYNAMIC_V1: u64 = 1;
/// Dynamic structure version 2 (sent from revision 54473).
pub const DYNAMIC_V2: u64 = 2;
/// Dynamic FLATTENED structure (Native only, on request).
pub const DYNAMIC_FLATTENED: u64 = 3;
/// Dynamic V3 (binary type names; MergeTree only in 26.9).
pub const DYNAMIC_V3: u64 = 4;

/// JSON (Object) serialization version 1 (sent below revision 54473).
pub const JSON_V1: u64 = 0;
/// JSON as one text per row (`output_format_native_write_json_as_string = 1`).
pub const JSON_STRING: u64 = 1;
/// JSON serialization version 2 (sent from revision 54473).
pub const JSON_V2: u64 = 2;
/// JSON FLATTENED serialization (Native only, on request).
pub const JSON_FLATTENED: u64 = 3;
/// JSON V3 (MergeTree only in 26.9).
pub const JSON_V3: u64 = 4;

/// Name of the overflow alternative inside Dynamic's Variant.
pub const SHARED_VARIANT: &str = "SharedVariant";

/// The setting that makes the server flatten Dynamic and JSON.
pub const FLATTENED_SETTING: &str = "output_format_native_use_flattened_dynamic_and_json_serialization";
/// The setting that makes the server send JSON as text.
pub const JSON_AS_STRING_SETTING: &str = "output_format_native_write_json_as_string";

/// Bound on the number of types a FLATTENED Dynamic prefix may announce.
const MAX_DYNAMIC_TYPES: u64 = 1 << 16;
/// V1/V2: the declared types plus SharedVariant must fit the Variant's 255 discriminators.
const MAX_VARIANT_DYNAMIC_TYPES: u64 = 254;
/// Bound on the number of paths a JSON prefix may announce.
const MAX_JSON_PATHS: u64 = 1 << 16;

fn checked_len(rows: usize, width: usize) -> Result<usize> {
    rows.checked_mul(width).ok_or_else(|| ProtoError::violation("column size overflows"))
}

// ===========================================================================
// Variant
// ===========================================================================

/// Storage of a `Variant(T1, …)` column.
#[derive(Debug)]
#[non_exhaustive]
pub struct VariantData {
    /// Discriminators mode read from the prefix (written back unchanged).
    pub mode: u64,
    /// One byte per row: the alternative, [`NULL_DISCRIMINATOR`] for NULL.
    pub discriminators: AlignedBuf,
    /// u64 per row: the row's index inside its alternative (0 for NULL rows).
    pub offsets: AlignedBuf,
    /// One column per alternative, holding only the rows that chose it.
    pub variants: Vec<ColumnData>,
}

impl VariantData {
    /// Storage over the given alternatives.
    pub fn new(variants: Vec<ColumnData>, pool: &mut BufferPool) -> VariantData {
        VariantData { mode: VARIANT_MODE_BASIC, discriminators: pool.take(), offsets: pool.take(), variants }
    }

    /// Rows held.
    pub fn rows(&self) -> usize {
        self.discriminators.len()
    }

    pub(super) fn empty_like(&self, pool: &mut BufferPool) -> VariantData {
        VariantData {
            mode: self.mode,
            discriminators: pool.take(),
            offsets: pool.take(),
            variants: self.variants.iter().map(|v| v.empty_like(pool)).collect(),
        }
    }

    pub(super) fn recycle(self, pool: &mut BufferPool) {
        pool.give(self.discriminators);
        pool.give(self.offsets);
        self.variants.into_iter().for_each(|v| v.recycle(pool));
    }

    pub(super) fn clear(&mut self) {
        self.discriminators.clear();
        self.offsets.clear();
        self.variants.iter_mut().for_each(ColumnData::clear);
    }

    pub(super) fn read_prefix(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let mode = r.u64_le()?;
        if mode != VARIANT_MODE_BASIC && mode != VARIANT_MODE_COMPACT {
            return Err(ProtoError::violation(format!("Variant discriminators mode {mode}")));
        }
        self.mode = mode;
        self.variants.iter_mut().try_for_each(|v| v.read_prefix(r))
    }

    pub(super) fn read_body(
        &mut self,
        r: &mut Reader<'_>,
        rows: usize,
        layout: Layout,
        pool: &mut BufferPool,
    ) -> Result<()> {
        self.discriminators.clear();
        if rows > 0 {
            // A discriminator and an offset per row, however few bytes COMPACT granules take.
            r.charge_n(rows, 9)?;
            match self.mode {
                VARIANT_MODE_BASIC => self.discriminators.set_from(r.bytes(rows)?),
                _ => {
                    let mut got = 0usize;
                    while got < rows {
                        let n = r.varuint()?;
                        let n = usize::try_from(n)
                            .ok()
                            .filter(|&n| n > 0 && n <= rows - got)
                            .ok_or_else(|| ProtoError::violation("Variant granule size does not fit the rows"))?;
                        match r.u8()? {
                            GRANULE_PLAIN => self.discriminators.extend_from(r.bytes(n)?),
                            GRANULE_SINGLE => {
                                let d = r.u8()?;
                                let at = self.discriminators.len();
                                self.discriminators.resize_zeroed(at + n);
                                self.discriminators.as_bytes_mut()[at..].fill(d);
                            }
                            f => return Err(ProtoError::violation(format!("Variant granule format {f}"))),
                        }
                        got += n;
                    }
                }
            }
        }
        let counts = self.compute_offsets()?;
        for (v, &n) in self.variants.iter_mut().zip(counts.iter()) {
            v.read_data(r, n, None, layout, pool)?;
        }
        Ok(())
    }

    /// Validates the discriminators, fills `offsets`, and returns the rows per alternative.
    fn compute_offsets(&mut self) -> Result<[usize; 256]> {
        let n = self.variants.len();
        let rows = self.discriminators.len();
        let mut counts = [0usize; 256];
        self.offsets.clear();
        self.offsets.resize_zeroed(checked_len(rows, 8)?);
        let offsets = self.offsets.typed_mut::<u64>()?;
        for (o, &d) in offsets.iter_mut().zip(self.discriminators.as_bytes()) {
            if d == NULL_DISCRIMINATOR {
                continue;
            }
            if usize::from(d) >= n {
                return Err(ProtoError::violation(format!("Variant discriminator {d} beyond {n} alternatives")));
            }
            *o = counts[usize::from(d)] as u64;
            counts[usize::from(d)] += 1;
        }
        Ok(counts)
    }

    pub(super) fn write_prefix(&self, out: &mut Vec<u8>) {
        out.put_u64_le(self.mode);
        self.variants.iter().for_each(|v| v.write_prefix(out));
    }

    pub(super) fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        let rows = self.rows();
        if rows > 0 {
            if self.mode == VARIANT_MODE_COMPACT {
                out.put_varuint(rows as u64);
                out.put_u8(GRANULE_PLAIN);
            }
            out.extend_from_slice(self.discriminators.as_bytes());
        }
        for v in &self.variants {
            v.write_data(out, layout)?;
        }
        Ok(())
    }

    /// Appends rows of `src` picked by `idx` (`u64::MAX` = NULL).
    pub(super) fn append_from(
        &mut self,
        src: &VariantData,
        idx: &[u64],
        pool: &mut BufferPool,
        budget: &mut Budget,
    ) -> Result<()> {
        if self.variants.len() != src.variants.len() {
            return Err(ProtoError::violation("column shapes differ"));
        }
        // A discriminator, an offset and (temporarily) a pick per row.
        budget.charge_n(idx.len(), 17)?;
        let oob = || ProtoError::violation("row index out of range");
        let sd = src.discriminators.as_bytes();
        let so = src.offsets.typed::<u64>()?;
        let mut picks: Vec<Vec<u64>> = vec![Vec::new(); self.variants.len()];
        let mut next: Vec<u64> = self.variants.iter().map(|v| v.rows() as u64).collect();
        for &i in idx {
            let d = if i == u64::MAX { NULL_DISCRIMINATOR } else { *sd.get(i as usize).ok_or_else(oob)? };
            self.discriminators.push(d);
            if d == NULL_DISCRIMINATOR {
                self.offsets.push(0u64);
            } else {
                let k = usize::from(d);
                self.offsets.push(next[k]);
                next[k] += 1;
                picks[k].push(so[i as usize]);
            }
        }
        for ((v, s), p) in self.variants.iter_mut().zip(&src.variants).zip(&picks) {
            if !p.is_empty() {
                v.append_from(s, p, pool, budget)?;
            }
        }
        Ok(())
    }

    fn push_null(&mut self) {
        self.discriminators.push(NULL_DISCRIMINATOR);
        self.offsets.push(0u64);
    }
}

// ===========================================================================
// Dynamic
// ===========================================================================

/// Where a Dynamic type's values live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// An alternative of the inner Variant (V1/V2).
    Variant(usize),
    /// A FLATTENED column.
    Flat(usize),
    /// Values decoded from the shared variant (V1/V2).
    Shared(usize),
}

/// One type a Dynamic block holds values of.
#[derive(Debug, Clone)]
pub struct DynamicType {
    /// The type's name (as the server spells it for declared types).
    pub name: String,
    /// The parsed type.
    pub ty: DataType,
    src: Source,
    /// Why values of this type cannot be shown (shared values of a type this crate
    /// cannot decode from RowBinary); `None` when they can.
    pub undecodable: Option<String>,
}

/// Storage of a `Dynamic` column.
///
/// The wire structure is kept as read so the column can be written back unchanged;
/// on top of it, every row is mapped to one entry of [`DynamicData::types`] (the
/// declared types first, then the types found in the shared variant, which are
/// decoded from RowBinary into columns of their own).
#[derive(Debug)]
#[non_exhaustive]
pub struct DynamicData {
    /// Structure version read from the prefix: [`DYNAMIC_V1`], [`DYNAMIC_V2`] or [`DYNAMIC_FLATTENED`].
    pub version: u64,
    /// V1 only: the first count of the structure (the server writes the type count).
    pub v1_max_types: u64,
    /// The type names the prefix lists (V1/V2: without SharedVariant).
    pub type_names: Vec<String>,
    /// V1/V2: the inner Variant over the declared types and SharedVariant, in name order.
    pub variant: VariantData,
    /// V1/V2: the alternative that is SharedVariant.
    pub shared_variant: usize,
    /// FLATTENED: bytes per index (1, 2, 4 or 8).
    pub flat_width: u8,
    /// FLATTENED: one index per row into `type_names` (`type_names.len()` = NULL).
    pub flat_indexes: AlignedBuf,
    /// FLATTENED: one column per type.
    pub flat_columns: Vec<ColumnData>,
    /// Types of this block's values: the declared ones, then those found in the shared variant.
    pub types: Vec<DynamicType>,
    /// Columns of values decoded from the shared variant (`None`: not decodable).
    shared_columns: Vec<Option<ColumnData>>,
    /// u32 per row: index into `types`, `u32::MAX` for NULL.
    row_types: AlignedBuf,
    /// u64 per row: index inside the type's column.
    row_index: AlignedBuf,
    rows: usize,
}

impl DynamicData {
    /// An empty V2 column with no declared types (what an empty server column sends).
    pub fn new(pool: &mut BufferPool) -> DynamicData {
        let shared = ColumnData::String { offsets: pool.take(), data: pool.take() };
        DynamicData {
            version: DYNAMIC_V2,
            v1_max_types: 0,
            type_names: Vec::new(),
            variant: VariantData::new(vec![shared], pool),
            shared_variant: 0,
            flat_width: 1,
            flat_indexes: pool.take(),
            flat_columns: Vec::new(),
            types: Vec::new(),
            shared_columns: Vec::new(),
            row_types: pool.take(),
            row_index: pool.take(),
            rows: 0,
        }
    }

    /// Rows held.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Index into [`Self::types`] of row `i`'s type, `None` for NULL. Panics if out of range.
    pub fn row_type(&self, i: usize) -> Option<usize> {
        let t = self.row_types.typed::<u32>().map(|t| t[i]).unwrap_or(u32::MAX);
        (t != u32::MAX).then_some(t as usize)
    }

    /// Row `i`'s index inside its type's column. Panics if out of range.
    pub fn row_index(&self, i: usize) -> usize {
        self.row_index.typed::<u64>().map(|x| x[i] as usize).unwrap_or(0)
    }

    /// The column holding the values of type `t` (`None` if not decodable).
    pub fn type_column(&self, t: usize) -> Option<&ColumnData> {
        match self.types.get(t)?.src {
            Source::Variant(k) => self.variant.variants.get(k),
            Source::Flat(k) => self.flat_columns.get(k),
            Source::Shared(k) => self.shared_columns.get(k)?.as_ref(),
        }
    }

    /// For a V1/V2 row stored in the shared variant: its raw bytes (binary type + RowBinary value).
    pub fn shared_bytes(&self, i: usize) -> Option<&[u8]> {
        if self.version == DYNAMIC_FLATTENED {
            return None;
        }
        let d = *self.variant.discriminators.as_bytes().get(i)?;
        if usize::from(d) != self.shared_variant {
            return None;
        }
        let k = self.variant.offsets.typed::<u64>().ok()?[i] as usize;
        match self.variant.variants.get(self.shared_variant)? {
            ColumnData::String { offsets, data } => {
                let o = offsets.typed::<u64>().ok()?;
                let start = if k == 0 { 0 } else { o[k - 1] as usize };
                data.as_bytes().get(start..o[k] as usize)
            }
            _ => None,
        }
    }

    /// Empty storage with the same structure (types read from the last prefix).
    pub(super) fn empty_like(&self, pool: &mut BufferPool) -> DynamicData {
        let declared = self.type_names.len().min(self.types.len());
        DynamicData {
            version: self.version,
            v1_max_types: self.v1_max_types,
            type_names: self.type_names.clone(),
            variant: self.variant.empty_like(pool),
            shared_variant: self.shared_variant,
            flat_width: self.flat_width,
            flat_indexes: pool.take(),
            flat_columns: self.flat_columns.iter().map(|c| c.empty_like(pool)).collect(),
            types: self.types[..declared].to_vec(),
            shared_columns: Vec::new(),
            row_types: pool.take(),
            row_index: pool.take(),
            rows: 0,
        }
    }

    pub(super) fn recycle(self, pool: &mut BufferPool) {
        self.variant.recycle(pool);
        pool.give(self.flat_indexes);
        self.flat_columns.into_iter().for_each(|c| c.recycle(pool));
        self.shared_columns.into_iter().flatten().for_each(|c| c.recycle(pool));
        pool.give(self.row_types);
        pool.give(self.row_index);
    }

    pub(super) fn clear(&mut self) {
        self.variant.clear();
        self.flat_indexes.clear();
        self.flat_columns.iter_mut().for_each(ColumnData::clear);
        self.shared_columns.iter_mut().flatten().for_each(ColumnData::clear);
        self.row_types.clear();
        self.row_index.clear();
        self.rows = 0;
    }

    pub(super) fn read_prefix(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let version = r.u64_le()?;
        match version {
            DYNAMIC_V1 | DYNAMIC_V2 => {
                let v1 = if version == DYNAMIC_V1 { r.varuint()? } else { 0 };
                let names = read_names(r, "Dynamic types", MAX_VARIANT_DYNAMIC_TYPES)?;
                let same = (self.version == DYNAMIC_V1 || self.version == DYNAMIC_V2) && names == self.type_names;
                if !same {
                    self.rebuild_variant(names)?;
                }
                self.version = version;
                self.v1_max_types = v1;
                self.variant.read_prefix(r)
            }
            DYNAMIC_FLATTENED => {
                let names = read_names(r, "Dynamic types", MAX_DYNAMIC_TYPES)?;
                if self.version != DYNAMIC_FLATTENED || names != self.type_names {
                    self.rebuild_flat(names)?;
                }
                self.version = version;
                self.flat_columns.iter_mut().try_for_each(|c| c.read_prefix(r))
            }
            DYNAMIC_V3 => Err(ProtoError::ty(
                "Dynamic",
                format!(
                    "structure version V3 (binary type names) is not implemented; \
                     set {FLATTENED_SETTING} = 1 to receive the FLATTENED form"
                ),
            )),
            v => Err(ProtoError::violation(format!("unknown Dynamic structure version {v}"))),
        }
    }

    fn rebuild_variant(&mut self, names: Vec<String>) -> Result<()> {
        let mut pool = BufferPool::new();
        let mut parsed = Vec::with_capacity(names.len());
        for n in &names {
            parsed.push(DataType::parse(n)?);
        }
        // The inner Variant's alternatives are the declared types plus SharedVariant, sorted by name.
        let mut order: Vec<Option<usize>> = (0..names.len()).map(Some).chain(std::iter::once(None)).collect();
        let key = |o: &Option<usize>| -> &str { o.map_or(SHARED_VARIANT, |i| names[i].as_str()) };
        order.sort_by(|a, b| key(a).cmp(key(b)));
        let mut cols = Vec::with_capacity(order.len());
        let mut types = Vec::with_capacity(names.len());
        let mut shared = 0;
        for (pos, o) in order.iter().enumerate() {
            match o {
                None => {
                    shared = pos;
                    cols.push(ColumnData::String { offsets: pool.take(), data: pool.take() });
                }
                Some(i) => {
                    cols.push(ColumnData::for_type(&parsed[*i], &mut pool)?);
                    types.push(DynamicType {
                        name: names[*i].clone(),
                        ty: parsed[*i].clone(),
                        src: Source::Variant(pos),
                        undecodable: None,
                    });
                }
            }
        }
        let old = std::mem::replace(&mut self.variant, VariantData::new(cols, &mut pool));
        old.recycle(&mut pool);
        self.shared_variant = shared;
        self.types = types;
        self.type_names = names;
        std::mem::take(&mut self.flat_columns).into_iter().for_each(|c| c.recycle(&mut pool));
        Ok(())
    }

    fn rebuild_flat(&mut self, names: Vec<String>) -> Result<()> {
        let mut pool = BufferPool::new();
        let mut cols = Vec::with_capacity(names.len());
        let mut types = Vec::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            let ty = DataType::parse(n)?;
            cols.push(ColumnData::for_type(&ty, &mut pool)?);
            types.push(DynamicType { name: n.clone(), ty, src: Source::Flat(i), undecodable: None });
        }
        let n = names.len() as u64 + 1;
        self.flat_width = if n <= 1 << 8 {
            1
        } else if n <= 1 << 16 {
            2
        } else if n <= 1 << 32 {
            4
        } else {
            8
        };
        std::mem::replace(&mut self.flat_columns, cols).into_iter().for_each(|c| c.recycle(&mut pool));
        self.types = types;
        self.type_names = names;
        let empty = VariantData::new(vec![ColumnData::String { offsets: pool.take(), data: pool.take() }], &mut pool);
        std::mem::replace(&mut self.variant, empty).recycle(&mut pool);
        self.shared_variant = 0;
        Ok(())
    }

    pub(super) fn read_body(
        &mut self,
        r: &mut Reader<'_>,
        rows: usize,
        layout: Layout,
        pool: &mut BufferPool,
    ) -> Result<()> {
        // Drop the types a previous block found in its shared variant.
        let declared = self.type_names.len();
        self.types.truncate(declared);
        self.shared_columns.drain(..).flatten().for_each(|c| c.recycle(pool));
        self.rows = rows;
        self.row_types.clear();
        self.row_index.clear();
        if rows == 0 {
            self.variant.clear();
            self.flat_indexes.clear();
            self.flat_columns.iter_mut().for_each(ColumnData::clear);
            return Ok(());
        }
        r.charge_n(rows, 12)?;
        self.row_types.resize_zeroed(checked_len(rows, 4)?);
        self.row_index.resize_zeroed(checked_len(rows, 8)?);
        if self.version == DYNAMIC_FLATTENED {
            self.read_flat_body(r, rows, layout, pool)
        } else {
            self.variant.read_body(r, rows, layout, pool)?;
            self.map_variant_rows(pool)
        }
    }

    fn read_flat_body(&mut self, r: &mut Reader<'_>, rows: usize, layout: Layout, pool: &mut BufferPool) -> Result<()> {
        let w = usize::from(self.flat_width);
        let raw = r.bytes(checked_len(rows, w)?)?;
        r.charge(raw.len())?;
        self.flat_indexes.set_from(raw);
        let n = self.flat_columns.len();
        let mut counts = vec![0u64; n];
        {
            let raw = self.flat_indexes.as_bytes();
            let types = self.row_types.typed_mut::<u32>()?;
            let index = self.row_index.typed_mut::<u64>()?;
            for i in 0..rows {
                let mut a = [0u8; 8];
                a[..w].copy_from_slice(&raw[i * w..i * w + w]);
                let t = u64::from_le_bytes(a);
                if t == n as u64 {
                    types[i] = u32::MAX;
                } else if t < n as u64 {
                    types[i] = t as u32;
                    index[i] = counts[t as usize];
                    counts[t as usize] += 1;
                } else {
                    return Err(ProtoError::violation(format!("Dynamic type index {t} beyond {n} types")));
                }
            }
        }
        for (c, &k) in self.flat_columns.iter_mut().zip(&counts) {
            c.read_data(r, k as usize, None, layout, pool)?;
        }
        Ok(())
    }

    /// Maps each row to a type, decoding the shared variant's values by type.
    fn map_variant_rows(&mut self, pool: &mut BufferPool) -> Result<()> {
        // Shared values first: one (type, index) per shared row.
        let mut shared_map: Vec<(u32, u64)> = Vec::new();
        if let Some(ColumnData::String { offsets, data }) = self.variant.variants.get(self.shared_variant) {
            let offsets = offsets.typed::<u64>()?;
            let data = data.as_bytes();
            shared_map.reserve(offsets.len());
            let mut start = 0usize;
            for &end in offsets {
                let value = data
                    .get(start..end as usize)
                    .ok_or_else(|| ProtoError::violation("shared variant offsets out of range"))?;
                start = end as usize;
                shared_map.push(decode_shared_value(value, &mut self.types, &mut self.shared_columns, pool)?);
            }
        }
        let declared: Vec<u32> = {
            // alternative -> index in `types`
            let mut m = vec![u32::MAX; self.variant.variants.len()];
            for (t, ty) in self.types.iter().enumerate() {
                if let Source::Variant(k) = ty.src {
                    m[k] = t as u32;
                }
            }
            m
        };
        let discr = self.variant.discriminators.as_bytes();
        let offsets = self.variant.offsets.typed::<u64>()?;
        let types = self.row_types.typed_mut::<u32>()?;
        let index = self.row_index.typed_mut::<u64>()?;
        for i in 0..discr.len() {
            let d = discr[i];
            if d == NULL_DISCRIMINATOR {
                types[i] = u32::MAX;
            } else if usize::from(d) == self.shared_variant {
                let (t, k) = shared_map[offsets[i] as usize];
                types[i] = t;
                index[i] = k;
            } else {
                types[i] = declared[usize::from(d)];
                index[i] = offsets[i];
            }
        }
        Ok(())
    }

    pub(super) fn write_prefix(&self, out: &mut Vec<u8>) {
        out.put_u64_le(self.version);
        if self.version == DYNAMIC_V1 {
            out.put_varuint(self.v1_max_types);
        }
        out.put_varuint(self.type_names.len() as u64);
        for n in &self.type_names {
            out.put_string(n);
        }
        if self.version == DYNAMIC_FLATTENED {
            self.flat_columns.iter().for_each(|c| c.write_prefix(out));
        } else {
            self.variant.write_prefix(out);
        }
    }

    pub(super) fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        if self.version == DYNAMIC_FLATTENED {
            out.extend_from_slice(self.flat_indexes.as_bytes());
            for c in &self.flat_columns {
                c.write_data(out, layout)?;
            }
            Ok(())
        } else {
            self.variant.write_body(out, layout)
        }
    }
}

fn read_names(r: &mut Reader<'_>, what: &'static str, limit: u64) -> Result<Vec<String>> {
    let n = r.varuint_bounded(what, limit)?;
    r.need(n)?;
    let mut names = Vec::with_capacity(n);
    for _ in 0..n {
        // Paths are JSON keys and types may carry Enum labels: user data, so the
        // bound is the block's memory budget, which every name is charged to.
        let budget = r.budget();
        let name = r.string_owned(budget.limit.saturating_sub(budget.used))?;
        r.charge(name.len())?;
        names.push(name);
    }
    Ok(names)
}

/// Decodes one shared value (binary type + RowBinary value) into the column of its
/// type, adding the type to `types` on first sight. Returns (type index, row index).
fn decode_shared_value(
    value: &[u8],
    types: &mut Vec<DynamicType>,
    columns: &mut Vec<Option<ColumnData>>,
    pool: &mut BufferPool,
) -> Result<(u32, u64)> {
    let mut r = Reader::new(value);
    let ty = match DataType::decode_binary(&mut r) {
        Ok(t) => t,
        // A type we cannot even name: keep the row, flagged.
        Err(ProtoError::Type { ty, reason }) => DataType::Unsupported(format!("{ty} ({reason})")),
        Err(ProtoError::Incomplete { .. }) => {
            return Err(ProtoError::violation("shared variant value ends inside its type"))
        }
        Err(e) => return Err(e),
    };
    let t = match types.iter().position(|x| matches!(x.src, Source::Shared(_)) && x.ty == ty) {
        Some(t) => t,
        None => {
            let why = row_binary_unsupported(&ty);
            let col = match why {
                None => Some(ColumnData::for_type(&ty, pool)?),
                Some(_) => None,
            };
            columns.push(col);
            types.push(DynamicType {
                name: ty.to_string(),
                ty,
                src: Source::Shared(columns.len() - 1),
                undecodable: why,
            });
            types.len() - 1
        }
    };
    let Source::Shared(k) = types[t].src else {
        return Err(ProtoError::violation("shared type bookkeeping"));
    };
    let Some(col) = columns[k].as_mut() else {
        return Ok((t as u32, 0));
    };
    let at = col.rows() as u64;
    match col.push_row_binary(&types[t].ty, &mut r) {
        Ok(()) => {}
        Err(ProtoError::Incomplete { .. }) => return Err(ProtoError::violation("shared variant value is truncated")),
        Err(e) => return Err(e),
    }
    if r.remaining() != 0 {
        return Err(ProtoError::violation("shared variant value has trailing bytes"));
    }
    Ok((t as u32, at))
}

/// Why values of `ty` cannot be decoded from RowBinary here, or `None` when they can.
pub fn row_binary_unsupported(ty: &DataType) -> Option<String> {
    match ty {
        DataType::Unsupported(name) => Some(format!("type `{name}` has no codec")),
        DataType::Nothing => Some("Nothing has no values".into()),
        DataType::Dynamic { .. } | DataType::Json(_) | DataType::QBit(..) | DataType::QBitStrided(..) => {
            Some(format!("{ty} values inside a shared variant are not decoded"))
        }
        DataType::Nullable(t) | DataType::Array(t) | DataType::LowCardinality(t) => row_binary_unsupported(t),
        DataType::SimpleAggregateFunction(_, t) => row_binary_unsupported(t),
        DataType::Map(k, v) => row_binary_unsupported(k).or_else(|| row_binary_unsupported(v)),
        // Tuple() is a 1-byte placeholder in columns but has no bytes in RowBinary.
        DataType::Tuple(e) if e.is_empty() => Some("Tuple() values inside a shared variant are not decoded".into()),
        DataType::Tuple(e) => e.iter().find_map(|(_, t)| row_binary_unsupported(t)),
        DataType::Nested(e) => e.iter().find_map(|(_, t)| row_binary_unsupported(t)),
        DataType::Variant(alts) => alts.iter().find_map(row_binary_unsupported),
        _ => None,
    }
}

impl ColumnData {
    /// Appends one value in RowBinary (`serializeBinary`) form. The column must have
    /// been built for `ty`, and `ty` must pass [`row_binary_unsupported`].
    pub fn push_row_binary(&mut self, ty: &DataType, r: &mut Reader<'_>) -> Result<()> {
        let shape = ty.wire_shape();
        let ty = shape.as_ref();
        match (self, ty) {
            (ColumnData::Fixed { width, data }, _) => data.extend_from(r.bytes(*width)?),
            (ColumnData::String { offsets, data }, _) => {
                let n = r.varuint()?;
                let n = usize::try_from(n).map_err(|_| ProtoError::violation("string length overflows"))?;
                data.extend_from(r.bytes(n)?);
                offsets.push(data.len() as u64);
            }
            (ColumnData::Nullable { nulls, inner }, DataType::Nullable(t)) => {
                if r.u8()? != 0 {
                    nulls.push(1u8);
                    inner.push_default(t)?;
                } else {
                    inner.push_row_binary(t, r)?;
                    nulls.push(0u8);
                }
            }
            (ColumnData::Array { offsets, inner }, DataType::Array(t)) => {
                let n = r.varuint()?;
                // Every element takes at least one byte.
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= r.remaining())
                    .ok_or_else(|| ProtoError::violation("array length beyond the value"))?;
                for _ in 0..n {
                    inner.push_row_binary(t, r)?;
                }
                offsets.push(inner.rows() as u64);
            }
            (ColumnData::Array { offsets, inner }, DataType::Map(k, v)) => {
                let n = r.varuint()?;
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= r.remaining())
                    .ok_or_else(|| ProtoError::violation("map size beyond the value"))?;
                let ColumnData::Tuple(kv) = inner.as_mut() else {
                    return Err(ProtoError::violation("column shape differs from its type"));
                };
                if kv.len() != 2 {
                    return Err(ProtoError::violation("column shape differs from its type"));
                }
                for _ in 0..n {
                    kv[0].push_row_binary(k, r)?;
                    kv[1].push_row_binary(v, r)?;
                }
                offsets.push(kv[0].rows() as u64);
            }
            (ColumnData::Tuple(cols), DataType::Tuple(elems)) if cols.len() == elems.len() => {
                for (c, (_, t)) in cols.iter_mut().zip(elems) {
                    c.push_row_binary(t, r)?;
                }
            }
            (ColumnData::LowCardinality { dict, key_width, keys, nullable }, DataType::LowCardinality(t)) => {
                let inner = match t.as_ref() {
                    DataType::Nullable(t) => t.as_ref(),
                    t => t,
                };
                start_row_keys(dict, key_width, keys, *nullable, inner)?;
                if *nullable && r.u8()? != 0 {
                    keys.push(0u64);
                } else {
                    dict.push_row_binary(inner, r)?;
                    keys.push(dict.rows() as u64 - 1);
                }
            }
            (ColumnData::Variant(v), DataType::Variant(alts)) => {
                let d = r.u8()?;
                if d == NULL_DISCRIMINATOR {
                    v.push_null();
                } else {
                    let k = usize::from(d);
                    let (Some(col), Some(t)) = (v.variants.get_mut(k), alts.get(k)) else {
                        return Err(ProtoError::violation(format!("Variant discriminator {d} out of range")));
                    };
                    let at = col.rows() as u64;
                    col.push_row_binary(t, r)?;
                    v.discriminators.push(d);
                    v.offsets.push(at);
                }
            }
            (_, t) => {
                return Err(ProtoError::ty(t.to_string(), "no RowBinary decoding for this type"));
            }
        }
        Ok(())
    }

    /// Appends the type's default value (0, empty, NULL).
    pub fn push_default(&mut self, ty: &DataType) -> Result<()> {
        let shape = ty.wire_shape();
        let ty = shape.as_ref();
        match (self, ty) {
            (ColumnData::Fixed { width, data }, _) => data.resize_zeroed(data.len() + *width),
            (ColumnData::String { offsets, data }, _) => offsets.push(data.len() as u64),
            (ColumnData::Nullable { nulls, inner }, DataType::Nullable(t)) => {
                nulls.push(1u8);
                inner.push_default(t)?;
            }
            (ColumnData::Array { offsets, inner }, _) => offsets.push(inner.rows() as u64),
            (ColumnData::Tuple(cols), DataType::Tuple(elems)) if cols.len() == elems.len() => {
                for (c, (_, t)) in cols.iter_mut().zip(elems) {
                    c.push_default(t)?;
                }
            }
            (ColumnData::LowCardinality { dict, key_width, keys, nullable }, DataType::LowCardinality(t)) => {
                let inner = match t.as_ref() {
                    DataType::Nullable(t) => t.as_ref(),
                    t => t,
                };
                start_row_keys(dict, key_width, keys, *nullable, inner)?;
                if *nullable {
                    keys.push(0u64);
                } else {
                    dict.push_default(inner)?;
                    keys.push(dict.rows() as u64 - 1);
                }
            }
            (ColumnData::Variant(v), _) => v.push_null(),
            (_, t) => return Err(ProtoError::ty(t.to_string(), "no default value for this column shape")),
        }
        Ok(())
    }
}

/// Before the first row appended to a LowCardinality column: u64 keys, and for
/// LowCardinality(Nullable(T)) the NULL slot at key 0.
fn start_row_keys(
    dict: &mut ColumnData,
    key_width: &mut u8,
    keys: &mut AlignedBuf,
    nullable: bool,
    inner: &DataType,
) -> Result<()> {
    if keys.is_empty() {
        if *key_width != 8 || dict.rows() > 0 {
            dict.clear();
        }
        *key_width = 8;
        if nullable && dict.rows() == 0 {
            dict.push_default(inner)?;
        }
    } else if *key_width != 8 {
        return Err(ProtoError::violation("LowCardinality keys are not 64-bit"));
    }
    Ok(())
}

// ===========================================================================
// JSON
// ===========================================================================

/// Storage of a `JSON(...)` column.
#[derive(Debug)]
#[non_exhaustive]
pub struct JsonData {
    /// Serialization version read from the prefix: [`JSON_V1`], [`JSON_STRING`],
    /// [`JSON_V2`] or [`JSON_FLATTENED`].
    pub version: u64,
    /// V1 only: the first count of the structure.
    pub v1_max_paths: u64,
    /// Typed paths from the type, sorted by path.
    pub typed_paths: Vec<String>,
    /// Their types.
    pub typed_types: Vec<DataType>,
    /// One column per typed path.
    pub typed: Vec<ColumnData>,
    /// Dynamic paths of this block (FLATTENED: every non-typed path).
    pub dynamic_paths: Vec<String>,
    /// One Dynamic column per dynamic path.
    pub dynamic: Vec<ColumnData>,
    /// V1/V2 shared data: `Map(String, String)` as `Array(Tuple(String, String))`
    /// (path → binary type + RowBinary value), one map per row.
    pub shared: Box<ColumnData>,
    /// STRING: the JSON text of each row.
    pub text: Box<ColumnData>,
    rows: usize,
}

impl JsonData {
    /// Empty storage for a JSON type.
    pub fn new(ty: &JsonType, pool: &mut BufferPool) -> Result<JsonData> {
        let mut typed = Vec::with_capacity(ty.typed_paths.len());
        for (_, t) in &ty.typed_paths {
            typed.push(ColumnData::for_type(t, pool)?);
        }
        Ok(JsonData {
            version: JSON_V2,
            v1_max_paths: 0,
            typed_paths: ty.typed_paths.iter().map(|(p, _)| p.clone()).collect(),
            typed_types: ty.typed_paths.iter().map(|(_, t)| t.clone()).collect(),
            typed,
            dynamic_paths: Vec::new(),
            dynamic: Vec::new(),
            shared: Box::new(shared_map_column(pool)),
            text: Box::new(ColumnData::String { offsets: pool.take(), data: pool.take() }),
            rows: 0,
        })
    }

    /// Rows held.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Empty storage with the same structure (paths read from the last prefix).
    pub(super) fn empty_like(&self, pool: &mut BufferPool) -> JsonData {
        JsonData {
            version: self.version,
            v1_max_paths: self.v1_max_paths,
            typed_paths: self.typed_paths.clone(),
            typed_types: self.typed_types.clone(),
            typed: self.typed.iter().map(|c| c.empty_like(pool)).collect(),
            dynamic_paths: self.dynamic_paths.clone(),
            dynamic: self.dynamic.iter().map(|c| c.empty_like(pool)).collect(),
            shared: Box::new(shared_map_column(pool)),
            text: Box::new(ColumnData::String { offsets: pool.take(), data: pool.take() }),
            rows: 0,
        }
    }

    pub(super) fn recycle(self, pool: &mut BufferPool) {
        self.typed.into_iter().for_each(|c| c.recycle(pool));
        self.dynamic.into_iter().for_each(|c| c.recycle(pool));
        self.shared.recycle(pool);
        self.text.recycle(pool);
    }

    pub(super) fn clear(&mut self) {
        self.typed.iter_mut().for_each(ColumnData::clear);
        self.dynamic.iter_mut().for_each(ColumnData::clear);
        self.shared.clear();
        self.text.clear();
        self.rows = 0;
    }

    pub(super) fn read_prefix(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let version = r.u64_le()?;
        match version {
            JSON_STRING => {
                self.version = version;
                Ok(())
            }
            JSON_V1 | JSON_V2 | JSON_FLATTENED => {
                let v1 = if version == JSON_V1 { r.varuint()? } else { 0 };
                let paths = read_names(r, "JSON dynamic paths", MAX_JSON_PATHS)?;
                if paths != self.dynamic_paths {
                    let mut pool = BufferPool::new();
                    let cols =
                        paths.iter().map(|_| ColumnData::Dynamic(Box::new(DynamicData::new(&mut pool)))).collect();
                    std::mem::replace(&mut self.dynamic, cols).into_iter().for_each(|c| c.recycle(&mut pool));
                    self.dynamic_paths = paths;
                }
                self.version = version;
                self.v1_max_paths = v1;
                self.typed.iter_mut().try_for_each(|c| c.read_prefix(r))?;
                self.dynamic.iter_mut().try_for_each(|c| c.read_prefix(r))
            }
            JSON_V3 => Err(ProtoError::ty(
                "JSON",
                format!(
                    "serialization version V3 is not implemented; set {JSON_AS_STRING_SETTING} = 1 to \
                     receive JSON as text, or {FLATTENED_SETTING} = 1 for the FLATTENED form"
                ),
            )),
            v => Err(ProtoError::violation(format!("unknown JSON serialization version {v}"))),
        }
    }

    pub(super) fn read_body(
        &mut self,
        r: &mut Reader<'_>,
        rows: usize,
        elems: Option<&[SerInfo]>,
        layout: Layout,
        pool: &mut BufferPool,
    ) -> Result<()> {
        self.rows = rows;
        if rows == 0 {
            self.clear();
            return Ok(());
        }
        if self.version == JSON_STRING {
            // The text column goes through the row-by-row writer: VarUInt lengths at every revision.
            let plain = Layout { sized_strings: false, ..layout };
            self.text.read_data(r, rows, None, plain, pool)?;
            self.typed.iter_mut().for_each(ColumnData::clear);
            self.dynamic.iter_mut().for_each(ColumnData::clear);
            self.shared.clear();
            return Ok(());
        }
        self.text.clear();
        for (i, c) in self.typed.iter_mut().enumerate() {
            c.read_data(r, rows, elems.and_then(|e| e.get(i)), layout, pool)?;
        }
        for c in &mut self.dynamic {
            c.read_data(r, rows, None, layout, pool)?;
        }
        if self.version == JSON_FLATTENED {
            self.shared.clear();
            Ok(())
        } else {
            // The shared data's paths and values keep VarUInt lengths at every revision.
            self.shared.read_data(r, rows, None, Layout { sized_strings: false, ..layout }, pool)
        }
    }

    pub(super) fn write_prefix(&self, out: &mut Vec<u8>) {
        out.put_u64_le(self.version);
        if self.version == JSON_STRING {
            return;
        }
        if self.version == JSON_V1 {
            out.put_varuint(self.v1_max_paths);
        }
        out.put_varuint(self.dynamic_paths.len() as u64);
        for p in &self.dynamic_paths {
            out.put_string(p);
        }
        self.typed.iter().for_each(|c| c.write_prefix(out));
        self.dynamic.iter().for_each(|c| c.write_prefix(out));
    }

    pub(super) fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        if self.version == JSON_STRING {
            return self.text.write_data(out, Layout { sized_strings: false, ..layout });
        }
        for c in self.typed.iter().chain(&self.dynamic) {
            c.write_data(out, layout)?;
        }
        if self.version != JSON_FLATTENED {
            self.shared.write_data(out, Layout { sized_strings: false, ..layout })?;
        }
        Ok(())
    }
}

fn shared_map_column(pool: &mut BufferPool) -> ColumnData {
    ColumnData::Array {
        offsets: pool.take(),
        inner: Box::new(ColumnData::Tuple(vec![
            ColumnData::String { offsets: pool.take(), data: pool.take() },
            ColumnData::String { offsets: pool.take(), data: pool.take() },
        ])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::ColumnView;

    const OLD: Layout = Layout { sized_strings: false, sized_dict_strings: false };
    const NEW: Layout = Layout { sized_strings: true, sized_dict_strings: false };

    /// Decodes prefix + data, checks the bytes are consumed and re-encode unchanged,
    /// and that every strict prefix of the input is `Incomplete`.
    fn round_trip(ty: &str, rows: usize, bytes: &[u8], layout: Layout) -> ColumnData {
        let mut pool = BufferPool::new();
        let t = DataType::parse(ty).unwrap();
        let mut c = ColumnData::for_type(&t, &mut pool).unwrap();
        let mut r = Reader::new(bytes);
        c.read_prefix(&mut r).unwrap();
        c.read_data(&mut r, rows, None, layout, &mut pool).unwrap();
        assert_eq!(r.remaining(), 0, "{ty}");
        assert_eq!(c.rows(), rows, "{ty}");
        let mut out = Vec::new();
        c.write_prefix(&mut out);
        c.write_data(&mut out, layout).unwrap();
        assert_eq!(out, bytes, "{ty}");
        for cut in 0..bytes.len() {
            let mut c = ColumnData::for_type(&t, &mut pool).unwrap();
            let mut r = Reader::new(&bytes[..cut]);
            let res = c.read_prefix(&mut r).and_then(|_| c.read_data(&mut r, rows, None, layout, &mut pool));
            assert!(matches!(res, Err(ProtoError::Incomplete { .. })), "{ty} cut at {cut}: {res:?}");
        }
        c
    }

    fn view<'a>(ty: &'a DataType, name: &'a str, c: &'a ColumnData) -> ColumnView<'a> {
        ColumnView::new("c", ty, name, c)
    }

    #[test]
    fn variant_basic_as_the_server_sends_it() {
        // Variant(Array(UInt8), String, UInt64, UInt8) rows: 1::UInt64, 'ab', [1,2], NULL, 7::UInt8 (revision 54492).
        let mut b = Vec::new();
        b.put_u64_le(VARIANT_MODE_BASIC);
        b.extend_from_slice(&[2, 1, 0, 255, 3]);
        b.put_u64_le(2);
        b.extend_from_slice(&[1, 2]);
        b.put_u64_le(2);
        b.extend_from_slice(b"ab");
        b.put_u64_le(1);
        b.push(7);
        let ty = "Variant(Array(UInt8), String, UInt64, UInt8)";
        let c = round_trip(ty, 5, &b, NEW);
        let t = DataType::parse(ty).unwrap();
        let v = view(&t, ty, &c);
        let var = v.as_variant().unwrap();
        assert_eq!(var.row(0), Some((2, 0)));
        assert_eq!(var.row(3), None);
        assert_eq!(var.variant(2).unwrap().values::<u64>().unwrap(), &[1]);
        assert_eq!(var.variant(1).unwrap().as_strings().unwrap().str(0).unwrap(), "ab");
    }

    #[test]
    fn variant_compact_granules() {
        // COMPACT: one single-discriminator granule of 2 rows, then a plain one of 3.
        let mut b = Vec::new();
        b.put_u64_le(VARIANT_MODE_COMPACT);
        let ty = DataType::parse("Variant(String, UInt32)").unwrap();
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(&ty, &mut pool).unwrap();
        b.put_varuint(2);
        b.push(GRANULE_SINGLE);
        b.push(1);
        b.put_varuint(3);
        b.push(GRANULE_PLAIN);
        b.extend_from_slice(&[0, 255, 1]);
        b.extend_from_slice(&[1, b'x']);
        for v in [5u32, 6, 7] {
            b.put_u32_le(v);
        }
        let mut r = Reader::new(&b);
        c.read_prefix(&mut r).unwrap();
        c.read_data(&mut r, 5, None, OLD, &mut pool).unwrap();
        assert_eq!(r.remaining(), 0);
        let ColumnData::Variant(v) = &c else { panic!() };
        assert_eq!(v.discriminators.as_bytes(), &[1, 1, 0, 255, 1]);
        assert_eq!(v.offsets.typed::<u64>().unwrap(), &[0, 1, 0, 0, 2]);
        // Written back as one plain granule, and read again to the same rows.
        let mut out = Vec::new();
        c.write_prefix(&mut out);
        c.write_data(&mut out, OLD).unwrap();
        let mut d = ColumnData::for_type(&ty, &mut pool).unwrap();
        let mut r = Reader::new(&out);
        d.read_prefix(&mut r).unwrap();
        d.read_data(&mut r, 5, None, OLD, &mut pool).unwrap();
        let ColumnData::Variant(w) = &d else { panic!() };
        assert_eq!(w.discriminators.as_bytes(), v.discriminators.as_bytes());
        // A granule larger than the rows left is a violation.
        let mut bad = Vec::new();
        bad.put_u64_le(VARIANT_MODE_COMPACT);
        bad.put_varuint(9);
        bad.push(GRANULE_SINGLE);
        bad.push(0);
        let mut r = Reader::new(&bad);
        c.read_prefix(&mut r).unwrap();
        assert!(matches!(c.read_data(&mut r, 5, None, OLD, &mut pool), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn variant_bad_discriminator_and_mode() {
        let mut pool = BufferPool::new();
        let ty = DataType::parse("Variant(String, UInt32)").unwrap();
        let mut c = ColumnData::for_type(&ty, &mut pool).unwrap();
        let mut b = Vec::new();
        b.put_u64_le(0);
        b.extend_from_slice(&[2]);
        let mut r = Reader::new(&b);
        c.read_prefix(&mut r).unwrap();
        assert!(matches!(c.read_data(&mut r, 1, None, OLD, &mut pool), Err(ProtoError::Violation(_))));
        let mut b = Vec::new();
        b.put_u64_le(7);
        assert!(matches!(c.read_prefix(&mut Reader::new(&b)), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn variant_gather_for_replicated_rows() {
        let mut b = Vec::new();
        b.put_u64_le(0);
        b.extend_from_slice(&[1, 0, 255, 1]);
        b.extend_from_slice(&[1, b'a']);
        b.put_u32_le(10);
        b.put_u32_le(20);
        let ty = DataType::parse("Variant(String, UInt32)").unwrap();
        let src = round_trip("Variant(String, UInt32)", 4, &b, OLD);
        let mut pool = BufferPool::new();
        let mut dst = ColumnData::for_type(&ty, &mut pool).unwrap();
        dst.take_from(&src, &[3, 3, u64::MAX, 1, 0], &mut pool).unwrap();
        let v = view(&ty, "Variant(String, UInt32)", &dst);
        let var = v.as_variant().unwrap();
        assert_eq!(var.discriminators(), &[1, 1, 255, 0, 1]);
        assert_eq!(var.variant(1).unwrap().values::<u32>().unwrap(), &[20, 20, 10]);
        assert_eq!(var.row(4), Some((1, 2)));
    }

    /// Dynamic V2 with two declared types and three shared values, as 26.9 sends it at 54492.
    fn dynamic_v2_bytes() -> Vec<u8> {
        let mut b = Vec::new();
        b.put_u64_le(DYNAMIC_V2);
        b.put_varuint(2);
        b.put_string("String");
        b.put_string("UInt8");
        b.put_u64_le(VARIANT_MODE_BASIC);
        // Alternatives by name: SharedVariant, String, UInt8.
        b.extend_from_slice(&[2, 1, 0, 255, 0, 0]);
        // Shared: Array(UInt8) [1,2]; Date 2020-01-02; Tuple(UInt8, String) (1,'x').
        let shared: [&[u8]; 3] =
            [&[0x1e, 0x01, 0x02, 0x01, 0x02], &[0x0f, 0x57, 0x47], &[0x1f, 0x02, 0x01, 0x15, 0x01, 0x01, b'x']];
        let mut end = 0u64;
        for s in shared {
            end += s.len() as u64;
            b.put_u64_le(end);
        }
        for s in shared {
            b.extend_from_slice(s);
        }
        b.put_u64_le(2);
        b.extend_from_slice(b"ab");
        b.push(1);
        b
    }

    #[test]
    fn dynamic_v2_shared_values_are_typed() {
        let b = dynamic_v2_bytes();
        let c = round_trip("Dynamic", 6, &b, NEW);
        let ty = DataType::Dynamic { max_types: None };
        let v = view(&ty, "Dynamic", &c);
        let d = v.as_dynamic().unwrap();
        assert_eq!(d.declared_types(), ["String", "UInt8"]);
        assert_eq!(d.type_count(), 5);
        let names: Vec<_> = (0..6).map(|i| d.row_type_name(i)).collect();
        assert_eq!(
            names,
            [Some("UInt8"), Some("String"), Some("Array(UInt8)"), None, Some("Date"), Some("Tuple(UInt8, String)")]
        );
        let (col, at) = d.value(5).unwrap().unwrap();
        assert_eq!(col.tuple_element(1).unwrap().as_strings().unwrap().str(at).unwrap(), "x");
        let (col, at) = d.value(4).unwrap().unwrap();
        assert_eq!(col.values::<u16>().unwrap()[at], 18263);
        let (col, at) = d.value(2).unwrap().unwrap();
        let a = col.as_array().unwrap();
        assert_eq!(a.inner().values::<u8>().unwrap()[a.range(at)].to_vec(), [1, 2]);
        assert_eq!(d.shared_bytes(4), Some(&[0x0f, 0x57, 0x47][..]));
        assert_eq!(d.shared_bytes(1), None);
    }

    #[test]
    fn dynamic_reuses_its_structure_across_blocks() {
        let b = dynamic_v2_bytes();
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(&DataType::Dynamic { max_types: None }, &mut pool).unwrap();
        for _ in 0..3 {
            let mut r = Reader::new(&b);
            c.read_prefix(&mut r).unwrap();
            c.read_data(&mut r, 6, None, NEW, &mut pool).unwrap();
            let ColumnData::Dynamic(d) = &c else { panic!() };
            assert_eq!(d.types.len(), 5);
        }
        // An empty block keeps the shape and has no rows.
        c.read_data(&mut Reader::new(&[]), 0, None, NEW, &mut pool).unwrap();
        assert_eq!(c.rows(), 0);
    }

    #[test]
    fn empty_like_keeps_the_prefix_structure() {
        // Sparse and replicated columns decode into an `empty_like` copy after the
        // prefix was read into the original: the copy must decode the same data.
        let b = dynamic_v2_bytes();
        let mut pool = BufferPool::new();
        let ty = DataType::parse("Array(Dynamic)").unwrap();
        let mut c = ColumnData::for_type(&ty, &mut pool).unwrap();
        let mut arr = Vec::new();
        arr.extend_from_slice(&b[..b.len()]);
        let prefix_len = {
            let mut r = Reader::new(&b);
            let mut d = ColumnData::for_type(&DataType::Dynamic { max_types: None }, &mut pool).unwrap();
            d.read_prefix(&mut r).unwrap();
            r.position()
        };
        let mut r = Reader::new(&b[..prefix_len]);
        c.read_prefix(&mut r).unwrap();
        let ColumnData::Array { inner, .. } = &c else { panic!() };
        let mut copy = inner.empty_like(&mut pool);
        let mut r = Reader::new(&b[prefix_len..]);
        copy.read_data(&mut r, 6, None, NEW, &mut pool).unwrap();
        assert_eq!(r.remaining(), 0);
        let ColumnData::Dynamic(d) = &copy else { panic!() };
        assert_eq!(d.types.len(), 5);
        // Gathering Dynamic rows (sparse/replicated) is refused, not guessed.
        let mut dst = inner.empty_like(&mut pool);
        assert!(matches!(dst.take_from(&copy, &[0], &mut pool), Err(ProtoError::Type { .. })));
    }

    #[test]
    fn dynamic_flattened_index_widths() {
        // 300 types: indexes are UInt16, NULL = 300.
        let mut b = Vec::new();
        b.put_u64_le(DYNAMIC_FLATTENED);
        b.put_varuint(300);
        for i in 0..300 {
            b.put_string(format!("FixedString({})", i + 1));
        }
        for idx in [299u16, 300, 0] {
            b.extend_from_slice(&idx.to_le_bytes());
        }
        b.push(b'z');
        b.extend_from_slice(&[b'y'; 300]);
        let c = round_trip("Dynamic", 3, &b, OLD);
        let ty = DataType::Dynamic { max_types: None };
        let v = view(&ty, "Dynamic", &c);
        let d = v.as_dynamic().unwrap();
        assert_eq!(d.row_type(0), Some(&DataType::FixedString(300)));
        assert!(d.is_null(1));
        let (col, at) = d.value(2).unwrap().unwrap();
        assert_eq!(col.as_fixed_strings().unwrap(), (&b"z"[..], 1));
        assert_eq!(at, 0);
        // An index beyond NULL is a violation.
        let mut bad = Vec::new();
        bad.put_u64_le(DYNAMIC_FLATTENED);
        bad.put_varuint(1);
        bad.put_string("UInt8");
        bad.push(2);
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(&ty, &mut pool).unwrap();
        let mut r = Reader::new(&bad);
        c.read_prefix(&mut r).unwrap();
        assert!(matches!(c.read_data(&mut r, 1, None, OLD, &mut pool), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn dynamic_v2_with_too_many_types_is_refused() {
        let mut b = Vec::new();
        b.put_u64_le(DYNAMIC_V2);
        b.put_varuint(255);
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(&DataType::Dynamic { max_types: None }, &mut pool).unwrap();
        assert!(matches!(c.read_prefix(&mut Reader::new(&b)), Err(ProtoError::TooLarge { .. })));
    }

    #[test]
    fn dynamic_v3_and_unknown_versions_are_errors() {
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(&DataType::Dynamic { max_types: None }, &mut pool).unwrap();
        let mut b = Vec::new();
        b.put_u64_le(DYNAMIC_V3);
        let e = c.read_prefix(&mut Reader::new(&b)).unwrap_err();
        assert!(matches!(&e, ProtoError::Type { reason, .. } if reason.contains(FLATTENED_SETTING)), "{e}");
        let mut b = Vec::new();
        b.put_u64_le(9);
        assert!(matches!(c.read_prefix(&mut Reader::new(&b)), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn dynamic_undecodable_shared_value_is_flagged_not_garbage() {
        // A shared AggregateFunction value: its type cannot even be decoded.
        let mut b = Vec::new();
        b.put_u64_le(DYNAMIC_V2);
        b.put_varuint(0);
        b.put_u64_le(VARIANT_MODE_BASIC);
        b.extend_from_slice(&[0, 0]);
        b.put_u64_le(3);
        b.put_u64_le(5);
        b.extend_from_slice(&[0x25, 0xaa, 0xbb, 0x01, 0x07]);
        let c = round_trip("Dynamic", 2, &b, NEW);
        let ColumnData::Dynamic(d) = &c else { panic!() };
        assert_eq!(d.types.len(), 2);
        let ty = DataType::Dynamic { max_types: None };
        let v = view(&ty, "Dynamic", &c);
        let dv = v.as_dynamic().unwrap();
        assert!(matches!(dv.value(0), Err(ProtoError::Type { .. })));
        assert_eq!(dv.row_type_name(1), Some("UInt8"));
        assert_eq!(dv.value(1).unwrap().unwrap().0.values::<u8>().unwrap(), &[7]);
        // A truncated shared value is a violation.
        let mut bad = b.clone();
        let n = bad.len();
        bad[n - 2] = 0x0a; // Int64 needs 8 bytes, 1 is left
        let mut pool = BufferPool::new();
        let mut c = ColumnData::for_type(&ty, &mut pool).unwrap();
        let mut r = Reader::new(&bad);
        c.read_prefix(&mut r).unwrap();
        assert!(matches!(c.read_data(&mut r, 2, None, NEW, &mut pool), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn row_binary_shapes() {
        let mut pool = BufferPool::new();
        let cases: &[(&str, &[u8], usize)] = &[
            ("Nullable(String)", &[1, 0, 2, b'h', b'i'], 2),
            ("Array(Nullable(UInt8))", &[3, 0, 1, 1, 0, 2], 1),
            ("Map(String, Array(UInt8))", &[2, 1, b'a', 1, 9, 1, b'b', 0], 1),
            ("Tuple(a UInt16, b String)", &[1, 0, 1, b'x'], 1),
            ("LowCardinality(Nullable(String))", &[1, 0, 1, b'q', 0, 1, b'r'], 3),
            ("Variant(String, UInt8)", &[1, 5, 255, 0, 1, b'z'], 3),
        ];
        for (ty, bytes, rows) in cases {
            let t = DataType::parse(ty).unwrap();
            assert_eq!(row_binary_unsupported(&t), None, "{ty}");
            let mut c = ColumnData::for_type(&t, &mut pool).unwrap();
            let mut r = Reader::new(bytes);
            for _ in 0..*rows {
                c.push_row_binary(&t, &mut r).unwrap();
            }
            assert_eq!(r.remaining(), 0, "{ty}");
            assert_eq!(c.rows(), *rows, "{ty}");
            // The rows re-encode as a regular column.
            let mut out = Vec::new();
            c.write_prefix(&mut out);
            c.write_data(&mut out, NEW).unwrap();
            let mut d = ColumnData::for_type(&t, &mut pool).unwrap();
            let mut r = Reader::new(&out);
            d.read_prefix(&mut r).unwrap();
            d.read_data(&mut r, *rows, None, NEW, &mut pool).unwrap();
            assert_eq!(r.remaining(), 0, "{ty}");
        }
        let lc = DataType::parse("LowCardinality(Nullable(String))").unwrap();
        let mut c = ColumnData::for_type(&lc, &mut pool).unwrap();
        let mut r = Reader::new(&[1, 0, 1, b'q']);
        c.push_row_binary(&lc, &mut r).unwrap();
        c.push_row_binary(&lc, &mut r).unwrap();
        let name = lc.to_string();
        let v = view(&lc, &name, &c);
        let l = v.as_low_cardinality().unwrap();
        assert!(l.is_null(0));
        assert_eq!(l.strings().unwrap().str(l.key(1)).unwrap(), "q");
        for ty in ["JSON", "Dynamic", "Array(Dynamic)", "Nothing", "Array(Tuple())"] {
            assert!(row_binary_unsupported(&DataType::parse(ty).unwrap()).is_some(), "{ty}");
        }
        // An array longer than the bytes left is rejected before looping.
        let t = DataType::parse("Array(UInt8)").unwrap();
        let mut c = ColumnData::for_type(&t, &mut pool).unwrap();
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(matches!(c.push_row_binary(&t, &mut r), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn json_string_form_keeps_varuint_lengths() {
        let mut b = Vec::new();
        b.put_u64_le(JSON_STRING);
        b.put_string("{\"a\":1}");
        b.put_string("{}");
        // Same bytes whatever the revision's string layout.
        for layout in [OLD, NEW] {
            let c = round_trip("JSON(a UInt32)", 2, &b, layout);
            let t = DataType::parse("JSON(a UInt32)").unwrap();
            let v = view(&t, "JSON(a UInt32)", &c);
            let j = v.as_json().unwrap();
            assert_eq!(j.text(0).unwrap(), "{\"a\":1}");
            assert_eq!(j.text(1).unwrap(), "{}");
            assert!(j.paths(0).is_err());
        }
    }

    #[test]
    fn json_v2_with_shared_data() {
        // JSON(a UInt32): dynamic path `b` (Dynamic V2 of String), shared path `c` = Bool true in row 1.
        let mut b = Vec::new();
        b.put_u64_le(JSON_V2);
        b.put_varuint(1);
        b.put_string("b");
        b.put_u64_le(DYNAMIC_V2);
        b.put_varuint(1);
        b.put_string("String");
        b.put_u64_le(VARIANT_MODE_BASIC);
        b.put_u32_le(1);
        b.put_u32_le(2);
        // b: SharedVariant = 0, String = 1
        b.extend_from_slice(&[1, 255]);
        b.put_u64_le(1);
        b.push(b'x');
        // shared data: offsets, then paths and values with VarUInt lengths.
        b.put_u64_le(0);
        b.put_u64_le(1);
        b.put_string("c");
        b.put_string([0x2d, 0x01]);
        let c = round_trip("JSON(a UInt32)", 2, &b, NEW);
        let t = DataType::parse("JSON(a UInt32)").unwrap();
        let v = view(&t, "JSON(a UInt32)", &c);
        let j = v.as_json().unwrap();
        assert_eq!(j.paths(0).unwrap(), ["a", "b"]);
        assert_eq!(j.paths(1).unwrap(), ["a", "c"]);
        let c1 = j.path_value(1, "c").unwrap().unwrap();
        assert_eq!(c1.data_type(), &DataType::Bool);
        assert_eq!(c1.view().0.values::<u8>().unwrap(), &[1]);
        assert!(j.path_value(1, "b").unwrap().is_none());
        assert!(j.path_value(0, "zz").unwrap().is_none());
        let a = j.path_value(1, "a").unwrap().unwrap();
        let (a, i) = a.view();
        assert_eq!(a.values::<u32>().unwrap()[i], 2);
        let e = j.text(0).unwrap_err();
        assert!(e.to_string().contains(JSON_AS_STRING_SETTING), "{e}");
    }
}
