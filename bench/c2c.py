#!/usr/bin/env python3
"""Cache lines iolab's clone threads share per I/O, counted in emulation
(goal 3 of docs/performance.md) for machines where `perf c2c` has no memory
events, such as virtual machines.

The release build runs under QEMU's user-mode emulator (qemu-x86_64, Debian
package qemu-user) with bench/c2c_plugin.c, which follows every 64-byte line
the program's threads load and store as a MESI cache would and counts the
transfers of a modified line between threads (hitm) and the invalidations of
other threads' copies (inval). Each row runs two clones for N and then 5N
I/Os each; the growth of the counts divided by the growth of the I/Os is
what the hot path shares per I/O (setup and the merge at the end share lines
once per run, and drop out). The functions that caused the most events in
the longer run are listed under the table.

io_uring and libaio do not run under the emulator (it has no io_uring_setup
or io_setup); their engine state is per clone like the rest.

  python3 bench/c2c.py [--ios N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOLAB = os.environ.get("IOLAB_BIN") or os.path.join(ROOT, "target", "release", "iolab")


def counted(plugin, out, cmd):
    """Runs cmd under the plugin: (I/Os done, hitm, inval, top sites)."""
    run = subprocess.run(["qemu-x86_64", "-plugin", f"{plugin},out={out}"] + cmd,
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)} under emulation: {run.stderr.strip()}")
    data = json.loads(run.stdout[run.stdout.index("{"):])
    ios = sum(j[d]["total_ios"] for j in data["jobs"] for d in ("read", "write"))
    with open(out) as fh:
        lines = fh.read().splitlines()
    total = lines[0].split()
    hitm, inval = int(total[2]), int(total[4])
    if int(total[6]):
        sys.exit("the plugin ran out of room to follow every line")
    sites = []
    for line in lines[1:6]:
        w = line.split(maxsplit=5)
        sites.append((int(w[2]), int(w[4]), demangle(w[5])))
    return ios, hitm, inval, sites


def demangle(sym):
    try:
        return subprocess.run(["c++filt", sym], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return sym


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ios", type=int, default=200_000,
                    help="I/Os per clone of the shorter run (the longer does 5x)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="iolab-c2c-") as d:
        plugin = os.path.join(d, "c2c_plugin.so")
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", plugin,
                        os.path.join(ROOT, "bench", "c2c_plugin.c")], check=True)
        data = os.path.join(d, "warm.bin")
        with open(data, "wb") as fh:
            for _ in range(64):
                fh.write(os.urandom(1 << 20))
        rows = {
            "null-4k-numjobs2": ["--ioengine=null", "--size=1g"],
            "psync-randread-warm-numjobs2": ["--ioengine=psync", f"--filename={data}",
                                             "--invalidate=0"],
        }
        print("| job | I/Os | hitm | inval | shared-line events per I/O |")
        print("| --- | --- | --- | --- | --- |")
        tops = {}
        for name, opts in rows.items():
            got = []
            for n in (a.ios, 5 * a.ios):
                cmd = [IOLAB, "run", "--no-store", "--output-format=json", "--name=c",
                       "--rw=randread", "--bs=4k", "--numjobs=2", f"--io_size={n * 4096}"] + opts
                got.append(counted(plugin, os.path.join(d, "c2c.txt"), cmd))
            (i0, h0, v0, _), (i1, h1, v1, sites) = got
            per_io = ((h1 + v1) - (h0 + v0)) / (i1 - i0)
            print(f"| {name} | {i0:,} / {i1:,} | {h0:,} / {h1:,} | {v0:,} / {v1:,} "
                  f"| {per_io:.6f} |")
            tops[name] = sites
        for name, sites in tops.items():
            print(f"\n{name}, most events at the longer run (hitm, inval, function):")
            for hitm, inval, sym in sites:
                print(f"  {hitm:>8,} {inval:>8,}  {sym[:110]}")


if __name__ == "__main__":
    main()
