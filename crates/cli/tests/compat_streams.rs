//! iolab draws the same random streams as fio 3.33: for the same job and
//! seeds, the sequence of pread/pwrite calls (direction, size, offset) on
//! the job's file, as strace records it, is the same in both tools. Each
//! job runs with psync on a file in a tmpfs (/dev/shm), once under fio
//! and once under iolab. And the verify headers are fio's: data one tool
//! writes with verify verifies with the other.

mod common;
use common::*;
use iolab_testkit::require;

use std::path::Path;
use std::process::Command as Proc;

/// One I/O call: ("pread64" or "pwrite64", size, offset).
type Call = (String, u64, u64);

/// The pread64/pwrite64 calls on `file` in an strace log written with
/// `-y -s 0`: ("pread64" or "pwrite64", size, offset) in call order.
fn io_calls(trace: &str, file: &Path) -> Vec<Call> {
    let tag = format!("<{}>,", file.display());
    trace
        .lines()
        .filter_map(|line| {
            let at = line.find("pread64(").or_else(|| line.find("pwrite64("))?;
            let call = &line[at..];
            let (name, args) = call.split_once('(')?;
            if !args.contains(&tag) {
                return None;
            }
            let args = args.split(')').next()?;
            let mut fields = args.rsplit(", ");
            let offset = fields.next()?.trim().parse().ok()?;
            let size = fields.next()?.trim().parse().ok()?;
            Some((name.to_string(), size, offset))
        })
        .collect()
}

/// Runs `prog args` under strace in `dir`; the calls on `file`.
fn traced(dir: &Path, file: &Path, prog: &Path, args: &[String]) -> Vec<Call> {
    let _ = std::fs::remove_file(file);
    let log = dir.join("strace.log");
    let out = Proc::new("strace")
        .args(["-f", "-y", "-s", "0", "-e", "trace=pread64,pwrite64"])
        .args(["-e", "signal=none", "-o"])
        .arg(&log)
        .arg(prog)
        .args(args)
        .env("IOLAB_DB", test_db())
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} {args:?}: {}",
        prog.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = io_calls(&std::fs::read_to_string(&log).unwrap(), file);
    let _ = std::fs::remove_file(file);
    calls
}

/// A directory on a tmpfs when the machine has /dev/shm, else a plain
/// temporary directory.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().unwrap()
}

/// The I/O calls of fio and of iolab for the same job options (given as
/// `--name=value` flags after the file and engine), in that order.
fn both(opts: &[&str]) -> (Vec<Call>, Vec<Call>) {
    both_named("data", opts)
}

/// `both` on a file of the given name.
fn both_named(name: &str, opts: &[&str]) -> (Vec<Call>, Vec<Call>) {
    let dir = scratch();
    let file = dir.path().join(name);
    let mut args = vec![
        "--name=j".to_string(),
        format!("--filename={}", file.display()),
        "--ioengine=psync".to_string(),
    ];
    args.extend(opts.iter().map(|s| s.to_string()));
    let fio = which("fio");
    let from_fio = traced(dir.path(), &file, &fio, &args);
    let mut iolab_args = vec!["run".to_string(), "--no-store".to_string()];
    iolab_args.extend(args);
    let iolab = assert_cmd::cargo::cargo_bin("iolab");
    let from_iolab = traced(dir.path(), &file, &iolab, &iolab_args);
    (from_fio, from_iolab)
}

fn which(prog: &str) -> std::path::PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(prog))
                .find(|c| c.is_file())
        })
        .unwrap_or_else(|| prog.into())
}

/// Asserts the two sequences are the same, naming the first difference.
fn assert_same(what: &str, fio: &[Call], iolab: &[Call]) {
    assert!(!fio.is_empty(), "{what}: fio made no calls on the file");
    if let Some(i) = (0..fio.len().min(iolab.len())).find(|&i| fio[i] != iolab[i]) {
        panic!(
            "{what}: call {i} differs: fio {:?}, iolab {:?} ({} and {} calls)",
            fio[i],
            iolab[i],
            fio.len(),
            iolab.len()
        );
    }
    assert_eq!(fio.len(), iolab.len(), "{what}: number of calls");
    println!("{what}: {} identical calls", fio.len());
}

fn check(what: &str, opts: &[&str]) {
    let (f, i) = both(opts);
    assert_same(what, &f, &i);
}

#[test]
fn randrw_bssplit_offsets_sizes_and_directions_are_fios() {
    require!(fio, strace);
    let job = ["--rw=randrw", "--size=8m", "--bssplit=4k/50:64k/30:16k/20"];
    // randrepeat=1, the default seeds.
    check("randrw bssplit, default seeds", &job);
    // An explicit seed: the sizes and directions follow it, the offsets
    // keep fio's repeatable seed.
    check(
        "randrw bssplit, randseed=1234",
        &[&job[..], &["--randseed=1234"]].concat(),
    );
    // Without randrepeat, the seed decides everything.
    check(
        "randrw bssplit, randrepeat=0 randseed=99",
        &[&job[..], &["--randrepeat=0", "--randseed=99"]].concat(),
    );
}

