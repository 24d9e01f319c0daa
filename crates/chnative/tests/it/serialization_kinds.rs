//! Columns the server sends with special serialization kinds: REPLICATED (revision ≥ 54482),
//! SPARSE (≥ 54465; on Nullable ≥ 54483) and their COMBINATION, read through the column tier
//! and compared value by value with the server's own `toString` over HTTP.
//!
//! What makes 26.9 send REPLICATED over TCP: lazy column replication
//! (`enable_lazy_columns_replication`, default 1). ARRAY JOIN wraps every other column of the
//! row holding the array in a `ColumnReplicated`, and a hash join (hash, parallel_hash,
//! grace_hash; not full_sorting_merge or partial_merge) does the same to the columns of its
//! probe side (the left table after any swap: `query_plan_join_swap_table`) when one probe row
//! matches several build rows. `NativeWriter` then materialises the wrapper where it does not
//! pay (constants, LowCardinality, fixed-width values of ≤ 8 bytes, or a wrapped column with
//! no fewer rows than the block), compacts the rest to the referenced rows and sends them as
//! REPLICATED to clients at ≥ 54482; below that it materialises them all.
//! `allow_special_serialization_kinds_in_output_formats` has no effect on the native protocol. Which kinds the server really sent is checked on the wire by a small
//! uncompressed session built from `chnative::proto` (see [`wire_kinds`]), so these tests fail
//! if the server stops sending the kinds they are meant to exercise.

use crate::common;
use common::*;

use std::io::{Read, Write};
use std::time::Duration;

use chnative::{Block, ColumnView, DataType, Query};
use chnative_proto::column::{Kind, SerInfo};
use chnative_proto::packet::{self, read_server_packet, BlockKind, ClientHello, ClientInfo, ServerPacket};
use chnative_proto::wire::{Reader, WriteExt};
use chnative_proto::{BlockLimits, BufferPool, ProtoError};

/// The revisions around the gates, oldest first.
const KIND_REVISIONS: [u64; 4] = [54460, 54482, 54483, 54492];
const COMPRESSIONS: [&str; 2] = ["lz4", "none"];

// ===========================================================================
// Rendering: a value as the server's `toString` prints it
// ===========================================================================

