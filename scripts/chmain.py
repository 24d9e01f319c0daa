#!/usr/bin/env python3
"""Run one of the ClickHouse programs built into a chdb wheel's shared library.

Usage:  python chmain.py server|client|benchmark [ARGS...]

The `chdb` wheels 2.x and 3.x (ClickHouse 24.5, 24.8 LTS, 25.8 LTS) link the whole ClickHouse
multi-call binary into `chdb/_chdb*.so` and export its entry points with C++ name mangling:
`_Z25mainEntryClickHouseServeriPPc` is `int mainEntryClickHouseServer(int, char **)`. Calling it
through ctypes runs the real program in this process: `server` is a full `clickhouse server`
(access storage, system logs, macros, remote_servers, ZooKeeper client), `client` and
`benchmark` (chdb 3.7.2 only) the official clickhouse-client and clickhouse-benchmark.

The process exits with the entry point's return value. The server stops on SIGTERM.
Run it with the venv's python that has the wheel installed (scripts/server.sh does).
"""

import ctypes
import glob
import os
import sys

ENTRIES = {
    "server": "_Z25mainEntryClickHouseServeriPPc",
    "client": "_Z25mainEntryClickHouseClientiPPc",
    "benchmark": "_Z28mainEntryClickHouseBenchmarkiPPc",
}


def library():
    import importlib.util  # noqa: PLC0415

    spec = importlib.util.find_spec("chdb")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("chmain.py: no chdb package in %s" % sys.executable)
    pkg = list(spec.submodule_search_locations)[0]
    libs = sorted(glob.glob(os.path.join(pkg, "_chdb*.so")))
    if not libs:
        sys.exit("chmain.py: no _chdb*.so in %s" % pkg)
    return libs[0]


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ENTRIES:
        sys.stderr.write(__doc__)
        return 2
    prog = sys.argv[1]
    path = library()
    # RTLD_GLOBAL: the engine resolves some of its own symbols dynamically.
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    try:
        entry = getattr(lib, ENTRIES[prog])
    except AttributeError:
        sys.exit("chmain.py: %s has no %s entry point (chdb 3.7.2 has client and benchmark)" % (path, prog))
    entry.restype = ctypes.c_int
    entry.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    args = ["clickhouse-" + prog] + sys.argv[2:]
    argv = (ctypes.c_char_p * (len(args) + 1))(*[a.encode() for a in args], None)
    if prog == "server":
        # Without this the server forks a watchdog parent, and SIGTERM to our pid would not
        # reach the real server.
        os.environ["CLICKHOUSE_WATCHDOG_ENABLE"] = "0"
    sys.stdout.flush()
    rc = entry(len(args), argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc & 0xFF)


if __name__ == "__main__":
    sys.exit(main())
