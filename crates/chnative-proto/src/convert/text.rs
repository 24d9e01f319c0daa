//! ClickHouse's text escapes, as in its quoted literals and TSV (`\n`, `\t`, …).

/// The byte a backslash escape stands for: `\n`, `\t`, `\r`, `\0`, `\b`, `\f`,
/// `\a` and `\v` as in C; any other byte stands for itself (`\\`, `\'`, `\"`).
/// `\x` with two hex digits is the caller's to read.
///
/// ```
/// use chnative_proto::convert::text::unescape;
/// assert_eq!(unescape(b'n'), b'\n');
/// assert_eq!(unescape(b'\''), b'\'');
/// ```
pub fn unescape(e: u8) -> u8 {
    match e {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'0' => 0,
        b'b' => 8,
        b'f' => 12,
        b'a' => 7,
        b'v' => 11,
        e => e,
    }
}
