//! ClickHouse columns → Arrow arrays.
//!
//! A [`Plan`] is made once per query from the result's header (the column
//! types); each block is then converted by walking the plan over the block's
//! [`ColumnData`]. Fixed-width buffers whose layout Arrow shares are handed over
//! without a copy (see [`share`]); everything else is converted in one pass.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use arrow_array::{make_array, Array, ArrayRef, RecordBatch};
use arrow_buffer::{BooleanBuffer, Buffer, MutableBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayDataBuilder;
use arrow_schema::{DataType as A, Schema, SchemaRef};
use chnative::proto::{AlignedBuf, Block};
use chnative::proto::{ColumnData, JsonData, JSON_AS_STRING_SETTING, JSON_STRING};
use chnative::proto::{Element, QBitView};
use chnative::DataType as T;
use chnative_proto::uuid_simd::{swap_halves_with, Kernel};

use crate::{Error, Result, StringType};

mod plan;

pub(crate) use plan::*;
pub use plan::{CLICKHOUSE_TYPE_KEY, EXTENSION_NAME_KEY};

/// The Arrow schema of a result and the plan that converts its blocks.
#[derive(Debug, Clone)]
pub(crate) struct BlockPlan {
    pub schema: SchemaRef,
    pub columns: Vec<Plan>,
    recycler: Recycler,
}

/// Reuses the memory of the buffers converted for the previous batch (string and
/// list offsets, widened values) once no array holds them any more: a caller that
/// drops each batch before asking for the next gets the same memory back, block
/// after block, instead of fresh allocations. A caller that keeps its batches
/// loses nothing: a buffer still held is simply not reused.
#[derive(Debug, Default)]
pub(crate) struct Recycler {
    /// Clones of the buffers handed out for the last batch.
    lent: Mutex<Vec<Buffer>>,
    /// Memory of the last batch's buffers that came back, free for this batch.
    free: Mutex<Vec<MutableBuffer>>,
}

impl Clone for Recycler {
    /// A fresh recycler: buffers are never shared between plans.
    fn clone(&self) -> Self {
        Recycler::default()
    }
}

impl Recycler {
    /// Before a batch: the last batch's buffers that nothing else holds become free;
    /// free memory left unused by the last batch is released.
    pub fn reclaim(&self) {
        let lent = std::mem::take(&mut *lock(&self.lent));
        let mut free = lock(&self.free);
        free.clear();
        free.extend(lent.into_iter().filter_map(|b| b.into_mutable().ok()));
    }

    /// An empty buffer with room for `bytes`: the smallest free one that fits, or a new one.
    fn take(&self, bytes: usize) -> MutableBuffer {
        let mut free = lock(&self.free);
        let best = free
            .iter()
            .enumerate()
            .filter(|(_, m)| m.capacity() >= bytes)
            .min_by_key(|(_, m)| m.capacity())
            .map(|(i, _)| i);
        match best {
            Some(i) => {
                let mut m = free.swap_remove(i);
                m.clear();
                m
            }
            None => MutableBuffer::with_capacity(bytes),
        }
    }

    /// A finished buffer; a clone is kept so its memory can come back.
    fn lend(&self, m: MutableBuffer) -> Buffer {
        let b: Buffer = m.into();
        lock(&self.lent).push(b.clone());
        b
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl BlockPlan {
    /// Plans the conversion of blocks shaped like `header`.
    pub fn new(header: &Block, ctx: &Ctx) -> Result<BlockPlan> {
        let mut fields = Vec::with_capacity(header.columns().len());
        let mut columns = Vec::with_capacity(header.columns().len());
        for c in header.columns() {
            let (plan, field) = plan_field(c.name(), c.data_type(), ctx)?;
            let mut meta = field.metadata().clone();
            meta.insert(CLICKHOUSE_TYPE_KEY.to_string(), c.type_name().to_string());
            fields.push(field.with_metadata(meta));
            columns.push(plan);
        }
        Ok(BlockPlan { schema: Arc::new(Schema::new(fields)), columns, recycler: Recycler::default() })
    }

    /// Converts one block (of the header's shape) to a record batch.
    pub fn convert(&self, block: &Block) -> Result<RecordBatch> {
        if block.columns().len() != self.columns.len() {
            return Err(Error::Protocol(format!(
                "a block has {} columns, the result's header had {}",
                block.columns().len(),
                self.columns.len()
            )));
        }
        self.recycler.reclaim();
        let mut arrays = Vec::with_capacity(self.columns.len());
        for ((plan, c), field) in self.columns.iter().zip(block.columns()).zip(self.schema.fields()) {
            let arr =
                convert(&self.recycler, plan, c.data(), None, field.data_type()).map_err(|e| e.in_column(c.name()))?;
            arrays.push(arr);
        }
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(block.rows()));
        Ok(RecordBatch::try_new_with_options(self.schema.clone(), arrays, &options)?)
    }
}

/// An Arrow buffer over `buf`'s bytes, without copying: the buffer holds a clone
/// of `buf` (which shares its memory), so the bytes live as long as the array.
pub(crate) fn share(buf: &AlignedBuf) -> Buffer {
    let owner = Arc::new(buf.clone());
    let bytes = owner.as_bytes();
    let ptr = NonNull::new(bytes.as_ptr() as *mut u8).expect("slices are never null");
    // SAFETY: `ptr` points at `bytes.len()` initialised bytes owned by `owner`'s
    // reference-counted memory, which `owner` (moved into the buffer) keeps alive
    // and unmoved. Nothing writes to them while the array lives: an AlignedBuf
    // copies its memory before any write while another clone shares it
    // (copy-on-write through `Arc::make_mut`), and `owner` is such a clone.
    unsafe { Buffer::from_custom_allocation(ptr, bytes.len(), owner) }
}

fn fixed_bytes(data: &ColumnData) -> Result<&AlignedBuf> {
    match data {
        ColumnData::Fixed(f) => Ok(f.data()),
        other => Err(Error::Protocol(format!("expected fixed-width data, got {other:?}").chars().take(200).collect())),
    }
}

fn rows_of(data: &ColumnData) -> usize {
    data.rows()
}

/// The validity of a ClickHouse null map (1 = NULL).
pub(crate) fn validity(null_map: &[u8]) -> NullBuffer {
    NullBuffer::new(BooleanBuffer::collect_bool(null_map.len(), |i| null_map[i] == 0))
}

fn primitive(dt: &A, len: usize, values: Buffer, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
    let data = ArrayDataBuilder::new(dt.clone()).len(len).add_buffer(values).nulls(nulls).build()?;
    Ok(make_array(data))
}

fn widen_vec<S: bytemuck::Pod, D: arrow_buffer::ArrowNativeType>(
    r: &Recycler,
    bytes: &[u8],
    f: impl Fn(S) -> D,
) -> Result<Buffer> {
    let src: &[S] = bytemuck::try_cast_slice(bytes).map_err(|e| Error::Protocol(format!("column bytes: {e:?}")))?;
    let mut m = r.take(src.len() * std::mem::size_of::<D>());
    m.extend(src.iter().map(|&x| f(x)));
    Ok(r.lend(m))
}

/// u64 end offsets → Arrow offsets (a leading 0), i32 or i64.
fn offsets_i32(r: &Recycler, ends: &[u64]) -> Result<OffsetBuffer<i32>> {
    let last = ends.last().copied().unwrap_or(0);
    if last > i32::MAX as u64 {
        return Err(Error::Protocol(format!(
            "{last} bytes or elements in one block do not fit 32-bit Arrow offsets (use StringType::LargeUtf8 for strings, or smaller blocks: max_block_size)"
        )));
    }
    let mut m = r.take((ends.len() + 1) * 4);
    m.push(0i32);
    // In chunks through a stack array: a loop the compiler vectorises, then one copy.
    let mut chunk = [0i32; 256];
    for c in ends.chunks(chunk.len()) {
        for (d, &e) in chunk.iter_mut().zip(c) {
            *d = e as i32;
        }
        m.extend_from_slice(&chunk[..c.len()]);
    }
    // SAFETY-free: OffsetBuffer::new checks monotonic offsets (the decoder already did).
    Ok(OffsetBuffer::new(ScalarBuffer::new(r.lend(m), 0, ends.len() + 1)))
}

fn offsets_i64(ends: &[u64]) -> Result<OffsetBuffer<i64>> {
    let last = ends.last().copied().unwrap_or(0);
    if last > i64::MAX as u64 {
        return Err(Error::Protocol("offsets beyond i64".into()));
    }
    let mut v = Vec::with_capacity(ends.len() + 1);
    v.push(0i64);
    v.extend(ends.iter().map(|&e| e as i64));
    Ok(OffsetBuffer::new(ScalarBuffer::from(v)))
}

/// Converts `data` by `plan` into an array of type `dt`, with `nulls` as its validity.
pub(crate) fn convert(
    r: &Recycler,
    plan: &Plan,
    data: &ColumnData,
    nulls: Option<NullBuffer>,
    dt: &A,
) -> Result<ArrayRef> {
    let len = rows_of(data);
    match plan {
        Plan::Share => primitive(dt, len, share(fixed_bytes(data)?), nulls),
        Plan::Widen(w) => {
            let b = fixed_bytes(data)?.as_bytes();
            let values = match w {
                Widen::DateToDate32 => widen_vec(r, b, |d: u16| i32::from(d))?,
                Widen::U32ToI64 => widen_vec(r, b, |s: u32| i64::from(s))?,
                Widen::I32ToI64 => widen_vec(r, b, |s: i32| i64::from(s))?,
                Widen::I32ToI128 => widen_vec(r, b, |s: i32| i128::from(s))?,
                Widen::I64ToI128 => widen_vec(r, b, |s: i64| i128::from(s))?,
                Widen::Bf16ToF32 => widen_vec(r, b, |s: u16| f32::from_bits(u32::from(s) << 16))?,
                Widen::Scale(f) => {
                    let src: &[i64] = bytemuck::try_cast_slice(b).map_err(|e| Error::Protocol(format!("{e:?}")))?;
                    let mut v = Vec::with_capacity(src.len());
                    for &x in src {
                        v.push(x.checked_mul(*f).ok_or_else(|| {
                            Error::Conversion(format!(
                                "{x} ticks overflow the Arrow unit (×{f}); CAST to a coarser type"
                            ))
                        })?);
                    }
                    Buffer::from_vec(v)
                }
            };
            primitive(dt, len, values, nulls)
        }
        Plan::Bool => {
            let b = fixed_bytes(data)?.as_bytes();
            let bits = BooleanBuffer::collect_bool(b.len(), |i| b[i] != 0);
            Ok(Arc::new(arrow_array::BooleanArray::new(bits, nulls)))
        }
        Plan::Uuid => {
            let b = fixed_bytes(data)?.as_bytes();
            let mut out = MutableBuffer::from_len_zeroed(b.len());
            swap_halves_with(kernel(), b, out.as_slice_mut()).map_err(chnative::Error::from)?;
            primitive(dt, len, out.into(), nulls)
        }
        Plan::Str(kind) => strings(r, *kind, data, nulls),
        Plan::JsonText => match data {
            ColumnData::Json { 0: j, .. } => json_text(r, j, nulls),
            _ => Err(Error::Protocol("JSON column without JSON data".into())),
        },
        Plan::Enum { labels, table, dt } => {
            let b = fixed_bytes(data)?.as_bytes();
            let key_dt = match dt {
                A::Dictionary(k, _) => k.as_ref().clone(),
                _ => A::Int32,
            };
            let bad = |v: i32| Error::Conversion(format!("value {v} is not one of the Enum's"));
            let keys = if key_dt == A::Int16 {
                let mut v = Vec::with_capacity(b.len());
                for (i, &x) in b.iter().enumerate() {
                    let k = table.index[(i32::from(x as i8) - i32::from(i16::MIN)) as usize];
                    if k < 0 {
                        // A NULL row's placeholder need not be one of the Enum's values.
                        if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                            v.push(0);
                            continue;
                        }
                        return Err(bad(i32::from(x as i8)));
                    }
                    v.push(k as i16);
                }
                Buffer::from_vec(v)
            } else {
                let src: &[i16] = bytemuck::try_cast_slice(b).map_err(|e| Error::Protocol(format!("{e:?}")))?;
                let mut v = Vec::with_capacity(src.len());
                for (i, &x) in src.iter().enumerate() {
                    let k = table.index[(i32::from(x) - i32::from(i16::MIN)) as usize];
                    if k < 0 {
                        if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                            v.push(0);
                            continue;
                        }
                        return Err(bad(i32::from(x)));
                    }
                    v.push(k);
                }
                Buffer::from_vec(v)
            };
            let d = ArrayDataBuilder::new(dt.clone())
                .len(len)
                .add_buffer(keys)
                .nulls(nulls)
                .add_child_data(labels.to_data())
                .build()?;
            Ok(make_array(d))
        }
        Plan::Nullable(inner) => match data {
            ColumnData::Nullable(n) => {
                let v = validity(n.nulls().as_bytes());
                let v = combine(Some(v), nulls);
                convert(r, inner, n.inner(), v, dt)
            }
            _ => Err(Error::Protocol("Nullable column without a null map".into())),
        },
        Plan::LowCard { dict, nullable, dt: ldt } => match data {
            ColumnData::LowCardinality(lc) => {
                let values_dt = match ldt {
                    A::Dictionary(_, v) => v.as_ref().clone(),
                    _ => return Err(Error::Protocol("LowCardinality plan without a dictionary type".into())),
                };
                let values = convert(r, dict, lc.dict(), None, &values_dt)?;
                let keys = lc.keys().as_bytes();
                let n = values.len() as u64;
                let kv: Vec<i32> = match lc.key_width() {
                    1 => keys.iter().map(|&k| i32::from(k)).collect(),
                    2 => bytemuck::try_cast_slice::<u8, u16>(keys)
                        .map_err(|e| Error::Protocol(format!("{e:?}")))?
                        .iter()
                        .map(|&k| i32::from(k))
                        .collect(),
                    4 | 8 => {
                        let mut v = Vec::with_capacity(len);
                        for i in 0..len {
                            let k = if lc.key_width() == 4 {
                                u64::from(u32::from_le_bytes(keys[4 * i..4 * i + 4].try_into().unwrap()))
                            } else {
                                u64::from_le_bytes(keys[8 * i..8 * i + 8].try_into().unwrap())
                            };
                            if k >= n {
                                return Err(Error::Protocol(format!(
                                    "LowCardinality key {k} past the dictionary ({n})"
                                )));
                            }
                            v.push(k as i32);
                        }
                        v
                    }
                    w => return Err(Error::Protocol(format!("LowCardinality key width {w}"))),
                };
                let nulls = if *nullable {
                    let own = NullBuffer::new(BooleanBuffer::collect_bool(kv.len(), |i| kv[i] != 0));
                    combine(Some(own), nulls)
                } else {
                    nulls
                };
                let d = ArrayDataBuilder::new(ldt.clone())
                    .len(len)
                    .add_buffer(Buffer::from_vec(kv))
                    .nulls(nulls)
                    .add_child_data(values.to_data())
                    .build()?;
                Ok(make_array(d))
            }
            _ => Err(Error::Protocol("LowCardinality column without a dictionary".into())),
        },
        Plan::List(inner, item) => match data {
            ColumnData::Array(a) => {
                let ends: &[u64] = a.offsets().typed().map_err(chnative::Error::from)?;
                let offsets = offsets_i32(r, ends)?;
                let values = convert(r, inner, a.inner(), None, item.data_type())?;
                Ok(Arc::new(arrow_array::ListArray::try_new(item.clone(), offsets, values, nulls)?))
            }
            _ => Err(Error::Protocol("Array column without offsets".into())),
        },
        Plan::Map { key, value, entries } => match data {
            ColumnData::Array(a) => {
                let ends: &[u64] = a.offsets().typed().map_err(chnative::Error::from)?;
                let offsets = offsets_i32(r, ends)?;
                let (kd, vd) = match a.inner().tuple_elements() {
                    Some([k, v]) => (k, v),
                    _ => return Err(Error::Protocol("Map column without keys and values".into())),
                };
                let A::Struct(fields) = entries.data_type() else {
                    return Err(Error::Protocol("Map entries are not a struct".into()));
                };
                let k = convert(r, key, kd, None, fields[0].data_type())?;
                let v = convert(r, value, vd, None, fields[1].data_type())?;
                let s = arrow_array::StructArray::try_new(fields.clone(), vec![k, v], None)?;
                Ok(Arc::new(arrow_array::MapArray::try_new(entries.clone(), offsets, s, nulls, false)?))
            }
            _ => Err(Error::Protocol("Map column without offsets".into())),
        },
        Plan::Struct(plans, fields) => {
            let elems = data.tuple_elements().ok_or_else(|| Error::Protocol("Tuple column without elements".into()))?;
            if fields.is_empty() {
                return Ok(Arc::new(arrow_array::StructArray::new_empty_fields(len, nulls)));
            }
            let mut arrays = Vec::with_capacity(plans.len());
            for ((p, e), f) in plans.iter().zip(elems).zip(fields.iter()) {
                arrays.push(convert(r, p, e, None, f.data_type())?);
            }
            Ok(Arc::new(arrow_array::StructArray::try_new(fields.clone(), arrays, nulls)?))
        }
        Plan::Null => Ok(Arc::new(arrow_array::NullArray::new(len))),
        Plan::Union(plans, fields) => {
            let ColumnData::Variant { 0: v, .. } = data else {
                return Err(Error::Protocol("Variant column without Variant data".into()));
            };
            let null_id = plans.len() as i8;
            let disc = v.discriminators.as_bytes();
            let offs: &[u64] = v.offsets.typed().map_err(chnative::Error::from)?;
            let mut type_ids = Vec::with_capacity(disc.len());
            let mut offsets = Vec::with_capacity(disc.len());
            let mut nulls_seen = 0i32;
            for (&d, &o) in disc.iter().zip(offs) {
                if usize::from(d) < plans.len() {
                    type_ids.push(d as i8);
                    offsets.push(i32::try_from(o).map_err(|_| Error::Conversion("Variant too long".into()))?);
                } else {
                    type_ids.push(null_id);
                    offsets.push(nulls_seen);
                    nulls_seen += 1;
                }
            }
            let mut children = Vec::with_capacity(plans.len() + 1);
            for ((p, col), (_, f)) in plans.iter().zip(&v.variants).zip(fields.iter()) {
                children.push(convert(r, p, col, None, f.data_type())?);
            }
            dense_union(fields, type_ids, offsets, children, nulls_seen)
        }
        Plan::Dynamic(members, fields) => {
            let ColumnData::Dynamic { 0: d, .. } = data else {
                return Err(Error::Protocol("Dynamic column without Dynamic data".into()));
            };
            dynamic_union(r, members, fields, d)
        }
        Plan::QBit(elem, dim, item) => {
            let view = QBitView::from_data(*elem, *dim, data)?;
            let values: ArrayRef = match elem {
                Element::Float64 => Arc::new(arrow_array::Float64Array::from(view.to_vec::<f64>()?)),
                _ => {
                    let mut v = vec![0f32; view.len() * dim];
                    view.read_f32(&mut v)?;
                    Arc::new(arrow_array::Float32Array::from(v))
                }
            };
            let size = i32::try_from(*dim).map_err(|_| Error::Conversion("QBit dimension too large".into()))?;
            Ok(Arc::new(arrow_array::FixedSizeListArray::try_new(item.clone(), size, values, nulls)?))
        }
    }
}

