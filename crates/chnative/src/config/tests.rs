//! Unit tests of the configuration: URLs, options, hosts.

use super::*;

fn err(url: &str) -> String {
    match Config::from_url(url) {
        Ok(c) => panic!("`{url}` was accepted: {c:?}"),
        Err(e) => {
            assert_eq!(e.kind(), crate::ErrorKind::Config, "{url}: {e}");
            e.to_string()
        }
    }
}

#[test]
fn url_parsing() {
    let c = Config::from_url(
        "clickhouse://u%3Ax:p%40ss@example.org:9440/db1?compression=zstd:3&read_timeout=250ms&set_max_threads=2&revision=54465",
    )
    .unwrap();
    assert_eq!((c.user.as_str(), &*c.password), ("u:x", "p@ss"));
    assert_eq!(c.address(), "example.org:9440");
    assert_eq!(c.database, "db1");
    assert_eq!(c.compression, Compression::Zstd(3));
    assert_eq!(c.read_timeout, Some(Duration::from_millis(250)));
    assert_eq!(c.settings, vec![("max_threads".to_string(), "2".to_string())]);
    assert_eq!(c.revision, 54465);
    let c = Config::from_url("clickhouse://[::1]:9000").unwrap();
    assert_eq!(c.address(), "[::1]:9000");
    let c = Config::from_url("clickhouse://[::1]").unwrap();
    assert_eq!(c.address(), "[::1]:9000");
    let c = Config::from_url("TCP://h/db/").unwrap();
    assert_eq!((c.address().as_str(), c.database.as_str()), ("h:9000", "db"));
    let c = Config::from_url("clickhouse://").unwrap();
    assert_eq!(c.address(), "127.0.0.1:9000");
    assert!(Config::from_url("http://x").is_err());
    assert!(Config::from_url("clickhouse://x?bogus=1").is_err());
    assert!(Config::from_url("clickhouse://x?revision=1").is_err());
}

#[test]
fn chunked_options() {
    let c = Config::from_url("clickhouse://h").unwrap();
    assert_eq!((c.chunked_send, c.chunked_recv), (ChunkMode::NotChunkedOptional, ChunkMode::NotChunkedOptional));
    let c = Config::from_url("clickhouse://h?chunked=chunked").unwrap();
    assert_eq!((c.chunked_send, c.chunked_recv), (ChunkMode::Chunked, ChunkMode::Chunked));
    let c = Config::from_url("clickhouse://h?chunked_send=chunked_optional&chunked_recv=notchunked").unwrap();
    assert_eq!((c.chunked_send, c.chunked_recv), (ChunkMode::ChunkedOptional, ChunkMode::NotChunked));
    let c = Config::new().chunked(ChunkMode::ChunkedOptional).chunked_recv(ChunkMode::NotChunked);
    assert_eq!((c.chunked_send, c.chunked_recv), (ChunkMode::ChunkedOptional, ChunkMode::NotChunked));
    assert!(err("clickhouse://h?chunked=yes").contains("chunked `yes`"));
    assert!(err("clickhouse://h?chunked_recv=Chunked").contains("not one of"));
    err("clickhouse://h?chunked=chunked&chunked=chunked");
}

#[test]
fn debug_redacts_the_password() {
    let c = Config::from_url("clickhouse://app:hunter2-secret@db/x").unwrap();
    let d = format!("{c:?}");
    assert!(!d.contains("hunter2"), "{d}");
    assert!(d.contains("<redacted>"), "{d}");
    let d = format!("{:?}", Config::new().password("p4ssw0rd-xyz"));
    assert!(!d.contains("p4ssw0rd"), "{d}");
    // Pretty form and an empty password too.
    let d = format!("{:#?}", Config::new().password("p4ssw0rd-xyz"));
    assert!(!d.contains("p4ssw0rd"), "{d}");
    assert!(format!("{:?}", Config::new()).contains("password: \"\""));
}

#[test]
fn plus_is_a_plus_and_percent_escapes_decode_everywhere() {
    let c = Config::from_url(
        "clickhouse://a+b%2Bc:p+w%2B%20x@h%2Dost:9000/d+b%2B?client_name=c+n%2B&quota_key=q+k&set_log_comment=x+y%2Bz%26",
    )
    .unwrap();
    assert_eq!(c.user, "a+b+c");
    assert_eq!(&*c.password, "p+w+ x");
    assert_eq!(c.host, "h-ost");
    assert_eq!(c.database, "d+b+");
    assert_eq!(c.client_name, "c+n+");
    assert_eq!(c.quota_key, "q+k");
    assert_eq!(c.settings, vec![("log_comment".to_string(), "x+y+z&".to_string())]);
    // Option names, `set_` ones included, are percent-decoded too.
    let c = Config::from_url("clickhouse://h?set_max%5Fthreads=3&read%5Ftimeout=1s").unwrap();
    assert_eq!(c.settings, vec![("max_threads".to_string(), "3".to_string())]);
    assert_eq!(c.read_timeout, Some(Duration::from_secs(1)));
    // UTF-8 is fine, in escapes or raw.
    let c = Config::from_url("clickhouse://%C3%A9:\u{e9}@h").unwrap();
    assert_eq!((c.user.as_str(), &*c.password), ("\u{e9}", "\u{e9}"));
}

