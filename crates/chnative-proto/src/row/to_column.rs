//! [`ToColumn`]: writing row fields into column buffers for an INSERT.
//!
//! Each field type owns a buffer in the column's wire layout (a `Vec<T>` of
//! fixed-width values, one string blob plus end offsets, a null map plus inner
//! buffer, …). Rows are appended one at a time; the buffers are then lent to the
//! column-tier INSERT as they are, and cleared (keeping their capacity) for the
//! next block.

use std::collections::{BTreeMap, HashMap};
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::convert::{self, Decimal, I256};
use crate::qbit::Element as QBitElement;
use crate::view::{FixedValue, WireUuid};
use crate::DataType as D;

use crate::insert::InsertData;
use crate::row::{RowError as Error, RowErrorKind, RowResult as Result};

/// A column being filled row by row.
pub trait ColumnBuffer: Send {
    /// The rows so far, as INSERT data.
    fn data(&self) -> InsertData<'_>;
    /// Rows held.
    fn len(&self) -> usize;
    /// True when empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Keeps the first `rows` rows (keeps the allocation).
    fn truncate(&mut self, rows: usize);
    /// Appends a placeholder value (under a NULL of a Nullable column).
    fn push_default(&mut self);
    /// Bytes held (about what the rows take on the wire).
    fn bytes(&self) -> usize;
}

/// A Rust type that can be written to a column.
pub trait ToColumn {
    /// Its column buffer (owned: it holds copies of the values).
    type Buffer: ColumnBuffer + 'static;
    /// Whether values can be written to a column of type `ty` (LowCardinality stripped).
    fn writes(ty: &D) -> bool;
    /// An empty buffer for a column of type `ty` (one `writes` accepted).
    fn buffer(ty: &D) -> Result<Self::Buffer>;
    /// Appends `self`.
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()>;
    /// Whether `[Self]` may also be written to a String column (true for `u8`).
    const BYTE: bool = false;
    /// The values as bytes (only when [`Self::BYTE`]).
    fn as_bytes(_values: &[Self]) -> Option<&[u8]>
    where
        Self: Sized,
    {
        None
    }
    /// Whether `[Self]` may be written as one vector of a QBit column of this element
    /// type (`f32`: Float32 and BFloat16, `f64`: Float64).
    fn writes_qbit(_element: QBitElement) -> bool {
        false
    }
    /// Appends one vector (only when [`Self::writes_qbit`]).
    fn qbit_extend(_values: &[Self], _buf: &mut QBitBuffer) -> Option<Result<()>>
    where
        Self: Sized,
    {
        None
    }
}

/// QBit vectors, kept row-major and transposed into bit planes once per block
/// (on the first [`ColumnBuffer::data`] after a change).
#[derive(Debug)]
pub struct QBitBuffer {
    element: QBitElement,
    dim: usize,
    f32s: Vec<f32>,
    f64s: Vec<f64>,
    rows: usize,
    planes: std::sync::OnceLock<Option<crate::Column>>,
}

impl QBitBuffer {
    pub(super) fn new(element: QBitElement, dim: usize) -> Self {
        QBitBuffer { element, dim, f32s: Vec::new(), f64s: Vec::new(), rows: 0, planes: std::sync::OnceLock::new() }
    }

    fn check_dim(&self, len: usize) -> Result<()> {
        if len == self.dim {
            Ok(())
        } else {
            Err(Error::invalid_input(format!(
                "a vector of {len} values cannot be written to a QBit({}, {}) column",
                self.element.type_name(),
                self.dim
            )))
        }
    }

    pub(super) fn extend_f32(&mut self, values: &[f32]) -> Result<()> {
        self.check_dim(values.len())?;
        // BFloat16 is the upper half of a Float32: a value with more precision would be cut.
        if self.element == QBitElement::BFloat16 {
            if let Some(v) = values.iter().find(|v| v.to_bits() & 0xffff != 0) {
                return Err(Error::invalid_input(format!("{v} is not exactly a BFloat16 value")));
            }
        }
        self.f32s.extend_from_slice(values);
        self.rows += 1;
        self.planes.take();
        Ok(())
    }

