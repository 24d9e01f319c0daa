//! [`FromColumn`] for the Rust types a row field can have.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::convert::{self, Decimal, DecimalColumn};
use crate::qbit::{Element as QBitElement, QBitView};
use crate::view::{ColumnView, StrView, WireUuid};
use crate::DataType as D;

#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
use super::plain;
use super::{accepts, out_of_bounds, refusal, FromColumn, ReadContext, Reader};
use crate::row::{RowError as Error, RowResult as Result};

/// A fixed-width column: the values and the column name (for errors).
pub struct Values<'r, T> {
    pub(super) values: &'r [T],
    pub(super) column: &'r str,
}

impl<T: Copy> Values<'_, T> {
    #[inline(always)]
    pub(super) fn at(&self, i: usize) -> Result<T> {
        self.values.get(i).copied().ok_or_else(|| out_of_bounds(self.column, i))
    }
}

/// `FromColumn` for a type whose column holds fixed-width values `$w` on the wire,
/// each converted by `$conv` (no conversion for the wire type itself).
macro_rules! fixed {
    ($t:ty => $w:ty, |$v:ident| $conv:expr, $($pat:pat_param)|+) => {
        impl<'r> FromColumn<'r> for $t {
            type Reader = Values<'r, $w>;
            fn accepts(ty: &D) -> bool {
                matches!(ty, $($pat)|+)
            }
            fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
                Ok(Values { values: view.values::<$w>()?, column: view.name() })
            }
            #[inline(always)]
            fn read(r: &Self::Reader, i: usize) -> Result<Self> {
                let $v = r.at(i)?;
                Ok($conv)
            }
        }
    };
}

fixed!(WireUuid => WireUuid, |v| v, D::Uuid);
fixed!(Ipv4Addr => u32, |v| convert::net::ipv4(v), D::Ipv4);
fixed!(Ipv6Addr => [u8; 16], |v| convert::net::ipv6(v), D::Ipv6);
#[cfg(feature = "uuid")]
fixed!(uuid::Uuid => WireUuid, |v| uuid::Uuid::from_u128(v.as_u128()), D::Uuid);

impl<'r> FromColumn<'r> for bool {
    type Reader = Values<'r, u8>;
    fn accepts(ty: &D) -> bool {
        matches!(ty, D::Bool)
    }
    fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
        Ok(Values { values: view.values::<u8>()?, column: view.name() })
    }
    #[inline]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        Ok(r.at(i)? != 0)
    }
}

/// A String column and its name.
pub struct Strings<'r> {
    view: StrView<'r>,
    column: &'r str,
    /// Every row as text, when all are valid UTF-8 (checked once per block).
    text: Option<super::utf8::CheckedText<'r>>,
}

impl<'r> Strings<'r> {
    fn new(view: &ColumnView<'r>) -> Result<Self> {
        Ok(Strings { view: view.as_strings()?, column: view.name(), text: None })
    }

    /// For reading `&str` / `String`: UTF-8 checked once per block (see `row::utf8`).
    fn utf8(view: &ColumnView<'r>) -> Result<Self> {
        let mut s = Strings::new(view)?;
        s.text = super::utf8::CheckedText::new(&s.view);
        Ok(s)
    }
    #[inline]
    fn bytes(&self, i: usize) -> Result<&'r [u8]> {
        if i >= self.view.len() {
            return Err(out_of_bounds(self.column, i));
        }
        let r = self.view.range(i);
        self.view.blob().get(r).ok_or_else(|| out_of_bounds(self.column, i))
    }
    #[inline(always)]
    fn str(&self, i: usize) -> Result<&'r str> {
        match self.text.and_then(|t| t.get(i)) {
            Some(s) => Ok(s),
            None => self.str_checked(i),
        }
    }

    /// A row of a column that is not all valid UTF-8 (or past the end): checked
    /// row by row, out of line so the common case stays small where it is inlined.
    #[cold]
    #[inline(never)]
    fn str_checked(&self, i: usize) -> Result<&'r str> {
        let b = self.bytes(i)?;
        std::str::from_utf8(b).map_err(|_| {
            Error::from(convert::ConvertError::Inexact {
                value: format!("{:?} (column `{}`, row {i})", String::from_utf8_lossy(b), self.column),
                target: "a UTF-8 string (read it into Vec<u8> or &[u8])".into(),
            })
        })
    }
}

