//! DataFusion filter expressions translated to ClickHouse SQL with `{name:Type}`
//! placeholders.
//!
//! A filter is pushed down only when ClickHouse computes exactly what DataFusion would:
//! every translation here is `Exact`, and anything else is `Unsupported` (DataFusion
//! evaluates it itself). What is refused and why:
//! - float columns: Arrow orders NaN above every number (so DataFusion keeps NaN rows
//!   for `x > 1`) while ClickHouse follows IEEE 754 (it drops them);
//! - `ILIKE`: case folding differs; `LIKE` patterns with `_`: ClickHouse matches one
//!   byte, DataFusion one character;
//! - Enum, FixedString, Decimal, UUID, IP, Array, Map, Tuple, JSON columns, and casts or
//!   function calls on a column: no translation whose result is known to agree.

use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Like, Operator};

use crate::config::{quote_ident, ColumnSpec, SqlFragment};

/// Builds one fragment, numbering its placeholders `{prefix}{n}`.
pub(crate) struct Translator<'a> {
    columns: &'a [ColumnSpec],
    prefix: String,
    params: Vec<(String, String)>,
}

/// The class of a ClickHouse column for filtering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Int,
    Str,
    Bool,
    Date,
    /// DateTime (seconds).
    DateTime,
    /// DateTime64 with this many digits (3, 6 or 9).
    DateTime64(u8),
}

/// The type inside `Nullable(…)` / `LowCardinality(…)`.
pub(crate) fn base_type(ty: &str) -> &str {
    let mut t = ty.trim();
    loop {
        if let Some(inner) = t.strip_prefix("Nullable(").and_then(|r| r.strip_suffix(')')) {
            t = inner.trim();
        } else if let Some(inner) = t.strip_prefix("LowCardinality(").and_then(|r| r.strip_suffix(')')) {
            t = inner.trim();
        } else {
            return t;
        }
    }
}

