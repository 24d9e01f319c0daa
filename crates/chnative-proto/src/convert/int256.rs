//! 256-bit integers whose memory is the Native wire layout of `Int256` / `UInt256`.
//!
//! Both are four `u64` limbs, least significant first (little-endian), so a column
//! of them is viewed zero-copy with [`ColumnView::values`](crate::view::ColumnView::values):
//!
//! ```
//! use chnative_proto::convert::{I256, U256};
//! let x: I256 = "-57896044618658097711785492504343953926634992332820282019728792003956564819968".parse().unwrap();
//! assert_eq!(x, I256::MIN);
//! assert_eq!(U256::MAX.to_string(), "115792089237316195423570985008687907853269984665640564039457584007913129639935");
//! assert_eq!(i128::try_from(I256::from(-5i64)).unwrap(), -5);
//! ```

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use bytemuck::{Pod, Zeroable};

use super::ConvertError;
use crate::types::DataType;
use crate::view::FixedValue;

/// 10^19, the largest power of ten in a `u64`: the chunk size of decimal conversion.
const TEN19: u64 = 10_000_000_000_000_000_000;

/// An unsigned 256-bit integer (`UInt256`), little-endian `u64` limbs.
///
/// ```
/// use chnative_proto::convert::U256;
/// let x = U256::from(u128::MAX);
/// assert_eq!(x.to_string(), u128::MAX.to_string());
/// assert_eq!(U256::from_le_bytes(x.to_le_bytes()), x);
/// assert!(U256::MAX > x);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Pod, Zeroable)]
#[repr(C)]
pub struct U256([u64; 4]);

/// A signed 256-bit integer (`Int256`, and the mantissa of `Decimal256`), two's
/// complement in little-endian `u64` limbs.
///
/// ```
/// use chnative_proto::convert::I256;
/// let x: I256 = "-12345678901234567890123456789012345678901234567890".parse().unwrap();
/// assert_eq!(x.to_string(), "-12345678901234567890123456789012345678901234567890");
/// assert!(x.is_negative());
/// assert!(x < I256::ZERO);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Pod, Zeroable)]
#[repr(C)]
pub struct I256([u64; 4]);

impl U256 {
    /// 0.
    ///
    /// ```
    /// assert!(chnative_proto::convert::U256::ZERO.is_zero());
    /// ```
    pub const ZERO: U256 = U256([0; 4]);
    /// 1.
    ///
    /// ```
    /// assert_eq!(chnative_proto::convert::U256::ONE.to_string(), "1");
    /// ```
    pub const ONE: U256 = U256([1, 0, 0, 0]);
    /// 2^256 − 1.
    ///
    /// ```
    /// assert_eq!(chnative_proto::convert::U256::MAX.to_le_bytes(), [0xff; 32]);
    /// ```
    pub const MAX: U256 = U256([u64::MAX; 4]);

    /// From little-endian limbs (least significant first).
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// assert_eq!(U256::from_limbs([0, 1, 0, 0]), U256::from(1u128 << 64));
    /// ```
    pub const fn from_limbs(limbs: [u64; 4]) -> U256 {
        U256(limbs)
    }

    /// The little-endian limbs (least significant first).
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// assert_eq!(U256::from(7u8).limbs(), [7, 0, 0, 0]);
    /// ```
    pub const fn limbs(self) -> [u64; 4] {
        self.0
    }

    /// From the 32 wire bytes (little-endian).
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// let mut b = [0u8; 32];
    /// b[0] = 1;
    /// assert_eq!(U256::from_le_bytes(b), U256::ONE);
    /// ```
    pub fn from_le_bytes(bytes: [u8; 32]) -> U256 {
        U256(limbs_from_le(bytes))
    }

    /// The 32 wire bytes (little-endian).
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// assert_eq!(U256::MAX.to_le_bytes(), [0xff; 32]);
    /// ```
    pub fn to_le_bytes(self) -> [u8; 32] {
        limbs_to_le(self.0)
    }

    /// From 32 big-endian bytes.
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// let mut b = [0u8; 32];
    /// b[31] = 2;
    /// assert_eq!(U256::from_be_bytes(b), U256::from(2u8));
    /// ```
    pub fn from_be_bytes(mut bytes: [u8; 32]) -> U256 {
        bytes.reverse();
        U256::from_le_bytes(bytes)
    }

