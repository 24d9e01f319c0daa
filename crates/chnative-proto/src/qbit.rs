//! QBit bit-plane transposition and vector views.
//!
//! A `QBit(T, N)` column travels as its nested `Tuple` of `W` `FixedString(ceil(N/8))`
//! bit planes, `W` being the element width in bits (16 for BFloat16, 32 for Float32,
//! 64 for Float64). Checked against ClickHouse 26.9 (its `Native` output for known
//! vectors, and `SerializationQBit::transposeBits`):
//!
//! * plane `p` holds bit `W-1-p` of every element, so plane 0 is the sign bit;
//! * inside a row's `nb = ceil(N/8)` plane bytes, element `i` is bit `i % 8` of byte
//!   **`nb - 1 - i/8`**: the bytes run backwards (read as one big-endian integer, element
//!   `i` is bit `i`). For `N ≤ 8` this is the same as "byte `i/8`, LSB first"; for larger
//!   `N` it is not. Padding bits (elements `N..8*nb`) are zero.
//!
//! [`transpose`] turns row-major vectors (`rows × dim` values) into the planes of a
//! [`ColumnData`] ready for INSERT ([`column()`] wraps it into a [`Column`]);
//! [`QBitView`] turns the planes of a decoded column back into vectors. Both have a
//! safe scalar kernel (an 8×8 bit-matrix transpose in a `u64`) and, on x86-64, SSE2
//! and AVX2 kernels chosen at run time ([`Kernel::detect`]):
//!
//! * transposing: the bytes of 16 (SSE2) or 32 (AVX2) elements are regrouped so that one
//!   register holds byte `j` of every element; `movemask_epi8` then yields bit `7` of
//!   each byte (one plane, 16/32 elements), and `add_epi8(v, v)` moves the next bit up.
//!   One movemask gives a whole 16/32-bit chunk of a plane;
//! * untransposing: the 8 plane chunks of one byte position are loaded as the rows of
//!   8×8 bit matrices, transposed with shifts and masks on 64-bit lanes, and the byte
//!   regrouping is undone.
//!
//! The strided form `QBit(T, N, stride)` and `QBit(Int8, N)` (both accepted by 26.9)
//! are not handled: the type parser does not know them yet.

use crate::column::{FixedColumn, TupleColumn};
use std::ops::Range;

use bytemuck::Pod;

use crate::block::Column;
use crate::buffer::AlignedBuf;
use crate::column::ColumnData;
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::view::ColumnView;

/// The element type of a QBit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Element {
    /// BFloat16 (the upper 16 bits of a Float32), handled as `u16` bit patterns.
    BFloat16,
    /// Float32.
    Float32,
    /// Float64.
    Float64,
}

impl Element {
    /// Bits per element, which is also the number of bit planes.
    pub fn bits(self) -> usize {
        match self {
            Element::BFloat16 => 16,
            Element::Float32 => 32,
            Element::Float64 => 64,
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        self.bits() / 8
    }

    /// The ClickHouse type name.
    pub fn type_name(self) -> &'static str {
        match self {
            Element::BFloat16 => "BFloat16",
            Element::Float32 => "Float32",
            Element::Float64 => "Float64",
        }
    }

    /// Element and dimension of a `QBit` type (also under `SimpleAggregateFunction`).
    pub fn of(ty: &DataType) -> Option<(Element, usize)> {
        match ty {
            DataType::QBit(elem, dim) => {
                let e = match elem.as_ref() {
                    DataType::BFloat16 => Element::BFloat16,
                    DataType::Float32 => Element::Float32,
                    DataType::Float64 => Element::Float64,
                    _ => return None,
                };
                Some((e, *dim))
            }
            DataType::SimpleAggregateFunction(_, t) => Element::of(t),
            _ => None,
        }
    }
}

/// A Rust type that holds one QBit element: `f32`, `f64`, or `u16` (BFloat16 bits).
pub trait QBitValue: Pod {
    /// The element type it stands for.
    const ELEMENT: Element;
}

