#!/usr/bin/env bash
# The official clickhouse-client and clickhouse-benchmark 25.8, as peers of chn.
#
# Both come from the chdb 3.7.2 wheel (ClickHouse 25.8 LTS), whose shared library exports their
# entry points; scripts/chmain.py calls them through ctypes. This script installs the wheel into
# the cached venv scripts/server.sh uses for CHNATIVE_SERVER_VERSION=25.8 (once, ~170 MB, no
# Python dependencies: only the shared library is loaded), then runs the tool with the arguments
# given. It runs as clickhouse-client or clickhouse-benchmark by the name it was called by
# (scripts/clickhouse-benchmark.sh is a link to it), or by its first argument (client|benchmark).
#
#   scripts/clickhouse-client.sh --port 19000 --query "SELECT 1 INTO OUTFILE '/dev/stdout' APPEND"
#   echo "SELECT 1" | scripts/clickhouse-benchmark.sh --port 19000 --concurrency 16 -i 10000
#   scripts/clickhouse-client.sh --install     (install the venv only; prints its python)
#
# Under chdb the client's result output to stdout is swallowed (chdb captures it for its Python
# API): write results with `INTO OUTFILE '<file>'`, or `INTO OUTFILE '/dev/stdout' APPEND` to get
# them on stdout. Messages and errors go to stderr as usual, and so do clickhouse-benchmark's
# figures. The client prints a harmless "Unknown settings: `default_format`, skipping" on stderr.
#
# Environment: CHNATIVE_CPP_VENV  venv dir (default $HOME/.cache/chnative/venv-chdb-3.7.2)
#              CHNATIVE_PYTHON    python used to create the venv (default python3)
set -euo pipefail

WHEEL=chdb
WHEEL_VERSION=3.7.2
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${CHNATIVE_CPP_VENV:-$HOME/.cache/chnative/venv-$WHEEL-$WHEEL_VERSION}"
PYTHON="${CHNATIVE_PYTHON:-python3}"

log() { echo "[clickhouse-client.sh] $*" >&2; }
die() { log "error: $*"; exit 1; }

venv_ok() {
    [[ -x "$VENV/bin/python" ]] &&
        "$VENV/bin/python" - "$WHEEL" "$WHEEL_VERSION" <<'EOF' 2>/dev/null
import sys, importlib.metadata as m
sys.exit(0 if m.version(sys.argv[1]) == sys.argv[2] else 1)
EOF
}

ensure_venv() { # the same venv, lock and install as scripts/server.sh's for 25.8
    venv_ok && return 0
    mkdir -p "$(dirname "$VENV")"
    exec 8>"$VENV.lock"
    flock -w 900 8 || die "timeout waiting for $VENV.lock"
    if ! venv_ok; then
        log "installing $WHEEL==$WHEEL_VERSION (clickhouse-client 25.8) into $VENV (one-time, ~170 MB)"
        if [[ ! -x "$VENV/bin/python" ]]; then
            rm -rf "$VENV"
            "$PYTHON" -m venv "$VENV" || die "'$PYTHON -m venv' failed (on Debian: apt-get install python3-venv)"
        fi
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "$WHEEL==$WHEEL_VERSION" ||
            die "pip install $WHEEL==$WHEEL_VERSION failed"
        venv_ok || die "$WHEEL $WHEEL_VERSION still not importable from $VENV"
    fi
    flock -u 8
    exec 8>&-
}

case "$(basename "$0")" in
clickhouse-benchmark*) TOOL=benchmark ;;
*) TOOL=client ;;
esac
case "${1:-}" in
client | benchmark) TOOL="$1"; shift ;;
--install) ensure_venv; echo "$VENV/bin/python"; exit 0 ;;
esac

ensure_venv
exec "$VENV/bin/python" "$SCRIPT_DIR/chmain.py" "$TOOL" "$@"
