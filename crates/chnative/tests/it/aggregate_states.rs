//! AggregateFunction states (count, sum, min, max, any) against the real server:
//! each state's bytes are compared with the server's own `hex(state)` and its value
//! with `finalizeAggregation` in the same query, over several blocks and at the
//! oldest and newest revision; a block of states read from a SELECT is inserted
//! unchanged into an AggregatingMergeTree table, whose merged values are read back
//! over HTTP as JSONEachRow.

use crate::common;
use common::*;

use chnative::Query;
use chnative_proto::column::StateValue;

const STATES: &str = "SELECT k, \
    countState() AS c, hex(c) AS c_hex, toString(finalizeAggregation(c)) AS c_val, \
    sumState(v) AS s, hex(s) AS s_hex, toString(finalizeAggregation(s)) AS s_val, \
    minState(toInt32(toInt64(v) - 50)) AS mi, hex(mi) AS mi_hex, toString(finalizeAggregation(mi)) AS mi_val, \
    maxState(toFloat64(v) / 4) AS ma, hex(ma) AS ma_hex, toString(finalizeAggregation(ma)) AS ma_val, \
    anyState(toDate('2020-01-01') + k) AS a, hex(a) AS a_hex, toString(finalizeAggregation(a)) AS a_val, \
    arrayReduce('minState', if(k % 5 = 0, emptyArrayUInt64(), [k])) AS e, hex(e) AS e_hex \
    FROM (SELECT number % 100 AS k, number AS v FROM numbers(1000)) GROUP BY k ORDER BY k";

fn text(v: &chnative::ColumnView<'_>, i: usize) -> String {
    v.as_strings().unwrap().str(i).unwrap().to_string()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// The value inside a state, printed as the server's `toString` prints it.
fn printed(column: &str, value: Option<StateValue<'_>>) -> String {
    let le8 = |b: &[u8]| <[u8; 8]>::try_from(b).unwrap();
    match (column, value) {
        (_, Some(StateValue::Count(n))) => n.to_string(),
        ("s", Some(StateValue::Bytes(b))) => u64::from_le_bytes(le8(b)).to_string(),
        ("mi", Some(StateValue::Bytes(b))) => i32::from_le_bytes(b.try_into().unwrap()).to_string(),
        ("ma", Some(StateValue::Bytes(b))) => f64::from_le_bytes(le8(b)).to_string(),
        (c, v) => panic!("{c}: {v:?}"),
    }
}

/// `YYYY-MM-DD` of a day number, for days in 2020 (all this test makes).
fn chrono_free_date(days: u16) -> String {
    let mut day = u32::from(days - 18262);
    let months = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut month = 0;
    while day >= months[month] {
        day -= months[month];
        month += 1;
    }
    format!("2020-{:02}-{:02}", month + 1, day + 1)
}

#[tokio::test]
async fn states_match_the_server_at_both_layouts() {
    for rev in [REVISIONS[0], REVISIONS[REVISIONS.len() - 1]] {
        let client = client_at(rev, "lz4").await;
        let mut stream = client.fetch_blocks(Query::new(STATES).setting("max_block_size", "7")).await.unwrap();
        let (mut rows, mut blocks) = (0, 0);
        while let Some(block) = stream.next().await.unwrap() {
            blocks += 1;
            let col = |n: &str| block.column(n).unwrap().view();
            let ks = col("k");
            let ks = ks.values::<u8>().unwrap();
            for name in ["c", "s", "mi", "ma", "a", "e"] {
                let view = col(name);
                let states = view.as_aggregate_states().unwrap();
                assert_eq!(states.len(), block.rows());
                let hexes = col(&format!("{name}_hex"));
                for (i, &k) in ks.iter().enumerate() {
                    let ctx = format!("rev {rev}, k {k}, {name}");
                    assert_eq!(hex(states.state(i)), text(&hexes, i), "{ctx}");
                    let value = states.value(i).unwrap();
                    match name {
                        "e" => assert_eq!(value.is_none(), k % 5 == 0, "{ctx}"),
                        "a" => {
                            // A Date's value is its day number: 2020-01-01 is day 18262.
                            let Some(StateValue::Bytes(b)) = value else { panic!("{ctx}: {value:?}") };
                            let days = u16::from_le_bytes(b.try_into().unwrap());
                            assert_eq!(days, 18262 + u16::from(k), "{ctx}");
                            let day = chrono_free_date(days);
                            assert_eq!(day, text(&col("a_val"), i), "{ctx}");
                        }
                        _ => assert_eq!(printed(name, value), text(&col(&format!("{name}_val")), i), "{ctx}"),
                    }
                }
            }
            rows += block.rows();
        }
        assert_eq!(rows, 100, "rev {rev}");
        assert!(blocks > 1, "rev {rev}: one block only");
    }
}

#[tokio::test]
async fn states_read_from_a_select_insert_unchanged() {
    let table = unique_table("agg_states");
    http(&format!(
        "CREATE TABLE {table} (k UInt8, c AggregateFunction(count), s AggregateFunction(sum, UInt64), \
         mi AggregateFunction(min, Int32), ma AggregateFunction(max, Float64), \
         a AggregateFunction(any, Date)) ENGINE = AggregatingMergeTree ORDER BY k"
    ));
    let reader = client().await;
    let writer = client().await;
    let sql = "SELECT k, countState() AS c, sumState(v) AS s, minState(toInt32(toInt64(v) - 50)) AS mi, \
               maxState(toFloat64(v) / 4) AS ma, anyState(toDate('2020-01-01') + k) AS a \
               FROM (SELECT number % 10 AS k, number AS v FROM numbers(1000)) GROUP BY k";
    // Twice: the table merges the two inserts' states per key.
    for _ in 0..2 {
        let mut stream = reader.fetch_blocks(sql).await.unwrap();
        while let Some(block) = stream.next().await.unwrap() {
            writer.insert(&table).block(block).send().await.unwrap();
        }
    }
    let ours = http(&format!(
        "SELECT k, countMerge(c) AS c, sumMerge(s) AS s, minMerge(mi) AS mi, maxMerge(ma) AS ma, anyMerge(a) AS a \
         FROM {table} GROUP BY k ORDER BY k FORMAT JSONEachRow"
    ));
    let expected = http(
        "SELECT k, count() * 2 AS c, sum(v) * 2 AS s, min(toInt32(toInt64(v) - 50)) AS mi, max(toFloat64(v) / 4) AS ma, \
         any(toDate('2020-01-01') + k) AS a FROM (SELECT number % 10 AS k, number AS v FROM numbers(1000)) \
         GROUP BY k ORDER BY k FORMAT JSONEachRow",
    );
    http(&format!("DROP TABLE {table}"));
    assert_eq!(ours, expected);
    assert_eq!(ours.lines().count(), 10);
}

#[tokio::test]
async fn states_without_a_codec_stay_errors_naming_the_type() {
    let client = client().await;
    let res: chnative::Result<()> = async {
        let mut s = client.fetch_blocks("SELECT uniqState(number) AS u FROM numbers(3)").await?;
        while s.next().await?.is_some() {}
        Ok(())
    }
    .await;
    let err = res.unwrap_err();
    assert!(err.to_string().contains("AggregateFunction(uniq, UInt64)"), "{err}");
    let one: u8 = client.fetch_scalar("SELECT 1").await.unwrap();
    assert_eq!(one, 1);
}
