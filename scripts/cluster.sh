#!/usr/bin/env bash
# A local ClickHouse 26.9 cluster for chnative's cluster tests and demos: SHARDS x REPLICAS
# embedded servers (chdb-core, each one a scripts/server.sh server with its own run dir and
# ports), all with the same cluster `chn_cluster` in their <remote_servers> config.
#
# Usage: scripts/cluster.sh start|stop|status|env|logs
#   start    start every node (in parallel) and wait until each answers; nodes already
#            answering are reused. Safe to call from several processes at once (flock).
#   stop     stop the nodes this script started (each node's pidfile; nothing else).
#   status   exit 0 and list the nodes if all answer, else exit 3.
#   env      print `export VAR=value` lines:  eval "$(scripts/cluster.sh env)"
#   logs     the tail of each node's logs.
#
# Layout (defaults): 2 shards x 2 replicas = 4 servers, ~300 MB of memory each when idle.
#   node sSrR (shard S, replica R, both from 1): native TCP port BASE+10*S+R,
#   HTTP port HTTP_BASE+10*S+R, run dir $CHNATIVE_CLUSTER_DIR/sSrR.
#   With the defaults: s1r1=29111 s1r2=29112 s2r1=29121 s2r2=29122 (HTTP 28111 ...).
#   Each node also has macros {shard}=S and {replica}=sSrR.
#   The cluster has <internal_replication>false</internal_replication>: there is no
#   ZooKeeper/Keeper in the embedded server (see below), so replicas are independent servers
#   and whoever writes a shard writes every replica of it (a Distributed table does so with
#   internal_replication=false; chnative's Cluster::insert does so too).
#   Two more clusters on the same nodes: `chn_cluster_1r` lists only replica 1 of every
#   shard; `chn_cluster_weighted` is chn_cluster with shard S of weight S+2 (3, 4, ...),
#   to check weighted routing against a Distributed table.
#
# Keeper / ReplicatedMergeTree (found by experiment with chdb-core 26.9.0): the embedded
# server is clickhouse-local underneath; it never starts <keeper_server> (the configured
# port stays closed), and no ZooKeeper/Keeper binary comes with the wheel, so
# `ENGINE = ReplicatedMergeTree(...)` fails with KEEPER_EXCEPTION "All connection tries
# failed while connecting to ZooKeeper". Replication is therefore left to the writer.
#
# Environment (all optional):
#   CHNATIVE_CLUSTER_DIR        run dir of all nodes (default ${TMPDIR:-/tmp}/chnative-cluster)
#   CHNATIVE_CLUSTER_SHARDS     shards   (default 2, 1..9)
#   CHNATIVE_CLUSTER_REPLICAS   replicas per shard (default 2, 1..9)
#   CHNATIVE_CLUSTER_PORT_BASE  native TCP port base (default 29100)
#   CHNATIVE_CLUSTER_HTTP_BASE  HTTP port base (default 28100)
#   CHNATIVE_CLUSTER_NAME       cluster name (default chn_cluster)
#   CHNATIVE_VENV, CHNATIVE_START_TIMEOUT, CHNATIVE_PYTHON: as for scripts/server.sh.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${CHNATIVE_CLUSTER_DIR:-${TMPDIR:-/tmp}/chnative-cluster}"
SHARDS="${CHNATIVE_CLUSTER_SHARDS:-2}"
REPLICAS="${CHNATIVE_CLUSTER_REPLICAS:-2}"
BASE="${CHNATIVE_CLUSTER_PORT_BASE:-29100}"
HTTP_BASE="${CHNATIVE_CLUSTER_HTTP_BASE:-28100}"
NAME="${CHNATIVE_CLUSTER_NAME:-chn_cluster}"
HOST=127.0.0.1

log() { echo "[cluster.sh] $*" >&2; }
die() { log "error: $*"; exit 1; }

