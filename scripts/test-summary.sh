#!/usr/bin/env bash
# Sums `cargo test` output (file $1) and the skip log the tests wrote
# (file $2, lines `iolab-test-skip: TEST: REASON` from crates/testkit):
#   tests: P passed, F failed, S skipped
# where a test that skipped is not counted as passed, then the reasons,
# most frequent first, with the tests that gave them. Tests marked
# #[ignore] count as skipped with the reason "ignored".
set -euo pipefail
log=$1 skips=$2
awk -v skips="$skips" '
  /^test result:/ { p += $4; f += $6; ign += $8 }
  END {
    while ((getline line < skips) > 0) {
      whole = line ~ /^iolab-test-skip: /
      sub(/^iolab-test-skip(-case)?: /, "", line)
      i = index(line, ": ")
      test = substr(line, 1, i - 1); why = substr(line, i + 2)
      if (!whole) why = "(one case) " why
      if (whole && !(test in skipped)) { skipped[test] = 1; s++ }
      if (!((why, test) in seen)) {
        seen[why, test] = 1
        n[why]++
        tests[why] = tests[why] (n[why] > 1 ? ", " : "") test
      }
    }
    printf "tests: %d passed, %d failed, %d skipped\n", p - s, f, s + ign
    if (ign) printf "  %3d  ignored (#[ignore])\n", ign
    fflush()
    # Reasons by count, then by text.
    cmd = "sort -k1,1nr -k2"
    for (w in n) printf "%d\t%s\t%s\n", n[w], w, tests[w] | cmd
    close(cmd)
  }' "$log" | awk -F'\t' 'NF == 3 { printf "  %3d  %s\n         %s\n", $1, $2, $3; next } { print }'
