//! JSON columns: typed paths, dynamic paths and shared data natively, or one text per row.

use crate::column::{ArrayColumn, StringColumn, TupleColumn};
use std::borrow::Cow;

use super::{ColumnView, DynamicView, StrView, D};
use crate::column::{ColumnData, JsonData, JSON_AS_STRING_SETTING, JSON_STRING};
use crate::error::{ProtoError, Result};
use crate::types::DataType;

impl<'a> ColumnView<'a> {
    /// A JSON column.
    pub fn as_json(&self) -> Result<JsonView<'a>> {
        match (self.ty.as_ref(), self.data) {
            (D::Json(j), ColumnData::Json(data)) => {
                Ok(JsonView { name: self.name, dynamic_type: j.dynamic_type(), data })
            }
            _ => Err(self.mismatch("JSON")),
        }
    }
}

/// A JSON column.
///
/// Natively (V1, V2 and FLATTENED serializations) it exposes the typed paths, the
/// dynamic paths (as Dynamic columns) and the shared data of each row (path and
/// value, a binary type encoding followed by the value in RowBinary). The JSON
/// text of a row is available when the server sent the text form, which it does
/// when the query sets `output_format_native_write_json_as_string = 1`.
#[derive(Debug, Clone)]
pub struct JsonView<'a> {
    name: &'a str,
    dynamic_type: DataType,
    data: &'a JsonData,
}

