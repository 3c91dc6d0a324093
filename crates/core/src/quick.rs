//! `iolab quick`: a short suite on the filesystem of one directory, in the
//! spirit of the preset disk suites people know (SEQ1M Q8T1, SEQ1M Q1T1,
//! RND4K Q32T1, RND4K Q1T1, each read and write, and 4k write+fsync). It
//! picks the best engine the kernel offers, direct I/O where the
//! filesystem takes it, and a test file sized for the free space; each
//! test is an ordinary fio job run through the plan and the workers, so
//! its figures mean what `iolab run` figures mean.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use iolab_engine::file::{available_space, probe_o_direct};
use iolab_engine::{create, EngineKind, EngineOpts};
use iolab_spec::raw::{RawSection, UnwritableValue};
use iolab_spec::Context;
use iolab_stats::meta::MetaPhaseKind;
use iolab_stats::quick::{QuickResult, QuickTest};
use iolab_stats::{Dir, RunResult};

use crate::meta::{run_meta, MetaError, MetaOptions};
use crate::plan;
use crate::progress::Progress;
use crate::quickdir;
use crate::run::{run_observed, Notice};

/// What the user asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct QuickOpts {
    pub dir: PathBuf,
    /// Which tests, how many passes of each, how far apart.
    pub profile: Profile,
    /// The `iolab` profile: the whole suite's I/O time, shared among its
    /// tests. A CrystalDiskMark profile: each pass's time (its "measure
    /// time").
    pub time: Duration,
    /// Measured passes of each test; the best is reported.
    pub passes: u32,
    /// Pause before each test but the first.
    pub interval: Duration,
    /// Test file size (None: chosen from the free space).
    pub size: Option<u64>,
    /// Engine (None: io_uring, else libaio, else psync).
    pub engine: Option<String>,
    /// Use buffered I/O even where O_DIRECT works.
    pub buffered: bool,
    /// Files of the metadata pass (0: none).
    pub meta_files: u64,
}

/// Why the suite cannot start (exit 2: nothing was created).
#[derive(Debug, thiserror::Error)]
pub enum QuickError {
    #[error("`{}` is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// A link in the directory's name that the rule of `crate::links`
    /// does not follow.
    #[error("{0}")]
    Linked(std::io::Error),
    #[error("cannot write in `{}`: {}", .0.display(), .1)]
    NotWritable(PathBuf, std::io::Error),
    #[error(
        "`{}` has {} MiB free; the suite's test file is a quarter of the free space (at most \
         1 GiB) and must be at least {} MiB, so the suite needs {} MiB free \
         (or give --size, at least {} MiB and below the free space)",
        .0.display(), .1 >> 20, MIN_FILE >> 20, (4 * MIN_FILE) >> 20, MIN_FILE >> 20
    )]
    NoRoom(PathBuf, u64),
    #[error("--size {} MiB: the test file must be at least {} MiB", .0 >> 20, MIN_FILE >> 20)]
    SizeTooSmall(u64),
    #[error(
        "--size {} MiB: `{}` has {} MiB free, and the suite needs the test file and {} MiB \
         more for its metadata pass",
        .size >> 20, .dir.display(), .free >> 20, SPARE >> 20
    )]
    SizeAboveFree { dir: PathBuf, size: u64, free: u64 },
    #[error("--time {0:?} leaves under 100 ms per test or pass")]
    TooShort(Duration),
    #[error("ioengine {0}: {1}")]
    Engine(String, String),
    #[error(
        "ioengine {0} moves no data, so its figures would not be the storage's; the quick \
         suite takes an engine that reads and writes: {1}"
    )]
    NoDataIo(String, String),
    #[error("{0}")]
    Plan(String),
}

/// Free space the suite needs beside its test file (the metadata pass,
/// the filesystem's own blocks).
pub const SPARE: u64 = 16 << 20;

/// The smallest test file worth measuring.
pub const MIN_FILE: u64 = 64 << 20;
/// The test file with direct I/O, as the preset suites default to.
const DIRECT_FILE: u64 = 1 << 30;

/// One test of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SuiteTest {
    pub name: &'static str,
    pub rw: &'static str,
    pub bs: &'static str,
    pub iodepth: u32,
    /// Threads issuing I/O (fio's numjobs, reported as one).
    pub threads: u32,
    /// fsync after every write.
    pub fsync: bool,
}

/// The suite, in the order it runs: reads first (they lay the file out),
/// then writes over it.
pub const SUITE: &[SuiteTest] = &[
    t("SEQ1M Q8T1", "read", "1m", 8),
    t("SEQ1M Q1T1", "read", "1m", 1),
    t("RND4K Q32T1", "randread", "4k", 32),
    t("RND4K Q1T1", "randread", "4k", 1),
    t("SEQ1M Q8T1", "write", "1m", 8),
    t("SEQ1M Q1T1", "write", "1m", 1),
    t("RND4K Q32T1", "randwrite", "4k", 32),
    t("RND4K Q1T1", "randwrite", "4k", 1),
    SuiteTest {
        name: "RND4K Q1T1",
        rw: "randwrite",
        bs: "4k",
        iodepth: 1,
        threads: 1,
        fsync: true,
    },
];

/// CrystalDiskMark 8's default profile: its settings dialog's "Default"
/// (block size, queues, threads): SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1,
/// RND4K Q1T1, each read and then written, all reads first.
pub const CDM: &[SuiteTest] = &[
    t("SEQ1M Q8T1", "read", "1m", 8),
    t("SEQ1M Q1T1", "read", "1m", 1),
    t("RND4K Q32T1", "randread", "4k", 32),
    t("RND4K Q1T1", "randread", "4k", 1),
    t("SEQ1M Q8T1", "write", "1m", 8),
    t("SEQ1M Q1T1", "write", "1m", 1),
    t("RND4K Q32T1", "randwrite", "4k", 32),
    t("RND4K Q1T1", "randwrite", "4k", 1),
];

