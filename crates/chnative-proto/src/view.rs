//! Borrowed, typed views of column data.
//!
//! Fixed-width columns are `&[T]` straight over the column buffer; strings are
//! one blob plus end offsets. Asking for a type the column does not have is a
//! [`ProtoError::TypeMismatch`] naming the column and both types.

use std::borrow::Cow;
use std::ops::Range;

use bytemuck::{Pod, Zeroable};

use crate::column::{ColumnData, DynamicData, JsonData, VariantData, JSON_AS_STRING_SETTING, JSON_STRING};
use crate::error::{ProtoError, Result};
use crate::types::DataType;

/// A Rust type whose memory is the Native wire layout of some ClickHouse types.
pub trait FixedValue: Pod {
    /// The Rust name, for error messages.
    const RUST_NAME: &'static str;
    /// Whether a column of type `ty` may be viewed as `[Self]`.
    fn accepts(ty: &DataType) -> bool;
}

macro_rules! fixed_value {
    ($t:ty, $($pat:pat_param)|+) => {
        impl FixedValue for $t {
            const RUST_NAME: &'static str = stringify!($t);
            fn accepts(ty: &DataType) -> bool {
                matches!(ty, $($pat)|+)
            }
        }
    };
}

use DataType as D;
fixed_value!(u8, D::UInt8 | D::Bool | D::Nothing);
fixed_value!(i8, D::Int8 | D::Enum8(_));
fixed_value!(u16, D::UInt16 | D::Date | D::BFloat16);
fixed_value!(i16, D::Int16 | D::Enum16(_));
fixed_value!(u32, D::UInt32 | D::DateTime(_) | D::Ipv4);
fixed_value!(i32, D::Int32 | D::Date32 | D::Time | D::Decimal { precision: 0..=9, .. });
fixed_value!(u64, D::UInt64);
fixed_value!(i64, D::Int64 | D::DateTime64(..) | D::Time64(_) | D::Interval(_) | D::Decimal { precision: 10..=18, .. });
fixed_value!(u128, D::UInt128);
fixed_value!(i128, D::Int128 | D::Decimal { precision: 19..=38, .. });
fixed_value!(f32, D::Float32);
fixed_value!(f64, D::Float64);

/// A UUID as the wire has it: the high and low 64-bit halves, each little-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Pod, Zeroable, Default)]
#[repr(C)]
pub struct WireUuid {
    /// Most significant half.
    pub high: u64,
    /// Least significant half.
    pub low: u64,
}

impl WireUuid {
    /// The UUID as a 128-bit integer (RFC 4122 byte order when written big-endian).
    pub fn as_u128(self) -> u128 {
        (u128::from(self.high) << 64) | u128::from(self.low)
    }
    /// From a 128-bit integer.
    pub fn from_u128(v: u128) -> Self {
        WireUuid { high: (v >> 64) as u64, low: v as u64 }
    }
}

impl std::fmt::Display for WireUuid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.as_u128();
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            (v >> 96) as u32,
            (v >> 80) as u16,
            (v >> 64) as u16,
            (v >> 48) as u16,
            v as u64 & 0xffff_ffff_ffff
        )
    }
}

impl FixedValue for WireUuid {
    const RUST_NAME: &'static str = "WireUuid";
    fn accepts(ty: &DataType) -> bool {
        matches!(ty, D::Uuid)
    }
}

impl FixedValue for [u8; 16] {
    const RUST_NAME: &'static str = "[u8; 16]";
    fn accepts(ty: &DataType) -> bool {
        matches!(ty, D::Ipv6 | D::FixedString(16) | D::Uuid | D::Int128 | D::UInt128)
    }
}

impl FixedValue for [u8; 32] {
    const RUST_NAME: &'static str = "[u8; 32]";
    fn accepts(ty: &DataType) -> bool {
        matches!(ty, D::Int256 | D::UInt256 | D::FixedString(32) | D::Decimal { precision: 39.., .. })
    }
}

