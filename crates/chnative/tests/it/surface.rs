//! The one query surface (issue 16, part 4): every call of [`Executor`] on
//! the three receivers (pooled `Client`, `Session`, `Connection`) through one
//! generic test function; a pooled client's streams and inserters moving into
//! spawned tasks after the client is dropped; row inserts with settings and a
//! deduplication token.

use crate::common;

use chnative::{Client, Connection, Executor, IntoInsertData, Row, Value, ValueRow};
use common::{q, url, Table};

#[derive(Row, Debug, Clone, PartialEq)]
struct Ev {
    id: u64,
    name: String,
}

fn ev(id: u64) -> Ev {
    Ev { id, name: format!("n{id}") }
}

/// Every call of the surface, on any receiver. Each write adds the rows whose
/// ids come next; the reads then compare with the server's own rendering.
async fn every_call(db: &mut impl Executor, who: &str) {
    let t = Table::create(&format!("surface_{who}"), "(id UInt64, name String) ENGINE = MergeTree ORDER BY id");

    db.ping().await.unwrap();
    db.execute(format!("INSERT INTO {} VALUES (0, 'n0')", &*t)).await.unwrap();

    let (ids, names) = (vec![1u64, 2], vec!["n1".to_string(), "n2".to_string()]);
    let s = db.insert(&t).column("id", &ids).column("name", &names).send().await.unwrap();
    assert_eq!(s.rows, 2);

    let mut blocks = db.insert_blocks(&t).await.unwrap();
    let (id3, name3) = (vec![3u64], vec!["n3".to_string()]);
    blocks.write_columns(&[("id", (&id3).into_insert_data()), ("name", (&name3).into_insert_data())]).await.unwrap();
    assert_eq!(blocks.end().await.unwrap().rows, 1);

    let s = db.insert_rows(&t, &[ev(4)]).setting("max_threads", "1").await.unwrap();
    assert_eq!(s.rows, 1);

    let names5: std::sync::Arc<[String]> = vec!["id".to_string(), "name".to_string()].into();
    let row5 = ValueRow::new(names5, vec![Value::UInt64(5), Value::String(b"n5".to_vec())]).unwrap();
    assert_eq!(db.insert_values(&t, &[row5]).await.unwrap().rows, 1);

    let mut ins = db.inserter::<Ev>(&t).await.unwrap();
    ins.write(&ev(6)).await.unwrap();
    assert_eq!(ins.end().await.unwrap().rows, 1);

    // Reads, checked against the server's rendering over HTTP.
    let sql = format!("SELECT id, name FROM {} ORDER BY id", &*t);
    let want = q(&format!("SELECT arrayStringConcat(groupArray(concat(toString(id), ':', name)), ',') FROM ({sql})"));
    let render = |rows: &[Ev]| rows.iter().map(|r| format!("{}:{}", r.id, r.name)).collect::<Vec<_>>().join(",");
    assert_eq!(want, (0..7).map(|i| format!("{i}:n{i}")).collect::<Vec<_>>().join(","));

    assert_eq!(db.fetch_scalar::<u64>(format!("SELECT count() FROM {}", &*t)).await.unwrap(), 7);

    let all: Vec<Ev> = db.fetch_all(sql.as_str()).await.unwrap();
    assert_eq!(render(&all), want);

    let one: Ev = db.fetch_one(format!("SELECT id, name FROM {} WHERE id = 3", &*t)).await.unwrap();
    assert_eq!(one, ev(3));
    let none: Option<Ev> = db.fetch_optional(format!("SELECT id, name FROM {} WHERE id = 99", &*t)).await.unwrap();
    assert_eq!(none, None);
    let err = db.fetch_one::<Ev>(format!("SELECT id, name FROM {} WHERE id = 99", &*t)).await.unwrap_err();
    assert!(err.to_string().contains("no rows"), "{err}");

    let mut rows = db.fetch::<Ev>(sql.as_str()).await.unwrap();
    let mut streamed = Vec::new();
    while let Some(r) = rows.next().await.unwrap() {
        streamed.push(r);
    }
    drop(rows);
    assert_eq!(render(&streamed), want);

    let mut stream = db.fetch_blocks(sql.as_str()).await.unwrap();
    let mut seen = Vec::new();
    while let Some(block) = stream.next().await.unwrap() {
        let ids: &[u64] = block.column("id").unwrap().view().values().unwrap();
        let names = block.column("name").unwrap().view().as_strings().unwrap();
        for (i, id) in ids.iter().enumerate() {
            seen.push(format!("{id}:{}", names.str(i).unwrap()));
        }
    }
    drop(stream);
    assert_eq!(seen.join(","), want);

    let mut values = db.fetch_values(sql.as_str()).await.unwrap();
    let mut dynamic = Vec::new();
    while let Some(r) = values.next().await.unwrap() {
        dynamic.push(format!("{}:{}", r["id"], r["name"]));
    }
    drop(values);
    assert_eq!(dynamic.join(","), want);

    let all = db.fetch_all_values(sql.as_str()).await.unwrap();
    assert_eq!(all.iter().map(|r| format!("{}:{}", r[0], r[1])).collect::<Vec<_>>().join(","), want);
}

#[tokio::test]
async fn every_call_on_a_pooled_client() {
    let mut client = common::client().await;
    every_call(&mut client, "client").await;
}

#[tokio::test]
async fn every_call_on_a_session() {
    let client = common::client().await;
    let mut session = client.session().await.unwrap();
    every_call(&mut session, "session").await;
}

#[tokio::test]
async fn every_call_on_a_connection() {
    let mut conn = Connection::connect(&url("")).await.unwrap();
    every_call(&mut conn, "connection").await;
}

