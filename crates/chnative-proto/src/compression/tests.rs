use super::*;

const METHODS: [Method; 4] = [Method::None, Method::Lz4, Method::Zstd { level: 1 }, Method::Zstd { level: 0 }];

/// Deterministic xorshift bytes.
fn noise(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

/// Semi-compressible data: repeated phrases with noise mixed in.
fn sample(n: usize) -> Vec<u8> {
    let words: &[&[u8]] = &[b"SELECT ", b"number ", b"FROM ", b"system.numbers ", b"\x00\x01\x02\x03"];
    let rnd = noise(7, n / 8 + 1);
    let mut v = Vec::with_capacity(n + 16);
    let mut i = 0;
    while v.len() < n {
        let r = rnd[i % rnd.len()];
        if r < 40 {
            v.push(r);
        } else {
            v.extend_from_slice(words[usize::from(r) % words.len()]);
        }
        i += 1;
    }
    v.truncate(n);
    v
}

fn prefix_of(frame: &[u8]) -> [u8; FRAME_PREFIX_LEN] {
    *frame.first_chunk().unwrap()
}

/// Splits a buffer of frames and decodes them all.
fn decode_all(mut buf: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        let prefix = buf.first_chunk::<FRAME_PREFIX_LEN>().ok_or(ProtoError::Incomplete { needed: 25 })?;
        let h = FrameHeader::parse(prefix, MAX_FRAME_SIZE)?;
        let len = h.frame_len();
        if buf.len() < len {
            return Err(ProtoError::Incomplete { needed: len });
        }
        decompress_frame(&h, &buf[..len], &mut out)?;
        buf = &buf[len..];
    }
    Ok(out)
}

#[test]
fn method_bytes() {
    assert_eq!(Method::None.byte(), 0x02);
    assert_eq!(Method::Lz4.byte(), 0x82);
    assert_eq!(Method::Zstd { level: 3 }.byte(), 0x90);
    assert_eq!(FRAME_PREFIX_LEN, 25);
}

#[test]
fn round_trip_single_frames() {
    for method in METHODS {
        for data in [Vec::new(), b"x".to_vec(), b"Hello, ClickHouse!\n".repeat(7), sample(10_000), noise(3, 5000)] {
            let mut out = b"keep".to_vec();
            compress_frame(method, &data, &mut out).unwrap();
            assert_eq!(&out[..4], b"keep");
            let frame = &out[4..];
            let h = FrameHeader::parse(&prefix_of(frame), MAX_FRAME_SIZE).unwrap();
            assert_eq!(h.method, method.byte());
            assert_eq!(h.uncompressed_size as usize, data.len());
            assert_eq!(h.frame_len(), frame.len());
            if method == Method::None {
                assert_eq!(h.compressed_size as usize, HEADER_LEN + data.len());
            }
            let mut back = b"pre".to_vec();
            decompress_frame(&h, frame, &mut back).unwrap();
            assert_eq!(&back[..3], b"pre");
            assert_eq!(&back[3..], &data[..], "{method:?} len {}", data.len());
        }
    }
}

/// A reused compressor must write exactly the frames a fresh one writes,
/// whatever came before (the LZ4 state is only partly cleared between
/// frames), and every frame must decode back.
#[test]
fn reused_compressor_writes_the_frames_of_a_fresh_one() {
    let inputs: Vec<Vec<u8>> = vec![
        sample(200_000),
        Vec::new(),
        b"x".to_vec(),
        noise(9, 70_000),
        sample(100),
        b"Hello!\n".repeat(25),
        sample(1 << 20),
        vec![0u8; 300_000],
        sample(64),
    ];
    let mut kept = Compressor::new();
    for round in 0..2 {
        for (i, data) in inputs.iter().enumerate() {
            for method in METHODS {
                let mut reused = Vec::new();
                kept.compress_frame(method, data, &mut reused).unwrap();
                let mut fresh = Vec::new();
                Compressor::new().compress_frame(method, data, &mut fresh).unwrap();
                assert_eq!(reused, fresh, "round {round}, input {i}, {method:?}");
                let h = FrameHeader::parse(&prefix_of(&reused), MAX_FRAME_SIZE).unwrap();
                let mut back = Vec::new();
                decompress_frame(&h, &reused, &mut back).unwrap();
                assert_eq!(&back, data, "round {round}, input {i}, {method:?}");
            }
        }
    }
    // The free functions (this thread's compressor) agree as well.
    let mut via_free = Vec::new();
    compress_frames(Method::Lz4, &inputs[0], 1 << 16, &mut via_free).unwrap();
    let mut via_kept = Vec::new();
    kept.compress_frames(Method::Lz4, &inputs[0], 1 << 16, &mut via_kept).unwrap();
    assert_eq!(via_free, via_kept);
}

