//! The command-line surface, asserted in one place. `SURFACE` lists every
//! subcommand: each answers `-h`, `--help` and `iolab help SUB` with its
//! own help; each measuring one runs with `--repeat` and a duration with
//! units, says on stderr which result it stored, and stores every run.
//! Beside it: a bare `iolab` prints help and measures nothing; every
//! duration flag refuses a bad unit the same way (`DURATION_FLAGS`);
//! every size flag has fio's meaning; every storing command says where its
//! result went in every output format; an empty command line says what to
//! give; completions and man pages come from the same definitions.

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

/// Every duration flag, with the command line around it that reaches it.
const DURATION_FLAGS: &[(&[&str], &str)] = &[
    (&["quick", "--no-store"], "--time"),
    (
        &["compare", "--target", "a=/tmp", "--no-store"],
        "--runtime",
    ),
    (
        &["quick", "--no-store", "--repeat", "auto"],
        "--repeat-time",
    ),
    (&["meta", "--no-store", "--repeat", "auto"], "--repeat-time"),
    (
        &[
            "compare",
            "--target",
            "a=/tmp",
            "--no-store",
            "--repeat",
            "auto",
        ],
        "--repeat-time",
    ),
    (
        &[
            "run",
            "--no-store",
            "--name=x",
            "--size=4k",
            "--repeat=auto",
        ],
        "--repeat-time",
    ),
    (
        &[
            "sweep",
            "--no-store",
            "--size=4k",
            "--bs",
            "4k",
            "--repeat",
            "auto",
        ],
        "--repeat-time",
    ),
];

#[test]
fn every_duration_flag_refuses_a_bad_unit_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    for (args, flag) in DURATION_FLAGS {
        for bad in ["2x", "1.5s"] {
            let out = common::iolab()
                .current_dir(dir.path())
                .args(*args)
                .arg(format!("{flag}={bad}"))
                .output()
                .unwrap();
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?} {flag}={bad}: {err}");
            assert!(err.contains(flag), "{args:?} {flag}={bad}: {err}");
            assert!(
                err.contains("a bare number is seconds"),
                "{args:?} {flag}={bad}: {err}"
            );
        }
    }
    assert!(common::entries(dir.path()).is_empty());
}

#[test]
fn sizes_have_fios_meaning_on_every_flag() {
    let dir = tempfile::tempdir().unwrap();
    // 64MiB is 64·10^6 bytes (61 MiB), below the suite's 64 MiB minimum;
    // 64m is 64·2^20.
    let out = common::iolab()
        .args(["quick", "--no-store", "--size", "64MiB", "--time", "1h"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--size 61 MiB"), "{err}");
    for args in [
        &["quick", "--size", "4x"][..],
        &["compare", "--target", "a=/tmp", "--size", "4x"],
        &["meta", "--file-size", "4x"],
    ] {
        let out = common::iolab()
            .current_dir(dir.path())
            .args(args)
            .arg("--no-store")
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("kib, mib, gib powers of 1000, as in fio's job files"),
            "{args:?}: {err}"
        );
    }
    assert!(common::entries(dir.path()).is_empty());
}

/// The surface, one row per subcommand: a measuring command's cheapest
/// line with `--repeat` and a duration with units (`DIR` is a fresh
/// directory holding `tiny.fio`), and the runs it makes; None for the
/// commands that do not measure.
struct Surface {
    sub: &'static str,
    repeated: Option<&'static [&'static str]>,
    runs: u32,
}

const fn row(sub: &'static str) -> Surface {
    Surface {
        sub,
        repeated: None,
        runs: 0,
    }
}

const SURFACE: &[Surface] = &[
    Surface {
        sub: "run",
        repeated: Some(&[
            "run",
            "--name=j",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--directory=DIR",
            "--repeat=auto",
            "--repeat-max=3",
            "--repeat-time=1m",
        ]),
        runs: 3,
    },
    Surface {
        sub: "quick",
        repeated: Some(&[
            "quick",
            "DIR",
            "--time",
            "1s",
            "--size",
            "64m",
            "--meta-files",
            "10",
            "--repeat",
            "2",
        ]),
        runs: 2,
    },
    Surface {
        sub: "compare",
        repeated: Some(&[
            "compare",
            "--target",
            "a=DIR",
            "--job",
            "DIR/tiny.fio",
            "--runtime",
            "1s",
            "--repeat",
            "2",
        ]),
        runs: 2,
    },
    Surface {
        sub: "sweep",
        repeated: Some(&[
            "sweep",
            "--name=j",
            "--rw=write",
            "--size=64k",
            "--directory=DIR",
            "--bs",
            "4k,8k",
            "--repeat",
            "auto",
            "--repeat-max",
            "3",
            "--repeat-time",
            "2m",
        ]),
        runs: 3,
    },
    Surface {
        sub: "meta",
        repeated: Some(&[
            "meta",
            "DIR",
            "--files",
            "20",
            "--repeat",
            "auto",
            "--repeat-max",
            "3",
            "--repeat-time",
            "90s",
        ]),
        runs: 3,
    },
    row("history"),
    row("show"),
    row("export"),
    row("diff"),
    row("report"),
    row("import"),
    row("rerun"),
    row("completions"),
    row("man"),
];

