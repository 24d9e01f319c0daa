//! Decimals: the raw mantissas of a `Decimal(P, S)` column with its scale, and an
//! exact decimal type that renders like the server's `toString`.
//!
//! On the wire a `Decimal(P, S)` value is the integer `v × 10^S` in 4, 8, 16 or 32
//! bytes (P ≤ 9, ≤ 18, ≤ 38, ≤ 76). [`decimal_column`] returns those integers
//! zero-copy together with P and S; [`Decimal`] is one exact value.
//!
//! ```
//! use chnative_proto::convert::Decimal;
//! let d = Decimal::new(15000i64, 4).unwrap(); // a Decimal(18, 4) holding 1.5
//! assert_eq!(d.to_string(), "1.5"); // toString(toDecimal64(1.5, 4))
//! assert_eq!(format!("{d:#}"), "1.5000"); // output_format_decimal_trailing_zeros = 1
//! assert_eq!(d, "1.5".parse().unwrap()); // equality is numeric
//! let raw: i64 = "-2.25".parse::<Decimal>().unwrap().to_raw(18, 4).unwrap();
//! assert_eq!(raw, -22500);
//! ```

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use super::int256::{I256, U256};
use super::{type_mismatch, ConvertError};
use crate::types::DataType;
use crate::view::{ColumnView, FixedValue};

/// The largest scale (and precision) ClickHouse decimals have.
///
/// ```
/// assert!(chnative_proto::convert::Decimal::new(1i32, chnative_proto::convert::decimal::MAX_SCALE).is_ok());
/// ```
pub const MAX_SCALE: u8 = 76;

/// An exact decimal number: `raw × 10^−scale`, with `scale ≤ 76`.
///
/// `Display` renders what the server's `toString` renders (trailing fractional
/// zeros removed, no `.` for whole numbers); the alternate form `{:#}` keeps all
/// `scale` digits, like the server's text formats with
/// `output_format_decimal_trailing_zeros = 1`. Equality, ordering and hashing are
/// numeric: `1.5 == 1.50`.
///
/// ```
/// use chnative_proto::convert::Decimal;
/// let d: Decimal = "-0.0100".parse().unwrap();
/// assert_eq!((d.raw().to_string(), d.scale()), ("-100".to_string(), 4));
/// assert_eq!(d.to_string(), "-0.01");
/// assert_eq!(format!("{d:#}"), "-0.0100");
/// assert!(d < Decimal::new(0i32, 0).unwrap());
/// ```
#[derive(Clone, Copy)]
pub struct Decimal {
    raw: I256,
    scale: u8,
}

/// The wire integer of a decimal width: `i32`, `i64`, `i128` or [`I256`].
///
/// ```
/// use chnative_proto::convert::{Decimal, DecimalInt};
/// fn raw_of<T: DecimalInt>(d: Decimal, p: u8, s: u8) -> T { d.to_raw(p, s).unwrap() }
/// assert_eq!(raw_of::<i32>("1.5".parse().unwrap(), 9, 2), 150);
/// assert_eq!(<i64 as DecimalInt>::PRECISIONS, 10..=18);
/// ```
pub trait DecimalInt: FixedValue + sealed::Sealed {
    /// The precisions stored at this width.
    ///
    /// ```
    /// use chnative_proto::convert::{DecimalInt, I256};
    /// assert_eq!(<I256 as DecimalInt>::PRECISIONS, 39..=76);
    /// ```
    const PRECISIONS: std::ops::RangeInclusive<u8>;
    /// Widens to 256 bits.
    ///
    /// ```
    /// use chnative_proto::convert::{DecimalInt, I256};
    /// assert_eq!((-5i32).to_i256(), I256::from(-5));
    /// ```
    fn to_i256(self) -> I256;
    /// Narrows from 256 bits, `None` if the value does not fit.
    ///
    /// ```
    /// use chnative_proto::convert::{DecimalInt, I256};
    /// assert_eq!(<i32 as DecimalInt>::from_i256(I256::from(i64::MAX)), None);
    /// ```
    fn from_i256(v: I256) -> Option<Self>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
    impl Sealed for i128 {}
    impl Sealed for super::I256 {}
}