impl QBitValue for f32 {
    const ELEMENT: Element = Element::Float32;
}

impl QBitValue for f64 {
    const ELEMENT: Element = Element::Float64;
}

/// BFloat16 as its bit pattern (what [`ColumnView::values::<u16>`] gives for BFloat16).
impl QBitValue for u16 {
    const ELEMENT: Element = Element::BFloat16;
}

/// Which implementation transposes the bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// Safe portable code: 8×8 bit-matrix transposes in a `u64`.
    Scalar,
    /// x86-64 SSE2, 16 elements per step.
    Sse2,
    /// x86-64 AVX2, 32 elements per step.
    Avx2,
}

/// `detect`, `is_available` and `available` of a SIMD kernel choice made of `Scalar`, one
/// 128-bit x86-64 kernel (`$mid`, CPU feature `$feature`) and `Avx2`: the QBit transposes and
/// the UUID byte swaps choose their kernels the same way.
macro_rules! kernel_choice {
    ($kernel:ident, $mid:ident, $feature:tt) => {
        impl $kernel {
            /// The fastest kernel this CPU supports.
            pub fn detect() -> $kernel {
                if $kernel::Avx2.is_available() {
                    $kernel::Avx2
                } else if $kernel::$mid.is_available() {
                    $kernel::$mid
                } else {
                    $kernel::Scalar
                }
            }

            /// Whether this CPU can run the kernel.
            pub fn is_available(self) -> bool {
                match self {
                    $kernel::Scalar => true,
                    #[cfg(target_arch = "x86_64")]
                    $kernel::$mid => std::arch::is_x86_feature_detected!($feature),
                    #[cfg(target_arch = "x86_64")]
                    $kernel::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
                    #[cfg(not(target_arch = "x86_64"))]
                    _ => false,
                }
            }

            /// Every kernel this CPU can run, slowest first.
            pub fn available() -> Vec<$kernel> {
                [$kernel::Scalar, $kernel::$mid, $kernel::Avx2].into_iter().filter(|k| k.is_available()).collect()
            }
        }
    };
}
pub(crate) use kernel_choice;

kernel_choice!(Kernel, Sse2, "sse2");

impl Kernel {
    fn check(self) -> Result<()> {
        if self.is_available() {
            Ok(())
        } else {
            Err(ProtoError::violation(format!("QBit kernel {self:?} is not available on this CPU")))
        }
    }
}

/// Bytes of one row in each bit plane: `ceil(dim / 8)`.
pub fn plane_bytes(dim: usize) -> usize {
    dim.div_ceil(8)
}

fn rows_of(len: usize, dim: usize) -> Result<usize> {
    if dim == 0 {
        return Err(ProtoError::violation("QBit dimension must be at least 1"));
    }
    if !len.is_multiple_of(dim) {
        return Err(ProtoError::violation(format!("{len} values are not a whole number of vectors of {dim}")));
    }
    Ok(len / dim)
}

// ----- insert side ------------------------------------------------------------

/// Transposes `src` (`rows × dim` values, row-major) into the bit planes of a
/// `QBit(T, dim)` column, with the fastest kernel.
pub fn transpose<T: QBitValue>(src: &[T], dim: usize) -> Result<ColumnData> {
    transpose_with(Kernel::detect(), src, dim)
}

/// [`transpose`] with a chosen kernel (an error if the CPU lacks it).
pub fn transpose_with<T: QBitValue>(kernel: Kernel, src: &[T], dim: usize) -> Result<ColumnData> {
    let planes = (0..T::ELEMENT.bits())
        .map(|_| ColumnData::Fixed(FixedColumn { width: plane_bytes(dim.max(1)), data: AlignedBuf::new() }))
        .collect();
    let mut data = ColumnData::tuple(planes);
    transpose_into(kernel, src, dim, &mut data)?;
    Ok(data)
}

