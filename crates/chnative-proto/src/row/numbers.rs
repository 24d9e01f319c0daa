//! The number types: which number columns each reads and writes, both sides
//! generated from one table per type (the lossless widenings; the conversions
//! themselves are [`crate::convert::exact`]).
//!
//! A type reads its own column type and every narrower one it holds exactly,
//! and writes to the same columns: into a narrower one only the values that fit
//! it (anything else is an error naming the value and the column type).

use crate::convert::exact::{Bf16Bits, Narrow, Widen};
use crate::convert::{self, I256, U256};
use crate::qbit::{Element as QBitElement, QBitView};
use crate::view::{ColumnView, FixedValue};
use crate::DataType as D;

use super::from_column::Values;
use super::to_column::{cannot, ColumnBuffer, FixedBuffer, QBitBuffer, ToColumn};
use super::{out_of_bounds, plain, FromColumn, ReadContext};
use crate::insert::InsertData;
use crate::row::{RowError as Error, RowResult as Result};

/// A number column read as `T`: the column's own values when its type is `T`'s,
/// else its values widened losslessly into `T` (UInt8 into `u64`, Float32 into
/// `f64`, …) once, when the block's reader is resolved. Rows are read the same
/// way in both cases: one index into a `&[T]` (the `Cow`'s branch is the same
/// for every row of a block, so it predicts perfectly).
pub struct Numbers<'r, T: Clone> {
    /// The column's values, or the widened ones.
    values: std::borrow::Cow<'r, [T]>,
    column: &'r str,
}

impl<'r, T: Copy> Numbers<'r, T> {
    fn borrowed(values: &'r [T], column: &'r str) -> Self {
        Numbers { values: std::borrow::Cow::Borrowed(values), column }
    }

    fn widened(widened: Vec<T>, column: &'r str) -> Self {
        Numbers { values: std::borrow::Cow::Owned(widened), column }
    }

    #[inline(always)]
    fn at(&self, i: usize) -> Result<T> {
        self.values.get(i).copied().ok_or_else(|| out_of_bounds(self.column, i))
    }
}

/// Why a number type refuses a number column (`None` for other columns): every
/// such pair loses range or precision, except an integer column that a float
/// type could hold exactly (`mantissa`: the float target's significand bits),
/// which is simply not converted.
fn number_note(ty: &D, mantissa: Option<u32>) -> Option<&'static str> {
    // Magnitude bits of an integer column.
    let bits = match ty {
        D::Int8 => 7,
        D::UInt8 => 8,
        D::Int16 => 15,
        D::UInt16 => 16,
        D::Int32 => 31,
        D::UInt32 => 32,
        D::Int64 => 63,
        D::UInt64 => 64,
        D::Int128 | D::UInt128 | D::Int256 | D::UInt256 => 128,
        D::Float32 | D::Float64 | D::BFloat16 => return Some("narrowing"),
        _ => return None,
    };
    match mantissa {
        Some(m) if bits <= m => Some("integers are not read as floats: cast the column in the query"),
        _ => Some("narrowing"),
    }
}