fn quote(b: &[u8], quoted: bool) -> String {
    let s = String::from_utf8_lossy(b);
    if !quoted {
        return s.into_owned();
    }
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Row `i` of `v` as `toString` renders it (`quoted` inside arrays, tuples and maps);
/// `None` for a top-level NULL.
fn render(v: &ColumnView<'_>, i: usize, quoted: bool) -> Option<String> {
    Some(match v.data_type().clone() {
        DataType::UInt8 => v.values::<u8>().unwrap()[i].to_string(),
        DataType::UInt16 => v.values::<u16>().unwrap()[i].to_string(),
        DataType::UInt32 => v.values::<u32>().unwrap()[i].to_string(),
        DataType::UInt64 => v.values::<u64>().unwrap()[i].to_string(),
        DataType::UInt128 => v.values::<u128>().unwrap()[i].to_string(),
        DataType::Int64 => v.values::<i64>().unwrap()[i].to_string(),
        DataType::Int128 => v.values::<i128>().unwrap()[i].to_string(),
        DataType::Uuid => {
            let u = v.values::<chnative::WireUuid>().unwrap()[i].to_string();
            if quoted {
                format!("'{u}'")
            } else {
                u
            }
        }
        DataType::String => quote(v.as_strings().unwrap().bytes(i), quoted),
        DataType::FixedString(n) => quote(&v.as_fixed_strings().unwrap().0[i * n..(i + 1) * n], quoted),
        DataType::Nullable(_) => {
            let n = v.as_nullable().unwrap();
            if n.is_null(i) {
                return quoted.then(|| "NULL".to_string());
            }
            render(n.inner(), i, quoted)?
        }
        t @ (DataType::Array(_) | DataType::Map(..)) => {
            let a = v.as_array().unwrap();
            let is_map = matches!(t, DataType::Map(..));
            let items: Vec<String> = a
                .range(i)
                .map(|j| {
                    if is_map {
                        let kv = a.inner();
                        let k = render(&kv.tuple_element(0).unwrap(), j, true).unwrap();
                        format!("{k}:{}", render(&kv.tuple_element(1).unwrap(), j, true).unwrap())
                    } else {
                        render(a.inner(), j, true).unwrap()
                    }
                })
                .collect();
            if is_map {
                format!("{{{}}}", items.join(","))
            } else {
                format!("[{}]", items.join(","))
            }
        }
        DataType::Tuple(elems) => {
            let items: Vec<String> =
                (0..elems.len()).map(|e| render(&v.tuple_element(e).unwrap(), i, true).unwrap()).collect();
            format!("({})", items.join(","))
        }
        DataType::LowCardinality(_) => {
            let lc = v.as_low_cardinality().unwrap();
            if lc.is_null(i) {
                return quoted.then(|| "NULL".to_string());
            }
            render(lc.dictionary(), lc.key(i), quoted)?
        }
        other => panic!("no renderer for {other:?}"),
    })
}

/// The TSV cell `hex(toString(c))` gives for a rendered value.
fn hex_cell(v: Option<String>) -> String {
    match v {
        None => "\\N".into(),
        Some(s) => s.bytes().map(|b| format!("{b:02X}")).collect(),
    }
}

/// Every row of every block (columns in order), as `hex(toString(c))` TSV cells.
async fn read_rows(c: &mut chnative::Client, q: Query) -> (Vec<String>, Vec<Vec<String>>) {
    let mut s = c.fetch_blocks(q).await.unwrap();
    let mut names = Vec::new();
    let mut rows = Vec::new();
    while let Some(b) = s.next().await.unwrap() {
        if names.is_empty() {
            names = b.columns().iter().map(|c| c.name().to_string()).collect();
        }
        for i in 0..b.rows() {
            rows.push(b.columns().iter().map(|c| hex_cell(render(&c.view(), i, false))).collect());
        }
    }
    (names, rows)
}

/// The server's own rendering of the same rows, over HTTP.
fn http_rows(sql: &str, settings: &[(&str, &str)], names: &[String]) -> Vec<Vec<String>> {
    let cols: Vec<String> = names.iter().map(|n| format!("hex(toString(`{n}`))")).collect();
    let mut q = format!("SELECT {} FROM ({sql})", cols.join(", "));
    if !settings.is_empty() {
        let s: Vec<String> = settings.iter().map(|(k, v)| format!("{k} = '{v}'")).collect();
        q.push_str(&format!(" SETTINGS {}", s.join(", ")));
    }
    q.push_str(" FORMAT TSV");
    http(&q).lines().map(|l| l.split('\t').map(str::to_string).collect()).collect()
}

/// Runs `sql` through chnative at every revision in [`KIND_REVISIONS`] with lz4 and without
/// compression, and compares every value with the server's HTTP rendering (as multisets of
/// rows: parallel joins do not keep an order). Returns the number of rows.
async fn check_values(sql: &str, settings: &[(&str, &str)]) -> usize {
    let mut expected: Option<Vec<Vec<String>>> = None;
    for rev in KIND_REVISIONS {
        for comp in COMPRESSIONS {
            let mut c = client_at(rev, comp).await;
            let mut q = Query::new(sql);
            for (k, v) in settings {
                q = q.setting(*k, *v);
            }
            let (names, mut rows) = read_rows(&mut c, q).await;
            rows.sort_unstable();
            let want = expected.get_or_insert_with(|| {
                let mut w = http_rows(sql, settings, &names);
                w.sort_unstable();
                w
            });
            assert_eq!(rows.len(), want.len(), "row count at {rev}/{comp}: {sql}");
            for (got, want) in rows.iter().zip(want.iter()) {
                assert_eq!(got, want, "at {rev}/{comp} (columns {names:?}): {sql}");
            }
        }
    }
    expected.map_or(0, |e| e.len())
}

// ===========================================================================
// The wire: which kinds did the server send?
// ===========================================================================

fn describe(info: Option<&SerInfo>) -> String {
    let Some(info) = info else { return "-".into() };
    let mut s: Vec<&str> = info
        .stack
        .iter()
        .filter(|k| **k != Kind::Default)
        .map(|k| match k {
            Kind::Sparse => "S",
            Kind::Replicated => "R",
            Kind::Detached => "X",
            Kind::Default => unreachable!(),
            other => panic!("a kind this test does not know: {other:?}"),
        })
        .collect();
    if s.is_empty() {
        s.push("D");
    }
    let mut out = s.join("+");
    if !info.elems.is_empty() {
        let e: Vec<String> = info.elems.iter().map(|e| describe(Some(e))).collect();
        out.push_str(&format!("({})", e.join(",")));
    }
    out
}

/// Finds each column header of a decoded block in the block's own bytes (by its name and type
/// bytes, searching forward from the previous header) and reads its serialization info; also
/// returns the position right after the info (where the column's data starts).
fn header_infos(bytes: &[u8], block: &Block) -> Vec<(Option<SerInfo>, usize)> {
    let mut from = 0;
    let mut out = Vec::new();
    for col in block.columns() {
        let mut pat = Vec::new();
        pat.put_string(col.name());
        pat.put_string(col.type_name());
        let at = bytes[from..]
            .windows(pat.len())
            .position(|w| w == pat.as_slice())
            .unwrap_or_else(|| panic!("header of `{}` not found", col.name()))
            + from;
        from = at + pat.len();
        let mut r = Reader::new(&bytes[from..]);
        let info = if r.bool().unwrap() { Some(SerInfo::read(&mut r, col.data()).unwrap()) } else { None };
        out.push((info, from + r.position()));
    }
    out
}

/// `name kinds` for each column of a decoded block: `-` no custom info, `D` custom info with
/// plain kinds, `S`, `R`, `S+R`, tuples as `R(S,S)`.
fn header_kinds(bytes: &[u8], block: &Block) -> Vec<String> {
    header_infos(bytes, block)
        .iter()
        .zip(block.columns())
        .map(|((info, _), col)| format!("{} {}", col.name(), describe(info.as_ref())))
        .collect()
}

/// `name width` for each top-level REPLICATED column without a state prefix (no LowCardinality
/// inside): the index width the server chose.
fn index_widths(bytes: &[u8], block: &Block) -> Vec<String> {
    let mut out = Vec::new();
    for ((info, at), col) in header_infos(bytes, block).iter().zip(block.columns()) {
        let replicated = info.as_ref().is_some_and(|i| i.stack.last() == Some(&Kind::Replicated));
        if replicated && !col.type_name().contains("LowCardinality") {
            let mut r = Reader::new(&bytes[*at..]);
            assert_eq!(r.varuint().unwrap(), block.rows() as u64);
            out.push(format!("{} {}", col.name(), r.u8().unwrap()));
        }
    }
    out
}

enum Step {
    Other,
    Data(Option<(Vec<u8>, Block)>),
    End,
}

/// Runs `sql` on a plain, uncompressed session at `rev` and returns each Data block with rows,
/// decoded, with its bytes.
fn wire_blocks(rev: u64, sql: &str, settings: &[(&str, &str)]) -> Vec<(Vec<u8>, Block)> {
    let s = server();
    let mut sock = std::net::TcpStream::connect((s.host.as_str(), s.tcp_port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut out = Vec::new();
    let hello = ClientHello {
        client_name: "chnative-kinds-test",
        version_major: 0,
        version_minor: 1,
        revision: rev,
        database: "default",
        user: "default",
        password: "",
    };
    hello.write(&mut out);
    sock.write_all(&out).unwrap();
    let mut buf = Vec::new();
    let mut pos = 0;
    let mut pool = BufferPool::new();
    // Decodes one packet from the buffer, reading more until it is whole.
    let mut next = |sock: &mut std::net::TcpStream, v: u64| -> Step {
        loop {
            let bytes = &buf[pos..];
            let mut r = Reader::new(bytes);
            let res = read_server_packet(&mut r, rev, v, false).and_then(|p| match p {
                ServerPacket::Block { kind, .. } => {
                    let start = r.position();
                    let mut b = Block::new();
                    b.read(&mut r, v, &BlockLimits::default(), &mut pool)?;
                    Ok(Step::Data(
                        (kind == BlockKind::Data && b.rows() > 0).then(|| (bytes[start..r.position()].to_vec(), b)),
                    ))
                }
                ServerPacket::Hello(h) => {
                    assert_eq!(h.revision, 54492);
                    Ok(Step::Other)
                }
                ServerPacket::EndOfStream => Ok(Step::End),
                ServerPacket::Exception(e) => panic!("server exception at {rev}: {} {}", e.name, e.message),
                _ => Ok(Step::Other),
            });
            match res {
                Ok(step) => {
                    pos += r.position();
                    return step;
                }
                Err(ProtoError::Incomplete { .. }) => {
                    let mut chunk = [0u8; 64 << 10];
                    let n = sock.read(&mut chunk).unwrap();
                    assert!(n > 0, "server closed the connection");
                    buf.extend_from_slice(&chunk[..n]);
                }
                Err(e) => panic!("decoding at {rev}: {e}"),
            }
        }
    };
    assert!(matches!(next(&mut sock, rev), Step::Other));
    let v = rev.min(54492);
    let settings: Vec<(String, String, u64)> =
        settings.iter().map(|(k, v)| (k.to_string(), v.to_string(), packet::SETTING_IMPORTANT)).collect();
    let mut out = Vec::new();
    packet::write_addendum(&mut out, v, "");
    packet::Query {
        query_id: "",
        client_info: ClientInfo {
            client_name: "chnative-kinds-test",
            version_major: 0,
            version_minor: 1,
            version_patch: 0,
            our_revision: rev,
            os_user: "",
            hostname: "",
            quota_key: "",
            trace: None,
            start_time_us: 0,
        },
        settings: &settings,
        compression: false,
        sql,
        parameters: &[],
    }
    .write(&mut out, v);
    packet::write_data_head(&mut out, "");
    chnative_proto::block::write_empty_block(&mut out, v);
    sock.write_all(&out).unwrap();
    let mut blocks = Vec::new();
    loop {
        match next(&mut sock, v) {
            Step::End => return blocks,
            Step::Data(Some(k)) => blocks.push(k),
            _ => {}
        }
    }
}

/// The kinds each Data block's column headers announced at `rev` (see [`header_kinds`]).
fn wire_kinds(rev: u64, sql: &str, settings: &[(&str, &str)]) -> Vec<Vec<String>> {
    wire_blocks(rev, sql, settings).iter().map(|(bytes, b)| header_kinds(bytes, b)).collect()
}

/// Asserts that every Data block at `rev` announced exactly `kinds` (one `name kinds` per column).
fn assert_wire_kinds(rev: u64, sql: &str, settings: &[(&str, &str)], kinds: &[&str]) {
    let blocks = wire_kinds(rev, sql, settings);
    assert!(!blocks.is_empty(), "no data at {rev}: {sql}");
    for b in &blocks {
        assert_eq!(b, kinds, "kinds at {rev}: {sql}");
    }
}

/// Whether any Data block at `rev` had a column whose kinds include `kind` ("R" or "S").
fn wire_has_kind(rev: u64, sql: &str, settings: &[(&str, &str)], kind: char) -> bool {
    wire_kinds(rev, sql, settings).iter().flatten().any(|c| c.split_once(' ').unwrap().1.contains(kind))
}

// ===========================================================================
// ARRAY JOIN: every column of the row but the array element is replicated
// ===========================================================================

/// Many types next to an ARRAY JOIN; `n` source rows with `n % 5` elements each.
fn array_join_sql(n: u64) -> String {
    format!(
        "SELECT k, s, ns, arr, lc, t, tlc, alc, m, n8, u128, i128, fs, u, aa, an, x FROM (SELECT number AS k, \
         concat('s\\'\\\\', toString(number), if(number % 4 = 0, '\\tü\\n', '')) AS s, \
         if(number % 3 = 0, NULL, concat('n', toString(number))) AS ns, range(number % 5) AS arr, \
         toLowCardinality(toString(number % 2)) AS lc, (toUInt8(number % 256), concat('t\\'', toString(number))) AS t, \
         (toLowCardinality(toString(number % 3)), [toString(number), 'b\\\\']) AS tlc, \
         [toLowCardinality(toString(number))] AS alc, map(toString(number), number, 'z', 0) AS m, \
         if(number % 4 = 1, NULL, toUInt8(number % 256)) AS n8, toUInt128(number) * toUInt128('1000000000000000000000') AS u128, \
         -toInt128(number) * 3 AS i128, toFixedString(leftPad(toString(number), 16, '0'), 16) AS fs, \
         toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(number), 12, '0'))) AS u, \
         [range(number % 3), [7]] AS aa, [if(number % 2 = 0, NULL, number), 1] AS an \
         FROM numbers({n})) ARRAY JOIN arr AS x"
    )
}

#[tokio::test]
async fn array_join_replicated_columns() {
    if !common::requires_revision(
        common::server_revision().await,
        chnative_proto::revision::REPLICATED_SERIALIZATION,
        "REPLICATED serialization",
    ) {
        return;
    }
    let sql = array_join_sql(40);
    // On the wire: REPLICATED from 54482, materialised below; columns of one block differ.
    let replicated = [
        "k -",
        "s R",
        "ns R",
        "arr R",
        "lc -",
        "t R(D,D)",
        "tlc R(D,D)",
        "alc R",
        "m R",
        "n8 R",
        "u128 R",
        "i128 R",
        "fs R",
        "u R",
        "aa R",
        "an R",
        "x -",
    ];
    for rev in [54482, 54492] {
        assert_wire_kinds(rev, &sql, &[], &replicated);
    }
    let plain: Vec<String> = replicated.iter().map(|c| format!("{} -", c.split_once(' ').unwrap().0)).collect();
    let plain: Vec<&str> = plain.iter().map(String::as_str).collect();
    assert_wire_kinds(54460, &sql, &[], &plain);
    // Without lazy replication nothing is replicated, even at 54492.
    assert_wire_kinds(54492, &sql, &[("enable_lazy_columns_replication", "0")], &plain);
    // The output format setting does not apply to the native protocol.
    assert_wire_kinds(54492, &sql, &[("allow_special_serialization_kinds_in_output_formats", "0")], &replicated);

    let rows = check_values(&sql, &[]).await;
    assert_eq!(rows, (0..40u64).map(|k| (k % 5) as usize).sum::<usize>());
}

#[tokio::test]
async fn array_join_two_byte_indexes_and_many_blocks() {
    if !common::requires_revision(
        common::server_revision().await,
        chnative_proto::revision::REPLICATED_SERIALIZATION,
        "REPLICATED serialization",
    ) {
        return;
    }
    // 3000 source rows: 2-byte indexes; a small max_block_size splits the output, and each
    // block carries its own compacted elements.
    let sql = "SELECT k, s, t, x FROM (SELECT number AS k, repeat(toString(number), 3) AS s, \
               (number, toString(number)) AS t, range(number % 4) AS arr FROM numbers(3000)) ARRAY JOIN arr AS x";
    let big = wire_blocks(54492, sql, &[]);
    assert_eq!(big.len(), 1);
    assert_eq!(header_kinds(&big[0].0, &big[0].1), ["k -", "s R", "t R(D,D)", "x -"]);
    assert_eq!(index_widths(&big[0].0, &big[0].1), ["s 2", "t 2"]);
    let settings = [("max_block_size", "1000")];
    let small = wire_blocks(54492, sql, &settings);
    assert!(small.len() > 1, "{} blocks", small.len());
    assert!(small.iter().all(|(bytes, b)| header_kinds(bytes, b) == ["k -", "s R", "t R(D,D)", "x -"]));
    assert_eq!(check_values(sql, &[]).await, 4500);
    assert_eq!(check_values(sql, &settings).await, 4500);
}

#[tokio::test]
async fn array_join_four_byte_indexes() {
    if !common::requires_revision(
        common::server_revision().await,
        chnative_proto::revision::REPLICATED_SERIALIZATION,
        "REPLICATED serialization",
    ) {
        return;
    }
    // 70000 source rows in one block (max_block_size raised): 4-byte indexes, 140000 rows.
    // Checked by sums tying each replicated value to the plain `k` of its row.
    let sql = "SELECT k, s, x FROM (SELECT number AS k, toString(number) AS s, [1, 2] AS arr FROM numbers(70000)) \
               ARRAY JOIN arr AS x";
    let settings = [("max_block_size", "200000")];
    let blocks = wire_blocks(54492, sql, &settings);
    assert_eq!(index_widths(&blocks[0].0, &blocks[0].1), ["s 4"]);
    drop(blocks);
    let want = http(&format!(
        "SELECT count(), sum(k * toUInt64(s)), sum(length(s)), sum(x * k) FROM ({sql}) \
         SETTINGS max_block_size = 200000 FORMAT TSV"
    ));
    for (rev, comp) in [(54492, "lz4"), (54482, "none")] {
        let c = client_at(rev, comp).await;
        let mut q = Query::new(sql);
        for (k, v) in settings {
            q = q.setting(k, v);
        }
        let mut s = c.fetch_blocks(q).await.unwrap();
        let mut sums = [0u64; 4];
        while let Some(b) = s.next().await.unwrap() {
            let k = b.column("k").unwrap().view();
            let k = k.values::<u64>().unwrap();
            let sv = b.column("s").unwrap().view();
            let sv = sv.as_strings().unwrap();
            let x = b.column("x").unwrap().view();
            let x = x.values::<u8>().unwrap();
            for i in 0..b.rows() {
                sums[0] += 1;
                sums[1] = sums[1].wrapping_add(k[i].wrapping_mul(sv.str(i).unwrap().parse().unwrap()));
                sums[2] += sv.bytes(i).len() as u64;
                sums[3] += u64::from(x[i]) * k[i];
            }
        }
        let got: Vec<String> = sums.iter().map(u64::to_string).collect();
        assert_eq!(got.join("\t"), want.trim_end(), "at {rev}/{comp}");
    }
}

// ===========================================================================
// Hash joins: the probe side is replicated when its rows match several build rows
// ===========================================================================

const RIGHT: &str = "SELECT number AS k, concat('r', toString(number), if(number % 2 = 0, '\\'q', '')) AS s, \
     [number, number * 2] AS n, if(number % 3 = 0, NULL, toString(number)) AS ns, \
     toLowCardinality(toString(number % 4)) AS lc, (number, toString(number)) AS t, \
     toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(number), 12, '0'))) AS u FROM numbers(12)";

fn join_sql(kind: &str) -> String {
    format!(
        "SELECT l.number AS ln, r.k AS rk, r.s AS rs, r.n AS rn, r.ns AS rns, r.lc AS rlc, r.t AS rt, r.u AS ru \
         FROM numbers(3000) AS l {kind} ({RIGHT}) AS r ON l.number % 10 = r.k"
    )
}

#[tokio::test]
async fn hash_join_replicated_probe_side() {
    if !common::requires_revision(
        common::server_revision().await,
        chnative_proto::revision::REPLICATED_SERIALIZATION,
        "REPLICATED serialization",
    ) {
        return;
    }
    // query_plan_join_swap_table = 1 makes the small table the probe side: each of its rows
    // matches 300 rows of the big one, so its columns go out replicated.
    for alg in ["hash", "parallel_hash", "grace_hash"] {
        for kind in ["INNER JOIN", "LEFT JOIN", "ANY LEFT JOIN"] {
            let sql = join_sql(kind);
            let settings = [("join_algorithm", alg), ("query_plan_join_swap_table", "1")];
            assert!(wire_has_kind(54492, &sql, &settings, 'R'), "{alg} {kind}: no replicated column");
            assert!(!wire_has_kind(54460, &sql, &settings, 'R'), "{alg} {kind}");
            assert_eq!(check_values(&sql, &settings).await, 3000, "{alg} {kind}");
        }
    }
    // Kinds differ per column: LowCardinality and 8-byte values are never replicated lazily.
    let settings = [("join_algorithm", "hash"), ("query_plan_join_swap_table", "1")];
    let kinds = ["ln -", "rk -", "rs R", "rn R", "rns R", "rlc -", "rt R(D,D)", "ru R"];
    assert_wire_kinds(54492, &join_sql("INNER JOIN"), &settings, &kinds);
    // The big table as the probe side: one match per row, nothing to replicate.
    let sql = join_sql("INNER JOIN");
    assert!(!wire_has_kind(54492, &sql, &[("query_plan_join_swap_table", "0")], 'R'));
}

#[tokio::test]
async fn hash_join_checksums_over_100k_rows() {
    if !common::requires_revision(
        common::server_revision().await,
        chnative_proto::revision::REPLICATED_SERIALIZATION,
        "REPLICATED serialization",
    ) {
        return;
    }
    // The join from the brief, with the small side probing: 100000 rows, checked by sums that
    // tie every replicated value to the plain `l.number` of its row.
    let sql = "SELECT l.number AS ln, r.s AS rs, r.n AS rn FROM numbers(100000) AS l JOIN \
               (SELECT number % 10 AS k, toString(number) AS s, [number] AS n FROM numbers(10)) AS r \
               ON l.number % 10 = r.k";
    let settings = [("query_plan_join_swap_table", "1")];
    assert!(wire_has_kind(54492, sql, &settings, 'R'));
    let want = http(&format!(
        "SELECT count(), sum(ln), sum(ln * toUInt64(rs)), sum(length(rs)), sum(ln * arraySum(rn)), sum(length(rn)) \
         FROM ({sql}) SETTINGS query_plan_join_swap_table = 1 FORMAT TSV"
    ));
    for (rev, comp) in [(54492, "lz4"), (54482, "none"), (54460, "lz4")] {
        let c = client_at(rev, comp).await;
        let mut s = c.fetch_blocks(Query::new(sql).setting("query_plan_join_swap_table", "1")).await.unwrap();
        let mut sums = [0u64; 6];
        while let Some(b) = s.next().await.unwrap() {
            let ln = b.column("ln").unwrap().view();
            let ln = ln.values::<u64>().unwrap();
            let rs = b.column("rs").unwrap().view();
            let rs = rs.as_strings().unwrap();
            let rn = b.column("rn").unwrap().view();
            let rn = rn.as_array().unwrap();
            let rn_inner = rn.inner().values::<u64>().unwrap();
            for i in 0..b.rows() {
                let s: u64 = rs.str(i).unwrap().parse().unwrap();
                let arr = &rn_inner[rn.range(i)];
                sums[0] += 1;
                sums[1] = sums[1].wrapping_add(ln[i]);
                sums[2] = sums[2].wrapping_add(ln[i].wrapping_mul(s));
                sums[3] += rs.bytes(i).len() as u64;
                sums[4] = sums[4].wrapping_add(ln[i].wrapping_mul(arr.iter().copied().fold(0u64, u64::wrapping_add)));
                sums[5] += arr.len() as u64;
            }
        }
        let got: Vec<String> = sums.iter().map(u64::to_string).collect();
        assert_eq!(got.join("\t"), want.trim_end(), "at {rev}/{comp}");
    }
}

// ===========================================================================
// MergeTree on both sides: sparse columns replicated by a join (COMBINATION)
// ===========================================================================

#[tokio::test]
async fn sparse_and_replicated_combination_from_merge_tree() {
    if !common::requires_revision(
        common::server_revision().await,
        chnative_proto::revision::REPLICATED_SERIALIZATION,
        "REPLICATED serialization",
    ) {
        return;
    }
    /// Drops the tables even when an assertion fails.
    struct Drop2(String, String);
    impl Drop for Drop2 {
        fn drop(&mut self) {
            http(&format!("DROP TABLE IF EXISTS {}", self.0));
            http(&format!("DROP TABLE IF EXISTS {}", self.1));
        }
    }
    let p = unique_table("kinds_probe");
    let b = unique_table("kinds_build");
    let _cleanup = Drop2(p.clone(), b.clone());
    http(&format!(
        "CREATE TABLE {p} (id UInt64, v UInt64, s String, ns Nullable(String), nu Nullable(UInt32), \
         arr Array(UInt16), t Tuple(a UInt64, b String), lc LowCardinality(String)) ENGINE = MergeTree ORDER BY id \
         SETTINGS ratio_of_defaults_for_sparse_serialization = 0.5, serialization_info_version = 'with_types', \
         nullable_serialization_version = 'allow_sparse', min_bytes_for_wide_part = 0"
    ));
    http(&format!(
        "INSERT INTO {p} SELECT number, if(number % 7 = 0, number * 1000, 0), \
         if(number % 5 = 0, concat('s', toString(number)), ''), if(number % 11 = 0, toString(number), NULL), \
         if(number % 9 = 0, toUInt32(number), NULL), if(number % 8 = 0, [toUInt16(number), 1], []), \
         (if(number % 13 = 0, number, 0), if(number % 17 = 0, 'x\\'', '')), if(number % 3 = 0, 'x', '') \
         FROM numbers(1000)"
    ));
    http(&format!("OPTIMIZE TABLE {p} FINAL"));
    http(&format!("CREATE TABLE {b} (k UInt64, x UInt64, w String) ENGINE = MergeTree ORDER BY k"));
    http(&format!("INSERT INTO {b} SELECT number % 3, number, toString(number) FROM numbers(6)"));

    let sql = format!("SELECT p.*, r.x, r.w FROM {p} AS p INNER JOIN {b} AS r ON p.id % 3 = r.k");
    let settings = [("query_plan_join_swap_table", "0"), ("max_threads", "1")];
    let cols = |v: &str, ns: &str, t: &str, arr: &str| {
        vec![
            "id -".to_string(),
            format!("v {v}"),
            format!("s {v}"),
            format!("ns {ns}"),
            format!("nu {ns}"),
            format!("arr {arr}"),
            format!("t {t}"),
            "lc -".into(),
            "x -".into(),
            "w -".into(),
        ]
    };
    let check = |rev: u64, want: Vec<String>| {
        let blocks = wire_kinds(rev, &sql, &settings);
        assert!(!blocks.is_empty());
        for k in &blocks {
            assert_eq!(k, &want, "at {rev}");
        }
    };
    check(54492, cols("S+R", "S+R", "R(S,S)", "R"));
    check(54483, cols("S+R", "S+R", "R(S,S)", "R"));
    check(54482, cols("S+R", "R", "R(S,S)", "R"));
    check(54465, cols("S", "-", "D(S,S)", "-"));
    check(54460, cols("-", "-", "-", "-"));

    assert_eq!(check_values(&sql, &settings).await, 2000);
    // Reading the probe table alone: sparse only.
    let kinds = wire_kinds(54492, &format!("SELECT * FROM {p}"), &[]);
    assert_eq!(kinds[0], ["id -", "v S", "s S", "ns S", "nu S", "arr -", "t D(S,S)", "lc -"]);
    assert_eq!(check_values(&format!("SELECT * FROM {p}"), &[]).await, 1000);
}
