//! `time` conversions (feature `time`): wire values of the date and time types to
//! `time` types and back.
//!
//! The `time` crate has no time zone database, so `DateTime`/`DateTime64` values
//! come back as `OffsetDateTime` in UTC; apply an offset you know with
//! `OffsetDateTime::to_offset`, or use the `chrono`/`jiff` features for named
//! zones. Rounding rules are those of `convert::chrono`: time points are rounded
//! down to a tick when written, durations truncated toward zero; out-of-range
//! values are errors.
//!
//! ```
//! use chnative_proto::convert::time as tc;
//! let d = tc::date(19_723);
//! assert_eq!(d.to_string(), "2024-01-01");
//! assert_eq!(tc::from_date(d).unwrap(), 19_723);
//! let t = tc::datetime64(-15, 1).unwrap(); // 1969-12-31 23:59:58.5 UTC
//! assert_eq!(t.unix_timestamp_nanos(), -1_500_000_000);
//! assert_eq!(tc::from_datetime64(t, 0).unwrap(), -2);
//! ```

use ::time::{Date, Duration, OffsetDateTime};

use super::calendar;
use super::ranges::{
    check_precision, encode_date, encode_date32, encode_datetime, encode_datetime64, encode_time, encode_time64,
};
use super::temporal::{Date32Column, DateColumn, DateTime64Column, DateTimeColumn, Time64Column, TimeColumn};
use super::ConvertError;

/// Julian day number of 1970-01-01.
const EPOCH_JULIAN_DAY: i64 = 2_440_588;

fn date_from_days(days: i64) -> Option<Date> {
    i32::try_from(days + EPOCH_JULIAN_DAY).ok().and_then(|j| Date::from_julian_day(j).ok())
}

fn days_of(d: Date) -> i64 {
    i64::from(d.to_julian_day()) - EPOCH_JULIAN_DAY
}

/// `Date` (days since 1970-01-01) → `time::Date`.
///
/// ```
/// assert_eq!(chnative_proto::convert::time::date(0).to_string(), "1970-01-01");
/// ```
pub fn date(days: u16) -> Date {
    // Every u16 day number is within the `time` crate's range; the fallback is unreachable.
    date_from_days(i64::from(days)).unwrap_or(Date::MAX)
}

/// `Date32` days → `time::Date`; an error beyond the crate's years ±9999.
///
/// ```
/// use chnative_proto::convert::time::date32;
/// assert_eq!(date32(-719_528).unwrap().to_string(), "0000-01-01");
/// assert!(date32(i32::MAX).is_err());
/// ```
pub fn date32(days: i32) -> Result<Date, ConvertError> {
    date_from_days(i64::from(days))
        .ok_or_else(|| ConvertError::out_of_range(format!("Date32 day {days}"), "time::Date"))
}