/// A view of one column (or of a nested part of one).
#[derive(Debug, Clone)]
pub struct ColumnView<'a> {
    name: &'a str,
    ty: Cow<'a, DataType>,
    type_name: Cow<'a, str>,
    data: &'a ColumnData,
}

impl<'a> ColumnView<'a> {
    pub(crate) fn new(name: &'a str, ty: &'a DataType, type_name: &'a str, data: &'a ColumnData) -> Self {
        ColumnView { name, ty: Cow::Borrowed(ty), type_name: Cow::Borrowed(type_name), data }
    }

    fn child(&self, ty: DataType, data: &'a ColumnData) -> ColumnView<'a> {
        ColumnView { name: self.name, type_name: Cow::Owned(ty.to_string()), ty: Cow::Owned(ty), data }
    }

    /// The column's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The type name (as the server spelled it for top-level columns).
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    fn mismatch(&self, requested: &str) -> ProtoError {
        ProtoError::TypeMismatch {
            column: self.name.to_string(),
            requested: requested.to_string(),
            actual: self.type_name.to_string(),
        }
    }

    /// The column's type.
    pub fn data_type(&self) -> &DataType {
        &self.ty
    }

    /// The underlying storage.
    pub fn data(&self) -> &'a ColumnData {
        self.data
    }

    /// Rows in this view.
    pub fn len(&self) -> usize {
        self.data.rows()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values as `&[T]`, borrowed from the column buffer.
    pub fn values<T: FixedValue>(&self) -> Result<&'a [T]> {
        let ty = strip_simple_agg(&self.ty);
        match self.data {
            ColumnData::Fixed { data, width } if T::accepts(ty) && *width == std::mem::size_of::<T>() => {
                data.typed::<T>()
            }
            _ => Err(self.mismatch(T::RUST_NAME)),
        }
    }

    /// Any fixed-width column as raw little-endian bytes and the width per row.
    pub fn raw_fixed(&self) -> Result<(&'a [u8], usize)> {
        match self.data {
            ColumnData::Fixed { data, width } => Ok((data.as_bytes(), *width)),
            _ => Err(self.mismatch("a fixed-width type")),
        }
    }

    /// A String column.
    pub fn as_strings(&self) -> Result<StrView<'a>> {
        match (strip_simple_agg(&self.ty), self.data) {
            (D::String, ColumnData::String { offsets, data }) => {
                Ok(StrView { offsets: offsets.typed::<u64>()?, data: data.as_bytes() })
            }
            _ => Err(self.mismatch("String")),
        }
    }

    /// A FixedString(N) column: `(bytes, N)`; row i is `bytes[i*N..(i+1)*N]`.
    pub fn as_fixed_strings(&self) -> Result<(&'a [u8], usize)> {
        match (self.ty.as_ref(), self.data) {
            (D::FixedString(n), ColumnData::Fixed { data, .. }) => Ok((data.as_bytes(), *n)),
            _ => Err(self.mismatch("FixedString")),
        }
    }

    /// A Nullable(T) column.
    pub fn as_nullable(&self) -> Result<NullableView<'a>> {
        match (strip_simple_agg(&self.ty), self.data) {
            (D::Nullable(t), ColumnData::Nullable { nulls, inner }) => {
                Ok(NullableView { nulls: nulls.as_bytes(), inner: self.child((**t).clone(), inner) })
            }
            _ => Err(self.mismatch("Nullable")),
        }
    }

    /// An Array(T) column (also Map, Nested and the geo arrays).
    pub fn as_array(&self) -> Result<ArrayView<'a>> {
        let shape = self.ty.wire_shape();
        match (shape.as_ref(), self.data) {
            (D::Array(t), ColumnData::Array { offsets, inner }) => {
                Ok(ArrayView { offsets: offsets.typed::<u64>()?, inner: self.child((**t).clone(), inner) })
            }
            (D::Map(k, v), ColumnData::Array { offsets, inner }) => Ok(ArrayView {
                offsets: offsets.typed::<u64>()?,
                inner: self.child(D::Tuple(vec![(None, (**k).clone()), (None, (**v).clone())]), inner),
            }),
            _ => Err(self.mismatch("Array")),
        }
    }

    /// A Tuple column's element `i`.
    pub fn tuple_element(&self, i: usize) -> Result<ColumnView<'a>> {
        let shape = self.ty.wire_shape();
        match (shape.as_ref(), self.data) {
            (D::Tuple(elems), ColumnData::Tuple(cols)) => match (elems.get(i), cols.get(i)) {
                (Some((_, t)), Some(c)) => Ok(self.child(t.clone(), c)),
                _ => Err(ProtoError::violation(format!("column `{}` has no tuple element {i}", self.name))),
            },
            _ => Err(self.mismatch("Tuple")),
        }
    }

    /// A LowCardinality(T) column.
    pub fn as_low_cardinality(&self) -> Result<LowCardinalityView<'a>> {
        match (self.ty.as_ref(), self.data) {
            (D::LowCardinality(t), ColumnData::LowCardinality { dict, key_width, keys, nullable }) => {
                let inner_ty = match t.as_ref() {
                    D::Nullable(t) => (**t).clone(),
                    t => t.clone(),
                };
                let keys = match key_width {
                    1 => Keys::U8(keys.as_bytes()),
                    2 => Keys::U16(keys.typed()?),
                    4 => Keys::U32(keys.typed()?),
                    _ => Keys::U64(keys.typed()?),
                };
                Ok(LowCardinalityView { dict: self.child(inner_ty, dict), keys, nullable: *nullable })
            }
            _ => Err(self.mismatch("LowCardinality")),
        }
    }
}