    /// 32 big-endian bytes.
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// assert_eq!(U256::ONE.to_be_bytes()[31], 1);
    /// ```
    pub fn to_be_bytes(self) -> [u8; 32] {
        let mut b = self.to_le_bytes();
        b.reverse();
        b
    }

    /// True for 0.
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// assert!(U256::ZERO.is_zero() && !U256::ONE.is_zero());
    /// ```
    pub const fn is_zero(self) -> bool {
        self.0[0] == 0 && self.0[1] == 0 && self.0[2] == 0 && self.0[3] == 0
    }

    /// `self + rhs`, or `None` on overflow.
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// assert_eq!(U256::ONE.checked_add(U256::ONE), Some(U256::from(2u8)));
    /// assert_eq!(U256::MAX.checked_add(U256::ONE), None);
    /// ```
    pub fn checked_add(self, rhs: U256) -> Option<U256> {
        let (sum, carry) = add_limbs(self.0, rhs.0);
        (!carry).then_some(U256(sum))
    }

    /// `self − rhs`, or `None` when `rhs > self`.
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// assert_eq!(U256::ZERO.checked_sub(U256::ONE), None);
    /// assert_eq!(U256::ONE.checked_sub(U256::ONE), Some(U256::ZERO));
    /// ```
    pub fn checked_sub(self, rhs: U256) -> Option<U256> {
        let (diff, borrow) = sub_limbs(self.0, rhs.0);
        (!borrow).then_some(U256(diff))
    }

    /// `self × rhs`, or `None` on overflow.
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// let x = U256::from(u128::MAX);
    /// assert_eq!(x.checked_mul(x).unwrap().to_string(), (U256::MAX.checked_sub(x).unwrap().checked_sub(x).unwrap()).to_string());
    /// assert_eq!(U256::MAX.checked_mul(U256::from(2u8)), None);
    /// ```
    pub fn checked_mul(self, rhs: U256) -> Option<U256> {
        let mut out = [0u64; 8];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in rhs.0.iter().enumerate() {
                let t = u128::from(a) * u128::from(b) + u128::from(out[i + j]) + carry;
                out[i + j] = t as u64;
                carry = t >> 64;
            }
            out[i + 4] = carry as u64;
        }
        if out[4..].iter().any(|&l| l != 0) {
            return None;
        }
        Some(U256([out[0], out[1], out[2], out[3]]))
    }

    /// Quotient and remainder of the division by a `u64` (`None` when `d` is 0).
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// assert_eq!(U256::from(100u8).div_rem_u64(7), Some((U256::from(14u8), 2)));
    /// ```
    pub fn div_rem_u64(self, d: u64) -> Option<(U256, u64)> {
        if d == 0 {
            return None;
        }
        let mut q = [0u64; 4];
        let mut rem = 0u128;
        for i in (0..4).rev() {
            let cur = (rem << 64) | u128::from(self.0[i]);
            q[i] = (cur / u128::from(d)) as u64;
            rem = cur % u128::from(d);
        }
        Some((U256(q), rem as u64))
    }

    /// `self × m + a`, or `None` on overflow.
    pub(crate) fn checked_mul_add_u64(self, m: u64, a: u64) -> Option<U256> {
        let mut out = [0u64; 4];
        let mut carry = u128::from(a);
        for (o, &l) in out.iter_mut().zip(self.0.iter()) {
            let t = u128::from(l) * u128::from(m) + carry;
            *o = t as u64;
            carry = t >> 64;
        }
        (carry == 0).then_some(U256(out))
    }

    /// 10^n, or `None` when it does not fit (n > 77).
    ///
    /// ```
    /// use chnative_proto::convert::U256;
    /// assert_eq!(U256::pow10(3), Some(U256::from(1000u16)));
    /// assert!(U256::pow10(77).is_some() && U256::pow10(78).is_none());
    /// ```
    pub fn pow10(n: u32) -> Option<U256> {
        let mut x = U256::ONE;
        let mut left = n;
        while left > 0 {
            let step = left.min(19);
            x = x.checked_mul_add_u64(10u64.pow(step), 0)?;
            left -= step;
        }
        Some(x)
    }

    /// Two's complement negation modulo 2^256.
    pub(crate) fn wrapping_neg(self) -> U256 {
        let inverted = U256([!self.0[0], !self.0[1], !self.0[2], !self.0[3]]);
        U256(add_limbs(inverted.0, U256::ONE.0).0)
    }

    /// The low 128 bits if the value fits in a `u128`.
    fn to_u128(self) -> Option<u128> {
        (self.0[2] == 0 && self.0[3] == 0).then(|| (u128::from(self.0[1]) << 64) | u128::from(self.0[0]))
    }

    /// Decimal digits, most significant first, without sign ("0" for zero).
    pub(crate) fn decimal_digits(self) -> String {
        if self.is_zero() {
            return "0".to_string();
        }
        // Repeated division by 10^19: each remainder is 19 decimal digits.
        let mut chunks = Vec::with_capacity(5);
        let mut x = self;
        while !x.is_zero() {
            let (q, r) = x.div_rem_u64(TEN19).unwrap_or((U256::ZERO, 0));
            chunks.push(r);
            x = q;
        }
        let mut s = String::with_capacity(chunks.len() * 19);
        let mut it = chunks.iter().rev();
        if let Some(first) = it.next() {
            s.push_str(&first.to_string());
        }
        for c in it {
            s.push_str(&format!("{c:019}"));
        }
        s
    }

    /// Parses decimal digits only (no sign, no separators).
    pub(crate) fn parse_digits(s: &str, target: &'static str) -> Result<U256, ConvertError> {
        let bad = |reason| ConvertError::Parse { input: s.to_string(), target, reason };
        if s.is_empty() {
            return Err(bad("no digits"));
        }
        if !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("invalid digit"));
        }
        let mut x = U256::ZERO;
        for chunk in s.as_bytes().chunks(19) {
            let mut v = 0u64;
            for &b in chunk {
                v = v * 10 + u64::from(b - b'0');
            }
            x = x.checked_mul_add_u64(10u64.pow(chunk.len() as u32), v).ok_or_else(|| bad("out of range"))?;
        }
        Ok(x)
    }
}

