//! `AggregateFunction(f, T)` states of `count`, `sum`, `min`, `max`, `any` and
//! `anyLast`: what `-State` combinators and AggregatingMergeTree columns hold.
//!
//! Each row is the function's own serialization of its state (ClickHouse's
//! `IAggregateFunction::serialize`), with no length in front:
//!
//! | function | state | bytes |
//! |---|---|---|
//! | `count` | rows counted | VarUInt |
//! | `sum(T)` | the sum, in T's sum type (Int64, UInt64, Float64, (U)Int128, (U)Int256) | 8, 16 or 32, little-endian |
//! | `min`, `max`, `any`, `anyLast` (T fixed-width numeric, date, time or decimal) | a flag (1 once a value was seen), then the value | 1 or 1 + width of T |
//!
//! Other functions, and these over other types, keep having no codec: building a
//! column of them is a [`crate::ProtoError::Type`].

use std::sync::Arc;

use super::RowFormat;
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::Reader;

/// The state layout of one supported `AggregateFunction` type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AggregateState {
    /// `count`: a VarUInt.
    Count,
    /// `sum`: the sum, `width` bytes.
    Sum {
        /// Bytes of the sum type.
        width: usize,
    },
    /// `min`, `max`, `any`, `anyLast`: a has-value flag, then the value when the flag is 1.
    Single {
        /// Bytes of the argument type.
        width: usize,
    },
}

impl AggregateState {
    /// The state layout of `ty`, when it is an `AggregateFunction` this crate decodes.
    pub fn for_type(ty: &DataType) -> Option<AggregateState> {
        use DataType as D;
        let DataType::AggregateFunction(function, args) = ty else { return None };
        match (function.as_str(), args.as_slice()) {
            ("count", _) => Some(AggregateState::Count),
            ("sum", [t]) => {
                let width = match t {
                    D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::UInt8 | D::UInt16 | D::UInt32 | D::UInt64 => 8,
                    D::Float32 | D::Float64 => 8,
                    D::Int128 | D::UInt128 => 16,
                    D::Int256 | D::UInt256 => 32,
                    _ => return None,
                };
                Some(AggregateState::Sum { width })
            }
            ("min" | "max" | "any" | "anyLast", [t]) => match t {
                t if t.is_number() => t.fixed_width().map(|width| AggregateState::Single { width }),
                D::Date | D::Date32 | D::DateTime(_) | D::DateTime64(..) | D::Decimal { .. } => {
                    t.fixed_width().map(|width| AggregateState::Single { width })
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The value one state holds, or `None` for a `min`/`max`/`any` state that saw no value.
    pub fn value<'s>(&self, state: &'s [u8]) -> Result<Option<StateValue<'s>>> {
        let mut r = Reader::new(state);
        let value = match *self {
            AggregateState::Count => Some(StateValue::Count(r.varuint()?)),
            AggregateState::Sum { width } => Some(StateValue::Bytes(r.bytes(width)?)),
            AggregateState::Single { width } => match r.u8()? {
                0 => None,
                _ => Some(StateValue::Bytes(r.bytes(width)?)),
            },
        };
        if r.remaining() != 0 {
            return Err(ProtoError::violation("aggregate state has trailing bytes"));
        }
        Ok(value)
    }
}

/// The value inside one aggregate state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateValue<'s> {
    /// `count`'s count.
    Count(u64),
    /// The sum, or the value `min`/`max`/`any` kept: little-endian bytes of the sum
    /// type or of the argument type.
    Bytes(&'s [u8]),
}

impl RowFormat for AggregateState {
    fn skip_row(&self, r: &mut Reader<'_>) -> Result<()> {
        match *self {
            AggregateState::Count => r.varuint().map(|_| ()),
            AggregateState::Sum { width } => r.bytes(width).map(|_| ()),
            AggregateState::Single { width } => match r.u8()? {
                0 => Ok(()),
                1 => r.bytes(width).map(|_| ()),
                f => Err(ProtoError::violation(format!("aggregate state flag {f}, expected 0 or 1"))),
            },
        }
    }
}

/// The registry's entry for this family.
pub(super) fn row_format(ty: &DataType) -> Option<Arc<dyn RowFormat>> {
    AggregateState::for_type(ty).map(|s| Arc::new(s) as Arc<dyn RowFormat>)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(ty: &str) -> Option<AggregateState> {
        AggregateState::for_type(&DataType::parse(ty).unwrap())
    }

    #[test]
    fn supported_functions_and_types() {
        assert_eq!(state("AggregateFunction(count)"), Some(AggregateState::Count));
        assert_eq!(state("AggregateFunction(count, Nullable(String))"), Some(AggregateState::Count));
        assert_eq!(state("AggregateFunction(sum, Int8)"), Some(AggregateState::Sum { width: 8 }));
        assert_eq!(state("AggregateFunction(sum, UInt128)"), Some(AggregateState::Sum { width: 16 }));
        assert_eq!(state("AggregateFunction(min, Decimal(9, 2))"), Some(AggregateState::Single { width: 4 }));
        assert_eq!(state("AggregateFunction(anyLast, DateTime64(3))"), Some(AggregateState::Single { width: 8 }));
        for ty in [
            "AggregateFunction(uniq, UInt64)",
            "AggregateFunction(sum, Decimal(9, 2))",
            "AggregateFunction(min, String)",
            "AggregateFunction(max, Nullable(UInt8))",
            "AggregateFunction(sum, UInt8, UInt8)",
            "AggregateFunction(quantile(0.5), Float64)",
        ] {
            assert_eq!(state(ty), None, "{ty}");
        }
    }

    #[test]
    fn states_as_26_9_serializes_them() {
        // hex(countState()) over 300 rows, hex(sumState(toInt8(-3))) over 300,
        // hex(minState(toDate('2020-01-02'))), hex(minState(number)) over no rows.
        let count = AggregateState::Count;
        assert_eq!(count.value(&[0xac, 0x02]).unwrap(), Some(StateValue::Count(300)));
        let sum = AggregateState::Sum { width: 8 };
        let bytes = (-900i64).to_le_bytes();
        assert_eq!(sum.value(&bytes).unwrap(), Some(StateValue::Bytes(&bytes)));
        let min = AggregateState::Single { width: 2 };
        assert_eq!(min.value(&[0x01, 0x57, 0x47]).unwrap(), Some(StateValue::Bytes(&[0x57, 0x47])));
        assert_eq!(AggregateState::Single { width: 8 }.value(&[0]).unwrap(), None);
        assert!(min.value(&[0x01, 0x57]).is_err());
        assert!(min.value(&[0x00, 0x57]).is_err());
        let mut r = Reader::new(&[2, 0, 0]);
        assert!(matches!(min.skip_row(&mut r), Err(ProtoError::Violation(_))));
    }
}
