//! Server log blocks reach a query's observer. The embedded 26.9 server sends no Log
//! packets (`send_logs_level` has no effect on it), so these bytes come from the fake
//! server: a Log packet (always uncompressed, even when the query's blocks are
//! compressed) with the column layout ClickHouse uses, then EndOfStream.

use crate::common::fake_server;

use std::sync::{Arc, Mutex};

use chnative::{Block, Connection, Observer, Query};
use chnative_proto::wire::WriteExt;
use chnative_testkit::packets::{block, end_of_stream};
use fake_server::FakeServer;

#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<(String, i8)>>>);

impl Observer for Logs {
    fn log(&self, b: &Block) {
        let text = b.column("text").unwrap().view().as_strings().unwrap();
        let prio = b.column("priority").unwrap().view().values::<i8>().unwrap().to_vec();
        let mut out = self.0.lock().unwrap();
        for (i, p) in prio.into_iter().enumerate() {
            out.push((text.str(i).unwrap().to_string(), p));
        }
    }
}

/// A Log packet with the server's log columns (revision 54460: VarUInt-prefixed strings).
fn log_packet(lines: &[(&str, i8)]) -> Vec<u8> {
    let n = lines.len();
    let strings = |f: &dyn Fn(usize) -> String| {
        let mut b = Vec::new();
        for i in 0..n {
            b.put_string(f(i));
        }
        b
    };
    let time: Vec<u8> = (0..n).flat_map(|_| 1_700_000_000u32.to_le_bytes()).collect();
    let micros: Vec<u8> = (0..n).flat_map(|i| (i as u32).to_le_bytes()).collect();
    let thread: Vec<u8> = (0..n).flat_map(|i| (i as u64 + 7).to_le_bytes()).collect();
    let prio: Vec<u8> = lines.iter().map(|l| l.1 as u8).collect();
    let (host, qid, source) =
        (strings(&|_| "fake".into()), strings(&|_| "q1".into()), strings(&|_| "executeQuery".into()));
    let text = strings(&|i| lines[i].0.to_string());
    let body = block(
        54460,
        n as u64,
        &[
            ("event_time", "DateTime", &[0], &time),
            ("event_time_microseconds", "UInt32", &[0], &micros),
            ("host_name", "String", &[0], &host),
            ("query_id", "String", &[0], &qid),
            ("thread_id", "UInt64", &[0], &thread),
            ("priority", "Int8", &[0], &prio),
            ("source", "String", &[0], &source),
            ("text", "String", &[0], &text),
        ],
    );
    let mut p = Vec::new();
    p.put_varuint(10);
    p.put_string("");
    p.extend_from_slice(&body);
    p
}

#[tokio::test]
async fn log_packets_reach_the_observer_uncompressed_either_way() {
    for compression in ["none", "lz4"] {
        let lines = [("Read 1 rows", 6i8), ("Peak memory usage: 1 KiB", 7)];
        let mut reply = log_packet(&lines[..1]);
        reply.extend(log_packet(&lines[1..]));
        reply.extend(end_of_stream());
        let fake = FakeServer::start(54460, compression != "none", reply);
        let mut c = Connection::connect(&fake.url(54460, compression)).await.unwrap();
        let logs = Logs::default();
        c.execute(Query::new("SELECT 1").observer(logs.clone())).await.unwrap();
        assert!(c.is_usable(), "{compression}");
        drop(c);
        fake.finish();
        let got = logs.0.lock().unwrap().clone();
        assert_eq!(got, [("Read 1 rows".to_string(), 6), ("Peak memory usage: 1 KiB".to_string(), 7)], "{compression}");
    }
}
