//! String columns: u64 end offsets and one byte blob in memory. On the wire, from
//! revision 54492 the offsets then the bytes; before it, each row as a VarUInt length
//! and its bytes, whose total is only known once every row has been stepped over.

use super::check::{cannot_hold, check_end_offsets, Reason};
use super::codec::ColumnCodec;
use super::{check_offsets, checked_len, last_offset, selected_len, BodyForm, Layout};
use crate::buffer::{AlignedBuf, Appender, BufferPool};
use crate::error::{ProtoError, Result};
use crate::types::DataType;
use crate::wire::{Budget, Reader};

/// Storage of a String column: the u64 end offset of each row into one byte blob.
#[derive(Debug, Clone)]
pub struct StringColumn {
    pub(crate) offsets: AlignedBuf,
    pub(crate) data: AlignedBuf,
    /// Set by a decode that checked, as it copied, that every byte is ASCII (and so
    /// valid UTF-8 cut anywhere); the offsets of a decoded column are monotonic and
    /// end at the blob's length. Any other change clears it.
    pub(crate) ascii: bool,
}

impl StringColumn {
    pub(crate) fn new(offsets: AlignedBuf, data: AlignedBuf) -> StringColumn {
        StringColumn { offsets, data, ascii: false }
    }

    pub(crate) fn take(pool: &mut BufferPool) -> StringColumn {
        StringColumn { offsets: pool.take(), data: pool.take(), ascii: false }
    }

    /// The u64 end offset of each row.
    pub fn offsets(&self) -> &AlignedBuf {
        &self.offsets
    }

    /// All bytes back to back.
    pub fn data(&self) -> &AlignedBuf {
        &self.data
    }

    /// Whether the decoder found every byte to be ASCII (so valid UTF-8 cut at any
    /// offset); `false` when it did not check, or the column was built or changed since.
    pub fn is_ascii(&self) -> bool {
        self.ascii
    }
}

impl ColumnCodec for StringColumn {
    fn empty_like(&self, pool: &mut BufferPool) -> Self {
        StringColumn::take(pool)
    }

    fn recycle(self, pool: &mut BufferPool) {
        pool.give(self.offsets);
        pool.give(self.data);
    }

    fn rows(&self) -> usize {
        self.offsets.len() / 8
    }

    fn clear(&mut self) {
        self.offsets.clear();
        self.data.clear();
        self.ascii = false;
    }

    fn shape_name(&self) -> String {
        "string data".into()
    }

    /// Reads `rows` strings in the layout of the revision (offsets + bytes, or VarUInt-prefixed).
    fn read_body(&mut self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, _: &mut BufferPool) -> Result<()> {
        self.ascii = false;
        self.ascii = read(r, rows, &mut self.offsets, &mut self.data, form.layout.sized_strings)?;
        Ok(())
    }

    /// VarUInt-prefixed runs resume where `memo` left them.
    fn measure_body(&self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, memo: &mut ScanMemo) -> Result<bool> {
        if form.layout.sized_strings {
            let total = last_offset(r.bytes(checked_len(rows, 8)?)?)?;
            r.bytes(total)?;
        } else {
            memo.skip_strings(r, rows)?;
        }
        Ok(true)
    }

    fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        write_strings(out, self.offsets.typed::<u64>()?, self.data.as_bytes(), layout.sized_strings)
    }

    /// `u64::MAX` picks the empty string.
    fn append_from(&mut self, src: &Self, idx: &[u64], _: &mut BufferPool, budget: &mut Budget) -> Result<()> {
        self.ascii = false;
        append(&mut self.offsets, &mut self.data, &src.offsets, &src.data, idx, budget)
    }

    fn check_fits(&self, ty: &DataType, _: Option<&[u8]>) -> Result<(), Reason> {
        if !matches!(ty, DataType::String) {
            return Err(cannot_hold(self, ty));
        }
        let offsets = self.offsets.typed::<u64>().map_err(|e| e.to_string())?;
        check_end_offsets(offsets, self.data.len(), "string")
    }

    fn push_row_binary(&mut self, _: &DataType, r: &mut Reader<'_>) -> Result<()> {
        let n = r.varuint()?;
        let n = usize::try_from(n).map_err(|_| ProtoError::violation("string length overflows"))?;
        self.ascii = false;
        self.data.extend_from(r.bytes(n)?);
        self.offsets.push(self.data.len() as u64);
        Ok(())
    }

    fn push_default(&mut self, _: &DataType) -> Result<()> {
        self.ascii = false;
        self.offsets.push(self.data.len() as u64);
        Ok(())
    }
}

