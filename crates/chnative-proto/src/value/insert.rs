//! Inserting dynamic rows: each [`Value`] is converted to its column's type (read
//! from the table) into a column buffer; any cell that does not convert exactly is
//! an error naming its row, column, value and the column type, and nothing is sent.

use crate::convert::{self, Decimal, EnumMap, I256, U256};
use crate::insert::VARIANT_NULL;
use crate::DataType as D;

use crate::insert::InsertData;
use crate::row::{RowError as Error, RowResult as Result};
use crate::value::{Value, ValueRow};

/// A column being filled from Values, in its wire layout.
#[doc(hidden)]
pub enum Buffer {
    Fixed {
        bytes: Vec<u8>,
        width: usize,
    },
    Strings {
        offsets: Vec<u64>,
        data: Vec<u8>,
    },
    FixedStrings {
        bytes: Vec<u8>,
        n: usize,
    },
    Nullable {
        nulls: Vec<u8>,
        inner: Box<Buffer>,
    },
    Array {
        offsets: Vec<u64>,
        inner: Box<Buffer>,
    },
    Tuple(Vec<Buffer>),
    Map {
        offsets: Vec<u64>,
        keys: Box<Buffer>,
        values: Box<Buffer>,
    },
    /// Variant(…), or Dynamic (`dynamic`: the alternatives are the values' own
    /// types, added as they come): per row its alternative (255 = NULL), and each
    /// alternative's type and values.
    Variant {
        dynamic: bool,
        types: Vec<D>,
        discriminators: Vec<u8>,
        variants: Vec<Buffer>,
    },
}

/// The column type decides the wire width; the INSERT's own check then matches
/// the header. These are the widths a fixed-width type can have.
fn accepts_width_1(t: &D) -> bool {
    t.fixed_width() == Some(1)
}
fn accepts_width_2(t: &D) -> bool {
    t.fixed_width() == Some(2)
}
fn accepts_width_4(t: &D) -> bool {
    t.fixed_width() == Some(4)
}
fn accepts_width_8(t: &D) -> bool {
    t.fixed_width() == Some(8)
}
fn accepts_width_16(t: &D) -> bool {
    t.fixed_width() == Some(16)
}
fn accepts_width_32(t: &D) -> bool {
    t.fixed_width() == Some(32)
}

impl Buffer {
    fn for_type(ty: &D) -> std::result::Result<Buffer, String> {
        Ok(match ty {
            D::SimpleAggregateFunction(_, t) | D::LowCardinality(t) => Buffer::for_type(t)?,
            // JSON goes as its text; the server parses it.
            D::String | D::Json(_) => Buffer::Strings { offsets: Vec::new(), data: Vec::new() },
            D::Variant(alts) => Buffer::Variant {
                dynamic: false,
                types: alts.clone(),
                discriminators: Vec::new(),
                variants: alts.iter().map(Buffer::for_type).collect::<Result<_, _>>()?,
            },
            D::Dynamic { .. } => {
                Buffer::Variant { dynamic: true, types: Vec::new(), discriminators: Vec::new(), variants: Vec::new() }
            }
            // Only ever empty (the elements of `[]`), but a type all the same.
            D::Nothing => Buffer::Fixed { bytes: Vec::new(), width: 1 },
            D::FixedString(n) => Buffer::FixedStrings { bytes: Vec::new(), n: *n },
            D::Nullable(t) => Buffer::Nullable { nulls: Vec::new(), inner: Box::new(Buffer::for_type(t)?) },
            D::Array(t) => Buffer::Array { offsets: Vec::new(), inner: Box::new(Buffer::for_type(t)?) },
            D::Tuple(elems) => Buffer::Tuple(elems.iter().map(|(_, t)| Buffer::for_type(t)).collect::<Result<_, _>>()?),
            D::Map(k, v) => Buffer::Map {
                offsets: Vec::new(),
                keys: Box::new(Buffer::for_type(k)?),
                values: Box::new(Buffer::for_type(v)?),
            },
            t => match t.fixed_width() {
                Some(width) if !matches!(t, D::QBit(..) | D::QBitStrided(..) | D::Nothing) => {
                    Buffer::Fixed { bytes: Vec::new(), width }
                }
                _ => return Err(format!("inserting Values into {t} is not supported yet")),
            },
        })
    }

