#!/usr/bin/env bash
# A rate-limited link on this machine, for benchmarks where bytes on the wire matter
# (compression). Needs root, `ip` (netns, veth) and `tc` (tbf); no netem.
#
# Usage: scripts/slowlink.sh up|down|status
#   up       create network namespace $CHN_SLOW_NS with a veth pair: the host end
#            $CHN_SLOW_HOST_IF ($CHN_SLOW_HOST_ADDR) stays in this namespace, the other end
#            ($CHN_SLOW_NS_ADDR) moves into $CHN_SLOW_NS; loopback is brought up in there.
#            A tbf qdisc limits the egress of BOTH ends to $CHN_SLOW_RATE, so each
#            direction is limited. Idempotent: an existing setup is corrected in place
#            (qdiscs replaced with the current rate), not duplicated.
#   down     remove the namespace and the veth pair (deleting either end removes both).
#   status   print the namespace, addresses and qdiscs; exit 0 when up, 3 when not.
#
# Environment (all optional):
#   CHN_SLOW_RATE       tbf rate on each direction    (default 1gbit; any tc rate: 100mbit, 10gbit…)
#   CHN_SLOW_BURST      tbf burst (bucket size)        (default 256kb; ≥ rate/HZ, more at high rates)
#   CHN_SLOW_LATENCY    tbf latency (max queueing)     (default 50ms)
#   CHN_SLOW_NS         namespace name                 (default chn-slow)
#   CHN_SLOW_HOST_IF    host-side veth name            (default chn-slow-h; the peer is chn-slow-n)
#   CHN_SLOW_HOST_ADDR  host-side address              (default 10.77.0.1/24)
#   CHN_SLOW_NS_ADDR    namespace-side address         (default 10.77.0.2/24)
#
# Typical use (the ClickHouse server listens on the host end, the client runs inside):
#   scripts/slowlink.sh up
#   CHNATIVE_LISTEN_HOST=127.0.0.1,10.77.0.1 scripts/server.sh start
#   ip netns exec chn-slow <client binary> --host 10.77.0.1 …
#   scripts/slowlink.sh down
#
# Traffic from the host namespace to 10.77.0.1 itself goes over loopback (a local
# address), so only the client inside the namespace sees the limited link.
set -euo pipefail

RATE="${CHN_SLOW_RATE:-1gbit}"
BURST="${CHN_SLOW_BURST:-256kb}"
LATENCY="${CHN_SLOW_LATENCY:-50ms}"
NS="${CHN_SLOW_NS:-chn-slow}"
HOST_IF="${CHN_SLOW_HOST_IF:-chn-slow-h}"
NS_IF="${HOST_IF%-h}-n"
[[ "$NS_IF" != "$HOST_IF" ]] || NS_IF="$HOST_IF-n"
HOST_ADDR="${CHN_SLOW_HOST_ADDR:-10.77.0.1/24}"
NS_ADDR="${CHN_SLOW_NS_ADDR:-10.77.0.2/24}"

log() { echo "[slowlink.sh] $*" >&2; }
die() { log "error: $*"; exit 1; }

# Only names of our own: never touch a namespace or link someone else made.
[[ "$NS" == chn-* && "$HOST_IF" == chn-* ]] || die "names must start with chn- (namespace '$NS', link '$HOST_IF')"
((${#HOST_IF} <= 13)) || die "link name '$HOST_IF' is too long (the peer name adds 2 characters; max 15)"

ns_exists() { ip netns list | awk '{print $1}' | grep -qx "$NS"; }
host_if_exists() { ip link show dev "$HOST_IF" >/dev/null 2>&1; }
in_ns() { ip netns exec "$NS" "$@"; }

set_addr() { # netns-prefix… dev addr: the address, once
    local dev="$1" addr="$2"
    shift 2
    "$@" ip addr replace "$addr" dev "$dev"
}

shape() { # dev, run with an optional netns prefix: tbf on the device's egress
    local dev="$1"
    shift
    "$@" tc qdisc replace dev "$dev" root tbf rate "$RATE" burst "$BURST" latency "$LATENCY"
}

cmd_up() {
    command -v ip >/dev/null || die "ip (iproute2) not found"
    command -v tc >/dev/null || die "tc (iproute2) not found"
    ns_exists || ip netns add "$NS"
    if ! host_if_exists; then
        # A stale peer end left in the namespace would block the new pair's name there.
        in_ns ip link del dev "$NS_IF" 2>/dev/null || true
        ip link add "$HOST_IF" type veth peer name "$NS_IF"
    fi
    # The peer end moves into the namespace once; afterwards it is only visible in there.
    if ip link show dev "$NS_IF" >/dev/null 2>&1; then
        ip link set dev "$NS_IF" netns "$NS"
    fi
    in_ns ip link show dev "$NS_IF" >/dev/null 2>&1 ||
        die "$NS_IF is in neither namespace; run '$0 down' and try again"
    set_addr "$HOST_IF" "$HOST_ADDR"
    set_addr "$NS_IF" "$NS_ADDR" in_ns
    ip link set dev "$HOST_IF" up
    in_ns ip link set dev "$NS_IF" up
    in_ns ip link set dev lo up
    shape "$HOST_IF"
    shape "$NS_IF" in_ns
    log "up: $HOST_IF ${HOST_ADDR%/*} <-> $NS_IF ${NS_ADDR%/*} in netns $NS, tbf rate $RATE burst $BURST latency $LATENCY each way"
    if command -v ping >/dev/null; then
        in_ns ping -c 1 -W 2 "${HOST_ADDR%/*}" >/dev/null 2>&1 || log "warning: ${HOST_ADDR%/*} does not answer ping from $NS"
    fi
}

cmd_down() {
    if host_if_exists; then
        ip link del dev "$HOST_IF"
    fi
    if ns_exists; then
        ip netns del "$NS"
    fi
    log "down"
}

cmd_status() {
    if ! ns_exists || ! host_if_exists; then
        echo "down (namespace $NS: $(ns_exists && echo present || echo absent), link $HOST_IF: $(host_if_exists && echo present || echo absent))"
        return 3
    fi
    echo "up: netns $NS"
    echo "host side:"
    ip -br addr show dev "$HOST_IF" | sed 's/^/  /'
    tc qdisc show dev "$HOST_IF" | sed 's/^/  /'
    echo "namespace side:"
    in_ns ip -br addr show dev "$NS_IF" | sed 's/^/  /'
    in_ns tc qdisc show dev "$NS_IF" | sed 's/^/  /'
}

case "${1:-}" in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
*)
    sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
