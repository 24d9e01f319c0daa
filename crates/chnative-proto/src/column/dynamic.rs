//! Dynamic columns.
//!
//! Wire layout, as ClickHouse 26.9 sends it in Native blocks (verified against
//! captures in `tests/data/captures/`, see `tests/golden_dynamic.rs`):
//! **Dynamic**: prefix = UInt64 structure version. V1 (1, revision < 54473):
//! `VarUInt n` twice, then n type names; V2 (2, revision ≥ 54473): `VarUInt n`, n type
//! names. Then the prefix of the inner `Variant(types…, SharedVariant)` whose
//! alternatives are sorted by name; SharedVariant is a String column whose values are
//! a binary type encoding followed by the value in RowBinary. FLATTENED (3, with
//! `output_format_native_use_flattened_dynamic_and_json_serialization = 1`): `VarUInt n`,
//! n type names, each type's prefix; data = one index per row (UInt8/16/32/64, the
//! smallest that holds n; n = NULL), then each type's rows.
//!
//! Dynamic V3 (version 4, binary type names) is not sent on the Native protocol by 26.9
//! and is rejected with [`ProtoError::Type`].

use crate::buffer::{AlignedBuf, BufferPool};
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::{Budget, Reader, WriteExt};

use super::check::{cannot_hold, Reason};
use super::codec::{not_measured, ColumnCodec};
use super::{
    checked_len, row_binary_unsupported, BodyForm, ColumnData, Layout, StringColumn, VariantData, NULL_DISCRIMINATOR,
};

/// Sparse and replicated layers gather rows by index, which Dynamic and JSON do not support.
pub(super) fn sparse_dynamic_unsupported() -> ProtoError {
    ProtoError::ty("Dynamic/JSON", "sparse or replicated serialization of Dynamic and JSON columns is not supported")
}

/// Dynamic structure version 1 (sent below revision 54473).
pub const DYNAMIC_V1: u64 = 1;
/// Dynamic structure version 2 (sent from revision 54473).
pub const DYNAMIC_V2: u64 = 2;
/// Dynamic FLATTENED structure (Native only, on request).
pub const DYNAMIC_FLATTENED: u64 = 3;
/// Dynamic V3 (binary type names; MergeTree only in 26.9).
pub const DYNAMIC_V3: u64 = 4;
/// Name of the overflow alternative inside Dynamic's Variant.
pub const SHARED_VARIANT: &str = "SharedVariant";

/// The setting that makes the server flatten Dynamic and JSON.
pub const FLATTENED_SETTING: &str = "output_format_native_use_flattened_dynamic_and_json_serialization";

/// Bound on the number of types a FLATTENED Dynamic prefix may announce.
const MAX_DYNAMIC_TYPES: u64 = 1 << 16;
/// V1/V2: the declared types plus SharedVariant must fit the Variant's 255 discriminators.
const MAX_VARIANT_DYNAMIC_TYPES: u64 = 254;
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
#[derive(Debug, Clone)]
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
        let shared = ColumnData::String(StringColumn::take(pool));
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
            ColumnData::String(StringColumn { offsets, data, .. }) => {
                let o = offsets.typed::<u64>().ok()?;
                let start = if k == 0 { 0 } else { o[k - 1] as usize };
                data.as_bytes().get(start..o[k] as usize)
            }
            _ => None,
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
                    cols.push(ColumnData::String(StringColumn::take(&mut pool)));
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
        let empty = VariantData::new(vec![ColumnData::String(StringColumn::take(&mut pool))], &mut pool);
        std::mem::replace(&mut self.variant, empty).recycle(&mut pool);
        self.shared_variant = 0;
        Ok(())
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
        if let Some(ColumnData::String(StringColumn { offsets, data, .. })) =
            self.variant.variants.get(self.shared_variant)
        {
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
}

impl ColumnCodec for DynamicData {
    /// Empty storage with the same structure (types read from the last prefix).
    fn empty_like(&self, pool: &mut BufferPool) -> DynamicData {
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

    fn recycle(self, pool: &mut BufferPool) {
        self.variant.recycle(pool);
        pool.give(self.flat_indexes);
        self.flat_columns.into_iter().for_each(|c| c.recycle(pool));
        self.shared_columns.into_iter().flatten().for_each(|c| c.recycle(pool));
        pool.give(self.row_types);
        pool.give(self.row_index);
    }

    fn clear(&mut self) {
        self.variant.clear();
        self.flat_indexes.clear();
        self.flat_columns.iter_mut().for_each(ColumnData::clear);
        self.shared_columns.iter_mut().flatten().for_each(ColumnData::clear);
        self.row_types.clear();
        self.row_index.clear();
        self.rows = 0;
    }

    fn read_prefix(&mut self, r: &mut Reader<'_>) -> Result<()> {
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

    fn read_body(&mut self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, pool: &mut BufferPool) -> Result<()> {
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
            self.read_flat_body(r, rows, form.layout, pool)
        } else {
            self.variant.read_body(r, rows, form.layout.into(), pool)?;
            self.map_variant_rows(pool)
        }
    }

    fn write_prefix(&self, out: &mut Vec<u8>) {
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

    fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
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

    fn rows(&self) -> usize {
        DynamicData::rows(self)
    }

    fn shape_name(&self) -> String {
        "Dynamic data".into()
    }

    not_measured!();

    fn append_from(&mut self, _: &Self, _: &[u64], _: &mut BufferPool, _: &mut Budget) -> Result<()> {
        Err(sparse_dynamic_unsupported())
    }

    /// Dynamic data can only come from a decoder, which checks it.
    fn check_fits(&self, ty: &DataType, _: Option<&[u8]>) -> Result<(), Reason> {
        match ty {
            DataType::Dynamic { .. } => Ok(()),
            _ => Err(cannot_hold(self, ty)),
        }
    }
}

pub(super) fn read_names(r: &mut Reader<'_>, what: &'static str, limit: u64) -> Result<Vec<String>> {
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
pub(super) fn decode_shared_value(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::test_util::*;
    use crate::column::ArrayColumn;
    use crate::column::VARIANT_MODE_BASIC;

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
        let ColumnData::Array(ArrayColumn { inner, .. }) = &c else { panic!() };
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
}
