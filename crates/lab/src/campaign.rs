//! A comparison campaign: for each target, prepare the filesystem (image,
//! loop device, mkfs, mount, or the user's device or directory), measure
//! how it was made (mkfs time, first and cold mount, capacity, read
//! speeds), run the workload suite `repeat` times, and take everything
//! down again. Every path is created new (an existing one is refused, not
//! reused) and recorded in the workdir's state file right after, so that
//! cleanup removes only what the lab made. What a target made is removed
//! before the next target starts, whether it succeeded, failed or was
//! interrupted. The result is a `Comparison` with one column per target,
//! skipped ones included.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use iolab_core::private;
use iolab_spec::Host;
use iolab_stats::repeat_rule::{self, RepeatRule};
use iolab_stats::{Comparison, TargetColumn, TargetSetup, WorkloadRun};

use crate::bcache::{self, Bcache, CacheMode};
use crate::cleanup::{self, CleanupReport};
use crate::error::LabError;
use crate::metrics::{self, record};
use crate::state::{Entry, State};
use crate::suite::{self, Suite};
use crate::support::{self, Support};
use crate::target::{Stack, TargetKind, TargetSpec};
use crate::{capacity, device, exec, image, loopdev, mkfs, mount, mountinfo, readspeed, workload};

/// How a campaign runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where images, mount points and the state file go; `None` makes a
    /// fresh `iolab-lab-*` directory under the system temp dir.
    pub workdir: Option<PathBuf>,
    /// Image size in bytes (also bounds the workload files).
    pub size: u64,
    /// Runs of each workload and cold mounts (with `auto`, of the cold
    /// mounts and of mkfs, and the fewest runs of a workload).
    pub repeat: u32,
    /// `--repeat auto`: each workload on each target runs until the rule
    /// says stop (every figure's interval within the width, or a budget
    /// spent); what stopped it is noted in the comparison.
    pub auto: Option<RepeatRule>,
    /// Seconds per workload run.
    pub runtime_s: u64,
    pub suite: Suite,
    /// Format this device instead of loop images.
    pub device: Option<PathBuf>,
    /// The cache device of bcache targets instead of a loop image.
    pub cache_device: Option<PathBuf>,
    /// The size of a bcache target's cache image in bytes.
    pub cache_size: u64,
    pub destroy_data: bool,
    /// Target label that ratios are taken against.
    pub baseline: Option<String>,
    pub host: Host,
}

/// What the user sees while a campaign runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress<'a> {
    /// Work starts in this directory.
    Workdir(&'a Path),
    /// What killed runs left was removed before the campaign started;
    /// what looked like theirs but was not trusted was left alone.
    Stale {
        removed: &'a [String],
        left_alone: &'a [String],
    },
    /// A target starts (1-based index).
    Target {
        label: &'a str,
        index: usize,
        total: usize,
    },
    Skipped {
        label: &'a str,
        reason: &'a str,
    },
    /// A preparation step: "mkfs and first mount", "cold mounts", "read
    /// speed".
    Step {
        label: &'a str,
        what: &'a str,
    },
    Workload {
        label: &'a str,
        workload: &'a str,
        run: u32,
        repeat: u32,
        /// Rough time left for the remaining workload runs.
        remaining: Duration,
    },
    Failed {
        label: &'a str,
        error: &'a str,
    },
}

/// A finished campaign: the comparison and what cleanup did.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub comparison: Comparison,
    pub cleanup: CleanupReport,
    /// The workdir used (removed at the end when the lab made it).
    pub workdir: PathBuf,
}

