//! `iolab compare`: the filesystem lab's command. Parses the targets and
//! flags, runs the campaign with a Ctrl-C handler (the first stops the
//! workloads and cleans up; a second removes what the state file lists
//! and exits), shows progress on a terminal, and prints the comparison
//! table. `--cleanup` removes what killed runs left; `--list-suites`
//! shows the built-in workloads.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use iolab_lab::bcache::CacheMode;
use iolab_lab::campaign::{self, Options, Progress};
use iolab_lab::support::{self, Support};
use iolab_lab::target::{
    assign_labels, parse_dir_target, parse_fs_list, stack_bcache, TargetKind, TargetSpec,
};
use iolab_lab::{cleanup, fit, suite, LabError};
use iolab_stats::RepeatRule;
use iolab_store::{Kind, Metric};

use crate::interrupt;
use crate::keep::{self, StoreArgs};
use crate::kinds;
use crate::outargs::OutputArgs;
use crate::output::{self, Out};
use crate::progress::{self, Display};
use crate::units;
use iolab_report::compare::{render_comparison_styled, render_runs};
use iolab_report::export::DocFormat;

use crate::exit::Status;

/// Formats, mounts and benchmarks filesystems side by side.
#[derive(Args, Debug)]
#[command(after_help = "\
Targets:
  --fs ext4,xfs,btrfs
      a loop image formatted with each filesystem
  --fs 'btrfs:-m single@compress=zstd'
      mkfs options after `:`, mount options after `@`
  --fs 'zstd=btrfs@compress=zstd,noatime'
      LABEL= names the column; a target with options takes the rest of
      its --fs value, commas included
  --target A=/mnt/a --target B=/mnt/b
      existing directories, measured where they are (no root needed)
  --device /dev/sdX --destroy-data --fs ext4,xfs
      format a real device for each filesystem instead of loop images
  --fs ext4 --bcache writethrough,writeback,off
      ext4 on a bcache device, a cache image (--cache-size) in front of
      the backing image, once per cache mode; off: the cache detached
  --fs ext4 --bcache writeback,off --device /dev/HDD --cache-device /dev/SSD --destroy-data
      the same on real devices

Formatting, mounting, loop devices and dropping caches need root.
See docs/compare.md.")]
pub struct CompareArgs {
    /// Filesystems to format and compare (comma list; repeatable).
    #[arg(long = "fs", value_name = "LIST")]
    fs: Vec<String>,
    /// An existing directory to compare, as NAME=DIR (repeatable).
    #[arg(long = "target", value_name = "NAME=DIR")]
    targets: Vec<String>,
    /// A block device to format for each --fs (destroys its data).
    #[arg(long, value_name = "DEV")]
    device: Option<PathBuf>,
    /// Confirms that --device may be formatted.
    #[arg(long)]
    destroy_data: bool,
    /// Stacks each --fs target on bcache, once per mode (comma list of
    /// writethrough, writeback, writearound, off: off is the cache
    /// detached): a cache device in front of the backing one.
    #[arg(long, value_name = "MODES")]
    bcache: Option<String>,
    /// Size of each bcache target's cache image [default: a quarter of
    /// --size]; sizes as --size.
    #[arg(long, value_name = "SIZE", value_parser = units::size)]
    cache_size: Option<u64>,
    /// A block device to use as the bcache cache instead of an image
    /// (destroys its data; needs --destroy-data).
    #[arg(long, value_name = "DEV")]
    cache_device: Option<PathBuf>,
    /// Size of each loop image (and bound of the workload files); k, m, g
    /// are powers of 1024, kib, mib, gib powers of 1000, as in fio's job
    /// files.
    #[arg(long, default_value = "4G", value_name = "SIZE", value_parser = units::size)]
    size: u64,
    /// Directory for images, mount points and the state file
    /// (default: a fresh iolab-lab-* directory in the temp dir).
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Runs of each workload and cold mount, or `auto`: each workload
    /// until every figure's 95% interval is within --repeat-width (or a
    /// budget is spent), mkfs and cold mounts 3 times; cells show the
    /// geometric mean of the runs.
    #[arg(long, default_value = "3", value_name = "N|auto")]
    repeat: String,
    /// With --repeat auto: the interval's half-width, relative to the
    /// geometric mean of the runs (default 5%)
    #[arg(long, value_name = "PCT")]
    repeat_width: Option<String>,
    /// With --repeat auto: at most this many runs of a workload (default 10)
    #[arg(long, value_name = "N")]
    repeat_max: Option<String>,
    /// With --repeat auto: start no run of a workload that would end after
    /// this much time (30s, 5m; seconds without a unit)
    #[arg(long, value_name = "TIME")]
    repeat_time: Option<String>,
    /// Time of each workload run, in whole seconds (5s, 1m; a bare
    /// number is seconds).
    #[arg(long, default_value = "5s", value_name = "TIME", value_parser = units::duration)]
    runtime: Duration,
    /// Built-in workload suite (see --list-suites); default `studies`
    /// unless --job is given.
    #[arg(long, value_name = "NAME")]
    suite: Option<String>,
    /// A fio job file to run on each target (repeatable); its files go
    /// into the target's directory.
    #[arg(long = "job", value_name = "FILE")]
    jobs: Vec<PathBuf>,
    /// Lists the built-in suites with their jobs.
    #[arg(long)]
    list_suites: bool,
    /// Target that the other columns are compared with (ratios).
    #[arg(long, value_name = "NAME")]
    baseline: Option<String>,
    /// Also prints every run's value (table and markdown formats).
    #[arg(long)]
    show_runs: bool,
    /// Removes what killed runs left (mounts, loop devices, images) in
    /// --workdir, or in every iolab-lab-* directory of the temp dir.
    #[arg(long)]
    cleanup: bool,
    /// table (default), markdown, csv, json or html
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    store: StoreArgs,
}