impl<'a> ColumnView<'a> {
    /// A Variant(T1, …) column.
    pub fn as_variant(&self) -> Result<VariantView<'a>> {
        match (self.ty.as_ref(), self.data) {
            (D::Variant(alts), ColumnData::Variant(v)) if alts.len() == v.variants.len() => {
                Ok(VariantView { name: self.name, alts: alts.clone(), data: v })
            }
            _ => Err(self.mismatch("Variant")),
        }
    }

    /// A Dynamic column.
    pub fn as_dynamic(&self) -> Result<DynamicView<'a>> {
        match (self.ty.as_ref(), self.data) {
            (D::Dynamic { .. }, ColumnData::Dynamic(d)) => Ok(DynamicView { name: self.name, data: d }),
            _ => Err(self.mismatch("Dynamic")),
        }
    }

    /// A JSON column.
    pub fn as_json(&self) -> Result<JsonView<'a>> {
        match (self.ty.as_ref(), self.data) {
            (D::Json(j), ColumnData::Json(data)) => {
                Ok(JsonView { name: self.name, dynamic_type: j.dynamic_type(), data })
            }
            _ => Err(self.mismatch("JSON")),
        }
    }
}

fn strip_simple_agg(t: &DataType) -> &DataType {
    match t {
        D::SimpleAggregateFunction(_, t) => t,
        t => t,
    }
}

/// Strings as one UTF-8 (unchecked) blob plus end offsets.
#[derive(Debug, Clone, Copy)]
pub struct StrView<'a> {
    offsets: &'a [u64],
    data: &'a [u8],
}

impl<'a> StrView<'a> {
    /// Number of strings.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }
    /// Byte range of row `i` in [`Self::blob`]. Panics if `i >= len()`.
    pub fn range(&self, i: usize) -> Range<usize> {
        let start = if i == 0 { 0 } else { self.offsets[i - 1] as usize };
        start..self.offsets[i] as usize
    }
    /// Row `i` as bytes, zero-copy. Panics if `i >= len()`.
    pub fn bytes(&self, i: usize) -> &'a [u8] {
        &self.data[self.range(i)]
    }
    /// Row `i` as `&str`, validating UTF-8. Panics if `i >= len()`.
    pub fn str(&self, i: usize) -> std::result::Result<&'a str, std::str::Utf8Error> {
        std::str::from_utf8(self.bytes(i))
    }
    /// End offsets (u64 per row).
    pub fn offsets(&self) -> &'a [u64] {
        self.offsets
    }
    /// All bytes back to back.
    pub fn blob(&self) -> &'a [u8] {
        self.data
    }
    /// Iterates the rows as bytes.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        (0..self.len()).map(|i| self.bytes(i))
    }
}

