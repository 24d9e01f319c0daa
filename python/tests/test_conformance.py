"""Conformance, in the categories of ADBC's own driver validation suite (adbc-drivers/validation):
connection options, get_info, get_objects, get_table_schema, get_table_types, statements,
bound parameters, ingest, types, cancel and partitions. Values are compared with the server's
own rendering (HTTP `FORMAT Arrow`, TSV, toString)."""

import datetime
import decimal
import os
import threading
import time

import pyarrow as pa
import pytest

import adbc_driver_clickhouse
import adbc_driver_clickhouse.dbapi as dbapi
import adbc_driver_manager
from conftest import URI, http, query, server_arrow, tsv

S = adbc_driver_manager.AdbcStatusCode


# --- connection options -----------------------------------------------------------------


class TestConnectionOptions:
    def test_uri_database_is_the_current_catalog(self, conn):
        assert conn.adbc_current_catalog == "default"
        assert conn.adbc_current_db_schema == ""

    def test_uri_with_another_database(self, table_name):
        with dbapi.connect(URI.rsplit("/", 1)[0] + "/system") as c:
            assert c.adbc_current_catalog == "system"
            assert query(c, "SELECT currentDatabase() AS d").to_pylist() == [{"d": "system"}]

    def test_set_current_catalog(self, uri):
        with dbapi.connect(uri) as c:
            c.adbc_current_catalog = "system"
            assert c.adbc_current_catalog == "system"
            assert query(c, "SELECT count() > 0 AS x FROM one").to_pylist() == [{"x": True}]

    def test_username_and_password_options(self):
        with dbapi.connect(URI.replace("default@", ""), username="chn_pw", password="secret") as c:
            assert query(c, "SELECT currentUser() AS u").to_pylist() == [{"u": "chn_pw"}]

    def test_connection_string_options_pass_through(self):
        db_kwargs = {"adbc.clickhouse.compression": "lz4", "adbc.clickhouse.set_max_threads": "3"}
        with dbapi.connect(URI, db_kwargs=db_kwargs) as c:
            assert query(c, "SELECT getSetting('max_threads') AS m").to_pylist() == [{"m": 3}]

    def test_settings_in_the_uri(self):
        with dbapi.connect(URI + "?set_max_threads=2") as c:
            assert query(c, "SELECT getSetting('max_threads') AS m").to_pylist() == [{"m": 2}]

    def test_unknown_option_is_refused(self):
        with pytest.raises(dbapi.Error) as e:
            dbapi.connect(URI, db_kwargs={"adbc.clickhouse.no_such_option": "1"})
        assert e.value.status_code in (S.INVALID_ARGUMENT, S.NOT_IMPLEMENTED), e.value

    def test_bad_uri_is_refused(self):
        with pytest.raises(dbapi.Error) as e:
            dbapi.connect("clickhouse://127.0.0.1:notaport/default")
        assert e.value.status_code == S.INVALID_ARGUMENT, e.value

    def test_autocommit_is_always_on(self, conn):
        with pytest.raises(adbc_driver_manager.NotSupportedError):
            conn.adbc_connection.set_autocommit(False)
        conn.commit()  # autocommit: nothing to do
        with pytest.raises(adbc_driver_manager.NotSupportedError):
            conn.adbc_connection.rollback()


# --- get_info ---------------------------------------------------------------------------


class TestGetInfo:
    def test_vendor_and_driver(self, conn):
        info = conn.adbc_get_info()
        assert info["vendor_name"] == "ClickHouse"
        # The version the server sends in its Hello (major.minor.patch; version() adds the build).
        assert tsv("SELECT version()").strip().startswith(info["vendor_version"]), info
        assert "chnative" in info["driver_name"].lower() or "clickhouse" in info["driver_name"].lower(), info
        assert info["driver_version"], info
        assert info["driver_arrow_version"], info
        assert info["driver_adbc_version"] in (1_000_000, 1_001_000), info

    def test_info_codes_filter(self, conn):
        handle = conn.adbc_connection.get_info([0])  # VENDOR_NAME only
        table = pa.RecordBatchReader._import_from_c(handle.address).read_all()
        assert table.column("info_name").to_pylist() == [0]


# --- get_objects ------------------------------------------------------------------------


