//! Writes seed inputs for every target from the golden captures, the compression fixtures
//! and the type names the tests use, into `fuzz/corpus-work/<target>/` (minimise them into
//! `fuzz/corpus/<target>/` with `cargo fuzz cmin`; see README.md).
//!
//! `cargo +nightly run --manifest-path fuzz/Cargo.toml --example make_seeds`

use std::path::{Path, PathBuf};

use chnative_fuzz::harness::{self, StreamOptions, COLUMN_TYPES, REVISIONS};
use chnative_proto::compression::{self, Method};
use chnative_proto::packet::{read_server_packet, ServerPacket};
use chnative_proto::wire::{Reader, WriteExt};
use chnative_proto::{Block, BlockLimits, BufferPool, ColumnData, DataType};

fn main() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR"));
    let proto = fuzz.join("../crates/chnative-proto");
    let out = fuzz.join("corpus-work");
    let mut captures: Vec<PathBuf> =
        std::fs::read_dir(proto.join("tests/data/captures")).unwrap().map(|e| e.unwrap().path()).collect();
    captures.sort();

    let mut n = 0;
    let mut save = |target: &str, name: String, bytes: &[u8]| {
        let dir = out.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), bytes).unwrap();
        n += 1;
    };

    for path in &captures {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let bytes = std::fs::read(path).unwrap();
        let lz4 = stem.contains("lz4");
        for (ri, &rev) in REVISIONS.iter().enumerate() {
            // As captured, and (uncompressed captures) re-framed into LZ4/ZSTD frames.
            let flags = ri as u8 | if lz4 { 4 } else { 0 };
            if harness::decode_stream(&bytes, StreamOptions::from_byte(flags)).is_ok() {
                save("server_packets", format!("{stem}_r{rev}"), &[&[flags][..], &bytes].concat());
                save("server_packets", format!("{stem}_r{rev}_pieces"), &[&[flags | 16][..], &bytes].concat());
                if !lz4 {
                    for (m, method) in [("lz4", Method::Lz4), ("zstd", Method::Zstd { level: 1 })] {
                        if let Some(framed) = reframe(&bytes, rev, method) {
                            save("server_packets", format!("{stem}_r{rev}_{m}"), &[&[flags | 4][..], &framed].concat());
                        }
                    }
                    columns(&bytes, rev, ri as u8, &stem, &mut save);
                }
            }
        }
    }

    for path in std::fs::read_dir(proto.join("tests/data/compression")).unwrap() {
        let path = path.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let bytes = std::fs::read(&path).unwrap();
        // The first frame alone, as is (mode 0) and as the assembled form (mode 2).
        let prefix: &[u8; compression::FRAME_PREFIX_LEN] = bytes.first_chunk().unwrap();
        let h = compression::FrameHeader::parse(prefix, compression::MAX_FRAME_SIZE).unwrap();
        let frame = &bytes[..h.frame_len().min(bytes.len())];
        save("compression_frames", format!("{stem}_frame"), &[&[0u8][..], frame].concat());
        let mut assembled = vec![2u8, h.method];
        assembled.extend_from_slice(&h.uncompressed_size.to_le_bytes());
        assembled.extend_from_slice(&frame[compression::FRAME_PREFIX_LEN..]);
        save("compression_frames", format!("{stem}_assembled"), &assembled);
    }
    for (i, data) in [&b""[..], b"a", b"hello hello hello hello", &[0u8; 300][..]].iter().enumerate() {
        for m in 0..3u8 {
            save("compression_frames", format!("roundtrip_{i}_{m}"), &[&[3 | m << 2][..], data].concat());
            let mut f = Vec::new();
            let method = [Method::None, Method::Lz4, Method::Zstd { level: 1 }][usize::from(m)];
            compression::compress_frame(method, data, &mut f).unwrap();
            save("compression_frames", format!("made_{i}_{m}"), &[&[0u8][..], &f].concat());
        }
    }

    let mut names: Vec<String> = COLUMN_TYPES.iter().map(|s| s.to_string()).collect();
    names.extend(
        [
            "Enum8('a' = -128, 'b' = 0, 'it''s' = 5, 'back\\\\slash' = 6, 'ж' = 1, 'z' = 127)",
            "DateTime64(6, 'Asia/Kolkata')",
            "Dynamic(max_types = 5)",
            "JSON(max_dynamic_paths = 2, a.b.c Nullable(UInt8), a.b JSON(x UInt8))",
            "JSON(a UInt32, SKIP b)",
            "JSON(SKIP REGEXP 'x')",
            "AggregateFunction(uniq, UInt64)",
            "Tuple(`a` UInt8, `b c` String)",
            "Tuple(a UInt8, `b c` Array(String), Map(String, UInt64))",
            "Decimal32(3)",
            "Decimal128(20)",
            "Object('json')",
            "Array(Foo)",
            "Nullable()",
        ]
        .map(String::from),
    );
    for (i, name) in names.iter().enumerate() {
        save("type_names", format!("name_{i}"), name.as_bytes());
    }
    for (i, b) in [
        &[0x1e, 0x01][..],
        &[0x1f, 0x02, 0x01, 0x15],
        &[0x20, 0x01, 0x01, b'a', 0x09],
        &[0x27, 0x15, 0x0e],
        &[0x26, 0x23, 0x15],
        &[0x2a, 0x02, 0x15, 0x02],
        &[0x14, 0x03, 0x03, b'U', b'T', b'C'],
        &[0x1a, 0x12, 0x04],
        &[0x17, 0x02, 0x01, b'a', 0x01, 0x01, b'b', 0xff],
        &[0x2b, 0x05],
        &[0x2c, 0x05, b'P', b'o', b'i', b'n', b't'],
        &[0x30, 0x00, 0x80, 0x08, 0x10, 0x01, 0x01, b'a', 0x03, 0x00, 0x00],
    ]
    .iter()
    .enumerate()
    {
        save("type_names", format!("binary_{i}"), b);
    }
    eprintln!("wrote {n} seeds under {}", out.display());
}

