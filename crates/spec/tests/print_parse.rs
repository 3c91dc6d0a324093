//! Property: the job text `--parse-only` prints, which is also the job text
//! a kept result stores, parses back to the same jobs whatever the values
//! and job names hold (`;`, `#`, spaces, `=`, quotes, `$`, brackets,
//! unicode). A value or name that fio's job-file syntax cannot carry (a
//! line break, `;` or `#`, which start a comment, a `${` that would be read
//! as a variable, a bracket in a job name) is refused when it is parsed, with
//! an error that says so, and is never printed as something else.

use iolab_spec::options::{Kind, Opt, OPTIONS};
use iolab_spec::{cmdline, resolve, Context, Host, JobSet, SpecError};
use proptest::prelude::*;

fn ctx() -> Context {
    Context::fixed(Host {
        page_size: 4096,
        mb_memory: 24000,
        ncpus: 2,
    })
}

/// Pieces that values and names are made of.
const PIECES: &[&str] = &[
    "a",
    "Z",
    "0",
    "7",
    " ",
    "  ",
    "=",
    ";",
    "#",
    "\"",
    "'",
    "$",
    "{",
    "}",
    "${",
    "[",
    "]",
    ":",
    "\\",
    "\\:",
    "\n",
    "\t",
    "\r",
    "é",
    "日本",
    "🙂",
    "\u{2028}",
    "$pagesize",
    "$ncpus",
    "-",
    "*",
    "(",
    ")",
    ",",
    "include ",
    "/tmp/x",
    "%",
];

fn text_of(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..max).prop_map(|p| p.concat())
}

/// Options whose value is free text (the name excepted: it is the job's).
fn text_options() -> Vec<usize> {
    (0..OPTIONS.len())
        .filter(|&i| matches!(OPTIONS[i].kind, Kind::Str | Kind::OptStr))
        .filter(|&i| Opt::ALL[i] != Opt::Name)
        .collect()
}

/// Typed options of the table with their example values.
fn typed_options() -> Vec<usize> {
    (0..OPTIONS.len())
        .filter(|&i| !matches!(OPTIONS[i].kind, Kind::Str | Kind::OptStr))
        .collect()
}

#[derive(Clone, Debug)]
struct GenJob {
    /// `j` and pieces: never empty, never `global`.
    name: String,
    texts: Vec<(usize, String)>,
    typed: Vec<usize>,
}

fn job() -> impl Strategy<Value = GenJob> {
    // A `v` in the middle: a text option needs a value (`write_bw_log`
    // and the other optional ones excepted), spaces around it are trimmed.
    let value = (text_of(3), text_of(4)).prop_map(|(a, b)| format!("{a}v{b}"));
    let texts = prop::collection::vec((prop::sample::select(text_options()), value), 0..5);
    let typed = prop::collection::vec(prop::sample::select(typed_options()), 0..4);
    (text_of(4), texts, typed).prop_map(|(n, texts, typed)| GenJob {
        name: format!("j{n}"),
        texts,
        typed,
    })
}

/// Whether a value, once substituted and trimmed, can be written in a job
/// file and read back as itself.
fn carryable(text: &str) -> bool {
    !text.contains(['\n', ';', '#']) && !text.contains("${")
}

fn carryable_name(name: &str) -> bool {
    carryable(name) && !name.contains(['[', ']'])
}

/// The jobs given on a command line, as `iolab run --name=... --opt=...`.
fn via_command_line(jobs: &[GenJob]) -> Result<JobSet, SpecError> {
    let mut args = Vec::new();
    for j in jobs {
        args.push(format!("--name={}", j.name));
        for (i, v) in &j.texts {
            args.push(format!("--{}={v}", OPTIONS[*i].name));
        }
        for i in &j.typed {
            args.push(format!("--{}={}", OPTIONS[*i].name, OPTIONS[*i].example));
        }
    }
    let cmd = cmdline::parse_args(&args)?;
    resolve::load(&cmd, &ctx())
}

