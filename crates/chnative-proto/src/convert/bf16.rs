//! `BFloat16` ↔ `f32`.
//!
//! A `BFloat16` is the upper 16 bits of an IEEE `f32`, so widening is exact.
//! Narrowing has two flavours: [`from_f32`] rounds to nearest, ties to even (the
//! IEEE rule, the closest value), and [`from_f32_truncate`] drops the low bits,
//! which is what ClickHouse 26.9 itself does (`toBFloat16(1.1)` is `1.09375`,
//! not the nearer `1.1015625`; CAST and text input alike).
//!
//! ```
//! use chnative_proto::convert::bf16;
//! assert_eq!(bf16::to_f32(0x3f8c), 1.09375);
//! assert_eq!(bf16::from_f32(1.1), 0x3f8d); // nearest
//! assert_eq!(bf16::from_f32_truncate(1.1), 0x3f8c); // the server's result
//! assert!(bf16::to_f32(bf16::from_f32(f32::NAN)).is_nan());
//! ```

/// `BFloat16` bits → `f32` (exact).
///
/// ```
/// assert_eq!(chnative_proto::convert::bf16::to_f32(0xc000), -2.0);
/// ```
pub fn to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// `f32` → `BFloat16` bits, rounding to nearest with ties to even. NaNs stay NaN
/// (quiet, sign kept); values beyond the largest finite `BFloat16` become ±inf.
///
/// ```
/// use chnative_proto::convert::bf16::from_f32;
/// assert_eq!(from_f32(1.0 + 1.0 / 256.0), 0x3f80); // tie → even
/// assert_eq!(from_f32(1.0 + 3.0 / 256.0), 0x3f82); // tie → even
/// assert_eq!(from_f32(f32::MAX), 0x7f80); // +inf
/// ```
pub fn from_f32(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) as u16) | 0x0040;
    }
    let lsb = (bits >> 16) & 1;
    (bits.wrapping_add(0x7fff + lsb) >> 16) as u16
}

/// `f32` → `BFloat16` bits by dropping the low 16 bits (round toward zero), as
/// ClickHouse converts. NaNs stay NaN: a NaN whose payload is only in the low
/// 16 bits would truncate to ±inf (the server does turn it into ±inf); here it
/// becomes a quiet NaN instead.
///
/// ```
/// use chnative_proto::convert::bf16::from_f32_truncate;
/// assert_eq!(from_f32_truncate(1.9), 0x3ff3); // 1.8984375
/// assert_eq!(from_f32_truncate(-1.1), 0xbf8c);
/// assert_eq!(from_f32_truncate(f32::from_bits(0x7f80_0001)), 0x7fc0); // the server says inf (0x7f80)
/// ```
pub fn from_f32_truncate(x: f32) -> u16 {
    let hi = (x.to_bits() >> 16) as u16;
    if x.is_nan() && hi & 0x007f == 0 {
        hi | 0x0040
    } else {
        hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_even_is_nearest() {
        // Exhaustive over a band of f32 bit patterns around 1.0 and near the top.
        for bits in (0x3f00_0000u32..0x4080_0000).step_by(97).chain(0x7f7f_0000..0x7f80_0000) {
            let x = f32::from_bits(bits);
            let r = from_f32(x);
            let (lo, hi) = ((bits >> 16) as u16, ((bits >> 16) + 1) as u16);
            // Distances in f64; the successor of the largest finite value is 2^128 (→ inf).
            let val = |b: u16| if b == 0x7f80 { 2f64.powi(128) } else { f64::from(to_f32(b)) };
            let (dl, dh) = (f64::from(x) - val(lo), val(hi) - f64::from(x));
            let want = if dl < dh {
                lo
            } else if dh < dl {
                hi
            } else if lo % 2 == 0 {
                lo
            } else {
                hi
            };
            assert_eq!(r, want, "{x:e}");
        }
        assert_eq!(from_f32(-0.0), 0x8000);
        assert_eq!(from_f32(f32::INFINITY), 0x7f80);
        assert_eq!(from_f32(f32::NEG_INFINITY), 0xff80);
        assert_eq!(from_f32(f32::from_bits(0x7f80_0001)) & 0x7fc0, 0x7fc0); // signalling NaN stays NaN
    }
}
