//! `iolab quick [DIR]`: the short suite on the filesystem of DIR (the
//! current directory by default), a status line per test on a terminal,
//! the table at the end, and the result kept in the results database.
//! With `--repeat`, the whole suite runs again in a fresh private
//! directory each time; the result keeps every run, and its metrics carry
//! the runs as samples, so that `diff` can reach a verdict.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use clap::Args;
use iolab_core::progress::Progress;
use iolab_core::quick::{self, Profile, QuickOpts, SuiteTest};
use iolab_report::export::DocFormat;
use iolab_report::quick::render_quick_styled;
use iolab_stats::quick::QuickResult;
use iolab_stats::{RepeatRule, StopReason};
use iolab_store::{Kind, Metric};

use crate::exit::Status;
use crate::interrupt::{self, STOP};
use crate::keep::{self, StoreArgs};
use crate::kinds;
use crate::outargs::OutputArgs;
use crate::output;
use crate::progress::{self, Display};
use crate::repeat::{self, RepeatArgs, Step};
use crate::units;

#[derive(Args, Debug, Clone, Default)]
pub struct QuickArgs {
    /// Directory whose filesystem is tested (default: the current directory)
    pub dir: Option<PathBuf>,
    /// The tests and how they run: iolab (its own nine tests and a
    /// metadata pass), cdm (CrystalDiskMark 8's default profile) or
    /// cdm-nvme (its NVMe SSD profile)
    #[arg(long, default_value = "iolab", value_name = "NAME", value_parser = parse_profile)]
    pub profile: Profile,
    /// With --profile iolab: the I/O time of the whole suite, shared among
    /// its nine tests (default 60s). With a cdm profile: each pass's time
    /// (default 5s, CrystalDiskMark's measure time). 30s, 5m, 500ms; a
    /// bare number is seconds
    #[arg(long, value_name = "TIME", value_parser = units::duration)]
    pub time: Option<Duration>,
    /// Measured passes of each test, the best reported (default: 1; 5
    /// with a cdm profile)
    #[arg(long, value_name = "N")]
    pub passes: Option<u32>,
    /// Pause before each test but the first (default: none; 5s with a
    /// cdm profile, CrystalDiskMark's interval)
    #[arg(long, value_name = "TIME", value_parser = units::duration)]
    pub interval: Option<Duration>,
    /// Test file size, at least 64 MiB (default: 1 GiB with direct I/O,
    /// within a quarter of the free space; 1 GiB with a cdm profile); k,
    /// m, g are powers of 1024, kib, mib, gib powers of 1000, as in fio's
    /// job files
    #[arg(long, value_name = "SIZE", value_parser = units::size)]
    pub size: Option<u64>,
    /// I/O engine that reads and writes data (default: io_uring, else
    /// libaio, else psync)
    #[arg(long, value_name = "NAME")]
    pub engine: Option<String>,
    /// Buffered I/O even where O_DIRECT works
    #[arg(long)]
    pub buffered: bool,
    /// Files of the metadata pass (create, stat, unlink); 0 skips it
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub meta_files: u64,
    /// table (default), markdown, csv, json or html
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub repeat: RepeatArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn run(args: &QuickArgs) -> Result<Status> {
    let bad = |msg: String| {
        eprintln!("iolab quick: {msg}");
        Ok(Status::BadInput)
    };
    let (format, rule) = match checked(args) {
        Ok(v) => v,
        Err(e) => return bad(e),
    };
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("the current directory")?,
    };
    let opts = quick_opts(args, dir);
    let setup = match quick::prepare(&opts) {
        Ok(s) => s,
        Err(e) => return bad(e.to_string()),
    };
    for s in &setup.stale {
        eprintln!("iolab quick: {s}");
    }
    let store = match args.store.open() {
        Ok(s) => s,
        Err(e) => {
            quick::discard(&setup);
            return bad(crate::said_once(&e));
        }
    };

