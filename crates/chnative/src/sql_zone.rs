//! The `session_timezone` a statement sets in its own text: a query's
//! `SETTINGS session_timezone = '…'` clause, or a `SET session_timezone = '…'`
//! statement. The server does not tell a client which zone it rendered a
//! SELECT's zone-less DateTime columns in (its TimezoneUpdate packet comes only
//! for `input()`), so the client reads the statement as the server does: a
//! small tokenizer that knows strings, quoted names and comments, and the
//! settings list that follows `SETTINGS` (or `SET`) at the top level.

/// One token of a statement, as far as a settings list needs.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A bare word (keyword or name), as written.
    Word(String),
    /// A name in backquotes or double quotes, unquoted.
    Quoted(String),
    /// A string literal, unescaped.
    Str(String),
    /// A number or any other literal-ish run (`1`, `1.5e3`).
    Number,
    /// One punctuation character.
    Punct(char),
}

/// A string or quoted name starting at `bytes[start]` (the quote): its text
/// unescaped and the index after its closing quote (`None`: unterminated).
fn quoted(s: &str, start: usize, quote: char) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut chars = s[start + 1..].char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '\\' => {
                let (_, e) = chars.next()?;
                out.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    'b' => '\x08',
                    'f' => '\x0c',
                    e => e,
                });
            }
            c if c == quote => {
                let end = start + 1 + k + 1;
                // A doubled quote is one quote character.
                if s[end..].starts_with(quote) {
                    out.push(quote);
                    chars.next();
                } else {
                    return Some((out, end));
                }
            }
            c => out.push(c),
        }
    }
    None
}

/// The statement's tokens, each with its parenthesis depth (`(`/`[`/`{` open,
/// their closers close). `None` when a string or comment is not terminated.
fn tokens(s: &str) -> Option<Vec<(Tok, i32)>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            _ if c.is_ascii_whitespace() => i += 1,
            b'-' if b.get(i + 1) == Some(&b'-') => i = s[i..].find('\n').map_or(b.len(), |n| i + n),
            b'#' if matches!(b.get(i + 1), Some(b' ' | b'!')) => i = s[i..].find('\n').map_or(b.len(), |n| i + n),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                // Comments nest.
                let mut level = 0;
                loop {
                    if i + 1 >= b.len() {
                        return None;
                    }
                    if b[i] == b'/' && b[i + 1] == b'*' {
                        level += 1;
                        i += 2;
                    } else if b[i] == b'*' && b[i + 1] == b'/' {
                        level -= 1;
                        i += 2;
                        if level == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'\'' => {
                let (text, end) = quoted(s, i, '\'')?;
                out.push((Tok::Str(text), depth));
                i = end;
            }
            b'`' | b'"' => {
                let (text, end) = quoted(s, i, c as char)?;
                out.push((Tok::Quoted(text), depth));
                i = end;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                    i += 1;
                }
                out.push((Tok::Word(s[start..i].to_string()), depth));
            }
            _ if c.is_ascii_digit() => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                    // An exponent's sign belongs to the number.
                    if matches!(b[i], b'e' | b'E') && matches!(b.get(i + 1), Some(b'+' | b'-')) {
                        i += 1;
                    }
                    i += 1;
                }
                out.push((Tok::Number, depth));
            }
            _ => {
                let p = s[i..].chars().next()?;
                match p {
                    '(' | '[' | '{' => {
                        out.push((Tok::Punct(p), depth));
                        depth += 1;
                    }
                    ')' | ']' | '}' => {
                        depth -= 1;
                        out.push((Tok::Punct(p), depth));
                    }
                    p => out.push((Tok::Punct(p), depth)),
                }
                i += p.len_utf8();
            }
        }
    }
    Some(out)
}

