//! The output-format settings chn applies itself (the server renders nothing
//! over the native protocol), and where they come from: the server's session
//! (profile and `SET`), the command line, and the query's own `SETTINGS`.

use crate::split;

/// `date_time_output_format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateTimeOutput {
    /// `YYYY-MM-DD hh:mm:ss` in the column's zone (the default).
    Simple,
    /// `YYYY-MM-DDThh:mm:ssZ`, in UTC.
    Iso,
    /// Seconds since the epoch.
    UnixTimestamp,
}

/// Settings of the server's format layer that `render::FormatSettings` does
/// not hold (the server's 26.9 defaults).
#[derive(Debug, Clone)]
pub struct Ext {
    /// `bool_true_representation`.
    pub bool_true: Vec<u8>,
    /// `bool_false_representation`.
    pub bool_false: Vec<u8>,
    /// `date_time_output_format`.
    pub date_time: DateTimeOutput,
    /// `format_csv_null_representation`.
    pub csv_null: Vec<u8>,
    /// `format_tsv_null_representation`.
    pub tsv_null: Vec<u8>,
    /// `output_format_json_array_of_rows`.
    pub json_array_of_rows: bool,
    /// `output_format_csv_crlf_end_of_line`.
    pub csv_crlf: bool,
    /// `output_format_tsv_crlf_end_of_line`.
    pub tsv_crlf: bool,
    /// `output_format_pretty_max_rows`.
    pub pretty_max_rows: u64,
    /// `output_format_pretty_color`: `Some` when 0 or 1, `None` for auto
    /// (colour when standard output is a terminal).
    pub pretty_color: Option<bool>,
    /// `output_format_pretty_display_footer_column_names`.
    pub pretty_footer: bool,
    /// `output_format_pretty_display_footer_column_names_min_rows`.
    pub pretty_footer_min_rows: u64,
    /// `output_format_write_statistics` (JSON, XML).
    pub write_statistics: bool,
    /// `output_format_json_validate_utf8`.
    pub json_validate_utf8: bool,
    /// `output_format_pretty_max_value_width`.
    pub pretty_max_value_width: usize,
    /// `session_timezone`: the zone of DateTime columns that name none
    /// (`None`: the server's).
    pub session_timezone: Option<String>,
    /// `output_format_pretty_highlight_digit_groups` (with colours).
    pub highlight_digit_groups: bool,
    /// Pretty and Vertical use colours (`output_format_pretty_color`
    /// resolved for this output; set by the output, not a setting).
    pub color: bool,
}

impl Default for Ext {
    fn default() -> Self {
        Ext {
            bool_true: b"true".to_vec(),
            bool_false: b"false".to_vec(),
            date_time: DateTimeOutput::Simple,
            csv_null: b"\\N".to_vec(),
            tsv_null: b"\\N".to_vec(),
            json_array_of_rows: false,
            csv_crlf: false,
            tsv_crlf: false,
            pretty_max_rows: 10_000,
            pretty_color: None,
            pretty_footer: true,
            pretty_footer_min_rows: 50,
            write_statistics: true,
            json_validate_utf8: false,
            pretty_max_value_width: 10_000,
            session_timezone: None,
            color: false,
            highlight_digit_groups: true,
        }
    }
}

/// The settings chn reads from the server's session (those changed there).
pub const NAMES: &[&str] = &[
    "bool_true_representation",
    "bool_false_representation",
    "date_time_output_format",
    "format_csv_null_representation",
    "format_tsv_null_representation",
    "format_csv_delimiter",
    "output_format_json_array_of_rows",
    "output_format_csv_crlf_end_of_line",
    "output_format_tsv_crlf_end_of_line",
    "output_format_pretty_max_rows",
    "output_format_pretty_color",
    "output_format_pretty_display_footer_column_names",
    "output_format_pretty_display_footer_column_names_min_rows",
    "output_format_pretty_row_numbers",
    "output_format_pretty_single_large_number_tip_threshold",
    "output_format_pretty_max_value_width",
    "output_format_write_statistics",
    "output_format_json_quote_64bit_integers",
    "output_format_json_quote_64bit_floats",
    "output_format_json_quote_denormals",
    "output_format_json_quote_decimals",
    "output_format_json_escape_forward_slashes",
    "output_format_json_named_tuples_as_objects",
    "output_format_json_validate_utf8",
    "session_timezone",
    "output_format_pretty_highlight_digit_groups",
];

