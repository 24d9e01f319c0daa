"""The server's HTTP `FORMAT ArrowStream` read by pyarrow: one measured read.

Run by chnative-peers' Arrow workload (src/arrow_rb.rs), one process per round,
so interpreter start-up and imports are not measured:

    python arrow_http.py HOST PORT QUERY

Prints one JSON line: wall and client CPU (getrusage of this process, user + sys)
of the whole read (HTTP request, the stream decoded batch by batch as it
arrives, the checksum), the bytes and allocations of Arrow's memory pool, the
bytes the HTTP body was read in (Python bytes objects, not counted by the
pool), rows, and the bench checksum: every integer sign-extended, every Date
(days) and DateTime (seconds) value, every string's length, wrapping at 2^64.
"""

import http.client
import json
import resource
import sys
import time
import urllib.parse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MASK = (1 << 64) - 1


class CountingBody:
    """The HTTP response as a file, counting the bytes handed to pyarrow."""

    def __init__(self, resp):
        self.resp = resp
        self.bytes = 0
        self.closed = False

    def read(self, n=-1):
        b = self.resp.read(n) if n is not None and n >= 0 else self.resp.read()
        self.bytes += len(b)
        return b

    def readable(self):
        return True


def column_sum(a):
    t = a.type
    if pa.types.is_binary(t) or pa.types.is_string(t) or pa.types.is_large_binary(t) or pa.types.is_large_string(t):
        n = pc.sum(pc.binary_length(a)).as_py()
        return (n or 0) & MASK
    if pa.types.is_temporal(t):
        a = a.view(pa.int32() if t.bit_width == 32 else pa.int64())
    v = a.to_numpy(zero_copy_only=False)
    if v.dtype.kind == "i":
        v = v.astype(np.int64)
    return int(v.astype(np.uint64).sum(dtype=np.uint64))


def main():
    host, port, query = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    pool = pa.default_memory_pool()
    path = "/?" + urllib.parse.urlencode({"query": query + " FORMAT ArrowStream", "user": "default"})

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    b0, n0, c0, t0 = pool.total_bytes_allocated(), pool.num_allocations(), cpu(), time.perf_counter()
    conn = http.client.HTTPConnection(host, port)
    conn.request("GET", path)
    resp = conn.getresponse()
    if resp.status != 200:
        raise SystemExit(f"HTTP {resp.status}: {resp.read()[:500]!r}")
    body = CountingBody(resp)
    reader = pa.ipc.open_stream(body)
    rows, total = 0, 0
    for batch in reader:
        for col in batch.columns:
            total = (total + column_sum(col)) & MASK
        rows += batch.num_rows
    conn.close()
    wall, used = time.perf_counter() - t0, cpu() - c0
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": used,
                "pool_bytes": pool.total_bytes_allocated() - b0,
                "pool_allocs": pool.num_allocations() - n0,
                "body_bytes": body.bytes,
                "rows": rows,
                "sum": total,
                "pyarrow": pa.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
