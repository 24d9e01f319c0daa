#!/usr/bin/env python3
"""Run a real ClickHouse server (the chdb-core engine) with TCP and HTTP listeners.

Usage:  python chserver.py RUN_DIR

RUN_DIR must already contain config.xml (listen_host elements, tcp_port, http_port,
users_config) and the users file; scripts/server.sh writes both. Normally you
do not call this directly: `scripts/server.sh start` runs it in the background
with the venv's python.

How it works (found by experiment with chdb-core 26.9.0):
  * chdb's embedded clickhouse-local reads config.xml from the *current working
    directory*, and `import chdb` already opens a connection, so we chdir
    before importing chdb.
  * `SYSTEM START LISTEN TCP/HTTP` only works through `_chdb.query(...)`
    (a persistent `_chdb.connect()` connection says "start_servers_callback is
    not set"). Each `_chdb.query` call builds and tears down its own engine and
    the listeners die when the call returns; a second `_chdb.query` in the same
    process fails with "EventNotifier is initialized twice". So everything is
    sent as ONE multi-statement call: start both listeners, then run a query
    that sleeps (practically) forever, which keeps the listeners up for as long
    as this process lives.
  * Data lives in a temporary directory; every start begins empty.

Exit status: 0 never happens in normal operation (the process is killed by
`server.sh stop`); 1 = the engine returned or failed; 2 = bad usage/config.
"""

import os
import socket
import sys
import time
import xml.etree.ElementTree as ET

SLEEP_FOREVER = (
    "SELECT sleepEachRow(1) FROM numbers(1000000000) "
    "SETTINGS max_block_size = 1, function_sleep_max_microseconds_per_block = 0 "
    "FORMAT Null"
)


def log(msg):
    sys.stderr.write("[chserver %s pid=%d] %s\n" % (time.strftime("%H:%M:%S"), os.getpid(), msg))
    sys.stderr.flush()


def port_free(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    run_dir = os.path.abspath(sys.argv[1])
    cfg = os.path.join(run_dir, "config.xml")
    if not os.path.isfile(cfg):
        log("error: %s does not exist (server.sh writes it)" % cfg)
        return 2
    try:
        root = ET.parse(cfg).getroot()
        hosts = [e.text.strip() for e in root.findall("listen_host") if e.text and e.text.strip()]
        hosts = hosts or ["127.0.0.1"]
        tcp_port = int(root.findtext("tcp_port"))
        http_port = int(root.findtext("http_port"))
        users = root.findtext("users_config", "")
    except Exception as e:  # noqa: BLE001
        log("error: cannot read %s: %s" % (cfg, e))
        return 2
    users_path = os.path.join(run_dir, users) if users else ""
    if users and not os.path.isfile(users_path):
        log("error: users_config %s does not exist" % users_path)
        return 2

    # The engine's own "address already in use" error is easy to miss; check first.
    for host in hosts:
        for name, port in (("tcp_port", tcp_port), ("http_port", http_port)):
            if not port_free(host, port):
                log("error: %s %s:%d is already in use by another process (or the address does not exist)"
                    % (name, host, port))
                return 1

    # Must happen before `import chdb`: the engine reads ./config.xml.
    os.chdir(run_dir)
    t0 = time.time()
    try:
        from chdb import _chdb  # noqa: PLC0415
        import chdb  # noqa: PLC0415,F401
    except Exception as e:  # noqa: BLE001
        log("error: cannot import chdb (is chdb-core installed in this python? %s): %s"
            % (sys.executable, e))
        return 1
    log("chdb %s (engine %s) imported in %.2fs from %s; cwd=%s"
        % (getattr(chdb, "__version__", "?"), getattr(chdb, "engine_version", "?"),
           time.time() - t0, os.path.dirname(chdb.__file__), os.getcwd()))
    log("starting listeners on %s: tcp=%d http=%d users_config=%s"
        % (",".join(hosts), tcp_port, http_port, users_path or "(none)"))

    sql = "SYSTEM START LISTEN TCP; SYSTEM START LISTEN HTTP; " + SLEEP_FOREVER
    try:
        res = _chdb.query(sql, "CSV")
    except Exception as e:  # noqa: BLE001
        log("error: engine query failed: %s" % e)
        return 1
    err = None
    try:
        if res.has_error():
            err = res.error_message()
    except Exception:  # noqa: BLE001
        pass
    if err:
        log("error: engine query failed: %s" % err)
    else:
        log("error: the sleeping query returned unexpectedly (output %r)" % (res.bytes()[:200],))
    return 1


if __name__ == "__main__":
    sys.exit(main())