/// A Nullable column: null map plus inner values.
#[derive(Debug, Clone)]
pub struct NullableView<'a> {
    nulls: &'a [u8],
    inner: ColumnView<'a>,
}

impl<'a> NullableView<'a> {
    /// One byte per row, 1 = NULL.
    pub fn nulls(&self) -> &'a [u8] {
        self.nulls
    }
    /// Whether row `i` is NULL.
    pub fn is_null(&self, i: usize) -> bool {
        self.nulls[i] != 0
    }
    /// The values (placeholders at NULL rows).
    pub fn inner(&self) -> &ColumnView<'a> {
        &self.inner
    }
}

/// An Array column: end offsets into the flattened elements.
#[derive(Debug, Clone)]
pub struct ArrayView<'a> {
    offsets: &'a [u64],
    inner: ColumnView<'a>,
}

impl<'a> ArrayView<'a> {
    /// Number of arrays.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }
    /// End offset of each row.
    pub fn offsets(&self) -> &'a [u64] {
        self.offsets
    }
    /// Element range of row `i` in [`Self::inner`]. Panics if `i >= len()`.
    pub fn range(&self, i: usize) -> Range<usize> {
        let start = if i == 0 { 0 } else { self.offsets[i - 1] as usize };
        start..self.offsets[i] as usize
    }
    /// The flattened elements.
    pub fn inner(&self) -> &ColumnView<'a> {
        &self.inner
    }
}

/// Keys of a LowCardinality column at their wire width.
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)]
pub enum Keys<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
}

impl Keys<'_> {
    /// Key of row `i` as an index into the dictionary. Panics if out of range.
    #[inline]
    pub fn get(&self, i: usize) -> usize {
        match self {
            Keys::U8(k) => k[i] as usize,
            Keys::U16(k) => k[i] as usize,
            Keys::U32(k) => k[i] as usize,
            Keys::U64(k) => k[i] as usize,
        }
    }
    /// Number of keys.
    pub fn len(&self) -> usize {
        match self {
            Keys::U8(k) => k.len(),
            Keys::U16(k) => k.len(),
            Keys::U32(k) => k.len(),
            Keys::U64(k) => k.len(),
        }
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A LowCardinality column: dictionary (decoded once per block) plus keys.
#[derive(Debug, Clone)]
pub struct LowCardinalityView<'a> {
    dict: ColumnView<'a>,
    keys: Keys<'a>,
    nullable: bool,
}

impl<'a> LowCardinalityView<'a> {
    /// The dictionary.
    pub fn dictionary(&self) -> &ColumnView<'a> {
        &self.dict
    }
    /// The keys.
    pub fn keys(&self) -> Keys<'a> {
        self.keys
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
    /// Whether row `i` is NULL (LowCardinality(Nullable(T)): key 0).
    pub fn is_null(&self, i: usize) -> bool {
        self.nullable && self.keys.get(i) == 0
    }
    /// For LowCardinality(String): the dictionary strings, looked up with [`Self::key`].
    pub fn strings(&self) -> Result<StrView<'a>> {
        self.dict.as_strings()
    }
    /// Dictionary index of row `i`.
    pub fn key(&self, i: usize) -> usize {
        self.keys.get(i)
    }
}

/// A Variant(T1, …) column: one discriminator per row and a dense column per alternative.
#[derive(Debug, Clone)]
pub struct VariantView<'a> {
    name: &'a str,
    alts: Vec<DataType>,
    data: &'a VariantData,
}