impl I256 {
    /// 0.
    ///
    /// ```
    /// assert!(chnative_proto::convert::I256::ZERO.is_zero());
    /// ```
    pub const ZERO: I256 = I256([0; 4]);
    /// 1.
    ///
    /// ```
    /// assert_eq!(chnative_proto::convert::I256::ONE.to_string(), "1");
    /// ```
    pub const ONE: I256 = I256([1, 0, 0, 0]);
    /// −1.
    ///
    /// ```
    /// assert_eq!(chnative_proto::convert::I256::MINUS_ONE.to_string(), "-1");
    /// ```
    pub const MINUS_ONE: I256 = I256([u64::MAX; 4]);
    /// −2^255.
    ///
    /// ```
    /// assert!(chnative_proto::convert::I256::MIN.to_string().starts_with("-578960446"));
    /// ```
    pub const MIN: I256 = I256([0, 0, 0, 1 << 63]);
    /// 2^255 − 1.
    ///
    /// ```
    /// assert!(chnative_proto::convert::I256::MAX.to_string().ends_with("819967"));
    /// ```
    pub const MAX: I256 = I256([u64::MAX, u64::MAX, u64::MAX, u64::MAX >> 1]);

    /// From little-endian two's complement limbs (least significant first).
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert_eq!(I256::from_limbs([u64::MAX; 4]), I256::MINUS_ONE);
    /// ```
    pub const fn from_limbs(limbs: [u64; 4]) -> I256 {
        I256(limbs)
    }

    /// The little-endian two's complement limbs (least significant first).
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert_eq!(I256::from(-2i8).limbs(), [u64::MAX - 1, u64::MAX, u64::MAX, u64::MAX]);
    /// ```
    pub const fn limbs(self) -> [u64; 4] {
        self.0
    }

    /// From the 32 wire bytes (little-endian two's complement).
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert_eq!(I256::from_le_bytes([0xff; 32]), I256::MINUS_ONE);
    /// ```
    pub fn from_le_bytes(bytes: [u8; 32]) -> I256 {
        I256(limbs_from_le(bytes))
    }

    /// The 32 wire bytes (little-endian two's complement).
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert_eq!(I256::ONE.to_le_bytes()[0], 1);
    /// ```
    pub fn to_le_bytes(self) -> [u8; 32] {
        limbs_to_le(self.0)
    }

    /// From 32 big-endian bytes.
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert_eq!(I256::from_be_bytes(I256::MIN.to_be_bytes()), I256::MIN);
    /// ```
    pub fn from_be_bytes(mut bytes: [u8; 32]) -> I256 {
        bytes.reverse();
        I256::from_le_bytes(bytes)
    }

    /// 32 big-endian bytes.
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert_eq!(I256::MIN.to_be_bytes()[0], 0x80);
    /// ```
    pub fn to_be_bytes(self) -> [u8; 32] {
        let mut b = self.to_le_bytes();
        b.reverse();
        b
    }

