//! `scripts/server.sh` as a fresh machine runs it. A fresh Debian has no curl: the script's
//! probes then speak HTTP over bash's `/dev/tcp`, and every test binary after the first finds
//! the server already running and checks its version that way.

use std::path::{Path, PathBuf};
use std::process::Command;

use chnative_testkit::server::server;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/server.sh");

/// A directory of links to every program on `PATH` but those named in `hidden`, the first of
/// each name winning as on `PATH`.
fn path_without(hidden: &[&str], dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for d in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let name = e.file_name();
            if hidden.iter().any(|h| name == *h) {
                continue;
            }
            let link = dir.join(&name);
            if std::fs::symlink_metadata(&link).is_err() {
                let _ = std::os::unix::fs::symlink(e.path(), &link);
            }
        }
    }
    dir.to_path_buf()
}

#[test]
fn start_without_curl_finds_the_running_server() {
    // Regression: the curl-less version probe sent a Content-Length one byte short of its
    // query (`... FORMAT TS` reached the server: UNKNOWN_FORMAT), and the failed match ended
    // the script under `set -e` with status 1 and no message: on a machine without curl, every
    // test binary after the first failed with "scripts/server.sh start failed" and nothing else.
    let srv = server();
    let dir = std::env::temp_dir().join(format!("chnative-no-curl-{}", std::process::id()));
    let bin = path_without(&["curl"], &dir);
    let out = Command::new(bin.join("bash"))
        .arg(SCRIPT)
        .arg("start")
        .env("PATH", &bin)
        .env("CHNATIVE_TCP_PORT", srv.tcp_port.to_string())
        .env("CHNATIVE_HTTP_PORT", srv.http_port.to_string())
        .output()
        .expect("run scripts/server.sh");
    let _ = std::fs::remove_dir_all(&dir);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "scripts/server.sh start without curl failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("clickhouse ready"), "{stdout}\n{stderr}");
    assert!(!stderr.contains("stopping it"), "the running server was taken for a dead one:\n{stderr}");
}