/// The same jobs in a job file whose free-text values and names come from
/// environment variables (a job file's own lines cannot hold `;`, `#` or a
/// line break).
fn via_job_file(jobs: &[GenJob]) -> Result<JobSet, SpecError> {
    let mut ctx = ctx();
    let mut text = String::new();
    for (n, j) in jobs.iter().enumerate() {
        text.push_str(&format!("[s{n}]\nname=${{N{n}}}\n"));
        ctx.vars.insert(format!("N{n}"), j.name.clone());
        for (k, (i, v)) in j.texts.iter().enumerate() {
            text.push_str(&format!("{}=${{V{n}_{k}}}\n", OPTIONS[*i].name));
            ctx.vars.insert(format!("V{n}_{k}"), v.clone());
        }
        for i in &j.typed {
            text.push_str(&format!("{}={}\n", OPTIONS[*i].name, OPTIONS[*i].example));
        }
    }
    resolve::parse_text("vars.fio", &text, &ctx)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn printed_jobs_parse_back_the_same_or_the_value_is_refused(
        jobs in prop::collection::vec(job(), 1..4),
        from_file in any::<bool>(),
    ) {
        let expect_ok = jobs.iter().all(|j| {
            carryable_name(j.name.trim()) && j.texts.iter().all(|(_, v)| carryable(v.trim()))
        });
        let parsed = if from_file { via_job_file(&jobs) } else { via_command_line(&jobs) };
        match parsed {
            Ok(set) => {
                prop_assert!(expect_ok, "accepted, but a value cannot be printed: {:?}", jobs);
                let printed = set.to_job_text();
                let again = resolve::parse_text("printed.fio", &printed, &ctx())
                    .map_err(|e| TestCaseError::fail(format!("{e}\n--- printed\n{printed}")))?;
                prop_assert_eq!(&set, &again, "printed:\n{}", printed);
                // The names are the ones given (a `$` keyword in one is
                // replaced by its number).
                for (got, want) in set.jobs.iter().zip(&jobs) {
                    if !want.name.contains('$') {
                        prop_assert_eq!(got.name.as_str(), want.name.trim());
                    }
                }
                prop_assert_eq!(set.jobs.len(), jobs.len());
            }
            Err(e) => {
                prop_assert!(!expect_ok, "refused: {e}\n{:?}", jobs);
                let m = &e.message;
                prop_assert!(
                    m.contains("fio's job-file syntax cannot carry it")
                        // A `${` written on the command line is read as a
                        // variable, which is unset here.
                        || (!from_file && m.contains("${")),
                    "{}", e
                );
            }
        }
    }
}

fn refused(args: &[&str]) -> String {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let cmd = cmdline::parse_args(&args).unwrap();
    match resolve::load(&cmd, &ctx()) {
        Ok(set) => panic!("{args:?} accepted:\n{}", set.to_job_text()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn values_a_job_file_cannot_carry_are_refused_by_name() {
    let e = refused(&["--name=x", "--description=a;b"]);
    assert!(e.contains("`description=a;b`"), "{e}");
    assert!(e.contains("`;`, which starts a comment"), "{e}");
    let e = refused(&["--name=x", "--directory=/mnt/#1"]);
    assert!(e.contains("`#`, which starts a comment"), "{e}");
    let e = refused(&["--name=x", "--filename=a\nb"]);
    // The line break is shown escaped, on one line.
    assert!(
        e.contains("`filename=a\\nb`: the value holds a line break"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
    let e = refused(&["--name=x", "--directory=${"]);
    assert!(e.contains("without a closing"), "{e}");
}

#[test]
fn job_names_a_section_header_cannot_carry_are_refused() {
    for (name, why) in [
        ("a]b", "a bracket"),
        ("[a", "a bracket"),
        ("a;b", "`;`, which starts a comment"),
        ("a\nb", "a line break"),
    ] {
        let e = refused(&[&format!("--name={name}"), "--rw=read"]);
        assert!(e.contains(why), "{name:?}: {e}");
        assert!(e.contains("cannot carry it"), "{name:?}: {e}");
    }
    let mut ctx = ctx();
    ctx.vars.insert("N".into(), "global".into());
    let e = resolve::parse_text("n.fio", "[a]\nname=${N}\n", &ctx).unwrap_err();
    assert!(
        e.to_string().starts_with("n.fio:2: job name `global`"),
        "{e}"
    );
    let e = resolve::parse_text("n.fio", "[a]\nrw=read\nname=x]\n", &ctx).unwrap_err();
    assert!(e.to_string().starts_with("n.fio:3: job name `x]`"), "{e}");
    // A name in [global] names no job (each keeps its section's name, as
    // in fio), so a bracket there is carried by none.
    let set = resolve::parse_text("n.fio", "[global]\nname=y[\n[b]\n", &ctx).unwrap();
    assert_eq!(set.jobs[0].name, "b");
}

#[test]
fn what_can_be_printed_is_kept_exactly() {
    let args: Vec<String> = [
        "--name=  my job 日本 ",
        "--description= quoted \"x\" 'y' = z $ {} ",
        "--filename=a\\:b:c",
        "--directory=$ncpus-dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let set = resolve::load(&cmdline::parse_args(&args).unwrap(), &ctx()).unwrap();
    let printed = set.to_job_text();
    assert!(printed.contains("\n[my job 日本]\n"), "{printed}");
    assert!(
        printed.contains("\ndescription=quoted \"x\" 'y' = z $ {}\n"),
        "{printed}"
    );
    assert!(printed.contains("\nfilename=a\\:b:c\n"), "{printed}");
    let again = resolve::parse_text("p.fio", &printed, &ctx()).unwrap();
    assert_eq!(set, again);
}
