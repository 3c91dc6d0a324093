//! The command-line surface, asserted in one place: a bare `iolab` prints
//! help and measures nothing; every subcommand answers `-h`, `--help` and
//! `iolab help SUB` with its own help; every duration flag takes units and
//! a bare number as seconds; every size flag has fio's meaning; every
//! storing command says on stderr which result it stored, in every format;
//! an empty command line says what to give.

mod common;

use std::path::Path;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_bare_iolab_prints_help_and_measures_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let out = common::iolab()
        .current_dir(dir.path())
        .env("IOLAB_DB", &db)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    // clap's answer to a missing subcommand: the help, exit 2.
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("Usage: iolab"), "{err}");
    for sub in ["quick", "run", "compare", "sweep", "meta", "history"] {
        assert!(err.contains(&format!("  {sub}")), "{sub} not listed: {err}");
    }
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        common::entries(dir.path()).is_empty(),
        "a bare iolab created {:?}",
        common::entries(dir.path())
    );
    assert!(!Path::new(&db).exists());
}
