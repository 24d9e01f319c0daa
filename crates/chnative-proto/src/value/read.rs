//! Reading columns as dynamic [`Value`]s: each column resolved once per block
//! into a typed view, then one match and one index per value.

use std::sync::Arc;

use crate::convert::{self, DecimalColumn, EnumMap, I256, U256};
use crate::view::{ColumnView, DynamicView, Keys, StrView, VariantView, WireUuid};
use crate::DataType as D;

use super::Value;
use crate::row::{RowError as Error, RowResult as Result};

/// A column resolved for one block: per row, a match on the kind and an index.
enum Reader<'r> {
    Bool(&'r [u8]),
    I8(&'r [i8]),
    I16(&'r [i16]),
    I32(&'r [i32]),
    I64(&'r [i64]),
    I128(&'r [i128]),
    I256(&'r [I256]),
    U8(&'r [u8]),
    U16(&'r [u16]),
    U32(&'r [u32]),
    U64(&'r [u64]),
    U128(&'r [u128]),
    U256(&'r [U256]),
    F32(&'r [f32]),
    F64(&'r [f64]),
    Bf16(&'r [u16]),
    Decimal(DecimalColumn<'r>),
    Str(StrView<'r>),
    FixedStr(&'r [u8], usize),
    Date(&'r [u16]),
    Date32(&'r [i32]),
    DateTime(&'r [u32], Arc<str>),
    DateTime64(&'r [i64], u8, Arc<str>),
    Time(&'r [i32]),
    Time64(&'r [i64], u8),
    Interval(&'r [i64], crate::types::IntervalKind),
    Uuid(&'r [WireUuid]),
    Ipv4(&'r [u32]),
    Ipv6(&'r [[u8; 16]]),
    Enum8(&'r [i8], Labels),
    Enum16(&'r [i16], Labels),
    Nullable(&'r [u8], Box<Reader<'r>>),
    Array(&'r [u64], Box<Reader<'r>>),
    Map(&'r [u64], Box<Reader<'r>>, Box<Reader<'r>>),
    /// The element readers, and the names when every element has one.
    Tuple(Vec<Reader<'r>>, Option<Arc<[String]>>),
    LowCardinality(Keys<'r>, bool, usize, Box<Reader<'r>>),
    Variant(VariantView<'r>, Vec<Reader<'r>>),
    Dynamic(DynamicView<'r>, Arc<str>),
    JsonText(StrView<'r>),
    /// `Nothing` (the inside of a bare NULL's `Nullable(Nothing)`): only NULLs.
    Nothing,
}

/// Enum labels, shared by the values.
#[derive(Clone)]
struct Labels(Arc<Vec<(i16, Arc<str>)>>);

impl Labels {
    fn new(ty: &D) -> Result<Labels> {
        let map = EnumMap::from_type(ty)?;
        let mut v: Vec<(i16, Arc<str>)> = map.iter().map(|(n, v)| (v, Arc::from(n))).collect();
        v.sort_by_key(|p| p.0);
        Ok(Labels(Arc::new(v)))
    }
    fn get(&self, value: i16, column: &str) -> Result<Value> {
        match self.0.binary_search_by_key(&value, |p| p.0) {
            Ok(k) => Ok(Value::Enum { label: self.0[k].1.clone(), value }),
            Err(_) => Err(Error::from(crate::ProtoError::violation(format!(
                "column `{column}`: {value} is not a value of its enum"
            )))),
        }
    }
}

fn oob(column: &str, i: usize) -> Error {
    crate::row::out_of_bounds(column, i)
}

#[inline]
fn at<T: Copy>(s: &[T], i: usize, column: &str) -> Result<T> {
    s.get(i).copied().ok_or_else(|| oob(column, i))
}

#[inline]
fn range(offsets: &[u64], i: usize, column: &str) -> Result<std::ops::Range<usize>> {
    let end = at(offsets, i, column)? as usize;
    let start = if i == 0 { 0 } else { offsets[i - 1] as usize };
    if start > end {
        return Err(oob(column, i));
    }
    Ok(start..end)
}

#[doc(hidden)]
pub struct ColumnReader<'r> {
    reader: Reader<'r>,
    column: &'r str,
}

impl<'r> ColumnReader<'r> {
    pub fn new(view: &ColumnView<'r>, server_tz: &Arc<str>) -> Result<Self> {
        Ok(ColumnReader { reader: reader(view, server_tz)?, column: view.name() })
    }
    #[inline]
    pub fn get(&self, i: usize) -> Result<Value> {
        get(&self.reader, i, self.column)
    }
}

/// A typed-row field of type [`Value`] reads any column, as the dynamic tier does
/// (`Dynamic`, `Variant` and `JSON` included): the field's type is chosen per row.
#[doc(hidden)]
pub struct ValueReader<'r>(ColumnReader<'r>);

impl<'r> crate::row::FromColumn<'r> for Value {
    type Reader = ValueReader<'r>;
    fn accepts(_: &D) -> bool {
        true
    }
    fn reader(view: &ColumnView<'r>, ctx: &crate::row::ReadContext) -> Result<Self::Reader> {
        Ok(ValueReader(ColumnReader::new(view, &Arc::from(ctx.server_timezone.as_str()))?))
    }
    #[inline]
    fn read(reader: &Self::Reader, i: usize) -> Result<Self> {
        reader.0.get(i)
    }
    fn null() -> Option<Self> {
        Some(Value::Null)
    }
}

/// The reader of a `serde_json::Value` field: a JSON column's text is parsed,
/// any other column's value goes through [`Value`]'s `Serialize` (numbers as
/// numbers, Int256/Decimal/dates as their text, arrays as arrays, maps as objects).
#[cfg(feature = "serde_json")]
#[doc(hidden)]
pub struct JsonValueReader<'r> {
    values: ValueReader<'r>,
    json_text: bool,
}

#[cfg(feature = "serde_json")]
impl<'r> crate::row::FromColumn<'r> for serde_json::Value {
    type Reader = JsonValueReader<'r>;
    fn accepts(_: &D) -> bool {
        true
    }
    fn reader(view: &ColumnView<'r>, ctx: &crate::row::ReadContext) -> Result<Self::Reader> {
        let json_text = matches!(view.data_type(), D::Json(_));
        Ok(JsonValueReader { values: <Value as crate::row::FromColumn<'r>>::reader(view, ctx)?, json_text })
    }
    fn read(reader: &Self::Reader, i: usize) -> Result<Self> {
        let v = reader.values.0.get(i)?;
        let bad = |e: serde_json::Error| Error::invalid_input(format!("column `{}`: {e}", reader.values.0.column));
        match v {
            Value::String(text) if reader.json_text => serde_json::from_slice(&text).map_err(bad),
            v => serde_json::to_value(&v).map_err(bad),
        }
    }
    fn null() -> Option<Self> {
        Some(serde_json::Value::Null)
    }
}

fn zone(tz: &Option<String>, server_tz: &Arc<str>) -> Arc<str> {
    match tz {
        Some(z) => Arc::from(z.as_str()),
        None => server_tz.clone(),
    }
}

/// The element names of a declared `Tuple` type whose elements all have one
/// (the server's named tuple); `None` for any other.
fn tuple_names(ty: &D) -> Option<Arc<[String]>> {
    match ty {
        D::Tuple(elems)
            if !elems.is_empty() && elems.iter().all(|(n, _)| n.as_deref().is_some_and(|n| !n.is_empty())) =>
        {
            Some(elems.iter().map(|(n, _)| n.clone().unwrap_or_default()).collect())
        }
        _ => None,
    }
}

fn reader<'r>(view: &ColumnView<'r>, server_tz: &Arc<str>) -> Result<Reader<'r>> {
    let ty = match view.data_type() {
        D::SimpleAggregateFunction(_, t) => t.as_ref().clone(),
        t => t.clone(),
    };
    Ok(match &ty {
        D::Nothing => Reader::Nothing,
        D::Bool => Reader::Bool(view.values()?),
        D::Int8 => Reader::I8(view.values()?),
        D::Int16 => Reader::I16(view.values()?),
        D::Int32 => Reader::I32(view.values()?),
        D::Int64 => Reader::I64(view.values()?),
        D::Int128 => Reader::I128(view.values()?),
        D::Int256 => Reader::I256(view.values()?),
        D::UInt8 => Reader::U8(view.values()?),
        D::UInt16 => Reader::U16(view.values()?),
        D::UInt32 => Reader::U32(view.values()?),
        D::UInt64 => Reader::U64(view.values()?),
        D::UInt128 => Reader::U128(view.values()?),
        D::UInt256 => Reader::U256(view.values()?),
        D::Float32 => Reader::F32(view.values()?),
        D::Float64 => Reader::F64(view.values()?),
        D::BFloat16 => Reader::Bf16(view.values()?),
        D::Decimal { .. } => Reader::Decimal(convert::decimal_column(view)?),
        D::String => Reader::Str(view.as_strings()?),
        D::FixedString(_) => {
            let (b, n) = view.as_fixed_strings()?;
            Reader::FixedStr(b, n)
        }
        D::Date => Reader::Date(view.values()?),
        D::Date32 => Reader::Date32(view.values()?),
        D::DateTime(tz) => Reader::DateTime(view.values()?, zone(tz, server_tz)),
        D::DateTime64(p, tz) => Reader::DateTime64(view.values()?, *p, zone(tz, server_tz)),
        D::Time => Reader::Time(view.values()?),
        D::Time64(p) => Reader::Time64(view.values()?, *p),
        D::Interval(k) => Reader::Interval(view.values()?, *k),
        D::Uuid => Reader::Uuid(view.values()?),
        D::Ipv4 => Reader::Ipv4(view.values()?),
        D::Ipv6 => Reader::Ipv6(view.values()?),
        D::Enum8(_) => Reader::Enum8(view.values()?, Labels::new(&ty)?),
        D::Enum16(_) => Reader::Enum16(view.values()?, Labels::new(&ty)?),
        D::Nullable(_) => {
            let n = view.as_nullable()?;
            Reader::Nullable(n.nulls(), Box::new(reader(n.inner(), server_tz)?))
        }
        D::Map(..) => {
            let a = view.as_array()?;
            let inner = a.inner();
            Reader::Map(
                a.offsets(),
                Box::new(reader(&inner.tuple_element(0)?, server_tz)?),
                Box::new(reader(&inner.tuple_element(1)?, server_tz)?),
            )
        }
        D::LowCardinality(t) => {
            let lc = view.as_low_cardinality()?;
            let dict = lc.dictionary().clone();
            let nullable = matches!(t.as_ref(), D::Nullable(_));
            Reader::LowCardinality(lc.keys(), nullable, dict.len(), Box::new(reader(&dict, server_tz)?))
        }
        D::Variant(_) => {
            let v = view.as_variant()?;
            let alts = (0..v.variant_count()).map(|k| reader(&v.variant(k)?, server_tz)).collect::<Result<Vec<_>>>()?;
            Reader::Variant(v, alts)
        }
        D::Dynamic { .. } => Reader::Dynamic(view.as_dynamic()?, server_tz.clone()),
        D::Json(_) => {
            let j = view.as_json()?;
            if !j.is_text() {
                return Err(Error::invalid_input(format!(
                    "column `{}`: JSON values are read as text; run the query with the setting \
                     output_format_native_write_json_as_string = 1 (fetch_values does this)",
                    view.name()
                )));
            }
            Reader::JsonText(j.texts()?)
        }
        other => match other.wire_shape().as_ref() {
            D::Array(_) => {
                let a = view.as_array()?;
                Reader::Array(a.offsets(), Box::new(reader(a.inner(), server_tz)?))
            }
            D::Tuple(elems) => Reader::Tuple(
                (0..elems.len()).map(|k| reader(&view.tuple_element(k)?, server_tz)).collect::<Result<Vec<_>>>()?,
                tuple_names(&ty),
            ),
            _ => {
                return Err(Error::from(crate::ProtoError::TypeMismatch {
                    column: view.name().to_string(),
                    requested: "a dynamic Value".into(),
                    actual: view.type_name().to_string(),
                }))
            }
        },
    })
}

#[inline]
fn get(r: &Reader<'_>, i: usize, column: &str) -> Result<Value> {
    Ok(match r {
        Reader::Bool(v) => Value::Bool(at(v, i, column)? != 0),
        Reader::I8(v) => Value::Int8(at(v, i, column)?),
        Reader::I16(v) => Value::Int16(at(v, i, column)?),
        Reader::I32(v) => Value::Int32(at(v, i, column)?),
        Reader::I64(v) => Value::Int64(at(v, i, column)?),
        Reader::I128(v) => Value::Int128(at(v, i, column)?),
        Reader::I256(v) => Value::Int256(at(v, i, column)?),
        Reader::U8(v) => Value::UInt8(at(v, i, column)?),
        Reader::U16(v) => Value::UInt16(at(v, i, column)?),
        Reader::U32(v) => Value::UInt32(at(v, i, column)?),
        Reader::U64(v) => Value::UInt64(at(v, i, column)?),
        Reader::U128(v) => Value::UInt128(at(v, i, column)?),
        Reader::U256(v) => Value::UInt256(at(v, i, column)?),
        Reader::F32(v) => Value::Float32(at(v, i, column)?),
        Reader::F64(v) => Value::Float64(at(v, i, column)?),
        Reader::Bf16(v) => Value::BFloat16(convert::bf16::to_f32(at(v, i, column)?)),
        Reader::Decimal(d) => {
            if i >= d.len() {
                return Err(oob(column, i));
            }
            Value::Decimal(d.get(i))
        }
        Reader::Str(s) => {
            if i >= s.len() {
                return Err(oob(column, i));
            }
            Value::String(s.blob().get(s.range(i)).ok_or_else(|| oob(column, i))?.to_vec())
        }
        Reader::FixedStr(b, n) => Value::FixedString(b.get(i * n..(i + 1) * n).ok_or_else(|| oob(column, i))?.to_vec()),
        Reader::Date(v) => Value::Date(at(v, i, column)?),
        Reader::Date32(v) => Value::Date32(at(v, i, column)?),
        Reader::DateTime(v, tz) => Value::DateTime { secs: at(v, i, column)?, tz: tz.clone() },
        Reader::DateTime64(v, p, tz) => Value::DateTime64 { ticks: at(v, i, column)?, precision: *p, tz: tz.clone() },
        Reader::Time(v) => Value::Time(at(v, i, column)?),
        Reader::Time64(v, p) => Value::Time64 { ticks: at(v, i, column)?, precision: *p },
        Reader::Interval(v, k) => Value::Interval { kind: *k, value: at(v, i, column)? },
        Reader::Uuid(v) => Value::Uuid(at(v, i, column)?),
        Reader::Ipv4(v) => Value::Ipv4(convert::net::ipv4(at(v, i, column)?)),
        Reader::Ipv6(v) => Value::Ipv6(convert::net::ipv6(at(v, i, column)?)),
        Reader::Enum8(v, labels) => labels.get(i16::from(at(v, i, column)?), column)?,
        Reader::Enum16(v, labels) => labels.get(at(v, i, column)?, column)?,
        Reader::Nullable(nulls, inner) => match at(nulls, i, column)? {
            0 => get(inner, i, column)?,
            _ => Value::Null,
        },
        Reader::Array(offsets, inner) => {
            Value::Array(range(offsets, i, column)?.map(|j| get(inner, j, column)).collect::<Result<_>>()?)
        }
        Reader::Map(offsets, k, v) => Value::Map(
            range(offsets, i, column)?.map(|j| Ok((get(k, j, column)?, get(v, j, column)?))).collect::<Result<_>>()?,
        ),
        Reader::Tuple(elems, names) => {
            let values = elems.iter().map(|e| get(e, i, column)).collect::<Result<_>>()?;
            match names {
                Some(names) => Value::NamedTuple { names: names.clone(), values },
                None => Value::Tuple(values),
            }
        }
        Reader::LowCardinality(keys, nullable, dict_len, dict) => {
            if i >= keys.len() {
                return Err(oob(column, i));
            }
            let k = keys.get(i);
            if *nullable && k == 0 {
                Value::Null
            } else if k >= *dict_len {
                return Err(oob(column, k));
            } else {
                get(dict, k, column)?
            }
        }
        Reader::Variant(v, alts) => {
            if i >= v.len() {
                return Err(oob(column, i));
            }
            match v.row(i) {
                None => Value::Null,
                Some((k, j)) => get(alts.get(k).ok_or_else(|| oob(column, k))?, j, column)?,
            }
        }
        Reader::Dynamic(d, server_tz) => {
            if i >= d.len() {
                return Err(oob(column, i));
            }
            match d.value(i)? {
                None => Value::Null,
                // One reader per value: Dynamic's rows each carry their own type.
                Some((view, j)) => get(&reader(&view, server_tz)?, j, column)?,
            }
        }
        Reader::Nothing => Value::Null,
        Reader::JsonText(s) => {
            if i >= s.len() {
                return Err(oob(column, i));
            }
            Value::String(s.blob().get(s.range(i)).ok_or_else(|| oob(column, i))?.to_vec())
        }
    })
}