macro_rules! decimal_int {
    ($t:ty, $p:expr) => {
        impl DecimalInt for $t {
            const PRECISIONS: std::ops::RangeInclusive<u8> = $p;
            fn to_i256(self) -> I256 {
                I256::from(self)
            }
            fn from_i256(v: I256) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
        }
    };
}
decimal_int!(i32, 1..=9);
decimal_int!(i64, 10..=18);
decimal_int!(i128, 19..=38);

impl DecimalInt for I256 {
    const PRECISIONS: std::ops::RangeInclusive<u8> = 39..=76;
    fn to_i256(self) -> I256 {
        self
    }
    fn from_i256(v: I256) -> Option<Self> {
        Some(v)
    }
}

/// 10^n as an `I256` (n ≤ 76).
fn pow10(n: u8) -> I256 {
    U256::pow10(u32::from(n)).and_then(|p| I256::try_from(p).ok()).unwrap_or(I256::MAX)
}

impl Decimal {
    /// `raw × 10^−scale`; fails when `scale > 76`.
    ///
    /// ```
    /// use chnative_proto::convert::Decimal;
    /// assert_eq!(Decimal::new(-5i32, 1).unwrap().to_string(), "-0.5");
    /// assert!(Decimal::new(1i32, 77).is_err());
    /// ```
    pub fn new(raw: impl Into<I256>, scale: u8) -> Result<Decimal, ConvertError> {
        if scale > MAX_SCALE {
            return Err(ConvertError::OutOfRange {
                value: format!("scale {scale}"),
                target: "a decimal scale (0..=76)".into(),
            });
        }
        Ok(Decimal { raw: raw.into(), scale })
    }

    /// The integer `value × 10^scale`.
    ///
    /// ```
    /// use chnative_proto::convert::{Decimal, I256};
    /// assert_eq!("1.25".parse::<Decimal>().unwrap().raw(), I256::from(125));
    /// ```
    pub fn raw(&self) -> I256 {
        self.raw
    }

    /// Digits after the point.
    ///
    /// ```
    /// use chnative_proto::convert::Decimal;
    /// assert_eq!("1.250".parse::<Decimal>().unwrap().scale(), 3);
    /// ```
    pub fn scale(&self) -> u8 {
        self.scale
    }

    /// True below zero.
    ///
    /// ```
    /// use chnative_proto::convert::Decimal;
    /// assert!("-0.1".parse::<Decimal>().unwrap().is_negative());
    /// ```
    pub fn is_negative(&self) -> bool {
        self.raw.is_negative()
    }

    /// The same value at another scale; fails if digits would be lost or the
    /// mantissa would overflow 256 bits (never rounds).
    ///
    /// ```
    /// use chnative_proto::convert::Decimal;
    /// let d: Decimal = "1.50".parse().unwrap();
    /// assert_eq!(format!("{:#}", d.rescale(4).unwrap()), "1.5000");
    /// assert_eq!(format!("{:#}", d.rescale(1).unwrap()), "1.5");
    /// assert!(d.rescale(0).is_err());
    /// ```
    pub fn rescale(&self, scale: u8) -> Result<Decimal, ConvertError> {
        if scale > MAX_SCALE {
            return Err(ConvertError::OutOfRange {
                value: format!("scale {scale}"),
                target: "a decimal scale (0..=76)".into(),
            });
        }
        let raw = match scale.cmp(&self.scale) {
            Ordering::Equal => self.raw,
            Ordering::Greater => self
                .raw
                .checked_mul(pow10(scale - self.scale))
                .ok_or_else(|| ConvertError::out_of_range(self, format!("a 256-bit decimal of scale {scale}")))?,
            Ordering::Less => {
                let mut raw = self.raw;
                for _ in scale..self.scale {
                    match raw.div_rem_u64(10) {
                        Some((q, 0)) => raw = q,
                        _ => {
                            return Err(ConvertError::Inexact {
                                value: self.to_string(),
                                target: format!("a decimal of scale {scale}"),
                            })
                        }
                    }
                }
                raw
            }
        };
        Ok(Decimal { raw, scale })
    }

