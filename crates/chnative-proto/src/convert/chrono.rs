//! `chrono` conversions (feature `chrono`): wire values of the date and time types
//! to `chrono` types and back. Named zones come from `chrono-tz`.
//!
//! Reading never rounds; writing a time point to `DateTime`/`DateTime64(p)` drops
//! what is finer than the type (rounding the instant down, i.e. truncating its
//! text, as the server does when it parses text), and writing a duration to
//! `Time`/`Time64(p)` truncates toward zero. Values outside the server's range are
//! errors, never clamped.
//!
//! ```
//! use chnative_proto::convert::chrono::{self as cc, Tz};
//! use chnative_proto::convert::ext::chrono::{NaiveDate, TimeZone};
//! let d = cc::date(19_723);
//! assert_eq!(d, NaiveDate::from_ymd_opt(2024, 1, 1).unwrap());
//! assert_eq!(cc::from_date(d).unwrap(), 19_723);
//! assert!(cc::from_date(NaiveDate::from_ymd_opt(1969, 12, 31).unwrap()).is_err());
//!
//! let tz: Tz = cc::tz("America/St_Johns").unwrap();
//! let t = cc::datetime64(-15, 1, &tz).unwrap(); // 1969-12-31 23:59:58.5 UTC
//! assert_eq!(t.format("%Y-%m-%d %H:%M:%S%.f %:z").to_string(), "1969-12-31 20:29:58.500 -03:30");
//! assert_eq!(cc::from_datetime64(&t, 3).unwrap(), -1500);
//! ```

use ::chrono::{DateTime, NaiveDate, TimeDelta, TimeZone, Utc};

pub use ::chrono_tz::Tz;

use super::calendar;
use super::ranges::{
    check_precision, encode_date, encode_date32, encode_datetime, encode_datetime64, encode_time, encode_time64,
};
use super::temporal::{Date32Column, DateColumn, DateTime64Column, DateTimeColumn, Time64Column, TimeColumn};
use super::ConvertError;

/// Day number of 1970-01-01 counted from 0001-01-01 = day 1 (chrono's "CE" days).
const EPOCH_CE_DAYS: i64 = 719_163;

/// A named zone (`"Asia/Kolkata"`, `"UTC"`, …) from `chrono-tz`'s database.
///
/// ```
/// use chnative_proto::convert::chrono::tz;
/// assert_eq!(tz("Pacific/Chatham").unwrap().name(), "Pacific/Chatham");
/// assert!(tz("Mars/Olympus_Mons").is_err());
/// ```
pub fn tz(name: &str) -> Result<Tz, ConvertError> {
    name.parse::<Tz>().map_err(|e| ConvertError::UnknownTimeZone { name: name.to_string(), reason: e.to_string() })
}

fn date_from_days(days: i64) -> Option<NaiveDate> {
    i32::try_from(days + EPOCH_CE_DAYS).ok().and_then(NaiveDate::from_num_days_from_ce_opt)
}

fn days_of(d: NaiveDate) -> i64 {
    use ::chrono::Datelike;
    i64::from(d.num_days_from_ce()) - EPOCH_CE_DAYS
}

/// `Date` (days since 1970-01-01) → `NaiveDate`.
///
/// ```
/// use chnative_proto::convert::chrono::date;
/// assert_eq!(date(u16::MAX).to_string(), "2149-06-06");
/// ```
pub fn date(days: u16) -> NaiveDate {
    // Every u16 day number is a valid chrono date; the fallback is unreachable.
    date_from_days(i64::from(days)).unwrap_or(NaiveDate::MAX)
}

/// `Date32` (days since 1970-01-01, negative before) → `NaiveDate`; an error only
/// beyond chrono's ±262 142 years.
///
/// ```
/// use chnative_proto::convert::chrono::date32;
/// assert_eq!(date32(-25_567).unwrap().to_string(), "1900-01-01");
/// assert!(date32(i32::MIN).is_err());
/// ```
pub fn date32(days: i32) -> Result<NaiveDate, ConvertError> {
    date_from_days(i64::from(days))
        .ok_or_else(|| ConvertError::out_of_range(format!("Date32 day {days}"), "chrono::NaiveDate"))
}

/// `DateTime` (Unix seconds) → `DateTime<Z>` shown in `zone` (a [`Tz`], `Utc`, a `FixedOffset`, …).
///
/// ```
/// use chnative_proto::convert::chrono::{datetime, tz};
/// let t = datetime(0, &tz("Asia/Kolkata").unwrap());
/// assert_eq!(t.to_rfc3339(), "1970-01-01T05:30:00+05:30");
/// ```
pub fn datetime<Z: TimeZone>(secs: u32, zone: &Z) -> DateTime<Z> {
    // Every u32 second is a valid chrono instant; the fallback is unreachable.
    DateTime::<Utc>::from_timestamp(i64::from(secs), 0).unwrap_or_default().with_timezone(zone)
}

