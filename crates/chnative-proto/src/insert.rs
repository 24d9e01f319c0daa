//! The write side of the column tier: column data borrowed from the caller for
//! an INSERT, the rules for which data may go into which column type, and the
//! encoding of rows `lo..hi` of such columns as a Native block.
//!
//! The block and column headers come from the same writers [`Block::write`](crate::Block::write)
//! uses; a [`Column`] taken from a SELECT is encoded by the column codecs
//! themselves. Each fixed-width column is copied once, from the caller's slice
//! into the outgoing block.

use std::borrow::Cow;

use crate::column::{check_end_offsets, check_fixed_values, put_var_strings, write_strings, Layout};
use crate::convert::{I256, U256};
use crate::error::{ProtoError, Result};
use crate::splice::Splices;
use crate::view::{FixedValue, StrView, WireUuid};
use crate::wire::WriteExt;
use crate::{Column, DataType};

/// LowCardinality's key version (`SharedDictionariesWithAdditionalKeys`) and index-type flags.
const LC_KEY_VERSION: u64 = 1;
const LC_HAS_ADDITIONAL_KEYS: u64 = 1 << 9;
const LC_NEED_UPDATE_DICTIONARY: u64 = 1 << 10;

/// Column data borrowed for an INSERT.
///
/// Build it with [`fixed`], the [`IntoInsertData`] impls and the constructors
/// below. Whatever way it was built, the encoder takes it only through
/// [`InsertColumns`], which checks its shape ([`InsertData::validate`]), and
/// [`TypedInsert`], which checks its fit to the table's column
/// ([`InsertData::check_type`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum InsertData<'a> {
    /// Fixed-width values as their wire bytes.
    Fixed {
        /// `rows × width` little-endian bytes.
        bytes: &'a [u8],
        /// Bytes per row.
        width: usize,
        /// Rust element type, for errors.
        rust: &'static str,
        /// Which ClickHouse types the values may go into.
        accepts: fn(&DataType) -> bool,
    },
    /// FixedString(N) values back to back, `rows × N` bytes (no per-value prefix).
    FixedStrings {
        /// The bytes.
        bytes: &'a [u8],
        /// N.
        width: usize,
    },
    /// Strings from `&str`s.
    Strs(&'a [&'a str]),
    /// Strings from `String`s.
    Strings(&'a [String]),
    /// Strings as end offsets into one blob (the layout a SELECT returns).
    Blob {
        /// u64 end offset of each row.
        offsets: &'a [u64],
        /// All bytes.
        data: &'a [u8],
    },
    /// Strings as `rows + 1` start offsets into one blob: the layout of Arrow's
    /// Utf8/Binary (i32 offsets) and LargeUtf8/LargeBinary (i64) arrays, sent
    /// without converting the offsets first. The first offset need not be 0.
    BlobStarts {
        /// Where each row starts in `data`, and where the last one ends.
        offsets: StartOffsets<'a>,
        /// The bytes the offsets point into.
        data: &'a [u8],
    },
    /// Nullable: one byte per row (1 = NULL) and the values.
    Nullable {
        /// Null map.
        nulls: &'a [u8],
        /// Values (anything at NULL rows).
        inner: Box<InsertData<'a>>,
    },
    /// Array: u64 end offsets into the flattened elements.
    Array {
        /// End offset per row.
        offsets: &'a [u64],
        /// Elements.
        inner: Box<InsertData<'a>>,
    },
    /// Tuple: one data per element, each with the tuple's rows.
    Tuple(Vec<InsertData<'a>>),
    /// Map(K, V): u64 end offsets into the flattened keys and values (on the wire a
    /// Map is `Array(Tuple(K, V))`).
    Map {
        /// End offset per row.
        offsets: &'a [u64],
        /// Keys of every row, back to back.
        keys: Box<InsertData<'a>>,
        /// Values, one per key.
        values: Box<InsertData<'a>>,
    },
    /// Variant(T1, …): per row the index of its alternative in `variants` (or
    /// [`VARIANT_NULL`]), and per alternative its ClickHouse type and the values of
    /// the rows that chose it, in row order. The alternatives may be any subset of
    /// the column's, in any order: they are sent as a `Variant` of their own types
    /// (sorted by name, as the server orders them) and the server widens that to
    /// the column's type. A `Dynamic` column takes this data too (the server
    /// converts the Variant to Dynamic).
    Variant {
        /// One per row: an index into `variants`, or [`VARIANT_NULL`].
        discriminators: &'a [u8],
        /// Each alternative's type and values.
        variants: Vec<(DataType, InsertData<'a>)>,
    },
    /// A column read from a SELECT (or built with [`Column::new`]), sent as it is.
    Column(&'a Column),
}

/// The start offsets of [`InsertData::BlobStarts`]: `rows + 1` of them, row `i`
/// being the bytes `offsets[i]..offsets[i + 1]`.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum StartOffsets<'a> {
    /// 32-bit offsets (Arrow's Utf8 and Binary).
    I32(&'a [i32]),
    /// 64-bit offsets (Arrow's LargeUtf8 and LargeBinary).
    I64(&'a [i64]),
}

impl StartOffsets<'_> {
    fn len(&self) -> usize {
        match self {
            StartOffsets::I32(o) => o.len(),
            StartOffsets::I64(o) => o.len(),
        }
    }

    /// Rows: one fewer than the offsets.
    pub fn rows(&self) -> usize {
        self.len().saturating_sub(1)
    }

    /// Offset `i` (checked non-negative by [`InsertData::validate`]).
    fn at(&self, i: usize) -> u64 {
        match self {
            StartOffsets::I32(o) => o[i] as u64,
            StartOffsets::I64(o) => o[i] as u64,
        }
    }

    /// Why the offsets do not index `len` bytes: negative, decreasing or past the end.
    fn check(&self, len: usize) -> std::result::Result<(), String> {
        fn go<O: Copy + Into<i64>>(o: &[O], len: usize) -> std::result::Result<(), String> {
            // A branch-free pass first (it vectorises); the row is looked for only when it fails.
            let first = o.first().map_or(0, |&v| v.into());
            let sorted = o.windows(2).fold(first >= 0, |ok, w| ok & (w[0].into() <= w[1].into()));
            if !sorted {
                let mut prev = 0i64;
                for (i, &v) in o.iter().enumerate() {
                    let v: i64 = v.into();
                    if v < prev || (i == 0 && v < 0) {
                        return Err(format!("string offsets are not monotonic (offset {i} is {v})"));
                    }
                    prev = v;
                }
            }
            let prev = o.last().map_or(0, |&v| v.into());
            if prev as u64 > len as u64 {
                return Err(format!("string offsets end at {prev}, but the data has {len} bytes"));
            }
            Ok(())
        }
        match self {
            StartOffsets::I32(o) => go(o, len),
            StartOffsets::I64(o) => go(o, len),
        }
    }
}

/// The discriminator of a NULL row in [`InsertData::Variant`] (as on the wire).
pub const VARIANT_NULL: u8 = 255;

/// How many of `discriminators` name each of `alternatives` alternatives (NULL
/// rows, and any discriminator past the alternatives, count nowhere).
pub fn variant_counts(discriminators: &[u8], alternatives: usize) -> Vec<usize> {
    let mut counts = vec![0usize; alternatives];
    for &d in discriminators {
        if let Some(n) = counts.get_mut(usize::from(d)) {
            *n += 1;
        }
    }
    counts
}

impl<'a> InsertData<'a> {
    /// Nullable data from a null map (1 = NULL) and values.
    pub fn nullable(nulls: &'a [u8], inner: impl IntoInsertData<'a>) -> Self {
        InsertData::Nullable { nulls, inner: Box::new(inner.into_insert_data()) }
    }

    /// FixedString(N) data: `bytes.len()` must be a multiple of `n` (pad short values with NULs).
    pub fn fixed_strings(bytes: &'a [u8], n: usize) -> Self {
        InsertData::FixedStrings { bytes, width: n }
    }

    /// Array data from u64 end offsets and the flattened elements.
    pub fn array(offsets: &'a [u64], inner: impl IntoInsertData<'a>) -> Self {
        InsertData::Array { offsets, inner: Box::new(inner.into_insert_data()) }
    }

    /// Tuple data from one data per element.
    pub fn tuple(elements: Vec<InsertData<'a>>) -> Self {
        InsertData::Tuple(elements)
    }

    /// Map data from u64 end offsets and the flattened keys and values.
    pub fn map(offsets: &'a [u64], keys: impl IntoInsertData<'a>, values: impl IntoInsertData<'a>) -> Self {
        InsertData::Map {
            offsets,
            keys: Box::new(keys.into_insert_data()),
            values: Box::new(values.into_insert_data()),
        }
    }

    /// Variant data from discriminators (index into `variants`, or
    /// [`VARIANT_NULL`]) and each alternative's type and values.
    pub fn variant(discriminators: &'a [u8], variants: Vec<(DataType, InsertData<'a>)>) -> Self {
        InsertData::Variant { discriminators, variants }
    }

    /// About how many bytes the data takes on the wire (0 for a [`Column`], which is
    /// sent whole anyway). One pass over string lengths; used to size INSERT blocks.
    pub fn wire_bytes(&self) -> usize {
        match self {
            InsertData::Fixed { bytes, .. } | InsertData::FixedStrings { bytes, .. } => bytes.len(),
            InsertData::Strs(s) => s.iter().map(|s| s.len() + 8).sum(),
            InsertData::Strings(s) => s.iter().map(|s| s.len() + 8).sum(),
            InsertData::Blob { offsets, data } => data.len() + 8 * offsets.len(),
            InsertData::BlobStarts { offsets, .. } if offsets.rows() == 0 => 0,
            InsertData::BlobStarts { offsets, .. } => {
                (offsets.at(offsets.rows()).saturating_sub(offsets.at(0))) as usize + 8 * offsets.rows()
            }
            InsertData::Nullable { nulls, inner } => nulls.len() + inner.wire_bytes(),
            InsertData::Array { offsets, inner } => 8 * offsets.len() + inner.wire_bytes(),
            InsertData::Tuple(elements) => elements.iter().map(InsertData::wire_bytes).sum(),
            InsertData::Map { offsets, keys, values } => 8 * offsets.len() + keys.wire_bytes() + values.wire_bytes(),
            InsertData::Variant { discriminators, variants } => {
                discriminators.len() + variants.iter().map(|(_, v)| v.wire_bytes()).sum::<usize>()
            }
            InsertData::Column(_) => 0,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        match self {
            InsertData::Fixed { bytes, width, .. } | InsertData::FixedStrings { bytes, width } => {
                bytes.len() / (*width).max(1)
            }
            InsertData::Strs(s) => s.len(),
            InsertData::Strings(s) => s.len(),
            InsertData::Blob { offsets, .. } | InsertData::Array { offsets, .. } | InsertData::Map { offsets, .. } => {
                offsets.len()
            }
            InsertData::BlobStarts { offsets, .. } => offsets.rows(),
            InsertData::Nullable { nulls, .. } => nulls.len(),
            InsertData::Tuple(elements) => elements.first().map_or(0, InsertData::rows),
            InsertData::Variant { discriminators, .. } => discriminators.len(),
            InsertData::Column(c) => c.rows(),
        }
    }

    /// What the data is, in terms of the Rust side, for errors raised before
    /// the column's ClickHouse type is known.
    pub fn describe(&self) -> String {
        match self {
            InsertData::Fixed { rust, .. } => format!("{rust} values"),
            InsertData::FixedStrings { width, .. } => format!("FixedString({width}) bytes"),
            InsertData::Strs(_) | InsertData::Strings(_) | InsertData::Blob { .. } | InsertData::BlobStarts { .. } => {
                "strings".into()
            }
            InsertData::Nullable { inner, .. } => format!("Nullable({})", inner.describe()),
            InsertData::Array { inner, .. } => format!("Array({})", inner.describe()),
            InsertData::Tuple(elements) => {
                format!("Tuple({})", elements.iter().map(InsertData::describe).collect::<Vec<_>>().join(", "))
            }
            InsertData::Map { keys, values, .. } => format!("Map({}, {})", keys.describe(), values.describe()),
            InsertData::Variant { variants, .. } => format!("Variant({})", variant_type_names(variants).join(", ")),
            InsertData::Column(c) => c.type_name().to_string(),
        }
    }

    /// Checks the shape of the data on its own: value widths, null map and
    /// offset lengths, offsets monotonic and within their data. Done once,
    /// before anything is sent, so that encoding cannot fail half-way.
    pub fn validate(&self, column: &str) -> Result<()> {
        let bad = |reason: String| ProtoError::invalid_column(column, self.describe(), reason);
        match self {
            InsertData::Fixed { bytes, width, .. } | InsertData::FixedStrings { bytes, width } => {
                if *width == 0 || bytes.len() % width != 0 {
                    return Err(bad(format!("{} bytes is not a whole number of {width}-byte values", bytes.len())));
                }
            }
            InsertData::Blob { offsets, data } => check_end_offsets(offsets, data.len(), "string").map_err(bad)?,
            InsertData::BlobStarts { offsets, data } => offsets.check(data.len()).map_err(bad)?,
            InsertData::Nullable { nulls, inner } => {
                if inner.rows() != nulls.len() {
                    return Err(bad(format!("null map has {} rows, values have {}", nulls.len(), inner.rows())));
                }
                inner.validate(column)?;
            }
            InsertData::Array { offsets, inner } => {
                check_end_offsets(offsets, inner.rows(), "array").map_err(bad)?;
                inner.validate(column)?;
            }
            InsertData::Tuple(elements) => {
                let Some(first) = elements.first() else { return Err(bad("a tuple needs elements".into())) };
                for (i, e) in elements.iter().enumerate() {
                    if e.rows() != first.rows() {
                        return Err(bad(format!(
                            "tuple element {} has {} rows, element 1 has {}",
                            i + 1,
                            e.rows(),
                            first.rows()
                        )));
                    }
                    e.validate(column)?;
                }
            }
            InsertData::Map { offsets, keys, values } => {
                if keys.rows() != values.rows() {
                    return Err(bad(format!("{} keys but {} values", keys.rows(), values.rows())));
                }
                check_end_offsets(offsets, keys.rows(), "map").map_err(bad)?;
                keys.validate(column)?;
                values.validate(column)?;
            }
            InsertData::Variant { discriminators, variants } => {
                if variants.len() >= usize::from(VARIANT_NULL) {
                    return Err(bad(format!("{} alternatives; a Variant has at most 254", variants.len())));
                }
                let mut counts = vec![0usize; variants.len()];
                for (row, &d) in discriminators.iter().enumerate() {
                    match counts.get_mut(usize::from(d)) {
                        Some(n) => *n += 1,
                        None if d == VARIANT_NULL => {}
                        None => {
                            return Err(bad(format!("row {row} names alternative {d}, there are {}", variants.len())))
                        }
                    }
                }
                let mut names: Vec<String> = Vec::with_capacity(variants.len());
                for ((ty, v), n) in variants.iter().zip(counts) {
                    if v.rows() != n {
                        return Err(bad(format!("{n} rows choose the {ty} alternative, it has {} values", v.rows())));
                    }
                    let name = ty.to_string();
                    if names.contains(&name) {
                        return Err(bad(format!("the {name} alternative is given twice")));
                    }
                    names.push(name);
                    v.validate(column)?;
                }
            }
            InsertData::Strs(_) | InsertData::Strings(_) | InsertData::Column(_) => {}
        }
        Ok(())
    }

    /// Checks that the data fits the table's column of type `ty` (spelled
    /// `type_name` by the server) and returns the type name to send with it.
    ///
    /// Fixed-width data goes into the types its Rust type can be viewed as
    /// ([`FixedValue::accepts`], the rule reads use); a `LowCardinality(T)`
    /// column takes plain `T` data (the server builds the dictionary) and a
    /// `SimpleAggregateFunction(f, T)` column takes `T`. Enum and Bool values
    /// are checked to be values of the type.
    ///
    /// A `LowCardinality(T)` inside another type (a Map's keys, an Array's
    /// elements, a Tuple's element) is sent as that type, the dictionary
    /// built here: servers before 25.x do not convert `Map(String, …)` to
    /// `Map(LowCardinality(String), …)` (TYPE_MISMATCH).
    pub fn check_type(&self, column: &str, ty: &DataType, type_name: &str) -> Result<Cow<'static, str>> {
        let wire = self.wire_type(column, ty, type_name, false)?;
        self.check_values(ty, None).map_err(|reason| ProtoError::invalid_column(column, type_name, reason))?;
        Ok(wire)
    }

    /// `nested`: inside a composite type (see [`InsertData::check_type`]).
    fn wire_type(&self, column: &str, ty: &DataType, type_name: &str, nested: bool) -> Result<Cow<'static, str>> {
        if let (true, DataType::LowCardinality(t), true) = (nested, ty, self.is_low_cardinality_leaf()) {
            // Sent as the column's own LowCardinality type, the dictionary built by
            // `encode_low_cardinality`.
            return Ok(format!("LowCardinality({})", self.wire_type(column, t, type_name, true)?).into());
        }
        let mismatch = |requested: &str| ProtoError::TypeMismatch {
            column: column.to_string(),
            requested: requested.to_string(),
            actual: type_name.to_string(),
        };
        let ty_plain = match ty {
            DataType::SimpleAggregateFunction(_, t) => t.as_ref(),
            t => t,
        };
        // Geo types take the data of the structure they alias (Point is Tuple(Float64,
        // Float64), Ring is Array(Point), …), sent under the structure's name.
        let geo = ty_plain.wire_shape();
        let ty_plain = match ty_plain {
            DataType::Point
            | DataType::Ring
            | DataType::LineString
            | DataType::MultiLineString
            | DataType::Polygon
            | DataType::MultiPolygon => geo.as_ref(),
            t => t,
        };
        match self {
            InsertData::Fixed { rust, accepts, width, .. } => {
                let target = match ty_plain {
                    DataType::LowCardinality(t) if accepts(t) => t.as_ref(),
                    t => t,
                };
                if !accepts(target) {
                    return Err(mismatch(rust));
                }
                // `accepts` is the caller's for hand-made data: the width is the type's, not theirs.
                let reason = match target.fixed_width() {
                    Some(w) if w == *width => return Ok(name_of(target)),
                    Some(w) => format!("values are {width} bytes wide, {target} needs {w}"),
                    None => format!("{target} is not a fixed-width type"),
                };
                Err(ProtoError::invalid_column(column, type_name, reason))
            }
            InsertData::FixedStrings { width, .. } => match ty_plain {
                DataType::FixedString(n) if n == width => Ok(ty_plain.to_string().into()),
                DataType::LowCardinality(t) if **t == DataType::FixedString(*width) => Ok(t.to_string().into()),
                _ => Err(mismatch(&format!("FixedString({width}) bytes"))),
            },
            InsertData::Strs(_) | InsertData::Strings(_) | InsertData::Blob { .. } | InsertData::BlobStarts { .. } => {
                match ty_plain {
                    DataType::String => Ok("String".into()),
                    // Sent as String: the server parses the text into its JSON column.
                    DataType::Json(_) => Ok("String".into()),
                    DataType::LowCardinality(t) if **t == DataType::String => Ok("String".into()),
                    _ => Err(mismatch("strings")),
                }
            }
            InsertData::Nullable { inner, .. } => match ty_plain {
                DataType::Nullable(t) => {
                    Ok(format!("Nullable({})", inner.wire_type(column, t, type_name, true)?).into())
                }
                DataType::LowCardinality(t) => match t.as_ref() {
                    DataType::Nullable(t) => {
                        Ok(format!("Nullable({})", inner.wire_type(column, t, type_name, true)?).into())
                    }
                    _ => Err(mismatch("Nullable values")),
                },
                _ => Err(mismatch("Nullable values")),
            },
            InsertData::Array { inner, .. } => match ty_plain {
                DataType::Array(t) => Ok(format!("Array({})", inner.wire_type(column, t, type_name, true)?).into()),
                // A Map is Array(Tuple(K, V)) on the wire, so (key, value) pairs in arrays fit it.
                DataType::Map(k, v) => match inner.as_ref() {
                    InsertData::Tuple(kv) if kv.len() == 2 => Ok(format!(
                        "Map({}, {})",
                        kv[0].wire_type(column, k, type_name, true)?,
                        kv[1].wire_type(column, v, type_name, true)?
                    )
                    .into()),
                    _ => Err(mismatch("arrays")),
                },
                // Nested(a T, …) as one column (flatten_nested = 0) is Array(Tuple(a T, …)) on the wire.
                DataType::Nested(_) => match ty_plain.wire_shape().as_ref() {
                    DataType::Array(t) => Ok(format!("Array({})", inner.wire_type(column, t, type_name, true)?).into()),
                    _ => Err(mismatch("arrays")),
                },
                _ => Err(mismatch("arrays")),
            },
            InsertData::Tuple(elements) => match ty_plain {
                DataType::Tuple(types) if types.len() == elements.len() => {
                    let mut wire = Vec::with_capacity(types.len());
                    for (e, (name, t)) in elements.iter().zip(types) {
                        wire.push((name.clone(), DataType::parse(&e.wire_type(column, t, type_name, true)?)?));
                    }
                    Ok(DataType::Tuple(wire).to_string().into())
                }
                _ => Err(mismatch(&format!("tuples of {}", elements.len()))),
            },
            InsertData::Map { keys, values, .. } => match ty_plain {
                DataType::Map(k, v) => Ok(format!(
                    "Map({}, {})",
                    keys.wire_type(column, k, type_name, true)?,
                    values.wire_type(column, v, type_name, true)?
                )
                .into()),
                _ => Err(mismatch("maps")),
            },
            InsertData::Variant { variants, .. } => {
                // Each alternative must be one of the column's (a Dynamic column takes any).
                let alts = match ty_plain {
                    DataType::Variant(alts) => Some(alts),
                    DataType::Dynamic { .. } => None,
                    _ => return Err(mismatch(&self.describe())),
                };
                for (t, v) in variants {
                    if alts.is_some_and(|alts| !alts.contains(t)) {
                        return Err(ProtoError::invalid_column(
                            column,
                            type_name,
                            format!("{t} is not one of the column's alternatives"),
                        ));
                    }
                    let wire = v.wire_type(column, t, type_name, false)?;
                    if wire != t.to_string() {
                        return Err(ProtoError::invalid_column(
                            column,
                            type_name,
                            format!("the {t} alternative's values would be sent as {wire}"),
                        ));
                    }
                }
                let mut names = variant_type_names(variants);
                names.sort();
                Ok(format!("Variant({})", names.join(", ")).into())
            }
            InsertData::Column(c) => {
                let same = c.type_name() == type_name
                    || c.data_type() == ty
                    || matches!(ty, DataType::LowCardinality(t) if **t == *c.data_type());
                if same {
                    // The server's spelling, borrowed when it is a static name.
                    Ok(match c.data_type().static_name() {
                        Some(n) if n == c.type_name() => Cow::Borrowed(n),
                        _ => Cow::Owned(c.type_name().to_string()),
                    })
                } else {
                    Err(mismatch(c.type_name()))
                }
            }
        }
    }

    fn check_values(&self, ty: &DataType, nulls: Option<&[u8]>) -> Result<(), String> {
        let ty = match ty {
            DataType::SimpleAggregateFunction(_, t) | DataType::LowCardinality(t) => t.as_ref(),
            t => t,
        };
        match (self, ty) {
            (InsertData::Fixed { bytes, width, .. }, ty) => check_fixed_values(ty, bytes, *width, nulls),
            (InsertData::Nullable { nulls, inner }, DataType::Nullable(t)) => inner.check_values(t, Some(nulls)),
            (InsertData::Array { inner, .. }, DataType::Array(t)) => inner.check_values(t, None),
            (InsertData::Array { .. }, DataType::Nested(_)) => self.check_values(&ty.wire_shape(), None),
            (InsertData::Array { inner, .. }, DataType::Map(k, v)) => {
                inner.check_values(&DataType::Tuple(vec![(None, (**k).clone()), (None, (**v).clone())]), None)
            }
            (InsertData::Tuple(elements), DataType::Tuple(types)) => {
                elements.iter().zip(types).try_for_each(|(e, (_, t))| e.check_values(t, None))
            }
            (InsertData::Map { keys, values, .. }, DataType::Map(k, v)) => {
                keys.check_values(k, None)?;
                values.check_values(v, None)
            }
            (InsertData::Variant { variants, .. }, _) => variants.iter().try_for_each(|(t, v)| v.check_values(t, None)),
            _ => Ok(()),
        }
    }

    /// Whether rows `lo..hi` can be encoded on their own; a [`Column`] is sent whole.
    fn splittable(&self) -> bool {
        match self {
            InsertData::Column(_) => false,
            InsertData::Nullable { inner, .. } | InsertData::Array { inner, .. } => inner.splittable(),
            InsertData::Tuple(elements) => elements.iter().all(InsertData::splittable),
            InsertData::Map { keys, values, .. } => keys.splittable() && values.splittable(),
            InsertData::Variant { variants, .. } => variants.iter().all(|(_, v)| v.splittable()),
            _ => true,
        }
    }

    /// Plain values a nested `LowCardinality` column may be sent from (the
    /// dictionary built by [`InsertData::encode_low_cardinality`]).
    fn is_low_cardinality_leaf(&self) -> bool {
        match self {
            InsertData::Fixed { .. }
            | InsertData::FixedStrings { .. }
            | InsertData::Strs(_)
            | InsertData::Strings(_)
            | InsertData::Blob { .. }
            | InsertData::BlobStarts { .. } => true,
            InsertData::Nullable { inner, .. } => {
                !matches!(**inner, InsertData::Nullable { .. }) && inner.is_low_cardinality_leaf()
            }
            _ => false,
        }
    }

    /// [`InsertData::encode_prefix`] for data sent as `ty` (its wire type), which
    /// may hold `LowCardinality` types that [`InsertData::check_type`] chose.
    fn encode_prefix_as(&self, ty: &DataType, out: &mut Vec<u8>) {
        match (self, ty) {
            (d, DataType::LowCardinality(_)) if d.is_low_cardinality_leaf() => out.put_u64_le(LC_KEY_VERSION),
            (InsertData::Nullable { inner, .. }, DataType::Nullable(t))
            | (InsertData::Array { inner, .. }, DataType::Array(t)) => inner.encode_prefix_as(t, out),
            (InsertData::Array { inner, .. }, DataType::Map(k, v)) => {
                inner.encode_prefix_as(&DataType::Tuple(vec![(None, (**k).clone()), (None, (**v).clone())]), out)
            }
            (InsertData::Tuple(elements), DataType::Tuple(types)) if elements.len() == types.len() => {
                elements.iter().zip(types).for_each(|(e, (_, t))| e.encode_prefix_as(t, out))
            }
            (InsertData::Map { keys, values, .. }, DataType::Map(k, v)) => {
                keys.encode_prefix_as(k, out);
                values.encode_prefix_as(v, out);
            }
            (d, _) => d.encode_prefix(out),
        }
    }

    /// [`InsertData::encode`] for data sent as `ty` (see [`InsertData::encode_prefix_as`]);
    /// nothing is spliced.
    fn encode_as(&self, ty: &DataType, lo: usize, hi: usize, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        match (self, ty) {
            (d, DataType::LowCardinality(_)) if d.is_low_cardinality_leaf() => {
                d.encode_low_cardinality(lo, hi, out, layout)
            }
            (InsertData::Nullable { nulls, inner }, DataType::Nullable(t)) => {
                out.extend_from_slice(&nulls[lo..hi]);
                inner.encode_as(t, lo, hi, out, layout)
            }
            (InsertData::Array { offsets, inner }, DataType::Array(_) | DataType::Map(..)) => {
                let base = end_before(offsets, lo);
                offsets[lo..hi].iter().for_each(|o| out.put_u64_le(o - base));
                let elements = match ty {
                    DataType::Map(k, v) => DataType::Tuple(vec![(None, (**k).clone()), (None, (**v).clone())]),
                    DataType::Array(t) => (**t).clone(),
                    _ => unreachable!("matched above"),
                };
                inner.encode_as(&elements, base as usize, end_before(offsets, hi) as usize, out, layout)
            }
            (InsertData::Tuple(elements), DataType::Tuple(types)) if elements.len() == types.len() => {
                elements.iter().zip(types).try_for_each(|(e, (_, t))| e.encode_as(t, lo, hi, out, layout))
            }
            (InsertData::Map { offsets, keys, values }, DataType::Map(k, v)) => {
                let base = end_before(offsets, lo);
                offsets[lo..hi].iter().for_each(|o| out.put_u64_le(o - base));
                let (from, to) = (base as usize, end_before(offsets, hi) as usize);
                keys.encode_as(k, from, to, out, layout)?;
                values.encode_as(v, from, to, out, layout)
            }
            (d, _) => d.encode(lo, hi, out, layout, None),
        }
    }

    /// Rows `lo..hi` of plain values as a LowCardinality column's block: a
    /// dictionary of the rows' values in row order (the server merges
    /// duplicates into its own dictionary) and keys `0..n`; for
    /// LowCardinality(Nullable(T)) dictionary entry 0 is the NULL and the
    /// values follow it.
    fn encode_low_cardinality(&self, lo: usize, hi: usize, out: &mut Vec<u8>, layout: Layout) -> Result<()> {
        let rows = hi - lo;
        if rows == 0 {
            return Ok(());
        }
        let (nulls, values) = match self {
            InsertData::Nullable { nulls, inner } => (Some(&nulls[lo..hi]), inner.as_ref()),
            d => (None, d),
        };
        let first = usize::from(nulls.is_some());
        let nkeys = rows + first;
        let (code, width) = match nkeys - 1 {
            k if k <= usize::from(u8::MAX) => (0u64, 1usize),
            k if k <= usize::from(u16::MAX) => (1, 2),
            k if k as u64 <= u64::from(u32::MAX) => (2, 4),
            _ => (3, 8),
        };
        out.put_u64_le(code | LC_HAS_ADDITIONAL_KEYS | LC_NEED_UPDATE_DICTIONARY);
        out.put_u64_le(nkeys as u64);
        let dict_layout = Layout { sized_strings: layout.sized_dict_strings, ..layout };
        match values {
            InsertData::Fixed { bytes, width: w, .. } | InsertData::FixedStrings { bytes, width: w } => {
                out.resize(out.len() + first * w, 0);
                out.extend_from_slice(&bytes[lo * w..hi * w]);
            }
            d => {
                let mut items: Vec<&[u8]> = Vec::with_capacity(nkeys);
                if first == 1 {
                    items.push(b"");
                }
                match d {
                    InsertData::Strs(v) => items.extend(v[lo..hi].iter().map(|s| s.as_bytes())),
                    InsertData::Strings(v) => items.extend(v[lo..hi].iter().map(|s| s.as_bytes())),
                    InsertData::Blob { offsets, data } => {
                        items.extend((lo..hi).map(|i| &data[end_before(offsets, i) as usize..offsets[i] as usize]))
                    }
                    InsertData::BlobStarts { offsets, data } => {
                        items.extend((lo..hi).map(|i| &data[offsets.at(i) as usize..offsets.at(i + 1) as usize]))
                    }
                    d => return Err(ProtoError::violation(format!("{} sent as LowCardinality", d.describe()))),
                }
                encode_strs(items.iter().copied(), out, dict_layout);
            }
        }
        out.put_u64_le(rows as u64);
        out.reserve(rows * width);
        for i in 0..rows {
            let key = match nulls {
                Some(n) if n[i] != 0 => 0,
                _ => (i + first) as u64,
            };
            out.extend_from_slice(&key.to_le_bytes()[..width]);
        }
        Ok(())
    }

    /// Writes the serialization prefixes: in the Native format every prefix of a
    /// column's nested streams comes before any of its data.
    fn encode_prefix(&self, out: &mut Vec<u8>) {
        match self {
            InsertData::Nullable { inner, .. } | InsertData::Array { inner, .. } => inner.encode_prefix(out),
            InsertData::Tuple(elements) => elements.iter().for_each(|e| e.encode_prefix(out)),
            InsertData::Map { keys, values, .. } => {
                keys.encode_prefix(out);
                values.encode_prefix(out);
            }
            InsertData::Variant { variants, .. } => {
                // The discriminators' serialization mode: BASIC, one byte per row.
                out.put_u64_le(0);
                for k in sorted_alternatives(variants) {
                    variants[k].1.encode_prefix(out);
                }
            }
            InsertData::Column(c) => c.data().write_prefix(out),
            _ => {}
        }
    }

    /// Encodes rows `lo..hi` (after the column header and the prefixes). Needs data
    /// that passed [`InsertData::validate`], and all rows of a [`Column`].
    ///
    /// With `sp`, runs of the caller's data that are already in wire layout
    /// (fixed-width values, null maps, string bytes, offsets that need no
    /// rebasing) are not copied but recorded in `sp` at their place in `out`.
    fn encode(
        &self,
        lo: usize,
        hi: usize,
        out: &mut Vec<u8>,
        layout: Layout,
        mut sp: Option<&mut Splices<'a>>,
    ) -> Result<()> {
        match self {
            InsertData::Fixed { bytes, width, .. } | InsertData::FixedStrings { bytes, width } => {
                Splices::push_or_copy(sp, out, &bytes[lo * width..hi * width])
            }
            InsertData::Strs(s) => encode_strs(s[lo..hi].iter().map(|s| s.as_bytes()), out, layout),
            InsertData::Strings(s) => encode_strs(s[lo..hi].iter().map(|s| s.as_bytes()), out, layout),
            InsertData::Blob { offsets, data } => {
                let (base, end) = (end_before(offsets, lo), end_before(offsets, hi));
                let data: &'a [u8] = &data[base as usize..end as usize];
                let offsets: &'a [u64] = &offsets[lo..hi];
                match sp {
                    Some(sp) if layout.sized_strings => {
                        put_offsets(sp, out, offsets, base);
                        sp.push(out, data);
                    }
                    _ if base == 0 => write_strings(out, offsets, data, layout.sized_strings)?,
                    _ => {
                        let rebased: Vec<u64> = offsets.iter().map(|o| o - base).collect();
                        write_strings(out, &rebased, data, layout.sized_strings)?;
                    }
                }
            }
            // No rows (an empty array's elements may hold no offset at all): nothing to write.
            InsertData::BlobStarts { .. } if lo == hi => {}
            InsertData::BlobStarts { offsets, data } => {
                let (base, end) = (offsets.at(lo), offsets.at(hi));
                let bytes: &'a [u8] = &data[base as usize..end as usize];
                if layout.sized_strings {
                    out.reserve((hi - lo) * 8);
                    for i in lo + 1..=hi {
                        out.put_u64_le(offsets.at(i) - base);
                    }
                    Splices::push_or_copy(sp, out, bytes);
                } else {
                    put_strings_at(out, *offsets, data, lo, hi);
                }
            }
            InsertData::Nullable { nulls, inner } => {
                Splices::push_or_copy(sp.as_deref_mut(), out, &nulls[lo..hi]);
                inner.encode(lo, hi, out, layout, sp)?;
            }
            InsertData::Array { offsets, inner } => {
                let base = end_before(offsets, lo);
                match sp.as_deref_mut() {
                    Some(sp) => put_offsets(sp, out, &offsets[lo..hi], base),
                    None => offsets[lo..hi].iter().for_each(|o| out.put_u64_le(o - base)),
                }
                inner.encode(base as usize, end_before(offsets, hi) as usize, out, layout, sp)?;
            }
            InsertData::Tuple(elements) => {
                for e in elements {
                    e.encode(lo, hi, out, layout, sp.as_deref_mut())?;
                }
            }
            InsertData::Map { offsets, keys, values } => {
                let base = end_before(offsets, lo);
                match sp.as_deref_mut() {
                    Some(sp) => put_offsets(sp, out, &offsets[lo..hi], base),
                    None => offsets[lo..hi].iter().for_each(|o| out.put_u64_le(o - base)),
                }
                let (from, to) = (base as usize, end_before(offsets, hi) as usize);
                keys.encode(from, to, out, layout, sp.as_deref_mut())?;
                values.encode(from, to, out, layout, sp)?;
            }
            InsertData::Variant { discriminators, variants } => {
                // On the wire the alternatives are in name order and the
                // discriminators index that order.
                let order = sorted_alternatives(variants);
                let mut wire_index = vec![VARIANT_NULL; variants.len()];
                for (pos, &k) in order.iter().enumerate() {
                    wire_index[k] = pos as u8;
                }
                // Where each alternative's rows for `lo..hi` start and end among its values.
                let start = variant_counts(&discriminators[..lo], variants.len());
                let mut end = start.clone();
                out.reserve(hi - lo);
                for &d in &discriminators[lo..hi] {
                    match end.get_mut(usize::from(d)) {
                        Some(n) => {
                            *n += 1;
                            out.push(wire_index[usize::from(d)]);
                        }
                        None => out.push(VARIANT_NULL),
                    }
                }
                for k in order {
                    variants[k].1.encode(start[k], end[k], out, layout, sp.as_deref_mut())?;
                }
            }
            InsertData::Column(c) => c.data().write_data(out, layout)?,
        }
        Ok(())
    }
}

/// The name `ty` is sent under: its static name when it has no parameters (no allocation).
fn name_of(ty: &DataType) -> Cow<'static, str> {
    match ty.static_name() {
        Some(n) => Cow::Borrowed(n),
        None => Cow::Owned(ty.to_string()),
    }
}

