"""The chnative ADBC driver driven from Python's ADBC driver manager (a client no
one here wrote), with values compared to the server's own HTTP `FORMAT Arrow`
output read by pyarrow. Run by tests/python.rs; plain asserts, no pytest.

Environment: CHNATIVE_ADBC_DRIVER (the shared library), CHNATIVE_TCP_PORT,
CHNATIVE_HTTP_PORT.
"""

import os
import threading
import time
import urllib.parse
import urllib.request
import warnings

import adbc_driver_manager
import adbc_driver_manager.dbapi as dbapi
import pyarrow as pa
import pyarrow.ipc

DRIVER = os.environ["CHNATIVE_ADBC_DRIVER"]
TCP = int(os.environ.get("CHNATIVE_TCP_PORT", "19000"))
HTTP = int(os.environ.get("CHNATIVE_HTTP_PORT", "18123"))
URI = f"clickhouse://default@127.0.0.1:{TCP}/default"
PREFIX = "adbc_py_"

passed = []


def test(fn):
    fn()
    passed.append(fn.__name__)
    print(f"ok {fn.__name__}", flush=True)
    return fn


def http(sql, fmt=None):
    body = sql if fmt is None else f"{sql} FORMAT {fmt}"
    req = urllib.request.Request(f"http://127.0.0.1:{HTTP}/", data=body.encode(), method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def server_arrow(sql):
    """The server's own Arrow rendering of a query."""
    return pa.ipc.open_file(pa.py_buffer(http(sql, "Arrow"))).read_all()


def connect(**kw):
    return dbapi.connect(driver=DRIVER, db_kwargs={"uri": URI, **kw}, autocommit=True)


def query(conn, sql, parameters=None):
    with conn.cursor() as cur:
        cur.execute(sql, parameters)
        return cur.fetch_arrow_table()


conn = connect()

# Types whose Arrow form the server's own output shares: the values must be equal.
SAME_AS_SERVER = """
SELECT number AS id,
       toInt8(number * 37) AS i8, toUInt64(number * 922337203685477580) AS u64,
       toFloat64(number) / 3 AS f64, toString(number) || 'é' AS s,
       toDate('2020-01-01') + number AS d, toDate32('1950-01-01') + number * 999 AS d32,
       toDecimal64((toInt64(number) - 5) / 7, 4) AS dec,
       toDateTime64('2024-01-01 00:00:00.123', 3, 'Asia/Tokyo') + toIntervalSecond(number) AS t64,
       toUUID(concat('550e8400-e29b-41d4-a716-', leftPad(toString(number), 12, '0'))) AS u,
       toIPv4(toUInt32(number * 16909060)) AS ip4,
       range(number % 4) AS arr, map('k', number) AS m, (number, toString(number)) AS tup,
       if(number % 2 = 0, NULL, number) AS n
FROM numbers(25)
"""


@test
def query_values_equal_server_arrow():
    ours = query(conn, SAME_AS_SERVER)
    theirs = server_arrow(SAME_AS_SERVER)
    assert ours.num_rows == 25
    for name in theirs.column_names:
        a, b = ours.column(name).combine_chunks(), theirs.column(name).combine_chunks()
        a, b = (x.storage if hasattr(x, "storage") else x for x in (a, b))
        assert a.to_pylist() == b.to_pylist(), (name, a.to_pylist()[:5], b.to_pylist()[:5])
    # The types the mapping documents.
    schema = ours.schema
    assert schema.field("t64").type == pa.timestamp("ms", tz="Asia/Tokyo"), schema.field("t64").type
    assert schema.field("dec").type == pa.decimal128(18, 4)
    assert schema.field("d").type == pa.date32()
    assert schema.field("n").nullable and not schema.field("id").nullable
    assert getattr(schema.field("u").type, "extension_name", None) == "arrow.uuid", schema.field("u")


@test
def types_the_server_renders_differently():
    ours = query(conn, """SELECT toDateTime('2024-03-01 10:00:00', 'Europe/Berlin') + number AS dt,
                                 CAST(['a','b'][number % 2 + 1] AS Enum8('a' = -1, 'b' = 5)) AS e,
                                 toLowCardinality(toString(number % 3)) AS lc
                          FROM numbers(6)""")
    theirs = server_arrow("""SELECT toUnixTimestamp(toDateTime('2024-03-01 10:00:00', 'Europe/Berlin') + number) AS dt,
                                    toString(CAST(['a','b'][number % 2 + 1] AS Enum8('a' = -1, 'b' = 5))) AS e,
                                    toString(number % 3) AS lc
                             FROM numbers(6)""")
    assert ours.schema.field("dt").type == pa.timestamp("s", tz="Europe/Berlin")
    assert ours.column("dt").cast(pa.int64()).to_pylist() == theirs.column("dt").cast(pa.int64()).to_pylist()
    assert pa.types.is_dictionary(ours.schema.field("e").type)
    assert ours.column("e").cast(pa.string()).to_pylist() == theirs.column("e").to_pylist()
    assert ours.column("lc").cast(pa.string()).to_pylist() == theirs.column("lc").to_pylist()


@test
def parameters_positional_and_named():
    t = query(conn, "SELECT {a:UInt32} + 1 AS x, {s:String} AS s, {a:UInt32} * 2 AS y", (41, "h'é\\\t"))
    assert t.to_pylist() == [{"x": 42, "s": "h'é\\\t", "y": 82}], t.to_pylist()
    with conn.cursor() as cur:
        cur.adbc_statement.set_sql_query("SELECT {n:Nullable(Int64)} AS n, {d:Date32} AS d")
        cur.adbc_statement.bind(pa.record_batch({"d": pa.array([19000], pa.date32()), "n": pa.array([None], pa.int64())}))
        stream, _ = cur.adbc_statement.execute_query()
        got = pa.RecordBatchReader._import_from_c(stream.address).read_all().to_pylist()
    import datetime
    assert got == [{"n": None, "d": datetime.date(2022, 1, 8)}], got
    with conn.cursor() as cur:
        cur.adbc_statement.set_sql_query("SELECT {n:Nullable(Int64)} AS n, {d:Date32} AS d, {n:Nullable(Int64)}")
        handle = cur.adbc_statement.get_parameter_schema()
        schema = pa.schema(handle)
        assert schema.names == ["n", "d"] and schema.field("n").type == pa.int64() and schema.field("n").nullable
        assert schema.field("d").type == pa.date32()


@test
def ddl_and_inserts_through_execute():
    name = PREFIX + "ddl"
    with conn.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {name}")
        cur.execute(f"CREATE TABLE {name} (a UInt8, s String) ENGINE = Memory")
        cur.execute(f"INSERT INTO {name} VALUES ({{a:UInt8}}, {{s:String}})", (1, "x"))
        cur.executemany(f"INSERT INTO {name} VALUES ({{a:UInt8}}, {{s:String}})", [(2, "y"), (3, "z")])
        assert cur.rowcount == 2, cur.rowcount
        # The next query binds nothing: the parameters of the last one are gone.
        cur.execute(f"SELECT * FROM {name} ORDER BY a")
        assert cur.fetchall() == [(1, "x"), (2, "y"), (3, "z")]
        cur.execute(f"DROP TABLE {name}")


@test
def ingest_modes_round_trip():
    name = PREFIX + "ingest"
    http(f"DROP TABLE IF EXISTS {name}")
    data = pa.table({
        "id": pa.array([1, 2, 3], pa.int64()),
        "s": pa.array(["a", None, "ccc"], pa.string()),
        "ts": pa.array([0, 1_700_000_000_123_456, -5], pa.timestamp("us", tz="UTC")),
        "l": pa.array([[1.5], [], [None, 2.0]], pa.list_(pa.float64())),
        "dec": pa.array([1, 2, 3], pa.decimal128(10, 2)),
    })
    with conn.cursor() as cur:
        assert cur.adbc_ingest(name, data, mode="create") == 3
        try:
            cur.adbc_ingest(name, data, mode="create")
            raise AssertionError("create on an existing table must fail")
        except dbapi.Error as e:
            assert "already exists" in str(e).lower() or "ALREADY_EXISTS" in str(e), e
        assert cur.adbc_ingest(name, data, mode="append") == 3
        assert int(http(f"SELECT count() FROM {name}")) == 6
        assert cur.adbc_ingest(name, data.slice(0, 1), mode="replace") == 1
        assert int(http(f"SELECT count() FROM {name}")) == 1
        assert cur.adbc_ingest(name, data, mode="create_append") == 3
        assert int(http(f"SELECT count() FROM {name}")) == 4
    created = http(f"SELECT name, type FROM system.columns WHERE table = '{name}' ORDER BY position", "TSV").decode()
    # pyarrow's fields are nullable unless said otherwise: Nullable columns.
    assert created == ("id\tNullable(Int64)\ns\tNullable(String)\nts\tNullable(DateTime64(6, \\'UTC\\'))\n"
                       "l\tArray(Nullable(Float64))\ndec\tNullable(Decimal(10, 2))\n"), created
    back = query(conn, f"SELECT * FROM {name} WHERE id > 0 ORDER BY id, ts SETTINGS max_threads = 1")
    want = pa.concat_tables([data.slice(0, 1), data]).sort_by([("id", "ascending"), ("ts", "ascending")])
    assert back.column("l").to_pylist() == want.column("l").to_pylist()
    assert back.column("s").to_pylist() == want.column("s").to_pylist()
    assert back.column("ts").cast(pa.int64()).to_pylist() == want.column("ts").cast(pa.int64()).to_pylist()
    assert back.column("dec").to_pylist() == want.column("dec").to_pylist()
    # Server-side rendering of what was ingested.
    tsv = http(f"SELECT id, s, ts, l, dec FROM {name} ORDER BY id, ts FORMAT TSV").decode()
    assert tsv.splitlines()[0] == "1\ta\t1970-01-01 00:00:00.000000\t[1.5]\t1", tsv


@test
def ingest_refuses_bad_data_before_sending():
    name = PREFIX + "refuse"
    http(f"DROP TABLE IF EXISTS {name}")
    http(f"CREATE TABLE {name} (id UInt8) ENGINE = Memory")
    with conn.cursor() as cur:
        try:
            cur.adbc_ingest(name, pa.table({"id": pa.array(["x"])}), mode="append")
            raise AssertionError("a string into UInt8 must fail")
        except dbapi.Error as e:
            assert "UInt8" in str(e), e
    assert int(http(f"SELECT count() FROM {name}")) == 0


@test
def catalog_calls():
    name = PREFIX + "objects"
    http(f"DROP TABLE IF EXISTS {name}")
    http(f"CREATE TABLE {name} (id UInt64, s Nullable(String) COMMENT 'the s') ENGINE = MergeTree ORDER BY id")
    objs = conn.adbc_get_objects(depth="all", catalog_filter="default", table_name_filter=PREFIX + "obj%").read_all().to_pylist()
    assert [o["catalog_name"] for o in objs] == ["default"], objs
    schemas = objs[0]["catalog_db_schemas"]
    assert len(schemas) == 1 and schemas[0]["db_schema_name"] == ""
    tables = schemas[0]["db_schema_tables"]
    assert [t["table_name"] for t in tables] == [name] and tables[0]["table_type"] == "TABLE", tables
    cols = tables[0]["table_columns"]
    assert [(c["column_name"], c["ordinal_position"], c["xdbc_type_name"], c["xdbc_is_nullable"]) for c in cols] == \
        [("id", 1, "UInt64", "NO"), ("s", 2, "Nullable(String)", "YES")], cols
    assert cols[1]["remarks"] == "the s"
    # Catalogs only: every database, no schemas.
    cats = conn.adbc_get_objects(depth="catalogs").read_all().to_pylist()
    names = [c["catalog_name"] for c in cats]
    assert "default" in names and "system" in names and all(c["catalog_db_schemas"] is None for c in cats)
    schema = conn.adbc_get_table_schema(name, catalog_filter="default")
    assert schema.field("id").type == pa.uint64() and schema.field("s").type == pa.string() and schema.field("s").nullable
    assert schema.field("id").metadata[b"clickhouse.type"] == b"UInt64"
    assert conn.adbc_get_table_types() == ["TABLE", "VIEW", "MATERIALIZED VIEW", "DICTIONARY"]
    info = conn.adbc_get_info()
    assert info["vendor_name"] == "ClickHouse" and info["vendor_version"].startswith("26."), info
    assert conn.adbc_current_catalog == "default"


@test
def transactions_are_autocommit_only():
    # DB-API's default (autocommit off) cannot be had: the manager warns and goes on.
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        c = dbapi.connect(driver=DRIVER, db_kwargs={"uri": URI})
    try:
        c.commit()
    except dbapi.NotSupportedError:
        pass
    c.close()
    try:
        conn.adbc_connection.set_autocommit(False)
        raise AssertionError("autocommit cannot be turned off")
    except adbc_driver_manager.NotSupportedError as e:
        assert "transactions" in str(e), e


@test
def cancel_stops_the_server_query():
    sql = ("SELECT sleepEachRow(0.2), number FROM numbers(1000) "
           "SETTINGS max_block_size = 1, function_sleep_max_microseconds_per_block = 0, log_comment = 'adbc_py_cancel'")
    cur = conn.cursor()
    errors = []
    started = threading.Event()

    def run():
        try:
            cur.execute(sql)
            reader = cur.fetch_record_batch()
            started.set()
            for _ in reader:
                pass
            errors.append(None)
        except Exception as e:  # the reader must end with an error after cancel
            errors.append(e)
            started.set()

    th = threading.Thread(target=run)
    th.start()
    assert started.wait(20)
    time.sleep(0.5)
    cur.adbc_cancel()
    th.join(20)
    assert not th.is_alive(), "the reader did not end within 20 s of cancel"
    assert errors and errors[0] is not None, f"reading a cancelled query must fail: {errors}"
    deadline = time.time() + 10
    while time.time() < deadline:
        n = int(http("SELECT count() FROM system.processes WHERE query LIKE '%adbc_py_cancel%' AND query NOT LIKE '%system.processes%'"))
        if n == 0:
            break
        time.sleep(0.1)
    assert n == 0, "the query is still running on the server"
    cur.close()
    assert query(conn, "SELECT 1 AS one").to_pylist() == [{"one": 1}]


@test
def partitions():
    with conn.cursor() as cur:
        parts, schema = cur.adbc_execute_partitions("SELECT number AS n, {p:String} AS p FROM numbers(7)", ("x",))
        assert len(parts) == 1
        assert schema.field("n").type == pa.uint64() and schema.field("p").type == pa.string()
        cur.adbc_read_partition(parts[0])
        t = cur.fetch_arrow_table()
    assert t.column("n").to_pylist() == list(range(7)) and set(t.column("p").to_pylist()) == {"x"}
    # A partition is read on another connection too.
    other = connect()
    with other.cursor() as cur:
        cur.adbc_read_partition(parts[0])
        assert cur.fetch_arrow_table().num_rows == 7
    other.close()


@test
def errors_are_reported():
    try:
        query(conn, "SELECT no_such_column")
        raise AssertionError("must fail")
    except dbapi.Error as e:
        assert "no_such_column" in str(e), e
    try:
        query(conn, "SELECT 1::Dynamic AS x")
        raise AssertionError("must fail")
    except dbapi.Error as e:
        assert "Dynamic" in str(e) and "CAST" in str(e), e
    try:
        dbapi.connect(driver=DRIVER, db_kwargs={"uri": URI, "password": "wrong", "username": "chn_pw"}, autocommit=True)
        raise AssertionError("a wrong password must fail")
    except dbapi.Error as e:
        assert "UNAUTHENTICATED" in str(e) and "password is incorrect" in str(e), e


@test
def options_username_password_and_passthrough():
    c = dbapi.connect(driver=DRIVER, db_kwargs={"uri": f"clickhouse://127.0.0.1:{TCP}/default", "username": "chn_pw",
                                                "password": "secret", "adbc.clickhouse.compression": "lz4"},
                      autocommit=True)
    assert query(c, "SELECT currentUser() AS u").to_pylist() == [{"u": "chn_pw"}]
    c.close()


@test
def polars_and_duckdb_read_through_the_driver():
    import polars as pl
    df = pl.read_database("SELECT number AS n, toString(number) AS s FROM numbers(100)", connection=conn)
    assert df.shape == (100, 2) and df["n"].sum() == 4950, df
    import duckdb
    t = query(conn, "SELECT number % 10 AS k, number AS v FROM numbers(1000)")
    got = duckdb.sql("SELECT k, sum(v) AS s FROM t GROUP BY k ORDER BY k").fetchall()
    want = [tuple(map(int, line.split("\t"))) for line in
            http("SELECT number % 10 AS k, sum(number) FROM numbers(1000) GROUP BY k ORDER BY k", "TSV").decode().split("\n") if line]
    assert got == want, (got, want)


for t in [PREFIX + "ingest", PREFIX + "refuse", PREFIX + "objects"]:
    http(f"DROP TABLE IF EXISTS {t}")
conn.close()
print(f"{len(passed)} passed, 0 failed")
