//! Arrow arrays → INSERT data for a table's column types.
//!
//! Each array is prepared for the ClickHouse type of the column it goes into:
//! buffers whose bytes are already what the Native format sends (numbers, dates,
//! FixedString/FixedSizeBinary, 128/256-bit values, string bytes) are borrowed as
//! they are; offsets, null maps and values of another width or unit are converted
//! once. Every check happens here, before anything is sent.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::{Buffer, NullBuffer, ScalarBuffer, ToByteSlice};
use arrow_schema::{DataType as A, TimeUnit};
use chnative::proto::convert::bf16;
use chnative::{DataType as T, InsertData, StartOffsets};
use chnative_proto::uuid_simd::{swap_halves_with, Kernel};

use crate::{Error, Result};

mod check;
mod kept;
pub(crate) use check::{check_schema, check_type};
use check::{find, strip};
pub(crate) use kept::{header_agrees, learn_header, Kept, KeptTables, Pool};

/// Converted data, owning (or sharing, for Arrow buffers) what [`InsertData`] borrows.
#[derive(Debug)]
pub(crate) enum Prep {
    /// Fixed-width values: `rows × width` bytes of an Arrow buffer.
    Fixed { buf: Buffer, width: usize },
    /// Fixed-width values converted into a vector of the [`Pool`].
    Owned { bytes: Vec<u8>, width: usize },
    /// FixedString(N) bytes.
    FixedStrings { buf: Buffer, width: usize },
    /// Strings: u64 end offsets into `data`.
    Blob { ends: Vec<u64>, data: Buffer },
    /// Strings as an Arrow string or binary array holds them: `rows + 1` start offsets into `data`.
    Starts { offsets: Starts, data: Buffer },
    /// Null map (1 = NULL) and values.
    Nullable { nulls: Vec<u8>, inner: Box<Prep> },
    /// u64 end offsets into the elements.
    Array { ends: Vec<u64>, inner: Box<Prep> },
    /// u64 end offsets into the keys and values.
    Map { ends: Vec<u64>, keys: Box<Prep>, values: Box<Prep> },
    /// One per element.
    Tuple(Vec<Prep>),
    /// A whole column built here (QBit's bit planes), sent as it is.
    Column(chnative::Column),
    /// Variant: per row an index into `variants` (255: NULL), and each alternative's values.
    Variant { discriminators: Vec<u8>, variants: Vec<(T, Prep)> },
}

/// The offsets of an Arrow (Large)Utf8/(Large)Binary array, shared.
#[derive(Debug)]
pub(crate) enum Starts {
    I32(ScalarBuffer<i32>),
    I64(ScalarBuffer<i64>),
}

fn accept_any(_: &T) -> bool {
    true
}

/// Appends `v`'s little-endian bytes.
fn put<V: arrow_buffer::ArrowNativeType>(out: &mut Vec<u8>, v: V) {
    out.extend_from_slice(v.to_byte_slice());
}

impl Prep {
    /// The INSERT data borrowing this.
    pub fn data(&self) -> InsertData<'_> {
        match self {
            Prep::Fixed { buf, width } => InsertData::Fixed {
                bytes: buf.as_slice(),
                width: *width,
                rust: "Arrow values",
                // Chosen for the column's type by `prepare`; the width is still checked.
                accepts: accept_any,
            },
            Prep::Owned { bytes, width } => {
                InsertData::Fixed { bytes, width: *width, rust: "Arrow values", accepts: accept_any }
            }
            Prep::FixedStrings { buf, width } => InsertData::FixedStrings { bytes: buf.as_slice(), width: *width },
            Prep::Blob { ends, data } => InsertData::Blob { offsets: ends, data: data.as_slice() },
            Prep::Starts { offsets, data } => InsertData::BlobStarts {
                offsets: match offsets {
                    Starts::I32(o) => StartOffsets::I32(o),
                    Starts::I64(o) => StartOffsets::I64(o),
                },
                data: data.as_slice(),
            },
            Prep::Nullable { nulls, inner } => InsertData::Nullable { nulls, inner: Box::new(inner.data()) },
            Prep::Array { ends, inner } => InsertData::Array { offsets: ends, inner: Box::new(inner.data()) },
            Prep::Map { ends, keys, values } => {
                InsertData::Map { offsets: ends, keys: Box::new(keys.data()), values: Box::new(values.data()) }
            }
            Prep::Tuple(e) => InsertData::Tuple(e.iter().map(Prep::data).collect()),
            Prep::Column(c) => InsertData::Column(c),
            Prep::Variant { discriminators, variants } => InsertData::Variant {
                discriminators,
                variants: variants.iter().map(|(t, p)| (t.clone(), p.data())).collect(),
            },
        }
    }
}

/// A table column an INSERT can write.
#[derive(Debug, Clone)]
pub(crate) struct TableColumn {
    pub name: String,
    pub ty: T,
    pub type_name: String,
}

