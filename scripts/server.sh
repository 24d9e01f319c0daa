#!/usr/bin/env bash
# Real ClickHouse 26.9 server for chnative's integration tests.
#
# The server is the chdb-core wheel (the whole ClickHouse engine as a Python
# extension) run by scripts/chserver.py with its TCP and HTTP listeners on.
#
# Usage: scripts/server.sh start|stop|restart|status|env|logs
#   start    create/reuse the venv, write config, start the server, wait until ready.
#            If a server already answers on the ports, reuse it (no second server).
#            Safe to call from several processes at once (flock).
#   stop     stop the server started by this script (pidfile; only that process group).
#   status   exit 0 and print details if the server answers, else exit 3.
#   env      print `export VAR=value` lines for tests:  eval "$(scripts/server.sh env)"
#   logs     print the tail of the server logs.
#
# Environment (all optional):
#   CHNATIVE_VENV          venv dir            (default $HOME/.cache/chnative/venv-chdb-26.9.0)
#   CHNATIVE_SERVER_DIR    run dir             (default ${TMPDIR:-/tmp}/chnative-server)
#   CHNATIVE_TCP_PORT      native TCP port     (default 19000)
#   CHNATIVE_HTTP_PORT     HTTP port           (default 18123)
#   CHNATIVE_START_TIMEOUT seconds to wait for readiness (default 120)
#   CHNATIVE_PYTHON        python used to create the venv (default python3)
#   CHNATIVE_LISTEN_HOST   address(es) the server listens on, comma-separated
#                          (default 127.0.0.1). The first one is where this script
#                          probes (0.0.0.0 / :: are probed on 127.0.0.1 / ::1). For the
#                          rate-limited link of scripts/slowlink.sh:
#                          CHNATIVE_LISTEN_HOST=127.0.0.1,10.77.0.1 (the link must be up
#                          first: the server fails to start on a missing address).
#                          Mind that `default` has no password: prefer specific
#                          addresses over 0.0.0.0.
#   CHNATIVE_SERVER_PROTO_CAPS       chunked framing of the native protocol, both
#                          directions: notchunked (the server's default when unset),
#                          chunked, notchunked_optional or chunked_optional.
#                          Written as <proto_caps><send>/<recv> in config.xml.
#   CHNATIVE_SERVER_PROTO_CAPS_SEND, CHNATIVE_SERVER_PROTO_CAPS_RECV
#                          the same for one direction (the server's sending or
#                          receiving side); they override CHNATIVE_SERVER_PROTO_CAPS.
#                          Use a separate CHNATIVE_SERVER_DIR and ports for such a
#                          server: `start` reuses a server already answering on the
#                          ports, and refuses one whose recorded proto_caps differ.
#
# Users (from users.xml in the run dir): `default` with no password, and
# `chn_pw` with password `secret`; both have full access incl. access management.
set -euo pipefail

CHDB_VERSION=26.9.0
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${CHNATIVE_VENV:-$HOME/.cache/chnative/venv-chdb-$CHDB_VERSION}"
RUN_DIR="${CHNATIVE_SERVER_DIR:-${TMPDIR:-/tmp}/chnative-server}"
LISTEN_HOSTS="${CHNATIVE_LISTEN_HOST:-127.0.0.1}"
LISTEN_HOSTS="${LISTEN_HOSTS//[[:space:]]/}"
[[ "$LISTEN_HOSTS" =~ ^[0-9A-Fa-f.:]+(,[0-9A-Fa-f.:]+)*$ ]] ||
    { echo "[server.sh] error: CHNATIVE_LISTEN_HOST '$LISTEN_HOSTS' is not a comma-separated list of IP addresses" >&2; exit 1; }
