//! The harness every iolab test uses: what a test needs from the machine
//! (`require!`), a skip that is recorded with its reason (`skip!`), and a
//! fresh directory with a private results database per test (`dir`, `db`),
//! mounts undone when dropped (`mount`), and readers of what iolab writes
//! (`stamps`).
//!
//! Rust's test runner has no skip at run time, so a test that cannot run
//! here returns early and says so: it prints
//! `iolab-test-skip: BINARY::TEST: REASON` on stderr and appends the same
//! line to the file `$IOLAB_SKIP_LOG` names (one `write` in append mode, so
//! lines from parallel tests never interleave). `scripts/test.sh` reads that
//! file to count the skipped tests apart from the passed ones and to list
//! the reasons. A test that runs but leaves out one case records
//! `iolab-test-skip-case:` instead, and is still counted as passed.
//!
//! Under CI (`CI=true`), a requirement that `scripts/setup.sh` installs
//! (fio, strace, mkfs.xfs ...: every command it checks with `command -v`)
//! fails the test instead of skipping it.

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};

pub mod mount;
pub mod req;
pub mod stamps;

pub use req::Missing;

/// Returns from the test, recording a skip, unless the machine has each
/// requirement: `require!(root, fio, mkfs = "xfs", tool = "script")`.
/// Each name is a function of [`req`].
#[macro_export]
macro_rules! require {
    ($($req:ident $(= $arg:expr)?),+ $(,)?) => {
        $(
            if let Err(missing) = $crate::req::$req($($arg)?) {
                $crate::skipped(missing);
                return;
            }
        )+
    };
}

/// Returns from the test, recording a skip with the reason `format!` makes
/// of the arguments: for what only running can find out (a kernel without
/// zram, a filesystem that reports no holes).
#[macro_export]
macro_rules! skip {
    ($($arg:tt)+) => {{
        $crate::skipped($crate::Missing::here(format!($($arg)+)));
        return;
    }};
}

/// The value of a `Result<T, Missing>` (what a helper that prepares the
/// machine returns: a mounted filesystem, a loop device), or a return from
/// the test with the skip recorded: `let fs = need!(LoopFs::new(..));`.
#[macro_export]
macro_rules! need {
    ($made:expr) => {
        match $made {
            Ok(made) => made,
            Err(missing) => {
                $crate::skipped(missing);
                return;
            }
        }
    };
}

/// Records that the test leaves out one of its cases, with the reason
/// `format!` makes of the arguments; the test goes on.
#[macro_export]
macro_rules! skip_case {
    ($($arg:tt)+) => {
        $crate::skipped_case($crate::Missing::here(format!($($arg)+)))
    };
}

/// Whether the machine has each requirement (as in `require!`), for a case
/// of a test that can go on without it: when it cannot, the case's skip is
/// recorded and the value is false: `if have!(fio) { compare with fio }`.
#[macro_export]
macro_rules! have {
    ($($req:ident $(= $arg:expr)?),+ $(,)?) => {
        'have: {
            $(
                if let Err(missing) = $crate::req::$req($($arg)?) {
                    $crate::skipped_case(missing);
                    break 'have false;
                }
            )+
            true
        }
    };
}

/// Whether the tests run under CI (`CI=true`, as CI services and `.ci/run`
/// set it).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Records that the current test skips for `missing`, to be followed by a
/// return. Under CI, panics instead when setup.sh would have installed
/// what is missing.
pub fn skipped(missing: Missing) {
    fail_under_ci(&missing);
    record("iolab-test-skip", &missing.reason);
}

/// Records that the current test leaves out a case for `missing`, and
/// goes on. Under CI, panics instead when setup.sh would have installed
/// what is missing.
pub fn skipped_case(missing: Missing) {
    fail_under_ci(&missing);
    record("iolab-test-skip-case", &missing.reason);
}

fn fail_under_ci(missing: &Missing) {
    if under_ci() && missing.installed_by_setup {
        panic!(
            "{}; under CI=true that is a failure, not a skip",
            missing.reason
        );
    }
}

fn record(tag: &str, reason: &str) {
    let reason = reason.trim().replace('\n', " ");
    let line = format!("{tag}: {}: {reason}\n", test_name());
    eprint!("{line}");
    if let Some(log) = std::env::var_os("IOLAB_SKIP_LOG").filter(|v| !v.is_empty()) {
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            panic!(
                "cannot record the skip in {}: {e}",
                Path::new(&log).display()
            );
        }
    }
}

/// `BINARY::TEST`: the test binary without cargo's hash, and the test's
/// path as the test runner names its thread.
pub fn test_name() -> String {
    let exe = std::env::current_exe().ok();
    let stem = exe
        .as_deref()
        .and_then(Path::file_stem)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let binary = match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name.to_string()
        }
        _ => stem,
    };
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("unnamed");
    format!("{binary}::{test}")
}

thread_local! {
    /// The current test's directory: made on first use, removed when the
    /// test's thread ends (the test runner gives each test a thread).
    static DIR: RefCell<Option<tempfile::TempDir>> = const { RefCell::new(None) };
}

/// A directory of the current test's own, empty when first asked for and
/// removed with what is in it when the test ends. The same path for every
/// call within one test.
pub fn dir() -> PathBuf {
    DIR.with(|d| {
        d.borrow_mut()
            .get_or_insert_with(|| {
                tempfile::Builder::new()
                    .prefix("iolab-test-")
                    .tempdir()
                    .expect("a temporary directory for the test")
            })
            .path()
            .to_path_buf()
    })
}

/// The current test's results database (`results.db` in [`dir`]), so that
/// no test sees another's results and none touches the user's.
pub fn db() -> PathBuf {
    dir().join("results.db")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setup_script_names_the_tools_it_installs() {
        let cmds = req::setup_commands();
        for c in ["fio", "strace", "mkfs.xfs", "mkfs.btrfs"] {
            assert!(cmds.iter().any(|x| x == c), "{c} not in {cmds:?}");
        }
        assert!(!cmds.iter().any(|x| x == "rustc"), "{cmds:?}");
    }

    #[test]
    fn a_skip_names_the_binary_and_the_test() {
        assert_eq!(
            test_name(),
            "iolab_testkit::tests::a_skip_names_the_binary_and_the_test"
        );
    }

    #[test]
    fn each_test_has_one_fresh_directory_with_its_database_in_it() {
        let d = dir();
        assert_eq!(d, dir());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        assert_eq!(db().parent(), Some(d.as_path()));
        let other = std::thread::spawn(dir).join().unwrap();
        assert_ne!(other, d);
        // The other thread's directory went with it.
        assert!(!other.exists());
    }

    #[test]
    fn a_missing_tool_says_whether_setup_installs_it() {
        let fio = req::tool("fio-that-is-not-installed").unwrap_err();
        assert!(!fio.installed_by_setup);
        assert!(fio.reason.contains("not installed"), "{}", fio.reason);
        assert!(req::tool("sh").is_ok());
    }
}
