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
