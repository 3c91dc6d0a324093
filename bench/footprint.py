#!/usr/bin/env python3
"""What the code a program runs between its I/Os costs the kernel's side of
each I/O: the libaio row of bench/compare.py (4k random reads of zram,
QD32, direct), where every read is done inside io_submit.

bench/aio_loop.c is built as it is and with N extra functions called after
each submission, each alone in a 64-byte line of code (N = 64 and 128:
4 KiB and 8 KiB of code run per I/O that the loop does not need). The three
take turns for --runs rounds; the medians of IOPS and of the user and system
CPU time per I/O (each process's rusage from wait4) are printed. The extra
code costs user time, and it also raises the system time of the same
io_submit calls: between two calls, the user code takes the place of the
kernel's own code and branch history in the core's caches.

With perf on the machine, iolab (the release build) and the loop are then
sampled on the same job, and each one's distinct 64-byte lines of user code
that take at least 0.2% of its user-code samples are counted: how much
code each runs per I/O.

  python3 bench/footprint.py [--runs 5]

As root, with /sys/class/zram-control (bench/compare.py's zram device).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXTRA = (64, 128)


def with_extra_code(src):
    """aio_loop.c's text with EXTRA functions a run may call after each
    submission (environment EXTRA_LINES=N)."""
    funcs = "".join(
        f"__attribute__((noinline, aligned(64))) uint64_t extra{i}(uint64_t x)"
        f"{{ x ^= x << {i % 13 + 1}; x += {i * 7919}ULL; x ^= x >> {i % 7 + 1};"
        f" return x * {2 * i + 1}ULL; }}\n"
        for i in range(max(EXTRA)))
    runs = "".join(
        f"static uint64_t run{n}(uint64_t x) {{"
        + "".join(f" x = extra{i}(x);" for i in range(n)) + " return x; }\n"
        for n in EXTRA)
    calls = " else ".join(f"if (extra == {n}) sink = run{n}(n + slot);" for n in EXTRA)
    anchors = {
        "static uint64_t now_ns(void)":
            funcs + runs + "static volatile uint64_t sink;\nstatic int extra;\n"
            "static uint64_t now_ns(void)",
        "\t\t\tsubmitted[slot] = now_ns();\n":
            "\t\t\tsubmitted[slot] = now_ns();\n\t\t\t" + calls + "\n",
        "\tunsigned depth = (unsigned)atoi(argv[3]);\n":
            "\textra = getenv(\"EXTRA_LINES\") ? atoi(getenv(\"EXTRA_LINES\")) : 0;\n"
            "\tunsigned depth = (unsigned)atoi(argv[3]);\n",
    }
    for old, new in anchors.items():
        if src.count(old) != 1:
            sys.exit(f"aio_loop.c no longer has `{old.strip()}` once: update footprint.py")
        src = src.replace(old, new)
    return src


def run_loop(exe, dev, extra, secs=3):
    """IOPS and user and system microseconds per I/O of one run."""
    env = dict(os.environ, EXTRA_LINES=str(extra))
    p = subprocess.Popen([exe, dev, str(secs), "32", "direct"], stdout=subprocess.PIPE,
                         text=True, env=env)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"{exe} exited with {status}")
    iops = float(out.split()[1])
    ios = iops * secs
    return iops, ru.ru_utime / ios * 1e6, ru.ru_stime / ios * 1e6


def code_lines(cmd, exe_name, tmp):
    """The 64-byte lines of user code that took at least 0.2% of the user
    code's samples of cmd, run under perf record, in the program named
    exe_name (the lines its work per I/O runs through)."""
    data = os.path.join(tmp, "perf.data")
    rec = subprocess.run(["perf", "record", "-q", "-F", "20000", "-e", "cpu-clock", "-o", data]
                         + cmd, capture_output=True, text=True)
    if rec.returncode != 0:
        sys.exit(f"perf record: {rec.stderr.strip()}")
    script = subprocess.run(["perf", "script", "-i", data, "-F", "ip,dso"],
                            capture_output=True, text=True, check=True).stdout
    counts = {}
    for row in script.splitlines():
        parts = row.split()
        if len(parts) == 2 and exe_name in parts[1]:
            line = int(parts[0], 16) // 64
            counts[line] = counts.get(line, 0) + 1
    total = sum(counts.values())
    return sum(1 for n in counts.values() if n * 500 >= total)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, compare.zram_device() as dev:
        if dev is None:
            sys.exit("needs root and /sys/class/zram-control for a zram device")
        src = os.path.join(tmp, "aio_extra.c")
        with open(os.path.join(HERE, "aio_loop.c")) as fh:
            text = with_extra_code(fh.read())
        with open(src, "w") as fh:
            fh.write(text)
        exe = os.path.join(tmp, "aio_extra")
        subprocess.run(["cc", "-O2", "-I", HERE, "-o", exe, src], check=True)
        res = {n: [] for n in (0,) + EXTRA}
        for r in range(a.runs):
            order = list(res) if r % 2 == 0 else list(res)[::-1]
            for n in order:
                res[n].append(run_loop(exe, dev, n))
        print(f"aio_loop.c on {dev}, QD32, {a.runs} alternated rounds (medians):")
        print("| extra code per I/O | IOPS | user us/IO | system us/IO | system vs none |")
        print("| --- | --- | --- | --- | --- |")
        base = statistics.median(v[2] for v in res[0])
        for n, runs in res.items():
            iops, user, sys_ = (statistics.median(v[i] for v in runs) for i in range(3))
            print(f"| {n * 64} bytes ({n} lines) | {iops:,.0f} | {user:.3f} | {sys_:.3f} "
                  f"| {sys_ / base:.3f} |")
        if not shutil.which("perf"):
            print("perf is not installed: the lines of code each program runs are not counted")
            return
        job = compare.ram_workloads(dev)["libaio-randread-qd32-direct-ram"]
        iolab = [compare.IOLAB, "run", "--no-store", "--output=/dev/null"] + job
        n_iolab = code_lines(iolab, "iolab", tmp)
        n_loop = code_lines([exe, dev, "3", "32", "direct"], "aio_extra", tmp)
        print(f"64-byte lines of user code that took at least 0.2% of its samples "
              f"(perf record): iolab {n_iolab}, aio_loop.c {n_loop} (its own code; "
              "the C library's syscall wrapper and the vDSO's clock come on top)")


if __name__ == "__main__":
    main()
