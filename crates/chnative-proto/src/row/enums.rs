//! Rust enums ↔ Enum8/Enum16 columns by label (`#[derive(chnative::Enum)]`).

use crate::view::ColumnView;
use crate::DataType as D;

use super::out_of_bounds;
use crate::insert::InsertData;
use crate::row::{RowError as Error, RowResult as Result};

/// A Rust enum whose variants are labels of a ClickHouse enum. Implemented by
/// `#[derive(chnative::Enum)]`.
pub trait EnumLabels: Sized {
    /// The label of each variant, in declaration order.
    const LABELS: &'static [&'static str];
    /// The variant at `k` in [`Self::LABELS`].
    fn from_index(k: usize) -> Option<Self>;
    /// This variant's index in [`Self::LABELS`].
    fn index(&self) -> usize;
}

fn items(ty: &D) -> Option<Vec<(&str, i16)>> {
    match ty {
        D::Enum8(items) => Some(items.iter().map(|(l, v)| (l.as_str(), i16::from(*v))).collect()),
        D::Enum16(items) => Some(items.iter().map(|(l, v)| (l.as_str(), *v)).collect()),
        _ => None,
    }
}

/// Reading needs a variant for every label the column's type has.
pub fn enum_accepts<E: EnumLabels>(ty: &D) -> bool {
    items(ty).is_some_and(|items| items.iter().all(|(l, _)| E::LABELS.contains(l)))
}

/// Writing needs every variant's label in the column's type.
pub fn enum_writes<E: EnumLabels>(ty: &D) -> bool {
    items(ty).is_some_and(|items| E::LABELS.iter().all(|l| items.iter().any(|(x, _)| x == l)))
}

/// An Enum column's raw values and, per value, the variant it stands for.
pub struct EnumReader<'r> {
    values: Raw<'r>,
    /// (stored value, variant index), sorted by value.
    table: Vec<(i16, usize)>,
    column: &'r str,
}

enum Raw<'r> {
    Enum8(&'r [i8]),
    Enum16(&'r [i16]),
}

impl<'r> EnumReader<'r> {
    /// Resolves the column for one block.
    pub fn new<E: EnumLabels>(view: &ColumnView<'r>) -> Result<Self> {
        let ty = view.data_type();
        let items = items(ty).ok_or_else(|| {
            Error::from(crate::ProtoError::TypeMismatch {
                column: view.name().into(),
                requested: "an enum".into(),
                actual: view.type_name().into(),
            })
        })?;
        let mut table: Vec<(i16, usize)> =
            items.iter().filter_map(|(l, v)| E::LABELS.iter().position(|x| x == l).map(|k| (*v, k))).collect();
        table.sort_unstable();
        let values = match ty {
            D::Enum8(_) => Raw::Enum8(view.values()?),
            _ => Raw::Enum16(view.values()?),
        };
        Ok(EnumReader { values, table, column: view.name() })
    }

    /// The variant at row `i`.
    #[inline]
    pub fn get<E: EnumLabels>(&self, i: usize) -> Result<E> {
        let v = match self.values {
            Raw::Enum8(v) => i16::from(*v.get(i).ok_or_else(|| out_of_bounds(self.column, i))?),
            Raw::Enum16(v) => *v.get(i).ok_or_else(|| out_of_bounds(self.column, i))?,
        };
        let k = self.table.binary_search_by_key(&v, |p| p.0).map(|k| self.table[k].1);
        k.ok().and_then(E::from_index).ok_or_else(|| {
            Error::from(crate::ProtoError::violation(format!(
                "column `{}` row {i}: {v} is not a value of its enum",
                self.column
            )))
        })
    }
}

/// Enum values being written: each variant's stored value in the column's type.
#[derive(Debug)]
pub struct EnumBuffer {
    wide: bool,
    /// The stored value of each variant (by index).
    values: Vec<i16>,
    bytes: Vec<u8>,
}

impl EnumBuffer {
    /// An empty buffer for a column of type `ty`.
    pub fn new<E: EnumLabels>(ty: &D) -> Result<Self> {
        let items = items(ty).ok_or_else(|| Error::invalid_input(format!("an enum cannot be written to {ty}")))?;
        let values = E::LABELS
            .iter()
            .map(|l| {
                items
                    .iter()
                    .find(|(x, _)| x == l)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| Error::invalid_input(format!("{ty} has no label {l:?}")))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(EnumBuffer { wide: matches!(ty, D::Enum16(_)), values, bytes: Vec::new() })
    }

    /// Appends the variant at index `k`.
    #[inline]
    pub fn push(&mut self, k: usize) {
        let v = self.values.get(k).copied().unwrap_or(0);
        if self.wide {
            self.bytes.extend_from_slice(&v.to_le_bytes());
        } else {
            self.bytes.push(v as i8 as u8);
        }
    }

    fn width(&self) -> usize {
        if self.wide {
            2
        } else {
            1
        }
    }
}

fn is_enum8(t: &D) -> bool {
    matches!(t, D::Enum8(_))
}

fn is_enum16(t: &D) -> bool {
    matches!(t, D::Enum16(_))
}

impl super::ColumnBuffer for EnumBuffer {
    fn data(&self) -> InsertData<'_> {
        InsertData::Fixed {
            bytes: &self.bytes,
            width: self.width(),
            rust: "enum",
            accepts: if self.wide { is_enum16 } else { is_enum8 },
        }
    }
    fn len(&self) -> usize {
        self.bytes.len() / self.width()
    }
    fn truncate(&mut self, rows: usize) {
        self.bytes.truncate(rows * self.width())
    }
    fn push_default(&mut self) {
        // A NULL's placeholder must still be a valid value of the enum.
        self.push(0)
    }
    fn bytes(&self) -> usize {
        self.bytes.len()
    }
}
