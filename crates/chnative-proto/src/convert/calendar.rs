//! Calendar arithmetic for the date and time types, without dependencies: day
//! numbers ↔ proleptic Gregorian dates, ticks ↔ seconds and nanoseconds, and the
//! ranges the server supports.
//!
//! ```
//! use chnative_proto::convert::calendar::*;
//! assert_eq!(civil_from_days(DATE_MAX_DAYS), (2149, 6, 6));
//! assert_eq!(days_from_civil(1900, 1, 1), -25_567);
//! assert_eq!(split_ticks(-15, 1), (-2, 500_000_000)); // −1.5 s
//! assert_eq!(join_ticks(-2, 500_000_000, 1), Some(-15));
//! ```

/// Largest `Date` day number (`u16::MAX`): 2149-06-06.
///
/// ```
/// assert_eq!(chnative_proto::convert::calendar::DATE_MAX_DAYS, 65_535);
/// ```
pub const DATE_MAX_DAYS: i64 = u16::MAX as i64;
/// Smallest `Date32` day number the server supports: 0000-01-01 (since ClickHouse
/// 26.x; older servers support 1900-01-01 = −25 567 and clamp when they render).
///
/// ```
/// assert_eq!(chnative_proto::convert::calendar::DATE32_MIN_DAYS, -719_528);
/// ```
pub const DATE32_MIN_DAYS: i64 = days_from_civil(0, 1, 1);
/// Largest `Date32` day number the server supports: 9999-12-31 (since ClickHouse
/// 26.x; older servers support 2299-12-31 = 120 529).
///
/// ```
/// assert_eq!(chnative_proto::convert::calendar::DATE32_MAX_DAYS, 2_932_896);
/// ```
pub const DATE32_MAX_DAYS: i64 = days_from_civil(9999, 12, 31);
/// First second of the `DateTime64` range: 0000-01-01 00:00:00 UTC (since
/// ClickHouse 26.x; older servers: 1900-01-01). Precisions 8 and 9 are further
/// limited by their `i64` tick count.
///
/// ```
/// assert_eq!(chnative_proto::convert::calendar::DATETIME64_MIN_SECONDS, -62_167_219_200);
/// ```
pub const DATETIME64_MIN_SECONDS: i64 = DATE32_MIN_DAYS * 86_400;
/// Last second of the `DateTime64` range: 9999-12-31 23:59:59 UTC (since
/// ClickHouse 26.x; older servers: 2299-12-31 23:59:59).
///
/// ```
/// assert_eq!(chnative_proto::convert::calendar::DATETIME64_MAX_SECONDS, 253_402_300_799);
/// ```
pub const DATETIME64_MAX_SECONDS: i64 = DATE32_MAX_DAYS * 86_400 + 86_399;
/// Largest magnitude of a `Time` value in seconds: 999:59:59.
///
/// ```
/// assert_eq!(chnative_proto::convert::calendar::TIME_MAX_SECONDS, 3_599_999);
/// ```
pub const TIME_MAX_SECONDS: i64 = 999 * 3600 + 59 * 60 + 59;

/// Day number (days since 1970-01-01) → (year, month 1..=12, day 1..=31) in the
/// proleptic Gregorian calendar (H. Hinnant's `civil_from_days`).
///
/// ```
/// use chnative_proto::convert::calendar::civil_from_days;
/// assert_eq!(civil_from_days(0), (1970, 1, 1));
/// assert_eq!(civil_from_days(-1), (1969, 12, 31));
/// assert_eq!(civil_from_days(-719_528), (0, 1, 1));
/// ```
pub const fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

/// (year, month, day) → day number (days since 1970-01-01), proleptic Gregorian.
/// Month and day are not validated (out-of-range values roll over).
///
/// ```
/// use chnative_proto::convert::calendar::days_from_civil;
/// assert_eq!(days_from_civil(1970, 1, 1), 0);
/// assert_eq!(days_from_civil(2149, 6, 6), 65_535);
/// assert_eq!(days_from_civil(9999, 12, 31), 2_932_896);
/// ```
pub const fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = month as i64;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// 10^(9 − precision): nanoseconds per tick. Precision above 9 is treated as 9.
///
/// ```
/// use chnative_proto::convert::calendar::nanos_per_tick;
/// assert_eq!(nanos_per_tick(3), 1_000_000);
/// ```
pub const fn nanos_per_tick(precision: u8) -> i64 {
    let p = if precision > 9 { 9 } else { precision };
    10i64.pow(9 - p as u32)
}

