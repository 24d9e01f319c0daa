"""The Python clients people use to get ClickHouse data into pyarrow and pandas, and back.

    python benches/python/python_bench.py [--rounds N] [--only SUBSTRING ...] [--out FILE]

Run from a venv with (see benches/python/requirements.txt):
  adbc-driver-clickhouse (this repository's wheel: pip wheel --no-deps -w dist ./python),
  clickhouse-connect (+ clickhouse-connect-core for native_codec="rust"),
  clickhouse-driver[numpy], pandas, pyarrow.

Server: CHNATIVE_HOST (127.0.0.1), CHNATIVE_TCP_PORT (native, ours and clickhouse-driver) and
CHNATIVE_HTTP_PORT (clickhouse-connect). It must answer HTTP in TSV (a full server; the
embedded chdb answers CSV and clickhouse-connect then fails at connect).

Data (made once, on the server): pybench_mixed, 10M rows of (UInt64, String,
Nullable(Float64), DateTime), read as LIMIT 2M and all 10M; pybench_hits, 1M rows of the 105
ClickBench hits columns (benches/peers/hits_columns.tsv) from generateRandom(seed 42, strings up
to 40 bytes, arrays up to 4). Inserts go into tables of the same columns with ENGINE = Null
(the client's work only) from a pyarrow Table and a pandas DataFrame read beforehand from an
Arrow IPC file (not measured).

Beside the clients, a floor for each read: writing the result's bytes once into memory new to
the process (see floor()). On a VM, where a page fault costs microseconds, it is most of a
fast reader's CPU, and it bounds the ratio any reader can reach against another.

Every case runs in a subprocess of its own (imports, connect, one warm-up query of one row,
then the measured call): wall time and process CPU (user + system, every thread) of the call,
and the peak RSS of the process (VmHWM, imports and data included). Medians of the rounds;
rounds of different clients interleave. Each client runs with its defaults (compression
included): ours negotiates LZ4 or none (compression=auto), clickhouse-connect compresses HTTP
responses (lz4) and inserts, clickhouse-driver sends no compression.
"""

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import urllib.request

HOST = os.environ.get("CHNATIVE_HOST", "127.0.0.1")
TCP = int(os.environ.get("CHNATIVE_TCP_PORT", "9000"))
HTTP = int(os.environ.get("CHNATIVE_HTTP_PORT", "8123"))
HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.environ.get("CHNATIVE_BENCH_DIR", "/tmp/chnative-python-bench")

MIXED_ROWS = 10_000_000
HITS_ROWS = 1_000_000
DATASETS = {
    # name: (SQL, rows, insert sink)
    "mixed 2M": ("SELECT * FROM pybench_mixed ORDER BY id LIMIT 2000000", 2_000_000, "pybench_mixed_sink"),
    "mixed 10M": ("SELECT * FROM pybench_mixed ORDER BY id", 10_000_000, None),
    "hits 1M": ("SELECT * FROM pybench_hits", 1_000_000, "pybench_hits_sink"),
}

# (client, operation): what the child does. Reads: "arrow" into a pyarrow Table, "pandas"
# into a DataFrame. Inserts: from a Table or a DataFrame.
READS = [
    # Not a client: the least any client pays to hold the result in a fresh process, writing
    # its bytes (the Arrow Table's nbytes) once into memory new to the process (see floor()).
    ("floor: fresh memory", "write the result's bytes once"),
    ("floor: fresh memory", "populate (MADV_POPULATE_WRITE), then write"),
    ("chnative ADBC", "arrow"),
    ("chnative ADBC", "pandas"),
    ("chnative ADBC", "arrow, then to_pandas()"),
    ("clickhouse-connect", "arrow"),
    ("clickhouse-connect", "pandas"),
    ("clickhouse-connect rust codec", "pandas"),
    ("clickhouse-driver numpy", "pandas"),
]
INSERTS = [
    ("chnative ADBC", "arrow"),
    ("chnative ADBC", "pandas"),
    ("clickhouse-connect", "arrow"),
    ("clickhouse-connect", "pandas"),
    ("clickhouse-connect rust codec", "pandas"),
    ("clickhouse-driver numpy", "pandas"),
]