/// Prepares every column of `batch` for the table's columns, into `out` as
/// (index of the table column, data); converted values go into `pool`'s vectors.
pub(crate) fn prepare_batch(
    batch: &RecordBatch,
    table: &[TableColumn],
    table_name: &str,
    pool: &mut Pool,
    out: &mut Vec<(usize, Prep)>,
) -> Result<()> {
    for (i, (f, arr)) in batch.schema_ref().fields().iter().zip(batch.columns()).enumerate() {
        // The batch's columns usually come in the table's order: look there first.
        let at = match table.get(i) {
            Some(c) if c.name == *f.name() => i,
            _ => find(table, f.name(), table_name)?,
        };
        let col = &table[at];
        let p = match &col.ty {
            T::QBit(..) => qbit(arr, &col.ty),
            ty => prepare(arr, ty, pool),
        };
        let p = p.map_err(|e| match e {
            Error::Conversion(reason) => Error::Mismatch {
                column: f.name().clone(),
                arrow: f.data_type().to_string(),
                clickhouse: col.type_name.clone(),
                reason,
            },
            e => e,
        })?;
        out.push((at, p));
    }
    Ok(())
}

fn conv(msg: impl Into<String>) -> Error {
    Error::Conversion(msg.into())
}

/// Unpacks a dictionary array into plain values.
fn plain(arr: &ArrayRef) -> Result<ArrayRef> {
    match arr.data_type() {
        A::Dictionary(..) => {
            let d = arr.as_any_dictionary();
            let keys = d.keys();
            // The keys' validity carries the NULLs; take() keeps it.
            Ok(arrow_select::take::take(d.values().as_ref(), &cast_keys(keys)?, None)?)
        }
        _ => Ok(arr.clone()),
    }
}

fn cast_keys(keys: &dyn Array) -> Result<arrow_array::UInt64Array> {
    macro_rules! k {
        ($t:ty) => {
            keys.as_primitive::<$t>().iter().map(|k| k.map(|k| k as u64)).collect()
        };
    }
    Ok(match keys.data_type() {
        A::Int8 => k!(Int8Type),
        A::Int16 => k!(Int16Type),
        A::Int32 => k!(Int32Type),
        A::Int64 => k!(Int64Type),
        A::UInt8 => k!(UInt8Type),
        A::UInt16 => k!(UInt16Type),
        A::UInt32 => k!(UInt32Type),
        A::UInt64 => k!(UInt64Type),
        other => return Err(conv(format!("dictionary keys of type {other}"))),
    })
}

/// Prepares `arr` for a column of type `ty`.
pub(crate) fn prepare(arr: &ArrayRef, ty: &T, pool: &mut Pool) -> Result<Prep> {
    let arr = plain(arr)?;
    let (inner_ty, nullable) = strip(ty);
    if let (T::Variant(alts), A::Union(..)) = (inner_ty, arr.data_type()) {
        // A Variant holds NULLs itself (the union's Null member, or a NULL in a member).
        return variant(&arr, alts, pool);
    }
    let nulls = arr.logical_nulls().filter(|n| n.null_count() > 0);
    if matches!(arr.data_type(), A::Null) {
        if !nullable {
            return Err(conv(format!("NULLs cannot go into {ty}")));
        }
        let values = default_values(inner_ty, arr.len())?;
        return Ok(Prep::Nullable { nulls: vec![1; arr.len()], inner: Box::new(values) });
    }
    if nullable {
        let mut map = pool.take(arr.len());
        match &nulls {
            Some(n) => null_map(n, &mut map),
            None => map.resize(arr.len(), 0),
        }
        let inner = values(&arr, inner_ty, nulls.as_ref(), pool)?;
        return Ok(Prep::Nullable { nulls: map, inner: Box::new(inner) });
    }
    if let Some(n) = &nulls {
        return Err(conv(format!("{} NULLs, but {ty} is not Nullable", n.null_count())));
    }
    values(&arr, inner_ty, None, pool)
}

/// Type defaults for `n` rows (the values under an all-NULL Arrow Null array).
fn default_values(ty: &T, n: usize) -> Result<Prep> {
    let shape = ty.wire_shape();
    if let Some(w) = shape.fixed_width() {
        return Ok(Prep::Fixed { buf: Buffer::from_vec(vec![0u8; w * n]), width: w });
    }
    match shape.as_ref() {
        T::String | T::Json(_) => Ok(Prep::Blob { ends: vec![0; n], data: Buffer::from_vec(Vec::<u8>::new()) }),
        T::Array(t) => Ok(Prep::Array { ends: vec![0; n], inner: Box::new(default_values(t, 0)?) }),
        other => Err(conv(format!("NULL-only Arrow data for {other}"))),
    }
}

/// The bytes of a fixed-width array's rows (its offset applied), shared
/// without allocating (`to_data` would build an `ArrayData` per call).
fn fixed_buf(arr: &dyn Array, width: usize) -> Buffer {
    if let Some(a) = arr.as_fixed_size_binary_opt() {
        return a.values().clone();
    }
    arrow_array::downcast_primitive_array!(
        arr => arr.values().inner().clone(),
        _ => {
            let d = arr.to_data();
            d.buffers()[0].slice_with_length(d.offset() * width, d.len() * width)
        }
    )
}