impl<'r> FromColumn<'r> for String {
    type Reader = Strings<'r>;
    fn accepts(ty: &D) -> bool {
        matches!(ty, D::String)
    }
    fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
        Strings::utf8(view)
    }
    #[inline]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        r.str(i).map(str::to_owned)
    }
}

impl<'r> FromColumn<'r> for &'r str {
    type Reader = Strings<'r>;
    fn accepts(ty: &D) -> bool {
        matches!(ty, D::String)
    }
    fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
        Strings::utf8(view)
    }
    #[inline(always)]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        r.str(i)
    }
}

/// A FixedString(N) column: its bytes and N.
pub struct FixedStrings<'r> {
    bytes: &'r [u8],
    column: &'r str,
}

impl<'r, const N: usize> FromColumn<'r> for [u8; N] {
    type Reader = FixedStrings<'r>;
    fn accepts(ty: &D) -> bool {
        matches!(ty, D::FixedString(n) if *n == N)
    }
    fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
        let (bytes, n) = view.as_fixed_strings()?;
        if n != N {
            return Err(Error::from(crate::ProtoError::TypeMismatch {
                column: view.name().into(),
                requested: format!("[u8; {N}]"),
                actual: view.type_name().into(),
            }));
        }
        Ok(FixedStrings { bytes, column: view.name() })
    }
    #[inline]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        let s = r.bytes.get(i * N..(i + 1) * N).ok_or_else(|| out_of_bounds(r.column, i))?;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Ok(out)
    }
}

/// A Nullable column's null map (absent for a plain column read as `Option`) and values.
pub struct NullableReader<'r, T: FromColumn<'r>> {
    nulls: Option<&'r [u8]>,
    inner: Reader<'r, T>,
}

impl<'r, T: FromColumn<'r>> FromColumn<'r> for Option<T> {
    type Reader = NullableReader<'r, T>;
    fn accepts(ty: &D) -> bool {
        match ty {
            D::Nullable(t) => accepts::<T>(t),
            t => T::accepts(t),
        }
    }
    fn reader(view: &ColumnView<'r>, ctx: &ReadContext) -> Result<Self::Reader> {
        if let D::Nullable(_) = view.data_type() {
            let n = view.as_nullable()?;
            Ok(NullableReader { nulls: Some(n.nulls()), inner: Reader::new(n.inner(), ctx)? })
        } else {
            Ok(NullableReader { nulls: None, inner: Reader::new(view, ctx)? })
        }
    }
    #[inline]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        match r.nulls {
            Some(nulls) => match nulls.get(i) {
                Some(0) => r.inner.get(i).map(Some),
                Some(_) => Ok(None),
                None => Err(out_of_bounds(r.inner.column, i)),
            },
            None if T::is_null(&r.inner.inner, i) => Ok(None),
            None => r.inner.get(i).map(Some),
        }
    }
    fn null() -> Option<Self> {
        Some(None)
    }
    fn refusal(ty: &D) -> Option<&'static str> {
        match ty {
            D::Nullable(t) => refusal::<T>(t),
            t => T::refusal(t),
        }
    }
}

/// An Array (or Map) column: end offsets and a reader of the flattened elements.
pub struct ArrayReader<'r, T: FromColumn<'r>> {
    offsets: &'r [u64],
    inner: Reader<'r, T>,
    column: &'r str,
}

impl<'r, T: FromColumn<'r>> ArrayReader<'r, T> {
    fn new(view: &ColumnView<'r>, ctx: &ReadContext) -> Result<Self> {
        let a = view.as_array()?;
        Ok(ArrayReader { offsets: a.offsets(), inner: Reader::new(a.inner(), ctx)?, column: view.name() })
    }
}

#[inline]
fn range(offsets: &[u64], i: usize, column: &str) -> Result<std::ops::Range<usize>> {
    let end = *offsets.get(i).ok_or_else(|| out_of_bounds(column, i))? as usize;
    let start = if i == 0 { 0 } else { offsets[i - 1] as usize };
    if start > end {
        return Err(out_of_bounds(column, i));
    }
    Ok(start..end)
}