/// One block of a Dynamic column as a dense union of the declared `members`.
fn dynamic_union(
    r: &Recycler,
    members: &[(T, Plan)],
    fields: &arrow_schema::UnionFields,
    d: &chnative::proto::DynamicData,
) -> Result<ArrayRef> {
    let declared = || members.iter().map(|(t, _)| t.to_string()).collect::<Vec<_>>().join(", ");
    // The member each of the block's types goes to, and the block's column for each member.
    let mut member_of: Vec<Option<i8>> = Vec::with_capacity(d.types.len());
    let mut source: Vec<Option<usize>> = vec![None; members.len()];
    for (t, bt) in d.types.iter().enumerate() {
        let m = members.iter().position(|(ty, _)| *ty == bt.ty);
        if let Some(m) = m {
            if source[m].is_some() {
                return Err(Error::Protocol(format!("a Dynamic block lists type {} twice", bt.name)));
            }
            source[m] = Some(t);
        }
        member_of.push(m.map(|m| m as i8));
    }
    let rows = d.rows();
    let null_id = members.len() as i8;
    let mut type_ids = Vec::with_capacity(rows);
    let mut offsets = Vec::with_capacity(rows);
    let mut nulls_seen = 0i32;
    for i in 0..rows {
        match d.row_type(i) {
            None => {
                type_ids.push(null_id);
                offsets.push(nulls_seen);
                nulls_seen += 1;
            }
            Some(t) => {
                let bt = d.types.get(t).ok_or_else(|| Error::Protocol(format!("Dynamic row type {t} out of range")))?;
                let m = member_of[t].ok_or_else(|| {
                    Error::Conversion(format!(
                        "a Dynamic value of type {} is not one of the declared types [{}]: add it to \
                         DynamicMode::Union, or CAST the column in the query",
                        bt.name,
                        declared()
                    ))
                })?;
                if let Some(why) = &bt.undecodable {
                    return Err(Error::Conversion(format!("a Dynamic value of type {}: {why}", bt.name)));
                }
                type_ids.push(m);
                offsets.push(
                    i32::try_from(d.row_index(i)).map_err(|_| Error::Conversion("Dynamic column too long".into()))?,
                );
            }
        }
    }
    let mut children = Vec::with_capacity(members.len() + 1);
    for (((_, plan), (_, f)), src) in members.iter().zip(fields.iter()).zip(&source) {
        // A type the block does not hold, or holds no decodable column of (then no row uses it: checked above).
        let col = src.and_then(|t| d.type_column(t));
        children.push(match col {
            Some(col) => convert(r, plan, col, None, f.data_type())?,
            None => arrow_array::new_empty_array(f.data_type()),
        });
    }
    dense_union(fields, type_ids, offsets, children, nulls_seen)
}