/// `DateTime64(precision)` ticks → `DateTime<Z>`; an error only beyond chrono's range.
///
/// ```
/// use chnative_proto::convert::chrono::datetime64;
/// use chnative_proto::convert::ext::chrono::Utc;
/// assert_eq!(datetime64(-1, 3, &Utc).unwrap().to_rfc3339(), "1969-12-31T23:59:59.999+00:00");
/// ```
pub fn datetime64<Z: TimeZone>(ticks: i64, precision: u8, zone: &Z) -> Result<DateTime<Z>, ConvertError> {
    check_precision(precision)?;
    let (secs, nanos) = calendar::split_ticks(ticks, precision);
    DateTime::<Utc>::from_timestamp(secs, nanos)
        .map(|t| t.with_timezone(zone))
        .ok_or_else(|| ConvertError::out_of_range(format!("DateTime64({precision}) ticks {ticks}"), "chrono::DateTime"))
}

/// `Time` (signed seconds) → `TimeDelta`.
///
/// ```
/// use chnative_proto::convert::chrono::time;
/// assert_eq!(time(-3661).num_seconds(), -3661);
/// ```
pub fn time(secs: i32) -> TimeDelta {
    TimeDelta::seconds(i64::from(secs))
}

/// `Time64(precision)` ticks → `TimeDelta`; an error only beyond its ±2^63 ms.
///
/// ```
/// use chnative_proto::convert::chrono::time64;
/// assert_eq!(time64(-15, 1).unwrap().num_milliseconds(), -1500);
/// ```
pub fn time64(ticks: i64, precision: u8) -> Result<TimeDelta, ConvertError> {
    check_precision(precision)?;
    let (secs, nanos) = calendar::split_ticks(ticks, precision);
    TimeDelta::new(secs, nanos)
        .ok_or_else(|| ConvertError::out_of_range(format!("Time64({precision}) ticks {ticks}"), "chrono::TimeDelta"))
}

/// `NaiveDate` → `Date` days; an error outside 1970-01-01..=2149-06-06.
///
/// ```
/// use chnative_proto::convert::chrono::from_date;
/// use chnative_proto::convert::ext::chrono::NaiveDate;
/// assert_eq!(from_date(NaiveDate::from_ymd_opt(2149, 6, 6).unwrap()).unwrap(), u16::MAX);
/// assert!(from_date(NaiveDate::from_ymd_opt(2149, 6, 7).unwrap()).is_err());
/// ```
pub fn from_date(d: NaiveDate) -> Result<u16, ConvertError> {
    encode_date(days_of(d), d)
}

/// `NaiveDate` → `Date32` days; an error outside 0000-01-01..=9999-12-31.
///
/// ```
/// use chnative_proto::convert::chrono::from_date32;
/// use chnative_proto::convert::ext::chrono::NaiveDate;
/// assert_eq!(from_date32(NaiveDate::from_ymd_opt(1900, 1, 1).unwrap()).unwrap(), -25_567);
/// assert!(from_date32(NaiveDate::from_ymd_opt(-1, 12, 31).unwrap()).is_err());
/// ```
pub fn from_date32(d: NaiveDate) -> Result<i32, ConvertError> {
    encode_date32(days_of(d), d)
}

/// `DateTime<Z>` → `DateTime` seconds (sub-second part dropped); an error outside
/// 1970-01-01 00:00:00..=2106-02-07 06:28:15 UTC.
///
/// ```
/// use chnative_proto::convert::chrono::{from_datetime, tz};
/// use chnative_proto::convert::ext::chrono::TimeZone;
/// let t = tz("America/St_Johns").unwrap().with_ymd_and_hms(1970, 1, 1, 0, 0, 0).unwrap();
/// assert_eq!(from_datetime(&t).unwrap(), 3 * 3600 + 1800);
/// ```
pub fn from_datetime<Z: TimeZone>(t: &DateTime<Z>) -> Result<u32, ConvertError>
where
    Z::Offset: std::fmt::Display,
{
    encode_datetime(t.timestamp(), t)
}

/// `DateTime<Z>` → `DateTime64(precision)` ticks, rounding the instant down to a
/// tick; an error outside 0000-01-01..=9999-12-31 (UTC) or the `i64` ticks.
///
/// ```
/// use chnative_proto::convert::chrono::from_datetime64;
/// use chnative_proto::convert::ext::chrono::{DateTime, Utc};
/// let t = DateTime::<Utc>::from_timestamp(-2, 999_999_999).unwrap();
/// assert_eq!(from_datetime64(&t, 3).unwrap(), -1_001);
/// assert!(from_datetime64(&t, 10).is_err());
/// ```
pub fn from_datetime64<Z: TimeZone>(t: &DateTime<Z>, precision: u8) -> Result<i64, ConvertError>
where
    Z::Offset: std::fmt::Display,
{
    encode_datetime64(t.timestamp(), t.timestamp_subsec_nanos(), precision, t)
}