@pytest.fixture
def objects(table_name):
    t1, t2 = table_name("objs_a"), table_name("objs_b")
    v = table_name("objs_v")
    http(f"CREATE TABLE {t1} (id UInt64, s Nullable(String) COMMENT 'the s') ENGINE = MergeTree ORDER BY id")
    http(f"CREATE TABLE {t2} (x Int8) ENGINE = Memory")
    http(f"CREATE VIEW {v} AS SELECT 1 AS one")
    return t1, t2, v


def tables_of(conn, **kw):
    objs = conn.adbc_get_objects(**kw).read_all().to_pylist()
    return {t["table_name"]: t for o in objs for s in (o["catalog_db_schemas"] or []) for t in (s["db_schema_tables"] or [])}


class TestGetObjects:
    def test_depth_catalogs(self, conn):
        cats = conn.adbc_get_objects(depth="catalogs").read_all().to_pylist()
        names = [c["catalog_name"] for c in cats]
        assert set(names) == set(tsv("SELECT name FROM system.databases").split())
        assert all(c["catalog_db_schemas"] is None for c in cats)

    def test_depth_db_schemas(self, conn):
        cats = conn.adbc_get_objects(depth="db_schemas", catalog_filter="default").read_all().to_pylist()
        assert [c["catalog_name"] for c in cats] == ["default"]
        assert [(s["db_schema_name"], s["db_schema_tables"]) for s in cats[0]["catalog_db_schemas"]] == [("", None)]

    def test_depth_tables(self, conn, objects):
        t1, t2, v = objects
        tables = tables_of(conn, depth="tables", catalog_filter="default", table_name_filter=f"pyadbc_{os.getpid()}_%_objs_%")
        assert set(tables) == {t1, t2, v}
        assert tables[t1]["table_type"] == "TABLE" and tables[v]["table_type"] == "VIEW"
        assert all(t["table_columns"] is None for t in tables.values())

    def test_depth_all_columns(self, conn, objects):
        t1, _, _ = objects
        tables = tables_of(conn, depth="all", catalog_filter="default", table_name_filter=t1)
        cols = tables[t1]["table_columns"]
        assert [(c["column_name"], c["ordinal_position"], c["xdbc_type_name"], c["xdbc_is_nullable"]) for c in cols] == \
            [("id", 1, "UInt64", "NO"), ("s", 2, "Nullable(String)", "YES")]
        assert cols[1]["remarks"] == "the s"

    def test_column_name_filter(self, conn, objects):
        t1, _, _ = objects
        cols = tables_of(conn, depth="columns", catalog_filter="default", table_name_filter=t1, column_name_filter="s")[t1]["table_columns"]
        assert [c["column_name"] for c in cols] == ["s"]

    def test_table_types_filter(self, conn, objects):
        t1, t2, v = objects
        pattern = f"pyadbc_{os.getpid()}_%_objs_%"
        assert set(tables_of(conn, depth="tables", table_name_filter=pattern, table_types_filter=["VIEW"])) == {v}
        assert set(tables_of(conn, depth="tables", table_name_filter=pattern, table_types_filter=["TABLE"])) == {t1, t2}

    def test_like_patterns_underscore_and_no_match(self, conn, objects):
        t1, _, _ = objects
        assert set(tables_of(conn, depth="tables", table_name_filter=t1[:-1] + "_")) == {t1}
        assert tables_of(conn, depth="tables", table_name_filter="pyadbc_no_such_%") == {}
        assert conn.adbc_get_objects(depth="catalogs", catalog_filter="no_such_db%").read_all().num_rows == 0

    def test_db_schema_filter(self, conn, objects):
        t1, _, _ = objects
        assert set(tables_of(conn, depth="tables", catalog_filter="default", db_schema_filter="", table_name_filter=t1)) == {t1}
        assert tables_of(conn, depth="tables", catalog_filter="default", db_schema_filter="x%", table_name_filter=t1) == {}


# --- get_table_schema / get_table_types -------------------------------------------------


