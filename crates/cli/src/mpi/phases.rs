//! The run's phases kept in step across ranks: before each phase every
//! rank says whether it is ready (one all-reduce, which is the barrier:
//! the phase starts on all or on none), the moment each rank is let go and
//! finishes is kept for the aggregate figures and the start skew, a
//! barrier at each phase's end keeps the next phase's layout out of it,
//! and with stonewalling across ranks the first rank to finish a phase
//! ends it for every rank.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use iolab_core::ranks::{Ranks, Ready};
use iolab_stats::ranks::PhaseSpan;
use mpi::traits::*;

use super::World;

/// How often a rank looks for another's "finished" while a phase runs
/// with stonewalling across ranks.
const POLL: Duration = Duration::from_millis(2);

/// Tags of the "finished the phase" messages start here (one per phase).
const DONE_TAG: i32 = 100;

/// The hooks of one rank's run.
pub struct MpiRanks<'a> {
    world: &'a World,
    /// The first rank to finish a phase ends it for all.
    stonewall: bool,
    /// When each phase started and ended here.
    pub spans: Vec<PhaseSpan>,
}

impl<'a> MpiRanks<'a> {
    pub fn new(world: &'a World, stonewall: bool) -> Self {
        MpiRanks {
            world,
            stonewall,
            spans: Vec::new(),
        }
    }
}

/// Wall-clock nanoseconds since the epoch (comparable across hosts whose
/// clocks are synchronized).
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl Ranks for MpiRanks<'_> {
    fn start_phase(&mut self, _phase: usize, ready: Ready) -> Ready {
        let all = match self.world.max_u8(ready as u8) {
            0 => Ready::Go,
            1 => Ready::Stop,
            _ => Ready::Failed,
        };
        if all == Ready::Go {
            let start_ns = now_ns();
            self.spans.push(PhaseSpan {
                start_ns,
                end_ns: start_ns,
            });
        }
        all
    }

    /// With stonewalling: a rank that finishes tells every other rank; a
    /// rank told halts its clones, and tells the others when they have
    /// stopped. Each rank thus sends one message to every other and
    /// receives one from each, and leaves when it has, so that no message
    /// is left for a later phase.
    fn watch_phase(&mut self, phase: usize, done: &dyn Fn() -> bool, halt: &dyn Fn()) {
        let n = self.world.size;
        if !self.stonewall || n < 2 {
            return;
        }
        let tag = DONE_TAG + (phase % 30_000) as i32;
        let comm = &self.world.comm;
        let me = self.world.rank;
        let word = [1u8];
        mpi::request::scope(|scope| {
            let mut sent = Vec::new();
            let mut told = false;
            let mut heard = 0u32;
            loop {
                if !told && done() {
                    for r in (0..n).filter(|&r| r != me) {
                        sent.push(comm.process_at_rank(r as i32).immediate_send_with_tag(
                            scope,
                            &word[..],
                            tag,
                        ));
                    }
                    told = true;
                }
                while let Some((msg, _)) = comm.any_process().immediate_matched_probe_with_tag(tag)
                {
                    let _: (u8, _) = msg.matched_receive();
                    heard += 1;
                    halt();
                }
                if told && heard + 1 == n {
                    break;
                }
                std::thread::sleep(POLL);
            }
            for s in sent {
                s.wait();
            }
        });
    }

    fn stop_after_error(&self) -> bool {
        true
    }

    /// The phase's end here, then a barrier: no rank lays out the next
    /// phase's files (writing them, extending a shared one) while another
    /// still measures this one.
    fn end_phase(&mut self, _phase: usize) {
        if let Some(s) = self.spans.last_mut() {
            s.end_ns = now_ns();
        }
        self.world.comm.barrier();
    }
}
