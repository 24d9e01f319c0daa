//! QBit against the real server: vectors the server transposed are untransposed by
//! every kernel and compared bit for bit with the server's own `CAST(v AS Array(T))`;
//! vectors we transposed are inserted and the server checks them (`CAST` back and
//! `toString`, bit plane by bit plane against its own transposition, and its
//! `*DistanceTransposed` functions against distances we compute from the same values,
//! within the float type's error bound); a SELECTed QBit column goes back in unchanged.
//! Element types BFloat16, Float32 and Float64.
//!
//! No assertion compares two server float functions: their results depend on the CPU's
//! vector kernels (an AVX-512 machine differs from others by more than 1e-5).

use crate::common;
use common::*;

use chnative::{Client, FixedValue, InsertData, Query};
use chnative_proto::qbit::{self, Kernel, QBitValue, QBitView};

const QBIT_SETTING: &str = "allow_experimental_qbit_type";

/// An element type as the tests need it.
trait Elem: QBitValue + FixedValue + Copy + std::fmt::Debug {
    const TYPE: &'static str;
    const REINTERPRET: &'static str;
    /// Machine epsilon of the type (distances the server computes in it are compared
    /// with ours within a bound proportional to it).
    const EPS: f64;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Elem for f32 {
    const TYPE: &'static str = "Float32";
    const REINTERPRET: &'static str = "reinterpretAsUInt32";
    const EPS: f64 = f32::EPSILON as f64;
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Elem for f64 {
    const TYPE: &'static str = "Float64";
    const REINTERPRET: &'static str = "reinterpretAsUInt64";
    const EPS: f64 = f64::EPSILON;
    fn from_f64(x: f64) -> Self {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// BFloat16 bits.
impl Elem for u16 {
    const TYPE: &'static str = "BFloat16";
    const REINTERPRET: &'static str = "reinterpretAsUInt16";
    const EPS: f64 = 1.0 / 128.0; // 8 significant bits
    fn from_f64(x: f64) -> Self {
        ((x as f32).to_bits() >> 16) as u16
    }
    fn to_f64(self) -> f64 {
        f64::from(f32::from_bits(u32::from(self) << 16))
    }
}

fn bytes<T: Elem>(v: &[T]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// Rows where `id % 7 == 3` carry special values (zeros, infinities, NaN, subnormals).
fn special_row(id: usize) -> bool {
    id % 7 == 3
}

/// `rows × dim` values: random signs and magnitudes over many binades, plus specials.
fn make_data<T: Elem>(rows: usize, dim: usize, seed: u64) -> Vec<T> {
    let mut rng = Rng(seed);
    let specials = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-40, 1e-310, 3.0e38];
    let mut out = Vec::with_capacity(rows * dim);
    for r in 0..rows {
        for i in 0..dim {
            let x = if special_row(r) && i % 3 == 0 {
                specials[(r + i) % specials.len()]
            } else {
                rng.unit() * 2f64.powi((rng.next() % 40) as i32 - 20)
            };
            out.push(T::from_f64(x));
        }
    }
    out
}

/// A table dropped when the test ends (also when it fails).
struct Table(String);

impl Table {
    async fn create(c: &mut Client, prefix: &str, columns: &str) -> Table {
        let t = Table(unique_table(prefix));
        c.execute(
            Query::new(format!("CREATE TABLE {} ({columns}) ENGINE = MergeTree ORDER BY tuple()", t.0))
                .setting(QBIT_SETTING, "1"),
        )
        .await
        .unwrap();
        t
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        let _ = common::http_try(&format!("DROP TABLE IF EXISTS {}", self.0));
    }
}

/// One TSV row from the server over HTTP (independent of the code under test).
fn q(sql: &str) -> Vec<String> {
    http(&format!("{sql} SETTINGS {QBIT_SETTING} = 1 FORMAT TSV")).trim_end().split('\t').map(String::from).collect()
}

fn literal<T: Elem>(v: &[T]) -> String {
    let items: Vec<String> = v.iter().map(|x| format!("{:?}", x.to_f64())).collect();
    format!("CAST([{}] AS Array({}))", items.join(","), T::TYPE)
}

// ---------------------------------------------------------------------------
// Server → client
// ---------------------------------------------------------------------------

/// QBit columns the server built, read at `dim`, against the server's own CAST back.
async fn read_server_vectors<T: Elem>(c: &mut Client, dim: usize) {
    let g = "(id * 7 + i)";
    let value = format!(
        "multiIf({g} % 97 = 0, 0., {g} % 89 = 0, -0., {g} % 83 = 0, inf, {g} % 79 = 0, -inf, {g} % 73 = 0, nan, \
         {g} % 71 = 0, 1e-40, sin(id * 131 + i * 7) * exp((i % 40) - 20))"
    );
    let sql = format!(
        "SELECT id, v, CAST(v AS Array({t})) AS back FROM (SELECT number AS id, \
         CAST(arrayMap(i -> {value}, range({dim})) AS QBit({t}, {dim})) AS v FROM numbers(1200)) ORDER BY id",
        t = T::TYPE
    );
    let mut s =
        c.fetch_blocks(Query::new(sql).setting(QBIT_SETTING, "1").setting("max_block_size", "397")).await.unwrap();
    let mut seen = 0usize;
    let mut blocks = 0;
    while let Some(block) = s.next().await.unwrap() {
        if block.rows() == 0 {
            continue;
        }
        blocks += 1;
        let rows = block.rows();
        let v = block.column("v").unwrap();
        assert_eq!(v.type_name(), format!("QBit({}, {dim})", T::TYPE));
        let view = QBitView::new(&v.view()).unwrap();
        assert_eq!((view.len(), view.dim()), (rows, dim));
        let back_col = block.column("back").unwrap();
        let back = back_col.view();
        let arr = back.as_array().unwrap();
        assert!(arr.offsets().iter().enumerate().all(|(i, &o)| o as usize == (i + 1) * dim));
        let want: &[T] = arr.inner().values::<T>().unwrap();
        for k in Kernel::available() {
            let mut got = vec![T::from_f64(0.0); rows * dim];
            view.read_rows_with(k, 0..rows, &mut got).unwrap();
            assert!(bytes(&got) == bytes(want), "{} dim {dim} {k:?}: differs from the server's CAST", T::TYPE);
        }
        for i in [0, rows / 2, rows - 1] {
            let mut one = vec![T::from_f64(0.0); dim];
            view.row(i, &mut one).unwrap();
            assert!(bytes(&one) == bytes(&want[i * dim..(i + 1) * dim]));
        }
        seen += rows;
    }
    assert_eq!(seen, 1200);
    assert!(blocks >= 3, "expected several blocks, got {blocks}");
}

#[tokio::test]
async fn server_vectors_float32() {
    if !common::requires(25, 10, "QBit") {
        return;
    }
    let mut c = client().await;
    for dim in [1, 3, 8, 9, 16, 31, 32, 33, 64, 100, 128, 257] {
        read_server_vectors::<f32>(&mut c, dim).await;
    }
}

#[tokio::test]
async fn server_vectors_float64_and_bfloat16() {
    if !common::requires(25, 10, "QBit") {
        return;
    }
    let mut c = client().await;
    for dim in [1, 9, 33, 128] {
        read_server_vectors::<f64>(&mut c, dim).await;
        read_server_vectors::<u16>(&mut c, dim).await;
    }
}

/// The whole vectors through `read_f32`, for a BFloat16 QBit widened to f32.
#[tokio::test]
async fn bfloat16_widened_to_f32() {
    if !common::requires(25, 10, "QBit") {
        return;
    }
    let c = client().await;
    let sql = "SELECT CAST([1.5, -2.25, 0, 1e30, -1e-30] AS QBit(BFloat16, 5)) AS v, \
               CAST(CAST(v AS Array(BFloat16)) AS Array(Float32)) AS f";
    let mut s = c.fetch_blocks(Query::new(sql).setting(QBIT_SETTING, "1")).await.unwrap();
    while let Some(block) = s.next().await.unwrap() {
        if block.rows() == 0 {
            continue;
        }
        let view = QBitView::new(&block.column("v").unwrap().view()).unwrap();
        let mut wide = [0f32; 5];
        view.read_f32(&mut wide).unwrap();
        let f = block.column("f").unwrap();
        let fv = f.view();
        let want = fv.as_array().unwrap().inner().values::<f32>().unwrap().to_vec();
        assert_eq!(wide.map(f32::to_bits).to_vec(), want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    }
}

// ---------------------------------------------------------------------------
// Client → server
// ---------------------------------------------------------------------------

/// Inserts vectors we transposed next to the same values as Array(T) and has the
/// server compare them.
async fn insert_and_check<T: Elem>(c: &mut Client, dim: usize, rows: usize) {
    let t = T::TYPE;
    let table = Table::create(c, "qbit_ins", &format!("id UInt32, v QBit({t}, {dim}), a Array({t})")).await;
    let data: Vec<T> = make_data(rows, dim, 0x5EED ^ dim as u64);
    let ids: Vec<u32> = (0..rows as u32).collect();
    let offsets: Vec<u64> = (1..=rows as u64).map(|r| r * dim as u64).collect();
    let col = qbit::column("v", dim, &data).unwrap();
    let sum = c
        .insert(&table.0)
        .setting(QBIT_SETTING, "1")
        .column("id", &ids)
        .column("v", &col)
        .column("a", InsertData::array(&offsets, chnative::fixed(&data)))
        .send()
        .await
        .unwrap_or_else(|e| panic!("insert {t} dim {dim}: {e}"));
    assert_eq!(sum.rows, rows as u64);

    // Values, text, and every bit plane against the server's own transposition.
    let re = T::REINTERPRET;
    let planes: Vec<String> =
        (1..=T::ELEMENT.bits()).map(|k| format!("v.{k} != CAST(a AS QBit({t}, {dim})).{k}")).collect();
    let got = q(&format!(
        "SELECT count(), countIf(arrayMap(x -> {re}(x), CAST(v AS Array({t}))) != arrayMap(x -> {re}(x), a)), \
         countIf(toString(v) != toString(a)), countIf({}) FROM {}",
        planes.join(" OR "),
        table.0
    ));
    assert_eq!(
        got,
        [rows.to_string(), "0".into(), "0".into(), "0".into()],
        "{t} dim {dim}: count, values, text, planes"
    );

    // Distances on the rows without specials, against ours from the same values. The
    // server's float math is not ours to pin down (its SIMD kernels sum in a CPU-dependent
    // order and precision), so no server function is compared with another; the
    // tolerance is the textbook bound for summing `dim` products in T's precision
    // (|error| <= (dim + 2) * eps * sum|terms|), doubled.
    let mut rng = Rng(dim as u64 + 17);
    let reference: Vec<T> = (0..dim).map(|_| T::from_f64(rng.unit() * 100.0)).collect();
    let lit = literal(&reference);
    let w = T::ELEMENT.bits();
    let body = http(&format!(
        "SELECT id, L2DistanceTransposed(v, {lit}, {w}), cosineDistanceTransposed(v, {lit}, {w}), \
         dotProductTransposed(v, {lit}, {w}) \
         FROM {} WHERE id % 7 != 3 ORDER BY id SETTINGS {QBIT_SETTING} = 1 FORMAT TSV",
        table.0
    ));
    let gamma = 2.0 * (dim as f64 + 2.0) * T::EPS;
    let mut checked = 0;
    for line in body.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let id: usize = f[0].parse().unwrap();
        let [l2, cosine, dot]: [f64; 3] = std::array::from_fn(|i| f[i + 1].parse().unwrap());
        let row = &data[id * dim..(id + 1) * dim];
        let pairs = || row.iter().zip(&reference).map(|(x, r)| (x.to_f64(), r.to_f64()));
        let squares: f64 = pairs().map(|(x, r)| (x - r) * (x - r)).sum();
        let our_dot: f64 = pairs().map(|(x, r)| x * r).sum();
        let abs_dot: f64 = pairs().map(|(x, r)| (x * r).abs()).sum();
        let norms = pairs().map(|(x, _)| x * x).sum::<f64>().sqrt() * pairs().map(|(_, r)| r * r).sum::<f64>().sqrt();
        // sqrt halves the relative error of the sum of squares.
        let our_l2 = squares.sqrt();
        assert!((l2 - our_l2).abs() <= gamma * our_l2, "{t} dim {dim} row {id}: server L2 {l2} vs ours {our_l2}");
        assert!(
            (dot - our_dot).abs() <= gamma * abs_dot,
            "{t} dim {dim} row {id}: server dot {dot} vs ours {our_dot} (sum of |terms| {abs_dot})"
        );
        // 1 - dot/(|x||r|): the dot's error over |x||r|, plus the two norms' relative errors
        // times |dot|/(|x||r|) <= 1. The server's cosineDistanceTransposed works in Float32
        // precision even for Float64 (26.9: 9e-9 relative on three elements), so its bound
        // uses Float32's epsilon at least.
        let our_cosine = 1.0 - our_dot / norms;
        let cos_gamma = 2.0 * (dim as f64 + 2.0) * T::EPS.max(f64::from(f32::EPSILON));
        let cos_tol = cos_gamma * (abs_dot / norms + 2.0);
        assert!(
            (cosine - our_cosine).abs() <= cos_tol,
            "{t} dim {dim} row {id}: server cosine {cosine} vs ours {our_cosine} (tolerance {cos_tol})"
        );
        checked += 1;
    }
    assert_eq!(checked, (0..rows).filter(|&r| !special_row(r)).count());

    // Read back through the client, bit for bit.
    let mut s = c.fetch_blocks(format!("SELECT v FROM {} ORDER BY id", table.0)).await.unwrap();
    let mut back: Vec<T> = Vec::new();
    while let Some(block) = s.next().await.unwrap() {
        if block.rows() > 0 {
            back.extend(QBitView::new(&block.column("v").unwrap().view()).unwrap().to_vec::<T>().unwrap());
        }
    }
    assert!(bytes(&back) == bytes(&data), "{t} dim {dim}: read back differs");
}

#[tokio::test]
async fn insert_float32() {
    if !common::requires(25, 10, "QBit") {
        return;
    }
    let mut c = client().await;
    for dim in [1, 5, 16, 32, 100, 128] {
        insert_and_check::<f32>(&mut c, dim, 300).await;
    }
}

#[tokio::test]
async fn insert_float64_and_bfloat16() {
    if !common::requires(25, 10, "QBit") {
        return;
    }
    let mut c = client().await;
    for dim in [5, 33, 128] {
        insert_and_check::<f64>(&mut c, dim, 200).await;
        insert_and_check::<u16>(&mut c, dim, 200).await;
    }
}

/// Every revision and compression carries QBit the same way.
#[tokio::test]
async fn insert_at_every_revision() {
    if !common::requires(25, 10, "QBit") {
        return;
    }
    let mut combos: Vec<(u64, &str)> = REVISIONS.iter().map(|&r| (r, "lz4")).collect();
    combos.push((*REVISIONS.last().unwrap(), "zstd"));
    combos.push((*REVISIONS.last().unwrap(), "none"));
    for (rev, comp) in combos {
        let mut c = client_at(rev, comp).await;
        insert_and_check::<f32>(&mut c, 41, 60).await;
    }
}

/// A QBit column read from the server goes back in unchanged (`&Column`).
#[tokio::test]
async fn selected_column_reinserted() {
    if !common::requires(25, 10, "QBit") {
        return;
    }
    let reader = client().await;
    let mut writer = client().await;
    let dim = 77;
    // The source is stored once: computing `cos` again for the comparison could round
    // differently (the server's vector kernels depend on the CPU and the block split).
    let src = Table::create(&mut writer, "qbit_src", &format!("id UInt64, v QBit(Float32, {dim})")).await;
    writer
        .execute(
            Query::new(format!(
                "INSERT INTO {} SELECT number, CAST(arrayMap(i -> toFloat32(cos(number * 3 + i) * (i + 1)), \
                 range({dim})) AS QBit(Float32, {dim})) FROM numbers(1000)",
                src.0
            ))
            .setting(QBIT_SETTING, "1"),
        )
        .await
        .unwrap();
    let dst = Table::create(&mut writer, "qbit_copy", &format!("v QBit(Float32, {dim})")).await;
    let mut s = reader
        .fetch_blocks(Query::new(format!("SELECT v FROM {} ORDER BY id", src.0)).setting("max_block_size", "300"))
        .await
        .unwrap();
    let mut rows = 0;
    while let Some(block) = s.next().await.unwrap() {
        if block.rows() == 0 {
            continue;
        }
        let col = block.column("v").unwrap();
        writer.insert(&dst.0).setting(QBIT_SETTING, "1").column("v", col).send().await.unwrap();
        rows += block.rows();
    }
    assert_eq!(rows, 1000);
    let a = q(&format!("SELECT count(), sum(cityHash64(toString(v))) FROM {}", dst.0));
    let b = q(&format!("SELECT count(), sum(cityHash64(toString(v))) FROM {}", src.0));
    assert_eq!(a, b);
}

/// Strided `QBit(T, N, stride)` and `QBit(Int8, N)` decode as their raw planes
/// (group-major for strided), keep the columns after them aligned, and go back
/// into an INSERT unchanged.
#[tokio::test]
async fn strided_and_int8_qbits_decode_and_round_trip() {
    if !common::requires(25, 10, "QBit") {
        return;
    }
    let c = common::client().await;
    let table = common::unique_table("qbit_strided");
    let create = chnative::Query::new(format!(
        "CREATE TABLE {table} (id UInt32, a QBit(Float32, 24, 8), b QBit(Int8, 12), after String) ENGINE = Memory"
    ))
    .setting("allow_experimental_qbit_type", "1");
    c.execute(create).await.unwrap();
    let fill = chnative::Query::new(format!(
        "INSERT INTO {table} SELECT number, arrayMap(i -> toFloat32(i * number - 7.5), range(24)), \
         arrayMap(i -> toInt8((i * 7 + number) % 200 - 100), range(12)), concat('row', toString(number)) FROM numbers(50)"
    ))
    .setting("allow_experimental_qbit_type", "1");
    c.execute(fill).await.unwrap();
    let copy = common::unique_table("qbit_strided_copy");
    c.execute(
        chnative::Query::new(format!("CREATE TABLE {copy} AS {table}")).setting("allow_experimental_qbit_type", "1"),
    )
    .await
    .unwrap();
    let writer = common::client().await;
    let mut s = c.fetch_blocks(format!("SELECT * FROM {table} ORDER BY id").as_str()).await.unwrap();
    let mut rows = 0;
    while let Some(block) = s.next().await.unwrap() {
        let after = block.column("after").unwrap().view();
        let after = after.as_strings().unwrap();
        let ids = block.column("id").unwrap().view();
        for (i, id) in ids.values::<u32>().unwrap().iter().enumerate() {
            assert_eq!(after.str(i).unwrap(), format!("row{id}"));
        }
        assert_eq!(block.column("a").unwrap().type_name(), "QBit(Float32, 24, 8)");
        rows += block.rows();
        writer.insert(&copy).block(block).setting("allow_experimental_qbit_type", "1").send().await.unwrap();
    }
    assert_eq!(rows, 50);
    drop(s);
    let diff = common::http(&format!(
        "SELECT count() FROM (SELECT id, CAST(a AS Array(Float32)) AS a, CAST(b AS Array(Int8)) AS b, after FROM {table} \
         EXCEPT SELECT id, CAST(a AS Array(Float32)), CAST(b AS Array(Int8)), after FROM {copy}) SETTINGS allow_experimental_qbit_type = 1"
    ));
    assert_eq!(diff.trim(), "0");
    assert_eq!(common::http(&format!("SELECT count() FROM {copy}")).trim(), "50");
    c.execute(format!("DROP TABLE {table}").as_str()).await.unwrap();
    c.execute(format!("DROP TABLE {copy}").as_str()).await.unwrap();
}

/// Typed rows: `Vec<f32>` / `Vec<f64>` fields read and write QBit columns (BFloat16
/// widened to f32, and written only when exact). Each vector is also written to an Array
/// column, and the server compares the two; the typed read gives the vectors back.
#[tokio::test]
async fn typed_rows_read_and_write_qbit_vectors() {
    if !common::requires(25, 10, "QBit") {
        return;
    }
    #[derive(chnative::Row, Debug, PartialEq)]
    struct Vectors {
        id: u32,
        f: Vec<f32>,
        fa: Vec<f32>,
        d: Vec<f64>,
        da: Vec<f64>,
        b: Vec<f32>,
    }
    let mut c = client().await;
    let t = Table::create(
        &mut c,
        "qbit_rows",
        "id UInt32, f QBit(Float32, 5), fa Array(Float32), d QBit(Float64, 3), da Array(Float64), b QBit(BFloat16, 9)",
    )
    .await;
    let bf16 = |x: f32| f32::from_bits(x.to_bits() & 0xffff_0000);
    let rows: Vec<Vectors> = (0..1000u32)
        .map(|i| {
            let f: Vec<f32> = (0..5).map(|k| i as f32 * 0.37 - k as f32).collect();
            let d: Vec<f64> = (0..3).map(|k| f64::from(i * k) / 3.0).collect();
            let b = (0..9).map(|k| bf16(i as f32 / 7.0 + k as f32)).collect();
            Vectors { id: i, fa: f.clone(), f, da: d.clone(), d, b }
        })
        .collect();
    assert_eq!(c.insert_rows(&t.0, &rows).await.unwrap().rows, 1000);
    assert_eq!(
        q(&format!(
            "SELECT count(), countIf(CAST(f AS Array(Float32)) != fa), countIf(CAST(d AS Array(Float64)) != da) FROM {}",
            t.0
        )),
        ["1000", "0", "0"]
    );
    let back: Vec<Vectors> = c.fetch_all(format!("SELECT * FROM {} ORDER BY id", t.0)).await.unwrap();
    assert!(back == rows, "typed read back differs");

    // A vector of the wrong length, or a BFloat16 value that would be cut: refused, nothing sent.
    let mut bad = Vectors { id: 0, f: vec![0.0; 4], fa: vec![], d: vec![0.0; 3], da: vec![], b: vec![0.0; 9] };
    let e = c.insert_rows(&t.0, std::slice::from_ref(&bad)).await.unwrap_err().to_string();
    assert!(e.contains("4 values") && e.contains("QBit(Float32, 5)") && e.contains("`f`"), "{e}");
    bad.f = vec![0.0; 5];
    bad.b[3] = 0.1;
    let e = c.insert_rows(&t.0, std::slice::from_ref(&bad)).await.unwrap_err().to_string();
    assert!(e.contains("0.1") && e.contains("BFloat16") && e.contains("`b`"), "{e}");
    assert_eq!(q(&format!("SELECT count() FROM {}", t.0)), ["1000"]);
}