/// CrystalDiskMark 8's "NVMe SSD" profile: the default one with the deep
/// random test issued by 16 threads (RND4K Q32T16).
pub const CDM_NVME: &[SuiteTest] = &[
    t("SEQ1M Q8T1", "read", "1m", 8),
    t("SEQ1M Q1T1", "read", "1m", 1),
    threads(t("RND4K Q32T16", "randread", "4k", 32), 16),
    t("RND4K Q1T1", "randread", "4k", 1),
    t("SEQ1M Q8T1", "write", "1m", 8),
    t("SEQ1M Q1T1", "write", "1m", 1),
    threads(t("RND4K Q32T16", "randwrite", "4k", 32), 16),
    t("RND4K Q1T1", "randwrite", "4k", 1),
];

const fn t(name: &'static str, rw: &'static str, bs: &'static str, iodepth: u32) -> SuiteTest {
    SuiteTest {
        name,
        rw,
        bs,
        iodepth,
        threads: 1,
        fsync: false,
    }
}

const fn threads(test: SuiteTest, threads: u32) -> SuiteTest {
    SuiteTest { threads, ..test }
}

/// Which tests the suite runs and how: iolab's own (the nine tests, one
/// pass each, the time shared among them, a metadata pass) or
/// CrystalDiskMark 8's default or NVMe profile as it defines them: a 1 GiB
/// test file, each test a 5 s unmeasured preparation run and then 5
/// measured passes of 5 s (the best pass is the result), 5 s between
/// tests, direct I/O.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Profile {
    #[default]
    Iolab,
    Cdm,
    CdmNvme,
}

/// The CrystalDiskMark profiles' test file: its default test size.
pub const CDM_FILE: u64 = 1 << 30;
/// Their measured passes ("test count") and the time of each.
pub const CDM_PASSES: u32 = 5;
pub const CDM_PASS_TIME: Duration = Duration::from_secs(5);
/// Their pause between tests ("interval time").
pub const CDM_INTERVAL: Duration = Duration::from_secs(5);

impl Profile {
    pub const NAMES: [&'static str; 3] = ["iolab", "cdm", "cdm-nvme"];

    pub fn name(self) -> &'static str {
        Profile::NAMES[self as usize]
    }

    pub fn tests(self) -> &'static [SuiteTest] {
        match self {
            Profile::Iolab => SUITE,
            Profile::Cdm => CDM,
            Profile::CdmNvme => CDM_NVME,
        }
    }

    /// Whether it is one of CrystalDiskMark's: an unmeasured preparation
    /// run before each test, the best of the passes, no metadata pass.
    pub fn is_cdm(self) -> bool {
        self != Profile::Iolab
    }

    /// The time, passes and interval it defines.
    pub fn defaults(self) -> (Duration, u32, Duration) {
        match self {
            Profile::Iolab => (Duration::from_secs(60), 1, Duration::ZERO),
            _ => (CDM_PASS_TIME, CDM_PASSES, CDM_INTERVAL),
        }
    }

    /// What the table's note says about it.
    pub fn about(self) -> &'static str {
        match self {
            Profile::Iolab => "iolab's own: nine tests sharing the time, one pass each",
            Profile::Cdm => "CrystalDiskMark 8's default profile",
            Profile::CdmNvme => "CrystalDiskMark 8's NVMe SSD profile",
        }
    }
}

impl std::str::FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Profile, String> {
        match s {
            "iolab" => Ok(Profile::Iolab),
            "cdm" => Ok(Profile::Cdm),
            "cdm-nvme" => Ok(Profile::CdmNvme),
            _ => Err(format!(
                "no profile `{s}` (the profiles: {})",
                Profile::NAMES.join(", ")
            )),
        }
    }
}

impl SuiteTest {
    /// `read`, `write` or `write+fsync`, as the table shows it.
    pub fn op(&self) -> &'static str {
        match (self.rw.contains("read"), self.fsync) {
            (true, _) => "read",
            (false, false) => "write",
            (false, true) => "write+fsync",
        }
    }
}

/// The choices the suite made, before it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct QuickSetup {
    pub dir: PathBuf,
    /// The private directory the suite works in (see `quickdir`), made
    /// by `prepare` and removed by `run` or `discard`.
    pub work: PathBuf,
    pub file: PathBuf,
    /// What killed runs had left in `dir` and `prepare` removed.
    pub stale: Vec<String>,
    pub engine: EngineKind,
    pub direct: bool,
    pub file_bytes: u64,
    pub profile: Profile,
    /// Each pass's time.
    pub test_time: Duration,
    pub passes: u32,
    pub interval: Duration,
    /// Files of the metadata pass (0: none).
    pub meta_files: u64,
    pub notes: Vec<String>,
}