pub(crate) fn kind(ty: &str) -> Option<Kind> {
    let b = base_type(ty);
    Some(match b {
        "Int8" | "Int16" | "Int32" | "Int64" | "UInt8" | "UInt16" | "UInt32" | "UInt64" => Kind::Int,
        "String" => Kind::Str,
        "Bool" => Kind::Bool,
        "Date" | "Date32" => Kind::Date,
        _ if b == "DateTime" || b.starts_with("DateTime(") => Kind::DateTime,
        _ if b.starts_with("DateTime64(") => {
            let digits: String = b["DateTime64(".len()..].chars().take_while(|c| c.is_ascii_digit()).collect();
            match digits.as_str() {
                "3" => Kind::DateTime64(3),
                "6" => Kind::DateTime64(6),
                "9" => Kind::DateTime64(9),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// `YYYY-MM-DD` of a day count since 1970-01-01 (proleptic Gregorian).
pub(crate) fn date_text(days: i64) -> String {
    let (y, m, d) = chnative::convert::calendar::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

impl<'a> Translator<'a> {
    pub(crate) fn new(columns: &'a [ColumnSpec], prefix: impl Into<String>) -> Self {
        Translator { columns, prefix: prefix.into(), params: Vec::new() }
    }

    /// Translates `expr`, or `None` when it cannot be pushed down exactly.
    pub(crate) fn translate(mut self, expr: &Expr) -> Option<SqlFragment> {
        let sql = self.expr(expr)?;
        Some(SqlFragment { sql, params: self.params })
    }

    fn column<'e>(&self, e: &'e Expr) -> Option<&'a ColumnSpec> {
        match e {
            Expr::Column(c) => self.columns.iter().find(|s| s.name == c.name),
            _ => None,
        }
    }

    fn placeholder(&mut self, ty: &str, value: String) -> String {
        let name = format!("{}{}", self.prefix, self.params.len());
        self.params.push((name.clone(), value));
        format!("{{{name}:{ty}}}")
    }

    /// The column's SQL and a placeholder for `value` compared with it.
    fn operand(&mut self, col: &ColumnSpec, value: &ScalarValue) -> Option<(String, String)> {
        let k = kind(&col.clickhouse_type)?;
        let c = quote_ident(&col.name);
        use ScalarValue as S;
        Some(match (k, value) {
            (Kind::Int, v) => {
                let text = match v {
                    S::Int8(Some(x)) => x.to_string(),
                    S::Int16(Some(x)) => x.to_string(),
                    S::Int32(Some(x)) => x.to_string(),
                    S::Int64(Some(x)) => x.to_string(),
                    S::UInt8(Some(x)) => x.to_string(),
                    S::UInt16(Some(x)) => x.to_string(),
                    S::UInt32(Some(x)) => x.to_string(),
                    S::UInt64(Some(x)) => x.to_string(),
                    _ => return None,
                };
                // The literal's own width, so a value outside the column's range is still
                // compared as a number (as DataFusion does), not refused by the parser.
                let ty = if text.starts_with('-') { "Int64" } else { "UInt64" };
                (c, self.placeholder(ty, text))
            }
            (Kind::Str, S::Utf8(Some(s)) | S::LargeUtf8(Some(s)) | S::Utf8View(Some(s))) => {
                (c, self.placeholder("String", s.clone()))
            }
            (Kind::Bool, S::Boolean(Some(b))) => (c, self.placeholder("Bool", b.to_string())),
            // Date32's range (1900-01-01 ..= 2299-12-31) for every Date column: a Date
            // placeholder would clamp an earlier literal to 1970 and change the answer.
            (Kind::Date, S::Date32(Some(d))) if (-25_567..=120_529).contains(d) => {
                (c, self.placeholder("Date32", date_text(i64::from(*d))))
            }
            (Kind::DateTime, S::TimestampSecond(Some(s), _)) => {
                (format!("toUnixTimestamp({c})"), self.placeholder("Int64", s.to_string()))
            }
            (Kind::DateTime64(3), S::TimestampMillisecond(Some(s), _)) => {
                (format!("toUnixTimestamp64Milli({c})"), self.placeholder("Int64", s.to_string()))
            }
            (Kind::DateTime64(6), S::TimestampMicrosecond(Some(s), _)) => {
                (format!("toUnixTimestamp64Micro({c})"), self.placeholder("Int64", s.to_string()))
            }
            (Kind::DateTime64(9), S::TimestampNanosecond(Some(s), _)) => {
                (format!("toUnixTimestamp64Nano({c})"), self.placeholder("Int64", s.to_string()))
            }
            _ => return None,
        })
    }

    fn literal(e: &Expr) -> Option<&ScalarValue> {
        match e {
            // A LowCardinality column is a dictionary to Arrow; the literal compared with
            // it is a dictionary scalar around the plain value.
            Expr::Literal(ScalarValue::Dictionary(_, v), _) if !v.is_null() => Some(v),
            Expr::Literal(v, _) if !v.is_null() => Some(v),
            _ => None,
        }
    }

    fn expr(&mut self, e: &Expr) -> Option<String> {
        match e {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
                Operator::And | Operator::Or => {
                    let l = self.expr(left)?;
                    let r = self.expr(right)?;
                    Some(format!("({l}) {} ({r})", if *op == Operator::And { "AND" } else { "OR" }))
                }
                Operator::Eq | Operator::NotEq | Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq => {
                    let (col, val, op) = match (self.column(left), Self::literal(right)) {
                        (Some(c), Some(v)) => (c, v, *op),
                        _ => (self.column(right)?, Self::literal(left)?, op.swap()?),
                    };
                    let (c, p) = self.operand(col, val)?;
                    let sym = match op {
                        Operator::Eq => "=",
                        Operator::NotEq => "!=",
                        Operator::Lt => "<",
                        Operator::LtEq => "<=",
                        Operator::Gt => ">",
                        Operator::GtEq => ">=",
                        _ => return None,
                    };
                    Some(format!("{c} {sym} {p}"))
                }
                _ => None,
            },
            Expr::Not(inner) => Some(format!("NOT ({})", self.expr(inner)?)),
            Expr::IsNull(inner) => {
                let c = self.column(inner)?;
                Some(format!("isNull({})", quote_ident(&c.name)))
            }
            Expr::IsNotNull(inner) => {
                let c = self.column(inner)?;
                Some(format!("isNotNull({})", quote_ident(&c.name)))
            }
            Expr::Column(_) => {
                // A Bool column used as the condition itself.
                let c = self.column(e)?;
                (kind(&c.clickhouse_type)? == Kind::Bool).then(|| format!("{} = true", quote_ident(&c.name)))
            }
            Expr::Between(Between { expr, negated, low, high }) => {
                let col = self.column(expr)?;
                let (c, lo) = self.operand(col, Self::literal(low)?)?;
                let (_, hi) = self.operand(col, Self::literal(high)?)?;
                let cond = format!("{c} >= {lo} AND {c} <= {hi}");
                Some(if *negated { format!("NOT ({cond})") } else { cond })
            }
            Expr::InList(InList { expr, list, negated }) => {
                let col = self.column(expr)?;
                if list.is_empty() {
                    return None;
                }
                let mut items = Vec::with_capacity(list.len());
                let mut c = String::new();
                for item in list {
                    let (cc, p) = self.operand(col, Self::literal(item)?)?;
                    c = cc;
                    items.push(p);
                }
                Some(format!("{c} {}IN ({})", if *negated { "NOT " } else { "" }, items.join(", ")))
            }
            Expr::Like(Like { negated, expr, pattern, escape_char, case_insensitive }) => {
                if *case_insensitive || !matches!(escape_char, None | Some('\\')) {
                    return None;
                }
                let col = self.column(expr)?;
                if kind(&col.clickhouse_type)? != Kind::Str {
                    return None;
                }
                let pat = match Self::literal(pattern)? {
                    ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) | ScalarValue::Utf8View(Some(s)) => s,
                    _ => return None,
                };
                // `_` is one byte to ClickHouse and one character to DataFusion.
                if pat.contains('_') {
                    return None;
                }
                let p = self.placeholder("String", pat.clone());
                Some(format!("{} {}LIKE {p}", quote_ident(&col.name), if *negated { "NOT " } else { "" }))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::{col, lit};

    fn cols() -> Vec<ColumnSpec> {
        [("id", "UInt64"), ("s", "LowCardinality(Nullable(String))"), ("f", "Float64"), ("d", "Date")]
            .iter()
            .map(|(n, t)| ColumnSpec { name: n.to_string(), clickhouse_type: t.to_string() })
            .collect()
    }

    fn tr(e: &Expr) -> Option<SqlFragment> {
        let c = cols();
        Translator::new(&c, "p").translate(e)
    }

    #[test]
    fn comparisons_become_placeholders() {
        let f = tr(&col("id").gt(lit(5u64)).and(col("s").eq(lit("x' OR 1")))).unwrap();
        assert_eq!(f.sql, "(`id` > {p0:UInt64}) AND (`s` = {p1:String})");
        assert_eq!(f.params, vec![("p0".into(), "5".into()), ("p1".into(), "x' OR 1".into())]);
        // Literal on the left: the operator turns around.
        let f = tr(&lit(5u64).lt(col("id"))).unwrap();
        assert_eq!(f.sql, "`id` > {p0:UInt64}");
    }

    #[test]
    fn refused_where_semantics_differ() {
        assert!(tr(&col("f").gt(lit(1.0))).is_none(), "NaN ordering differs");
        assert!(tr(&col("s").like(lit("a_c"))).is_none(), "_ is a byte in ClickHouse");
        assert!(tr(&col("s").ilike(lit("abc"))).is_none());
        assert!(tr(&col("id").eq(lit(ScalarValue::UInt64(None)))).is_none());
        assert!(tr(&col("id").gt(lit(1u64)).or(col("f").gt(lit(1.0)))).is_none());
        assert!(tr(&col("nope").eq(lit(1u64))).is_none());
        let f = tr(&col("s").like(lit("%abc%"))).unwrap();
        assert_eq!(f.sql, "`s` LIKE {p0:String}");
    }

    #[test]
    fn in_list_between_dates() {
        let f = tr(&col("id").in_list(vec![lit(1u64), lit(2u64)], true)).unwrap();
        assert_eq!(f.sql, "`id` NOT IN ({p0:UInt64}, {p1:UInt64})");
        let f =
            tr(&col("d").between(lit(ScalarValue::Date32(Some(0))), lit(ScalarValue::Date32(Some(19_723))))).unwrap();
        assert_eq!(f.sql, "`d` >= {p0:Date32} AND `d` <= {p1:Date32}");
        assert!(tr(&col("d").gt(lit(ScalarValue::Date32(Some(-30_000))))).is_none(), "before 1900");
        assert_eq!(f.params[1].1, "2024-01-01");
        assert_eq!(date_text(-1), "1969-12-31");
    }
}
