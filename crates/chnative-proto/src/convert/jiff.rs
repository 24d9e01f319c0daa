//! `jiff` conversions (feature `jiff`): wire values of the date and time types to
//! `jiff` types and back. Named zones come from the time zone database bundled
//! into the binary (`jiff`'s `tzdb-bundle-always`), so they work on systems
//! without `/usr/share/zoneinfo`.
//!
//! Rounding rules are those of `convert::chrono`: time points are rounded down to
//! a tick when written, durations truncated toward zero; out-of-range values are
//! errors.
//!
//! ```
//! use chnative_proto::convert::jiff as jc;
//! let tz = jc::tz("Pacific/Chatham").unwrap();
//! let t = jc::datetime(1_704_067_200, &tz); // 2024-01-01 00:00:00 UTC
//! assert_eq!(t.strftime("%Y-%m-%d %H:%M:%S %:z").to_string(), "2024-01-01 13:45:00 +13:45");
//! assert_eq!(jc::from_timestamp(t.timestamp()).unwrap(), 1_704_067_200);
//! assert_eq!(jc::date(0).to_string(), "1970-01-01");
//! ```

use ::jiff::civil::Date;
use ::jiff::tz::TimeZone;
use ::jiff::{SignedDuration, Timestamp, ZonedDateTime};

use super::calendar;
use super::ranges::{
    check_precision, encode_date, encode_date32, encode_datetime, encode_datetime64, encode_time, encode_time64,
};
use super::temporal::{Date32Column, DateColumn, DateTime64Column, DateTimeColumn, Time64Column, TimeColumn};
use super::ConvertError;

/// A named zone (`"Asia/Kolkata"`, `"UTC"`, …) from jiff's time zone database.
///
/// ```
/// use chnative_proto::convert::jiff::tz;
/// assert_eq!(tz("Asia/Kolkata").unwrap().iana_name(), Some("Asia/Kolkata"));
/// assert!(tz("Mars/Olympus_Mons").is_err());
/// ```
pub fn tz(name: &str) -> Result<TimeZone, ConvertError> {
    TimeZone::get(name).map_err(|e| ConvertError::UnknownTimeZone { name: name.to_string(), reason: e.to_string() })
}

fn date_from_days(days: i64) -> Option<Date> {
    let (y, m, d) = calendar::civil_from_days(days);
    let y = i16::try_from(y).ok()?;
    Date::new(y, m as i8, d as i8).ok()
}

fn days_of(d: Date) -> i64 {
    calendar::days_from_civil(i64::from(d.year()), d.month() as u32, d.day() as u32)
}

/// `Date` (days since 1970-01-01) → `jiff::civil::Date`.
///
/// ```
/// assert_eq!(chnative_proto::convert::jiff::date(u16::MAX).to_string(), "2149-06-06");
/// ```
pub fn date(days: u16) -> Date {
    // Every u16 day number is within jiff's range; the fallback is unreachable.
    date_from_days(i64::from(days)).unwrap_or(Date::MAX)
}

/// `Date32` days → `jiff::civil::Date`; an error beyond jiff's years ±9999.
///
/// ```
/// use chnative_proto::convert::jiff::date32;
/// assert_eq!(date32(2_932_896).unwrap().to_string(), "9999-12-31");
/// assert!(date32(i32::MIN).is_err());
/// ```
pub fn date32(days: i32) -> Result<Date, ConvertError> {
    date_from_days(i64::from(days))
        .ok_or_else(|| ConvertError::out_of_range(format!("Date32 day {days}"), "jiff::civil::Date"))
}

