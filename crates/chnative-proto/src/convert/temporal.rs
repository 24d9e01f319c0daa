//! Date and time columns: the wire values zero-copy, plus the type's precision and
//! time zone, and what follows from them by calendar arithmetic alone.
//!
//! Conversions of a row to a date/time library's type are methods of these
//! wrappers too, but each library module (`convert::chrono`, `convert::time`,
//! `convert::jiff`, behind their features) defines its own next to the free
//! functions they call; this module depends on none of them. For example, with
//! `chrono`, `col.chrono_tz(server_tz)?` resolves the zone of a `DateTime64`
//! column and `col.to_chrono(i, &tz)?` converts row `i`.
//!
//! A `DateTime`/`DateTime64` column without a time zone in its type is shown by
//! the server in the session time zone — the server's (`ServerInfo::timezone`)
//! unless the `session_timezone` setting says otherwise — so the zone-aware
//! helpers take that name as a fallback.
//!
//! ```no_run
//! # fn demo(view: &chnative_proto::ColumnView<'_>, server_tz: &str) -> Result<(), chnative_proto::convert::ConvertError> {
//! use chnative_proto::convert::datetime64_column;
//! let col = datetime64_column(view)?; // DateTime64(p[, tz])
//! let (p, zone) = (col.precision(), col.zone_name(server_tz));
//! let (secs, nanos) = col.split(0);
//! # Ok(()) }
//! ```

use super::calendar;
use super::ranges::check_precision;
use super::{plain_type, type_mismatch, ConvertError};
use crate::types::DataType;
use crate::view::ColumnView;

/// Generates the column wrappers from a table. Each row names the struct, its raw
/// wire slice and extra fields (`precision`, `tz`), then the constructor, the
/// ClickHouse type it accepts and how the fields come out of that type. Every
/// wrapper gets `raw`, `len` and `is_empty`; a `precision` field adds
/// `precision()`, a `tz` field adds `timezone()` and `zone_name()`.
macro_rules! temporal_columns {
    ($(
        $(#[$struct_attr:meta])*
        pub struct $name:ident { raw: [$raw:ty] $raw_doc:literal $(, $field:ident: $field_ty:ty)* }
        $(#[$ctor_attr:meta])*
        pub fn $ctor:ident($type_name:literal) = $pat:pat => { $($init_field:ident: $init:expr),* };
    )*) => {$(
        $(#[$struct_attr])*
        pub struct $name<'a> {
            raw: &'a [$raw],
            $($field: $field_ty,)*
        }

        $(#[$ctor_attr])*
        pub fn $ctor<'a>(view: &ColumnView<'a>) -> Result<$name<'a>, ConvertError> {
            match plain_type(view.data_type()) {
                $pat => Ok($name { $($init_field: $init,)* raw: view.values()? }),
                _ => Err(type_mismatch(view, $type_name)),
            }
        }

        impl<'a> $name<'a> {
            #[doc = concat!($raw_doc, ", borrowed from the column.")]
            ///
            /// ```no_run
            #[doc = concat!("# fn demo(col: chnative_proto::convert::", stringify!($name), "<'_>) { let _: &[", stringify!($raw), "] = col.raw(); }")]
            /// ```
            pub fn raw(&self) -> &'a [$raw] {
                self.raw
            }
            /// Rows.
            ///
            /// ```no_run
            #[doc = concat!("# fn demo(col: chnative_proto::convert::", stringify!($name), "<'_>) { let _ = col.len(); }")]
            /// ```
            pub fn len(&self) -> usize {
                self.raw.len()
            }
            /// True when there are no rows.
            ///
            /// ```no_run
            #[doc = concat!("# fn demo(col: chnative_proto::convert::", stringify!($name), "<'_>) { let _ = col.is_empty(); }")]
            /// ```
            pub fn is_empty(&self) -> bool {
                self.raw.is_empty()
            }
            $(temporal_columns!(@accessors $name $field);)*
        }
    )*};

    (@accessors $name:ident precision) => {
        /// Digits after the second: a tick is 10^−precision s.
        ///
        /// ```no_run
        #[doc = concat!("# fn demo(col: chnative_proto::convert::", stringify!($name), "<'_>) { assert!(col.precision() <= 9); }")]
        /// ```
        pub fn precision(&self) -> u8 {
            self.precision
        }
    };

    (@accessors $name:ident tz) => {
        /// The time zone named in the column type, if any.
        ///
        /// ```no_run
        #[doc = concat!("# fn demo(col: chnative_proto::convert::", stringify!($name), "<'_>) { let _: Option<&str> = col.timezone(); }")]
        /// ```
        pub fn timezone(&self) -> Option<&str> {
            self.tz.as_deref()
        }
        /// The zone the server shows the values in: the column's, else `server_tz`
        /// (`ServerInfo::timezone`, or the `session_timezone` you set).
        ///
        /// ```no_run
        #[doc = concat!("# fn demo(col: chnative_proto::convert::", stringify!($name), "<'_>) { assert!(!col.zone_name(\"UTC\").is_empty()); }")]
        /// ```
        pub fn zone_name<'s>(&'s self, server_tz: &'s str) -> &'s str {
            self.tz.as_deref().unwrap_or(server_tz)
        }
    };
}