fn vec_buf<V: arrow_buffer::ArrowNativeType>(v: Vec<V>) -> Buffer {
    Buffer::from_vec(v)
}

fn is_null(nulls: Option<&NullBuffer>, i: usize) -> bool {
    nulls.is_some_and(|n| n.is_null(i))
}

fn pow10(n: u32) -> i64 {
    10i64.pow(n)
}

fn unit_digits(u: &TimeUnit) -> u32 {
    match u {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    }
}

/// Appends the ClickHouse null map (1 = NULL) of Arrow validity `nulls`.
///
/// A word of validity at a time, each of its bytes turned into eight map bytes by
/// a table: a bit-by-bit iterator cost more than the rest of a Nullable column's
/// preparation.
fn null_map(nulls: &NullBuffer, out: &mut Vec<u8>) {
    /// For each validity byte, the eight map bytes of its bits (lowest bit first).
    const SPREAD: [u64; 256] = {
        let mut t = [0u64; 256];
        let mut b = 0;
        while b < 256 {
            let mut bit = 0;
            while bit < 8 {
                if (b >> bit) & 1 == 0 {
                    t[b] |= 1 << (8 * bit);
                }
                bit += 1;
            }
            b += 1;
        }
        t
    };
    let chunks = nulls.inner().bit_chunks();
    out.reserve(nulls.len());
    for word in chunks.iter() {
        for byte in word.to_le_bytes() {
            out.extend_from_slice(&SPREAD[usize::from(byte)].to_le_bytes());
        }
    }
    let rest = chunks.remainder_bits().to_le_bytes();
    for (i, byte) in rest.iter().enumerate().take(chunks.remainder_len().div_ceil(8)) {
        let take = (chunks.remainder_len() - 8 * i).min(8);
        out.extend_from_slice(&SPREAD[usize::from(*byte)].to_le_bytes()[..take]);
    }
}

/// Appends Arrow seconds as DateTime's u32 seconds (0 at NULL rows).
///
/// In chunks: a chunk whose values are all in range (the check and the narrowing
/// are loops the compiler vectorises) is converted whole, and only a chunk with a
/// value out of range goes row by row, to name the row or skip it when NULL.
fn seconds_to_u32(src: &[i64], nulls: Option<&NullBuffer>, out: &mut Vec<u8>) -> Result<()> {
    const CHUNK: usize = 512;
    let mut narrow = [0u32; CHUNK];
    out.reserve(4 * src.len());
    for (c, chunk) in src.chunks(CHUNK).enumerate() {
        let in_range = chunk.iter().fold(true, |ok, &v| ok & (v as u64 <= u64::from(u32::MAX)));
        let first = c * CHUNK;
        if in_range {
            for (d, &v) in narrow.iter_mut().zip(chunk) {
                *d = v as u32;
            }
            if let Some(n) = nulls {
                for (i, d) in narrow[..chunk.len()].iter_mut().enumerate() {
                    if n.is_null(first + i) {
                        *d = 0;
                    }
                }
            }
        } else {
            for (i, (d, &v)) in narrow.iter_mut().zip(chunk).enumerate() {
                let row = first + i;
                *d = if is_null(nulls, row) {
                    0
                } else {
                    u32::try_from(v).map_err(|_| {
                        conv(format!("row {row}: {v} s is outside DateTime's range (1970..2106); use DateTime64"))
                    })?
                };
            }
        }
        out.extend_from_slice(bytemuck::cast_slice(&narrow[..chunk.len()]));
    }
    Ok(())
}

/// i64 ticks with `from` decimal digits → ticks with `to` digits, exactly,
/// each given to `emit` with its row (0 at NULL rows).
fn rescale(
    values: &[i64],
    from: u32,
    to: u32,
    nulls: Option<&NullBuffer>,
    what: &str,
    mut emit: impl FnMut(usize, i64) -> Result<()>,
) -> Result<()> {
    for (i, &v) in values.iter().enumerate() {
        if is_null(nulls, i) {
            emit(i, 0)?;
            continue;
        }
        let r = if to >= from {
            v.checked_mul(pow10(to - from))
                .ok_or_else(|| conv(format!("row {i}: {v} overflows {what} at {to} fractional digits")))?
        } else {
            let f = pow10(from - to);
            if v % f != 0 {
                return Err(conv(format!(
                    "row {i}: {v} has more precision than {what} keeps ({to} fractional digits)"
                )));
            }
            v / f
        };
        emit(i, r)?;
    }
    Ok(())
}

