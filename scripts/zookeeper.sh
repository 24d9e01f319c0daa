#!/usr/bin/env bash
# A standalone Apache ZooKeeper on loopback, for the ReplicatedMergeTree tables and ON CLUSTER
# DDL of the full ClickHouse servers (scripts/server.sh and scripts/cluster.sh with
# CHNATIVE_SERVER_VERSION / CHNATIVE_CLUSTER_VERSION 25.8 or 24.8). The chdb wheels that run
# those servers are built without NuRaft, so they have no built-in Keeper.
#
# ZooKeeper comes from Debian's `zookeeper` package (3.8, with a Java runtime). `start`
# installs it with apt-get when it is missing and this runs as root (CI); otherwise it exits
# with status 4 and says how to install it (the tests that need it then skip).
#
# Usage: scripts/zookeeper.sh start|stop|restart|status|env|logs|install
#   start    install if needed and allowed, write zoo.cfg, start ZooKeeper, wait until it
#            answers `ruok` with `imok`. If a ZooKeeper already answers on the port, reuse it.
#            Safe to call from several processes at once (flock).
#   stop     stop the ZooKeeper started by this script (pidfile; nothing else); its data dir
#            is removed.
#   status   exit 0 and print details if it answers, else exit 3.
#   env      print `export VAR=value` lines:  eval "$(scripts/zookeeper.sh env)"
#   logs     the tail of its log.
#   install  apt-get install zookeeper (as root), whether or not it is there.
#
# Exit status: 0 ok, 1 error, 3 not answering (status), 4 ZooKeeper is not installed and
# cannot be installed here (not root, or no apt-get).
#
# Environment (all optional):
#   CHNATIVE_ZOOKEEPER_DIR      run dir: zoo.cfg, data, log, pidfile
#                               (default ${TMPDIR:-/tmp}/chnative-zookeeper)
#   CHNATIVE_ZOOKEEPER_PORT     client port on 127.0.0.1 (default 29181)
#   CHNATIVE_ZOOKEEPER_INSTALL  auto (default: apt-get install when missing and root),
#                               1 (the same, and fail rather than exit 4), 0 (never install)
#   CHNATIVE_ZOOKEEPER_CLASSPATH  where the ZooKeeper classes are (default
#                               /usr/share/java/zookeeper.jar, whose manifest lists the rest)
#   CHNATIVE_ZOOKEEPER_HEAP     JVM heap (default 256m)
#   CHNATIVE_START_TIMEOUT      seconds to wait for readiness (default 120)
#   JAVA                        the java binary (default: java on PATH)
set -euo pipefail

DIR="${CHNATIVE_ZOOKEEPER_DIR:-${TMPDIR:-/tmp}/chnative-zookeeper}"
PORT="${CHNATIVE_ZOOKEEPER_PORT:-29181}"
INSTALL="${CHNATIVE_ZOOKEEPER_INSTALL:-auto}"
CLASSPATH_ZK="${CHNATIVE_ZOOKEEPER_CLASSPATH:-/usr/share/java/zookeeper.jar}"
HEAP="${CHNATIVE_ZOOKEEPER_HEAP:-256m}"
START_TIMEOUT="${CHNATIVE_START_TIMEOUT:-120}"
HOST=127.0.0.1
PIDFILE="$DIR/zookeeper.pid"
LOCKFILE="$DIR/zookeeper.lock"
LOGFILE="$DIR/zookeeper.log"
CFG="$DIR/zoo.cfg"
DATA_DIR="$DIR/data"
MAIN=org.apache.zookeeper.server.ZooKeeperServerMain
HOWTO="install it with: sudo apt-get install zookeeper   (Debian/Ubuntu; it brings a Java runtime), or point CHNATIVE_ZOOKEEPER_CLASSPATH at an Apache ZooKeeper's jars"

log() { echo "[zookeeper.sh] $*" >&2; }
die() { log "error: $*"; exit 1; }

[[ "$PORT" =~ ^[0-9]+$ ]] || die "CHNATIVE_ZOOKEEPER_PORT must be a number, not '$PORT'"
[[ "$INSTALL" =~ ^(auto|0|1)$ ]] || die "CHNATIVE_ZOOKEEPER_INSTALL must be auto, 0 or 1, not '$INSTALL'"

# --- probes ---------------------------------------------------------------

tcp_open() { # host port
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

four_letter() { # word: ZooKeeper's answer to a four-letter command (empty when none)
    (
        exec 3<>"/dev/tcp/$HOST/$PORT" || exit 1
        printf '%s' "$1" >&3
        timeout 5 cat <&3
    ) 2>/dev/null || true
}

zk_answers() { [[ "$(four_letter ruok)" == imok ]]; }

our_pid() { # the pid from the pidfile if that process is alive and is our ZooKeeper
    [[ -f "$PIDFILE" ]] || return 1
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null)" || return 1
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -Fq "$MAIN $CFG" || return 1
    echo "$pid"
}

# --- install --------------------------------------------------------------

java_bin() { echo "${JAVA:-$(command -v java || true)}"; }

installed() { [[ -n "$(java_bin)" && -x "$(java_bin)" ]] && [[ -e "${CLASSPATH_ZK%%:*}" ]]; }

apt_install() {
    command -v apt-get >/dev/null 2>&1 || { log "no apt-get on this machine"; return 1; }
    [[ "$(id -u)" == 0 ]] || { log "not root: cannot apt-get install"; return 1; }
    log "installing Debian's zookeeper package (one-time, about 200 MB with its Java runtime)"
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -y -q --no-install-recommends)
    "${apt[@]}" install zookeeper >&2 || { "${apt[@]}" update >&2 && "${apt[@]}" install zookeeper >&2; } ||
        die "apt-get install zookeeper failed"
    log "installed zookeeper $(dpkg-query -W -f='${Version}' zookeeper 2>/dev/null || true)"
}