/// The workdir in use, for the second Ctrl-C's cleanup.
static WORKDIR: OnceLock<PathBuf> = OnceLock::new();

pub fn run(args: &CompareArgs) -> Result<Status> {
    if args.list_suites {
        output::emit(None, &list_suites())?;
        return Ok(Status::Success);
    }
    if args.cleanup {
        return clean(args.workdir.as_deref());
    }
    let (format, targets, opts) = match checked(args) {
        Ok(v) => v,
        Err(msg) => return Ok(bad(msg)),
    };
    let store = match args.store.open() {
        Ok(s) => s,
        Err(e) => return Ok(bad(crate::said_once(&e))),
    };
    watch_interrupts();
    let display = Display::new("compare", 0);
    let mut steps = Steps::new(&targets, &opts);
    display.set_steps(steps.total);
    let mut show = |p: Progress| steps.show(&p, &display);
    let mut outcome = match campaign::run(&targets, &opts, &interrupt::STOP, &mut show) {
        Ok(o) => o,
        Err(
            e @ (LabError::Refused { .. }
            | LabError::NotRoot { .. }
            | LabError::BadTarget { .. }
            | LabError::BadWorkdir { .. }
            | LabError::Untrusted { .. }),
        ) => return Ok(bad(e.to_string())),
        Err(e) => return Err(e.into()),
    };
    display.clear();
    print_and_keep(args, format, &targets, &opts, &mut outcome, store)
}

/// The options checked, in order, before anything is created (and before
/// the output file is opened): the output format, the targets and the
/// campaign's options; the first problem's message otherwise.
fn checked(args: &CompareArgs) -> Result<(DocFormat, Vec<TargetSpec>, Options), String> {
    let format = args.out.table_format()?;
    output::check_opt(args.out.output.as_deref(), &args.store.db_files())?;
    let size = args.size;
    if size == 0 {
        return Err("--size 0: the loop images need a size".into());
    }
    let runtime = args.runtime;
    if runtime.subsec_nanos() != 0 || runtime.is_zero() {
        return Err(format!(
            "--runtime {runtime:?}: each workload runs whole seconds, 1s or more"
        ));
    }
    let cache_size = match args.cache_size {
        None => (size / 4).max(1 << 20),
        Some(0) => return Err("--cache-size 0: the cache image needs a size".into()),
        Some(s) => s,
    };
    if args.bcache.is_none() && (args.cache_size.is_some() || args.cache_device.is_some()) {
        return Err(
            "--cache-size and --cache-device are for bcache targets: give --bcache MODES too"
                .into(),
        );
    }
    // --repeat N, or auto (each workload until its figures' intervals are
    // within the width or a budget is spent; mkfs and cold mounts then
    // run the fewest runs auto makes).
    let (repeat, auto) = match crate::repeat::parse_rule(
        Some(&args.repeat),
        args.repeat_width.as_deref(),
        args.repeat_max.as_deref(),
        args.repeat_time.as_deref(),
    ) {
        Ok(RepeatRule::Times { runs }) => (runs, None),
        Ok(auto) => (iolab_stats::repeat_rule::MIN_RUNS, Some(auto)),
        Err(e) => return Err(e),
    };
    let suite = choose_suite(args.suite.as_deref(), &args.jobs)?;
    let targets = match targets(args) {
        Ok(t) if t.is_empty() => {
            return Err("nothing to compare: give --fs LIST or --target NAME=DIR".into())
        }
        Ok(t) => t,
        Err(e) => return Err(e.to_string()),
    };
    let opts = Options {
        workdir: args.workdir.clone(),
        size,
        repeat,
        auto,
        runtime_s: runtime.as_secs(),
        suite,
        device: args.device.clone(),
        cache_device: args.cache_device.clone(),
        cache_size,
        destroy_data: args.destroy_data,
        baseline: args.baseline.clone(),
        host: iolab_core::probe::keyword_host(),
    };
    // Refusals come before anything is created (and before the output
    // file is opened).
    if let Err(e) = campaign::preflight(&targets, &opts) {
        return Err(e.to_string());
    }
    // The loop images must hold the suite's largest workload and be
    // large enough for each mkfs.
    let images: Vec<&str> = targets.iter().filter_map(TargetSpec::fs).collect();
    if opts.device.is_none() && !images.is_empty() {
        fit::check(&opts.suite, opts.size, &images, opts.host)?;
    }
    if let Some(msg) = all_skipped(&targets) {
        return Err(msg);
    }
    Ok((format, targets, opts))
}