class TestTableSchemaAndTypes:
    def test_get_table_schema(self, conn, objects):
        t1, _, _ = objects
        schema = conn.adbc_get_table_schema(t1, catalog_filter="default")
        assert schema.names == ["id", "s"]
        assert schema.field("id").type == pa.uint64() and not schema.field("id").nullable
        assert schema.field("s").type == pa.string() and schema.field("s").nullable
        assert schema.field("id").metadata[b"clickhouse.type"] == b"UInt64"
        # Without a catalog: the current one.
        assert conn.adbc_get_table_schema(t1).names == ["id", "s"]

    def test_get_table_schema_of_a_missing_table(self, conn):
        with pytest.raises(dbapi.Error) as e:
            conn.adbc_get_table_schema("pyadbc_no_such_table")
        assert e.value.status_code == S.NOT_FOUND

    def test_get_table_types(self, conn):
        assert conn.adbc_get_table_types() == ["TABLE", "VIEW", "MATERIALIZED VIEW", "DICTIONARY"]


# --- statements -------------------------------------------------------------------------


class TestStatement:
    def test_execute_query(self, conn):
        t = query(conn, "SELECT number AS n FROM numbers(10)")
        assert t.column("n").to_pylist() == list(range(10)) and t.schema.field("n").type == pa.uint64()

    def test_execute_update_counts_rows(self, conn, table_name):
        name = table_name("upd")
        with conn.cursor() as cur:
            cur.execute(f"CREATE TABLE {name} (a UInt8) ENGINE = Memory")
            assert cur.adbc_statement.set_sql_query(f"INSERT INTO {name} SELECT number FROM numbers(5)") is None
            assert cur.adbc_statement.execute_update() == 5
        assert tsv(f"SELECT count() FROM {name}") == "5\n"

    def test_execute_schema(self, conn):
        with conn.cursor() as cur:
            schema = cur.adbc_execute_schema("SELECT 1::UInt16 AS a, 'x' AS b, now() AS c")
        assert schema.names == ["a", "b", "c"] and schema.field("a").type == pa.uint16()

    def test_prepare_then_execute(self, conn):
        with conn.cursor() as cur:
            cur.adbc_prepare("SELECT {x:Int32} + 1 AS y")
            cur.execute("SELECT {x:Int32} + 1 AS y", (1,))
            assert cur.fetchall() == [(2,)]

    def test_empty_result_keeps_its_schema(self, conn):
        t = query(conn, "SELECT number AS n, toString(number) AS s FROM numbers(10) WHERE 0")
        assert t.num_rows == 0 and t.schema.names == ["n", "s"]

    def test_many_blocks_stream(self, conn):
        with conn.cursor() as cur:
            cur.execute("SELECT number AS n FROM numbers(1000000) SETTINGS max_block_size = 65536")
            n = total = 0
            for batch in cur.fetch_record_batch():
                n += batch.num_rows
                total += pa.compute.sum(batch.column(0)).as_py()
        assert n == 1000000 and total == 999999 * 1000000 // 2

    def test_ddl_and_insert_through_execute(self, conn, table_name):
        name = table_name("ddl")
        with conn.cursor() as cur:
            cur.execute(f"CREATE TABLE {name} (a UInt8, s String) ENGINE = Memory")
            cur.execute(f"INSERT INTO {name} VALUES ({{a:UInt8}}, {{s:String}})", (1, "x"))
            # The next query binds nothing: the last one's parameters are gone.
            cur.execute(f"SELECT * FROM {name} ORDER BY a")
            assert cur.fetchall() == [(1, "x")]

    def test_no_query_set_is_invalid_state(self, conn):
        with conn.cursor() as cur:
            with pytest.raises(adbc_driver_manager.Error) as e:
                cur.adbc_statement.execute_query()
        assert e.value.status_code == S.INVALID_STATE


# --- bound parameters -------------------------------------------------------------------


PARAMS = [
    ("Int64", -9007199254740993, "-9007199254740993"),
    ("UInt64", 9223372036854775807, "9223372036854775807"),
    ("Float64", 0.1, "0.1"),
    ("String", "tab\there 'q' \\ é", "tab\\there \\'q\\' \\\\ é"),
    ("Bool", True, "true"),
    ("Date", datetime.date(1999, 12, 31), "1999-12-31"),
    ("DateTime64(6, 'UTC')", datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.timezone.utc),
     "2024-05-06 07:08:09.123456"),
    ("Decimal(20, 4)", decimal.Decimal("-1234.5678"), "-1234.5678"),
    ("Nullable(Int32)", None, "\\N"),
    ("Array(Int32)", [1, 2, 3], "[1,2,3]"),
]