impl<'a> VariantView<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.rows()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// One byte per row: the alternative's index, 255 for NULL.
    pub fn discriminators(&self) -> &'a [u8] {
        self.data.discriminators.as_bytes()
    }
    /// The alternative of row `i`, `None` for NULL. Panics if `i >= len()`.
    pub fn discriminator(&self, i: usize) -> Option<usize> {
        let d = self.discriminators()[i];
        (d != crate::column::NULL_DISCRIMINATOR).then_some(usize::from(d))
    }
    /// Whether row `i` is NULL. Panics if `i >= len()`.
    pub fn is_null(&self, i: usize) -> bool {
        self.discriminator(i).is_none()
    }
    /// Row `i` as (alternative, index inside that alternative's column); `None` for NULL.
    pub fn row(&self, i: usize) -> Option<(usize, usize)> {
        let d = self.discriminator(i)?;
        let offsets = self.data.offsets.typed::<u64>().ok()?;
        Some((d, offsets[i] as usize))
    }
    /// Per row, the index inside its alternative (0 for NULL rows).
    pub fn offsets(&self) -> Result<&'a [u64]> {
        self.data.offsets.typed::<u64>()
    }
    /// Number of alternatives.
    pub fn variant_count(&self) -> usize {
        self.alts.len()
    }
    /// The alternatives' types, in discriminator order.
    pub fn variant_types(&self) -> &[DataType] {
        &self.alts
    }
    /// The column of alternative `k` (only the rows that chose it).
    pub fn variant(&self, k: usize) -> Result<ColumnView<'a>> {
        match (self.alts.get(k), self.data.variants.get(k)) {
            (Some(t), Some(c)) => Ok(ColumnView {
                name: self.name,
                type_name: Cow::Owned(t.to_string()),
                ty: Cow::Owned(t.clone()),
                data: c,
            }),
            _ => Err(ProtoError::violation(format!("column `{}` has no alternative {k}", self.name))),
        }
    }
    /// Row `i` as (view of its alternative's column, index in it); `None` for NULL.
    pub fn value(&self, i: usize) -> Result<Option<(ColumnView<'a>, usize)>> {
        match self.row(i) {
            None => Ok(None),
            Some((k, at)) => Ok(Some((self.variant(k)?, at))),
        }
    }
}

/// A Dynamic column: the types of this block's values and, per row, its type and value.
///
/// [`Self::types`] lists the types the block declares (in the order of its
/// structure prefix), then the types found among the values the server moved to the
/// shared variant (beyond `max_types`), which are decoded here into columns of
/// their own. Rows of a type with no RowBinary decoder here (e.g. a JSON value
/// inside Dynamic's shared variant) report [`ProtoError::Type`] from [`Self::value`];
/// their raw bytes stay available through [`Self::shared_bytes`].
#[derive(Debug, Clone, Copy)]
pub struct DynamicView<'a> {
    name: &'a str,
    data: &'a DynamicData,
}

