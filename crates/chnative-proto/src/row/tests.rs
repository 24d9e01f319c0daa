//! The type system without a server: which Rust types read and write which
//! column types, and values through a column buffer, the INSERT encoder's bytes,
//! the block decoder and a reader back.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::net::Ipv4Addr;

use super::enums::{enum_accepts, enum_writes, EnumBuffer, EnumReader};
use super::to_column::buffer_of;
use super::*;
use crate::block::{Block, BlockLimits, Column};
use crate::buffer::BufferPool;
use crate::convert::{Decimal, I256, U256};
use crate::insert::InsertColumns;
use crate::view::WireUuid;
use crate::wire::Reader as WireReader;
use crate::ColumnData;

const REVISION: u64 = 54492;

fn ty(name: &str) -> DataType {
    DataType::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `values` written as `W` into a column of type `type_name`, encoded as an INSERT
/// block, decoded as a server's block would be, and read back as `R`.
fn round_trip<W: ToColumn, R: for<'r> FromColumn<'r>>(type_name: &str, values: &[W]) -> RowResult<Vec<R>> {
    let t = ty(type_name);
    assert!(writes::<W>(&t), "{} does not write {type_name}", std::any::type_name::<W>());
    assert!(accepts::<R>(&t), "{} does not read {type_name}", std::any::type_name::<R>());
    let mut buf = buffer_of::<W>(&t)?;
    for v in values {
        v.write_to(&mut buf)?;
    }
    assert_eq!(buf.len(), values.len());
    let block = encode_decode(type_name, buf.data());
    let view = block.columns()[0].view();
    let reader = Reader::<R>::new(&view, &ReadContext { server_timezone: "UTC".into() })?;
    (0..values.len()).map(|i| reader.get(i)).collect()
}

fn encode_decode(type_name: &str, data: crate::insert::InsertData<'_>) -> Block {
    let mut pool = BufferPool::new();
    let empty = Column::new("c", type_name, ColumnData::for_type(&ty(type_name), &mut pool).unwrap()).unwrap();
    let header = Block::from_columns(vec![empty]).unwrap();
    let columns = [("c".to_string(), data)];
    let typed = InsertColumns::new(&columns).unwrap().with_header(&header).unwrap();
    let mut bytes = Vec::new();
    typed.write_block(&mut bytes, REVISION, 0, typed.rows()).unwrap();
    let mut block = Block::new();
    let mut r = WireReader::new(&bytes);
    block.read(&mut r, REVISION, &BlockLimits::default(), &mut pool).unwrap();
    assert_eq!(r.remaining(), 0);
    block
}

/// The values read back equal the values written.
fn same<T: ToColumn + for<'r> FromColumn<'r> + PartialEq + Debug>(type_name: &str, values: &[T]) {
    assert_eq!(round_trip::<T, T>(type_name, values).unwrap(), values, "{type_name}");
}

/// Whether `T` reads and writes each of the types (true: both; false: neither).
fn matrix<T: ToColumn + for<'r> FromColumn<'r>>(cases: &[(&str, bool)]) {
    for &(name, want) in cases {
        let t = ty(name);
        let rust = std::any::type_name::<T>();
        assert_eq!(accepts::<T>(&t), want, "{rust} reads {name}");
        assert_eq!(writes::<T>(&t), want, "{rust} writes {name}");
    }
}

#[test]
fn the_error_is_one_pointer() {
    assert!(std::mem::size_of::<RowError>() <= 16);
    assert_eq!(std::mem::size_of::<RowResult<()>>(), std::mem::size_of::<usize>());
}

#[test]
fn numbers_read_their_own_type_and_every_narrower_one_losslessly() {
    matrix::<u8>(&[("UInt8", true), ("Int8", false), ("UInt16", false), ("String", false), ("Bool", false)]);
    matrix::<u16>(&[("UInt8", true), ("UInt16", true), ("Date", true), ("Int8", false), ("UInt32", false)]);
    matrix::<u64>(&[("UInt8", true), ("UInt32", true), ("UInt64", true), ("Int64", false), ("UInt128", false)]);
    matrix::<i64>(&[
        ("Int8", true),
        ("UInt32", true),
        ("DateTime", true),
        ("DateTime64(3)", true),
        ("UInt64", false),
        ("Float64", false),
    ]);
    matrix::<i32>(&[("Date", true), ("Date32", true), ("Int32", true), ("UInt32", false), ("Int64", false)]);
    matrix::<i128>(&[("Int8", true), ("UInt64", true), ("Int128", true), ("UInt128", false)]);
    matrix::<U256>(&[("UInt8", true), ("UInt128", true), ("UInt256", true), ("Int8", false)]);
    matrix::<I256>(&[("Int8", true), ("UInt128", true), ("Int256", true), ("UInt256", false)]);
    matrix::<f64>(&[("Float32", true), ("Float64", true), ("BFloat16", true), ("Int32", false)]);
    matrix::<f32>(&[("Float32", true), ("BFloat16", true), ("Float64", false)]);
}

#[test]
fn wrappers_are_looked_through() {
    let lc = ty("LowCardinality(Nullable(Int8))");
    assert!(accepts::<Option<i64>>(&lc));
    assert!(!accepts::<Option<u8>>(&lc));
    assert!(!accepts::<i8>(&lc), "a NULL needs an Option");
    assert!(accepts::<u64>(&ty("SimpleAggregateFunction(sum, UInt64)")));
    assert!(writes::<u64>(&ty("SimpleAggregateFunction(sum, UInt64)")));
    assert!(accepts::<String>(&ty("LowCardinality(String)")));
    assert!(writes::<&str>(&ty("LowCardinality(String)")));
    // Geo types are tuples and arrays of them.
    assert!(accepts::<(f64, f64)>(&ty("Point")));
    assert!(accepts::<Vec<(f64, f64)>>(&ty("Ring")));
}

#[test]
fn other_families_accept_and_refuse() {
    matrix::<String>(&[("String", true), ("FixedString(3)", false), ("UInt8", false), ("Nullable(String)", false)]);
    matrix::<Option<String>>(&[("Nullable(String)", true), ("String", true), ("Nullable(UInt8)", false)]);
    matrix::<Vec<u32>>(&[("Array(UInt32)", true), ("Array(UInt8)", true), ("Array(Int32)", false), ("UInt32", false)]);
    matrix::<Vec<u8>>(&[("String", true), ("Array(UInt8)", true), ("Array(Int8)", false)]);
    matrix::<[u8; 4]>(&[("FixedString(4)", true), ("FixedString(5)", false), ("String", false)]);
    matrix::<(u8, String)>(&[
        ("Tuple(UInt8, String)", true),
        ("Tuple(a UInt8, b String)", true),
        ("Tuple(UInt8)", false),
    ]);
    matrix::<BTreeMap<String, u64>>(&[("Map(String, UInt64)", true), ("Map(String, Int64)", false)]);
    matrix::<Decimal>(&[("Decimal(9, 2)", true), ("Decimal(76, 10)", true), ("Float64", false)]);
    matrix::<WireUuid>(&[("UUID", true), ("FixedString(16)", false), ("UInt128", false)]);
    matrix::<Ipv4Addr>(&[("IPv4", true), ("UInt32", false)]);
    matrix::<bool>(&[("Bool", true), ("UInt8", false)]);
}

#[test]
fn narrowing_is_refused_with_its_reason() {
    assert_eq!(<u8 as FromColumn>::refusal(&ty("UInt64")), Some("narrowing"));
    let f = Field {
        column: "x",
        field: "x",
        rust_type: "u8",
        default: false,
        accepts: |t| accepts::<u8>(t),
        writes: |t| writes::<u8>(t),
        refusal: |t| refusal::<u8>(t),
    };
    let e = field_mismatch::<u8>(&f, "UInt64", (f.refusal)(&ty("UInt64")));
    assert_eq!(e.to_string(), "column `x` is UInt64, not u8 (narrowing; field `x` of a single value)");
    assert_eq!(e.as_type_mismatch(), Some(("x", "u8 (narrowing; field `x` of a single value)", "UInt64")));
}

#[test]
fn numbers_round_trip_and_widen() {
    same::<u8>("UInt8", &[0, 1, 255]);
    same::<i64>("Int64", &[i64::MIN, -1, 0, i64::MAX]);
    same::<u128>("UInt128", &[0, u128::MAX]);
    same::<I256>("Int256", &[I256::from(-5i64), I256::from(7i64)]);
    same::<f64>("Float64", &[-1.5, 0.0, f64::MAX]);
    same::<bool>("Bool", &[true, false]);
    // Written narrow, read wide.
    assert_eq!(round_trip::<u8, u64>("UInt8", &[0, 200]).unwrap(), [0, 200]);
    assert_eq!(round_trip::<u32, i64>("UInt32", &[u32::MAX]).unwrap(), [i64::from(u32::MAX)]);
    assert_eq!(round_trip::<i8, i128>("Int8", &[-128, 127]).unwrap(), [-128, 127]);
    assert_eq!(round_trip::<u16, U256>("UInt16", &[65535]).unwrap(), [U256::from(65535u64)]);
    assert_eq!(round_trip::<f32, f64>("Float32", &[1.5]).unwrap(), [1.5]);
    assert_eq!(round_trip::<f32, f64>("BFloat16", &[-2.0]).unwrap(), [-2.0]);
    // Written wide into a narrower column: exact or refused.
    assert_eq!(round_trip::<u64, u8>("UInt8", &[7, 255]).unwrap(), [7, 255]);
    let e = round_trip::<u64, u8>("UInt8", &[256]).unwrap_err();
    assert!(matches!(e.kind(), RowErrorKind::InvalidInput(_)), "{e:?}");
    assert_eq!(e.to_string(), "256 does not fit a UInt8 column exactly");
    let e = round_trip::<f32, f32>("BFloat16", &[1.1]).unwrap_err();
    assert_eq!(e.to_string(), "1.1 does not fit a BFloat16 column exactly");
}

#[test]
fn strings_round_trip() {
    same::<String>("String", &["".into(), "a".into(), "ünï".into()]);
    assert_eq!(round_trip::<&str, String>("String", &["x", "yz"]).unwrap(), ["x", "yz"]);
    assert_eq!(round_trip::<&str, String>("LowCardinality(String)", &["x", "y", "x"]).unwrap(), ["x", "y", "x"]);
    assert_eq!(round_trip::<Vec<u8>, Vec<u8>>("String", &[vec![0, 255]]).unwrap(), [vec![0, 255]]);
    same::<[u8; 3]>("FixedString(3)", &[*b"abc", [0, 1, 2]]);
    // Bytes that are not UTF-8 do not read as a String.
    let e = round_trip::<Vec<u8>, String>("String", &[vec![0xff]]).unwrap_err();
    assert!(e.to_string().contains("UTF-8"), "{e}");
}

#[test]
fn nullables_arrays_maps_and_tuples_round_trip() {
    same::<Option<u32>>("Nullable(UInt32)", &[Some(1), None, Some(3)]);
    same::<Option<String>>("Nullable(String)", &[None, Some("s".into())]);
    same::<Option<String>>("LowCardinality(Nullable(String))", &[None, Some("s".into()), None]);
    assert_eq!(round_trip::<Option<u8>, Option<i32>>("Nullable(UInt8)", &[None, Some(9)]).unwrap(), [None, Some(9)]);
    let e = round_trip::<Option<u8>, Option<u8>>("UInt8", &[None]).unwrap_err();
    assert_eq!(e.to_string(), "None cannot be written to a column that is not Nullable");
    same::<Vec<u64>>("Array(UInt64)", &[vec![], vec![1, 2, 3], vec![4]]);
    same::<Vec<Vec<String>>>("Array(Array(String))", &[vec![vec!["a".into()], vec![]], vec![]]);
    same::<Vec<Option<i8>>>("Array(Nullable(Int8))", &[vec![Some(-1), None]]);
    assert_eq!(round_trip::<Vec<u8>, Vec<u16>>("Array(UInt8)", &[vec![1, 2]]).unwrap(), [vec![1u16, 2]]);
    let m: BTreeMap<String, u64> = [("a".to_string(), 1), ("b".to_string(), 2)].into();
    same::<BTreeMap<String, u64>>("Map(String, UInt64)", &[m.clone(), BTreeMap::new()]);
    let h: HashMap<u8, Option<String>> = [(1, None), (2, Some("x".into()))].into();
    same::<HashMap<u8, Option<String>>>("Map(UInt8, Nullable(String))", &[h]);
    same::<(u8, String, Option<f64>)>(
        "Tuple(UInt8, String, Nullable(Float64))",
        &[(1, "a".into(), None), (2, "b".into(), Some(0.5))],
    );
    same::<(u8, (i16, String))>("Tuple(a UInt8, b Tuple(Int16, String))", &[(1, (-2, "n".into()))]);
    same::<Vec<(String, u32)>>("Map(String, UInt32)", &[vec![("k".into(), 1), ("k".into(), 2)]]);
}

#[test]
fn decimals_round_trip_exactly() {
    let d = |raw: i64, scale| Decimal::new(raw, scale).unwrap();
    same::<Decimal>("Decimal(9, 2)", &[d(12345, 2), d(-1, 2), d(0, 2)]);
    same::<Decimal>("Decimal(38, 4)", &[d(i64::MAX, 4)]);
    same::<Decimal>("Decimal(76, 0)", &[d(-42, 0)]);
    // A value of another scale is rescaled when that is exact, refused when not.
    assert_eq!(round_trip::<Decimal, Decimal>("Decimal(9, 3)", &[d(15, 1)]).unwrap(), [d(1500, 3)]);
    assert!(round_trip::<Decimal, Decimal>("Decimal(9, 1)", &[d(15, 2)]).is_err());
    assert!(round_trip::<Decimal, Decimal>("Decimal(4, 0)", &[d(100_000, 0)]).is_err(), "precision");
}

#[test]
fn dates_and_times_round_trip_as_their_integers() {
    same::<u16>("Date", &[0, 19_000]);
    same::<i32>("Date32", &[-25_567, 0, 100_000]);
    same::<u32>("DateTime", &[0, 1_700_000_000]);
    same::<u32>("DateTime('Asia/Tokyo')", &[1_700_000_000]);
    same::<i64>("DateTime64(3, 'UTC')", &[-1, 1_700_000_000_123]);
    assert_eq!(round_trip::<u16, i32>("Date", &[19_000]).unwrap(), [19_000]);
    assert_eq!(round_trip::<u32, i64>("DateTime", &[1_700_000_000]).unwrap(), [1_700_000_000]);
}

#[cfg(feature = "chrono")]
#[test]
fn chrono_dates_and_times_round_trip() {
    use crate::convert::ext::chrono::{DateTime, NaiveDate, Utc};
    let day = NaiveDate::from_ymd_opt(2024, 2, 29).unwrap();
    same::<NaiveDate>("Date", &[day]);
    same::<NaiveDate>("Date32", &[NaiveDate::from_ymd_opt(1900, 1, 1).unwrap(), day]);
    let t: DateTime<Utc> = DateTime::from_timestamp(1_700_000_000, 123_000_000).unwrap();
    same::<DateTime<Utc>>("DateTime64(3)", &[t]);
    let whole: DateTime<Utc> = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
    same::<DateTime<Utc>>("DateTime", &[whole]);
    // Rounded down to the column's tick, as `convert::chrono::from_datetime` says.
    assert_eq!(round_trip::<DateTime<Utc>, DateTime<Utc>>("DateTime", &[t]).unwrap(), [whole]);
}

#[test]
fn uuids_round_trip() {
    let u = WireUuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
    same::<WireUuid>("UUID", &[u, WireUuid::from_u128(0)]);
    #[cfg(feature = "uuid")]
    {
        let v = uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        same::<uuid::Uuid>("UUID", &[v]);
        assert_eq!(round_trip::<uuid::Uuid, WireUuid>("UUID", &[v]).unwrap(), [u]);
    }
}

/// What `#[derive(chnative::Enum)]` generates, by hand.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Level {
    Low,
    High,
}