    /// True below zero.
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert!(I256::MIN.is_negative() && !I256::ZERO.is_negative());
    /// ```
    pub const fn is_negative(self) -> bool {
        self.0[3] >> 63 == 1
    }

    /// True for 0.
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert!(I256::ZERO.is_zero());
    /// ```
    pub const fn is_zero(self) -> bool {
        self.0[0] == 0 && self.0[1] == 0 && self.0[2] == 0 && self.0[3] == 0
    }

    /// |self| as a [`U256`] (exact, also for [`I256::MIN`]).
    ///
    /// ```
    /// use chnative_proto::convert::{I256, U256};
    /// assert_eq!(I256::from(-3i8).unsigned_abs(), U256::from(3u8));
    /// assert_eq!(I256::MIN.unsigned_abs().to_string(), "57896044618658097711785492504343953926634992332820282019728792003956564819968");
    /// ```
    pub fn unsigned_abs(self) -> U256 {
        let u = U256(self.0);
        if self.is_negative() {
            u.wrapping_neg()
        } else {
            u
        }
    }

    /// −self, or `None` for [`I256::MIN`].
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert_eq!(I256::ONE.checked_neg(), Some(I256::MINUS_ONE));
    /// assert_eq!(I256::MIN.checked_neg(), None);
    /// ```
    pub fn checked_neg(self) -> Option<I256> {
        (self != I256::MIN).then(|| I256(U256(self.0).wrapping_neg().0))
    }

    /// The value with sign `negative` and magnitude `abs`, or `None` if out of range.
    ///
    /// ```
    /// use chnative_proto::convert::{I256, U256};
    /// assert_eq!(I256::from_sign_abs(true, U256::from(5u8)), Some(I256::from(-5i8)));
    /// assert_eq!(I256::from_sign_abs(false, U256::MAX), None);
    /// ```
    pub fn from_sign_abs(negative: bool, abs: U256) -> Option<I256> {
        let limit = U256(I256::MIN.0); // 2^255
        match (negative, abs.cmp(&limit)) {
            (false, Ordering::Less) => Some(I256(abs.0)),
            (true, Ordering::Less | Ordering::Equal) => Some(I256(abs.wrapping_neg().0)),
            _ => None,
        }
    }

    /// `self + rhs`, or `None` on overflow.
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert_eq!(I256::MINUS_ONE.checked_add(I256::ONE), Some(I256::ZERO));
    /// assert_eq!(I256::MAX.checked_add(I256::ONE), None);
    /// ```
    pub fn checked_add(self, rhs: I256) -> Option<I256> {
        let sum = I256(add_limbs(self.0, rhs.0).0);
        // Overflow iff both operands have the same sign and the sum's differs.
        (self.is_negative() != rhs.is_negative() || sum.is_negative() == self.is_negative()).then_some(sum)
    }

    /// `self − rhs`, or `None` on overflow.
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert_eq!(I256::MIN.checked_sub(I256::ONE), None);
    /// assert_eq!(I256::ZERO.checked_sub(I256::ONE), Some(I256::MINUS_ONE));
    /// ```
    pub fn checked_sub(self, rhs: I256) -> Option<I256> {
        let diff = I256(sub_limbs(self.0, rhs.0).0);
        (self.is_negative() == rhs.is_negative() || diff.is_negative() == self.is_negative()).then_some(diff)
    }

    /// `self × rhs`, or `None` on overflow.
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert_eq!(I256::from(-4i8).checked_mul(I256::from(5i8)), Some(I256::from(-20i8)));
    /// assert_eq!(I256::MIN.checked_mul(I256::MINUS_ONE), None);
    /// ```
    pub fn checked_mul(self, rhs: I256) -> Option<I256> {
        let abs = self.unsigned_abs().checked_mul(rhs.unsigned_abs())?;
        I256::from_sign_abs(self.is_negative() != rhs.is_negative(), abs)
    }

    /// Quotient (truncated toward zero) and remainder (sign of `self`) of the
    /// division by a `u64`; `None` when `d` is 0.
    ///
    /// ```
    /// use chnative_proto::convert::I256;
    /// assert_eq!(I256::from(-7i8).div_rem_u64(2), Some((I256::from(-3i8), -1)));
    /// ```
    pub fn div_rem_u64(self, d: u64) -> Option<(I256, i128)> {
        let (q, r) = self.unsigned_abs().div_rem_u64(d)?;
        let neg = self.is_negative();
        let q = I256::from_sign_abs(neg, q)?;
        Some((q, if neg { -i128::from(r) } else { i128::from(r) }))
    }
}

