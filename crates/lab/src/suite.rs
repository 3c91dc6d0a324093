//! The built-in workload suites: fio job texts run on each target, in
//! order. A job text names its files through `${IOLAB_DIR}` (the target's
//! directory), sizes them with `${IOLAB_SIZE}` (one workload's file, scaled
//! to the image: an eighth of it, 16 MiB to 1 GiB) or `${IOLAB_SIZE_16}`
//! (a sixteenth of that, for 16-job workloads) and bounds them with
//! `${IOLAB_RUNTIME}` (seconds per workload). Every job ends with
//! `unlink=1`, so one workload's files do not fill the image for the next.
//!
//! The default suite, `studies`, reproduces the published studies: each
//! item's `about` says which number it stands for, and `iolab compare
//! --list-suites` prints its fio job.

/// The unit of a workload's bandwidth rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BwUnit {
    /// MB/s, 10^6 bytes per second.
    #[default]
    MBs,
    /// KB/s, 10^3 bytes per second: for the slow write+fsync patterns,
    /// as the studies publish them.
    KBs,
}

impl BwUnit {
    /// The metric key's suffix.
    pub fn key(self) -> &'static str {
        match self {
            BwUnit::MBs => "mb_s",
            BwUnit::KBs => "kb_s",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            BwUnit::MBs => "MB/s",
            BwUnit::KBs => "KB/s",
        }
    }

    /// Bytes per unit.
    pub fn bytes(self) -> f64 {
        match self {
            BwUnit::MBs => 1e6,
            BwUnit::KBs => 1e3,
        }
    }
}

/// One workload: a name (the rows' prefix), what it shows, its job text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workload {
    pub name: String,
    pub about: String,
    pub job: String,
    /// The user's job file it was read from (`--job`); its files are
    /// redirected into the target, see [`crate::workload::redirect`].
    pub source: Option<std::path::PathBuf>,
    /// Not a fio job: the metadata benchmark over this many files (`job`
    /// is empty).
    pub meta_files: Option<u64>,
    /// The unit of its bandwidth rows.
    pub bw: BwUnit,
}

impl Workload {
    /// A user's job file, named after the file's stem.
    pub fn from_file(path: &std::path::Path) -> Result<Workload, crate::LabError> {
        let job = std::fs::read_to_string(path)
            .map_err(|e| crate::LabError::io("cannot read job file", path, e))?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "job".into());
        Ok(Workload {
            name,
            about: format!("job file {}", path.display()),
            job,
            source: Some(path.to_path_buf()),
            ..Default::default()
        })
    }
}

/// A named list of workloads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suite {
    pub name: String,
    pub about: String,
    pub workloads: Vec<Workload>,
}

impl Suite {
    /// Appends `w` under a name no other workload of the suite has (rows
    /// are named after workloads): a clash gets `#2`, `#3`, ... Returns
    /// the name it got.
    pub fn add(&mut self, mut w: Workload) -> String {
        let base = w.name.clone();
        let mut n = 1;
        while self.workloads.iter().any(|x| x.name == w.name) {
            n += 1;
            w.name = format!("{base}#{n}");
        }
        let name = w.name.clone();
        self.workloads.push(w);
        name
    }
}

/// What every built-in job shares. The jobs are size-bounded, as the
/// studies' own job files are: each moves its file once (`runtime` ends
/// it earlier on a slow target), so a buffered write with end_fsync is
/// timed until its data is on the device and a read pass is not served
/// again from the cache it filled. Items that are time-based say so.
const GLOBAL: &str = "\
[global]
directory=${IOLAB_DIR}
size=${IOLAB_SIZE}
runtime=${IOLAB_RUNTIME}
unlink=1
";

