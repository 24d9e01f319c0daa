#!/usr/bin/env bash
# Real ClickHouse server for chnative's integration tests: 26.9 by default, or another
# release users run (CHNATIVE_SERVER_VERSION).
#
# Every version comes from a PyPI wheel that holds the whole ClickHouse engine, installed into
# a cached venv of its own, and is started by the route that wheel supports:
#   26.9, 26.7  chdb-core 26.9.0 / 26.7.0: the embedded engine (clickhouse-local underneath)
#               with its TCP and HTTP listeners turned on by scripts/chserver.py
#               (`SYSTEM START LISTEN`). No Keeper, no system.query_log, no CREATE ROLE, and
#               HTTP answers in CSV unless a format is asked for.
#   25.8, 24.8, chdb 3.7.2 / 3.0.1 / 2.0.4: a full `clickhouse server`, run by
#   24.5        scripts/chmain.py through the entry point the wheel's shared library exports
#               (mainEntryClickHouseServer). Access storage (CREATE ROLE/USER), query_log,
#               and with CHNATIVE_ZOOKEEPER a ZooKeeper for ReplicatedMergeTree.
#               HTTP answers in TSV, as real servers do.
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
#   CHNATIVE_SERVER_VERSION  26.9 (default), 26.7, 25.8, 24.8 or 24.5. `start` refuses to
#                          reuse a server on the ports that runs another version: stop it first.
#   CHNATIVE_ZOOKEEPER     host:port of a ZooKeeper (scripts/zookeeper.sh) written into a full
#                          server's config (25.8/24.8/24.5 only; the embedded ones have none).
#   CHNATIVE_INTERSERVER_PORT  with CHNATIVE_ZOOKEEPER: the interserver HTTP port replicas
#                          fetch parts from each other on (default 19009)
#   CHNATIVE_VENV          venv dir  (default $HOME/.cache/chnative/venv-<wheel>-<wheel version>)
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

SERVER_VERSION="${CHNATIVE_SERVER_VERSION:-26.9}"
# The wheel of each version, and its route: embedded (chserver.py) or full (chmain.py server).
case "$SERVER_VERSION" in
26.9) WHEEL=chdb-core WHEEL_VERSION=26.9.0 ROUTE=embedded ;;
26.7) WHEEL=chdb-core WHEEL_VERSION=26.7.0 ROUTE=embedded ;;
25.8) WHEEL=chdb WHEEL_VERSION=3.7.2 ROUTE=full ;;
24.8) WHEEL=chdb WHEEL_VERSION=3.0.1 ROUTE=full ;;
24.5) WHEEL=chdb WHEEL_VERSION=2.0.4 ROUTE=full ;;
*)
    echo "[server.sh] error: CHNATIVE_SERVER_VERSION '$SERVER_VERSION' is not one of 26.9 26.7 25.8 24.8 24.5" >&2
    exit 1
    ;;
esac
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The default 26.9 venv keeps the name it always had, so existing caches are reused.
if [[ "$WHEEL" == chdb-core ]]; then
    VENV="${CHNATIVE_VENV:-$HOME/.cache/chnative/venv-chdb-$WHEEL_VERSION}"
else
    VENV="${CHNATIVE_VENV:-$HOME/.cache/chnative/venv-$WHEEL-$WHEEL_VERSION}"
fi
ZOOKEEPER="${CHNATIVE_ZOOKEEPER:-}"
[[ -z "$ZOOKEEPER" || "$ZOOKEEPER" =~ ^[0-9A-Za-z.:-]+:[0-9]+$ ]] ||
    { echo "[server.sh] error: CHNATIVE_ZOOKEEPER '$ZOOKEEPER' is not host:port" >&2; exit 1; }
[[ -z "$ZOOKEEPER" || "$ROUTE" == full ]] ||
    { echo "[server.sh] error: CHNATIVE_ZOOKEEPER needs a full server (25.8, 24.8, 24.5): the embedded $SERVER_VERSION has no ZooKeeper client" >&2; exit 1; }
INTERSERVER_PORT="${CHNATIVE_INTERSERVER_PORT:-19009}"
[[ "$INTERSERVER_PORT" =~ ^[0-9]+$ ]] || { echo "[server.sh] error: CHNATIVE_INTERSERVER_PORT '$INTERSERVER_PORT' is not a port" >&2; exit 1; }
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
VERSIONFILE="$RUN_DIR/server_version" # the CHNATIVE_SERVER_VERSION the running server was started as
DATA_DIR="$RUN_DIR/data" # TMPDIR of the engine: clickhouse-local creates its temp dirs here