fn limbs_from_le(bytes: [u8; 32]) -> [u64; 4] {
    let mut l = [0u64; 4];
    for (limb, chunk) in l.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        *limb = u64::from_le_bytes(b);
    }
    l
}

fn limbs_to_le(limbs: [u64; 4]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (chunk, limb) in out.chunks_exact_mut(8).zip(limbs) {
        chunk.copy_from_slice(&limb.to_le_bytes());
    }
    out
}

fn add_limbs(a: [u64; 4], b: [u64; 4]) -> ([u64; 4], bool) {
    let mut out = [0u64; 4];
    let mut carry = false;
    for i in 0..4 {
        let (s1, c1) = a[i].overflowing_add(b[i]);
        let (s2, c2) = s1.overflowing_add(u64::from(carry));
        out[i] = s2;
        carry = c1 || c2;
    }
    (out, carry)
}

fn sub_limbs(a: [u64; 4], b: [u64; 4]) -> ([u64; 4], bool) {
    let mut out = [0u64; 4];
    let mut borrow = false;
    for i in 0..4 {
        let (d1, b1) = a[i].overflowing_sub(b[i]);
        let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
        out[i] = d2;
        borrow = b1 || b2;
    }
    (out, borrow)
}

impl Ord for U256 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.iter().rev().cmp(other.0.iter().rev())
    }
}

impl PartialOrd for U256 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for I256 {
    fn cmp(&self, other: &Self) -> Ordering {
        // Flipping the sign bit maps two's complement order onto unsigned order.
        let key = |x: &I256| U256([x.0[0], x.0[1], x.0[2], x.0[3] ^ (1 << 63)]);
        key(self).cmp(&key(other))
    }
}

impl PartialOrd for I256 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for U256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad_integral(true, "", &self.decimal_digits())
    }
}

impl fmt::Debug for U256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "U256({self})")
    }
}

impl fmt::Display for I256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad_integral(!self.is_negative(), "", &self.unsigned_abs().decimal_digits())
    }
}

impl fmt::Debug for I256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "I256({self})")
    }
}

impl FromStr for U256 {
    type Err = ConvertError;
    /// Decimal digits with an optional leading `+`.
    fn from_str(s: &str) -> Result<U256, ConvertError> {
        U256::parse_digits(s.strip_prefix('+').unwrap_or(s), "UInt256").map_err(|e| e.with_input(s))
    }
}

impl FromStr for I256 {
    type Err = ConvertError;
    /// Decimal digits with an optional leading `+` or `-`.
    fn from_str(s: &str) -> Result<I256, ConvertError> {
        let (neg, digits) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let abs = U256::parse_digits(digits, "Int256").map_err(|e| e.with_input(s))?;
        I256::from_sign_abs(neg, abs).ok_or_else(|| ConvertError::Parse {
            input: s.to_string(),
            target: "Int256",
            reason: "out of range",
        })
    }
}

macro_rules! from_unsigned {
    ($($t:ty),*) => {$(
        impl From<$t> for U256 {
            fn from(v: $t) -> U256 {
                let v = v as u128;
                U256([v as u64, (v >> 64) as u64, 0, 0])
            }
        }
        impl From<$t> for I256 {
            fn from(v: $t) -> I256 {
                I256(U256::from(v).0)
            }
        }
    )*};
}
from_unsigned!(u8, u16, u32, u64, u128);

macro_rules! from_signed {
    ($($t:ty),*) => {$(
        impl From<$t> for I256 {
            fn from(v: $t) -> I256 {
                let v = v as i128;
                let ext = if v < 0 { u64::MAX } else { 0 };
                I256([v as u64, (v >> 64) as u64, ext, ext])
            }
        }
    )*};
}
from_signed!(i8, i16, i32, i64, i128);

impl TryFrom<I256> for i128 {
    type Error = ConvertError;
    fn try_from(v: I256) -> Result<i128, ConvertError> {
        let lo = (u128::from(v.0[1]) << 64 | u128::from(v.0[0])) as i128;
        if I256::from(lo) == v {
            Ok(lo)
        } else {
            Err(ConvertError::out_of_range(v, "i128"))
        }
    }
}

