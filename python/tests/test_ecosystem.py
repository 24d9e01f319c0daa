"""What Python users do with the driver: Polars, pandas, DuckDB, ingest from each, the driver
manager finding the driver by name, parameters, cancel and errors."""

import datetime
import threading
import time
import warnings

import pyarrow as pa
import pytest

import adbc_driver_clickhouse
import adbc_driver_clickhouse.dbapi as dbapi
import adbc_driver_manager
import adbc_driver_manager.dbapi
from conftest import URI, http, query, tsv

MIXED = """SELECT number AS id, toString(number) || 'é' AS s,
                  if(number % 3 = 0, NULL, number / 4) AS f,
                  toDateTime('2024-01-01 00:00:00', 'UTC') + number AS t
           FROM numbers(1000)"""


def expected_mixed():
    rows = [line.split("\t") for line in tsv(MIXED + " ORDER BY id").splitlines()]
    return rows


# --- finding the driver -----------------------------------------------------------------


def test_connect_returns_an_adbc_database(uri):
    db = adbc_driver_clickhouse.connect(uri)
    assert isinstance(db, adbc_driver_manager.AdbcDatabase)
    with adbc_driver_manager.dbapi.Connection(db, adbc_driver_manager.AdbcConnection(db), autocommit=True) as c:
        assert c.adbc_get_info()["vendor_name"] == "ClickHouse"


def test_connect_takes_options_as_keywords():
    host_only = URI.replace("default@", "")
    db = adbc_driver_clickhouse.connect(host_only, username="chn_pw", password="secret",
                                        db_kwargs={adbc_driver_clickhouse.DatabaseOptions.COMPRESSION: "lz4"})
    conn = adbc_driver_manager.dbapi.Connection(db, adbc_driver_manager.AdbcConnection(db), autocommit=True)
    assert query(conn, "SELECT currentUser() AS u").to_pylist() == [{"u": "chn_pw"}]
    conn.close()


def test_dbapi_connect_is_pep249(conn):
    assert dbapi.apilevel == "2.0" and dbapi.threadsafety == 1 and dbapi.paramstyle == "named"
    assert isinstance(conn, dbapi.Connection)
    with conn.cursor() as cur:
        cur.execute("SELECT 1 AS a, 'x' AS b")
        assert [d[0] for d in cur.description] == ["a", "b"]
        assert cur.fetchall() == [(1, "x")]


def test_autocommit_off_warns_and_commit_is_a_noop_or_unsupported(uri):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c = dbapi.connect(uri, autocommit=False)
    assert any("autocommit" in str(x.message).lower() or "transactions" in str(x.message) for x in w), [str(x.message) for x in w]
    c.close()


def test_driver_manager_finds_the_driver_by_name(uri):
    # The wheel's manifest: <venv>/etc/adbc/drivers/clickhouse.toml.
    with adbc_driver_manager.dbapi.connect(driver="clickhouse", uri=uri, autocommit=True) as c:
        assert query(c, "SELECT 7 AS x").to_pylist() == [{"x": 7}]


def test_driver_manager_resolves_a_bare_clickhouse_uri(uri):
    with adbc_driver_manager.dbapi.connect(uri=uri, autocommit=True) as c:
        assert query(c, "SELECT 8 AS x").to_pylist() == [{"x": 8}]


# --- Polars -----------------------------------------------------------------------------


def test_polars_read_database_uri(uri):
    import polars as pl

    df = pl.read_database_uri(MIXED + " ORDER BY id", uri, engine="adbc")
    assert df.shape == (1000, 4)
    assert df.schema["id"] == pl.UInt64 and df.schema["s"] == pl.String and df.schema["f"] == pl.Float64
    assert df.schema["t"] == pl.Datetime("us", "UTC") or df.schema["t"] == pl.Datetime("ms", "UTC") or str(df.schema["t"]).startswith("Datetime")
    want = expected_mixed()
    assert df["s"].to_list() == [r[1] for r in want]
    assert [None if v is None else repr(v) for v in df["f"].to_list()][:5] == [None if r[2] == "\\N" else repr(float(r[2])) for r in want][:5]
    assert df["f"].null_count() == sum(r[2] == "\\N" for r in want)
    assert df["t"].dt.epoch("s").to_list() == [1704067200 + i for i in range(1000)]


