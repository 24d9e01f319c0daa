//! ClickHouse compressed-frame framing (the `compression=1` part of the native protocol).
//!
//! When compression is negotiated, the bytes of every data block travel as a
//! sequence of self-contained frames. Each frame is
//!
//! ```text
//! [16 B checksum][1 B method][u32 LE compressed_size][u32 LE uncompressed_size][body]
//! ```
//!
//! where `compressed_size` counts the 9-byte header plus the body (not the
//! checksum) and the checksum is [`city_hash128`] (CityHash v1.0.2) of
//! everything after it, stored as low64 LE then high64 LE. The method byte
//! selects the codec: `0x02` raw, `0x82` LZ4 block format, `0x90` one zstd
//! frame. The server reads frames of any of these three; it refuses a frame
//! whose `compressed_size` is below 9 or above 1 GiB.
//!
//! This module is sans-IO: the caller reads [`FRAME_PREFIX_LEN`] bytes, calls
//! [`FrameHeader::parse`] to learn [`FrameHeader::frame_len`], reads the rest
//! and hands the whole frame to [`decompress_frame`]. Writing goes the other
//! way with [`compress_frame`] / [`compress_frames`], which append straight
//! into the caller's buffer.

use std::cell::RefCell;
use std::io::Cursor;

use crate::cityhash::city_hash128;
use crate::error::{ProtoError, Result};

/// Bytes of the CityHash128 checksum that starts every frame.
pub const CHECKSUM_LEN: usize = 16;
/// Bytes of the header covered by the checksum: method byte plus two u32 sizes.
pub const HEADER_LEN: usize = 9;
/// Bytes a reader needs before it knows a frame's length: checksum plus header.
pub const FRAME_PREFIX_LEN: usize = CHECKSUM_LEN + HEADER_LEN;
/// Largest `compressed_size` the server accepts (1 GiB); also our default bound.
pub const MAX_FRAME_SIZE: u32 = 1 << 30;

const BYTE_NONE: u8 = 0x02;
const BYTE_LZ4: u8 = 0x82;
const BYTE_ZSTD: u8 = 0x90;

/// Upper bound of the LZ4 block format's expansion: every input byte yields at
/// most 255 output bytes (a match-length continuation byte adds 255). Used to
/// refuse absurd `uncompressed_size` claims before allocating for them.
const LZ4_MAX_RATIO: usize = 255;

/// The codec to compress outgoing frames with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Method {
    /// No compression: the body is the raw bytes (method byte `0x02`).
    None,
    /// LZ4 block format, the server's default codec (method byte `0x82`).
    Lz4,
    /// Zstandard at the given level (method byte `0x90`); level 0 means zstd's
    /// default, the server itself defaults to level 1.
    Zstd {
        /// zstd compression level.
        level: i32,
    },
}

impl Method {
    /// The method byte written into frames of this codec.
    pub fn byte(self) -> u8 {
        match self {
            Method::None => BYTE_NONE,
            Method::Lz4 => BYTE_LZ4,
            Method::Zstd { .. } => BYTE_ZSTD,
        }
    }
}

/// Name of a codec byte the server knows but a frame on the wire must not
/// carry (column codecs), for error messages.
fn codec_name(byte: u8) -> &'static str {
    match byte {
        0x91 => "Multiple",
        0x92 => "Delta",
        0x93 => "T64",
        0x94 => "DoubleDelta",
        0x95 => "Gorilla",
        0x96 => "AES_128_GCM_SIV",
        0x97 => "AES_256_GCM_SIV",
        0x98 => "FPC",
        0x99 => "DeflateQpl",
        0x9a => "GCD",
        0x9b => "ZSTD_QPL",
        0x9c => "SZ3",
        _ => "unknown",
    }
}

/// The 25-byte prefix of a frame, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// CityHash128 of the frame from the method byte to the end of the body,
    /// as `low64 | high64 << 64`.
    pub checksum: u128,
    /// Method byte (`0x02`, `0x82` or `0x90` once parsed).
    pub method: u8,
    /// Header plus body length: `HEADER_LEN + body.len()`.
    pub compressed_size: u32,
    /// Length of the body once decompressed.
    pub uncompressed_size: u32,
}

impl FrameHeader {
    /// Parses the 25-byte prefix of a frame.
    ///
    /// Checks `9 <= compressed_size <= max_frame` (below 9 is a
    /// [`ProtoError::Violation`], above the bound [`ProtoError::TooLarge`]),
    /// `uncompressed_size <= max_frame` ([`ProtoError::TooLarge`]), and that the
    /// method byte is `0x02`, `0x82` or `0x90`; any other codec byte is a
    /// [`ProtoError::Compression`] naming the byte. Pass [`MAX_FRAME_SIZE`] as
    /// `max_frame` to apply the server's own bound.
    pub fn parse(prefix: &[u8; FRAME_PREFIX_LEN], max_frame: u32) -> Result<FrameHeader> {
        let header = FrameHeader::read(prefix);
        if (header.compressed_size as usize) < HEADER_LEN {
            return Err(ProtoError::violation(format_args!(
                "compressed frame size {} is smaller than its {HEADER_LEN}-byte header",
                header.compressed_size
            )));
        }
        if header.compressed_size > max_frame {
            return Err(ProtoError::TooLarge {
                what: "compressed frame size",
                got: header.compressed_size.into(),
                limit: max_frame.into(),
            });
        }
        if header.uncompressed_size > max_frame {
            return Err(ProtoError::TooLarge {
                what: "uncompressed frame size",
                got: header.uncompressed_size.into(),
                limit: max_frame.into(),
            });
        }
        match header.method {
            BYTE_NONE | BYTE_LZ4 | BYTE_ZSTD => Ok(header),
            other => Err(ProtoError::Compression(format!(
                "unsupported compression method byte 0x{other:02x} ({})",
                codec_name(other)
            ))),
        }
    }

