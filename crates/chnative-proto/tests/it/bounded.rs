//! Hostile lengths and expansions are refused before allocating, and inputs that
//! arrive in pieces are decoded in linear time.
//!
//! The bytes here are crafted: a real server cannot send most of them. Memory is
//! checked with a counting allocator whose counters are per thread, so tests that
//! run in parallel do not disturb each other's counts.

use chnative_proto::column::var_string_rows_stepped;
use chnative_proto::packet::{read_server_packet, Exception, ServerPacket, MAX_EXCEPTION_BYTES};
use chnative_proto::wire::{Reader, WriteExt};
use chnative_proto::{Block, BlockLimits, BufferPool, ProtoError};
use chnative_testkit::alloc;
use chnative_testkit::packets::{block, exception_chain};

/// Bytes this thread allocates while running `f`.
fn allocated_by<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = alloc::bytes();
    let v = f();
    (v, alloc::bytes() - before)
}

const MIB: u64 = 1 << 20;

fn limits(max_bytes: u64) -> BlockLimits {
    BlockLimits { max_bytes, ..BlockLimits::default() }
}

fn decode(bytes: &[u8], revision: u64, limits: &BlockLimits) -> Result<Block, ProtoError> {
    let mut b = Block::new();
    b.read(&mut Reader::new(bytes), revision, limits, &mut BufferPool::new()).map(|_| b)
}

fn assert_budget_refused(res: Result<Block, ProtoError>) {
    match res {
        Err(ProtoError::TooLarge { what: "decoded block bytes", .. }) => {}
        other => panic!("expected the decoded-bytes budget to refuse the block, got {other:?}"),
    }
}