/// Checks that can fail before anything is created: targets need root,
/// the baseline names a target, the workloads parse, the device passes
/// its checks.
pub fn preflight(targets: &[TargetSpec], opts: &Options) -> Result<Option<PathBuf>, LabError> {
    check_links(targets, opts)?;
    let formats = targets
        .iter()
        .any(|t| matches!(t.kind, TargetKind::Format { .. }));
    if formats && !crate::is_root() {
        return Err(LabError::NotRoot {
            what: "formatting and mounting filesystems (--fs, --device)".into(),
            uid: crate::uid(),
        });
    }
    if let Some(b) = &opts.baseline {
        let Some(base) = targets.iter().find(|t| &t.label == b) else {
            let labels: Vec<&str> = targets.iter().map(|t| t.label.as_str()).collect();
            return Err(LabError::BadTarget {
                spec: b.clone(),
                reason: format!(
                    "--baseline names no target (targets: {})",
                    labels.join(", ")
                ),
            });
        };
        // A baseline that would be skipped gives no ratios at all.
        if let Some(Support::Missing(why)) = base.fs().map(support::check) {
            return Err(LabError::BadTarget {
                spec: b.clone(),
                reason: format!(
                    "--baseline names a target that cannot run here ({why}); choose another"
                ),
            });
        }
    }
    // Every workload parses and plans before anything is made; a user's
    // job file for each target, since where its files land depends on it.
    for (i, t) in targets.iter().enumerate() {
        let (dir, place) = target_place(t, i, opts.workdir.as_deref());
        let params = workload::Params {
            dir: &dir,
            place: &place,
            file_size: suite::file_size(opts.size),
            runtime_s: opts.runtime_s,
            host: opts.host,
        };
        for w in opts
            .suite
            .workloads
            .iter()
            .filter(|w| w.meta_files.is_none() && (i == 0 || w.source.is_some()))
        {
            workload::plan_of(w, &params).map_err(|reason| LabError::Workload {
                name: w.name.clone(),
                reason,
            })?;
        }
    }
    let stacked = targets
        .iter()
        .any(|t| matches!(t.kind, TargetKind::Format { stack: Some(_), .. }));
    if let Some(c) = &opts.cache_device {
        if !stacked {
            return Err(LabError::BadTarget {
                spec: c.display().to_string(),
                reason: "--cache-device is the cache of bcache targets; give --bcache MODES too"
                    .into(),
            });
        }
        if opts.device.as_deref() == Some(c.as_path()) {
            return Err(LabError::BadTarget {
                spec: c.display().to_string(),
                reason: "--cache-device and --device name the same device".into(),
            });
        }
        device::check(c, opts.destroy_data)?;
    }
    match &opts.device {
        Some(d) => {
            if !formats {
                return Err(LabError::BadTarget {
                    spec: d.display().to_string(),
                    reason: "--device needs --fs to say which filesystems to format it with".into(),
                });
            }
            Ok(Some(device::check(d, opts.destroy_data)?))
        }
        None => Ok(None),
    }
}

/// Runs the campaign. `stop` (Ctrl-C) ends it early; what was created is
/// removed in every case. Errors before the first target (preflight, the
/// workdir) return `Err`; a target's failure is recorded in its column.
pub fn run(
    targets: &[TargetSpec],
    opts: &Options,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome, LabError> {
    let device = preflight(targets, opts)?;
    let (workdir, mut state, stale_problems) = open_workdir(opts, progress)?;
    let mut cmp = new_comparison(opts);
    // The stale run's problems stay in the outcome (they make the exit
    // status a failure); what was removed and left alone was said above.
    let mut cleanup_report = CleanupReport {
        problems: stale_problems,
        ..Default::default()
    };
    let ready = readiness(targets);
    let cache_device = match &opts.cache_device {
        Some(c) => Some(device::check(c, opts.destroy_data)?),
        None => None,
    };
    let runs_total = ready.iter().filter(|r| r.is_ok()).count() as u64
        * opts.suite.workloads.len() as u64
        * cmp.repeat as u64;
    let mut ctx = Ctx {
        opts,
        stop,
        workdir: &workdir,
        device: device.as_deref(),
        cache_device: cache_device.as_deref(),
        bcache_tool: bcache::support().ok(),
        mount_version: mount_version(targets),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|k| k.trim().to_string())
            .unwrap_or_default(),
        runs_total,
        runs_done: 0,
    };

    for (i, (t, ready)) in targets.iter().zip(&ready).enumerate() {
        let mut col = TargetColumn {
            label: t.label.clone(),
            description: t.describe(),
            ..Default::default()
        };
        if let Err(why) = ready {
            progress(Progress::Skipped {
                label: &t.label,
                reason: why,
            });
            col.skipped = Some(why.clone());
            cmp.targets.push(col);
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            cmp.interrupted = true;
            col.skipped = Some("interrupted before it started".into());
            cmp.targets.push(col);
            continue;
        }
        progress(Progress::Target {
            label: &t.label,
            index: i + 1,
            total: targets.len(),
        });
        let measured = ctx.measure((i, t, ready), &mut state, &mut col, &mut cmp, progress);
        if let Err(e) = measured {
            if matches!(e, LabError::Interrupted) || stop.load(Ordering::Relaxed) {
                cmp.interrupted = true;
            }
            let text = e.to_string();
            progress(Progress::Failed {
                label: &t.label,
                error: &text,
            });
            col.failed = Some(text);
        }
        let r = cleanup::release(&mut state);
        cleanup_report.removed.extend(r.removed);
        cleanup_report.problems.extend(r.problems);
        cmp.targets.push(col);
    }
    fixed_first(&mut cmp);
    let r = cleanup::clean(&mut state);
    cleanup_report.removed.extend(r.removed);
    cleanup_report.problems.extend(r.problems);
    Ok(Outcome {
        comparison: cmp,
        cleanup: cleanup_report,
        workdir,
    })
}