/// `DateTime` (Unix seconds) → `jiff::Timestamp`.
///
/// ```
/// assert_eq!(chnative_proto::convert::jiff::timestamp(0).to_string(), "1970-01-01T00:00:00Z");
/// ```
pub fn timestamp(secs: u32) -> Timestamp {
    // Every u32 second is within jiff's range; the fallback is unreachable.
    Timestamp::from_second(i64::from(secs)).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// `DateTime` (Unix seconds) → `jiff::ZonedDateTime` in `zone`.
///
/// ```
/// use chnative_proto::convert::jiff::{datetime, tz};
/// let t = datetime(0, &tz("America/St_Johns").unwrap());
/// assert_eq!(t.strftime("%Y-%m-%d %H:%M:%S %:z").to_string(), "1969-12-31 20:30:00 -03:30");
/// ```
pub fn datetime(secs: u32, zone: &TimeZone) -> ZonedDateTime {
    timestamp(secs).to_zoned_datetime(zone.clone())
}

/// `DateTime64(precision)` ticks → `jiff::Timestamp`; an error beyond years ±9999.
///
/// ```
/// use chnative_proto::convert::jiff::timestamp64;
/// assert_eq!(timestamp64(-15, 1).unwrap().as_millisecond(), -1_500);
/// ```
pub fn timestamp64(ticks: i64, precision: u8) -> Result<Timestamp, ConvertError> {
    check_precision(precision)?;
    let (secs, nanos) = calendar::split_ticks(ticks, precision);
    Timestamp::new(secs, nanos as i32)
        .map_err(|_| ConvertError::out_of_range(format!("DateTime64({precision}) ticks {ticks}"), "jiff::Timestamp"))
}

/// `DateTime64(precision)` ticks → `jiff::ZonedDateTime` in `zone`.
///
/// ```
/// use chnative_proto::convert::jiff::{datetime64, tz};
/// let t = datetime64(1_500, 3, &tz("UTC").unwrap()).unwrap();
/// assert_eq!(t.strftime("%H:%M:%S%.f").to_string(), "00:00:01.5");
/// ```
pub fn datetime64(ticks: i64, precision: u8, zone: &TimeZone) -> Result<ZonedDateTime, ConvertError> {
    Ok(timestamp64(ticks, precision)?.to_zoned_datetime(zone.clone()))
}

/// `Time` (signed seconds) → `jiff::SignedDuration`.
///
/// ```
/// assert_eq!(chnative_proto::convert::jiff::time(-61).as_secs(), -61);
/// ```
pub fn time(secs: i32) -> SignedDuration {
    SignedDuration::from_secs(i64::from(secs))
}

/// `Time64(precision)` ticks → `jiff::SignedDuration` (exact; precision above 9 is read as 9).
///
/// ```
/// assert_eq!(chnative_proto::convert::jiff::time64(-15, 1).as_millis(), -1_500);
/// ```
pub fn time64(ticks: i64, precision: u8) -> SignedDuration {
    let (secs, nanos) = calendar::split_duration(ticks, precision);
    SignedDuration::new(secs, nanos)
}

/// `jiff::civil::Date` → `Date` days; an error outside 1970-01-01..=2149-06-06.
///
/// ```
/// use chnative_proto::convert::jiff::from_date;
/// use chnative_proto::convert::ext::jiff::civil::date;
/// assert_eq!(from_date(date(1970, 1, 2)).unwrap(), 1);
/// assert!(from_date(date(1969, 12, 31)).is_err());
/// ```
pub fn from_date(d: Date) -> Result<u16, ConvertError> {
    encode_date(days_of(d), d)
}

/// `jiff::civil::Date` → `Date32` days; an error outside 0000-01-01..=9999-12-31.
///
/// ```
/// use chnative_proto::convert::jiff::from_date32;
/// use chnative_proto::convert::ext::jiff::civil::date;
/// assert_eq!(from_date32(date(0, 1, 1)).unwrap(), -719_528);
/// assert!(from_date32(date(-1, 12, 31)).is_err());
/// ```
pub fn from_date32(d: Date) -> Result<i32, ConvertError> {
    encode_date32(days_of(d), d)
}

/// Unix seconds rounded down and nanoseconds 0..1e9 of a timestamp.
fn floor_parts(t: Timestamp) -> (i64, u32) {
    let n = t.as_nanosecond();
    ((n.div_euclid(1_000_000_000)) as i64, n.rem_euclid(1_000_000_000) as u32)
}

/// `jiff::Timestamp` → `DateTime` seconds (sub-second part dropped); an error
/// outside 1970-01-01 00:00:00..=2106-02-07 06:28:15 UTC.
///
/// ```
/// use chnative_proto::convert::jiff::{from_timestamp, timestamp};
/// assert_eq!(from_timestamp(timestamp(7)).unwrap(), 7);
/// ```
pub fn from_timestamp(t: Timestamp) -> Result<u32, ConvertError> {
    encode_datetime(floor_parts(t).0, t)
}

/// `jiff::ZonedDateTime` → `DateTime` seconds (its instant; the zone is the column's business).
///
/// ```
/// use chnative_proto::convert::jiff::{datetime, from_datetime, tz};
/// assert_eq!(from_datetime(&datetime(7, &tz("Asia/Kolkata").unwrap())).unwrap(), 7);
/// ```
pub fn from_datetime(t: &ZonedDateTime) -> Result<u32, ConvertError> {
    from_timestamp(t.timestamp())
}

/// `jiff::Timestamp` → `DateTime64(precision)` ticks, rounding the instant down to a tick.
///
/// ```
/// use chnative_proto::convert::jiff::{from_timestamp64, timestamp64};
/// assert_eq!(from_timestamp64(timestamp64(-1_234_567, 6).unwrap(), 3).unwrap(), -1_235);
/// ```
pub fn from_timestamp64(t: Timestamp, precision: u8) -> Result<i64, ConvertError> {
    let (secs, nanos) = floor_parts(t);
    encode_datetime64(secs, nanos, precision, t)
}

/// `jiff::ZonedDateTime` → `DateTime64(precision)` ticks of its instant.
///
/// ```
/// use chnative_proto::convert::jiff::{datetime64, from_datetime64, tz};
/// let t = datetime64(-5, 2, &tz("Asia/Kolkata").unwrap()).unwrap();
/// assert_eq!(from_datetime64(&t, 2).unwrap(), -5);
/// ```
pub fn from_datetime64(t: &ZonedDateTime, precision: u8) -> Result<i64, ConvertError> {
    from_timestamp64(t.timestamp(), precision)
}

/// `jiff::SignedDuration` → `Time` seconds (truncated toward zero); an error beyond ±999:59:59.
///
/// ```
/// use chnative_proto::convert::jiff::from_time;
/// use chnative_proto::convert::ext::jiff::SignedDuration;
/// assert_eq!(from_time(SignedDuration::from_millis(-1_700)).unwrap(), -1);
/// ```
pub fn from_time(d: SignedDuration) -> Result<i32, ConvertError> {
    encode_time(d.as_nanos(), d)
}

/// `jiff::SignedDuration` → `Time64(precision)` ticks (truncated toward zero).
///
/// ```
/// use chnative_proto::convert::jiff::from_time64;
/// use chnative_proto::convert::ext::jiff::SignedDuration;
/// assert_eq!(from_time64(SignedDuration::from_micros(-1_500_999), 3).unwrap(), -1_500);
/// ```
pub fn from_time64(d: SignedDuration, precision: u8) -> Result<i64, ConvertError> {
    encode_time64(d.as_nanos(), precision, d)
}

// The column wrappers' `jiff` methods: row `i` of a column through the
// functions above.
column_conversions! {
    DateColumn {
        /// Row `i` as a `jiff::civil::Date`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateColumn<'_>) { println!("{}", col.to_jiff(0)); }
        /// ```
        to_jiff(col, i: usize) -> Date = date(col.raw()[i]);
    }
    Date32Column {
        /// Row `i` as a `jiff::civil::Date`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::Date32Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> { println!("{}", col.to_jiff(0)?); Ok(()) }
        /// ```
        to_jiff(col, i: usize) -> Result<Date, ConvertError> = date32(col.raw()[i]);
    }
    DateTimeColumn {
        /// The `jiff` zone of [`Self::zone_name`] (bundled database).
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
        /// let tz = col.jiff_tz("Etc/UTC")?;
        /// # Ok(()) }
        /// ```
        jiff_tz(col, server_tz: &str) -> Result<TimeZone, ConvertError> = tz(col.zone_name(server_tz));

        /// Row `i` as a `jiff::ZonedDateTime` in `zone`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
        /// let tz = col.jiff_tz("Etc/UTC")?;
        /// println!("{}", col.to_jiff(0, &tz));
        /// # Ok(()) }
        /// ```
        to_jiff(col, i: usize, zone: &TimeZone) -> ZonedDateTime = datetime(col.raw()[i], zone);

        /// Row `i` as a `jiff::Timestamp`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) { println!("{}", col.to_jiff_timestamp(0)); }
        /// ```
        to_jiff_timestamp(col, i: usize) -> Timestamp = timestamp(col.raw()[i]);
    }
    DateTime64Column {
        /// The `jiff` zone of [`Self::zone_name`] (bundled database).
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
        /// let tz = col.jiff_tz("Etc/UTC")?;
        /// # Ok(()) }
        /// ```
        jiff_tz(col, server_tz: &str) -> Result<TimeZone, ConvertError> = tz(col.zone_name(server_tz));

        /// Row `i` as a `jiff::ZonedDateTime` in `zone`; an error beyond jiff's range
        /// (years ±9999). Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
        /// let tz = col.jiff_tz("Etc/UTC")?;
        /// let t = col.to_jiff(0, &tz)?;
        /// # Ok(()) }
        /// ```
        to_jiff(col, i: usize, zone: &TimeZone) -> Result<ZonedDateTime, ConvertError> =
            datetime64(col.raw()[i], col.precision(), zone);

        /// Row `i` as a `jiff::Timestamp`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
        /// let t = col.to_jiff_timestamp(0)?;
        /// # Ok(()) }
        /// ```
        to_jiff_timestamp(col, i: usize) -> Result<Timestamp, ConvertError> =
            timestamp64(col.raw()[i], col.precision());
    }
    TimeColumn {
        /// Row `i` as a `jiff::SignedDuration`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::TimeColumn<'_>) { let _ = col.to_jiff(0); }
        /// ```
        to_jiff(col, i: usize) -> SignedDuration = time(col.raw()[i]);
    }
    Time64Column {
        /// Row `i` as a `jiff::SignedDuration`. Panics if `i >= len()`.
        ///
        /// ```no_run
        /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) { let _ = col.to_jiff(0); }
        /// ```
        to_jiff(col, i: usize) -> SignedDuration = time64(col.raw()[i], col.precision());
    }
}