    pub fn data(&self) -> InsertData<'_> {
        match self {
            Buffer::Fixed { bytes, width } => InsertData::Fixed {
                bytes,
                width: *width,
                rust: "Value",
                accepts: match width {
                    1 => accepts_width_1,
                    2 => accepts_width_2,
                    4 => accepts_width_4,
                    8 => accepts_width_8,
                    16 => accepts_width_16,
                    _ => accepts_width_32,
                },
            },
            Buffer::Strings { offsets, data } => InsertData::Blob { offsets, data },
            Buffer::FixedStrings { bytes, n } => InsertData::fixed_strings(bytes, *n),
            Buffer::Nullable { nulls, inner } => InsertData::nullable(nulls, inner.data()),
            Buffer::Array { offsets, inner } => InsertData::array(offsets, inner.data()),
            Buffer::Tuple(elems) => InsertData::tuple(elems.iter().map(Buffer::data).collect()),
            Buffer::Map { offsets, keys, values } => InsertData::map(offsets, keys.data(), values.data()),
            Buffer::Variant { types, discriminators, variants, .. } => InsertData::variant(
                discriminators,
                types.iter().cloned().zip(variants.iter().map(Buffer::data)).collect(),
            ),
        }
    }

    fn len(&self) -> usize {
        match self {
            Buffer::Fixed { bytes, width } => bytes.len() / width,
            Buffer::Strings { offsets, .. } | Buffer::Array { offsets, .. } | Buffer::Map { offsets, .. } => {
                offsets.len()
            }
            Buffer::Tuple(elems) => elems.first().map_or(0, Buffer::len),
            Buffer::FixedStrings { bytes, n } => bytes.len() / (*n).max(1),
            Buffer::Nullable { nulls, .. } => nulls.len(),
            Buffer::Variant { discriminators, .. } => discriminators.len(),
        }
    }

    fn push_default(&mut self) {
        match self {
            Buffer::Fixed { bytes, width } => bytes.resize(bytes.len() + *width, 0),
            Buffer::Strings { offsets, data } => offsets.push(data.len() as u64),
            Buffer::FixedStrings { bytes, n } => bytes.resize(bytes.len() + *n, 0),
            Buffer::Nullable { nulls, inner } => {
                nulls.push(1);
                inner.push_default();
            }
            Buffer::Array { offsets, .. } | Buffer::Map { offsets, .. } => {
                offsets.push(offsets.last().copied().unwrap_or(0))
            }
            Buffer::Tuple(elems) => elems.iter_mut().for_each(Buffer::push_default),
            Buffer::Variant { discriminators, .. } => discriminators.push(VARIANT_NULL),
        }
    }

    /// Appends `v` converted to `ty`; on error nothing is appended.
    fn push(&mut self, ty: &D, v: &Value) -> std::result::Result<(), ()> {
        let ty = match ty {
            D::SimpleAggregateFunction(_, t) | D::LowCardinality(t) => t.as_ref(),
            t => t,
        };
        match (self, ty) {
            (Buffer::Nullable { nulls, inner }, D::Nullable(t)) => {
                if v.is_null() {
                    nulls.push(1);
                    inner.push_default();
                } else {
                    inner.push(t, v)?;
                    nulls.push(0);
                }
            }
            (Buffer::Array { offsets, inner }, D::Array(t)) => {
                let Value::Array(items) = v else { return Err(()) };
                let before = inner.len();
                for item in items {
                    if inner.push(t, item).is_err() {
                        inner.truncate(before);
                        return Err(());
                    }
                }
                offsets.push(inner.len() as u64);
            }
            (Buffer::Tuple(elems), D::Tuple(types)) => {
                let (Value::Tuple(items) | Value::NamedTuple { values: items, .. }) = v else { return Err(()) };
                if items.len() != types.len() {
                    return Err(());
                }
                let before = elems.first().map_or(0, Buffer::len);
                for ((e, (_, t)), item) in elems.iter_mut().zip(types).zip(items) {
                    if e.push(t, item).is_err() {
                        elems.iter_mut().for_each(|e| e.truncate(before));
                        return Err(());
                    }
                }
            }
            (Buffer::Map { offsets, keys, values }, D::Map(kt, vt)) => {
                let Value::Map(entries) = v else { return Err(()) };
                let before = keys.len();
                for (k, val) in entries {
                    if keys.push(kt, k).is_err() || values.push(vt, val).is_err() {
                        keys.truncate(before);
                        values.truncate(before);
                        return Err(());
                    }
                }
                offsets.push(keys.len() as u64);
            }
            (Buffer::Variant { dynamic: false, discriminators, variants, types }, D::Variant(_)) => {
                if v.is_null() {
                    discriminators.push(VARIANT_NULL);
                    return Ok(());
                }
                // The alternative of the value's own type, else the first it converts to exactly.
                let own = natural_type(v).and_then(|t| types.iter().position(|a| *a == t));
                let k =
                    own.into_iter().chain(0..types.len()).find(|&k| variants[k].push(&types[k], v).is_ok()).ok_or(())?;
                discriminators.push(k as u8);
            }
            (Buffer::Variant { dynamic: true, discriminators, variants, types }, D::Dynamic { .. }) => {
                if v.is_null() {
                    discriminators.push(VARIANT_NULL);
                    return Ok(());
                }
                let t = natural_type(v).ok_or(())?;
                let k = match types.iter().position(|a| *a == t) {
                    Some(k) => k,
                    None if types.len() < usize::from(VARIANT_NULL) - 1 => {
                        variants.push(Buffer::for_type(&t).map_err(|_| ())?);
                        types.push(t);
                        types.len() - 1
                    }
                    None => return Err(()),
                };
                variants[k].push(&types[k], v)?;
                discriminators.push(k as u8);
            }
            (Buffer::Strings { offsets, data }, D::String | D::Json(_)) => {
                let b = v.as_bytes().ok_or(())?;
                data.extend_from_slice(b);
                offsets.push(data.len() as u64);
            }
            (Buffer::FixedStrings { bytes, n }, D::FixedString(_)) => {
                let b = v.as_bytes().ok_or(())?;
                if b.len() > *n {
                    return Err(());
                }
                bytes.extend_from_slice(b);
                bytes.resize(bytes.len() + (*n - b.len()), 0);
            }
            (Buffer::Fixed { bytes, width }, ty) => {
                let before = bytes.len();
                encode_fixed(ty, v, bytes)?;
                if bytes.len() != before + *width {
                    bytes.truncate(before);
                    return Err(());
                }
            }
            _ => return Err(()),
        }
        Ok(())
    }

    fn truncate(&mut self, rows: usize) {
        match self {
            Buffer::Fixed { bytes, width } => bytes.truncate(rows * *width),
            Buffer::Strings { offsets, data } => {
                offsets.truncate(rows);
                data.truncate(offsets.last().map_or(0, |&o| o as usize));
            }
            Buffer::FixedStrings { bytes, n } => bytes.truncate(rows * *n),
            Buffer::Nullable { nulls, inner } => {
                nulls.truncate(rows);
                inner.truncate(rows);
            }
            Buffer::Array { offsets, inner } => {
                offsets.truncate(rows);
                inner.truncate(offsets.last().map_or(0, |&o| o as usize));
            }
            Buffer::Tuple(elems) => elems.iter_mut().for_each(|e| e.truncate(rows)),
            Buffer::Map { offsets, keys, values } => {
                offsets.truncate(rows);
                let entries = offsets.last().map_or(0, |&o| o as usize);
                keys.truncate(entries);
                values.truncate(entries);
            }
            Buffer::Variant { discriminators, variants, .. } => {
                discriminators.truncate(rows);
                let counts = crate::insert::variant_counts(discriminators, variants.len());
                variants.iter_mut().zip(counts).for_each(|(b, n)| b.truncate(n));
            }
        }
    }
}