    pub(super) fn extend_f64(&mut self, values: &[f64]) -> Result<()> {
        self.check_dim(values.len())?;
        self.f64s.extend_from_slice(values);
        self.rows += 1;
        self.planes.take();
        Ok(())
    }

    fn transpose(&self) -> Option<crate::Column> {
        use crate::qbit;
        match self.element {
            QBitElement::Float32 => qbit::column("", self.dim, &self.f32s).ok(),
            QBitElement::Float64 => qbit::column("", self.dim, &self.f64s).ok(),
            QBitElement::BFloat16 => {
                let bits: Vec<u16> = self.f32s.iter().map(|v| (v.to_bits() >> 16) as u16).collect();
                qbit::column("", self.dim, &bits).ok()
            }
        }
    }
}

impl ColumnBuffer for QBitBuffer {
    fn data(&self) -> InsertData<'_> {
        match self.planes.get_or_init(|| self.transpose()) {
            Some(c) => InsertData::Column(c),
            // Cannot happen for checked rows; the INSERT then fails its row-count check.
            None => InsertData::Strs(&[]),
        }
    }
    fn len(&self) -> usize {
        self.rows
    }
    fn truncate(&mut self, rows: usize) {
        self.rows = self.rows.min(rows);
        self.f32s.truncate(self.rows * self.dim);
        self.f64s.truncate(self.rows * self.dim);
        self.planes.take();
    }
    fn push_default(&mut self) {
        match self.element {
            QBitElement::Float64 => self.f64s.resize(self.f64s.len() + self.dim, 0.0),
            _ => self.f32s.resize(self.f32s.len() + self.dim, 0.0),
        }
        self.rows += 1;
        self.planes.take();
    }
    fn bytes(&self) -> usize {
        self.rows * self.dim * self.element.bytes()
    }
}

fn write_plain(ty: &D) -> &D {
    match ty {
        D::SimpleAggregateFunction(_, t) | D::LowCardinality(t) => write_plain(t),
        t => t,
    }
}

/// Whether `T` can be written to a column of type `ty` (LowCardinality and
/// SimpleAggregateFunction wrappers included): the check an INSERT of typed rows
/// makes before sending anything. It accepts every pair [`accepts`](super::accepts)
/// does: a wider number type writes to a narrower column the values that fit it.
pub fn writes<T: ToColumn + ?Sized>(ty: &D) -> bool {
    T::writes(write_plain(ty))
}

/// The buffer of a `T` for a column of type `ty` (LowCardinality included).
pub fn buffer_of<T: ToColumn + ?Sized>(ty: &D) -> Result<T::Buffer> {
    T::buffer(write_plain(ty))
}

/// The buffer for field `k` whose column has type `types[k]`.
pub fn buffer_for<T: ToColumn + ?Sized>(types: &[D], k: usize) -> Result<T::Buffer> {
    let ty = types.get(k).ok_or_else(|| Error::internal(format!("no column type for field {k}")))?;
    T::buffer(write_plain(ty))
}

/// Adds the column name to an error from writing a field.
pub fn push_error(e: Error, column: &str) -> Error {
    match e.kind() {
        RowErrorKind::Convert(c) => Error::invalid_input(format!("column `{column}`: {c}")),
        RowErrorKind::InvalidInput(m) => Error::invalid_input(format!("column `{column}`: {m}")),
        _ => e,
    }
}

pub(super) fn cannot(ty: &D, rust: &str) -> Error {
    Error::invalid_input(format!("{rust} cannot be written to a {ty} column"))
}

/// Fixed-width values in wire layout.
#[derive(Debug, Default)]
pub struct FixedBuffer<T>(pub Vec<T>);

impl<T: FixedValue + Send> ColumnBuffer for FixedBuffer<T> {
    fn data(&self) -> InsertData<'_> {
        crate::insert::fixed(&self.0)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn truncate(&mut self, rows: usize) {
        self.0.truncate(rows)
    }
    fn push_default(&mut self) {
        self.0.push(T::zeroed())
    }
    fn bytes(&self) -> usize {
        self.0.len() * std::mem::size_of::<T>()
    }
}

