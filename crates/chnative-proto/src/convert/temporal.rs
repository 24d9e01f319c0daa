//! Date and time columns: the wire values zero-copy, plus the type's precision and
//! time zone, with per-row conversions to the `chrono`, `time` and `jiff` types
//! (each behind its feature; the free functions are in `convert::chrono`,
//! `convert::time` and `convert::jiff`).
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
//! let (secs, nanos) = col.split(0); // no feature needed
//! # #[cfg(feature = "chrono")] {
//! let tz = col.chrono_tz(server_tz)?; // chrono_tz::Tz of the column or the server
//! let first = col.to_chrono(0, &tz)?; // chrono::DateTime<Tz>
//! # }
//! # Ok(()) }
//! ```

use std::fmt::Display;

use super::calendar::{self, DATE32_MAX_DAYS, DATE32_MIN_DAYS, DATETIME64_MAX_SECONDS, DATETIME64_MIN_SECONDS};
use super::{plain_type, type_mismatch, ConvertError};
use crate::types::DataType;
use crate::view::ColumnView;

// ---------------------------------------------------------------------------
// Encoding checks shared by the library modules (insert direction).
// ---------------------------------------------------------------------------

pub(crate) use encode::*;

#[cfg_attr(not(any(feature = "chrono", feature = "time", feature = "jiff")), allow(dead_code))]
mod encode {
    use super::*;

    pub(crate) fn check_precision(precision: u8) -> Result<(), ConvertError> {
        if precision > 9 {
            return Err(ConvertError::out_of_range(format!("precision {precision}"), "DateTime64/Time64 (0..=9)"));
        }
        Ok(())
    }

    pub(crate) fn encode_date(days: i64, shown: impl Display) -> Result<u16, ConvertError> {
        u16::try_from(days).map_err(|_| ConvertError::out_of_range(shown, "Date (1970-01-01..=2149-06-06)"))
    }

    pub(crate) fn encode_date32(days: i64, shown: impl Display) -> Result<i32, ConvertError> {
        if (DATE32_MIN_DAYS..=DATE32_MAX_DAYS).contains(&days) {
            Ok(days as i32)
        } else {
            Err(ConvertError::out_of_range(shown, "Date32 (0000-01-01..=9999-12-31)"))
        }
    }

    pub(crate) fn encode_datetime(secs: i64, shown: impl Display) -> Result<u32, ConvertError> {
        u32::try_from(secs)
            .map_err(|_| ConvertError::out_of_range(shown, "DateTime (1970-01-01 00:00:00..=2106-02-07 06:28:15 UTC)"))
    }

    pub(crate) fn encode_datetime64(
        secs: i64,
        nanos: u32,
        precision: u8,
        shown: impl Display,
    ) -> Result<i64, ConvertError> {
        check_precision(precision)?;
        let target =
            || format!("DateTime64({precision}) (0000-01-01 00:00:00..=9999-12-31 23:59:59.999999999 UTC, i64 ticks)");
        if !(DATETIME64_MIN_SECONDS..=DATETIME64_MAX_SECONDS).contains(&secs) {
            return Err(ConvertError::out_of_range(shown, target()));
        }
        // A leap second (nanos ≥ 1e9 in chrono) counts as the last nanosecond of its second.
        calendar::join_ticks(secs, nanos.min(999_999_999), precision)
            .ok_or_else(|| ConvertError::out_of_range(shown, target()))
    }

    pub(crate) fn encode_time(nanos: i128, shown: impl Display) -> Result<i32, ConvertError> {
        let secs = nanos / 1_000_000_000;
        if secs.abs() <= i128::from(calendar::TIME_MAX_SECONDS) {
            Ok(secs as i32)
        } else {
            Err(ConvertError::out_of_range(shown, "Time (-999:59:59..=999:59:59)"))
        }
    }

