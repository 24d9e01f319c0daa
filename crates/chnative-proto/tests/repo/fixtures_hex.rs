//! Every `.bin` fixture under a crate's `tests/` has a `.hex` twin (xxd's default dump)
//! that matches it, so a capture can be read in a review. `scripts/hex-fixtures.sh`
//! writes them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The dump `xxd FILE` prints: offset, 16 bytes in 2-byte groups, then the bytes as
/// ASCII with `.` for anything unprintable.
fn xxd(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (line, chunk) in bytes.chunks(16).enumerate() {
        let mut hex = String::new();
        for (i, b) in chunk.iter().enumerate() {
            if i > 0 && i % 2 == 0 {
                hex.push(' ');
            }
            write!(hex, "{b:02x}").unwrap();
        }
        let ascii: String =
            chunk.iter().map(|&b| if (0x20..0x7f).contains(&b) { char::from(b) } else { '.' }).collect();
        writeln!(out, "{:08x}: {hex:<39}  {ascii}", line * 16).unwrap();
    }
    out
}

fn bins(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            bins(&path, out);
        } else if path.extension().is_some_and(|e| e == "bin") {
            out.push(path);
        }
    }
}

#[test]
fn the_dump_is_xxds() {
    assert_eq!(xxd(b""), "");
    assert_eq!(
        xxd(b"\x00\x01abcdefghijklmnop\xff"),
        "00000000: 0001 6162 6364 6566 6768 696a 6b6c 6d6e  ..abcdefghijklmn\n\
         00000010: 6f70 ff                                  op.\n"
    );
}

#[test]
fn every_bin_fixture_has_an_up_to_date_hex_twin() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for krate in std::fs::read_dir(crates).unwrap() {
        bins(&krate.unwrap().path().join("tests"), &mut files);
    }
    assert!(files.len() > 30, "found only {} fixtures", files.len());
    let mut stale = Vec::new();
    for bin in &files {
        let twin = bin.with_extension("hex");
        let want = xxd(&std::fs::read(bin).unwrap());
        if std::fs::read_to_string(&twin).ok().as_deref() != Some(want.as_str()) {
            stale.push(twin.display().to_string());
        }
    }
    assert!(stale.is_empty(), "missing or stale (run scripts/hex-fixtures.sh): {stale:#?}");
}
