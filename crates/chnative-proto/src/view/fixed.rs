//! Fixed-width values: numbers, dates, UUIDs, decimals, enums and FixedString, viewed
//! as `&[T]` straight over the column buffer.

use crate::column::FixedColumn;
use bytemuck::{Pod, Zeroable};

use super::{strip_simple_agg, ColumnView, D};
use crate::column::ColumnData;
use crate::error::Result;
use crate::types::DataType;

/// A Rust type whose memory is the Native wire layout of some ClickHouse types.
pub trait FixedValue: Pod {
    /// The Rust name, for error messages.
    const RUST_NAME: &'static str;
    /// Whether a column of type `ty` may be viewed as `[Self]`.
    fn accepts(ty: &DataType) -> bool;
}

macro_rules! fixed_value {
    ($t:ty, $($pat:pat_param)|+) => {
        impl FixedValue for $t {
            const RUST_NAME: &'static str = stringify!($t);
            fn accepts(ty: &DataType) -> bool {
                matches!(ty, $($pat)|+)
            }
        }
    };
}

fixed_value!(u8, D::UInt8 | D::Bool | D::Nothing);
fixed_value!(i8, D::Int8 | D::Enum8(_));
fixed_value!(u16, D::UInt16 | D::Date | D::BFloat16);
fixed_value!(i16, D::Int16 | D::Enum16(_));
fixed_value!(u32, D::UInt32 | D::DateTime(_) | D::Ipv4);
fixed_value!(i32, D::Int32 | D::Date32 | D::Time | D::Decimal { precision: 0..=9, .. });
fixed_value!(u64, D::UInt64);
fixed_value!(i64, D::Int64 | D::DateTime64(..) | D::Time64(_) | D::Interval(_) | D::Decimal { precision: 10..=18, .. });
fixed_value!(u128, D::UInt128);
fixed_value!(i128, D::Int128 | D::Decimal { precision: 19..=38, .. });
fixed_value!(f32, D::Float32);
fixed_value!(f64, D::Float64);

/// A UUID as the wire has it: the high and low 64-bit halves, each little-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Pod, Zeroable, Default)]
#[repr(C)]
pub struct WireUuid {
    /// Most significant half.
    pub high: u64,
    /// Least significant half.
    pub low: u64,
}

impl WireUuid {
    /// The UUID as a 128-bit integer (RFC 4122 byte order when written big-endian).
    pub fn as_u128(self) -> u128 {
        (u128::from(self.high) << 64) | u128::from(self.low)
    }
    /// From a 128-bit integer.
    pub fn from_u128(v: u128) -> Self {
        WireUuid { high: (v >> 64) as u64, low: v as u64 }
    }
}

impl std::fmt::Display for WireUuid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.as_u128();
        write!(
            f,
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            (v >> 96) as u32,
            (v >> 80) as u16,
            (v >> 64) as u16,
            (v >> 48) as u16,
            v as u64 & 0xffff_ffff_ffff
        )
    }
}

impl FixedValue for WireUuid {
    const RUST_NAME: &'static str = "WireUuid";
    fn accepts(ty: &DataType) -> bool {
        matches!(ty, D::Uuid)
    }
}

impl FixedValue for [u8; 16] {
    const RUST_NAME: &'static str = "[u8; 16]";
    fn accepts(ty: &DataType) -> bool {
        matches!(ty, D::Ipv6 | D::FixedString(16) | D::Uuid | D::Int128 | D::UInt128)
    }
}

impl FixedValue for [u8; 32] {
    const RUST_NAME: &'static str = "[u8; 32]";
    fn accepts(ty: &DataType) -> bool {
        matches!(ty, D::Int256 | D::UInt256 | D::FixedString(32) | D::Decimal { precision: 39.., .. })
    }
}

