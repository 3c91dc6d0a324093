#!/usr/bin/env python3
"""Create + stat + unlink of 100,000 empty files on a tmpfs, one thread:
`iolab meta --phases stat` (whose phases are then create, stat, unlink)
against bench/meta_loop.c, the same system calls with no statistics.
Runs alternate (C, iolab, iolab, C, ...) so a drift in the machine's speed
affects both alike; prints each one's median operations per second over
the three phases and the ratio iolab/C (target >= 0.9).

    sudo python3 bench/meta.py [--runs 7] [--files 100000] [--iolab PATH]

Needs root (it mounts a tmpfs), cc, and a release build of iolab
(cargo build --release -p iolab).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
IOLAB = os.path.join(TARGET, "release", "iolab")
PHASES = ("create", "stat", "unlink")


def run_c(binary, d, files):
    out = subprocess.run([binary, d, str(files)], check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[1])


def run_iolab(iolab, d, files):
    out = subprocess.run(
        [iolab, "meta", d, "--files", str(files), "--phases", "stat",
         "--output-format", "json"],
        check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    phases = {p["phase"]: p for p in doc["phases"]}
    ops = sum(phases[p]["ops"] for p in PHASES)
    ns = sum(phases[p]["elapsed_ns"] for p in PHASES)
    return ops * 1e9 / ns


def measure(iolab, runs, files):
    """Alternated runs of the C loop and of iolab on a fresh tmpfs: each
    one's operations per second, run by run (needs root and cc)."""
    with tempfile.TemporaryDirectory() as work:
        binary = os.path.join(work, "meta_loop")
        subprocess.run(["cc", "-O2", "-o", binary,
                        os.path.join(ROOT, "bench", "meta_loop.c")], check=True)
        mnt = os.path.join(work, "mnt")
        os.mkdir(mnt)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512m", "tmpfs", mnt],
                       check=True)
        try:
            c, rust = [], []
            for i in range(runs):
                order = [("c", c), ("iolab", rust)]
                if i % 2:
                    order.reverse()
                for name, acc in order:
                    d = os.path.join(mnt, f"{name}{i}")
                    if name == "c":
                        os.mkdir(d)
                        acc.append(run_c(binary, d, files))
                        os.rmdir(d)
                    else:
                        acc.append(run_iolab(iolab, mnt, files))
        finally:
            subprocess.run(["umount", mnt], check=True)
    return c, rust


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--iolab", default=IOLAB)
    args = ap.parse_args()
    if not os.path.exists(args.iolab):
        sys.exit(f"no iolab binary at {args.iolab}: cargo build --release -p iolab")
    c, rust = measure(args.iolab, args.runs, args.files)
    mc, mi = statistics.median(c), statistics.median(rust)
    print(f"create+stat+unlink of {args.files} empty files on tmpfs, 1 thread, "
          f"{args.runs} runs each")
    print(f"  C loop (no statistics): median {mc:,.0f} ops/s "
          f"(min {min(c):,.0f}, max {max(c):,.0f})")
    print(f"  iolab meta:             median {mi:,.0f} ops/s "
          f"(min {min(rust):,.0f}, max {max(rust):,.0f})")
    print(f"  ratio iolab/C: {mi / mc:.3f}")


if __name__ == "__main__":
    main()
