//! The parse sweep: every job file of `tests/corpus` (iolab's own job
//! files in the shapes fio users write), and every one of fio's own
//! examples when
//! they are installed on the machine, is parsed by fio (`fio
//! --parse-only`) and by iolab (`iolab run --parse-only`). The test prints
//! how many both accept and fails on a file fio accepts and iolab refuses,
//! unless docs/compat.md lists it (by file name) with its reason.

mod common;
use common::*;
use iolab_testkit::require;

use std::path::{Path, PathBuf};
use std::process::Command as Proc;

#[test]
fn every_job_file_fio_accepts_parses_in_iolab_or_is_listed_with_its_reason() {
    require!(fio);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    sweep(&root.join("tests/corpus"));
}

/// Where fio's example job files may be installed: `FIO_EXAMPLES` (a fio
/// source tree's `examples/`, say), then the places distributions use.
fn fio_examples() -> Option<PathBuf> {
    let env = std::env::var_os("FIO_EXAMPLES").map(PathBuf::from);
    env.into_iter()
        .chain(
            [
                "/usr/share/doc/fio/examples",
                "/usr/share/fio/examples",
                "/usr/local/share/doc/fio/examples",
                "/usr/local/share/fio/examples",
            ]
            .map(PathBuf::from),
        )
        .find(|d| d.is_dir())
}

#[test]
fn fios_installed_examples_parse_alike() {
    require!(fio);
    let Some(dir) = fio_examples() else {
        // Debian's fio package ships no examples; nothing setup.sh can
        // install brings them.
        iolab_testkit::skip!(
            "fio's example job files are not installed (none of FIO_EXAMPLES, \
             /usr/share/doc/fio/examples, /usr/share/fio/examples, \
             /usr/local/share/{{doc/,}}fio/examples)"
        );
    };
    sweep(&dir);
}

/// Parses each `*.fio` file of `corpus` with both tools, in `corpus` (job
/// files name files relative to it); fails on a file fio accepts and
/// iolab refuses that docs/compat.md does not list.
fn sweep(corpus: &Path) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let listed = std::fs::read_to_string(root.join("../../docs/compat.md")).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no job files in {}", corpus.display());
    let (mut both, mut fio_only, mut unlisted) = (0, Vec::new(), Vec::new());
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let fio_ok = Proc::new("fio")
            .arg("--parse-only")
            .arg(f)
            .current_dir(corpus)
            .output()
            .unwrap()
            .status
            .success();
        let out = iolab()
            .args(["run", "--parse-only"])
            .arg(f)
            .current_dir(corpus)
            .output()
            .unwrap();
        let iolab_ok = out.status.success();
        match (fio_ok, iolab_ok) {
            (true, true) => both += 1,
            (true, false) => {
                let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
                if !listed.contains(&format!("`{name}`")) {
                    unlisted.push(format!("{name}: {why}"));
                }
                fio_only.push(name);
            }
            _ => {}
        }
    }
    println!(
        "parse sweep of {}: {} job files, {both} accepted by both, fio only: {fio_only:?}",
        corpus.display(),
        files.len()
    );
    assert!(
        unlisted.is_empty(),
        "fio accepts and iolab refuses, not listed in docs/compat.md:\n{}",
        unlisted.join("\n")
    );
}