/// Reads `rows` strings in the layout `sized` says (offsets + bytes, or VarUInt-prefixed);
/// `true` when the bytes were checked to be ASCII on the way.
fn read(r: &mut Reader<'_>, rows: usize, offsets: &mut AlignedBuf, data: &mut AlignedBuf, sized: bool) -> Result<bool> {
    if sized {
        let raw = r.bytes(checked_len(rows, 8)?)?;
        r.charge(raw.len())?;
        offsets.set_from(raw);
        let total = check_offsets(offsets.typed::<u64>()?)?;
        let raw = r.bytes(total)?;
        r.charge(total)?;
        return Ok(copy_checking_ascii(data, raw));
    }
    // Each row needs at least its length byte: check before reserving anything.
    r.need(rows)?;
    offsets.clear();
    data.clear();
    // One pass over the lengths writes the end offsets and finds the column's end;
    // the bytes are then copied knowing the exact size (charged before it is
    // reserved), their positions following from the offsets alone.
    let start = r.position();
    let (done, used, _) = var_string_ends(r.rest(), rows, 0, &mut offsets.appender(checked_len(rows, 8)?));
    if done < rows {
        // Short input or a malformed length: the stepping scan gives the exact error.
        let (mut done, mut total) = (0, 0);
        skip_var_strings(r, rows, &mut done, &mut total)?;
        r.set_position(start);
        return Err(ProtoError::violation("string lengths read differently twice"));
    }
    copy_var_strings(r, offsets, data, used)
}

impl StringColumn {
    /// Reads a String column in the VarUInt layout that may be arriving in pieces:
    /// each call decodes the lengths the input holds into the end offsets, going on
    /// from where the last call ran out of input (`memo`), and once all are known the
    /// bytes are copied. The lengths are decoded once however the column arrives,
    /// and no separate measure is needed.
    pub(crate) fn read_var_resuming(&mut self, r: &mut Reader<'_>, rows: usize, memo: &mut ScanMemo) -> Result<()> {
        let start = r.position();
        let run = memo.run(start, rows);
        if run.done == 0 || self.offsets.len() != run.done * 8 {
            // A new column (or offsets that are not this run's: start it over).
            *run = StringRun { start, rows, done: 0, next: start, bytes: 0 };
            self.offsets.clear();
        }
        self.data.clear();
        self.ascii = false;
        r.set_position(run.next);
        let input = r.rest();
        // Each string needs at least its length byte: room for no more than the input can hold.
        let room = (rows - run.done).min(input.len());
        let (done, used, total) =
            var_string_ends(input, rows - run.done, run.bytes as u64, &mut self.offsets.appender(room * 8));
        run.done += done;
        run.next += used;
        run.bytes = total as usize;
        if run.done < rows {
            // Cut short (or a malformed length): the stepping scan, at the same row,
            // gives the exact error and `Incomplete` bound.
            let (mut done, mut bytes) = (run.done, run.bytes);
            r.set_position(run.next);
            skip_var_strings_from(r, rows, &mut done, &mut bytes)?;
            return Err(ProtoError::violation("string lengths read differently twice"));
        }
        let used = run.next - start;
        r.set_position(start);
        self.ascii = copy_var_strings(r, &self.offsets, &mut self.data, used)?;
        Ok(())
    }
}