/// Prints the comparison (and its runs with --show-runs), keeps it unless
/// it was interrupted or every target was skipped, and says how it ended.
fn print_and_keep(
    args: &CompareArgs,
    format: DocFormat,
    targets: &[TargetSpec],
    opts: &Options,
    outcome: &mut campaign::Outcome,
    store: Option<iolab_store::Store>,
) -> Result<Status> {
    if let Some(host) = outcome.comparison.host.as_mut() {
        host.time = iolab_store::time::now_rfc3339();
    }
    for p in &outcome.cleanup.problems {
        eprintln!("iolab: cleanup: {p}");
    }
    let c = &outcome.comparison;
    let mut record = compare_record(targets, args.device.as_deref(), c, &args.store);
    record.result_json = serde_json::to_string(c)?;
    record.job_text = opts
        .suite
        .workloads
        .iter()
        .map(|w| w.job.clone())
        .collect::<Vec<_>>()
        .join("\n");
    record.metrics = compare_metrics(c);
    record.warnings = iolab_store::comparison_flags(c);
    let mut out = Out::open(args.out.output.as_deref())?;
    let style = args.out.style();
    out.write(&match format {
        DocFormat::Html => kinds::page(iolab_report::kinds::compare::document(c), None, &record),
        f => render_comparison_styled(c, f, style),
    })?;
    if args.show_runs && matches!(format, DocFormat::Text | DocFormat::Markdown) {
        out.write("\n")?;
        out.write(&render_runs(c, format, style))?;
    }
    if c.interrupted {
        eprintln!("iolab: interrupted; the comparison is partial");
        return Ok(Status::Failed);
    }
    if c.targets.iter().all(|t| t.skipped.is_some()) {
        eprintln!("iolab: nothing was compared: every target was skipped; nothing was stored");
        return Ok(Status::BadInput);
    }
    let kept = keep::insert(store, &record);
    if c.targets.iter().any(|t| t.failed.is_some()) || !outcome.cleanup.problems.is_empty() {
        return Ok(Status::Failed);
    }
    Ok(kept.status())
}

/// Refuses a comparison in which every target would be skipped (each a
/// filesystem this host cannot make), naming each reason and the closest
/// filesystem the host can make (`EXT4`: did you mean `ext4`?). A mix of
/// skipped and runnable targets runs, the skipped ones as columns with
/// their reason.
fn all_skipped(targets: &[TargetSpec]) -> Option<String> {
    let mut reasons = Vec::new();
    let mut ready: Option<Vec<String>> = None;
    for t in targets {
        // A directory target always runs.
        let fs = t.fs()?;
        let Support::Missing(why) = support::check_target(t)? else {
            return None;
        };
        let ready = ready.get_or_insert_with(makeable_filesystems);
        // A name the host does not know may be a misspelt one it does.
        let hint = matches!(support::check(fs), Support::Missing(_))
            .then(|| {
                iolab_spec::options::suggest_word(
                    &fs.to_ascii_lowercase(),
                    ready.iter().map(String::as_str),
                )
            })
            .flatten()
            .map(|s| format!(" (did you mean `{s}`?)"))
            .unwrap_or_default();
        reasons.push(format!("target `{}`: {why}{hint}", t.label));
    }
    let ready = ready.unwrap_or_default();
    let can = if ready.is_empty() {
        "this host can make none (no mkfs.NAME on PATH that the kernel supports)".to_string()
    } else {
        format!("this host can make {}", ready.join(", "))
    };
    Some(format!(
        "nothing to compare: every target would be skipped; nothing was run or stored\n  {}\n  ({can})",
        reasons.join("\n  ")
    ))
}

