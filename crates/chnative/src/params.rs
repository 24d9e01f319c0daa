//! Query parameters: `{name:Type}` placeholders filled by the server, never by
//! splicing text into SQL.

/// A value that can fill a `{name:Type}` placeholder.
///
/// The text is what ClickHouse's TSV parser reads for the placeholder's type:
/// numbers in decimal, strings raw, arrays and tuples as ClickHouse literals.
pub trait ToParam {
    /// The parameter text before wire escaping.
    fn to_param(&self) -> String;
    /// How the value is written inside an array or tuple literal.
    fn to_param_nested(&self) -> String {
        self.to_param()
    }
}

macro_rules! display_param {
    ($($t:ty),*) => {$(
        impl ToParam for $t {
            fn to_param(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
display_param!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128, f32, f64, bool);

impl ToParam for str {
    fn to_param(&self) -> String {
        chnative_proto::packet::escape_tsv(self)
    }
    fn to_param_nested(&self) -> String {
        chnative_proto::packet::encode_parameter(self)
    }
}

impl ToParam for String {
    fn to_param(&self) -> String {
        chnative_proto::packet::escape_tsv(self)
    }
    fn to_param_nested(&self) -> String {
        chnative_proto::packet::encode_parameter(self)
    }
}

impl<T: ToParam + ?Sized> ToParam for &T {
    fn to_param(&self) -> String {
        (**self).to_param()
    }
    fn to_param_nested(&self) -> String {
        (**self).to_param_nested()
    }
}

impl<T: ToParam> ToParam for Option<T> {
    fn to_param(&self) -> String {
        match self {
            Some(v) => v.to_param(),
            None => "\\N".to_string(),
        }
    }
    fn to_param_nested(&self) -> String {
        match self {
            Some(v) => v.to_param_nested(),
            None => "NULL".to_string(),
        }
    }
}

impl<T: ToParam> ToParam for [T] {
    fn to_param(&self) -> String {
        let items: Vec<String> = self.iter().map(ToParam::to_param_nested).collect();
        format!("[{}]", items.join(","))
    }
}

impl<T: ToParam> ToParam for Vec<T> {
    fn to_param(&self) -> String {
        self.as_slice().to_param()
    }
}

/// Named parameters for a query.
#[derive(Debug, Clone, Default)]
pub struct Params(pub(crate) Vec<(String, String)>);

impl Params {
    /// No parameters.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds `name = value`. The name is checked when the query is sent (see
    /// [`crate::Query::bind`]).
    pub fn add(mut self, name: impl Into<String>, value: impl ToParam) -> Self {
        self.0.push((name.into(), value.to_param()));
        self
    }
}

/// Builds [`Params`]: `params! { "min" => 10u64, "name" => "x" }`.
#[macro_export]
macro_rules! params {
    () => { $crate::Params::new() };
    ($($name:expr => $value:expr),+ $(,)?) => {
        $crate::Params::new()$(.add($name, $value))+
    };
}