class TestBoundParameters:
    @pytest.mark.parametrize("ch_type,value,rendered", PARAMS, ids=[p[0] for p in PARAMS])
    def test_each_type_as_the_server_renders_it(self, conn, ch_type, value, rendered):
        with conn.cursor() as cur:
            cur.execute(f"SELECT toString({{p:{ch_type}}}) AS s, {{p:{ch_type}}} IS NULL AS n", (value,))
            s, n = cur.fetchone()
        if value is None:
            assert n
        else:
            want = tsv(f"SELECT toString(CAST({_sql_literal(value)} AS {ch_type}))").rstrip("\n")
            assert s == want.encode().decode("unicode_escape").encode("latin-1").decode() if "\\" in want else s == want, (s, want)

    def test_by_name_from_a_mapping(self, conn):
        assert query(conn, "SELECT {b:String} AS b, {a:Int64} AS a", {"a": -5, "b": "B"}).to_pylist() == [{"b": "B", "a": -5}]

    def test_by_position_in_order_of_first_appearance(self, conn):
        assert query(conn, "SELECT {x:UInt8} AS a, {y:UInt8} AS b, {x:UInt8} AS c", (1, 2)).to_pylist() == [{"a": 1, "b": 2, "c": 1}]

    def test_wrong_count_is_an_error(self, conn):
        with pytest.raises(dbapi.Error) as e:
            query(conn, "SELECT {x:UInt8} AS a, {y:UInt8} AS b", (1,))
        assert e.value.status_code == S.INVALID_ARGUMENT

    def test_missing_name_is_an_error(self, conn):
        with pytest.raises(dbapi.Error) as e:
            query(conn, "SELECT {x:UInt8} AS a", {"y": 1})
        assert e.value.status_code == S.INVALID_ARGUMENT and "x" in str(e.value)

    def test_value_the_type_cannot_parse_is_the_servers_error(self, conn):
        with pytest.raises(dbapi.Error) as e:
            query(conn, "SELECT {x:Date} AS a", ("not a date",))
        assert e.value.status_code in (S.INVALID_ARGUMENT, S.INVALID_DATA, S.INTERNAL), e.value

    def test_parameter_schema(self, conn):
        with conn.cursor() as cur:
            cur.adbc_statement.set_sql_query("SELECT {n:Nullable(Int64)} AS n, {d:Date32} AS d, {n:Nullable(Int64)}")
            schema = pa.schema(cur.adbc_statement.get_parameter_schema())
        assert schema.names == ["n", "d"] and schema.field("n").type == pa.int64() and schema.field("n").nullable
        assert schema.field("d").type == pa.date32()

    def test_bind_a_record_batch(self, conn):
        with conn.cursor() as cur:
            cur.adbc_statement.set_sql_query("SELECT {n:Nullable(Int64)} AS n, {d:Date32} AS d")
            cur.adbc_statement.bind(pa.record_batch({"d": pa.array([19000], pa.date32()), "n": pa.array([None], pa.int64())}))
            stream, _ = cur.adbc_statement.execute_query()
            got = pa.RecordBatchReader._import_from_c(stream.address).read_all().to_pylist()
        assert got == [{"n": None, "d": datetime.date(2022, 1, 8)}]


def _sql_literal(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float, decimal.Decimal)):
        return repr(float(v)) if isinstance(v, float) else f"'{v}'"
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(v, datetime.datetime):
        return f"'{v.strftime('%Y-%m-%d %H:%M:%S.%f')}'"
    if isinstance(v, datetime.date):
        return f"'{v.isoformat()}'"
    if isinstance(v, list):
        return "[" + ",".join(_sql_literal(x) for x in v) + "]"
    raise TypeError(v)


# --- ingest -----------------------------------------------------------------------------


