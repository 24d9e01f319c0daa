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
//! into the caller's buffer; a caller that writes many frames keeps a
//! [`Compressor`] so the codecs' state is set up once, not per frame (the free
//! functions use one per thread).
//!
//! LZ4 is the C library (liblz4, built from source by `lz4-sys`): on the
//! column data measured by `benches/peers --bin lz4` it decodes 1.4–1.6× as
//! fast as lz4_flex 0.11 on hits-like, log-like and text data (0.8× on a
//! plain sequence of UInt64), it decodes straight into a buffer's spare
//! capacity (lz4_flex needs an initialised slice, so its output had to be
//! zero-filled first), and with a reused state a small frame costs about half.

use std::cell::RefCell;
use std::io::Cursor;
use std::ptr::NonNull;

use lz4_sys::{c_char, c_int, c_void};

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
    // Both fit: the frame header bounded them by MAX_FRAME_SIZE (1 GiB).
    let (Ok(src_len), Ok(dst_len)) = (c_int::try_from(body.len()), c_int::try_from(n)) else {
        return Err(ProtoError::Compression(format!("LZ4 frame of {} -> {n} bytes is too large", body.len())));
    };
    let start = out.len();
    out.reserve(n);
    let dst = out.spare_capacity_mut();
    debug_assert!(dst.len() >= n);
    // SAFETY: `body` is `src_len` readable bytes and `dst` is at least `n` =
    // `dst_len` bytes of writable (uninitialised) capacity. LZ4_decompress_safe
    // is the bounds-checked decoder: whatever the input, it reads no byte
    // outside `body`, writes no byte outside the first `dst_len` of `dst`,
    // copies matches only from output it has already written, and returns a
    // negative value for malformed input.
    let got = unsafe { lz4_sys::LZ4_decompress_safe(body.as_ptr().cast(), dst.as_mut_ptr().cast(), src_len, dst_len) };
    if got < 0 {
        return Err(ProtoError::Compression(format!("LZ4: malformed block (liblz4 error {got})")));
    }
    if got != dst_len {
        return Err(ProtoError::Compression(format!("LZ4 body decompressed to {got} bytes but its header says {n}")));
    }
    // SAFETY: the decoder reported writing exactly `n` bytes from the start of
    // the spare capacity, so `start..start + n` is initialised.
    unsafe { out.set_len(start + n) };
    Ok(())
}

thread_local! {
    /// A zstd decompression context per thread: creating one per frame costs
    /// more than decoding a small frame.
    static ZSTD_DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
    /// The compressor behind the free functions [`compress_frame`] and
    /// [`compress_frames`].
    static THREAD_COMPRESSOR: RefCell<Compressor> = const { RefCell::new(Compressor::new()) };
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

extern "C" {
    // lz4.h declares this in its static-linking-only section; the static
    // library lz4-sys builds exports it (lz4-sys itself does not bind it).
    // Like LZ4_compress_fast_extState, but it clears only the parts of the
    // state the previous call dirtied instead of all 16 KiB, which halves
    // the cost of a small frame.
    fn LZ4_compress_fast_extState_fastReset(
        state: *mut c_void,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        acceleration: c_int,
    ) -> c_int;
}

/// liblz4's compression state (`LZ4_stream_t`, 16 KiB), created once.
struct Lz4State(NonNull<lz4_sys::LZ4StreamEncode>);

impl Lz4State {
    fn new() -> Result<Lz4State> {
        // SAFETY: LZ4_createStream takes no arguments; it returns an
        // allocated, initialised LZ4_stream_t or null.
        let p = unsafe { lz4_sys::LZ4_createStream() };
        NonNull::new(p).map(Lz4State).ok_or_else(|| ProtoError::Compression("LZ4: out of memory".into()))
    }
}

impl Drop for Lz4State {
    fn drop(&mut self) {
        // SAFETY: the pointer came from LZ4_createStream and is freed once.
        unsafe { lz4_sys::LZ4_freeStream(self.0.as_ptr()) };
    }
}

// SAFETY: the state is plain memory owned by this value; liblz4 keeps no
// reference to it between calls and has no thread affinity.
unsafe impl Send for Lz4State {}

/// Compression state kept across frames: liblz4's hash table and a zstd
/// context, each created on first use.
///
/// Writing a frame with a fresh state costs an allocation and clearing a
/// 16 KiB table (LZ4) or a context (zstd), which dominates small frames such
/// as a query's empty terminating block. A connection keeps one
/// `Compressor`; the free functions [`compress_frame`] and
/// [`compress_frames`] use one per thread.
#[derive(Default)]
pub struct Compressor {
    lz4: Option<Lz4State>,
    zstd: Option<zstd::bulk::Compressor<'static>>,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor").field("lz4", &self.lz4.is_some()).field("zstd", &self.zstd.is_some()).finish()
    }
}