fn ticks(arr: &dyn Array) -> Result<(&[i64], u32)> {
    Ok(match arr.data_type() {
        A::Timestamp(TimeUnit::Second, _) => (arr.as_primitive::<TimestampSecondType>().values(), 0),
        A::Timestamp(TimeUnit::Millisecond, _) => (arr.as_primitive::<TimestampMillisecondType>().values(), 3),
        A::Timestamp(TimeUnit::Microsecond, _) => (arr.as_primitive::<TimestampMicrosecondType>().values(), 6),
        A::Timestamp(TimeUnit::Nanosecond, _) => (arr.as_primitive::<TimestampNanosecondType>().values(), 9),
        A::Duration(TimeUnit::Second) => (arr.as_primitive::<DurationSecondType>().values(), 0),
        A::Duration(TimeUnit::Millisecond) => (arr.as_primitive::<DurationMillisecondType>().values(), 3),
        A::Duration(TimeUnit::Microsecond) => (arr.as_primitive::<DurationMicrosecondType>().values(), 6),
        A::Duration(TimeUnit::Nanosecond) => (arr.as_primitive::<DurationNanosecondType>().values(), 9),
        A::Time64(TimeUnit::Microsecond) => (arr.as_primitive::<Time64MicrosecondType>().values(), 6),
        A::Time64(TimeUnit::Nanosecond) => (arr.as_primitive::<Time64NanosecondType>().values(), 9),
        A::Int64 => (arr.as_primitive::<Int64Type>().values(), 0),
        other => return Err(conv(format!("{other} is not a time value"))),
    })
}

/// Strings of any Arrow string or binary type, for a String column: the
/// offsets and bytes of (Large)Utf8/(Large)Binary shared as they are, views gathered.
fn strings(arr: &dyn Array) -> Result<Prep> {
    fn starts<O: arrow_array::OffsetSizeTrait>(o: &arrow_buffer::OffsetBuffer<O>) -> ScalarBuffer<O> {
        o.inner().clone()
    }
    Ok(match arr.data_type() {
        A::Utf8 => {
            let a = arr.as_string::<i32>();
            Prep::Starts { offsets: Starts::I32(starts(a.offsets())), data: a.values().clone() }
        }
        A::LargeUtf8 => {
            let a = arr.as_string::<i64>();
            Prep::Starts { offsets: Starts::I64(starts(a.offsets())), data: a.values().clone() }
        }
        A::Binary => {
            let a = arr.as_binary::<i32>();
            Prep::Starts { offsets: Starts::I32(starts(a.offsets())), data: a.values().clone() }
        }
        A::LargeBinary => {
            let a = arr.as_binary::<i64>();
            Prep::Starts { offsets: Starts::I64(starts(a.offsets())), data: a.values().clone() }
        }
        _ => {
            let (ends, data) = blob(arr)?;
            Prep::Blob { ends, data }
        }
    })
}

/// Strings of any Arrow string or binary type → u64 end offsets and the bytes.
fn blob(arr: &dyn Array) -> Result<(Vec<u64>, Buffer)> {
    fn from_offsets<O: arrow_array::OffsetSizeTrait>(offsets: &[O], values: &Buffer) -> (Vec<u64>, Buffer) {
        let base = offsets[0].as_usize();
        let end = offsets[offsets.len() - 1].as_usize();
        let ends = offsets[1..].iter().map(|o| (o.as_usize() - base) as u64).collect();
        (ends, values.slice_with_length(base, end - base))
    }
    Ok(match arr.data_type() {
        A::Utf8 => {
            let a = arr.as_string::<i32>();
            from_offsets(a.value_offsets(), a.values())
        }
        A::LargeUtf8 => {
            let a = arr.as_string::<i64>();
            from_offsets(a.value_offsets(), a.values())
        }
        A::Binary => {
            let a = arr.as_binary::<i32>();
            from_offsets(a.value_offsets(), a.values())
        }
        A::LargeBinary => {
            let a = arr.as_binary::<i64>();
            from_offsets(a.value_offsets(), a.values())
        }
        A::Utf8View | A::BinaryView => {
            let mut data = Vec::new();
            let mut ends = Vec::with_capacity(arr.len());
            let push = |b: &[u8], data: &mut Vec<u8>, ends: &mut Vec<u64>| {
                data.extend_from_slice(b);
                ends.push(data.len() as u64);
            };
            if let A::Utf8View = arr.data_type() {
                for v in arr.as_string_view().iter() {
                    push(v.unwrap_or("").as_bytes(), &mut data, &mut ends);
                }
            } else {
                for v in arr.as_binary_view().iter() {
                    push(v.unwrap_or(b""), &mut data, &mut ends);
                }
            }
            (ends, Buffer::from_vec(data))
        }
        other => return Err(conv(format!("{other} is not a string type"))),
    })
}