fn stdout_of(args: &[&str]) -> String {
    let out = common::iolab().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn every_subcommand_answers_h_help_and_help_sub_with_its_own_help() {
    for Surface { sub, .. } in SURFACE {
        let short = stdout_of(&[sub, "-h"]);
        let long = stdout_of(&[sub, "--help"]);
        let via_help = stdout_of(&["help", sub]);
        // clap's commands print "Usage: iolab SUB", run's and sweep's own
        // help "usage: iolab SUB".
        let usage = format!("sage: iolab {sub}");
        assert!(short.contains(&usage), "{sub} -h: {short}");
        assert!(long.contains(&usage), "{sub} --help: {long}");
        assert_eq!(via_help, long, "iolab help {sub} differs from --help");
        assert!(long.len() >= short.len(), "{sub}");
    }
    // run's and sweep's help is their own, with their flags.
    assert!(stdout_of(&["help", "run"]).contains("--cmdhelp[=OPTION]"));
    assert!(stdout_of(&["help", "sweep"]).contains("--bs LO..HI | LIST"));
    assert_eq!(stdout_of(&["run", "-h"]), stdout_of(&["run", "--help"]));
}

/// The cheapest measuring command line of each storing command, in `dir`,
/// with `extra` after it: (command, its output formats, the arguments).
fn storing_commands(dir: &Path) -> Vec<(&'static str, &'static [&'static str], Vec<String>)> {
    let d = dir.display().to_string();
    // fio's jobs keep their files, as fio does: run's go to a directory
    // of their own.
    let run_dir = dir.join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    let job = dir.join("tiny.fio");
    std::fs::write(&job, "[tiny]\nrw=write\nbs=4k\nsize=64k\n").unwrap();
    let table: &[&str] = &["table", "markdown", "csv", "json", "html"];
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        (
            "run",
            &["normal", "json", "json+", "terse"],
            s(&["run", "--name=j", "--rw=write", "--bs=4k", "--size=64k"])
                .into_iter()
                .chain([format!("--directory={}", run_dir.display())])
                .collect(),
        ),
        (
            "sweep",
            table,
            s(&[
                "sweep",
                "--name=j",
                "--rw=write",
                "--size=64k",
                "--bs",
                "4k,8k",
            ])
            .into_iter()
            .chain([format!("--directory={d}")])
            .collect(),
        ),
        ("meta", table, s(&["meta", &d, "--files", "20"])),
        (
            "quick",
            table,
            s(&[
                "quick",
                &d,
                "--time",
                "1s",
                "--size",
                "64m",
                "--meta-files",
                "10",
            ]),
        ),
        (
            "compare",
            table,
            s(&[
                "compare",
                "--target",
                &format!("a={d}"),
                "--job",
                &job.display().to_string(),
                "--repeat",
                "1",
                "--runtime",
                "1s",
            ]),
        ),
    ]
}

#[test]
fn every_storing_command_says_which_result_it_stored_on_stderr_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let mut next = 1;
    for (cmd, formats, args) in storing_commands(dir.path()) {
        for fmt in formats.iter() {
            let out = common::iolab()
                .env("IOLAB_DB", &db)
                .args(&args)
                .arg(format!("--output-format={fmt}"))
                .output()
                .unwrap();
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{cmd} {fmt}: {err}");
            let line = format!("iolab: stored as result {next} (iolab show {next})\n");
            assert!(err.ends_with(&line), "{cmd} {fmt}: {err}");
            assert!(
                !text(&out.stdout).contains("stored as result"),
                "{cmd} {fmt}"
            );
            next += 1;
        }
        // Not stored, not said.
        let out = common::iolab()
            .env("IOLAB_DB", &db)
            .args(&args)
            .arg("--no-store")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd}: {}", text(&out.stderr));
        assert!(!text(&out.stderr).contains("stored as result"), "{cmd}");
    }
    assert_eq!(common::entries(&dir.path().join("run")), ["j.0.0"]);
    let kept: Vec<String> = common::entries(dir.path());
    assert_eq!(kept, ["run", "tiny.fio"], "files left behind");
}