/// Chooses engine, direct I/O, file size and time per test for `opts`,
/// and checks every test's job. Creates the suite's private directory
/// (removed again on an error), after removing what killed runs left.
pub fn prepare(opts: &QuickOpts) -> Result<QuickSetup, QuickError> {
    // Another user's link in a shared sticky directory, anywhere in the
    // name, is not followed (the rule of `crate::links`).
    if let Err(e) = crate::links::resolve(&opts.dir) {
        if crate::links::is_foreign(&e) {
            return Err(QuickError::Linked(e));
        }
    }
    if !opts.dir.is_dir() {
        return Err(QuickError::NotADirectory(opts.dir.clone()));
    }
    // Results name the directory as it is, not as typed.
    let dir = &opts
        .dir
        .canonicalize()
        .map_err(|e| QuickError::NotWritable(opts.dir.clone(), e))?;
    // A killed run's test file would count against the free space.
    let stale = quickdir::remove_stale(dir);
    let work = quickdir::create(dir).map_err(|e| QuickError::NotWritable(dir.clone(), e))?;
    let setup = prepare_in(opts, dir, &work, stale);
    if setup.is_err() {
        let _ = quickdir::remove(&work);
    }
    setup
}

/// Removes the suite's private directory when it will not run.
pub fn discard(setup: &QuickSetup) {
    let _ = quickdir::remove(&setup.work);
}

fn prepare_in(
    opts: &QuickOpts,
    dir: &Path,
    work: &Path,
    stale: Vec<String>,
) -> Result<QuickSetup, QuickError> {
    let mut notes = Vec::new();
    let engine = chosen_engine(opts)?;
    let direct = direct_io(opts, dir, work, &mut notes)?;
    // A loop device's backing file in memory, or cached by the host:
    // the suite's direct I/O stops at the loop device.
    notes.extend(crate::loopback::loop_note(dir));
    let free = available_space(dir).map_err(|e| QuickError::NotWritable(dir.to_path_buf(), e))?;
    let memory = iolab_engine::host::physical_memory();
    let file_bytes = file_size(opts, dir, direct, free, memory)?;
    if !direct && file_bytes < memory.saturating_mul(2) {
        let why = if opts.size.is_some() {
            "the size given with --size"
        } else {
            "and there is no room for a larger one"
        };
        notes.push(format!(
            "reads may come from the page cache: the {} MiB test file is smaller than twice the \
             memory ({} MiB), {why}",
            file_bytes >> 20,
            memory >> 20
        ));
    }
    let test_time = match opts.profile {
        Profile::Iolab => opts.time / SUITE.len() as u32,
        _ => opts.time,
    };
    if test_time < Duration::from_millis(100) {
        return Err(QuickError::TooShort(opts.time));
    }
    if opts.passes == 0 {
        return Err(QuickError::Plan(
            "--passes 0: each test needs a pass".into(),
        ));
    }
    let setup = QuickSetup {
        dir: dir.to_path_buf(),
        work: work.to_path_buf(),
        file: work.join("data"),
        stale,
        engine,
        direct,
        file_bytes,
        profile: opts.profile,
        test_time,
        passes: opts.passes,
        interval: opts.interval,
        // CrystalDiskMark's profiles have no metadata pass.
        meta_files: if opts.profile.is_cdm() {
            0
        } else {
            opts.meta_files
        },
        notes,
    };
    // Every test's job is one the plan accepts (mmap refuses direct=1,
    // say) before anything runs.
    let ctx = host_context();
    for test in setup.profile.tests() {
        plan_of(&setup, test, &ctx)?;
    }
    // The job file that replays the suite can be written.
    replay_job_file(&setup).map_err(|e| {
        QuickError::Plan(format!(
            "{e}; the suite's job file names the directory, so choose one whose path has none"
        ))
    })?;
    Ok(setup)
}

/// The engine `--engine` names (one that moves data and that the kernel
/// allows), or the best one here.
fn chosen_engine(opts: &QuickOpts) -> Result<EngineKind, QuickError> {
    let Some(e) = &opts.engine else {
        return Ok(best_engine());
    };
    let kind: EngineKind = e
        .parse()
        .map_err(|err: iolab_engine::EngineError| QuickError::Engine(e.clone(), err.to_string()))?;
    if !kind.moves_file_data() {
        return Err(QuickError::NoDataIo(e.clone(), data_engines().join(", ")));
    }
    create(kind, &EngineOpts::default())
        .map_err(|err| QuickError::Engine(e.clone(), err.to_string()))?;
    Ok(kind)
}

/// Whether the suite uses direct I/O: unless `--buffered`, where the
/// filesystem of `work` takes O_DIRECT. Says why not in `notes`.
fn direct_io(
    opts: &QuickOpts,
    dir: &Path,
    work: &Path,
    notes: &mut Vec<String>,
) -> Result<bool, QuickError> {
    if opts.buffered {
        notes.push("buffered I/O, as asked (--buffered)".to_string());
        return Ok(false);
    }
    match probe_o_direct(work) {
        Ok(true) => Ok(true),
        Ok(false) => {
            notes.push(
                "buffered I/O: this filesystem refuses O_DIRECT, so writes may be measured \
                 in the page cache"
                    .to_string(),
            );
            Ok(false)
        }
        Err(e) => Err(QuickError::NotWritable(dir.to_path_buf(), e)),
    }
}