    /// Total bytes of the frame on the wire = 16 + compressed_size.
    pub fn frame_len(&self) -> usize {
        CHECKSUM_LEN.saturating_add(self.compressed_size as usize)
    }

    /// Field split of a prefix, no validation.
    fn read(prefix: &[u8; FRAME_PREFIX_LEN]) -> FrameHeader {
        let (checksum, rest) = prefix.split_at(CHECKSUM_LEN);
        let mut c = [0u8; CHECKSUM_LEN];
        c.copy_from_slice(checksum);
        let u32_at = |at: usize| u32::from_le_bytes([rest[at], rest[at + 1], rest[at + 2], rest[at + 3]]);
        FrameHeader {
            // low64 LE followed by high64 LE is exactly the u128 in LE.
            checksum: u128::from_le_bytes(c),
            method: rest[0],
            compressed_size: u32_at(1),
            uncompressed_size: u32_at(5),
        }
    }
}

/// Verifies and decodes one whole frame, appending its bytes to `out`.
///
/// `frame` is the prefix plus body, exactly [`FrameHeader::frame_len`] bytes
/// (shorter gives [`ProtoError::Incomplete`], longer a
/// [`ProtoError::Violation`]), and `header` must be the parse of its first
/// [`FRAME_PREFIX_LEN`] bytes (a mismatch is a [`ProtoError::Violation`]). A
/// wrong checksum is [`ProtoError::Checksum`]; the codec named by the frame's
/// own method byte must then yield exactly `uncompressed_size` bytes, anything
/// else (including any decoder failure) is [`ProtoError::Compression`].
///
/// Never panics, whatever the bytes; on any error `out` is left as it was.
pub fn decompress_frame(header: &FrameHeader, frame: &[u8], out: &mut Vec<u8>) -> Result<()> {
    if (header.compressed_size as usize) < HEADER_LEN {
        return Err(ProtoError::violation(format_args!(
            "compressed frame size {} is smaller than its {HEADER_LEN}-byte header",
            header.compressed_size
        )));
    }
    let want = header.frame_len();
    if frame.len() < want {
        return Err(ProtoError::Incomplete { needed: want });
    }
    if frame.len() > want {
        return Err(ProtoError::violation(format_args!(
            "compressed frame given as {} bytes but its header says {want}",
            frame.len()
        )));
    }
    let Some(prefix) = frame.first_chunk::<FRAME_PREFIX_LEN>() else {
        // Unreachable: want >= FRAME_PREFIX_LEN was checked above.
        return Err(ProtoError::Incomplete { needed: FRAME_PREFIX_LEN });
    };
    if FrameHeader::read(prefix) != *header {
        return Err(ProtoError::violation("compressed frame prefix does not match its header"));
    }

    let computed = city_hash128(&frame[CHECKSUM_LEN..]);
    if computed != header.checksum {
        return Err(ProtoError::Checksum { expected: header.checksum, computed });
    }

    let body = &frame[FRAME_PREFIX_LEN..];
    let n = header.uncompressed_size as usize;
    match header.method {
        BYTE_NONE => {
            if body.len() != n {
                return Err(ProtoError::Compression(format!(
                    "uncompressed frame body has {} bytes but its header says {n}",
                    body.len()
                )));
            }
            out.extend_from_slice(body);
            Ok(())
        }
        BYTE_LZ4 => decompress_lz4(body, n, out),
        BYTE_ZSTD => decompress_zstd(body, n, out),
        other => Err(ProtoError::Compression(format!(
            "unsupported compression method byte 0x{other:02x} ({})",
            codec_name(other)
        ))),
    }
}

fn decompress_lz4(body: &[u8], n: usize, out: &mut Vec<u8>) -> Result<()> {
    if n > body.len().saturating_mul(LZ4_MAX_RATIO) {
        return Err(ProtoError::Compression(format!(
            "LZ4 body of {} bytes cannot expand to the {n} bytes its header claims",
            body.len()
        )));
    }
    let start = out.len();
    // The block decoder writes into an initialised slice; it is decoded in
    // place, at the tail of `out`, without an intermediate buffer.
    out.resize(start + n, 0);
    match lz4_flex::block::decompress_into(body, &mut out[start..]) {
        Ok(got) if got == n => Ok(()),
        Ok(got) => {
            out.truncate(start);
            Err(ProtoError::Compression(format!("LZ4 body decompressed to {got} bytes but its header says {n}")))
        }
        Err(e) => {
            out.truncate(start);
            Err(ProtoError::Compression(format!("LZ4: {e}")))
        }
    }
}