ensure_installed() {
    installed && return 0
    if [[ "$INSTALL" != 0 ]] && apt_install && installed; then
        return 0
    fi
    log "ZooKeeper is not installed (no java, or no $CLASSPATH_ZK); $HOWTO"
    [[ "$INSTALL" == 1 ]] && exit 1
    exit 4
}

# --- commands -------------------------------------------------------------

kill_pid() { # pid: TERM, wait, then KILL
    local pid="$1" i
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.2
    done
    log "pid $pid did not exit after SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

write_config() {
    # Standalone, loopback only; no AdminServer (it would take port 8080); the four-letter
    # words the probes use; no limit of connections per client address (every ClickHouse
    # node of the local cluster comes from 127.0.0.1).
    cat >"$CFG" <<EOF
tickTime=2000
dataDir=$DATA_DIR
clientPort=$PORT
clientPortAddress=$HOST
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,mntr
autopurge.purgeInterval=0
EOF
}

cmd_start() {
    mkdir -p "$DIR"
    exec 9>"$LOCKFILE"
    flock -w $((START_TIMEOUT + 900)) 9 || die "timeout waiting for lock $LOCKFILE"
    local pid
    if zk_answers; then
        pid="$(our_pid || echo external)"
        echo "zookeeper ready $HOST:$PORT pid=$pid"
        return 0
    fi
    if pid="$(our_pid)"; then
        log "zookeeper pid $pid does not answer; stopping it"
        kill_pid "$pid" || die "could not stop pid $pid"
    fi
    rm -f "$PIDFILE"
    tcp_open "$HOST" "$PORT" &&
        die "port $HOST:$PORT is taken by something that is not a ZooKeeper answering 'ruok'; set CHNATIVE_ZOOKEEPER_PORT"
    ensure_installed
    write_config
    rm -rf "$DATA_DIR"
    mkdir -p "$DATA_DIR"
    : >"$LOGFILE"
    # Logging: slf4j-simple (to the log file) when Debian has it, else none.
    local cp="$CLASSPATH_ZK"
    [[ -e /usr/share/java/slf4j-simple.jar ]] && cp+=":/usr/share/java/slf4j-simple.jar"
    local t0=$SECONDS
    # setsid: a session of its own, so a Ctrl-C at the terminal does not reach it.
    # 9>&- : ZooKeeper must not inherit the start lock.
    (cd "$DIR" && exec setsid nohup "$(java_bin)" "-Xmx$HEAP" -XX:+UseSerialGC \
        -Dzookeeper.log.dir="$DIR" -Dzookeeper.admin.enableServer=false \
        -cp "$cp" $MAIN "$CFG" </dev/null >>"$LOGFILE" 2>&1 9>&-) &
    pid=$!
    echo "$pid" >"$PIDFILE"
    log "started pid $pid; waiting up to ${START_TIMEOUT}s for $HOST:$PORT"
    while ((SECONDS - t0 < START_TIMEOUT)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            log "zookeeper exited during startup; last log lines ($LOGFILE):"
            tail -n 30 "$LOGFILE" >&2 || true
            rm -f "$PIDFILE"
            exit 1
        fi
        if zk_answers; then
            log "ready after $((SECONDS - t0))s"
            echo "zookeeper ready $HOST:$PORT pid=$pid"
            return 0
        fi
        sleep 0.25
    done
    log "zookeeper not ready after ${START_TIMEOUT}s; last log lines ($LOGFILE):"
    tail -n 30 "$LOGFILE" >&2 || true
    kill_pid "$pid" || true
    rm -f "$PIDFILE"
    exit 1
}

cmd_stop() {
    [[ -d "$DIR" ]] || { log "not running (no $DIR)"; return 0; }
    exec 9>"$LOCKFILE"
    flock -w $((START_TIMEOUT + 60)) 9 || die "timeout waiting for lock $LOCKFILE"
    local pid
    if pid="$(our_pid)"; then
        log "stopping pid $pid"
        kill_pid "$pid" || die "pid $pid is still alive"
        log "stopped"
    else
        log "no zookeeper started by this script is running (pidfile $PIDFILE)"
    fi
    rm -f "$PIDFILE"
    rm -rf "$DATA_DIR"
}

cmd_status() {
    local pid
    pid="$(our_pid || echo none)"
    if zk_answers; then
        echo "running $HOST:$PORT pid=$pid run_dir=$DIR"
        four_letter srvr | grep -E '^(Zookeeper version|Mode|Node count)' || true
        return 0
    fi
    echo "not answering $HOST:$PORT pid=$pid run_dir=$DIR"
    return 3
}

cmd_env() {
    cat <<EOF
export CHNATIVE_ZOOKEEPER=$HOST:$PORT
export CHNATIVE_ZOOKEEPER_DIR=$DIR
export CHNATIVE_ZOOKEEPER_PORT=$PORT
EOF
}

cmd_logs() {
    [[ -f "$LOGFILE" ]] || { log "no log ($LOGFILE)"; return 0; }
    echo "==> $LOGFILE <=="
    tail -n "${LINES_TO_SHOW:-40}" "$LOGFILE"
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
restart) cmd_stop; cmd_start ;;
status) cmd_status ;;
env) cmd_env ;;
logs) cmd_logs ;;
install) apt_install || exit 4 ;;
*)
    sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
