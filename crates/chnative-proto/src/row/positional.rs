//! Single values and tuples as rows: `client.fetch_one::<u64>(…)` reads a
//! one-column result, `client.fetch_all::<(u64, String)>(…)` reads the columns by
//! position. The values are read by the same [`FromColumn`] rules as the fields of
//! a derived row (lossless widening included).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::convert::{Decimal, I256, U256};
use crate::view::{ColumnView, WireUuid};
use crate::{Column, DataType};

use super::{accepts, refusal, Field, FromColumn, ReadContext, Reader, Row};
use crate::row::{RowError as Error, RowResult as Result};

/// `std::any::type_name` without module paths: `Option<String>`, not
/// `core::option::Option<alloc::string::String>`.
pub(crate) fn short_type_name<T: ?Sized>() -> String {
    let full = std::any::type_name::<T>();
    let mut out = String::with_capacity(full.len());
    let mut start = 0; // where the current path begins in `out`
    let mut chars = full.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            out.truncate(start);
        } else {
            out.push(c);
            if !(c.is_alphanumeric() || c == '_') {
                start = out.len();
            }
        }
    }
    out
}

/// What [`bind_by_position`] checks of one element of a positional row.
pub(crate) struct Element {
    rust_type: String,
    accepts: fn(&DataType) -> bool,
    refusal: fn(&DataType) -> Option<&'static str>,
}

impl Element {
    pub(crate) fn of<T: for<'r> FromColumn<'r>>() -> Element {
        Element { rust_type: short_type_name::<T>(), accepts: accepts::<T>, refusal: refusal::<T> }
    }
}

/// Binds the elements of a single value (`tuple: None`) or a tuple to the result's
/// columns by position: the result must have exactly one column per element, each
/// of a type its element reads.
pub(crate) fn bind_by_position(
    columns: &[Column],
    elements: &[Element],
    tuple: Option<&str>,
) -> Result<Vec<Option<usize>>> {
    if columns.len() != elements.len() {
        let names = columns.iter().map(|c| format!("`{}`", c.name())).collect::<Vec<_>>().join(", ");
        return Err(Error::invalid_input(match tuple {
            Some(t) => format!(
                "the tuple {t} reads {} columns by position, but the result has {} ({names})",
                elements.len(),
                columns.len()
            ),
            None => format!(
                "a single value ({}) reads a result of one column, but this one has {} ({names}); read several \
                 columns as a tuple or a #[derive(Row)] struct, or the first one with fetch_scalar",
                elements.first().map_or("?", |e| e.rust_type.as_str()),
                columns.len()
            ),
        }));
    }
    for (k, (c, e)) in columns.iter().zip(elements).enumerate() {
        if !(e.accepts)(c.data_type()) {
            let mut notes: Vec<String> = (e.refusal)(c.data_type()).into_iter().map(String::from).collect();
            if let Some(t) = tuple {
                notes.push(format!("element {k} of {t}"));
            }
            let notes = if notes.is_empty() { String::new() } else { format!(" ({})", notes.join("; ")) };
            return Err(Error::from(crate::ProtoError::TypeMismatch {
                column: c.name().to_string(),
                requested: format!("{}{notes}", e.rust_type),
                actual: c.type_name().to_string(),
            }));
        }
    }
    Ok((0..columns.len()).map(Some).collect())
}

/// Checks that `T` can read the column `col` (the same check and error as a
/// one-column row), for the client's `Scalar`.
pub fn check_column<T: for<'r> FromColumn<'r>>(col: &ColumnView<'_>) -> Result<()> {
    if accepts::<T>(col.data_type()) {
        return Ok(());
    }
    let note = refusal::<T>(col.data_type()).map(|n| format!(" ({n})")).unwrap_or_default();
    Err(Error::from(crate::ProtoError::TypeMismatch {
        column: col.name().to_string(),
        requested: format!("{}{note}", short_type_name::<T>()),
        actual: col.type_name().into_owned(),
    }))
}

/// `Row` for types that read one column: `impl<generics> Row for Type`.
macro_rules! single_value_rows {
    ($([$($g:tt)*] $t:ty),* $(,)?) => {$(
        impl<$($g)*> Row for $t {
            const NAME: &'static str = "a single value";
            const FIELDS: &'static [Field] = &[];
            const IGNORE_EXTRA_COLUMNS: bool = false;
            type Value<'r> = Self;
            type Readers<'r> = Reader<'r, Self>;
            fn readers<'r>(cols: &[Option<ColumnView<'r>>], ctx: &ReadContext) -> Result<Self::Readers<'r>> {
                Reader::required(cols, 0, ctx)
            }
            #[inline]
            // `Ok(…?)` rather than the Result itself: with the error one pointer wide,
            // passing the Result through made the optimiser merge the LowCardinality
            // and plain paths into one re-dispatch on its tag, 8 more instructions per
            // row of a `fetch::<u64>()` loop (counted with cachegrind); this form keeps
            // the success path a straight line, as in derived rows.
            #[allow(clippy::needless_question_mark)]
            fn read<'r>(readers: &Self::Readers<'r>, i: usize) -> Result<Self::Value<'r>> {
                Ok(readers.get(i)?)
            }
            fn bind(columns: &[Column]) -> Result<Vec<Option<usize>>> {
                bind_by_position(columns, &[Element::of::<Self>()], None)
            }
        }
    )*};
}