    /// The same value with trailing fractional zeros removed (smallest scale).
    ///
    /// ```
    /// use chnative_proto::convert::Decimal;
    /// assert_eq!("2.500".parse::<Decimal>().unwrap().normalize().scale(), 1);
    /// assert_eq!("0.000".parse::<Decimal>().unwrap().normalize().scale(), 0);
    /// ```
    pub fn normalize(&self) -> Decimal {
        let mut d = *self;
        while d.drop_trailing_zero() {}
        d
    }

    /// Drops one trailing zero of the fraction (same value, scale one less);
    /// `false`, unchanged, when the scale is 0 or the last fraction digit is not 0.
    fn drop_trailing_zero(&mut self) -> bool {
        if self.scale == 0 {
            return false;
        }
        match self.raw.div_rem_u64(10) {
            Some((q, 0)) => {
                self.raw = q;
                self.scale -= 1;
                true
            }
            _ => false,
        }
    }

    /// From a wire integer of a `Decimal(P, scale)` column.
    ///
    /// ```
    /// use chnative_proto::convert::Decimal;
    /// assert_eq!(Decimal::from_raw(-12345i64, 3).unwrap().to_string(), "-12.345");
    /// ```
    pub fn from_raw<T: DecimalInt>(raw: T, scale: u8) -> Result<Decimal, ConvertError> {
        Decimal::new(raw.to_i256(), scale)
    }

    /// The wire integer for a `Decimal(precision, scale)` column: exact rescaling
    /// (an error rather than rounding), then a check that the value has at most
    /// `precision` digits and that `T` is the width of that precision.
    ///
    /// ```
    /// use chnative_proto::convert::{Decimal, I256};
    /// let d: Decimal = "123.4".parse().unwrap();
    /// assert_eq!(d.to_raw::<i32>(9, 2).unwrap(), 12340);
    /// assert!(d.to_raw::<i32>(4, 2).is_err()); // 12340 has 5 digits
    /// assert!(d.to_raw::<i32>(9, 0).is_err()); // would drop .4
    /// assert!(d.to_raw::<i64>(9, 2).is_err()); // Decimal(9, _) is 32-bit
    /// assert_eq!(d.to_raw::<I256>(76, 70).unwrap().to_string(), format!("1234{}", "0".repeat(69)));
    /// ```
    pub fn to_raw<T: DecimalInt>(&self, precision: u8, scale: u8) -> Result<T, ConvertError> {
        let target = format!("Decimal({precision}, {scale})");
        if !T::PRECISIONS.contains(&precision) || scale > precision {
            return Err(ConvertError::OutOfRange {
                value: format!("{} (precisions {:?})", T::RUST_NAME, T::PRECISIONS),
                target,
            });
        }
        let d = self
            .rescale(scale)
            .map_err(|_| ConvertError::Inexact { value: self.to_string(), target: target.clone() })?;
        if d.raw.unsigned_abs() >= U256::pow10(u32::from(precision)).unwrap_or(U256::MAX) {
            return Err(ConvertError::out_of_range(self, target));
        }
        T::from_i256(d.raw).ok_or_else(|| ConvertError::out_of_range(self, target))
    }