/// `DateTime` (Unix seconds) → `OffsetDateTime` in UTC.
///
/// ```
/// assert_eq!(chnative_proto::convert::time::datetime(86_400).unix_timestamp(), 86_400);
/// ```
pub fn datetime(secs: u32) -> OffsetDateTime {
    // Every u32 second is within range; the fallback is unreachable.
    OffsetDateTime::from_unix_timestamp(i64::from(secs)).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// `DateTime64(precision)` ticks → `OffsetDateTime` in UTC; an error beyond years ±9999.
///
/// ```
/// use chnative_proto::convert::time::datetime64;
/// assert_eq!(datetime64(-1, 9).unwrap().unix_timestamp_nanos(), -1);
/// ```
pub fn datetime64(ticks: i64, precision: u8) -> Result<OffsetDateTime, ConvertError> {
    check_precision(precision)?;
    OffsetDateTime::from_unix_timestamp_nanos(calendar::ticks_to_nanos(ticks, precision)).map_err(|_| {
        ConvertError::out_of_range(format!("DateTime64({precision}) ticks {ticks}"), "time::OffsetDateTime")
    })
}

/// `Time` (signed seconds) → `time::Duration`.
///
/// ```
/// assert_eq!(chnative_proto::convert::time::time(-5).whole_seconds(), -5);
/// ```
pub fn time(secs: i32) -> Duration {
    Duration::seconds(i64::from(secs))
}

/// `Time64(precision)` ticks → `time::Duration` (exact; precision above 9 is read as 9).
///
/// ```
/// assert_eq!(chnative_proto::convert::time::time64(-15, 1).whole_milliseconds(), -1500);
/// ```
pub fn time64(ticks: i64, precision: u8) -> Duration {
    let (secs, nanos) = calendar::split_duration(ticks, precision);
    Duration::new(secs, nanos)
}

/// `time::Date` → `Date` days; an error outside 1970-01-01..=2149-06-06.
///
/// ```
/// use chnative_proto::convert::time::{date, from_date};
/// assert_eq!(from_date(date(12)).unwrap(), 12);
/// ```
pub fn from_date(d: Date) -> Result<u16, ConvertError> {
    encode_date(days_of(d), d)
}

/// `time::Date` → `Date32` days; an error outside 0000-01-01..=9999-12-31.
///
/// ```
/// use chnative_proto::convert::time::{date32, from_date32};
/// assert_eq!(from_date32(date32(-25_567).unwrap()).unwrap(), -25_567);
/// ```
pub fn from_date32(d: Date) -> Result<i32, ConvertError> {
    encode_date32(days_of(d), d)
}

/// `OffsetDateTime` → `DateTime` seconds (sub-second part dropped); an error
/// outside 1970-01-01 00:00:00..=2106-02-07 06:28:15 UTC.
///
/// ```
/// use chnative_proto::convert::time::{datetime, from_datetime};
/// assert_eq!(from_datetime(datetime(u32::MAX)).unwrap(), u32::MAX);
/// ```
pub fn from_datetime(t: OffsetDateTime) -> Result<u32, ConvertError> {
    encode_datetime(t.unix_timestamp(), t)
}

/// `OffsetDateTime` → `DateTime64(precision)` ticks, rounding the instant down to a tick.
///
/// ```
/// use chnative_proto::convert::time::{datetime64, from_datetime64};
/// assert_eq!(from_datetime64(datetime64(-1_234_567, 6).unwrap(), 3).unwrap(), -1_235);
/// ```
pub fn from_datetime64(t: OffsetDateTime, precision: u8) -> Result<i64, ConvertError> {
    encode_datetime64(t.unix_timestamp(), t.nanosecond(), precision, t)
}

/// `time::Duration` → `Time` seconds (truncated toward zero); an error beyond ±999:59:59.
///
/// ```
/// use chnative_proto::convert::time::from_time;
/// use chnative_proto::convert::ext::time::Duration;
/// assert_eq!(from_time(Duration::milliseconds(-1_700)).unwrap(), -1);
/// ```
pub fn from_time(d: Duration) -> Result<i32, ConvertError> {
    encode_time(d.whole_nanoseconds(), d)
}

/// `time::Duration` → `Time64(precision)` ticks (truncated toward zero); an error
/// beyond ±999:59:59.999999999.
///
/// ```
/// use chnative_proto::convert::time::from_time64;
/// use chnative_proto::convert::ext::time::Duration;
/// assert_eq!(from_time64(Duration::nanoseconds(1_999), 6).unwrap(), 1);
/// ```
pub fn from_time64(d: Duration, precision: u8) -> Result<i64, ConvertError> {
    encode_time64(d.whole_nanoseconds(), precision, d)
}

// The column wrappers' `time` methods: row `i` of a column through the
// functions above.
column_conversions! {
    DateColumn {
        /// Row `i` as a `time::Date`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateColumn<'_>) { println!("{}", col.to_time(0)); }
        /// ```
        to_time(col, i: usize) -> Date = date(col.raw()[i]);
    }
    Date32Column {
        /// Row `i` as a `time::Date`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::Date32Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> { println!("{}", col.to_time(0)?); Ok(()) }
        /// ```
        to_time(col, i: usize) -> Result<Date, ConvertError> = date32(col.raw()[i]);
    }
    DateTimeColumn {
        /// Row `i` as a `time::OffsetDateTime` in UTC (the `time` crate has no zone
        /// database). Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) { println!("{}", col.to_time(0)); }
        /// ```
        to_time(col, i: usize) -> OffsetDateTime = datetime(col.raw()[i]);
    }
    DateTime64Column {
        /// Row `i` as a `time::OffsetDateTime` in UTC; an error beyond the `time`
        /// crate's range (years ±9999). Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
        /// let t = col.to_time(0)?;
        /// # Ok(()) }
        /// ```
        to_time(col, i: usize) -> Result<OffsetDateTime, ConvertError> =
            datetime64(col.raw()[i], col.precision());
    }
    TimeColumn {
        /// Row `i` as a `time::Duration`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::TimeColumn<'_>) { let _ = col.to_time(0); }
        /// ```
        to_time(col, i: usize) -> Duration = time(col.raw()[i]);
    }
    Time64Column {
        /// Row `i` as a `time::Duration`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) { let _ = col.to_time(0); }
        /// ```
        to_time(col, i: usize) -> Duration = time64(col.raw()[i], col.precision());
    }
}
