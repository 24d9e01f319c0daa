//! A TCP proxy on loopback for fault-injection and cancel-safety tests: it sits
//! between a client and the real server and can slow, stop, cut or reset the
//! traffic in one direction on command.
//!
//! The proxy never interprets the bytes. Each accepted connection gets its own
//! upstream connection; the controls apply to every connection of the proxy,
//! and byte counts are summed over them (tests use one connection at a time).
//! Everything is bounded: every connection task dies with the [`Proxy`], and the
//! forwarding loops stop after a fixed number of rounds.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Which way bytes flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Client to server (queries, insert data).
    Up,
    /// Server to client (results).
    Down,
}

/// How a connection is ended when a byte limit is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// Close both sockets normally: each peer reads end-of-file.
    Cut,
    /// Close both sockets with SO_LINGER 0: each peer gets a TCP RST.
    Reset,
}

/// What one direction does with its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mode {
    /// Largest read forwarded at once.
    chunk: usize,
    /// Sleep after each forwarded chunk.
    pause: Duration,
    /// Forward nothing until resumed.
    stalled: bool,
    /// Stall once this direction's byte count reaches the value.
    stall_at: Option<u64>,
    /// End the connection once this direction's byte count reaches the value.
    kill_at: Option<(u64, Kill)>,
}

const BUF: usize = 64 << 10;

impl Default for Mode {
    fn default() -> Self {
        Mode { chunk: BUF, pause: Duration::ZERO, stalled: false, stall_at: None, kill_at: None }
    }
}

struct DirState {
    mode: watch::Sender<Mode>,
    forwarded: AtomicU64,
}

struct Shared {
    up: DirState,
    down: DirState,
    open: AtomicUsize,
    accepted: AtomicUsize,
}

impl Shared {
    fn dir(&self, d: Dir) -> &DirState {
        match d {
            Dir::Up => &self.up,
            Dir::Down => &self.down,
        }
    }
}

/// A running proxy; dropping it stops it and closes all its connections.
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

/// The kernel receive buffer of the proxy's sockets: small, so a throttled or
/// stalled direction pushes back on the sender after little data (a client's
/// write then really waits, which is what cancel tests need to reach).
const SMALL_RCVBUF: u32 = 16 << 10;

impl Proxy {
    /// Starts a proxy on 127.0.0.1 (any free port) in front of `target`.
    pub async fn start(target: SocketAddr) -> Proxy {
        assert!(target.ip().is_loopback(), "the test proxy only forwards to loopback");
        let socket = TcpSocket::new_v4().expect("proxy socket");
        socket.set_reuseaddr(true).expect("SO_REUSEADDR");
        socket.set_recv_buffer_size(SMALL_RCVBUF).expect("SO_RCVBUF");
        socket.bind("127.0.0.1:0".parse().unwrap()).expect("bind proxy");
        let listener = socket.listen(64).expect("listen");
        let addr = listener.local_addr().expect("proxy address");
        let dir = || DirState { mode: watch::Sender::new(Mode::default()), forwarded: AtomicU64::new(0) };
        let shared =
            Arc::new(Shared { up: dir(), down: dir(), open: AtomicUsize::new(0), accepted: AtomicUsize::new(0) });
        let task = tokio::spawn(accept_loop(listener, target, shared.clone()));
        Proxy { addr, shared, task }
    }

    /// Starts a proxy in front of the test server's native port.
    pub async fn to_server() -> Proxy {
        let s = crate::common::server();
        let target: SocketAddr = format!("{}:{}", s.host, s.tcp_port).parse().expect("server address");
        Proxy::start(target).await
    }

    /// The proxy's port (host is 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// A connection string through the proxy with extra `?` options.
    pub fn url(&self, options: &str) -> String {
        let base = format!("clickhouse://default@127.0.0.1:{}/default", self.port());
        if options.is_empty() {
            base
        } else {
            format!("{base}?{options}")
        }
    }

    /// A [`chnative::Config`] through the proxy.
    pub fn config(&self) -> chnative::Config {
        chnative::Config::new().host("127.0.0.1").port(self.port())
    }