thread_local! {
    /// A zstd decompression context per thread: creating one per frame costs
    /// more than decoding a small frame.
    static ZSTD_DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
    /// Likewise for compression; re-levelled on each use.
    static ZSTD_COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { RefCell::new(None) };
}

fn zstd_error(e: std::io::Error) -> ProtoError {
    ProtoError::Compression(format!("ZSTD: {e}"))
}

fn decompress_zstd(body: &[u8], n: usize, out: &mut Vec<u8>) -> Result<()> {
    // A zstd frame states its content size: check it against the ClickHouse
    // header before reserving, so a tiny frame cannot claim a huge buffer.
    match zstd::zstd_safe::get_frame_content_size(body) {
        Ok(Some(size)) if size != n as u64 => {
            return Err(ProtoError::Compression(format!("ZSTD frame holds {size} bytes but its header says {n}")))
        }
        Err(_) => return Err(ProtoError::Compression("ZSTD body is not a zstd frame".into())),
        _ => {}
    }
    let start = out.len();
    out.reserve(n);
    let written = ZSTD_DECOMPRESSOR.with(|cell| -> Result<usize> {
        let mut slot = cell.borrow_mut();
        let dctx = match &mut *slot {
            Some(d) => d,
            empty => empty.insert(zstd::bulk::Decompressor::new().map_err(zstd_error)?),
        };
        // Decode into the spare capacity after `start`: zstd fills it and the
        // cursor sets the length, so the tail is never zero-filled first.
        let mut tail = Cursor::new(&mut *out);
        tail.set_position(start as u64);
        let r = dctx.decompress_to_buffer(body, &mut tail);
        if r.is_err() {
            // A failed frame can leave the context mid-stream; start afresh.
            *slot = None;
        }
        r.map_err(zstd_error)
    });
    match written {
        Ok(got) if got == n && out.len() == start + n => Ok(()),
        Ok(got) => {
            out.truncate(start);
            Err(ProtoError::Compression(format!("ZSTD body decompressed to {got} bytes but its header says {n}")))
        }
        Err(e) => {
            out.truncate(start);
            Err(e)
        }
    }
}

/// Appends one frame holding `data` compressed with `method` to `out`.
///
/// `data.len()` must be at most [`MAX_FRAME_SIZE`]; callers split larger
/// payloads (see [`compress_frames`]). The frame is built in place: the
/// prefix goes first with a placeholder checksum, the codec writes right after
/// it, then the sizes and the checksum are filled in.
///
/// Fails with [`ProtoError::TooLarge`] when `data` or the resulting frame
/// would exceed [`MAX_FRAME_SIZE`], and [`ProtoError::Compression`] when the
/// codec fails; `out` is left as it was on error.
///
/// Empty `data` gives a well-formed frame that [`decompress_frame`] accepts,
/// but the server refuses it ("header is corrupt with decompressed block
/// size 0"); send through [`compress_frames`], which emits no frame for no data.
pub fn compress_frame(method: Method, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
    if data.len() > MAX_FRAME_SIZE as usize {
        return Err(ProtoError::TooLarge {
            what: "uncompressed frame size",
            got: data.len() as u64,
            limit: MAX_FRAME_SIZE.into(),
        });
    }
    let start = out.len();
    // Placeholder prefix; sizes and checksum are filled in once the body is there.
    out.extend_from_slice(&[0u8; FRAME_PREFIX_LEN]);
    let body_start = out.len();
    let written = match method {
        Method::None => {
            out.extend_from_slice(data);
            Ok(())
        }
        Method::Lz4 => compress_lz4(data, body_start, out),
        Method::Zstd { level } => compress_zstd(data, level, body_start, out),
    };
    if let Err(e) = written {
        out.truncate(start);
        return Err(e);
    }

    let compressed_size = out.len() - start - CHECKSUM_LEN;
    if compressed_size > MAX_FRAME_SIZE as usize {
        out.truncate(start);
        return Err(ProtoError::TooLarge {
            what: "compressed frame size",
            got: compressed_size as u64,
            limit: MAX_FRAME_SIZE.into(),
        });
    }
    let frame = &mut out[start..];
    frame[CHECKSUM_LEN] = method.byte();
    frame[CHECKSUM_LEN + 1..CHECKSUM_LEN + 5].copy_from_slice(&(compressed_size as u32).to_le_bytes());
    frame[CHECKSUM_LEN + 5..FRAME_PREFIX_LEN].copy_from_slice(&(data.len() as u32).to_le_bytes());
    let checksum = city_hash128(&frame[CHECKSUM_LEN..]);
    frame[..CHECKSUM_LEN].copy_from_slice(&checksum.to_le_bytes());
    Ok(())
}

/// Inputs up to this size are stored as one literal run: LZ4 gains nothing
/// on them, and lz4_flex would allocate (and zero) an 8 KiB hash table per
/// call, as it did for the empty block that follows every query.
const LZ4_LITERAL_ONLY_MAX: usize = 64;

