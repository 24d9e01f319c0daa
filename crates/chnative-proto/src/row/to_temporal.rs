//! [`ToColumn`] for the dates, instants and durations of chrono, time and jiff.

use crate::DataType as D;

use super::to_column::{cannot, ColumnBuffer, FixedBuffer, ToColumn};
use crate::insert::InsertData;
use crate::row::RowResult as Result;

mod temporal {
    use super::*;

    /// Date (u16 days) or Date32 (i32 days).
    #[derive(Debug)]
    #[non_exhaustive]
    pub enum DateBuffer {
        /// Date.
        Date(FixedBuffer<u16>),
        /// Date32.
        Date32(FixedBuffer<i32>),
    }

    impl ColumnBuffer for DateBuffer {
        fn data(&self) -> InsertData<'_> {
            match self {
                DateBuffer::Date(b) => b.data(),
                DateBuffer::Date32(b) => b.data(),
            }
        }
        fn len(&self) -> usize {
            match self {
                DateBuffer::Date(b) => b.len(),
                DateBuffer::Date32(b) => b.len(),
            }
        }
        fn truncate(&mut self, rows: usize) {
            match self {
                DateBuffer::Date(b) => b.truncate(rows),
                DateBuffer::Date32(b) => b.truncate(rows),
            }
        }
        fn push_default(&mut self) {
            match self {
                DateBuffer::Date(b) => b.push_default(),
                DateBuffer::Date32(b) => b.push_default(),
            }
        }
        fn bytes(&self) -> usize {
            match self {
                DateBuffer::Date(b) => b.bytes(),
                DateBuffer::Date32(b) => b.bytes(),
            }
        }
    }

    /// DateTime (u32 seconds) or DateTime64(p) (i64 ticks).
    #[derive(Debug)]
    #[non_exhaustive]
    pub enum DateTimeBuffer {
        /// DateTime.
        Secs(FixedBuffer<u32>),
        /// DateTime64 with its precision.
        Ticks(FixedBuffer<i64>, u8),
    }

    impl ColumnBuffer for DateTimeBuffer {
        fn data(&self) -> InsertData<'_> {
            match self {
                DateTimeBuffer::Secs(b) => b.data(),
                DateTimeBuffer::Ticks(b, _) => b.data(),
            }
        }
        fn len(&self) -> usize {
            match self {
                DateTimeBuffer::Secs(b) => b.len(),
                DateTimeBuffer::Ticks(b, _) => b.len(),
            }
        }
        fn truncate(&mut self, rows: usize) {
            match self {
                DateTimeBuffer::Secs(b) => b.truncate(rows),
                DateTimeBuffer::Ticks(b, _) => b.truncate(rows),
            }
        }
        fn push_default(&mut self) {
            match self {
                DateTimeBuffer::Secs(b) => b.push_default(),
                DateTimeBuffer::Ticks(b, _) => b.push_default(),
            }
        }
        fn bytes(&self) -> usize {
            match self {
                DateTimeBuffer::Secs(b) => b.bytes(),
                DateTimeBuffer::Ticks(b, _) => b.bytes(),
            }
        }
    }

    /// Time (i32 seconds) or Time64(p) (i64 ticks).
    #[derive(Debug)]
    #[non_exhaustive]
    pub enum DurationBuffer {
        /// Time.
        Secs(FixedBuffer<i32>),
        /// Time64 with its precision.
        Ticks(FixedBuffer<i64>, u8),
    }

    impl ColumnBuffer for DurationBuffer {
        fn data(&self) -> InsertData<'_> {
            match self {
                DurationBuffer::Secs(b) => b.data(),
                DurationBuffer::Ticks(b, _) => b.data(),
            }
        }
        fn len(&self) -> usize {
            match self {
                DurationBuffer::Secs(b) => b.len(),
                DurationBuffer::Ticks(b, _) => b.len(),
            }
        }
        fn truncate(&mut self, rows: usize) {
            match self {
                DurationBuffer::Secs(b) => b.truncate(rows),
                DurationBuffer::Ticks(b, _) => b.truncate(rows),
            }
        }
        fn push_default(&mut self) {
            match self {
                DurationBuffer::Secs(b) => b.push_default(),
                DurationBuffer::Ticks(b, _) => b.push_default(),
            }
        }
        fn bytes(&self) -> usize {
            match self {
                DurationBuffer::Secs(b) => b.bytes(),
                DurationBuffer::Ticks(b, _) => b.bytes(),
            }
        }
    }

    pub(super) fn date_buffer(ty: &D, rust: &str) -> Result<DateBuffer> {
        match ty {
            D::Date => Ok(DateBuffer::Date(FixedBuffer(Vec::new()))),
            D::Date32 => Ok(DateBuffer::Date32(FixedBuffer(Vec::new()))),
            t => Err(cannot(t, rust)),
        }
    }

    pub(super) fn datetime_buffer(ty: &D, rust: &str) -> Result<DateTimeBuffer> {
        match ty {
            D::DateTime(_) => Ok(DateTimeBuffer::Secs(FixedBuffer(Vec::new()))),
            D::DateTime64(p, _) => Ok(DateTimeBuffer::Ticks(FixedBuffer(Vec::new()), *p)),
            t => Err(cannot(t, rust)),
        }
    }

    pub(super) fn duration_buffer(ty: &D, rust: &str) -> Result<DurationBuffer> {
        match ty {
            D::Time => Ok(DurationBuffer::Secs(FixedBuffer(Vec::new()))),
            D::Time64(p) => Ok(DurationBuffer::Ticks(FixedBuffer(Vec::new()), *p)),
            t => Err(cannot(t, rust)),
        }
    }
}
use self::temporal::{date_buffer, datetime_buffer, duration_buffer};
pub use self::temporal::{DateBuffer, DateTimeBuffer, DurationBuffer};