/// What a settings list starting at `toks[at]` sets `session_timezone` to, if
/// it names it (`Some("")`: reset to the server's zone). The list is
/// `name = literal [, name = literal …]`; it ends at the first token that does
/// not continue it.
fn zone_in_list(toks: &[(Tok, i32)], mut at: usize) -> Option<String> {
    let depth = toks.get(at)?.1;
    let mut found = None;
    loop {
        let name = match toks.get(at) {
            Some((Tok::Word(w) | Tok::Quoted(w), d)) if *d == depth => w.clone(),
            _ => return found,
        };
        if !matches!(toks.get(at + 1), Some((Tok::Punct('='), _))) {
            return found;
        }
        at += 2;
        // The value: a literal, a signed number, or a bracketed literal.
        let value = match toks.get(at) {
            Some((Tok::Str(v), _)) => Some(v.clone()),
            Some((Tok::Punct('-' | '+'), _)) => {
                at += 1;
                None
            }
            Some((Tok::Punct('(' | '[' | '{'), d)) => {
                let d = *d;
                at += 1;
                while toks.get(at).is_some_and(|(_, k)| *k > d) {
                    at += 1;
                }
                None
            }
            Some(_) => None,
            None => return found,
        };
        if name.eq_ignore_ascii_case("session_timezone") {
            // `SETTINGS session_timezone = DEFAULT` (or any non-string) leaves
            // the zone undecided here; a string decides it.
            found = value.or(found);
        }
        at += 1;
        match toks.get(at) {
            Some((Tok::Punct(','), d)) if *d == depth => at += 1,
            _ => return found,
        }
    }
}

/// The zone a query's own top-level `SETTINGS` clause sets (the last such
/// clause that names `session_timezone`).
pub(crate) fn settings_clause_zone(sql: &str) -> Option<String> {
    if !contains_ignore_case(sql, "session_timezone") {
        return None;
    }
    let toks = tokens(sql)?;
    let mut found = None;
    for (k, (t, d)) in toks.iter().enumerate() {
        if *d == 0 && matches!(t, Tok::Word(w) if w.eq_ignore_ascii_case("SETTINGS")) {
            if let Some(z) = zone_in_list(&toks, k + 1) {
                found = Some(z);
            }
        }
    }
    found
}

/// The zone a `SET …` statement sets, when it is one that names `session_timezone`.
pub(crate) fn set_statement_zone(sql: &str) -> Option<String> {
    if !contains_ignore_case(sql, "session_timezone") {
        return None;
    }
    let toks = tokens(sql)?;
    match toks.first() {
        Some((Tok::Word(w), 0)) if w.eq_ignore_ascii_case("SET") => zone_in_list(&toks, 1),
        _ => None,
    }
}

fn contains_ignore_case(hay: &str, needle: &str) -> bool {
    hay.as_bytes().windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_clauses() {
        let z = |s: &str| settings_clause_zone(s);
        assert_eq!(z("SELECT 1 SETTINGS session_timezone = 'Europe/Amsterdam'").as_deref(), Some("Europe/Amsterdam"));
        assert_eq!(
            z("select 1 settings max_threads=1, SESSION_TIMEZONE='Asia/Tokyo' FORMAT TSV").as_deref(),
            Some("Asia/Tokyo")
        );
        assert_eq!(z("SELECT 1 SETTINGS a = -1, b = [1,2], `session_timezone` = 'UTC'").as_deref(), Some("UTC"));
        assert_eq!(z("SELECT 1 SETTINGS session_timezone = ''").as_deref(), Some(""));
        assert_eq!(z("SELECT 1 SETTINGS session_timezone = 'It''s\\'s'").as_deref(), Some("It's's"));
        // Not at the top level, in a string, in a comment, or no SETTINGS at all.
        assert_eq!(z("SELECT * FROM (SELECT 1 SETTINGS session_timezone = 'UTC')"), None);
        assert_eq!(z("SELECT 'SETTINGS session_timezone = ''UTC'''"), None);
        assert_eq!(z("SELECT 1 -- SETTINGS session_timezone = 'UTC'"), None);
        assert_eq!(z("SELECT 1 /* SETTINGS /* nested */ session_timezone = 'UTC' */"), None);
        assert_eq!(z("SELECT session_timezone FROM t"), None);
        assert_eq!(z("SELECT 'unterminated SETTINGS session_timezone = 'UTC"), None);
        assert_eq!(z("SELECT 1 SETTINGS max_threads = 1"), None);
        // The last clause that names it.
        assert_eq!(
            z("SELECT 1 SETTINGS session_timezone = 'UTC' FORMAT TSV SETTINGS session_timezone = 'Asia/Tokyo'")
                .as_deref(),
            Some("Asia/Tokyo")
        );
    }

    #[test]
    fn set_statements() {
        let z = |s: &str| set_statement_zone(s);
        assert_eq!(z("SET session_timezone = 'Asia/Tokyo'").as_deref(), Some("Asia/Tokyo"));
        assert_eq!(z("  set max_threads = 2, session_timezone='UTC';").as_deref(), Some("UTC"));
        assert_eq!(z("SET session_timezone = ''").as_deref(), Some(""));
        assert_eq!(z("SELECT 1 SETTINGS session_timezone = 'UTC'"), None);
        assert_eq!(z("SET ROLE r"), None);
    }
}
