//! The built-in workload suites: fio job texts run on each target, in
//! order. A job text names its files through `${IOLAB_DIR}` (the target's
//! directory), sizes them with `${IOLAB_SIZE}` (one workload's file, scaled
//! to the image: an eighth of it, 16 MiB to 1 GiB) or `${IOLAB_SIZE_16}`
//! (a sixteenth of that, for 16-job workloads) and bounds them with
//! `${IOLAB_RUNTIME}` (seconds per workload). Every job ends with
//! `unlink=1`, so one workload's files do not fill the image for the next.

/// One workload: a name (the rows' prefix), what it shows, its job text.
#[derive(Clone, Debug, PartialEq, Eq)]
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
            meta_files: None,
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

const GLOBAL: &str = "\
[global]
directory=${IOLAB_DIR}
size=${IOLAB_SIZE}
runtime=${IOLAB_RUNTIME}
time_based
unlink=1
";

/// (name, about, job options after [global]).
type Item = (&'static str, &'static str, &'static str);

const QUICK: &[Item] = &[
    (
        "seqwrite-1m",
        "buffered sequential write, 1 MiB blocks, fsync at the end",
        "[seqwrite-1m]\nrw=write\nbs=1M\nend_fsync=1\n",
    ),
    (
        "seqread-1m",
        "sequential read, 1 MiB blocks, page cache of the file dropped first",
        "[seqread-1m]\nrw=read\nbs=1M\n",
    ),
    (
        "randread-4k",
        "random read, 4 KiB blocks",
        "[randread-4k]\nrw=randread\nbs=4k\n",
    ),
    (
        "randwrite-4k",
        "buffered random write, 4 KiB blocks, fsync at the end",
        "[randwrite-4k]\nrw=randwrite\nbs=4k\nend_fsync=1\n",
    ),
];

const STUDIES: &[Item] = &[
    (
        "seqwrite-1m",
        "buffered sequential write MB/s",
        "[seqwrite-1m]\nrw=write\nbs=1M\nend_fsync=1\n",
    ),
    (
        "randwrite-4k",
        "buffered random 4k write IOPS",
        "[randwrite-4k]\nrw=randwrite\nbs=4k\nend_fsync=1\n",
    ),
    (
        "seqwrite-fsync",
        "write+fsync, sequential: every 4k write followed by fsync (the SQLite pattern)",
        "[seqwrite-fsync]\nrw=write\nbs=4k\nfsync=1\n",
    ),
    (
        "randwrite-fsync",
        "write+fsync, random 4k",
        "[randwrite-fsync]\nrw=randwrite\nbs=4k\nfsync=1\n",
    ),
    (
        "seqread-1m",
        "sequential read, 1 MiB blocks",
        "[seqread-1m]\nrw=read\nbs=1M\n",
    ),
    (
        "randread-4k",
        "random read, 4 KiB blocks",
        "[randread-4k]\nrw=randread\nbs=4k\n",
    ),
    (
        "stonewall-4",
        "four stonewalled jobs one after the other: sequential write, sequential read, random write, random read",
        "[sw]\nrw=write\nbs=128k\nstonewall\n[sr]\nrw=read\nbs=128k\nstonewall\n\
         [rw]\nrw=randwrite\nbs=4k\nstonewall\n[rr]\nrw=randread\nbs=4k\nstonewall\n",
    ),
    (
        "randwrite-16j",
        "random 4k write, O_DIRECT, 16 jobs reported as one",
        "[randwrite-16j]\nrw=randwrite\nbs=4k\ndirect=1\nnumjobs=16\n\
         size=${IOLAB_SIZE_16}\ngroup_reporting\n",
    ),
    (
        "randrw-20-80",
        "random 4k read/write 20/80, libaio, O_DIRECT, queue depth 16",
        "[randrw-20-80]\nrw=randrw\nrwmixread=20\nbs=4k\nioengine=libaio\n\
         iodepth=16\ndirect=1\n",
    ),
];

fn build(name: &str, about: &str, items: &[Item]) -> Suite {
    Suite {
        name: name.to_string(),
        about: about.to_string(),
        workloads: items
            .iter()
            .map(|(n, a, j)| Workload {
                name: n.to_string(),
                about: a.to_string(),
                job: format!("{GLOBAL}{j}"),
                source: None,
                meta_files: None,
            })
            .collect(),
    }
}

/// Names of the built-in suites, the default first.
pub const NAMES: [&str; 4] = ["quick", "studies", "meta", "bs-sweep"];

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
                source: None,
                meta_files: None,
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
        "quick" => Some(build(
            "quick",
            "the default: sequential write and read with 1 MiB blocks, random 4k read and write",
            QUICK,
        )),
        "studies" => Some(build(
            "studies",
            "the published comparisons: buffered and write+fsync writes, reads, a four-job stonewalled file, 16 direct random writers, libaio randrw 20/80",
            STUDIES,
        )),
        "meta" => Some(Suite {
            name: "meta".into(),
            about: "10,000 empty files in one directory: create, open, utime, stat, readdir, rename, unlink".into(),
            workloads: vec![Workload {
                name: "meta".into(),
                about: "the metadata benchmark of `iolab meta`".into(),
                job: String::new(),
                source: None,
                meta_files: Some(META_FILES),
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
    use iolab_core::spec::{parse_text, Context, Host};

    #[test]
    fn every_builtin_job_parses() {
        let mut ctx = Context::fixed(Host {
            page_size: 4096,
            mb_memory: 1024,
            ncpus: 2,
        });
        for (k, v) in [
            ("IOLAB_DIR", "/tmp"),
            ("IOLAB_SIZE", "64m"),
            ("IOLAB_SIZE_16", "4m"),
            ("IOLAB_RUNTIME", "1"),
        ] {
            ctx.vars.insert(k.into(), v.into());
        }
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
    fn sizes_scale_with_the_image() {
        assert_eq!(file_size(512 << 20), 64 << 20);
        assert_eq!(file_size(4 << 30), 512 << 20);
        assert_eq!(file_size(64 << 20), 16 << 20);
        assert_eq!(file_size(100 << 30), 1 << 30);
    }
}