#[test]
fn an_empty_command_line_says_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run"],
            "no jobs defined: give a job file (`iolab run job.fio`)",
        ),
        (
            &["run", "--no-store"],
            "or a job's options (`iolab run --name=JOB",
        ),
        (&["sweep"], "no base job to sweep: give a job file"),
        (
            &["sweep", "--bs", "4k..64k"],
            "or the job's fio options (`iolab sweep --filename=/mnt/x/f --size=256m",
        ),
        (
            &["compare"],
            "nothing to compare: give --fs LIST or --target NAME=DIR",
        ),
        (
            &["run", "--cmdhelp=nosuchoption"],
            "no option named `nosuchoption`",
        ),
        (
            &["run", "--name=j", "--size=4k", "--section=other"],
            "--section `other`: no job section has that name",
        ),
    ];
    for (args, says) in cases {
        let out = common::iolab()
            .current_dir(dir.path())
            .args(*args)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        // No place of the user's is named by a made-up one.
        assert!(!err.contains("built-in"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert!(common::entries(dir.path()).is_empty());
}

#[test]
fn compares_old_suite_name_quick_runs_basic_and_says_so() {
    let out = common::iolab()
        .args(["compare", "--list-suites"])
        .output()
        .unwrap();
    let list = text(&out.stdout);
    assert!(
        list.contains("\nbasic: ") && !list.contains("\nquick: "),
        "{list}"
    );
    // The old name, with a bad flag after it: the warning, then the refusal,
    // before anything runs.
    let out = common::iolab()
        .args([
            "compare",
            "--suite",
            "quick",
            "--target",
            "a=/nonexistent-iolab",
        ])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--suite quick is now --suite basic"), "{err}");
}

/// What bash completes for the words of `line` (the last one being
/// completed) with iolab's completion script loaded.
fn bash_completes(script: &Path, line: &[&str]) -> Vec<String> {
    let words = line
        .iter()
        .map(|w| format!("'{w}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let program = format!(
        "source '{}'; COMP_WORDS=({words}); COMP_CWORD={}; COMP_LINE='{}'; \
         COMP_POINT=${{#COMP_LINE}}; _iolab iolab '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        line.len() - 1,
        line.join(" "),
        line[line.len() - 1],
        line[line.len() - 2],
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &program])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).lines().map(String::from).collect()
}

#[test]
fn completions_and_man_pages_come_from_the_help_definitions() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let script = stdout_of(&["completions", shell]);
        for word in ["compare", "quick", "rerun", "--profile", "--bs"] {
            assert!(script.contains(word), "{shell}: {word}");
        }
    }
    let bash = dir.path().join("iolab.bash");
    std::fs::write(&bash, stdout_of(&["completions", "bash"])).unwrap();
    let subs = bash_completes(&bash, &["iolab", "re"]);
    assert!(subs.contains(&"rerun".to_string()), "{subs:?}");
    // run completes fio's options from the option table.
    let opts = bash_completes(&bash, &["iolab", "run", "--iodep"]);
    assert!(opts.iter().any(|o| o.starts_with("--iodepth")), "{opts:?}");
    let opts = bash_completes(&bash, &["iolab", "quick", "--pro"]);
    assert_eq!(opts, ["--profile"]);

    // iolab(1) on stdout; every page with --dir, run's listing fio's options.
    let page = stdout_of(&["man"]);
    assert!(
        page.starts_with(".ie") || page.contains(".TH iolab 1"),
        "{page}"
    );
    assert!(page.contains("rerun"), "{page}");
    let pages = dir.path().join("man1");
    std::fs::create_dir(&pages).unwrap();
    stdout_of(&["man", "--dir", &pages.display().to_string()]);
    let mut want: Vec<String> = SURFACE
        .iter()
        .map(|s| format!("iolab-{}.1", s.sub))
        .collect();
    want.push("iolab.1".to_string());
    want.sort();
    assert_eq!(common::entries(&pages), want);
    let run = std::fs::read_to_string(pages.join("iolab-run.1")).unwrap();
    for option in ["iodepth", "ioengine", "rwmixread"] {
        assert!(run.contains(&format!("\\-\\-{option}")), "{option}");
    }
    assert!(
        run.contains("Block size of each I/O"),
        "the table's description"
    );
    // Pages are new files: existing ones are not written over.
    let out = common::iolab()
        .args(["man", "--dir"])
        .arg(&pages)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cannot create"),
        "{}",
        text(&out.stderr)
    );
}