/// Transposes into existing storage (for instance from [`ColumnData::for_type`] or a
/// previous call), reusing its buffers. `data` must be the shape of `QBit(T, dim)`:
/// a Tuple of `T`'s bit count of FixedString(ceil(dim/8)) columns.
pub fn transpose_into<T: QBitValue>(kernel: Kernel, src: &[T], dim: usize, data: &mut ColumnData) -> Result<()> {
    kernel.check()?;
    let rows = rows_of(src.len(), dim)?;
    let nb = plane_bytes(dim);
    let bits = T::ELEMENT.bits();
    let ColumnData::Tuple(TupleColumn { elems: cols }) = data else {
        return Err(ProtoError::violation("QBit storage must be a Tuple of bit planes"));
    };
    if cols.len() != bits {
        return Err(ProtoError::violation(format!("QBit storage has {} planes, expected {bits}", cols.len())));
    }
    let total = rows.checked_mul(nb).ok_or_else(|| ProtoError::violation("QBit column size overflows"))?;
    let mut planes: Vec<&mut [u8]> = Vec::with_capacity(bits);
    for c in cols.iter_mut() {
        match c {
            ColumnData::Fixed(FixedColumn { width, data }) if *width == nb => {
                // Every byte is overwritten below; zeroing only sets the length.
                data.clear();
                data.resize_zeroed(total);
                planes.push(data.as_bytes_mut());
            }
            _ => return Err(ProtoError::violation(format!("QBit planes must be FixedString({nb})"))),
        }
    }
    let src: &[u8] = bytemuck::cast_slice(src);
    match T::ELEMENT.bytes() {
        2 => encode_rows::<2>(kernel, src, dim, &mut planes),
        4 => encode_rows::<4>(kernel, src, dim, &mut planes),
        _ => encode_rows::<8>(kernel, src, dim, &mut planes),
    }
    Ok(())
}

/// A ready-to-insert `QBit(T, dim)` column named `name` (fastest kernel).
///
/// ```
/// use chnative_proto::qbit;
/// let vectors = [1.0f32, -2.0, 0.5, 0.0, 3.0, 4.0]; // two vectors of 3
/// let col = qbit::column("v", 3, &vectors).unwrap();
/// assert_eq!(col.type_name(), "QBit(Float32, 3)");
/// let mut back = [0f32; 6];
/// qbit::QBitView::new(&col.view()).unwrap().read(&mut back).unwrap();
/// assert_eq!(back, vectors);
/// ```
pub fn column<T: QBitValue>(name: &str, dim: usize, src: &[T]) -> Result<Column> {
    let data = transpose(src, dim)?;
    Column::new(name, format!("QBit({}, {dim})", T::ELEMENT.type_name()), data)
}

/// Rows are transposed a tile at a time into a small contiguous buffer, then each
/// plane's part is copied out. Writing straight into the planes touches `W` buffers at
/// the same offset for every element; large buffers are page-aligned, so those lines
/// compete for the same cache sets (and 4K-alias), which made transposition several
/// times slower once the column no longer fit in cache.
const TILE_BYTES: usize = 16 * 1024;

fn tile_rows(w: usize, nb: usize) -> usize {
    (TILE_BYTES / (w * nb)).max(1)
}

