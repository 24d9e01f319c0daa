#!/usr/bin/env bash
# A local ClickHouse cluster for chnative's cluster tests and demos: SHARDS x REPLICAS servers
# (each one a scripts/server.sh server with its own run dir and ports), all with the same
# cluster `chn_cluster` in their <remote_servers> config. Two kinds:
#   - by default, embedded 26.9 servers (chdb-core) with independent replicas: no
#     ZooKeeper/Keeper, <internal_replication>false</internal_replication>;
#   - with CHNATIVE_CLUSTER_VERSION=25.8 (or 24.8, 24.5), full `clickhouse server`s with a
#     ZooKeeper of their own (scripts/zookeeper.sh) and
#     <internal_replication>true</internal_replication>: a replicated cluster, for
#     ReplicatedMergeTree tables and ON CLUSTER DDL. It has its own run dir and ports
#     (below), so both kinds can run at once.
#
# Usage: scripts/cluster.sh start|stop|status|env|logs
#   start    start every node (in parallel; the ZooKeeper first) and wait until each
#            answers; nodes already answering are reused. Safe to call from several
#            processes at once (flock).
#   stop     stop the nodes (and the ZooKeeper) this script started (pidfiles; nothing else).
#   status   exit 0 and list the nodes if all answer, else exit 3.
#   env      print `export VAR=value` lines:  eval "$(scripts/cluster.sh env)"
#   logs     the tail of each node's logs.
#
# Layout (defaults): 2 shards x 2 replicas = 4 servers, ~300 MB of memory each when idle.
#   node sSrR (shard S, replica R, both from 1): native TCP port BASE+10*S+R,
#   HTTP port HTTP_BASE+10*S+R, run dir $CHNATIVE_CLUSTER_DIR/sSrR.
#   With the defaults: s1r1=29111 s1r2=29112 s2r1=29121 s2r2=29122 (HTTP 28111 ...);
#   the replicated cluster: s1r1=29211 ... (HTTP 28211 ..., interserver HTTP 27211 ...,
#   ZooKeeper 29300, run dir ${TMPDIR:-/tmp}/chnative-cluster-<version>).
#   Each node also has macros {cluster}, {shard}=S and {replica}=sSrR, so a replicated
#   table is `ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')`.
#   Two more clusters on the same nodes: `chn_cluster_1r` lists only replica 1 of every
#   shard; `chn_cluster_weighted` is chn_cluster with shard S of weight S+2 (3, 4, ...),
#   to check weighted routing against a Distributed table.
#
# Keeper / ReplicatedMergeTree: neither kind of server has a built-in Keeper. The embedded
# 26.9 is clickhouse-local underneath and never starts <keeper_server>; the full servers of
# the chdb wheels are built without NuRaft ("ClickHouse server built without NuRaft
# library"). The default cluster therefore has no replication: replicas are independent
# servers, and whoever writes a shard writes every replica of it (a Distributed table does
# so with internal_replication=false; chnative's Cluster::insert does so too). The
# replicated cluster uses Apache ZooKeeper (Debian's `zookeeper` package, which
# scripts/zookeeper.sh installs when root, else start exits with status 4 and says how).
#
# Environment (all optional):
#   CHNATIVE_CLUSTER_VERSION    unset (default): not replicated, the servers scripts/server.sh
#                               starts (26.9 unless CHNATIVE_SERVER_VERSION says otherwise);
#                               26.9 or 26.7: the same, that version; 25.8, 24.8 or 24.5:
#                               full servers with ZooKeeper, replicated
#   CHNATIVE_CLUSTER_DIR        run dir of all nodes (default ${TMPDIR:-/tmp}/chnative-cluster,
#                               or .../chnative-cluster-<version> for a replicated one)
#   CHNATIVE_CLUSTER_SHARDS     shards   (default 2, 1..9)
#   CHNATIVE_CLUSTER_REPLICAS   replicas per shard (default 2, 1..9)
#   CHNATIVE_CLUSTER_PORT_BASE  native TCP port base (default 29100; replicated 29200)
#   CHNATIVE_CLUSTER_HTTP_BASE  HTTP port base (default 28100; replicated 28200)
#   CHNATIVE_CLUSTER_INTERSERVER_BASE  interserver HTTP port base (replicated; default 27200)
#   CHNATIVE_CLUSTER_ZOOKEEPER_PORT    the ZooKeeper's port (replicated; default PORT_BASE+100)
#   CHNATIVE_CLUSTER_NODE_PORTS every node's ports instead of the bases, in node order
#                               (s1r1 s1r2 ... s2r1 ...), comma-separated, each
#                               TCP:HTTP[:INTERSERVER] (tests use ports the kernel picked)
#   CHNATIVE_CLUSTER_NAME       cluster name (default chn_cluster)
#   CHNATIVE_VENV, CHNATIVE_START_TIMEOUT, CHNATIVE_PYTHON: as for scripts/server.sh;
#   CHNATIVE_ZOOKEEPER_INSTALL: as for scripts/zookeeper.sh.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Unset: the nodes are what scripts/server.sh starts by default (CHNATIVE_SERVER_VERSION, if
# set, passes through as it always did).
VERSION="${CHNATIVE_CLUSTER_VERSION:-}"
case "$VERSION" in
"" | 26.9 | 26.7) REPLICATED=0 ;;
25.8 | 24.8 | 24.5) REPLICATED=1 ;;
*)
    echo "[cluster.sh] error: CHNATIVE_CLUSTER_VERSION '$VERSION' is not one of 26.9 26.7 25.8 24.8 24.5" >&2
    exit 1
    ;;