    pub(crate) fn encode_time64(nanos: i128, precision: u8, shown: impl Display) -> Result<i64, ConvertError> {
        check_precision(precision)?;
        let tps = i128::from(calendar::ticks_per_second(precision));
        let max = i128::from(calendar::TIME_MAX_SECONDS) * tps + tps - 1;
        match calendar::nanos_to_ticks_trunc(nanos, precision) {
            Some(t) if i128::from(t).abs() <= max => Ok(t),
            _ => Err(ConvertError::out_of_range(shown, format!("Time64({precision}) (±999:59:59.999999999)"))),
        }
    }
}

/// Ticks of a duration → (seconds, nanoseconds) both truncated toward zero (same sign).
pub(crate) fn split_duration(ticks: i64, precision: u8) -> (i64, i32) {
    let tps = calendar::ticks_per_second(precision);
    (ticks / tps, ((ticks % tps) * calendar::nanos_per_tick(precision)) as i32)
}

fn zone_of(view: &ColumnView<'_>, what: &str) -> Result<(Option<String>, Option<u8>), ConvertError> {
    match plain_type(view.data_type()) {
        DataType::DateTime(tz) if what == "DateTime" => Ok((tz.clone(), None)),
        DataType::DateTime64(p, tz) if what == "DateTime64" => Ok((tz.clone(), Some(*p))),
        _ => Err(type_mismatch(view, what)),
    }
}

// ---------------------------------------------------------------------------
// Date
// ---------------------------------------------------------------------------

/// A `Date` column: `u16` days since 1970-01-01.
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// let col = chnative_proto::convert::date_column(view)?;
/// let (y, m, d) = col.ymd(0);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct DateColumn<'a> {
    days: &'a [u16],
}

/// Views a `Date` column (for `Nullable(Date)` pass the nullable view's `inner()`).
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// let days: &[u16] = chnative_proto::convert::date_column(view)?.raw();
/// # Ok(()) }
/// ```
pub fn date_column<'a>(view: &ColumnView<'a>) -> Result<DateColumn<'a>, ConvertError> {
    match plain_type(view.data_type()) {
        DataType::Date => Ok(DateColumn { days: view.values()? }),
        _ => Err(type_mismatch(view, "Date")),
    }
}

impl<'a> DateColumn<'a> {
    /// The day numbers, borrowed from the column.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateColumn<'_>) { let _: &[u16] = col.raw(); }
    /// ```
    pub fn raw(&self) -> &'a [u16] {
        self.days
    }
    /// Rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateColumn<'_>) { let _ = col.len(); }
    /// ```
    pub fn len(&self) -> usize {
        self.days.len()
    }
    /// True when there are no rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateColumn<'_>) { let _ = col.is_empty(); }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.days.is_empty()
    }
    /// Row `i` as (year, month, day). Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateColumn<'_>) { let (y, m, d) = col.ymd(0); }
    /// ```
    pub fn ymd(&self, i: usize) -> (i64, u32, u32) {
        calendar::civil_from_days(i64::from(self.days[i]))
    }
    /// Row `i` as a `chrono::NaiveDate`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateColumn<'_>) { println!("{}", col.to_chrono(0)); }
    /// ```
    #[cfg(feature = "chrono")]
    pub fn to_chrono(&self, i: usize) -> ::chrono::NaiveDate {
        super::chrono::date(self.days[i])
    }
    /// Row `i` as a `time::Date`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateColumn<'_>) { println!("{}", col.to_time(0)); }
    /// ```
    #[cfg(feature = "time")]
    pub fn to_time(&self, i: usize) -> ::time::Date {
        super::time::date(self.days[i])
    }
    /// Row `i` as a `jiff::civil::Date`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateColumn<'_>) { println!("{}", col.to_jiff(0)); }
    /// ```
    #[cfg(feature = "jiff")]
    pub fn to_jiff(&self, i: usize) -> ::jiff::civil::Date {
        super::jiff::date(self.days[i])
    }
}

// ---------------------------------------------------------------------------
// Date32
// ---------------------------------------------------------------------------

/// A `Date32` column: `i32` days since 1970-01-01 (negative before).
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// let col = chnative_proto::convert::date32_column(view)?;
/// let (y, m, d) = col.ymd(0);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Date32Column<'a> {
    days: &'a [i32],
}

