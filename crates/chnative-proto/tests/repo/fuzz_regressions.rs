//! Inputs the fuzzers (`fuzz/`, cargo-fuzz) found, replayed through the same harness code
//! on the stable toolchain, and the checked-in corpora replayed as a smoke test.
//!
//! Each regression is the minimised input as bytes and the error it must end in.

#[path = "../../../../fuzz/src/harness.rs"]
mod harness;

use chnative_proto::ProtoError;

/// Runs every input of `fuzz/corpus/<target>`: none may panic (errors are fine).
fn replay_corpus(target: &str, run: fn(&[u8]) -> chnative_proto::Result<()>) {
    let dir = format!("{}/../../fuzz/corpus/{target}", env!("CARGO_MANIFEST_DIR"));
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{dir}: {e}"));
    let mut n = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let res = std::panic::catch_unwind(|| run(&bytes));
        assert!(res.is_ok(), "{target}: {} panicked", path.display());
        n += 1;
    }
    assert!(n > 0, "{dir} is empty");
}

#[test]
fn corpus_server_packets() {
    replay_corpus("server_packets", harness::server_packets);
}

#[test]
fn corpus_column_codecs() {
    replay_corpus("column_codecs", harness::column_codecs);
}

#[test]
fn corpus_compression_frames() {
    replay_corpus("compression_frames", harness::compression_frames);
}

#[test]
fn corpus_type_names() {
    replay_corpus("type_names", harness::type_names);
}