#[test]
fn bad_percent_escapes_are_errors() {
    for url in [
        "clickhouse://u%zz@h",
        "clickhouse://u:p%4@h",
        "clickhouse://u:p%@h",
        "clickhouse://h/db%G0",
        "clickhouse://h?client_name=%FF",
        "clickhouse://h?client_name=%C3",
        "clickhouse://h?set_x%2=1",
        "clickhouse://h%2/db",
    ] {
        err(url);
    }
}

#[test]
fn set_options_need_a_name_and_a_value() {
    assert!(err("clickhouse://h?set_max_threads").contains("no value"));
    assert!(err("clickhouse://h?set_max_threads=").contains("empty value"));
    assert!(err("clickhouse://h?set_=1").contains("empty"));
    err("clickhouse://h?set_%20=1");
    err("clickhouse://h?set_a%20b=1");
    err("clickhouse://h?set_1x=1");
    err("clickhouse://h?compression");
    err("clickhouse://h?compression=");
    err("clickhouse://h?client_name=");
    // An empty password is a password.
    assert_eq!(&*Config::from_url("clickhouse://h?password=").unwrap().password, "");
}

#[test]
fn zstd_levels_out_of_range_are_errors() {
    for level in [1, 3, 22, 0, -1, -131072] {
        let c = Config::from_url(&format!("clickhouse://h?compression=zstd:{level}")).unwrap();
        assert_eq!(c.compression, Compression::Zstd(level));
    }
    assert_eq!(Config::from_url("clickhouse://h?compression=ZSTD").unwrap().compression, Compression::Zstd(1));
    // Chosen by the link unless asked for: none on loopback and fast links, measured per statement on
    // slower ones (README, "Compression").
    assert_eq!(Config::new().compression, Compression::Auto);
    assert_eq!(Config::from_url("clickhouse://h").unwrap().compression, Compression::Auto);
    assert_eq!(Config::from_url("clickhouse://h?compression=AUTO").unwrap().compression, Compression::Auto);
    assert_eq!(Config::from_url("clickhouse://h?compression=none").unwrap().compression, Compression::None);
    for bad in [
        "zstd:99999",
        "zstd:23",
        "zstd:-131073",
        "zstd:+3",
        "zstd:--1",
        "zstd:-",
        "zstd:",
        "zstd:x",
        "zstd:99999999999",
        "lz5",
    ] {
        err(&format!("clickhouse://h?compression={bad}"));
    }
    assert!(Config::new().compression(Compression::Zstd(99999)).validate().is_err());
    assert!(Config::new().compression(Compression::Zstd(22)).validate().is_ok());
}

#[test]
fn junk_after_the_host_is_an_error() {
    for url in [
        "clickhouse://[::1]junk",
        "clickhouse://[::1]junk:9000",
        "clickhouse://[::1]:9000:1",
        "clickhouse://[::1",
        "clickhouse://[nothost]:9000",
        "clickhouse://host:9000:more",
        "clickhouse://host:9000:1",
        "clickhouse://host:",
        "clickhouse://host:0",
        "clickhouse://host:65536",
        "clickhouse://host:+90",
        "clickhouse://host:90a",
        "clickhouse://ho st",
        "clickhouse://h/db/more",
        "clickhouse://u@p@h",
        "clickhouse://h#frag",
        "clickhouse://@h",
    ] {
        err(url);
    }
}

#[test]
fn options_given_twice_are_errors() {
    err("clickhouse://h?compression=lz4&compression=zstd");
    err("clickhouse://h?set_max_threads=1&set_max_threads=2");
    err("clickhouse://h?set_max_threads=1&set_max%5fthreads=2");
    err("clickhouse://u@h?user=v");
    err("clickhouse://u:p@h?password=q");
    err("clickhouse://h/db?database=other");
    err("clickhouse://h?read_timeout=1s&read_timeout=2s");
    // Given once each, these are fine.
    let c = Config::from_url("clickhouse://h/?user=u&password=p&database=d").unwrap();
    assert_eq!((c.user.as_str(), &*c.password, c.database.as_str()), ("u", "p", "d"));
}

