//! The job-control options of a clone, carried out around the I/O loop:
//! `zonemode=strided` moves the clone's offsets zone by zone; `flow` holds
//! the clone back while it is ahead of its share of its flow;
//! `latency_target` holds its queue to the depth its search is at
//! (`latency`). Each is off (None) unless the job asks for it, and the
//! fast paths are taken only when all are off.

use iolab_engine::clock::Clock;

use super::latency::LatSearch;
use crate::flow::FlowShare;
use crate::gen::OffsetGen;
use crate::plan::{PlanFile, PlanJob, StridedZones};

/// What the clone carries out besides its I/O.
#[derive(Default)]
pub(super) struct Control {
    pub zones: Option<Box<Strided>>,
    /// Set when the clone starts, from the run's flow groups.
    pub flow: Option<FlowShare>,
    /// The search for the depth that meets `latency_target`.
    pub latency: Option<Box<LatSearch>>,
}

impl Control {
    pub fn new(job: &PlanJob, files: &[PlanFile]) -> Control {
        let clock = Clock::get();
        Control {
            zones: job.zones.map(|z| Box::new(Strided::new(z, job, files))),
            flow: None,
            latency: job.latency.map(|l| {
                let window = clock.ticks(l.window);
                Box::new(LatSearch::new(&l, job.iodepth, clock.now(), window))
            }),
        }
    }

    /// Nothing to carry out: the fast paths may run.
    pub fn idle(&self) -> bool {
        self.zones.is_none() && self.flow.is_none() && self.latency.is_none()
    }

    /// Whether one more I/O may join the `queued` ones: always, unless the
    /// latency target's search holds the queue lower.
    #[inline]
    pub fn admit(&mut self, queued: u32) -> bool {
        self.latency.as_deref_mut().is_none_or(|l| l.admit(queued))
    }

    /// Whether the queue counts as full with `queued` in it (the latency
    /// target's depth reached), whatever room its slots have.
    #[inline]
    pub fn full(&self, queued: u32) -> bool {
        self.latency.as_deref().is_some_and(|l| l.full(queued))
    }

    /// The depth the latency target's search ended at, to report.
    pub fn latency_depth(&self) -> Option<u32> {
        self.latency.as_deref().map(LatSearch::depth)
    }

    /// Whether the next I/O must wait for the clone's flow (which counts
    /// it otherwise).
    #[inline]
    pub fn held(&mut self) -> bool {
        self.flow.as_mut().is_some_and(FlowShare::held)
    }

    /// A held clone with nothing in flight waits `flow_sleep`, or without
    /// it tries again at once, spinning as fio does (giving the CPU away
    /// instead would cost a scheduler slice per I/O on a busy machine);
    /// true when its deadline has passed meanwhile.
    #[cold]
    pub fn hold(&self, clock: &Clock, deadline: Option<u64>) -> bool {
        match self.flow.as_ref().map(|f| f.sleep) {
            Some(d) if !d.is_zero() => std::thread::sleep(d),
            _ => std::hint::spin_loop(),
        }
        deadline.is_some_and(|dl| clock.now() >= dl)
    }
}

/// One file's zone: where the clone's region starts and where its
/// current zone does, and the file's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ZoneFile {
    base: u64,
    start: u64,
    end: u64,
    /// The clone's bytes of the file: no zone offset reaches past them.
    len: u64,
}

/// fio's strided zones: the offset generators of a file work in
/// `[base, base + range)`, and each offset they give is moved to the
/// current zone. Once `size` bytes have gone to zones (counted over the
/// clone's files, as fio counts them), the next I/O's file moves to its
/// next zone, `range + skip` bytes on, or back to the clone's start past
/// the file's end; a zone starts with fresh generators, and so does each
/// `range` bytes of I/O in it (sequential offsets from the zone's start
/// again, a new random pass).
#[derive(Debug)]
pub(super) struct Strided {
    spec: StridedZones,
    /// Bytes of I/O since the last zone change.
    bytes: u64,
    files: Vec<ZoneFile>,
}