macro_rules! fixed {
    ($t:ty => $w:ty, |$v:ident| $conv:expr, $($pat:pat_param)|+ $(, { $($extra:tt)* })?) => {
        impl ToColumn for $t {
            $($($extra)*)?
            type Buffer = FixedBuffer<$w>;
            fn writes(ty: &D) -> bool {
                matches!(ty, $($pat)|+)
            }
            fn buffer(ty: &D) -> Result<Self::Buffer> {
                if Self::writes(ty) { Ok(FixedBuffer(Vec::new())) } else { Err(cannot(ty, stringify!($t))) }
            }
            #[inline]
            fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
                let $v = *self;
                buf.0.push($conv);
                Ok(())
            }
        }
    };
}

fixed!(WireUuid => WireUuid, |v| v, D::Uuid);
fixed!(bool => u8, |v| u8::from(v), D::Bool);
fixed!(Ipv4Addr => u32, |v| convert::net::from_ipv4(v), D::Ipv4);
fixed!(Ipv6Addr => [u8; 16], |v| convert::net::from_ipv6(v), D::Ipv6);
#[cfg(feature = "uuid")]
fixed!(uuid::Uuid => WireUuid, |v| WireUuid::from_u128(v.as_u128()), D::Uuid);

/// Strings: one blob and the end offset of each.
#[derive(Debug, Default)]
pub struct StringBuffer {
    offsets: Vec<u64>,
    data: Vec<u8>,
}

impl StringBuffer {
    #[inline]
    pub(crate) fn push_bytes(&mut self, b: &[u8]) {
        self.data.extend_from_slice(b);
        self.offsets.push(self.data.len() as u64);
    }
}

impl ColumnBuffer for StringBuffer {
    fn data(&self) -> InsertData<'_> {
        InsertData::Blob { offsets: &self.offsets, data: &self.data }
    }
    fn len(&self) -> usize {
        self.offsets.len()
    }
    fn truncate(&mut self, rows: usize) {
        self.offsets.truncate(rows);
        self.data.truncate(self.offsets.last().map_or(0, |&o| o as usize));
    }
    fn push_default(&mut self) {
        self.push_bytes(&[])
    }
    fn bytes(&self) -> usize {
        self.data.len() + 8 * self.offsets.len()
    }
}

impl ToColumn for str {
    type Buffer = StringBuffer;
    fn writes(ty: &D) -> bool {
        matches!(ty, D::String)
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        if Self::writes(ty) {
            Ok(StringBuffer::default())
        } else {
            Err(cannot(ty, "a string"))
        }
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        buf.push_bytes(self.as_bytes());
        Ok(())
    }
}

impl ToColumn for String {
    type Buffer = StringBuffer;
    fn writes(ty: &D) -> bool {
        str::writes(ty)
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        str::buffer(ty)
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        self.as_str().write_to(buf)
    }
}

impl<T: ToColumn + ?Sized> ToColumn for &T {
    type Buffer = T::Buffer;
    fn writes(ty: &D) -> bool {
        T::writes(ty)
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        T::buffer(ty)
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        (**self).write_to(buf)
    }
}

/// FixedString(N) values back to back.
#[derive(Debug, Default)]
pub struct FixedStringBuffer {
    bytes: Vec<u8>,
    n: usize,
}

impl ColumnBuffer for FixedStringBuffer {
    fn data(&self) -> InsertData<'_> {
        InsertData::fixed_strings(&self.bytes, self.n)
    }
    fn len(&self) -> usize {
        self.bytes.len() / self.n.max(1)
    }
    fn truncate(&mut self, rows: usize) {
        self.bytes.truncate(rows * self.n)
    }
    fn push_default(&mut self) {
        self.bytes.resize(self.bytes.len() + self.n, 0)
    }
    fn bytes(&self) -> usize {
        self.bytes.len()
    }
}

