//! `Enum8` / `Enum16`: the label ↔ value map from the column type.
//!
//! The wire carries only the `i8`/`i16` values; the labels exist only in the type
//! name, which the parser turns into [`DataType::Enum8`] / [`DataType::Enum16`].
//!
//! ```
//! use chnative_proto::convert::EnumMap;
//! use chnative_proto::DataType;
//! let ty = DataType::parse("Enum8('red' = 1, 'green' = -2)").unwrap();
//! let map = EnumMap::from_type(&ty).unwrap();
//! assert_eq!(map.name(-2), Some("green"));
//! assert_eq!(map.value("red"), Some(1));
//! assert_eq!(map.encode8(&["red", "green"]).unwrap(), vec![1i8, -2]);
//! let err = map.encode8(&["red", "blue"]).unwrap_err();
//! assert_eq!(err.to_string(), "row 1: \"blue\" is not a label of Enum8('red' = 1, 'green' = -2)");
//! ```

use std::collections::HashMap;

use super::{plain_type, ConvertError};
use crate::types::DataType;

/// Labels and values of an `Enum8` or `Enum16` type.
///
/// ```
/// use chnative_proto::convert::EnumMap;
/// use chnative_proto::DataType;
/// let map = EnumMap::from_type(&DataType::Enum16(vec![("a".into(), -32768), ("b".into(), 32767)])).unwrap();
/// assert!(!map.is_enum8());
/// assert_eq!(map.iter().collect::<Vec<_>>(), vec![("a", -32768), ("b", 32767)]);
/// ```
#[derive(Debug, Clone)]
pub struct EnumMap {
    /// (label, value) in declaration order.
    pairs: Vec<(String, i16)>,
    /// Indexes into `pairs`, sorted by value.
    by_value: Vec<usize>,
    by_name: HashMap<String, i16>,
    enum8: bool,
    type_name: String,
}

impl EnumMap {
    /// The map of an `Enum8`/`Enum16` type; `Nullable`, `LowCardinality` and
    /// `SimpleAggregateFunction` wrappers are looked through.
    ///
    /// ```
    /// use chnative_proto::convert::EnumMap;
    /// use chnative_proto::DataType;
    /// assert!(EnumMap::from_type(&DataType::parse("Nullable(Enum8('x' = 1))").unwrap()).is_ok());
    /// assert!(EnumMap::from_type(&DataType::Int8).is_err());
    /// ```
    pub fn from_type(ty: &DataType) -> Result<EnumMap, ConvertError> {
        let (pairs, enum8): (Vec<(String, i16)>, bool) = match plain_type(ty) {
            DataType::Enum8(p) => (p.iter().map(|(n, v)| (n.clone(), i16::from(*v))).collect(), true),
            DataType::Enum16(p) => (p.clone(), false),
            DataType::Nullable(t) | DataType::LowCardinality(t) => return EnumMap::from_type(t),
            other => {
                return Err(ConvertError::Column(crate::error::ProtoError::ty(
                    other.to_string(),
                    "not an Enum8 or Enum16",
                )))
            }
        };
        let mut by_value: Vec<usize> = (0..pairs.len()).collect();
        by_value.sort_by_key(|&i| pairs[i].1);
        let by_name = pairs.iter().map(|(n, v)| (n.clone(), *v)).collect();
        Ok(EnumMap { by_value, by_name, enum8, type_name: plain_type(ty).to_string(), pairs })
    }

    /// True for `Enum8` (values are `i8` on the wire), false for `Enum16`.
    ///
    /// ```
    /// # use chnative_proto::{convert::EnumMap, DataType};
    /// assert!(EnumMap::from_type(&DataType::Enum8(vec![("a".into(), 1)])).unwrap().is_enum8());
    /// ```
    pub fn is_enum8(&self) -> bool {
        self.enum8
    }

    /// The label of a value (pass an `Enum8`'s `i8` with `.into()`).
    ///
    /// ```
    /// # use chnative_proto::{convert::EnumMap, DataType};
    /// let map = EnumMap::from_type(&DataType::Enum8(vec![("a".into(), -128)])).unwrap();
    /// let raw: &[i8] = &[-128, 0];
    /// assert_eq!(map.name(raw[0].into()), Some("a"));
    /// assert_eq!(map.name(raw[1].into()), None);
    /// ```
    pub fn name(&self, value: i16) -> Option<&str> {
        self.by_value
            .binary_search_by_key(&value, |&i| self.pairs[i].1)
            .ok()
            .map(|k| self.pairs[self.by_value[k]].0.as_str())
    }

    /// The value of a label.
    ///
    /// ```
    /// # use chnative_proto::{convert::EnumMap, DataType};
    /// let map = EnumMap::from_type(&DataType::Enum8(vec![("it's".into(), 5)])).unwrap();
    /// assert_eq!(map.value("it's"), Some(5));
    /// ```
    pub fn value(&self, name: &str) -> Option<i16> {
        self.by_name.get(name).copied()
    }

    /// (label, value) pairs in declaration order.
    ///
    /// ```
    /// # use chnative_proto::{convert::EnumMap, DataType};
    /// let map = EnumMap::from_type(&DataType::Enum8(vec![("a".into(), 1)])).unwrap();
    /// assert_eq!(map.iter().count(), 1);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (&str, i16)> + '_ {
        self.pairs.iter().map(|(n, v)| (n.as_str(), *v))
    }

    /// Number of labels.
    ///
    /// ```
    /// # use chnative_proto::{convert::EnumMap, DataType};
    /// assert_eq!(EnumMap::from_type(&DataType::Enum8(vec![("a".into(), 1)])).unwrap().len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when the type has no labels.
    ///
    /// ```
    /// # use chnative_proto::{convert::EnumMap, DataType};
    /// assert!(!EnumMap::from_type(&DataType::Enum8(vec![("a".into(), 1)])).unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Labels → `Enum8` wire values, for an insert; an error names the first
    /// unknown label and its row (also when the map is an `Enum16`'s).
    ///
    /// ```
    /// # use chnative_proto::{convert::EnumMap, DataType};
    /// let map = EnumMap::from_type(&DataType::Enum8(vec![("a".into(), 1), ("b".into(), 2)])).unwrap();
    /// assert_eq!(map.encode8(&["b", "a", "b"]).unwrap(), vec![2i8, 1, 2]);
    /// ```
    pub fn encode8<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<i8>, ConvertError> {
        names
            .iter()
            .enumerate()
            .map(|(row, n)| {
                let v = self.lookup(row, n.as_ref())?;
                i8::try_from(v).map_err(|_| ConvertError::out_of_range(v, "Enum8 (i8)"))
            })
            .collect()
    }

    /// Labels → `Enum16` wire values, for an insert; an error names the first
    /// unknown label and its row.
    ///
    /// ```
    /// # use chnative_proto::{convert::EnumMap, DataType};
    /// let map = EnumMap::from_type(&DataType::Enum16(vec![("a".into(), 1000)])).unwrap();
    /// assert_eq!(map.encode16(&["a"]).unwrap(), vec![1000i16]);
    /// assert!(map.encode16(&["A"]).is_err()); // labels are case-sensitive
    /// ```
    pub fn encode16<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<i16>, ConvertError> {
        names.iter().enumerate().map(|(row, n)| self.lookup(row, n.as_ref())).collect()
    }

    fn lookup(&self, row: usize, name: &str) -> Result<i16, ConvertError> {
        self.value(name).ok_or_else(|| ConvertError::UnknownLabel {
            label: name.to_string(),
            row,
            ty: self.type_name.clone(),
        })
    }
}