esac
if ((REPLICATED)); then
    DIR="${CHNATIVE_CLUSTER_DIR:-${TMPDIR:-/tmp}/chnative-cluster-$VERSION}"
    BASE="${CHNATIVE_CLUSTER_PORT_BASE:-29200}"
    HTTP_BASE="${CHNATIVE_CLUSTER_HTTP_BASE:-28200}"
else
    DIR="${CHNATIVE_CLUSTER_DIR:-${TMPDIR:-/tmp}/chnative-cluster}"
    BASE="${CHNATIVE_CLUSTER_PORT_BASE:-29100}"
    HTTP_BASE="${CHNATIVE_CLUSTER_HTTP_BASE:-28100}"
fi
INTERSERVER_BASE="${CHNATIVE_CLUSTER_INTERSERVER_BASE:-27200}"
ZK_PORT="${CHNATIVE_CLUSTER_ZOOKEEPER_PORT:-$((BASE + 100))}"
NODE_PORTS="${CHNATIVE_CLUSTER_NODE_PORTS:-}"
SHARDS="${CHNATIVE_CLUSTER_SHARDS:-2}"
REPLICAS="${CHNATIVE_CLUSTER_REPLICAS:-2}"
NAME="${CHNATIVE_CLUSTER_NAME:-chn_cluster}"
HOST=127.0.0.1

log() { echo "[cluster.sh] $*" >&2; }
die() { log "error: $*"; exit 1; }

[[ "$SHARDS" =~ ^[1-9]$ ]] || die "CHNATIVE_CLUSTER_SHARDS must be 1..9, not '$SHARDS'"
[[ "$REPLICAS" =~ ^[1-9]$ ]] || die "CHNATIVE_CLUSTER_REPLICAS must be 1..9, not '$REPLICAS'"
[[ "$BASE" =~ ^[0-9]+$ && "$HTTP_BASE" =~ ^[0-9]+$ && "$INTERSERVER_BASE" =~ ^[0-9]+$ && "$ZK_PORT" =~ ^[0-9]+$ ]] ||
    die "port bases and the ZooKeeper port must be numbers"