fn compress_lz4(data: &[u8], body_start: usize, out: &mut Vec<u8>) -> Result<()> {
    if data.len() <= LZ4_LITERAL_ONLY_MAX {
        out.truncate(body_start);
        lz4_literals(data, out);
        return Ok(());
    }
    let bound = lz4_flex::block::get_maximum_output_size(data.len());
    out.resize(body_start + bound, 0);
    let got = lz4_flex::block::compress_into(data, &mut out[body_start..])
        .map_err(|e| ProtoError::Compression(format!("LZ4: {e}")))?;
    out.truncate(body_start + got);
    Ok(())
}

/// Appends an LZ4 block holding `data` as its one, final sequence: a token
/// with the literal count (extended by 255-bytes when 15 or more), the
/// literals, and no match (a valid block: the last sequence has only literals).
fn lz4_literals(data: &[u8], out: &mut Vec<u8>) {
    let n = data.len();
    if n < 15 {
        out.push((n as u8) << 4);
    } else {
        out.push(0xF0);
        let mut rest = n - 15;
        while rest >= 255 {
            out.push(255);
            rest -= 255;
        }
        out.push(rest as u8);
    }
    out.extend_from_slice(data);
}

fn compress_zstd(data: &[u8], level: i32, body_start: usize, out: &mut Vec<u8>) -> Result<()> {
    out.reserve(zstd::zstd_safe::compress_bound(data.len()));
    ZSTD_COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let cctx = match &mut *slot {
            Some(c) => {
                c.set_compression_level(level).map_err(zstd_error)?;
                c
            }
            empty => empty.insert(zstd::bulk::Compressor::new(level).map_err(zstd_error)?),
        };
        // Compress into the spare capacity after the prefix (no zero-fill).
        let mut tail = Cursor::new(&mut *out);
        tail.set_position(body_start as u64);
        let r = cctx.compress_to_buffer(data, &mut tail);
        if r.is_err() {
            *slot = None;
        }
        r.map(|_| ()).map_err(zstd_error)
    })
}

