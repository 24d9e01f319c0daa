//! The plan: what each ClickHouse column becomes in Arrow (its field, its extension
//! metadata, and how its blocks are converted), decided once per query from the header.

#![allow(unused_imports)]

use std::ptr::NonNull;
use std::sync::{Arc, Mutex};
use arrow_array::{make_array, Array, ArrayRef, RecordBatch, StringArray};
use arrow_buffer::{BooleanBuffer, Buffer, MutableBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_schema::{DataType as A, Field, FieldRef, Fields, Schema, SchemaRef, TimeUnit};
use chnative::proto::IntervalKind;
use chnative::proto::{AlignedBuf, Block};
use chnative::proto::{ColumnData, JsonData, JSON_AS_STRING_SETTING, JSON_STRING};
use chnative::proto::{Element, QBitView};
use chnative::DataType as T;
use chnative_proto::uuid_simd::{swap_halves_with, Kernel};
use crate::{DynamicMode, Error, Result, StringType};

/// Field metadata key holding the ClickHouse type of a top-level column.
pub const CLICKHOUSE_TYPE_KEY: &str = "clickhouse.type";
/// Arrow's key for an extension type's name.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
pub(super) const EXTENSION_METADATA_KEY: &str = "ARROW:extension:metadata";

/// How one ClickHouse column (or a part of one) becomes an Arrow array.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    /// Fixed-width values whose bytes Arrow reads as they are: shared, no copy.
    Share,
    /// Fixed-width values widened or rescaled into `A`'s native type (one pass).
    Widen(Widen),
    /// Bool: bytes → bits.
    Bool,
    /// UUID: ClickHouse's two little-endian halves → RFC 4122 bytes.
    Uuid,
    /// String: the byte blob shared, the end offsets converted once.
    Str(StringType),
    /// Enum8/16 → Dictionary(Int16/Int32, Utf8): labels in declaration order.
    Enum { labels: ArrayRef, table: Arc<EnumTable>, dt: A },
    /// Nullable(T): the null map becomes T's validity.
    Nullable(Box<Plan>),
    /// LowCardinality(T): keys (as Int32) into the block's dictionary.
    LowCard { dict: Box<Plan>, nullable: bool, dt: A },
    /// Array(T) → List(T).
    List(Box<Plan>, FieldRef),
    /// Map(K, V) → Map (from its wire form Array(Tuple(K, V))).
    Map { key: Box<Plan>, value: Box<Plan>, entries: FieldRef },
    /// Tuple → Struct.
    Struct(Vec<Plan>, Fields),
    /// Nothing → Null.
    Null,
    /// JSON as text (the server sends it so when asked: see [`JSON_AS_STRING_SETTING`]).
    JsonText,
    /// Variant(T1, …) → dense Union: one child per alternative, then a Null child for NULL rows.
    Union(Vec<Plan>, arrow_schema::UnionFields),
    /// QBit(T, N): the bit planes turned back into vectors → FixedSizeList(Float32/64, N).
    QBit(Element, usize, FieldRef),
    /// Dynamic → dense Union of the declared types (`DynamicMode::Union`), then a Null member.
    Dynamic(Vec<(T, Plan)>, arrow_schema::UnionFields),
}

/// The lookup from an Enum's values to the index of its label.
#[derive(Debug)]
pub(crate) struct EnumTable {
    /// Indexed by value − i16::MIN; -1 for a value that is not in the Enum.
    index: Vec<i32>,
}

/// A one-pass conversion of fixed-width values.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Widen {
    /// Date (u16 days) → i32 days.
    DateToDate32,
    /// DateTime (u32 seconds) → i64 seconds.
    U32ToI64,
    /// Time (i32 seconds) → i64 seconds.
    I32ToI64,
    /// i64 ticks × factor (DateTime64 / Time64 of a precision Arrow has no unit for).
    Scale(i64),
    /// Decimal32 → i128.
    I32ToI128,
    /// Decimal64 → i128.
    I64ToI128,
    /// BFloat16 → f32.
    Bf16ToF32,
}

/// What a conversion needs from the query: the server's time zone and the choices made.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    pub strings: StringType,
    pub server_tz: Option<Arc<str>>,
    pub dynamic: DynamicMode,
}