/// LZ4 decodes into the output's spare capacity without clearing it
/// first: stale bytes there must never show through, whether the frame
/// decodes or fails, and the bytes before the output's end stay as they were.
#[test]
fn lz4_decode_into_dirty_spare_capacity() {
    let data = sample(50_000);
    let mut frame = Vec::new();
    compress_frame(Method::Lz4, &data, &mut frame).unwrap();
    let h = FrameHeader::parse(&prefix_of(&frame), MAX_FRAME_SIZE).unwrap();
    for fill in [0x00u8, 0xaa, 0xff] {
        let mut out = vec![fill; 200_000];
        out.truncate(5);
        decompress_frame(&h, &frame, &mut out).unwrap();
        assert_eq!(&out[..5], &[fill; 5]);
        assert_eq!(&out[5..], &data[..]);
    }
    // A body that decodes to fewer bytes than the header claims, with
    // the claim bounded by the decoder's capacity: an error, `out` unchanged.
    let mut body = Vec::new();
    compress_frame(Method::Lz4, &data[..1000], &mut body).unwrap();
    let mut short = body.clone();
    reseal(&mut short, 1500);
    let hs = FrameHeader::parse(&prefix_of(&short), MAX_FRAME_SIZE).unwrap();
    let mut out = vec![0xaa; 4000];
    out.truncate(7);
    assert!(matches!(decompress_frame(&hs, &short, &mut out), Err(ProtoError::Compression(_))));
    assert_eq!(out, [0xaa; 7]);
    // A claim smaller than the data: the decoder stops at the capacity and fails.
    let mut long = body;
    reseal(&mut long, 999);
    let hl = FrameHeader::parse(&prefix_of(&long), MAX_FRAME_SIZE).unwrap();
    let mut out = Vec::new();
    assert!(matches!(decompress_frame(&hl, &long, &mut out), Err(ProtoError::Compression(_))));
    assert!(out.is_empty());
}

#[test]
fn round_trip_3_mib_split() {
    let data = sample(3 << 20);
    for method in METHODS {
        let mut out = Vec::new();
        compress_frames(method, &data, 1 << 20, &mut out).unwrap();
        // Three full 1 MiB frames.
        let mut frames = 0;
        let mut rest = &out[..];
        while !rest.is_empty() {
            let h = FrameHeader::parse(&prefix_of(rest), MAX_FRAME_SIZE).unwrap();
            assert_eq!(h.uncompressed_size, 1 << 20);
            rest = &rest[h.frame_len()..];
            frames += 1;
        }
        assert_eq!(frames, 3, "{method:?}");
        if method != Method::None {
            assert!(out.len() < data.len(), "{method:?} did not compress");
        }
        assert_eq!(decode_all(&out).unwrap(), data, "{method:?}");
    }
}

#[test]
fn compress_frames_uneven_and_empty() {
    let data = sample(2500);
    for method in METHODS {
        let mut out = Vec::new();
        compress_frames(method, &data, 1000, &mut out).unwrap();
        assert_eq!(decode_all(&out).unwrap(), data);
        let mut empty = Vec::new();
        compress_frames(method, &[], 1000, &mut empty).unwrap();
        assert!(empty.is_empty());
        assert!(decode_all(&empty).unwrap().is_empty());
    }
    assert!(matches!(compress_frames(Method::Lz4, &data, 0, &mut Vec::new()), Err(ProtoError::Compression(_))));
}