fn owned<T: Send + 'static>(t: T) -> T {
    t
}

/// A pooled client's stream, typed-row stream and inserter own their
/// connections: they move into spawned tasks and outlive the client.
#[tokio::test]
async fn pooled_streams_and_inserters_outlive_the_client() {
    let t = Table::create("surface_owned", "(id UInt64, name String) ENGINE = MergeTree ORDER BY id");
    let client = Client::connect(&url("pool_max_size=4")).await.unwrap();
    let blocks = owned(client.fetch_blocks("SELECT number FROM numbers(100000)").await.unwrap());
    let rows = owned(client.fetch::<u64>("SELECT number FROM numbers(1000)").await.unwrap());
    let values = owned(client.fetch_values("SELECT number FROM numbers(10)").await.unwrap());
    let inserter = owned(client.inserter::<Ev>(&t).await.unwrap().max_rows(100));
    let insert = owned(client.insert(&t));
    let rows_insert = owned(client.insert_rows(&t, &[] as &[Ev]));
    drop((insert, rows_insert));
    drop(client);

    let mut blocks = blocks;
    let read = tokio::spawn(async move {
        let mut n = 0;
        while let Some(b) = blocks.next().await? {
            n += b.rows();
        }
        chnative::Result::<usize>::Ok(n)
    });
    let mut rows = rows;
    let typed = tokio::spawn(async move {
        let mut sum = 0u64;
        while let Some(r) = rows.next().await? {
            sum += r;
        }
        chnative::Result::<u64>::Ok(sum)
    });
    let mut values = values;
    let dynamic = tokio::spawn(async move {
        let mut n = 0u64;
        while values.next().await?.is_some() {
            n += 1;
        }
        chnative::Result::<u64>::Ok(n)
    });
    let mut inserter = inserter;
    let write = tokio::spawn(async move {
        for id in 0..1000 {
            inserter.write(&ev(id)).await?;
        }
        inserter.end().await
    });
    assert_eq!(read.await.unwrap().unwrap(), 100_000);
    assert_eq!(typed.await.unwrap().unwrap(), 999 * 1000 / 2);
    assert_eq!(dynamic.await.unwrap().unwrap(), 10);
    let s = write.await.unwrap().unwrap();
    assert_eq!((s.rows, s.blocks), (1000, 10));
    assert_eq!(t.count(), 1000);
    assert_eq!(q(&format!("SELECT sum(id) FROM {}", &*t)), (999 * 1000 / 2).to_string());
}

const DEDUP: &str =
    "(id UInt64, name String) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100";

/// A retried row INSERT with the same deduplication token lands once; another
/// token lands again; a setting (`deduplicate_insert = disable`) reaches the server.
async fn dedup(db: &mut impl Executor, who: &str) {
    let t = Table::create(&format!("surface_dedup_{who}"), DEDUP);
    let rows = [ev(1), ev(2)];
    for _ in 0..2 {
        let s = db.insert_rows(&t, &rows).deduplication_token("tok-a").query_id(format!("surface-{who}")).await;
        assert_eq!(s.unwrap().rows, 2);
    }
    assert_eq!(t.count(), 2, "{who}: the retry with the same token was stored again");
    db.insert_rows(&t, &rows).deduplication_token("tok-b").await.unwrap();
    assert_eq!(t.count(), 4, "{who}: another token must be stored");
    // deduplicate_insert is from 26.2; before, insert_deduplicate = 0 turns deduplication off.
    let (name, off) =
        if common::version() >= (26, 2, 0) { ("deduplicate_insert", "disable") } else { ("insert_deduplicate", "0") };
    db.insert_rows(&t, &rows).deduplication_token("tok-a").setting(name, off).await.unwrap();
    assert_eq!(t.count(), 6, "{who}: {name} = {off} did not reach the server");

    let names: std::sync::Arc<[String]> = vec!["id".to_string(), "name".to_string()].into();
    let v = [ValueRow::new(names, vec![Value::UInt64(9), Value::String(b"n9".to_vec())]).unwrap()];
    for _ in 0..2 {
        db.insert_values(&t, &v).deduplication_token("tok-v").await.unwrap();
    }
    assert_eq!(t.count(), 7, "{who}: the dynamic retry with the same token was stored again");
    db.insert_values(&t, &v).deduplication_token("tok-v").setting(name, off).await.unwrap();
    assert_eq!(t.count(), 8, "{who}: {name} = {off} did not reach the server (dynamic rows)");

    // A bad setting name is refused before anything is sent.
    let err = db.insert_rows(&t, &rows).setting("", "1").await.unwrap_err();
    assert_eq!(err.kind(), chnative::ErrorKind::InvalidInput, "{err}");
    assert_eq!(t.count(), 8);
}

#[tokio::test]
async fn row_inserts_take_a_deduplication_token_and_settings() {
    let client = common::client().await;
    dedup(&mut client.clone(), "client").await;
    dedup(&mut client.session().await.unwrap(), "session").await;
    dedup(&mut Connection::connect(&url("")).await.unwrap(), "connection").await;
}

/// Generic code over the trait can be spawned (its futures are `Send`).
#[tokio::test]
async fn generic_code_is_send() {
    async fn count(mut db: impl Executor + 'static) -> chnative::Result<u64> {
        db.fetch_scalar::<u64>("SELECT count() FROM numbers(5)").await
    }
    let client = common::client().await;
    let session = client.session().await.unwrap();
    let conn = Connection::connect(&url("")).await.unwrap();
    let a = tokio::spawn(count(client));
    let b = tokio::spawn(count(session));
    let c = tokio::spawn(count(conn));
    for h in [a, b, c] {
        assert_eq!(h.await.unwrap().unwrap(), 5);
    }
}