impl<const N: usize> ToColumn for [u8; N] {
    type Buffer = FixedStringBuffer;
    fn writes(ty: &D) -> bool {
        matches!(ty, D::FixedString(n) if *n == N)
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        if Self::writes(ty) {
            Ok(FixedStringBuffer { bytes: Vec::new(), n: N })
        } else {
            Err(cannot(ty, &format!("[u8; {N}]")))
        }
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        buf.bytes.extend_from_slice(self);
        Ok(())
    }
}

/// A null map (1 = NULL) and the values.
#[derive(Debug, Default)]
pub struct NullableBuffer<B> {
    nulls: Vec<u8>,
    inner: B,
    /// The column marks NULL rows itself (a Variant: its NULL discriminator, which
    /// the inner buffer writes as its default), so no null map is sent.
    in_band: bool,
    /// The column is not Nullable (an `Option<T>` writes to every column `T`
    /// does, as it reads from them): no null map is sent and `None` is an error.
    not_null: bool,
}

impl<B: ColumnBuffer> ColumnBuffer for NullableBuffer<B> {
    fn data(&self) -> InsertData<'_> {
        if self.in_band || self.not_null {
            return self.inner.data();
        }
        InsertData::nullable(&self.nulls, self.inner.data())
    }
    fn len(&self) -> usize {
        self.nulls.len()
    }
    fn truncate(&mut self, rows: usize) {
        self.nulls.truncate(rows);
        self.inner.truncate(rows);
    }
    fn push_default(&mut self) {
        self.nulls.push(1);
        self.inner.push_default();
    }
    fn bytes(&self) -> usize {
        self.nulls.len() + self.inner.bytes()
    }
}

impl<T: ToColumn> ToColumn for Option<T> {
    type Buffer = NullableBuffer<T::Buffer>;
    fn writes(ty: &D) -> bool {
        match ty {
            D::Nullable(t) => T::writes(t),
            // A Variant holds NULL rows itself; any other column takes the `Some`s.
            t => T::writes(t),
        }
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        let (inner, in_band, not_null) = match ty {
            D::Nullable(t) => (T::buffer(t)?, false, false),
            D::Variant(_) => (T::buffer(ty)?, true, false),
            t => (T::buffer(t)?, false, true),
        };
        Ok(NullableBuffer { nulls: Vec::new(), inner, in_band, not_null })
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        match self {
            Some(v) => {
                v.write_to(&mut buf.inner)?;
                buf.nulls.push(0);
            }
            None if buf.not_null => {
                return Err(Error::invalid_input("None cannot be written to a column that is not Nullable"))
            }
            None => buf.push_default(),
        }
        Ok(())
    }
}

/// Arrays: end offsets and the flattened elements.
#[derive(Debug, Default)]
pub struct ArrayBuffer<B> {
    offsets: Vec<u64>,
    inner: B,
}

impl<B: ColumnBuffer> ColumnBuffer for ArrayBuffer<B> {
    fn data(&self) -> InsertData<'_> {
        InsertData::array(&self.offsets, self.inner.data())
    }
    fn len(&self) -> usize {
        self.offsets.len()
    }
    fn truncate(&mut self, rows: usize) {
        self.offsets.truncate(rows);
        self.inner.truncate(self.offsets.last().map_or(0, |&o| o as usize));
    }
    fn push_default(&mut self) {
        self.offsets.push(self.offsets.last().copied().unwrap_or(0))
    }
    fn bytes(&self) -> usize {
        8 * self.offsets.len() + self.inner.bytes()
    }
}

/// `Vec<T>` / `[T]` into Array(T), Map(K, V) for pairs, or bytes into String.
#[derive(Debug)]
#[non_exhaustive]
pub enum VecBuffer<B> {
    /// Array(T).
    Array(ArrayBuffer<B>),
    /// String (for `u8` elements).
    Bytes(StringBuffer),
    /// QBit vectors (for `f32` and `f64` elements).
    QBit(QBitBuffer),
}