/// `ToColumn` for a date, instant or duration type of a time library.
macro_rules! temporal_write {
    (date $t:ty, |$v:ident| $to_date:expr, $to_date32:expr) => {
        impl ToColumn for $t {
            type Buffer = DateBuffer;
            fn writes(ty: &D) -> bool {
                matches!(ty, D::Date | D::Date32)
            }
            fn buffer(ty: &D) -> Result<Self::Buffer> {
                date_buffer(ty, stringify!($t))
            }
            #[inline]
            fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
                let $v = self;
                match buf {
                    DateBuffer::Date(b) => b.0.push($to_date?),
                    DateBuffer::Date32(b) => b.0.push($to_date32?),
                }
                Ok(())
            }
        }
    };
    (instant $t:ty, |$v:ident, $p:ident| $to_secs:expr, $to_ticks:expr) => {
        impl ToColumn for $t {
            type Buffer = DateTimeBuffer;
            fn writes(ty: &D) -> bool {
                matches!(ty, D::DateTime(_) | D::DateTime64(..))
            }
            fn buffer(ty: &D) -> Result<Self::Buffer> {
                datetime_buffer(ty, stringify!($t))
            }
            #[inline]
            fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
                let $v = self;
                match buf {
                    DateTimeBuffer::Secs(b) => b.0.push($to_secs?),
                    DateTimeBuffer::Ticks(b, p) => {
                        let $p = *p;
                        b.0.push($to_ticks?)
                    }
                }
                Ok(())
            }
        }
    };
    (duration $t:ty, |$v:ident, $p:ident| $to_secs:expr, $to_ticks:expr) => {
        impl ToColumn for $t {
            type Buffer = DurationBuffer;
            fn writes(ty: &D) -> bool {
                matches!(ty, D::Time | D::Time64(_))
            }
            fn buffer(ty: &D) -> Result<Self::Buffer> {
                duration_buffer(ty, stringify!($t))
            }
            #[inline]
            fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
                let $v = self;
                match buf {
                    DurationBuffer::Secs(b) => b.0.push($to_secs?),
                    DurationBuffer::Ticks(b, p) => {
                        let $p = *p;
                        b.0.push($to_ticks?)
                    }
                }
                Ok(())
            }
        }
    };
}

#[cfg(feature = "time")]
mod time_impls {
    use super::*;
    use crate::convert::ext::time::{Date, Duration, OffsetDateTime};
    use crate::convert::time as tc;

    temporal_write!(date Date, |v| tc::from_date(*v), tc::from_date32(*v));
    temporal_write!(instant OffsetDateTime, |v, p| tc::from_datetime(*v), tc::from_datetime64(*v, p));
    temporal_write!(duration Duration, |v, p| tc::from_time(*v), tc::from_time64(*v, p));
}

#[cfg(feature = "jiff")]
mod jiff_impls {
    use super::*;
    use crate::convert::ext::jiff::civil::Date;
    use crate::convert::ext::jiff::{SignedDuration, Timestamp, ZonedDateTime};
    use crate::convert::jiff as jc;

    temporal_write!(date Date, |v| jc::from_date(*v), jc::from_date32(*v));
    temporal_write!(instant Timestamp, |v, p| jc::from_timestamp(*v), jc::from_timestamp64(*v, p));
    temporal_write!(instant ZonedDateTime, |v, p| jc::from_datetime(v), jc::from_datetime64(v, p));
    temporal_write!(duration SignedDuration, |v, p| jc::from_time(*v), jc::from_time64(*v, p));
}

