//! Exact conversions between number types: the one place that says which
//! number columns a Rust number type holds, in both directions.
//!
//! A Rust number type *reads* its own column type and every narrower one whose
//! values it holds without loss ([`Widen`]: UInt8 into `u64`, Float32 into
//! `f64`, Date's `u16` days into `i32`, …). It *writes* to the same columns: the
//! value must then fit the narrower column exactly ([`Narrow`]; `300_i64` into
//! an Int8 column, `0.1_f64` into Float32 or `1.1_f32` into BFloat16 are
//! errors, never silently changed values). So every pair that reads also
//! writes, and a value read from a column writes back to it unchanged.
//!
//! ```
//! use chnative_proto::convert::exact::{Narrow, Widen};
//! assert_eq!(<u8 as Widen<i64>>::widen(200), 200_i64);
//! assert_eq!(Narrow::<u8>::narrow(200_i64), Some(200));
//! assert_eq!(Narrow::<u8>::narrow(300_i64), None);
//! assert_eq!(Narrow::<f32>::narrow(0.5_f64), Some(0.5));
//! assert_eq!(Narrow::<f32>::narrow(0.1_f64), None);
//! ```

use super::{bf16, I256, U256};

/// `Self` widened into `T` without loss.
pub trait Widen<T> {
    /// The same value as a `T`.
    fn widen(self) -> T;
}

/// `Self` narrowed into `W` when the value fits exactly (`None` when it does not).
pub trait Narrow<W> {
    /// The same value as a `W`, if `W` holds it.
    fn narrow(self) -> Option<W>;
}

/// Integers: `From` widens, `TryFrom` narrows (the standard library implements
/// both exactly for these pairs).
macro_rules! int_pairs {
    ($($wide:ty: [$($narrow:ty),*];)*) => {$($(
        impl Widen<$wide> for $narrow {
            #[inline(always)]
            fn widen(self) -> $wide {
                <$wide>::from(self)
            }
        }
        impl Narrow<$narrow> for $wide {
            #[inline(always)]
            fn narrow(self) -> Option<$narrow> {
                <$narrow>::try_from(self).ok()
            }
        }
    )*)*};
}

int_pairs! {
    u16: [u8];
    u32: [u8, u16];
    u64: [u8, u16, u32];
    u128: [u8, u16, u32, u64];
    U256: [u8, u16, u32, u64, u128];
    i16: [i8, u8];
    i32: [i8, i16, u8, u16];
    i64: [i8, i16, i32, u8, u16, u32];
    i128: [i8, i16, i32, i64, u8, u16, u32, u64];
    I256: [i8, i16, i32, i64, i128, u8, u16, u32, u64, u128];
}

/// The 256-bit integers narrow through the 128-bit ones (of their own sign:
/// an Int256 narrows to a `u128` through UInt256, since `i128` does not hold
/// the upper half of UInt128).
macro_rules! via128 {
    ($wide:ty => $mid:ty: $($narrow:ty),*) => {$(
        impl TryFrom<$wide> for $narrow {
            type Error = super::ConvertError;
            fn try_from(v: $wide) -> Result<$narrow, super::ConvertError> {
                <$mid>::try_from(v)
                    .ok()
                    .and_then(|x| <$narrow>::try_from(x).ok())
                    .ok_or_else(|| super::ConvertError::out_of_range(v, stringify!($narrow)))
            }
        }
    )*};
}
via128!(U256 => u128: u8, u16, u32);
via128!(I256 => i128: i8, i16, u8, u16, u32, u64);
via128!(I256 => U256: u128);

impl Widen<f64> for f32 {
    #[inline(always)]
    fn widen(self) -> f64 {
        f64::from(self)
    }
}

impl Narrow<f32> for f64 {
    /// Exact when the `f64` is an `f32` value (NaN stays NaN).
    #[inline]
    fn narrow(self) -> Option<f32> {
        let n = self as f32;
        (f64::from(n) == self || self.is_nan()).then_some(n)
    }
}

/// A BFloat16 column's bits, as the wire holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bf16Bits(pub u16);

impl Widen<f32> for Bf16Bits {
    #[inline(always)]
    fn widen(self) -> f32 {
        bf16::to_f32(self.0)
    }
}

impl Widen<f64> for Bf16Bits {
    #[inline(always)]
    fn widen(self) -> f64 {
        f64::from(bf16::to_f32(self.0))
    }
}

impl Narrow<Bf16Bits> for f32 {
    /// Exact when the low 16 bits of the `f32` are zero (NaN stays NaN).
    #[inline]
    fn narrow(self) -> Option<Bf16Bits> {
        if self.is_nan() {
            return Some(Bf16Bits(bf16::from_f32(self)));
        }
        (self.to_bits() & 0xffff == 0).then_some(Bf16Bits((self.to_bits() >> 16) as u16))
    }
}