/// `FromColumn` for a number type: the column types it reads as they are, then
/// the narrower types it widens (`source: pattern`; each source converts with
/// `From`, which the standard library implements exactly for the lossless pairs).
macro_rules! number {
    ($t:ty, [$($pat:pat_param)|+] $(, $src:ty: [$($spat:pat_param)|+])*) => {
        impl<'r> FromColumn<'r> for $t {
            type Reader = Numbers<'r, $t>;
            fn accepts(ty: &D) -> bool {
                matches!(ty, $($pat)|+ $($(| $spat)+)*)
            }
            fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
                #[allow(unreachable_patterns)]
                match plain(view.data_type()) {
                    $($($spat)|+ => {
                        let values = view.values::<$src>()?;
                        Ok(Numbers::widened(values.iter().map(|&v| Widen::<$t>::widen(v)).collect(), view.name()))
                    })*
                    _ => Ok(Numbers::borrowed(view.values::<$t>()?, view.name())),
                }
            }
            #[inline(always)]
            fn read(r: &Self::Reader, i: usize) -> Result<Self> {
                r.at(i)
            }
            fn refusal(ty: &D) -> Option<&'static str> {
                number_note(ty, None)
            }
        }

        impl ToColumn for $t {
            type Buffer = NumberBuffer<$t>;
            fn writes(ty: &D) -> bool {
                <$t as FromColumn<'static>>::accepts(ty)
            }
            fn buffer(ty: &D) -> Result<Self::Buffer> {
                #[allow(unreachable_patterns)]
                match ty {
                    $($($spat)|+ => Ok(NumberBuffer::narrowed::<$src>(ty, Narrow::<$src>::narrow)),)*
                    $($pat)|+ => Ok(NumberBuffer::own()),
                    t => Err(cannot(t, stringify!($t))),
                }
            }
            #[inline]
            fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
                buf.push(*self)
            }
        }
    };
}

// Same type first (Date, DateTime, … are these integers on the wire), then the
// lossless widenings: unsigned into wider unsigned, signed or unsigned into wider
// signed. Date (u16 days) widens into `i32` like Date32's days, DateTime (u32
// seconds) into `i64` like DateTime64(0)'s ticks.
number!(i8, [D::Int8 | D::Enum8(_)]);
number!(u16, [D::UInt16 | D::Date], u8: [D::UInt8]);
number!(u32, [D::UInt32 | D::DateTime(_)], u8: [D::UInt8], u16: [D::UInt16]);
number!(u64, [D::UInt64], u8: [D::UInt8], u16: [D::UInt16], u32: [D::UInt32]);
number!(u128, [D::UInt128], u8: [D::UInt8], u16: [D::UInt16], u32: [D::UInt32], u64: [D::UInt64]);
number!(U256, [D::UInt256], u8: [D::UInt8], u16: [D::UInt16], u32: [D::UInt32], u64: [D::UInt64], u128: [D::UInt128]);
number!(i16, [D::Int16 | D::Enum16(_)], i8: [D::Int8], u8: [D::UInt8]);
number!(i32, [D::Int32 | D::Date32 | D::Time], i8: [D::Int8], i16: [D::Int16], u8: [D::UInt8], u16: [D::UInt16 | D::Date]);
number!(
    i64,
    [D::Int64 | D::DateTime64(..) | D::Time64(_) | D::Interval(_)],
    i8: [D::Int8],
    i16: [D::Int16],
    i32: [D::Int32],
    u8: [D::UInt8],
    u16: [D::UInt16],
    u32: [D::UInt32 | D::DateTime(_)]
);
number!(
    i128,
    [D::Int128],
    i8: [D::Int8],
    i16: [D::Int16],
    i32: [D::Int32],
    i64: [D::Int64],
    u8: [D::UInt8],
    u16: [D::UInt16],
    u32: [D::UInt32],
    u64: [D::UInt64]
);
number!(
    I256,
    [D::Int256],
    i8: [D::Int8],
    i16: [D::Int16],
    i32: [D::Int32],
    i64: [D::Int64],
    i128: [D::Int128],
    u8: [D::UInt8],
    u16: [D::UInt16],
    u32: [D::UInt32],
    u64: [D::UInt64],
    u128: [D::UInt128]
);