fn encode_rows<const B: usize>(kernel: Kernel, src: &[u8], dim: usize, planes: &mut [&mut [u8]]) {
    let w = 8 * B;
    let nb = plane_bytes(dim);
    let tile = tile_rows(w, nb);
    let mut stage_buf = vec![0u8; w * tile * nb];
    let mut stage: Vec<&mut [u8]> = stage_buf.chunks_exact_mut(tile * nb).collect();
    for (t, rows) in src.chunks(tile * dim * B).enumerate() {
        let n = rows.len() / (dim * B);
        for (r, row) in rows.chunks_exact(dim * B).enumerate() {
            let base = r * nb;
            #[cfg(target_arch = "x86_64")]
            let done = match kernel {
                // SAFETY: `transpose_into` checked `kernel.is_available()`: the CPU has AVX2.
                Kernel::Avx2 => unsafe { x86::encode_row_avx2::<B>(row, dim, base, &mut stage) },
                // SAFETY: as above, for SSE2.
                Kernel::Sse2 => unsafe { x86::encode_row_sse2::<B>(row, dim, base, &mut stage) },
                Kernel::Scalar => 0,
            };
            #[cfg(not(target_arch = "x86_64"))]
            let done = {
                let _ = kernel;
                0
            };
            encode_groups::<B>(row, dim, done, base, &mut stage);
        }
        let at = t * tile * nb;
        for (dst, st) in planes.iter_mut().zip(&stage) {
            dst[at..at + n * nb].copy_from_slice(&st[..n * nb]);
        }
    }
}

/// Transposes an 8×8 bit matrix held as 8 rows of one byte (row `r` = byte `r`,
/// column `c` = bit `c`). It is its own inverse.
#[inline]
pub(crate) fn transpose8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^= t ^ (t << 28);
    x
}

/// Scalar transposition of the elements `from..dim` of one row, 8 at a time
/// (`from` is a multiple of 8).
fn encode_groups<const B: usize>(row: &[u8], dim: usize, from: usize, base: usize, planes: &mut [&mut [u8]]) {
    let w = 8 * B;
    let nb = plane_bytes(dim);
    let mut i0 = from;
    while i0 < dim {
        let n = (dim - i0).min(8);
        let at = base + nb - 1 - i0 / 8;
        let chunk = &row[i0 * B..(i0 + n) * B];
        for j in 0..B {
            // Row k of the matrix is byte j of element k; after the transpose, row t
            // holds bit t of that byte for the 8 elements: value bit 8j+t.
            let mut m = 0u64;
            for k in 0..n {
                m |= u64::from(chunk[k * B + j]) << (8 * k);
            }
            let t = transpose8(m);
            for s in 0..8 {
                planes[w - 1 - 8 * j - s][at] = (t >> (8 * s)) as u8;
            }
        }
        i0 += 8;
    }
}

// ----- read side --------------------------------------------------------------

/// The bit planes of a QBit column, readable as vectors.
#[derive(Debug, Clone)]
pub struct QBitView<'a> {
    element: Element,
    dim: usize,
    rows: usize,
    planes: Vec<&'a [u8]>,
}

