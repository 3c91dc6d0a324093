#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting, lints, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