# Where the probes and `env` point: the first listen address (a wildcard means loopback).
HOST="${LISTEN_HOSTS%%,*}"
case "$HOST" in
0.0.0.0) HOST=127.0.0.1 ;;
::) HOST=::1 ;;
esac
TCP_PORT="${CHNATIVE_TCP_PORT:-19000}"
HTTP_PORT="${CHNATIVE_HTTP_PORT:-18123}"
START_TIMEOUT="${CHNATIVE_START_TIMEOUT:-120}"
PYTHON="${CHNATIVE_PYTHON:-python3}"
PROTO_SEND="${CHNATIVE_SERVER_PROTO_CAPS_SEND:-${CHNATIVE_SERVER_PROTO_CAPS:-}}"
PROTO_RECV="${CHNATIVE_SERVER_PROTO_CAPS_RECV:-${CHNATIVE_SERVER_PROTO_CAPS:-}}"
PIDFILE="$RUN_DIR/server.pid"
LOCKFILE="$RUN_DIR/server.lock"
LOGFILE="$RUN_DIR/server.log"
CAPSFILE="$RUN_DIR/proto_caps" # the proto_caps the running server was started with
DATA_DIR="$RUN_DIR/data" # TMPDIR of the engine: clickhouse-local creates its temp dirs here

log() { echo "[server.sh] $*" >&2; }
die() { log "error: $*"; exit 1; }

# --- probes ---------------------------------------------------------------

tcp_open() { # host port
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

http_select1() {
    local out
    if command -v curl >/dev/null 2>&1; then
        out="$(curl -s --max-time 5 "http://$HOST:$HTTP_PORT/" --data-binary 'SELECT 1' 2>/dev/null)" || return 1
    else
        # curl-less fallback: a raw HTTP/1.0 request over bash's /dev/tcp
        out="$(
            exec 3<>"/dev/tcp/$HOST/$HTTP_PORT" || exit 1
            printf 'POST / HTTP/1.0\r\nHost: %s\r\nContent-Length: 8\r\n\r\nSELECT 1' "$HOST" >&3
            timeout 5 cat <&3 | tail -n 1
        )" 2>/dev/null || return 1
    fi
    [[ "$out" == "1" ]]
}

server_answers() { tcp_open "$HOST" "$TCP_PORT" && http_select1; }

our_pid() { # prints the pid from the pidfile if that process is alive and is our chserver.py
    [[ -f "$PIDFILE" ]] || return 1
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null)" || return 1
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'chserver.py' || return 1
    echo "$pid"
}

# --- venv -----------------------------------------------------------------

venv_ok() {
    [[ -x "$VENV/bin/python" ]] &&
        "$VENV/bin/python" - "$CHDB_VERSION" <<'EOF' 2>/dev/null
import sys, importlib.metadata as m
sys.exit(0 if m.version("chdb-core") == sys.argv[1] else 1)
EOF
}

ensure_venv() {
    venv_ok && return 0
    mkdir -p "$(dirname "$VENV")"
    local lock="$VENV.lock"
    exec 8>"$lock"
    flock -w 900 8 || die "timeout waiting for $lock"
    if ! venv_ok; then
        log "installing chdb-core==$CHDB_VERSION into $VENV (one-time, ~500 MB, about a minute)"
        if [[ ! -x "$VENV/bin/python" ]]; then
            rm -rf "$VENV"
            "$PYTHON" -m venv "$VENV" ||
                die "'$PYTHON -m venv' failed (on Debian: apt-get install python3-venv)"
        fi
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "chdb-core==$CHDB_VERSION" ||
            die "pip install chdb-core==$CHDB_VERSION failed"
        venv_ok || die "chdb-core $CHDB_VERSION still not importable from $VENV"
        log "installed chdb-core==$CHDB_VERSION"
    fi
    flock -u 8
    exec 8>&-
}

# --- config ---------------------------------------------------------------

check_proto_cap() { # value: the four values the server's TCPHandler understands
    case "$1" in
    "" | notchunked | chunked | notchunked_optional | chunked_optional) ;;
    *) die "proto_caps value '$1' is not notchunked, chunked, notchunked_optional or chunked_optional" ;;
    esac
}

