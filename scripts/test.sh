#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting, lints, tests.
# Ends with one line that sums every test binary's results.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
log=$(mktemp)
# The tests keep their results in a database of their own.
IOLAB_DB=$(mktemp -u --suffix=.db)
export IOLAB_DB
trap 'rm -f "$log" "$IOLAB_DB" "$IOLAB_DB-wal" "$IOLAB_DB-shm"' EXIT
status=0
cargo test --workspace --no-fail-fast 2>&1 | tee "$log" || status=$?
awk '/^test result:/ { p += $4; f += $6; s += $8 }
     END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
exit "$status"
