//! Full ClickHouse servers, where the embedded 26.9 of the shared test server falls short:
//! access storage for `CREATE ROLE`, `system.query_log`, and replication through ZooKeeper.
//!
//! - [`full_server`]: a [`OwnServer`] that is a full `clickhouse server` (25.8 LTS, or the
//!   full version `CHNATIVE_SERVER_VERSION` names), started in about a second.
//! - [`ReplicatedCluster`]: `scripts/cluster.sh` with `CHNATIVE_CLUSTER_VERSION`: 2 shards × 2
//!   replicas of full servers with a ZooKeeper of their own (`scripts/zookeeper.sh`) and
//!   `internal_replication = true`, on ports the kernel picked and in a run dir of its own. The
//!   tests that need it share one ([`ReplicatedCluster::shared`]); it is stopped when the last
//!   of them drops it, and by a watchdog process if the test process ends first.
//!
//! ZooKeeper comes from Debian's `zookeeper` package, which scripts/zookeeper.sh installs when
//! it runs as root. Elsewhere (not root, no apt-get) the replication tests skip, printing why
//! and how to install it.

use super::own_server::OwnServer;

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

const CLUSTER_SH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/cluster.sh");

/// The full server version these tests run: `CHNATIVE_SERVER_VERSION` when it names one of
/// the full servers (25.8, 24.8, 24.5), else 25.8.
pub fn full_version() -> String {
    match std::env::var("CHNATIVE_SERVER_VERSION").ok().as_deref() {
        Some(v @ ("25.8" | "24.8" | "24.5")) => v.to_string(),
        _ => "25.8".to_string(),
    }
}

/// A full `clickhouse server` of this test's own (stopped on drop): access storage for
/// CREATE ROLE/USER and a `system.query_log`.
pub fn full_server(name: &str) -> OwnServer {
    OwnServer::start_with(name, &[("CHNATIVE_SERVER_VERSION", &full_version()), ("CHNATIVE_ZOOKEEPER", "")])
}

/// Shards of the replicated cluster.
pub const SHARDS: u16 = 2;
/// Replicas of each shard.
pub const REPLICAS: u16 = 2;
/// Its name in the nodes' `remote_servers`.
pub const NAME: &str = "chn_cluster";

/// The ports of one node.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    /// Native protocol.
    pub tcp: u16,
    /// HTTP interface.
    pub http: u16,
    /// Interserver HTTP (replicas fetch parts here).
    pub interserver: u16,
}

/// A replicated local cluster of full servers (see the module docs).
pub struct ReplicatedCluster {
    /// `nodes[(s-1)*REPLICAS + (r-1)]`: shard s, replica r (from 1).
    nodes: Vec<Node>,
    /// The ZooKeeper's port.
    pub zookeeper_port: u16,
    /// Its run dir (`CHNATIVE_CLUSTER_DIR`).
    pub dir: String,
    envs: Vec<(String, String)>,
    watchdog: Option<Child>,
}

/// `n` distinct ports the kernel calls free (all held open until every one is picked).
fn free_ports(n: usize) -> Vec<u16> {
    let held: Vec<std::net::TcpListener> =
        (0..n).map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port")).collect();
    held.iter().map(|l| l.local_addr().expect("local addr").port()).collect()
}

fn cluster_sh(envs: &[(String, String)], cmd: &str) -> Output {
    let mut c = Command::new("bash");
    c.arg(CLUSTER_SH).arg(cmd);
    for var in [
        "CHNATIVE_CLUSTER_PORT_BASE",
        "CHNATIVE_CLUSTER_HTTP_BASE",
        "CHNATIVE_CLUSTER_INTERSERVER_BASE",
        "CHNATIVE_SERVER_PROTO_CAPS",
        "CHNATIVE_SERVER_PROTO_CAPS_SEND",
        "CHNATIVE_SERVER_PROTO_CAPS_RECV",
        "CHNATIVE_ZOOKEEPER",
    ] {
        c.env_remove(var);
    }
    c.envs(envs.iter().map(|(k, v)| (k, v)));
    c.output().expect("run scripts/cluster.sh")
}

impl ReplicatedCluster {
    /// The replicated cluster the tests of this process share: the running one, or a new one.
    /// `None` (after printing why) when ZooKeeper is not installed and cannot be here.
    pub fn shared() -> Option<Arc<ReplicatedCluster>> {
        static SHARED: Mutex<Weak<ReplicatedCluster>> = Mutex::new(Weak::new());
        let mut slot = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = slot.upgrade() {
            return Some(c);
        }
        let c = Arc::new(ReplicatedCluster::start()?);
        *slot = Arc::downgrade(&c);
        Some(c)
    }