impl<'r> FromColumn<'r> for f64 {
    type Reader = Numbers<'r, f64>;
    fn accepts(ty: &D) -> bool {
        // Float32 and BFloat16 widen exactly.
        matches!(ty, D::Float64 | D::Float32 | D::BFloat16)
    }
    fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
        Ok(match plain(view.data_type()) {
            D::Float32 => Numbers::widened(view.values::<f32>()?.iter().map(|&v| f64::from(v)).collect(), view.name()),
            D::BFloat16 => Numbers::widened(
                view.values::<u16>()?.iter().map(|&b| f64::from(convert::bf16::to_f32(b))).collect(),
                view.name(),
            ),
            _ => Numbers::borrowed(view.values::<f64>()?, view.name()),
        })
    }
    #[inline]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        r.at(i)
    }
    fn refusal(ty: &D) -> Option<&'static str> {
        number_note(ty, Some(53))
    }
    fn reads_qbit(element: QBitElement) -> bool {
        element == QBitElement::Float64
    }
    fn qbit_row(view: &QBitView<'r>, i: usize) -> Option<Result<Vec<f64>>> {
        let mut out = vec![0f64; view.dim()];
        Some(view.row(i, &mut out).map(|()| out).map_err(Error::from))
    }
}

impl<'r> FromColumn<'r> for u8 {
    type Reader = Values<'r, u8>;
    fn accepts(ty: &D) -> bool {
        matches!(ty, D::UInt8)
    }
    fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
        Ok(Values { values: view.values::<u8>()?, column: view.name() })
    }
    #[inline]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        r.at(i)
    }
    fn refusal(ty: &D) -> Option<&'static str> {
        number_note(ty, None)
    }
    const BYTE: bool = true;
    fn bytes_to_vec(bytes: &[u8]) -> Option<Vec<u8>> {
        Some(bytes.to_vec())
    }
    fn bytes_as_slice(bytes: &'r [u8]) -> Option<&'r [u8]> {
        Some(bytes)
    }
}

/// Float32 values, or BFloat16 bits widened to `f32` (exactly).
#[non_exhaustive]
pub enum F32Reader<'r> {
    /// Float32.
    F32(Values<'r, f32>),
    /// BFloat16.
    Bf16(Values<'r, u16>),
}

impl<'r> FromColumn<'r> for f32 {
    type Reader = F32Reader<'r>;
    fn accepts(ty: &D) -> bool {
        matches!(ty, D::Float32 | D::BFloat16)
    }
    fn refusal(ty: &D) -> Option<&'static str> {
        number_note(ty, Some(24))
    }
    fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
        Ok(match plain(view.data_type()) {
            D::BFloat16 => F32Reader::Bf16(Values { values: view.values()?, column: view.name() }),
            _ => F32Reader::F32(Values { values: view.values()?, column: view.name() }),
        })
    }
    #[inline]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        match r {
            F32Reader::F32(v) => v.at(i),
            F32Reader::Bf16(v) => Ok(convert::bf16::to_f32(v.at(i)?)),
        }
    }
    fn reads_qbit(element: QBitElement) -> bool {
        matches!(element, QBitElement::Float32 | QBitElement::BFloat16)
    }
    fn qbit_row(view: &QBitView<'r>, i: usize) -> Option<Result<Vec<f32>>> {
        let mut out = vec![0f32; view.dim()];
        Some(
            match view.element() {
                QBitElement::BFloat16 => {
                    let mut bits = vec![0u16; view.dim()];
                    view.row(i, &mut bits).map(|()| {
                        out.iter_mut().zip(&bits).for_each(|(o, &b)| *o = convert::bf16::to_f32(b));
                        out
                    })
                }
                _ => view.row(i, &mut out).map(|()| out),
            }
            .map_err(Error::from),
        )
    }
}

/// The insert buffer of a number type: the values themselves when the column has
/// the type's own wire type, else the values narrowed into a narrower column's
/// (each checked to fit, as the module docs of `row::numbers` say).
#[derive(Debug)]
#[non_exhaustive]
pub enum NumberBuffer<T: 'static> {
    /// The column's own type.
    Own(FixedBuffer<T>),
    /// A narrower column.
    Narrow(Box<dyn NarrowSink<T>>),
}

/// Values of `T` narrowed into a narrower column (see [`NumberBuffer`]).
pub trait NarrowSink<T>: ColumnBuffer + Sync + std::fmt::Debug {
    /// Appends `v` if the column's type holds it.
    fn push(&mut self, v: T) -> Result<()>;
}