    // A second Ctrl-C removes the private directory of the run under way.
    let work = Arc::new(Mutex::new(setup.work.clone()));
    let last = Arc::clone(&work);
    interrupt::watch(Some(Box::new(move || {
        if let Ok(w) = last.lock() {
            let _ = iolab_core::quickdir::remove(&w);
        }
    })));
    let status = StatusLine::new(&setup, &rule);
    let watch =
        |i: usize, test: &SuiteTest, p: &Progress, done: &AtomicBool| status.test(i, test, p, done);
    // A job file that replays the suite (`iolab rerun ID`).
    let job_text = match quick::replay_job_file(&setup) {
        Ok(t) => t,
        Err(e) => {
            quick::discard(&setup);
            return bad(e.to_string());
        }
    };
    let mut first = Some(setup);
    let mut dir_tested = PathBuf::new();
    let once = |i: u32| {
        // Each run after the first works in a fresh private directory.
        let setup = match first.take() {
            Some(s) => s,
            None => match quick::prepare(&opts) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("iolab quick: run {}: {e}", i + 1);
                    return Step::Stop(StopReason::Failed);
                }
            },
        };
        if let Ok(mut w) = work.lock() {
            w.clone_from(&setup.work);
        }
        status.run_index.store(i, Ordering::Relaxed);
        dir_tested.clone_from(&setup.dir);
        run_once(&setup, &watch)
    };
    let (runs, outcome) = repeat::repeat(&rule, &STOP, once, figures);
    status.display.clear();
    let result = if rule.repeats() && !runs.is_empty() {
        iolab_stats::quick::combine(runs, outcome)
    } else if let Some(r) = runs.into_iter().next() {
        r
    } else {
        return Ok(Status::Failed);
    };
    print_and_keep(args, format, &result, &dir_tested, job_text, store)
}

/// The options checked before anything is made: output format, repeat rule,
/// output file.
fn checked(args: &QuickArgs) -> Result<(DocFormat, RepeatRule), String> {
    let format = args.out.table_format()?;
    let rule = args.repeat.rule()?;
    output::check_opt(args.out.output.as_deref(), &args.store.db_files())?;
    Ok((format, rule))
}

/// The suite's options: the command line's, the profile's defaults for the rest.
fn quick_opts(args: &QuickArgs, dir: PathBuf) -> QuickOpts {
    let (default_time, default_passes, default_interval) = args.profile.defaults();
    QuickOpts {
        dir,
        profile: args.profile,
        time: args.time.unwrap_or(default_time),
        passes: args.passes.unwrap_or(default_passes),
        interval: args.interval.unwrap_or(default_interval),
        size: args.size,
        engine: args.engine.clone(),
        buffered: args.buffered,
        meta_files: args.meta_files,
    }
}

/// One run of the suite, described (filesystem, device, provenance) and
/// judged: the last one when interrupted or when a test failed.
fn run_once(setup: &quick::QuickSetup, watch: quick::Watch) -> Step<QuickResult> {
    match quick::run(setup, &STOP, watch) {
        Ok(mut r) => {
            (r.fs_type, r.device) = quick::describe(&setup.dir);
            let prov = keep::provenance(&setup.dir);
            if let Some(note) = prov.emulation_note() {
                r.notes.push(note);
            }
            r.provenance = Some(prov);
            if r.interrupted {
                Step::Last(r, StopReason::Interrupted)
            } else if r.nothing_measured() || r.tests.iter().any(|t| t.error.is_some()) {
                Step::Last(r, StopReason::Failed)
            } else {
                Step::Done(r)
            }
        }
        Err(e) => {
            eprintln!("iolab quick: {e}");
            Step::Stop(StopReason::Failed)
        }
    }
}