/// The second pass of a VarUInt-layout decode: charges the column, then copies the
/// bytes of the strings whose end offsets are `offsets` from the next `used` bytes of
/// the input; whether they are ASCII.
fn copy_var_strings(r: &mut Reader<'_>, offsets: &AlignedBuf, data: &mut AlignedBuf, used: usize) -> Result<bool> {
    let ends = offsets.typed::<u64>()?;
    let total = ends.last().map_or(0, |&e| e as usize);
    r.charge_n(ends.len(), 8)?;
    r.charge(total)?;
    let input = r.bytes(used)?;
    data.clear();
    let mut out = data.appender(total);
    let (mut at, mut prev) = (0usize, 0usize);
    for &end in ends {
        let n = end as usize - prev;
        prev = end as usize;
        at += varuint_len(n);
        out.put_from(input, at, n);
        at += n;
    }
    // The lengths below 128 are ASCII bytes too: a column of short ASCII strings is
    // ASCII as a whole, checked in one pass over input still in cache.
    Ok(input.is_ascii())
}

/// Decodes VarUInt lengths from the start of `input`, of at most `rows` strings,
/// into end offsets going on from `total` (written to `ends`); stops at the first
/// string not wholly in `input` (or a malformed length). Returns the strings
/// decoded, the input bytes they span and the new total; counts the rows passed.
fn var_string_ends(input: &[u8], rows: usize, mut total: u64, ends: &mut Appender<'_>) -> (usize, usize, u64) {
    const CHUNK: usize = 64;
    let (mut pos, mut row) = (0usize, 0usize);
    let mut chunk = [0u64; CHUNK];
    'rows: while row < rows {
        let k = (rows - row).min(CHUNK);
        for i in 0..k {
            let Some(&first) = input.get(pos) else {
                ends.put(bytemuck::cast_slice(&chunk[..i]));
                row += i;
                break 'rows;
            };
            let (n, len) =
                if first < 0x80 { (u64::from(first), 1) } else { varuint_at(input, pos).unwrap_or((u64::MAX, 0)) };
            if n > (input.len() - pos - len) as u64 {
                ends.put(bytemuck::cast_slice(&chunk[..i]));
                row += i;
                break 'rows;
            }
            pos += len + n as usize;
            total += n;
            chunk[i] = total;
        }
        ends.put(bytemuck::cast_slice(&chunk[..k]));
        row += k;
    }
    ROWS_STEPPED.with(|c| c.set(c.get() + row as u64));
    (row, pos, total)
}

