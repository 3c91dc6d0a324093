//! `iolab run --parse-only` and `--cmdhelp` as a user runs them: exit codes,
//! what is printed, and that bad input creates nothing.

mod common;
use common::*;

use std::fs;

use predicates::prelude::*;

const JOB_A: &str = "[global]\ndirectory=/home/user/Downloads/\nsize=100MB\n[Read-Seq]\nrw=read\nstonewall\n[Read-Random]\nrw=randread\nstonewall\n[Write-Seq]\nrw=write\nstonewall\n[Write-Random]\nrw=randwrite\nstonewall\n";

#[test]
fn parse_only_prints_the_resolved_job_file() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("a.fio");
    fs::write(&job, JOB_A).unwrap();
    let out = iolab()
        .args(["run", "--parse-only"])
        .arg(&job)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.starts_with("; 4 job(s), 4 thread(s), 4 reporting group(s)\n"),
        "{text}"
    );
    for (i, name) in ["Read-Seq", "Read-Random", "Write-Seq", "Write-Random"]
        .iter()
        .enumerate()
    {
        let header = format!("[{name}]\n; reporting group {i}\n");
        assert!(text.contains(&header), "missing {header:?} in\n{text}");
    }
    // [global] is folded into each job.
    assert_eq!(text.matches("directory=/home/user/Downloads/\n").count(), 4);
    assert_eq!(text.matches("size=100m\n").count(), 4);

    // The printed text is itself a job file that resolves to the same jobs.
    let again = dir.path().join("again.fio");
    fs::write(&again, &text).unwrap();
    let second = iolab()
        .args(["run", "--parse-only"])
        .arg(&again)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(second).unwrap(), text);
}

#[test]
fn parse_only_command_line_with_single_dash_options() {
    iolab()
        .args([
            "run",
            "--parse-only",
            "-filename=./testtmp",
            "-direct=1",
            "-rw=randwrite",
            "-bs=4k",
            "-size=1000M",
            "-numjobs=16",
            "-runtime=20",
            "-group_reporting",
            "-name=file1",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "; 1 job(s), 16 thread(s), 1 reporting group(s)",
        ))
        .stdout(predicate::str::contains(
            "[file1]\n; reporting group 0; 16 clones: file1.0 .. file1.15\n",
        ))
        .stdout(predicate::str::contains("numjobs=16\n"))
        .stdout(predicate::str::contains("runtime=20s\n"))
        .stdout(predicate::str::contains("size=1000m\n"));
}

#[test]
fn parse_only_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("resolved.fio");
    iolab()
        .args(["run", "--parse-only", "--name=x", "--rw=write"])
        .arg(format!("--output={}", out.display()))
        .assert()
        .success()
        .stdout("");
    let text = fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("[x]\n") && text.contains("rw=write\n"),
        "{text}"
    );
}

#[test]
fn bad_job_file_exits_2_names_the_line_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("bad.fio");
    fs::write(
        &job,
        "[global]\ndirectory=.\nfilename=data.bin\n[w]\nrw=write\nbloksize=4k\n",
    )
    .unwrap();
    iolab()
        .current_dir(dir.path())
        .args(["run", "bad.fio"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "bad.fio:6: unknown option `bloksize` (did you mean `blocksize`?)",
        ));
    assert_eq!(entries(dir.path()), ["bad.fio"]);
}

#[test]
fn bad_command_line_values_exit_2_with_the_argument_named() {
    iolab()
        .args(["run", "--name=x", "--bs=4q"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "command line argument 2 `--bs=4q`",
        ));
    iolab()
        .args(["run", "--name=x", "--rwmixread=150"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("150 is out of range"));
    iolab()
        .args(["run", "--name=x", "--ioengine=rdma"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("iolab does not implement"));
    iolab()
        .args(["run", "--output-format=xml", "--name=x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown output format 'xml'"));
    iolab()
        .args(["run", "missing.fio"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "missing.fio: cannot read job file",
        ));
}

#[test]
fn cmdhelp_lists_all_options_and_describes_one() {
    iolab()
        .args(["run", "--cmdhelp"])
        .assert()
        .success()
        .stdout(predicate::str::contains("I/O type and block size:"))
        .stdout(predicate::str::contains("  bs "))
        .stdout(predicate::str::contains("  rwmixread "));
    iolab()
        .args(["run", "--cmdhelp=blocksize"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("bs: "))
        .stdout(predicate::str::contains("alias      blocksize"))
        .stdout(predicate::str::contains("default    4k"));
    iolab()
        .args(["run", "--cmdhelp=thread"])
        .assert()
        .success()
        .stdout(predicate::str::contains("effect     none:"));
    iolab()
        .args(["run", "--cmdhelp=bloksize"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `blocksize`?"));
}

#[test]
fn every_example_job_file_parses() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut seen = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("fio") {
            continue;
        }
        seen += 1;
        iolab()
            .args(["run", "--parse-only"])
            .arg(&path)
            .assert()
            .success()
            .stdout(predicate::str::contains("reporting group 0"))
            // Run where the user stands, an example removes what it laid
            // out (quick.fio from its last job, the others from each).
            .stdout(predicate::str::contains("unlink=1"));
    }
    assert!(seen >= 2, "examples/ holds the job files the README runs");
}