impl<'a> DynamicView<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.rows()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The structure version the server used (1 = V1, 2 = V2, 3 = FLATTENED).
    pub fn version(&self) -> u64 {
        self.data.version
    }
    /// The type names this block's structure prefix declares (without SharedVariant).
    pub fn declared_types(&self) -> &'a [String] {
        &self.data.type_names
    }
    /// Number of types with values in this block's type list (declared + shared).
    pub fn type_count(&self) -> usize {
        self.data.types.len()
    }
    /// Type `t` of [`Self::types`].
    pub fn type_at(&self, t: usize) -> Option<&'a DataType> {
        self.data.types.get(t).map(|x| &x.ty)
    }
    /// Name of type `t` (the server's spelling for declared types).
    pub fn type_name_at(&self, t: usize) -> Option<&'a str> {
        self.data.types.get(t).map(|x| x.name.as_str())
    }
    /// All types: declared first, then those found in the shared variant.
    pub fn types(&self) -> impl Iterator<Item = &'a DataType> + 'a {
        self.data.types.iter().map(|x| &x.ty)
    }
    /// The column holding the values of type `t`.
    pub fn column(&self, t: usize) -> Result<ColumnView<'a>> {
        let entry = self
            .data
            .types
            .get(t)
            .ok_or_else(|| ProtoError::violation(format!("column `{}` has no Dynamic type {t}", self.name)))?;
        if let Some(why) = &entry.undecodable {
            return Err(ProtoError::ty(entry.name.clone(), format!("column `{}`: {why}", self.name)));
        }
        let data = self
            .data
            .type_column(t)
            .ok_or_else(|| ProtoError::violation(format!("column `{}`: Dynamic type {t} has no column", self.name)))?;
        Ok(ColumnView { name: self.name, type_name: Cow::Borrowed(&entry.name), ty: Cow::Borrowed(&entry.ty), data })
    }
    /// Index into [`Self::types`] of row `i`'s type; `None` for NULL. Panics if `i >= len()`.
    pub fn type_index(&self, i: usize) -> Option<usize> {
        self.data.row_type(i)
    }
    /// Row `i`'s type; `None` for NULL. Panics if `i >= len()`.
    pub fn row_type(&self, i: usize) -> Option<&'a DataType> {
        self.type_index(i).and_then(|t| self.type_at(t))
    }
    /// Row `i`'s type name, as `dynamicType()` prints it; `None` for NULL.
    pub fn row_type_name(&self, i: usize) -> Option<&'a str> {
        self.type_index(i).and_then(|t| self.type_name_at(t))
    }
    /// Whether row `i` is NULL. Panics if `i >= len()`.
    pub fn is_null(&self, i: usize) -> bool {
        self.type_index(i).is_none()
    }
    /// Row `i` as (view of its type's column, index in it); `None` for NULL.
    pub fn value(&self, i: usize) -> Result<Option<(ColumnView<'a>, usize)>> {
        match self.type_index(i) {
            None => Ok(None),
            Some(t) => Ok(Some((self.column(t)?, self.data.row_index(i)))),
        }
    }
    /// For a row the server stored in the shared variant (V1/V2): its bytes, a binary
    /// type encoding followed by the value in RowBinary.
    pub fn shared_bytes(&self, i: usize) -> Option<&'a [u8]> {
        self.data.shared_bytes(i)
    }
}

/// A JSON column.
///
/// Natively (V1, V2 and FLATTENED serializations) it exposes the typed paths, the
/// dynamic paths (as Dynamic columns) and the shared data of each row (path and
/// value, a binary type encoding followed by the value in RowBinary). The JSON
/// text of a row is available when the server sent the text form, which it does
/// when the query sets `output_format_native_write_json_as_string = 1`.
#[derive(Debug, Clone)]
pub struct JsonView<'a> {
    name: &'a str,
    dynamic_type: DataType,
    data: &'a JsonData,
}