/// Per target: the mkfs tool of a filesystem target (none for a
/// directory), or why this host cannot make it.
fn readiness(targets: &[TargetSpec]) -> Vec<Result<Option<PathBuf>, String>> {
    targets
        .iter()
        .map(|t| match support::check_target(t) {
            Some(Support::Ready { mkfs }) => Ok(Some(mkfs)),
            Some(Support::Missing(why)) => Err(why),
            None => Ok(None),
        })
        .collect()
}

/// mount's version when some target is formatted (and mounted), else empty.
fn mount_version(targets: &[TargetSpec]) -> String {
    if targets
        .iter()
        .any(|t| matches!(t.kind, TargetKind::Format { .. }))
    {
        mount::version()
    } else {
        String::new()
    }
}

/// The rows about making the filesystem first, in their fixed order.
fn fixed_first(cmp: &mut Comparison) {
    let rank = |k: &str| {
        metrics::FIXED
            .iter()
            .position(|f| f.0 == k)
            .unwrap_or(usize::MAX)
    };
    cmp.metrics.sort_by_key(|m| rank(&m.key));
}

/// The workdir made or taken, after the leftovers of killed runs (here and
/// in other lab workdirs) are removed, with its state file created; and the
/// problems that removal met. Refuses a workdir a running iolab uses.
fn open_workdir(
    opts: &Options,
    progress: &mut dyn FnMut(Progress),
) -> Result<(PathBuf, State, Vec<String>), LabError> {
    let (workdir, made) = make_workdir(opts.workdir.as_deref())?;
    // Leftovers of killed runs (here and in other lab workdirs) go first.
    let stale = cleanup::clean_stale(&std::env::temp_dir(), Some(&workdir));
    if !stale.removed.is_empty() || !stale.left_alone.is_empty() {
        progress(Progress::Stale {
            removed: &stale.removed,
            left_alone: &stale.left_alone,
        });
    }
    if let Some(other) = State::load(&workdir)? {
        if other.owner_alive() {
            return Err(LabError::State {
                path: other.path().to_path_buf(),
                reason: format!(
                    "the workdir is in use by a running iolab (pid {}); give another --workdir",
                    other.pid
                ),
            });
        }
    }
    let mut state = State::create(&workdir)?;
    if made {
        state.add(Entry::Workdir(workdir.clone()))?;
    }
    progress(Progress::Workdir(&workdir));
    Ok((workdir, state, stale.problems))
}

/// An empty comparison with its baseline, repeat count, host and notes (an
/// emulated host; a job file whose workload took another name).
fn new_comparison(opts: &Options) -> Comparison {
    let host = iolab_core::probe::host();
    let mut cmp = Comparison {
        baseline: opts.baseline.clone(),
        repeat: opts.repeat.max(1),
        ..Default::default()
    };
    if let Some(note) = host.emulation_note() {
        cmp.note(&note);
    }
    cmp.host = Some(host);
    for w in &opts.suite.workloads {
        let Some(path) = &w.source else { continue };
        if path.file_stem().is_some_and(|s| *s != *w.name) {
            cmp.note(&format!(
                "workload `{}` is the job file {} (another workload has its name)",
                w.name,
                path.display()
            ));
        }
    }
    cmp
}

/// Records a path this run has just created. Should the state file not
/// take it, the path is removed again at once, so nothing unrecorded stays.
fn record_made(state: &mut State, e: Entry) -> Result<(), LabError> {
    let Err(err) = state.add(e.clone()) else {
        return Ok(());
    };
    match &e {
        Entry::Image(p) => {
            let _ = std::fs::remove_file(p);
        }
        Entry::MountDir(p) | Entry::WorkFiles(p) => {
            let _ = std::fs::remove_dir(p);
        }
        _ => {}
    }
    Err(err)
}