impl Buffer {
    /// About how many bytes the buffer's rows take on the wire.
    pub fn bytes(&self) -> usize {
        match self {
            Buffer::Fixed { bytes, .. } | Buffer::FixedStrings { bytes, .. } => bytes.len(),
            Buffer::Strings { offsets, data } => 8 * offsets.len() + data.len(),
            Buffer::Nullable { nulls, inner } => nulls.len() + inner.bytes(),
            Buffer::Array { offsets, inner } => 8 * offsets.len() + inner.bytes(),
            Buffer::Tuple(elems) => elems.iter().map(Buffer::bytes).sum(),
            Buffer::Map { offsets, keys, values } => 8 * offsets.len() + keys.bytes() + values.bytes(),
            Buffer::Variant { discriminators, variants, .. } => {
                discriminators.len() + variants.iter().map(Buffer::bytes).sum::<usize>()
            }
        }
    }
}

/// The type a value has on its own, as a Dynamic column stores it: the kind of
/// the value with its own parameters (a DateTime's zone, a Decimal's scale at the
/// smallest precision that holds it), arrays and maps of one element type (NULL
/// elements make it Nullable, `[]` is `Array(Nothing)`). `None` for NULL, Enum
/// values (their labels are not in the value) and mixed arrays.
fn natural_type(v: &Value) -> Option<D> {
    Some(match v {
        Value::Null | Value::Enum { .. } => return None,
        Value::Bool(_) => D::Bool,
        Value::Int8(_) => D::Int8,
        Value::Int16(_) => D::Int16,
        Value::Int32(_) => D::Int32,
        Value::Int64(_) => D::Int64,
        Value::Interval { kind, .. } => D::Interval(*kind),
        Value::Int128(_) => D::Int128,
        Value::Int256(_) => D::Int256,
        Value::UInt8(_) => D::UInt8,
        Value::UInt16(_) => D::UInt16,
        Value::UInt32(_) => D::UInt32,
        Value::UInt64(_) => D::UInt64,
        Value::UInt128(_) => D::UInt128,
        Value::UInt256(_) => D::UInt256,
        Value::Float32(_) => D::Float32,
        Value::Float64(_) => D::Float64,
        Value::BFloat16(_) => D::BFloat16,
        Value::Decimal(d) => {
            let digits = d.raw().to_string().trim_start_matches('-').len() as u8;
            let need = digits.max(d.scale()).max(1);
            let precision = [9u8, 18, 38, 76].into_iter().find(|&p| p >= need)?;
            D::Decimal { precision, scale: d.scale() }
        }
        Value::String(_) => D::String,
        Value::FixedString(b) if !b.is_empty() => D::FixedString(b.len()),
        Value::FixedString(_) => D::String,
        Value::Date(_) => D::Date,
        Value::Date32(_) => D::Date32,
        Value::DateTime { tz, .. } => D::DateTime(Some(tz.to_string())),
        Value::DateTime64 { precision, tz, .. } => D::DateTime64(*precision, Some(tz.to_string())),
        Value::Time(_) => D::Time,
        Value::Time64 { precision, .. } => D::Time64(*precision),
        Value::Uuid(_) => D::Uuid,
        Value::Ipv4(_) => D::Ipv4,
        Value::Ipv6(_) => D::Ipv6,
        Value::Array(items) => D::Array(Box::new(common_type(items.iter())?)),
        Value::Tuple(items) => {
            D::Tuple(items.iter().map(|i| natural_type(i).map(|t| (None, t))).collect::<Option<_>>()?)
        }
        Value::NamedTuple { names, values } => D::Tuple(
            names
                .iter()
                .zip(values)
                .map(|(n, i)| natural_type(i).map(|t| (Some(n.clone()), t)))
                .collect::<Option<_>>()?,
        ),
        Value::Map(entries) => D::Map(
            Box::new(common_type(entries.iter().map(|(k, _)| k))?),
            Box::new(common_type(entries.iter().map(|(_, v)| v))?),
        ),
    })
}

