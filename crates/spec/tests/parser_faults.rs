//! The job parser under bad input: mutated real job files and random text
//! resolve or are refused, never panic, and what they print is bounded; a
//! job that resolves prints back to itself. Then each limit of the reader
//! (file kind and size, line length, include depth, sections, option lines)
//! and of the value parsers, each with the error that names it.

use std::path::Path;

use iolab_spec::error::MAX_MESSAGE_BYTES;
use iolab_spec::{cmdline, jobfile, resolve, Context, Host, JobSet, SpecError};
use proptest::prelude::*;

fn ctx() -> Context {
    let mut c = Context::fixed(Host {
        page_size: 4096,
        mb_memory: 24000,
        ncpus: 2,
    });
    c.vars.insert("SIZE".into(), "64m".into());
    c.vars.insert("SEMI".into(), "a;b".into());
    c
}

/// Real job files: the examples, a test fixture, and a few that use the
/// rest of the language (globals, variables, arithmetic, lists).
const SEEDS: &[&str] = &[
    include_str!("../../../examples/quick.fio"),
    include_str!("../../../examples/four-jobs.fio"),
    include_str!("../../../examples/randrw-20-80.fio"),
    include_str!("../../../examples/sd-card-random-write.fio"),
    include_str!("../../../examples/write-fsync.fio"),
    include_str!("../../../crates/report/tests/fixtures/two-groups.fio"),
    "[global]\nsize=${SIZE}\nbs=(4*$pagesize)\nkb_base=1000\n[a]\nrw=randrw:8\n\
     bssplit=4k/50:64k/50,8k\nrandom_distribution=zipf:1.2\n[global]\nnumjobs=2\n\
     [b]\nrw=write\nstonewall\nfilename=a\\:b:c\nbuffer_pattern=\"ab\"0x10\n\
     percentile_list=50:99.9\ncpus_allowed=0-1\nrate=1m,2m\n",
];

/// Text the mutations insert: the language's syntax, long runs, and file
/// names a reader must refuse.
const TOKENS: &[&str] = &[
    "[",
    "]",
    "=",
    ";",
    "#",
    "\n",
    "\r\n",
    " ",
    ":",
    ",",
    "-",
    "/",
    "%",
    "(",
    ")",
    "*",
    "^",
    "0x",
    "k",
    "${",
    "}",
    "${SIZE}",
    "${SEMI}",
    "$pagesize",
    "$mb_memory",
    "[global]\n",
    "[job]\n",
    "include ",
    "include /dev/zero\n",
    "include /dev/stdin\n",
    "include .\n",
    "include nothere.fio\n",
    "name=",
    "numjobs=",
    "bs=",
    "size=",
    "rw=",
    "bssplit=",
    "random_distribution=",
    "filename=",
    "buffer_pattern=",
    "kb_base=1000\n",
    "\u{0}",
    "é",
    "\u{2028}",
    "18446744073709551616",
    "-9223372036854775808",
    "1e308",
];