def test_polars_read_database_with_a_connection(conn):
    import polars as pl

    df = pl.read_database("SELECT number AS n, toString(number) AS s FROM numbers(100)", connection=conn)
    assert df.shape == (100, 2) and df["n"].sum() == 4950
    # Parameters through Polars' execute_options.
    df = pl.read_database("SELECT {a:UInt32} * 2 AS x", connection=conn, execute_options={"parameters": {"a": 21}})
    assert df["x"].to_list() == [42]


def test_polars_iter_batches(conn):
    import polars as pl

    frames = list(pl.read_database("SELECT number AS n FROM numbers(100000) SETTINGS max_block_size = 10000",
                                   connection=conn, iter_batches=True, batch_size=25000))
    assert sum(f.height for f in frames) == 100000


# --- pandas -----------------------------------------------------------------------------


def test_pandas_read_sql(conn):
    import pandas as pd

    with warnings.catch_warnings():
        # pandas warns that it only tests SQLAlchemy and sqlite3 connections.
        warnings.simplefilter("ignore", UserWarning)
        df = pd.read_sql(MIXED + " ORDER BY id", conn)
    assert list(df.columns) == ["id", "s", "f", "t"] and len(df) == 1000
    want = expected_mixed()
    assert df["s"].tolist() == [r[1] for r in want]
    assert int(df["f"].isna().sum()) == sum(r[2] == "\\N" for r in want)
    assert df["t"].iloc[1] == pd.Timestamp("2024-01-01 00:00:01", tz="UTC")


def test_pandas_fetch_df(conn):
    import pandas as pd

    with conn.cursor() as cur:
        cur.execute(MIXED + " ORDER BY id")
        df = cur.fetch_df()
    assert isinstance(df, pd.DataFrame) and df.shape == (1000, 4)
    assert df["id"].tolist() == list(range(1000))
    assert str(df["id"].dtype) == "uint64"


# --- DuckDB -----------------------------------------------------------------------------


def test_duckdb_reads_a_result_as_an_arrow_stream(conn):
    import duckdb

    with conn.cursor() as cur:
        cur.execute("SELECT number % 10 AS k, number AS v FROM numbers(100000) SETTINGS max_block_size = 7000")
        reader = cur.fetch_record_batch()  # a pyarrow RecordBatchReader over the driver's C stream
        got = duckdb.sql("SELECT k, sum(v) AS s, count(*) AS c FROM reader GROUP BY k ORDER BY k").fetchall()
    want = [tuple(map(int, line.split("\t"))) for line in
            tsv("SELECT number % 10 AS k, sum(number), count() FROM numbers(100000) GROUP BY k ORDER BY k").splitlines()]
    assert got == want


def test_duckdb_reads_a_table(conn):
    import duckdb

    t = query(conn, MIXED)
    got = duckdb.sql("SELECT count(*), count(f), min(s), max(t) FROM t").fetchall()[0]
    assert got[0] == 1000 and got[1] == int(tsv("SELECT count(f) FROM (" + MIXED + ")"))
    assert got[2] == tsv("SELECT min(s) FROM (" + MIXED + ")").strip()


# --- ingest from each frame library -----------------------------------------------------


def test_ingest_from_a_pyarrow_table(conn, table_name):
    name = table_name("pa")
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": pa.array(["a", None, "é"]),
                     "d": pa.array([datetime.date(2020, 1, 1), None, datetime.date(1969, 12, 31)])})
    with conn.cursor() as cur:
        assert cur.adbc_ingest(name, data, mode="create") == 3
    assert tsv(f"SELECT id, s, d FROM {name} ORDER BY id") == "1\ta\t2020-01-01\n2\t\\N\t\\N\n3\té\t1969-12-31\n"


def test_ingest_from_a_polars_dataframe(conn, table_name):
    import polars as pl

    name = table_name("pl")
    df = pl.DataFrame({"id": [1, 2, 3], "s": ["x", "yy", None], "f": [1.5, None, -2.0],
                       "b": [True, False, None]})
    with conn.cursor() as cur:
        assert cur.adbc_ingest(name, df, mode="create") == 3  # through the Arrow C stream interface
    assert tsv(f"SELECT id, s, f, b FROM {name} ORDER BY id") == "1\tx\t1.5\ttrue\n2\tyy\t\\N\tfalse\n3\t\\N\t-2\t\\N\n"
    # And Polars' own writer.
    df.write_database(name, connection=conn, if_table_exists="append", engine="adbc")
    assert tsv(f"SELECT count() FROM {name}") == "6\n"