/// Views a `Date32` column.
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// let days: &[i32] = chnative_proto::convert::date32_column(view)?.raw();
/// # Ok(()) }
/// ```
pub fn date32_column<'a>(view: &ColumnView<'a>) -> Result<Date32Column<'a>, ConvertError> {
    match plain_type(view.data_type()) {
        DataType::Date32 => Ok(Date32Column { days: view.values()? }),
        _ => Err(type_mismatch(view, "Date32")),
    }
}

impl<'a> Date32Column<'a> {
    /// The day numbers, borrowed from the column.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Date32Column<'_>) { let _: &[i32] = col.raw(); }
    /// ```
    pub fn raw(&self) -> &'a [i32] {
        self.days
    }
    /// Rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Date32Column<'_>) { let _ = col.len(); }
    /// ```
    pub fn len(&self) -> usize {
        self.days.len()
    }
    /// True when there are no rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Date32Column<'_>) { let _ = col.is_empty(); }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.days.is_empty()
    }
    /// Row `i` as (year, month, day), proleptic Gregorian. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Date32Column<'_>) { let (y, m, d) = col.ymd(0); }
    /// ```
    pub fn ymd(&self, i: usize) -> (i64, u32, u32) {
        calendar::civil_from_days(i64::from(self.days[i]))
    }
    /// Row `i` as a `chrono::NaiveDate`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Date32Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> { println!("{}", col.to_chrono(0)?); Ok(()) }
    /// ```
    #[cfg(feature = "chrono")]
    pub fn to_chrono(&self, i: usize) -> Result<::chrono::NaiveDate, ConvertError> {
        super::chrono::date32(self.days[i])
    }
    /// Row `i` as a `time::Date`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Date32Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> { println!("{}", col.to_time(0)?); Ok(()) }
    /// ```
    #[cfg(feature = "time")]
    pub fn to_time(&self, i: usize) -> Result<::time::Date, ConvertError> {
        super::time::date32(self.days[i])
    }
    /// Row `i` as a `jiff::civil::Date`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Date32Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> { println!("{}", col.to_jiff(0)?); Ok(()) }
    /// ```
    #[cfg(feature = "jiff")]
    pub fn to_jiff(&self, i: usize) -> Result<::jiff::civil::Date, ConvertError> {
        super::jiff::date32(self.days[i])
    }
}

// ---------------------------------------------------------------------------
// DateTime
// ---------------------------------------------------------------------------

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
pub struct DateTimeColumn<'a> {
    secs: &'a [u32],
    tz: Option<String>,
}

/// Views a `DateTime([tz])` column.
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// let secs: &[u32] = chnative_proto::convert::datetime_column(view)?.raw();
/// # Ok(()) }
/// ```
pub fn datetime_column<'a>(view: &ColumnView<'a>) -> Result<DateTimeColumn<'a>, ConvertError> {
    let (tz, _) = zone_of(view, "DateTime")?;
    Ok(DateTimeColumn { secs: view.values()?, tz })
}

