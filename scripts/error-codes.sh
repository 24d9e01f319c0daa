#!/usr/bin/env bash
# Regenerates crates/chnative-proto/src/error_codes.rs from a running ClickHouse
# server's `system.errors` (every code of src/Common/ErrorCodes.cpp, with
# system_events_show_zero_values=1), over HTTP.
#
# Usage: scripts/error-codes.sh [http://127.0.0.1:18123/]
set -euo pipefail
url="${1:-http://127.0.0.1:${CHNATIVE_HTTP_PORT:-18123}/}"
out="$(dirname "$0")/../crates/chnative-proto/src/error_codes.rs"
version=$(curl -fsS "$url" --data-binary "SELECT version() FORMAT TSV")
rows=$(curl -fsS "$url" --data-binary \
    "SELECT DISTINCT code, name FROM system.errors ORDER BY code SETTINGS system_events_show_zero_values = 1 FORMAT TSV")
count=$(printf '%s\n' "$rows" | wc -l)
{
    cat <<HEAD
//! ClickHouse's server error codes and their names (\`UNKNOWN_TABLE\` for 60).
//!
//! Protocol data: the list is ClickHouse's \`src/Common/ErrorCodes.cpp\`, taken
//! from \`system.errors\` of ClickHouse ${version} (which lists every code of that
//! file when \`system_events_show_zero_values = 1\`) by \`scripts/error-codes.sh\`.
//! Generated: do not edit by hand, run the script against a newer server instead.
//! A code added after that version has no name here ([\`name\`] is \`None\`); the
//! few codes ClickHouse renumbered over the years may be named as in that version.

/// Every known \`(code, name)\` pair, sorted by code, each code once.
pub static ERROR_CODES: [(i32, &str); ${count}] = [
HEAD
    printf '%s\n' "$rows" | awk -F'\t' '{ printf "    (%d, \"%s\"),\n", $1, $2 }'
    cat <<'TAIL'
];

/// The name of a server error code (`Some("UNKNOWN_TABLE")` for 60), `None` for
/// a code this table does not know.
pub fn name(code: i32) -> Option<&'static str> {
    ERROR_CODES.binary_search_by_key(&code, |&(c, _)| c).ok().map(|i| ERROR_CODES[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes() {
        assert_eq!(name(60), Some("UNKNOWN_TABLE"));
        assert_eq!(name(62), Some("SYNTAX_ERROR"));
        assert_eq!(name(516), Some("AUTHENTICATION_FAILED"));
        assert_eq!(name(394), Some("QUERY_WAS_CANCELLED"));
        assert_eq!(name(159), Some("TIMEOUT_EXCEEDED"));
        assert_eq!(name(202), Some("TOO_MANY_SIMULTANEOUS_QUERIES"));
        assert_eq!(name(0), Some("OK"));
        assert_eq!(name(-1), None);
        assert_eq!(name(5), None);
        assert_eq!(name(i32::MAX), None);
    }

    #[test]
    fn sorted_and_unique() {
        assert!(ERROR_CODES.windows(2).all(|w| w[0].0 < w[1].0), "codes sorted, each once");
        let mut names: Vec<&str> = ERROR_CODES.iter().map(|&(_, n)| n).collect();
        names.sort_unstable();
        assert!(names.windows(2).all(|w| w[0] != w[1]), "names unique");
        assert!(ERROR_CODES.iter().all(|&(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')));
    }
}
TAIL
} >"$out"
rustfmt --edition 2021 --config-path "$(dirname "$0")/../rustfmt.toml" "$out"
echo "wrote $count codes of ClickHouse $version to $out"