/// The capture with every block body put into one compressed frame (what the server
/// sends with compression on); `None` when it has packets this cannot re-frame.
fn reframe(bytes: &[u8], rev: u64, method: Method) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut pool = BufferPool::new();
    while pos < bytes.len() {
        let mut r = Reader::new(&bytes[pos..]);
        let p = read_server_packet(&mut r, rev, rev, false).ok()?;
        out.extend_from_slice(&bytes[pos..pos + r.position()]);
        pos += r.position();
        match p {
            ServerPacket::Block { kind, .. } => {
                let mut r = Reader::new(&bytes[pos..]);
                Block::new().read(&mut r, rev, &BlockLimits::default(), &mut pool).ok()?;
                let body = &bytes[pos..pos + r.position()];
                pos += r.position();
                if kind.compressed(rev) {
                    compression::compress_frame(method, body, &mut out).ok()?;
                } else {
                    out.extend_from_slice(body);
                }
            }
            ServerPacket::TableColumns { .. } => return None,
            _ => {}
        }
    }
    Some(out)
}

/// One `column_codecs` seed per column of every block with rows.
fn columns(bytes: &[u8], rev: u64, ri: u8, stem: &str, save: &mut impl FnMut(&str, String, &[u8])) {
    let mut pos = 0;
    let mut pool = BufferPool::new();
    let mut k = 0;
    while pos < bytes.len() {
        let mut r = Reader::new(&bytes[pos..]);
        let Ok(p) = read_server_packet(&mut r, rev, rev, false) else { return };
        pos += r.position();
        let ServerPacket::Block { .. } = p else { continue };
        let mut r = Reader::new(&bytes[pos..]);
        let mut info = chnative_proto::BlockInfo::default();
        info.read(&mut r).unwrap();
        let ncols = r.varuint().unwrap();
        let rows = r.varuint().unwrap();
        for _ in 0..ncols {
            let _name = r.string(1 << 20).unwrap();
            let ty_name = r.string(1 << 20).unwrap().to_string();
            let start = r.position();
            let ty = DataType::parse(&ty_name).unwrap();
            let mut col = ColumnData::for_type(&ty, &mut pool).unwrap();
            let kinds = rev >= chnative_proto::revision::CUSTOM_SERIALIZATION;
            let info = if kinds && r.bool().unwrap() {
                Some(chnative_proto::column::SerInfo::read(&mut r, &col).unwrap())
            } else {
                None
            };
            if rows > 0 {
                col.read_prefix(&mut r).unwrap();
            }
            let layout = chnative_proto::column::Layout::for_revision(rev);
            col.read_data(&mut r, rows as usize, info.as_ref(), layout, &mut pool).unwrap();
            let body = &bytes[pos + start..pos + r.position()];
            let mut seed = vec![ri | if kinds { 4 } else { 0 }];
            match COLUMN_TYPES.iter().position(|t| *t == ty_name) {
                Some(i) => seed.push(i as u8),
                None => {
                    seed.push(0xff);
                    seed.extend_from_slice(ty_name.as_bytes());
                    seed.push(0);
                }
            }
            seed.put_varuint(rows);
            seed.extend_from_slice(body);
            save("column_codecs", format!("{stem}_r{rev}_{k}"), &seed);
            k += 1;
        }
        pos += r.position();
    }
}