/// The one type of `items` (Nullable when some are NULL), `Nothing` when there are none.
fn common_type<'v>(items: impl Iterator<Item = &'v Value>) -> Option<D> {
    let (mut ty, mut nulls, mut any) = (None::<D>, false, false);
    for item in items {
        any = true;
        if item.is_null() {
            nulls = true;
            continue;
        }
        let t = natural_type(item)?;
        match &ty {
            Some(seen) if *seen != t => return None,
            Some(_) => {}
            None => ty = Some(t),
        }
    }
    Some(match (ty, nulls, any) {
        (Some(t), false, _) => t,
        (Some(t), true, _) => D::Nullable(Box::new(t)),
        (None, true, _) => D::Nullable(Box::new(D::Nothing)),
        (None, false, _) => D::Nothing,
    })
}

/// The column buffer of a typed-row field of type [`Value`]: each value converted
/// exactly to the column's type, as the client's `Executor::insert_values` does.
pub struct ValueBuffer {
    ty: D,
    buf: Buffer,
}

impl std::fmt::Debug for ValueBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ValueBuffer").field("ty", &self.ty).field("rows", &self.buf.len()).finish()
    }
}

impl crate::row::ColumnBuffer for ValueBuffer {
    fn data(&self) -> InsertData<'_> {
        self.buf.data()
    }
    fn len(&self) -> usize {
        self.buf.len()
    }
    fn truncate(&mut self, rows: usize) {
        self.buf.truncate(rows)
    }
    fn push_default(&mut self) {
        self.buf.push_default()
    }
    fn bytes(&self) -> usize {
        self.buf.bytes()
    }
}