impl<'a> JsonView<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.rows()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The serialization the server used (0 = V1, 1 = STRING, 2 = V2, 3 = FLATTENED).
    pub fn version(&self) -> u64 {
        self.data.version
    }
    /// True when the server sent JSON text (`output_format_native_write_json_as_string = 1`).
    pub fn is_text(&self) -> bool {
        self.data.version == JSON_STRING
    }
    /// The JSON texts, when the server sent text.
    pub fn texts(&self) -> Result<StrView<'a>> {
        match (self.is_text(), self.data.text.as_ref()) {
            (true, ColumnData::String { offsets, data }) => {
                Ok(StrView { offsets: offsets.typed::<u64>()?, data: data.as_bytes() })
            }
            _ => Err(ProtoError::ty(
                "JSON",
                format!(
                    "column `{}` arrived in the native JSON serialization; its text is only available when \
                     the query sets {JSON_AS_STRING_SETTING} = 1 (use the typed and dynamic path views otherwise)",
                    self.name
                ),
            )),
        }
    }
    /// Row `i` as JSON text (see [`Self::texts`]). Panics if `i >= len()`.
    pub fn text(&self, i: usize) -> Result<&'a str> {
        let t = self.texts()?;
        t.str(i).map_err(|_| ProtoError::violation(format!("column `{}`: JSON text is not UTF-8", self.name)))
    }
    /// The typed paths (from the type), sorted.
    pub fn typed_paths(&self) -> &'a [String] {
        &self.data.typed_paths
    }
    /// The column of typed path `k` (one value per row). Empty in the text form.
    pub fn typed(&self, k: usize) -> Result<ColumnView<'a>> {
        match (self.data.typed_paths.get(k), self.data.typed_types.get(k), self.data.typed.get(k)) {
            (Some(_), Some(t), Some(c)) => {
                Ok(ColumnView { name: self.name, type_name: Cow::Owned(t.to_string()), ty: Cow::Borrowed(t), data: c })
            }
            _ => Err(ProtoError::violation(format!("column `{}` has no typed path {k}", self.name))),
        }
    }
    /// The column of the typed path called `path`.
    pub fn typed_path(&self, path: &str) -> Option<ColumnView<'a>> {
        let k = self.data.typed_paths.iter().position(|p| p == path)?;
        self.typed(k).ok()
    }
    /// This block's dynamic paths (FLATTENED: every non-typed path), sorted.
    pub fn dynamic_paths(&self) -> &'a [String] {
        &self.data.dynamic_paths
    }
    /// The Dynamic column of dynamic path `k` (one value or NULL per row).
    pub fn dynamic(&self, k: usize) -> Result<DynamicView<'a>> {
        match self.data.dynamic.get(k) {
            Some(ColumnData::Dynamic(d)) => Ok(DynamicView { name: self.name, data: d }),
            _ => Err(ProtoError::violation(format!("column `{}` has no dynamic path {k}", self.name))),
        }
    }
    /// The Dynamic column of the dynamic path called `path`.
    pub fn dynamic_path(&self, path: &str) -> Option<DynamicView<'a>> {
        let k = self.data.dynamic_paths.iter().position(|p| p == path)?;
        self.dynamic(k).ok()
    }
    /// The type of the dynamic paths' columns.
    pub fn dynamic_type(&self) -> &DataType {
        &self.dynamic_type
    }

    fn native(&self) -> Result<()> {
        if self.is_text() {
            return Err(ProtoError::ty(
                "JSON",
                format!(
                    "column `{}` arrived as text ({JSON_AS_STRING_SETTING} = 1): it has no path columns",
                    self.name
                ),
            ));
        }
        Ok(())
    }

    /// The paths row `i` has a value for: every typed path, the dynamic paths that
    /// are not NULL in this row, then the row's shared-data paths. Panics if `i >= len()`.
    pub fn paths(&self, i: usize) -> Result<Vec<&'a str>> {
        self.native()?;
        let mut out: Vec<&'a str> = self.data.typed_paths.iter().map(String::as_str).collect();
        for (k, p) in self.data.dynamic_paths.iter().enumerate() {
            if !self.dynamic(k)?.is_null(i) {
                out.push(p);
            }
        }
        out.extend(self.shared(i)?.into_iter().map(|(p, _)| p));
        Ok(out)
    }

    /// The value of `path` in row `i`: `None` when the row has no value there (a
    /// dynamic path that is NULL, or a path absent from the row). Typed paths are
    /// always present (a Nullable typed path may hold NULL). Panics if `i >= len()`.
    pub fn path_value(&self, i: usize, path: &str) -> Result<Option<JsonValue<'a>>> {
        self.native()?;
        if let Some(k) = self.data.typed_paths.iter().position(|p| p == path) {
            return Ok(Some(JsonValue::Column(self.typed(k)?, i)));
        }
        if let Some(k) = self.data.dynamic_paths.iter().position(|p| p == path) {
            return Ok(self.dynamic(k)?.value(i)?.map(|(c, at)| JsonValue::Column(c, at)));
        }
        for (p, bytes) in self.shared(i)? {
            if p == path {
                return Ok(Some(JsonValue::Owned(OwnedValue::decode(bytes)?)));
            }
        }
        Ok(None)
    }
    /// Row `i`'s shared-data paths (V1/V2), with each value's bytes: a binary type
    /// encoding followed by the value in RowBinary. Panics if `i >= len()`.
    pub fn shared(&self, i: usize) -> Result<Vec<(&'a str, &'a [u8])>> {
        let ColumnData::Array { offsets, inner } = self.data.shared.as_ref() else {
            return Ok(Vec::new());
        };
        let offsets = offsets.typed::<u64>()?;
        if offsets.is_empty() {
            return Ok(Vec::new());
        }
        let ColumnData::Tuple(kv) = inner.as_ref() else {
            return Err(ProtoError::violation("JSON shared data has the wrong shape"));
        };
        let (Some(ColumnData::String { offsets: ko, data: kd }), Some(ColumnData::String { offsets: vo, data: vd })) =
            (kv.first(), kv.get(1))
        else {
            return Err(ProtoError::violation("JSON shared data has the wrong shape"));
        };
        let keys = StrView { offsets: ko.typed::<u64>()?, data: kd.as_bytes() };
        let values = StrView { offsets: vo.typed::<u64>()?, data: vd.as_bytes() };
        let start = if i == 0 { 0 } else { offsets[i - 1] as usize };
        let mut out = Vec::with_capacity(offsets[i] as usize - start);
        for k in start..offsets[i] as usize {
            let path = keys
                .str(k)
                .map_err(|_| ProtoError::violation(format!("column `{}`: JSON path is not UTF-8", self.name)))?;
            out.push((path, values.bytes(k)));
        }
        Ok(out)
    }
}