DATA = pa.table({
    "id": pa.array([1, 2, 3], pa.int64()),
    "s": pa.array(["a", None, "ccc"], pa.string()),
    "ts": pa.array([0, 1_700_000_000_123_456, -5], pa.timestamp("us", tz="UTC")),
    "l": pa.array([[1.5], [], [None, 2.0]], pa.list_(pa.float64())),
    "dec": pa.array([1, 2, 3], pa.decimal128(10, 2)),
})


def count(name):
    return int(tsv(f"SELECT count() FROM {name}"))


class TestIngest:
    def test_create(self, conn, table_name):
        name = table_name("ing_create")
        with conn.cursor() as cur:
            assert cur.adbc_ingest(name, DATA, mode="create") == 3
        created = tsv(f"SELECT name, type FROM system.columns WHERE database = 'default' AND table = '{name}' ORDER BY position")
        assert created == ("id\tNullable(Int64)\ns\tNullable(String)\nts\tNullable(DateTime64(6, \\'UTC\\'))\n"
                           "l\tArray(Nullable(Float64))\ndec\tNullable(Decimal(10, 2))\n"), created
        assert tsv(f"SELECT id, s, ts, l, dec FROM {name} ORDER BY id").splitlines()[0] == "1\ta\t1970-01-01 00:00:00.000000\t[1.5]\t1"

    def test_create_on_an_existing_table_fails(self, conn, table_name):
        name = table_name("ing_exists")
        http(f"CREATE TABLE {name} (id Int64) ENGINE = Memory")
        with conn.cursor() as cur, pytest.raises(dbapi.Error) as e:
            cur.adbc_ingest(name, DATA.select(["id"]), mode="create")
        assert e.value.status_code == S.ALREADY_EXISTS, e.value
        assert count(name) == 0

    def test_append(self, conn, table_name):
        name = table_name("ing_append")
        with conn.cursor() as cur:
            cur.adbc_ingest(name, DATA, mode="create")
            assert cur.adbc_ingest(name, DATA, mode="append") == 3
        assert count(name) == 6

    def test_append_to_a_missing_table_fails(self, conn, table_name):
        name = table_name("ing_missing")
        with conn.cursor() as cur, pytest.raises(dbapi.Error) as e:
            cur.adbc_ingest(name, DATA, mode="append")
        assert e.value.status_code == S.NOT_FOUND, e.value

    def test_append_with_a_wrong_schema_fails_before_sending(self, conn, table_name):
        name = table_name("ing_wrong")
        http(f"CREATE TABLE {name} (id UInt8) ENGINE = Memory")
        with conn.cursor() as cur, pytest.raises(dbapi.Error) as e:
            cur.adbc_ingest(name, pa.table({"id": pa.array(["x"])}), mode="append")
        assert "UInt8" in str(e.value)
        assert count(name) == 0

    def test_replace(self, conn, table_name):
        name = table_name("ing_replace")
        with conn.cursor() as cur:
            cur.adbc_ingest(name, DATA, mode="create")
            assert cur.adbc_ingest(name, DATA.slice(0, 1), mode="replace") == 1
            assert cur.adbc_ingest(table_name("ing_replace_new"), DATA, mode="replace") == 3
        assert count(name) == 1

    def test_create_append(self, conn, table_name):
        name = table_name("ing_create_append")
        with conn.cursor() as cur:
            assert cur.adbc_ingest(name, DATA, mode="create_append") == 3
            assert cur.adbc_ingest(name, DATA, mode="create_append") == 3
        assert count(name) == 6

    def test_into_another_catalog(self, conn, table_name):
        name = table_name("ing_catalog")
        with conn.cursor() as cur:
            assert cur.adbc_ingest(name, DATA, mode="create", catalog_name="default") == 3
        assert count(f"default.{name}") == 3

    def test_temporary_is_refused(self, conn, table_name):
        with conn.cursor() as cur, pytest.raises(dbapi.Error) as e:
            cur.adbc_ingest(table_name("ing_tmp"), DATA, mode="create", temporary=True)
        assert e.value.status_code == S.NOT_IMPLEMENTED

    def test_a_stream_of_batches(self, conn, table_name):
        name = table_name("ing_stream")
        reader = pa.RecordBatchReader.from_batches(DATA.schema, DATA.to_batches() * 4)
        with conn.cursor() as cur:
            assert cur.adbc_ingest(name, reader, mode="create") == 12
        assert count(name) == 12

    def test_round_trip_values(self, conn, table_name):
        name = table_name("ing_rt")
        with conn.cursor() as cur:
            cur.adbc_ingest(name, DATA, mode="create")
        back = query(conn, f"SELECT * FROM {name} ORDER BY id")
        for col in DATA.column_names:
            assert back.column(col).to_pylist() == DATA.column(col).to_pylist(), col


