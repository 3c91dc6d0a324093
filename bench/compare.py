#!/usr/bin/env python3
"""Runs the same job with fio and with iolab, alternating, and prints each
tool's median IOPS and peak RSS and the ratio iolab/fio, and the CPU time
each process spent per I/O (user + system, from wait4) as IOPS per core:
where the device sets the pace, that is where the tools differ.

    python3 bench/compare.py [--runs 5] [--only NAME]

Needs fio (Debian package), a C compiler and a release build (cargo build
--release). Each psync, io_uring and libaio 4k random-read job also runs
its engine's C limit loop (bench/pread_loop.c, uring_loop.c, aio_loop.c:
the same reads with nothing else, timed per I/O as iolab times them, since
iolab must time every I/O), and prints iolab against the loop, in IOPS and
per core (numjobs=2: two loops at once, summed). The buffered psync rows
also run pread_loop.c untimed (no clock read per I/O) and print iolab
against it beside the timed figure.
The verify jobs (verify=pattern and verify=crc32c writes and their
read-back, in /dev/shm) are measured apart, in MB/s and MB per CPU second,
the pattern one beside bench/verify_loop.c. The logging job (null engine,
QD1, bandwidth, IOPS and latency logs with a line per I/O) is compared
between the tools; "logging-cost" runs the null job with and without those
logs, for both tools in turn, and gives each tool's cost against itself.
"checks-cost" runs iolab's warm psync job with its honest-numbers checks
and without them (IOLAB_CHECKS=off, which the other rows never set).
"meta" (as root) runs iolab's metadata pass beside bench/meta_loop.c on a
tmpfs (bench/meta.py's measurement; fio has no such job).
At the end one table holds every row, with the load average when it was
measured; --markdown FILE also writes it there (docs/performance.md keeps
the latest).
Workloads are defined below; each runs N times per tool, in turn A B B A
..., so a drift in the machine's speed affects both alike. "paired" is the
median of the ratios within each round. IOLAB_BIN=path measures another
build of iolab.
"""
import argparse
import atexit
import contextlib
import ctypes
import errno
import functools
import json
import mmap
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOLAB = os.environ.get("IOLAB_BIN") or os.path.join(ROOT, "target", "release", "iolab")


# A line per I/O in the bandwidth, IOPS and latency (slat, clat, lat) logs.
LOG_EVERY_IO = ["--write_bw_log=n", "--write_iops_log=n", "--write_lat_log=n",
                "--log_avg_msec=0"]


def workloads(d):
    f = os.path.join(d, "warm.bin")
    return {
        # psync 4k random reads of a warm 256 MiB file for 3 s.
        "psync-randread-warm": [
            "--name=b", "--ioengine=psync", "--rw=randread", "--bs=4k",
            "--size=256m", f"--filename={f}", "--invalidate=0",
            "--time_based", "--runtime=3",
        ],
        # io_uring and libaio, direct 4k random reads at queue depth 32.
        "io_uring-randread-qd32-direct": [
            "--name=u", "--ioengine=io_uring", "--iodepth=32", "--direct=1",
            "--rw=randread", "--bs=4k", "--size=256m", f"--filename={f}",
            "--time_based", "--runtime=3",
        ],
        "libaio-randread-qd32-direct": [
            "--name=a", "--ioengine=libaio", "--iodepth=32", "--direct=1",
            "--rw=randread", "--bs=4k", "--size=256m", f"--filename={f}",
            "--time_based", "--runtime=3",
        ],
        # io_uring on the warm page cache: tool overhead shows.
        "io_uring-randread-qd32-buffered": [
            "--name=w", "--ioengine=io_uring", "--iodepth=32", "--rw=randread",
            "--bs=4k", "--size=256m", f"--filename={f}", "--invalidate=0",
            "--time_based", "--runtime=3",
        ],
        # psync direct 4k random reads at depth 1: both tools measure the
        # same device, so their latency percentiles must agree.
        "psync-randread-direct-qd1-latency": [
            "--name=l", "--ioengine=psync", "--direct=1", "--rw=randread",
            "--bs=4k", "--size=256m", f"--filename={f}",
            "--time_based", "--runtime=3",
        ],
        # The null engine with full latency statistics: tool overhead only.
        "null-4k-qd1": [
            "--name=n", "--ioengine=null", "--rw=randread", "--bs=4k",
            "--size=1g", "--time_based", "--runtime=3",
        ],
        # The same with a bandwidth, IOPS and latency log line per I/O
        # (the logs go to the run's working directory, a new temporary
        # one); "logging-cost" measures each tool with and without them.
        "null-4k-qd1-log-every-io": [
            "--name=n", "--ioengine=null", "--rw=randread", "--bs=4k",
            "--size=1g", "--time_based", "--runtime=3",
        ] + LOG_EVERY_IO,
        # Two CPUs: the warm psync job with two clones.
        "psync-randread-warm-numjobs2": [
            "--name=b", "--ioengine=psync", "--rw=randread", "--bs=4k",
            "--size=256m", f"--filename={f}", "--invalidate=0",
            "--time_based", "--runtime=3", "--numjobs=2",
        ],
        # The same with fio's jobs as threads of one process, as iolab's
        # clones always are. Where sched_autogroup is on (Debian's default)
        # and other sessions keep the CPUs busy, a process's threads share
        # one session's CPU share, while each of fio's job processes
        # starts a session of its own (setsid) and gets a share of its own:
        # on a loaded machine that, not the tool, sets the numjobs=2 row.
        "psync-randread-warm-numjobs2-thread": [
            "--name=b", "--ioengine=psync", "--rw=randread", "--bs=4k",
            "--size=256m", f"--filename={f}", "--invalidate=0",
            "--time_based", "--runtime=3", "--numjobs=2", "--thread",
        ],
        # Memory with sixteen clones.
        "null-numjobs16-rss": [
            "--name=r", "--ioengine=null", "--rw=randread", "--bs=4k",
            "--size=64m", "--numjobs=16", "--time_based", "--runtime=1",
        ],
    }