impl<'a> JsonView<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.rows()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The serialization the server used (0 = V1, 1 = STRING, 2 = V2, 3 = FLATTENED).
    pub fn version(&self) -> u64 {
        self.data.version
    }
    /// True when the server sent JSON text (`output_format_native_write_json_as_string = 1`).
    pub fn is_text(&self) -> bool {
        self.data.version == JSON_STRING
    }
    /// The JSON texts, when the server sent text.
    pub fn texts(&self) -> Result<StrView<'a>> {
        match (self.is_text(), self.data.text.as_ref()) {
            (true, ColumnData::String(StringColumn { offsets, data, .. })) => {
                Ok(StrView { offsets: offsets.typed::<u64>()?, data: data.as_bytes(), ascii: false })
            }
            _ => Err(ProtoError::ty(
                "JSON",
                format!(
                    "column `{}` arrived in the native JSON serialization; its text is only available when \
                     the query sets {JSON_AS_STRING_SETTING} = 1 (use the typed and dynamic path views otherwise)",
                    self.name
                ),
            )),
        }
    }
    /// Row `i` as JSON text (see [`Self::texts`]). Panics if `i >= len()`.
    pub fn text(&self, i: usize) -> Result<&'a str> {
        let t = self.texts()?;
        t.str(i).map_err(|_| ProtoError::violation(format!("column `{}`: JSON text is not UTF-8", self.name)))
    }
    /// The typed paths (from the type), sorted.
    pub fn typed_paths(&self) -> &'a [String] {
        &self.data.typed_paths
    }
    /// The column of typed path `k` (one value per row). Empty in the text form.
    pub fn typed(&self, k: usize) -> Result<ColumnView<'a>> {
        match (self.data.typed_paths.get(k), self.data.typed_types.get(k), self.data.typed.get(k)) {
            (Some(_), Some(t), Some(c)) => Ok(ColumnView {
                name: self.name,
                type_name: None,
                ty: Cow::Borrowed(t),
                shape: t.view_shape(),
                data: c,
                map: None,
            }),
            _ => Err(ProtoError::violation(format!("column `{}` has no typed path {k}", self.name))),
        }
    }
    /// The column of the typed path called `path`.
    pub fn typed_path(&self, path: &str) -> Option<ColumnView<'a>> {
        let k = self.data.typed_paths.iter().position(|p| p == path)?;
        self.typed(k).ok()
    }
    /// This block's dynamic paths (FLATTENED: every non-typed path), sorted.
    pub fn dynamic_paths(&self) -> &'a [String] {
        &self.data.dynamic_paths
    }
    /// The Dynamic column of dynamic path `k` (one value or NULL per row).
    pub fn dynamic(&self, k: usize) -> Result<DynamicView<'a>> {
        match self.data.dynamic.get(k) {
            Some(ColumnData::Dynamic(d)) => Ok(DynamicView { name: self.name, data: d }),
            _ => Err(ProtoError::violation(format!("column `{}` has no dynamic path {k}", self.name))),
        }
    }
    /// The Dynamic column of the dynamic path called `path`.
    pub fn dynamic_path(&self, path: &str) -> Option<DynamicView<'a>> {
        let k = self.data.dynamic_paths.iter().position(|p| p == path)?;
        self.dynamic(k).ok()
    }
    /// The type of the dynamic paths' columns.
    pub fn dynamic_type(&self) -> &DataType {
        &self.dynamic_type
    }

    fn native(&self) -> Result<()> {
        if self.is_text() {
            return Err(ProtoError::ty(
                "JSON",
                format!(
                    "column `{}` arrived as text ({JSON_AS_STRING_SETTING} = 1): it has no path columns",
                    self.name
                ),
            ));
        }
        Ok(())
    }

    /// The paths row `i` has a value for: every typed path, the dynamic paths that
    /// are not NULL in this row, then the row's shared-data paths. Panics if `i >= len()`.
    pub fn paths(&self, i: usize) -> Result<Vec<&'a str>> {
        self.native()?;
        let mut out: Vec<&'a str> = self.data.typed_paths.iter().map(String::as_str).collect();
        for (k, p) in self.data.dynamic_paths.iter().enumerate() {
            if !self.dynamic(k)?.is_null(i) {
                out.push(p);
            }
        }
        out.extend(self.shared(i)?.into_iter().map(|(p, _)| p));
        Ok(out)
    }

    /// The value of `path` in row `i`: `None` when the row has no value there (a
    /// dynamic path that is NULL, or a path absent from the row). Typed paths are
    /// always present (a Nullable typed path may hold NULL). Panics if `i >= len()`.
    pub fn path_value(&self, i: usize, path: &str) -> Result<Option<JsonValue<'a>>> {
        self.native()?;
        if let Some(k) = self.data.typed_paths.iter().position(|p| p == path) {
            return Ok(Some(JsonValue::Column(self.typed(k)?, i)));
        }
        if let Some(k) = self.data.dynamic_paths.iter().position(|p| p == path) {
            return Ok(self.dynamic(k)?.value(i)?.map(|(c, at)| JsonValue::Column(c, at)));
        }
        for (p, bytes) in self.shared(i)? {
            if p == path {
                return Ok(Some(JsonValue::Owned(OwnedValue::decode(bytes)?)));
            }
        }
        Ok(None)
    }
    /// Row `i`'s shared-data paths (V1/V2), with each value's bytes: a binary type
    /// encoding followed by the value in RowBinary. Panics if `i >= len()`.
    pub fn shared(&self, i: usize) -> Result<Vec<(&'a str, &'a [u8])>> {
        let ColumnData::Array(ArrayColumn { offsets, inner }) = self.data.shared.as_ref() else {
            return Ok(Vec::new());
        };
        let offsets = offsets.typed::<u64>()?;
        if offsets.is_empty() {
            return Ok(Vec::new());
        }
        let ColumnData::Tuple(TupleColumn { elems: kv }) = inner.as_ref() else {
            return Err(ProtoError::violation("JSON shared data has the wrong shape"));
        };
        let (
            Some(ColumnData::String(StringColumn { offsets: ko, data: kd, .. })),
            Some(ColumnData::String(StringColumn { offsets: vo, data: vd, .. })),
        ) = (kv.first(), kv.get(1))
        else {
            return Err(ProtoError::violation("JSON shared data has the wrong shape"));
        };
        let keys = StrView { offsets: ko.typed::<u64>()?, data: kd.as_bytes(), ascii: false };
        let values = StrView { offsets: vo.typed::<u64>()?, data: vd.as_bytes(), ascii: false };
        let start = if i == 0 { 0 } else { offsets[i - 1] as usize };
        let mut out = Vec::with_capacity(offsets[i] as usize - start);
        for k in start..offsets[i] as usize {
            let path = keys
                .str(k)
                .map_err(|_| ProtoError::violation(format!("column `{}`: JSON path is not UTF-8", self.name)))?;
            out.push((path, values.bytes(k)));
        }
        Ok(out)
    }
}

/// A value of a JSON path: in a column of the block, or decoded from shared data.
#[derive(Debug)]
#[non_exhaustive]
pub enum JsonValue<'a> {
    /// Row `.1` of a typed-path or dynamic-path column.
    Column(ColumnView<'a>, usize),
    /// A value from the row's shared data.
    Owned(OwnedValue),
}

impl JsonValue<'_> {
    /// The value as (column view, row).
    pub fn view(&self) -> (ColumnView<'_>, usize) {
        match self {
            JsonValue::Column(c, i) => (c.clone(), *i),
            JsonValue::Owned(v) => (v.view(), 0),
        }
    }
    /// The value's type.
    pub fn data_type(&self) -> &DataType {
        match self {
            JsonValue::Column(c, _) => c.data_type(),
            JsonValue::Owned(v) => v.data_type(),
        }
    }
}

