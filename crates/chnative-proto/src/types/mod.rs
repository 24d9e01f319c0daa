//! ClickHouse data types: the parsed form ([`DataType`]) and what every codec asks of it.
//!
//! Enum labels, Decimal scales, DateTime64 precision and time zones exist only in
//! the type string the server sends with every column, so the parser (`parse.rs`) is strict:
//! a string it does not understand is an error, never a guess. `display.rs` renders a type
//! back to the name the server spells, and `binary.rs` decodes the binary type encoding that
//! Dynamic and JSON put in front of values.

mod binary;
mod display;
mod parse;

/// The unit of an `Interval*` type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
#[non_exhaustive]
pub enum IntervalKind {
    Nanosecond,
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

/// A parsed ClickHouse data type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
#[non_exhaustive]
pub enum DataType {
    Int8,
    Int16,
    Int32,
    Int64,
    Int128,
    Int256,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    UInt128,
    UInt256,
    Float32,
    Float64,
    BFloat16,
    Bool,
    String,
    FixedString(usize),
    Date,
    Date32,
    /// Optional explicit time zone.
    DateTime(Option<String>),
    /// Precision (0..=9) and optional time zone.
    DateTime64(u8, Option<String>),
    Time,
    Time64(u8),
    Uuid,
    Ipv4,
    Ipv6,
    /// Precision and scale. `Decimal32(S)` etc. are normalised to their precision.
    Decimal {
        precision: u8,
        scale: u8,
    },
    /// Label → value pairs in declaration order.
    Enum8(Vec<(String, i8)>),
    Enum16(Vec<(String, i16)>),
    Nullable(Box<DataType>),
    Array(Box<DataType>),
    LowCardinality(Box<DataType>),
    /// Elements with optional names.
    Tuple(Vec<(Option<String>, DataType)>),
    Map(Box<DataType>, Box<DataType>),
    /// `Nested(a T, …)` sent as a single column (flatten_nested = 0): Array(Tuple(...)).
    Nested(Vec<(String, DataType)>),
    Nothing,
    Interval(IntervalKind),
    /// Function text (with its parameters) and the value type.
    SimpleAggregateFunction(String, Box<DataType>),
    /// `AggregateFunction(f, T…)`: a column of intermediate states. Function text (with its
    /// parameters) and the argument types. Which states have a codec is up to
    /// [`crate::column::AggregateState`]; the others are refused when a column is built.
    AggregateFunction(String, Vec<DataType>),
    Point,
    Ring,
    LineString,
    MultiLineString,
    Polygon,
    MultiPolygon,
    /// QBit(element, dimension): a vector stored as bit planes (BFloat16, Float32 or Float64 elements).
    QBit(Box<DataType>, usize),
    /// QBit(element, dimension, stride): bit planes split into groups of `stride` elements.
    QBitStrided(Box<DataType>, usize, usize),
    /// `Variant(T1, …)`: the alternatives in the order the server lists them (sorted by
    /// name), which is also the order of the discriminators on the wire.
    Variant(Vec<DataType>),
    /// `Dynamic` / `Dynamic(max_types=N)`.
    Dynamic {
        /// The `max_types` parameter when the type names one.
        max_types: Option<u64>,
    },
    /// The JSON object type with its parameters.
    Json(Box<JsonType>),
    /// A syntactically valid type this crate has no codec for (kept verbatim).
    Unsupported(String),
}

impl DataType {
    /// An integer (8 to 256 bits, signed or not) or `Float32`/`Float64`: the types
    /// whose values are plain machine numbers (not `BFloat16`, `Bool` or `Decimal`).
    pub fn is_number(&self) -> bool {
        use DataType::*;
        matches!(
            self,
            Int8 | Int16
                | Int32
                | Int64
                | Int128
                | Int256
                | UInt8
                | UInt16
                | UInt32
                | UInt64
                | UInt128
                | UInt256
                | Float32
                | Float64
        )
    }

