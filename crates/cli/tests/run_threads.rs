//! Where and how the job clones' threads run, seen from outside while a
//! run goes on: `cpus_allowed` with both policies and `nice`, read from
//! /proc/PID/task/TID as the kernel reports them. The rules are fio
//! 3.33's, checked on its job processes: `split` gives thread N of the run
//! (counted across jobs, from 0) CPU number N modulo the set's size, and
//! `nice` adds to the niceness the thread started with.

mod common;
use common::*;
use iolab_testkit::skip;

use std::collections::BTreeMap;
use std::process::{Command as Proc, Stdio};
use std::time::{Duration, Instant};

/// What the kernel says of one thread: its allowed CPUs and its nice value.
#[derive(Clone, Debug, PartialEq)]
struct Placed {
    cpus: String,
    nice: i32,
}

/// The threads of process `pid` by name, with their CPUs and niceness.
fn threads(pid: u32) -> BTreeMap<String, Placed> {
    let mut out = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let dir = t.path();
        let (Ok(comm), Ok(status), Ok(stat)) = (
            std::fs::read_to_string(dir.join("comm")),
            std::fs::read_to_string(dir.join("status")),
            std::fs::read_to_string(dir.join("stat")),
        ) else {
            continue;
        };
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .map(|v| v.trim().to_string())
            .unwrap_or_default();
        // Fields after the name in parentheses; nice is the 19th field of
        // the line, the 17th after the name.
        let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
        let nice = after
            .split_whitespace()
            .nth(16)
            .and_then(|v| v.parse().ok())
            .unwrap_or(i32::MIN);
        out.insert(comm.trim().to_string(), Placed { cpus, nice });
    }
    out
}

#[test]
fn cpus_allowed_and_nice_place_each_clone_thread() {
    let ncpus = iolab_engine::host::configured_cpus();
    let online = iolab_engine::host::thread_cpus().unwrap();
    if online.len() < 2 || !online.contains(&0) || !online.contains(&1) {
        skip!("needs CPUs 0 and 1 usable, have {online:?}");
    }
    let base = iolab_engine::host::thread_nice().unwrap();
    assert!(ncpus >= 2);
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nsize=256k\nrw=randread\ntime_based\nruntime=3\n\
             cpus_allowed=0-1\ncpus_allowed_policy=split\n\
             [a]\nnice=5\n[b]\n[c]\nnumjobs=2\nnice=2\n[d]\ncpus_allowed_policy=shared\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let mut child = Proc::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["run", "--no-store", "--output-format=json"])
        .arg(&job)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let want = |cpus: &str, nice: i32| Placed {
        cpus: cpus.to_string(),
        nice: (base + nice).clamp(-20, 19),
    };
    let expected: BTreeMap<String, Placed> = [
        ("a.0", want("0", 5)),
        ("b.0", want("1", 0)),
        ("c.0", want("0", 2)),
        ("c.1", want("1", 2)),
        ("d.0", want("0-1", 0)),
    ]
    .into_iter()
    .map(|(n, p)| (n.to_string(), p))
    .collect();
    // A thread has its name before it places itself: look until each is
    // placed (or the run ends).
    let mut seen = BTreeMap::new();
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end && child.try_wait().unwrap().is_none() {
        for (name, placed) in threads(child.id()) {
            if expected.contains_key(&name) {
                seen.insert(name, placed);
            }
        }
        if seen == expected {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.wait();
    assert_eq!(seen, expected);
}

#[test]
fn a_cpu_the_machine_lacks_is_a_bad_job() {
    let ncpus = iolab_engine::host::configured_cpus();
    let dir = tempfile::tempdir().unwrap();
    iolab()
        .current_dir(dir.path())
        .args(["run", "--no-store", "--name=p", "--size=64k"])
        .arg(format!("--cpus_allowed=0,{ncpus}"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "cpus_allowed: CPU {ncpus} is beyond this machine's CPUs (0-{})",
            ncpus - 1
        )));
    assert!(entries(dir.path()).is_empty(), "nothing was created");
}

/// What bench/c2c_plugin.c counted in one program run under QEMU's
/// user-mode emulator: cache-line transfers between threads (hitm) and
/// invalidations of other threads' copies (inval), the functions that
/// caused the most, and the lines the plugin had no room to follow.
struct Shared {
    events: u64,
    untracked: u64,
    sites: Vec<String>,
}