/// (name, about, job options after [global], bandwidth unit).
type Item = (&'static str, &'static str, &'static str, BwUnit);

const BASIC: &[Item] = &[
    (
        "seqwrite-1m",
        "buffered sequential write, 1 MiB blocks, fsync at the end",
        "[seqwrite-1m]\nrw=write\nbs=1M\nend_fsync=1\n",
        BwUnit::MBs,
    ),
    (
        "seqread-1m",
        "sequential read, 1 MiB blocks, page cache of the file dropped first",
        "[seqread-1m]\nrw=read\nbs=1M\n",
        BwUnit::MBs,
    ),
    (
        "randread-4k",
        "random read, 4 KiB blocks",
        "[randread-4k]\nrw=randread\nbs=4k\n",
        BwUnit::MBs,
    ),
    (
        "randwrite-4k",
        "buffered random write, 4 KiB blocks, fsync at the end",
        "[randwrite-4k]\nrw=randwrite\nbs=4k\nend_fsync=1\n",
        BwUnit::MBs,
    ),
];

/// The default suite: the published studies, one item each.
const STUDIES: &[Item] = &[
    (
        "seqwrite-1m",
        "buffered sequential write MB/s: 1 MiB blocks, fsync at the end (EXT4/NILFS2/F2FS study)",
        "[seqwrite-1m]\nrw=write\nbs=1M\nend_fsync=1\n",
        BwUnit::MBs,
    ),
    (
        "randwrite-4k",
        "buffered random 4k write IOPS, fsync at the end (EXT4/NILFS2/F2FS study)",
        "[randwrite-4k]\nrw=randwrite\nbs=4k\nend_fsync=1\n",
        BwUnit::MBs,
    ),
    (
        "seqwrite-fsync",
        "write+fsync sequential KB/s and fsync latency: every 4k write followed by fsync, the SQLite pattern (EXT4/NILFS2/F2FS study)",
        "[seqwrite-fsync]\nrw=write\nbs=4k\nfsync=1\n",
        BwUnit::KBs,
    ),
    (
        "randwrite-fsync",
        "write+fsync random IOPS, KB/s and fsync latency: every random 4k write followed by fsync (EXT4/NILFS2/F2FS study)",
        "[randwrite-fsync]\nrw=randwrite\nbs=4k\nfsync=1\n",
        BwUnit::KBs,
    ),
    (
        "seqread-1m",
        "sequential read, 1 MiB blocks",
        "[seqread-1m]\nrw=read\nbs=1M\n",
        BwUnit::MBs,
    ),
    (
        "randread-4k",
        "random read, 4 KiB blocks",
        "[randread-4k]\nrw=randread\nbs=4k\n",
        BwUnit::MBs,
    ),
    (
        "stonewall-4",
        "four stonewalled jobs one after the other, in the order of the cache-device study's job file: sequential read, random read, sequential write, random write (4 KiB blocks, each its own file)",
        "[Read-Seq]\nrw=read\nstonewall\n[Read-Random]\nrw=randread\nstonewall\n\
         [Write-Seq]\nrw=write\nstonewall\n[Write-Random]\nrw=randwrite\nstonewall\n",
        BwUnit::MBs,
    ),
    (
        "randwrite-16j",
        "random 4k write, O_DIRECT, 16 jobs reported as one (the microSD card study)",
        "[randwrite-16j]\nrw=randwrite\nbs=4k\ndirect=1\nnumjobs=16\n\
         size=${IOLAB_SIZE_16}\ngroup_reporting\n",
        BwUnit::MBs,
    ),
    (
        "randrw-20-80",
        "random 4k read/write 20/80, libaio, O_DIRECT, queue depth 16 (the slat/clat/lat study)",
        "[randrw-20-80]\nrw=randrw\nrwmixread=20\nbs=4k\nioengine=libaio\n\
         iodepth=16\ndirect=1\ntime_based\n",
        BwUnit::MBs,
    ),
];

fn build(name: &str, about: &str, items: &[Item]) -> Suite {
    Suite {
        name: name.to_string(),
        about: about.to_string(),
        workloads: items
            .iter()
            .map(|(n, a, j, bw)| Workload {
                name: n.to_string(),
                about: a.to_string(),
                job: format!("{GLOBAL}{j}"),
                bw: *bw,
                ..Default::default()
            })
            .collect(),
    }
}

/// Names of the built-in suites, the default first.
pub const NAMES: [&str; 4] = [DEFAULT, "basic", "meta", "bs-sweep"];

/// The name `basic` had before; `iolab quick` is another thing, so the
/// old name is only an alias that says so.
pub const OLD_BASIC: &str = "quick";

/// The suite `iolab compare` runs when given neither `--suite` nor `--job`.
pub const DEFAULT: &str = "studies";

/// Files of the `meta` suite: the 10,000-file study people publish.
pub const META_FILES: u64 = 10_000;

/// Block sizes of the `bs-sweep` suite.
const SWEEP_BS: [&str; 6] = ["1k", "4k", "16k", "64k", "256k", "1m"];

/// `dd` at every block size, the same bytes at each: a buffered write
/// with fsync at the end, then a read with the file's cache dropped.
fn bs_sweep() -> Suite {
    let mut workloads = Vec::new();
    for bs in SWEEP_BS {
        for (rw, about, extra) in [
            (
                "write",
                "buffered sequential write, fsync at the end",
                "end_fsync=1\n",
            ),
            ("read", "sequential read", ""),
        ] {
            let name = format!("{rw}-{bs}");
            workloads.push(Workload {
                about: format!("{about}, {bs} blocks"),
                // Size-bounded, not time-bounded: every block size moves the
                // same bytes, as `dd bs=X count=N/X` does.
                job: format!(
                    "[global]\ndirectory=${{IOLAB_DIR}}\nfilename=bs-sweep-{bs}\n\
                     size=${{IOLAB_SIZE}}\nruntime=${{IOLAB_RUNTIME}}\nunlink={}\n\
                     [{name}]\nrw={rw}\nbs={bs}\n{extra}",
                    u8::from(rw == "read"),
                ),
                name,
                ..Default::default()
            });
        }
    }
    Suite {
        name: "bs-sweep".into(),
        about: "sequential write (fsync at the end) and read at block sizes 1k to 1m, the same bytes at each".into(),
        workloads,
    }
}

/// A built-in suite by name.
pub fn builtin(name: &str) -> Option<Suite> {
    match name {
        "basic" => Some(build(
            "basic",
            "a short look: sequential write and read with 1 MiB blocks, random 4k read and write",
            BASIC,
        )),
        "studies" => Some(build(
            "studies",
            "the default: the published comparisons, buffered and write+fsync writes, reads, a four-job stonewalled file, 16 direct random writers, libaio randrw 20/80",
            STUDIES,
        )),
        "meta" => Some(Suite {
            name: "meta".into(),
            about: "10,000 empty files in one directory: create, open, utime, stat, readdir, rename, unlink".into(),
            workloads: vec![Workload {
                name: "meta".into(),
                about: "the metadata benchmark of `iolab meta`".into(),
                meta_files: Some(META_FILES),
                ..Default::default()
            }],
        }),
        "bs-sweep" => Some(bs_sweep()),
        _ => None,
    }
}

/// The per-workload file size for an image (or budget) of `bytes`.
pub fn file_size(bytes: u64) -> u64 {
    let s = (bytes / 8).clamp(16 << 20, 1 << 30);
    s >> 20 << 20
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_spec::{parse_text, Context, Host};

    /// The lab's variables, for parsing the suites' job texts.
    fn lab_context() -> Context {
        let mut ctx = Context::fixed(Host::EXAMPLE);
        for (k, v) in [
            ("IOLAB_DIR", "/tmp"),
            ("IOLAB_SIZE", "64m"),
            ("IOLAB_SIZE_16", "4m"),
            ("IOLAB_RUNTIME", "1"),
        ] {
            ctx.vars.insert(k.into(), v.into());
        }
        ctx
    }

    #[test]
    fn every_builtin_job_parses() {
        let ctx = lab_context();
        for name in NAMES {
            let s = builtin(name).unwrap();
            assert!(!s.workloads.is_empty());
            for w in s.workloads.iter().filter(|w| w.meta_files.is_none()) {
                let set = parse_text(&w.name, &w.job, &ctx)
                    .unwrap_or_else(|e| panic!("{name}/{}: {e}", w.name));
                assert!(!set.jobs.is_empty());
                iolab_core::plan::build(&set).unwrap_or_else(|e| panic!("{name}/{}: {e}", w.name));
            }
        }
        assert!(builtin("nope").is_none());
    }

    #[test]
    fn the_studies_are_the_default() {
        assert_eq!(NAMES[0], DEFAULT);
        let s = builtin(DEFAULT).unwrap();
        assert_eq!(s.name, "studies");
        let names: Vec<&str> = s.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "seqwrite-1m",
                "randwrite-4k",
                "seqwrite-fsync",
                "randwrite-fsync",
                "seqread-1m",
                "randread-4k",
                "stonewall-4",
                "randwrite-16j",
                "randrw-20-80"
            ]
        );
        for w in &s.workloads {
            assert!(!w.about.is_empty(), "{}", w.name);
            // Both write+fsync items in one unit, as the studies give them.
            let kb = w.name.ends_with("-fsync");
            assert_eq!(w.bw == BwUnit::KBs, kb, "{}", w.name);
        }
        // The short suite stays selectable.
        assert_eq!(builtin("basic").unwrap().workloads.len(), 4);
    }

    #[test]
    fn the_stonewalled_item_follows_job_text_a() {
        use iolab_spec::value::RwMode;
        let ctx = lab_context();
        let s = builtin("studies").unwrap();
        let w = s
            .workloads
            .iter()
            .find(|w| w.name == "stonewall-4")
            .unwrap();
        let set = parse_text(&w.name, &w.job, &ctx).unwrap();
        let names: Vec<&str> = set.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(
            names,
            ["Read-Seq", "Read-Random", "Write-Seq", "Write-Random"]
        );
        let modes: Vec<RwMode> = set.jobs.iter().map(|j| j.rw().mode).collect();
        assert_eq!(
            modes,
            [
                RwMode::Read,
                RwMode::RandRead,
                RwMode::Write,
                RwMode::RandWrite
            ]
        );
        assert_eq!(set.groups(), [0, 1, 2, 3]);
    }

    #[test]
    fn added_workloads_get_unique_names() {
        let mut s = builtin("basic").unwrap();
        let w = |name: &str, about: &str| Workload {
            name: name.into(),
            about: about.into(),
            ..Default::default()
        };
        assert_eq!(s.add(w("x", "j1/x.fio")), "x");
        assert_eq!(s.add(w("x", "j2/x.fio")), "x#2");
        assert_eq!(s.add(w("x", "j3/x.fio")), "x#3");
        assert_eq!(s.add(w("seqwrite-1m", "mine")), "seqwrite-1m#2");
        let names: Vec<&str> = s.workloads[4..].iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["x", "x#2", "x#3", "seqwrite-1m#2"]);
        assert_eq!(s.workloads[5].about, "j2/x.fio");
    }

    #[test]
    fn sizes_scale_with_the_image() {
        assert_eq!(file_size(512 << 20), 64 << 20);
        assert_eq!(file_size(4 << 30), 512 << 20);
        assert_eq!(file_size(64 << 20), 16 << 20);
        assert_eq!(file_size(100 << 30), 1 << 30);
    }
}
