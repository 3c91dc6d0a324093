//! iolab draws the same random streams as fio 3.33: for the same job and
//! seeds, the sequence of pread/pwrite calls (direction, size, offset) on
//! the job's file, as strace records it, is the same in both tools. Each
//! job runs with psync on a file in a tmpfs (/dev/shm), once under fio
//! and once under iolab.

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
    let dir = scratch();
    let file = dir.path().join("data");
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
