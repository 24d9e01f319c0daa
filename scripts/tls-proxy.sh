#!/usr/bin/env bash
# TLS-terminating proxy (socat) in front of the ClickHouse native TCP port.
#
# Usage: scripts/tls-proxy.sh start|stop|status|check|cert
#   start   generate a self-signed cert if needed, start socat, wait until it serves TLS.
#           Prints:  tls proxy ready tls=127.0.0.1:19440 -> tcp=127.0.0.1:19000 cert=PATH pid=N
#           Reuses a proxy that is already running (safe to call concurrently: flock).
#   stop    stop the socat started by this script (pidfile; its process group only).
#   status  exit 0 if the proxy pid is alive and the port is open, else 3.
#   check   full handshake with `openssl s_client`, verifying the chain against the cert.
#   cert    print the path of the certificate (PEM). Tests should trust it as a root CA.
#
# The certificate is self-signed, CN=localhost, SAN DNS:localhost and IP:127.0.0.1,
# basicConstraints CA:FALSE + extendedKeyUsage serverAuth. CA:FALSE matters: rustls/webpki
# rejects a CA:TRUE certificate used as the server (end-entity) certificate
# ("CaUsedAsEndEntity") but accepts a self-signed CA:FALSE certificate added as a trust anchor.
#
# Environment: CHNATIVE_SERVER_DIR (run dir, default ${TMPDIR:-/tmp}/chnative-server),
#   CHNATIVE_TLS_PORT (default 19440), CHNATIVE_TCP_PORT (backend, default 19000).
# Requires: socat, openssl (Debian packages `socat`, `openssl`).
set -euo pipefail

RUN_DIR="${CHNATIVE_SERVER_DIR:-${TMPDIR:-/tmp}/chnative-server}"
HOST=127.0.0.1
TLS_PORT="${CHNATIVE_TLS_PORT:-19440}"
TCP_PORT="${CHNATIVE_TCP_PORT:-19000}"
TLS_DIR="$RUN_DIR/tls"
CERT="$TLS_DIR/cert.pem"
KEY="$TLS_DIR/key.pem"
PIDFILE="$RUN_DIR/tls-proxy.pid"
LOCKFILE="$RUN_DIR/tls-proxy.lock"
LOGFILE="$RUN_DIR/tls-proxy.log"

log() { echo "[tls-proxy.sh] $*" >&2; }
die() { log "error: $*"; exit 1; }

tcp_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

our_pid() {
    [[ -f "$PIDFILE" ]] || return 1
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null)" || return 1
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "OPENSSL-LISTEN:$TLS_PORT" || return 1
    echo "$pid"
}

ensure_cert() {
    mkdir -p "$TLS_DIR"
    if [[ -s "$CERT" && -s "$KEY" ]] && openssl x509 -in "$CERT" -noout -checkend 86400 >/dev/null 2>&1; then
        return 0
    fi
    log "generating self-signed certificate $CERT"
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 825 \
        -keyout "$KEY.tmp" -out "$CERT.tmp" -subj "/CN=localhost" \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        -addext "basicConstraints=critical,CA:FALSE" \
        -addext "keyUsage=critical,digitalSignature,keyEncipherment" \
        -addext "extendedKeyUsage=serverAuth" >/dev/null 2>&1 ||
        die "openssl could not generate the certificate"
    chmod 600 "$KEY.tmp"
    mv "$KEY.tmp" "$KEY"
    mv "$CERT.tmp" "$CERT"
}

tls_handshake_ok() {
    local out
    out="$(timeout 10 openssl s_client -connect "$HOST:$TLS_PORT" -servername localhost \
        -CAfile "$CERT" -verify_return_error -verify_hostname localhost </dev/null 2>&1)" || return 1
    grep -q 'Verify return code: 0 (ok)' <<<"$out"
}