/// A 0/1 setting as the server accepts it.
pub fn flag(name: &str, value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!("setting {name}: `{value}` is not 0 or 1")),
    }
}

fn number(name: &str, value: &str) -> Result<u64, String> {
    value.parse().map_err(|_| format!("setting {name}: `{value}` is not a number"))
}

impl Ext {
    /// Applies one setting; `Ok(false)` when it is not one of these.
    pub fn apply(&mut self, name: &str, value: &str) -> Result<bool, String> {
        match name {
            "bool_true_representation" => self.bool_true = value.as_bytes().to_vec(),
            "bool_false_representation" => self.bool_false = value.as_bytes().to_vec(),
            "date_time_output_format" => {
                self.date_time = match value.to_ascii_lowercase().as_str() {
                    "simple" => DateTimeOutput::Simple,
                    "iso" => DateTimeOutput::Iso,
                    "unix_timestamp" => DateTimeOutput::UnixTimestamp,
                    _ => return Err(format!("setting {name}: `{value}` is not simple, iso or unix_timestamp")),
                }
            }
            "format_csv_null_representation" => self.csv_null = value.as_bytes().to_vec(),
            "format_tsv_null_representation" => self.tsv_null = value.as_bytes().to_vec(),
            "output_format_json_array_of_rows" => self.json_array_of_rows = flag(name, value)?,
            "output_format_csv_crlf_end_of_line" => self.csv_crlf = flag(name, value)?,
            "output_format_tsv_crlf_end_of_line" => self.tsv_crlf = flag(name, value)?,
            "output_format_pretty_max_rows" => self.pretty_max_rows = number(name, value)?,
            "output_format_pretty_max_value_width" => {
                self.pretty_max_value_width = usize::try_from(number(name, value)?).unwrap_or(usize::MAX)
            }
            "output_format_pretty_color" => {
                self.pretty_color = match value.to_ascii_lowercase().as_str() {
                    "auto" => None,
                    _ => Some(flag(name, value)?),
                }
            }
            "output_format_pretty_display_footer_column_names" => self.pretty_footer = flag(name, value)?,
            "output_format_pretty_display_footer_column_names_min_rows" => {
                self.pretty_footer_min_rows = number(name, value)?
            }
            "output_format_write_statistics" => self.write_statistics = flag(name, value)?,
            "output_format_pretty_highlight_digit_groups" => self.highlight_digit_groups = flag(name, value)?,
            "output_format_json_validate_utf8" => self.json_validate_utf8 = flag(name, value)?,
            "session_timezone" => {
                self.session_timezone = Some(value.to_string()).filter(|z| !z.is_empty());
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// How a Bool is written in the text formats.
    pub fn bool_text(&self, b: bool) -> &[u8] {
        if b {
            &self.bool_true
        } else {
            &self.bool_false
        }
    }
}

/// A DateTime (`secs`, and `frac` of `precision` digits for DateTime64) as
/// `date_time_output_format` writes it (`iso` or `unix_timestamp`).
pub fn date_time_text(secs: i64, frac: i64, precision: u8, how: DateTimeOutput) -> Vec<u8> {
    let p = usize::from(precision);
    match how {
        DateTimeOutput::UnixTimestamp => {
            if p == 0 {
                return secs.to_string().into_bytes();
            }
            // ticks = secs * 10^p + frac with 0 <= frac < 10^p; written as the server does, sign first.
            let scale = 10i128.pow(u32::from(precision));
            let ticks = i128::from(secs) * scale + i128::from(frac);
            let sign = if ticks < 0 { "-" } else { "" };
            let a = ticks.unsigned_abs();
            let scale = scale as u128;
            format!("{sign}{}.{:0p$}", a / scale, a % scale).into_bytes()
        }
        DateTimeOutput::Iso | DateTimeOutput::Simple => {
            let (y, m, d) = chnative::convert::calendar::civil_from_days(secs.div_euclid(86_400));
            let t = secs.rem_euclid(86_400);
            let sep = if how == DateTimeOutput::Iso { 'T' } else { ' ' };
            let mut s = format!("{y:04}-{m:02}-{d:02}{sep}{:02}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
            if p > 0 {
                s.push_str(&format!(".{frac:0p$}"));
            }
            if how == DateTimeOutput::Iso {
                s.push('Z');
            }
            s.into_bytes()
        }
    }
}

/// The settings of a query's own `SETTINGS` clause (outside parentheses),
/// with string literals unquoted: `SELECT … SETTINGS a = 1, b = 'x'`.
pub fn of_query(sql: &str) -> Vec<(String, String)> {
    let w = split::words(sql);
    let mut depth = 0i32;
    let mut at = None;
    for (k, x) in w.iter().enumerate() {
        match x.text.as_str() {
            "(" => depth += 1,
            ")" => depth -= 1,
            "SETTINGS" if depth == 0 => at = Some(k),
            _ => {}
        }
    }
    let mut out = Vec::new();
    let Some(mut k) = at.map(|k| k + 1) else { return out };
    while let (Some(name), Some(eq)) = (w.get(k), w.get(k + 1)) {
        if eq.text != "=" {
            break;
        }
        // A value: one word, or a sign and a word.
        let (value, next) = match w.get(k + 2) {
            Some(s) if s.text == "-" || s.text == "+" => match w.get(k + 3) {
                Some(v) => (format!("{}{}", s.text, &sql[v.start..v.end]), k + 4),
                None => break,
            },
            Some(v) => (unquote(&sql[v.start..v.end]), k + 3),
            None => break,
        };
        out.push((sql[name.start..name.end].to_string(), value));
        match w.get(next) {
            Some(c) if c.text == "," => k = next + 1,
            _ => break,
        }
    }
    out
}

/// A SQL string literal's text (`'a\'b'` → `a'b`); other words as they are.
fn unquote(word: &str) -> String {
    let Some(body) = word.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) else { return word.to_string() };
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('0') => out.push('\0'),
                Some(c) => out.push(c),
                None => {}
            },
            '\'' => {
                // A doubled quote.
                chars.next();
                out.push('\'');
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether a statement is a `SET` (it changes the session's settings).
pub fn is_set(sql: &str) -> bool {
    split::words(sql).first().is_some_and(|w| w.text == "SET")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_settings() {
        assert_eq!(
            of_query("SELECT 1 SETTINGS a = 1, b='x\\'y', c = -2 FORMAT JSON"),
            [("a".into(), "1".into()), ("b".into(), "x'y".into()), ("c".into(), "-2".into())]
        );
        assert_eq!(of_query("SELECT * FROM (SELECT 1 SETTINGS a = 1)"), Vec::<(String, String)>::new());
        assert_eq!(of_query("SELECT 1 FORMAT TSV SETTINGS date_time_output_format = 'iso'").len(), 1);
    }

    #[test]
    fn date_times() {
        let t = |s, f, p, h| String::from_utf8(date_time_text(s, f, p, h)).unwrap();
        assert_eq!(t(1_704_164_645, 0, 0, DateTimeOutput::Iso), "2024-01-02T03:04:05Z");
        assert_eq!(t(1_704_164_645, 500, 3, DateTimeOutput::Iso), "2024-01-02T03:04:05.500Z");
        assert_eq!(t(1_704_164_645, 500, 3, DateTimeOutput::UnixTimestamp), "1704164645.500");
        assert_eq!(t(-2, 500, 3, DateTimeOutput::UnixTimestamp), "-1.500");
        assert_eq!(t(-1, 0, 0, DateTimeOutput::Iso), "1969-12-31T23:59:59Z");
    }
}
