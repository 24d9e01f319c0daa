#!/bin/sh
# Writes a readable `.hex` twin (xxd's default dump) next to every `.bin` fixture under
# crates/*/tests/, so a reviewer can read a capture in a diff. Run it after adding or
# re-capturing a fixture; crates/chnative-proto/tests/fixtures_hex.rs fails while a twin
# is missing or stale.
#
# Usage: scripts/hex-fixtures.sh [--check]   (--check: report stale twins, write nothing)
set -eu
cd "$(dirname "$0")/.."
check=0
[ "${1:-}" = "--check" ] && check=1
stale=0
for bin in $(find crates -path '*/tests/*' -name '*.bin' | sort); do
    hex="${bin%.bin}.hex"
    if [ "$check" = 1 ]; then
        if ! xxd "$bin" | cmp -s - "$hex"; then
            echo "stale: $hex"
            stale=1
        fi
    else
        xxd "$bin" > "$hex"
    fi
done
exit "$stale"
