//! Conversions on request: from the raw wire values the column views hand out to
//! Rust types, and back for inserts.
//!
//! Column views stay zero-copy slices of wire values (`&[u16]` days, `&[i64]`
//! ticks, `&[i128]` decimal mantissas, …); nothing here runs unless you call it.
//!
//! | ClickHouse | wire value | here |
//! |---|---|---|
//! | `Int256` / `UInt256` | 32 bytes | [`I256`] / [`U256`] (viewed zero-copy) |
//! | `Decimal(P, S)` | `i32`/`i64`/`i128`/[`I256`] | [`decimal_column`], [`Decimal`]; `rust_decimal` feature |
//! | `Date`, `Date32` | `u16` / `i32` days | [`date_column`], [`date32_column`]; [`calendar`] |
//! | `DateTime([tz])` | `u32` seconds | [`datetime_column`] |
//! | `DateTime64(p[, tz])` | `i64` ticks of 10^−p s | [`datetime64_column`] |
//! | `Time`, `Time64(p)` | `i32` seconds / `i64` ticks | [`time_column`], [`time64_column`] |
//! | `IPv4`, `IPv6` | `u32` / `[u8; 16]` | [`net`] |
//! | `Enum8`, `Enum16` | `i8` / `i16` | [`EnumMap`] |
//! | `BFloat16` | `u16` | [`bf16`] |
//!
//! Date and time conversions to library types sit behind cargo features:
//! `chrono` (module `convert::chrono`, with `chrono-tz` for named zones), `time`
//! (`convert::time`, UTC only: that crate has no time zone database) and `jiff`
//! (`convert::jiff`, with its bundled time zone database). `rust_decimal` adds
//! `Decimal::to_rust_decimal`. The crates themselves are re-exported in [`ext`].
//!
//! ```
//! use chnative_proto::convert::{bf16, calendar, net, Decimal, I256};
//! assert_eq!(calendar::civil_from_days(19_723), (2024, 1, 1));
//! assert_eq!(net::ipv4(0x7f00_0001).to_string(), "127.0.0.1");
//! assert_eq!(bf16::to_f32(0x3fc0), 1.5);
//! assert_eq!(Decimal::new(-15i32, 1).unwrap().to_string(), "-1.5");
//! assert_eq!(I256::MAX.to_string().len(), 77);
//! ```

use crate::error::ProtoError;
use crate::types::DataType;
use crate::view::{ColumnView, FixedValue};

pub mod bf16;
pub mod calendar;
pub mod decimal;
pub mod enums;
pub mod exact;
pub mod int256;
pub mod net;
mod ranges;
pub mod temporal;
pub mod text;
pub mod zone;

/// Adds library conversions to the wrappers from a table: per wrapper, one row a
/// method, `method<Generic: Bound>(col, args…) -> Return = body;`, where `col`
/// names the wrapper inside `body`. The library modules use it so that each
/// lists all of its conversions in one place; it sits here, above their `mod`
/// lines, because a `macro_rules!` is in scope only in the text after it.
#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
macro_rules! column_conversions {
    ($(
        $wrapper:ident {$(
            $(#[$attr:meta])*
            $method:ident $(<$generic:ident: $bound:path>)?
                ($col:ident $(, $arg:ident: $arg_ty:ty)*) -> $ret:ty = $body:expr;
        )*}
    )*) => {$(
        impl $wrapper<'_> {$(
            $(#[$attr])*
            pub fn $method $(<$generic: $bound>)? (&self $(, $arg: $arg_ty)*) -> $ret {
                let $col = self;
                $body
            }
        )*}
    )*};
}

#[cfg(feature = "chrono")]
pub mod chrono;
#[cfg(feature = "jiff")]
pub mod jiff;
#[cfg(feature = "time")]
pub mod time;

pub use decimal::{decimal_column, Decimal, DecimalColumn, DecimalInt, DecimalRaw};
pub use enums::EnumMap;
pub use int256::{I256, U256};
pub use temporal::{
    date32_column, date_column, datetime64_column, datetime_column, time64_column, time_column, Date32Column,
    DateColumn, DateTime64Column, DateTimeColumn, Time64Column, TimeColumn,
};

