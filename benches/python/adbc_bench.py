"""Reading hits-like rows into a pyarrow Table from Python: the chnative ADBC driver
(native TCP, LZ4) against the server's HTTP `FORMAT ArrowStream` read by pyarrow.

    python benches/python/adbc_bench.py DRIVER_LIBRARY [ROWS (1000000)] [ROUNDS (3)]

Needs the table arrow_bench_hits (made by `cargo run --release -p chnative-bench --bin
arrow_bench`). Client CPU is this process's user + system time (every thread: the
driver's runtime included), the median of the rounds.
"""

import os
import resource
import statistics
import sys
import urllib.request

import adbc_driver_manager.dbapi as dbapi
import pyarrow as pa
import pyarrow.ipc

driver = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
tcp = int(os.environ.get("CHNATIVE_TCP_PORT", "19000"))
http = int(os.environ.get("CHNATIVE_HTTP_PORT", "18123"))
sql = f"SELECT * FROM arrow_bench_hits LIMIT {rows} SETTINGS max_threads = 1"


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(name, f):
    times = []
    for _ in range(rounds):
        t = cpu()
        table = f()
        times.append(cpu() - t)
        assert table.num_rows == rows, (name, table.num_rows)
        del table
    print(f"| {name} | {statistics.median(times):.3f} |", flush=True)


conn = dbapi.connect(driver=driver, db_kwargs={"uri": f"clickhouse://127.0.0.1:{tcp}/default?compression=lz4"},
                     autocommit=True)


def adbc():
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetch_arrow_table()


def adbc_streamed():
    # Batch by batch, each dropped before the next: the driver's buffers are reused.
    with conn.cursor() as cur:
        cur.execute(sql)
        n = 0
        for b in cur.fetch_record_batch():
            n += b.num_rows
    return pa.table({"n": pa.array([0] * 0)}) if n != rows else _Rows(n)


class _Rows:
    def __init__(self, n):
        self.num_rows = n


def http_arrow_stream(compression):
    def run():
        url = f"http://127.0.0.1:{http}/?output_format_arrow_compression_method={compression}"
        req = urllib.request.Request(url, data=f"{sql} FORMAT ArrowStream".encode(), method="POST")
        with urllib.request.urlopen(req) as r:
            return pa.ipc.open_stream(r).read_all()
    return run


print(f"{rows} rows × 105 columns into a pyarrow Table, median client CPU of {rounds} rounds\n")
print("| read | client CPU (s) |")
print("|---|---|")
measure("chnative ADBC driver (native TCP, LZ4), whole table", adbc)
measure("chnative ADBC driver (native TCP, LZ4), batches streamed and dropped", adbc_streamed)
measure("HTTP ArrowStream + pyarrow (lz4_frame)", http_arrow_stream("lz4_frame"))
measure("HTTP ArrowStream + pyarrow (uncompressed)", http_arrow_stream("none"))