/// The test file's size in whole MiB: `--size`, CrystalDiskMark's 1 GiB,
/// or what fits in `free` bytes (beyond the page cache of `memory` bytes
/// for buffered I/O, where there is room for that).
fn file_size(
    opts: &QuickOpts,
    dir: &Path,
    direct: bool,
    free: u64,
    memory: u64,
) -> Result<u64, QuickError> {
    let above_free = |size: u64| QuickError::SizeAboveFree {
        dir: dir.to_path_buf(),
        size,
        free,
    };
    match opts.size {
        Some(s) => {
            let s = s / (1 << 20) * (1 << 20);
            if s < MIN_FILE {
                return Err(QuickError::SizeTooSmall(s));
            }
            if s.saturating_add(SPARE) > free {
                return Err(above_free(s));
            }
            Ok(s)
        }
        // CrystalDiskMark's test file is 1 GiB, whatever the free space.
        None if opts.profile.is_cdm() => {
            if CDM_FILE.saturating_add(SPARE) > free {
                return Err(above_free(CDM_FILE));
            }
            Ok(CDM_FILE)
        }
        None => {
            let s = if direct {
                DIRECT_FILE.min(free / 4)
            } else {
                // Buffered reads come from the page cache unless the file
                // is well above memory; use such a file only where it fits
                // easily.
                let beyond_cache = memory.saturating_mul(2);
                if beyond_cache <= free / 2 && beyond_cache > 0 {
                    beyond_cache
                } else {
                    DIRECT_FILE.min(free / 4)
                }
            };
            let s = s / (1 << 20) * (1 << 20);
            if s < MIN_FILE {
                return Err(QuickError::NoRoom(dir.to_path_buf(), free));
            }
            Ok(s)
        }
    }
}

/// The engines that read and write data, for the quick suite to choose
/// among: those iolab has that the kernel allows and that move data.
pub fn data_engines() -> Vec<&'static str> {
    EngineKind::implemented()
        .filter(|k| k.moves_file_data() && create(*k, &EngineOpts::default()).is_ok())
        .map(EngineKind::name)
        .collect()
}

fn host_context() -> Context {
    Context::from_env(crate::probe::keyword_host())
}

/// The plan of one test.
fn plan_of(setup: &QuickSetup, test: &SuiteTest, ctx: &Context) -> Result<plan::Plan, QuickError> {
    let jobs = iolab_spec::resolve_sections("quick", vec![job_section(setup, test)], ctx)
        .map_err(|e| QuickError::Plan(e.to_string()))?;
    plan::build(&jobs).map_err(|e| QuickError::Plan(e.to_string()))
}

/// io_uring where the kernel allows it, else libaio, else psync.
pub fn best_engine() -> EngineKind {
    for e in [EngineKind::IoUring, EngineKind::Libaio] {
        if create(e, &EngineOpts::default()).is_ok() {
            return e;
        }
    }
    EngineKind::Psync
}

/// The job of one test, built from typed values (a directory whose path
/// holds `:` stays one file).
pub fn job_section(setup: &QuickSetup, test: &SuiteTest) -> RawSection {
    let job = RawSection::builtin(&test.name.replace(' ', "-"))
        .with_files(&[&setup.file])
        .with("size", setup.file_bytes)
        .with("ioengine", setup.engine.name())
        .with("direct", u8::from(setup.direct && !test.fsync))
        .with("rw", test.rw)
        .with("bs", test.bs)
        .with("iodepth", test.iodepth)
        .with("time_based", 1)
        .with("runtime", format!("{}ms", setup.test_time.as_millis()));
    with_test_options(job, test)
}

/// What a test adds to its job beyond the file, engine and time: several
/// threads reported as one, fsync after each write.
fn with_test_options(mut job: RawSection, test: &SuiteTest) -> RawSection {
    if test.threads > 1 {
        job = job.with("numjobs", test.threads).with("group_reporting", 1);
    }
    if test.fsync {
        // A database's commit: a small write, then fsync, through the page
        // cache.
        job = job.with("fsync", 1);
    }
    job
}

/// The suite as one fio job file that replays it with `iolab run` (or
/// `fio`): the shared options in `[global]`, every test its own job after
/// the one before (`stonewall`), each CrystalDiskMark pass and
/// preparation run a job of its own (the pause between tests a
/// `startdelay`), on one test file in `dir`, removed by the last job. The
/// metadata pass is no fio job; a comment says how to run it. An error
/// when the directory's path holds a line break, which job text cannot
/// carry.
pub fn replay_job_file(setup: &QuickSetup) -> Result<String, UnwritableValue> {
    let file = setup.dir.join("iolab-quick.data");
    let mut sections = vec![RawSection::builtin("global")
        .with_files(&[&file])
        .with("size", setup.file_bytes)
        .with("ioengine", setup.engine.name())
        .with("time_based", 1)
        .with("runtime", format!("{}ms", setup.test_time.as_millis()))
        .with_flag("stonewall")];
    let tests = setup.profile.tests();
    for (i, test) in tests.iter().enumerate() {
        let runs: Vec<String> = if setup.profile.is_cdm() {
            std::iter::once("prepare".to_string())
                .chain((1..=setup.passes).map(|p| format!("pass{p}")))
                .collect()
        } else if setup.passes > 1 {
            (1..=setup.passes).map(|p| format!("pass{p}")).collect()
        } else {
            vec![String::new()]
        };
        for (k, run) in runs.iter().enumerate() {
            let mut name = format!("{}-{}", test.name.replace(' ', "-"), test.op());
            if !run.is_empty() {
                name = format!("{name}-{run}");
            }
            let mut job = RawSection::builtin(&name.replace('+', "-"))
                .with("rw", test.rw)
                .with("bs", test.bs)
                .with("iodepth", test.iodepth)
                .with("direct", u8::from(setup.direct && !test.fsync));
            job = with_test_options(job, test);
            if k == 0 && i > 0 && !setup.interval.is_zero() {
                job = job.with("startdelay", format!("{}ms", setup.interval.as_millis()));
            }
            if i + 1 == tests.len() && k + 1 == runs.len() {
                job = job.with("unlink", 1);
            }
            sections.push(job);
        }
    }
    let dir = setup.dir.display().to_string();
    if dir.contains(['\n', '\r']) {
        return Err(UnwritableValue {
            name: "directory".into(),
            value: dir,
        });
    }
    let mut text = format!(
        "; iolab quick, profile {profile} ({about}), on {dir}:\n\
         ; the suite as one job file: `iolab run FILE` or `iolab rerun ID`.\n",
        profile = setup.profile.name(),
        about = setup.profile.about(),
    );
    if setup.meta_files > 0 {
        text.push_str(&format!(
            "; its metadata pass is `iolab meta {dir} --files {} --phases create,stat,unlink`.\n",
            setup.meta_files
        ));
    }
    for (i, section) in sections.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(&section.to_text()?);
    }
    Ok(text)
}

