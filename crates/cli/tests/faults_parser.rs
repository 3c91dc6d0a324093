//! `iolab run` with job text built to make a parser slow, hungry or noisy:
//! huge option names and values, files that are not regular or are too
//! large, deep includes, too many sections, values a job file cannot carry.
//! Each is refused with exit 2 and one short message that names the
//! problem, and leaves nothing behind: no file in the working directory, no
//! results database.

mod common;
use common::*;

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// Runs `iolab run ARGS` in `dir` with a results database of its own and
/// checks the refusal: exit 2, nothing on stdout, under 4 KiB on stderr,
/// nothing created in `dir` or at the database's path. Returns stderr.
fn refused<I, S>(dir: &Path, args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let db_dir = tempfile::tempdir().unwrap();
    let db = db_dir.path().join("results.db");
    let before = entries(dir);
    let out = iolab()
        .env("IOLAB_DB", &db)
        .current_dir(dir)
        .arg("run")
        .args(args.into_iter().map(Into::into))
        // Only to catch a hang: a refusal takes milliseconds.
        .timeout(Duration::from_secs(20))
        .output()
        .expect("iolab runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "stderr ({} bytes): {:.2000}",
        stderr.len(),
        stderr
    );
    assert!(
        out.stderr.len() < 4096,
        "{} bytes of stderr: {:.2000}",
        out.stderr.len(),
        stderr
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(entries(dir), before, "files were created");
    assert!(!db.exists(), "a results database was created");
    assert!(stderr.starts_with("iolab: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    std::fs::write(dir.join(name), text).unwrap();
    name.to_string()
}

#[test]
fn a_huge_unknown_option_on_the_command_line() {
    // 120 KiB: one argument of the command line is at most 128 KiB.
    let dir = tempfile::tempdir().unwrap();
    let name = "z".repeat(120 << 10);
    let e = refused(dir.path(), ["--name=x".to_string(), format!("--{name}=1")]);
    assert!(
        e.contains(&format!(
            "unknown option `{}... (122880 bytes)`",
            "z".repeat(64)
        )),
        "{e}"
    );
    assert!(!e.contains("did you mean"), "{e}");
    assert!(e.contains("command line argument 2 `--zzz"), "{e}");
}

#[test]
fn a_huge_value_on_the_command_line_is_shown_once_clipped() {
    let dir = tempfile::tempdir().unwrap();
    let value = "7".repeat(120 << 10);
    for opt in ["bs", "ioengine", "rw", "size"] {
        let e = refused(
            dir.path(),
            ["--name=x".to_string(), format!("--{opt}={value}")],
        );
        assert!(e.contains(&format!("`{opt}={}", "7".repeat(40))), "{e}");
        assert!(e.contains("bytes)`"), "{e}");
        assert!(e.len() < 1536, "{} bytes: {e}", e.len());
    }
}

#[test]
fn an_unknown_option_in_a_job_file_is_clipped() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "long.fio",
        &format!("[a]\n{}=1\n", "q".repeat(8000)),
    );
    let e = refused(dir.path(), [&job]);
    assert!(
        e.starts_with(&format!(
            "iolab: long.fio:2: unknown option `{}... (8000 bytes)`",
            "q".repeat(64)
        )),
        "{e}"
    );
}

#[test]
fn a_huge_line_name_value_or_section_in_a_job_file() {
    let dir = tempfile::tempdir().unwrap();
    let big = "n".repeat(10 << 20);
    for (file, text) in [
        ("name.fio", format!("[a]\n{big}=1\n")),
        ("value.fio", format!("[a]\nbs={big}\n")),
        ("section.fio", format!("[{big}]\nrw=read\n")),
    ] {
        let job = write(dir.path(), file, &text);
        let e = refused(dir.path(), [&job]);
        let line = if file == "section.fio" { 1 } else { 2 };
        assert!(
            e.starts_with(&format!("iolab: {file}:{line}: the line is ")),
            "{e}"
        );
        assert!(
            e.contains("fio reads job-file lines of at most 8190 bytes"),
            "{e}"
        );
    }
}

#[test]
fn includes_and_job_files_that_are_not_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    for (target, kind) in [
        ("/dev/zero", "a character device"),
        ("fifo", "a FIFO"),
        (".", "a directory"),
    ] {
        let job = write(
            dir.path(),
            "inc.fio",
            &format!("[a]\nrw=read\ninclude {target}\n"),
        );
        let e = refused(dir.path(), [&job]);
        assert!(
            e.contains("inc.fio:3: cannot read included job file `"),
            "{target}: {e}"
        );
        assert!(
            e.ends_with(&format!(
                "`: it is {kind}; job files must be regular files\n"
            )),
            "{target}: {e}"
        );
        let e = refused(dir.path(), [target]);
        assert_eq!(
            e,
            format!(
                "iolab: {target}: cannot read job file: it is {kind}; job files must be regular \
                 files\n"
            )
        );
    }
}

