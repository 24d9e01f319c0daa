//! Names that reach the server: identifiers quoted into SQL, and the setting and
//! parameter names sent beside it.
//!
//! A table name is never spliced into SQL: it is split into database and table
//! and each part is backtick-quoted, so no name can add SQL of its own. Setting
//! and parameter names travel in name/value lists that end at the first empty
//! name, so an empty name would cut the list short and leave the server reading
//! the rest as other fields; names are checked before anything is sent.

use crate::error::{Error, Result};

/// `name` as a backtick-quoted ClickHouse identifier.
pub(crate) fn quote_ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    push_quoted_ident(&mut s, name);
    s
}

/// Appends `name` quoted as [`quote_ident`] does.
pub(crate) fn push_quoted_ident(s: &mut String, name: &str) {
    s.push('`');
    for c in name.chars() {
        if c == '`' || c == '\\' {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('`');
}

/// A table name for SQL: `table` or `db.table`, each part quoted as an identifier.
///
/// The name splits at an unquoted `.` into at most a database and a table. A part
/// may already be quoted with backticks or double quotes (`` `my.db`.t ``, with
/// `\` escapes or a doubled quote inside); an unquoted part is taken literally,
/// spaces and all. Empty parts and control characters are refused.
pub(crate) fn quote_table(name: &str) -> Result<String> {
    let bad = |why: &str| Error::invalid_input(format!("table name {name:?}: {why}"));
    let parts = split_qualified(name).map_err(|why| bad(&why))?;
    if parts.len() > 2 {
        return Err(bad(
            "more than one unquoted `.` (expected `table` or `database.table`; quote a name that contains a dot)",
        ));
    }
    for part in &parts {
        if part.is_empty() {
            return Err(bad("empty database or table name"));
        }
        if part.chars().any(char::is_control) {
            return Err(bad("control characters are not allowed"));
        }
    }
    Ok(parts.iter().map(|p| quote_ident(p)).collect::<Vec<_>>().join("."))
}

/// Splits at unquoted dots, unquoting quoted parts.
fn split_qualified(name: &str) -> std::result::Result<Vec<String>, String> {
    let mut parts = Vec::new();
    let mut chars = name.chars().peekable();
    loop {
        let part = match chars.peek() {
            Some(&q @ ('`' | '"')) => {
                chars.next();
                let part = unquote(&mut chars, q)?;
                match chars.peek() {
                    None | Some('.') => {}
                    Some(c) => return Err(format!("`{c}` after the closing {q}")),
                }
                part
            }
            _ => {
                let mut part = String::new();
                while let Some(&c) = chars.peek() {
                    if c == '.' {
                        break;
                    }
                    part.push(c);
                    chars.next();
                }
                part
            }
        };
        parts.push(part);
        // What follows a part is a dot or the end.
        if chars.next().is_none() {
            return Ok(parts);
        }
    }
}

/// Reads a quoted identifier's body up to its closing `q` (already past the opening one).
fn unquote(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, q: char) -> std::result::Result<String, String> {
    let mut out = String::new();
    loop {
        match chars.next() {
            None => return Err(format!("no closing {q}")),
            Some('\\') => match chars.next() {
                // Only escapes that stand for themselves: ClickHouse reads `\n`, `\t`
                // and the like as control characters, which table names cannot hold.
                Some(c @ ('\\' | '`' | '"' | '\'')) => out.push(c),
                Some(c) => return Err(format!("unsupported escape `\\{c}` in a quoted name")),
                None => return Err(format!("no closing {q}")),
            },
            Some(c) if c == q => {
                if chars.peek() == Some(&q) {
                    chars.next();
                    out.push(q);
                } else {
                    return Ok(out);
                }
            }
            Some(c) => out.push(c),
        }
    }
}

/// Whether `s` is a plain identifier: an ASCII letter or `_`, then ASCII letters,
/// digits and `_`.
fn is_plain_ident(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_') && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Why `name` cannot be a setting name, if it cannot.
///
/// Every ClickHouse setting name is a plain identifier (`max_threads`,
/// `custom_x`); dotted names are let through for custom settings.
pub(crate) fn setting_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a setting name is empty (an empty name would end the settings list on the wire)".into());
    }
    if name.split('.').all(is_plain_ident) {
        None
    } else {
        Some(format!(
            "setting name {name:?} is not an identifier (ASCII letters, digits and `_`, not starting with a digit)"
        ))
    }
}

/// Refuses a setting name the server cannot know (see [`setting_name_problem`]).
pub(crate) fn check_setting_name(name: &str) -> Result<()> {
    setting_name_problem(name).map_or(Ok(()), |why| Err(Error::invalid_input(why)))
}

/// Refuses a query parameter name no `{name:Type}` placeholder can carry.
///
/// The server reads a placeholder's name as a bare word; plain identifiers are
/// the names every version reads that way (ClickHouse 26.9 also takes a few
/// forms such as `1a` or `$x`, but reads `1e5` or `0x1` as numbers, so names
/// starting with a digit or holding `$` are refused as ambiguous).
pub(crate) fn check_param_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::invalid_input(
            "a query parameter name is empty (an empty name would end the parameter list on the wire)",
        ));
    }
    if !is_plain_ident(name) {
        return Err(Error::invalid_input(format!(
            "query parameter name {name:?} is not an identifier (ASCII letters, digits and `_`, not starting with a digit)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_qualified_tables() {
        assert_eq!(quote_table("t").unwrap(), "`t`");
        assert_eq!(quote_table("db.t").unwrap(), "`db`.`t`");
        assert_eq!(quote_table("my table").unwrap(), "`my table`");
        assert_eq!(quote_table("a`b").unwrap(), "`a\\`b`");
        assert_eq!(quote_table("a\\b").unwrap(), "`a\\\\b`");
    }

    #[test]
    fn injected_names_stay_one_identifier() {
        assert_eq!(quote_table("t (a) SELECT 1; --").unwrap(), "`t (a) SELECT 1; --`");
        assert_eq!(quote_table("t` (x) SELECT 1 --").unwrap(), "`t\\` (x) SELECT 1 --`");
        // A backslash cannot escape the closing quote.
        assert_eq!(quote_table("t\\").unwrap(), "`t\\\\`");
    }

    #[test]
    fn already_quoted_parts() {
        assert_eq!(quote_table("`db`.`t`").unwrap(), "`db`.`t`");
        assert_eq!(quote_table("\"db\".\"t\"").unwrap(), "`db`.`t`");
        assert_eq!(quote_table("`my.db`.t").unwrap(), "`my.db`.`t`");
        assert_eq!(quote_table("db.`a.b`").unwrap(), "`db`.`a.b`");
        assert_eq!(quote_table("`a``b`").unwrap(), "`a\\`b`");
        assert_eq!(quote_table("`a\\`b`").unwrap(), "`a\\`b`");
        assert_eq!(quote_table("\"a\"\"b\"").unwrap(), "`a\"b`");
    }

    #[test]
    fn refused_table_names() {
        for bad in
            ["", ".", "db.", ".t", "a.b.c", "db..t", "`t", "`t`x", "`t`.", "\"t", "`a\\nb`", "t\n", "a\u{0}b", "``"]
        {
            let e = quote_table(bad).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidInput, "{bad:?}: {e}");
        }
    }

    #[test]
    fn setting_names() {
        for ok in ["max_threads", "_x", "custom_a", "custom_a.b", "X1"] {
            assert!(check_setting_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", " ", "1x", "a b", "a-b", "a.", ".a", "a..b", "max_threads\0", "naïve", "a=b"] {
            assert!(check_setting_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn param_names() {
        for ok in ["x", "_", "min_id", "A9"] {
            assert!(check_param_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1", "1e5", "a b", "a.b", "a-b", "$x", "x\0", "é"] {
            assert!(check_param_name(bad).is_err(), "{bad:?}");
        }
    }
}