/// Watches one test while it runs, on a thread of its own: gets the
/// test's index, the test, its progress counters, and a flag raised when
/// the test is over (to draw a status line, say).
pub type Watch<'a> = &'a (dyn Fn(usize, &SuiteTest, &Progress, &AtomicBool) + Sync);

/// Runs the suite, each test watched by `watch`. The suite's directory
/// and everything in it are removed at the end, whatever happens.
pub fn run(setup: &QuickSetup, stop: &AtomicBool, watch: Watch) -> Result<QuickResult, QuickError> {
    let mut result = QuickResult {
        dir: setup.dir.display().to_string(),
        engine: setup.engine.name().to_string(),
        direct: setup.direct,
        file_bytes: setup.file_bytes,
        test_ms: setup.test_time.as_millis() as u64,
        notes: setup.notes.clone(),
        profile: setup.profile.name().to_string(),
        ..Default::default()
    };
    let profile_note = if setup.profile.is_cdm() {
        format!(
            "profile {}: {}; each test a {} ms preparation run, then the best of {} passes \
                 of {} ms, {} ms between tests",
            setup.profile.name(),
            setup.profile.about(),
            setup.test_time.as_millis(),
            setup.passes,
            setup.test_time.as_millis(),
            setup.interval.as_millis()
        )
    } else {
        format!(
            "profile iolab: {} (--profile cdm and cdm-nvme are CrystalDiskMark 8's)",
            setup.profile.about()
        )
    };
    result.notes.insert(0, profile_note);
    let outcome = run_tests(setup, stop, watch, &mut result);
    discard(setup);
    outcome.map(|()| result)
}

fn run_tests(
    setup: &QuickSetup,
    stop: &AtomicBool,
    watch: Watch,
    result: &mut QuickResult,
) -> Result<(), QuickError> {
    let ctx = host_context();
    // Each warning's text (past its job's name) and the tests it fell on.
    let mut memory: Vec<(String, Vec<String>)> = Vec::new();
    for (i, test) in setup.profile.tests().iter().enumerate() {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            result.interrupted = true;
            break;
        }
        if i > 0 && !pause(setup.interval, stop) {
            result.interrupted = true;
            break;
        }
        let plan = plan_of(setup, test, &ctx)?;
        let once = || {
            let progress = Progress::new(&plan);
            let done = AtomicBool::new(false);
            std::thread::scope(|s| {
                // The watcher only shows progress: without a thread for it
                // the test runs all the same.
                let _ = std::thread::Builder::new()
                    .name("quick-watch".into())
                    .spawn_scoped(s, || watch(i, test, &progress, &done));
                let mut quiet = |_: Notice| {};
                let r = run_observed(&plan, stop, &mut quiet, &progress);
                done.store(true, std::sync::atomic::Ordering::Relaxed);
                r
            })
        };
        // CrystalDiskMark's preparation run is not measured.
        if setup.profile.is_cdm() {
            if let Err(e) = once() {
                result.tests.push(QuickTest {
                    name: test.name.to_string(),
                    op: test.op().to_string(),
                    error: Some(e.to_string()),
                    ..Default::default()
                });
                continue;
            }
        }
        // The best of the passes, by bandwidth, as CrystalDiskMark scores.
        let mut outcome = once();
        for _ in 1..setup.passes {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
            let next = once();
            let better = match (&outcome, &next) {
                (Ok(a), Ok(b)) => b.failure.is_none() && bw_of(test, b) > bw_of(test, a),
                (Err(_), Ok(_)) => true,
                _ => false,
            };
            if better {
                outcome = next;
            }
        }
        let row = match outcome {
            Ok(o) => {
                memory_notes(test, &o.result, &mut memory);
                let mut row = row_of(test, &o.result);
                row.error = o.failure;
                if o.result.interrupted {
                    result.interrupted = true;
                }
                row
            }
            Err(e) => QuickTest {
                name: test.name.to_string(),
                op: test.op().to_string(),
                error: Some(e.to_string()),
                ..Default::default()
            },
        };
        result.tests.push(row);
    }
    for (text, tests) in memory {
        result.notes.push(format!("{}: {text}", tests.join(", ")));
    }
    if !result.interrupted && setup.meta_files > 0 {
        let (rows, interrupted) = meta_rows(setup, stop);
        result.tests.extend(rows);
        result.interrupted |= interrupted;
    }
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        result.interrupted = true;
    }
    Ok(())
}

/// A pass's bandwidth in the test's direction.
fn bw_of(test: &SuiteTest, o: &crate::run::RunOutcome) -> f64 {
    row_of(test, &o.result).bw_bytes
}

/// Waits `d` (the pause between tests), in steps that notice Ctrl-C;
/// false when stopped.
fn pause(d: Duration, stop: &AtomicBool) -> bool {
    let until = std::time::Instant::now() + d;
    while std::time::Instant::now() < until {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50).min(d));
    }
    !stop.load(std::sync::atomic::Ordering::Relaxed)
}