/// A value of a JSON path: in a column of the block, or decoded from shared data.
#[derive(Debug)]
pub enum JsonValue<'a> {
    /// Row `.1` of a typed-path or dynamic-path column.
    Column(ColumnView<'a>, usize),
    /// A value from the row's shared data.
    Owned(OwnedValue),
}

impl JsonValue<'_> {
    /// The value as (column view, row).
    pub fn view(&self) -> (ColumnView<'_>, usize) {
        match self {
            JsonValue::Column(c, i) => (c.clone(), *i),
            JsonValue::Owned(v) => (v.view(), 0),
        }
    }
    /// The value's type.
    pub fn data_type(&self) -> &DataType {
        match self {
            JsonValue::Column(c, _) => c.data_type(),
            JsonValue::Owned(v) => v.data_type(),
        }
    }
}

/// One value decoded on demand from its self-describing bytes: a binary type
/// encoding followed by the value in RowBinary (how Dynamic's shared variant and
/// JSON's shared data store values).
#[derive(Debug)]
pub struct OwnedValue {
    ty: DataType,
    type_name: String,
    data: ColumnData,
}

impl OwnedValue {
    /// Decodes `bytes`. A type with no RowBinary decoder here is a [`ProtoError::Type`].
    pub fn decode(bytes: &[u8]) -> Result<OwnedValue> {
        let mut r = crate::wire::Reader::new(bytes);
        let truncated = |e: ProtoError| match e {
            ProtoError::Incomplete { .. } => ProtoError::violation("self-describing value is truncated"),
            e => e,
        };
        let ty = DataType::decode_binary(&mut r).map_err(truncated)?;
        if let Some(why) = crate::column::row_binary_unsupported(&ty) {
            return Err(ProtoError::ty(ty.to_string(), why));
        }
        let mut pool = crate::buffer::BufferPool::new();
        let mut data = ColumnData::for_type(&ty, &mut pool)?;
        data.push_row_binary(&ty, &mut r).map_err(truncated)?;
        if r.remaining() != 0 {
            return Err(ProtoError::violation("self-describing value has trailing bytes"));
        }
        Ok(OwnedValue { type_name: ty.to_string(), ty, data })
    }
    /// The value's type.
    pub fn data_type(&self) -> &DataType {
        &self.ty
    }
    /// A one-row view of the value.
    pub fn view(&self) -> ColumnView<'_> {
        ColumnView {
            name: "",
            ty: Cow::Borrowed(&self.ty),
            type_name: Cow::Borrowed(&self.type_name),
            data: &self.data,
        }
    }
}
