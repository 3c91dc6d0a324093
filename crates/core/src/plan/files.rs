//! The files of a job clone: their names (`filename`, or `filename_format`
//! in `directory`), what exists on disk now, and the region of each file the
//! clone works on, from size, filesize, nrfiles, offset and offset_increment
//! as fio defines them.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use iolab_spec::filename::{expand_filename_format, DEFAULT_FORMAT};
use iolab_spec::value::SizeValue;
use iolab_spec::{JobSpec, Opt, Value};

/// What is on disk at a path now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnDisk {
    /// The size of the file or device, when it exists.
    pub size: Option<u64>,
    pub block_device: bool,
    /// A character device (`/dev/null`, `/dev/zero`): used as it is.
    pub char_device: bool,
}

/// Looks at a path without changing anything.
pub fn on_disk(path: &Path) -> OnDisk {
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() => OnDisk {
            size: File::open(path)
                .and_then(|mut f| f.seek(SeekFrom::End(0)))
                .ok(),
            block_device: true,
            char_device: false,
        },
        Ok(m) => OnDisk {
            size: Some(m.len()),
            block_device: false,
            char_device: m.file_type().is_char_device(),
        },
        Err(_) => OnDisk {
            size: None,
            block_device: false,
            char_device: false,
        },
    }
}

/// The paths of clone `clone`'s files. `$jobname` is the job's section
/// name, as in fio, whatever `name=` calls the job.
pub fn file_paths(job: &JobSpec, clone: u32) -> Vec<PathBuf> {
    let dir = job.text(Opt::Directory).filter(|d| !d.is_empty());
    let place = |name: &str| -> PathBuf {
        let p = PathBuf::from(name);
        match &dir {
            Some(d) if p.is_relative() => Path::new(d).join(p),
            _ => p,
        }
    };
    if let Some(Value::Files(names)) = job.get(Opt::Filename) {
        return names.iter().map(|n| place(n)).collect();
    }
    let nrfiles = job.int(Opt::Nrfiles).unwrap_or(1).max(1) as u32;
    let format = job
        .text(Opt::FilenameFormat)
        .filter(|f| !f.is_empty())
        .unwrap_or_else(|| DEFAULT_FORMAT.to_string());
    (0..nrfiles)
        .map(|n| place(&expand_filename_format(&format, &job.section, clone, n)))
        .collect()
}

/// A byte count or a percentage of `whole`.
pub fn resolve_size(v: SizeValue, whole: u64) -> u64 {
    match v {
        SizeValue::Bytes(b) => b,
        SizeValue::Percent(p) => (whole as f64 * p / 100.0) as u64,
    }
}
