#!/usr/bin/env bash
# Builds the static (musl) iolab and tests it once: the binary links no
# shared library, starts, and runs a small job. Needs the musl target
# (rustup target add x86_64-unknown-linux-musl) and musl-gcc (Debian:
# musl-tools) for the bundled SQLite; says "skipped: <reason>" and exits 0
# when either is missing.
#   scripts/build-static.sh            # x86_64
#   TARGET=aarch64-unknown-linux-musl CC_aarch64_unknown_linux_musl=... scripts/build-static.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target="${TARGET:-x86_64-unknown-linux-musl}"
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    echo "skipped: the Rust target $target is not installed (rustup target add $target)"
    exit 0
fi
cc_var="CC_${target//-/_}"
if [ -z "${!cc_var:-}" ]; then
    if ! command -v musl-gcc >/dev/null; then
        echo "skipped: no musl-gcc for the bundled SQLite (apt-get install musl-tools)"
        exit 0
    fi
    export "$cc_var=musl-gcc"
fi
cargo build --release -p iolab --target "$target"
bin="target/$target/release/iolab"
echo "built $bin ($(du -h "$bin" | cut -f1))"
case "$target" in
x86_64-*)
    # It must need no shared library, not even libc.
    if ldd "$bin" 2>&1 | grep -q '=>'; then
        echo "FAIL: $bin links shared libraries:" >&2
        ldd "$bin" >&2
        exit 1
    fi
    "$bin" --version
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    IOLAB_DB="$tmp/results.db" "$bin" run --name=static --rw=write --bs=4k --size=1m \
        --filename="$tmp/data" --output-format=terse >"$tmp/out"
    grep -q '^3;fio-3.33;static;' "$tmp/out" || { cat "$tmp/out" >&2; echo "FAIL: no terse line" >&2; exit 1; }
    IOLAB_DB="$tmp/results.db" "$bin" show 1 --output-format json >/dev/null
    echo "ok: $bin is static, runs a job and reads its results database back"
    ;;
*)
    echo "built for $target; not run on this host"
    ;;
esac