impl<B: ColumnBuffer> ColumnBuffer for VecBuffer<B> {
    fn data(&self) -> InsertData<'_> {
        match self {
            VecBuffer::Array(a) => a.data(),
            VecBuffer::Bytes(s) => s.data(),
            VecBuffer::QBit(q) => q.data(),
        }
    }
    fn len(&self) -> usize {
        match self {
            VecBuffer::Array(a) => a.len(),
            VecBuffer::Bytes(s) => s.len(),
            VecBuffer::QBit(q) => q.len(),
        }
    }
    fn truncate(&mut self, rows: usize) {
        match self {
            VecBuffer::Array(a) => a.truncate(rows),
            VecBuffer::Bytes(s) => s.truncate(rows),
            VecBuffer::QBit(q) => q.truncate(rows),
        }
    }
    fn push_default(&mut self) {
        match self {
            VecBuffer::Array(a) => a.push_default(),
            VecBuffer::Bytes(s) => s.push_default(),
            VecBuffer::QBit(q) => q.push_default(),
        }
    }
    fn bytes(&self) -> usize {
        match self {
            VecBuffer::Array(a) => a.bytes(),
            VecBuffer::Bytes(s) => s.bytes(),
            VecBuffer::QBit(q) => q.bytes(),
        }
    }
}

impl<T: ToColumn> ToColumn for [T] {
    type Buffer = VecBuffer<T::Buffer>;
    fn writes(ty: &D) -> bool {
        match ty {
            D::Array(t) => writes::<T>(t),
            // A Map is an array of (key, value) tuples on the wire, so `Vec<(K, V)>` keeps the order.
            D::Map(k, v) => writes::<T>(&super::map_entry(k, v)),
            D::Nested(_) => matches!(ty.wire_shape().as_ref(), D::Array(t) if writes::<T>(t)),
            D::QBit(..) => QBitElement::of(ty).is_some_and(|(e, _)| T::writes_qbit(e)),
            D::String => T::BYTE,
            _ => false,
        }
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        match ty {
            D::Array(t) => Ok(VecBuffer::Array(ArrayBuffer {
                offsets: Vec::new(),
                inner: buffer_for::<T>(std::slice::from_ref(t), 0)?,
            })),
            D::Map(k, v) => Ok(VecBuffer::Array(ArrayBuffer {
                offsets: Vec::new(),
                inner: buffer_for::<T>(&[super::map_entry(k, v)], 0)?,
            })),
            D::Nested(_) => match ty.wire_shape().into_owned() {
                D::Array(t) => {
                    Ok(VecBuffer::Array(ArrayBuffer { offsets: Vec::new(), inner: buffer_for::<T>(&[*t], 0)? }))
                }
                t => Err(cannot(&t, "a Vec")),
            },
            D::String if T::BYTE => Ok(VecBuffer::Bytes(StringBuffer::default())),
            D::QBit(..) => match QBitElement::of(ty) {
                Some((e, dim)) if T::writes_qbit(e) => Ok(VecBuffer::QBit(QBitBuffer::new(e, dim))),
                _ => Err(cannot(ty, "a Vec or slice")),
            },
            t => Err(cannot(t, "a Vec or slice")),
        }
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        match buf {
            VecBuffer::Array(a) => {
                for v in self {
                    v.write_to(&mut a.inner)?;
                }
                a.offsets.push(a.inner.len() as u64);
            }
            VecBuffer::Bytes(s) => s.push_bytes(T::as_bytes(self).ok_or_else(|| Error::internal("not a byte type"))?),
            VecBuffer::QBit(q) => {
                T::qbit_extend(self, q).unwrap_or_else(|| Err(Error::internal("not a QBit element")))?
            }
        }
        Ok(())
    }
}

impl<T: ToColumn> ToColumn for Vec<T> {
    type Buffer = VecBuffer<T::Buffer>;
    fn writes(ty: &D) -> bool {
        <[T]>::writes(ty)
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        <[T]>::buffer(ty)
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        self.as_slice().write_to(buf)
    }
}

/// Decimal mantissas at the column's width, with its precision and scale.
#[derive(Debug)]
pub struct DecimalBuffer {
    width: DecimalWidth,
    precision: u8,
    scale: u8,
}

#[derive(Debug)]
enum DecimalWidth {
    D32(Vec<i32>),
    D64(Vec<i64>),
    D128(Vec<i128>),
    D256(Vec<I256>),
}

