//! A ClickHouse server of a test's own, for tests that must not touch the shared test server
//! (`common::server()`) that the other tests of the binary use at the same time: tests that
//! kill or restart a server, that configure it differently (`proto_caps`), or that count
//! every socket or query of a server.
//!
//! It is a `scripts/server.sh` server with a run dir of its own and ports the kernel picked
//! as free (from the ephemeral range, so two test runs on one machine do not meet); it
//! starts in about a second. It is stopped and its run dir removed when the `OwnServer` is
//! dropped, also when the test fails; a watchdog process stops it as well if the test
//! process ends without dropping it (killed, aborted, interrupted with Ctrl-C: server.sh
//! starts servers in a session of their own, so a Ctrl-C does not reach them).

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/server.sh");

/// A running server of this test's own; stopped when dropped.
pub struct OwnServer {
    /// The native protocol's port (host 127.0.0.1).
    pub tcp_port: u16,
    /// The HTTP interface's port.
    pub http_port: u16,
    /// Its run dir (`CHNATIVE_SERVER_DIR` of scripts/server.sh).
    pub dir: String,
    envs: Vec<(String, String)>,
    watchdog: Option<Child>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `scripts/server.sh <cmd>` with `envs` (and none of the caller's server.sh variables that
/// would change the server: proto_caps, listen addresses).
fn server_sh(envs: &[(String, String)], cmd: &str) -> Output {
    let mut c = Command::new("bash");
    c.arg(SCRIPT).arg(cmd);
    for var in [
        "CHNATIVE_SERVER_PROTO_CAPS",
        "CHNATIVE_SERVER_PROTO_CAPS_SEND",
        "CHNATIVE_SERVER_PROTO_CAPS_RECV",
        "CHNATIVE_LISTEN_HOST",
    ] {
        c.env_remove(var);
    }
    c.envs(envs.iter().map(|(k, v)| (k, v)));
    c.output().expect("run scripts/server.sh")
}

impl OwnServer {
    /// Starts a server with the default configuration; `name` goes into its run dir.
    pub fn start(name: &str) -> OwnServer {
        OwnServer::start_with(name, &[])
    }

    /// Starts a server with extra scripts/server.sh variables, e.g.
    /// `("CHNATIVE_SERVER_PROTO_CAPS_SEND", "chunked")`.
    pub fn start_with(name: &str, extra: &[(&str, &str)]) -> OwnServer {
        // A port the kernel called free can be taken before the server binds it (by another
        // test's connection or listener): then server.sh refuses it, and new ports are tried.
        let mut last = String::new();
        for _ in 0..3 {
            let (tcp_port, http_port) = (free_port(), free_port());
            if tcp_port == http_port {
                continue;
            }
            let dir =
                format!("{}/chnative-own-{name}-{}-{tcp_port}", std::env::temp_dir().display(), std::process::id());
            let mut envs = vec![
                ("CHNATIVE_SERVER_DIR".to_string(), dir.clone()),
                ("CHNATIVE_TCP_PORT".to_string(), tcp_port.to_string()),
                ("CHNATIVE_HTTP_PORT".to_string(), http_port.to_string()),
            ];
            envs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
            let t0 = Instant::now();
            let out = server_sh(&envs, "start");
            last = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            // No pidfile after a success: server.sh found another server answering on these
            // ports (it reuses one) and started none; that server is not ours.
            if out.status.success() && std::path::Path::new(&format!("{dir}/server.pid")).exists() {
                eprintln!("own server {name}: started on tcp {tcp_port} in {:.1?}", t0.elapsed());
                let mut s = OwnServer { tcp_port, http_port, dir, envs, watchdog: None };
                s.watchdog = s.watchdog();
                return s;
            }
            let _ = std::fs::remove_dir_all(&dir);
            if out.status.success() {
                last = format!("another server answers on tcp {tcp_port} or http {http_port}:\n{last}");
            } else if !last.contains("is taken") {
                break;
            }
        }
        panic!("scripts/server.sh start ({name}) failed:\n{last}");
    }

    /// Runs `scripts/server.sh <cmd>` for this server (the caller checks the status).
    pub fn script(&self, cmd: &str) -> Output {
        server_sh(&self.envs, cmd)
    }

    fn script_ok(&self, cmd: &str) {
        let out = self.script(cmd);
        assert!(
            out.status.success(),
            "scripts/server.sh {cmd} ({}) failed:\n{}{}",
            self.dir,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A process of its own group (so a Ctrl-C at the terminal does not end it) that stops
    /// the server once this test process is gone.
    fn watchdog(&self) -> Option<Child> {
        let sh = format!(
            "while kill -0 {} 2>/dev/null; do sleep 1; done; bash '{SCRIPT}' stop >/dev/null 2>&1; rm -rf '{}'",
            std::process::id(),
            self.dir
        );
        let mut c = Command::new("bash");
        c.arg("-c").arg(sh).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).process_group(0);
        c.envs(self.envs.iter().map(|(k, v)| (k, v)));
        c.spawn().ok()
    }

    /// `scripts/server.sh restart`: stops the server and starts a new one on the same ports
    /// (it starts with no tables: its data is in a temporary folder).
    pub fn restart(&self) {
        self.script_ok("restart");
    }

    /// Starts the server again after [`kill9`](Self::kill9), on the same ports.
    pub fn start_again(&self) {
        self.script_ok("start");
    }

    /// The server's pid (scripts/server.sh's pidfile).
    pub fn pid(&self) -> u32 {
        let pid = std::fs::read_to_string(format!("{}/server.pid", self.dir)).expect("the own server's pidfile");
        pid.trim().parse().expect("a pid")
    }

    /// SIGKILLs the server (its process group: server.sh starts it with setsid) and waits
    /// until its native port is closed.
    pub fn kill9(&self) {
        let pid = self.pid();
        let st = Command::new("kill").arg("-KILL").arg("--").arg(format!("-{pid}")).status().expect("kill");
        assert!(st.success(), "kill -KILL -{pid} failed");
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.tcp_port)).is_ok() {
            assert!(start.elapsed() < Duration::from_secs(60), "the server port is still open after SIGKILL");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A connection string to it, with extra `?` options (may be empty).
    pub fn url(&self, options: &str) -> String {
        let base = format!("clickhouse://default@127.0.0.1:{}/default", self.tcp_port);
        if options.is_empty() {
            base
        } else {
            format!("{base}?{options}")
        }
    }

    /// A [`chnative::Config`] for it.
    pub fn config(&self) -> chnative::Config {
        chnative::Config::new().host("127.0.0.1").port(self.tcp_port).database("default")
    }

    /// SQL over its HTTP interface (independent of the code under test): the body, or a
    /// panic naming the query.
    pub fn http(&self, sql: &str) -> String {
        chnative_testkit::server::http_at_port(self.http_port, sql)
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        let out = self.script("stop");
        if !out.status.success() {
            eprintln!("scripts/server.sh stop ({}) failed: {}", self.dir, String::from_utf8_lossy(&out.stderr));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