/// A minimised finding from `tests/data/fuzz/`.
fn finding(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/fuzz/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The input's error. The input is all there is, so running out of it is a fine answer too:
/// the client would wait for more bytes, bounded by `max_block_bytes`.
fn error_of(res: chnative_proto::Result<()>) -> ProtoError {
    match res {
        Ok(()) => panic!("decoded without an error"),
        Err(e) => e,
    }
}

/// Bounded means: the decoder says what is wrong, it does not abort on allocation.
fn assert_refused(res: chnative_proto::Result<()>) {
    let e = error_of(res);
    assert!(
        matches!(e, ProtoError::Violation(_) | ProtoError::TooLarge { .. } | ProtoError::Incomplete { .. }),
        "unexpected error: {e:?}"
    );
}

/// A JSON column whose dynamic path holds an `Array(Dynamic)` with a last offset of ~2^50:
/// the inner Dynamic sizes its per-row type and index buffers (12 bytes a row) from that
/// count before reading a byte, and the process aborts on a 5.6 PB allocation
/// (`DynamicData::read_body`, `resize_zeroed(rows * 4)`). server_packets, found in 45 s.
#[test]
fn array_of_dynamic_with_a_huge_offset() {
    assert_refused(harness::server_packets(&finding("server_packets_array_dynamic_rows_alloc.bin")));
}

/// A 200-row String column at 54492 with the kind stack [Default, Sparse, Replicated]
/// (custom stack byte 5): the replicated layer's element count (a VarUInt bounded only by
/// 2^32) becomes the row count of the sparse layer under it, which materialises one index
/// per default row. 479 bytes ran past the 10 s timeout on their way to exhausting memory
/// (`ColumnData::read_kinds`, the sparse gap loop). column_codecs, found in 150 s.
/// JSON whose dynamic path is an `Array(JSON(...))`: the array's last offset (about 4e9) becomes
/// the row count of the inner Dynamic, whose per-row tables would take 48 GiB. Charged to the
/// block's budget before allocating. column_codecs, found in a 10-minute run after the merge
/// (the harness had decoded without the budget Block::read always sets).
#[test]
fn json_with_an_array_of_json_path_and_a_huge_offset() {
    assert_refused(harness::column_codecs(&finding("column_codecs_json_array_json_rows_alloc.bin")));
}

/// A timeout (> 10 s under ASan) the 60 s CI smoke run of server_packets found: a Data block
/// whose column is replicated over sparse (kind stack `05 03 00 01 03`), delivered in pieces.
/// Sparse and replicated layers were not measured, so each piece re-ran the decode, which
/// expanded the sparse gaps (up to the 64 MiB budget) before running out of input again.
/// Now measured first and expanded once (1.3 s → see the closing note; not asserted here).
#[test]
fn server_packets_timeout_from_the_ci_smoke_run() {
    let _ = harness::server_packets(&finding("server_packets_timeout_ci_smoke.bin"));
}

/// A slow unit from the same run: must finish (the test's time is not asserted).
#[test]
fn column_codecs_slow_unit_finishes() {
    let _ = harness::column_codecs(&finding("column_codecs_slow_unit.bin"));
}

#[test]
fn replicated_over_sparse_expansion() {
    assert_refused(harness::column_codecs(&finding("column_codecs_replicated_sparse_expansion.bin")));
}

/// The binary type encoding of a Variant with no alternatives decoded to `Variant()`, a
/// type whose name the text parser refuses (it wants 1 to 255). A Dynamic column's type
/// list is read with this decoder, so such a type reached the column codecs. type_names,
/// 118 of its 194 findings.
#[test]
fn binary_variant_without_alternatives_is_refused() {
    use chnative_proto::{wire::Reader, DataType};
    let e = DataType::decode_binary(&mut Reader::new(&[0x2a, 0x00])).unwrap_err();
    assert!(matches!(e, ProtoError::Violation(_)), "{e:?}");
    // Nested too: LowCardinality(Variant()) and a named Tuple holding one.
    for bytes in [&[0x26, 0x2a, 0x00][..], &[0x20, 0x01, 0x01, b'a', 0x2a, 0x00]] {
        assert!(DataType::decode_binary(&mut Reader::new(bytes)).is_err());
        assert!(harness::type_names(bytes).is_err());
    }
    // 255 alternatives are fine, 256 are not.
    let mut ok = vec![0x2a, 0xff, 0x01];
    ok.extend(std::iter::repeat_n(0x15, 255));
    assert!(DataType::decode_binary(&mut Reader::new(&ok)).is_ok());
    let mut too_many = vec![0x2a, 0x80, 0x02];
    too_many.extend(std::iter::repeat_n(0x15, 256));
    assert!(DataType::decode_binary(&mut Reader::new(&too_many)).is_err());
}

/// An unknown type nested in a name kept its arguments' quotes off when it was rendered
/// (`JSN(max_dynamic_paths=2, a.b JS9)` from `` `a.b` JS9 ``), so the type printed a name
/// that does not parse. type_names.
#[test]
fn nested_unknown_type_keeps_its_quoting() {
    use chnative_proto::DataType;
    let name = "JSON(max_dynamic_paths=2, `a.b` JSN(max_dynamic_paths=2, `a.b` JS9))";
    harness::type_names(name.as_bytes()).unwrap();
    let t = DataType::parse("Tuple(a Foo(`x y` UInt8, 'it''s', 'q' = 1))").unwrap();
    assert_eq!(DataType::parse(&t.to_string()).unwrap(), t, "{t}");
    assert_eq!(t.to_string(), r"Tuple(`a` Foo(`x y` UInt8, 'it\'s', 'q' = 1))");
}

/// `JSON(SKIP\n2, …)` parsed as a typed path named `SKIP` (only a space or tab ended the
/// keyword), and a typed path named `SKIP` printed bare, so it read back as a SKIP clause:
/// the type changed on a print-and-parse round trip. type_names, after the fixes above.
#[test]
fn json_skip_keyword_and_a_path_named_skip() {
    use chnative_proto::DataType;
    let t = DataType::parse("JSON(SKIP\na.b, x UInt8)").unwrap();
    assert_eq!(t, DataType::parse("JSON(SKIP a.b, x UInt8)").unwrap());
    let t = DataType::parse("JSON(`SKIP` UInt8, `skip` String)").unwrap();
    assert_eq!(DataType::parse(&t.to_string()).unwrap(), t, "{t}");
    harness::type_names(b"JSON(mvay_nimydKKKKKKKKKKKKKKKKKca_pata UInt16,SKIP\n2, a UIble(String))").unwrap();
}

/// An unknown type kept its surrounding blanks (`"\t\td\t\t"`), which it loses when the
/// same text is nested in another name: a Tuple holding one (from the binary encoding's
/// by-name type, 0x2C) printed to a name that parsed to a different type. type_names.
#[test]
fn unknown_type_names_are_kept_without_surrounding_blanks() {
    use chnative_proto::{wire::Reader, DataType};
    assert_eq!(DataType::parse(" \tFoo(1)\r\n").unwrap(), DataType::Unsupported("Foo(1)".into()));
    let bytes = [0x1f, 0x02, 0x0e, 0x2c, 0x06, b'\t', b'\t', b'd', b'\t', b'\t', b'\r'];
    let t = DataType::decode_binary(&mut Reader::new(&bytes)).unwrap();
    assert_eq!(DataType::parse(&t.to_string()).unwrap(), t, "{t}");
    // The bytes are not a type name as text, so the harness ends in that error; what it
    // checks is the binary type's round trip, which panicked.
    assert!(harness::type_names(&bytes).is_err());
}

/// `JSON(SKIP yax_uͶnt)`: the check for `SKIP REGEXP` sliced the text at byte 6, inside the
/// two-byte `Ͷ`, and panicked. A server's column header could crash the client with it.
/// type_names.
#[test]
fn json_skip_followed_by_multibyte_text_does_not_panic() {
    use chnative_proto::DataType;
    for name in ["JSON(SKIP yax_uͶnt66)", "JSON(SKIP\nyax_uͶnt66)", "JSON(SKIP REGEXͶ 'x')", "JSON(SKIP ͶͶͶͶ)"] {
        let _ = DataType::parse(name);
    }
    assert_eq!(
        DataType::parse("JSON(SKIP abcdeͶ)").unwrap(),
        DataType::parse("JSON(SKIP `abcdeͶ`)").unwrap(),
        "a non-ASCII path is a path"
    );
}

/// `0SON` parsed as an unknown type at the top level (and from the binary encoding's
/// by-name type), but nested it reads as a number, so `Variant(…, 0SON)` did not parse
/// back. A type name starts with a letter. type_names.
#[test]
fn type_names_do_not_start_with_a_digit() {
    use chnative_proto::{wire::Reader, DataType};
    for name in ["0SON", "2", " 1SOJSO", "Tuple(a 2)", "JSON(a 0SON)"] {
        assert!(DataType::parse(name).is_err(), "{name}");
    }
    let bytes = [0x2a, 0x02, 0x0d, 0x2c, 0x04, b'0', b'S', b'O', b'N'];
    assert!(DataType::decode_binary(&mut Reader::new(&bytes)).is_err());
    assert!(harness::type_names(&bytes).is_err());
    assert!(DataType::parse("Foo1(2)").is_ok());
}

/// The server_packets target drives the real machine: captured answers of a real server
/// decode to their end through it, whole, in the smallest pieces, straight into column
/// buffers, and (the chunked capture) through the dechunker.
#[test]
fn server_packets_drives_the_machine_through_captures() {
    let dir = format!("{}/tests/data/captures", env!("CARGO_MANIFEST_DIR"));
    let read = |name: &str| std::fs::read(format!("{dir}/{name}")).unwrap();
    for name in ["combination_54492.bin", "dynamic_v2_54492.bin", "json_flat_54492.bin"] {
        let bytes = read(name);
        for flags in [3u8, 3 | 16, 3 | 64, 3 | 16 | 64] {
            let res = harness::server_packets(&[&[flags][..], &bytes].concat());
            assert_eq!(res, Ok(()), "{name} with flags {flags:#x}");
        }
        // Cut short: the machine waits for more.
        let cut = &bytes[..bytes.len() - 1];
        let res = harness::server_packets(&[&[3u8][..], cut].concat());
        assert!(matches!(res, Err(ProtoError::Incomplete { .. })), "{name} cut short: {res:?}");
    }
    let chunked = read("chunked_numbers5_lz4_54492.bin");
    for flags in [3u8 | 4 | 32, 3 | 4 | 32 | 16] {
        let res = harness::server_packets(&[&[flags][..], &chunked].concat());
        assert_eq!(res, Ok(()), "chunked capture with flags {flags:#x}");
    }
}