#[test]
fn zero_means_no_timeout_for_both_timeouts() {
    let c = Config::from_url("clickhouse://h?connect_timeout=0&read_timeout=0").unwrap();
    assert_eq!(c.connect_deadline(), None);
    assert_eq!(c.read_timeout, None);
    let c = Config::from_url("clickhouse://h?connect_timeout=0ms&read_timeout=0s").unwrap();
    assert_eq!((c.connect_deadline(), c.read_timeout), (None, None));
    let c = Config::from_url("clickhouse://h?connect_timeout=2&read_timeout=1.5m").unwrap();
    assert_eq!(c.connect_deadline(), Some(Duration::from_secs(2)));
    assert_eq!(c.read_timeout, Some(Duration::from_secs(90)));
    let c = Config::new().connect_timeout(Duration::ZERO).read_timeout(Some(Duration::ZERO));
    assert_eq!((c.connect_deadline(), c.read_timeout), (None, None));
    assert_eq!(Config::new().connect_deadline(), Some(Duration::from_secs(10)));
    for bad in ["-1", "1x", "s", ".5s", "1.2.3", "1e3"] {
        err(&format!("clickhouse://h?connect_timeout={bad}"));
        err(&format!("clickhouse://h?read_timeout={bad}"));
    }
}

#[test]
fn config_settings_are_checked_before_connecting() {
    assert!(Config::new().setting("max_threads", "1").validate().is_ok());
    for bad in ["", "a b", "x\0"] {
        let e = Config::new().setting(bad, "1").validate().unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Config, "{e}");
    }
}

#[test]
fn default_block_limit_survives_64_connections_in_24_gib() {
    let per_conn = Config::new().max_block_bytes;
    assert_eq!(per_conn, 256 << 20);
    assert!(64 * per_conn <= 16 << 30);
}

/// The network options (netopts.rs).
mod net {
    use crate::config::*;
    use crate::netopts::*;

    #[test]
    fn options_and_hosts() {
        let c = Config::from_url(
            "clickhouse://u@h1:9001,h2,[::1]:9003/db?load_balancing=round_robin&pool_max_size=5&pool_min_idle=2&pool_idle_timeout=0&secure=true",
        )
        .unwrap();
        assert_eq!(c.hosts(), vec![("h1".to_string(), 9001), ("h2".to_string(), 9440), ("::1".to_string(), 9003)]);
        assert_eq!(c.net.load_balancing, LoadBalancing::RoundRobin);
        assert_eq!((c.net.pool.max_size, c.net.pool.min_idle, c.net.pool.idle_timeout), (5, 2, None));
        let c = Config::from_url("clickhouses://h/db").unwrap();
        assert!(c.net.tls.enabled);
        assert_eq!(c.address(), "h:9440");
        let c = Config::from_url("clickhouses://h:9000/db").unwrap();
        assert_eq!(c.address(), "h:9000");
        assert_eq!(Config::from_url("clickhouse://h/db").unwrap().address(), "h:9000");
        assert_eq!(c.net.tls.roots, TlsRoots::System);
        for (v, roots) in [("system", TlsRoots::System), ("webpki", TlsRoots::WebPki), ("both", TlsRoots::Both)] {
            let c = Config::from_url(&format!("clickhouses://h?tls_roots={v}")).unwrap();
            assert_eq!(c.net.tls.roots, roots);
        }
        for bad in [
            "clickhouse://h1,/db",
            "clickhouse://h1,h2:x/db",
            "clickhouse://h1,h2:0/db",
            "clickhouse://h?load_balancing=first",
            "clickhouse://h?pool_max_size=0",
            "clickhouse://h?pool_max_size=2&pool_min_idle=3",
            "clickhouse://h?secure=maybe",
            "clickhouse://h?tls_cert_file=/a",
            "clickhouse://h?tls_roots=mozilla",
        ] {
            assert!(Config::from_url(bad).is_err(), "{bad}");
        }
    }

    /// `Debug` shows the port a connection uses: 9440 for TLS when none is given
    /// (it said 9000 for `clickhouses://h`, which connects on 9440).
    #[test]
    fn debug_shows_the_port_in_use() {
        let port = |c: &Config| {
            let d = format!("{c:?}");
            let at = d.find("port: ").expect("a port field");
            d[at + 6..].split(|ch: char| !ch.is_ascii_digit()).next().unwrap().to_string()
        };
        for (c, want) in [
            (Config::from_url("clickhouses://h/db").unwrap(), "9440"),
            (Config::from_url("clickhouse://h/db?secure=true").unwrap(), "9440"),
            (Config::from_url("clickhouses://h:9000/db").unwrap(), "9000"),
            (Config::from_url("clickhouse://h/db").unwrap(), "9000"),
            (Config::new().host("h").secure(true), "9440"),
            (Config::new().host("h").secure(true).secure(false), "9000"),
            (Config::new().port(9000).secure(true), "9000"),
            (Config::new().secure(true).port(9001), "9001"),
        ] {
            assert_eq!(port(&c), want, "{c:?}");
            assert_eq!(c.address(), format!("{}:{want}", c.host));
        }
    }
}