/// Prints the result, keeps a whole suite that measured something, and says
/// how it ended.
fn print_and_keep(
    args: &QuickArgs,
    format: DocFormat,
    result: &QuickResult,
    dir_tested: &std::path::Path,
    job_text: String,
    store: Option<iolab_store::Store>,
) -> Result<Status> {
    let mut record = keep::record(Kind::Quick, dir_tested, &args.store);
    if let Some(p) = &result.provenance {
        record.provenance.clone_from(p);
    }
    record.result_json = serde_json::to_string(result)?;
    record.job_text = job_text;
    record.metrics = metrics(result);
    record.warnings = iolab_store::quick_flags(result);
    record.repeat = result.repeat.clone();
    let text = match format {
        DocFormat::Html => kinds::page(iolab_report::kinds::quick::document(result), None, &record),
        f => render_quick_styled(result, f, args.out.style()),
    };
    output::emit(args.out.output.as_deref(), &text)?;
    // Only a whole suite that measured something is kept.
    let kept = if result.interrupted || result.nothing_measured() {
        keep::Kept::NotAsked
    } else {
        keep::insert(store, &record)
    };
    if result.interrupted {
        eprintln!("iolab quick: interrupted; the results above are partial and were not stored");
        return Ok(Status::Failed);
    }
    if result.nothing_measured() {
        eprintln!("iolab quick: every test failed; the result was not stored");
        return Ok(Status::Failed);
    }
    if result.tests.iter().any(|t| t.error.is_some()) {
        return Ok(Status::Failed);
    }
    Ok(kept.status())
}

/// The status line of a suite and its repeats: one step per test and one for
/// the metadata pass, in every run, with the time left.
struct StatusLine {
    display: Display,
    /// The run under way (0 for the first).
    run_index: AtomicU32,
    /// The phase of a run's first test while its file is laid out.
    layout: String,
    tests: usize,
    per_run: u64,
    runs: u64,
    /// A test's whole time in seconds: its passes (and a preparation run),
    /// the pause before it.
    test_s: f64,
    suite_time: f64,
    meta_files: u64,
}

impl StatusLine {
    fn new(setup: &quick::QuickSetup, rule: &RepeatRule) -> StatusLine {
        let tests = setup.profile.tests().len();
        let per_run = tests as u64 + u64::from(setup.meta_files > 0);
        let runs = u64::from(rule.max_runs());
        let runs_per_test = setup.passes + u32::from(setup.profile.is_cdm());
        let test_s = (setup.test_time * runs_per_test + setup.interval).as_secs_f64();
        StatusLine {
            display: Display::new("quick", per_run * runs),
            run_index: AtomicU32::new(0),
            layout: format!("laying out the {} MiB test file", setup.file_bytes >> 20),
            tests,
            per_run,
            runs,
            test_s,
            suite_time: test_s * tests as f64,
            meta_files: setup.meta_files,
        }
    }

    /// Test `i` of the run under way on the display until it is over, then
    /// the metadata pass's step after the last test.
    fn test(&self, i: usize, test: &SuiteTest, p: &Progress, done: &AtomicBool) {
        let display = &self.display;
        if !display.drawn() {
            return;
        }
        let run = u64::from(self.run_index.load(Ordering::Relaxed));
        let step = run * self.per_run + i as u64 + 1;
        let tests = self.tests;
        let label = format!("{} {}", test.name, test.op());
        // Each run lays out a fresh file for its first test.
        let layout = (i == 0).then_some(self.layout.as_str());
        match layout {
            Some(phase) => display.step(step, &format!("{label}: {phase}")),
            None => display.step(step, &label),
        }
        show_test(display, &label, p, done, layout, |in_test: f64| {
            // This test's rest, the tests after it, the runs after this one.
            let rest = (self.test_s - in_test).max(0.0)
                + (tests - i - 1) as f64 * self.test_s
                + (self.runs - run - 1) as f64 * self.suite_time;
            Duration::from_secs_f64(rest)
        });
        if i + 1 == tests && self.per_run > tests as u64 && !STOP.load(Ordering::Relaxed) {
            display.step(
                step + 1,
                &format!(
                    "metadata pass: create, stat and unlink {} files",
                    self.meta_files
                ),
            );
        }
    }
}

fn parse_profile(s: &str) -> Result<Profile, String> {
    s.parse()
}

/// Every test's IOPS in each run so far: what `--repeat auto` judges.
fn figures(runs: &[QuickResult]) -> Vec<(String, Vec<f64>)> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .tests
        .iter()
        .map(|t| {
            let values = runs
                .iter()
                .filter_map(|r| r.tests.iter().find(|u| u.name == t.name && u.op == t.op))
                .filter(|u| !u.failed())
                .map(|u| u.iops)
                .collect();
            (format!("{} {} IOPS", t.name, t.op), values)
        })
        .collect()
}