/// Prepares the values of `arr` (NULLs, if any, in `nulls`) for plain type `t`.
fn values(arr: &ArrayRef, t: &T, nulls: Option<&NullBuffer>, pool: &mut Pool) -> Result<Prep> {
    let shape = t.wire_shape();
    let t = shape.as_ref();
    check_type(arr.data_type(), t).map_err(conv)?;
    let n = arr.len();
    let fixed = |w: usize| Ok(Prep::Fixed { buf: fixed_buf(arr.as_ref(), w), width: w });
    match (t, arr.data_type()) {
        (T::Int8 | T::UInt8 | T::Enum8(_), A::Int8 | A::UInt8) => fixed(1),
        (T::Int16 | T::UInt16 | T::Enum16(_), A::Int16 | A::UInt16) => fixed(2),
        (T::Int32 | T::UInt32 | T::Float32 | T::Date32 | T::DateTime(_) | T::Ipv4, _)
            if arr.data_type().primitive_width() == Some(4) =>
        {
            if let T::Date32 = t {
                check_date32(arr.as_primitive::<Date32Type>().values(), nulls)?;
            }
            fixed(4)
        }
        (T::Int64 | T::UInt64 | T::Float64 | T::Interval(_), _) if arr.data_type().primitive_width() == Some(8) => {
            fixed(8)
        }
        (T::BFloat16, A::Float32) => {
            let mut out = pool.take(2 * n);
            for &x in arr.as_primitive::<Float32Type>().values() {
                put(&mut out, bf16::from_f32_truncate(x));
            }
            Ok(Prep::Owned { bytes: out, width: 2 })
        }
        (T::Bool, A::Boolean) => {
            let mut out = pool.take(n);
            out.extend(arr.as_boolean().values().iter().map(u8::from));
            Ok(Prep::Owned { bytes: out, width: 1 })
        }
        (T::Date, A::Date32) => {
            let src = arr.as_primitive::<Date32Type>().values();
            let mut out = pool.take(2 * n);
            for (i, &d) in src.iter().enumerate() {
                if is_null(nulls, i) {
                    put(&mut out, 0u16);
                    continue;
                }
                put(
                    &mut out,
                    u16::try_from(d).map_err(|_| {
                        conv(format!("row {i}: day {d} is outside Date's range (1970-01-01..2149-06-06); use Date32"))
                    })?,
                );
            }
            Ok(Prep::Owned { bytes: out, width: 2 })
        }
        (T::DateTime(_), A::Timestamp(..)) => {
            let (src, digits) = ticks(arr.as_ref())?;
            let mut out = pool.take(4 * n);
            if digits == 0 {
                seconds_to_u32(src, nulls, &mut out)?;
                return Ok(Prep::Owned { bytes: out, width: 4 });
            }
            rescale(src, digits, 0, nulls, "DateTime", |i, s| {
                let s = u32::try_from(s).map_err(|_| {
                    conv(format!("row {i}: {s} s is outside DateTime's range (1970..2106); use DateTime64"))
                })?;
                put(&mut out, s);
                Ok(())
            })?;
            Ok(Prep::Owned { bytes: out, width: 4 })
        }
        (T::DateTime64(p, _), A::Timestamp(unit, _)) | (T::Time64(p), A::Duration(unit) | A::Time64(unit)) => {
            let digits = unit_digits(unit);
            if digits == u32::from(*p) {
                return fixed(8);
            }
            let (src, _) = ticks(arr.as_ref())?;
            let mut out = pool.take(8 * n);
            rescale(src, digits, u32::from(*p), nulls, &t.to_string(), |_, v| {
                put(&mut out, v);
                Ok(())
            })?;
            Ok(Prep::Owned { bytes: out, width: 8 })
        }
        (T::Time, A::Time32(TimeUnit::Second)) => fixed(4),
        (T::Time, A::Duration(unit)) => {
            let (src, _) = ticks(arr.as_ref())?;
            let mut out = pool.take(4 * n);
            rescale(src, unit_digits(unit), 0, nulls, "Time", |i, s| {
                let s = i32::try_from(s).map_err(|_| conv(format!("row {i}: {s} s is outside Time's range")))?;
                put(&mut out, s);
                Ok(())
            })?;
            Ok(Prep::Owned { bytes: out, width: 4 })
        }
        (T::Interval(_), A::Duration(_)) => fixed(8),
        (T::Uuid, A::FixedSizeBinary(16)) => {
            let src = fixed_buf(arr.as_ref(), 16);
            let mut out = vec![0u8; src.len()];
            swap_halves_with(Kernel::detect(), src.as_slice(), &mut out).map_err(chnative::Error::from)?;
            Ok(Prep::Fixed { buf: vec_buf(out), width: 16 })
        }
        (T::Ipv6 | T::Int128 | T::UInt128, A::FixedSizeBinary(16)) => fixed(16),
        (T::Int256 | T::UInt256, A::FixedSizeBinary(32)) => fixed(32),
        (T::Int128, A::Decimal128(_, 0)) => fixed(16),
        (T::Int256, A::Decimal256(_, 0)) => fixed(32),
        (T::Int128, A::Decimal256(_, 0)) | (T::Int256, A::Decimal128(_, 0)) => decimal(arr, t, nulls),
        (T::Decimal { .. }, _) => decimal(arr, t, nulls),
        (T::Enum8(pairs), A::Utf8 | A::LargeUtf8 | A::Utf8View) => {
            let map: HashMap<&str, i8> = pairs.iter().map(|(l, v)| (l.as_str(), *v)).collect();
            let mut out = pool.take(n);
            enum_values(arr, nulls, |s| map.get(s).copied(), &mut out)?;
            Ok(Prep::Owned { bytes: out, width: 1 })
        }
        (T::Enum16(pairs), A::Utf8 | A::LargeUtf8 | A::Utf8View) => {
            let map: HashMap<&str, i16> = pairs.iter().map(|(l, v)| (l.as_str(), *v)).collect();
            let mut out = pool.take(2 * n);
            enum_values(arr, nulls, |s| map.get(s).copied(), &mut out)?;
            Ok(Prep::Owned { bytes: out, width: 2 })
        }
        (T::String | T::Json(_), _) => strings(arr.as_ref()),
        (T::FixedString(w), A::FixedSizeBinary(_)) => {
            Ok(Prep::FixedStrings { buf: fixed_buf(arr.as_ref(), *w), width: *w })
        }
        (T::FixedString(w), _) => {
            let (ends, data) = blob(arr.as_ref())?;
            let mut out = vec![0u8; w * n];
            let mut start = 0usize;
            for (i, &e) in ends.iter().enumerate() {
                let s = &data.as_slice()[start..e as usize];
                if s.len() > *w {
                    return Err(conv(format!("row {i}: {} bytes do not fit FixedString({w})", s.len())));
                }
                out[i * w..i * w + s.len()].copy_from_slice(s);
                start = e as usize;
            }
            Ok(Prep::FixedStrings { buf: vec_buf(out), width: *w })
        }
        (T::Array(inner), A::List(_)) => {
            let l = arr.as_list::<i32>();
            let (ends, values) = list_parts(l.value_offsets(), l.values());
            Ok(Prep::Array { ends, inner: Box::new(prepare(&values, inner, pool)?) })
        }
        (T::Array(inner), A::LargeList(_)) => {
            let l = arr.as_list::<i64>();
            let (ends, values) = list_parts(l.value_offsets(), l.values());
            Ok(Prep::Array { ends, inner: Box::new(prepare(&values, inner, pool)?) })
        }
        (T::Array(inner), A::FixedSizeList(_, size)) => {
            let l = arr.as_fixed_size_list();
            let size = *size as usize;
            let values = l.values().slice(l.offset() * size, n * size);
            let ends = (1..=n).map(|i| (i * size) as u64).collect();
            Ok(Prep::Array { ends, inner: Box::new(prepare(&values, inner, pool)?) })
        }
        (T::Map(k, v), A::Map(..)) => {
            let m = arr.as_map();
            let (ends, entries) = list_parts(m.value_offsets(), &(Arc::new(m.entries().clone()) as ArrayRef));
            let entries = entries.as_struct();
            let keys = prepare(entries.column(0), k, pool)?;
            let values = prepare(entries.column(1), v, pool)?;
            Ok(Prep::Map { ends, keys: Box::new(keys), values: Box::new(values) })
        }
        (T::Tuple(elems), A::Struct(_)) => {
            let s = arr.as_struct();
            let mut out = Vec::with_capacity(elems.len());
            for (i, ((_, et), col)) in elems.iter().zip(s.columns()).enumerate() {
                out.push(prepare(col, et, pool).map_err(|e| match e {
                    Error::Conversion(m) => conv(format!("tuple element {}: {m}", i + 1)),
                    e => e,
                })?);
            }
            Ok(Prep::Tuple(out))
        }
        (T::QBit(..), _) => Err(conv("a QBit inside another type cannot be inserted from Arrow")),
        (T::Variant(alts), A::Union(..)) => variant(arr, alts, pool),
        (t, a) => Err(conv(format!("Arrow {a} cannot go into {t}"))),
    }
}

