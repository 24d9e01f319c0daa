//! Wire primitives: LEB128 VarUInt, length-prefixed strings, little-endian scalars.
//!
//! [`Reader`] is a cursor over bytes the caller already holds. When the bytes run
//! out it fails with [`ProtoError::Incomplete`] carrying a lower bound on the total
//! input length, so a caller can read more and decode again from the start.
//!
//! A reader also carries the decode's memory budget: decoders charge it before
//! allocating what they will fill, so a few wire bytes that expand into many
//! (sparse defaults, replicated rows, collapsed Variant granules) are refused
//! before the allocation, not after.

use crate::error::{ProtoError, Result};

/// Cursor over a byte slice.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    budget: Budget,
}

/// How many decoded bytes a decode may still allocate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The most a decode may allocate in total.
    pub limit: u64,
    /// What it has allocated so far.
    pub used: u64,
}

impl Budget {
    /// No limit (what a plain [`Reader::new`] has).
    pub const UNLIMITED: Budget = Budget { limit: u64::MAX, used: 0 };

    /// A budget of `limit` bytes, none used.
    pub fn new(limit: u64) -> Budget {
        Budget { limit, used: 0 }
    }

    /// Records `n` more bytes, or fails without recording them when they do not fit.
    #[inline]
    pub fn charge(&mut self, n: usize) -> Result<()> {
        let total = self.used.saturating_add(n as u64);
        if total > self.limit {
            return Err(ProtoError::TooLarge { what: "decoded block bytes", got: total, limit: self.limit });
        }
        self.used = total;
        Ok(())
    }

    /// [`Budget::charge`] for `count × width` bytes, failing on overflow.
    #[inline]
    pub fn charge_n(&mut self, count: usize, width: usize) -> Result<()> {
        self.charge(count.saturating_mul(width))
    }
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`, with no memory budget.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0, budget: Budget::UNLIMITED }
    }

    /// The memory budget decoders charge before allocating.
    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// Replaces the memory budget.
    pub fn set_budget(&mut self, budget: Budget) {
        self.budget = budget;
    }

    /// Charges `n` decoded bytes to the budget; see [`Budget::charge`].
    #[inline]
    pub fn charge(&mut self, n: usize) -> Result<()> {
        self.budget.charge(n)
    }

    /// Charges `count × width` decoded bytes to the budget.
    #[inline]
    pub fn charge_n(&mut self, count: usize, width: usize) -> Result<()> {
        self.budget.charge_n(count, width)
    }

    pub(crate) fn budget_mut(&mut self) -> &mut Budget {
        &mut self.budget
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Moves back (or forward) to `pos`, which must lie within the input.
    pub(crate) fn set_position(&mut self, pos: usize) {
        self.pos = pos.min(self.buf.len());
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Fails with `Incomplete` unless `n` more bytes are available.
    #[inline]
    pub fn need(&self, n: usize) -> Result<()> {
        if self.remaining() < n {
            return Err(ProtoError::Incomplete { needed: self.pos.saturating_add(n) });
        }
        Ok(())
    }

    /// The input not yet read (the position does not move).
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Takes the next `n` bytes.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        self.need(n)?;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Takes exactly `N` bytes as an array.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// One byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8> {
        self.need(1)?;
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(b)
    }

    /// A 0/1 flag (non-zero reads as true, as the server's reader does).
    pub fn bool(&mut self) -> Result<bool> {
        Ok(self.u8()? != 0)
    }

    /// Little-endian u32.
    pub fn u32_le(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// Little-endian i32.
    pub fn i32_le(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array()?))
    }

    /// Little-endian u64.
    pub fn u64_le(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// Unsigned LEB128, at most 10 bytes.
    #[inline]
    pub fn varuint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let b = self.u8()?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ProtoError::violation("VarUInt longer than 10 bytes"))
    }

    /// A VarUInt that must fit `limit`; used for every count that sizes an allocation.
    pub fn varuint_bounded(&mut self, what: &'static str, limit: u64) -> Result<usize> {
        let v = self.varuint()?;
        if v > limit {
            return Err(ProtoError::TooLarge { what, got: v, limit });
        }
        usize::try_from(v).map_err(|_| ProtoError::TooLarge { what, got: v, limit: usize::MAX as u64 })
    }

    /// A length-prefixed byte string of at most `limit` bytes, borrowed from the input.
    pub fn string_bytes(&mut self, limit: u64) -> Result<&'a [u8]> {
        let n = self.varuint_bounded("string length", limit)?;
        self.bytes(n)
    }

    /// A length-prefixed string that must be UTF-8 (packet metadata, names, types).
    pub fn string(&mut self, limit: u64) -> Result<&'a str> {
        let b = self.string_bytes(limit)?;
        std::str::from_utf8(b).map_err(|_| ProtoError::violation("string is not UTF-8"))
    }

    /// An owned UTF-8 string (lossless; invalid UTF-8 is a violation).
    pub fn string_owned(&mut self, limit: u64) -> Result<String> {
        self.string(limit).map(str::to_owned)
    }

    /// An owned string, replacing invalid UTF-8 (for human-readable text such as messages).
    pub fn string_lossy(&mut self, limit: u64) -> Result<String> {
        let b = self.string_bytes(limit)?;
        Ok(String::from_utf8_lossy(b).into_owned())
    }
}

/// Appends wire primitives to a `Vec<u8>`.
pub trait WriteExt {
    /// Unsigned LEB128.
    fn put_varuint(&mut self, v: u64);
    /// VarUInt length + bytes.
    fn put_string(&mut self, s: impl AsRef<[u8]>);
    /// One byte.
    fn put_u8(&mut self, v: u8);
    /// Little-endian u32.
    fn put_u32_le(&mut self, v: u32);
    /// Little-endian i32.
    fn put_i32_le(&mut self, v: i32);
    /// Little-endian u64.
    fn put_u64_le(&mut self, v: u64);
}

impl WriteExt for Vec<u8> {
    #[inline]
    fn put_varuint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.push(v as u8);
    }
    fn put_string(&mut self, s: impl AsRef<[u8]>) {
        let s = s.as_ref();
        self.put_varuint(s.len() as u64);
        self.extend_from_slice(s);
    }
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    fn put_u32_le(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_i32_le(&mut self, v: i32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64_le(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varuint_round_trip() {
        for v in [0u64, 1, 127, 128, 300, 54492, u32::MAX as u64, u64::MAX >> 1, u64::MAX] {
            let mut b = Vec::new();
            b.put_varuint(v);
            let mut r = Reader::new(&b);
            assert_eq!(r.varuint().unwrap(), v);
            assert_eq!(r.remaining(), 0);
        }
        let mut b = Vec::new();
        b.put_varuint(54492);
        assert_eq!(b, [0xDC, 0xA9, 0x03]);
    }

    #[test]
    fn incomplete_reports_total_needed() {
        let mut r = Reader::new(&[3, b'a']);
        assert_eq!(r.string(10), Err(ProtoError::Incomplete { needed: 4 }));
    }

    #[test]
    fn overlong_varuint_is_violation() {
        let b = [0xffu8; 11];
        assert!(matches!(Reader::new(&b).varuint(), Err(ProtoError::Violation(_))));
    }

    #[test]
    fn bounded_string() {
        let mut b = Vec::new();
        b.put_string("hello");
        assert!(matches!(Reader::new(&b).string(4), Err(ProtoError::TooLarge { .. })));
    }
}