/// Warnings that a test measured memory (or compression) rather than the
/// storage, gathered by text so that a warning several tests share is one
/// note naming them all; a short run, which every test of the suite is,
/// goes unsaid.
fn memory_notes(test: &SuiteTest, result: &RunResult, memory: &mut Vec<(String, Vec<String>)>) {
    for w in result.jobs.iter().flat_map(|j| &j.warnings) {
        if !w.code.not_the_storage() {
            continue;
        }
        // "job `NAME`: the rest": the rest, with the numbers of this
        // test, is what several tests may share.
        let text = w
            .text
            .split_once("`: ")
            .map_or(w.text.as_str(), |(_, rest)| rest)
            .to_string();
        let name = format!("{} {}", test.name, test.op());
        match memory.iter_mut().find(|(t, _)| *t == text) {
            Some((_, tests)) if !tests.contains(&name) => tests.push(name),
            Some(_) => {}
            None => memory.push((text, vec![name])),
        }
    }
}

/// The metadata pass's row name: "META 10k files", "META 100 files".
pub fn meta_label(files: u64) -> String {
    if files >= 1000 && files.is_multiple_of(1000) {
        format!("META {}k files", files / 1000)
    } else {
        format!("META {files} files")
    }
}

/// The metadata pass: `meta_files` empty files created, stat'ed and
/// unlinked in one directory, one row per operation; and whether it was
/// interrupted.
fn meta_rows(setup: &QuickSetup, stop: &AtomicBool) -> (Vec<QuickTest>, bool) {
    let opts = MetaOptions {
        dir: setup.work.clone(),
        files: setup.meta_files,
        phases: vec![
            MetaPhaseKind::Create,
            MetaPhaseKind::Stat,
            MetaPhaseKind::Unlink,
        ],
        ..MetaOptions::default()
    };
    let name = meta_label(setup.meta_files);
    match run_meta(&opts, stop) {
        Ok(r) => (
            r.phases
                .iter()
                .filter(|p| opts.phases.contains(&p.phase))
                .map(|p| QuickTest {
                    name: name.clone(),
                    op: p.phase.name().to_string(),
                    iops: p.ops_per_sec(),
                    p50_ns: p.percentile_ns(50.0).unwrap_or(0),
                    p99_ns: p.percentile_ns(99.0).unwrap_or(0),
                    ..Default::default()
                })
                .collect(),
            false,
        ),
        Err(MetaError::Interrupted { .. }) => (Vec::new(), true),
        Err(e) => (
            vec![QuickTest {
                name,
                op: "create".to_string(),
                error: Some(e.to_string()),
                ..Default::default()
            }],
            false,
        ),
    }
}

/// A test's figures from its run, and the warnings its jobs raised.
pub fn row_of(test: &SuiteTest, r: &RunResult) -> QuickTest {
    let dir = if test.rw.contains("read") {
        Dir::Read
    } else {
        Dir::Write
    };
    let mut row = QuickTest {
        name: test.name.to_string(),
        op: test.op().to_string(),
        ..Default::default()
    };
    if let Some(job) = r.jobs.first() {
        let d = &job.dirs[dir as usize];
        row.bw_bytes = d.bw_bytes() as f64;
        row.iops = d.iops();
        // A commit's latency is its fsync's: the write before it only
        // reaches the page cache.
        let lat = if test.fsync { &job.sync } else { &d.clat };
        let p = lat.hist.percentiles(&[50.0, 99.0]);
        if let [(_, p50), (_, p99)] = p[..] {
            (row.p50_ns, row.p99_ns) = (p50, p99);
        }
        row.sample_count = d.iops_samples.count();
        row.sample_mean = d.iops_samples.mean();
        row.sample_stdev = d.iops_samples.stdev();
        if job.error != 0 && row.error.is_none() {
            row.error = Some(job.error_detail.clone());
        }
    }
    for w in r.jobs.iter().flat_map(|j| &j.warnings) {
        if !row.warnings.iter().any(|x| x.code == w.code) {
            row.warnings.push(w.clone());
        }
    }
    row
}