/// Vectors (fixed-size or plain lists of floats, each of the QBit's dimension) → bit planes.
fn qbit(arr: &ArrayRef, ty: &T) -> Result<Prep> {
    use chnative::proto::Element;
    use chnative_proto::qbit::transpose;
    let arr = plain(arr)?;
    if let Some(n) = arr.logical_nulls().filter(|n| n.null_count() > 0) {
        return Err(conv(format!("{} NULLs, but {ty} is not Nullable", n.null_count())));
    }
    check_type(arr.data_type(), ty).map_err(conv)?;
    let (elem, dim) = Element::of(ty).ok_or_else(|| conv(format!("{ty} is not a QBit this crate writes")))?;
    let n = arr.len();
    let values: ArrayRef = match arr.data_type() {
        A::FixedSizeList(_, size) => {
            if *size as usize != dim {
                return Err(conv(format!("vectors of {size} values do not fit {ty}")));
            }
            let l = arr.as_fixed_size_list();
            l.values().slice(l.offset() * dim, n * dim)
        }
        _ => {
            let (ends, values) = match arr.data_type() {
                A::List(_) => {
                    let l = arr.as_list::<i32>();
                    list_parts(l.value_offsets(), l.values())
                }
                _ => {
                    let l = arr.as_list::<i64>();
                    list_parts(l.value_offsets(), l.values())
                }
            };
            let mut prev = 0u64;
            for (i, &e) in ends.iter().enumerate() {
                if (e - prev) as usize != dim {
                    return Err(conv(format!("row {i}: a vector of {} values does not fit {ty}", e - prev)));
                }
                prev = e;
            }
            values
        }
    };
    if values.null_count() > 0 {
        return Err(conv(format!("NULL elements cannot go into {ty}")));
    }
    let data = match elem {
        Element::Float64 => transpose(values.as_primitive::<Float64Type>().values(), dim),
        Element::Float32 => transpose(values.as_primitive::<Float32Type>().values(), dim),
        Element::BFloat16 => {
            let v: Vec<u16> =
                values.as_primitive::<Float32Type>().values().iter().map(|&x| bf16::from_f32_truncate(x)).collect();
            transpose(&v, dim)
        }
        other => return Err(conv(format!("QBit elements of {other:?} are not supported ({ty})"))),
    }
    .map_err(chnative::Error::from)?;
    let column = chnative::Column::new("qbit", ty.to_string(), data).map_err(chnative::Error::from)?;
    Ok(Prep::Column(column))
}

