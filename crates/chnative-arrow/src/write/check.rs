//! Whether Arrow data fits a table: a schema against the table's columns, and
//! an Arrow type against a ClickHouse column type (checked before anything is sent).

use arrow_schema::{DataType as A, TimeUnit};
use chnative::DataType as T;

use super::{alternative_for, TableColumn};
use crate::{Error, Result};

/// Checks that every field of `schema` names a writable column of the table and
/// that its Arrow type can go into that column's type (without looking at values).
pub(crate) fn check_schema(schema: &arrow_schema::Schema, table: &[TableColumn], table_name: &str) -> Result<()> {
    for f in schema.fields() {
        let col = &table[find(table, f.name(), table_name)?];
        check_type(f.data_type(), &col.ty).map_err(|reason| Error::Mismatch {
            column: f.name().clone(),
            arrow: f.data_type().to_string(),
            clickhouse: col.type_name.clone(),
            reason,
        })?;
        if f.is_nullable() && !accepts_null(&col.ty) {
            // Allowed: the values are checked for NULLs when converted.
        }
    }
    Ok(())
}

/// The index of the table column called `name`.
pub(super) fn find(table: &[TableColumn], name: &str, table_name: &str) -> Result<usize> {
    table.iter().position(|c| c.name == name).ok_or_else(|| {
        let names: Vec<&str> = table.iter().map(|c| c.name.as_str()).collect();
        Error::Usage(format!("table {table_name} has no column `{name}` (it has {})", names.join(", ")))
    })
}

fn accepts_null(ty: &T) -> bool {
    match ty {
        T::Nullable(_) | T::Nothing => true,
        T::LowCardinality(t) | T::SimpleAggregateFunction(_, t) => accepts_null(t),
        _ => false,
    }
}

/// The type under LowCardinality / SimpleAggregateFunction / Nullable, and whether it was Nullable.
pub(super) fn strip(ty: &T) -> (&T, bool) {
    match ty {
        T::Nullable(t) => (strip(t).0, true),
        T::LowCardinality(t) | T::SimpleAggregateFunction(_, t) => strip(t),
        t => (t, false),
    }
}

/// Whether Arrow type `a` can go into ClickHouse type `ty`: the error says why not.
pub(crate) fn check_type(a: &A, ty: &T) -> std::result::Result<(), String> {
    let (t, _) = strip(ty);
    let a = match a {
        A::Dictionary(_, v) => v.as_ref(),
        a => a,
    };
    if let T::QBit(elem, _) = t {
        return match a {
            A::FixedSizeList(f, _) | A::List(f) | A::LargeList(f) => match (elem.as_ref(), f.data_type()) {
                (T::Float64, A::Float64) | (T::Float32 | T::BFloat16, A::Float32) => Ok(()),
                (e, a) => Err(format!("{a} elements cannot go into a QBit of {e}")),
            },
            a => Err(format!("Arrow {a} cannot go into {t} (give fixed-size lists of floats)")),
        };
    }
    let shape = t.wire_shape();
    let t = shape.as_ref();
    let ok = match (t, a) {
        (_, A::Null) => accepts_null(ty),
        (T::Int8, A::Int8)
        | (T::Int16, A::Int16)
        | (T::Int32, A::Int32)
        | (T::Int64, A::Int64)
        | (T::UInt8, A::UInt8)
        | (T::UInt16, A::UInt16)
        | (T::UInt32, A::UInt32)
        | (T::UInt64, A::UInt64)
        | (T::Float32, A::Float32)
        | (T::Float64, A::Float64)
        | (T::BFloat16, A::Float32)
        | (T::Bool, A::Boolean)
        | (T::Date | T::Date32, A::Date32)
        | (T::DateTime(_) | T::DateTime64(..), A::Timestamp(..))
        | (T::DateTime(_) | T::Ipv4, A::UInt32)
        | (T::Time, A::Duration(_) | A::Time32(TimeUnit::Second))
        | (T::Time64(_), A::Duration(_) | A::Time64(_))
        | (T::Interval(_), A::Duration(_) | A::Int64)
        | (T::Uuid | T::Ipv6, A::FixedSizeBinary(16))
        | (T::Int128 | T::UInt128, A::FixedSizeBinary(16))
        | (T::Int256 | T::UInt256, A::FixedSizeBinary(32))
        | (T::Enum8(_), A::Int8 | A::Utf8 | A::LargeUtf8 | A::Utf8View)
        | (T::Enum16(_), A::Int16 | A::Utf8 | A::LargeUtf8 | A::Utf8View) => true,
        (
            T::Decimal { scale, .. },
            A::Decimal32(_, s) | A::Decimal64(_, s) | A::Decimal128(_, s) | A::Decimal256(_, s),
        ) => {
            if i16::from(*s) != i16::from(*scale) {
                return Err(format!("Arrow scale {s} differs from the column's scale {scale}; rescale in Arrow first"));
            }
            true
        }
        (T::Int128 | T::Int256, A::Decimal128(_, 0) | A::Decimal256(_, 0)) => true,
        (T::String | T::Json(_), A::Utf8 | A::LargeUtf8 | A::Utf8View | A::Binary | A::LargeBinary | A::BinaryView) => {
            true
        }
        (T::FixedString(n), A::FixedSizeBinary(m)) => {
            if *m as usize != *n {
                return Err(format!("FixedSizeBinary({m}) values do not fit FixedString({n})"));
            }
            true
        }
        (T::FixedString(_), A::Utf8 | A::LargeUtf8 | A::Binary | A::LargeBinary | A::Utf8View | A::BinaryView) => true,
        (T::Array(t), A::List(f) | A::LargeList(f) | A::FixedSizeList(f, _)) => {
            return check_type(f.data_type(), t).map_err(|e| format!("array elements: {e}"));
        }
        (T::Map(k, v), A::Map(entries, _)) => {
            let A::Struct(kv) = entries.data_type() else { return Err("map entries are not a struct".into()) };
            if kv.len() != 2 {
                return Err("map entries are not key/value pairs".into());
            }
            check_type(kv[0].data_type(), k).map_err(|e| format!("map keys: {e}"))?;
            return check_type(kv[1].data_type(), v).map_err(|e| format!("map values: {e}"));
        }
        (T::Tuple(elems), A::Struct(fields)) => {
            if elems.len() != fields.len() {
                return Err(format!("a struct of {} fields into a Tuple of {}", fields.len(), elems.len()));
            }
            for (i, ((_, t), f)) in elems.iter().zip(fields.iter()).enumerate() {
                check_type(f.data_type(), t).map_err(|e| format!("tuple element {}: {e}", i + 1))?;
            }
            true
        }
        (T::Variant(alts), A::Union(fields, _)) => {
            for (_, f) in fields.iter() {
                if f.data_type() != &A::Null {
                    let alt = alternative_for(f, alts)?;
                    check_type(f.data_type(), alt).map_err(|e| format!("union member `{}`: {e}", f.name()))?;
                }
            }
            true
        }
        (T::Variant(_) | T::Dynamic { .. } | T::QBit(..) | T::QBitStrided(..) | T::AggregateFunction(..), _) => {
            return Err(format!("inserting {t} from Arrow is not supported"));
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("Arrow {a} cannot go into {t}"))
    }
}