pub(super) fn uuid_field_meta() -> std::collections::HashMap<String, String> {
    [(EXTENSION_NAME_KEY.to_string(), "arrow.uuid".to_string()), (EXTENSION_METADATA_KEY.to_string(), String::new())]
        .into()
}

pub(super) fn json_field_meta() -> std::collections::HashMap<String, String> {
    [(EXTENSION_NAME_KEY.to_string(), "arrow.json".to_string()), (EXTENSION_METADATA_KEY.to_string(), String::new())]
        .into()
}

/// The time unit of a sub-second precision, and the factor that brings ticks of
/// that precision to the unit (Arrow has units for 0, 3, 6 and 9 digits only).
pub(super) fn unit_for(precision: u8) -> (TimeUnit, i64) {
    match precision {
        0 => (TimeUnit::Second, 1),
        1..=3 => (TimeUnit::Millisecond, 10i64.pow(3 - u32::from(precision))),
        4..=6 => (TimeUnit::Microsecond, 10i64.pow(6 - u32::from(precision))),
        _ => (TimeUnit::Nanosecond, 10i64.pow(9 - u32::from(precision.min(9)))),
    }
}

/// A plan and the Arrow field for a column named `name` of type `ty`.
pub(crate) fn plan_field(name: &str, ty: &T, ctx: &Ctx) -> Result<(Plan, Field)> {
    let unsupported =
        |why: &str| Error::Unsupported { column: name.to_string(), ty: ty.to_string(), reason: why.into() };
    let plain = |plan: Plan, dt: A| Ok((plan, Field::new(name, dt, false)));
    match ty {
        T::Nullable(inner) => {
            let (plan, field) = plan_field(name, inner, ctx)?;
            if matches!(plan, Plan::Null) {
                return Ok((Plan::Null, field.with_nullable(true)));
            }
            Ok((Plan::Nullable(Box::new(plan)), field.with_nullable(true)))
        }
        T::SimpleAggregateFunction(_, inner) => plan_field(name, inner, ctx),
        T::Point | T::Ring | T::LineString | T::MultiLineString | T::Polygon | T::MultiPolygon | T::Nested(_) => {
            plan_field(name, &ty.wire_shape(), ctx)
        }
        T::Int8 => plain(Plan::Share, A::Int8),
        T::Int16 => plain(Plan::Share, A::Int16),
        T::Int32 => plain(Plan::Share, A::Int32),
        T::Int64 => plain(Plan::Share, A::Int64),
        T::UInt8 => plain(Plan::Share, A::UInt8),
        T::UInt16 => plain(Plan::Share, A::UInt16),
        T::UInt32 => plain(Plan::Share, A::UInt32),
        T::UInt64 => plain(Plan::Share, A::UInt64),
        T::Float32 => plain(Plan::Share, A::Float32),
        T::Float64 => plain(Plan::Share, A::Float64),
        T::BFloat16 => plain(Plan::Widen(Widen::Bf16ToF32), A::Float32),
        T::Int128 | T::UInt128 => plain(Plan::Share, A::FixedSizeBinary(16)),
        T::Int256 | T::UInt256 => plain(Plan::Share, A::FixedSizeBinary(32)),
        T::Bool => plain(Plan::Bool, A::Boolean),
        T::String => {
            let dt = ctx.strings.data_type();
            plain(Plan::Str(ctx.strings), dt)
        }
        T::FixedString(n) => {
            let n = i32::try_from(*n).map_err(|_| unsupported("FixedString too wide for Arrow"))?;
            plain(Plan::Share, A::FixedSizeBinary(n))
        }
        T::Date => plain(Plan::Widen(Widen::DateToDate32), A::Date32),
        T::Date32 => plain(Plan::Share, A::Date32),
        T::DateTime(tz) => {
            let dt = A::Timestamp(TimeUnit::Second, tz.as_deref().map(Arc::from).or_else(|| ctx.server_tz.clone()));
            plain(Plan::Widen(Widen::U32ToI64), dt)
        }
        T::DateTime64(p, tz) => {
            let (unit, factor) = unit_for(*p);
            let dt = A::Timestamp(unit, tz.as_deref().map(Arc::from).or_else(|| ctx.server_tz.clone()));
            let plan = if factor == 1 { Plan::Share } else { Plan::Widen(Widen::Scale(factor)) };
            plain(plan, dt)
        }
        T::Time => plain(Plan::Widen(Widen::I32ToI64), A::Duration(TimeUnit::Second)),
        T::Time64(p) => {
            let (unit, factor) = unit_for(*p);
            let dt = A::Duration(unit);
            let plan = if factor == 1 { Plan::Share } else { Plan::Widen(Widen::Scale(factor)) };
            plain(plan, dt)
        }
        T::Interval(kind) => {
            let dt = match kind {
                IntervalKind::Nanosecond => A::Duration(TimeUnit::Nanosecond),
                IntervalKind::Microsecond => A::Duration(TimeUnit::Microsecond),
                IntervalKind::Millisecond => A::Duration(TimeUnit::Millisecond),
                IntervalKind::Second => A::Duration(TimeUnit::Second),
                // Minutes, hours, days, weeks, months, quarters, years: counts of the unit
                // (the column's type, in the field metadata, says which).
                _ => A::Int64,
            };
            plain(Plan::Share, dt)
        }
        T::Uuid => Ok((Plan::Uuid, Field::new(name, A::FixedSizeBinary(16), false).with_metadata(uuid_field_meta()))),
        T::Ipv4 => plain(Plan::Share, A::UInt32),
        T::Ipv6 => plain(Plan::Share, A::FixedSizeBinary(16)),
        T::Decimal { precision, scale } => {
            let (p, s) = (*precision, *scale as i8);
            match precision {
                0..=9 => plain(Plan::Widen(Widen::I32ToI128), A::Decimal128(p, s)),
                10..=18 => plain(Plan::Widen(Widen::I64ToI128), A::Decimal128(p, s)),
                19..=38 => plain(Plan::Share, A::Decimal128(p, s)),
                _ => plain(Plan::Share, A::Decimal256(p, s)),
            }
        }
        T::Enum8(pairs) => {
            let (labels, table) = enum_parts(pairs.iter().map(|(l, v)| (l.as_str(), i16::from(*v))));
            let dt = A::Dictionary(Box::new(A::Int16), Box::new(A::Utf8));
            plain(Plan::Enum { labels, table, dt: dt.clone() }, dt)
        }
        T::Enum16(pairs) => {
            let (labels, table) = enum_parts(pairs.iter().map(|(l, v)| (l.as_str(), *v)));
            let dt = A::Dictionary(Box::new(A::Int32), Box::new(A::Utf8));
            plain(Plan::Enum { labels, table, dt: dt.clone() }, dt)
        }
        T::LowCardinality(inner) => {
            let (inner, nullable) = match inner.as_ref() {
                T::Nullable(t) => (t.as_ref(), true),
                t => (t, false),
            };
            let (dict, field) = plan_field(name, inner, ctx)?;
            let dt = A::Dictionary(Box::new(A::Int32), Box::new(field.data_type().clone()));
            Ok((
                Plan::LowCard { dict: Box::new(dict), nullable, dt: dt.clone() },
                Field::new(name, dt, nullable).with_metadata(field.metadata().clone()),
            ))
        }
        T::Array(inner) => {
            let (plan, item) = plan_field("item", inner, ctx)?;
            let item = Arc::new(item);
            Ok((Plan::List(Box::new(plan), item.clone()), Field::new(name, A::List(item), false)))
        }
        T::Map(k, v) => {
            let (key, kf) = plan_field("key", k, ctx)?;
            let (value, vf) = plan_field("value", v, ctx)?;
            let entries = Arc::new(Field::new("entries", A::Struct(Fields::from(vec![kf, vf])), false));
            Ok((
                Plan::Map { key: Box::new(key), value: Box::new(value), entries: entries.clone() },
                Field::new(name, A::Map(entries, false), false),
            ))
        }
        T::Tuple(elems) => {
            let mut plans = Vec::with_capacity(elems.len());
            let mut fields = Vec::with_capacity(elems.len());
            for (i, (n, t)) in elems.iter().enumerate() {
                let n = n.clone().unwrap_or_else(|| (i + 1).to_string());
                let (p, f) = plan_field(&n, t, ctx)?;
                plans.push(p);
                fields.push(f);
            }
            let fields = Fields::from(fields);
            Ok((Plan::Struct(plans, fields.clone()), Field::new(name, A::Struct(fields), false)))
        }
        T::Nothing => Ok((Plan::Null, Field::new(name, A::Null, true))),
        T::Json(_) => Ok((Plan::JsonText, Field::new(name, A::Utf8, false).with_metadata(json_field_meta()))),
        T::Variant(alts) => {
            if alts.len() >= 127 {
                return Err(unsupported("more alternatives than an Arrow union has type ids"));
            }
            let mut plans = Vec::with_capacity(alts.len());
            let mut fields = Vec::with_capacity(alts.len() + 1);
            for alt in alts {
                let (p, f) = plan_field(&alt.to_string(), alt, ctx)?;
                plans.push(p);
                fields.push(f);
            }
            fields.push(Field::new("null", A::Null, true));
            let ids: Vec<i8> = (0..fields.len() as i8).collect();
            let union = arrow_schema::UnionFields::try_new(ids, fields).map_err(Error::Arrow)?;
            let dt = A::Union(union.clone(), arrow_schema::UnionMode::Dense);
            Ok((Plan::Union(plans, union), Field::new(name, dt, true)))
        }
        T::Dynamic { .. } => {
            let DynamicMode::Union(names) = &ctx.dynamic else {
                return Err(unsupported(
                    "its types are known only block by block, so no Arrow schema fits it up front; declare them \
                     with ArrowOptions::dynamic = DynamicMode::Union(vec![\"Int64\".into(), …]) (the types a column \
                     holds: SELECT DISTINCT dynamicType(col)), or CAST it in the query to a concrete type, a \
                     Variant or String",
                ));
            };
            if names.len() >= 127 {
                return Err(unsupported("more declared types than an Arrow union has type ids"));
            }
            let mut members: Vec<(T, Plan)> = Vec::with_capacity(names.len());
            let mut fields = Vec::with_capacity(names.len() + 1);
            for n in names {
                let t = T::parse(n).map_err(|e| unsupported(&format!("declared Dynamic type {n:?}: {e}")))?;
                if matches!(t, T::Nullable(_) | T::Dynamic { .. }) {
                    return Err(unsupported(&format!(
                        "declared Dynamic type {n:?}: a Dynamic holds no {} values (NULL rows go to the union's `null` member)",
                        if matches!(t, T::Nullable(_)) { "Nullable" } else { "Dynamic" }
                    )));
                }
                if members.iter().any(|(m, _)| *m == t) {
                    return Err(unsupported(&format!("declared Dynamic type {n:?} is listed twice")));
                }
                let (p, f) =
                    plan_field(n, &t, ctx).map_err(|e| unsupported(&format!("declared Dynamic type {n:?}: {e}")))?;
                members.push((t, p));
                fields.push(f);
            }
            fields.push(Field::new("null", A::Null, true));
            let ids: Vec<i8> = (0..fields.len() as i8).collect();
            let union = arrow_schema::UnionFields::try_new(ids, fields).map_err(Error::Arrow)?;
            let dt = A::Union(union.clone(), arrow_schema::UnionMode::Dense);
            Ok((Plan::Dynamic(members, union), Field::new(name, dt, true)))
        }
        T::QBit(..) => {
            let (elem, dim) = Element::of(ty).ok_or_else(|| unsupported("QBit of this element type"))?;
            let dim_i32 = i32::try_from(dim).map_err(|_| unsupported("QBit dimension too large for Arrow"))?;
            let value = if elem == Element::Float64 { A::Float64 } else { A::Float32 };
            let item = Arc::new(Field::new("item", value, false));
            Ok((Plan::QBit(elem, dim, item.clone()), Field::new(name, A::FixedSizeList(item, dim_i32), false)))
        }
        T::QBitStrided(..) => {
            Err(unsupported("no Arrow mapping for strided QBit; CAST it to Array(Float32) in the query"))
        }
        T::AggregateFunction(..) => {
            Err(unsupported("aggregate-function states have no Arrow form; finalize them (-Merge) in the query"))
        }
        _ => Err(unsupported("no Arrow mapping for this type")),
    }
}

pub(super) fn enum_parts<'a>(pairs: impl Iterator<Item = (&'a str, i16)>) -> (ArrayRef, Arc<EnumTable>) {
    let mut index = vec![-1i32; 1 << 16];
    let mut labels = Vec::new();
    for (i, (label, value)) in pairs.enumerate() {
        index[(i32::from(value) - i32::from(i16::MIN)) as usize] = i as i32;
        labels.push(label);
    }
    (Arc::new(StringArray::from(labels)), Arc::new(EnumTable { index }))
}