impl ColumnBuffer for DecimalBuffer {
    fn data(&self) -> InsertData<'_> {
        match &self.width {
            DecimalWidth::D32(v) => crate::insert::fixed(v),
            DecimalWidth::D64(v) => crate::insert::fixed(v),
            DecimalWidth::D128(v) => crate::insert::fixed(v),
            DecimalWidth::D256(v) => crate::insert::fixed(v),
        }
    }
    fn len(&self) -> usize {
        match &self.width {
            DecimalWidth::D32(v) => v.len(),
            DecimalWidth::D64(v) => v.len(),
            DecimalWidth::D128(v) => v.len(),
            DecimalWidth::D256(v) => v.len(),
        }
    }
    fn truncate(&mut self, rows: usize) {
        match &mut self.width {
            DecimalWidth::D32(v) => v.truncate(rows),
            DecimalWidth::D64(v) => v.truncate(rows),
            DecimalWidth::D128(v) => v.truncate(rows),
            DecimalWidth::D256(v) => v.truncate(rows),
        }
    }
    fn push_default(&mut self) {
        match &mut self.width {
            DecimalWidth::D32(v) => v.push(0),
            DecimalWidth::D64(v) => v.push(0),
            DecimalWidth::D128(v) => v.push(0),
            DecimalWidth::D256(v) => v.push(I256::default()),
        }
    }
    fn bytes(&self) -> usize {
        self.len()
            * match &self.width {
                DecimalWidth::D32(_) => 4,
                DecimalWidth::D64(_) => 8,
                DecimalWidth::D128(_) => 16,
                DecimalWidth::D256(_) => 32,
            }
    }
}

impl ToColumn for Decimal {
    type Buffer = DecimalBuffer;
    fn writes(ty: &D) -> bool {
        matches!(ty, D::Decimal { .. })
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        let D::Decimal { precision, scale } = *ty else { return Err(cannot(ty, "Decimal")) };
        let width = match precision {
            0..=9 => DecimalWidth::D32(Vec::new()),
            10..=18 => DecimalWidth::D64(Vec::new()),
            19..=38 => DecimalWidth::D128(Vec::new()),
            _ => DecimalWidth::D256(Vec::new()),
        };
        Ok(DecimalBuffer { width, precision, scale })
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        let (p, s) = (buf.precision, buf.scale);
        match &mut buf.width {
            DecimalWidth::D32(v) => v.push(self.to_raw(p, s)?),
            DecimalWidth::D64(v) => v.push(self.to_raw(p, s)?),
            DecimalWidth::D128(v) => v.push(self.to_raw(p, s)?),
            DecimalWidth::D256(v) => v.push(self.to_raw(p, s)?),
        }
        Ok(())
    }
}

#[cfg(feature = "rust_decimal")]
impl ToColumn for crate::convert::ext::rust_decimal::Decimal {
    type Buffer = DecimalBuffer;
    fn writes(ty: &D) -> bool {
        Decimal::writes(ty)
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        Decimal::buffer(ty)
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        Decimal::from(*self).write_to(buf)
    }
}

/// Tuples: one buffer per element, each holding every row.
#[derive(Debug, Default)]
pub struct TupleBuffer<B>(B);

fn tuple_types(ty: &D, n: usize, rust: &str) -> Result<Vec<D>> {
    match ty {
        D::Tuple(e) if e.len() == n => Ok(e.iter().map(|(_, t)| t.clone()).collect()),
        t => Err(cannot(t, rust)),
    }
}

