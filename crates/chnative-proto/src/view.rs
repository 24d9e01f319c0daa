//! Borrowed, typed views of column data.
//!
//! Fixed-width columns are `&[T]` straight over the column buffer; strings are
//! one blob plus end offsets. Asking for a type the column does not have is a
//! [`ProtoError::TypeMismatch`] naming the column and both types.

use std::borrow::Cow;
use std::ops::Range;

use bytemuck::{Pod, Zeroable};

use crate::column::ColumnData;
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