/// `Vec<T>` reads Array(T) (and Map as pairs); `Vec<u8>` and `&[u8]` also read String;
/// `Vec<f32>` / `Vec<f64>` also read QBit vectors.
#[non_exhaustive]
pub enum BytesOrArray<'r, A> {
    /// Array elements.
    Array(A),
    /// String bytes.
    Bytes(Strings<'r>),
    /// QBit vectors (decoded from their bit planes row by row).
    QBit(QBitView<'r>),
}

impl<'r, T: FromColumn<'r>> FromColumn<'r> for Vec<T> {
    type Reader = BytesOrArray<'r, ArrayReader<'r, T>>;
    fn accepts(ty: &D) -> bool {
        match ty {
            D::Array(t) => accepts::<T>(t),
            D::Map(k, v) => T::accepts(&super::map_entry(k, v)),
            D::Nested(fields) => {
                T::accepts(&D::Tuple(fields.iter().map(|(n, t)| (Some(n.clone()), t.clone())).collect()))
            }
            D::String => T::BYTE,
            D::QBit(..) => QBitElement::of(ty).is_some_and(|(e, _)| T::reads_qbit(e)),
            _ => false,
        }
    }
    fn refusal(ty: &D) -> Option<&'static str> {
        match ty {
            D::Array(t) => refusal::<T>(t),
            _ => None,
        }
    }
    fn reader(view: &ColumnView<'r>, ctx: &ReadContext) -> Result<Self::Reader> {
        Ok(match view.data_type() {
            D::String => BytesOrArray::Bytes(Strings::new(view)?),
            D::QBit(..) => BytesOrArray::QBit(QBitView::new(view)?),
            _ => BytesOrArray::Array(ArrayReader::new(view, ctx)?),
        })
    }
    #[inline]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        match r {
            BytesOrArray::Array(a) => range(a.offsets, i, a.column)?.map(|j| a.inner.get(j)).collect(),
            BytesOrArray::Bytes(s) => T::bytes_to_vec(s.bytes(i)?).ok_or_else(|| Error::internal("not a byte type")),
            BytesOrArray::QBit(q) => {
                T::qbit_row(q, i).unwrap_or_else(|| Err(Error::internal("not a QBit element type")))
            }
        }
    }
}

/// An Array of fixed-width values read as borrowed slices.
pub struct SliceReader<'r, T> {
    offsets: &'r [u64],
    values: &'r [T],
    column: &'r str,
}

impl<'r, T> FromColumn<'r> for &'r [T]
where
    T: FromColumn<'r> + crate::view::FixedValue,
{
    type Reader = BytesOrArray<'r, SliceReader<'r, T>>;
    fn accepts(ty: &D) -> bool {
        match ty {
            // The element type exactly (no LowCardinality or Nullable elements: they
            // are not a plain `[T]` on the wire).
            D::Array(t) => <T as FromColumn<'r>>::accepts(t) && t.fixed_width() == Some(std::mem::size_of::<T>()),
            D::String => T::BYTE,
            _ => false,
        }
    }
    fn refusal(ty: &D) -> Option<&'static str> {
        match ty {
            D::Array(t) if <T as FromColumn<'r>>::accepts(t) => {
                Some("a borrowed slice needs the column's own element type: read it into a Vec")
            }
            D::Array(t) => <T as FromColumn<'r>>::refusal(t),
            _ => None,
        }
    }
    fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
        Ok(match view.data_type() {
            D::String => BytesOrArray::Bytes(Strings::new(view)?),
            _ => {
                let a = view.as_array()?;
                BytesOrArray::Array(SliceReader {
                    offsets: a.offsets(),
                    values: a.inner().values::<T>()?,
                    column: view.name(),
                })
            }
        })
    }
    #[inline]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        match r {
            BytesOrArray::Array(a) => {
                let range = range(a.offsets, i, a.column)?;
                a.values.get(range).ok_or_else(|| out_of_bounds(a.column, i))
            }
            BytesOrArray::Bytes(s) => T::bytes_as_slice(s.bytes(i)?).ok_or_else(|| Error::internal("not a byte type")),
            BytesOrArray::QBit(_) => Err(Error::internal("a QBit column has no slices to borrow")),
        }
    }
}