/// Refuses, before anything is made, a name the lab would work through
/// whose links the rule of [`iolab_core::links`] does not follow (another
/// user's link in a sticky shared directory, anywhere in the name): a
/// directory target, the `--device` and `--cache-device`, the
/// `--workdir`, and the temporary directory a fresh workdir is made in.
/// Otherwise `--target t=/tmp/evil` would lay out files, and `--device
/// /tmp/evil` format, wherever another user's link leads.
fn check_links(targets: &[TargetSpec], opts: &Options) -> Result<(), LabError> {
    use iolab_core::links;
    let refused = |p: &Path| match links::resolve(p) {
        Err(e) if links::is_foreign(&e) => Some(e.to_string()),
        _ => None,
    };
    for t in targets {
        if let TargetKind::Dir { path } = &t.kind {
            if let Some(reason) = refused(path) {
                return Err(LabError::BadTarget {
                    spec: t.text.clone(),
                    reason,
                });
            }
        }
    }
    for dev in [&opts.device, &opts.cache_device].into_iter().flatten() {
        if let Some(reason) = refused(dev) {
            return Err(LabError::Refused {
                device: dev.display().to_string(),
                reason,
            });
        }
    }
    match &opts.workdir {
        Some(w) => {
            if let Some(reason) = refused(w) {
                return Err(LabError::BadWorkdir {
                    path: w.clone(),
                    reason,
                });
            }
        }
        None => {
            let temp = std::env::temp_dir();
            if let Some(reason) = refused(&temp) {
                return Err(LabError::Refused {
                    device: format!("the temporary directory `{}`", temp.display()),
                    reason,
                });
            }
        }
    }
    Ok(())
}

/// A fresh or given workdir; says whether the lab made it (only then is
/// it removed at the end, and only when empty). A fresh one is a new
/// directory with a random name and mode 0700 in the temporary directory;
/// a given one that exists must be this user's alone (it will hold the
/// state file that root's cleanup believes), and one that does not is
/// made with mode 0700.
fn make_workdir(given: Option<&Path>) -> Result<(PathBuf, bool), LabError> {
    let dir = match given {
        Some(d) => absolute(d),
        None => {
            let temp = std::env::temp_dir();
            return private::make_dir_in(&temp, &format!("iolab-lab-{}-", std::process::id()))
                .map(|d| (d, true))
                .map_err(|e| LabError::io("cannot create workdir in", temp, e));
        }
    };
    if std::fs::symlink_metadata(&dir).is_ok() {
        return match private::open_trusted_dir(&dir) {
            Ok(_) => Ok((dir, false)),
            Err(why) => Err(LabError::BadWorkdir {
                path: dir,
                reason: why.to_string(),
            }),
        };
    }
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| LabError::io("cannot create workdir", parent, e))?;
    }
    private::create_dir(&dir).map_err(|e| LabError::io("cannot create workdir", &dir, e))?;
    Ok((dir, true))
}

pub(crate) fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// Where target `index`'s workload files go, and how messages name it:
/// the mount point of a formatted target (not known before the run when
/// the workdir is a fresh one), the work directory the lab makes inside
/// a directory target.
fn target_place(t: &TargetSpec, index: usize, workdir: Option<&Path>) -> (PathBuf, String) {
    match &t.kind {
        TargetKind::Format { .. } => (
            match workdir {
                Some(w) => mount_point(&absolute(w), index, &t.label),
                None => PathBuf::from("/nonexistent/iolab-mount-point"),
            },
            mounted_place(&t.label, None),
        ),
        TargetKind::Dir { path } => {
            let dir = work_dir_in(path, index);
            let place = dir_place(&t.label, &dir);
            (dir, place)
        }
    }
}

/// How messages name the filesystem of a formatted target (with where
/// it is mounted, once it is).
fn mounted_place(label: &str, mnt: Option<&Path>) -> String {
    match mnt {
        Some(m) => format!(
            "the filesystem of target `{label}` (mounted at {})",
            m.display()
        ),
        None => format!("the filesystem of target `{label}`"),
    }
}

/// How messages name the work directory in a directory target.
fn dir_place(label: &str, work: &Path) -> String {
    format!("target `{label}` (its files go in {})", work.display())
}

/// The name of target `index`'s image and mount point.
fn item_name(index: usize, label: &str) -> String {
    format!("{}-{}", index + 1, file_part(label))
}

/// The mount point of format target `index` in `workdir`.
fn mount_point(workdir: &Path, index: usize, label: &str) -> PathBuf {
    workdir.join(format!("mnt-{}", item_name(index, label)))
}

