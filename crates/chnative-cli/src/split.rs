//! Splits text into statements at `;` (or `\G`, which asks for Vertical
//! output), outside quotes, backticks and comments.

/// One statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The SQL, trimmed, without its terminator.
    pub sql: String,
    /// Ended with `\G`: show it in the Vertical format.
    pub vertical: bool,
}

/// Splits `text` into the complete statements it holds and the text after the
/// last terminator (an unfinished statement, or only blanks and comments).
/// Statements holding only blanks and comments are dropped.
pub fn split(text: &str) -> (Vec<Statement>, &str) {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => i = skip_quoted(b, i, q),
            b'-' if b.get(i + 1) == Some(&b'-') => i = skip_line(b, i),
            b'#' if matches!(b.get(i + 1), Some(b'!' | b' ')) => i = skip_line(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i),
            b';' => {
                push(&mut out, &text[start..i], false);
                i += 1;
                start = i;
            }
            b'\\' if matches!(b.get(i + 1), Some(b'G' | b'g')) => {
                push(&mut out, &text[start..i], true);
                i += 2;
                start = i;
            }
            _ => i += 1,
        }
    }
    (out, &text[start..])
}

/// Whether `text` holds only blanks and comments.
pub fn is_blank(text: &str) -> bool {
    strip_comments(text).trim().is_empty()
}

fn push(out: &mut Vec<Statement>, sql: &str, vertical: bool) {
    if !is_blank(sql) {
        out.push(Statement { sql: sql.trim().to_string(), vertical });
    } else if vertical {
        // A bare `\G` repeats nothing; ignore it like an empty statement.
    }
}

/// The end of a quoted run starting at `i` (the quote), past the closing
/// quote; a doubled quote or a backslash escape stays inside. Unclosed: the
/// end of the text.
fn skip_quoted(b: &[u8], i: usize, q: u8) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        if b[j] == b'\\' {
            j += 2;
            continue;
        }
        if b[j] == q {
            if b.get(j + 1) == Some(&q) {
                j += 2;
                continue;
            }
            return j + 1;
        }
        j += 1;
    }
    b.len()
}

fn skip_line(b: &[u8], i: usize) -> usize {
    b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p + 1)
}

/// Past the end of a `/* … */` comment (they nest, as in ClickHouse).
fn skip_block_comment(b: &[u8], i: usize) -> usize {
    let mut depth = 0;
    let mut j = i;
    while j < b.len() {
        if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
            depth += 1;
            j += 2;
        } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
            depth -= 1;
            j += 2;
            if depth == 0 {
                return j;
            }
        } else {
            j += 1;
        }
    }
    b.len()
}

/// `text` with its comments replaced by a space (quotes kept as they are).
pub fn strip_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut start = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => i = skip_quoted(b, i, q),
            b'-' if b.get(i + 1) == Some(&b'-') => {
                out.push_str(&text[start..i]);
                out.push(' ');
                i = skip_line(b, i);
                start = i;
            }
            b'#' if matches!(b.get(i + 1), Some(b'!' | b' ')) => {
                out.push_str(&text[start..i]);
                out.push(' ');
                i = skip_line(b, i);
                start = i;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[start..i]);
                out.push(' ');
                i = skip_block_comment(b, i);
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[start.min(text.len())..]);
    out
}

/// A token of [`words`]: where it starts and ends in the text, and its text
/// (upper-cased unless quoted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset past the last byte.
    pub end: usize,
    /// The text, upper-cased when it is not quoted.
    pub text: String,
}

/// The words of `sql` outside comments: identifiers and keywords (dotted
/// names kept whole), quoted runs, and single punctuation characters (for
/// recognising `INSERT … FORMAT X` and `… FORMAT X`).
pub fn words(sql: &str) -> Vec<Word> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                let end = skip_quoted(b, i, q);
                out.push(Word { start: i, end, text: sql[i..end].to_string() });
                i = end;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => i = skip_line(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i),
            c if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 => {
                let end = b[i..]
                    .iter()
                    .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c >= 0x80))
                    .map_or(b.len(), |p| i + p);
                out.push(Word { start: i, end, text: sql[i..end].to_ascii_uppercase() });
                i = end;
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                let end = i + sql[i..].chars().next().map_or(1, char::len_utf8);
                out.push(Word { start: i, end, text: sql[i..end].to_string() });
                i = end;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqls(text: &str) -> Vec<String> {
        split(text).0.into_iter().map(|s| s.sql).collect()
    }

    #[test]
    fn splits_outside_quotes_and_comments() {
        assert_eq!(sqls("SELECT 1; SELECT 2;"), ["SELECT 1", "SELECT 2"]);
        assert_eq!(sqls("SELECT ';'; SELECT 'a\\';b';"), ["SELECT ';'", "SELECT 'a\\';b'"]);
        assert_eq!(sqls("SELECT 'it''s;'; SELECT `a;b`, \"c;d\";"), ["SELECT 'it''s;'", "SELECT `a;b`, \"c;d\""]);
        assert_eq!(
            sqls("SELECT 1 -- no; split\n+ 1; /* ; /* nested; */ ; */ SELECT 2;"),
            ["SELECT 1 -- no; split\n+ 1", "/* ; /* nested; */ ; */ SELECT 2"]
        );
        assert_eq!(sqls("-- only a comment;\n;  ;"), Vec::<String>::new());
    }

    #[test]
    fn vertical_terminator_and_rest() {
        let (s, rest) = split("SELECT 1\\G SELECT '\\G'; SELECT 3");
        assert_eq!(
            s,
            [
                Statement { sql: "SELECT 1".into(), vertical: true },
                Statement { sql: "SELECT '\\G'".into(), vertical: false }
            ]
        );
        assert_eq!(rest, " SELECT 3");
        assert_eq!(split("SELECT 'unclosed; still").1, "SELECT 'unclosed; still");
    }

    #[test]
    fn words_skip_quotes() {
        let w: Vec<String> = words("insert into db.t (a) format CSV -- x").into_iter().map(|w| w.text).collect();
        assert_eq!(w, ["INSERT", "INTO", "DB.T", "(", "A", ")", "FORMAT", "CSV"]);
    }
}