/// A narrower column's values and the conversion that checks each fits.
struct Narrowed<T, W> {
    values: FixedBuffer<W>,
    to: fn(T) -> Option<W>,
    /// The column type, for errors.
    ty: String,
}

impl<T, W: std::fmt::Debug> std::fmt::Debug for Narrowed<T, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Narrowed").field("ty", &self.ty).field("rows", &self.values.0.len()).finish()
    }
}

impl<T: 'static, W: FixedValue + Send + std::fmt::Debug> ColumnBuffer for Narrowed<T, W> {
    fn data(&self) -> InsertData<'_> {
        self.values.data()
    }
    fn len(&self) -> usize {
        self.values.len()
    }
    fn truncate(&mut self, rows: usize) {
        self.values.truncate(rows)
    }
    fn push_default(&mut self) {
        self.values.push_default()
    }
    fn bytes(&self) -> usize {
        self.values.bytes()
    }
}

impl<T, W> NarrowSink<T> for Narrowed<T, W>
where
    T: Copy + std::fmt::Display + Send + 'static,
    W: FixedValue + Send + Sync + std::fmt::Debug,
{
    #[inline]
    fn push(&mut self, v: T) -> Result<()> {
        match (self.to)(v) {
            Some(w) => {
                self.values.0.push(w);
                Ok(())
            }
            None => Err(Error::invalid_input(format!("{v} does not fit a {} column exactly", self.ty))),
        }
    }
}

impl<T: FixedValue + Copy + std::fmt::Display + Send + std::fmt::Debug + 'static> NumberBuffer<T> {
    fn own() -> Self {
        NumberBuffer::Own(FixedBuffer(Vec::new()))
    }

    fn narrowed<W: FixedValue + Send + Sync + std::fmt::Debug + 'static>(ty: &D, to: fn(T) -> Option<W>) -> Self {
        NumberBuffer::Narrow(Box::new(Narrowed { values: FixedBuffer(Vec::new()), to, ty: ty.to_string() }))
    }

    /// Appends `v` (checked to fit a narrower column).
    #[inline(always)]
    pub fn push(&mut self, v: T) -> Result<()> {
        match self {
            NumberBuffer::Own(b) => {
                b.0.push(v);
                Ok(())
            }
            NumberBuffer::Narrow(n) => n.push(v),
        }
    }
}

impl<T: FixedValue + Send + std::fmt::Debug + 'static> ColumnBuffer for NumberBuffer<T> {
    fn data(&self) -> InsertData<'_> {
        match self {
            NumberBuffer::Own(b) => b.data(),
            NumberBuffer::Narrow(n) => n.data(),
        }
    }
    fn len(&self) -> usize {
        match self {
            NumberBuffer::Own(b) => b.len(),
            NumberBuffer::Narrow(n) => n.len(),
        }
    }
    fn truncate(&mut self, rows: usize) {
        match self {
            NumberBuffer::Own(b) => b.truncate(rows),
            NumberBuffer::Narrow(n) => n.truncate(rows),
        }
    }
    fn push_default(&mut self) {
        match self {
            NumberBuffer::Own(b) => b.push_default(),
            NumberBuffer::Narrow(n) => n.push_default(),
        }
    }
    fn bytes(&self) -> usize {
        match self {
            NumberBuffer::Own(b) => b.bytes(),
            NumberBuffer::Narrow(n) => n.bytes(),
        }
    }
}

impl ToColumn for u8 {
    type Buffer = FixedBuffer<u8>;
    fn writes(ty: &D) -> bool {
        <u8 as FromColumn<'static>>::accepts(ty)
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        if Self::writes(ty) {
            Ok(FixedBuffer(Vec::new()))
        } else {
            Err(cannot(ty, "u8"))
        }
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        buf.0.push(*self);
        Ok(())
    }
    const BYTE: bool = true;
    fn as_bytes(values: &[u8]) -> Option<&[u8]> {
        Some(values)
    }
}

