#!/usr/bin/env bash
# Fuzzes the job parser (iolab-spec) with cargo-fuzz and libFuzzer. Not part
# of CI: it needs a nightly toolchain and runs for the time given.
#
#   cargo install cargo-fuzz                  # once
#   bash scripts/fuzz.sh                      # job files, 30 minutes
#   bash scripts/fuzz.sh 3600                 # an hour
#   bash scripts/fuzz.sh 600 cmdline          # command lines, 10 minutes
#   bash scripts/fuzz.sh 60 job_text -jobs=2  # more libFuzzer flags
#
# Targets (fuzz/fuzz_targets/): job_text feeds any text to the parser as a
# job file, cmdline splits it at NUL bytes into the arguments of `iolab
# run`. Either must resolve or be refused, never panic, and what resolves
# must print back (as --parse-only prints it) to the same jobs. The corpus
# starts from the job files in examples/ (and a few command lines) and
# grows in fuzz/corpus/TARGET; a crashing, slow (over 5 s) or memory-hungry
# (over 2 GiB) input is saved under fuzz/artifacts/TARGET/ and the run
# stops there. Replay one with
#   cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/FILE
# and add it to crates/spec/tests/parser_faults.rs as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1800}
target=${2:-job_text}
shift $(($# < 2 ? $# : 2))

corpus=fuzz/corpus/$target
mkdir -p "$corpus"
if [ "$target" = job_text ]; then
    # Seed: the example job files and the job files of the tests.
    cp -n examples/*.fio "$corpus"/
    find crates -path '*/tests/*' -name '*.fio' -exec cp -n {} "$corpus"/ \;
else
    # Seed: command lines, one argument per NUL-separated field.
    printf -- '--name=a\0--rw=randread\0--bs=4k\0--size=1m' > "$corpus/seed1"
    printf -- '--size=1m\0--name=global\0--bs=8k\0--name=b\0-rw\0write\0--numjobs=2' \
        > "$corpus/seed2"
    printf -- 'examples/quick.fio\0--section=seq-read-1m\0--parse-only' > "$corpus/seed3"
fi

# A dictionary of the job language's words: every option name of the table,
# and the syntax fio's job files use.
dict=fuzz/job_text.dict
{
    grep -o 'opt("[a-z0-9_]*"' crates/spec/src/options/table.rs |
        sed 's/^opt(\(".*"\)$/\1/' | sort -u
    printf '%s\n' '"[global]"' '"include "' '"="' '"${"' '"}"' '"$pagesize"' \
        '"$mb_memory"' '"$ncpus"' '";"' '"#"' '":"' '","' '"0x"' '"k"' '"%"' \
        '"${SIZE}"' '"${SEMI}"' '"${HASH}"' '"${NL}"' '"${DOLLAR}"' '"${BR}"' '"name="' \
        '"--name="' '"\x00--"' '"\x00"'
} > "$dict"

exec cargo +nightly fuzz run "$target" "$corpus" -- \
    -dict="$dict" -rss_limit_mb=2048 -timeout=5 \
    -max_total_time="$seconds" -print_final_stats=1 "$@"