# --- types ------------------------------------------------------------------------------


# (expression, its Arrow type): read values compared with the server's own FORMAT Arrow where
# the forms agree, else with toString.
SAME_AS_SERVER = [
    ("toInt8(number * 37)", pa.int8()), ("toInt16(-number)", pa.int16()), ("toInt32(number * 1000003)", pa.int32()),
    ("toInt64(number) - 5", pa.int64()), ("toUInt8(number)", pa.uint8()), ("toUInt16(number)", pa.uint16()),
    ("toUInt32(number)", pa.uint32()), ("toUInt64(number * 922337203685477580)", pa.uint64()),
    ("toFloat32(number / 3)", pa.float32()), ("toFloat64(number) / 3", pa.float64()),
    ("toString(number) || 'é'", pa.string()), ("toFixedString(toString(number), 3)", pa.binary(3)),
    ("toDate('2020-01-01') + number", pa.date32()), ("toDate32('1950-01-01') + number * 999", pa.date32()),
    ("toDecimal32(number / 7, 3)", pa.decimal128(9, 3)), ("toDecimal64((toInt64(number) - 5) / 7, 4)", pa.decimal128(18, 4)),
    ("toDecimal128(number / 7, 10)", pa.decimal128(38, 10)),
    ("toDateTime64('2024-01-01 00:00:00.123', 3, 'Asia/Tokyo') + toIntervalSecond(number)", pa.timestamp("ms", tz="Asia/Tokyo")),
    ("toDateTime64('2024-01-01 00:00:00.123456', 6, 'UTC') + toIntervalSecond(number)", pa.timestamp("us", tz="UTC")),
    ("toIPv4(toUInt32(number * 16909060))", pa.uint32()),
    ("range(number % 4)", pa.list_(pa.field("item", pa.uint8(), nullable=False))),
    ("if(number % 2 = 0, NULL, number)", pa.uint64()),
    ("map('k', number)", None), ("(number, toString(number))", None),
]

BY_TOSTRING = [
    ("toDateTime('2024-03-01 10:00:00', 'Europe/Berlin') + number", pa.timestamp("s", tz="Europe/Berlin")),
    ("CAST(['a','b'][number % 2 + 1] AS Enum8('a' = -1, 'b' = 5))", None),
    ("toLowCardinality(toString(number % 3))", None),
    ("toUUID(concat('550e8400-e29b-41d4-a716-', leftPad(toString(number), 12, '0')))", None),
    ("toBool(number % 2)", pa.bool_()),
    ("toIPv6(concat('::ffff:', IPv4NumToString(toUInt32(number))))", pa.binary(16)),
    ("toInt128(number) * toInt128('-1000000000000000000000')", pa.binary(16)),
    ("toUInt256(number) * toUInt256('1000000000000000000000000000000')", pa.binary(32)),
    ("toTime(number * 3601)", None),
    ("CAST(number AS Variant(UInt64, String))", None),
    ("toBFloat16(number)", pa.float32()),
]


def _as_plain(a):
    a = a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
    return a.storage if hasattr(a, "storage") else a


