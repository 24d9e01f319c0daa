//! INSERT into Variant and Dynamic columns from the column tier: discriminators
//! plus each alternative's values, in any order and any subset of the column's
//! alternatives, split across blocks; checked against the server's own rendering
//! (`toString`, `variantType`, `dynamicType`).

use crate::common;
use common::*;

use chnative::{fixed, Client, Config, DataType, InsertData};
use chnative_proto::insert::VARIANT_NULL;

fn q(sql: &str) -> String {
    http(&format!("{sql} FORMAT TSVRaw")).trim_end().to_string()
}

struct Table(String);
impl Table {
    fn create(prefix: &str, rest: &str) -> Table {
        let t = Table(unique_table(prefix));
        http(&format!("CREATE TABLE {} {rest}", t.0));
        t
    }
}
impl Drop for Table {
    fn drop(&mut self) {
        let _ = http_try(&format!("DROP TABLE IF EXISTS {} SYNC", self.0));
    }
}

async fn client(revision: u64, compression: &str, block_rows: usize) -> Client {
    let cfg = Config::from_url(&url(&format!("revision={revision}&compression={compression}")))
        .unwrap()
        .insert_block_rows(block_rows);
    Client::connect_with(cfg).await.unwrap()
}

const EXPECTED: &str = "0\t0\ta\tString\tString\n1\t0\t10\tUInt64\tUInt64\n2\t1\t\tNone\tNone\n\
3\t0\tb\tString\tString\n4\t0\t20\tUInt64\tUInt64\n5\t0\tc\tString\tString\n\
6\t0\t[1,2]\tArray(UInt8)\tArray(UInt8)";

#[tokio::test]
async fn variant_and_dynamic_columns_take_discriminated_values() {
    if !common::requires(25, 3, "Variant and Dynamic without allow_experimental_* settings") {
        return;
    }
    let ids: Vec<u32> = (0..7).collect();
    let numbers = [10u64, 20];
    let strs = ["a", "b", "c"];
    let arr_offsets = [2u64];
    let arr_items = [1u8, 2];
    // Our order (UInt64, String, Array) is not the server's (name order); NULL in row 2.
    let discriminators = [1u8, 0, VARIANT_NULL, 1, 0, 1, 2];
    let variants = || {
        vec![
            (DataType::UInt64, fixed(&numbers[..])),
            (DataType::String, InsertData::Strs(&strs)),
            (DataType::parse("Array(UInt8)").unwrap(), InsertData::array(&arr_offsets, &arr_items[..])),
        ]
    };
    for (revision, compression) in [(54460, "lz4"), (54492, "lz4"), (54492, "none"), (54492, "zstd")] {
        // Block sizes 7 (one block), 3 and 1 (each alternative's rows split across blocks).
        for block_rows in [7, 3, 1] {
            let what = format!("{revision}/{compression}/{block_rows} rows per block");
            // The column has one alternative more than the data (the server widens).
            let t = Table::create(
                "ins_variant",
                "(id UInt32, v Variant(String, UInt64, Array(UInt8), Float64), d Dynamic) ENGINE = Memory",
            );
            let c = client(revision, compression, block_rows).await;
            let sum = c
                .insert(&t.0)
                .column("id", &ids[..])
                .column("v", InsertData::variant(&discriminators, variants()))
                .column("d", InsertData::variant(&discriminators, variants()))
                .send()
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(sum.rows, 7, "{what}");
            let got = q(&format!(
                // A NULL's toString differs between versions (ᴺᵁᴸᴸ, NULL or empty): NULLs are
                // compared with isNull.
                "SELECT id, isNull(v) AND isNull(d), if(isNull(v), '', toString(v)), variantType(v), dynamicType(d) \
                 FROM {} WHERE toString(v) = toString(d) OR (isNull(v) AND isNull(d)) ORDER BY id",
                t.0
            ));
            assert_eq!(got, EXPECTED, "{what}");
        }
    }
}

#[tokio::test]
async fn bad_variant_data_is_refused_before_sending() {
    if !common::requires(25, 3, "Variant and Dynamic without allow_experimental_* settings") {
        return;
    }
    let t = Table::create("ins_variant_bad", "(v Variant(String, UInt64)) ENGINE = Memory");
    let c = client(54492, "lz4", 1000).await;
    let numbers = [1u64, 2];
    // An alternative the column does not have.
    let floats = [1.5f64];
    let err = c
        .insert(&t.0)
        .column("v", InsertData::variant(&[0], vec![(DataType::Float64, fixed(&floats[..]))]))
        .send()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Float64 is not one of the column's alternatives"), "{err}");
    // A discriminator past the alternatives.
    let err = c
        .insert(&t.0)
        .column("v", InsertData::variant(&[0, 3], vec![(DataType::UInt64, fixed(&numbers[..]))]))
        .send()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("row 1 names alternative 3"), "{err}");
    // Counts that do not match the values.
    let err = c
        .insert(&t.0)
        .column("v", InsertData::variant(&[0], vec![(DataType::UInt64, fixed(&numbers[..]))]))
        .send()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("1 rows choose the UInt64 alternative, it has 2 values"), "{err}");
    // Values that do not fit their alternative's type.
    let err = c
        .insert(&t.0)
        .column("v", InsertData::variant(&[0, 0], vec![(DataType::String, fixed(&numbers[..]))]))
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err.kind(), chnative::ErrorKind::Protocol | chnative::ErrorKind::TypeMismatch), "{err:?}");
    assert_eq!(q(&format!("SELECT count() FROM {}", t.0)), "0");
    // The connection is still good.
    assert_eq!(c.fetch_scalar::<u8>("SELECT 1").await.unwrap(), 1);
}