impl EnumLabels for Level {
    const LABELS: &'static [&'static str] = &["low", "high"];
    fn from_index(k: usize) -> Option<Self> {
        [Level::Low, Level::High].get(k).copied()
    }
    fn index(&self) -> usize {
        *self as usize
    }
}

impl<'r> FromColumn<'r> for Level {
    type Reader = EnumReader<'r>;
    fn accepts(ty: &DataType) -> bool {
        enum_accepts::<Self>(ty)
    }
    fn reader(view: &ColumnView<'r>, _: &ReadContext) -> RowResult<Self::Reader> {
        EnumReader::new::<Self>(view)
    }
    fn read(r: &Self::Reader, i: usize) -> RowResult<Self> {
        r.get::<Self>(i)
    }
}

impl ToColumn for Level {
    type Buffer = EnumBuffer;
    fn writes(ty: &DataType) -> bool {
        enum_writes::<Self>(ty)
    }
    fn buffer(ty: &DataType) -> RowResult<Self::Buffer> {
        EnumBuffer::new::<Self>(ty)
    }
    fn write_to(&self, buf: &mut Self::Buffer) -> RowResult<()> {
        buf.push(self.index());
        Ok(())
    }
}

#[test]
fn enums_round_trip_by_label() {
    matrix::<Level>(&[
        ("Enum8('low' = 1, 'high' = 2)", true),
        ("Enum16('high' = -300, 'low' = 7)", true),
        ("String", false),
    ]);
    // Reading needs a variant for each label; writing, a label for each variant.
    let wider = ty("Enum8('low' = 1, 'high' = 2, 'mid' = 3)");
    assert!(!accepts::<Level>(&wider));
    assert!(writes::<Level>(&wider));
    let narrower = ty("Enum8('low' = 1)");
    assert!(accepts::<Level>(&narrower));
    assert!(!writes::<Level>(&narrower));
    same::<Level>("Enum8('low' = 1, 'high' = 2)", &[Level::High, Level::Low]);
    same::<Level>("Enum16('high' = -300, 'low' = 7)", &[Level::Low, Level::High]);
    // Labels of a column read as their stored numbers too.
    assert_eq!(round_trip::<Level, i8>("Enum8('low' = 1, 'high' = 2)", &[Level::High]).unwrap(), [2]);
}