    /// The value as a `rust_decimal::Decimal`, exactly, or an error when it has no
    /// exact representation there (more than 28 fractional digits or a mantissa
    /// beyond 96 bits after removing trailing zeros). Every `Decimal(P ≤ 28, S)`
    /// value converts.
    ///
    /// ```
    /// use chnative_proto::convert::Decimal;
    /// let d: Decimal = "-1.50".parse().unwrap();
    /// assert_eq!(d.to_rust_decimal().unwrap().to_string(), "-1.50");
    /// assert!("0.00000000000000000000000000001".parse::<Decimal>().unwrap().to_rust_decimal().is_err());
    /// ```
    #[cfg(feature = "rust_decimal")]
    pub fn to_rust_decimal(&self) -> Result<rust_decimal::Decimal, ConvertError> {
        let fail = || ConvertError::out_of_range(self, "rust_decimal::Decimal");
        let attempt = |d: &Decimal| {
            i128::try_from(d.raw)
                .ok()
                .and_then(|m| rust_decimal::Decimal::try_from_i128_with_scale(m, u32::from(d.scale)).ok())
        };
        if let Some(r) = attempt(self) {
            return Ok(r);
        }
        // Same value with fewer trailing zeros, if that is what made it not fit.
        let mut d = *self;
        while d.drop_trailing_zero() {
            if let Some(r) = attempt(&d) {
                return Ok(r);
            }
        }
        Err(fail())
    }