temporal_columns! {
    /// A `Date` column: `u16` days since 1970-01-01.
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let col = chnative_proto::convert::date_column(view)?;
    /// let (y, m, d) = col.ymd(0);
    /// # Ok(()) }
    /// ```
    #[derive(Debug, Clone, Copy)]
    pub struct DateColumn { raw: [u16] "The day numbers" }
    /// Views a `Date` column (for `Nullable(Date)` pass the nullable view's `inner()`).
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let days: &[u16] = chnative_proto::convert::date_column(view)?.raw();
    /// # Ok(()) }
    /// ```
    pub fn date_column("Date") = DataType::Date => {};

    /// A `Date32` column: `i32` days since 1970-01-01 (negative before).
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let col = chnative_proto::convert::date32_column(view)?;
    /// let (y, m, d) = col.ymd(0);
    /// # Ok(()) }
    /// ```
    #[derive(Debug, Clone, Copy)]
    pub struct Date32Column { raw: [i32] "The day numbers" }
    /// Views a `Date32` column.
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let days: &[i32] = chnative_proto::convert::date32_column(view)?.raw();
    /// # Ok(()) }
    /// ```
    pub fn date32_column("Date32") = DataType::Date32 => {};

    /// A `DateTime([tz])` column: `u32` seconds since 1970-01-01 00:00:00 UTC and the
    /// type's time zone, if it names one.
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let col = chnative_proto::convert::datetime_column(view)?;
    /// println!("{} rows in {:?}", col.len(), col.timezone());
    /// # Ok(()) }
    /// ```
    #[derive(Debug, Clone)]
    pub struct DateTimeColumn { raw: [u32] "The Unix timestamps", tz: Option<String> }
    /// Views a `DateTime([tz])` column.
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let secs: &[u32] = chnative_proto::convert::datetime_column(view)?.raw();
    /// # Ok(()) }
    /// ```
    pub fn datetime_column("DateTime") = DataType::DateTime(tz) => { tz: tz.clone() };

    /// A `DateTime64(p[, tz])` column: `i64` ticks of 10^−p seconds since
    /// 1970-01-01 00:00:00 UTC (negative before), the precision and the type's zone.
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let col = chnative_proto::convert::datetime64_column(view)?;
    /// let (secs, nanos) = col.split(0);
    /// # Ok(()) }
    /// ```
    #[derive(Debug, Clone)]
    pub struct DateTime64Column { raw: [i64] "The ticks", precision: u8, tz: Option<String> }
    /// Views a `DateTime64(p[, tz])` column.
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let col = chnative_proto::convert::datetime64_column(view)?;
    /// let ticks: &[i64] = col.raw();
    /// # Ok(()) }
    /// ```
    pub fn datetime64_column("DateTime64") = DataType::DateTime64(p, tz) => {
        precision: {
            check_precision(*p)?;
            *p
        },
        tz: tz.clone()
    };

    /// A `Time` column: `i32` seconds, a signed duration (the server shows
    /// `-999:59:59` … `999:59:59`), not a time of day.
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let secs: &[i32] = chnative_proto::convert::time_column(view)?.raw();
    /// # Ok(()) }
    /// ```
    #[derive(Debug, Clone, Copy)]
    pub struct TimeColumn { raw: [i32] "The seconds" }
    /// Views a `Time` column.
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let col = chnative_proto::convert::time_column(view)?;
    /// # Ok(()) }
    /// ```
    pub fn time_column("Time") = DataType::Time => {};

    /// A `Time64(p)` column: `i64` ticks of 10^−p seconds, a signed duration.
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let col = chnative_proto::convert::time64_column(view)?;
    /// let (p, ticks) = (col.precision(), col.raw());
    /// # Ok(()) }
    /// ```
    #[derive(Debug, Clone, Copy)]
    pub struct Time64Column { raw: [i64] "The ticks", precision: u8 }
    /// Views a `Time64(p)` column.
    ///
    /// ```no_run
    /// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let col = chnative_proto::convert::time64_column(view)?;
    /// # Ok(()) }
    /// ```
    pub fn time64_column("Time64") = DataType::Time64(p) => {
        precision: {
            check_precision(*p)?;
            *p
        }
    };
}

// The row accessors that need no library: calendar arithmetic on the raw values.

impl DateColumn<'_> {
    /// Row `i` as (year, month, day). Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateColumn<'_>) { let (y, m, d) = col.ymd(0); }
    /// ```
    pub fn ymd(&self, i: usize) -> (i64, u32, u32) {
        calendar::civil_from_days(i64::from(self.raw[i]))
    }
}

impl Date32Column<'_> {
    /// Row `i` as (year, month, day), proleptic Gregorian. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Date32Column<'_>) { let (y, m, d) = col.ymd(0); }
    /// ```
    pub fn ymd(&self, i: usize) -> (i64, u32, u32) {
        calendar::civil_from_days(i64::from(self.raw[i]))
    }
}

impl DateTime64Column<'_> {
    /// Row `i` as (Unix seconds rounded down, nanoseconds). Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) { let (s, ns) = col.split(0); }
    /// ```
    pub fn split(&self, i: usize) -> (i64, u32) {
        calendar::split_ticks(self.raw[i], self.precision)
    }
}

impl Time64Column<'_> {
    /// Row `i` as (seconds, nanoseconds), both truncated toward zero (same sign).
    /// Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) { let (s, ns) = col.split(0); }
    /// ```
    pub fn split(&self, i: usize) -> (i64, i32) {
        calendar::split_duration(self.raw[i], self.precision)
    }
}