impl<'a> DateTimeColumn<'a> {
    /// The Unix timestamps, borrowed from the column.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) { let _: &[u32] = col.raw(); }
    /// ```
    pub fn raw(&self) -> &'a [u32] {
        self.secs
    }
    /// Rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) { let _ = col.len(); }
    /// ```
    pub fn len(&self) -> usize {
        self.secs.len()
    }
    /// True when there are no rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) { let _ = col.is_empty(); }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.secs.is_empty()
    }
    /// The time zone named in the column type, if any.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) { let _: Option<&str> = col.timezone(); }
    /// ```
    pub fn timezone(&self) -> Option<&str> {
        self.tz.as_deref()
    }
    /// The zone the server shows the values in: the column's, else `server_tz`
    /// (`ServerInfo::timezone`, or the `session_timezone` you set).
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) { assert!(!col.zone_name("UTC").is_empty()); }
    /// ```
    pub fn zone_name<'s>(&'s self, server_tz: &'s str) -> &'s str {
        self.tz.as_deref().unwrap_or(server_tz)
    }
    /// Row `i` as a `chrono::DateTime<Utc>`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) { println!("{}", col.to_chrono_utc(0)); }
    /// ```
    #[cfg(feature = "chrono")]
    pub fn to_chrono_utc(&self, i: usize) -> ::chrono::DateTime<::chrono::Utc> {
        super::chrono::datetime(self.secs[i], &::chrono::Utc)
    }
    /// The `chrono_tz` zone of [`Self::zone_name`]; resolve it once, then convert rows
    /// with [`Self::to_chrono`].
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let tz = col.chrono_tz("Etc/UTC")?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "chrono")]
    pub fn chrono_tz(&self, server_tz: &str) -> Result<::chrono_tz::Tz, ConvertError> {
        super::chrono::tz(self.zone_name(server_tz))
    }
    /// Row `i` in `zone` (normally [`Self::chrono_tz`]). Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let tz = col.chrono_tz("Etc/UTC")?;
    /// println!("{}", col.to_chrono(0, &tz).format("%Y-%m-%d %H:%M:%S")); // as toString(x)
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "chrono")]
    pub fn to_chrono<Z: ::chrono::TimeZone>(&self, i: usize, zone: &Z) -> ::chrono::DateTime<Z> {
        super::chrono::datetime(self.secs[i], zone)
    }
    /// Row `i` as a `time::OffsetDateTime` in UTC (the `time` crate has no zone
    /// database). Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) { println!("{}", col.to_time(0)); }
    /// ```
    #[cfg(feature = "time")]
    pub fn to_time(&self, i: usize) -> ::time::OffsetDateTime {
        super::time::datetime(self.secs[i])
    }
    /// The `jiff` zone of [`Self::zone_name`] (bundled database).
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let tz = col.jiff_tz("Etc/UTC")?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "jiff")]
    pub fn jiff_tz(&self, server_tz: &str) -> Result<::jiff::tz::TimeZone, ConvertError> {
        super::jiff::tz(self.zone_name(server_tz))
    }
    /// Row `i` as a `jiff::ZonedDateTime` in `zone`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let tz = col.jiff_tz("Etc/UTC")?;
    /// println!("{}", col.to_jiff(0, &tz));
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "jiff")]
    pub fn to_jiff(&self, i: usize, zone: &::jiff::tz::TimeZone) -> ::jiff::ZonedDateTime {
        super::jiff::datetime(self.secs[i], zone)
    }
    /// Row `i` as a `jiff::Timestamp`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTimeColumn<'_>) { println!("{}", col.to_jiff_timestamp(0)); }
    /// ```
    #[cfg(feature = "jiff")]
    pub fn to_jiff_timestamp(&self, i: usize) -> ::jiff::Timestamp {
        super::jiff::timestamp(self.secs[i])
    }
}

// ---------------------------------------------------------------------------
// DateTime64
// ---------------------------------------------------------------------------

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
pub struct DateTime64Column<'a> {
    ticks: &'a [i64],
    precision: u8,
    tz: Option<String>,
}

/// Views a `DateTime64(p[, tz])` column.
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// let col = chnative_proto::convert::datetime64_column(view)?;
/// let ticks: &[i64] = col.raw();
/// # Ok(()) }
/// ```
pub fn datetime64_column<'a>(view: &ColumnView<'a>) -> Result<DateTime64Column<'a>, ConvertError> {
    let (tz, p) = zone_of(view, "DateTime64")?;
    let precision = p.unwrap_or(0);
    check_precision(precision)?;
    Ok(DateTime64Column { ticks: view.values()?, precision, tz })
}