fn check_date32(days: &[i32], nulls: Option<&NullBuffer>) -> Result<()> {
    // Date32's range: 1900-01-01 ..= 2299-12-31.
    const MIN: i32 = -25567;
    const MAX: i32 = 120529;
    for (i, &d) in days.iter().enumerate() {
        if !(MIN..=MAX).contains(&d) && !is_null(nulls, i) {
            return Err(conv(format!("row {i}: day {d} is outside Date32's range (1900-01-01..2299-12-31)")));
        }
    }
    Ok(())
}

fn enum_values<V: arrow_buffer::ArrowNativeType + Default>(
    arr: &ArrayRef,
    nulls: Option<&NullBuffer>,
    f: impl Fn(&str) -> Option<V>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let mut push = |i: usize, s: Option<&str>| -> Result<()> {
        match s {
            _ if is_null(nulls, i) => put(out, V::default()),
            Some(s) => put(out, f(s).ok_or_else(|| conv(format!("row {i}: '{s}' is not one of the Enum's labels")))?),
            None => put(out, V::default()),
        }
        Ok(())
    };
    match arr.data_type() {
        A::Utf8 => arr.as_string::<i32>().iter().enumerate().try_for_each(|(i, s)| push(i, s))?,
        A::LargeUtf8 => arr.as_string::<i64>().iter().enumerate().try_for_each(|(i, s)| push(i, s))?,
        _ => arr.as_string_view().iter().enumerate().try_for_each(|(i, s)| push(i, s))?,
    }
    Ok(())
}

/// End offsets rebased to 0 and the child rows they cover.
fn list_parts<O: arrow_array::OffsetSizeTrait>(offsets: &[O], values: &ArrayRef) -> (Vec<u64>, ArrayRef) {
    let base = offsets[0].as_usize();
    let end = offsets[offsets.len() - 1].as_usize();
    let ends = offsets[1..].iter().map(|o| (o.as_usize() - base) as u64).collect();
    (ends, values.slice(base, end - base))
}

/// Decimals of any Arrow width → the column's width, range-checked against its precision.
fn decimal(arr: &ArrayRef, t: &T, nulls: Option<&NullBuffer>) -> Result<Prep> {
    let (precision, width) = match t {
        T::Decimal { precision, .. } => (u32::from(*precision), t.fixed_width().unwrap_or(16)),
        T::Int128 => (39, 16),
        _ => (77, 32),
    };
    // Zero copy when the widths agree.
    match (arr.data_type(), width) {
        (A::Decimal128(..), 16) | (A::Decimal256(..), 32) | (A::Decimal64(..), 8) | (A::Decimal32(..), 4)
            if !matches!(t, T::Decimal { .. }) =>
        {
            return Ok(Prep::Fixed { buf: fixed_buf(arr.as_ref(), width), width });
        }
        _ => {}
    }
    let values: Vec<arrow_buffer::i256> = match arr.data_type() {
        A::Decimal32(..) => arr
            .as_primitive::<Decimal32Type>()
            .values()
            .iter()
            .map(|&v| arrow_buffer::i256::from_i128(v as i128))
            .collect(),
        A::Decimal64(..) => arr
            .as_primitive::<Decimal64Type>()
            .values()
            .iter()
            .map(|&v| arrow_buffer::i256::from_i128(v as i128))
            .collect(),
        A::Decimal128(..) => {
            arr.as_primitive::<Decimal128Type>().values().iter().map(|&v| arrow_buffer::i256::from_i128(v)).collect()
        }
        A::Decimal256(..) => arr.as_primitive::<Decimal256Type>().values().to_vec(),
        other => return Err(conv(format!("{other} is not a decimal"))),
    };
    let limit = match t {
        T::Decimal { .. } => Some(arrow_buffer::i256::from_i128(10).wrapping_pow(precision)),
        _ => None,
    };
    let int128 = matches!(t, T::Int128);
    let mut out = Vec::with_capacity(values.len() * width);
    for (i, v) in values.iter().enumerate() {
        if is_null(nulls, i) {
            out.extend(std::iter::repeat_n(0u8, width));
            continue;
        }
        let fits = match limit {
            Some(l) => *v < l && *v > l.wrapping_neg(),
            None => !int128 || v.to_i128().is_some(),
        };
        if !fits {
            return Err(conv(format!("row {i}: {v} does not fit {t}")));
        }
        let bytes = v.to_le_bytes();
        out.extend_from_slice(&bytes[..width]);
    }
    Ok(Prep::Fixed { buf: vec_buf(out), width })
}

