#!/usr/bin/env bash
# Fuzzes the job parser (iolab-spec) with cargo-fuzz and libFuzzer. Not part
# of CI: it needs a nightly toolchain and runs until stopped or for the time
# given.
#
#   cargo install cargo-fuzz                  # once
#   bash scripts/fuzz.sh                      # 30 minutes
#   bash scripts/fuzz.sh 3600                 # an hour
#   bash scripts/fuzz.sh 60 -jobs=2           # more libFuzzer flags
#
# The target (fuzz/fuzz_targets/job_text.rs) feeds any text to the parser:
# it must resolve or be refused, never panic, and what resolves must print
# back (as --parse-only prints it) to the same jobs. The corpus starts from
# the job files in examples/ and grows in fuzz/corpus/job_text; a crashing,
# slow (over 5 s) or memory-hungry (over 2 GiB) input is saved under
# fuzz/artifacts/job_text/, and the run stops there. Replay one with
#   cargo +nightly fuzz run job_text fuzz/artifacts/job_text/FILE
# then add it to crates/spec/tests/parser_faults.rs as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1800}
shift || true

corpus=fuzz/corpus/job_text
mkdir -p "$corpus"
# Seed: the example job files and the job files of the CLI tests.
cp -n examples/*.fio "$corpus"/ 2>/dev/null || true
find crates -path '*/tests/*' -name '*.fio' -exec cp -n {} "$corpus"/ \; 2>/dev/null || true

# A dictionary of the job language's words: every option name of the table,
# and the syntax fio's job files use.
dict=fuzz/job_text.dict
{
    grep -o 'opt("[a-z0-9_]*"' crates/spec/src/options/table.rs |
        sed 's/^opt(\(".*"\)$/\1/' | sort -u
    printf '%s\n' '"[global]"' '"include "' '"="' '"${"' '"}"' '"$pagesize"' \
        '"$mb_memory"' '"$ncpus"' '";"' '"#"' '":"' '","' '"0x"' '"k"' '"%"' \
        '"${SIZE}"' '"${SEMI}"' '"${HASH}"' '"${NL}"' '"${DOLLAR}"' '"${BR}"' '"name="'
} > "$dict"


exec cargo +nightly fuzz run job_text "$corpus" -- \
    -dict="$dict" -rss_limit_mb=2048 -timeout=5 \
    -max_total_time="$seconds" -print_final_stats=1 "$@"