def ram_workloads(dev, tag="ram"):
    """Direct queued reads of a block device in memory. zram ("ram")
    answers at memory speed, so the kernel path and the tool's overhead
    set the pace. libaio reads it inside io_submit. io_uring's reads are
    handed to its kernel worker threads (iou-wrk), since zram does not
    take non-blocking I/O: that figure measures how those threads and the
    submitting one share the CPUs. A loop device over a file in tmpfs
    ("loop") takes requests through blk-mq like a disk and serves them
    from a kernel worker on the other CPU, as a disk's interrupt would."""
    jobs = {
        f"{engine}-randread-qd32-direct-{tag}": [
            "--name=m", f"--ioengine={engine}", "--iodepth=32", "--direct=1",
            "--rw=randread", "--bs=4k", "--size=256m", f"--filename={dev}",
            "--time_based", "--runtime=3",
        ]
        for engine in ("io_uring", "libaio")
    }
    if tag == "ram":
        # Two CPUs: io_uring on zram with two clones.
        jobs["io_uring-randread-qd32-direct-ram-numjobs2"] = (
            jobs["io_uring-randread-qd32-direct-ram"] + ["--numjobs=2"])
    return jobs


@contextlib.contextmanager
def loop_device():
    """A loop device over a 256 MiB file of random data in a new tmpfs (as
    root), detached and unmounted afterwards; None when there is none."""
    if os.geteuid() != 0 or not os.path.exists("/dev/loop-control"):
        yield None
        return
    mnt = tempfile.mkdtemp(prefix="iolab-bench-tmpfs-")
    dev = None
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300m", "tmpfs", mnt], check=True)
        img = os.path.join(mnt, "img")
        with open(img, "wb") as fh:
            for _ in range(256):
                fh.write(os.urandom(1 << 20))
        dev = subprocess.run(["losetup", "-f", "--show", img], check=True,
                             capture_output=True, text=True).stdout.strip()
        yield dev
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False)
            # The detach completes after losetup returns; until then the
            # image keeps the tmpfs busy.
            backing = f"/sys/block/{os.path.basename(dev)}/loop/backing_file"
            for _ in range(100):
                if not os.path.exists(backing):
                    break
                time.sleep(0.05)
        subprocess.run(["umount", mnt], check=False)
        os.rmdir(mnt)


@contextlib.contextmanager
def zram_device():
    """A new zram device of 256 MiB filled with random data (as root, with
    /sys/class/zram-control), removed afterwards; None when there is none."""
    ctl = "/sys/class/zram-control"
    if os.geteuid() != 0 or not os.path.isdir(ctl):
        yield None
        return
    with open(f"{ctl}/hot_add") as fh:
        n = fh.read().strip()
    dev, sysfs = f"/dev/zram{n}", f"/sys/block/zram{n}"
    try:
        with open(f"{sysfs}/disksize", "w") as fh:
            fh.write(str(256 << 20))
        with open(dev, "wb") as fh:
            for _ in range(256):
                fh.write(os.urandom(1 << 20))
        yield dev
    finally:
        # Right after the last run the device can still be held for a
        # moment (udev's probe, the kernel's last io_uring workers): the
        # reset says EBUSY until they let go.
        for attempt in range(100):
            try:
                with open(f"{sysfs}/reset", "w") as fh:
                    fh.write("1")
                break
            except OSError as e:
                if e.errno != errno.EBUSY or attempt == 99:
                    raise
                time.sleep(0.05)
        with open(f"{ctl}/hot_remove", "w") as fh:
            fh.write(n)