/// The directory the lab makes inside directory target `index`.
fn work_dir_in(target: &Path, index: usize) -> PathBuf {
    absolute(target).join(format!(
        "{}{}-{}",
        crate::state::WORK_FILES_PREFIX,
        std::process::id(),
        index + 1
    ))
}

/// A label made safe for a file name.
fn file_part(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

struct Format<'a> {
    index: usize,
    fs: &'a str,
    tool: &'a Path,
    mkfs_opts: &'a [String],
    mount_opts: Option<&'a str>,
    stack: Option<Stack>,
}

/// Where a target's workloads run: its label, the directory, how
/// messages name it, and the bytes its files may take.
struct Site<'a> {
    label: &'a str,
    dir: &'a Path,
    place: &'a str,
    budget: u64,
    /// The bcache stack under the directory, whose counters are read
    /// around each run.
    bcache: Option<&'a Bcache>,
}

struct Ctx<'a> {
    opts: &'a Options,
    stop: &'a AtomicBool,
    workdir: &'a Path,
    device: Option<&'a Path>,
    cache_device: Option<&'a Path>,
    bcache_tool: Option<PathBuf>,
    /// What `mount` says its version is, and the kernel's release: the
    /// same for every target.
    mount_version: String,
    kernel: String,
    runs_total: u64,
    runs_done: u64,
}