/// u64 end offsets less `base`, little-endian: spliced as they are when no
/// rebasing is needed (on a little-endian machine), else written.
fn put_offsets<'a>(sp: &mut Splices<'a>, out: &mut Vec<u8>, offsets: &'a [u64], base: u64) {
    if base == 0 && cfg!(target_endian = "little") {
        sp.push(out, bytemuck::cast_slice(offsets));
    } else {
        out.reserve(offsets.len() * 8);
        for o in offsets {
            out.put_u64_le(o - base);
        }
    }
}

fn variant_type_names(variants: &[(DataType, InsertData<'_>)]) -> Vec<String> {
    variants.iter().map(|(t, _)| t.to_string()).collect()
}

/// Indices of `variants` in the order the server sorts a Variant's alternatives: by name.
fn sorted_alternatives(variants: &[(DataType, InsertData<'_>)]) -> Vec<usize> {
    let names = variant_type_names(variants);
    let mut order: Vec<usize> = (0..variants.len()).collect();
    order.sort_by(|&a, &b| names[a].cmp(&names[b]));
    order
}

/// The end offset of the row before `i` (0 for the first row).
fn end_before(offsets: &[u64], i: usize) -> u64 {
    if i == 0 {
        0
    } else {
        offsets[i - 1]
    }
}

/// Appends rows `lo..hi` of strings held as start offsets into `data` (checked by
/// [`InsertData::validate`]) in the Native format: each a VarUInt length, then its bytes.
fn put_strings_at(out: &mut Vec<u8>, offsets: StartOffsets<'_>, data: &[u8], lo: usize, hi: usize) {
    match offsets {
        StartOffsets::I32(o) => put_var_strings(out, o[lo], &o[lo + 1..=hi], data),
        StartOffsets::I64(o) => put_var_strings(out, o[lo], &o[lo + 1..=hi], data),
    }
}

fn encode_strs<'s>(items: impl Iterator<Item = &'s [u8]> + Clone, out: &mut Vec<u8>, layout: Layout) {
    if layout.sized_strings {
        let mut end = 0u64;
        for s in items.clone() {
            end += s.len() as u64;
            out.put_u64_le(end);
        }
        for s in items {
            out.extend_from_slice(s);
        }
    } else {
        for s in items {
            out.put_string(s);
        }
    }
}

/// Things that can be inserted as a column.
pub trait IntoInsertData<'a> {
    /// Borrows `self` as insert data.
    fn into_insert_data(self) -> InsertData<'a>;
}

impl<'a> IntoInsertData<'a> for InsertData<'a> {
    fn into_insert_data(self) -> InsertData<'a> {
        self
    }
}

