#!/usr/bin/env python3
"""iolab builds side by side on one row of bench/compare.py, with the
row's C limit loop when it has one: each round runs every build and then
the loop (the next round the other way round), for --runs rounds, and
prints per build the median IOPS, I/Os per CPU second (the process's
rusage from wait4), user and system CPU microseconds per I/O (the
loop's too), and the medians of the round-by-round ratios: IOPS to the first build, and IOPS
and per core to the loop, each of the last two with the distribution-free
95% interval of its median (from 6 rounds on; iolab's repeats use the
same). Rounds are seconds apart, so a drift of the host over the whole
run cancels out of each ratio.

  python3 bench/builds.py --row libaio-randread-qd32-direct-ram \\
      --runs 11 target/release/iolab /tmp/iolab-before

Rows: those of bench/compare.py's workloads and its zram and loop-device
rows (as root, for those).

--code-lines instead runs each build and the loop once under valgrind's
callgrind and prints, per I/O, the instructions they run in user space and
the 64-byte lines of code run on at least half of the I/Os: how much code
stands between two system calls (docs/performance.md, "Queued engines:
access times and the code between I/Os").

  python3 bench/builds.py --row libaio-randread-qd32-direct-loop \\
      --code-lines target/release/iolab

--logging-cost instead gives each build's cost of logging a line per I/O
(compare.py's "logging-cost" row): each round runs every build's null
job without logs and with them, the two and the builds in turn (the
other way round in the next round), and prints per build the median
over rounds of 1 - IOPS with / without. --log-opts adds options to the
run with logs (e.g. --log-opts=--log_offset=1).

  python3 bench/builds.py --logging-cost --runs 9 target/release/iolab \\
      /tmp/iolab-before
"""
import argparse
import contextlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def run_build(exe, opts, cwd):
    """IOPS, I/Os per CPU second, and user and system us per I/O of a run
    in `cwd` (where a row's logs go)."""
    cmd = [exe, "run", "--no-store", "--output-format=json"] + opts
    iops, _, _, _, per_core = compare.one(cmd, cwd=cwd)
    ru = compare.LAST_RUSAGE[0]
    ios = max(iops * float(runtime(opts)), 1)
    return iops, per_core, ru.ru_utime / ios * 1e6, ru.ru_stime / ios * 1e6


def median_interval(values, confidence=0.95):
    """The distribution-free interval of the median that iolab's repeats
    use (crates/stats/src/repeats.rs): with the values sorted, the k-th
    smallest and the k-th largest, k the largest for which
    1 - 2 P(B <= k - 1), B binomial(n, 1/2), is at least `confidence`;
    None below 6 values, where no k gives 95%. Returns (low, high,
    coverage)."""
    xs = sorted(values)
    n = len(xs)
    below, best = 0.0, None
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2 ** n
        if 1 - 2 * below < confidence:
            break
        best = (xs[k - 1], xs[n - k], 1 - 2 * below)
    return best


def paired_with_interval(ratios):
    """The median of round-by-round ratios and its interval."""
    m = statistics.median(ratios)
    ci = median_interval(ratios)
    if ci is None:
        return f"{m:.3f}"
    return f"{m:.3f} ({ci[2]:.0%} interval {ci[0]:.3f} to {ci[1]:.3f})"


def code_lines(profile, ios, frac=0.5):
    """From a callgrind profile taken with --dump-instr=yes
    --compress-pos=no --compress-strings=no: the instructions per I/O of
    the whole process, and the 64-byte lines of code of which an
    instruction ran at least `frac` * `ios` times."""
    top = {}
    total = 0
    obj = None
    call = False
    with open(profile) as fh:
        for raw in fh:
            if raw.startswith("ob="):
                obj = raw[3:].strip()
            elif raw.startswith("calls="):
                # The next cost line is the call's, not an instruction's.
                call = True
            elif raw.startswith("0x"):
                if call:
                    call = False
                    continue
                words = raw.split()
                addr, count = int(words[0], 16), int(words[-1])
                total += count
                key = (obj, addr >> 6)
                top[key] = max(top.get(key, 0), count)
    lines = sum(1 for c in top.values() if c >= frac * ios)
    return total / max(ios, 1), lines


