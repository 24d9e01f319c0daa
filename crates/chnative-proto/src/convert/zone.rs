//! Local wall-clock time of a `DateTime`/`DateTime64` value in its time zone, as
//! the server's `toString` shows it, without a date/time library in the API.
//!
//! The offset of a named zone at an instant needs a time zone database. This
//! module uses jiff's bundled copy of the IANA database when the `tz` feature (on
//! by default in `chnative`) or the `jiff` feature is enabled, else chrono-tz's
//! when `chrono` is. Without any of them only UTC and its aliases are known:
//! [`utc_offset`] says `None` for every other zone, and a caller must not show a
//! wall-clock time for it as if it were local (`chnative` then shows the UTC time
//! marked `UTC`).
//!
//! ```
//! use chnative_proto::convert::zone::{utc_offset, HAS_DATABASE};
//! assert_eq!(utc_offset("UTC", 1_700_000_000), Some(0));
//! if HAS_DATABASE {
//!     // 2023-11-14 22:13:20 UTC is 23:13:20 in Paris (winter time, +01:00).
//!     assert_eq!(utc_offset("Europe/Paris", 1_700_000_000), Some(3600));
//!     assert_eq!(utc_offset("Asia/Kolkata", 0), Some(19_800));
//! }
//! assert_eq!(utc_offset("Mars/Olympus_Mons", 0), None);
//! ```

/// Whether a time zone database is compiled in (feature `tz`, `jiff` or `chrono`).
pub const HAS_DATABASE: bool = cfg!(any(feature = "tz", feature = "jiff", feature = "chrono"));

/// Whether `zone` names UTC (known without a database).
pub fn is_utc(zone: &str) -> bool {
    let zone = zone.strip_prefix("Etc/").unwrap_or(zone);
    matches!(zone, "UTC" | "UCT" | "Universal" | "Zulu" | "GMT" | "GMT0" | "GMT+0" | "GMT-0" | "Greenwich")
}

/// The offset from UTC in seconds (local minus UTC) of the zone called `zone` at
/// `unix_secs` seconds since the epoch; `None` when the zone is unknown (or no
/// database is compiled in and it is not UTC) or the instant is out of the
/// database's range.
pub fn utc_offset(zone: &str, unix_secs: i64) -> Option<i32> {
    if is_utc(zone) {
        return Some(0);
    }
    offset_from_database(zone, unix_secs)
}

/// The wall-clock seconds (seconds since 1970-01-01 00:00 of the local calendar)
/// of `unix_secs` in `zone`, or `None` as for [`utc_offset`].
///
/// ```
/// use chnative_proto::convert::zone::local_seconds;
/// assert_eq!(local_seconds("UTC", 86_400), Some(86_400));
/// ```
pub fn local_seconds(zone: &str, unix_secs: i64) -> Option<i64> {
    utc_offset(zone, unix_secs).map(|o| unix_secs + i64::from(o))
}

#[cfg(any(feature = "tz", feature = "jiff"))]
fn offset_from_database(zone: &str, unix_secs: i64) -> Option<i32> {
    use std::cell::RefCell;

    use jiff::tz::TimeZone;
    use jiff::Timestamp;

    thread_local! {
        // The last zone looked up: values are rendered a column at a time, and a
        // column has one zone, so this saves the database's lookup per value.
        static LAST: RefCell<Option<(Box<str>, Option<TimeZone>)>> = const { RefCell::new(None) };
    }
    let ts = Timestamp::from_second(unix_secs).ok()?;
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.as_ref().is_none_or(|(name, _)| **name != *zone) {
            *last = Some((zone.into(), TimeZone::get(zone).ok()));
        }
        let tz = last.as_ref()?.1.as_ref()?;
        Some(tz.to_offset(ts).seconds())
    })
}

#[cfg(all(feature = "chrono", not(any(feature = "tz", feature = "jiff"))))]
fn offset_from_database(zone: &str, unix_secs: i64) -> Option<i32> {
    use chrono::{Offset, TimeZone};
    let tz: chrono_tz::Tz = zone.parse().ok()?;
    let t = chrono::DateTime::from_timestamp(unix_secs, 0)?;
    Some(tz.offset_from_utc_datetime(&t.naive_utc()).fix().local_minus_utc())
}

#[cfg(not(any(feature = "tz", feature = "jiff", feature = "chrono")))]
fn offset_from_database(_zone: &str, _unix_secs: i64) -> Option<i32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_is_known_without_a_database() {
        for z in ["UTC", "Etc/UTC", "GMT", "Zulu", "Etc/GMT0"] {
            assert_eq!(utc_offset(z, 123), Some(0), "{z}");
        }
        assert_eq!(utc_offset("Nowhere/Special", 0), None);
    }

    #[test]
    #[cfg(any(feature = "tz", feature = "jiff", feature = "chrono"))]
    fn offsets_follow_daylight_saving_time() {
        // 2024-03-31 01:00 UTC: Paris goes from +01:00 to +02:00.
        let change = 1_711_846_800;
        assert_eq!(utc_offset("Europe/Paris", change - 1), Some(3600));
        assert_eq!(utc_offset("Europe/Paris", change), Some(7200));
        // New York, 2024-11-03 06:00 UTC: -04:00 to -05:00.
        assert_eq!(utc_offset("America/New_York", 1_730_613_600 - 1), Some(-4 * 3600));
        assert_eq!(utc_offset("America/New_York", 1_730_613_600), Some(-5 * 3600));
        // Alternating zones in one thread (the cache holds one).
        for _ in 0..3 {
            assert_eq!(utc_offset("Asia/Kolkata", 0), Some(19_800));
            assert_eq!(utc_offset("Asia/Tokyo", 0), Some(9 * 3600));
        }
        assert_eq!(local_seconds("Asia/Kolkata", 0), Some(19_800));
    }
}