impl crate::row::ToColumn for Value {
    type Buffer = ValueBuffer;
    fn writes(ty: &D) -> bool {
        Buffer::for_type(ty).is_ok()
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        Ok(ValueBuffer { ty: ty.clone(), buf: Buffer::for_type(ty).map_err(Error::invalid_input)? })
    }
    #[inline]
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        buf.buf.push(&buf.ty, self).map_err(|()| Error::invalid_input(format!("{self} does not convert to {}", buf.ty)))
    }
}

/// A `serde_json::Value` field goes into a String or JSON column as its JSON text.
#[cfg(feature = "serde_json")]
impl crate::row::ToColumn for serde_json::Value {
    type Buffer = crate::row::to_column::StringBuffer;
    fn writes(ty: &D) -> bool {
        matches!(ty, D::String | D::Json(_))
    }
    fn buffer(ty: &D) -> Result<Self::Buffer> {
        if Self::writes(ty) {
            Ok(crate::row::to_column::StringBuffer::default())
        } else {
            Err(Error::invalid_input(format!("a serde_json::Value cannot be written to a {ty} column")))
        }
    }
    fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
        buf.push_bytes(self.to_string().as_bytes());
        Ok(())
    }
}

/// An integer value as I256 (any signed or unsigned width, Bool excluded).
fn integer(v: &Value) -> Option<I256> {
    Some(match v {
        Value::Int256(x) => *x,
        Value::UInt256(x) => I256::try_from(*x).ok()?,
        Value::UInt128(x) => I256::from(*x),
        Value::Bool(_) | Value::Enum { .. } => return None,
        v => I256::from(v.as_i128()?),
    })
}