/// Runs `program args` under qemu-x86_64 with the plugin built at
/// `plugin`, the plugin writing to `out`; returns what it counted and
/// the program's standard output.
fn emulated(
    plugin: &std::path::Path,
    out: &std::path::Path,
    program: &std::path::Path,
    args: &[&str],
) -> (Shared, Vec<u8>) {
    let run = Proc::new("qemu-x86_64")
        .arg("-plugin")
        .arg(format!("{},out={}", plugin.display(), out.display()))
        .arg(program)
        .args(args)
        .env("IOLAB_DB", test_db())
        .output()
        .expect("start qemu-x86_64");
    assert!(
        run.status.success(),
        "{} under emulation: {}",
        program.display(),
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(out).expect("the plugin's counts");
    let field = |words: &[&str], name: &str| -> u64 {
        words
            .iter()
            .position(|w| *w == name)
            .and_then(|i| words.get(i + 1)?.parse().ok())
            .unwrap_or_else(|| panic!("no count `{name}` in the plugin's line {words:?}"))
    };
    let mut lines = text.lines();
    let total: Vec<&str> = lines
        .next()
        .expect("the plugin's total line")
        .split_whitespace()
        .collect();
    let shared = Shared {
        events: field(&total, "hitm") + field(&total, "inval"),
        untracked: field(&total, "lines_untracked"),
        sites: lines.take(5).map(str::to_string).collect(),
    };
    (shared, run.stdout)
}

/// Goal: nothing on the hot path writes a cache line another clone's
/// thread uses (each clone's statistics are its own, merged after the
/// threads are joined; its progress counters have lines of their own).
/// This VM has no hardware memory events for `perf c2c`, so the lines are
/// followed in emulation: iolab runs two clones for N and then 5N I/Os
/// each, and what the plugin counts must not grow with the I/Os (setup and
/// the merge at the end share lines once per run). A control program whose
/// two threads increment counters on one line shows that the plugin sees
/// sharing when there is some.
#[test]
fn clones_share_no_cache_line_per_io() {
    iolab_testkit::require!(tool = "qemu-x86_64", tool = "cc");
    let dir = iolab_testkit::dir();
    let bench = common::bench_dir();
    let plugin = dir.join("c2c_plugin.so");
    cc(&[
        "-O2".as_ref(),
        "-shared".as_ref(),
        "-fPIC".as_ref(),
        "-o".as_ref(),
        plugin.as_os_str(),
        bench.join("c2c_plugin.c").as_os_str(),
    ]);
    let out = dir.join("c2c.txt");

    // The control: two threads take turns, 20,000 each, incrementing
    // counters that share a line with the turn itself, so that the line
    // moves between them at every turn however they are scheduled.
    let src = dir.join("false_sharing.c");
    std::fs::write(
        &src,
        "#include <pthread.h>\n\
         #include <sched.h>\n\
         static struct { volatile long turn, n[2]; } s;\n\
         static void *w(void *p) { long me = (long)p;\n\
         for (int i = 0; i < 20000; i++) { while (s.turn != me) sched_yield(); s.n[me]++; s.turn = !me; }\n\
         return 0; }\n\
         int main(void) { pthread_t x, y; pthread_create(&x, 0, w, (void *)0L);\n\
         pthread_create(&y, 0, w, (void *)1L); pthread_join(x, 0); pthread_join(y, 0); return 0; }\n",
    )
    .unwrap();
    let control = dir.join("false_sharing");
    cc(&[
        "-O2".as_ref(),
        "-pthread".as_ref(),
        "-o".as_ref(),
        control.as_os_str(),
        src.as_os_str(),
    ]);
    let (seen, _) = emulated(&plugin, &out, &control, &[]);
    assert!(
        seen.events >= 40_000,
        "the plugin saw {} events for 40,000 turns on one shared line",
        seen.events
    );

    let file = dir.join("data");
    std::fs::write(&file, vec![7u8; 16 << 20]).unwrap();
    let filename = format!("--filename={}", file.display());
    let iolab_bin = assert_cmd::cargo::cargo_bin("iolab");
    for (job, extra) in [("null", "--size=1g"), ("psync", filename.as_str())] {
        let mut counts = Vec::new();
        for per_clone in [20_000u64, 100_000] {
            let ios = format!("--io_size={}", per_clone * 4096);
            let engine = format!("--ioengine={job}");
            let args = [
                "run",
                "--no-store",
                "--output-format=json",
                "--name=c",
                &engine,
                "--rw=randread",
                "--bs=4k",
                "--numjobs=2",
                "--invalidate=0",
                extra,
                &ios,
            ];
            let (seen, stdout) = emulated(&plugin, &out, &iolab_bin, &args);
            let report = json_of(&stdout);
            let done: u64 = report["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j["read"]["total_ios"].as_u64().unwrap())
                .sum();
            assert_eq!(done, 2 * per_clone, "{job}: I/Os done");
            assert_eq!(seen.untracked, 0, "{job}: every line was followed");
            counts.push((done, seen));
        }
        let (small, large) = (&counts[0], &counts[1]);
        let grown = large.1.events.saturating_sub(small.1.events) as f64;
        let per_io = grown / (large.0 - small.0) as f64;
        assert!(
            per_io < 0.01,
            "{job}: {per_io:.3} shared-line events per I/O ({} at {} I/Os, {} at {}); \
             most at {} I/Os: {:?}",
            small.1.events,
            small.0,
            large.1.events,
            large.0,
            large.0,
            large.1.sites
        );
    }
}