#[test]
fn random_writes_with_a_split_cover_the_file_as_fio_does() {
    require!(fio, strace);
    // fio's random map cuts I/Os to the free blocks they start: 797 I/Os
    // of 16 MiB in both tools, in the same order.
    check(
        "randwrite bssplit=4k/50:64k/50",
        &["--rw=randwrite", "--size=16m", "--bssplit=4k/50:64k/50"],
    );
    check(
        "randwrite bsrange=4k-64k",
        &["--rw=randwrite", "--size=8m", "--bsrange=4k-64k"],
    );
    check(
        "sequential write bssplit",
        &["--rw=write", "--size=8m", "--bssplit=4k/50:64k/30:16k/20"],
    );
}

#[test]
fn rwmixread_directions_are_fios() {
    require!(fio, strace);
    check(
        "randrw rwmixread=70",
        &["--rw=randrw", "--rwmixread=70", "--size=8m", "--bs=4k"],
    );
    check(
        "rw rwmixread=30",
        &["--rw=rw", "--rwmixread=30", "--size=4m", "--bs=4k"],
    );
}

#[test]
fn uniform_offsets_without_the_map_and_with_other_generators_are_fios() {
    require!(fio, strace);
    check(
        "randread norandommap",
        &["--rw=randread", "--size=8m", "--bs=4k", "--norandommap"],
    );
    check(
        "randrw tausworthe64",
        &[
            "--rw=randrw",
            "--size=8m",
            "--bs=4k",
            "--random_generator=tausworthe64",
        ],
    );
    check(
        "randread allrandrepeat",
        &["--rw=randread", "--size=8m", "--bs=4k", "--allrandrepeat=1"],
    );
}

#[test]
fn zoned_offsets_are_fios() {
    require!(fio, strace);
    check(
        "randread zoned",
        &[
            "--rw=randread",
            "--size=8m",
            "--bs=4k",
            "--random_distribution=zoned:60/10:30/20:10/70",
        ],
    );
}

#[test]
fn zipf_pareto_and_normal_offsets_with_a_seed_are_fios() {
    require!(fio, strace);
    // With randseed given, fio seeds each file's generator with the
    // clone's offset seed.
    for dist in ["zipf:1.2", "pareto:0.9", "normal:50", "zipf:1.1:0.3"] {
        let d = format!("--random_distribution={dist}");
        check(
            &format!("randread {dist} randseed=1234"),
            &[
                "--rw=randread",
                "--size=1m",
                "--bs=4k",
                &d,
                "--randseed=1234",
            ],
        );
    }
    check(
        "randrw pareto randrepeat=0 randseed=7",
        &[
            "--rw=randrw",
            "--size=1m",
            "--bs=4k",
            "--random_distribution=pareto:0.9",
            "--randrepeat=0",
            "--randseed=7",
        ],
    );
}

#[test]
fn zipf_pareto_and_normal_offsets_seeded_by_the_file_name_are_fios() {
    require!(fio, strace);
    // Without randseed, fio seeds each file's generator with its jhash of
    // the file's name times the thread number: two names, two sequences,
    // each fio's; and a second clone (thread 2) of the same job.
    for name in ["f", "another-file.dat"] {
        for dist in ["zipf:1.2", "pareto:0.9", "normal:50"] {
            let d = format!("--random_distribution={dist}");
            let (fio, iolab) = both_named(name, &["--rw=randread", "--size=1m", "--bs=4k", &d]);
            assert_same(&format!("randread {dist} in `{name}`"), &fio, &iolab);
        }
    }
    // Two clones at once, each traced apart: each clone's sequence is
    // fio's (thread 1's seed and thread 2's, twice it).
    let dir = scratch();
    let file = dir.path().join("g");
    let args: Vec<String> = [
        "--name=j",
        &format!("--filename={}", file.display()),
        "--ioengine=psync",
        "--rw=randread",
        "--size=512k",
        "--bs=4k",
        "--random_distribution=zipf:1.1",
        "--numjobs=2",
    ]
    .map(str::to_string)
    .to_vec();
    let fio = traced_apart(dir.path(), &file, &which("fio"), &args);
    let iolab_args = [vec!["run".to_string(), "--no-store".to_string()], args].concat();
    let iolab = assert_cmd::cargo::cargo_bin("iolab");
    let iolab = traced_apart(dir.path(), &file, &iolab, &iolab_args);
    assert_eq!(fio.len(), 2, "fio's clones: {fio:?}");
    assert_eq!(iolab.len(), 2, "iolab's clones");
    for (f, i) in fio.iter().zip(&iolab) {
        assert_same("zipf numjobs=2, one clone", f, i);
    }
}

/// `traced` with each thread or process traced into a file of its own
/// (`strace -ff`): the call sequences of those that made calls on
/// `file`, sorted.
fn traced_apart(dir: &Path, file: &Path, prog: &Path, args: &[String]) -> Vec<Vec<Call>> {
    let _ = std::fs::remove_file(file);
    let logs = dir.join("apart");
    std::fs::create_dir_all(&logs).unwrap();
    let out = Proc::new("strace")
        .args(["-ff", "-y", "-s", "0", "-e", "trace=pread64,pwrite64"])
        .args(["-e", "signal=none", "-o"])
        .arg(logs.join("t"))
        .arg(prog)
        .args(args)
        .env("IOLAB_DB", test_db())
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut seqs: Vec<Vec<Call>> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| io_calls(&std::fs::read_to_string(e.unwrap().path()).unwrap(), file))
        .filter(|c| !c.is_empty())
        .collect();
    seqs.sort();
    std::fs::remove_dir_all(&logs).unwrap();
    let _ = std::fs::remove_file(file);
    seqs
}

