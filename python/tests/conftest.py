"""Shared fixtures of the adbc-driver-clickhouse tests.

They run against a live ClickHouse server: CHNATIVE_TCP_PORT (native protocol, default 19000)
and CHNATIVE_HTTP_PORT (HTTP, default 18123, used for the server's own rendering of values),
both on CHNATIVE_HOST (default 127.0.0.1). The package under test is the installed one
(`pip install` of the wheel), never the source folder.
"""

import itertools
import os
import urllib.request

import pytest

HOST = os.environ.get("CHNATIVE_HOST", "127.0.0.1")
TCP = int(os.environ.get("CHNATIVE_TCP_PORT", "19000"))
HTTP = int(os.environ.get("CHNATIVE_HTTP_PORT", "18123"))
URI = f"clickhouse://default@{HOST}:{TCP}/default"

_counter = itertools.count()


def pytest_configure(config):
    import adbc_driver_clickhouse

    source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.abspath(adbc_driver_clickhouse.__file__).startswith(source + os.sep):
        pytest.exit(
            f"imported adbc_driver_clickhouse from the source folder {source}, not the installed wheel: "
            "run pytest from another directory (python -m pytest adds the current one to sys.path)",
            returncode=4,
        )


def http(sql, fmt=None):
    """Run SQL over HTTP; with fmt, ask for that output format."""
    body = sql if fmt is None else f"{sql} FORMAT {fmt}"
    req = urllib.request.Request(f"http://{HOST}:{HTTP}/", data=body.encode(), method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.read()


def server_arrow(sql):
    """The server's own Arrow rendering of a query."""
    import pyarrow as pa
    import pyarrow.ipc

    return pa.ipc.open_file(pa.py_buffer(http(sql, "Arrow"))).read_all()


def tsv(sql):
    return http(sql, "TSV").decode()


@pytest.fixture(scope="session")
def uri():
    return URI


@pytest.fixture(scope="session")
def conn():
    import adbc_driver_clickhouse.dbapi

    c = adbc_driver_clickhouse.dbapi.connect(URI)
    yield c
    c.close()


@pytest.fixture
def table_name():
    """A table name no other test (or other process) uses; the table is dropped afterwards."""
    names = []

    def make(stem="t"):
        name = f"pyadbc_{os.getpid()}_{next(_counter)}_{stem}"
        names.append(name)
        http(f"DROP TABLE IF EXISTS {name}")
        return name

    yield make
    for name in names:
        http(f"DROP TABLE IF EXISTS {name}")


def query(conn, sql, parameters=None):
    with conn.cursor() as cur:
        cur.execute(sql, parameters)
        return cur.fetch_arrow_table()