/// The headline metrics of each test that produced figures (MB/s, IOPS,
/// p50 and p99 completion latency), for history, export and diff; a
/// repeated suite's carry every run's value as samples.
fn metrics(r: &QuickResult) -> Vec<Metric> {
    let mut out = Vec::new();
    let repeated = !r.runs.is_empty();
    for (i, t) in r.tests.iter().enumerate().filter(|(_, t)| !t.failed()) {
        let name = format!("{} {}", t.name, t.op);
        let with_runs = |m: Metric, f: fn(&iolab_stats::quick::QuickTest) -> f64| {
            if repeated {
                m.with_samples(r.runs_of(i, f))
            } else {
                m
            }
        };
        if t.bw_bytes > 0.0 {
            out.push(with_runs(
                Metric::new(format!("{name} MB/s"), t.bw_bytes / 1e6, "MB/s"),
                |u| u.bw_bytes / 1e6,
            ));
        }
        out.push(with_runs(
            Metric::new(format!("{name} IOPS"), t.iops, "IOPS").with_windows(
                t.sample_count,
                t.sample_mean,
                t.sample_stdev,
            ),
            |u| u.iops,
        ));
        out.push(with_runs(
            Metric::new(format!("{name} p50"), t.p50_ns as f64 / 1e3, "us"),
            |u| u.p50_ns as f64 / 1e3,
        ));
        out.push(with_runs(
            Metric::new(format!("{name} p99"), t.p99_ns as f64 / 1e3, "us"),
            |u| u.p99_ns as f64 / 1e3,
        ));
    }
    out
}

/// One test on the display until it is over: while its file is laid out
/// (`layout`, until the first byte moves) that phase, then the suite's
/// time left (`left`, given the seconds the test has measured so far)
/// and the test's MB/s and IOPS over the last half second.
fn show_test(
    display: &Display,
    label: &str,
    p: &Progress,
    done: &AtomicBool,
    layout: Option<&str>,
    left: impl Fn(f64) -> Duration,
) {
    let mut last = p.snapshot();
    let mut last_at = Instant::now();
    let mut measuring_since: Option<Instant> = None;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        if last_at.elapsed() < Duration::from_millis(500) {
            continue;
        }
        let now = p.snapshot();
        let moved: u64 = now.bytes.iter().sum();
        if moved == 0 {
            if let Some(phase) = layout {
                display.say(&format!("{label}: {phase}"));
            }
        } else {
            let since = *measuring_since.get_or_insert_with(Instant::now);
            let dt = last_at.elapsed().as_secs_f64();
            let bytes = moved - last.bytes.iter().sum::<u64>();
            let ios: u64 = now.ios.iter().sum::<u64>() - last.ios.iter().sum::<u64>();
            display.say(&format!(
                "suite {} left: {label} {:.1} MB/s {:.0} IOPS",
                progress::clock(left(since.elapsed().as_secs_f64())),
                bytes as f64 / dt / 1e6,
                ios as f64 / dt,
            ));
        }
        (last, last_at) = (now, Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_stats::quick::{QuickResult, QuickTest};

    #[test]
    fn a_failed_test_gives_no_metrics() {
        let r = QuickResult {
            tests: vec![
                QuickTest {
                    name: "SEQ1M Q8T1".into(),
                    op: "read".into(),
                    bw_bytes: 5e8,
                    iops: 476.8,
                    p50_ns: 21_000,
                    p99_ns: 30_000,
                    ..QuickTest::default()
                },
                QuickTest {
                    name: "SEQ1M Q8T1".into(),
                    op: "write".into(),
                    error: Some("No space left on device".into()),
                    ..QuickTest::default()
                },
            ],
            ..QuickResult::default()
        };
        let names: Vec<String> = metrics(&r).into_iter().map(|m| m.name).collect();
        assert_eq!(
            names,
            [
                "SEQ1M Q8T1 read MB/s",
                "SEQ1M Q8T1 read IOPS",
                "SEQ1M Q8T1 read p50",
                "SEQ1M Q8T1 read p99"
            ]
        );
        let p50 = metrics(&r).into_iter().find(|m| m.name.ends_with("p50"));
        assert_eq!(p50.map(|m| (m.value, m.unit)), Some((21.0, "us".into())));
    }
}
