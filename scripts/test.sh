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
# The `mpi` feature (iolab under mpirun), when MPI can be built here.
mpi=0
if command -v mpicc >/dev/null 2>&1; then
  mpi=1
  cargo clippy -p iolab --features mpi --all-targets -- -D warnings
fi
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
if [ "$mpi" = 1 ]; then
  cargo test -p iolab --features mpi --test mpi 2>&1 | tee -a "$log" || status=$?
else
  echo "iolab-test-skip: mpi: the mpi feature's tests (no mpicc: scripts/setup.sh installs libopenmpi-dev as root)" |
    tee -a "$IOLAB_SKIP_LOG" >&2
fi
bash scripts/test-summary.sh "$log" "$IOLAB_SKIP_LOG"
exit "$status"