log() { echo "[server.sh] $*" >&2; }
die() { log "error: $*"; exit 1; }

# --- probes ---------------------------------------------------------------

tcp_open() { # host port
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

http_query() { # sql: the server's answer on the HTTP port, last line (fails when none answers)
    local sql="$1"
    if command -v curl >/dev/null 2>&1; then
        curl -s --max-time 5 "http://$HOST:$HTTP_PORT/" --data-binary "$sql" 2>/dev/null
    else
        # curl-less fallback: a raw HTTP/1.0 request over bash's /dev/tcp (the SQL is ASCII:
        # its length in characters is its length in bytes)
        (
            exec 3<>"/dev/tcp/$HOST/$HTTP_PORT" || exit 1
            printf 'POST / HTTP/1.0\r\nHost: %s\r\nContent-Length: %d\r\n\r\n%s' "$HOST" "${#sql}" "$sql" >&3
            timeout 5 cat <&3 | tail -n 1
        ) 2>/dev/null
    fi
}

http_select1() {
    local out
    out="$(http_query 'SELECT 1 FORMAT TSV')" || return 1
    [[ "$out" == "1" ]]
}

server_answers() { tcp_open "$HOST" "$TCP_PORT" && http_select1; }

http_version() { # the major.minor of the server answering on the HTTP port (empty when none)
    local out
    out="$(http_query 'SELECT version() FORMAT TSV')" || return 0
    if [[ "$out" =~ ^([0-9]+\.[0-9]+)\. ]]; then
        echo "${BASH_REMATCH[1]}"
    fi
    return 0
}

our_pid() { # prints the pid from the pidfile if that process is alive and is our chserver.py/chmain.py
    [[ -f "$PIDFILE" ]] || return 1
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null)" || return 1
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -Eq 'chserver\.py|chmain\.py' || return 1
    echo "$pid"
}

# --- venv -----------------------------------------------------------------

venv_ok() {
    [[ -x "$VENV/bin/python" ]] &&
        "$VENV/bin/python" - "$WHEEL" "$WHEEL_VERSION" <<'EOF' 2>/dev/null
import sys, importlib.metadata as m
sys.exit(0 if m.version(sys.argv[1]) == sys.argv[2] else 1)
EOF
}