impl<'a> ColumnView<'a> {
    /// The values as `&[T]`, borrowed from the column buffer.
    pub fn values<T: FixedValue>(&self) -> Result<&'a [T]> {
        let ty = strip_simple_agg(&self.ty);
        match self.data {
            ColumnData::Fixed(FixedColumn { data, width }) if T::accepts(ty) && *width == std::mem::size_of::<T>() => {
                data.typed::<T>()
            }
            _ => Err(self.mismatch(T::RUST_NAME)),
        }
    }

    /// Any fixed-width column as raw little-endian bytes and the width per row.
    pub fn raw_fixed(&self) -> Result<(&'a [u8], usize)> {
        match self.data {
            ColumnData::Fixed(FixedColumn { data, width }) => Ok((data.as_bytes(), *width)),
            _ => Err(self.mismatch("a fixed-width type")),
        }
    }

    /// A FixedString(N) column: `(bytes, N)`; row i is `bytes[i*N..(i+1)*N]`.
    pub fn as_fixed_strings(&self) -> Result<(&'a [u8], usize)> {
        match (self.ty.as_ref(), self.data) {
            (D::FixedString(n), ColumnData::Fixed(FixedColumn { data, .. })) => Ok((data.as_bytes(), *n)),
            _ => Err(self.mismatch("FixedString")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::FixedColumn;
    use crate::error::ProtoError;

    #[test]
    fn values_borrow_the_buffer_for_every_type_of_the_width() {
        let data = ColumnData::from_values(&[1u32, 2, 3]);
        for name in ["UInt32", "DateTime", "IPv4", "SimpleAggregateFunction(max, UInt32)"] {
            let ty = DataType::parse(name).unwrap();
            let v = ColumnView::new("c", &ty, name, &data);
            let values = v.values::<u32>().unwrap();
            assert_eq!(values, [1, 2, 3], "{name}");
            let ColumnData::Fixed(FixedColumn { data: buf, .. }) = &data else { unreachable!() };
            assert_eq!(values.as_ptr().cast::<u8>(), buf.as_bytes().as_ptr(), "{name}: copied");
            assert_eq!(v.raw_fixed().unwrap(), (bytemuck::cast_slice(&[1u32, 2, 3][..]), 4));
        }
    }

    #[test]
    fn a_type_of_another_width_or_family_is_a_mismatch() {
        let data = ColumnData::from_values(&[1u32, 2]);
        let ty = DataType::UInt32;
        let v = ColumnView::new("n", &ty, "UInt32", &data);
        // Same width, another type: i32 is Int32/Date32/Decimal32, not UInt32.
        let e = v.values::<i32>().unwrap_err();
        assert!(
            matches!(&e, ProtoError::TypeMismatch { column, requested, actual }
                if column == "n" && requested == "i32" && actual == "UInt32"),
            "{e:?}"
        );
        assert!(v.values::<u64>().is_err());
        assert!(v.as_fixed_strings().is_err());
        assert!(v.as_strings().is_err());
    }

    #[test]
    fn decimals_pick_the_integer_of_their_precision() {
        for (p, width) in [(9u8, 4usize), (18, 8), (38, 16), (76, 32)] {
            let ty = DataType::Decimal { precision: p, scale: 2 };
            assert_eq!(ty.fixed_width(), Some(width));
            assert_eq!(i32::accepts(&ty), width == 4, "{p}");
            assert_eq!(i64::accepts(&ty), width == 8, "{p}");
            assert_eq!(i128::accepts(&ty), width == 16, "{p}");
            assert_eq!(<[u8; 32]>::accepts(&ty), width == 32, "{p}");
        }
    }

    #[test]
    fn fixed_strings_and_uuids() {
        let data = ColumnData::from_fixed_strings(b"abcdef", 3);
        let ty = DataType::FixedString(3);
        let v = ColumnView::new("s", &ty, "FixedString(3)", &data);
        assert_eq!(v.as_fixed_strings().unwrap(), (&b"abcdef"[..], 3));

        let u = WireUuid { high: 0x0011_2233_4455_6677, low: 0x8899_aabb_ccdd_eeff };
        assert_eq!(u.to_string(), "00112233-4455-6677-8899-aabbccddeeff");
        let data = ColumnData::from_values(&[u]);
        let ty = DataType::Uuid;
        let v = ColumnView::new("u", &ty, "UUID", &data);
        assert_eq!(v.values::<WireUuid>().unwrap(), [u]);
        assert_eq!(v.values::<[u8; 16]>().unwrap().len(), 1);
    }
}