def load_cache(path):
    """Puts the file in the page cache the same way before every run: its
    pages are evicted, then read in order, so each run finds the same
    folios (readahead's) rather than whatever earlier random reads and the
    host's reclaim left (the page-cache lookup costs differ by 2x). Then
    holds them there (see `hold`) until the next call."""
    release()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        while os.read(fd, 1 << 20):
            pass
        hold(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


# The warm file's pages, mapped and locked by this process: (address,
# length), or None.
HELD = [None]
# Whether the script has said that it cannot hold the warm file.
NOT_HELD = []


@functools.cache
def libc():
    lib = ctypes.CDLL(None, use_errno=True)
    lib.mmap.restype = ctypes.c_void_p
    lib.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                         ctypes.c_int, ctypes.c_long]
    lib.mlock.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    lib.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return lib


def hold(fd, length):
    """Maps the file's cached pages and locks them, so that nothing evicts
    them while the runs read them: this host's page cache loses a warm
    file at about a megabyte a second with no reclaim counted (the host's
    doing), and a run that read some of it from storage measured the disk
    for that part (run again, listed under the table). The pages are those
    `load_cache` just read; mapping them reads none and splits no folio.
    Both tools and the loops read them alike. Without the right to lock
    256 MiB (root, or RLIMIT_MEMLOCK), the runs go on unheld."""
    lib = libc()
    addr = lib.mmap(None, length, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    failed = addr in (None, ctypes.c_void_p(-1).value)
    if not failed and lib.mlock(addr, length) != 0:
        failed = True
        err = ctypes.get_errno()
        lib.munmap(addr, length)
        ctypes.set_errno(err)
    if failed:
        if not NOT_HELD:
            print(f"the warm file is not locked in memory "
                  f"({os.strerror(ctypes.get_errno())}): a run that loses part of it "
                  "to the host is run again")
            NOT_HELD.append(True)
        return
    HELD[0] = (addr, length)


def release():
    """Unmaps (and so unlocks) the pages `hold` locked, if it did."""
    if HELD[0]:
        libc().munmap(*HELD[0])
        HELD[0] = None


# A warm run whose file was evicted under it is run again, this many times
# at most; the reruns are listed under the table.
WARM_TRIES = 3
EVICTED = []
# Bytes the last run (one() or limit_one()) read from storage, from its
# rusage (the kernel's per-task I/O accounting): a warm run reads none.
LAST_READ = [0]
# The page faults (minor) of the last run's process.
LAST_MINFLT = [0]
# The rusage of the last run of `one`.
LAST_RUSAGE = [None]
# The user and system CPU seconds of the last limit loop run (limit_one),
# summed over its copies.
LAST_LIMIT_CPU = [(0.0, 0.0)]
# A warm run that read more than this from storage lost its file from the
# page cache (another user's drop_caches, reclaim) and measured the disk
# for that part; a random pass reads each block again and so puts the file
# back, which is why the file's residency after the run cannot tell.
EVICTED_BYTES = 1 << 20


def load_executable(name):
    """Reads a program's file and the shared libraries it loads through the
    page cache, so that a run's reads from storage are its data's alone
    (fio 3.33 on Debian loads 64 libraries, which the host evicts as it
    does the warm file)."""
    path = shutil.which(name)
    if not path:
        return
    paths = [path]
    ldd = subprocess.run(["ldd", path], capture_output=True, text=True)
    for line in ldd.stdout.splitlines():
        # "libaio.so.1 => /lib/x86_64-linux-gnu/libaio.so.1 (0x...)" or
        # "/lib64/ld-linux-x86-64.so.2 (0x...)"
        words = [w for w in line.split() if w.startswith("/")]
        paths += words[:1]
    for p in paths:
        with contextlib.suppress(OSError), open(p, "rb") as fh:
            while fh.read(1 << 20):
                pass


def one(cmd, cwd=None, env=None):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        if cwd:
            os.chdir(cwd)
        if env:
            os.environ.update(env)
        os.close(r)
        os.dup2(w, 1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.execvp(cmd[0], cmd)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status, ru = os.wait4(pid, 0)
    LAST_READ[0] = ru.ru_inblock * 512
    LAST_MINFLT[0] = ru.ru_minflt
    LAST_RUSAGE[0] = ru
    out = b"".join(chunks)
    if status != 0:
        sys.exit(f"{' '.join(cmd)} exited with {status}")
    data = json.loads(out[out.index(b"{"):])
    iops = sum(j[d]["iops"] for j in data["jobs"] for d in ("read", "write"))
    ios = sum(j[d]["total_ios"] for j in data["jobs"] for d in ("read", "write"))
    pct = data["jobs"][0]["read"]["clat_ns"].get("percentile", {})
    p50 = pct.get("50.000000", 0)
    p99 = pct.get("99.000000", 0)
    # I/Os per second of the process's own CPU time (all its threads).
    per_core = ios / max(ru.ru_utime + ru.ru_stime, 1e-9)
    return iops, ru.ru_maxrss, p50, p99, per_core


def paired(res, k):
    """The median of the round-by-round ratios iolab/fio of field `k`: the
    two runs of a round are seconds apart, so a drift of the device or the
    host over the whole benchmark cancels out of each ratio."""
    return statistics.median(i[k] / f[k] for f, i in zip(res["fio"], res["iolab"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only")
    ap.add_argument("--dir", default=None, help="where the test file goes")
    ap.add_argument("--markdown", default=None,
                    help="also write the table, the machine and the command to this file")
    a = ap.parse_args()
    # Every row but "checks-cost" measures iolab with its checks.
    os.environ.pop("IOLAB_CHECKS", None)
    d = a.dir or tempfile.mkdtemp(prefix="iolab-bench-")
    if a.dir is None:
        # The directory this script made (its 256 MiB warm file, the limit
        # loops, the logs) goes with it, however the run ends.
        atexit.register(shutil.rmtree, d, True)
    os.makedirs(d, exist_ok=True)
    warm = os.path.join(d, "warm.bin")
    if not os.path.exists(warm):
        with open(warm, "wb") as fh:
            for _ in range(256):
                fh.write(os.urandom(1 << 20))

    loops = {}
    for engine, src in (("psync", "pread_loop"), ("io_uring", "uring_loop"), ("libaio", "aio_loop")):
        loops[engine] = os.path.join(d, src)
        subprocess.run(["cc", "-O2", "-o", loops[engine], os.path.join(ROOT, "bench", f"{src}.c")],
                       check=True)

    jobs = workloads(d)
    with contextlib.ExitStack() as stack:
        for tag, device in (("ram", zram_device), ("loop", loop_device)):
            if a.only and a.only not in ram_workloads("", tag):
                continue
            dev = stack.enter_context(device())
            if dev:
                jobs.update(ram_workloads(dev, tag))
            else:
                print(f"skipped the *-{tag} jobs: they need root and a {tag} device")
        run_all(a, jobs, d, warm, loops)
    for method in VERIFY_METHODS:
        if not a.only or a.only == verify_name(method):
            run_verify(a, d, method)
    if not a.only or a.only == "logging-cost":
        run_logging(a, d)
    if not a.only or a.only == "checks-cost":
        run_checks(a, d, warm)
    if not a.only or a.only == "meta":
        run_meta(a)
    print_table(a)


# Every measured row of the final table: (job, cells...).
ROWS = []
# Medians per job and tool, for the rows computed from two jobs.
MEDIANS = {}
HEAD = ("job", "iolab / fio", "per core iolab / fio", "iolab / timed C loop (per core)",
        "figures (medians)", "load")


def load():
    return open("/proc/loadavg").read().split()[0]


def print_table(a):
    """The derived rows (two-CPU scaling), then the table in markdown, on
    stdout and, with --markdown, in that file with the machine and the
    command."""
    for one_job, two in (("psync-randread-warm", "psync-randread-warm-numjobs2"),
                         ("psync-randread-warm", "psync-randread-warm-numjobs2-thread"),
                         ("io_uring-randread-qd32-direct-ram",
                          "io_uring-randread-qd32-direct-ram-numjobs2")):
        m1, m2 = MEDIANS.get(one_job), MEDIANS.get(two)
        if m1 and m2:
            cells = [f"{t} {m2[t][0] / m1[t][0]:.2f}x"
                     for t in ("fio", "iolab", "limit", "untimed") if t in m1 and t in m2]
            ROWS.append((f"numjobs=2 / numjobs=1 IOPS, {two.replace('-numjobs2', '')}", "", "", "",
                         ", ".join(cells), load()))
    lines = ["| " + " | ".join(HEAD) + " |", "|" + " --- |" * len(HEAD)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in ROWS]
    table = "\n".join(lines)
    if EVICTED:
        table += ("\n\nRun again because they read part of the warm file from storage "
                  "(it left the page cache during the run): "
                  + ", ".join(EVICTED) + ".")
    print()
    print(table)
    if a.markdown:
        cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((x.split(":", 1)[1].strip() for x in cpu.splitlines()
                      if x.startswith("Model name")), "?")
        with open(a.markdown, "w") as fh:
            fh.write(f"Machine: {model}, {os.cpu_count()} CPUs, kernel {os.uname().release}; "
                     f"load average at the end {load()}; "
                     f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.\n\n"
                     f"Command: `python3 bench/compare.py {' '.join(sys.argv[1:])}`\n\n"
                     f"{table}\n")


def run_all(a, jobs, d, warm, loops):
    for name, opts in jobs.items():
        if a.only and a.only != name:
            continue
        fio = ["fio", "--output-format=json"] + opts
        iolab = [IOLAB, "run", "--no-store", "--output-format=json"] + opts
        # Each run in a fresh directory: the log jobs write their logs there.
        logs = tempfile.mkdtemp(prefix="iolab-bench-logs-", dir=d)
        res = {"fio": [], "iolab": [], "limit": []}
        # The limit loop of the job's engine takes its turn with the two
        # tools, so that a drift in the machine's speed affects all three:
        # its IOPS (and CPU time) for the throughput jobs, its own timing
        # of each direct read for the latency job.
        latency = name.endswith("-latency")
        warm_job = "--invalidate=0" in opts
        limit_cmd = limit_for(opts, loops)
        with_limit = limit_cmd is not None
        untimed_cmd = untimed_for(limit_cmd)
        res["untimed"] = []
        for i in range(a.runs):
            order = [("fio", fio), ("iolab", iolab)]
            if with_limit:
                order.append(("limit", limit_cmd))
            if untimed_cmd:
                order.append(("untimed", untimed_cmd))
            if i % 2:
                order.reverse()
            for tool, cmd in order:
                for attempt in range(WARM_TRIES):
                    # The host may page cold cache out between runs (this
                    # machine's memory is balanced by DAMON): each run
                    # starts with the file read into the cache again.
                    load_cache(warm)
                    # The tool's own executable too, which the host may
                    # have paged out: its reading is no eviction.
                    load_executable(cmd[1][0] if tool in ("limit", "untimed") else cmd[0])
                    if tool in ("limit", "untimed"):
                        r = limit_one(cmd)
                    else:
                        r = one(cmd, logs)
                    # A run of a warm job during which the file left the
                    # cache (another user's drop_caches, reclaim) measured
                    # the disk: it is run again.
                    if not warm_job or LAST_READ[0] <= EVICTED_BYTES:
                        break
                    print(f"  {name}: {tool}'s run {i + 1} read {LAST_READ[0] >> 20} MiB "
                          f"from storage (try {attempt + 1}); run again")
                    EVICTED.append(f"{name} {tool}")
                res[tool].append(r)
                for x in os.listdir(logs):
                    os.unlink(os.path.join(logs, x))
        os.rmdir(logs)
        fi = statistics.median(x[0] for x in res["fio"])
        ii = statistics.median(x[0] for x in res["iolab"])
        fr = statistics.median(x[1] for x in res["fio"])
        ir = statistics.median(x[1] for x in res["iolab"])
        fc = statistics.median(x[4] for x in res["fio"])
        ic = statistics.median(x[4] for x in res["iolab"])
        MEDIANS[name] = {"fio": (fi, fc), "iolab": (ii, ic)}
        figures = f"IOPS fio {fi:,.0f}, iolab {ii:,.0f}"
        vs_limit = ""
        print(f"{name}: fio {fi:,.0f} IOPS, iolab {ii:,.0f} IOPS, ratio {ii / fi:.2f} "
              f"(paired {paired(res, 0):.2f}); "
              f"per core fio {fc:,.0f}, iolab {ic:,.0f}, ratio {ic / fc:.2f} "
              f"(paired {paired(res, 4):.2f}); "
              f"peak RSS fio {fr} KiB, iolab {ir} KiB, ratio {ir / fr:.2f}")
        if latency:
            for k, label in ((2, "p50"), (3, "p99")):
                fl = statistics.median(x[k] for x in res["fio"])
                il = statistics.median(x[k] for x in res["iolab"])
                ll = statistics.median(x[k - 1] for x in res["limit"])
                print(f"  clat {label}: fio {fl / 1000:.1f} us, iolab {il / 1000:.1f} us, "
                      f"ratio {il / fl:.3f}, paired {paired(res, k):.3f}; "
                      f"limit loop {ll:.1f} us")
                figures += (f"; clat {label} fio {fl / 1000:.1f}, iolab {il / 1000:.1f}, "
                            f"C loop {ll:.1f} us")
        elif with_limit:
            lm, lc = loop_medians(res, "limit")
            print(f"  limit loop {lm:,.0f} IOPS, per core {lc:,.0f}; "
                  f"iolab/limit {ii / lm:.2f}, per core {ic / lc:.2f}; limit/fio {lm / fi:.2f}")
            MEDIANS[name]["limit"] = (lm, lc)
            vs_limit = f"{ii / lm:.2f} ({ic / lc:.2f})"
            figures += f", C loop {lm:,.0f}"
            if untimed_cmd:
                um, uc = loop_medians(res, "untimed")
                print(f"  untimed loop {um:,.0f} IOPS, per core {uc:,.0f}; "
                      f"iolab/untimed {ii / um:.2f}, per core {ic / uc:.2f}")
                MEDIANS[name]["untimed"] = (um, uc)
                figures += (f" (timed); untimed C loop {um:,.0f}, iolab / untimed "
                            f"{ii / um:.2f} ({ic / uc:.2f} per core)")
            # The most any tool that does the job's work could do
            # against fio here: the ceiling of the iolab / fio columns.
            figures += f"; C loop / fio {lm / fi:.2f} ({lc / fc:.2f} per core)"
        if name.endswith("-rss"):
            figures += f"; peak RSS iolab / fio {ir / fr:.2f}"
        ROWS.append((name, f"{paired(res, 0):.2f}", f"{paired(res, 4):.2f}", vs_limit,
                     figures, load()))


def loop_medians(res, key):
    """A C loop's median IOPS and I/Os per CPU second over its runs."""
    return (statistics.median(x[0] for x in res[key]),
            statistics.median(x[-1] for x in res[key]))


def limit_for(opts, loops):
    """The C limit loop that does a job's work with nothing else but timing
    each I/O as iolab does: the pread loop for psync (4k random reads at
    depth 1; "timed", or "direct", which is timed too), the io_uring and
    libaio loops for those engines at the job's depth; None for other
    jobs."""
    o = dict(x[2:].split("=", 1) if "=" in x else (x[2:], "1") for x in opts)
    engine = o.get("ioengine")
    if engine not in loops or o.get("rw") != "randread" or o.get("bs") != "4k":
        return None
    direct = o.get("direct") == "1"
    cmd = [loops[engine], o["filename"], o.get("runtime", "3")]
    jobs = int(o.get("numjobs", "1"))
    if engine != "psync":
        cmd.append(o.get("iodepth", "1"))
    elif o.get("iodepth", "1") != "1":
        return None
    else:
        return (jobs, cmd + ["direct" if direct else "timed"])
    return (jobs, cmd + (["direct"] if direct else []))


def untimed_for(limit):
    """The pread loop without a clock read per I/O, for the buffered psync
    jobs whose limit is the timed pread loop; None for the others."""
    if limit is None or limit[1][-1] != "timed":
        return None
    return (limit[0], limit[1][:-1])


def limit_one(spec):
    """One run of a limit loop (N copies at once for numjobs=N): the
    numbers it prints ("iops N" or "iops N p50 US p99 US"; IOPS summed
    over the copies) and, last, its I/Os per second of CPU time."""
    n, cmd = spec
    # Each copy its number: its own sequence of blocks, the same in every
    # run (bench/blockmap.h).
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, LOOP_COPY=str(i)))
             for i in range(n)]
    total, cpu, vals = 0.0, 0.0, None
    LAST_READ[0] = 0
    LAST_LIMIT_CPU[0] = (0.0, 0.0)
    for p in procs:
        out = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        LAST_READ[0] += ru.ru_inblock * 512
        if status != 0:
            sys.exit(f"{' '.join(cmd)} exited with {status}")
        words = out.split()
        v = [float(w) for w in words[1::2]]
        vals = vals or v
        total += v[0]
        cpu += ru.ru_utime + ru.ru_stime
        user, system = LAST_LIMIT_CPU[0]
        LAST_LIMIT_CPU[0] = (user + ru.ru_utime, system + ru.ru_stime)
    secs = float(cmd[2])
    return [total] + vals[1:] + [total * secs / max(cpu, 1e-9)]


# A sequential psync write of 256 MiB with verify=pattern (0xff) and its
# read-back, in memory (/dev/shm when there is one): the cost of preparing
# and checking the pattern shows, not a device's.
# verify=crc32c the same, with its header and checksum per block.
VERIFY_METHODS = ("pattern", "crc32c")
VERIFY_BYTES = 256 << 20


def verify_name(method):
    return f"psync-write-verify-{method}"


def verify_opts(method):
    opts = ["--name=v", "--rw=write", "--bs=4k", "--size=256m",
            f"--verify={method}", "--ioengine=psync"]
    return opts + (["--verify_pattern=0xff"] if method == "pattern" else [])


def verify_one(cmd):
    """Write and read MB/s (10^6 bytes per second) of one run of a tool,
    and MB written and read back per second of its CPU time."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"{' '.join(cmd)} exited with {status}")
    data = json.loads(out[out.index(b"{"):])
    j = data["jobs"][0]
    if j["error"]:
        sys.exit(f"{' '.join(cmd)}: error {j['error']}")
    cpu = max(ru.ru_utime + ru.ru_stime, 1e-9)
    return (j["write"]["bw_bytes"] / 1e6, j["read"]["bw_bytes"] / 1e6,
            2 * VERIFY_BYTES / 1e6 / cpu)


def run_verify(a, d, method):
    """fio, iolab and (for the pattern) the C limit loop in turn, A B C
    then C B A, each writing a new file: medians of write and read-back
    MB/s and of MB per CPU second, and the paired ratios iolab/fio."""
    where = "/dev/shm" if os.path.isdir("/dev/shm") else d
    f = os.path.join(where, f"iolab-bench-verify-{os.getpid()}")
    limit = os.path.join(d, "verify_loop")
    subprocess.run(["cc", "-O2", "-o", limit, os.path.join(ROOT, "bench", "verify_loop.c")],
                   check=True)
    cmds = {
        # fio would leave a verify state file in the current directory.
        "fio": ["fio", "--output-format=json", "--verify_state_save=0", f"--filename={f}"]
        + verify_opts(method),
        "iolab": [IOLAB, "run", "--no-store", "--output-format=json", f"--filename={f}"]
        + verify_opts(method),
    }
    with_limit = method == "pattern"
    res = {"fio": [], "iolab": [], "limit": []}
    try:
        for i in range(a.runs):
            order = ["fio", "iolab"] + (["limit"] if with_limit else [])
            if i % 2:
                order.reverse()
            for tool in order:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f)
                if tool == "limit":
                    out = subprocess.run([limit, f, str(256 << 20), "4096", "0xff"],
                                         capture_output=True, text=True, check=True).stdout
                    words = out.split()
                    res[tool].append((float(words[1]), float(words[3])))
                else:
                    res[tool].append(verify_one(cmds[tool]))
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f)
    name = verify_name(method)
    pc = statistics.median(i[2] / f_[2] for f_, i in zip(res["fio"], res["iolab"]))
    fc, ic = (statistics.median(x[2] for x in res[t]) for t in ("fio", "iolab"))
    for k, what in ((0, "write"), (1, "read-back")):
        fm, im = (statistics.median(x[k] for x in res[t]) for t in ("fio", "iolab"))
        pr = statistics.median(i[k] / f_[k] for f_, i in zip(res["fio"], res["iolab"]))
        lm = statistics.median(x[k] for x in res["limit"]) if with_limit else None
        print(f"{name} {what}: fio {fm:,.0f} MB/s, iolab {im:,.0f} MB/s, "
              f"ratio {im / fm:.2f} (paired {pr:.2f})"
              + (f"; limit loop {lm:,.0f} MB/s" if lm else ""))
        ROWS.append((f"{name} {what}", f"{pr:.2f}", f"{pc:.2f} (write + read)",
                     f"{im / lm:.2f}" if lm else "",
                     f"MB/s fio {fm:,.0f}, iolab {im:,.0f}"
                     + (f", C loop {lm:,.0f}" if lm else "")
                     + f"; MB per CPU s fio {fc:,.0f}, iolab {ic:,.0f}", load()))


def cost(res, on, off, k):
    """The median over rounds of 1 - on/off for field k: what `on` costs
    against `off`, measured seconds apart in each round."""
    return statistics.median(1 - x[k] / y[k] for x, y in zip(res[on], res[off]))


def run_logging(a, d):
    """Each tool's null job without logs and with a line per I/O in the
    bandwidth, IOPS and latency logs, the four in turn (then in reverse
    order), in a fresh directory: what logging costs each tool, in IOPS
    and in I/Os per CPU second, as medians of the round-by-round ratios."""
    base = workloads(d)["null-4k-qd1"]
    cmds = {
        ("fio", False): ["fio", "--output-format=json"] + base,
        ("fio", True): ["fio", "--output-format=json"] + base + LOG_EVERY_IO,
        ("iolab", False): [IOLAB, "run", "--no-store", "--output-format=json"] + base,
        ("iolab", True): [IOLAB, "run", "--no-store", "--output-format=json"] + base
        + LOG_EVERY_IO,
    }
    res = {k: [] for k in cmds}
    # Page faults per 1,000 I/Os of each run (the process's minor faults).
    faults = {k: [] for k in cmds}
    logs = tempfile.mkdtemp(prefix="iolab-bench-logs-", dir=d)
    try:
        for i in range(a.runs):
            order = list(cmds) if i % 2 == 0 else list(reversed(cmds))
            for k in order:
                r = one(cmds[k], logs)
                res[k].append(r)
                faults[k].append(1000 * LAST_MINFLT[0] / max(r[0] * 3, 1))
                for x in os.listdir(logs):
                    os.unlink(os.path.join(logs, x))
    finally:
        shutil.rmtree(logs, True)
    cells = []
    for tool in ("fio", "iolab"):
        off, on = (tool, False), (tool, True)
        iops = [statistics.median(x[0] for x in res[k]) for k in (off, on)]
        c, cc = cost(res, on, off, 0), cost(res, on, off, 4)
        flt = [statistics.median(faults[k]) for k in (off, on)]
        print(f"logging cost {tool}: IOPS without {iops[0]:,.0f}, with {iops[1]:,.0f}: "
              f"{100 * c:.0f}% of IOPS, {100 * cc:.0f}% per core; page faults per "
              f"1,000 I/Os {flt[0]:.1f} without, {flt[1]:.1f} with")
        cells.append(f"{tool} {100 * c:.0f}% of IOPS, {100 * cc:.0f}% per core "
                     f"(IOPS {iops[0]:,.0f} without, {iops[1]:,.0f} with; page faults "
                     f"per 1,000 I/Os {flt[0]:.1f} / {flt[1]:.1f})")
    ROWS.append(("logging-cost (bw, iops, lat logs, a line per I/O, null QD1)", "", "", "",
                 "; ".join(cells), load()))


def run_checks(a, d, warm):
    """iolab's warm psync job with its honest-numbers checks and with
    IOLAB_CHECKS=off, in turn: what the checks cost in IOPS, in I/Os per
    CPU second and in the process's wall time (their reads before and
    after the run are outside its runtime, inside its CPU and wall time)."""
    opts = workloads(d)["psync-randread-warm"]
    cmd = [IOLAB, "run", "--no-store", "--output-format=json"] + opts
    res = {"on": [], "off": []}
    for i in range(a.runs):
        for k in (("on", "off") if i % 2 == 0 else ("off", "on")):
            load_cache(warm)
            t = time.monotonic()
            r = one(cmd, env={"IOLAB_CHECKS": "off"} if k == "off" else None)
            res[k].append((r[0], time.monotonic() - t, 0, 0, r[4]))
    med = {k: [statistics.median(x[j] for x in res[k]) for j in (0, 1, 4)] for k in res}
    c, cc = cost(res, "on", "off", 0), cost(res, "on", "off", 4)
    # Wall time: the paired difference, in ms.
    dw = 1000 * statistics.median(x[1] - y[1] for x, y in zip(res["on"], res["off"]))
    print(f"checks cost: IOPS with {med['on'][0]:,.0f}, without {med['off'][0]:,.0f} "
          f"({100 * c:+.1f}%); per core {100 * cc:+.1f}%; wall s with {med['on'][1]:.3f}, "
          f"without {med['off'][1]:.3f} ({dw:+.0f} ms)")
    ROWS.append(("checks-cost (psync-randread-warm, iolab with / without checks)", "", "", "",
                 f"cost {100 * c:+.1f}% of IOPS, {100 * cc:+.1f}% per core; IOPS with "
                 f"{med['on'][0]:,.0f}, without {med['off'][0]:,.0f}; process wall s with "
                 f"{med['on'][1]:.3f}, without {med['off'][1]:.3f} ({dw:+.0f} ms)", load()))


def run_meta(a):
    """iolab's metadata pass (create, stat, unlink of 100,000 empty files
    on a tmpfs) against bench/meta_loop.c, in turn (bench/meta.py): the
    median of the round-by-round ratios of operations per second."""
    if os.geteuid() != 0:
        print("skipped the meta row: it needs root (it mounts a tmpfs)")
        return
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import meta
    files = 100_000
    c, rust = meta.measure(IOLAB, a.runs, files)
    r = statistics.median(i / k for i, k in zip(rust, c))
    print(f"meta: C loop {statistics.median(c):,.0f} ops/s, iolab "
          f"{statistics.median(rust):,.0f} ops/s, ratio {r:.3f}")
    ROWS.append((f"meta create+stat+unlink {files // 1000}k, tmpfs, 1 thread", "", "",
                 f"{r:.2f}", f"ops/s iolab {statistics.median(rust):,.0f}, C loop "
                 f"{statistics.median(c):,.0f}", load()))


if __name__ == "__main__":
    main()