class TestTypes:
    @pytest.mark.parametrize("expr,arrow_type", SAME_AS_SERVER, ids=[e for e, _ in SAME_AS_SERVER])
    def test_read_equals_the_servers_arrow(self, conn, expr, arrow_type):
        sql = f"SELECT {expr} AS v FROM numbers(25)"
        ours, theirs = query(conn, sql), server_arrow(sql)
        if arrow_type is not None:
            assert ours.schema.field("v").type == arrow_type
        assert _as_plain(ours.column("v")).to_pylist() == _as_plain(theirs.column("v")).to_pylist()

    @pytest.mark.parametrize("expr,arrow_type", BY_TOSTRING, ids=[e for e, _ in BY_TOSTRING])
    def test_read_and_write_back(self, conn, table_name, expr, arrow_type):
        sql = f"SELECT number AS id, {expr} AS v FROM numbers(12)"
        ours = query(conn, sql)
        if arrow_type is not None:
            assert ours.schema.field("v").type == arrow_type
        ch_type = http(f"SELECT toTypeName({expr}) FROM numbers(1)", "TSVRaw").decode().strip()
        assert ours.schema.field("v").metadata[b"clickhouse.type"].decode() == ch_type
        # Write back into a column of the same type: the server renders the same text.
        name = table_name("types")
        http(f"CREATE TABLE {name} (id UInt64, v {ch_type}) ENGINE = Memory")
        with conn.cursor() as cur:
            assert cur.adbc_ingest(name, ours, mode="append") == 12
        assert tsv(f"SELECT id, toString(v) FROM {name} ORDER BY id") == tsv(f"SELECT id, toString(v) FROM ({sql}) ORDER BY id")

    def test_every_field_carries_its_clickhouse_type(self, conn):
        t = query(conn, "SELECT 1::UInt8 AS a, 'x'::LowCardinality(String) AS b, [1]::Array(Nullable(Int16)) AS c")
        assert [f.metadata[b"clickhouse.type"] for f in t.schema] == [b"UInt8", b"LowCardinality(String)", b"Array(Nullable(Int16))"]

    def test_json_is_utf8_with_the_json_extension(self, conn):
        t = query(conn, """SELECT '{"a": 1}'::JSON AS j""")
        f = t.schema.field("j")
        assert f.metadata.get(b"ARROW:extension:name") == b"arrow.json" or getattr(f.type, "extension_name", "") == "arrow.json", f


# --- cancel and partitions --------------------------------------------------------------


class TestCancelAndPartitions:
    def test_cancel_before_execute_is_harmless(self, conn):
        with conn.cursor() as cur:
            cur.adbc_cancel()
            cur.execute("SELECT 1 AS x")
            assert cur.fetchall() == [(1,)]

    def test_cancel_a_running_query(self, conn):
        tag = f"pyadbc_conf_cancel_{time.time_ns()}"
        cur = conn.cursor()
        done = threading.Event()
        errors = []

        def run():
            try:
                cur.execute(f"SELECT sleepEachRow(0.2), number FROM numbers(1000) SETTINGS max_block_size = 1, "
                            f"function_sleep_max_microseconds_per_block = 0, log_comment = '{tag}'")
                for _ in cur.fetch_record_batch():
                    pass
            except Exception as e:  # noqa: BLE001
                errors.append(e)
            done.set()

        # A daemon: if cancel failed, the reader must not keep the interpreter alive at exit.
        th = threading.Thread(target=run, daemon=True)
        th.start()
        deadline = time.monotonic() + 30
        while not int(tsv(f"SELECT count() FROM system.processes WHERE query LIKE '%{tag}%' AND query NOT LIKE '%system.processes%'")):
            assert time.monotonic() < deadline, "the query never started"
            time.sleep(0.05)
        cur.adbc_cancel()
        assert done.wait(30)
        th.join()
        assert errors, "a cancelled query must end with an error"
        cur.close()

    def test_execute_partitions_and_read_partition(self, conn):
        with conn.cursor() as cur:
            parts, schema = cur.adbc_execute_partitions("SELECT number AS n, {p:String} AS p FROM numbers(7)", ("x",))
            assert len(parts) == 1
            assert schema.field("n").type == pa.uint64() and schema.field("p").type == pa.string()
            cur.adbc_read_partition(parts[0])
            t = cur.fetch_arrow_table()
        assert t.column("n").to_pylist() == list(range(7)) and set(t.column("p").to_pylist()) == {"x"}
        # A partition is read on another connection too.
        with dbapi.connect(URI) as other, other.cursor() as cur:
            cur.adbc_read_partition(parts[0])
            assert cur.fetch_arrow_table().num_rows == 7

    def test_read_a_garbage_partition_fails(self, conn):
        with conn.cursor() as cur, pytest.raises(dbapi.Error) as e:
            cur.adbc_read_partition(b"not a partition")
        assert e.value.status_code == S.INVALID_ARGUMENT, e.value
