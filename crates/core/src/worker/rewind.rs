//! The page cache dropped at each pass over a file of a time_based job, as
//! fio's `invalidate=1` (the default) does: fio drops a file's cached pages
//! when it opens the file and again each time a time_based job's offsets
//! wrap to a new pass (a sequential job past the end of its region, a
//! random one whose map has given every block). Without it, a buffered job
//! whose runtime outlasts one pass reads memory from the second pass on.
//! fio does the same for a random map that fills under its skewed file
//! choice (`file_service_type=zipf`, `pareto`, `normal`), which resets the
//! file then.
//!
//! The drop happens between I/Os, before the first offset of the new pass
//! is drawn: it counts in the job's runtime but in no I/O's latency. As in
//! fio it happens only where a pass has an end, so not for random offsets
//! that may repeat (`norandommap`, a non-uniform `random_distribution`);
//! iolab also leaves it out where it cannot change what is measured:
//! direct I/O, `pre_read` (which keeps the file cached on purpose), block
//! devices and engines that move no file data.

use std::fs::File;
use std::path::PathBuf;

use iolab_spec::value::Distribution;

use crate::gen::Pattern;
use crate::plan::PlanJob;

/// One file's region and what is known of its passes.
struct Region {
    path: PathBuf,
    offset: u64,
    len: u64,
    /// The pass each of the file's generators had reached when last seen.
    seen: [u64; 3],
    /// A block device: fio flushes its buffers instead; iolab leaves it.
    skip: bool,
}

/// The drops of one clone, one region per file of the clone.
pub(super) struct Rewind {
    regions: Vec<Region>,
}

/// Whether a job's offsets have passes fio ends with a drop of the cache.
pub(super) fn wanted(job: &PlanJob, pattern: &Pattern) -> bool {
    let passes_end = match pattern {
        Pattern::Sequential { .. } | Pattern::Backward { .. } => true,
        Pattern::Random {
            distribution,
            norandommap,
            ..
        } => matches!(distribution, Distribution::Random) && !norandommap,
    };
    // fio's skewed file choice resets a file whose random map is full
    // and drops its cache then, time_based or not.
    let resets = job.time_based
        || (job.file_service.skewed()
            && job.files.len() > 1
            && matches!(pattern, Pattern::Random { .. }));
    resets
        && job.invalidate
        && !job.pre_read
        && !job.direct
        && job.engine.moves_file_data()
        && passes_end
}

impl Rewind {
    pub fn new() -> Rewind {
        Rewind {
            regions: Vec::new(),
        }
    }

    /// Adds the clone's next file: its region `[offset, offset + len)`.
    pub fn add(&mut self, path: PathBuf, offset: u64, len: u64, block_device: bool) {
        self.regions.push(Region {
            path,
            offset,
            len,
            seen: [0; 3],
            skip: block_device,
        });
    }

    /// Called before generator `g` of file `fi` draws an offset, with the
    /// passes it has finished: drops the file's region from the cache when
    /// a new pass is about to begin.
    #[inline(always)]
    pub fn before_draw(&mut self, fi: usize, g: usize, pass: u64) {
        if let Some(r) = self.regions.get_mut(fi) {
            if r.seen[g % 3] != pass {
                r.seen[g % 3] = pass;
                r.drop_cache();
            }
        }
    }

    /// How many regions the clone has (one per file).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.regions.len()
    }
}

impl Region {
    #[cold]
    #[inline(never)]
    fn drop_cache(&mut self) {
        if self.skip {
            return;
        }
        // Opened for the drop and closed at once: the job keeps no more
        // files open than `openfiles` allows. As in fio, a failed drop
        // does not fail the job: the pass is measured all the same.
        if let Ok(f) = File::open(&self.path) {
            let _ = iolab_engine::file::drop_cache(&f, self.offset, self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn cached(f: &File) -> u64 {
        iolab_engine::residency::cached_bytes(f, 0, 1 << 20).unwrap()
    }

    #[test]
    fn a_new_pass_drops_the_region_and_the_same_pass_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let mut r = Rewind::new();
        r.add(path.clone(), 0, 1 << 20, false);
        assert_eq!(r.len(), 1);
        let reader = File::open(&path).unwrap();
        let read_all = || {
            let mut buf = vec![0u8; 1 << 20];
            std::os::unix::fs::FileExt::read_exact_at(&reader, &mut buf, 0).unwrap();
        };
        read_all();
        let before = cached(&reader);
        assert!(before > 0, "a file just read is cached");
        // Still the first pass: nothing dropped.
        r.before_draw(0, 0, 0);
        assert_eq!(cached(&reader), before);
        // The generator finished its first pass: the region goes.
        r.before_draw(0, 0, 1);
        assert_eq!(cached(&reader), 0);
        // Read again; the same pass count drops nothing more.
        read_all();
        let again = cached(&reader);
        assert!(again > 0);
        r.before_draw(0, 0, 1);
        assert_eq!(cached(&reader), again);
        // Another generator of the file keeps its own count.
        r.before_draw(0, 1, 1);
        assert_eq!(cached(&reader), 0);
    }

    #[test]
    fn a_block_device_is_left_alone_and_a_missing_file_is_no_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![1u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let reader = File::open(&path).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        std::os::unix::fs::FileExt::read_exact_at(&reader, &mut buf, 0).unwrap();
        let before = cached(&reader);
        assert!(before > 0);
        let mut r = Rewind::new();
        r.add(PathBuf::from("/nonexistent/iolab/file"), 0, 4096, false);
        // Standing in for a block device: flagged as one, never dropped.
        r.add(path, 0, 1 << 20, true);
        r.before_draw(0, 0, 1);
        r.before_draw(1, 0, 1);
        r.before_draw(7, 0, 1);
        assert_eq!(cached(&reader), before);
        assert_eq!(r.regions[1].seen, [1, 0, 0]);
    }
}