#[test]
fn directions_with_their_own_block_sizes_draw_as_fios() {
    require!(fio, strace);
    // fio draws each direction's random blocks in its own block size and
    // marks its one random map from the offset in that size, and a block
    // past the region's end ends the job.
    check(
        "randrw bs=4k,8k",
        &["--rw=randrw", "--size=256k", "--bs=4k,8k"],
    );
    check(
        "randrw bs=8k,4k rwmixread=30",
        &["--rw=randrw", "--size=1m", "--bs=8k,4k", "--rwmixread=30"],
    );
    check(
        "randrw bs=4k,16k norandommap",
        &["--rw=randrw", "--size=1m", "--bs=4k,16k", "--norandommap"],
    );
    // zoned_abs zones in each direction's own blocks; zipf ranks of the
    // smaller size, which the larger one soon takes past the end.
    check(
        "randrw bs=4k,8k zoned_abs",
        &[
            "--rw=randrw",
            "--size=1m",
            "--bs=4k,8k",
            "--random_distribution=zoned_abs:60/512k:40/512k",
        ],
    );
    check(
        "randrw bs=4k,8k zipf",
        &[
            "--rw=randrw",
            "--size=1m",
            "--bs=4k,8k",
            "--random_distribution=zipf:1.2",
        ],
    );
}

#[test]
fn lfsr_offsets_are_fios() {
    require!(fio, strace);
    check(
        "randread lfsr",
        &[
            "--rw=randread",
            "--size=4m",
            "--bs=4k",
            "--random_generator=lfsr",
        ],
    );
    // Each loop starts the register over from the seed (single steps).
    check(
        "randwrite lfsr, loops=2 randrepeat=0 randseed=3",
        &[
            "--rw=randwrite",
            "--size=256k",
            "--bs=4k",
            "--random_generator=lfsr",
            "--loops=2",
            "--randrepeat=0",
            "--randseed=3",
        ],
    );
}

#[test]
fn sequential_runs_between_random_offsets_are_fios() {
    require!(fio, strace);
    check("randread:4", &["--rw=randread:4", "--size=4m", "--bs=4k"]);
    check(
        "randrw:5 bssplit",
        &["--rw=randrw:5", "--size=4m", "--bssplit=4k/50:16k/50"],
    );
    check(
        "randread percentage_random=50",
        &[
            "--rw=randread",
            "--size=4m",
            "--bs=4k",
            "--percentage_random=50",
        ],
    );
    check(
        "randrw percentage_random=30 randread:3",
        &[
            "--rw=randrw:3",
            "--size=4m",
            "--bs=4k",
            "--percentage_random=30",
        ],
    );
}

#[test]
fn loops_draw_as_fios_do() {
    require!(fio, strace);
    let job = [
        "--rw=randrw",
        "--size=512k",
        "--bssplit=4k/50:16k/50",
        "--loops=3",
    ];
    // randrepeat=1: every loop starts the streams over.
    check("randrw bssplit loops=3", &job);
    // Without it the streams go on, after the draw fio spends on the
    // full random map at each loop's end.
    check(
        "randrw bssplit loops=3 randrepeat=0 randseed=5",
        &[&job[..], &["--randrepeat=0", "--randseed=5"]].concat(),
    );
    check(
        "randread norandommap loops=3 randrepeat=0 randseed=5",
        &[
            "--rw=randread",
            "--size=256k",
            "--bs=4k",
            "--norandommap",
            "--loops=3",
            "--randrepeat=0",
            "--randseed=5",
        ],
    );
}

#[test]
fn loops_that_leave_the_files_undone_go_on_as_fios() {
    require!(fio, strace);
    // fio starts a loop afresh (streams seeded again, map cleared,
    // positions back) only when the last left its files done; otherwise
    // it goes on, and a map found full within starts its next run there.
    check(
        "randread percentage_random=50 loops=3",
        &[
            "--rw=randread",
            "--size=256k",
            "--bs=4k",
            "--percentage_random=50",
            "--loops=3",
        ],
    );
    check(
        "randrw bssplit percentage_random=30 loops=3",
        &[
            "--rw=randrw",
            "--size=256k",
            "--bssplit=4k/50:16k/50",
            "--percentage_random=30",
            "--loops=3",
        ],
    );
    check(
        "randread norandommap loops=2 (randrepeat=1)",
        &[
            "--rw=randread",
            "--size=64k",
            "--bs=4k",
            "--norandommap",
            "--loops=2",
        ],
    );
    check(
        "randread zipf loops=2",
        &[
            "--rw=randread",
            "--size=64k",
            "--bs=4k",
            "--random_distribution=zipf:1.2",
            "--loops=2",
        ],
    );
    check(
        "read io_size=40k loops=3",
        &[
            "--rw=read",
            "--size=128k",
            "--io_size=40k",
            "--bs=4k",
            "--loops=3",
        ],
    );
    // Sequential reads and writes: a loop ends with neither direction at
    // the end; the one that gets there first ends fio's run.
    check(
        "rw bsrange loops=3",
        &["--rw=rw", "--size=256k", "--bsrange=4k-16k", "--loops=3"],
    );
}