    /// Starts a new one (ports the kernel picked; new ones if one was taken meanwhile).
    fn start() -> Option<ReplicatedCluster> {
        let mut last = String::new();
        for _ in 0..3 {
            let n = usize::from(SHARDS * REPLICAS);
            let ports = free_ports(3 * n + 1);
            let nodes: Vec<Node> = (0..n)
                .map(|i| Node { tcp: ports[3 * i], http: ports[3 * i + 1], interserver: ports[3 * i + 2] })
                .collect();
            let zookeeper_port = ports[3 * n];
            let dir = format!(
                "{}/chnative-replicated-{}-{zookeeper_port}",
                std::env::temp_dir().display(),
                std::process::id()
            );
            let list: Vec<String> = nodes.iter().map(|p| format!("{}:{}:{}", p.tcp, p.http, p.interserver)).collect();
            let envs: Vec<(String, String)> = [
                ("CHNATIVE_CLUSTER_VERSION", full_version()),
                ("CHNATIVE_CLUSTER_DIR", dir.clone()),
                ("CHNATIVE_CLUSTER_SHARDS", SHARDS.to_string()),
                ("CHNATIVE_CLUSTER_REPLICAS", REPLICAS.to_string()),
                ("CHNATIVE_CLUSTER_NAME", NAME.to_string()),
                ("CHNATIVE_CLUSTER_NODE_PORTS", list.join(",")),
                ("CHNATIVE_CLUSTER_ZOOKEEPER_PORT", zookeeper_port.to_string()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
            let t0 = Instant::now();
            let out = cluster_sh(&envs, "start");
            last = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            let c = ReplicatedCluster { nodes, zookeeper_port, dir: dir.clone(), envs, watchdog: None };
            // Every node must be one this start launched (a pidfile), not a server found
            // answering on a port (server.sh would reuse it).
            let ours = (1..=SHARDS)
                .all(|s| (1..=REPLICAS).all(|r| std::path::Path::new(&format!("{dir}/s{s}r{r}/server.pid")).exists()));
            if out.status.success() && ours {
                eprintln!(
                    "replicated cluster ({} x {} of ClickHouse {}, ZooKeeper :{zookeeper_port}) started in {:.1?}",
                    SHARDS,
                    REPLICAS,
                    full_version(),
                    t0.elapsed()
                );
                let mut c = c;
                c.watchdog = c.watchdog();
                return Some(c);
            }
            if out.status.code() == Some(4) {
                drop(c);
                eprintln!(
                    "SKIP: no ZooKeeper for the replicated cluster (Debian's `zookeeper` package is not installed \
                     and cannot be installed here: not root, no apt-get, or CHNATIVE_ZOOKEEPER_INSTALL=0). \
                     Install it with \
                     `sudo apt-get install zookeeper` to run this test.\n{last}"
                );
                return None;
            }
            drop(c); // stops what did start
            if !last.contains("is taken") && out.status.success() {
                last = format!("a node answered that this start did not launch (a port in use?):\n{last}");
            } else if !last.contains("is taken") {
                break;
            }
        }
        panic!("scripts/cluster.sh start (replicated, ClickHouse {}) failed:\n{last}", full_version());
    }

    /// A process of its own group that stops the cluster once this test process is gone.
    fn watchdog(&self) -> Option<Child> {
        let sh = format!(
            "while kill -0 {} 2>/dev/null; do sleep 1; done; bash '{CLUSTER_SH}' stop >/dev/null 2>&1; rm -rf '{}'",
            std::process::id(),
            self.dir
        );
        let mut c = Command::new("bash");
        c.arg("-c").arg(sh).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).process_group(0);
        for var in ["CHNATIVE_CLUSTER_PORT_BASE", "CHNATIVE_CLUSTER_HTTP_BASE", "CHNATIVE_CLUSTER_INTERSERVER_BASE"] {
            c.env_remove(var);
        }
        c.envs(self.envs.iter().map(|(k, v)| (k, v)));
        c.spawn().ok()
    }

    /// The ports of shard `s`, replica `r` (both from 1).
    pub fn node(&self, s: u16, r: u16) -> Node {
        assert!((1..=SHARDS).contains(&s) && (1..=REPLICAS).contains(&r), "no node s{s}r{r}");
        self.nodes[usize::from((s - 1) * REPLICAS + (r - 1))]
    }

    /// A [`chnative::Config`] for shard `s`, replica `r`.
    pub fn config(&self, s: u16, r: u16) -> chnative::Config {
        chnative::Config::new().host("127.0.0.1").port(self.node(s, r).tcp).database("default")
    }

    /// SQL over the HTTP interface of shard `s`, replica `r` (independent of the code under
    /// test): the body, or a panic naming the query.
    pub fn http(&self, s: u16, r: u16, sql: &str) -> String {
        chnative_testkit::server::http_at_port(self.node(s, r).http, sql)
    }
}

impl Drop for ReplicatedCluster {
    fn drop(&mut self) {
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        let out = cluster_sh(&self.envs, "stop");
        if !out.status.success() {
            eprintln!("scripts/cluster.sh stop ({}) failed: {}", self.dir, String::from_utf8_lossy(&out.stderr));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