def callgrind(cmd, d, name, env=None):
    """`cmd` under callgrind, its profile in `d`; returns the profile's
    path and the command's standard output."""
    profile = os.path.join(d, f"callgrind.{name}")
    out = subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes",
                          "--compress-pos=no", "--compress-strings=no",
                          f"--callgrind-out-file={profile}"] + cmd,
                         check=True, capture_output=True, text=True, cwd=d, env=env).stdout
    return profile, out


def several_job_rows():
    """The rows of compare.py with more than one job (numjobs)."""
    rows = compare.workloads("")
    for tag in ("ram", "loop"):
        rows.update(compare.ram_workloads("", tag))
    return {r for r, opts in rows.items() if any(o.startswith("--numjobs=") for o in opts)}


def print_code_lines(builds, opts, limit, d):
    """Instructions and lines of code per I/O of each build and the
    loop, one run each under callgrind. The instructions are the whole
    process's over its I/Os, its start and end included (for iolab about
    4 million, under 10 per I/O of a 3 s run); the loop's I/Os are its
    IOPS times the row's runtime."""
    secs = float(runtime(opts))
    for i, b in enumerate(builds):
        cmd = [os.path.abspath(b), "run", "--no-store", "--output-format=json"] + opts
        profile, out = callgrind(cmd, d, str(i))
        data = json.loads(out[out.index("{"):])
        ios = sum(j[k]["total_ios"] for j in data["jobs"] for k in ("read", "write"))
        per_io, lines = code_lines(profile, ios)
        print(f"{b}: {per_io:.0f} instructions and {lines} lines of code per I/O ({ios:,} I/Os)")
    if limit:
        profile, out = callgrind(limit[1], d, "loop", env=dict(os.environ, LOOP_COPY="0"))
        ios = int(float(out.split()[1]) * secs)
        per_io, lines = code_lines(profile, ios)
        print(f"loop: {per_io:.0f} instructions and {lines} lines of code per I/O ({ios:,} I/Os)")


def runtime(opts):
    for o in opts:
        if o.startswith("--runtime="):
            return o.split("=", 1)[1]
    return "3"