    /// Magnitude digits, left-padded with zeros to at least `scale + 1` digits.
    fn padded_digits(&self) -> String {
        let digits = self.raw.unsigned_abs().decimal_digits();
        let min = usize::from(self.scale) + 1;
        if digits.len() < min {
            format!("{}{digits}", "0".repeat(min - digits.len()))
        } else {
            digits
        }
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.padded_digits();
        let (int, frac) = digits.split_at(digits.len() - usize::from(self.scale));
        let frac = if f.alternate() { frac } else { frac.trim_end_matches('0') };
        let body = if frac.is_empty() { int.to_string() } else { format!("{int}.{frac}") };
        f.pad_integral(!self.is_negative(), "", &body)
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Decimal({self:#})")
    }
}

impl FromStr for Decimal {
    type Err = ConvertError;
    /// `[+|-]digits[.digits]` (also `.5` and `5.`); the scale is the number of
    /// digits after the point (at most 76) and the mantissa must fit 256 bits.
    fn from_str(s: &str) -> Result<Decimal, ConvertError> {
        let bad = |reason| ConvertError::Parse { input: s.to_string(), target: "Decimal", reason };
        let (neg, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        if int.is_empty() && frac.is_empty() {
            return Err(bad("no digits"));
        }
        if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return Err(bad("invalid character"));
        }
        if frac.len() > usize::from(MAX_SCALE) {
            return Err(bad("more than 76 digits after the point"));
        }
        let digits = format!("{int}{frac}");
        let abs = U256::parse_digits(&digits, "Decimal").map_err(|e| e.with_input(s))?;
        let raw = I256::from_sign_abs(neg, abs).ok_or_else(|| bad("out of range"))?;
        Ok(Decimal { raw, scale: frac.len() as u8 })
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        // Bring the smaller scale up; if that overflows, its magnitude exceeds any
        // 256-bit mantissa and its sign decides.
        match self.scale.cmp(&other.scale) {
            Ordering::Equal => self.raw.cmp(&other.raw),
            Ordering::Greater => match other.raw.checked_mul(pow10(self.scale - other.scale)) {
                Some(o) => self.raw.cmp(&o),
                None if other.is_negative() => Ordering::Greater,
                None => Ordering::Less,
            },
            Ordering::Less => other.cmp(self).reverse(),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Decimal {}

impl Hash for Decimal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let n = self.normalize();
        n.raw.hash(state);
        n.scale.hash(state);
    }
}

#[cfg(feature = "rust_decimal")]
impl From<rust_decimal::Decimal> for Decimal {
    /// Exact: rust_decimal's mantissa has 96 bits and its scale is at most 28.
    fn from(d: rust_decimal::Decimal) -> Decimal {
        Decimal { raw: I256::from(d.mantissa()), scale: d.scale() as u8 }
    }
}

#[cfg(feature = "rust_decimal")]
impl TryFrom<Decimal> for rust_decimal::Decimal {
    type Error = ConvertError;
    /// See [`Decimal::to_rust_decimal`].
    fn try_from(d: Decimal) -> Result<rust_decimal::Decimal, ConvertError> {
        d.to_rust_decimal()
    }
}

/// The wire integers of a decimal column, at their width.
///
/// ```
/// use chnative_proto::convert::DecimalRaw;
/// let raw = DecimalRaw::D64(&[15000, -5]);
/// assert_eq!(raw.len(), 2);
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum DecimalRaw<'a> {
    /// `Decimal(1..=9, S)`.
    D32(&'a [i32]),
    /// `Decimal(10..=18, S)`.
    D64(&'a [i64]),
    /// `Decimal(19..=38, S)`.
    D128(&'a [i128]),
    /// `Decimal(39..=76, S)`.
    D256(&'a [I256]),
}

impl DecimalRaw<'_> {
    /// Rows.
    ///
    /// ```
    /// # use chnative_proto::convert::DecimalRaw;
    /// assert!(DecimalRaw::D32(&[]).is_empty());
    /// ```
    pub fn len(&self) -> usize {
        match self {
            DecimalRaw::D32(v) => v.len(),
            DecimalRaw::D64(v) => v.len(),
            DecimalRaw::D128(v) => v.len(),
            DecimalRaw::D256(v) => v.len(),
        }
    }

    /// True when there are no rows.
    ///
    /// ```
    /// # use chnative_proto::convert::DecimalRaw;
    /// assert!(!DecimalRaw::D32(&[1]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` widened to 256 bits. Panics if `i >= len()`.
    ///
    /// ```
    /// # use chnative_proto::convert::{DecimalRaw, I256};
    /// assert_eq!(DecimalRaw::D32(&[-7]).get(0), I256::from(-7));
    /// ```
    pub fn get(&self, i: usize) -> I256 {
        match self {
            DecimalRaw::D32(v) => I256::from(v[i]),
            DecimalRaw::D64(v) => I256::from(v[i]),
            DecimalRaw::D128(v) => I256::from(v[i]),
            DecimalRaw::D256(v) => v[i],
        }
    }
}

/// A `Decimal(P, S)` column: its precision, scale and wire integers (zero-copy).
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// use chnative_proto::convert::{decimal_column, DecimalRaw};
/// let col = decimal_column(view)?;
/// if let DecimalRaw::D64(raw) = col.raw() {
///     println!("{} values at scale {}", raw.len(), col.scale());
/// }
/// for i in 0..col.len() {
///     println!("{}", col.get(i)); // exact, rendered like toString
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct DecimalColumn<'a> {
    precision: u8,
    scale: u8,
    raw: DecimalRaw<'a>,
}

/// Views a `Decimal(P, S)` column (also `Decimal32(S)` … `Decimal256(S)`, which
/// the type parser normalises to their precision). For `Nullable(Decimal…)` pass
/// the nullable view's `inner()`.
///
/// ```no_run
/// # fn demo(view: &chnative_proto::ColumnView<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
/// let col = chnative_proto::convert::decimal_column(view)?;
/// let (p, s) = (col.precision(), col.scale());
/// # Ok(()) }
/// ```
pub fn decimal_column<'a>(view: &ColumnView<'a>) -> Result<DecimalColumn<'a>, ConvertError> {
    let (precision, scale) = match super::plain_type(view.data_type()) {
        DataType::Decimal { precision, scale } => (*precision, *scale),
        _ => return Err(type_mismatch(view, "Decimal")),
    };
    let raw = match precision {
        0..=9 => DecimalRaw::D32(view.values()?),
        10..=18 => DecimalRaw::D64(view.values()?),
        19..=38 => DecimalRaw::D128(view.values()?),
        _ => DecimalRaw::D256(view.values()?),
    };
    Ok(DecimalColumn { precision, scale, raw })
}

impl<'a> DecimalColumn<'a> {
    /// P of `Decimal(P, S)`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DecimalColumn<'_>) { let _ = col.precision(); }
    /// ```
    pub fn precision(&self) -> u8 {
        self.precision
    }

    /// S of `Decimal(P, S)`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DecimalColumn<'_>) { let _ = col.scale(); }
    /// ```
    pub fn scale(&self) -> u8 {
        self.scale
    }

    /// The wire integers (`value × 10^S`), borrowed from the column.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DecimalColumn<'_>) { let _ = col.raw(); }
    /// ```
    pub fn raw(&self) -> DecimalRaw<'a> {
        self.raw
    }

    /// Rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DecimalColumn<'_>) { let _ = col.len(); }
    /// ```
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// True when there are no rows.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DecimalColumn<'_>) { let _ = col.is_empty(); }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// Row `i` as an exact [`Decimal`] at the column's scale. Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DecimalColumn<'_>) { println!("{}", col.get(0)); }
    /// ```
    pub fn get(&self, i: usize) -> Decimal {
        Decimal { raw: self.raw.get(i), scale: self.scale }
    }

    /// All rows as [`Decimal`]s.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DecimalColumn<'_>) { let v: Vec<_> = col.iter().collect(); }
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = Decimal> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Row `i` as a `rust_decimal::Decimal` (see [`Decimal::to_rust_decimal`]:
    /// always exact for P ≤ 28, an error for values it cannot hold). Panics if `i >= len()`.
    ///
    /// ```no_run
    /// # fn demo(col: chnative_proto::convert::DecimalColumn<'_>) -> Result<(), chnative_proto::convert::ConvertError> {
    /// let d: rust_decimal::Decimal = col.to_rust_decimal(0)?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "rust_decimal")]
    pub fn to_rust_decimal(&self, i: usize) -> Result<rust_decimal::Decimal, ConvertError> {
        self.get(i).to_rust_decimal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn render_like_to_string() {
        for (raw, scale, text, full) in [
            (15000i64, 4u8, "1.5", "1.5000"),
            (0, 3, "0", "0.000"),
            (-10, 3, "-0.01", "-0.010"),
            (5, 0, "5", "5"),
            (-5, 1, "-0.5", "-0.5"),
            (100, 2, "1", "1.00"),
        ] {
            let v = Decimal::new(raw, scale).unwrap();
            assert_eq!(v.to_string(), text);
            assert_eq!(format!("{v:#}"), full);
            assert_eq!(d(full), v);
        }
        let max76 = "9".repeat(76);
        assert_eq!(d(&max76).to_string(), max76);
        let frac76 = format!("-0.{}", "9".repeat(76));
        assert_eq!(d(&frac76).to_string(), frac76);
        assert_eq!(d(&frac76).scale(), 76);
    }

    #[test]
    fn numeric_order_and_rescale() {
        assert_eq!(d("1.5"), d("1.50000"));
        assert!(d("-1.5") < d("-1.49"));
        assert!(d(&"9".repeat(76)) > d(&format!("0.{}", "9".repeat(76))));
        assert!(d(&format!("-{}", "9".repeat(76))) < d(&format!("-0.{}", "9".repeat(76))));
        assert!(d("1.25").rescale(1).is_err());
        assert_eq!(d("1.20").rescale(1).unwrap().raw(), I256::from(12));
    }

    #[test]
    fn parse_errors() {
        for s in ["", "-", ".", "1.2.3", "1e5", "--1", " 1", &format!("0.{}", "1".repeat(77))] {
            assert!(s.parse::<Decimal>().is_err(), "{s}");
        }
        assert_eq!(d(".5").to_string(), "0.5");
        assert_eq!(d("5.").scale(), 0);
    }
}
