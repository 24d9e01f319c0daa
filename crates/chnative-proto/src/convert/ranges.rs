//! The server's ranges for the date and time types, checked when a library value
//! is written (the insert direction): each check turns a value already reduced to
//! days, seconds or nanoseconds into the wire value, or says which range it left.
//! The library modules (`chrono`, `time`, `jiff`) share these so that all three
//! accept and refuse exactly the same instants.

use super::ConvertError;

/// `DateTime64(p)` and `Time64(p)` have at most nine digits after the second.
pub(crate) fn check_precision(precision: u8) -> Result<(), ConvertError> {
    if precision > 9 {
        return Err(ConvertError::out_of_range(format!("precision {precision}"), "DateTime64/Time64 (0..=9)"));
    }
    Ok(())
}

// Only the library modules write values.
#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
mod encode {
    use std::fmt::Display;

    use super::super::calendar::{
        self, DATE32_MAX_DAYS, DATE32_MIN_DAYS, DATETIME64_MAX_SECONDS, DATETIME64_MIN_SECONDS,
    };
    use super::{check_precision, ConvertError};

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

#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
pub(crate) use encode::*;