/// The filesystems this host can format and mount: a `mkfs.NAME` on PATH
/// and NAME known to the kernel; sorted.
fn makeable_filesystems() -> Vec<String> {
    let mut names = Vec::new();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(fs) = name.strip_prefix("mkfs.") {
                if !fs.is_empty() && !names.iter().any(|n| n == fs) {
                    names.push(fs.to_string());
                }
            }
        }
    }
    names.retain(|fs| matches!(support::check(fs), Support::Ready { .. }));
    names.sort();
    names
}

/// The workloads: the `--suite` named, the default suite when neither
/// `--suite` nor `--job` is given, and each `--job` file (under a name
/// no other workload has).
fn choose_suite(name: Option<&str>, jobs: &[PathBuf]) -> Result<suite::Suite, String> {
    let name = match name {
        Some(n) => Some(n),
        None if jobs.is_empty() => Some(suite::DEFAULT),
        None => None,
    };
    // The old name of `basic`, kept working with a word of warning.
    let name = match name {
        Some(suite::OLD_BASIC) => {
            eprintln!(
                "iolab: --suite quick is now --suite basic (`iolab quick` is the quick suite \
                 of one directory); running basic"
            );
            Some("basic")
        }
        other => other,
    };
    let mut chosen = match name {
        Some(n) => suite::builtin(n).ok_or_else(|| {
            format!(
                "--suite `{n}`: no such suite (the suites: {})",
                suite::NAMES.join(", ")
            )
        })?,
        None => suite::Suite {
            name: "jobs".into(),
            about: "job files given with --job".into(),
            workloads: Vec::new(),
        },
    };
    for path in jobs {
        chosen.add(suite::Workload::from_file(path).map_err(|e| e.to_string())?);
    }
    Ok(chosen)
}

/// The stored record of a comparison, found by `history --target` and
/// `--fs` through the targets it compared (skipped ones left out): its
/// target is `LABEL=WHERE` per target, joined with `, ` (WHERE is the
/// directory of a `--target`, the `--device`, or `loop image`), and its
/// filesystem type the filesystems, comma-separated in target order, each
/// once (a directory target's is that of the mount holding it). The
/// provenance has the host's facts; its mount and device facts are those
/// of the one directory target when there is just one, the `--device`'s
/// name, or none.
fn compare_record(
    targets: &[TargetSpec],
    device: Option<&Path>,
    c: &iolab_stats::Comparison,
    store: &StoreArgs,
) -> iolab_store::Record {
    let compared: Vec<&TargetSpec> = targets
        .iter()
        .filter(|t| {
            c.targets
                .iter()
                .any(|col| col.label == t.label && col.skipped.is_none())
        })
        .collect();
    let mut places = Vec::new();
    let mut fs_types: Vec<String> = Vec::new();
    let mut dirs = Vec::new();
    for t in &compared {
        let (place, fs) = match &t.kind {
            TargetKind::Dir { path } => {
                let p = keep::provenance(path);
                dirs.push(p.clone());
                (p.target, p.fs_type)
            }
            TargetKind::Format { fs, .. } => (
                device
                    .map(|d| d.display().to_string())
                    .unwrap_or_else(|| "loop image".into()),
                fs.clone(),
            ),
        };
        places.push(format!("{}={place}", t.label));
        if !fs.is_empty() && !fs_types.contains(&fs) {
            fs_types.push(fs);
        }
    }
    let mut prov = match (dirs.len(), compared.len()) {
        (1, 1) => dirs.remove(0),
        _ => iolab_store::Provenance {
            block_device: device
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            ..keep::host_provenance()
        },
    };
    prov.target = places.join(", ");
    prov.fs_type = fs_types.join(",");
    iolab_store::Record {
        target: prov.target.clone(),
        provenance: prov,
        tags: store.tags.clone(),
        command_line: keep::command_line(),
        ..iolab_store::Record::new(Kind::Compare)
    }
}