def logging_cost(a):
    """Per build, the median over rounds of what a line per I/O in the
    bandwidth, IOPS and latency logs costs the null job in IOPS."""
    d = tempfile.mkdtemp(prefix="iolab-builds-")
    try:
        jobs = compare.workloads(d)
        off = jobs["null-4k-qd1"]
        on = jobs["null-4k-qd1-log-every-io"] + a.log_opts
        # Per (build, with logs): each round's run_build figures.
        res = {(b, logs): [] for b in a.builds for logs in (False, True)}
        for i in range(a.runs):
            turn = 1 if i % 2 == 0 else -1
            for b in a.builds[::turn]:
                for logs, opts in [(False, off), (True, on)][::turn]:
                    res[(b, logs)].append(run_build(os.path.abspath(b), opts, d))
                    for x in os.listdir(d):
                        os.unlink(os.path.join(d, x))
    finally:
        shutil.rmtree(d, True)
    med = statistics.median
    print(f"logging cost {' '.join(a.log_opts)}, {a.runs} rounds")
    for b in a.builds:
        on, off = res[(b, True)], res[(b, False)]
        each = ", ".join(f"{100 * (1 - x[0] / y[0]):.1f}"
                         for x, y in sorted(zip(on, off), key=lambda p: p[0][0] / p[1][0],
                                            reverse=True))
        c = compare.cost(res, (b, True), (b, False), 0)
        print(f"{b}: IOPS without {med(y[0] for y in off):,.0f}, with "
              f"{med(x[0] for x in on):,.0f}; cost {100 * c:.1f}% of IOPS "
              f"(rounds, sorted: {each})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--row")
    ap.add_argument("--logging-cost", action="store_true")
    ap.add_argument("--code-lines", action="store_true")
    ap.add_argument("--log-opts", action="append", default=[],
                    help="an option for the runs with logs (--logging-cost)")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("builds", nargs="+", help="iolab executables")
    a = ap.parse_args()
    if (a.row is None) == (not a.logging_cost):
        sys.exit("give either --row ROW or --logging-cost")
    if a.log_opts and not a.logging_cost:
        sys.exit("--log-opts goes with --logging-cost")
    if a.code_lines and a.row is None:
        sys.exit("--code-lines goes with --row ROW")
    if a.code_lines and a.row in several_job_rows():
        # A run of several jobs is several processes or threads, which one
        # profile does not add up.
        sys.exit("--code-lines takes rows with one job")
    if a.code_lines and shutil.which("valgrind") is None:
        sys.exit("--code-lines needs valgrind (apt-get install valgrind)")
    for b in a.builds:
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            sys.exit(f"{b}: not an executable file")
    if a.logging_cost:
        logging_cost(a)
        return
    d = tempfile.mkdtemp(prefix="iolab-builds-")
    try:
        with contextlib.ExitStack() as stack:
            jobs = compare.workloads(d)
            for tag, device in (("ram", compare.zram_device), ("loop", compare.loop_device)):
                if a.row in compare.ram_workloads("", tag):
                    dev = stack.enter_context(device())
                    if dev is None:
                        sys.exit(f"{a.row} needs root and a {tag} device")
                    jobs.update(compare.ram_workloads(dev, tag))
            if a.row not in jobs:
                sys.exit(f"no row {a.row}; rows: {', '.join(sorted(jobs))}")
            opts = jobs[a.row]
            warm = os.path.join(d, "warm.bin")
            if any(o == f"--filename={warm}" for o in opts):
                with open(warm, "wb") as fh:
                    for _ in range(256):
                        fh.write(os.urandom(1 << 20))
            else:
                warm = None
            loops = {}
            for engine, src in (("psync", "pread_loop"), ("io_uring", "uring_loop"),
                                ("libaio", "aio_loop")):
                loops[engine] = os.path.join(d, src)
                subprocess.run(["cc", "-O2", "-o", loops[engine],
                                os.path.join(HERE, f"{src}.c")], check=True)
            limit = compare.limit_for(opts, loops)
            if a.code_lines:
                if warm:
                    compare.load_cache(warm)
                print_code_lines(a.builds, opts, limit, d)
                return
            res = {b: [] for b in a.builds}
            lim = []
            # The loop's user and system CPU microseconds per I/O, by round.
            lim_cpu = []
            # The builds, then the loop; the other way round in the next
            # round, so that a drift of the host within a round favours
            # none of them.
            turns = list(a.builds) + ([None] if limit else [])
            for i in range(a.runs):
                for b in turns if i % 2 == 0 else turns[::-1]:
                    if warm:
                        compare.load_cache(warm)
                    if b is None:
                        lim.append(compare.limit_one(limit))
                        ios = max(lim[-1][0] * float(limit[1][2]), 1)
                        lim_cpu.append([t / ios * 1e6 for t in compare.LAST_LIMIT_CPU[0]])
                    else:
                        res[b].append(run_build(os.path.abspath(b), opts, d))
    finally:
        shutil.rmtree(d, True)
    first = res[a.builds[0]]
    med = statistics.median
    print(f"{a.row}, {a.runs} rounds")
    for b in a.builds:
        r = res[b]
        line = (f"{b}: IOPS {med(x[0] for x in r):,.0f}, per core {med(x[1] for x in r):,.0f}, "
                f"user {med(x[2] for x in r):.3f} us/IO, system {med(x[3] for x in r):.3f} us/IO, "
                f"IOPS / first build {med(x[0] / f[0] for x, f in zip(r, first)):.3f}")
        if lim:
            line += (f", IOPS / loop {paired_with_interval([x[0] / l[0] for x, l in zip(r, lim)])}"
                     f", per core / loop "
                     f"{paired_with_interval([x[1] / l[-1] for x, l in zip(r, lim)])}")
        print(line)
    if lim:
        print(f"loop: IOPS {med(l[0] for l in lim):,.0f}, per core {med(l[-1] for l in lim):,.0f}, "
              f"user {med(c[0] for c in lim_cpu):.3f} us/IO, "
              f"system {med(c[1] for c in lim_cpu):.3f} us/IO")


if __name__ == "__main__":
    main()
