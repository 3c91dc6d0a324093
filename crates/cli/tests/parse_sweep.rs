//! The parse sweep: every job file of `tests/corpus` (job files from
//! fio's `examples/` directory) is parsed by fio (`fio --parse-only`) and
//! by iolab (`iolab run --parse-only`). The test prints how many both
//! accept and fails on a file fio accepts and iolab refuses, unless
//! docs/compat.md lists it (by file name) with its reason.

mod common;
use common::*;
use iolab_testkit::require;

use std::path::PathBuf;
use std::process::Command as Proc;

#[test]
fn every_job_file_fio_accepts_parses_in_iolab_or_is_listed_with_its_reason() {
    require!(fio);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let corpus = root.join("tests/corpus");
    let listed = std::fs::read_to_string(root.join("../../docs/compat.md")).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&corpus)
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
            .current_dir(&corpus)
            .output()
            .unwrap()
            .status
            .success();
        let out = iolab()
            .args(["run", "--parse-only"])
            .arg(f)
            .current_dir(&corpus)
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
        "parse sweep: {} job files, {both} accepted by both, fio only: {fio_only:?}",
        files.len()
    );
    assert!(
        unlisted.is_empty(),
        "fio accepts and iolab refuses, not listed in docs/compat.md:\n{}",
        unlisted.join("\n")
    );
}