/// The directory's filesystem type and the block device under it, for
/// the table's heading (empty strings when unknown).
pub fn describe(dir: &Path) -> (String, String) {
    let fs = iolab_engine::file::fs_type(dir)
        .map(|t| t.name().to_string())
        .unwrap_or_default();
    let dev = crate::diskstats::disks_of(std::iter::once(dir))
        .into_iter()
        .next()
        .unwrap_or_default();
    (fs, dev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_spec::Host;

    fn opts(dir: &Path) -> QuickOpts {
        QuickOpts {
            dir: dir.to_path_buf(),
            profile: Profile::Iolab,
            time: Duration::from_secs(9),
            passes: 1,
            interval: Duration::ZERO,
            size: Some(64 << 20),
            engine: Some("psync".to_string()),
            buffered: false,
            meta_files: 1000,
        }
    }

    #[test]
    fn memory_warnings_become_one_note_per_text_naming_the_tests() {
        let run = |text: &str, code: &str| RunResult {
            jobs: vec![iolab_stats::JobResult {
                warnings: vec![
                    iolab_stats::JobWarning {
                        code: code.into(),
                        text: text.to_string(),
                    },
                    iolab_stats::JobWarning {
                        code: iolab_stats::WarningCode::ShortRun,
                        text: "job `x`: only 1 bandwidth sample(s)".to_string(),
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut memory = Vec::new();
        let cached = "its files are on the loop device loop0, ... is in memory";
        memory_notes(
            &SUITE[0],
            &run(&format!("job `SEQ1M-Q8T1`: {cached}"), "page-cache"),
            &mut memory,
        );
        memory_notes(
            &SUITE[1],
            &run(&format!("job `SEQ1M-Q1T1`: {cached}"), "page-cache"),
            &mut memory,
        );
        memory_notes(
            &SUITE[2],
            &run("job `RND4K-Q32T1`: 50% stored compressed", "compression"),
            &mut memory,
        );
        memory_notes(
            &SUITE[3],
            &run("job `RND4K-Q1T1`: unstable", "unstable"),
            &mut memory,
        );
        assert_eq!(
            memory,
            [
                (
                    cached.to_string(),
                    vec!["SEQ1M Q8T1 read".to_string(), "SEQ1M Q1T1 read".to_string()]
                ),
                (
                    "50% stored compressed".to_string(),
                    vec!["RND4K Q32T1 read".to_string()]
                ),
            ]
        );
    }

    #[test]
    fn the_crystaldiskmark_profiles_are_as_it_defines_them() {
        // (name, rw, bs, iodepth, threads) of each test, in order.
        let shape = |p: Profile| -> Vec<(&str, &str, &str, u32, u32)> {
            p.tests()
                .iter()
                .map(|t| (t.name, t.rw, t.bs, t.iodepth, t.threads))
                .collect()
        };
        let reads = [
            ("SEQ1M Q8T1", "read", "1m", 8, 1),
            ("SEQ1M Q1T1", "read", "1m", 1, 1),
            ("RND4K Q32T1", "randread", "4k", 32, 1),
            ("RND4K Q1T1", "randread", "4k", 1, 1),
        ];
        let writes = [
            ("SEQ1M Q8T1", "write", "1m", 8, 1),
            ("SEQ1M Q1T1", "write", "1m", 1, 1),
            ("RND4K Q32T1", "randwrite", "4k", 32, 1),
            ("RND4K Q1T1", "randwrite", "4k", 1, 1),
        ];
        assert_eq!(shape(Profile::Cdm), [reads, writes].concat());
        let nvme = shape(Profile::CdmNvme);
        assert_eq!(nvme[2], ("RND4K Q32T16", "randread", "4k", 32, 16));
        assert_eq!(nvme[6], ("RND4K Q32T16", "randwrite", "4k", 32, 16));
        for i in [0, 1, 3, 4, 5, 7] {
            assert_eq!(nvme[i], shape(Profile::Cdm)[i]);
        }
        // 5 passes of 5 s, 5 s apart, a 1 GiB file, no fsync test.
        for p in [Profile::Cdm, Profile::CdmNvme] {
            assert_eq!(
                p.defaults(),
                (Duration::from_secs(5), 5, Duration::from_secs(5))
            );
            assert!(p.tests().iter().all(|t| !t.fsync));
        }
        assert_eq!(CDM_FILE, 1 << 30);
        assert_eq!(Profile::Iolab.defaults().1, 1);
        assert_eq!("cdm-nvme".parse::<Profile>(), Ok(Profile::CdmNvme));
        assert!("cdm8"
            .parse::<Profile>()
            .unwrap_err()
            .contains("iolab, cdm, cdm-nvme"));
    }

    #[test]
    fn the_replay_job_file_stonewalls_every_run_and_removes_the_file() {
        let d = tempfile::tempdir().unwrap();
        let setup = prepare(&QuickOpts {
            profile: Profile::CdmNvme,
            time: Duration::from_millis(200),
            passes: 2,
            interval: Duration::from_millis(300),
            ..opts(d.path())
        })
        .unwrap();
        let text = replay_job_file(&setup).unwrap();
        discard(&setup);
        let jobs = iolab_spec::parse_text("replay", &text, &host_context()).unwrap();
        // Eight tests, each a preparation run and two passes.
        assert_eq!(jobs.jobs.len(), 8 * 3);
        let groups = jobs.groups();
        assert_eq!(groups, (0..24).collect::<Vec<_>>());
        assert!(text.contains("[global]\n"), "{text}");
        assert!(text.contains("\n[RND4K-Q32T16-read-pass2]\n"), "{text}");
        assert!(text.contains("numjobs=16\ngroup_reporting=1\n"), "{text}");
        // The pause before each test but the first, the file removed last.
        assert_eq!(text.matches("startdelay=300ms").count(), 7, "{text}");
        assert_eq!(text.matches("unlink=1").count(), 1);
        assert!(text.trim_end().ends_with("unlink=1"), "{text}");
        // Nothing of the private directory: the same suite, the same text.
        assert!(!text.contains(".iolab-quick"), "{text}");
    }

    #[test]
    fn the_suite_is_the_preset_one() {
        let names: Vec<String> = SUITE
            .iter()
            .map(|t| format!("{} {}", t.name, t.op()))
            .collect();
        assert_eq!(
            names,
            [
                "SEQ1M Q8T1 read",
                "SEQ1M Q1T1 read",
                "RND4K Q32T1 read",
                "RND4K Q1T1 read",
                "SEQ1M Q8T1 write",
                "SEQ1M Q1T1 write",
                "RND4K Q32T1 write",
                "RND4K Q1T1 write",
                "RND4K Q1T1 write+fsync",
            ]
        );
    }

    #[test]
    fn each_test_is_a_job_the_plan_accepts() {
        let dir = tempfile::tempdir().unwrap();
        let setup = prepare(&opts(dir.path())).unwrap();
        assert_eq!(setup.test_time, Duration::from_secs(1));
        let ctx = Context::from_env(Host::EXAMPLE);
        for test in SUITE {
            let section = job_section(&setup, test);
            let text = section.to_text().unwrap();
            let jobs = iolab_spec::parse_text("q", &text, &ctx).unwrap();
            let plan = plan::build(&jobs).unwrap();
            let job = &plan.jobs[0];
            assert_eq!(job.iodepth, test.iodepth, "{text}");
            assert_eq!(job.fsync, u32::from(test.fsync), "{text}");
            assert_eq!(job.runtime, Some(Duration::from_secs(1)));
        }
    }

    #[test]
    fn a_directory_with_a_colon_is_one_test_file() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("a:b");
        std::fs::create_dir(&dir).unwrap();
        let setup = prepare(&opts(&dir)).unwrap();
        let plan = plan_of(&setup, &SUITE[0], &host_context()).unwrap();
        let files: Vec<&Path> = plan.files.iter().map(|f| f.path.as_path()).collect();
        assert_eq!(files, [setup.file.as_path()]);
        let replay = replay_job_file(&setup).unwrap();
        discard(&setup);
        let jobs = iolab_spec::parse_text("replay", &replay, &host_context()).unwrap();
        let plan = plan::build(&jobs).unwrap();
        assert_eq!(plan.files.len(), 1, "{replay}");
        assert_eq!(plan.files[0].path, dir.join("iolab-quick.data"));
    }

    #[test]
    fn a_directory_with_a_line_break_is_refused_before_anything_is_made() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("a\nunlink=1");
        std::fs::create_dir(&dir).unwrap();
        let e = prepare(&opts(&dir)).unwrap_err().to_string();
        assert!(e.contains("line break"), "{e}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    }

    #[test]
    fn bad_directories_and_times_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(&dir.path().join("missing"));
        assert!(matches!(prepare(&o), Err(QuickError::NotADirectory(_))));
        o = opts(dir.path());
        o.time = Duration::from_millis(500);
        assert!(matches!(prepare(&o), Err(QuickError::TooShort(_))));
        o = opts(dir.path());
        o.engine = Some("nosuch".to_string());
        assert!(matches!(prepare(&o), Err(QuickError::Engine(..))));
        o = opts(dir.path());
        o.size = Some(1 << 20);
        assert!(matches!(prepare(&o), Err(QuickError::SizeTooSmall(..))));
        o = opts(dir.path());
        o.size = Some(1 << 60);
        let e = prepare(&o).unwrap_err();
        assert!(matches!(e, QuickError::SizeAboveFree { .. }), "{e}");
        for engine in ["null", "filecreate", "dirstat"] {
            o = opts(dir.path());
            o.engine = Some(engine.to_string());
            let e = prepare(&o).unwrap_err().to_string();
            assert!(e.contains(engine) && e.contains("moves no data"), "{e}");
            assert!(e.contains("psync") && !e.contains("null,"), "{e}");
        }
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    #[test]
    fn the_no_room_message_states_the_real_requirement() {
        let e = QuickError::NoRoom(PathBuf::from("/s"), 100 << 20).to_string();
        assert!(e.starts_with("`/s` has 100 MiB free;"), "{e}");
        assert!(e.contains("a quarter of the free space"), "{e}");
        assert!(e.contains("the suite needs 256 MiB free"), "{e}");
    }

    #[test]
    fn a_size_the_user_chose_is_said_to_be_chosen() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(dir.path());
        o.buffered = true;
        let notes = prepare(&o).unwrap().notes.join("\n");
        assert!(notes.contains("the size given with --size"), "{notes}");
        assert!(!notes.contains("no room"), "{notes}");
    }

    #[test]
    fn the_directory_is_kept_absolute() {
        let dir = tempfile::tempdir().unwrap();
        // The same directory as a path relative to the current one.
        let cwd = std::env::current_dir().unwrap();
        let mut relative = PathBuf::new();
        for _ in cwd.components().skip(1) {
            relative.push("..");
        }
        relative.push(dir.path().strip_prefix("/").unwrap());
        assert!(relative.is_relative() && relative.is_dir());
        let setup = prepare(&opts(&relative)).unwrap();
        assert!(setup.dir.is_absolute(), "{}", setup.dir.display());
        assert_eq!(setup.dir, dir.path().canonicalize().unwrap());
        assert!(setup.file.starts_with(&setup.dir));
        // The test file is in a private directory of the suite's own,
        // made at once and removed by discard.
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(setup.file.parent(), Some(setup.work.as_path()));
        let mode = std::fs::metadata(&setup.work).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        discard(&setup);
        assert!(!setup.work.exists());
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    #[test]
    fn a_refused_setup_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(dir.path());
        o.time = Duration::from_millis(10);
        assert!(matches!(prepare(&o), Err(QuickError::TooShort(_))));
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    #[test]
    fn the_metadata_row_names_its_real_count() {
        assert_eq!(meta_label(10_000), "META 10k files");
        assert_eq!(meta_label(1000), "META 1k files");
        assert_eq!(meta_label(100), "META 100 files");
        assert_eq!(meta_label(1500), "META 1500 files");
    }

    #[test]
    fn data_engines_move_data() {
        let engines = data_engines();
        assert!(engines.contains(&"psync"), "{engines:?}");
        for e in ["null", "filecreate", "filestat", "filedelete"] {
            assert!(!engines.contains(&e), "{engines:?}");
        }
    }

    #[test]
    fn the_best_engine_is_one_the_kernel_takes() {
        let e = best_engine();
        assert!(create(e, &EngineOpts::default()).is_ok(), "{e}");
    }
}
