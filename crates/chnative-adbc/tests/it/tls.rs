//! The driver from Rust (the `adbc_core` traits of the rlib), over TLS: chnative's
//! in-process TLS terminator (its tests/common_tls) in front of the test server,
//! with the CA given as a connection-string option passed through the ADBC
//! database options (`adbc.clickhouse.tls_ca_file`).

use crate::common_tls;

use std::sync::OnceLock;

use adbc_core::options::{OptionDatabase, OptionValue};
use adbc_core::{Connection, Database, Driver, Statement};
use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use chnative_adbc::ChDriver;
use common_tls::{certs, TlsProxy};

fn server_port() -> u16 {
    chnative_testkit::server::server().tcp_port
}

fn tls_port() -> u16 {
    static PROXY: OnceLock<TlsProxy> = OnceLock::new();
    PROXY.get_or_init(|| TlsProxy::start(server_port(), &certs().server, None)).port()
}

fn database(opts: Vec<(&str, &str)>) -> chnative_adbc::ChDatabase {
    let opts = opts.into_iter().map(|(k, v)| (OptionDatabase::from(k), OptionValue::String(v.to_string())));
    ChDriver.new_database_with_opts(opts).unwrap()
}

#[test]
fn queries_over_tls_with_a_ca_option() {
    let uri = format!("clickhouses://127.0.0.1:{}/default", tls_port());
    let ca = certs().server.cert_file();
    let db = database(vec![("uri", &uri), ("username", "default"), ("adbc.clickhouse.tls_ca_file", &ca)]);
    let mut conn = db.new_connection().unwrap();
    let mut stmt = conn.new_statement().unwrap();
    stmt.set_sql_query("SELECT sum(number) AS s FROM numbers(100000)").unwrap();
    let batches: Vec<_> = stmt.execute().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(batches[0].column(0).as_primitive::<UInt64Type>().value(0), 4_999_950_000);

    // Without the CA the server's certificate is not trusted: a clear error, no hang.
    let db = database(vec![("uri", &uri), ("adbc.clickhouse.connect_timeout", "5s")]);
    let err = match db.new_connection() {
        Ok(_) => panic!("an untrusted certificate must be refused"),
        Err(e) => e,
    };
    assert!(err.message.to_lowercase().contains("certificate"), "{}", err.message);
    // An unknown option is refused by name.
    let err = ChDriver
        .new_database_with_opts([(OptionDatabase::from("tls_ca"), OptionValue::String("x".into()))])
        .unwrap_err();
    assert!(err.message.contains("adbc.clickhouse."), "{}", err.message);
}