impl<'a> DateTime64Column<'a> {
    /// The ticks, borrowed from the column.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) { let _: &[i64] = col.raw(); }
    /// ```
    pub fn raw(&self) -> &'a [i64] {
        self.ticks
    }
    /// Rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) { let _ = col.len(); }
    /// ```
    pub fn len(&self) -> usize {
        self.ticks.len()
    }
    /// True when there are no rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) { let _ = col.is_empty(); }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.ticks.is_empty()
    }
    /// Digits after the second: a tick is 10^−precision s.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) { assert!(col.precision() <= 9); }
    /// ```
    pub fn precision(&self) -> u8 {
        self.precision
    }
    /// The time zone named in the column type, if any.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) { let _: Option<&str> = col.timezone(); }
    /// ```
    pub fn timezone(&self) -> Option<&str> {
        self.tz.as_deref()
    }
    /// The zone the server shows the values in: the column's, else `server_tz`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) { let _ = col.zone_name("UTC"); }
    /// ```
    pub fn zone_name<'s>(&'s self, server_tz: &'s str) -> &'s str {
        self.tz.as_deref().unwrap_or(server_tz)
    }
    /// Row `i` as (Unix seconds rounded down, nanoseconds). Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) { let (s, ns) = col.split(0); }
    /// ```
    pub fn split(&self, i: usize) -> (i64, u32) {
        calendar::split_ticks(self.ticks[i], self.precision)
    }
    /// The `chrono_tz` zone of [`Self::zone_name`].
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let tz = col.chrono_tz("Etc/UTC")?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "chrono")]
    pub fn chrono_tz(&self, server_tz: &str) -> Result<::chrono_tz::Tz, ConvertError> {
        super::chrono::tz(self.zone_name(server_tz))
    }
    /// Row `i` in `zone`; an error only for ticks beyond chrono's range. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let tz = col.chrono_tz("Etc/UTC")?;
    /// let t = col.to_chrono(0, &tz)?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "chrono")]
    pub fn to_chrono<Z: ::chrono::TimeZone>(&self, i: usize, zone: &Z) -> Result<::chrono::DateTime<Z>, ConvertError> {
        super::chrono::datetime64(self.ticks[i], self.precision, zone)
    }
    /// Row `i` as a `time::OffsetDateTime` in UTC; an error beyond the `time`
    /// crate's range (years ±9999). Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let t = col.to_time(0)?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "time")]
    pub fn to_time(&self, i: usize) -> Result<::time::OffsetDateTime, ConvertError> {
        super::time::datetime64(self.ticks[i], self.precision)
    }
    /// The `jiff` zone of [`Self::zone_name`] (bundled database).
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let tz = col.jiff_tz("Etc/UTC")?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "jiff")]
    pub fn jiff_tz(&self, server_tz: &str) -> Result<::jiff::tz::TimeZone, ConvertError> {
        super::jiff::tz(self.zone_name(server_tz))
    }
    /// Row `i` as a `jiff::ZonedDateTime` in `zone`; an error beyond jiff's range
    /// (years ±9999). Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let tz = col.jiff_tz("Etc/UTC")?;
    /// let t = col.to_jiff(0, &tz)?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "jiff")]
    pub fn to_jiff(&self, i: usize, zone: &::jiff::tz::TimeZone) -> Result<::jiff::ZonedDateTime, ConvertError> {
        super::jiff::datetime64(self.ticks[i], self.precision, zone)
    }
    /// Row `i` as a `jiff::Timestamp`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DateTime64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let t = col.to_jiff_timestamp(0)?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "jiff")]
    pub fn to_jiff_timestamp(&self, i: usize) -> Result<::jiff::Timestamp, ConvertError> {
        super::jiff::timestamp64(self.ticks[i], self.precision)
    }
}

// ---------------------------------------------------------------------------
// Time, Time64
// ---------------------------------------------------------------------------

/// A `Time` column: `i32` seconds, a signed duration (the server shows
/// `-999:59:59` … `999:59:59`), not a time of day.
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// let secs: &[i32] = chnative_proto::convert::time_column(view)?.raw();
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct TimeColumn<'a> {
    secs: &'a [i32],
}

/// Views a `Time` column.
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// let col = chnative_proto::convert::time_column(view)?;
/// # Ok(()) }
/// ```
pub fn time_column<'a>(view: &ColumnView<'a>) -> Result<TimeColumn<'a>, ConvertError> {
    match plain_type(view.data_type()) {
        DataType::Time => Ok(TimeColumn { secs: view.values()? }),
        _ => Err(type_mismatch(view, "Time")),
    }
}