impl<'a> QBitView<'a> {
    /// A view of a `QBit(T, N)` column.
    pub fn new(view: &ColumnView<'a>) -> Result<QBitView<'a>> {
        let Some((element, dim)) = Element::of(view.data_type()) else {
            return Err(ProtoError::ty(view.data_type().to_string(), "not a QBit(BFloat16|Float32|Float64, N) column"));
        };
        QBitView::from_data(element, dim, view.data())
    }

    /// A view of raw storage of the shape of `QBit(element, dim)`.
    pub fn from_data(element: Element, dim: usize, data: &'a ColumnData) -> Result<QBitView<'a>> {
        if dim == 0 {
            return Err(ProtoError::violation("QBit dimension must be at least 1"));
        }
        let nb = plane_bytes(dim);
        let ColumnData::Tuple(TupleColumn { elems: cols }) = data else {
            return Err(ProtoError::violation("QBit data must be a Tuple of bit planes"));
        };
        if cols.len() != element.bits() {
            return Err(ProtoError::violation(format!("QBit has {} planes, expected {}", cols.len(), element.bits())));
        }
        let mut planes = Vec::with_capacity(cols.len());
        for c in cols {
            match c {
                ColumnData::Fixed(FixedColumn { width, data }) if *width == nb => planes.push(data.as_bytes()),
                _ => return Err(ProtoError::violation(format!("QBit planes must be FixedString({nb})"))),
            }
        }
        let rows = planes[0].len() / nb;
        if planes.iter().any(|p| p.len() != rows * nb) {
            return Err(ProtoError::violation("QBit planes differ in length"));
        }
        Ok(QBitView { element, dim, rows, planes })
    }

    /// The element type.
    pub fn element(&self) -> Element {
        self.element
    }

    /// Elements per vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// True when there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Bit plane `p` (bit `W-1-p` of every element), `ceil(dim/8)` bytes per row.
    /// Panics if `p` is not below the element's bit count.
    pub fn plane(&self, p: usize) -> &'a [u8] {
        self.planes[p]
    }

    /// Vector `i` into `out` (`dim` values).
    pub fn row<T: QBitValue>(&self, i: usize, out: &mut [T]) -> Result<()> {
        self.read_rows_with(Kernel::detect(), i..i + 1, out)
    }

    /// Every vector into `out` (`len() × dim` values, row-major).
    pub fn read<T: QBitValue>(&self, out: &mut [T]) -> Result<()> {
        self.read_rows_with(Kernel::detect(), 0..self.rows, out)
    }

    /// Every vector as a new `Vec` (`len() × dim` values).
    pub fn to_vec<T: QBitValue>(&self) -> Result<Vec<T>> {
        let n = self.rows.checked_mul(self.dim).ok_or_else(|| ProtoError::violation("QBit column too large"))?;
        let mut out = vec![T::zeroed(); n];
        self.read(&mut out)?;
        Ok(out)
    }

    /// Vectors `rows` into `out` (`rows.len() × dim` values) with a chosen kernel.
    pub fn read_rows_with<T: QBitValue>(&self, kernel: Kernel, rows: Range<usize>, out: &mut [T]) -> Result<()> {
        kernel.check()?;
        if T::ELEMENT != self.element {
            return Err(ProtoError::ty(
                format!("QBit({}, {})", self.element.type_name(), self.dim),
                format!("read as {} values", T::ELEMENT.type_name()),
            ));
        }
        if rows.start > rows.end || rows.end > self.rows {
            return Err(ProtoError::violation(format!("rows {rows:?} out of range for {} vectors", self.rows)));
        }
        if out.len() != rows.len() * self.dim {
            return Err(ProtoError::violation(format!(
                "output holds {} values, {} vectors of {} need {}",
                out.len(),
                rows.len(),
                self.dim,
                rows.len() * self.dim
            )));
        }
        let out: &mut [u8] = bytemuck::cast_slice_mut(out);
        match self.element.bytes() {
            2 => decode_rows::<2>(kernel, &self.planes, self.dim, rows, out),
            4 => decode_rows::<4>(kernel, &self.planes, self.dim, rows, out),
            _ => decode_rows::<8>(kernel, &self.planes, self.dim, rows, out),
        }
        Ok(())
    }

    /// Every vector as `f32`, for Float32 and BFloat16 (widened exactly) columns.
    pub fn read_f32(&self, out: &mut [f32]) -> Result<()> {
        match self.element {
            Element::BFloat16 => {
                if out.len() != self.rows * self.dim {
                    return Err(ProtoError::violation("output length differs from rows × dim"));
                }
                let mut row = vec![0u16; self.dim];
                for (i, dst) in out.chunks_exact_mut(self.dim).enumerate() {
                    self.row(i, &mut row)?;
                    for (d, &b) in dst.iter_mut().zip(&row) {
                        *d = f32::from_bits(u32::from(b) << 16);
                    }
                }
                Ok(())
            }
            _ => self.read(out),
        }
    }
}

fn decode_rows<const B: usize>(kernel: Kernel, planes: &[&[u8]], dim: usize, rows: Range<usize>, out: &mut [u8]) {
    let w = 8 * B;
    let nb = plane_bytes(dim);
    let tile = tile_rows(w, nb);
    // Tiles are staged like in `encode_rows`, except for a single row.
    let mut stage_buf = if rows.len() > 1 { vec![0u8; w * tile * nb] } else { Vec::new() };
    let mut start = rows.start;
    for dst in out.chunks_mut(tile * dim * B) {
        let n = dst.len() / (dim * B);
        let (src, first): (Vec<&[u8]>, usize) = if stage_buf.is_empty() {
            (planes.to_vec(), start)
        } else {
            for (st, p) in stage_buf.chunks_exact_mut(tile * nb).zip(planes) {
                st[..n * nb].copy_from_slice(&p[start * nb..(start + n) * nb]);
            }
            (stage_buf.chunks_exact(tile * nb).collect(), 0)
        };
        for (r, row) in dst.chunks_exact_mut(dim * B).enumerate() {
            let base = (first + r) * nb;
            #[cfg(target_arch = "x86_64")]
            let done = match kernel {
                // SAFETY: `read_rows_with` checked `kernel.is_available()`: the CPU has AVX2.
                Kernel::Avx2 => unsafe { x86::decode_row_avx2::<B>(&src, dim, base, row) },
                // SAFETY: as above, for SSE2.
                Kernel::Sse2 => unsafe { x86::decode_row_sse2::<B>(&src, dim, base, row) },
                Kernel::Scalar => 0,
            };
            #[cfg(not(target_arch = "x86_64"))]
            let done = {
                let _ = kernel;
                0
            };
            decode_groups::<B>(&src, dim, done, base, row);
        }
        start += n;
    }
}

/// Scalar untransposition of the elements `from..dim` of one row, 8 at a time.
fn decode_groups<const B: usize>(planes: &[&[u8]], dim: usize, from: usize, base: usize, dst: &mut [u8]) {
    let w = 8 * B;
    let nb = plane_bytes(dim);
    let mut i0 = from;
    while i0 < dim {
        let n = (dim - i0).min(8);
        let at = base + nb - 1 - i0 / 8;
        let out = &mut dst[i0 * B..(i0 + n) * B];
        for j in 0..B {
            // Row t is the plane byte of value bit 8j+t; after the transpose, row k is
            // byte j of element k.
            let mut m = 0u64;
            for s in 0..8 {
                m |= u64::from(planes[w - 1 - 8 * j - s][at]) << (8 * s);
            }
            let t = transpose8(m);
            for k in 0..n {
                out[k * B + j] = (t >> (8 * k)) as u8;
            }
        }
        i0 += 8;
    }
}

// ----- x86-64 kernels ---------------------------------------------------------

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! Each function needs the CPU feature it is compiled for; the callers check it at
    //! run time. Memory is only touched through slices: loads and stores take the
    //! pointer of a sub-slice of exactly the accessed length.
    use std::arch::x86_64::*;