/// Each target's median of each metric, with the repeats as samples, for
/// history and diff.
fn compare_metrics(c: &iolab_stats::Comparison) -> Vec<Metric> {
    let mut out = Vec::new();
    for t in c
        .targets
        .iter()
        .filter(|t| t.skipped.is_none() && t.failed.is_none())
    {
        for (key, cell) in &t.values {
            let Some(m) = c.metrics.iter().find(|m| &m.key == key) else {
                continue;
            };
            if let Some(med) = cell.median() {
                out.push(
                    Metric::new(format!("{} {}", t.label, m.label), med, m.unit.clone())
                        .with_samples(cell.runs.clone()),
                );
            }
        }
    }
    out
}

fn bad(msg: String) -> Status {
    eprintln!("iolab: {msg}");
    Status::BadInput
}

fn targets(args: &CompareArgs) -> Result<Vec<TargetSpec>, LabError> {
    let mut v = Vec::new();
    for f in &args.fs {
        v.extend(parse_fs_list(f)?);
    }
    for t in &args.targets {
        v.push(parse_dir_target(t)?);
    }
    assign_labels(&mut v)?;
    if let Some(modes) = &args.bcache {
        let modes = CacheMode::parse_list(modes).map_err(|reason| LabError::BadTarget {
            spec: format!("--bcache {modes}"),
            reason,
        })?;
        v = stack_bcache(v, &modes)?;
        assign_labels(&mut v)?;
    }
    Ok(v)
}

/// The steps of a campaign on the display: per target, its preparation
/// (mkfs and first mount, cold mounts, read speed) for a filesystem the
/// lab formats, then every run of every workload (with `--repeat auto`,
/// its most runs; a workload that stops earlier skips ahead).
struct Steps {
    total: u64,
    done: u64,
    /// The steps of a formatted target (a skipped one takes them away).
    format_steps: u64,
    /// The target under way and its place among them.
    target: String,
}

/// What a formatted target does before its workloads.
const PREP_STEPS: u64 = 3;

impl Steps {
    fn new(targets: &[TargetSpec], opts: &Options) -> Steps {
        let runs = u64::from(opts.auto.map_or(opts.repeat, |r| r.max_runs()));
        let workload_steps = opts.suite.workloads.len() as u64 * runs;
        let format_steps = PREP_STEPS + workload_steps;
        let total = targets
            .iter()
            .map(|t| match t.kind {
                TargetKind::Format { .. } => format_steps,
                TargetKind::Dir { .. } => workload_steps,
            })
            .sum();
        Steps {
            total,
            done: 0,
            format_steps,
            target: String::new(),
        }
    }

    fn show(&mut self, p: &Progress, display: &Display) {
        match p {
            Progress::Workdir(dir) => {
                let _ = WORKDIR.set(dir.to_path_buf());
            }
            Progress::Stale {
                removed,
                left_alone,
            } => {
                for r in removed.iter() {
                    display.println(&format!("iolab: a killed run's leftovers: {r}"));
                }
                for l in left_alone.iter() {
                    display.println(&format!("iolab: {l}"));
                }
            }
            Progress::Skipped { label, reason } => {
                display.println(&format!("iolab: {label}: skipped: {reason}"));
                // Its steps will not come.
                self.total = self.total.saturating_sub(self.format_steps);
                display.set_steps(self.total);
            }
            Progress::Failed { label, error } => {
                display.println(&format!("iolab: {label}: failed: {error}"));
            }
            Progress::Target {
                label,
                index,
                total,
            } => {
                self.target = if *total > 1 {
                    format!("{label} ({index}/{total})")
                } else {
                    label.to_string()
                };
            }
            Progress::Step { what, .. } => {
                self.done += 1;
                display.step(self.done, &format!("{}: {what}", self.target));
            }
            Progress::Workload {
                workload,
                run,
                repeat,
                remaining,
                ..
            } => {
                self.done += 1;
                display.step(
                    self.done,
                    &format!(
                        "{} left: {}: {workload} run {run}/{repeat}",
                        progress::clock(*remaining),
                        self.target
                    ),
                );
            }
        }
    }
}

