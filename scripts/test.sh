#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting, lints, tests.
# Ends with one line that sums every test binary's results, counting the
# tests that skipped (crates/testkit: a requirement the machine lacks) apart
# from those that passed, and the reasons they gave. Under CI=true a test
# whose requirement scripts/setup.sh installs fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
log=$(mktemp)
# Each test keeps its results in a database of its own (testkit::db); this
# one catches any run that does not go through the harness.
IOLAB_DB=$(mktemp -u --suffix=.db)
# The tests append one line per skip here.
IOLAB_SKIP_LOG=$(mktemp)
export IOLAB_DB IOLAB_SKIP_LOG
trap 'rm -f "$log" "$IOLAB_SKIP_LOG" "$IOLAB_DB" "$IOLAB_DB-wal" "$IOLAB_DB-shm"' EXIT
status=0
cargo test --workspace --no-fail-fast 2>&1 | tee "$log" || status=$?
bash scripts/test-summary.sh "$log" "$IOLAB_SKIP_LOG"
exit "$status"
