//! JSON columns.
//!
//! Wire layout, as ClickHouse 26.9 sends it in Native blocks (verified against
//! captures in `tests/data/captures/`, see `tests/golden_dynamic.rs`):
//! **JSON**: prefix = UInt64 version. V1 (0) / V2 (2): [V1: VarUInt] VarUInt n, n
//! sorted dynamic path names, the typed paths' prefixes, each dynamic path's Dynamic
//! prefix. Data = typed path columns, dynamic path columns, then the shared data
//! `Map(String, String)` (path → binary type + RowBinary value): u64 offsets, then
//! paths and values with VarUInt lengths even at revision 54492. STRING (1, with
//! `output_format_native_write_json_as_string = 1`): one JSON text per row, always
//! VarUInt-length-prefixed (even at revision 54492). FLATTENED (3): like V2 without
//! shared data; every non-typed path is a FLATTENED Dynamic column.
//!
//! JSON V3 (version 4, bucketed shared data) is not sent on the Native protocol by 26.9
//! and is rejected with [`ProtoError::Type`].

use crate::buffer::BufferPool;
use crate::error::{ProtoError, Result};
use crate::types::{DataType, JsonType};
use crate::wire::{Budget, Reader, WriteExt};

use super::check::{cannot_hold, Reason};
use super::codec::{not_measured, ColumnCodec};
use super::dynamic::{read_names, sparse_dynamic_unsupported};
use super::{ArrayColumn, BodyForm, ColumnData, DynamicData, Layout, StringColumn, TupleColumn, FLATTENED_SETTING};

/// JSON (Object) serialization version 1 (sent below revision 54473).
pub const JSON_V1: u64 = 0;
/// JSON as one text per row (`output_format_native_write_json_as_string = 1`).
pub const JSON_STRING: u64 = 1;
/// JSON serialization version 2 (sent from revision 54473).
pub const JSON_V2: u64 = 2;
/// JSON FLATTENED serialization (Native only, on request).
pub const JSON_FLATTENED: u64 = 3;
/// JSON V3 (MergeTree only in 26.9).
pub const JSON_V3: u64 = 4;
/// The setting that makes the server send JSON as text.
pub const JSON_AS_STRING_SETTING: &str = "output_format_native_write_json_as_string";
/// Bound on the number of paths a JSON prefix may announce.
const MAX_JSON_PATHS: u64 = 1 << 16;
/// Storage of a `JSON(...)` column.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct JsonData {
    /// Serialization version read from the prefix: [`JSON_V1`], [`JSON_STRING`],
    /// [`JSON_V2`] or [`JSON_FLATTENED`].
    pub version: u64,
    /// V1 only: the first count of the structure.
    pub v1_max_paths: u64,
    /// Typed paths from the type, sorted by path.
    pub typed_paths: Vec<String>,
    /// Their types.
    pub typed_types: Vec<DataType>,
    /// One column per typed path.
    pub typed: Vec<ColumnData>,
    /// Dynamic paths of this block (FLATTENED: every non-typed path).
    pub dynamic_paths: Vec<String>,
    /// One Dynamic column per dynamic path.
    pub dynamic: Vec<ColumnData>,
    /// V1/V2 shared data: `Map(String, String)` as `Array(Tuple(String, String))`
    /// (path → binary type + RowBinary value), one map per row.
    pub shared: Box<ColumnData>,
    /// STRING: the JSON text of each row.
    pub text: Box<ColumnData>,
    rows: usize,
}

impl JsonData {
    /// Empty storage for a JSON type.
    pub fn new(ty: &JsonType, pool: &mut BufferPool) -> Result<JsonData> {
        let mut typed = Vec::with_capacity(ty.typed_paths.len());
        for (_, t) in &ty.typed_paths {
            typed.push(ColumnData::for_type(t, pool)?);
        }
        Ok(JsonData {
            version: JSON_V2,
            v1_max_paths: 0,
            typed_paths: ty.typed_paths.iter().map(|(p, _)| p.clone()).collect(),
            typed_types: ty.typed_paths.iter().map(|(_, t)| t.clone()).collect(),
            typed,
            dynamic_paths: Vec::new(),
            dynamic: Vec::new(),
            shared: Box::new(shared_map_column(pool)),
            text: Box::new(ColumnData::String(StringColumn::take(pool))),
            rows: 0,
        })
    }

    /// Rows held.
    pub fn rows(&self) -> usize {
        self.rows
    }
}