impl Narrow<Bf16Bits> for f64 {
    #[inline]
    fn narrow(self) -> Option<Bf16Bits> {
        Narrow::<f32>::narrow(self).and_then(Narrow::<Bf16Bits>::narrow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_widened_value_narrows_back() {
        for v in [0u8, 1, 127, 128, 255] {
            let w: I256 = v.widen();
            assert_eq!(Narrow::<u8>::narrow(w), Some(v));
            let w: i16 = v.widen();
            assert_eq!(Narrow::<u8>::narrow(w), Some(v));
        }
        for v in [i8::MIN, -1, 0, i8::MAX] {
            let w: i64 = v.widen();
            assert_eq!(Narrow::<i8>::narrow(w), Some(v));
            let w: I256 = v.widen();
            assert_eq!(Narrow::<i8>::narrow(w), Some(v));
        }
        for bits in [0u16, 0x3f80, 0xbf8c, 0x7f80, 0xff80, 0x0001] {
            let f: f32 = Bf16Bits(bits).widen();
            assert_eq!(Narrow::<Bf16Bits>::narrow(f), Some(Bf16Bits(bits)));
            let d: f64 = Bf16Bits(bits).widen();
            assert_eq!(Narrow::<Bf16Bits>::narrow(d), Some(Bf16Bits(bits)));
        }
        for v in [0.0f32, -1.5, f32::MAX, f32::MIN_POSITIVE, f32::INFINITY] {
            assert_eq!(Narrow::<f32>::narrow(v.widen()), Some(v));
        }
    }

    #[test]
    fn values_that_do_not_fit_are_refused() {
        assert_eq!(Narrow::<i8>::narrow(128i64), None);
        assert_eq!(Narrow::<u8>::narrow(-1i16), None);
        assert_eq!(Narrow::<u32>::narrow(I256::from(-1i8)), None);
        assert_eq!(Narrow::<u64>::narrow(U256::from(u128::MAX)), None);
        assert_eq!(Narrow::<f32>::narrow(0.1f64), None);
        assert_eq!(Narrow::<Bf16Bits>::narrow(1.1f32), None);
        assert!(Narrow::<f32>::narrow(f64::NAN).is_some_and(f32::is_nan));
    }

    #[test]
    fn int256_narrows_into_the_upper_half_of_uint128() {
        // Regression (issue 29): the narrowing went through i128, which refused
        // every UInt128 value at or above 2^127.
        for v in [1u128 << 127, u128::MAX - 1, u128::MAX, 340_282_366_920_938_463_463_374_607_431_768_211_000] {
            assert_eq!(Narrow::<u128>::narrow(<u128 as Widen<I256>>::widen(v)), Some(v));
        }
        assert_eq!(Narrow::<u128>::narrow(I256::from_limbs([0, 0, 1, 0])), None);
        assert_eq!(Narrow::<u128>::narrow(I256::from(-1i8)), None);
    }

    /// The value of 256-bit limbs (two's complement when `signed`), as a sign and
    /// magnitude limbs, to decide by hand which narrower types hold it.
    fn fits(limbs: [u64; 4], signed: bool, bits: u32, target_signed: bool) -> bool {
        let negative = signed && limbs[3] >> 63 == 1;
        if negative {
            if !target_signed {
                return false;
            }
            // -x fits iN when every bit above bit (bits-1) is one.
            let v = I256::from_limbs(limbs);
            let lo = i128::try_from(v).ok();
            return lo.is_some_and(|x| bits == 128 || x >= -(1i128 << (bits - 1)));
        }
        let width = if target_signed { bits - 1 } else { bits };
        limbs.iter().enumerate().all(|(k, &limb)| {
            let start = 64 * k as u32;
            if start >= width {
                limb == 0
            } else if start + 64 > width {
                limb >> (width - start) == 0
            } else {
                true
            }
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]
        /// Every 256-bit value narrows into each narrower integer exactly when the
        /// narrower type holds it, and every narrower value round-trips.
        #[test]
        fn wide_integers_narrow_exactly_when_they_fit(
            l0 in proptest::prelude::any::<u64>(),
            l1 in proptest::prelude::any::<u64>(),
            l2 in proptest::prelude::any::<u64>(),
            l3 in proptest::prelude::any::<u64>(),
            fill in 0u8..16,
        ) {
            // Narrow values are as likely as wide ones: some high limbs are all
            // zeros (or, with bit 0 of `fill`, all ones: small negative values).
            let mut limbs = [l0, l1, l2, l3];
            let with = if fill & 1 == 1 { u64::MAX } else { 0 };
            for (k, limb) in limbs.iter_mut().enumerate().skip(1) {
                if fill & (1 << k) != 0 {
                    *limb = with;
                }
            }
            let s = I256::from_limbs(limbs);
            let u = U256::from_limbs(limbs);
            macro_rules! check {
                ($w:expr, $wt:ty, $signed:expr, $($t:ty: $bits:expr, $ts:expr);*) => {$(
                    let got: Option<$t> = Narrow::<$t>::narrow($w);
                    proptest::prop_assert_eq!(got.is_some(), fits(limbs, $signed, $bits, $ts), "{} into {}", $w, stringify!($t));
                    if let Some(x) = got {
                        proptest::prop_assert_eq!(<$t as Widen<$wt>>::widen(x), $w);
                    }
                )*};
            }
            check!(s, I256, true, i8: 8, true; i16: 16, true; i32: 32, true; i64: 64, true; i128: 128, true;
                u8: 8, false; u16: 16, false; u32: 32, false; u64: 64, false; u128: 128, false);
            check!(u, U256, false, u8: 8, false; u16: 16, false; u32: 32, false; u64: 64, false; u128: 128, false);
        }
    }
}