impl Strided {
    pub fn new(spec: StridedZones, job: &PlanJob, files: &[PlanFile]) -> Strided {
        let files = job
            .files
            .iter()
            .map(|jf| {
                let pf = &files[jf.file];
                ZoneFile {
                    base: jf.offset,
                    start: jf.offset,
                    // The file as it is: fio's zones run to its real size,
                    // past the clone's region.
                    end: pf.size.max(pf.existing.unwrap_or(0)),
                    len: jf.len,
                }
            })
            .collect();
        Strided {
            spec,
            bytes: 0,
            files,
        }
    }

    /// Before file `fi`'s generators draw: to the next zone when this one
    /// has had its bytes, and fresh generators at each `range` bytes.
    #[inline]
    pub fn before_draw(&mut self, fi: usize, gens: &mut [OffsetGen]) {
        let Some(f) = self.files.get_mut(fi) else {
            return;
        };
        let s = &self.spec;
        if self.bytes >= s.size {
            self.bytes = 0;
            f.start = f.start.saturating_add(s.range).saturating_add(s.skip);
            if f.start >= f.end {
                f.start = f.base;
            }
        }
        if self.bytes.is_multiple_of(s.range) {
            gens.iter_mut().for_each(OffsetGen::restart);
        }
    }

    /// Where an I/O the generators put at `offset` (in `[base, base +
    /// range)`) lands in the current zone; None when that is past the
    /// clone's bytes of the file or the file's end, which ends the job, as
    /// fio finds no next offset there.
    #[inline]
    pub fn place(&mut self, fi: usize, offset: u64, len: u32) -> Option<u64> {
        let f = self.files.get(fi)?;
        let rel = offset.checked_sub(f.base)?;
        let at = f.start.checked_add(rel)?;
        if rel >= f.len || at.checked_add(u64::from(len))? > f.end {
            return None;
        }
        self.bytes += u64::from(len);
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{Pattern, Region, Rng};

    fn strided(size: u64, range: u64, skip: u64, end: u64) -> Strided {
        Strided {
            spec: StridedZones { size, range, skip },
            bytes: 0,
            files: vec![ZoneFile {
                base: 0,
                start: 0,
                end,
                len: end,
            }],
        }
    }

    /// The block numbers of `n` 4k sequential I/Os.
    fn blocks(z: &mut Strided, n: usize) -> Vec<u64> {
        let region = Region {
            start: 0,
            len: z.spec.range,
            block: 4096,
        };
        let mut gens = vec![OffsetGen::new(
            region,
            &Pattern::Sequential { gap: 0 },
            Rng::for_job(1, 0, crate::gen::Stream::Offset),
        )
        .unwrap()];
        let mut out = Vec::new();
        for _ in 0..n {
            z.before_draw(0, &mut gens);
            let off = gens[0].next(4096);
            match z.place(0, off, 4096) {
                Some(at) => out.push(at / 4096),
                None => break,
            }
        }
        out
    }

    #[test]
    fn zones_follow_each_other_and_wrap_as_fio() {
        // fio 3.33, rw=read bs=4k size=128k zonesize=16k zoneskip=16k on a
        // 128k file: 0-3, 8-11, 16-19, 24-27, then from the start again.
        let mut z = strided(16 << 10, 16 << 10, 16 << 10, 128 << 10);
        let want: Vec<u64> = [0, 8, 16, 24, 0, 8]
            .iter()
            .flat_map(|s| *s..*s + 4)
            .collect();
        assert_eq!(blocks(&mut z, 24), want);
    }

    #[test]
    fn a_zone_larger_than_its_range_starts_over_in_it() {
        // zonesize=24k zonerange=16k zoneskip=16k: 0 1 2 3 0 1 8 9 10 11 8 9.
        let mut z = strided(24 << 10, 16 << 10, 16 << 10, 1 << 20);
        assert_eq!(blocks(&mut z, 12), [0, 1, 2, 3, 0, 1, 8, 9, 10, 11, 8, 9]);
    }

    #[test]
    fn a_zone_past_the_end_of_the_file_ends_the_job() {
        // A 100k file, zonesize=16k zonerange=32k zoneskip=16k: fio does
        // 0-3, 12-15, 24, and stops at the file's end.
        let mut z = strided(16 << 10, 32 << 10, 16 << 10, 100 << 10);
        assert_eq!(blocks(&mut z, 100), [0, 1, 2, 3, 12, 13, 14, 15, 24]);
    }
}