impl Ctx<'_> {
    /// Measures target number `i`, `t`, whose tool check is `ready`, by
    /// its kind: a filesystem made with that tool, or a directory.
    fn measure(
        &mut self,
        (i, t, ready): (usize, &TargetSpec, &Result<Option<PathBuf>, String>),
        state: &mut State,
        col: &mut TargetColumn,
        cmp: &mut Comparison,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), LabError> {
        match (&t.kind, ready) {
            (
                TargetKind::Format {
                    fs,
                    mkfs_opts,
                    mount_opts,
                    stack,
                },
                Ok(Some(tool)),
            ) => {
                let f = Format {
                    index: i,
                    fs,
                    tool,
                    mkfs_opts,
                    mount_opts: mount_opts.as_deref(),
                    stack: *stack,
                };
                self.format_target(&f, state, col, cmp, progress)
            }
            (TargetKind::Dir { path }, _) => self.dir_target(i, path, state, col, cmp, progress),
            _ => Ok(()),
        }
    }

    fn check_stop(&self) -> Result<(), LabError> {
        if self.stop.load(Ordering::Relaxed) {
            Err(LabError::Interrupted)
        } else {
            Ok(())
        }
    }

    /// A sparse image of the target's size in the workdir, attached to a
    /// loop device (each recorded for cleanup), with notes when the image
    /// may not fit, lives in memory or is cached twice.
    fn loop_image(
        &self,
        name: &str,
        state: &mut State,
        cmp: &mut Comparison,
    ) -> Result<(PathBuf, Option<PathBuf>), LabError> {
        let img = self.workdir.join(format!("{name}.img"));
        if let Ok(host) = capacity::of(self.workdir) {
            if host.avail_bytes < self.opts.size {
                cmp.note(&format!(
                    "the {} MiB images are larger than the {} MiB free in {}: writes to them may fail",
                    self.opts.size >> 20,
                    host.avail_bytes >> 20,
                    self.workdir.display()
                ));
            }
        }
        if let Some(fs) = memory_fs(self.workdir) {
            cmp.note(&format!(
                "the workdir {} is on {fs}, in memory: the loop images live there, so \
                 every figure is memory's, not a disk's; give a --workdir on the disk \
                 you mean to measure",
                self.workdir.display()
            ));
        }
        // Made new (a file that exists is refused), then recorded:
        // cleanup removes only what this run made.
        image::create_sparse(&img, self.opts.size)?;
        record_made(state, Entry::Image(img.clone()))?;
        let dev = loopdev::attach(&img)?;
        state.add(Entry::Loop {
            device: dev.clone(),
            image: img.clone(),
        })?;
        if loopdev::direct_io(&dev) != Some(true) {
            cmp.note(&format!(
                "direct I/O is off on {} (the filesystem of {} does not take it): each image is cached twice, in the loop device's page cache and the image file's",
                dev.display(),
                self.workdir.display()
            ));
        }
        Ok((dev, Some(img)))
    }

    /// Which tools made a filesystem target and how, before they run: a
    /// target that fails still says what was tried.
    fn setup_of(&self, f: &Format) -> TargetSetup {
        TargetSetup {
            fs_type: f.fs.to_string(),
            mkfs_tool: f.tool.display().to_string(),
            mkfs_version: mkfs::version(f.tool),
            mkfs_options: mkfs::args(f.fs, f.mkfs_opts, Path::new(""))
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .filter(|a| !a.is_empty())
                .collect(),
            mount_version: self.mount_version.clone(),
            kernel: self.kernel.clone(),
            mount_options_asked: f.mount_opts.unwrap_or_default().to_string(),
            ..TargetSetup::default()
        }
    }

    /// mkfs of `dev` and the first mount on `mnt` after it, `repeat` times
    /// (the last filesystem made is the one measured further), its
    /// capacity, then `repeat` cold mounts (unmount, drop caches, mount).
    fn make_and_mount(
        &self,
        f: &Format,
        (dev, mnt): (&Path, &Path),
        state: &mut State,
        col: &mut TargetColumn,
        cmp: &mut Comparison,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<capacity::Capacity, LabError> {
        let label = col.label.clone();
        // mkfs and the first mount after it, `repeat` times: the last
        // filesystem made is the one measured further.
        for run in 1..=cmp.repeat {
            self.check_stop()?;
            progress(Progress::Step {
                label: &label,
                what: "mkfs and first mount",
            });
            let took = mkfs::format(f.tool, f.fs, f.mkfs_opts, dev)?;
            record(cmp, col, &metrics::MKFS, took.as_secs_f64());
            self.check_stop()?;
            state.add(Entry::Mount(mnt.to_path_buf()))?;
            let took = mount::mount(f.fs, dev, mnt, f.mount_opts)?;
            record(cmp, col, &metrics::MOUNT_FIRST, ms(took));
            if run < cmp.repeat {
                mount::umount(mnt)?;
            }
        }

        let cap = capacity::of(mnt)?;
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        record(cmp, col, &metrics::SIZE, mib(cap.size_bytes));
        record(cmp, col, &metrics::AVAIL, mib(cap.avail_bytes));
        record(cmp, col, &metrics::USED, mib(cap.used_bytes));
        record(cmp, col, &metrics::INODES, cap.inodes_total as f64);

        progress(Progress::Step {
            label: &label,
            what: "cold mounts",
        });
        for _ in 0..cmp.repeat {
            self.check_stop()?;
            let off = mount::umount(mnt)?;
            record(cmp, col, &metrics::UMOUNT, ms(off));
            mount::drop_caches()?;
            let on = mount::mount(f.fs, dev, mnt, f.mount_opts)?;
            record(cmp, col, &metrics::MOUNT_COLD, ms(on));
        }
        Ok(cap)
    }

    fn format_target(
        &mut self,
        f: &Format,
        state: &mut State,
        col: &mut TargetColumn,
        cmp: &mut Comparison,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), LabError> {
        let name = item_name(f.index, &col.label);
        let (dev, img) = match self.device {
            Some(d) => (d.to_path_buf(), None),
            None => self.loop_image(&name, state, cmp)?,
        };
        col.description = format!("{} on {}", col.description, dev.display());
        let label = col.label.clone();
        self.check_stop()?;
        let stack = match f.stack {
            Some(Stack::Bcache(mode)) => {
                progress(Progress::Step {
                    label: &label,
                    what: "bcache stack",
                });
                let b = self.make_stack(&name, mode, &dev, img.as_deref(), state)?;
                col.description = format!(
                    "{} ({} over {}, cache {})",
                    col.description,
                    b.device.display(),
                    b.backing.display(),
                    b.cache.display()
                );
                Some(b)
            }
            None => None,
        };
        let dev = stack.as_ref().map_or(dev, |b| b.device.clone());

        // Which tools made it and how, before they run: a target that
        // fails still says what was tried.
        col.setup = Some(self.setup_of(f));

        let mnt = mount_point(self.workdir, f.index, &col.label);
        image::create_dir_new(&mnt, "a mount point")?;
        record_made(state, Entry::MountDir(mnt.clone()))?;
        let cap = self.make_and_mount(f, (&dev, &mnt), state, col, cmp, progress)?;
        self.check_stop()?;
        // The options in effect on the mount the workloads use, as the
        // kernel lists them (it adds its defaults and may drop or
        // rewrite what was asked).
        if let (Some(setup), Some(m)) =
            (col.setup.as_mut(), mountinfo::at(&mountinfo::read(), &mnt))
        {
            setup.fs_type.clone_from(&m.fs_type);
            setup.mount_options = m.options();
            setup.mount_source.clone_from(&m.source);
        }
        // The mount the workloads use: is NILFS2's cleaner running on it?
        if f.fs == "nilfs2" {
            cmp.note(&crate::cleaner::note(&label, &dev, &mnt));
        }

        progress(Progress::Step {
            label: &label,
            what: "read speed",
        });
        let speed = readspeed::measure(&dev)?;
        record(cmp, col, &metrics::CACHED_READ, speed.cached_mb_s);
        record(cmp, col, &metrics::DEVICE_READ, speed.device_mb_s);
        if self.device.is_none() {
            cmp.note(SPARSE_NOTE);
        }

        let budget = self.opts.size.min(cap.avail_bytes);
        let place = mounted_place(&label, Some(&mnt));
        let site = Site {
            label: &label,
            dir: &mnt,
            place: &place,
            budget,
            bcache: stack.as_ref(),
        };
        self.suite(site, col, cmp, progress)?;
        if let Some(b) = &stack {
            if let Some(Stack::Bcache(mode)) = f.stack {
                if b.mode() != Some(mode) {
                    cmp.note(&format!(
                        "{label}: bcache's mode changed during the run (now {}), not {}",
                        b.mode().map_or("unknown", |m| m.name()),
                        mode.name()
                    ));
                }
            }
        }
        Ok(())
    }

    /// Stacks a bcache device on `backing` (image `img` when the lab made
    /// it) with a cache device in front: `--cache-device`, or a loop image
    /// of --cache-size in the workdir. Each member is recorded before
    /// make-bcache runs, so that cleanup releases it whatever happens.
    fn make_stack(
        &self,
        name: &str,
        mode: CacheMode,
        backing: &Path,
        img: Option<&Path>,
        state: &mut State,
    ) -> Result<Bcache, LabError> {
        let tool = self
            .bcache_tool
            .as_deref()
            .ok_or_else(|| LabError::BadTarget {
                spec: name.to_string(),
                reason: "bcache is not available here".into(),
            })?;
        let cache = match self.cache_device {
            Some(c) => {
                state.add(Entry::BcacheNamed(c.to_path_buf()))?;
                // The user gave it with --destroy-data: old signatures
                // (make-bcache refuses a device that has one) go.
                exec::run("wipefs", &["-a".as_ref(), c.as_os_str()])?;
                c.to_path_buf()
            }
            None => {
                let cimg = self.workdir.join(format!("{name}-cache.img"));
                image::create_sparse(&cimg, self.opts.cache_size)?;
                record_made(state, Entry::Image(cimg.clone()))?;
                let c = loopdev::attach(&cimg)?;
                state.add(Entry::Loop {
                    device: c.clone(),
                    image: cimg.clone(),
                })?;
                state.add(Entry::Bcache {
                    device: c.clone(),
                    image: cimg,
                })?;
                c
            }
        };
        state.add(match img {
            Some(image) => Entry::Bcache {
                device: backing.to_path_buf(),
                image: image.to_path_buf(),
            },
            None => Entry::BcacheNamed(backing.to_path_buf()),
        })?;
        if img.is_none() {
            exec::run("wipefs", &["-a".as_ref(), backing.as_os_str()])?;
        }
        bcache::make(tool, &cache, backing, mode)
    }

    fn dir_target(
        &mut self,
        index: usize,
        path: &Path,
        state: &mut State,
        col: &mut TargetColumn,
        cmp: &mut Comparison,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), LabError> {
        let work = work_dir_in(path, index);
        image::create_dir_new(&work, "a work directory")?;
        record_made(state, Entry::WorkFiles(work.clone()))?;
        // The mount that holds it, as it is: the lab made nothing.
        let env = iolab_core::probe::probe(&work);
        col.setup = Some(TargetSetup {
            fs_type: env.fs_type,
            kernel: env.kernel,
            mount_options: env.mount_options,
            mount_source: env.mount_source,
            ..TargetSetup::default()
        });
        let avail = capacity::of(&work)
            .map(|c| c.avail_bytes)
            .unwrap_or(self.opts.size);
        let label = col.label.clone();
        let place = dir_place(&label, &work);
        let site = Site {
            label: &label,
            dir: &work,
            place: &place,
            budget: self.opts.size.min(avail),
            bcache: None,
        };
        self.suite(site, col, cmp, progress)
    }

    fn suite(
        &mut self,
        site: Site,
        col: &mut TargetColumn,
        cmp: &mut Comparison,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), LabError> {
        let Site {
            label,
            dir,
            place,
            budget,
            bcache: stack,
        } = site;
        let params = workload::Params {
            dir,
            place,
            file_size: suite::file_size(budget),
            runtime_s: self.opts.runtime_s,
            host: self.opts.host,
        };
        let rule = self
            .opts
            .auto
            .unwrap_or(RepeatRule::Times { runs: cmp.repeat });
        for w in &self.opts.suite.workloads {
            // Each figure's runs so far, for the rule.
            let mut figures: Vec<(String, Vec<f64>)> = Vec::new();
            let started = std::time::Instant::now();
            let mut run = 0u32;
            let stopped = loop {
                if let Some(why) = repeat_rule::should_stop(&rule, run, started.elapsed(), &figures)
                {
                    break why;
                }
                run += 1;
                self.check_stop()?;
                if crate::is_root() {
                    mount::drop_caches()?;
                }
                let left = self.runs_total.saturating_sub(self.runs_done);
                progress(Progress::Workload {
                    label,
                    workload: &w.name,
                    run,
                    repeat: rule.max_runs(),
                    remaining: Duration::from_secs(left * self.opts.runtime_s.max(1)),
                });
                if let Some(files) = w.meta_files {
                    let opts = iolab_core::meta::MetaOptions {
                        dir: dir.to_path_buf(),
                        files,
                        ..Default::default()
                    };
                    let r = iolab_core::meta::run_meta(&opts, self.stop).map_err(|e| {
                        LabError::Workload {
                            name: w.name.clone(),
                            reason: e.to_string(),
                        }
                    })?;
                    self.runs_done += 1;
                    for p in &r.phases {
                        add_figure(
                            &mut figures,
                            format!("meta {} ops/s", p.phase.name()),
                            p.ops_per_sec(),
                        );
                    }
                    metrics::record_meta(cmp, col, &r);
                    continue;
                }
                let before = stack.map(|b| b.counters());
                let result = workload::run(w, &params, self.stop)?;
                self.runs_done += 1;
                let cache = stack
                    .zip(before)
                    .map(|(b, c)| (b.mode(), b.counters().since(&c)));
                for job in &result.jobs {
                    for d in [iolab_stats::Dir::Read, iolab_stats::Dir::Write] {
                        let dr = job.dir(d);
                        if dr.total_ios > 0 {
                            add_figure(
                                &mut figures,
                                format!("{} {} MB/s", job.name, d.key()),
                                dr.bw_bytes() as f64,
                            );
                        }
                    }
                }
                metrics::record_run(cmp, col, w, run, &result);
                if let Some((mode, counters)) = cache {
                    metrics::record_bcache(cmp, col, w, run, mode, &counters);
                }
                cmp.runs.push(WorkloadRun {
                    target: label.to_string(),
                    workload: w.name.clone(),
                    run,
                    result,
                });
            };
            if self.opts.auto.is_some() {
                let o = repeat_rule::outcome(&rule, run, stopped, started.elapsed(), &figures);
                cmp.repeat = cmp.repeat.max(run);
                cmp.note(&format!("{label}, {}: {}", w.name, o.describe()));
            }
        }
        Ok(())
    }
}

/// Adds one run's value of the figure `name`.
fn add_figure(figures: &mut Vec<(String, Vec<f64>)>, name: String, v: f64) {
    match figures.iter_mut().find(|(n, _)| *n == name) {
        Some((_, vs)) => vs.push(v),
        None => figures.push((name, vec![v])),
    }
}

/// Why device reads on a loop image are an upper bound.
/// The filesystem of `dir` when it keeps its files in memory.
fn memory_fs(dir: &Path) -> Option<&'static str> {
    match iolab_engine::file::fs_type(dir).ok()? {
        iolab_engine::file::FsType::Tmpfs => Some("tmpfs"),
        iolab_engine::file::FsType::Ramfs => Some("ramfs"),
        _ => None,
    }
}

pub const SPARSE_NOTE: &str = "device reads on loop images read a sparse image file: blocks never written come back as zeros without touching the disk, so those numbers are an upper bound";

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_parts_are_safe() {
        assert_eq!(file_part("btrfs@compress=zstd"), "btrfs_compress_zstd");
        assert_eq!(file_part("../x"), ".._x");
    }
}