#[cfg(feature = "chrono")]
mod chrono_impls {
    use super::*;
    use crate::convert::chrono as cc;
    use crate::convert::ext::chrono::{DateTime, NaiveDate, NaiveDateTime, TimeDelta, TimeZone};

    impl ToColumn for NaiveDate {
        type Buffer = DateBuffer;
        fn writes(ty: &D) -> bool {
            matches!(ty, D::Date | D::Date32)
        }
        fn buffer(ty: &D) -> Result<Self::Buffer> {
            date_buffer(ty, "NaiveDate")
        }
        #[inline]
        fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
            match buf {
                DateBuffer::Date(b) => b.0.push(cc::from_date(*self)?),
                DateBuffer::Date32(b) => b.0.push(cc::from_date32(*self)?),
            }
            Ok(())
        }
    }

    impl<Z: TimeZone> ToColumn for DateTime<Z>
    where
        Z::Offset: std::fmt::Display,
    {
        type Buffer = DateTimeBuffer;
        fn writes(ty: &D) -> bool {
            matches!(ty, D::DateTime(_) | D::DateTime64(..))
        }
        fn buffer(ty: &D) -> Result<Self::Buffer> {
            datetime_buffer(ty, "DateTime")
        }
        #[inline]
        fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
            match buf {
                DateTimeBuffer::Secs(b) => b.0.push(cc::from_datetime(self)?),
                DateTimeBuffer::Ticks(b, p) => b.0.push(cc::from_datetime64(self, *p)?),
            }
            Ok(())
        }
    }

    temporal_write!(duration TimeDelta, |v, p| cc::from_time(*v), cc::from_time64(*v, p));

    /// A NaiveDateTime column buffer: the instants, and the zone whose wall clock
    /// the values are (the column's, else the server's: as they are read).
    #[derive(Debug)]
    pub struct NaiveDateTimeBuffer {
        instants: DateTimeBuffer,
        zone: crate::convert::ext::chrono_tz::Tz,
    }

    impl ColumnBuffer for NaiveDateTimeBuffer {
        fn data(&self) -> InsertData<'_> {
            self.instants.data()
        }
        fn len(&self) -> usize {
            self.instants.len()
        }
        fn truncate(&mut self, rows: usize) {
            self.instants.truncate(rows)
        }
        fn push_default(&mut self) {
            self.instants.push_default()
        }
        fn bytes(&self) -> usize {
            self.instants.bytes()
        }
    }

    /// The wall-clock time in the column's zone (else the server's), the inverse of
    /// reading it: a time the zone skips or repeats (a daylight-saving change) is
    /// an error rather than a guess.
    impl ToColumn for NaiveDateTime {
        type Buffer = NaiveDateTimeBuffer;
        fn writes(ty: &D) -> bool {
            matches!(ty, D::DateTime(_) | D::DateTime64(..))
        }
        fn buffer(ty: &D) -> Result<Self::Buffer> {
            let zone = match ty {
                D::DateTime(Some(z)) | D::DateTime64(_, Some(z)) => cc::tz(z)?,
                _ => crate::convert::ext::chrono_tz::Tz::UTC,
            };
            Ok(NaiveDateTimeBuffer { instants: datetime_buffer(ty, "NaiveDateTime")?, zone })
        }
        #[inline]
        fn write_to(&self, buf: &mut Self::Buffer) -> Result<()> {
            use crate::convert::ext::chrono::LocalResult;
            let t = match buf.zone.from_local_datetime(self) {
                LocalResult::Single(t) => t,
                LocalResult::Ambiguous(..) => {
                    return Err(crate::row::RowError::invalid_input(format!(
                        "{self} is ambiguous in {} (the clock repeats it): write a DateTime<Tz>",
                        buf.zone
                    )))
                }
                LocalResult::None => {
                    return Err(crate::row::RowError::invalid_input(format!(
                        "{self} does not exist in {} (the clock skips it)",
                        buf.zone
                    )))
                }
            };
            match &mut buf.instants {
                DateTimeBuffer::Secs(b) => b.0.push(cc::from_datetime(&t)?),
                DateTimeBuffer::Ticks(b, p) => b.0.push(cc::from_datetime64(&t, *p)?),
            }
            Ok(())
        }
    }
}
#[cfg(feature = "chrono")]
pub use self::chrono_impls::NaiveDateTimeBuffer;