    /// One interleave round over `B` registers: with the bytes numbered
    /// `register * 16 + byte`, it rotates that index left by one bit (per 128-bit lane).
    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn interleave_128<const B: usize>(r: &mut [__m128i; B]) {
        let h = B / 2;
        let old = *r;
        for m in 0..h {
            r[2 * m] = _mm_unpacklo_epi8(old[m], old[m + h]);
            r[2 * m + 1] = _mm_unpackhi_epi8(old[m], old[m + h]);
        }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn interleave_256<const B: usize>(r: &mut [__m256i; B]) {
        let h = B / 2;
        let old = *r;
        for m in 0..h {
            r[2 * m] = _mm256_unpacklo_epi8(old[m], old[m + h]);
            r[2 * m + 1] = _mm256_unpackhi_epi8(old[m], old[m + h]);
        }
    }

    /// `transpose8` on every 64-bit lane.
    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn transpose8_128(x: __m128i) -> __m128i {
        let c1 = _mm_set1_epi64x(0x00AA_00AA_00AA_00AA);
        let c2 = _mm_set1_epi64x(0x0000_CCCC_0000_CCCC);
        let c3 = _mm_set1_epi64x(0x0000_0000_F0F0_F0F0);
        let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64::<7>(x)), c1);
        let x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<7>(t)));
        let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64::<14>(x)), c2);
        let x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<14>(t)));
        let t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64::<28>(x)), c3);
        _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<28>(t)))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn transpose8_256(x: __m256i) -> __m256i {
        let c1 = _mm256_set1_epi64x(0x00AA_00AA_00AA_00AA);
        let c2 = _mm256_set1_epi64x(0x0000_CCCC_0000_CCCC);
        let c3 = _mm256_set1_epi64x(0x0000_0000_F0F0_F0F0);
        let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64::<7>(x)), c1);
        let x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64::<7>(t)));
        let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64::<14>(x)), c2);
        let x = _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64::<14>(t)));
        let t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64::<28>(x)), c3);
        _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64::<28>(t)))
    }

    fn log2(b: usize) -> usize {
        b.trailing_zeros() as usize
    }

    /// Transposes the leading multiple of 16 elements of a row; returns how many.
    ///
    /// # Safety
    /// The CPU must support SSE2.
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn encode_row_sse2<const B: usize>(
        row: &[u8],
        dim: usize,
        base: usize,
        planes: &mut [&mut [u8]],
    ) -> usize {
        let w = 8 * B;
        let nb = super::plane_bytes(dim);
        let mut i0 = 0;
        while i0 + 16 <= dim {
            let blk = &row[i0 * B..(i0 + 16) * B];
            let mut r = [_mm_setzero_si128(); B];
            for (k, reg) in r.iter_mut().enumerate() {
                let src = &blk[16 * k..16 * k + 16];
                // SAFETY: `src` is 16 readable bytes; the load is unaligned.
                *reg = unsafe { _mm_loadu_si128(src.as_ptr().cast()) };
            }
            // Byte index (element, byte) -> (byte, element): register j = byte j of all 16.
            for _ in 0..4 {
                interleave_128::<B>(&mut r);
            }
            let at = base + nb - 2 - i0 / 8;
            for (j, &reg) in r.iter().enumerate() {
                let mut v = reg;
                for s in 0..8 {
                    // Bit 7 of each byte is value bit 8j+7-s: plane w-8-8j+s.
                    let m = _mm_movemask_epi8(v) as u16;
                    planes[w - 8 - 8 * j + s][at..at + 2].copy_from_slice(&m.to_be_bytes());
                    v = _mm_add_epi8(v, v);
                }
            }
            i0 += 16;
        }
        i0
    }

    /// Transposes the leading multiple of 32 elements of a row; returns how many.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn encode_row_avx2<const B: usize>(
        row: &[u8],
        dim: usize,
        base: usize,
        planes: &mut [&mut [u8]],
    ) -> usize {
        let w = 8 * B;
        let nb = super::plane_bytes(dim);
        let mut i0 = 0;
        while i0 + 32 <= dim {
            let blk = &row[i0 * B..(i0 + 32) * B];
            let mut r = [_mm256_setzero_si256(); B];
            for (k, reg) in r.iter_mut().enumerate() {
                // Lane 0 takes elements 0..16 of the block, lane 1 elements 16..32.
                let lo = &blk[16 * k..16 * k + 16];
                let hi = &blk[16 * (B + k)..16 * (B + k) + 16];
                // SAFETY: `lo` and `hi` are 16 readable bytes each; unaligned loads.
                *reg = unsafe {
                    _mm256_set_m128i(_mm_loadu_si128(hi.as_ptr().cast()), _mm_loadu_si128(lo.as_ptr().cast()))
                };
            }
            for _ in 0..4 {
                interleave_256::<B>(&mut r);
            }
            let at = base + nb - 4 - i0 / 8;
            for (j, &reg) in r.iter().enumerate() {
                let mut v = reg;
                for s in 0..8 {
                    let m = _mm256_movemask_epi8(v) as u32;
                    planes[w - 8 - 8 * j + s][at..at + 4].copy_from_slice(&m.to_be_bytes());
                    v = _mm256_add_epi8(v, v);
                }
            }
            i0 += 32;
        }
        i0
    }

    /// Untransposes the leading multiple of 16 elements of a row; returns how many.
    ///
    /// # Safety
    /// The CPU must support SSE2.
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn decode_row_sse2<const B: usize>(
        planes: &[&[u8]],
        dim: usize,
        base: usize,
        dst: &mut [u8],
    ) -> usize {
        let w = 8 * B;
        let nb = super::plane_bytes(dim);
        let low = _mm_set1_epi16(0x00ff);
        let mut i0 = 0;
        while i0 + 16 <= dim {
            let at = base + nb - 2 - i0 / 8;
            let mut r = [_mm_setzero_si128(); B];
            for (j, reg) in r.iter_mut().enumerate() {
                // Word s = the two plane bytes of value bit 8j+s, as stored (byte 0 is
                // elements 8..16, byte 1 elements 0..8).
                let c = |s: usize| {
                    let p = &planes[w - 1 - 8 * j - s][at..at + 2];
                    i16::from_le_bytes([p[0], p[1]])
                };
                let y = _mm_setr_epi16(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7));
                // Qword 0 = the byte of elements 0..8 for s = 0..8, qword 1 = elements 8..16:
                // two 8×8 bit matrices whose row s is value bit 8j+s.
                let m = _mm_packus_epi16(_mm_srli_epi16::<8>(y), _mm_and_si128(y, low));
                *reg = transpose8_128(m);
            }
            for _ in 0..log2(B) {
                interleave_128::<B>(&mut r);
            }
            let blk = &mut dst[i0 * B..(i0 + 16) * B];
            for (k, reg) in r.iter().enumerate() {
                let out = &mut blk[16 * k..16 * k + 16];
                // SAFETY: `out` is 16 writable bytes; the store is unaligned.
                unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), *reg) };
            }
            i0 += 16;
        }
        i0
    }

    /// Untransposes the leading multiple of 32 elements of a row; returns how many.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn decode_row_avx2<const B: usize>(
        planes: &[&[u8]],
        dim: usize,
        base: usize,
        dst: &mut [u8],
    ) -> usize {
        let w = 8 * B;
        let nb = super::plane_bytes(dim);
        // Per lane: byte 3 of each dword first (elements 0..8 are the last stored byte).
        let gather = _mm256_setr_epi8(
            3, 7, 11, 15, 2, 6, 10, 14, 1, 5, 9, 13, 0, 4, 8, 12, 3, 7, 11, 15, 2, 6, 10, 14, 1, 5, 9, 13, 0, 4, 8, 12,
        );
        let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        let mut i0 = 0;
        while i0 + 32 <= dim {
            let at = base + nb - 4 - i0 / 8;
            let mut r = [_mm256_setzero_si256(); B];
            for (j, reg) in r.iter_mut().enumerate() {
                let c = |s: usize| {
                    let p = &planes[w - 1 - 8 * j - s][at..at + 4];
                    i32::from_le_bytes([p[0], p[1], p[2], p[3]])
                };
                let y = _mm256_setr_epi32(c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7));
                // Qword g = the byte of elements 8g..8g+8 for s = 0..8.
                let m = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(y, gather), order);
                *reg = transpose8_256(m);
            }
            for _ in 0..log2(B) {
                interleave_256::<B>(&mut r);
            }
            let blk = &mut dst[i0 * B..(i0 + 32) * B];
            for (k, reg) in r.iter().enumerate() {
                let (lo, hi) = (_mm256_castsi256_si128(*reg), _mm256_extracti128_si256::<1>(*reg));
                let out = &mut blk[16 * k..16 * k + 16];
                // SAFETY: `out` is 16 writable bytes; the store is unaligned.
                unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), lo) };
                let out = &mut blk[16 * (B + k)..16 * (B + k) + 16];
                // SAFETY: as above.
                unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), hi) };
            }
            i0 += 32;
        }
        i0
    }
}

#[cfg(test)]
mod tests;