impl ColumnCodec for JsonData {
    /// Empty storage with the same structure (paths read from the last prefix).
    fn empty_like(&self, pool: &mut BufferPool) -> JsonData {
        JsonData {
            version: self.version,
            v1_max_paths: self.v1_max_paths,
            typed_paths: self.typed_paths.clone(),
            typed_types: self.typed_types.clone(),
            typed: self.typed.iter().map(|c| c.empty_like(pool)).collect(),
            dynamic_paths: self.dynamic_paths.clone(),
            dynamic: self.dynamic.iter().map(|c| c.empty_like(pool)).collect(),
            shared: Box::new(shared_map_column(pool)),
            text: Box::new(ColumnData::String(StringColumn::take(pool))),
            rows: 0,
        }
    }

    fn recycle(self, pool: &mut BufferPool) {
        self.typed.into_iter().for_each(|c| c.recycle(pool));
        self.dynamic.into_iter().for_each(|c| c.recycle(pool));
        self.shared.recycle(pool);
        self.text.recycle(pool);
    }

    fn clear(&mut self) {
        self.typed.iter_mut().for_each(ColumnData::clear);
        self.dynamic.iter_mut().for_each(ColumnData::clear);
        self.shared.clear();
        self.text.clear();
        self.rows = 0;
    }

    fn read_prefix(&mut self, r: &mut Reader<'_>) -> Result<()> {
        let version = r.u64_le()?;
        match version {
            JSON_STRING => {
                self.version = version;
                Ok(())
            }
            JSON_V1 | JSON_V2 | JSON_FLATTENED => {
                let v1 = if version == JSON_V1 { r.varuint()? } else { 0 };
                let paths = read_names(r, "JSON dynamic paths", MAX_JSON_PATHS)?;
                if paths != self.dynamic_paths {
                    let mut pool = BufferPool::new();
                    let cols =
                        paths.iter().map(|_| ColumnData::Dynamic(Box::new(DynamicData::new(&mut pool)))).collect();
                    std::mem::replace(&mut self.dynamic, cols).into_iter().for_each(|c| c.recycle(&mut pool));
                    self.dynamic_paths = paths;
                }
                self.version = version;
                self.v1_max_paths = v1;
                self.typed.iter_mut().try_for_each(|c| c.read_prefix(r))?;
                self.dynamic.iter_mut().try_for_each(|c| c.read_prefix(r))
            }
            JSON_V3 => Err(ProtoError::ty(
                "JSON",
                format!(
                    "serialization version V3 is not implemented; set {JSON_AS_STRING_SETTING} = 1 to \
                     receive JSON as text, or {FLATTENED_SETTING} = 1 for the FLATTENED form"
                ),
            )),
            v => Err(ProtoError::violation(format!("unknown JSON serialization version {v}"))),
        }
    }

    fn read_body(&mut self, r: &mut Reader<'_>, rows: usize, form: BodyForm<'_>, pool: &mut BufferPool) -> Result<()> {
        self.rows = rows;
        if rows == 0 {
            self.clear();
            return Ok(());
        }
        if self.version == JSON_STRING {
            // The text column goes through the row-by-row writer: VarUInt lengths at every revision.
            let plain = Layout { sized_strings: false, ..form.layout };
            self.text.read_data(r, rows, None, plain, pool)?;
            self.typed.iter_mut().for_each(ColumnData::clear);
            self.dynamic.iter_mut().for_each(ColumnData::clear);
            self.shared.clear();
            return Ok(());
        }
        self.text.clear();
        for (i, c) in self.typed.iter_mut().enumerate() {
            c.read_data(r, rows, form.elems.and_then(|e| e.get(i)), form.layout, pool)?;
        }
        for c in &mut self.dynamic {
            c.read_data(r, rows, None, form.layout, pool)?;
        }
        if self.version == JSON_FLATTENED {
            self.shared.clear();
            Ok(())
        } else {
            // The shared data's paths and values keep VarUInt lengths at every revision.
            self.shared.read_data(r, rows, None, Layout { sized_strings: false, ..form.layout }, pool)
        }
    }

    fn write_prefix(&self, out: &mut Vec<u8>) {
        out.put_u64_le(self.version);
        if self.version == JSON_STRING {
            return;
        }
        if self.version == JSON_V1 {
            out.put_varuint(self.v1_max_paths);
        }
        out.put_varuint(self.dynamic_paths.len() as u64);
        for p in &self.dynamic_paths {
            out.put_string(p);
        }
        self.typed.iter().for_each(|c| c.write_prefix(out));
        self.dynamic.iter().for_each(|c| c.write_prefix(out));
    }