fn delta_nanos(d: TimeDelta) -> i128 {
    i128::from(d.num_seconds()) * 1_000_000_000 + i128::from(d.subsec_nanos())
}

/// `TimeDelta` → `Time` seconds (truncated toward zero); an error beyond ±999:59:59.
///
/// ```
/// use chnative_proto::convert::chrono::from_time;
/// use chnative_proto::convert::ext::chrono::TimeDelta;
/// assert_eq!(from_time(TimeDelta::milliseconds(-1700)).unwrap(), -1);
/// assert!(from_time(TimeDelta::hours(1000)).is_err());
/// ```
pub fn from_time(d: TimeDelta) -> Result<i32, ConvertError> {
    encode_time(delta_nanos(d), d)
}

/// `TimeDelta` → `Time64(precision)` ticks (truncated toward zero); an error
/// beyond ±999:59:59.999999999.
///
/// ```
/// use chnative_proto::convert::chrono::from_time64;
/// use chnative_proto::convert::ext::chrono::TimeDelta;
/// assert_eq!(from_time64(TimeDelta::microseconds(-1_500_999), 3).unwrap(), -1500);
/// ```
pub fn from_time64(d: TimeDelta, precision: u8) -> Result<i64, ConvertError> {
    encode_time64(delta_nanos(d), precision, d)
}

// The column wrappers' `chrono` methods: row `i` of a column through the
// functions above. Each panics if `i >= len()`.
column_conversions! {
    DateColumn {
        /// Row `i` as a `chrono::NaiveDate`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateColumn<'_>) { println!("{}", col.to_chrono(0)); }
        /// ```
        to_chrono(col, i: usize) -> NaiveDate = date(col.raw()[i]);
    }
    Date32Column {
        /// Row `i` as a `chrono::NaiveDate`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::Date32Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> { println!("{}", col.to_chrono(0)?); Ok(()) }
        /// ```
        to_chrono(col, i: usize) -> Result<NaiveDate, ConvertError> = date32(col.raw()[i]);
    }
    DateTimeColumn {
        /// Row `i` as a `chrono::DateTime<Utc>`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) { println!("{}", col.to_chrono_utc(0)); }
        /// ```
        to_chrono_utc(col, i: usize) -> DateTime<Utc> = datetime(col.raw()[i], &Utc);

        /// The `chrono_tz` zone of [`Self::zone_name`]; resolve it once, then convert rows
        /// with [`Self::to_chrono`].
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
        /// let tz = col.chrono_tz("Etc/UTC")?;
        /// # Ok(()) }
        /// ```
        chrono_tz(col, server_tz: &str) -> Result<Tz, ConvertError> = tz(col.zone_name(server_tz));

        /// Row `i` in `zone` (normally [`Self::chrono_tz`]). Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
        /// let tz = col.chrono_tz("Etc/UTC")?;
        /// println!("{}", col.to_chrono(0, &tz).format("%Y-%m-%d %H:%M:%S")); // as toString(x)
        /// # Ok(()) }
        /// ```
        to_chrono<Z: TimeZone>(col, i: usize, zone: &Z) -> DateTime<Z> = datetime(col.raw()[i], zone);
    }
    DateTime64Column {
        /// The `chrono_tz` zone of [`Self::zone_name`].
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
        /// let tz = col.chrono_tz("Etc/UTC")?;
        /// # Ok(()) }
        /// ```
        chrono_tz(col, server_tz: &str) -> Result<Tz, ConvertError> = tz(col.zone_name(server_tz));

        /// Row `i` in `zone`; an error only for ticks beyond chrono's range. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
        /// let tz = col.chrono_tz("Etc/UTC")?;
        /// let t = col.to_chrono(0, &tz)?;
        /// # Ok(()) }
        /// ```
        to_chrono<Z: TimeZone>(col, i: usize, zone: &Z) -> Result<DateTime<Z>, ConvertError> =
            datetime64(col.raw()[i], col.precision(), zone);
    }
    TimeColumn {
        /// Row `i` as a `chrono::TimeDelta`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::TimeColumn<'_>) { let _ = col.to_chrono(0); }
        /// ```
        to_chrono(col, i: usize) -> TimeDelta = time(col.raw()[i]);
    }
    Time64Column {
        /// Row `i` as a `chrono::TimeDelta`; an error only beyond its range (±2^63 ms).
        /// Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> { let _ = col.to_chrono(0)?; Ok(()) }
        /// ```
        to_chrono(col, i: usize) -> Result<TimeDelta, ConvertError> = time64(col.raw()[i], col.precision());
    }
}