#[test]
fn sequential_gaps_end_each_loop_at_the_files_end_as_fios() {
    require!(fio, strace);
    // A gap reaches the file's end before `size` bytes: fio's file is done
    // there and its loop ends (22 reads of 4k in 256k with an 8k gap, 44
    // over two loops, where filling `size` would take 64 a loop).
    let seq = |rw: &str, extra: &[&str]| -> Vec<String> {
        let mut v = vec![format!("--rw={rw}"), "--size=256k".to_string()];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    for (what, args) in [
        ("read:8k loops=2", seq("read:8k", &["--bs=4k", "--loops=2"])),
        (
            "write:8k loops=2",
            seq("write:8k", &["--bs=4k", "--loops=2"]),
        ),
        // Both directions: the first at the end ends the run.
        ("rw:8k loops=2", seq("rw:8k", &["--bs=4k", "--loops=2"])),
        // A gap that jumps past the end from an I/O short of it wraps to
        // the start (not done): 64 reads; one whose next I/O would not
        // fit is done: 23.
        ("read:6k", seq("read:6k", &["--bs=4k"])),
        ("read:7k", seq("read:7k", &["--bs=4k"])),
        ("read:8k bsrange", seq("read:8k", &["--bsrange=4k-16k"])),
        // io_size: more runs while the bytes fall short of it, past loops.
        (
            "read:8k io_size=300k loops=2",
            seq("read:8k", &["--bs=4k", "--io_size=300k", "--loops=2"]),
        ),
        (
            "read:8k io_size=128k loops=2",
            seq("read:8k", &["--bs=4k", "--io_size=128k", "--loops=2"]),
        ),
        (
            "read:8k number_ios=40",
            seq("read:8k", &["--bs=4k", "--number_ios=40"]),
        ),
        // A region inside the file (`offset`): fio compares the position
        // in the region with the file's size, so a gap that lands between
        // the region's end and the file's is done (13 reads, not 32), and
        // one past the file's wraps to the region's offset counted again
        // from it.
        (
            "read:6k offset=64k",
            seq("read:6k", &["--bs=4k", "--offset=64k"]),
        ),
        (
            "read:20k offset=16k loops=2",
            seq("read:20k", &["--bs=4k", "--offset=16k", "--loops=2"]),
        ),
        (
            "rw:20k offset=16k loops=2",
            seq("rw:20k", &["--bs=4k", "--offset=16k", "--loops=2"]),
        ),
        (
            "read:100k offset=64k filesize=300k",
            seq(
                "read:100k",
                &["--bs=4k", "--offset=64k", "--filesize=300k", "--size=128k"],
            ),
        ),
    ] {
        let opts: Vec<&str> = args.iter().map(String::as_str).collect();
        check(what, &opts);
    }
}

/// The I/O calls of fio and of iolab for a job of several files in a
/// directory (`--directory`, `--nrfiles` among `opts`): each call with
/// its file's name first.
fn both_files(opts: &[&str]) -> (Vec<Call>, Vec<Call>) {
    let dir = scratch();
    let mut args = vec![
        "--name=j".to_string(),
        format!("--directory={}", dir.path().display()),
        "--ioengine=psync".to_string(),
    ];
    args.extend(opts.iter().map(|s| s.to_string()));
    let run = |prog: &Path, args: &[String]| -> Vec<Call> {
        let log = dir.path().join("strace.log");
        let out = Proc::new("strace")
            .args(["-f", "-y", "-s", "0", "-e", "trace=pread64,pwrite64"])
            .args(["-e", "signal=none", "-o"])
            .arg(&log)
            .arg(prog)
            .args(args)
            .env("IOLAB_DB", test_db())
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let trace = std::fs::read_to_string(&log).unwrap();
        let calls = (0..16)
            .map(|i| dir.path().join(format!("j.0.{i}")))
            .flat_map(|f| {
                io_calls(&trace, &f)
                    .into_iter()
                    .map(move |c| (c, f.clone()))
            })
            .collect::<Vec<_>>();
        // Back in call order: the log's lines, each call on one of the files.
        let mut ordered = Vec::new();
        for line in trace.lines() {
            if let Some(((name, size, offset), f)) = calls.iter().find(|((n, sz, off), f)| {
                line.contains(&format!("<{}>,", f.display()))
                    && line.contains(&format!("{n}("))
                    && line.contains(&format!(", {sz}, {off})"))
            }) {
                let file = f.file_name().unwrap().to_string_lossy().into_owned();
                ordered.push((format!("{file} {name}"), *size, *offset));
            }
        }
        for i in 0..16 {
            let _ = std::fs::remove_file(dir.path().join(format!("j.0.{i}")));
        }
        ordered
    };
    let from_fio = run(&which("fio"), &args);
    let mut iolab_args = vec!["run".to_string(), "--no-store".to_string()];
    iolab_args.extend(args);
    let from_iolab = run(&assert_cmd::cargo::cargo_bin("iolab"), &iolab_args);
    (from_fio, from_iolab)
}

#[test]
fn random_file_choice_is_fios() {
    require!(fio, strace);
    // fio draws each I/O's file from its own stream (next_file_state,
    // seeded as its others), draws again on a file it knows is done, and
    // spends a direction and an offset draw on one it finds done.
    let job = [
        "--nrfiles=4",
        "--file_service_type=random",
        "--size=256k",
        "--bs=4k",
    ];
    for (what, extra) in [
        ("randread", &["--rw=randread"][..]),
        ("read", &["--rw=read"][..]),
        ("randrw", &["--rw=randrw"][..]),
        ("randread loops=3", &["--rw=randread", "--loops=3"][..]),
        (
            "randrw loops=3 randrepeat=0 randseed=5",
            &["--rw=randrw", "--loops=3", "--randrepeat=0", "--randseed=5"][..],
        ),
        (
            "randwrite bssplit tausworthe64",
            &[
                "--rw=randwrite",
                "--bssplit=4k/50:16k/50",
                "--random_generator=tausworthe64",
            ][..],
        ),
        // openfiles below nrfiles: fio opens the file a draw falls on
        // while fewer are open, and spends the draw otherwise.
        ("read openfiles=2", &["--rw=read", "--openfiles=2"][..]),
        (
            "randrw openfiles=2 loops=2",
            &["--rw=randrw", "--openfiles=2", "--loops=2"][..],
        ),
        (
            "read nrfiles=5 openfiles=3",
            &["--rw=read", "--nrfiles=5", "--openfiles=3"][..],
        ),
        (
            "randread openfiles=1",
            &["--rw=randread", "--openfiles=1"][..],
        ),
    ] {
        let (f, i) = both_files(&[&job[..], extra].concat());
        assert_same(&format!("file_service_type=random {what}"), &f, &i);
    }
}

/// The reads and writes on the files of `dir` in an strace log written
/// with `-y` (pread64/pwrite64 calls, and with `aio` the iocbs that
/// `io_submit` calls carry), in call order: ("FILE pread64" or
/// "FILE pwrite64", size, offset), FILE the file's name.
fn calls_in(trace: &str, dir: &Path, aio: bool) -> Vec<Call> {
    let field = |cb: &str, key: &str| -> Option<String> {
        let at = cb.find(key)? + key.len();
        let rest = &cb[at..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        Some(rest[..end].trim().to_string())
    };
    let name_in = |fd: &str| -> Option<String> {
        let path = Path::new(fd.split_once('<')?.1.split('>').next()?);
        (path.parent() == Some(dir))
            .then(|| path.file_name().unwrap().to_string_lossy().into_owned())
    };
    let mut calls = Vec::new();
    for line in trace.lines() {
        if aio {
            if !line.contains("io_submit(") {
                continue;
            }
            for cb in line.split("{aio_data").skip(1) {
                let op = if cb.contains("IOCB_CMD_PREAD") {
                    "pread64"
                } else if cb.contains("IOCB_CMD_PWRITE") {
                    "pwrite64"
                } else {
                    continue;
                };
                let Some(file) = field(cb, "aio_fildes=").and_then(|fd| name_in(&fd)) else {
                    continue;
                };
                let size = field(cb, "aio_nbytes=").and_then(|v| v.parse().ok());
                let offset = field(cb, "aio_offset=").and_then(|v| v.parse().ok());
                if let (Some(size), Some(offset)) = (size, offset) {
                    calls.push((format!("{file} {op}"), size, offset));
                }
            }
            continue;
        }
        let Some(at) = line.find("pread64(").or_else(|| line.find("pwrite64(")) else {
            continue;
        };
        let Some((op, args)) = line[at..].split_once('(') else {
            continue;
        };
        let Some(file) = name_in(args) else {
            continue;
        };
        let Some(args) = args.split(')').next() else {
            continue;
        };
        let mut fields = args.rsplit(", ");
        let offset = fields.next().and_then(|v| v.trim().parse().ok());
        let size = fields.next().and_then(|v| v.trim().parse().ok());
        if let (Some(size), Some(offset)) = (size, offset) {
            calls.push((format!("{file} {op}"), size, offset));
        }
    }
    calls
}

/// One run of fio and one of iolab with the jobs `jobs` (each a name and
/// its options, after the options `common`), all at once on files in
/// a directory of their own per tool; strace follows each process and
/// thread into its own log (`-ff`), so that each job's calls keep their
/// order. For each job: its name, fio's calls and iolab's (see `calls_in`),
/// its files' names starting with the job's.
fn both_jobs(
    common: &[&str],
    jobs: &[(String, Vec<String>)],
    aio: bool,
) -> Vec<(String, Vec<Call>, Vec<Call>)> {
    let run = |prog: &Path, first: &[&str]| -> Vec<Call> {
        let dir = scratch();
        let logs = scratch();
        let mut args: Vec<String> = first.iter().map(|s| s.to_string()).collect();
        args.push(format!("--directory={}", dir.path().display()));
        args.push("--ioengine=psync".to_string());
        args.extend(common.iter().map(|s| s.to_string()));
        for (name, opts) in jobs {
            args.push(format!("--name={name}"));
            args.extend(opts.iter().cloned());
        }
        let traced = if aio {
            "trace=io_submit"
        } else {
            "trace=pread64,pwrite64"
        };
        let out = Proc::new("strace")
            .args([
                "-ff",
                "-v",
                "-y",
                "-s",
                "0",
                "-e",
                traced,
                "-e",
                "signal=none",
                "-o",
            ])
            .arg(logs.path().join("t"))
            .arg(prog)
            .args(&args)
            .env("IOLAB_DB", test_db())
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_dir(logs.path())
            .unwrap()
            .flat_map(|e| {
                let trace = std::fs::read_to_string(e.unwrap().path()).unwrap();
                calls_in(&trace, dir.path(), aio)
            })
            .collect()
    };
    let from_fio = run(&which("fio"), &[]);
    let from_iolab = run(
        &assert_cmd::cargo::cargo_bin("iolab"),
        &["run", "--no-store"],
    );
    let of = |calls: &[Call], job: &str| -> Vec<Call> {
        let prefix = format!("{job}.");
        calls
            .iter()
            .filter(|c| c.0.starts_with(&prefix))
            .cloned()
            .collect()
    };
    jobs.iter()
        .map(|(name, _)| (name.clone(), of(&from_fio, name), of(&from_iolab, name)))
        .collect()
}

#[test]
fn random_file_choice_under_openfiles_with_a_deep_queue_is_fios() {
    require!(fio, strace);
    // libaio, iodepth above 1, openfiles below nrfiles: fio finds a file
    // done when a draw of its offset finds none left, closes it once its
    // I/Os in flight complete (it counts among the open files until
    // then), and on a draw of a file it has no room to open while I/Os
    // are in flight it reaps before it draws again. The I/O compared is
    // what io_submit carries, in submission order.
    let job = |extra: &[&str]| -> Vec<String> {
        ["--file_service_type=random", "--nrfiles=4", "--openfiles=2"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    let jobs = [
        ("randread", job(&["--rw=randread"])),
        ("randrw", job(&["--rw=randrw"])),
        ("read", job(&["--rw=read"])),
        ("randwrite", job(&["--rw=randwrite", "--iodepth=2"])),
        ("randrw-loops", job(&["--rw=randrw", "--loops=2"])),
        (
            "randread-5-3-qd8",
            job(&[
                "--rw=randread",
                "--nrfiles=5",
                "--openfiles=3",
                "--iodepth=8",
            ]),
        ),
        (
            "zipf",
            vec![
                "--file_service_type=zipf".to_string(),
                "--nrfiles=4".to_string(),
                "--openfiles=2".to_string(),
                "--rw=randread".to_string(),
            ],
        ),
    ]
    .map(|(n, o)| (n.to_string(), o));
    let common = ["--size=256k", "--bs=4k", "--ioengine=libaio", "--iodepth=4"];
    for (job, f, i) in both_jobs(&common, &jobs, true) {
        assert_same(&format!("libaio openfiles {job}"), &f, &i);
    }
}

#[test]
fn skewed_file_choice_is_fios() {
    require!(fio, strace);
    // file_service_type=zipf/pareto/normal: fio draws the file from its
    // skewed generator over nrfiles << 10 ranges, ranks unhashed, seeded
    // from the clone's file-choice seed; a file whose random map fills is
    // reset (a draw spent, the map cleared, a draw again) and stays in
    // service, so only the job's bytes end it. All jobs run at once, each
    // a thread of its own number (and so its own seeds) in both tools.
    let mut jobs = Vec::new();
    for service in [
        "zipf",
        "zipf:1.5",
        "pareto",
        "pareto:0.4",
        "normal",
        "gauss:20",
    ] {
        for nrfiles in ["4", "8"] {
            for rw in ["randread", "randrw"] {
                let opts = vec![
                    format!("--file_service_type={service}"),
                    format!("--nrfiles={nrfiles}"),
                    format!("--rw={rw}"),
                ];
                jobs.push((format!("{service}-{nrfiles}-{rw}").replace(':', "_"), opts));
            }
        }
    }
    let zipf = |extra: &[&str]| -> Vec<String> {
        ["--file_service_type=zipf:1.2", "--nrfiles=4"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    jobs.push(("zipf-read".to_string(), zipf(&["--rw=read"])));
    jobs.push(("zipf-rw".to_string(), zipf(&["--rw=rw"])));
    jobs.push((
        "zipf-randrw-loops".to_string(),
        zipf(&["--rw=randrw", "--loops=2"]),
    ));
    jobs.push((
        "zipf-seeded-bssplit".to_string(),
        zipf(&[
            "--rw=randread",
            "--randrepeat=0",
            "--randseed=7",
            "--bssplit=4k/50:16k/50",
        ]),
    ));
    jobs.push((
        "zipf-openfiles".to_string(),
        zipf(&["--rw=randread", "--openfiles=2"]),
    ));
    // A center after the value: the rotation, as fio's (normal's below
    // 0.5 wraps through 64 bits, as fio's conversion does).
    for (name, service) in [
        ("zipf-center", "zipf:1.2:0.3"),
        ("pareto-center", "pareto:0.3:0.7"),
        ("normal-center", "normal:10:0.2"),
    ] {
        let opts = [
            format!("--file_service_type={service}"),
            "--nrfiles=5".to_string(),
            "--rw=randrw".to_string(),
        ];
        jobs.push((name.to_string(), opts.to_vec()));
    }
    // The same rotation for offsets, over 65 ranges (not a power of two);
    // seeded, as the file's name (another directory per tool) is not.
    jobs.push((
        "normal-center-offsets".to_string(),
        [
            "--random_distribution=normal:10:0.2",
            "--size=260k",
            "--rw=randread",
            "--randseed=3",
        ]
        .map(String::from)
        .to_vec(),
    ));
    for (job, f, i) in both_jobs(&["--size=256k", "--bs=4k"], &jobs, false) {
        assert_same(&format!("file_service_type {job}"), &f, &i);
    }
}

/// Runs one time_based job (`opts` over 64 blocks of 4 KiB) in each tool
/// and checks that the first `n` calls are the same: how many a runtime
/// brings depends on the machine, the order of the first does not.
fn first_calls_are_fios(name: &str, opts: &[&str], n: usize) {
    let jobs = [(
        name.to_string(),
        opts.iter().map(|s| s.to_string()).collect(),
    )];
    for (job, mut f, mut i) in both_jobs(&["--size=256k", "--bs=4k"], &jobs, false) {
        assert!(
            f.len() >= n && i.len() >= n,
            "{job}: fio made {} calls, iolab {}",
            f.len(),
            i.len()
        );
        f.truncate(n);
        i.truncate(n);
        assert_same(&format!("{job}, first calls"), &f, &i);
    }
}

/// A time_based job with a skewed file choice goes on past its files'
/// last blocks as fio's does (a file whose offsets run out is reset and
/// kept in service): the first 160 calls of each tool's 300 ms are the
/// same.
#[test]
fn skewed_file_choice_in_a_time_based_job_is_fios() {
    require!(fio, strace);
    first_calls_are_fios(
        "zipf-time-based",
        &[
            "--file_service_type=zipf:1.2",
            "--nrfiles=4",
            "--rw=randrw",
            "--time_based",
            "--runtime=300ms",
        ],
        160,
    );
}

/// `number_ios` in a time_based job ends each of fio's runs, and the
/// next starts until the runtime is over: the first 160 calls (runs of
/// 10 reads and writes, the random map going on from run to run) are
/// the same.
#[test]
fn number_ios_runs_again_in_a_time_based_job_as_fios() {
    require!(fio, strace);
    first_calls_are_fios(
        "number-ios-time-based",
        &[
            "--rw=randrw",
            "--time_based",
            "--runtime=300ms",
            "--number_ios=10",
        ],
        160,
    );
}

#[test]
fn sequential_reads_and_writes_over_several_files_are_fios() {
    require!(fio, strace);
    // rw=rw over several files: fio's file is done when the direction
    // drawn for it has reached its end (not when its bytes are), and its
    // round robin goes on from there in the next run.
    let job = ["--rw=rw", "--nrfiles=4", "--size=256k", "--bs=4k"];
    for (what, extra) in [
        ("loops=2", &["--loops=2"][..]),
        ("loops=3 rwmixread=30", &["--loops=3", "--rwmixread=30"][..]),
        ("bsrange loops=2", &["--loops=2", "--bsrange=4k-16k"][..]),
        (
            "roundrobin:3 loops=2",
            &["--loops=2", "--file_service_type=roundrobin:3"][..],
        ),
        (
            "random loops=2",
            &["--loops=2", "--file_service_type=random"][..],
        ),
        (
            "nrfiles=3 size=300k loops=2",
            &["--loops=2", "--nrfiles=3", "--size=300k"][..],
        ),
    ] {
        let (f, i) = both_files(&[&job[..], extra].concat());
        assert_same(&format!("rw over files {what}"), &f, &i);
    }
}

/// Runs `prog args` (fio, or iolab with `run --no-store` first), which must
/// exit with `want_ok`; its output.
fn run_tool(dir: &Path, prog: &str, args: &[String], want_ok: bool) -> String {
    let mut cmd = if prog == "fio" {
        Proc::new("fio")
    } else {
        let mut c = Proc::new(assert_cmd::cargo::cargo_bin("iolab"));
        c.args(["run", "--no-store"]).env("IOLAB_DB", test_db());
        c
    };
    // In the scratch directory: fio leaves its verify state files there.
    let out = cmd.args(args).current_dir(dir).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.success(), want_ok, "{prog} {args:?}: {text}");
    text
}

#[test]
fn verify_headers_written_by_either_tool_verify_with_the_other() {
    require!(fio);
    let dir = scratch();
    let file = dir.path().join("data");
    let base = |rw: &str, extra: &[&str]| {
        let mut v = vec![
            "--name=v".to_string(),
            format!("--filename={}", file.display()),
            format!("--rw={rw}"),
            "--bs=4k".to_string(),
            "--size=1m".to_string(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let methods: [&[&str]; 6] = [
        &["--verify=crc32c"],
        &["--verify=md5"],
        &["--verify=sha256"],
        &["--verify=xxhash"],
        &["--verify=meta"],
        &["--verify=pattern", "--verify_pattern=0xdeadbeef"],
    ];
    for m in methods {
        for (writer, reader) in [("fio", "iolab"), ("iolab", "fio")] {
            let _ = std::fs::remove_file(&file);
            let write = [m, &["--do_verify=0"]].concat();
            run_tool(dir.path(), writer, &base("randwrite", &write), true);
            run_tool(dir.path(), reader, &base("read", m), true);
            // verify_only: the writing job's own read-back.
            run_tool(
                dir.path(),
                reader,
                &base("randwrite", &[m, &["--verify_only"]].concat()),
                true,
            );
            // A damaged block fails in the reader: a data byte, or with
            // meta (no data checksum) a byte of the header's offset.
            let mut bytes = std::fs::read(&file).unwrap();
            let at = if m[0] == "--verify=meta" {
                4096 + 20
            } else {
                5000
            };
            bytes[at] ^= 0xff;
            std::fs::write(&file, &bytes).unwrap();
            run_tool(dir.path(), reader, &base("read", m), false);
            println!("{m:?}: {writer} writes, {reader} verifies");
        }
    }
}

#[test]
fn io_size_past_the_files_runs_again_as_fios() {
    require!(fio, strace);
    // fio's run ends where its files are done (a random map full, a
    // sequential pass at the end) also within a loop, and while io_size
    // is not done the next starts afresh: with randrepeat the streams
    // over from their seeds, the map cleared; io_size counts over the
    // loops. Single files take the synchronous fast path, the others
    // the general loop.
    let cases: [(&str, &[&str]); 8] = [
        (
            "randread",
            &["--rw=randread", "--bs=4k", "--size=64k", "--io_size=192k"],
        ),
        (
            "randwrite",
            &["--rw=randwrite", "--bs=4k", "--size=64k", "--io_size=200k"],
        ),
        (
            "randrw bssplit",
            &[
                "--rw=randrw",
                "--size=256k",
                "--bssplit=4k/50:16k/50",
                "--io_size=700k",
            ],
        ),
        (
            "randread loops=2",
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=64k",
                "--io_size=192k",
                "--loops=2",
            ],
        ),
        (
            "read",
            &["--rw=read", "--bs=4k", "--size=64k", "--io_size=192k"],
        ),
        (
            "rw bsrange",
            &[
                "--rw=rw",
                "--size=256k",
                "--bsrange=4k-16k",
                "--io_size=700k",
            ],
        ),
        (
            "randread nrfiles=2",
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=128k",
                "--io_size=300k",
                "--nrfiles=2",
            ],
        ),
        (
            "randread randrepeat=0",
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=64k",
                "--io_size=192k",
                "--randrepeat=0",
                "--randseed=5",
            ],
        ),
    ];
    for (what, opts) in cases {
        check(&format!("{what} io_size past size"), opts);
    }
    // Queued: libaio at depth 4, one file (the queued fast path) and two
    // (the general loop). With I/Os in flight as a run ends, fio drains
    // them before it decides on the next run: with io_size=72k and 16k
    // blocks, the 8k left after the first 64k end the job.
    let libaio = |opts: &[&str]| {
        let mut common = vec!["--ioengine=libaio", "--iodepth=4", "--rw=randread"];
        common.extend_from_slice(opts);
        let jobs = [("q".to_string(), Vec::new())];
        for (name, fio, iolab) in both_jobs(&common, &jobs, true) {
            assert_same(&format!("{name}: libaio {opts:?}"), &fio, &iolab);
        }
    };
    libaio(&["--bs=4k", "--size=64k", "--io_size=192k"]);
    libaio(&["--bssplit=4k/50:16k/50", "--size=64k", "--io_size=72k"]);
    libaio(&["--bssplit=4k/50:16k/50", "--size=64k", "--io_size=150k"]);
    libaio(&[
        "--bssplit=4k/50:16k/50",
        "--size=128k",
        "--io_size=150k",
        "--nrfiles=2",
    ]);
}

#[test]
fn io_size_is_fios_limit_as_given() {
    require!(fio, strace);
    // fio issues while fewer bytes than io_size have gone, so the last
    // I/O may pass it; io_size is not rounded to the block size; 0 and
    // 0% are not set (size's bytes); a percentage is of size's bytes.
    let cases: [(&str, &[&str]); 8] = [
        (
            "randread 4k",
            &["--rw=randread", "--bs=4k", "--size=256k", "--io_size=150k"],
        ),
        (
            "randread bssplit",
            &[
                "--rw=randread",
                "--bssplit=4k/50:16k/50",
                "--size=256k",
                "--io_size=150k",
            ],
        ),
        (
            "read past the file",
            &["--rw=read", "--bs=4k", "--size=128k", "--io_size=150k"],
        ),
        (
            "randrw bsrange",
            &[
                "--rw=randrw",
                "--bsrange=4k-16k",
                "--size=64k",
                "--io_size=150k",
            ],
        ),
        (
            "below a block",
            &["--rw=read", "--bs=4k", "--size=64k", "--io_size=2k"],
        ),
        (
            "zero",
            &["--rw=randread", "--bs=4k", "--size=64k", "--io_size=0"],
        ),
        (
            "zero percent",
            &["--rw=randread", "--bs=4k", "--size=64k", "--io_size=0%"],
        ),
        (
            "a tenth",
            &["--rw=read", "--bs=4k", "--size=64k", "--io_size=10%"],
        ),
    ];
    for (what, opts) in cases {
        check(&format!("{what} io_size"), opts);
    }
}

#[test]
fn an_io_size_percentage_below_a_block_is_refused_as_by_fio() {
    require!(fio);
    // 1% of 64 KiB is 655 bytes: fio refuses the job (a byte count below
    // a block, io_size=2k, is one read in both).
    let args: Vec<String> = [
        "--name=p",
        "--rw=read",
        "--bs=4k",
        "--size=64k",
        "--io_size=1%",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let fio = run_tool(scratch().path(), "fio", &args, false);
    assert!(
        fio.contains("blocksize is larger than data set range"),
        "{fio}"
    );
    let dir = scratch();
    let ours = run_tool(dir.path(), "iolab", &args, false);
    assert!(
        ours.contains("io_size=1% of 65536 bytes is 655 bytes, less than one block of 4096 bytes"),
        "{ours}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("the scratch directory")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert!(left.is_empty(), "iolab refused the job and left {left:?}");
}