macro_rules! tuple_to_column {
    ($n:literal; $($t:ident $k:tt),+) => {
        impl<$($t: ColumnBuffer),+> ColumnBuffer for TupleBuffer<($($t,)+)> {
            fn data(&self) -> InsertData<'_> {
                InsertData::tuple(vec![$(self.0.$k.data()),+])
            }
            fn len(&self) -> usize {
                self.0.0.len()
            }
            fn truncate(&mut self, rows: usize) {
                $(self.0.$k.truncate(rows);)+
            }
            fn push_default(&mut self) {
                $(self.0.$k.push_default();)+
            }
            fn bytes(&self) -> usize {
                0 $(+ self.0.$k.bytes())+
            }
        }

        impl<$($t: ToColumn),+> ToColumn for ($($t,)+) {
            type Buffer = TupleBuffer<($($t::Buffer,)+)>;
            fn writes(ty: &D) -> bool {
                matches!(ty, D::Tuple(e) if e.len() == $n $(&& writes::<$t>(&e[$k].1))+)
            }
            fn buffer(ty: &D) -> Result<Self::Buffer> {
                let types = tuple_types(ty, $n, concat!("a tuple of ", $n))?;
                Ok(TupleBuffer(($(buffer_for::<$t>(&types, $k)?,)+)))
            }
            #[inline]
            fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
                $(self.$k.write_to(&mut buf.0.$k)?;)+
                Ok(())
            }
        }
    };
}
tuple_arities!(tuple_to_column);

/// Maps: end offsets and the flattened keys and values.
#[derive(Debug, Default)]
pub struct MapBuffer<K, V> {
    offsets: Vec<u64>,
    keys: K,
    values: V,
}

impl<K: ColumnBuffer, V: ColumnBuffer> ColumnBuffer for MapBuffer<K, V> {
    fn data(&self) -> InsertData<'_> {
        InsertData::map(&self.offsets, self.keys.data(), self.values.data())
    }
    fn len(&self) -> usize {
        self.offsets.len()
    }
    fn truncate(&mut self, rows: usize) {
        self.offsets.truncate(rows);
        let entries = self.offsets.last().map_or(0, |&o| o as usize);
        self.keys.truncate(entries);
        self.values.truncate(entries);
    }
    fn push_default(&mut self) {
        self.offsets.push(self.offsets.last().copied().unwrap_or(0))
    }
    fn bytes(&self) -> usize {
        8 * self.offsets.len() + self.keys.bytes() + self.values.bytes()
    }
}

impl<K: ColumnBuffer, V: ColumnBuffer> MapBuffer<K, V> {
    fn push_entries<'e, KT: ToColumn<Buffer = K> + 'e, VT: ToColumn<Buffer = V> + 'e>(
        &mut self,
        entries: impl Iterator<Item = (&'e KT, &'e VT)>,
    ) -> Result<()> {
        for (k, v) in entries {
            k.write_to(&mut self.keys)?;
            v.write_to(&mut self.values)?;
        }
        self.offsets.push(self.keys.len() as u64);
        Ok(())
    }
}

fn map_buffer<K: ToColumn, V: ToColumn>(ty: &D, rust: &str) -> Result<MapBuffer<K::Buffer, V::Buffer>> {
    match ty {
        D::Map(k, v) => {
            let types = [k.as_ref().clone(), v.as_ref().clone()];
            Ok(MapBuffer {
                offsets: Vec::new(),
                keys: buffer_for::<K>(&types, 0)?,
                values: buffer_for::<V>(&types, 1)?,
            })
        }
        t => Err(cannot(t, rust)),
    }
}

fn writes_map<K: ToColumn, V: ToColumn>(ty: &D) -> bool {
    matches!(ty, D::Map(k, v) if writes::<K>(k) && writes::<V>(v))
}

impl<K: ToColumn, V: ToColumn, S> ToColumn for HashMap<K, V, S> {
    type Buffer = MapBuffer<K::Buffer, V::Buffer>;
    fn writes(ty: &D) -> bool {
        writes_map::<K, V>(ty)
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        map_buffer::<K, V>(ty, "a HashMap")
    }
    /// Entries go in the map's iteration order (a `HashMap` has none to keep).
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        buf.push_entries(self.iter())
    }
}

impl<K: ToColumn, V: ToColumn> ToColumn for BTreeMap<K, V> {
    type Buffer = MapBuffer<K::Buffer, V::Buffer>;
    fn writes(ty: &D) -> bool {
        writes_map::<K, V>(ty)
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        map_buffer::<K, V>(ty, "a BTreeMap")
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        buf.push_entries(self.iter())
    }
}