/// A dense union of `children` and, last, the child that holds the `nulls_seen`
/// NULL rows (their type id and offsets already in `type_ids` and `offsets`).
fn dense_union(
    fields: &arrow_schema::UnionFields,
    type_ids: Vec<i8>,
    offsets: Vec<i32>,
    mut children: Vec<ArrayRef>,
    nulls_seen: i32,
) -> Result<ArrayRef> {
    children.push(Arc::new(arrow_array::NullArray::new(nulls_seen as usize)) as ArrayRef);
    let u = arrow_array::UnionArray::try_new(
        fields.clone(),
        ScalarBuffer::from(type_ids),
        Some(ScalarBuffer::from(offsets)),
        children,
    )?;
    Ok(Arc::new(u))
}

fn combine(a: Option<NullBuffer>, b: Option<NullBuffer>) -> Option<NullBuffer> {
    NullBuffer::union(a.as_ref(), b.as_ref())
}

fn kernel() -> Kernel {
    static K: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
    *K.get_or_init(Kernel::detect)
}

fn json_text(r: &Recycler, j: &JsonData, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
    if j.version != JSON_STRING {
        return Err(Error::Conversion(format!(
            "JSON arrived in its structured form; the server sends text only with the setting {JSON_AS_STRING_SETTING} = 1 (query_arrow sets it)"
        )));
    }
    strings(r, StringType::Utf8, &j.text, nulls)
}

