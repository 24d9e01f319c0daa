//! UUID columns in bulk against the real server: server-generated UUIDs
//! (`generateUUIDv4`, `generateUUIDv7`) and `toUUID` literals converted to RFC 4122
//! bytes by every kernel and compared with the server's `toString(u)`; UUIDs built
//! from RFC bytes inserted, checked by the server and read back.

use crate::common;
use common::*;

use chnative::{Query, WireUuid};
use chnative_proto::uuid_simd::{self, Kernel};

/// The canonical text of RFC 4122 bytes.
fn canonical(b: &[u8; 16]) -> String {
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

fn parse(text: &str) -> [u8; 16] {
    let h: String = text.chars().filter(|c| *c != '-').collect();
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap();
    }
    out
}

/// A table dropped when the test ends (also when it fails).
struct Table(String);

impl Drop for Table {
    fn drop(&mut self) {
        let _ = common::http_try(&format!("DROP TABLE IF EXISTS {}", self.0));
    }
}

/// Runs `sql` (columns `u UUID`, `s String` = the server's text) and checks every row
/// with every kernel; returns the rows seen.
async fn check_query(sql: &str) -> usize {
    let c = client().await;
    let mut s = c.fetch_blocks(Query::new(sql).setting("max_block_size", "3001")).await.unwrap();
    let mut rows = 0;
    while let Some(block) = s.next().await.unwrap() {
        if block.rows() == 0 {
            continue;
        }
        let u = block.column("u").unwrap().view();
        let wire: &[WireUuid] = u.values().unwrap();
        let text_col = block.column("s").unwrap();
        let text = text_col.view();
        let text = text.as_strings().unwrap();
        let want: Vec<[u8; 16]> = (0..text.len()).map(|i| parse(text.str(i).unwrap())).collect();
        for k in Kernel::available() {
            let mut out = vec![[0u8; 16]; wire.len()];
            uuid_simd::swap_halves_with(k, bytemuck::cast_slice(wire), bytemuck::cast_slice_mut(&mut out)).unwrap();
            assert_eq!(out, want, "{k:?}");
        }
        let rfc = uuid_simd::column_to_rfc(&u).unwrap();
        for (i, r) in rfc.iter().enumerate() {
            assert_eq!(canonical(r), text.str(i).unwrap());
        }
        // And back: RFC bytes to the wire order the server sent.
        assert_eq!(uuid_simd::from_rfc_vec(&rfc), wire);
        rows += block.rows();
    }
    rows
}

#[tokio::test]
async fn generated_uuids_match_server_text() {
    let n =
        check_query("SELECT u, toString(u) AS s FROM (SELECT generateUUIDv4(number) AS u FROM numbers(20000))").await;
    assert_eq!(n, 20000);
    let n = check_query("SELECT u, toString(u) AS s FROM (SELECT generateUUIDv7(number) AS u FROM numbers(777))").await;
    assert_eq!(n, 777);
}

#[tokio::test]
async fn uuid_literals_match_server_text() {
    let literals = [
        "00000000-0000-0000-0000-000000000000",
        "00000000-0000-0000-0000-000000000001",
        "80000000-0000-0000-0000-000000000000",
        "550e8400-e29b-41d4-a716-446655440000",
        "00112233-4455-6677-8899-aabbccddeeff",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
        "0123abcd-ef01-4567-89ab-cdef01234567",
    ];
    let list: Vec<String> = literals.iter().map(|l| format!("'{l}'")).collect();
    let sql = format!("SELECT toUUID(x) AS u, toString(u) AS s FROM (SELECT arrayJoin([{}]) AS x)", list.join(","));
    assert_eq!(check_query(&sql).await, literals.len());
    // Our bytes are the literal's hex digits in order.
    let c = client().await;
    let mut s = c.fetch_blocks(sql.as_str()).await.unwrap();
    let mut i = 0;
    while let Some(block) = s.next().await.unwrap() {
        for r in uuid_simd::column_to_rfc(&block.column("u").unwrap().view()).unwrap() {
            assert_eq!(r, parse(literals[i]));
            i += 1;
        }
    }
    assert_eq!(i, literals.len());
}

#[tokio::test]
async fn insert_round_trip() {
    for rev in [REVISIONS[0], *REVISIONS.last().unwrap()] {
        let c = client_at(rev, "lz4").await;
        let guard = Table(unique_table("uuid_rt"));
        let table = guard.0.as_str();
        http(&format!("CREATE TABLE {table} (id UInt32, u UUID, s String) ENGINE = MergeTree ORDER BY id"));
        let n = 10_007usize;
        let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ rev;
        let rfc: Vec<[u8; 16]> = (0..n)
            .map(|_| {
                let mut b = [0u8; 16];
                for chunk in b.chunks_mut(8) {
                    x ^= x >> 12;
                    x ^= x << 25;
                    x ^= x >> 27;
                    chunk.copy_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
                }
                b
            })
            .collect();
        let mut wire = vec![WireUuid::default(); n];
        uuid_simd::from_rfc(&rfc, &mut wire).unwrap();
        let ids: Vec<u32> = (0..n as u32).collect();
        let texts: Vec<String> = rfc.iter().map(canonical).collect();
        c.insert(table).column("id", &ids).column("u", &wire).column("s", &texts).send().await.unwrap();

        let got = http(&format!("SELECT count(), countIf(toString(u) != s) FROM {table} FORMAT TSV"));
        assert_eq!(got.trim_end(), format!("{n}\t0"), "revision {rev}");

        let mut s = c.fetch_blocks(format!("SELECT u FROM {table} ORDER BY id")).await.unwrap();
        let mut back: Vec<[u8; 16]> = Vec::new();
        while let Some(block) = s.next().await.unwrap() {
            let u = block.column("u").unwrap().view();
            let w: &[WireUuid] = u.values().unwrap();
            let mut out = vec![[0u8; 16]; w.len()];
            uuid_simd::to_rfc(w, &mut out).unwrap();
            back.extend(out);
        }
        assert_eq!(back, rfc, "revision {rev}");
    }
}