/// A VarUInt at `input[pos..]` and its length in bytes (`None`: cut short or over 10 bytes).
fn varuint_at(input: &[u8], pos: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for i in 0..10 {
        let b = *input.get(pos + i)?;
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// Bytes of the VarUInt encoding of `n`.
#[inline]
fn varuint_len(n: usize) -> usize {
    if n < 0x80 {
        1
    } else {
        (usize::BITS - n.leading_zeros()).div_ceil(7) as usize
    }
}

/// Replaces `data` with `src`, saying whether every byte is ASCII.
///
/// The check runs on each piece right after it is copied, while it is still in
/// cache: a typed read hands out `&str`s, and checking a wide block's text in a
/// pass of its own, after the block has left the cache, was 11 % of reading hits
/// into borrowed rows. Here it costs a pass over cached bytes beside the copy.
fn copy_checking_ascii(data: &mut AlignedBuf, src: &[u8]) -> bool {
    const PIECE: usize = 16 << 10;
    data.clear();
    data.reserve_total(src.len());
    let mut ascii = true;
    for piece in src.chunks(PIECE) {
        let start = data.len();
        data.extend_from(piece);
        ascii &= data.as_bytes()[start..].is_ascii();
    }
    ascii
}

/// Steps over VarUInt-prefixed strings from row `*done` to `rows`, adding their
/// lengths to `*bytes`. When the input runs out, the reader is left at the start
/// of the first missing row (`*done` counts the rows passed), so a later call on
/// longer input resumes there, and the error's bound counts at least one byte per
/// row still to come.
fn skip_var_strings(r: &mut Reader<'_>, rows: usize, done: &mut usize, bytes: &mut usize) -> Result<()> {
    let first = *done;
    let res = skip_var_strings_from(r, rows, done, bytes);
    ROWS_STEPPED.with(|n| n.set(n.get() + (*done - first) as u64));
    res
}

thread_local! {
    static ROWS_STEPPED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Rows of VarUInt-prefixed strings this thread has stepped over so far, measuring
/// or decoding: tests use it to check that a column arriving in pieces is not
/// re-read from its start on every piece.
#[doc(hidden)]
pub fn var_string_rows_stepped() -> u64 {
    ROWS_STEPPED.with(|n| n.get())
}

fn skip_var_strings_from(r: &mut Reader<'_>, rows: usize, done: &mut usize, bytes: &mut usize) -> Result<()> {
    while *done < rows {
        let at = r.position();
        let after = rows - *done - 1;
        let n = match r.varuint() {
            Ok(n) => n,
            Err(ProtoError::Incomplete { .. }) => {
                let end = r.position() + r.remaining();
                r.set_position(at);
                return Err(ProtoError::Incomplete { needed: (end + 1).max(at.saturating_add(after + 1)) });
            }
            Err(e) => return Err(e),
        };
        let n = usize::try_from(n).map_err(|_| ProtoError::violation("string length overflows"))?;
        if r.remaining() < n {
            let needed = r.position().saturating_add(n).saturating_add(after);
            r.set_position(at);
            return Err(ProtoError::Incomplete { needed });
        }
        r.bytes(n)?;
        *bytes = bytes.checked_add(n).ok_or_else(|| ProtoError::violation("string lengths overflow"))?;
        *done += 1;
    }
    Ok(())
}

/// Writes strings given as end offsets + blob in the layout of the revision.
pub fn write_strings(out: &mut Vec<u8>, offsets: &[u64], data: &[u8], sized: bool) -> Result<()> {
    if sized {
        out.extend_from_slice(bytemuck::cast_slice(offsets));
        out.extend_from_slice(data);
    } else {
        // A branch-free pass (it vectorises) instead of a check per row.
        let sorted = offsets.windows(2).fold(true, |ok, w| ok & (w[0] <= w[1]));
        if !sorted || offsets.last().is_some_and(|&e| e > data.len() as u64) {
            return Err(ProtoError::violation("string offsets out of range"));
        }
        put_var_strings(out, 0u64, offsets, data);
    }
    Ok(())
}

/// A byte offset into a strings' blob, of a width the writers take (never negative: the
/// callers checked).
pub(crate) trait BlobOffset: Copy {
    /// The offset as an index.
    fn at(self) -> usize;
}

impl BlobOffset for i32 {
    fn at(self) -> usize {
        self as usize
    }
}

impl BlobOffset for i64 {
    fn at(self) -> usize {
        self as usize
    }
}

impl BlobOffset for u64 {
    fn at(self) -> usize {
        self as usize
    }
}

/// Appends strings in the VarUInt layout (each a VarUInt length, then its bytes): the row
/// `i` is `data[ends[i - 1]..ends[i]]`, the first starting at `first`. The offsets must be
/// in order and inside `data`.
///
/// The room is made once, of the exact size, so the buffer grows as it would one row at a
/// time; then a string of up to 32 bytes is copied as one fixed 32-byte move when `data`
/// has the bytes after it and the room has the space (what spills past the string is
/// overwritten by the next row), instead of a `memcpy` call and two capacity checks per row.
pub(crate) fn put_var_strings<O: BlobOffset>(out: &mut Vec<u8>, first: O, ends: &[O], data: &[u8]) {
    let Some(&last) = ends.last() else { return };
    // A VarUInt takes one byte, and one more from each of 2^7, 2^14, 2^21 and 2^28 up
    // (compares and adds, which vectorise; offsets never differ by 2^35).
    let longer =
        |n: usize| u64::from(n >= 1 << 7) + u64::from(n >= 1 << 14) + u64::from(n >= 1 << 21) + u64::from(n >= 1 << 28);
    let extra = longer(ends[0].at() - first.at())
        + ends[1..].iter().zip(ends).map(|(&b, &a)| longer(b.at() - a.at())).sum::<u64>();
    let base = out.len();
    let end = base + ends.len() + extra as usize + (last.at() - first.at());
    if out.capacity() < end {
        // To a power of two, as pushes one row at a time would have grown it: the buffer
        // is kept for the next block, and a block a little larger must fit.
        out.reserve_exact(end.next_power_of_two() - base);
    }
    out.resize(end, 0);
    let dst = &mut out[base..];
    let (mut p, mut a) = (0, first.at());
    for &e in ends {
        let (b, n) = (e.at(), e.at() - a);
        let mut v = n as u64;
        while v >= 0x80 {
            dst[p] = (v as u8) | 0x80;
            v >>= 7;
            p += 1;
        }
        dst[p] = v as u8;
        p += 1;
        if n <= 32 && a + 32 <= data.len() && p + 32 <= dst.len() {
            dst[p..p + 32].copy_from_slice(&data[a..a + 32]);
        } else {
            dst[p..p + n].copy_from_slice(&data[a..b]);
        }
        p += n;
        a = b;
    }
    debug_assert_eq!(base + p, out.len());
}

/// Appends the rows of `src` that `idx` picks (`u64::MAX`: the empty string).
pub(super) fn append(
    offsets: &mut AlignedBuf,
    data: &mut AlignedBuf,
    src_offsets: &AlignedBuf,
    src_data: &AlignedBuf,
    idx: &[u64],
    budget: &mut Budget,
) -> Result<()> {
    let oob = || ProtoError::violation("row index out of range");
    let so = src_offsets.typed::<u64>()?;
    let sd = src_data.as_bytes();
    let total = selected_len(so, idx)?;
    budget.charge_n(idx.len(), 8)?;
    budget.charge(usize::try_from(total).unwrap_or(usize::MAX))?;
    for &i in idx {
        if i != u64::MAX {
            let i = i as usize;
            let end = *so.get(i).ok_or_else(oob)? as usize;
            let start = if i == 0 { 0 } else { so[i - 1] as usize };
            data.extend_from(sd.get(start..end).ok_or_else(oob)?);
        }
        offsets.push(data.len() as u64);
    }
    Ok(())
}

/// How far [`ColumnData::measure`] got through each run of VarUInt-prefixed
/// strings of one column, kept between calls on the same, longer input.
#[derive(Debug, Default)]
pub(crate) struct ScanMemo {
    runs: Vec<StringRun>,
}

#[derive(Debug)]
struct StringRun {
    /// Input offset of the run's first row, and its row count: what identifies it.
    start: usize,
    rows: usize,
    /// Rows passed so far, and the input offset of the next one.
    done: usize,
    next: usize,
    bytes: usize,
}

impl ScanMemo {
    /// Forgets every run (for a new input, or once a column is decoded).
    pub(crate) fn clear(&mut self) {
        self.runs.clear();
    }

    /// The input lost its first `by` bytes (all before the runs): positions
    /// move back by as much.
    pub(crate) fn shift(&mut self, by: usize) {
        for run in &mut self.runs {
            run.start = run.start.saturating_sub(by);
            run.next = run.next.saturating_sub(by);
        }
    }

    /// The run of the column whose data starts at `start` (a new one if none).
    fn run(&mut self, start: usize, rows: usize) -> &mut StringRun {
        let i = match self.runs.iter().position(|x| x.start == start && x.rows == rows) {
            Some(i) => i,
            None => {
                self.runs.push(StringRun { start, rows, done: 0, next: start, bytes: 0 });
                self.runs.len() - 1
            }
        };
        &mut self.runs[i]
    }

    fn skip_strings(&mut self, r: &mut Reader<'_>, rows: usize) -> Result<()> {
        let run = self.run(r.position(), rows);
        r.set_position(run.next);
        let res = skip_var_strings(r, rows, &mut run.done, &mut run.bytes);
        run.next = r.position();
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::WriteExt;

    #[test]
    fn var_layout_is_one_put_string_a_row_at_every_length() {
        // Around the fixed 32-byte move, the one-, two- and three-byte lengths, and a last
        // row that ends the data (no bytes after it for the fixed move to read).
        let lens = [0usize, 1, 31, 32, 33, 127, 128, 300, 16_383, 16_384, 5, 0, 32];
        let mut data = Vec::new();
        let mut ends = Vec::new();
        for (k, &n) in lens.iter().enumerate() {
            data.extend((0..n).map(|i| (i * 3 + k) as u8));
            ends.push(data.len() as u64);
        }
        let mut want = vec![7u8];
        let mut start = 0;
        for &e in &ends {
            want.put_string(&data[start..e as usize]);
            start = e as usize;
        }
        let mut got = vec![7u8];
        write_strings(&mut got, &ends, &data, false).unwrap();
        assert_eq!(got, want);
    }

    fn sized_wire(rows: &[&[u8]]) -> Vec<u8> {
        let mut wire = Vec::new();
        let mut end = 0u64;
        for r in rows {
            end += r.len() as u64;
            wire.extend_from_slice(&end.to_le_bytes());
        }
        for r in rows {
            wire.extend_from_slice(r);
        }
        wire
    }

    #[test]
    fn a_decode_knows_whether_its_text_is_ascii() {
        const SIZED: Layout = Layout { sized_strings: true, sized_dict_strings: false };
        const VAR: Layout = Layout { sized_strings: false, sized_dict_strings: false };
        let pool = &mut BufferPool::new();
        let long = vec![b'a'; 40_000];
        let mut late = long.clone();
        // A non-ASCII byte past the first copied piece must still be seen.
        late[39_999] = 0xc3;
        let cases: [(Vec<&[u8]>, bool); 4] = [
            (vec![b"abc", b"", &long], true),
            (vec![b"abc", &late, b"\xa9"], false),
            (vec!["é".as_bytes()], false),
            (vec![], true),
        ];
        for (rows, ascii) in cases {
            let mut c = StringColumn::take(pool);
            let wire = sized_wire(&rows);
            c.read_body(&mut Reader::new(&wire), rows.len(), SIZED.into(), pool).unwrap();
            assert_eq!(c.ascii, ascii, "{} rows", rows.len());
            let offsets = c.offsets.typed::<u64>().unwrap();
            assert_eq!(offsets.last().copied().unwrap_or(0), c.data.len() as u64);
            // Any later change forgets it.
            c.push_default(&DataType::String).unwrap();
            assert!(!c.ascii);
        }
        // The VarUInt layout looks at its input: ASCII strings under 128 bytes are
        // ASCII, a length of 128 or more (a byte >= 0x80) makes it not look further.
        let mut long_var = vec![0x80, 0x01];
        long_var.extend_from_slice(&[b'a'; 128]);
        for (wire, rows, ascii) in
            [(&b"\x02ab\x00"[..], 2, true), (b"\x02\xc3\xa9", 1, false), (&long_var[..], 1, false)]
        {
            let mut c = StringColumn::take(pool);
            c.read_body(&mut Reader::new(wire), rows, VAR.into(), pool).unwrap();
            assert_eq!(c.ascii, ascii, "{wire:?}");
            assert_eq!(c.offsets.typed::<u64>().unwrap().last().copied(), Some(c.data.len() as u64));
        }
        let mut c = StringColumn::take(pool);
        let wire = sized_wire(&[b"ab"]);
        c.read_body(&mut Reader::new(&wire), 1, SIZED.into(), pool).unwrap();
        assert!(c.ascii);
        c.clear();
        assert!(!c.ascii);
    }

    fn strings(rows: &[&str]) -> (AlignedBuf, AlignedBuf) {
        let mut offsets = AlignedBuf::new();
        let mut data = AlignedBuf::new();
        for s in rows {
            data.extend_from(s.as_bytes());
            offsets.push(data.len() as u64);
        }
        (offsets, data)
    }

    #[test]
    fn both_layouts_read_back_what_was_written() {
        let (offsets, data) = strings(&["a", "", "hello"]);
        for sized in [false, true] {
            let mut out = Vec::new();
            write_strings(&mut out, offsets.typed::<u64>().unwrap(), data.as_bytes(), sized).unwrap();
            let expected: &[u8] = if sized {
                &[1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
            } else {
                &[1, b'a', 0, 5]
            };
            assert_eq!(&out[..expected.len()], expected, "sized: {sized}");
            let (mut o2, mut d2) = (AlignedBuf::new(), AlignedBuf::new());
            let mut r = Reader::new(&out);
            read(&mut r, 3, &mut o2, &mut d2, sized).unwrap();
            assert_eq!(r.remaining(), 0);
            assert_eq!((o2.as_bytes(), d2.as_bytes()), (offsets.as_bytes(), data.as_bytes()));
            let mut r = Reader::new(&out);
            let layout = Layout { sized_strings: sized, sized_dict_strings: false };
            StringColumn::new(o2, d2).measure_body(&mut r, 3, layout.into(), &mut ScanMemo::default()).unwrap();
            assert_eq!(r.remaining(), 0, "sized: {sized}");
        }
    }

    #[test]
    fn a_measure_resumes_where_the_input_ran_out() {
        let (offsets, data) = strings(&["abc", "de", "f"]);
        let mut out = Vec::new();
        write_strings(&mut out, offsets.typed::<u64>().unwrap(), data.as_bytes(), false).unwrap();
        let mut memo = ScanMemo::default();
        let col = StringColumn::new(AlignedBuf::new(), AlignedBuf::new());
        let measure = |r: &mut Reader<'_>, rows, memo: &mut ScanMemo| {
            col.measure_body(r, rows, Layout { sized_strings: false, sized_dict_strings: false }.into(), memo)
        };
        let mut r = Reader::new(&out[..5]);
        // Row 0 is whole; row 1 needs its 2 bytes and row 2 at least one more.
        assert!(matches!(measure(&mut r, 3, &mut memo), Err(ProtoError::Incomplete { needed: 8 })));
        let before = var_string_rows_stepped();
        let mut r = Reader::new(&out);
        measure(&mut r, 3, &mut memo).unwrap();
        assert_eq!(var_string_rows_stepped() - before, 2, "row 0 was stepped over again");
    }

    #[test]
    fn a_column_arriving_in_pieces_decodes_its_lengths_once() {
        let rows: Vec<String> = (0..300).map(|i| "x".repeat(i % 120)).collect();
        let refs: Vec<&str> = rows.iter().map(String::as_str).collect();
        let (offsets, data) = strings(&refs);
        let mut wire = vec![7u8; 3]; // what precedes the column in the input
        write_strings(&mut wire, offsets.typed::<u64>().unwrap(), data.as_bytes(), false).unwrap();
        let mut memo = ScanMemo::default();
        let mut col = StringColumn::take(&mut BufferPool::new());
        let before = var_string_rows_stepped();
        let mut cut = 4;
        loop {
            let mut r = Reader::new(&wire[..cut]);
            r.set_position(3);
            match col.read_var_resuming(&mut r, rows.len(), &mut memo) {
                Ok(()) => break,
                Err(ProtoError::Incomplete { needed }) => {
                    assert!(needed > cut && needed <= wire.len(), "{needed} for {cut} of {}", wire.len());
                    cut = (cut + 97).min(wire.len());
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!((col.offsets.as_bytes(), col.data.as_bytes()), (offsets.as_bytes(), data.as_bytes()));
        assert!(col.ascii);
        // Each length decoded once (the copy that follows steps by the offsets).
        assert_eq!(var_string_rows_stepped() - before, rows.len() as u64);
        // A length longer than 10 bytes is an error, not a wait for more input.
        let mut memo = ScanMemo::default();
        let bad = [0xffu8; 12];
        let err = col.read_var_resuming(&mut Reader::new(&bad), 1, &mut memo).unwrap_err();
        assert!(matches!(err, ProtoError::Violation(_)), "{err:?}");
    }

    #[test]
    fn gather_and_bad_input() {
        let (so, sd) = strings(&["x", "yz"]);
        let (mut offsets, mut data) = (AlignedBuf::new(), AlignedBuf::new());
        let mut budget = Budget::UNLIMITED;
        append(&mut offsets, &mut data, &so, &sd, &[1, u64::MAX, 0], &mut budget).unwrap();
        assert_eq!((offsets.typed::<u64>().unwrap(), data.as_bytes()), (&[2u64, 2, 3][..], &b"yzx"[..]));
        assert!(append(&mut offsets, &mut data, &so, &sd, &[2], &mut budget).is_err());
        // Offsets that go backwards, and offsets past the blob.
        assert!(write_strings(&mut Vec::new(), &[2, 1], b"ab", false).is_err());
        assert!(write_strings(&mut Vec::new(), &[1, 3], b"ab", false).is_err(), "past the data");
        let mut bytes = Vec::new();
        bytes.put_u64_le(2);
        bytes.put_u64_le(1);
        assert!(matches!(
            read(&mut Reader::new(&bytes), 2, &mut offsets, &mut data, true),
            Err(ProtoError::Violation(_))
        ));
    }
}