macro_rules! tuple {
    ($n:literal; $($t:ident $k:tt),+) => {
        impl<'r, $($t: FromColumn<'r>),+> FromColumn<'r> for ($($t,)+) {
            type Reader = ($(Reader<'r, $t>,)+);
            fn accepts(ty: &D) -> bool {
                match ty {
                    D::Tuple(e) if e.len() == $n => true $(&& accepts::<$t>(&e[$k].1))+,
                    _ => false,
                }
            }
            fn reader(view: &ColumnView<'r>, ctx: &ReadContext) -> Result<Self::Reader> {
                Ok(($(Reader::new(&view.tuple_element($k)?, ctx)?,)+))
            }
            #[inline]
            fn read(r: &Self::Reader, i: usize) -> Result<Self> {
                Ok(($(r.$k.get(i)?,)+))
            }
        }
    };
}
tuple_arities!(tuple);

/// A Map column: offsets and readers of the keys and the values.
pub struct MapReader<'r, K: FromColumn<'r>, V: FromColumn<'r>> {
    offsets: &'r [u64],
    keys: Reader<'r, K>,
    values: Reader<'r, V>,
    column: &'r str,
}

impl<'r, K: FromColumn<'r>, V: FromColumn<'r>> MapReader<'r, K, V> {
    fn new(view: &ColumnView<'r>, ctx: &ReadContext) -> Result<Self> {
        let a = view.as_array()?;
        Ok(MapReader {
            offsets: a.offsets(),
            keys: Reader::new(&a.inner().tuple_element(0)?, ctx)?,
            values: Reader::new(&a.inner().tuple_element(1)?, ctx)?,
            column: view.name(),
        })
    }
    fn pairs(&self, i: usize) -> Result<impl Iterator<Item = Result<(K, V)>> + use<'_, 'r, K, V>> {
        Ok(range(self.offsets, i, self.column)?.map(|j| Ok((self.keys.get(j)?, self.values.get(j)?))))
    }
}

fn map_accepts<'r, K: FromColumn<'r>, V: FromColumn<'r>>(ty: &D) -> bool {
    matches!(ty, D::Map(k, v) if accepts::<K>(k) && accepts::<V>(v))
}

/// `FromColumn` for a map type: a Map column's entries of each row, collected.
macro_rules! map_from_column {
    ($($map:ident: $($bound:path),+;)+) => {$(
        impl<'r, K: FromColumn<'r> $(+ $bound)+, V: FromColumn<'r>> FromColumn<'r> for $map<K, V> {
            type Reader = MapReader<'r, K, V>;
            fn accepts(ty: &D) -> bool {
                map_accepts::<K, V>(ty)
            }
            fn reader(view: &ColumnView<'r>, ctx: &ReadContext) -> Result<Self::Reader> {
                MapReader::new(view, ctx)
            }
            fn read(r: &Self::Reader, i: usize) -> Result<Self> {
                r.pairs(i)?.collect()
            }
        }
    )+};
}
map_from_column! {
    HashMap: Eq, Hash;
    BTreeMap: Ord;
}

/// A Decimal column.
pub struct DecimalReader<'r> {
    col: DecimalColumn<'r>,
    column: &'r str,
}

impl<'r> FromColumn<'r> for Decimal {
    type Reader = DecimalReader<'r>;
    fn accepts(ty: &D) -> bool {
        matches!(ty, D::Decimal { .. })
    }
    fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
        Ok(DecimalReader { col: convert::decimal_column(view)?, column: view.name() })
    }
    #[inline]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        if i >= r.col.len() {
            return Err(out_of_bounds(r.column, i));
        }
        Ok(r.col.get(i))
    }
}

#[cfg(feature = "rust_decimal")]
impl<'r> FromColumn<'r> for crate::convert::ext::rust_decimal::Decimal {
    type Reader = DecimalReader<'r>;
    fn accepts(ty: &D) -> bool {
        matches!(ty, D::Decimal { precision: ..=28, .. })
    }
    fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
        Ok(DecimalReader { col: convert::decimal_column(view)?, column: view.name() })
    }
    #[inline]
    fn read(r: &Self::Reader, i: usize) -> Result<Self> {
        if i >= r.col.len() {
            return Err(out_of_bounds(r.column, i));
        }
        Ok(r.col.to_rust_decimal(i)?)
    }
}