/// The alternative of a Variant a union member goes into: the one its name spells
/// (as reads name them), or the one its Arrow type maps to.
pub(super) fn alternative_for<'t>(f: &arrow_schema::Field, alts: &'t [T]) -> std::result::Result<&'t T, String> {
    let by_name = T::parse(f.name()).ok().and_then(|t| alts.iter().find(|a| **a == t));
    // A Variant's alternatives are never Nullable: the member's type is mapped as not null.
    let by_type = || {
        let f = f.clone().with_nullable(false);
        crate::clickhouse_type(&f).ok().and_then(|n| T::parse(&n).ok()).and_then(|t| alts.iter().find(|a| **a == t))
    };
    by_name.or_else(by_type).ok_or_else(|| {
        let names: Vec<String> = alts.iter().map(T::to_string).collect();
        format!("union member `{}` ({}) is none of the alternatives ({})", f.name(), f.data_type(), names.join(", "))
    })
}

/// A dense or sparse union → Variant data: discriminators, and each alternative's
/// values in row order.
fn variant(arr: &ArrayRef, alts: &[T], pool: &mut Pool) -> Result<Prep> {
    let A::Union(fields, _) = arr.data_type() else { return Err(conv("not a union")) };
    let u = arr.as_union();
    let mut slot: HashMap<i8, usize> = HashMap::new();
    let mut picked: Vec<(T, i8, Vec<u32>)> = Vec::new();
    for (id, f) in fields.iter() {
        if f.data_type() == &A::Null {
            continue;
        }
        let alt = alternative_for(f, alts).map_err(conv)?;
        slot.insert(id, picked.len());
        picked.push((alt.clone(), id, Vec::new()));
    }
    let mut discriminators = Vec::with_capacity(u.len());
    for i in 0..u.len() {
        let id = u.type_id(i);
        let at = u.value_offset(i);
        match slot.get(&id) {
            Some(&k) if !u.child(id).is_null(at) => {
                discriminators.push(k as u8);
                picked[k].2.push(u32::try_from(at).map_err(|_| conv("union too long"))?);
            }
            _ => discriminators.push(chnative::proto::VARIANT_NULL),
        }
    }
    let mut variants = Vec::with_capacity(picked.len());
    for (t, id, rows) in picked {
        let values = arrow_select::take::take(u.child(id).as_ref(), &arrow_array::UInt32Array::from(rows), None)?;
        variants.push((t.clone(), prepare(&values, &t, pool)?));
    }
    Ok(Prep::Variant { discriminators, variants })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_buffer::BooleanBuffer;

    #[test]
    fn null_maps_match_the_validity_bit_by_bit_at_any_offset() {
        let bits: Vec<bool> = (0..300).map(|i| i % 3 != 0 && i % 7 != 5).collect();
        for offset in [0, 1, 7, 8, 63, 64, 65] {
            for len in [0, 1, 7, 8, 9, 63, 64, 65, 130, 300 - 65] {
                let nulls = NullBuffer::new(BooleanBuffer::from(bits.clone()).slice(offset, len));
                let want: Vec<u8> = bits[offset..offset + len].iter().map(|&valid| u8::from(!valid)).collect();
                let mut got = vec![9];
                null_map(&nulls, &mut got);
                assert_eq!(got[0], 9, "offset {offset}, len {len}: what was there before is kept");
                assert_eq!(got[1..], want[..], "offset {offset}, len {len}");
            }
        }
    }

    #[test]
    fn datetime_seconds_narrow_in_chunks_and_name_the_row_out_of_range() {
        let u32s =
            |out: &[u8]| -> Vec<u32> { out.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect() };
        let src: Vec<i64> = (0..1300).map(|i| i * 3_000_000).collect();
        let mut out = Vec::new();
        seconds_to_u32(&src, None, &mut out).unwrap();
        assert_eq!(u32s(&out), src.iter().map(|&v| v as u32).collect::<Vec<_>>());
        assert_eq!(*u32s(&out).last().unwrap(), 1299 * 3_000_000);

        // NULL rows are 0 whatever lies under them, in range or not.
        let mut src = src;
        src[700] = -5;
        src[1299] = i64::MAX;
        let valid: Vec<bool> = (0..src.len()).map(|i| !(i == 3 || i == 700 || i == 1299)).collect();
        let nulls = NullBuffer::from(valid);
        let mut out = Vec::new();
        seconds_to_u32(&src, Some(&nulls), &mut out).unwrap();
        let got = u32s(&out);
        assert_eq!((got[3], got[700], got[1299]), (0, 0, 0));
        assert_eq!((got[4], got[701], got[1298]), (12_000_000, 701 * 3_000_000, 1298 * 3_000_000));

        // A value out of range that is not NULL is refused, by its row.
        let err = seconds_to_u32(&src, None, &mut Vec::new()).unwrap_err().to_string();
        assert!(err.contains("row 700: -5 s is outside DateTime's range"), "{err}");
        let mut src2 = vec![0i64; 600];
        src2[599] = 1 << 32;
        let err = seconds_to_u32(&src2, None, &mut Vec::new()).unwrap_err().to_string();
        assert!(err.contains("row 599: 4294967296 s"), "{err}");
    }
}
