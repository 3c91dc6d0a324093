//! fio's `cpuio` engine: moves no data and opens no file; each I/O burns
//! the CPU for one cycle (`cpuchunks`, 50 ms by default), with a busy loop
//! (`cpumode=noop`) or by sorting (`cpumode=qsort`). The pause between
//! cycles that makes the load `cpuload` percent is the job's think time,
//! which the plan sets as fio does.

use std::time::{Duration, Instant};

use crate::null::FileSlots;
use crate::{
    BufPool, Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit, Queued,
};

pub(crate) struct CpuioEngine {
    bufs: BufPool,
    open: FileSlots,
    cycle: Duration,
    qsort: bool,
    /// What `qsort` sorts, refilled each round.
    work: Vec<u32>,
    seed: u32,
}

impl CpuioEngine {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        Ok(Self {
            bufs: BufPool::new(1, opts.buf_size, opts.align)?,
            open: FileSlots::default(),
            cycle: Duration::from_micros(u64::from(opts.cpu_cycle_us)),
            qsort: opts.cpu_qsort,
            work: if opts.cpu_qsort {
                vec![0; 4096]
            } else {
                Vec::new()
            },
            seed: 0x9e37_79b9,
        })
    }

    /// Keeps the CPU busy for one cycle.
    fn burn(&mut self) {
        let start = Instant::now();
        while start.elapsed() < self.cycle {
            if self.qsort {
                for v in self.work.iter_mut() {
                    // xorshift32: cheap values that need real sorting.
                    self.seed ^= self.seed << 13;
                    self.seed ^= self.seed >> 17;
                    self.seed ^= self.seed << 5;
                    *v = self.seed;
                }
                self.work.sort_unstable();
                std::hint::black_box(&self.work);
            } else {
                for _ in 0..64 {
                    std::hint::spin_loop();
                }
            }
        }
    }
}

impl Engine for CpuioEngine {
    fn name(&self) -> &'static str {
        "cpuio"
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            needs_buffers: false,
            vectored: false,
        }
    }

    fn open(&mut self, _file: &FileSpec) -> Result<FileId, EngineError> {
        self.open.open()
    }

    fn close(&mut self, file: FileId) -> Result<(), EngineError> {
        self.open.close(file)
    }

    fn queue(&mut self, io: &IoUnit) -> Result<Queued, EngineError> {
        self.burn();
        Ok(Queued::Completed(Completion {
            slot: io.slot,
            result: Ok(io.len),
        }))
    }

    fn buf(&mut self, _slot: u32) -> &mut [u8] {
        self.bufs.slot(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{create_named, Op};

    #[test]
    fn each_io_burns_one_cycle_of_cpu() {
        for qsort in [false, true] {
            let opts = EngineOpts {
                cpu_cycle_us: 20_000,
                cpu_qsort: qsort,
                ..EngineOpts::default()
            };
            let mut e = create_named("cpuio", &opts).unwrap();
            let f = e.open(&FileSpec::default()).unwrap();
            let t0 = Instant::now();
            let unit = IoUnit {
                slot: 0,
                file: f,
                op: Op::Read,
                offset: 0,
                len: 0,
            };
            assert!(matches!(
                e.queue(&unit).unwrap(),
                Queued::Completed(Completion { result: Ok(0), .. })
            ));
            // The burn lasts at least its cycle.
            assert!(t0.elapsed() >= Duration::from_millis(20), "{qsort}");
            e.close(f).unwrap();
        }
    }
}