#[test]
fn corrupted_byte_is_checksum_error() {
    let data = sample(4000);
    for method in METHODS {
        let mut frame = Vec::new();
        compress_frame(method, &data, &mut frame).unwrap();
        let stored = FrameHeader::parse(&prefix_of(&frame), MAX_FRAME_SIZE).unwrap().checksum;
        // Every byte of the body, and the checksum itself.
        for i in (FRAME_PREFIX_LEN..frame.len()).chain(0..CHECKSUM_LEN) {
            let mut bad = frame.clone();
            bad[i] ^= 0x40;
            let h = FrameHeader::parse(&prefix_of(&bad), MAX_FRAME_SIZE).unwrap();
            let mut out = vec![9];
            match decompress_frame(&h, &bad, &mut out) {
                Err(ProtoError::Checksum { expected, computed }) => {
                    assert_ne!(expected, computed);
                    if i >= CHECKSUM_LEN {
                        assert_eq!(expected, stored);
                    }
                }
                other => panic!("{method:?} byte {i}: {other:?}"),
            }
            assert_eq!(out, [9]);
        }
    }
}

/// Rewrites the sizes of a frame and re-seals its checksum, so only the
/// codec-level checks can catch the lie.
fn reseal(frame: &mut [u8], uncompressed: u32) {
    frame[21..25].copy_from_slice(&uncompressed.to_le_bytes());
    let c = city_hash128(&frame[16..]);
    frame[..16].copy_from_slice(&c.to_le_bytes());
}

#[test]
fn lying_uncompressed_size_is_error() {
    let data = sample(3000);
    for method in METHODS {
        for delta in [-1i64, 1, -3000, 100_000, 700_000] {
            let mut frame = Vec::new();
            compress_frame(method, &data, &mut frame).unwrap();
            let lie = (data.len() as i64 + delta) as u32;
            reseal(&mut frame, lie);
            let h = FrameHeader::parse(&prefix_of(&frame), MAX_FRAME_SIZE).unwrap();
            let mut out = b"ab".to_vec();
            let r = decompress_frame(&h, &frame, &mut out);
            assert!(matches!(r, Err(ProtoError::Compression(_))), "{method:?} {delta}: {r:?}");
            assert_eq!(out, b"ab");
        }
    }
}

#[test]
fn truncated_or_padded_frame_is_error() {
    let data = sample(3000);
    for method in METHODS {
        let mut frame = Vec::new();
        compress_frame(method, &data, &mut frame).unwrap();
        let h = FrameHeader::parse(&prefix_of(&frame), MAX_FRAME_SIZE).unwrap();
        for cut in [frame.len() - 1, FRAME_PREFIX_LEN, 3, 0] {
            let r = decompress_frame(&h, &frame[..cut], &mut Vec::new());
            assert_eq!(r, Err(ProtoError::Incomplete { needed: frame.len() }));
        }
        let mut longer = frame.clone();
        longer.push(0);
        assert!(matches!(decompress_frame(&h, &longer, &mut Vec::new()), Err(ProtoError::Violation(_))));
        // A header that is not this frame's.
        let mut other = h;
        other.uncompressed_size += 1;
        assert!(matches!(decompress_frame(&other, &frame, &mut Vec::new()), Err(ProtoError::Violation(_))));
        // Body shortened but header sizes kept consistent: codec must fail.
        let mut short = frame[..frame.len() - 5].to_vec();
        let cs = (short.len() - CHECKSUM_LEN) as u32;
        short[17..21].copy_from_slice(&cs.to_le_bytes());
        reseal(&mut short, data.len() as u32);
        let hs = FrameHeader::parse(&prefix_of(&short), MAX_FRAME_SIZE).unwrap();
        let mut out = Vec::new();
        assert!(decompress_frame(&hs, &short, &mut out).is_err(), "{method:?}");
        assert!(out.is_empty());
    }
}

#[test]
fn bad_method_byte() {
    for byte in [0x00u8, 0x01, 0x03, 0x81, 0x91, 0x92, 0x96, 0x9a, 0xff] {
        let mut p = [0u8; FRAME_PREFIX_LEN];
        p[16] = byte;
        p[17..21].copy_from_slice(&9u32.to_le_bytes());
        match FrameHeader::parse(&p, MAX_FRAME_SIZE) {
            Err(ProtoError::Compression(msg)) => assert!(msg.contains(&format!("0x{byte:02x}")), "{msg}"),
            other => panic!("{byte:#x}: {other:?}"),
        }
        // decompress_frame refuses it as well, even with a valid checksum.
        let mut frame = p.to_vec();
        reseal(&mut frame, 0);
        let h = FrameHeader::read(&prefix_of(&frame));
        assert!(matches!(decompress_frame(&h, &frame, &mut Vec::new()), Err(ProtoError::Compression(_))));
    }
}