    fn set(&self, d: Dir, f: impl FnOnce(&mut Mode)) {
        self.shared.dir(d).mode.send_modify(f);
    }

    /// Forwards at most `chunk` bytes at a time in `d`, sleeping `pause` after each.
    pub fn throttle(&self, d: Dir, chunk: usize, pause: Duration) {
        let chunk = chunk.clamp(1, BUF);
        self.set(d, |m| {
            m.chunk = chunk;
            m.pause = pause;
        });
    }

    /// Stops forwarding in `d` (bytes already forwarded stay delivered).
    pub fn stall(&self, d: Dir) {
        self.set(d, |m| m.stalled = true);
    }

    /// Stops forwarding in `d` once `n` more bytes went through.
    pub fn stall_after(&self, d: Dir, n: u64) {
        let at = self.forwarded(d) + n;
        self.set(d, |m| m.stall_at = Some(at));
    }

    /// Undoes [`Proxy::stall`], [`Proxy::stall_after`] and [`Proxy::throttle`] in `d`.
    pub fn resume(&self, d: Dir) {
        self.set(d, |m| {
            m.stalled = false;
            m.stall_at = None;
            m.chunk = BUF;
            m.pause = Duration::ZERO;
        });
    }

    /// Forwards at full speed in both directions until the guard is dropped,
    /// then goes back to the throttles and stalls in force now.
    pub fn full_speed(&self) -> FullSpeed<'_> {
        let saved = [*self.shared.up.mode.borrow(), *self.shared.down.mode.borrow()];
        self.resume(Dir::Up);
        self.resume(Dir::Down);
        FullSpeed { proxy: self, saved }
    }

    /// Ends every connection, the normal way or with RST, once `n` more bytes went in `d`.
    pub fn kill_after(&self, d: Dir, n: u64, how: Kill) {
        let at = self.forwarded(d) + n;
        self.set(d, |m| m.kill_at = Some((at, how)));
    }

    /// Closes both sides (FIN) after `n` more bytes in `d`.
    pub fn cut_after(&self, d: Dir, n: u64) {
        self.kill_after(d, n, Kill::Cut);
    }

    /// Resets both sides (RST) after `n` more bytes in `d`.
    pub fn reset_after(&self, d: Dir, n: u64) {
        self.kill_after(d, n, Kill::Reset);
    }

    /// Back to plain forwarding in both directions, with no pending cut or reset.
    pub fn clear(&self) {
        for d in [Dir::Up, Dir::Down] {
            self.set(d, |m| *m = Mode::default());
        }
    }

    /// Bytes forwarded in `d` so far, over all connections.
    pub fn forwarded(&self, d: Dir) -> u64 {
        self.shared.dir(d).forwarded.load(Ordering::SeqCst)
    }

    /// Connections open right now.
    pub fn open_connections(&self) -> usize {
        self.shared.open.load(Ordering::SeqCst)
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// Waits (at most `limit`) until at least `n` bytes went in `d`; false on timeout.
    pub async fn wait_forwarded(&self, d: Dir, n: u64, limit: Duration) -> bool {
        self.wait_until(limit, || self.forwarded(d) >= n).await
    }

    /// Waits (at most `limit`) until no connection is open; false on timeout.
    pub async fn wait_all_closed(&self, limit: Duration) -> bool {
        self.wait_until(limit, || self.open_connections() == 0).await
    }

    async fn wait_until(&self, limit: Duration, ok: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while !ok() {
            if start.elapsed() > limit {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        true
    }
}

/// See [`Proxy::full_speed`].
pub struct FullSpeed<'p> {
    proxy: &'p Proxy,
    saved: [Mode; 2],
}

impl Drop for FullSpeed<'_> {
    fn drop(&mut self) {
        let [up, down] = self.saved;
        self.proxy.set(Dir::Up, |m| *m = Mode { kill_at: m.kill_at, ..up });
        self.proxy.set(Dir::Down, |m| *m = Mode { kill_at: m.kill_at, ..down });
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // Aborting the accept task drops its JoinSet, which aborts every connection.
        self.task.abort();
    }
}