proto_caps_xml() { # the <proto_caps> element, empty when neither direction is set
    [[ -n "$PROTO_SEND$PROTO_RECV" ]] || return 0
    echo "    <proto_caps>"
    [[ -z "$PROTO_SEND" ]] || echo "        <send>$PROTO_SEND</send>"
    [[ -z "$PROTO_RECV" ]] || echo "        <recv>$PROTO_RECV</recv>"
    echo "    </proto_caps>"
}

listen_hosts_xml() { # one <listen_host> per address of CHNATIVE_LISTEN_HOST
    local h
    for h in ${LISTEN_HOSTS//,/ }; do
        echo "    <listen_host>$h</listen_host>"
    done
}

proto_caps_line() { echo "send=${PROTO_SEND:-default} recv=${PROTO_RECV:-default}"; }

write_config() {
    mkdir -p "$RUN_DIR"
    proto_caps_line >"$CAPSFILE"
    cat >"$RUN_DIR/config.xml" <<EOF
<clickhouse>
$(listen_hosts_xml)
    <tcp_port>$TCP_PORT</tcp_port>
    <http_port>$HTTP_PORT</http_port>
    <users_config>users.xml</users_config>
$(proto_caps_xml)
    <logger>
        <log>$RUN_DIR/clickhouse.log</log>
        <errorlog>$RUN_DIR/clickhouse.err.log</errorlog>
        <level>information</level>
        <console>0</console>
    </logger>
    <!-- Spans of queries that arrive with a sampled W3C trace context (tests/tracing.rs). -->
    <opentelemetry_span_log>
        <database>system</database>
        <table>opentelemetry_span_log</table>
        <flush_interval_milliseconds>1000</flush_interval_milliseconds>
    </opentelemetry_span_log>
</clickhouse>
EOF
    cat >"$RUN_DIR/users.xml" <<'EOF'
<clickhouse>
    <profiles>
        <default/>
    </profiles>
    <quotas>
        <default/>
    </quotas>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>::/0</ip>
                <ip>127.0.0.1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
            <access_management>1</access_management>
        </default>
        <chn_pw>
            <password>secret</password>
            <networks>
                <ip>::/0</ip>
                <ip>127.0.0.1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
            <access_management>1</access_management>
        </chn_pw>
    </users>
</clickhouse>
EOF
}

# --- commands -------------------------------------------------------------

ready_line() { # pid
    echo "clickhouse ready tcp=$HOST:$TCP_PORT http=$HOST:$HTTP_PORT pid=$1"
}

kill_group() { # pid: TERM the process group (fallback: the pid), wait, then KILL
    local pid="$1" pgid i
    pgid="$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ')" || true
    if [[ "$pgid" == "$pid" ]]; then
        kill -TERM -- "-$pid" 2>/dev/null || true
    else
        kill -TERM "$pid" 2>/dev/null || true
    fi
    for ((i = 0; i < 150; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.2
    done
    log "pid $pid did not exit after SIGTERM; sending SIGKILL"
    if [[ "$pgid" == "$pid" ]]; then kill -KILL -- "-$pid" 2>/dev/null || true; else kill -KILL "$pid" 2>/dev/null || true; fi
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

cmd_start() {
    check_proto_cap "$PROTO_SEND"
    check_proto_cap "$PROTO_RECV"
    mkdir -p "$RUN_DIR"
    exec 9>"$LOCKFILE"
    flock -w $((START_TIMEOUT + 900)) 9 || die "timeout waiting for lock $LOCKFILE"

    local pid
    if server_answers; then
        pid="$(our_pid || echo external)"
        if [[ "$pid" != external && "$(cat "$CAPSFILE" 2>/dev/null || proto_caps_line)" != "$(proto_caps_line)" ]]; then
            die "the server on $HOST:$TCP_PORT runs with proto_caps '$(cat "$CAPSFILE")', not '$(proto_caps_line)'; stop it or use other ports and CHNATIVE_SERVER_DIR"
        fi
        ready_line "$pid"
        return 0
    fi
    if pid="$(our_pid)"; then
        # Ours but not answering (e.g. half-dead): replace it.
        log "server pid $pid does not answer; stopping it"
        kill_group "$pid" || die "could not stop pid $pid"
    fi
    rm -f "$PIDFILE"
    if tcp_open "$HOST" "$TCP_PORT"; then
        die "port $HOST:$TCP_PORT is taken by something that is not a working ClickHouse (HTTP $HTTP_PORT gives no 'SELECT 1'); set CHNATIVE_TCP_PORT/CHNATIVE_HTTP_PORT"
    fi
    if tcp_open "$HOST" "$HTTP_PORT"; then
        die "port $HOST:$HTTP_PORT is taken by something else; set CHNATIVE_HTTP_PORT"
    fi

    ensure_venv
    write_config
    rm -rf "$DATA_DIR"
    mkdir -p "$DATA_DIR"
    : >"$LOGFILE"

    local t0=$SECONDS
    # setsid: own session/process group (pgid == pid) so stop can kill the group.
    # 9>&- : the server must not inherit the start lock.
    TMPDIR="$DATA_DIR" setsid nohup "$VENV/bin/python" -u "$SCRIPT_DIR/chserver.py" "$RUN_DIR" \
        </dev/null >>"$LOGFILE" 2>&1 9>&- &
    pid=$!
    echo "$pid" >"$PIDFILE"
    log "started pid $pid; waiting up to ${START_TIMEOUT}s for tcp=$HOST:$TCP_PORT http=$HOST:$HTTP_PORT"

    while ((SECONDS - t0 < START_TIMEOUT)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            log "server process exited during startup; last log lines ($LOGFILE):"
            tail -n 30 "$LOGFILE" >&2 || true
            rm -f "$PIDFILE"
            exit 1
        fi
        if server_answers; then
            log "ready after $((SECONDS - t0))s"
            ready_line "$pid"
            return 0
        fi
        sleep 0.25
    done
    log "server not ready after ${START_TIMEOUT}s; last log lines ($LOGFILE):"
    tail -n 30 "$LOGFILE" >&2 || true
    kill_group "$pid" || true
    rm -f "$PIDFILE"
    exit 1
}

cmd_stop() {
    [[ -d "$RUN_DIR" ]] || { log "not running (no $RUN_DIR)"; return 0; }
    exec 9>"$LOCKFILE"
    flock -w $((START_TIMEOUT + 60)) 9 || die "timeout waiting for lock $LOCKFILE"
    local pid
    if pid="$(our_pid)"; then
        log "stopping pid $pid"
        kill_group "$pid" || die "pid $pid is still alive"
        log "stopped"
    else
        log "no server started by this script is running (pidfile $PIDFILE)"
    fi
    rm -f "$PIDFILE" "$CAPSFILE"
    rm -rf "$DATA_DIR"
}

cmd_status() {
    local pid
    pid="$(our_pid || echo none)"
    if server_answers; then
        echo "running tcp=$HOST:$TCP_PORT http=$HOST:$HTTP_PORT pid=$pid run_dir=$RUN_DIR"
        return 0
    fi
    echo "not answering tcp=$HOST:$TCP_PORT http=$HOST:$HTTP_PORT pid=$pid run_dir=$RUN_DIR"
    return 3
}

cmd_env() {
    cat <<EOF
export CHNATIVE_HOST=$HOST
export CHNATIVE_TCP_PORT=$TCP_PORT
export CHNATIVE_HTTP_PORT=$HTTP_PORT
export CHNATIVE_SERVER_DIR=$RUN_DIR
export CHNATIVE_USER=default
export CHNATIVE_PASSWORD=
export CHNATIVE_PW_USER=chn_pw
export CHNATIVE_PW_PASSWORD=secret
EOF
}

cmd_logs() {
    local f
    for f in "$LOGFILE" "$RUN_DIR/clickhouse.err.log" "$RUN_DIR/clickhouse.log"; do
        [[ -f "$f" ]] || continue
        echo "==> $f <=="
        tail -n "${LINES_TO_SHOW:-40}" "$f"
    done
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
restart) cmd_stop; cmd_start ;;
status) cmd_status ;;
env) cmd_env ;;
logs) cmd_logs ;;
*)
    sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