#[test]
fn size_bounds() {
    let prefix = |method: u8, compressed: u32, uncompressed: u32| {
        let mut p = [0u8; FRAME_PREFIX_LEN];
        p[16] = method;
        p[17..21].copy_from_slice(&compressed.to_le_bytes());
        p[21..25].copy_from_slice(&uncompressed.to_le_bytes());
        p
    };
    for small in [0, 1, 8] {
        assert!(matches!(FrameHeader::parse(&prefix(0x82, small, 0), MAX_FRAME_SIZE), Err(ProtoError::Violation(_))));
    }
    let h = FrameHeader::parse(&prefix(0x82, 9, 0), MAX_FRAME_SIZE).unwrap();
    assert_eq!(h.frame_len(), 25);
    let h = FrameHeader::parse(&prefix(0x90, MAX_FRAME_SIZE, MAX_FRAME_SIZE), MAX_FRAME_SIZE).unwrap();
    assert_eq!(h.frame_len(), 16 + (1 << 30));
    assert_eq!(
        FrameHeader::parse(&prefix(0x82, MAX_FRAME_SIZE + 1, 10), MAX_FRAME_SIZE),
        Err(ProtoError::TooLarge { what: "compressed frame size", got: (1 << 30) + 1, limit: 1 << 30 })
    );
    assert_eq!(
        FrameHeader::parse(&prefix(0x82, 100, u32::MAX), MAX_FRAME_SIZE),
        Err(ProtoError::TooLarge { what: "uncompressed frame size", got: u32::MAX.into(), limit: 1 << 30 })
    );
    // A caller-chosen smaller bound applies to both sizes.
    assert!(matches!(FrameHeader::parse(&prefix(0x02, 1001, 10), 1000), Err(ProtoError::TooLarge { .. })));
    assert!(matches!(FrameHeader::parse(&prefix(0x02, 100, 1001), 1000), Err(ProtoError::TooLarge { .. })));
    assert!(FrameHeader::parse(&prefix(0x02, 1000, 1000), 1000).is_ok());
    // Hand-made header below the minimum: error, not a slice panic.
    let bogus = FrameHeader { checksum: 0, method: 0x02, compressed_size: 3, uncompressed_size: 0 };
    assert!(matches!(decompress_frame(&bogus, &[0; 19], &mut Vec::new()), Err(ProtoError::Violation(_))));
}

/// Random bodies behind well-formed, correctly checksummed headers: every
/// outcome must be an `Ok` of exactly the announced size or an error with
/// `out` untouched, never a panic.
#[test]
fn fuzz_random_bodies_never_panic() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut ok = 0;
    for round in 0..6000u32 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let method = [BYTE_NONE, BYTE_LZ4, BYTE_ZSTD][(round % 3) as usize];
        let body_len = (seed >> 40) as usize % 300;
        let mut body = noise(seed, body_len);
        if method == BYTE_ZSTD && body_len >= 4 && round % 2 == 0 {
            // Give the zstd decoder a real magic number to chew on.
            body[..4].copy_from_slice(&[0x28, 0xb5, 0x2f, 0xfd]);
        }
        let uncompressed = match round % 4 {
            0 => body_len as u32,
            1 => (seed >> 8) as u32 % 2000,
            2 => (seed >> 16) as u32 % 100_000,
            _ => 0,
        };
        let mut frame = vec![0u8; FRAME_PREFIX_LEN];
        frame[16] = method;
        frame[17..21].copy_from_slice(&((HEADER_LEN + body_len) as u32).to_le_bytes());
        frame.extend_from_slice(&body);
        reseal(&mut frame, uncompressed);
        let h = FrameHeader::parse(&prefix_of(&frame), MAX_FRAME_SIZE).unwrap();
        let mut out = vec![1, 2, 3];
        match decompress_frame(&h, &frame, &mut out) {
            Ok(()) => {
                assert_eq!(out.len(), 3 + uncompressed as usize);
                ok += 1;
            }
            Err(_) => assert_eq!(out, [1, 2, 3]),
        }
    }
    assert!(ok > 0);
}