    /// Bytes per row of a fixed-width type, or `None` for variable-width types.
    pub fn fixed_width(&self) -> Option<usize> {
        use DataType::*;
        Some(match self {
            Int8 | UInt8 | Bool | Enum8(_) | Nothing => 1,
            Int16 | UInt16 | Date | Enum16(_) | BFloat16 => 2,
            Int32 | UInt32 | Float32 | Date32 | DateTime(_) | Ipv4 | Time => 4,
            Int64 | UInt64 | Float64 | DateTime64(..) | Time64(_) | Interval(_) => 8,
            Int128 | UInt128 | Uuid | Ipv6 => 16,
            Int256 | UInt256 => 32,
            Decimal { precision, .. } => match precision {
                0..=9 => 4,
                10..=18 => 8,
                19..=38 => 16,
                _ => 32,
            },
            FixedString(n) => *n,
            SimpleAggregateFunction(_, t) => return t.fixed_width(),
            _ => return None,
        })
    }

    /// The type with geo aliases, Nested and SimpleAggregateFunction replaced by
    /// the structure that is on the wire.
    pub fn wire_shape(&self) -> std::borrow::Cow<'_, DataType> {
        use std::borrow::Cow;
        let point = || DataType::Tuple(vec![(None, DataType::Float64), (None, DataType::Float64)]);
        let arr = |t: DataType| DataType::Array(Box::new(t));
        match self {
            DataType::Point => Cow::Owned(point()),
            DataType::Ring | DataType::LineString => Cow::Owned(arr(point())),
            DataType::Polygon | DataType::MultiLineString => Cow::Owned(arr(arr(point()))),
            DataType::MultiPolygon => Cow::Owned(arr(arr(arr(point())))),
            DataType::Nested(fields) => {
                Cow::Owned(arr(DataType::Tuple(fields.iter().map(|(n, t)| (Some(n.clone()), t.clone())).collect())))
            }
            DataType::SimpleAggregateFunction(_, t) => Cow::Owned((**t).clone()),
            // One FixedString bit plane per bit of the element, most significant first.
            DataType::QBit(elem, dim) => {
                Cow::Owned(DataType::Tuple(vec![(None, DataType::FixedString(dim.div_ceil(8))); qbit_bits(elem)]))
            }
            // Groups of `stride` elements, each with its own planes, group-major.
            DataType::QBitStrided(elem, dim, stride) => {
                Cow::Owned(DataType::Tuple(vec![
                    (None, DataType::FixedString(stride.div_ceil(8)));
                    qbit_bits(elem) * dim.div_ceil(*stride)
                ]))
            }
            _ => Cow::Borrowed(self),
        }
    }

    /// The type as a view walks it: [`Self::wire_shape`] at every level, and a
    /// `Map(K, V)` as the `Array(Tuple(K, V))` it is on the wire. Borrowed when no
    /// level changes, so plain types cost nothing; a column resolves its type once
    /// and every view of it borrows the result.
    pub fn view_shape(&self) -> std::borrow::Cow<'_, DataType> {
        match resolve_shape(self) {
            Some(t) => std::borrow::Cow::Owned(t),
            None => std::borrow::Cow::Borrowed(self),
        }
    }
}