/// Every measuring command with `--repeat` and a duration with units: it
/// runs as often as asked, says on stderr which result it stored, and the
/// stored result has every run. Every other command is on the table too,
/// and the help test above covers it.
#[test]
fn every_measuring_command_repeats_takes_units_and_says_where_its_result_went() {
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let mut next = 1;
    for Surface {
        sub,
        repeated,
        runs,
    } in SURFACE
    {
        let Some(line) = repeated else { continue };
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        std::fs::write(
            dir.path().join("tiny.fio"),
            "[tiny]\nrw=write\nbs=4k\nsize=64k\n",
        )
        .unwrap();
        let args: Vec<String> = line.iter().map(|a| a.replace("DIR", &d)).collect();
        let out = common::iolab()
            .env("IOLAB_DB", &db)
            .args(&args)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{sub}: {err}");
        let said = format!("iolab: stored as result {next} (iolab show {next})\n");
        assert!(err.ends_with(&said), "{sub}: {err}");
        let record = iolab_store::Store::open(&db)
            .unwrap()
            .get(next)
            .unwrap()
            .unwrap()
            .record;
        assert_eq!(record.kind.to_string(), *sub);
        let made = match record.repeat {
            Some(r) => r.runs,
            // compare repeats each cell: its runs are in the comparison.
            None => {
                let c: iolab_stats::Comparison = serde_json::from_str(&record.result_json).unwrap();
                let cell = &c.targets[0].values[0].1;
                cell.runs.len() as u32
            }
        };
        assert_eq!(made, *runs, "{sub}: {err}");
        next += 1;
    }
}

/// The store flags' help, as every subcommand shows it (clap's help keeps
/// the case; run's and sweep's own help starts it lowercase).
const STORE_HELP: [(&str, &str); 3] = [
    (
        "--db",
        "results database (default $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db, \
         else ~/.local/share/iolab/results.db)",
    ),
    ("--no-store", "do not keep the result"),
    ("--tag", "label the kept result (repeatable)"),
];

/// Each measuring command line, with the store flags' bad values tried
/// after it.
const STORING: [&[&str]; 5] = [
    &["run", "--name=j", "--size=4k"],
    &["quick", "."],
    &["compare", "--target", "a=."],
    &["sweep", "--name=j", "--size=4k", "--bs", "4k"],
    &["meta", "."],
];

#[test]
fn the_store_flags_are_one_declaration_on_every_subcommand() {
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let reading = [
        "history", "show", "export", "diff", "report", "import", "rerun",
    ];
    for sub in STORING.iter().map(|l| l[0]).chain(reading) {
        let help = words(&stdout_of(&[sub, "--help"]).to_lowercase());
        let flags = if reading.contains(&sub) {
            &STORE_HELP[..1]
        } else {
            &STORE_HELP[..]
        };
        for (flag, said) in flags {
            assert!(help.contains(flag), "{sub} --help lacks {flag}");
            let said = said.to_lowercase();
            assert!(help.contains(&said), "{sub} --help lacks `{said}`");
        }
    }
    // A bad value is refused with the same words by clap and by fio's
    // command line, exit 2, nothing made.
    let dir = tempfile::tempdir().unwrap();
    for line in STORING {
        for (bad, said) in [
            ("--db=", "an empty path"),
            ("--tag= ", "an empty tag"),
            ("--tag=a\tb", "a tag with a control character"),
        ] {
            let out = common::iolab()
                .current_dir(dir.path())
                .args(line)
                .arg(bad)
                .output()
                .unwrap();
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{line:?} {bad}: {err}");
            let flag = &bad[..bad.find('=').unwrap()];
            assert!(
                err.contains(flag) && err.contains(said),
                "{line:?} {bad}: {err}"
            );
            assert!(common::entries(dir.path()).is_empty(), "{line:?} {bad}");
        }
    }
    let out = common::iolab().args(["history", "--db="]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("an empty path"),
        "{}",
        text(&out.stderr)
    );
}
