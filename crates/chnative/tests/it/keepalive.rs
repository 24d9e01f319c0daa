//! TCP keepalive is armed on the client's socket by default and can be
//! turned off. Checked in the kernel's socket table (Linux): the `tr` column
//! of /proc/net/tcp is 2 while a keepalive timer is pending.
#![cfg(target_os = "linux")]

use std::time::Duration;

use chnative::{Config, Connection};
use tokio::net::TcpListener;

/// The timer kind of the established IPv4 socket from local port `port` to `remote`.
fn timer_of(port: u16, remote: u16) -> Option<u8> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let (local, remote) = (format!(":{port:04X}"), format!(":{remote:04X}"));
    table.lines().skip(1).find_map(|line| {
        let cols: Vec<&str> = line.split_whitespace().collect();
        // cols[1] local address, cols[2] remote address, cols[3] state (01 established), cols[5] "tr:when"
        if cols.get(1)?.ends_with(&local) && cols.get(2)?.ends_with(&remote) && *cols.get(3)? == "01" {
            u8::from_str_radix(cols.get(5)?.split(':').next()?, 16).ok()
        } else {
            None
        }
    })
}

/// Starts a connection to a listener that never answers, and reports the
/// timer kind of the client's socket while it waits for the server's Hello.
async fn client_socket_timer(cfg: Config) -> Option<u8> {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server_port = listener.local_addr().unwrap().port();
    let cfg = cfg.host("127.0.0.1").port(server_port).connect_timeout(Duration::from_secs(60));
    let attempt = tokio::spawn(Connection::connect_with(cfg));
    let (_server_side, peer) = listener.accept().await.unwrap();
    // The kernel arms the timer once the socket is idle; look until it is (bounded).
    let mut timer = None;
    for _ in 0..100 {
        timer = timer_of(peer.port(), server_port);
        if timer == Some(2) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    attempt.abort();
    timer
}

#[tokio::test]
async fn keepalive_is_on_by_default_and_can_be_turned_off() {
    assert_eq!(client_socket_timer(Config::new()).await, Some(2), "keepalive timer armed by default");
    let off = Config::from_url("clickhouse://127.0.0.1?tcp_keepalive=0").unwrap();
    assert_eq!(client_socket_timer(off).await, Some(0), "no timer with tcp_keepalive=0");
}