async fn accept_loop(listener: TcpListener, target: SocketAddr, shared: Arc<Shared>) {
    let mut conns = JoinSet::new();
    // Bounded: no test opens anywhere near this many connections.
    for _ in 0..10_000 {
        let Ok((client, _)) = listener.accept().await else { return };
        shared.accepted.fetch_add(1, Ordering::SeqCst);
        shared.open.fetch_add(1, Ordering::SeqCst);
        let shared = shared.clone();
        conns.spawn(async move {
            let _open = OpenGuard(shared.clone());
            // A refused upstream (server down) closes the client side at once.
            let Ok(server) = TcpStream::connect(target).await else { return };
            serve(client, server, &shared).await;
        });
        while conns.try_join_next().is_some() {}
    }
}

struct OpenGuard(Arc<Shared>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How one direction's forwarding ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The source closed (or failed); its end was passed on.
    Eof,
    /// A kill limit was reached.
    Killed(Kill),
}

async fn serve(mut client: TcpStream, mut server: TcpStream, shared: &Shared) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let end = {
        let (cr, cw) = client.split();
        let (sr, sw) = server.split();
        let mut up = pin!(pump(cr, sw, &shared.up));
        let mut down = pin!(pump(sr, cw, &shared.down));
        let (mut up_done, mut down_done) = (false, false);
        loop {
            let end = tokio::select! {
                e = &mut up, if !up_done => { up_done = true; e }
                e = &mut down, if !down_done => { down_done = true; e }
            };
            if let End::Killed(_) = end {
                break end;
            }
            if up_done && down_done {
                break End::Eof;
            }
        }
    };
    if end == End::Killed(Kill::Reset) {
        // SO_LINGER 0: close() sends RST instead of FIN. (tokio deprecates
        // set_linger because a non-zero linger blocks in close; zero never does.)
        #[allow(deprecated)]
        let _ = client.set_linger(Some(Duration::ZERO));
        #[allow(deprecated)]
        let _ = server.set_linger(Some(Duration::ZERO));
    }
    drop(client);
    drop(server);
}

/// Forwards `src` to `dst` under `state`'s mode until the source ends or a kill limit hits.
async fn pump(
    mut src: tokio::net::tcp::ReadHalf<'_>,
    mut dst: tokio::net::tcp::WriteHalf<'_>,
    state: &DirState,
) -> End {
    let mut modes = state.mode.subscribe();
    let mut buf = vec![0u8; BUF];
    // Bounded: 16M rounds of at least one byte or one mode change each.
    for _ in 0..(1u64 << 24) {
        let mode = *modes.borrow_and_update();
        let done = state.forwarded.load(Ordering::SeqCst);
        let mut room = match mode.kill_at {
            Some((at, how)) if done >= at => return End::Killed(how),
            Some((at, _)) => (at - done).min(BUF as u64) as usize,
            None => BUF,
        };
        if let Some(at) = mode.stall_at {
            room = room.min(at.saturating_sub(done).min(BUF as u64) as usize);
        }
        if mode.stalled || room == 0 {
            if modes.changed().await.is_err() {
                return End::Eof;
            }
            continue;
        }
        let want = mode.chunk.min(room);
        let n = tokio::select! {
            r = src.read(&mut buf[..want]) => match r {
                Ok(0) | Err(_) => {
                    let _ = dst.shutdown().await;
                    return End::Eof;
                }
                Ok(n) => n,
            },
            changed = modes.changed() => {
                if changed.is_err() {
                    return End::Eof;
                }
                continue;
            }
        };
        if dst.write_all(&buf[..n]).await.is_err() {
            return End::Eof;
        }
        state.forwarded.fetch_add(n as u64, Ordering::SeqCst);
        if !mode.pause.is_zero() {
            tokio::time::sleep(mode.pause).await;
        }
    }
    End::Eof
}