/// Golden frames of ch-go (ClickHouse/ch-go `compress/_golden/`, written by
/// its `TestCompress` for `strings.Repeat("Hello!\n", 25)`; ch-go's
/// checksums are CityHash v1.0.2 via go-faster/city and interoperate with
/// the server).
#[test]
fn golden_ch_go_frames() {
    let data = b"Hello!\n".repeat(25);
    let mut none = vec![
        0xfc, 0xed, 0x07, 0xb8, 0xc5, 0x59, 0xe9, 0x8c, 0x16, 0x61, 0x17, 0x0f, 0x6c, 0x52, 0x72, 0xdf, //
        0x02, 0xb8, 0x00, 0x00, 0x00, 0xaf, 0x00, 0x00, 0x00,
    ];
    none.extend_from_slice(&data);
    let lz4: &[u8] = &[
        0xc5, 0xbc, 0xbc, 0x07, 0xc1, 0x1e, 0xc4, 0x71, 0xfd, 0x74, 0xaf, 0x8d, 0x5b, 0x0f, 0x00, 0xc5, //
        0x82, 0x26, 0x00, 0x00, 0x00, 0xaf, 0x00, 0x00, 0x00, 0x7f, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x21, //
        0x0a, 0x07, 0x00, 0x82, 0x00, 0x93, 0x00, 0x00, 0x9a, 0x00, 0xb0, 0x6c, 0x6f, 0x21, 0x0a, 0x48, //
        0x65, 0x6c, 0x6c, 0x6f, 0x21, 0x0a,
    ];
    let lz4hc: &[u8] = &[
        0x34, 0x39, 0xad, 0xb3, 0x8d, 0x96, 0xd2, 0x87, 0xbb, 0x3b, 0xaa, 0x1e, 0x3f, 0x4b, 0x64, 0xf5, //
        0x82, 0x1d, 0x00, 0x00, 0x00, 0xaf, 0x00, 0x00, 0x00, 0x8f, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x21, //
        0x0a, 0x48, 0x07, 0x00, 0x8d, 0x70, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x21, 0x0a,
    ];
    let zstd: &[u8] = &[
        0x16, 0x77, 0xb8, 0x46, 0x2a, 0x48, 0x37, 0x48, 0x80, 0x40, 0xe8, 0x7d, 0xe7, 0x8e, 0x0d, 0x09, //
        0x90, 0x25, 0x00, 0x00, 0x00, 0xaf, 0x00, 0x00, 0x00, 0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x00, 0x7d, //
        0x00, 0x00, 0x38, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x21, 0x0a, 0x01, 0x54, 0x07, 0x03, 0x2b, 0x25, //
        0x05, 0xeb, 0x3d, 0xca, 0x06,
    ];
    for frame in [&none[..], lz4, lz4hc, zstd] {
        let h = FrameHeader::parse(&prefix_of(frame), MAX_FRAME_SIZE).unwrap();
        assert_eq!(h.frame_len(), frame.len());
        let mut out = Vec::new();
        decompress_frame(&h, frame, &mut out).unwrap();
        assert_eq!(out, data);
    }
    // Our raw frames are byte-identical to ch-go's.
    let mut ours = Vec::new();
    compress_frame(Method::None, &data, &mut ours).unwrap();
    assert_eq!(ours, none);
}

/// The LZ4 frame of ClickHouse/clickhouse-rs `src/compression/lz4.rs`
/// (`it_decompresses` / `it_compresses`): a small RowBinary block. That
/// crate uses lz4_flex; liblz4 writes the very same block, so the frame matches exactly.
#[test]
fn golden_clickhouse_rs_lz4_frame() {
    let data: &[u8] = &[1, 0, 2, 255, 255, 255, 255, 0, 1, 1, 1, 115, 6, 83, 116, 114, 105, 110, 103, 3, 97, 98, 99];
    let frame: &[u8] = &[
        245, 5, 222, 235, 225, 158, 59, 108, 225, 31, 65, 215, 66, 66, 36, 92, 130, 34, 0, 0, 0, 23, 0, 0, 0, 240, 8,
        1, 0, 2, 255, 255, 255, 255, 0, 1, 1, 1, 115, 6, 83, 116, 114, 105, 110, 103, 3, 97, 98, 99,
    ];
    let h = FrameHeader::parse(&prefix_of(frame), MAX_FRAME_SIZE).unwrap();
    let mut out = Vec::new();
    decompress_frame(&h, frame, &mut out).unwrap();
    assert_eq!(out, data);
    let mut ours = Vec::new();
    compress_frame(Method::Lz4, data, &mut ours).unwrap();
    assert_eq!(ours, frame);
}