/// 10^precision: ticks per second. Precision above 9 is treated as 9.
///
/// ```
/// use chnative_proto::convert::calendar::ticks_per_second;
/// assert_eq!(ticks_per_second(6), 1_000_000);
/// ```
pub const fn ticks_per_second(precision: u8) -> i64 {
    let p = if precision > 9 { 9 } else { precision };
    10i64.pow(p as u32)
}

/// Ticks of 10^−precision seconds → (whole seconds rounded down, nanoseconds
/// 0..1e9): the decomposition of a time point.
///
/// ```
/// use chnative_proto::convert::calendar::split_ticks;
/// assert_eq!(split_ticks(1_500, 3), (1, 500_000_000));
/// assert_eq!(split_ticks(-1, 3), (-1, 999_000_000));
/// ```
pub const fn split_ticks(ticks: i64, precision: u8) -> (i64, u32) {
    let tps = ticks_per_second(precision);
    (ticks.div_euclid(tps), (ticks.rem_euclid(tps) * nanos_per_tick(precision)) as u32)
}

/// (seconds, nanoseconds 0..1e9) → ticks of 10^−precision seconds, dropping
/// nanoseconds finer than a tick (rounding the time point down, which is
/// truncating its text); `None` on `i64` overflow or `nanos ≥ 1e9`.
///
/// ```
/// use chnative_proto::convert::calendar::join_ticks;
/// assert_eq!(join_ticks(1, 999_999_999, 3), Some(1_999));
/// assert_eq!(join_ticks(-1, 1, 0), Some(-1));
/// assert_eq!(join_ticks(i64::MAX / 10, 0, 9), None);
/// assert_eq!(join_ticks(-9_223_372_037, 145_224_192, 9), Some(i64::MIN));
/// ```
pub const fn join_ticks(secs: i64, nanos: u32, precision: u8) -> Option<i64> {
    if nanos >= 1_000_000_000 {
        return None;
    }
    // In i128: at i64::MIN ticks the whole seconds alone are below i64::MIN.
    let t = secs as i128 * ticks_per_second(precision) as i128 + (nanos as i64 / nanos_per_tick(precision)) as i128;
    if t < i64::MIN as i128 || t > i64::MAX as i128 {
        None
    } else {
        Some(t as i64)
    }
}

/// Ticks → the total as nanoseconds (exact: `i64` ticks at any precision fit `i128`).
///
/// ```
/// use chnative_proto::convert::calendar::ticks_to_nanos;
/// assert_eq!(ticks_to_nanos(-15, 1), -1_500_000_000);
/// ```
pub const fn ticks_to_nanos(ticks: i64, precision: u8) -> i128 {
    ticks as i128 * nanos_per_tick(precision) as i128
}

/// Nanoseconds → ticks, truncated toward zero (the rule for durations: `Time`,
/// `Time64`); `None` if the result does not fit an `i64`.
///
/// ```
/// use chnative_proto::convert::calendar::nanos_to_ticks_trunc;
/// assert_eq!(nanos_to_ticks_trunc(-1_700_000_000, 0), Some(-1));
/// ```
pub const fn nanos_to_ticks_trunc(nanos: i128, precision: u8) -> Option<i64> {
    let t = nanos / nanos_per_tick(precision) as i128;
    if t < i64::MIN as i128 || t > i64::MAX as i128 {
        None
    } else {
        Some(t as i64)
    }
}

/// Ticks of a duration → (seconds, nanoseconds), both truncated toward zero so
/// they share the duration's sign (unlike [`split_ticks`], which splits a time
/// point and rounds down).
pub(crate) const fn split_duration(ticks: i64, precision: u8) -> (i64, i32) {
    let tps = ticks_per_second(precision);
    (ticks / tps, ((ticks % tps) * nanos_per_tick(precision)) as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip() {
        for days in (DATE32_MIN_DAYS - 1000..DATE32_MAX_DAYS + 1000).step_by(7) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(DATE32_MIN_DAYS, -719_528);
        assert_eq!(DATE32_MAX_DAYS, 2_932_896);
        assert_eq!(civil_from_days(120_529), (2299, 12, 31));
    }

    #[test]
    fn ticks() {
        for p in 0..=9u8 {
            for t in [i64::MIN, -1_000_000_007, -1, 0, 1, 999, 123_456_789_012, i64::MAX] {
                let (s, n) = split_ticks(t, p);
                assert_eq!(join_ticks(s, n, p), Some(t));
            }
        }
    }
}