/// The date/time and decimal crates the conversions target, re-exported so the
/// versions always match (each behind its feature).
///
/// ```
/// #[cfg(feature = "chrono")]
/// let _: chnative_proto::convert::ext::chrono::NaiveDate = chnative_proto::convert::chrono::date(0);
/// ```
pub mod ext {
    #[cfg(feature = "chrono")]
    #[doc(no_inline)]
    pub use ::chrono;
    #[cfg(feature = "chrono")]
    #[doc(no_inline)]
    pub use ::chrono_tz;
    #[cfg(feature = "jiff")]
    #[doc(no_inline)]
    pub use ::jiff;
    #[cfg(feature = "rust_decimal")]
    #[doc(no_inline)]
    pub use ::rust_decimal;
    #[cfg(feature = "time")]
    #[doc(no_inline)]
    pub use ::time;
}

/// Why a conversion failed.
///
/// ```
/// use chnative_proto::convert::{ConvertError, I256};
/// let e = "1x".parse::<I256>().unwrap_err();
/// assert!(matches!(e, ConvertError::Parse { .. }));
/// assert_eq!(e.to_string(), "cannot parse \"1x\" as Int256: invalid digit");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// The column does not have the type the helper converts (or a view error).
    #[error(transparent)]
    Column(#[from] ProtoError),
    /// The value exists but the target cannot hold it.
    #[error("{value} is out of range for {target}")]
    OutOfRange {
        /// The value, rendered.
        value: String,
        /// What it was converted to.
        target: String,
    },
    /// The value would lose digits (conversions never round silently).
    #[error("{value} cannot be represented exactly as {target}")]
    Inexact {
        /// The value, rendered.
        value: String,
        /// What it was converted to.
        target: String,
    },
    /// Text that is not a number of the expected form.
    #[error("cannot parse {input:?} as {target}: {reason}")]
    Parse {
        /// The text.
        input: String,
        /// What it was parsed as.
        target: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A label an enum type does not have.
    #[error("row {row}: {label:?} is not a label of {ty}")]
    UnknownLabel {
        /// The label.
        label: String,
        /// Its row in the input.
        row: usize,
        /// The enum type.
        ty: String,
    },
    /// A time zone name the time zone database does not know.
    #[error("unknown time zone {name:?}: {reason}")]
    UnknownTimeZone {
        /// The name.
        name: String,
        /// What the database said.
        reason: String,
    },
}

impl ConvertError {
    pub(crate) fn out_of_range(value: impl std::fmt::Display, target: impl Into<String>) -> ConvertError {
        ConvertError::OutOfRange { value: value.to_string(), target: target.into() }
    }

    /// A parse error reported for the whole input rather than a part of it.
    pub(crate) fn with_input(self, input: &str) -> ConvertError {
        match self {
            ConvertError::Parse { target, reason, .. } => {
                ConvertError::Parse { input: input.to_string(), target, reason }
            }
            other => other,
        }
    }
}

/// The type with `SimpleAggregateFunction(f, T)` replaced by `T` (its wire form).
pub(crate) fn plain_type(t: &DataType) -> &DataType {
    match t {
        DataType::SimpleAggregateFunction(_, t) => t,
        t => t,
    }
}

/// A type no column has, used to obtain the view's own mismatch error (which
/// names the column) for helpers that need a narrower type than `values::<T>`.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
struct NoType(u8);

impl FixedValue for NoType {
    const RUST_NAME: &'static str = "";
    fn accepts(_: &DataType) -> bool {
        false
    }
}

/// "column `c` is <actual>, not <requested>".
pub(crate) fn type_mismatch(view: &ColumnView<'_>, requested: &str) -> ConvertError {
    let (column, actual) = match view.values::<NoType>() {
        Err(ProtoError::TypeMismatch { column, actual, .. }) => (column, actual),
        _ => (String::new(), view.data_type().to_string()),
    };
    ConvertError::Column(ProtoError::TypeMismatch { column, requested: requested.to_string(), actual })
}