/// Frames written by a real ClickHouse 26.9.2 server: the HTTP response of
/// `SELECT number FROM numbers(1000) FORMAT RowBinary` with `compress=1`
/// and `network_compression_method` = lz4 / zstd / none. Each checksum
/// covers well over 1 KiB, so this also pins CityHash128 on long input.
#[test]
fn golden_server_frames() {
    let expected: Vec<u8> = (0u64..1000).flat_map(u64::to_le_bytes).collect();
    let frames: [(&[u8], u8); 3] = [
        (include_bytes!("../../tests/data/compression/server_numbers1000_rowbinary_lz4.bin"), BYTE_LZ4),
        (include_bytes!("../../tests/data/compression/server_numbers1000_rowbinary_zstd.bin"), BYTE_ZSTD),
        (include_bytes!("../../tests/data/compression/server_numbers1000_rowbinary_none.bin"), BYTE_NONE),
    ];
    for (frame, method) in frames {
        let h = FrameHeader::parse(&prefix_of(frame), MAX_FRAME_SIZE).unwrap();
        assert_eq!(h.method, method);
        assert_eq!(h.frame_len(), frame.len());
        assert_eq!(h.uncompressed_size, 8000);
        let mut out = Vec::new();
        decompress_frame(&h, frame, &mut out).unwrap();
        assert_eq!(out, expected, "method 0x{method:02x}");
    }
}

/// Valid LZ4 and zstd frames with random byte edits in the body, resealed
/// so the codec sees them: never a panic, never a wrong-sized success.
#[test]
fn fuzz_mutated_bodies_never_panic() {
    let data = sample(6000);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for method in [Method::Lz4, Method::Zstd { level: 1 }] {
        let mut frame = Vec::new();
        compress_frame(method, &data, &mut frame).unwrap();
        for _ in 0..3000 {
            let mut bad = frame.clone();
            for _ in 0..1 + (seed % 4) {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let at = FRAME_PREFIX_LEN + (seed >> 33) as usize % (bad.len() - FRAME_PREFIX_LEN);
                bad[at] = (seed >> 20) as u8;
            }
            reseal(&mut bad, data.len() as u32);
            let h = FrameHeader::parse(&prefix_of(&bad), MAX_FRAME_SIZE).unwrap();
            let mut out = Vec::new();
            if decompress_frame(&h, &bad, &mut out).is_ok() {
                assert_eq!(out.len(), data.len());
            } else {
                assert!(out.is_empty());
            }
        }
    }
}

#[test]
fn oversized_input_is_refused() {
    // Zero-filled allocation stays virtual: the length is refused before
    // any byte is read.
    let huge = vec![0u8; MAX_FRAME_SIZE as usize + 1];
    let mut out = vec![7];
    for method in METHODS {
        assert_eq!(
            compress_frame(method, &huge, &mut out),
            Err(ProtoError::TooLarge { what: "uncompressed frame size", got: (1 << 30) + 1, limit: 1 << 30 })
        );
        assert_eq!(out, [7]);
    }
    drop(huge);
    // A zstd level outside its range is clamped by zstd, not an error.
    compress_frame(Method::Zstd { level: 1000 }, b"abc", &mut out).unwrap();
    compress_frame(Method::Zstd { level: -5 }, b"abcd", &mut out).unwrap();
    let mut back = Vec::new();
    let mut rest = &out[1..];
    while !rest.is_empty() {
        let h = FrameHeader::parse(&prefix_of(rest), MAX_FRAME_SIZE).unwrap();
        decompress_frame(&h, &rest[..h.frame_len()], &mut back).unwrap();
        rest = &rest[h.frame_len()..];
    }
    assert_eq!(back, b"abcabcd");
}