single_value_rows!(
    [] u8,
    [] u16,
    [] u32,
    [] u64,
    [] u128,
    [] i8,
    [] i16,
    [] i32,
    [] i64,
    [] i128,
    [] I256,
    [] U256,
    [] f32,
    [] f64,
    [] bool,
    [] String,
    [] Decimal,
    [] WireUuid,
    [] Ipv4Addr,
    [] Ipv6Addr,
    [] crate::value::Value,
    [const N: usize] [u8; N],
    [T: for<'r> FromColumn<'r> + 'static] Option<T>,
    [T: for<'r> FromColumn<'r> + 'static] Vec<T>,
    [K: for<'r> FromColumn<'r> + Eq + Hash + 'static, V: for<'r> FromColumn<'r> + 'static] HashMap<K, V>,
    [K: for<'r> FromColumn<'r> + Ord + 'static, V: for<'r> FromColumn<'r> + 'static] BTreeMap<K, V>,
);

#[cfg(feature = "uuid")]
single_value_rows!([] uuid::Uuid);
#[cfg(feature = "rust_decimal")]
single_value_rows!([] crate::convert::ext::rust_decimal::Decimal);
#[cfg(feature = "serde_json")]
single_value_rows!([] serde_json::Value);
#[cfg(feature = "chrono")]
single_value_rows!(
    [] crate::convert::ext::chrono::NaiveDate,
    [] crate::convert::ext::chrono::NaiveDateTime,
    [] crate::convert::ext::chrono::DateTime<crate::convert::ext::chrono::Utc>,
    [] crate::convert::ext::chrono::DateTime<crate::convert::ext::chrono_tz::Tz>,
    [] crate::convert::ext::chrono::TimeDelta,
);
#[cfg(feature = "time")]
single_value_rows!(
    [] crate::convert::ext::time::Date,
    [] crate::convert::ext::time::OffsetDateTime,
    [] crate::convert::ext::time::Duration,
);
#[cfg(feature = "jiff")]
single_value_rows!(
    [] crate::convert::ext::jiff::civil::Date,
    [] crate::convert::ext::jiff::Timestamp,
    [] crate::convert::ext::jiff::ZonedDateTime,
    [] crate::convert::ext::jiff::SignedDuration,
);

/// `Row` for a tuple: its elements read the result's columns by position.
macro_rules! tuple_row {
    ($($t:ident $k:tt),+) => {
        impl<$($t: for<'r> FromColumn<'r> + 'static),+> Row for ($($t,)+) {
            const NAME: &'static str = "a tuple";
            const FIELDS: &'static [Field] = &[];
            const IGNORE_EXTRA_COLUMNS: bool = false;
            type Value<'r> = Self;
            type Readers<'r> = ($(Reader<'r, $t>,)+);
            fn readers<'r>(cols: &[Option<ColumnView<'r>>], ctx: &ReadContext) -> Result<Self::Readers<'r>> {
                Ok(($(Reader::required(cols, $k, ctx)?,)+))
            }
            #[inline]
            fn read<'r>(r: &Self::Readers<'r>, i: usize) -> Result<Self::Value<'r>> {
                Ok(($(r.$k.get(i)?,)+))
            }
            fn bind(columns: &[Column]) -> Result<Vec<Option<usize>>> {
                bind_by_position(columns, &[$(Element::of::<$t>()),+], Some(&short_type_name::<Self>()))
            }
        }
    };
}

tuple_row!(A 0);
tuple_row!(A 0, B 1);
tuple_row!(A 0, B 1, C 2);
tuple_row!(A 0, B 1, C 2, E 3);
tuple_row!(A 0, B 1, C 2, E 3, F 4);
tuple_row!(A 0, B 1, C 2, E 3, F 4, G 5);
tuple_row!(A 0, B 1, C 2, E 3, F 4, G 5, H 6);
tuple_row!(A 0, B 1, C 2, E 3, F 4, G 5, H 6, I 7);
tuple_row!(A 0, B 1, C 2, E 3, F 4, G 5, H 6, I 7, J 8);
tuple_row!(A 0, B 1, C 2, E 3, F 4, G 5, H 6, I 7, J 8, K 9);
tuple_row!(A 0, B 1, C 2, E 3, F 4, G 5, H 6, I 7, J 8, K 9, L 10);
tuple_row!(A 0, B 1, C 2, E 3, F 4, G 5, H 6, I 7, J 8, K 9, L 10, M 11);

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn type_names_lose_their_paths() {
        assert_eq!(short_type_name::<u64>(), "u64");
        assert_eq!(short_type_name::<Option<String>>(), "Option<String>");
        assert_eq!(short_type_name::<(u64, Vec<String>)>(), "(u64, Vec<String>)");
        assert_eq!(short_type_name::<std::collections::HashMap<String, [u8; 4]>>(), "HashMap<String, [u8; 4]>");
    }
}