ensure_venv() {
    venv_ok && return 0
    mkdir -p "$(dirname "$VENV")"
    local lock="$VENV.lock"
    exec 8>"$lock"
    flock -w 900 8 || die "timeout waiting for $lock"
    if ! venv_ok; then
        log "installing $WHEEL==$WHEEL_VERSION (ClickHouse $SERVER_VERSION) into $VENV (one-time, ~500 MB, about a minute)"
        if [[ ! -x "$VENV/bin/python" ]]; then
            rm -rf "$VENV"
            "$PYTHON" -m venv "$VENV" ||
                die "'$PYTHON -m venv' failed (on Debian: apt-get install python3-venv)"
        fi
        # The full route only loads the wheel's shared library (chmain.py): chdb's Python
        # dependencies (pandas, pyarrow) are for its own Python API and are not installed.
        local nodeps=()
        [[ "$ROUTE" == full ]] && nodeps=(--no-deps)
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${nodeps[@]}" "$WHEEL==$WHEEL_VERSION" ||
            die "pip install $WHEEL==$WHEEL_VERSION failed"
        venv_ok || die "$WHEEL $WHEEL_VERSION still not importable from $VENV"
        log "installed $WHEEL==$WHEEL_VERSION"
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

full_server_xml() { # what a full server needs beside the embedded one's config
    [[ "$ROUTE" == full ]] || return 0
    cat <<EOF
    <!-- A full server keeps its tables, access entities and logs under <path>: in DATA_DIR,
         emptied at every start like the embedded server's. -->
    <path>$DATA_DIR/</path>
    <tmp_path>$DATA_DIR/tmp/</tmp_path>
    <user_files_path>$DATA_DIR/user_files/</user_files_path>
    <format_schema_path>$DATA_DIR/format_schemas/</format_schema_path>
    <!-- users.xml for the two test users, and a writable local directory for CREATE ROLE/USER. -->
    <user_directories>
        <users_xml><path>$RUN_DIR/users.xml</path></users_xml>
        <local_directory><path>$DATA_DIR/access/</path></local_directory>
    </user_directories>
    <query_log>
        <database>system</database>
        <table>query_log</table>
        <flush_interval_milliseconds>1000</flush_interval_milliseconds>
    </query_log>
    <!-- The full server defaults its caches to several GiB each; a test server needs little. -->
    <mark_cache_size>268435456</mark_cache_size>
    <uncompressed_cache_size>0</uncompressed_cache_size>
EOF
    [[ -n "$ZOOKEEPER" ]] || return 0
    cat <<EOF
    <zookeeper>
        <node><host>${ZOOKEEPER%:*}</host><port>${ZOOKEEPER##*:}</port></node>
        <session_timeout_ms>30000</session_timeout_ms>
    </zookeeper>
    <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
    <!-- Replicas fetch the parts they lack from each other over interserver HTTP. -->
    <interserver_http_port>$INTERSERVER_PORT</interserver_http_port>
    <interserver_http_host>$HOST</interserver_http_host>
EOF
}

span_log_partition_xml() {
    # A full 24.8 server partitions and sorts the span log by event_date and event_time by
    # default, columns that table does not have: every flush fails (UNKNOWN_IDENTIFIER) and
    # SYSTEM FLUSH LOGS waits 180 s. Its own keys, as ClickHouse's shipped config has them:
    [[ "$ROUTE" == full ]] || return 0
    echo "        <partition_by>toYYYYMM(finish_date)</partition_by>"
    echo "        <order_by>finish_date, finish_time_us, trace_id</order_by>"
}

write_config() {
    mkdir -p "$RUN_DIR"
    proto_caps_line >"$CAPSFILE"
    echo "$SERVER_VERSION" >"$VERSIONFILE"
    cat >"$RUN_DIR/config.xml" <<EOF
<clickhouse>
$(listen_hosts_xml)
    <tcp_port>$TCP_PORT</tcp_port>
    <http_port>$HTTP_PORT</http_port>
    <users_config>users.xml</users_config>
$(proto_caps_xml)
$(full_server_xml)
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
$(span_log_partition_xml)
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
        local running
        running="$(http_version)"
        if [[ -n "$running" && "$running" != "$SERVER_VERSION" ]]; then
            die "the server on $HOST:$TCP_PORT is ClickHouse $running, not $SERVER_VERSION (CHNATIVE_SERVER_VERSION); stop it first (scripts/server.sh stop, with the same CHNATIVE_SERVER_DIR) or use other ports and CHNATIVE_SERVER_DIR"
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
    if [[ -n "$ZOOKEEPER" ]] && tcp_open "$HOST" "$INTERSERVER_PORT"; then
        die "port $HOST:$INTERSERVER_PORT is taken by something else; set CHNATIVE_INTERSERVER_PORT"
    fi

    ensure_venv
    write_config
    rm -rf "$DATA_DIR"
    mkdir -p "$DATA_DIR"
    : >"$LOGFILE"

    local t0=$SECONDS
    # setsid: own session/process group (pgid == pid) so stop can kill the group.
    # 9>&- : the server must not inherit the start lock.
    local prog=("$SCRIPT_DIR/chserver.py" "$RUN_DIR")
    if [[ "$ROUTE" == full ]]; then
        mkdir -p "$DATA_DIR/tmp" "$DATA_DIR/user_files" "$DATA_DIR/format_schemas" "$DATA_DIR/access"
        prog=("$SCRIPT_DIR/chmain.py" server "--config-file=$RUN_DIR/config.xml")
    fi
    log "ClickHouse $SERVER_VERSION ($WHEEL==$WHEEL_VERSION, $ROUTE server)"
    (cd "$RUN_DIR" && TMPDIR="$DATA_DIR" CLICKHOUSE_WATCHDOG_ENABLE=0 exec setsid nohup "$VENV/bin/python" -u "${prog[@]}" \
        </dev/null >>"$LOGFILE" 2>&1 9>&-) &
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
    rm -f "$PIDFILE" "$CAPSFILE" "$VERSIONFILE"
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
export CHNATIVE_SERVER_VERSION=$SERVER_VERSION
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
    sed -n '2,59p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