impl<'a> TimeColumn<'a> {
    /// The seconds, borrowed from the column.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::TimeColumn<'_>) { let _: &[i32] = col.raw(); }
    /// ```
    pub fn raw(&self) -> &'a [i32] {
        self.secs
    }
    /// Rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::TimeColumn<'_>) { let _ = col.len(); }
    /// ```
    pub fn len(&self) -> usize {
        self.secs.len()
    }
    /// True when there are no rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::TimeColumn<'_>) { let _ = col.is_empty(); }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.secs.is_empty()
    }
    /// Row `i` as a `chrono::TimeDelta`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::TimeColumn<'_>) { let _ = col.to_chrono(0); }
    /// ```
    #[cfg(feature = "chrono")]
    pub fn to_chrono(&self, i: usize) -> ::chrono::TimeDelta {
        super::chrono::time(self.secs[i])
    }
    /// Row `i` as a `time::Duration`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::TimeColumn<'_>) { let _ = col.to_time(0); }
    /// ```
    #[cfg(feature = "time")]
    pub fn to_time(&self, i: usize) -> ::time::Duration {
        super::time::time(self.secs[i])
    }
    /// Row `i` as a `jiff::SignedDuration`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::TimeColumn<'_>) { let _ = col.to_jiff(0); }
    /// ```
    #[cfg(feature = "jiff")]
    pub fn to_jiff(&self, i: usize) -> ::jiff::SignedDuration {
        super::jiff::time(self.secs[i])
    }
}

/// A `Time64(p)` column: `i64` ticks of 10^−p seconds, a signed duration.
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// let col = chnative_proto::convert::time64_column(view)?;
/// let (p, ticks) = (col.precision(), col.raw());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Time64Column<'a> {
    ticks: &'a [i64],
    precision: u8,
}

/// Views a `Time64(p)` column.
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// let col = chnative_proto::convert::time64_column(view)?;
/// # Ok(()) }
/// ```
pub fn time64_column<'a>(view: &ColumnView<'a>) -> Result<Time64Column<'a>, ConvertError> {
    match plain_type(view.data_type()) {
        DataType::Time64(p) => {
            check_precision(*p)?;
            Ok(Time64Column { ticks: view.values()?, precision: *p })
        }
        _ => Err(type_mismatch(view, "Time64")),
    }
}

impl<'a> Time64Column<'a> {
    /// The ticks, borrowed from the column.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) { let _: &[i64] = col.raw(); }
    /// ```
    pub fn raw(&self) -> &'a [i64] {
        self.ticks
    }
    /// Rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) { let _ = col.len(); }
    /// ```
    pub fn len(&self) -> usize {
        self.ticks.len()
    }
    /// True when there are no rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) { let _ = col.is_empty(); }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.ticks.is_empty()
    }
    /// Digits after the second.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) { assert!(col.precision() <= 9); }
    /// ```
    pub fn precision(&self) -> u8 {
        self.precision
    }
    /// Row `i` as (seconds, nanoseconds), both truncated toward zero (same sign).
    /// Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) { let (s, ns) = col.split(0); }
    /// ```
    pub fn split(&self, i: usize) -> (i64, i32) {
        split_duration(self.ticks[i], self.precision)
    }
    /// Row `i` as a `chrono::TimeDelta`; an error only beyond its range (±2^63 ms).
    /// Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) -> Result<(), chnative_proto::convert::ConvertError> { let _ = col.to_chrono(0)?; Ok(()) }
    /// ```
    #[cfg(feature = "chrono")]
    pub fn to_chrono(&self, i: usize) -> Result<::chrono::TimeDelta, ConvertError> {
        super::chrono::time64(self.ticks[i], self.precision)
    }
    /// Row `i` as a `time::Duration`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) { let _ = col.to_time(0); }
    /// ```
    #[cfg(feature = "time")]
    pub fn to_time(&self, i: usize) -> ::time::Duration {
        super::time::time64(self.ticks[i], self.precision)
    }
    /// Row `i` as a `jiff::SignedDuration`. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::Time64Column<'_>) { let _ = col.to_jiff(0); }
    /// ```
    #[cfg(feature = "jiff")]
    pub fn to_jiff(&self, i: usize) -> ::jiff::SignedDuration {
        super::jiff::time64(self.ticks[i], self.precision)
    }
}