impl TryFrom<I256> for i64 {
    type Error = ConvertError;
    fn try_from(v: I256) -> Result<i64, ConvertError> {
        i128::try_from(v).ok().and_then(|x| i64::try_from(x).ok()).ok_or_else(|| ConvertError::out_of_range(v, "i64"))
    }
}

impl TryFrom<I256> for i32 {
    type Error = ConvertError;
    fn try_from(v: I256) -> Result<i32, ConvertError> {
        i128::try_from(v).ok().and_then(|x| i32::try_from(x).ok()).ok_or_else(|| ConvertError::out_of_range(v, "i32"))
    }
}

impl TryFrom<U256> for u128 {
    type Error = ConvertError;
    fn try_from(v: U256) -> Result<u128, ConvertError> {
        v.to_u128().ok_or_else(|| ConvertError::out_of_range(v, "u128"))
    }
}

impl TryFrom<U256> for u64 {
    type Error = ConvertError;
    fn try_from(v: U256) -> Result<u64, ConvertError> {
        v.to_u128().and_then(|x| u64::try_from(x).ok()).ok_or_else(|| ConvertError::out_of_range(v, "u64"))
    }
}

impl TryFrom<U256> for I256 {
    type Error = ConvertError;
    fn try_from(v: U256) -> Result<I256, ConvertError> {
        I256::from_sign_abs(false, v).ok_or_else(|| ConvertError::out_of_range(v, "Int256"))
    }
}

impl TryFrom<I256> for U256 {
    type Error = ConvertError;
    fn try_from(v: I256) -> Result<U256, ConvertError> {
        if v.is_negative() {
            Err(ConvertError::out_of_range(v, "UInt256"))
        } else {
            Ok(U256(v.0))
        }
    }
}

impl FixedValue for I256 {
    const RUST_NAME: &'static str = "I256";
    fn accepts(ty: &DataType) -> bool {
        matches!(ty, DataType::Int256 | DataType::Decimal { precision: 39.., .. })
    }
}

impl FixedValue for U256 {
    const RUST_NAME: &'static str = "U256";
    fn accepts(ty: &DataType) -> bool {
        matches!(ty, DataType::UInt256)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_order() {
        let samples = [
            "0",
            "1",
            "-1",
            "9999999999999999999",
            "10000000000000000000",
            "-10000000000000000000",
            "340282366920938463463374607431768211455",
            "340282366920938463463374607431768211456",
            "-170141183460469231731687303715884105729",
            "57896044618658097711785492504343953926634992332820282019728792003956564819967",
            "-57896044618658097711785492504343953926634992332820282019728792003956564819968",
        ];
        let mut parsed: Vec<I256> = samples.iter().map(|s| s.parse().unwrap()).collect();
        for (s, v) in samples.iter().zip(&parsed) {
            assert_eq!(v.to_string(), *s);
            assert_eq!(I256::from_le_bytes(v.to_le_bytes()), *v);
        }
        assert!("57896044618658097711785492504343953926634992332820282019728792003956564819968"
            .parse::<I256>()
            .is_err());
        assert!("-57896044618658097711785492504343953926634992332820282019728792003956564819969"
            .parse::<I256>()
            .is_err());
        assert!("".parse::<I256>().is_err() && "-".parse::<I256>().is_err() && "1a".parse::<I256>().is_err());
        parsed.sort();
        let as_f64: Vec<f64> = parsed.iter().map(|v| v.to_string().parse::<f64>().unwrap()).collect();
        assert!(as_f64.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(format!("{:>6}", I256::from(-12i8)), "   -12");
        assert_eq!(format!("{:+}", I256::from(12i8)), "+12");
    }

    #[test]
    fn small_conversions() {
        for v in [0i128, 1, -1, i128::MAX, i128::MIN, 12345678901234567890] {
            assert_eq!(I256::from(v).to_string(), v.to_string());
            assert_eq!(i128::try_from(I256::from(v)).unwrap(), v);
        }
        assert!(i128::try_from(I256::from(u128::MAX)).is_err());
        assert_eq!(u128::try_from(U256::from(u128::MAX)).unwrap(), u128::MAX);
        assert!(u128::try_from(U256::MAX).is_err());
        assert_eq!(U256::MAX.to_string().parse::<U256>().unwrap(), U256::MAX);
        assert!("115792089237316195423570985008687907853269984665640564039457584007913129639936"
            .parse::<U256>()
            .is_err());
        assert_eq!(I256::from(-7i8).checked_mul(I256::from(-3i8)), Some(I256::from(21i8)));
    }
}
