#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting, lints, tests.
# Ends with one line that sums every test binary's results.
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
# The tests keep their results in a database of their own.
IOLAB_DB=$(mktemp -u --suffix=.db)
export IOLAB_DB
trap 'rm -f "$log" "$IOLAB_DB" "$IOLAB_DB-wal" "$IOLAB_DB-shm"' EXIT
status=0
cargo test --workspace --no-fail-fast 2>&1 | tee "$log" || status=$?
if [ "$mpi" = 1 ]; then
  cargo test -p iolab --features mpi --test mpi 2>&1 | tee -a "$log" || status=$?
else
  echo "skipped: the mpi feature's tests (no mpicc: scripts/setup.sh installs libopenmpi-dev as root)"
  n=$(($(grep -c '^#\[test\]' crates/cli/tests/mpi.rs) - 1))
  echo "test result: ok. 0 passed; 0 failed; $n ignored (mpi feature)" >>"$log"
fi
awk '/^test result:/ { p += $4; f += $6; s += $8 }
     END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
exit "$status"