/// Feeds `bytes` as a connection would: whole `piece`-byte frames until the
/// decoder's `Incomplete` bound is covered. Returns the decode attempts.
fn feed_in_pieces<T>(
    bytes: &[u8],
    piece: usize,
    mut decode: impl FnMut(&mut Reader<'_>) -> Result<T, ProtoError>,
) -> (T, usize) {
    let mut have = piece.min(bytes.len());
    let mut attempts = 0;
    loop {
        attempts += 1;
        match decode(&mut Reader::new(&bytes[..have])) {
            Ok(v) => return (v, attempts),
            Err(ProtoError::Incomplete { needed }) => {
                assert!(needed > have && needed <= bytes.len(), "bound {needed} with {have} of {}", bytes.len());
                while have < needed {
                    have = (have + piece).min(bytes.len());
                }
            }
            Err(e) => panic!("{e}"),
        }
    }
}

// ----- expansion bombs ------------------------------------------------------

#[test]
fn replicated_expansion_is_charged_before_it_is_built() {
    // 4096 rows that all point at one 16 KiB string: 20 KB on the wire, 64 MiB decoded.
    let rows = 4096u64;
    let mut data = Vec::new();
    data.put_varuint(rows);
    data.put_u8(1);
    data.extend(std::iter::repeat_n(0u8, rows as usize));
    data.put_varuint(1);
    data.put_u64_le(16 << 10);
    data.extend(std::iter::repeat_n(b'x', 16 << 10));
    // Serialization kind stack 4 = [Default, Replicated].
    let bytes = block(54492, rows, &[("s", "String", &[1, 4], &data)]);
    assert!(bytes.len() < 21 << 10);
    let (res, allocated) = allocated_by(|| decode(&bytes, 54492, &limits(MIB)));
    assert_budget_refused(res);
    assert!(allocated < 2 * MIB, "allocated {allocated} bytes for a refused block");
}

#[test]
fn replicated_expansion_within_the_default_limit_is_refused_at_it() {
    // 1M one-byte indexes to a 4 KiB string: 4 GiB decoded, far over 256 MiB.
    let rows = 1u64 << 20;
    let mut data = Vec::new();
    data.put_varuint(rows);
    data.put_u8(1);
    data.extend(std::iter::repeat_n(0u8, rows as usize));
    data.put_varuint(1);
    data.put_u64_le(4096);
    data.extend(std::iter::repeat_n(b'x', 4096));
    let bytes = block(54492, rows, &[("s", "String", &[1, 4], &data)]);
    let (res, allocated) = allocated_by(|| decode(&bytes, 54492, &BlockLimits::default()));
    assert_budget_refused(res);
    // The index list (8 MiB) and the one distinct row are all that is built.
    assert!(allocated < 32 * MIB, "allocated {allocated} bytes for a refused block");
}

#[test]
fn sparse_defaults_are_charged_before_they_are_built() {
    // Two all-default sparse UInt64 columns of 2^26 rows: a VarUInt each.
    let rows = 1u64 << 26;
    let mut data = Vec::new();
    data.put_varuint(rows | (1 << 62));
    let bytes = block(54492, rows, &[("a", "UInt64", &[1, 1], &data), ("b", "UInt64", &[1, 1], &data)]);
    assert!(bytes.len() < 64);
    let (res, allocated) = allocated_by(|| decode(&bytes, 54492, &limits(MIB)));
    assert_budget_refused(res);
    assert!(allocated < MIB, "allocated {allocated} bytes for a refused block");
}

#[test]
fn compact_variant_granules_are_charged_before_they_are_built() {
    // One COMPACT granule: 2^26 rows, all NULL, in a dozen bytes.
    let rows = 1u64 << 26;
    let mut data = Vec::new();
    data.put_u64_le(1);
    data.put_varuint(rows);
    data.put_u8(1);
    data.put_u8(255);
    for ty in ["Variant(UInt64, String)", "Dynamic"] {
        let data = if ty == "Dynamic" {
            // Dynamic V2 with no declared types: the Variant is (SharedVariant).
            let mut d = Vec::new();
            d.put_u64_le(2);
            d.put_varuint(0);
            d.extend_from_slice(&data);
            d
        } else {
            data.clone()
        };
        let bytes = block(54492, rows, &[("v", ty, &[0], &data)]);
        assert!(bytes.len() < 81, "{ty}");
        let (res, allocated) = allocated_by(|| decode(&bytes, 54492, &limits(MIB)));
        assert_budget_refused(res);
        assert!(allocated < MIB, "{ty}: allocated {allocated} bytes for a refused block");
    }
}

#[test]
fn plain_columns_count_against_the_budget_too() {
    let mut data = Vec::new();
    for _ in 0..(MIB / 8 + 1) {
        data.put_u64_le(7);
    }
    let bytes = block(54492, MIB / 8 + 1, &[("n", "UInt64", &[0], &data)]);
    assert_budget_refused(decode(&bytes, 54492, &limits(MIB)));
    assert!(decode(&bytes, 54492, &limits(2 * MIB)).is_ok());
}

#[test]
fn huge_counts_allocate_nothing() {
    // A LowCardinality dictionary of 2^40 keys, Dynamic and JSON with a million
    // types or paths: refused or waiting for bytes, never allocating for them.
    let mut lc = Vec::new();
    lc.put_u64_le(1);
    lc.put_u64_le(0x600);
    lc.put_u64_le(1 << 40);
    let mut dynamic = Vec::new();
    dynamic.put_u64_le(3);
    dynamic.put_varuint(1 << 20);
    let mut json = Vec::new();
    json.put_u64_le(2);
    json.put_varuint(1 << 20);
    for (ty, data) in [("LowCardinality(String)", &lc), ("Dynamic", &dynamic), ("JSON", &json)] {
        let bytes = block(54492, 1, &[("c", ty, &[0], data)]);
        let (res, allocated) = allocated_by(|| decode(&bytes, 54492, &BlockLimits::default()));
        match res {
            Err(ProtoError::TooLarge { .. }) => {}
            Err(ProtoError::Incomplete { needed }) => assert!(needed > bytes.len() + (1 << 20), "{ty}: {needed}"),
            other => panic!("{ty}: {other:?}"),
        }
        assert!(allocated < MIB, "{ty}: allocated {allocated}");
    }
}

// ----- names ------------------------------------------------------------------

#[test]
fn long_column_names_are_bounded_by_the_block_limit() {
    // The server names a column after its expression: `length('…2 MiB…')`.
    let name = format!("length('{}')", "y".repeat(2 << 20));
    let mut data = Vec::new();
    data.put_u64_le(2 << 20);
    let bytes = block(54492, 1, &[(&name, "UInt64", &[0], &data)]);
    let b = decode(&bytes, 54492, &BlockLimits::default()).expect("a 2 MiB name is legitimate");
    assert_eq!(b.columns()[0].name(), name);
    assert!(matches!(decode(&bytes, 54492, &limits(MIB)), Err(ProtoError::TooLarge { .. })));
}

// ----- linear decoding of inputs that arrive in pieces ------------------------------

fn legacy_strings(rows: usize) -> Vec<u8> {
    let mut data = Vec::new();
    for i in 0..rows {
        data.put_string(format!("row {i:>8}"));
    }
    data
}

#[test]
fn legacy_strings_arriving_in_pieces_are_read_once() {
    let rows = 200_000;
    let bytes = block(54460, rows as u64, &[("s", "String", &[0], &legacy_strings(rows))]);
    let mut block = Block::new();
    let mut pool = BufferPool::new();
    let before = var_string_rows_stepped();
    let (_, attempts) = feed_in_pieces(&bytes, 4096, |r| block.read(r, 54460, &BlockLimits::default(), &mut pool));
    let stepped = var_string_rows_stepped() - before;
    assert!(attempts > 10, "{attempts}");
    // Measured once as the pieces arrive, then decoded once.
    assert!(stepped <= 2 * rows as u64, "{stepped} rows stepped over for {rows} rows in {attempts} attempts");
    let s = block.column("s").unwrap().view();
    assert_eq!(s.as_strings().unwrap().str(rows - 1).unwrap(), format!("row {:>8}", rows - 1));
}

#[test]
fn low_cardinality_dictionaries_arriving_in_pieces_are_read_once() {
    // At 54492 dictionaries keep VarUInt lengths: a 200k-entry dictionary.
    let rows = 200_000usize;
    let mut data = Vec::new();
    data.put_u64_le(1);
    data.put_u64_le(0x600 | 2);
    data.put_u64_le(rows as u64);
    data.extend_from_slice(&legacy_strings(rows));
    data.put_u64_le(rows as u64);
    for i in 0..rows as u32 {
        data.put_u32_le(i);
    }
    let bytes = block(54492, rows as u64, &[("lc", "LowCardinality(String)", &[0], &data)]);
    let mut block = Block::new();
    let mut pool = BufferPool::new();
    let before = var_string_rows_stepped();
    let (_, attempts) = feed_in_pieces(&bytes, 4096, |r| block.read(r, 54492, &BlockLimits::default(), &mut pool));
    let stepped = var_string_rows_stepped() - before;
    assert!(attempts > 10, "{attempts}");
    assert!(stepped <= 2 * rows as u64, "{stepped} rows stepped over for {rows} rows in {attempts} attempts");
    assert_eq!(block.rows(), rows);
}

#[test]
fn an_exception_arriving_in_pieces_is_copied_once() {
    let bytes = exception_chain(16, 1 << 20);
    let ((packet, attempts), allocated) =
        allocated_by(|| feed_in_pieces(&bytes, 64 << 10, |r| read_server_packet(r, 54492, 54492, false)));
    let ServerPacket::Exception(e) = packet else { panic!("{packet:?}") };
    assert_eq!(e.nested.len(), 15);
    assert_eq!(e.nested[14].message.len(), 1 << 20);
    assert!(attempts > 10, "{attempts}");
    // Each message is copied once, not once per piece.
    assert!(allocated < 2 * bytes.len() as u64, "allocated {allocated} for a {} byte exception", bytes.len());
}

#[test]
fn exception_chains_are_bounded_in_depth_and_size() {
    let deep = exception_chain(65, 1);
    assert!(matches!(Exception::read(&mut Reader::new(&deep[1..])), Err(ProtoError::Violation(_))));
    assert!(Exception::read(&mut Reader::new(&exception_chain(64, 1)[1..])).is_ok());
    // Two 40 MiB messages: refused from their lengths, before their bytes arrive.
    let mut big = Vec::new();
    big.put_i32_le(1);
    big.put_string("DB::Exception");
    big.put_varuint(40 << 20);
    big.extend(std::iter::repeat_n(b'm', 40 << 20));
    big.put_string("");
    big.put_u8(1);
    big.put_i32_le(2);
    big.put_string("DB::Exception");
    big.put_varuint(40 << 20);
    let (res, allocated) = allocated_by(|| Exception::read(&mut Reader::new(&big)));
    assert!(matches!(res, Err(ProtoError::TooLarge { limit, .. }) if limit == MAX_EXCEPTION_BYTES), "{res:?}");
    assert!(allocated < MIB, "{allocated}");
}
