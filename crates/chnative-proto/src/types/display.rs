//! Type names rendered the way the server spells them (the parser reads them back).

use super::{DataType, IntervalKind};

fn quote_into(f: &mut std::fmt::Formatter<'_>, s: &str, q: char) -> std::fmt::Result {
    use std::fmt::Write;
    f.write_char(q)?;
    for c in s.chars() {
        if c == q || c == '\\' {
            f.write_char('\\')?;
        }
        f.write_char(c)?;
    }
    f.write_char(q)
}

/// A JSON path as the server prints it: bare when it is an identifier, else backquoted.
pub(super) struct JsonPath<'a>(pub(super) &'a str);

impl std::fmt::Display for JsonPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `SKIP` bare would read back as the JSON type's SKIP clause.
        let plain = !self.0.is_empty()
            && !self.0.as_bytes()[0].is_ascii_digit()
            && self.0.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
            && !self.0.eq_ignore_ascii_case("skip");
        if plain {
            f.write_str(self.0)
        } else {
            quote_into(f, self.0, '`')
        }
    }
}

/// A single-quoted string literal.
pub(super) struct Quoted<'a>(pub(super) &'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        quote_into(f, self.0, '\'')
    }
}

impl std::fmt::Display for IntervalKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

fn write_enum<V: std::fmt::Display>(
    f: &mut std::fmt::Formatter<'_>,
    name: &str,
    pairs: &[(String, V)],
) -> std::fmt::Result {
    f.write_str(name)?;
    f.write_str("(")?;
    for (i, (l, v)) in pairs.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        quote_into(f, l, '\'')?;
        write!(f, " = {v}")?;
    }
    f.write_str(")")
}

/// Renders the type name the way the server spells it.
impl DataType {
    /// The name of a type that has no parameters (`"UInt64"`, `"String"`,
    /// `"DateTime"`, …) without formatting anything; `None` for a type with
    /// parameters. Lets hot paths (an INSERT's column heads, sent with every
    /// block) name the common types without allocating.
    ///
    /// ```
    /// use chnative_proto::DataType;
    /// assert_eq!(DataType::UInt64.static_name(), Some("UInt64"));
    /// assert_eq!(DataType::DateTime(None).static_name(), Some("DateTime"));
    /// assert_eq!(DataType::FixedString(2).static_name(), None);
    /// ```
    pub fn static_name(&self) -> Option<&'static str> {
        use DataType as T;
        Some(match self {
            T::Int8 => "Int8",
            T::Int16 => "Int16",
            T::Int32 => "Int32",
            T::Int64 => "Int64",
            T::Int128 => "Int128",
            T::Int256 => "Int256",
            T::UInt8 => "UInt8",
            T::UInt16 => "UInt16",
            T::UInt32 => "UInt32",
            T::UInt64 => "UInt64",
            T::UInt128 => "UInt128",
            T::UInt256 => "UInt256",
            T::Float32 => "Float32",
            T::Float64 => "Float64",
            T::BFloat16 => "BFloat16",
            T::Bool => "Bool",
            T::String => "String",
            T::Date => "Date",
            T::Date32 => "Date32",
            T::DateTime(None) => "DateTime",
            T::Time => "Time",
            T::Uuid => "UUID",
            T::Ipv4 => "IPv4",
            T::Ipv6 => "IPv6",
            T::Nothing => "Nothing",
            T::Point => "Point",
            T::Ring => "Ring",
            T::LineString => "LineString",
            T::MultiLineString => "MultiLineString",
            T::Polygon => "Polygon",
            T::MultiPolygon => "MultiPolygon",
            T::Dynamic { max_types: None } => "Dynamic",
            _ => return None,
        })
    }
}

impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use DataType as T;
        match self {
            T::FixedString(n) => write!(f, "FixedString({n})"),
            T::DateTime(None) => f.write_str("DateTime"),
            T::DateTime(Some(tz)) => {
                f.write_str("DateTime(")?;
                quote_into(f, tz, '\'')?;
                f.write_str(")")
            }
            T::DateTime64(p, None) => write!(f, "DateTime64({p})"),
            T::DateTime64(p, Some(tz)) => {
                write!(f, "DateTime64({p}, ")?;
                quote_into(f, tz, '\'')?;
                f.write_str(")")
            }
            T::Time64(p) => write!(f, "Time64({p})"),
            T::Uuid => f.write_str("UUID"),
            T::Ipv4 => f.write_str("IPv4"),
            T::Ipv6 => f.write_str("IPv6"),
            T::Decimal { precision, scale } => write!(f, "Decimal({precision}, {scale})"),
            T::Enum8(pairs) => write_enum(f, "Enum8", pairs),
            T::Enum16(pairs) => write_enum(f, "Enum16", pairs),
            T::Nullable(t) => write!(f, "Nullable({t})"),
            T::Array(t) => write!(f, "Array({t})"),
            T::LowCardinality(t) => write!(f, "LowCardinality({t})"),
            T::Map(k, v) => write!(f, "Map({k}, {v})"),
            T::Tuple(elems) => {
                f.write_str("Tuple(")?;
                for (i, (n, t)) in elems.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    if let Some(n) = n {
                        quote_into(f, n, '`')?;
                        f.write_str(" ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
            T::Nested(elems) => {
                f.write_str("Nested(")?;
                for (i, (n, t)) in elems.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    quote_into(f, n, '`')?;
                    write!(f, " {t}")?;
                }
                f.write_str(")")
            }
            T::Interval(k) => write!(f, "Interval{k}"),
            T::SimpleAggregateFunction(func, t) => write!(f, "SimpleAggregateFunction({func}, {t})"),
            T::AggregateFunction(func, args) => {
                write!(f, "AggregateFunction({func}")?;
                for t in args {
                    write!(f, ", {t}")?;
                }
                f.write_str(")")
            }
            T::QBit(elem, dim) => write!(f, "QBit({elem}, {dim})"),
            T::QBitStrided(elem, dim, stride) => write!(f, "QBit({elem}, {dim}, {stride})"),
            T::Variant(alts) => {
                f.write_str("Variant(")?;
                for (i, t) in alts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
            T::Dynamic { max_types: None } => f.write_str("Dynamic"),
            T::Dynamic { max_types: Some(n) } => write!(f, "Dynamic(max_types={n})"),
            T::Json(j) => {
                let mut args: Vec<String> = Vec::new();
                if let Some(n) = j.max_dynamic_types {
                    args.push(format!("max_dynamic_types={n}"));
                }
                if let Some(n) = j.max_dynamic_paths {
                    args.push(format!("max_dynamic_paths={n}"));
                }
                for (p, t) in &j.typed_paths {
                    args.push(format!("{} {t}", JsonPath(p)));
                }
                for p in &j.skip {
                    args.push(format!("SKIP {}", JsonPath(p)));
                }
                for r in &j.skip_regexp {
                    args.push(format!("SKIP REGEXP {}", Quoted(r)));
                }
                if args.is_empty() {
                    f.write_str("JSON")
                } else {
                    write!(f, "JSON({})", args.join(", "))
                }
            }
            T::Unsupported(s) => f.write_str(s),
            other => write!(f, "{other:?}"),
        }
    }
}

#[cfg(test)]
mod display_tests {
    use super::DataType;

    #[test]
    fn static_names_are_the_display() {
        for s in [
            "Int8",
            "Int16",
            "Int32",
            "Int64",
            "Int128",
            "Int256",
            "UInt8",
            "UInt16",
            "UInt32",
            "UInt64",
            "UInt128",
            "UInt256",
            "Float32",
            "Float64",
            "BFloat16",
            "Bool",
            "String",
            "Date",
            "Date32",
            "DateTime",
            "Time",
            "UUID",
            "IPv4",
            "IPv6",
            "Nothing",
            "Point",
            "Ring",
            "LineString",
            "MultiLineString",
            "Polygon",
            "MultiPolygon",
            "Dynamic",
        ] {
            let t = DataType::parse(s).unwrap();
            assert_eq!(t.static_name(), Some(t.to_string().as_str()), "{s}");
        }
        for s in ["FixedString(2)", "DateTime('UTC')", "Nullable(UInt8)", "Decimal(9, 2)"] {
            assert_eq!(DataType::parse(s).unwrap().static_name(), None, "{s}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "UInt64",
            "Nullable(String)",
            "Array(LowCardinality(Nullable(String)))",
            "DateTime64(3, 'Europe/Moscow')",
            "Decimal(18, 4)",
            "Enum8('a' = 1, 'it\\'s' = 2)",
            "Map(String, Array(UInt8))",
            "Tuple(`a` UInt8, `b c` String)",
            "IntervalSecond",
            "UUID",
            "IPv6",
            "FixedString(3)",
        ] {
            let t = DataType::parse(s).unwrap();
            assert_eq!(DataType::parse(&t.to_string()).unwrap(), t, "{s}");
        }
    }
}