fn f32_to_bf16(v: f32) -> Option<u16> {
    Narrow::<Bf16Bits>::narrow(v).map(|b| b.0)
}

fn f64_to_bf16(v: f64) -> Option<u16> {
    Narrow::<Bf16Bits>::narrow(v).map(|b| b.0)
}

impl ToColumn for f32 {
    type Buffer = NumberBuffer<f32>;
    fn writes(ty: &D) -> bool {
        <f32 as FromColumn<'static>>::accepts(ty)
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        match ty {
            D::Float32 => Ok(NumberBuffer::own()),
            D::BFloat16 => Ok(NumberBuffer::narrowed(ty, f32_to_bf16)),
            t => Err(cannot(t, "f32")),
        }
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        buf.push(*self)
    }
    fn writes_qbit(element: QBitElement) -> bool {
        <f32 as FromColumn<'static>>::reads_qbit(element)
    }
    fn qbit_extend(values: &[f32], buf: &mut QBitBuffer) -> Option<Result<()>> {
        Some(buf.extend_f32(values))
    }
}

impl ToColumn for f64 {
    type Buffer = NumberBuffer<f64>;
    fn writes(ty: &D) -> bool {
        <f64 as FromColumn<'static>>::accepts(ty)
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        match ty {
            D::Float64 => Ok(NumberBuffer::own()),
            D::Float32 => Ok(NumberBuffer::narrowed::<f32>(ty, Narrow::<f32>::narrow)),
            D::BFloat16 => Ok(NumberBuffer::narrowed(ty, f64_to_bf16)),
            t => Err(cannot(t, "f64")),
        }
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        buf.push(*self)
    }
    fn writes_qbit(element: QBitElement) -> bool {
        <f64 as FromColumn<'static>>::reads_qbit(element)
    }
    fn qbit_extend(values: &[f64], buf: &mut QBitBuffer) -> Option<Result<()>> {
        Some(buf.extend_f64(values))
    }
}

/// The `NonZero` integers: the columns of their integer type, both ways; a zero
/// read is an error (never a wrong value), and a zero cannot be written.
macro_rules! nonzero {
    ($($nz:ty => $t:ty),*) => {$(
        impl<'r> FromColumn<'r> for $nz {
            type Reader = <$t as FromColumn<'r>>::Reader;
            fn accepts(ty: &D) -> bool {
                <$t as FromColumn<'r>>::accepts(ty)
            }
            fn refusal(ty: &D) -> Option<&'static str> {
                <$t as FromColumn<'r>>::refusal(ty)
            }
            fn reader(view: &ColumnView<'r>, ctx: &ReadContext) -> Result<Self::Reader> {
                <$t as FromColumn<'r>>::reader(view, ctx)
            }
            #[inline]
            fn read(r: &Self::Reader, i: usize) -> Result<Self> {
                let v = <$t as FromColumn<'r>>::read(r, i)?;
                <$nz>::new(v).ok_or_else(|| {
                    Error::invalid_input(format!("row {i} is 0, which a {} cannot hold", stringify!($nz)))
                })
            }
        }

        impl ToColumn for $nz {
            type Buffer = <$t as ToColumn>::Buffer;
            fn writes(ty: &D) -> bool {
                <$t as ToColumn>::writes(ty)
            }
            fn buffer(ty: &D) -> Result<Self::Buffer> {
                <$t as ToColumn>::buffer(ty)
            }
            #[inline]
            fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
                self.get().write_to(buf)
            }
        }
    )*};
}

nonzero!(
    std::num::NonZeroU8 => u8,
    std::num::NonZeroU16 => u16,
    std::num::NonZeroU32 => u32,
    std::num::NonZeroU64 => u64,
    std::num::NonZeroU128 => u128,
    std::num::NonZeroI8 => i8,
    std::num::NonZeroI16 => i16,
    std::num::NonZeroI32 => i32,
    std::num::NonZeroI64 => i64,
    std::num::NonZeroI128 => i128
);