    fn write_body(&self, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        if self.version == JSON_STRING {
            return self.text.write_data(out, Layout { sized_strings: false, ..layout });
        }
        for c in self.typed.iter().chain(&self.dynamic) {
            c.write_data(out, layout)?;
        }
        if self.version != JSON_FLATTENED {
            self.shared.write_data(out, Layout { sized_strings: false, ..layout })?;
        }
        Ok(())
    }

    fn rows(&self) -> usize {
        JsonData::rows(self)
    }

    /// JSON's info is named like a Tuple's: one per typed path, in path order.
    fn info_elements(&self) -> &[ColumnData] {
        &self.typed
    }

    fn shape_name(&self) -> String {
        "JSON data".into()
    }

    not_measured!();

    fn append_from(&mut self, _: &Self, _: &[u64], _: &mut BufferPool, _: &mut Budget) -> Result<()> {
        Err(sparse_dynamic_unsupported())
    }

    /// JSON data can only come from a decoder, which checks it.
    fn check_fits(&self, ty: &DataType, _: Option<&[u8]>) -> Result<(), Reason> {
        match ty {
            DataType::Json(_) => Ok(()),
            _ => Err(cannot_hold(self, ty)),
        }
    }
}

fn shared_map_column(pool: &mut BufferPool) -> ColumnData {
    let offsets = pool.take();
    let keys = ColumnData::String(StringColumn::take(pool));
    let values = ColumnData::String(StringColumn::take(pool));
    ColumnData::Array(ArrayColumn::new(offsets, ColumnData::Tuple(TupleColumn::new(vec![keys, values]))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::test_util::*;
    use crate::column::{DYNAMIC_V2, VARIANT_MODE_BASIC};

    #[test]
    fn json_string_form_keeps_varuint_lengths() {
        let mut b = Vec::new();
        b.put_u64_le(JSON_STRING);
        b.put_string("{\"a\":1}");
        b.put_string("{}");
        // Same bytes whatever the revision's string layout.
        for layout in [OLD, NEW] {
            let c = round_trip("JSON(a UInt32)", 2, &b, layout);
            let t = DataType::parse("JSON(a UInt32)").unwrap();
            let v = view(&t, "JSON(a UInt32)", &c);
            let j = v.as_json().unwrap();
            assert_eq!(j.text(0).unwrap(), "{\"a\":1}");
            assert_eq!(j.text(1).unwrap(), "{}");
            assert!(j.paths(0).is_err());
        }
    }

    #[test]
    fn json_v2_with_shared_data() {
        // JSON(a UInt32): dynamic path `b` (Dynamic V2 of String), shared path `c` = Bool true in row 1.
        let mut b = Vec::new();
        b.put_u64_le(JSON_V2);
        b.put_varuint(1);
        b.put_string("b");
        b.put_u64_le(DYNAMIC_V2);
        b.put_varuint(1);
        b.put_string("String");
        b.put_u64_le(VARIANT_MODE_BASIC);
        b.put_u32_le(1);
        b.put_u32_le(2);
        // b: SharedVariant = 0, String = 1
        b.extend_from_slice(&[1, 255]);
        b.put_u64_le(1);
        b.push(b'x');
        // shared data: offsets, then paths and values with VarUInt lengths.
        b.put_u64_le(0);
        b.put_u64_le(1);
        b.put_string("c");
        b.put_string([0x2d, 0x01]);
        let c = round_trip("JSON(a UInt32)", 2, &b, NEW);
        let t = DataType::parse("JSON(a UInt32)").unwrap();
        let v = view(&t, "JSON(a UInt32)", &c);
        let j = v.as_json().unwrap();
        assert_eq!(j.paths(0).unwrap(), ["a", "b"]);
        assert_eq!(j.paths(1).unwrap(), ["a", "c"]);
        let c1 = j.path_value(1, "c").unwrap().unwrap();
        assert_eq!(c1.data_type(), &DataType::Bool);
        assert_eq!(c1.view().0.values::<u8>().unwrap(), &[1]);
        assert!(j.path_value(1, "b").unwrap().is_none());
        assert!(j.path_value(0, "zz").unwrap().is_none());
        let a = j.path_value(1, "a").unwrap().unwrap();
        let (a, i) = a.view();
        assert_eq!(a.values::<u32>().unwrap()[i], 2);
        let e = j.text(0).unwrap_err();
        assert!(e.to_string().contains(JSON_AS_STRING_SETTING), "{e}");
    }
}