/// A String column as the chosen Arrow string type: the blob is shared, the
/// offsets converted (or 16-byte views built for Utf8View).
fn strings(r: &Recycler, kind: StringType, data: &ColumnData, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
    let ColumnData::String(s) = data else {
        return Err(Error::Protocol("String column without string data".into()));
    };
    let ends: &[u64] = s.offsets().typed().map_err(chnative::Error::from)?;
    let blob = s.data().as_bytes();
    let ascii = s.is_ascii();
    let utf8 = |what: &str| -> Result<()> {
        if ascii || kind == StringType::Binary {
            return Ok(());
        }
        let bad = || {
            Error::Conversion(format!(
                "{what}: a value is not valid UTF-8; read String columns as StringType::Binary, or convert in the query"
            ))
        };
        std::str::from_utf8(blob).map_err(|_| bad())?;
        // Every row must start and end on a character boundary.
        if ends.iter().any(|&e| (e as usize) < blob.len() && (blob[e as usize] & 0xc0) == 0x80) {
            return Err(bad());
        }
        Ok(())
    };
    let values = share(s.data());
    let len = ends.len();
    match kind {
        StringType::Utf8 | StringType::Binary | StringType::LargeUtf8 => {
            let (dt, offsets) = if kind == StringType::LargeUtf8 {
                (A::LargeUtf8, offsets_i64(ends)?.into_inner().into_inner())
            } else {
                let dt = if kind == StringType::Utf8 { A::Utf8 } else { A::Binary };
                (dt, offsets_i32(r, ends)?.into_inner().into_inner())
            };
            utf8("String")?;
            let b = ArrayDataBuilder::new(dt).len(len).add_buffer(offsets).add_buffer(values).nulls(nulls);
            // SAFETY: offsets start at 0, are monotonic (checked by the decoder) and end at
            // the blob's length; the bytes are valid UTF-8 at every boundary (checked above,
            // or known ASCII) for Utf8 and LargeUtf8.
            Ok(make_array(unsafe { b.build_unchecked() }))
        }
        StringType::Utf8View => {
            utf8("String")?;
            if blob.len() > u32::MAX as usize {
                return Err(Error::Conversion("more than 4 GiB of strings in one block".into()));
            }
            let mut views: Vec<u128> = Vec::with_capacity(len);
            let mut start = 0usize;
            for &e in ends {
                let e = e as usize;
                let l = e - start;
                let v = if l <= 12 {
                    let mut raw = [0u8; 16];
                    raw[..4].copy_from_slice(&(l as u32).to_le_bytes());
                    raw[4..4 + l].copy_from_slice(&blob[start..e]);
                    u128::from_le_bytes(raw)
                } else {
                    let mut raw = [0u8; 16];
                    raw[..4].copy_from_slice(&(l as u32).to_le_bytes());
                    raw[4..8].copy_from_slice(&blob[start..start + 4]);
                    // buffer index 0, then the offset
                    raw[12..16].copy_from_slice(&(start as u32).to_le_bytes());
                    u128::from_le_bytes(raw)
                };
                views.push(v);
                start = e;
            }
            let views = ScalarBuffer::from(views);
            // SAFETY: every view's length, prefix, buffer index (0) and offset were made
            // from the blob above, and the blob is UTF-8 at every row boundary.
            let arr = unsafe { arrow_array::StringViewArray::new_unchecked(views, Arc::from(vec![values]), nulls) };
            Ok(Arc::new(arr))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DynamicMode;
    use arrow_array::StringArray;
    use chnative::proto::{Column, ColumnData};

    fn ctx() -> Ctx {
        Ctx { strings: StringType::Utf8, server_tz: Some(Arc::from("UTC")), dynamic: DynamicMode::Refuse }
    }

    /// Fixed-width columns and string bytes are shared with the block, not copied;
    /// the arrays stay valid after the block is gone.
    #[test]
    fn fixed_width_and_string_bytes_are_shared() {
        let block = Block::from_columns(vec![
            Column::new("a", "UInt64", ColumnData::from_values(&[1u64, 2, 3])).unwrap(),
            Column::new("d", "Decimal128(4)", ColumnData::from_values(&[5i128, -6, 7])).unwrap(),
            Column::new("t", "DateTime64(6, 'UTC')", ColumnData::from_values(&[1i64, 2, 3])).unwrap(),
            Column::new("s", "String", ColumnData::from_strings(&["x", "yz", ""])).unwrap(),
        ])
        .unwrap();
        let plan = BlockPlan::new(&block, &ctx()).unwrap();
        let batch = plan.convert(&block).unwrap();
        let fixed_ptr = |i: usize| match block.columns()[i].data() {
            ColumnData::Fixed(f) => f.data().as_bytes().as_ptr(),
            _ => unreachable!(),
        };
        for i in 0..3 {
            assert_eq!(batch.column(i).to_data().buffers()[0].as_ptr(), fixed_ptr(i), "column {i} copied");
        }
        let blob = match block.columns()[3].data() {
            ColumnData::String(s) => s.data().as_bytes().as_ptr(),
            _ => unreachable!(),
        };
        assert_eq!(batch.column(3).to_data().buffers()[1].as_ptr(), blob, "string bytes copied");
        drop(block);
        let a = batch.column(0).as_any().downcast_ref::<arrow_array::UInt64Array>().unwrap();
        assert_eq!(a.values(), &[1, 2, 3]);
        let s = batch.column(3).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(s.value(1), "yz");
    }
}