kill_group() {
    local pid="$1" pgid i
    pgid="$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ')" || true
    if [[ "$pgid" == "$pid" ]]; then kill -TERM -- "-$pid" 2>/dev/null || true; else kill -TERM "$pid" 2>/dev/null || true; fi
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    if [[ "$pgid" == "$pid" ]]; then kill -KILL -- "-$pid" 2>/dev/null || true; else kill -KILL "$pid" 2>/dev/null || true; fi
    sleep 0.2
    ! kill -0 "$pid" 2>/dev/null
}

ready_line() { echo "tls proxy ready tls=$HOST:$TLS_PORT -> tcp=$HOST:$TCP_PORT cert=$CERT pid=$1"; }

cmd_start() {
    command -v socat >/dev/null || die "socat not found (apt-get install socat)"
    command -v openssl >/dev/null || die "openssl not found (apt-get install openssl)"
    mkdir -p "$RUN_DIR"
    exec 9>"$LOCKFILE"
    flock -w 120 9 || die "timeout waiting for $LOCKFILE"
    local pid
    if pid="$(our_pid)" && tcp_open "$HOST" "$TLS_PORT"; then
        ready_line "$pid"
        return 0
    fi
    if [[ -n "${pid:-}" ]]; then kill_group "$pid" || true; fi
    rm -f "$PIDFILE"
    tcp_open "$HOST" "$TLS_PORT" && die "port $HOST:$TLS_PORT is already used by another process; set CHNATIVE_TLS_PORT"
    ensure_cert
    : >"$LOGFILE"
    # fork: one child per connection; setsid: own process group for stop; 9>&-: don't hold the lock.
    setsid socat -d "OPENSSL-LISTEN:$TLS_PORT,bind=$HOST,reuseaddr,fork,cert=$CERT,key=$KEY,verify=0" \
        "TCP:$HOST:$TCP_PORT,nodelay" </dev/null >>"$LOGFILE" 2>&1 9>&- &
    pid=$!
    echo "$pid" >"$PIDFILE"
    local i
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$LOGFILE" >&2; rm -f "$PIDFILE"; die "socat exited"; }
        tcp_open "$HOST" "$TLS_PORT" && break
        sleep 0.1
    done
    tcp_open "$HOST" "$TLS_PORT" || { kill_group "$pid" || true; rm -f "$PIDFILE"; die "socat did not open $TLS_PORT"; }
    if ! tls_handshake_ok; then
        log "warning: TLS handshake check with openssl s_client failed (see: $0 check)"
    fi
    ready_line "$pid"
}

cmd_stop() {
    [[ -d "$RUN_DIR" ]] || return 0
    exec 9>"$LOCKFILE"
    flock -w 120 9 || die "timeout waiting for $LOCKFILE"
    local pid
    if pid="$(our_pid)"; then
        kill_group "$pid" || die "socat pid $pid is still alive"
        log "stopped pid $pid"
    else
        log "no proxy started by this script is running"
    fi
    rm -f "$PIDFILE"
}

cmd_status() {
    local pid
    if pid="$(our_pid)" && tcp_open "$HOST" "$TLS_PORT"; then
        echo "running tls=$HOST:$TLS_PORT -> tcp=$HOST:$TCP_PORT cert=$CERT pid=$pid"
        return 0
    fi
    echo "not running tls=$HOST:$TLS_PORT"
    return 3
}

cmd_check() {
    [[ -s "$CERT" ]] || die "no certificate at $CERT (run: $0 start)"
    local out
    out="$(timeout 10 openssl s_client -connect "$HOST:$TLS_PORT" -servername localhost \
        -CAfile "$CERT" -verify_return_error -verify_hostname localhost -brief </dev/null 2>&1)" || true
    echo "$out"
    if grep -q -E 'Verification: OK|Verify return code: 0' <<<"$out"; then
        echo "TLS check OK (chain verified against $CERT, hostname localhost)"
        return 0
    fi
    echo "TLS check FAILED" >&2
    return 1
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
check) cmd_check ;;
cert) echo "$CERT" ;;
*)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