/// Date or Date32 days.
#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
#[non_exhaustive]
pub enum DateReader<'r> {
    /// Date: days since 1970 as u16.
    Date(Values<'r, u16>),
    /// Date32: signed days since 1970.
    Date32(Values<'r, i32>),
}

#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
impl<'r> DateReader<'r> {
    fn new(view: &ColumnView<'r>) -> Result<Self> {
        Ok(match plain(view.data_type()) {
            D::Date => DateReader::Date(Values { values: view.values()?, column: view.name() }),
            _ => DateReader::Date32(Values { values: view.values()?, column: view.name() }),
        })
    }
}

/// DateTime or DateTime64 values with the zone they are shown in.
#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
pub struct DateTimeReader<'r, Z> {
    secs: Option<Values<'r, u32>>,
    ticks: Option<(Values<'r, i64>, u8)>,
    zone: Z,
}

#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
impl<'r, Z> DateTimeReader<'r, Z> {
    fn new(view: &ColumnView<'r>, zone: impl FnOnce(&str) -> Result<Z>, ctx: &ReadContext) -> Result<Self> {
        let (tz, secs, ticks) = match plain(view.data_type()) {
            D::DateTime(tz) => (tz.clone(), Some(Values { values: view.values()?, column: view.name() }), None),
            D::DateTime64(p, tz) => {
                (tz.clone(), None, Some((Values { values: view.values()?, column: view.name() }, *p)))
            }
            _ => return Err(Error::internal(format!("column `{}` is not a DateTime", view.name()))),
        };
        let zone = zone(tz.as_deref().unwrap_or(&ctx.server_timezone))?;
        Ok(DateTimeReader { secs, ticks, zone })
    }
}

/// Time (seconds) or Time64(p) (ticks) values.
#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
#[non_exhaustive]
pub enum DurationReader<'r> {
    /// Time.
    Time(Values<'r, i32>),
    /// Time64 with its precision.
    Time64(Values<'r, i64>, u8),
}

#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
impl<'r> DurationReader<'r> {
    fn new(view: &ColumnView<'r>) -> Result<Self> {
        Ok(match plain(view.data_type()) {
            D::Time64(p) => DurationReader::Time64(Values { values: view.values()?, column: view.name() }, *p),
            _ => DurationReader::Time(Values { values: view.values()?, column: view.name() }),
        })
    }
}

#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
fn is_datetime(ty: &D) -> bool {
    matches!(ty, D::DateTime(_) | D::DateTime64(..))
}

/// `FromColumn` for a date, instant or duration type of a time library, through
/// the shared readers above and the library's `convert` functions.
#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
macro_rules! temporal {
    (date $t:ty, |$d:ident| $date:expr, |$d32:ident| $date32:expr) => {
        impl<'r> FromColumn<'r> for $t {
            type Reader = DateReader<'r>;
            fn accepts(ty: &D) -> bool {
                matches!(ty, D::Date | D::Date32)
            }
            fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
                DateReader::new(view)
            }
            #[inline]
            fn read(r: &Self::Reader, i: usize) -> Result<Self> {
                match r {
                    DateReader::Date(v) => {
                        let $d = v.at(i)?;
                        Ok($date)
                    }
                    DateReader::Date32(v) => {
                        let $d32 = v.at(i)?;
                        Ok($date32)
                    }
                }
            }
        }
    };
    (instant $t:ty, $zone:ty, |$name:ident| $mkzone:expr, |$s:ident, $z:ident| $secs:expr, |$ticks:ident, $p:ident, $z64:ident| $ticks_expr:expr) => {
        impl<'r> FromColumn<'r> for $t {
            type Reader = DateTimeReader<'r, $zone>;
            fn accepts(ty: &D) -> bool {
                is_datetime(ty)
            }
            fn reader(view: &ColumnView<'r>, ctx: &ReadContext) -> Result<Self::Reader> {
                DateTimeReader::new(view, |$name: &str| Ok($mkzone), ctx)
            }
            #[inline]
            fn read(r: &Self::Reader, i: usize) -> Result<Self> {
                #[allow(unused_variables)]
                let $z = &r.zone;
                #[allow(unused_variables)]
                let $z64 = &r.zone;
                match (&r.secs, &r.ticks) {
                    (Some(v), _) => {
                        let $s = v.at(i)?;
                        Ok($secs)
                    }
                    (_, Some((v, p))) => {
                        let ($ticks, $p) = (v.at(i)?, *p);
                        Ok($ticks_expr)
                    }
                    _ => Err(Error::internal("empty DateTime reader")),
                }
            }
        }
    };
    (duration $t:ty, |$s:ident| $secs:expr, |$ticks:ident, $p:ident| $ticks_expr:expr) => {
        impl<'r> FromColumn<'r> for $t {
            type Reader = DurationReader<'r>;
            fn accepts(ty: &D) -> bool {
                matches!(ty, D::Time | D::Time64(_))
            }
            fn reader(view: &ColumnView<'r>, _: &ReadContext) -> Result<Self::Reader> {
                DurationReader::new(view)
            }
            #[inline]
            fn read(r: &Self::Reader, i: usize) -> Result<Self> {
                match r {
                    DurationReader::Time(v) => {
                        let $s = v.at(i)?;
                        Ok($secs)
                    }
                    DurationReader::Time64(v, p) => {
                        let ($ticks, $p) = (v.at(i)?, *p);
                        Ok($ticks_expr)
                    }
                }
            }
        }
    };
}

#[cfg(feature = "time")]
mod time_impls {
    use super::*;
    use crate::convert::ext::time::{Date, Duration, OffsetDateTime};
    use crate::convert::time as tc;

    temporal!(date Date, |d| tc::date(d), |d| tc::date32(d)?);
    // The `time` crate has no zone database: instants are read in UTC.
    temporal!(instant OffsetDateTime, (), |_n| (), |s, _z| tc::datetime(s), |t, p, _z| tc::datetime64(t, p)?);
    temporal!(duration Duration, |s| tc::time(s), |t, p| tc::time64(t, p));
}

#[cfg(feature = "jiff")]
mod jiff_impls {
    use super::*;
    use crate::convert::ext::jiff::civil::Date;
    use crate::convert::ext::jiff::tz::TimeZone;
    use crate::convert::ext::jiff::{SignedDuration, Timestamp, ZonedDateTime};
    use crate::convert::jiff as jc;

    temporal!(date Date, |d| jc::date(d), |d| jc::date32(d)?);
    temporal!(instant Timestamp, (), |_n| (), |s, _z| jc::timestamp(s), |t, p, _z| jc::timestamp64(t, p)?);
    // In the column's zone, else the server's.
    temporal!(instant ZonedDateTime, TimeZone, |name| jc::tz(name)?, |s, z| jc::datetime(s, z), |t, p, z| jc::datetime64(t, p, z)?);
    temporal!(duration SignedDuration, |s| jc::time(s), |t, p| jc::time64(t, p));
}

#[cfg(feature = "chrono")]
mod chrono_impls {
    use super::*;
    use crate::convert::chrono as cc;
    use crate::convert::ext::chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
    use crate::convert::ext::chrono_tz::Tz;

    temporal!(date NaiveDate, |d| cc::date(d), |d| cc::date32(d)?);
    temporal!(duration chrono::TimeDelta, |s| cc::time(s), |t, p| cc::time64(t, p)?);
    // In the column's time zone (else the server's).
    temporal!(instant DateTime<Tz>, Tz, |name| cc::tz(name)?, |s, z| cc::datetime(s, z), |t, p, z| cc::datetime64(t, p, z)?);
    temporal!(instant DateTime<Utc>, Utc, |_n| Utc, |s, z| cc::datetime(s, z), |t, p, z| cc::datetime64(t, p, z)?);
    // The wall-clock time in the column's zone (else the server's), as `toString` shows it.
    temporal!(
        instant NaiveDateTime,
        Tz,
        |name| cc::tz(name)?,
        |s, z| cc::datetime(s, z).naive_local(),
        |t, p, z| cc::datetime64(t, p, z)?.naive_local()
    );
}

#[cfg(feature = "chrono")]
use crate::convert::ext::chrono;