impl Compressor {
    /// A compressor with no codec state yet.
    pub const fn new() -> Compressor {
        Compressor { lz4: None, zstd: None }
    }

    /// Appends one frame holding `data` compressed with `method` to `out`;
    /// see [`compress_frame`].
    pub fn compress_frame(&mut self, method: Method, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
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
        let written = match method {
            Method::None => {
                out.extend_from_slice(data);
                Ok(())
            }
            Method::Lz4 => self.compress_lz4(data, out),
            Method::Zstd { level } => self.compress_zstd(data, level, out),
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

    /// Appends `data` as frames of at most `max_chunk` uncompressed bytes;
    /// see [`compress_frames`].
    pub fn compress_frames(&mut self, method: Method, data: &[u8], max_chunk: usize, out: &mut Vec<u8>) -> Result<()> {
        if max_chunk == 0 {
            return Err(ProtoError::Compression("frame chunk size must be positive".into()));
        }
        let chunk = max_chunk.min(MAX_FRAME_SIZE as usize);
        let start = out.len();
        for piece in data.chunks(chunk) {
            if let Err(e) = self.compress_frame(method, piece, out) {
                out.truncate(start);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Appends the LZ4 block of `data` to `out`.
    fn compress_lz4(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        // data.len() <= MAX_FRAME_SIZE (1 GiB) was checked by the caller,
        // which is below LZ4_MAX_INPUT_SIZE, so the bound is positive.
        let src_len = c_int::try_from(data.len())
            .map_err(|_| ProtoError::Compression(format!("LZ4: {} bytes is too large", data.len())))?;
        // SAFETY: a pure function of its argument.
        let bound = unsafe { lz4_sys::LZ4_compressBound(src_len) };
        let Ok(cap) = usize::try_from(bound) else {
            return Err(ProtoError::Compression(format!("LZ4: {} bytes is too large", data.len())));
        };
        if cap == 0 {
            return Err(ProtoError::Compression(format!("LZ4: {} bytes is too large", data.len())));
        }
        let state = match &mut self.lz4 {
            Some(s) => s,
            empty => empty.insert(Lz4State::new()?),
        };
        let start = out.len();
        out.reserve(cap);
        let dst = out.spare_capacity_mut();
        debug_assert!(dst.len() >= cap);
        // SAFETY: `state` is an initialised LZ4_stream_t (from LZ4_createStream,
        // and every later call leaves it initialised), used by one call at a
        // time (&mut self). `data` is `src_len` readable bytes; `dst` is at
        // least `bound` = LZ4_compressBound(src_len) writable bytes, and the
        // encoder writes at most `bound` bytes and returns how many (0 on
        // failure). Each call compresses `data` as an independent block.
        let got = unsafe {
            LZ4_compress_fast_extState_fastReset(
                state.0.as_ptr().cast(),
                data.as_ptr().cast(),
                dst.as_mut_ptr().cast(),
                src_len,
                bound,
                1,
            )
        };
        let written = usize::try_from(got).unwrap_or(0);
        if written == 0 || written > cap {
            return Err(ProtoError::Compression(format!("LZ4: compressing {} bytes failed ({got})", data.len())));
        }
        // SAFETY: the encoder initialised the first `written` bytes of the spare capacity.
        unsafe { out.set_len(start + written) };
        Ok(())
    }

    /// Appends the zstd frame of `data` at `level` to `out`.
    fn compress_zstd(&mut self, data: &[u8], level: i32, out: &mut Vec<u8>) -> Result<()> {
        let body_start = out.len();
        out.reserve(zstd::zstd_safe::compress_bound(data.len()));
        let cctx = match &mut self.zstd {
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
            // A failed frame can leave the context mid-stream; start afresh.
            self.zstd = None;
        }
        r.map(|_| ()).map_err(zstd_error)
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
///
/// Uses this thread's [`Compressor`]; callers that keep their own call
/// [`Compressor::compress_frame`].
pub fn compress_frame(method: Method, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
    THREAD_COMPRESSOR.with(|c| c.borrow_mut().compress_frame(method, data, out))
}

/// Appends `data` as one or more frames of at most `max_chunk` uncompressed
/// bytes each (callers use 1 MiB, like the server).
///
/// `max_chunk` is capped at [`MAX_FRAME_SIZE`] and must not be 0. Empty `data`
/// appends no frame at all: the server never sends empty frames and refuses
/// them. On error `out` is left as it was. Uses this thread's [`Compressor`].
pub fn compress_frames(method: Method, data: &[u8], max_chunk: usize, out: &mut Vec<u8>) -> Result<()> {
    THREAD_COMPRESSOR.with(|c| c.borrow_mut().compress_frames(method, data, max_chunk, out))
}

pub mod auto;

#[cfg(test)]
mod tests;