/// Borrows a slice of fixed-width values as insert data.
pub fn fixed<T: FixedValue>(values: &[T]) -> InsertData<'_> {
    InsertData::Fixed {
        bytes: bytemuck::cast_slice(values),
        width: std::mem::size_of::<T>(),
        rust: T::RUST_NAME,
        accepts: T::accepts,
    }
}

macro_rules! fixed_insert {
    ($($t:ty),*) => {$(
        impl<'a> IntoInsertData<'a> for &'a [$t] {
            fn into_insert_data(self) -> InsertData<'a> {
                fixed(self)
            }
        }
        impl<'a> IntoInsertData<'a> for &'a Vec<$t> {
            fn into_insert_data(self) -> InsertData<'a> {
                fixed(self.as_slice())
            }
        }
    )*};
}
fixed_insert!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, f32, f64, WireUuid, [u8; 16], [u8; 32], I256, U256);

impl<'a> IntoInsertData<'a> for &'a [&'a str] {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Strs(self)
    }
}

impl<'a> IntoInsertData<'a> for &'a Vec<&'a str> {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Strs(self)
    }
}

impl<'a> IntoInsertData<'a> for &'a [String] {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Strings(self)
    }
}

impl<'a> IntoInsertData<'a> for &'a Vec<String> {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Strings(self)
    }
}

impl<'a> IntoInsertData<'a> for StrView<'a> {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Blob { offsets: self.offsets(), data: self.blob() }
    }
}

impl<'a> IntoInsertData<'a> for &'a Column {
    fn into_insert_data(self) -> InsertData<'a> {
        InsertData::Column(self)
    }
}

mod columns;
pub use columns::{InsertColumns, TypedInsert};

#[cfg(test)]
mod tests;