if [[ -n "$NODE_PORTS" ]]; then
    [[ "$NODE_PORTS" =~ ^[0-9]+:[0-9]+(:[0-9]+)?(,[0-9]+:[0-9]+(:[0-9]+)?)*$ ]] ||
        die "CHNATIVE_CLUSTER_NODE_PORTS must be TCP:HTTP[:INTERSERVER],... not '$NODE_PORTS'"
    IFS=, read -r -a NODE_PORT_LIST <<<"$NODE_PORTS"
    if ((REPLICATED)); then
        [[ "$NODE_PORTS" =~ ^[0-9]+:[0-9]+:[0-9]+(,[0-9]+:[0-9]+:[0-9]+)*$ ]] ||
            die "a replicated cluster needs TCP:HTTP:INTERSERVER for every node in CHNATIVE_CLUSTER_NODE_PORTS"
    fi
    ((${#NODE_PORT_LIST[@]} == SHARDS * REPLICAS)) ||
        die "CHNATIVE_CLUSTER_NODE_PORTS lists ${#NODE_PORT_LIST[@]} nodes, not $((SHARDS * REPLICAS)) ($SHARDS shards x $REPLICAS replicas)"
fi
[[ "$NAME" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "CHNATIVE_CLUSTER_NAME must be an identifier, not '$NAME'"

nodes() { # prints "s r" for every node
    local s r
    for ((s = 1; s <= SHARDS; s++)); do
        for ((r = 1; r <= REPLICAS; r++)); do echo "$s $r"; done
    done
}
listed_port() { # s r field: field 1, 2 or 3 (TCP, HTTP, interserver) of node s r's entry
    local e="${NODE_PORT_LIST[$((($1 - 1) * REPLICAS + $2 - 1))]}"
    local f
    IFS=: read -r -a f <<<"$e"
    [[ -n "${f[$(($3 - 1))]:-}" ]] || die "CHNATIVE_CLUSTER_NODE_PORTS entry '$e' has no interserver port"
    echo "${f[$(($3 - 1))]}"
}
tcp_port() { if [[ -n "$NODE_PORTS" ]]; then listed_port "$1" "$2" 1; else echo $((BASE + 10 * $1 + $2)); fi; }
http_port() { if [[ -n "$NODE_PORTS" ]]; then listed_port "$1" "$2" 2; else echo $((HTTP_BASE + 10 * $1 + $2)); fi; }
interserver_port() { if [[ -n "$NODE_PORTS" ]]; then listed_port "$1" "$2" 3; else echo $((INTERSERVER_BASE + 10 * $1 + $2)); fi; }
node_dir() { echo "$DIR/s$1r$2"; }

# Runs scripts/zookeeper.sh for the replicated cluster's ZooKeeper.
zookeeper() { # command
    CHNATIVE_ZOOKEEPER_DIR="$DIR/zookeeper" CHNATIVE_ZOOKEEPER_PORT="$ZK_PORT" bash "$SCRIPT_DIR/zookeeper.sh" "$1"
}

# Runs scripts/server.sh for node s r with its own run dir and ports.
node() { # s r command
    local extra=()
    [[ -z "$VERSION" ]] || extra+=(CHNATIVE_SERVER_VERSION="$VERSION")
    ((REPLICATED)) && extra+=(CHNATIVE_ZOOKEEPER="$HOST:$ZK_PORT" CHNATIVE_INTERSERVER_PORT="$(interserver_port "$1" "$2")")
    env "${extra[@]}" CHNATIVE_SERVER_DIR="$(node_dir "$1" "$2")" CHNATIVE_TCP_PORT="$(tcp_port "$1" "$2")" \
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
            if ((REPLICATED)); then
                echo "        <internal_replication>true</internal_replication>"
            else
                echo "        <internal_replication>false</internal_replication>"
            fi
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
    if ((REPLICATED)); then
        local zk_rc=0
        zookeeper start >"$DIR/zookeeper.start.log" 2>&1 9>&- || zk_rc=$?
        if ((zk_rc != 0)); then
            cat "$DIR/zookeeper.start.log" >&2
            log "the ZooKeeper of the replicated cluster did not start"
            exit "$zk_rc" # 4: not installed and not installable here
        fi
    fi
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
    # Every node at once (each waits for its server to exit), then the ZooKeeper.
    local s r pids=() p
    while read -r s r; do
        [[ -d "$(node_dir "$s" "$r")" ]] || continue
        { node "$s" "$r" stop 9>&- || log "could not stop node s${s}r${r}"; } &
        pids+=("$!")
    done < <(nodes)
    for p in "${pids[@]}"; do wait "$p" || true; done
    if ((REPLICATED)) && [[ -d "$DIR/zookeeper" ]]; then
        zookeeper stop 9>&- || log "could not stop the ZooKeeper"
    fi
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
    if ((REPLICATED)); then
        if line="$(zookeeper status 2>/dev/null | head -n 1)"; then
            echo "zookeeper $line"
        else
            echo "zookeeper $line"
            bad=1
        fi
    fi
    ((bad == 0)) || return 3
    if ((REPLICATED)); then
        echo "cluster $NAME ready: $SHARDS shards x $REPLICAS replicas of ClickHouse $VERSION, replicated through ZooKeeper $HOST:$ZK_PORT"
    else
        echo "cluster $NAME ready: $SHARDS shards x $REPLICAS replicas"
    fi
}

cmd_env() {
    local s r list=""
    while read -r s r; do
        list+="${list:+,}$HOST:$(tcp_port "$s" "$r")"
    done < <(nodes)
    ((REPLICATED)) && echo "export CHNATIVE_ZOOKEEPER=$HOST:$ZK_PORT"
    cat <<EOF
export CHNATIVE_CLUSTER_VERSION=${VERSION:-${CHNATIVE_SERVER_VERSION:-26.9}}
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
    if ((REPLICATED)); then
        echo "######## zookeeper"
        zookeeper logs || true
    fi
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
env) cmd_env ;;
logs) cmd_logs ;;
*)
    sed -n '2,61p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