/// Ctrl-C: the first stops the campaign at its next step (which cleans
/// up); a second removes what the run created, from the state file, and
/// exits at once.
fn watch_interrupts() {
    interrupt::watch(Some(Box::new(|| {
        let Some(dir) = WORKDIR.get() else { return };
        eprintln!("iolab: removing what this run created");
        // The workers saw STOP at their next I/O; give them a moment to
        // close their files so the unmount is clean.
        std::thread::sleep(Duration::from_millis(300));
        // The campaign's thread cannot write the state file from here on;
        // the process exits holding the guard.
        let _frozen = iolab_lab::state::freeze();
        if let Ok(Some(mut state)) = iolab_lab::state::State::load(dir) {
            state.keep_in_memory();
            let r = cleanup::clean(&mut state);
            for p in r.problems {
                eprintln!("iolab: cleanup: {p}");
            }
        }
    })));
}

/// `--cleanup`: the given workdir, or every lab workdir in the temp dir.
fn clean(workdir: Option<&Path>) -> Result<Status> {
    let report = match workdir {
        Some(w) => match cleanup::clean_workdir(w) {
            Ok(Some(r)) => r,
            Ok(None) => {
                output::emit(
                    None,
                    &format!("nothing to clean in {} (no state file)\n", w.display()),
                )?;
                return Ok(Status::Success);
            }
            Err(e @ LabError::Untrusted { .. }) => {
                eprintln!("iolab: {e}");
                return Ok(Status::BadInput);
            }
            Err(e) => {
                eprintln!("iolab: {e}");
                return Ok(Status::Failed);
            }
        },
        None => cleanup::clean_stale(&std::env::temp_dir(), None),
    };
    let mut text: String = report.removed.iter().map(|r| format!("{r}\n")).collect();
    if report.removed.is_empty() {
        text.push_str("nothing left to clean\n");
    }
    output::emit(None, &text)?;
    for l in &report.left_alone {
        eprintln!("iolab: {l}");
    }
    for p in &report.problems {
        eprintln!("iolab: cleanup: {p}");
    }
    if !report.problems.is_empty() && !iolab_lab::is_root() {
        eprintln!("iolab: unmounting and detaching loop devices needs root; run `iolab compare --cleanup` as root");
    }
    Ok(if report.problems.is_empty() {
        Status::Success
    } else {
        Status::Failed
    })
}

/// The smallest loop image a suite fits, for the suite's line: NILFS2's
/// too where it is larger (it reclaims no space during a comparison, so
/// its image holds every file the suite lays out).
fn suite_minimums(su: &suite::Suite, host: iolab_spec::Host) -> String {
    let Some(m) = fit::minimum(su, host) else {
        return String::new();
    };
    match fit::minimum_for(su, Some("nilfs2"), host).filter(|&n| n > m) {
        Some(n) => format!(
            " (images of at least {} MiB; nilfs2: {} MiB)",
            m >> 20,
            n >> 20
        ),
        None => format!(" (images of at least {} MiB)", m >> 20),
    }
}

fn list_suites() -> String {
    let mut s = String::new();
    for name in suite::NAMES {
        let Some(su) = suite::builtin(name) else {
            continue;
        };
        let least = suite_minimums(&su, iolab_core::probe::keyword_host());
        s.push_str(&format!("{}: {}{least}\n", su.name, su.about));
        for w in &su.workloads {
            s.push_str(&format!("\n  {}: {}\n", w.name, w.about));
            for line in w.job.lines() {
                s.push_str(&format!("    {line}\n"));
            }
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_suite_is_the_studies() {
        let s = choose_suite(None, &[]).unwrap();
        assert_eq!(s.name, "studies");
        assert!(s.workloads.iter().any(|w| w.name == "stonewall-4"));
        assert_eq!(choose_suite(Some("basic"), &[]).unwrap().name, "basic");
        // The old name still works.
        assert_eq!(choose_suite(Some("quick"), &[]).unwrap().name, "basic");
        let e = choose_suite(Some("nope"), &[]).unwrap_err();
        assert!(
            e.contains("the suites: studies, basic, meta, bs-sweep"),
            "{e}"
        );
        // Job files alone: only them, under names of their own.
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("j1"), d.path().join("j2"));
        for dir in [&a, &b] {
            std::fs::create_dir(dir).unwrap();
            std::fs::write(dir.join("x.fio"), "[x]\nrw=write\nsize=64k\n").unwrap();
        }
        let s = choose_suite(None, &[a.join("x.fio"), b.join("x.fio")]).unwrap();
        let names: Vec<&str> = s.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["x", "x#2"]);
        assert_eq!(
            s.workloads[1].source.as_deref(),
            Some(b.join("x.fio").as_path())
        );
    }
}