def test_ingest_from_a_pandas_dataframe(conn, table_name):
    import pandas as pd

    name = table_name("pd")
    df = pd.DataFrame({"id": [1, 2, 3], "s": ["x", None, "z"], "f": [0.25, float("nan"), 3.0],
                       "t": pd.to_datetime(["2024-01-01 00:00:00.123", "2024-01-02", "2024-01-03"], utc=True, format="ISO8601")})
    with conn.cursor() as cur:
        assert cur.adbc_ingest(name, df, mode="create") == 3  # the DataFrame's Arrow C stream
    # NaN from pandas is a null in Arrow (from_pandas), so a NULL in ClickHouse.
    assert tsv(f"SELECT id, s, f, toUnixTimestamp64Milli(t) FROM {name} ORDER BY id") == \
        "1\tx\t0.25\t1704067200123\n2\t\\N\t\\N\t1704153600000\n3\tz\t3\t1704240000000\n"
    # And pandas' own to_sql, through the DB-API connection (adbc_ingest underneath).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        df.to_sql(name, conn, if_exists="append", index=False)
    assert tsv(f"SELECT count() FROM {name}") == "6\n"


# --- parameters -------------------------------------------------------------------------


def test_parameters_positional_named_and_typed(conn):
    assert query(conn, "SELECT {a:UInt32} + 1 AS x, {s:String} AS s, {a:UInt32} * 2 AS y", (41, "h'é\\\t")).to_pylist() == \
        [{"x": 42, "s": "h'é\\\t", "y": 82}]
    assert query(conn, "SELECT {b:String} AS b, {a:Int64} AS a", {"a": -5, "b": "B"}).to_pylist() == [{"b": "B", "a": -5}]
    got = query(conn, "SELECT {d:Date} AS d, {t:DateTime64(6, 'UTC')} AS t, {n:Nullable(Int8)} AS n, {l:Array(Int32)} AS l",
                {"d": datetime.date(2024, 2, 29), "t": datetime.datetime(2024, 1, 1, 12, 0, 0, 5, tzinfo=datetime.timezone.utc),
                 "n": None, "l": [1, 2, 3]}).to_pylist()
    assert got == [{"d": datetime.date(2024, 2, 29),
                    "t": datetime.datetime(2024, 1, 1, 12, 0, 0, 5, tzinfo=datetime.timezone.utc),
                    "n": None, "l": [1, 2, 3]}]


def test_parameters_are_values_not_sql(conn):
    evil = "'); DROP TABLE x; --"
    assert query(conn, "SELECT {s:String} AS s", (evil,)).to_pylist() == [{"s": evil}]


def test_executemany_inserts_each_row(conn, table_name):
    name = table_name("many")
    http(f"CREATE TABLE {name} (a UInt8, s String) ENGINE = Memory")
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {name} VALUES ({{a:UInt8}}, {{s:String}})", [(1, "x"), (2, "y"), (3, "z")])
        assert cur.rowcount == 3
    assert tsv(f"SELECT * FROM {name} ORDER BY a") == "1\tx\n2\ty\n3\tz\n"


# --- cancel -----------------------------------------------------------------------------