#[test]
fn a_job_file_over_16_mib() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::File::create(dir.path().join("big.fio"))
        .unwrap()
        .set_len(17 << 20)
        .unwrap();
    let e = refused(dir.path(), ["big.fio"]);
    assert_eq!(
        e,
        "iolab: big.fio: cannot read job file: it is 17825792 bytes; job files are limited to \
         16 MiB\n"
    );
    let job = write(dir.path(), "inc.fio", "[a]\ninclude big.fio\n");
    let e = refused(dir.path(), [&job]);
    assert!(
        e.contains("inc.fio:2: cannot read included job file `big.fio`: it is 17825792 bytes"),
        "{e}"
    );
}

#[test]
fn a_deep_include_chain() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..100 {
        write(
            dir.path(),
            &format!("{i}.fio"),
            &format!("include {}.fio\n", i + 1),
        );
    }
    let job = write(dir.path(), "main.fio", "[a]\nrw=read\ninclude 0.fio\n");
    let e = refused(dir.path(), [&job]);
    assert_eq!(
        e,
        "iolab: 15.fio:1: cannot read included job file `16.fio`: includes nest more than 16 deep\n"
    );
}

#[test]
fn a_million_sections() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(dir.path(), "many.fio", &"[a]\nrw=read\n".repeat(1_000_000));
    let e = refused(dir.path(), [&job]);
    assert_eq!(
        e,
        "iolab: many.fio:8193: more than 4096 sections: fio runs at most 4096 jobs\n"
    );
}

#[test]
fn a_deep_expression() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "deep.fio",
        &format!("[a]\nsize={}1{}\n", "(".repeat(4000), ")".repeat(4000)),
    );
    let e = refused(dir.path(), [&job]);
    assert!(e.starts_with("iolab: deep.fio:2: `size=((((("), "{e}");
    assert!(e.contains("nests more than 100 deep"), "{e}");
}

#[test]
fn values_a_job_file_cannot_carry_are_refused_not_printed() {
    let dir = tempfile::tempdir().unwrap();
    for (arg, why) in [
        ("--description=a;b", "`;`, which starts a comment"),
        ("--filename=x#y", "`#`, which starts a comment"),
        ("--directory=a\nb", "a line break"),
    ] {
        let e = refused(dir.path(), ["--parse-only", "--name=x", arg]);
        assert!(e.contains(why), "{arg:?}: {e}");
        assert!(e.contains("cannot carry it"), "{arg:?}: {e}");
    }
    let e = refused(dir.path(), ["--parse-only", "--name=a]b", "--rw=read"]);
    assert!(e.contains("job name `a]b` has a bracket"), "{e}");
}

#[test]
fn what_parse_only_prints_reads_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let first = iolab()
        .current_dir(dir.path())
        .args([
            "run",
            "--parse-only",
            "--name= job = 1 é ",
            "--description=say \"hi\" = 'there' $ {x} ",
            "--filename=a\\:b:c d",
            "--bs=4k",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(first).unwrap();
    assert!(text.contains("\n[job = 1 é]\n"), "{text}");
    assert!(
        text.contains("\ndescription=say \"hi\" = 'there' $ {x}\n"),
        "{text}"
    );
    std::fs::write(dir.path().join("again.fio"), &text).unwrap();
    let second = iolab()
        .current_dir(dir.path())
        .args(["run", "--parse-only", "again.fio"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(second).unwrap(), text);
}

#[test]
fn huge_values_of_run_flags_are_clipped() {
    let dir = tempfile::tempdir().unwrap();
    let big = "9".repeat(120 << 10);
    for flag in [
        format!("--repeat={big}x"),
        format!("--terse-version={big}"),
        format!("--output-format={big}"),
        format!("--eta={big}"),
        format!("--eta-interval={big}"),
        format!("--output=/nonexistent/{big}"),
        format!("--section={big}"),
        format!("--cmdhelp={big}"),
    ] {
        let e = refused(
            dir.path(),
            [
                "--name=x".to_string(),
                "--size=4k".to_string(),
                flag.clone(),
            ],
        );
        assert!(e.contains("999999999"), "{:.40}: {e}", flag);
        assert!(e.len() < 1536, "{:.40}: {} bytes", flag, e.len());
    }
}