#[derive(Clone, Debug)]
enum Edit {
    Insert(prop::sample::Index, &'static str),
    /// A run of one token, up to some thousands of characters.
    Repeat(prop::sample::Index, &'static str, usize),
    Delete(prop::sample::Index, usize),
    Duplicate(prop::sample::Index, usize),
    Replace(prop::sample::Index, char),
}

fn edit() -> impl Strategy<Value = Edit> {
    let token = prop::sample::select(TOKENS);
    prop_oneof![
        3 => (any::<prop::sample::Index>(), token.clone()).prop_map(|(i, t)| Edit::Insert(i, t)),
        1 => (any::<prop::sample::Index>(), token, 1usize..3000)
            .prop_map(|(i, t, n)| Edit::Repeat(i, t, n)),
        2 => (any::<prop::sample::Index>(), 1usize..40).prop_map(|(i, n)| Edit::Delete(i, n)),
        1 => (any::<prop::sample::Index>(), 1usize..80).prop_map(|(i, n)| Edit::Duplicate(i, n)),
        2 => (any::<prop::sample::Index>(), any::<char>()).prop_map(|(i, c)| Edit::Replace(i, c)),
    ]
}

fn apply(seed: &str, edits: &[Edit]) -> String {
    let mut text: Vec<char> = seed.chars().collect();
    for e in edits {
        let at = |i: &prop::sample::Index, len: usize| if len == 0 { 0 } else { i.index(len) };
        match e {
            Edit::Insert(i, t) => {
                let p = at(i, text.len() + 1);
                text.splice(p..p, t.chars());
            }
            Edit::Repeat(i, t, n) => {
                let p = at(i, text.len() + 1);
                text.splice(p..p, t.repeat(*n).chars());
            }
            Edit::Delete(i, n) => {
                let p = at(i, text.len() + 1);
                let end = (p + n).min(text.len());
                text.drain(p..end);
            }
            Edit::Duplicate(i, n) => {
                let p = at(i, text.len() + 1);
                let end = (p + n).min(text.len());
                let copy: Vec<char> = text[p..end].to_vec();
                text.splice(p..p, copy);
            }
            Edit::Replace(i, c) => {
                if !text.is_empty() {
                    let p = at(i, text.len());
                    text[p] = *c;
                }
            }
        }
    }
    text.into_iter().collect()
}

/// What the parser must do with any text: resolve or refuse, with a short
/// one-line message; what resolves prints to text of bounded size that
/// resolves to the same jobs.
fn check(text: &str) -> Result<(), TestCaseError> {
    match resolve::parse_text("m.fio", text, &ctx()) {
        Err(e) => {
            let shown = e.to_string();
            prop_assert!(
                e.message.len() <= MAX_MESSAGE_BYTES,
                "{} bytes",
                e.message.len()
            );
            prop_assert!(shown.len() <= 2048, "{} bytes: {}", shown.len(), shown);
            prop_assert!(!shown.contains('\n'), "{}", shown);
        }
        Ok(set) => {
            let printed = set.to_job_text();
            prop_assert!(
                printed.len() <= 64 * (text.len() + 64),
                "{} bytes printed for {} bytes of input",
                printed.len(),
                text.len()
            );
            let again = resolve::parse_text("printed.fio", &printed, &ctx())
                .map_err(|e| TestCaseError::fail(format!("{e}\n--- printed\n{printed}")))?;
            prop_assert_eq!(&set, &again, "printed:\n{}", printed);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn mutated_job_files_resolve_or_are_refused(
        seed in prop::sample::select(SEEDS),
        edits in prop::collection::vec(edit(), 1..8),
    ) {
        check(&apply(seed, &edits))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_text_resolves_or_is_refused(
        pieces in prop::collection::vec(
            prop_oneof![
                prop::sample::select(TOKENS).prop_map(String::from),
                prop::collection::vec(any::<char>(), 0..12)
                    .prop_map(|c| c.into_iter().collect::<String>()),
                "[a-z_]{1,16}=[0-9a-z:,%.-]{0,12}\n",
            ],
            0..60,
        ),
    ) {
        check(&pieces.concat())?;
    }
}

fn err_of(text: &str) -> SpecError {
    match resolve::parse_text("t.fio", text, &ctx()) {
        Ok(set) => panic!("accepted:\n{}", set.to_job_text()),
        Err(e) => e,
    }
}

fn file_err(path: &Path) -> String {
    match jobfile::read_job_file(path) {
        Ok(s) => panic!("{} read: {} sections", path.display(), s.len()),
        Err(e) => e.to_string(),
    }
}

fn args_err(args: &[String]) -> String {
    let r: Result<JobSet, SpecError> =
        cmdline::parse_args(args).and_then(|c| resolve::load(&c, &ctx()));
    match r {
        Ok(set) => panic!("accepted:\n{}", set.to_job_text()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_huge_unknown_option_is_refused_without_a_suggestion_and_clipped() {
    let name = "x".repeat(10 << 20);
    let e = args_err(&["--name=j".to_string(), format!("--{name}=1")]);
    assert!(
        e.len() < 512,
        "{} bytes: {}",
        e.len(),
        &e[..512.min(e.len())]
    );
    assert!(
        e.contains(&format!(
            "unknown option `{}... (10485760 bytes)`",
            "x".repeat(64)
        )),
        "{e}"
    );
    assert!(e.contains("`--xxxx"), "{e}");
    // A long name that is close to an option is still not worth a guess.
    let e = args_err(&["--name=j".to_string(), format!("--bs{}=1", "s".repeat(100))]);
    assert!(
        e.contains("unknown option") && !e.contains("did you mean"),
        "{e}"
    );
    assert!(
        args_err(&["--name=j".into(), "--blocksiz=4k".into()]).contains("did you mean `blocksize`")
    );
}

#[test]
fn a_huge_value_is_shown_once_clipped() {
    let value = "9".repeat(1 << 20);
    for opt in [
        "bs",
        "size",
        "rw",
        "ioengine",
        "bssplit",
        "cpus_allowed",
        "runtime",
    ] {
        let e = args_err(&["--name=j".to_string(), format!("--{opt}={value}")]);
        assert!(e.len() < 1024, "{opt}: {} bytes", e.len());
        assert!(e.contains("(1048576 bytes)"), "{opt}: {e}");
    }
}

#[test]
fn a_long_line_is_refused_with_its_length() {
    for line in [
        format!("bs={}", "1".repeat(9000)),
        format!("{}=1", "n".repeat(9000)),
        format!("description={}", "d".repeat(2 << 20)),
        format!("; a comment {}", "c".repeat(9000)),
    ] {
        let e = err_of(&format!("[a]\n{line}\n")).to_string();
        assert_eq!(
            e,
            format!(
                "t.fio:2: the line is {} bytes long; fio reads job-file lines of at most 8190 bytes",
                line.len()
            )
        );
    }
    let e = err_of(&format!("[{}]\nrw=read\n", "s".repeat(10 << 20))).to_string();
    assert!(
        e.starts_with("t.fio:1: the line is 10485762 bytes long"),
        "{e}"
    );
    // A line of 8190 bytes is read.
    let fits = format!("[a]\ndescription={}\n", "d".repeat(8190 - 12));
    assert!(resolve::parse_text("t.fio", &fits, &ctx()).is_ok());
}

#[test]
fn sections_and_option_lines_are_bounded() {
    let e = err_of(&"[a]\n".repeat(1_000_000)).to_string();
    assert_eq!(
        e,
        "t.fio:4097: more than 4096 sections: fio runs at most 4096 jobs"
    );
    assert_eq!(
        resolve::parse_text("t.fio", &"[a]\n".repeat(4096), &ctx()).map(|s| s.jobs.len()),
        Ok(4096)
    );
    let e = err_of(&format!("[a]\n{}", "bs=4k\n".repeat(300_000))).to_string();
    assert_eq!(
        e,
        "t.fio:250002: more than 250000 option lines in the job files of one run"
    );
}

#[test]
fn many_globals_cost_each_job_one_entry_per_option() {
    // 200,000 global lines inherited by 4,000 jobs: a job reads the last
    // value of each option, not every line (which would be 8e8 steps).
    let mut text = String::from("[global]\n");
    for i in 0..100_000 {
        text.push_str(&format!("bs={}k\nsize={}m\n", 1 + i % 64, 1 + i % 100));
    }
    for i in 0..4000 {
        text.push_str(&format!("[j{i}]\n"));
    }
    let set = resolve::parse_text("t.fio", &text, &ctx()).unwrap();
    assert_eq!(set.jobs.len(), 4000);
    let printed = set.jobs[3999].option_lines();
    assert_eq!(printed, ["bs=32k", "size=100m"]);
}

#[test]
fn deep_expressions_are_an_error() {
    let e = err_of(&format!(
        "[a]\nsize={}1{}\n",
        "(".repeat(4000),
        ")".repeat(4000)
    ));
    assert!(e.message.contains("nests more than 100 deep"), "{e}");
    assert!(e.to_string().len() < 512);
}

#[test]
fn includes_must_be_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for (target, kind) in [
        ("/dev/zero".to_string(), "a character device"),
        (fifo.display().to_string(), "a FIFO"),
        (dir.path().display().to_string(), "a directory"),
    ] {
        let main = dir.path().join("main.fio");
        std::fs::write(&main, format!("[a]\nrw=read\ninclude {target}\n")).unwrap();
        let e = file_err(&main);
        assert_eq!(
            e,
            format!(
                "{}:3: cannot read included job file `{target}`: it is {kind}; job files must be \
                 regular files",
                main.display()
            )
        );
        // The job file itself too.
        let e = file_err(Path::new(&target));
        assert!(
            e.contains(&format!("cannot read job file: it is {kind}")),
            "{e}"
        );
    }
}

#[test]
fn job_text_is_limited_to_16_mib_per_file_and_per_run() {
    let dir = tempfile::tempdir().unwrap();
    // A sparse file past the limit is refused before it is read.
    let big = dir.path().join("big.fio");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((16 << 20) + 1)
        .unwrap();
    let e = file_err(&big);
    assert!(
        e.ends_with("cannot read job file: it is 16777217 bytes; job files are limited to 16 MiB"),
        "{e}"
    );
    // Two includes of 9 MiB each pass the limit of the run.
    let half = dir.path().join("half.fio");
    std::fs::write(&half, ";;;;;;;\n".repeat(9 << 17)).unwrap();
    let main = dir.path().join("main.fio");
    std::fs::write(&main, "[a]\ninclude half.fio\nrw=read\ninclude half.fio\n").unwrap();
    let e = file_err(&main);
    assert!(
        e.contains("main.fio:4: cannot read included job file `"),
        "{e}"
    );
    assert!(
        e.ends_with(
            "/half.fio`: the job text of one run (job files \
             and includes together) is limited to 16 MiB"
        ),
        "{e}"
    );
    // So do two job files of one command line.
    let args: Vec<String> = vec![half.display().to_string(), half.display().to_string()];
    let e = args_err(&args);
    assert!(e.contains("limited to 16 MiB"), "{e}");
}

#[test]
fn includes_nest_at_most_16_deep() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..40 {
        std::fs::write(
            dir.path().join(format!("{i}.fio")),
            format!("include {}.fio\n", i + 1),
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("40.fio"), "rw=read\n").unwrap();
    let main = dir.path().join("main.fio");
    std::fs::write(&main, "[a]\ninclude 0.fio\n").unwrap();
    let e = file_err(&main);
    let at = dir.path().display();
    assert_eq!(
        e,
        format!(
            "{at}/15.fio:1: cannot read included job file `{at}/16.fio`: includes nest more \
             than 16 deep"
        )
    );
    // 16 levels are read.
    std::fs::write(dir.path().join("15.fio"), "rw=write\n").unwrap();
    assert_eq!(
        jobfile::read_job_file(&main).unwrap()[0].options[0].name,
        "rw"
    );
}

#[test]
fn a_job_file_that_is_not_text_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin.fio");
    std::fs::write(&bin, b"[a]\nrw=read\xff\n").unwrap();
    let e = file_err(&bin);
    assert!(
        e.ends_with("cannot read job file: it is not UTF-8 text (invalid byte at offset 11)"),
        "{e}"
    );
}