def test_cancel_from_another_thread(conn):
    tag = f"pyadbc_cancel_{time.time_ns()}"
    sql = ("SELECT sleepEachRow(0.2), number FROM numbers(1000) "
           f"SETTINGS max_block_size = 1, function_sleep_max_microseconds_per_block = 0, log_comment = '{tag}'")
    running = f"SELECT count() FROM system.processes WHERE query LIKE '%{tag}%' AND query NOT LIKE '%system.processes%'"
    cur = conn.cursor()
    outcome = []
    executed = threading.Event()

    def run():
        try:
            cur.execute(sql)
            executed.set()
            cur.fetch_arrow_table()  # blocks in the result stream until cancelled
            outcome.append(None)
        except Exception as e:  # noqa: BLE001 - the read must end with an error after cancel
            outcome.append(e)
            executed.set()

    # A daemon: if cancel failed, the reader must not keep the interpreter alive at exit.
    th = threading.Thread(target=run, daemon=True)
    th.start()
    # Cancel once execute has returned: the error then ends the result stream.
    assert executed.wait(30) and not outcome, f"execute failed: {outcome}"
    cur.adbc_cancel()
    th.join(30)
    assert not th.is_alive(), "the read did not end within 30 s of cancel"
    # The driver manager asks the driver for the error that ended the stream
    # (ErrorFromArrayStream): a DB-API exception with the ADBC status.
    err = outcome[0]
    assert isinstance(err, dbapi.OperationalError), repr(err)
    assert err.status_code == adbc_driver_manager.AdbcStatusCode.CANCELLED, (err.status_code, err)
    # The server forgets the query.
    deadline = time.monotonic() + 30
    while int(tsv(running)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert int(tsv(running)) == 0, "the query is still running on the server"
    cur.close()
    assert query(conn, "SELECT 1 AS one").to_pylist() == [{"one": 1}]


# --- errors -----------------------------------------------------------------------------


def test_server_errors_carry_the_code_name_and_an_adbc_status(conn):
    with pytest.raises(dbapi.Error) as e:
        query(conn, "SELECT * FROM pyadbc_no_such_table")
    err = e.value
    assert "UNKNOWN_TABLE" in str(err) and "(60)" in str(err), str(err)
    assert err.status_code == adbc_driver_manager.AdbcStatusCode.NOT_FOUND
    # ADBC 1.1 errors carry details (vendor_code holds the marker of that layout).
    assert dict(err.details) == {b"clickhouse.error_code": b"60", b"clickhouse.error_name": b"UNKNOWN_TABLE"}, err.details
    assert isinstance(err, dbapi.ProgrammingError)

    with pytest.raises(dbapi.Error) as e:
        query(conn, "SELECT pyadbc_no_such_column")
    assert "UNKNOWN_IDENTIFIER" in str(e.value) and dict(e.value.details)[b"clickhouse.error_code"] == b"47", str(e.value)
    assert isinstance(e.value, dbapi.ProgrammingError), type(e.value)

    with pytest.raises(dbapi.Error) as e:
        query(conn, "SELEKT 1")
    assert "SYNTAX_ERROR" in str(e.value) and dict(e.value.details)[b"clickhouse.error_name"] == b"SYNTAX_ERROR", str(e.value)
    assert e.value.status_code == adbc_driver_manager.AdbcStatusCode.INVALID_ARGUMENT, e.value.status_code


MID_RESULT_ERROR = "SELECT throwIf(number = 200000, 'boom') AS x FROM numbers(1000000) SETTINGS max_block_size = 1000"


@pytest.mark.parametrize("fetch", ["fetch_arrow_table", "fetch_df", "fetchall"])
def test_an_error_in_the_middle_of_a_result_is_a_dbapi_error(conn, fetch):
    with conn.cursor() as cur:
        cur.execute(MID_RESULT_ERROR)
        with pytest.raises(dbapi.Error) as e:
            getattr(cur, fetch)()
    err = e.value
    assert "boom" in str(err) and "FUNCTION_THROW_IF_VALUE_IS_NON_ZERO" in str(err), str(err)
    assert dict(err.details)[b"clickhouse.error_name"] == b"FUNCTION_THROW_IF_VALUE_IS_NON_ZERO", err.details
    assert err.status_code == adbc_driver_manager.AdbcStatusCode.INTERNAL


def test_an_error_ending_a_raw_pyarrow_reader_names_its_status(conn):
    # fetch_record_batch() hands out pyarrow's own reader (adbc_driver_manager's choice), whose
    # exceptions are pyarrow's: the status and code name are in the text.
    import pyarrow as pa

    with conn.cursor() as cur:
        cur.execute(MID_RESULT_ERROR)
        with pytest.raises(pa.ArrowException) as e:
            for _ in cur.fetch_record_batch():
                pass
    assert "Internal: server error FUNCTION_THROW_IF_VALUE_IS_NON_ZERO (395): boom" in str(e.value), str(e.value)


def test_authentication_error(uri):
    with pytest.raises(dbapi.Error) as e:
        dbapi.connect(URI.replace("default@", ""), username="chn_pw", password="wrong")
    assert e.value.status_code == adbc_driver_manager.AdbcStatusCode.UNAUTHENTICATED, e.value
    assert "AUTHENTICATION_FAILED" in str(e.value) or "password is incorrect" in str(e.value), str(e.value)


def test_unreachable_server_is_an_io_error():
    with pytest.raises(dbapi.Error) as e:
        dbapi.connect("clickhouse://default@127.0.0.1:1/default?connect_timeout=2")
    assert e.value.status_code in (adbc_driver_manager.AdbcStatusCode.IO, adbc_driver_manager.AdbcStatusCode.TIMEOUT), e.value


def test_types_the_driver_refuses_name_the_column_and_the_cast(conn):
    with pytest.raises(dbapi.Error) as e:
        query(conn, "SELECT 1::Dynamic AS x")
    assert "Dynamic" in str(e.value) and "CAST" in str(e.value)
    assert e.value.status_code == adbc_driver_manager.AdbcStatusCode.NOT_IMPLEMENTED