#[test]
fn dynamic_values_read_any_column_and_write_exactly() {
    use crate::value::Value;
    assert!(accepts::<Value>(&ty("Map(String, Array(Nullable(UInt8)))")));
    assert_eq!(
        round_trip::<u64, Value>("UInt64", &[1, u64::MAX]).unwrap(),
        [Value::UInt64(1), Value::UInt64(u64::MAX)]
    );
    assert_eq!(round_trip::<Option<&str>, Value>("Nullable(String)", &[None]).unwrap(), [Value::Null]);
    same::<Value>("Array(Int16)", &[Value::Array(vec![Value::Int16(-1), Value::Int16(2)])]);
    assert_eq!(round_trip::<Value, u8>("UInt8", &[Value::UInt64(200)]).unwrap(), [200]);
    let e = round_trip::<Value, u8>("UInt8", &[Value::UInt64(300)]).unwrap_err();
    assert!(matches!(e.kind(), RowErrorKind::InvalidInput(_)), "{e:?}");
}

#[test]
fn errors_say_which_row_and_column() {
    let block = encode_decode("Array(UInt8)", crate::insert::InsertData::array(&[1], crate::insert::fixed(&[5u8])));
    let view = block.columns()[0].view();
    let r = Reader::<Vec<u8>>::new(&view, &ReadContext::default()).unwrap();
    assert_eq!(r.get(0).unwrap(), [5]);
    let e = r.get(1).unwrap_err();
    assert!(matches!(e.kind(), RowErrorKind::Column(crate::ProtoError::Violation(_))), "{e:?}");
    assert!(e.to_string().starts_with("protocol: "), "{e}");
    // A reader of the wrong type is a type mismatch.
    let e = Reader::<String>::new(&view, &ReadContext::default()).map(|_| ()).unwrap_err();
    assert!(e.as_type_mismatch().is_some(), "{e:?}");
    // A value the column cannot hold names the column when written as a field.
    let e = to_column::push_error(RowError::invalid_input("256 does not fit"), "c");
    assert_eq!(e.to_string(), "column `c`: 256 does not fit");
}