/// One value decoded on demand from its self-describing bytes: a binary type
/// encoding followed by the value in RowBinary (how Dynamic's shared variant and
/// JSON's shared data store values).
#[derive(Debug)]
pub struct OwnedValue {
    ty: DataType,
    type_name: String,
    data: ColumnData,
}

impl OwnedValue {
    /// Decodes `bytes`. A type with no RowBinary decoder here is a [`ProtoError::Type`].
    pub fn decode(bytes: &[u8]) -> Result<OwnedValue> {
        let mut r = crate::wire::Reader::new(bytes);
        let truncated = |e: ProtoError| match e {
            ProtoError::Incomplete { .. } => ProtoError::violation("self-describing value is truncated"),
            e => e,
        };
        let ty = DataType::decode_binary(&mut r).map_err(truncated)?;
        if let Some(why) = crate::column::row_binary_unsupported(&ty) {
            return Err(ProtoError::ty(ty.to_string(), why));
        }
        let mut pool = crate::buffer::BufferPool::new();
        let mut data = ColumnData::for_type(&ty, &mut pool)?;
        data.push_row_binary(&ty, &mut r).map_err(truncated)?;
        if r.remaining() != 0 {
            return Err(ProtoError::violation("self-describing value has trailing bytes"));
        }
        Ok(OwnedValue { type_name: ty.to_string(), ty, data })
    }
    /// The value's type.
    pub fn data_type(&self) -> &DataType {
        &self.ty
    }
    /// A one-row view of the value.
    pub fn view(&self) -> ColumnView<'_> {
        ColumnView::new("", &self.ty, &self.type_name, &self.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::test_util::column;
    use crate::wire::WriteExt;

    #[test]
    fn typed_paths_borrow_their_type_and_shared_values_decode() {
        // JSON(a UInt32), V2, no dynamic paths; row 1 has shared path `c` = true.
        let mut b = Vec::new();
        b.put_u64_le(crate::column::JSON_V2);
        b.put_varuint(0);
        b.put_u32_le(1);
        b.put_u32_le(2);
        b.put_u64_le(0);
        b.put_u64_le(1);
        b.put_string("c");
        b.put_string([0x2d, 0x01]);
        let name = "JSON(a UInt32)";
        let ty = DataType::parse(name).unwrap();
        let data = column(&ty, 2, &b);
        let v = ColumnView::new("j", &ty, name, &data);
        let j = v.as_json().unwrap();
        assert!(!j.is_text());
        assert_eq!(j.typed_paths(), ["a"]);
        let a = j.typed_path("a").unwrap();
        assert!(matches!(a.ty, Cow::Borrowed(_)) && a.type_name.is_none());
        assert_eq!((a.type_name().as_ref(), a.values::<u32>().unwrap()), ("UInt32", &[1u32, 2][..]));
        assert!(j.dynamic_paths().is_empty() && j.dynamic_path("b").is_none());
        assert_eq!(j.paths(0).unwrap(), ["a"]);
        assert_eq!(j.paths(1).unwrap(), ["a", "c"]);
        assert_eq!(j.shared(1).unwrap(), [("c", &[0x2d, 0x01][..])]);
        let c = j.path_value(1, "c").unwrap().unwrap();
        assert_eq!(c.data_type(), &DataType::Bool);
        assert_eq!(c.view().0.values::<u8>().unwrap(), [1]);
        assert!(j.path_value(0, "c").unwrap().is_none());
        assert_eq!(j.dynamic_type(), &DataType::Dynamic { max_types: None });
        let e = j.texts().unwrap_err();
        assert!(e.to_string().contains(JSON_AS_STRING_SETTING), "{e}");
    }

    #[test]
    fn owned_values_reject_what_they_cannot_decode() {
        // Int64 5, then a truncated value and one with trailing bytes.
        let v = OwnedValue::decode(&[0x0a, 5, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        assert_eq!(v.view().values::<i64>().unwrap(), [5]);
        assert_eq!(v.view().type_name(), "Int64");
        assert!(matches!(OwnedValue::decode(&[0x0a, 5]), Err(ProtoError::Violation(_))));
        assert!(matches!(OwnedValue::decode(&[0x0a, 5, 0, 0, 0, 0, 0, 0, 0, 9]), Err(ProtoError::Violation(_))));
        assert!(OwnedValue::decode(&[]).is_err());
    }
}