def http(sql):
    req = urllib.request.Request(f"http://{HOST}:{HTTP}/", data=sql.encode(), method="POST")
    with urllib.request.urlopen(req, timeout=3600) as r:
        return r.read().decode()


def hits_columns():
    cols = []
    with open(os.path.join(HERE, "..", "peers", "hits_columns.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, ch_type = line.split("\t")[:2]
            cols.append(f"{name} {ch_type}")
    return ", ".join(cols)


def setup():
    """Make the tables (once) and the Arrow IPC files the inserts read their data from."""
    mixed = "id UInt64, s String, f Nullable(Float64), t DateTime"
    http(f"CREATE TABLE IF NOT EXISTS pybench_mixed ({mixed}) ENGINE = MergeTree ORDER BY id")
    if int(http("SELECT count() FROM pybench_mixed")) != MIXED_ROWS:
        http("TRUNCATE TABLE pybench_mixed")
        http(f"""INSERT INTO pybench_mixed SELECT number, concat('user-', toString(cityHash64(number) % 1000000)),
                 if(number % 7 = 0, NULL, number / 3), toDateTime('2024-01-01 00:00:00') + number
                 FROM numbers({MIXED_ROWS})""")
    cols = hits_columns()
    http(f"CREATE TABLE IF NOT EXISTS pybench_hits ({cols}) ENGINE = MergeTree ORDER BY tuple()")
    if int(http("SELECT count() FROM pybench_hits")) != HITS_ROWS:
        http("TRUNCATE TABLE pybench_hits")
        http(f"INSERT INTO pybench_hits SELECT * FROM generateRandom('{cols}', 42, 40, 4) LIMIT {HITS_ROWS}")
    http(f"CREATE TABLE IF NOT EXISTS pybench_mixed_sink ({mixed}) ENGINE = Null")
    http(f"CREATE TABLE IF NOT EXISTS pybench_hits_sink ({cols}) ENGINE = Null")
    os.makedirs(WORK, exist_ok=True)
    import pyarrow as pa
    import pyarrow.ipc

    for name, (sql, rows, sink) in DATASETS.items():
        path = ipc_path(name)
        if sink is None or os.path.exists(path):
            continue
        with connect_adbc() as conn, conn.cursor() as cur:
            cur.execute(sql)
            table = cur.fetch_arrow_table()
        assert table.num_rows == rows
        with pa.OSFile(path + ".tmp", "wb") as f, pa.ipc.new_file(f, table.schema) as w:
            w.write_table(table)
        os.replace(path + ".tmp", path)


def result_bytes(dataset):
    """The Arrow result's size (Table.nbytes) of a dataset's read, measured once by our driver."""
    path = os.path.join(WORK, "result_bytes.json")
    sizes = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            sizes = json.load(f)
    if dataset not in sizes:
        with connect_adbc() as conn, conn.cursor() as cur:
            cur.execute(DATASETS[dataset][0])
            sizes[dataset] = cur.fetch_arrow_table().nbytes
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(sizes, f)
        os.replace(path + ".tmp", path)
    return sizes[dataset]


def floor(dataset, op):
    """The measured call of the floor cases: `memset` over an anonymous mapping of the result's
    size. Every page is new to the process (a mapping is never memory the heap held before), so
    this is the page faults (the kernel zeroing and mapping each 4 KiB page) plus one pass of
    stores: what any reader pays, at the least, to hold that many bytes, before it has received
    or decoded anything. The "populate" variant first faults the whole mapping in with one
    madvise(MADV_POPULATE_WRITE) (Linux 5.14), the cheapest way the kernel offers to do it."""
    import ctypes
    import mmap

    n = result_bytes(dataset)
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    populate = op.startswith("populate")

    def run():
        if populate:
            m.madvise(23)  # MADV_POPULATE_WRITE
        ctypes.memset(addr, 1, n)

    return run, m


def ipc_path(dataset):
    return os.path.join(WORK, dataset.replace(" ", "_") + ".arrow")


def connect_adbc():
    import adbc_driver_clickhouse.dbapi

    return adbc_driver_clickhouse.dbapi.connect(f"clickhouse://default@{HOST}:{TCP}/default")


def cc_client(codec):
    import clickhouse_connect

    return clickhouse_connect.get_client(host=HOST, port=HTTP, username="default", native_codec=codec)


def chd_client():
    import clickhouse_driver

    return clickhouse_driver.Client(host=HOST, port=TCP, user="default", settings={"use_numpy": True})


def child(kind, client, op, dataset):
    """One measured case; prints a JSON line."""
    sql, rows, sink = DATASETS[dataset]
    data = None
    if kind == "insert":
        import pyarrow as pa
        import pyarrow.ipc

        data = pa.ipc.open_file(pa.memory_map(ipc_path(dataset))).read_all()
        data = pa.Table.from_batches([b for b in data.to_batches()])  # off the mapping: owned memory
        if op == "pandas":
            data = data.to_pandas()

    # Connect and warm up (one tiny query) outside the measurement.
    if client.startswith("floor"):
        run, _mapping = floor(dataset, op)
    elif client == "chnative ADBC":
        conn = connect_adbc()
        cur = conn.cursor()
        cur.execute("SELECT 1")
        cur.fetchall()
        if kind == "read":
            def run():
                cur.execute(sql)
                if op == "arrow":
                    return cur.fetch_arrow_table().num_rows
                if op == "pandas":
                    return len(cur.fetch_df())
                t = cur.fetch_arrow_table()
                return len(t.to_pandas())
        else:
            def run():
                return cur.adbc_ingest(sink, data, mode="append")
    elif client.startswith("clickhouse-connect"):
        c = cc_client("rust" if "rust" in client else "python")
        c.command("SELECT 1")
        if kind == "read":
            def run():
                if op == "arrow":
                    return c.query_arrow(sql).num_rows
                return len(c.query_df(sql))
        else:
            def run():
                if op == "arrow":
                    return c.insert_arrow(sink, data).written_rows
                return c.insert_df(sink, data).written_rows
    else:
        c = chd_client()
        c.execute("SELECT 1")
        if kind == "read":
            def run():
                return len(c.query_dataframe(sql))
        else:
            def run():
                return c.insert_dataframe(f"INSERT INTO {sink} VALUES", data)

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    n = run()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if n is not None and n != rows:
        raise AssertionError(f"{client} {op} {dataset}: {n} rows, want {rows}")
    print(json.dumps({"wall": wall, "cpu": cpu, "rss_mib": peak_rss_mib()}), flush=True)


def peak_rss_mib():
    """The process's peak resident set (VmHWM). Not ru_maxrss: Linux carries that over fork and
    exec, so a child would report its parent's peak."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--out", default=None)
    ap.add_argument("--child", nargs=4, metavar=("KIND", "CLIENT", "OP", "DATASET"))
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    setup()
    for d in DATASETS:
        result_bytes(d)
    cases = [("read", c, o, d) for d in DATASETS for c, o in READS]
    cases += [("insert", c, o, d) for d, v in DATASETS.items() if v[2] for c, o in INSERTS]
    if args.only:
        cases = [x for x in cases if any(s in " ".join(x) for s in args.only)]
    results = {x: [] for x in cases}
    errors = {}
    for _ in range(args.rounds):
        for x in cases:
            if x in errors:
                continue
            p = subprocess.run([sys.executable, __file__, "--child", *x], capture_output=True, text=True, timeout=1800)
            if p.returncode != 0:
                errors[x] = (p.stderr.strip().splitlines() or ["?"])[-1][:200]
                print(f"{x}: FAILED {errors[x]}", file=sys.stderr, flush=True)
                continue
            results[x].append(json.loads(p.stdout.strip().splitlines()[-1]))
            print(x, results[x][-1], file=sys.stderr, flush=True)
    lines = [
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {args.rounds} rounds, medians; "
        f"server {http('SELECT version()').strip()} on {HOST}",
        "",
        "| data | op | client | into | wall (s) | CPU (s) | peak RSS (MiB) |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    for (kind, client, op, dataset), rs in results.items():
        if (kind, client, op, dataset) in errors:
            lines.append(f"| {dataset} | {kind} | {client} | {op} | failed: {errors[(kind, client, op, dataset)]} | | |")
            continue
        med = {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "rss_mib")}
        lines.append(f"| {dataset} | {kind} | {client} | {op} | {med['wall']:.3f} | {med['cpu']:.3f} | {med['rss_mib']:.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