impl DataType {
    /// The type with `zone` named by every DateTime and DateTime64 in it that names
    /// none (at any depth): the zone their values are shown in, which is the
    /// server's (or the session's) time zone. What a writer of local date-times
    /// needs to know which instants they are.
    ///
    /// ```
    /// use chnative_proto::DataType;
    /// let t = DataType::parse("Array(Nullable(DateTime))").unwrap();
    /// assert_eq!(t.with_default_zone("Asia/Tokyo").to_string(), "Array(Nullable(DateTime('Asia/Tokyo')))");
    /// ```
    pub fn with_default_zone(&self, zone: &str) -> DataType {
        let z = |t: &DataType| t.with_default_zone(zone);
        let named = |tz: &Option<String>| Some(tz.clone().unwrap_or_else(|| zone.to_string()));
        match self {
            DataType::DateTime(tz) => DataType::DateTime(named(tz)),
            DataType::DateTime64(p, tz) => DataType::DateTime64(*p, named(tz)),
            DataType::Nullable(t) => DataType::Nullable(Box::new(z(t))),
            DataType::Array(t) => DataType::Array(Box::new(z(t))),
            DataType::LowCardinality(t) => DataType::LowCardinality(Box::new(z(t))),
            DataType::Map(k, v) => DataType::Map(Box::new(z(k)), Box::new(z(v))),
            DataType::Tuple(e) => DataType::Tuple(e.iter().map(|(n, t)| (n.clone(), z(t))).collect()),
            DataType::Nested(e) => DataType::Nested(e.iter().map(|(n, t)| (n.clone(), z(t))).collect()),
            DataType::Variant(alts) => DataType::Variant(alts.iter().map(z).collect()),
            DataType::SimpleAggregateFunction(f, t) => DataType::SimpleAggregateFunction(f.clone(), Box::new(z(t))),
            t => t.clone(),
        }
    }
}

/// `t` with every level resolved to its wire structure; `None` when nothing changes.
fn resolve_shape(t: &DataType) -> Option<DataType> {
    use std::borrow::Cow;
    let boxed = |t: &DataType| resolve_shape(t).map(Box::new);
    let keep = |t: &DataType| resolve_shape(t).unwrap_or_else(|| t.clone());
    let elements = |elems: &[(Option<String>, DataType)]| {
        let resolved: Vec<Option<DataType>> = elems.iter().map(|(_, t)| resolve_shape(t)).collect();
        resolved.iter().any(Option::is_some).then(|| {
            elems.iter().zip(resolved).map(|((n, t), r)| (n.clone(), r.unwrap_or_else(|| t.clone()))).collect()
        })
    };
    match t.wire_shape() {
        // An alias was replaced: what replaced it may hold aliases of its own.
        Cow::Owned(shape) => Some(resolve_shape(&shape).unwrap_or(shape)),
        Cow::Borrowed(t) => match t {
            DataType::Map(k, v) => {
                Some(DataType::Array(Box::new(DataType::Tuple(vec![(None, keep(k)), (None, keep(v))]))))
            }
            DataType::Nullable(i) => boxed(i).map(DataType::Nullable),
            DataType::Array(i) => boxed(i).map(DataType::Array),
            DataType::LowCardinality(i) => boxed(i).map(DataType::LowCardinality),
            DataType::Tuple(elems) => elements(elems).map(DataType::Tuple),
            DataType::Variant(alts) => {
                let resolved: Vec<Option<DataType>> = alts.iter().map(resolve_shape).collect();
                resolved.iter().any(Option::is_some).then(|| {
                    DataType::Variant(alts.iter().zip(resolved).map(|(t, r)| r.unwrap_or_else(|| t.clone())).collect())
                })
            }
            _ => None,
        },
    }
}

/// The parameters of a `JSON(...)` type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct JsonType {
    /// `max_dynamic_paths=N`.
    pub max_dynamic_paths: Option<u64>,
    /// `max_dynamic_types=N`.
    pub max_dynamic_types: Option<u64>,
    /// Typed paths (`a.b UInt32`), sorted by path: the order their columns have on the wire.
    pub typed_paths: Vec<(String, DataType)>,
    /// `SKIP path` entries.
    pub skip: Vec<String>,
    /// `SKIP REGEXP 're'` entries.
    pub skip_regexp: Vec<String>,
}

impl JsonType {
    /// The type of the Dynamic columns that hold this object's dynamic paths.
    pub fn dynamic_type(&self) -> DataType {
        DataType::Dynamic { max_types: self.max_dynamic_types }
    }
}

/// Bit planes of a QBit element type.
fn qbit_bits(elem: &DataType) -> usize {
    match elem {
        DataType::Int8 => 8,
        DataType::BFloat16 => 16,
        DataType::Float32 => 32,
        _ => 64,
    }
}