[[ "$SHARDS" =~ ^[1-9]$ ]] || die "CHNATIVE_CLUSTER_SHARDS must be 1..9, not '$SHARDS'"
[[ "$REPLICAS" =~ ^[1-9]$ ]] || die "CHNATIVE_CLUSTER_REPLICAS must be 1..9, not '$REPLICAS'"
[[ "$BASE" =~ ^[0-9]+$ && "$HTTP_BASE" =~ ^[0-9]+$ ]] || die "port bases must be numbers"
[[ "$NAME" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "CHNATIVE_CLUSTER_NAME must be an identifier, not '$NAME'"

nodes() { # prints "s r" for every node
    local s r
    for ((s = 1; s <= SHARDS; s++)); do
        for ((r = 1; r <= REPLICAS; r++)); do echo "$s $r"; done
    done
}
tcp_port() { echo $((BASE + 10 * $1 + $2)); }
http_port() { echo $((HTTP_BASE + 10 * $1 + $2)); }
node_dir() { echo "$DIR/s$1r$2"; }

# Runs scripts/server.sh for node s r with its own run dir and ports.
node() { # s r command
    CHNATIVE_SERVER_DIR="$(node_dir "$1" "$2")" CHNATIVE_TCP_PORT="$(tcp_port "$1" "$2")" \
        CHNATIVE_HTTP_PORT="$(http_port "$1" "$2")" CHNATIVE_LISTEN_HOST=$HOST \
        bash "$SCRIPT_DIR/server.sh" "$3"
}

remote_servers_xml() { # the <remote_servers> section every node gets
    local s r name
    echo "  <remote_servers>"
    for name in "$NAME" "${NAME}_1r" "${NAME}_weighted"; do
        echo "    <$name>"
        for ((s = 1; s <= SHARDS; s++)); do
            echo "      <shard>"
            if [[ "$name" == "${NAME}_weighted" ]]; then
                echo "        <weight>$((s + 2))</weight>"
            else
                echo "        <weight>1</weight>"
            fi
            echo "        <internal_replication>false</internal_replication>"
            for ((r = 1; r <= REPLICAS; r++)); do
                [[ "$name" == "$NAME" || $r == 1 ]] || continue
                echo "        <replica><host>$HOST</host><port>$(tcp_port $s $r)</port></replica>"
            done
            echo "      </shard>"
        done
        echo "    </$name>"
    done
    echo "  </remote_servers>"
}

write_node_config() { # s r: config.d/cluster.xml, merged by the server into server.sh's config.xml
    local d
    d="$(node_dir "$1" "$2")"
    mkdir -p "$d/config.d"
    cat >"$d/config.d/cluster.xml" <<EOF
<clickhouse>
$(remote_servers_xml)
  <macros>
    <cluster>$NAME</cluster>
    <shard>$1</shard>
    <replica>s$1r$2</replica>
  </macros>
</clickhouse>
EOF
}

cmd_start() {
    mkdir -p "$DIR"
    exec 9>"$DIR/cluster.lock"
    flock -w 900 9 || die "timeout waiting for lock $DIR/cluster.lock"
    # One venv install at a time: start the first node alone if the venv is not there yet.
    local s r pids=() failed=0 first=1
    while read -r s r; do
        write_node_config "$s" "$r"
    done < <(nodes)
    while read -r s r; do
        if ((first)); then
            node "$s" "$r" start >"$DIR/s${s}r${r}.start.log" 2>&1 9>&- || {
                cat "$DIR/s${s}r${r}.start.log" >&2
                die "node s${s}r${r} did not start"
            }
            first=0
            continue
        fi
        node "$s" "$r" start >"$DIR/s${s}r${r}.start.log" 2>&1 9>&- &
        pids+=("$!:s${s}r${r}")
    done < <(nodes)
    local p
    for p in "${pids[@]}"; do
        if ! wait "${p%%:*}"; then
            failed=1
            log "node ${p#*:} did not start:"
            cat "$DIR/${p#*:}.start.log" >&2
        fi
    done
    ((failed == 0)) || exit 1
    cmd_status
}

cmd_stop() {
    [[ -d "$DIR" ]] || { log "not running (no $DIR)"; return 0; }
    exec 9>"$DIR/cluster.lock"
    flock -w 900 9 || die "timeout waiting for lock $DIR/cluster.lock"
    local s r
    while read -r s r; do
        [[ -d "$(node_dir "$s" "$r")" ]] || continue
        node "$s" "$r" stop 9>&- || log "could not stop node s${s}r${r}"
    done < <(nodes)
}

cmd_status() {
    local s r bad=0 line
    while read -r s r; do
        if line="$(node "$s" "$r" status 2>/dev/null)"; then
            echo "s${s}r${r} $line"
        else
            echo "s${s}r${r} $line"
            bad=1
        fi
    done < <(nodes)
    ((bad == 0)) || return 3
    echo "cluster $NAME ready: $SHARDS shards x $REPLICAS replicas"
}

cmd_env() {
    local s r list=""
    while read -r s r; do
        list+="${list:+,}$HOST:$(tcp_port "$s" "$r")"
    done < <(nodes)
    cat <<EOF
export CHNATIVE_CLUSTER_NAME=$NAME
export CHNATIVE_CLUSTER_SHARDS=$SHARDS
export CHNATIVE_CLUSTER_REPLICAS=$REPLICAS
export CHNATIVE_CLUSTER_DIR=$DIR
export CHNATIVE_CLUSTER_HOST=$HOST
export CHNATIVE_CLUSTER_PORT=$(tcp_port 1 1)
export CHNATIVE_CLUSTER_HTTP_PORT=$(http_port 1 1)
export CHNATIVE_CLUSTER_NODES=$list
EOF
}

cmd_logs() {
    local s r
    while read -r s r; do
        echo "######## node s${s}r${r}"
        node "$s" "$r" logs || true
    done < <(nodes)
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
env) cmd_env ;;
logs) cmd_logs ;;
*)
    sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