/// The little-endian bytes of `v` as a value of fixed-width type `ty`, or `Err`
/// when it does not convert exactly.
fn encode_fixed(ty: &D, v: &Value, out: &mut Vec<u8>) -> std::result::Result<(), ()> {
    macro_rules! int {
        ($t:ty) => {{
            let x = integer(v).ok_or(())?;
            let x: i128 = i128::try_from(x).map_err(|_| ())?;
            out.extend_from_slice(&<$t>::try_from(x).map_err(|_| ())?.to_le_bytes());
        }};
    }
    match ty {
        D::Int8 => int!(i8),
        D::Int16 => int!(i16),
        D::Int32 => int!(i32),
        D::Int64 => int!(i64),
        // An interval of the column's own unit (the server casts no other).
        D::Interval(k) => match v {
            Value::Interval { kind, value } if kind == k => out.extend_from_slice(&value.to_le_bytes()),
            _ => return Err(()),
        },
        D::Int128 => int!(i128),
        D::UInt8 => int!(u8),
        D::UInt16 => int!(u16),
        D::UInt32 => int!(u32),
        D::UInt64 => int!(u64),
        D::UInt128 => {
            let x = integer(v).ok_or(())?;
            let x = U256::try_from(x).map_err(|_| ())?;
            out.extend_from_slice(&u128::try_from(x).map_err(|_| ())?.to_le_bytes());
        }
        D::Int256 => out.extend_from_slice(&integer(v).ok_or(())?.to_le_bytes()),
        D::UInt256 => {
            let x = match v {
                Value::UInt256(x) => *x,
                v => U256::try_from(integer(v).ok_or(())?).map_err(|_| ())?,
            };
            out.extend_from_slice(&x.to_le_bytes());
        }
        D::Float32 => {
            let x = match *v {
                Value::Float32(x) | Value::BFloat16(x) => x,
                Value::Float64(x) if (x as f32) as f64 == x || x.is_nan() => x as f32,
                _ => return Err(()),
            };
            out.extend_from_slice(&x.to_le_bytes());
        }
        D::Float64 => {
            let x = match *v {
                Value::Float64(x) => x,
                Value::Float32(x) | Value::BFloat16(x) => f64::from(x),
                _ => return Err(()),
            };
            out.extend_from_slice(&x.to_le_bytes());
        }
        D::BFloat16 => {
            let x = match *v {
                Value::Float32(x) | Value::BFloat16(x) => x,
                _ => return Err(()),
            };
            let bits = convert::bf16::from_f32(x);
            if convert::bf16::to_f32(bits).to_bits() != x.to_bits() && !x.is_nan() {
                return Err(());
            }
            out.extend_from_slice(&bits.to_le_bytes());
        }
        D::Bool => match v {
            Value::Bool(b) => out.push(u8::from(*b)),
            _ => return Err(()),
        },
        D::Date => {
            let d: u16 = match *v {
                Value::Date(d) => d,
                Value::Date32(d) => u16::try_from(d).map_err(|_| ())?,
                _ => return Err(()),
            };
            out.extend_from_slice(&d.to_le_bytes());
        }
        D::Date32 => {
            let d: i32 = match *v {
                Value::Date(d) => i32::from(d),
                Value::Date32(d) => d,
                _ => return Err(()),
            };
            out.extend_from_slice(&d.to_le_bytes());
        }
        D::DateTime(_) => {
            let s: u32 = match v {
                Value::DateTime { secs, .. } => *secs,
                Value::DateTime64 { ticks, precision, .. } => {
                    let per = 10i64.pow(u32::from(*precision));
                    if ticks % per != 0 {
                        return Err(());
                    }
                    u32::try_from(ticks / per).map_err(|_| ())?
                }
                _ => return Err(()),
            };
            out.extend_from_slice(&s.to_le_bytes());
        }
        D::DateTime64(p, _) => {
            let (ticks, from_p) = match v {
                Value::DateTime { secs, .. } => (i64::from(*secs), 0u8),
                Value::DateTime64 { ticks, precision, .. } => (*ticks, *precision),
                _ => return Err(()),
            };
            out.extend_from_slice(&rescale(ticks, from_p, *p)?.to_le_bytes());
        }
        D::Time => match v {
            Value::Time(s) => out.extend_from_slice(&s.to_le_bytes()),
            _ => return Err(()),
        },
        D::Time64(p) => {
            let (ticks, from_p) = match v {
                Value::Time(s) => (i64::from(*s), 0u8),
                Value::Time64 { ticks, precision } => (*ticks, *precision),
                _ => return Err(()),
            };
            out.extend_from_slice(&rescale(ticks, from_p, *p)?.to_le_bytes());
        }
        D::Decimal { precision, scale } => {
            let d = match v {
                Value::Decimal(d) => *d,
                v => Decimal::new(integer(v).ok_or(())?, 0).map_err(|_| ())?,
            };
            match precision {
                0..=9 => out.extend_from_slice(&d.to_raw::<i32>(*precision, *scale).map_err(|_| ())?.to_le_bytes()),
                10..=18 => out.extend_from_slice(&d.to_raw::<i64>(*precision, *scale).map_err(|_| ())?.to_le_bytes()),
                19..=38 => out.extend_from_slice(&d.to_raw::<i128>(*precision, *scale).map_err(|_| ())?.to_le_bytes()),
                _ => out.extend_from_slice(&d.to_raw::<I256>(*precision, *scale).map_err(|_| ())?.to_le_bytes()),
            }
        }
        D::Uuid => match v {
            Value::Uuid(u) => out.extend_from_slice(bytemuck::bytes_of(u)),
            _ => return Err(()),
        },
        D::Ipv4 => match v {
            Value::Ipv4(a) => out.extend_from_slice(&convert::net::from_ipv4(*a).to_le_bytes()),
            _ => return Err(()),
        },
        D::Ipv6 => match v {
            Value::Ipv6(a) => out.extend_from_slice(&convert::net::from_ipv6(*a)),
            _ => return Err(()),
        },
        D::Enum8(_) | D::Enum16(_) => {
            let map = EnumMap::from_type(ty).map_err(|_| ())?;
            let value = match v {
                Value::Enum { label, .. } => map.value(label).ok_or(())?,
                Value::String(b) => map.value(std::str::from_utf8(b).map_err(|_| ())?).ok_or(())?,
                v => {
                    let x = i16::try_from(i128::try_from(integer(v).ok_or(())?).map_err(|_| ())?).map_err(|_| ())?;
                    map.name(x).ok_or(())?;
                    x
                }
            };
            if matches!(ty, D::Enum8(_)) {
                out.push(i8::try_from(value).map_err(|_| ())? as u8);
            } else {
                out.extend_from_slice(&value.to_le_bytes());
            }
        }
        _ => return Err(()),
    }
    Ok(())
}