/// Appends `data` as one or more frames of at most `max_chunk` uncompressed
/// bytes each (callers use 1 MiB, like the server).
///
/// `max_chunk` is capped at [`MAX_FRAME_SIZE`] and must not be 0. Empty `data`
/// appends no frame at all: the server never sends empty frames and refuses
/// them. On error `out` is left as it was.
pub fn compress_frames(method: Method, data: &[u8], max_chunk: usize, out: &mut Vec<u8>) -> Result<()> {
    if max_chunk == 0 {
        return Err(ProtoError::Compression("frame chunk size must be positive".into()));
    }
    let chunk = max_chunk.min(MAX_FRAME_SIZE as usize);
    let start = out.len();
    for piece in data.chunks(chunk) {
        if let Err(e) = compress_frame(method, piece, out) {
            out.truncate(start);
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const METHODS: [Method; 4] = [Method::None, Method::Lz4, Method::Zstd { level: 1 }, Method::Zstd { level: 0 }];

    /// Deterministic xorshift bytes.
    fn noise(seed: u64, n: usize) -> Vec<u8> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 24) as u8
            })
            .collect()
    }

    /// Semi-compressible data: repeated phrases with noise mixed in.
    fn sample(n: usize) -> Vec<u8> {
        let words: &[&[u8]] = &[b"SELECT ", b"number ", b"FROM ", b"system.numbers ", b"\x00\x01\x02\x03"];
        let rnd = noise(7, n / 8 + 1);
        let mut v = Vec::with_capacity(n + 16);
        let mut i = 0;
        while v.len() < n {
            let r = rnd[i % rnd.len()];
            if r < 40 {
                v.push(r);
            } else {
                v.extend_from_slice(words[usize::from(r) % words.len()]);
            }
            i += 1;
        }
        v.truncate(n);
        v
    }

    fn prefix_of(frame: &[u8]) -> [u8; FRAME_PREFIX_LEN] {
        *frame.first_chunk().unwrap()
    }

    /// Splits a buffer of frames and decodes them all.
    fn decode_all(mut buf: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        while !buf.is_empty() {
            let prefix = buf.first_chunk::<FRAME_PREFIX_LEN>().ok_or(ProtoError::Incomplete { needed: 25 })?;
            let h = FrameHeader::parse(prefix, MAX_FRAME_SIZE)?;
            let len = h.frame_len();
            if buf.len() < len {
                return Err(ProtoError::Incomplete { needed: len });
            }
            decompress_frame(&h, &buf[..len], &mut out)?;
            buf = &buf[len..];
        }
        Ok(out)
    }

    #[test]
    fn method_bytes() {
        assert_eq!(Method::None.byte(), 0x02);
        assert_eq!(Method::Lz4.byte(), 0x82);
        assert_eq!(Method::Zstd { level: 3 }.byte(), 0x90);
        assert_eq!(FRAME_PREFIX_LEN, 25);
    }

    #[test]
    fn round_trip_single_frames() {
        for method in METHODS {
            for data in [Vec::new(), b"x".to_vec(), b"Hello, ClickHouse!\n".repeat(7), sample(10_000), noise(3, 5000)] {
                let mut out = b"keep".to_vec();
                compress_frame(method, &data, &mut out).unwrap();
                assert_eq!(&out[..4], b"keep");
                let frame = &out[4..];
                let h = FrameHeader::parse(&prefix_of(frame), MAX_FRAME_SIZE).unwrap();
                assert_eq!(h.method, method.byte());
                assert_eq!(h.uncompressed_size as usize, data.len());
                assert_eq!(h.frame_len(), frame.len());
                if method == Method::None {
                    assert_eq!(h.compressed_size as usize, HEADER_LEN + data.len());
                }
                let mut back = b"pre".to_vec();
                decompress_frame(&h, frame, &mut back).unwrap();
                assert_eq!(&back[..3], b"pre");
                assert_eq!(&back[3..], &data[..], "{method:?} len {}", data.len());
            }
        }
    }

    /// Small inputs are written as a literal-only LZ4 block; lz4_flex (the
    /// decoder the server's format follows) reads every length back, around
    /// the 15-byte token limit too.
    #[test]
    fn lz4_literal_only_blocks_decode() {
        for n in [0, 1, 14, 15, 16, 40, LZ4_LITERAL_ONLY_MAX] {
            let data = noise(n as u64 + 1, n);
            let mut block = Vec::new();
            lz4_literals(&data, &mut block);
            assert_eq!(lz4_flex::block::decompress(&block, n).unwrap(), data, "{n} bytes");
            let mut out = Vec::new();
            compress_frame(Method::Lz4, &data, &mut out).unwrap();
            let h = FrameHeader::parse(&prefix_of(&out), MAX_FRAME_SIZE).unwrap();
            let mut back = Vec::new();
            decompress_frame(&h, &out, &mut back).unwrap();
            assert_eq!(back, data);
        }
        let mut block = Vec::new();
        lz4_literals(&[7u8; 15 + 255 + 3], &mut block);
        assert_eq!(&block[..3], &[0xF0, 255, 3]);
    }

    #[test]
    fn round_trip_3_mib_split() {
        let data = sample(3 << 20);
        for method in METHODS {
            let mut out = Vec::new();
            compress_frames(method, &data, 1 << 20, &mut out).unwrap();
            // Three full 1 MiB frames.
            let mut frames = 0;
            let mut rest = &out[..];
            while !rest.is_empty() {
                let h = FrameHeader::parse(&prefix_of(rest), MAX_FRAME_SIZE).unwrap();
                assert_eq!(h.uncompressed_size, 1 << 20);
                rest = &rest[h.frame_len()..];
                frames += 1;
            }
            assert_eq!(frames, 3, "{method:?}");
            if method != Method::None {
                assert!(out.len() < data.len(), "{method:?} did not compress");
            }
            assert_eq!(decode_all(&out).unwrap(), data, "{method:?}");
        }
    }

    #[test]
    fn compress_frames_uneven_and_empty() {
        let data = sample(2500);
        for method in METHODS {
            let mut out = Vec::new();
            compress_frames(method, &data, 1000, &mut out).unwrap();
            assert_eq!(decode_all(&out).unwrap(), data);
            let mut empty = Vec::new();
            compress_frames(method, &[], 1000, &mut empty).unwrap();
            assert!(empty.is_empty());
            assert!(decode_all(&empty).unwrap().is_empty());
        }
        assert!(matches!(compress_frames(Method::Lz4, &data, 0, &mut Vec::new()), Err(ProtoError::Compression(_))));
    }

    #[test]
    fn corrupted_byte_is_checksum_error() {
        let data = sample(4000);
        for method in METHODS {
            let mut frame = Vec::new();
            compress_frame(method, &data, &mut frame).unwrap();
            let stored = FrameHeader::parse(&prefix_of(&frame), MAX_FRAME_SIZE).unwrap().checksum;
            // Every byte of the body, and the checksum itself.
            for i in (FRAME_PREFIX_LEN..frame.len()).chain(0..CHECKSUM_LEN) {
                let mut bad = frame.clone();
                bad[i] ^= 0x40;
                let h = FrameHeader::parse(&prefix_of(&bad), MAX_FRAME_SIZE).unwrap();
                let mut out = vec![9];
                match decompress_frame(&h, &bad, &mut out) {
                    Err(ProtoError::Checksum { expected, computed }) => {
                        assert_ne!(expected, computed);
                        if i >= CHECKSUM_LEN {
                            assert_eq!(expected, stored);
                        }
                    }
                    other => panic!("{method:?} byte {i}: {other:?}"),
                }
                assert_eq!(out, [9]);
            }
        }
    }

    /// Rewrites the sizes of a frame and re-seals its checksum, so only the
    /// codec-level checks can catch the lie.
    fn reseal(frame: &mut [u8], uncompressed: u32) {
        frame[21..25].copy_from_slice(&uncompressed.to_le_bytes());
        let c = city_hash128(&frame[16..]);
        frame[..16].copy_from_slice(&c.to_le_bytes());
    }

    #[test]
    fn lying_uncompressed_size_is_error() {
        let data = sample(3000);
        for method in METHODS {
            for delta in [-1i64, 1, -3000, 100_000, 700_000] {
                let mut frame = Vec::new();
                compress_frame(method, &data, &mut frame).unwrap();
                let lie = (data.len() as i64 + delta) as u32;
                reseal(&mut frame, lie);
                let h = FrameHeader::parse(&prefix_of(&frame), MAX_FRAME_SIZE).unwrap();
                let mut out = b"ab".to_vec();
                let r = decompress_frame(&h, &frame, &mut out);
                assert!(matches!(r, Err(ProtoError::Compression(_))), "{method:?} {delta}: {r:?}");
                assert_eq!(out, b"ab");
            }
        }
    }

    #[test]
    fn truncated_or_padded_frame_is_error() {
        let data = sample(3000);
        for method in METHODS {
            let mut frame = Vec::new();
            compress_frame(method, &data, &mut frame).unwrap();
            let h = FrameHeader::parse(&prefix_of(&frame), MAX_FRAME_SIZE).unwrap();
            for cut in [frame.len() - 1, FRAME_PREFIX_LEN, 3, 0] {
                let r = decompress_frame(&h, &frame[..cut], &mut Vec::new());
                assert_eq!(r, Err(ProtoError::Incomplete { needed: frame.len() }));
            }
            let mut longer = frame.clone();
            longer.push(0);
            assert!(matches!(decompress_frame(&h, &longer, &mut Vec::new()), Err(ProtoError::Violation(_))));
            // A header that is not this frame's.
            let mut other = h;
            other.uncompressed_size += 1;
            assert!(matches!(decompress_frame(&other, &frame, &mut Vec::new()), Err(ProtoError::Violation(_))));
            // Body shortened but header sizes kept consistent: codec must fail.
            let mut short = frame[..frame.len() - 5].to_vec();
            let cs = (short.len() - CHECKSUM_LEN) as u32;
            short[17..21].copy_from_slice(&cs.to_le_bytes());
            reseal(&mut short, data.len() as u32);
            let hs = FrameHeader::parse(&prefix_of(&short), MAX_FRAME_SIZE).unwrap();
            let mut out = Vec::new();
            assert!(decompress_frame(&hs, &short, &mut out).is_err(), "{method:?}");
            assert!(out.is_empty());
        }
    }

    #[test]
    fn bad_method_byte() {
        for byte in [0x00u8, 0x01, 0x03, 0x81, 0x91, 0x92, 0x96, 0x9a, 0xff] {
            let mut p = [0u8; FRAME_PREFIX_LEN];
            p[16] = byte;
            p[17..21].copy_from_slice(&9u32.to_le_bytes());
            match FrameHeader::parse(&p, MAX_FRAME_SIZE) {
                Err(ProtoError::Compression(msg)) => assert!(msg.contains(&format!("0x{byte:02x}")), "{msg}"),
                other => panic!("{byte:#x}: {other:?}"),
            }
            // decompress_frame refuses it as well, even with a valid checksum.
            let mut frame = p.to_vec();
            reseal(&mut frame, 0);
            let h = FrameHeader::read(&prefix_of(&frame));
            assert!(matches!(decompress_frame(&h, &frame, &mut Vec::new()), Err(ProtoError::Compression(_))));
        }
    }

    #[test]
    fn size_bounds() {
        let prefix = |method: u8, compressed: u32, uncompressed: u32| {
            let mut p = [0u8; FRAME_PREFIX_LEN];
            p[16] = method;
            p[17..21].copy_from_slice(&compressed.to_le_bytes());
            p[21..25].copy_from_slice(&uncompressed.to_le_bytes());
            p
        };
        for small in [0, 1, 8] {
            assert!(matches!(
                FrameHeader::parse(&prefix(0x82, small, 0), MAX_FRAME_SIZE),
                Err(ProtoError::Violation(_))
            ));
        }
        let h = FrameHeader::parse(&prefix(0x82, 9, 0), MAX_FRAME_SIZE).unwrap();
        assert_eq!(h.frame_len(), 25);
        let h = FrameHeader::parse(&prefix(0x90, MAX_FRAME_SIZE, MAX_FRAME_SIZE), MAX_FRAME_SIZE).unwrap();
        assert_eq!(h.frame_len(), 16 + (1 << 30));
        assert_eq!(
            FrameHeader::parse(&prefix(0x82, MAX_FRAME_SIZE + 1, 10), MAX_FRAME_SIZE),
            Err(ProtoError::TooLarge { what: "compressed frame size", got: (1 << 30) + 1, limit: 1 << 30 })
        );
        assert_eq!(
            FrameHeader::parse(&prefix(0x82, 100, u32::MAX), MAX_FRAME_SIZE),
            Err(ProtoError::TooLarge { what: "uncompressed frame size", got: u32::MAX.into(), limit: 1 << 30 })
        );
        // A caller-chosen smaller bound applies to both sizes.
        assert!(matches!(FrameHeader::parse(&prefix(0x02, 1001, 10), 1000), Err(ProtoError::TooLarge { .. })));
        assert!(matches!(FrameHeader::parse(&prefix(0x02, 100, 1001), 1000), Err(ProtoError::TooLarge { .. })));
        assert!(FrameHeader::parse(&prefix(0x02, 1000, 1000), 1000).is_ok());
        // Hand-made header below the minimum: error, not a slice panic.
        let bogus = FrameHeader { checksum: 0, method: 0x02, compressed_size: 3, uncompressed_size: 0 };
        assert!(matches!(decompress_frame(&bogus, &[0; 19], &mut Vec::new()), Err(ProtoError::Violation(_))));
    }

    /// Random bodies behind well-formed, correctly checksummed headers: every
    /// outcome must be an `Ok` of exactly the announced size or an error with
    /// `out` untouched, never a panic.
    #[test]
    fn fuzz_random_bodies_never_panic() {
        let mut seed = 0x1234_5678_9abc_def1u64;
        let mut ok = 0;
        for round in 0..6000u32 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let method = [BYTE_NONE, BYTE_LZ4, BYTE_ZSTD][(round % 3) as usize];
            let body_len = (seed >> 40) as usize % 300;
            let mut body = noise(seed, body_len);
            if method == BYTE_ZSTD && body_len >= 4 && round % 2 == 0 {
                // Give the zstd decoder a real magic number to chew on.
                body[..4].copy_from_slice(&[0x28, 0xb5, 0x2f, 0xfd]);
            }
            let uncompressed = match round % 4 {
                0 => body_len as u32,
                1 => (seed >> 8) as u32 % 2000,
                2 => (seed >> 16) as u32 % 100_000,
                _ => 0,
            };
            let mut frame = vec![0u8; FRAME_PREFIX_LEN];
            frame[16] = method;
            frame[17..21].copy_from_slice(&((HEADER_LEN + body_len) as u32).to_le_bytes());
            frame.extend_from_slice(&body);
            reseal(&mut frame, uncompressed);
            let h = FrameHeader::parse(&prefix_of(&frame), MAX_FRAME_SIZE).unwrap();
            let mut out = vec![1, 2, 3];
            match decompress_frame(&h, &frame, &mut out) {
                Ok(()) => {
                    assert_eq!(out.len(), 3 + uncompressed as usize);
                    ok += 1;
                }
                Err(_) => assert_eq!(out, [1, 2, 3]),
            }
        }
        assert!(ok > 0);
    }

    /// Golden frames of ch-go (ClickHouse/ch-go `compress/_golden/`, written by
    /// its `TestCompress` for `strings.Repeat("Hello!\n", 25)`; ch-go's
    /// checksums are CityHash v1.0.2 via go-faster/city and interoperate with
    /// the server).
    #[test]
    fn golden_ch_go_frames() {
        let data = b"Hello!\n".repeat(25);
        let mut none = vec![
            0xfc, 0xed, 0x07, 0xb8, 0xc5, 0x59, 0xe9, 0x8c, 0x16, 0x61, 0x17, 0x0f, 0x6c, 0x52, 0x72, 0xdf, //
            0x02, 0xb8, 0x00, 0x00, 0x00, 0xaf, 0x00, 0x00, 0x00,
        ];
        none.extend_from_slice(&data);
        let lz4: &[u8] = &[
            0xc5, 0xbc, 0xbc, 0x07, 0xc1, 0x1e, 0xc4, 0x71, 0xfd, 0x74, 0xaf, 0x8d, 0x5b, 0x0f, 0x00, 0xc5, //
            0x82, 0x26, 0x00, 0x00, 0x00, 0xaf, 0x00, 0x00, 0x00, 0x7f, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x21, //
            0x0a, 0x07, 0x00, 0x82, 0x00, 0x93, 0x00, 0x00, 0x9a, 0x00, 0xb0, 0x6c, 0x6f, 0x21, 0x0a, 0x48, //
            0x65, 0x6c, 0x6c, 0x6f, 0x21, 0x0a,
        ];
        let lz4hc: &[u8] = &[
            0x34, 0x39, 0xad, 0xb3, 0x8d, 0x96, 0xd2, 0x87, 0xbb, 0x3b, 0xaa, 0x1e, 0x3f, 0x4b, 0x64, 0xf5, //
            0x82, 0x1d, 0x00, 0x00, 0x00, 0xaf, 0x00, 0x00, 0x00, 0x8f, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x21, //
            0x0a, 0x48, 0x07, 0x00, 0x8d, 0x70, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x21, 0x0a,
        ];
        let zstd: &[u8] = &[
            0x16, 0x77, 0xb8, 0x46, 0x2a, 0x48, 0x37, 0x48, 0x80, 0x40, 0xe8, 0x7d, 0xe7, 0x8e, 0x0d, 0x09, //
            0x90, 0x25, 0x00, 0x00, 0x00, 0xaf, 0x00, 0x00, 0x00, 0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x00, 0x7d, //
            0x00, 0x00, 0x38, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x21, 0x0a, 0x01, 0x54, 0x07, 0x03, 0x2b, 0x25, //
            0x05, 0xeb, 0x3d, 0xca, 0x06,
        ];
        for frame in [&none[..], lz4, lz4hc, zstd] {
            let h = FrameHeader::parse(&prefix_of(frame), MAX_FRAME_SIZE).unwrap();
            assert_eq!(h.frame_len(), frame.len());
            let mut out = Vec::new();
            decompress_frame(&h, frame, &mut out).unwrap();
            assert_eq!(out, data);
        }
        // Our raw frames are byte-identical to ch-go's.
        let mut ours = Vec::new();
        compress_frame(Method::None, &data, &mut ours).unwrap();
        assert_eq!(ours, none);
    }

    /// The LZ4 frame of ClickHouse/clickhouse-rs `src/compression/lz4.rs`
    /// (`it_decompresses` / `it_compresses`): a small RowBinary block. That
    /// crate also uses lz4_flex, so our encoder must reproduce it exactly.
    #[test]
    fn golden_clickhouse_rs_lz4_frame() {
        let data: &[u8] =
            &[1, 0, 2, 255, 255, 255, 255, 0, 1, 1, 1, 115, 6, 83, 116, 114, 105, 110, 103, 3, 97, 98, 99];
        let frame: &[u8] = &[
            245, 5, 222, 235, 225, 158, 59, 108, 225, 31, 65, 215, 66, 66, 36, 92, 130, 34, 0, 0, 0, 23, 0, 0, 0, 240,
            8, 1, 0, 2, 255, 255, 255, 255, 0, 1, 1, 1, 115, 6, 83, 116, 114, 105, 110, 103, 3, 97, 98, 99,
        ];
        let h = FrameHeader::parse(&prefix_of(frame), MAX_FRAME_SIZE).unwrap();
        let mut out = Vec::new();
        decompress_frame(&h, frame, &mut out).unwrap();
        assert_eq!(out, data);
        let mut ours = Vec::new();
        compress_frame(Method::Lz4, data, &mut ours).unwrap();
        assert_eq!(ours, frame);
    }

    /// Frames written by a real ClickHouse 26.9.2 server: the HTTP response of
    /// `SELECT number FROM numbers(1000) FORMAT RowBinary` with `compress=1`
    /// and `network_compression_method` = lz4 / zstd / none. Each checksum
    /// covers well over 1 KiB, so this also pins CityHash128 on long input.
    #[test]
    fn golden_server_frames() {
        let expected: Vec<u8> = (0u64..1000).flat_map(u64::to_le_bytes).collect();
        let frames: [(&[u8], u8); 3] = [
            (include_bytes!("../tests/data/compression/server_numbers1000_rowbinary_lz4.bin"), BYTE_LZ4),
            (include_bytes!("../tests/data/compression/server_numbers1000_rowbinary_zstd.bin"), BYTE_ZSTD),
            (include_bytes!("../tests/data/compression/server_numbers1000_rowbinary_none.bin"), BYTE_NONE),
        ];
        for (frame, method) in frames {
            let h = FrameHeader::parse(&prefix_of(frame), MAX_FRAME_SIZE).unwrap();
            assert_eq!(h.method, method);
            assert_eq!(h.frame_len(), frame.len());
            assert_eq!(h.uncompressed_size, 8000);
            let mut out = Vec::new();
            decompress_frame(&h, frame, &mut out).unwrap();
            assert_eq!(out, expected, "method 0x{method:02x}");
        }
    }

    /// Valid LZ4 and zstd frames with random byte edits in the body, resealed
    /// so the codec sees them: never a panic, never a wrong-sized success.
    #[test]
    fn fuzz_mutated_bodies_never_panic() {
        let data = sample(6000);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for method in [Method::Lz4, Method::Zstd { level: 1 }] {
            let mut frame = Vec::new();
            compress_frame(method, &data, &mut frame).unwrap();
            for _ in 0..3000 {
                let mut bad = frame.clone();
                for _ in 0..1 + (seed % 4) {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let at = FRAME_PREFIX_LEN + (seed >> 33) as usize % (bad.len() - FRAME_PREFIX_LEN);
                    bad[at] = (seed >> 20) as u8;
                }
                reseal(&mut bad, data.len() as u32);
                let h = FrameHeader::parse(&prefix_of(&bad), MAX_FRAME_SIZE).unwrap();
                let mut out = Vec::new();
                if decompress_frame(&h, &bad, &mut out).is_ok() {
                    assert_eq!(out.len(), data.len());
                } else {
                    assert!(out.is_empty());
                }
            }
        }
    }

    #[test]
    fn oversized_input_is_refused() {
        // Zero-filled allocation stays virtual: the length is refused before
        // any byte is read.
        let huge = vec![0u8; MAX_FRAME_SIZE as usize + 1];
        let mut out = vec![7];
        for method in METHODS {
            assert_eq!(
                compress_frame(method, &huge, &mut out),
                Err(ProtoError::TooLarge { what: "uncompressed frame size", got: (1 << 30) + 1, limit: 1 << 30 })
            );
            assert_eq!(out, [7]);
        }
        drop(huge);
        // A zstd level outside its range is clamped by zstd, not an error.
        compress_frame(Method::Zstd { level: 1000 }, b"abc", &mut out).unwrap();
        compress_frame(Method::Zstd { level: -5 }, b"abcd", &mut out).unwrap();
        let mut back = Vec::new();
        let mut rest = &out[1..];
        while !rest.is_empty() {
            let h = FrameHeader::parse(&prefix_of(rest), MAX_FRAME_SIZE).unwrap();
            decompress_frame(&h, &rest[..h.frame_len()], &mut back).unwrap();
            rest = &rest[h.frame_len()..];
        }
        assert_eq!(back, b"abcabcd");
    }
}