/// `ticks` of 10^-from s as ticks of 10^-to s, exactly.
fn rescale(ticks: i64, from: u8, to: u8) -> std::result::Result<i64, ()> {
    if to >= from {
        ticks.checked_mul(10i64.pow(u32::from(to - from))).ok_or(())
    } else {
        let per = 10i64.pow(u32::from(from - to));
        if ticks % per != 0 {
            return Err(());
        }
        Ok(ticks / per)
    }
}

/// Empties `buffers` (of [`push_value_rows`]) for the next rows, keeping their
/// capacity (and a Dynamic column's types seen so far: a type without rows in a
/// block is allowed).
#[doc(hidden)]
pub fn clear_value_rows(buffers: &mut [Buffer]) {
    buffers.iter_mut().for_each(|b| b.truncate(0));
}

/// Appends `rows[range]` to `buffers` (one per column of `types`, made when
/// `buffers` is empty), every cell converted exactly. Every row must have the
/// column names of `rows[0]`; an error names the row by its index in `rows`.
#[doc(hidden)]
pub fn push_value_rows(
    buffers: &mut Vec<Buffer>,
    types: &[(String, D)],
    rows: &[ValueRow],
    range: std::ops::Range<usize>,
) -> Result<()> {
    let Some(first) = rows.first() else { return Ok(()) };
    if buffers.is_empty() {
        for (name, ty) in types {
            buffers.push(Buffer::for_type(ty).map_err(|e| Error::invalid_input(format!("column `{name}`: {e}")))?);
        }
    }
    let start = range.start;
    for (i, row) in rows[range].iter().enumerate().map(|(i, r)| (start + i, r)) {
        if row.names() != first.names() {
            return Err(Error::invalid_input(format!("row {i} has different columns from row 0")));
        }
        for ((buf, (name, ty)), v) in buffers.iter_mut().zip(types).zip(row.values()) {
            buf.push(ty, v).map_err(|()| {
                Error::invalid_input(format!("row {i}, column `{name}`: {v:?} cannot be converted to {ty} exactly"))
            })?;
        }
    }
    Ok(())
}
