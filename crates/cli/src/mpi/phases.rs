//! The run's phases kept in step across ranks: before each phase every
//! rank says whether it is ready (one all-reduce, which is the barrier:
//! the phase starts on all or on none), the moment each rank is let go and
//! finishes is kept for the aggregate figures and the start skew, a
//! barrier at each phase's end keeps the next phase's layout out of it,
//! and with stonewalling across ranks the first rank to finish a phase
//! ends it for every rank. At each phase's start rank 0 prints every
//! rank's "Laying out IO file" lines for it, as fio prints one per clone
//! (each rank runs each job as one more clone).

use std::cell::RefCell;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use iolab_core::ranks::{Ranks, Ready};
use iolab_stats::ranks::PhaseSpan;
use mpi::traits::*;

use super::World;
use crate::output::Out;

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
    /// This rank's "Laying out IO file" lines not yet sent to rank 0.
    laying_out: &'a RefCell<String>,
    /// Rank 0: where the report goes, when it prints fio's normal format.
    out: Option<&'a mut Out>,
    /// Rank 0: every rank's layout lines printed so far, for the record.
    pub laid: String,
}

impl<'a> MpiRanks<'a> {
    /// The hooks of `world`'s rank; `laying_out` collects the rank's
    /// layout lines, which rank 0 prints to `out` (None: not printed).
    pub fn new(
        world: &'a World,
        stonewall: bool,
        laying_out: &'a RefCell<String>,
        out: Option<&'a mut Out>,
    ) -> Self {
        MpiRanks {
            world,
            stonewall,
            spans: Vec::new(),
            laying_out,
            out,
            laid: String::new(),
        }
    }

    /// Every rank's layout lines of the phase about to start, at rank 0,
    /// printed there in clone order: each clone's line on every rank in
    /// rank order, as fio prints one line per clone.
    fn print_layout(&mut self) {
        let mine = std::mem::take(&mut *self.laying_out.borrow_mut());
        let Some(texts) = self.world.gather_text(&mine) else {
            return;
        };
        let text = interleave(&texts);
        if text.is_empty() {
            return;
        }
        if let Some(out) = self.out.as_mut() {
            // As on one machine: a notice that cannot be written is no
            // reason to stop the run.
            let _ = out.write(&text);
        }
        self.laid.push_str(&text);
    }
}

/// The ranks' lines (`texts`, by rank) one clone at a time: the first line
/// of every rank, then the second, ... The ranks run the same plan, so the
/// k-th line of each is the same clone's (a rank that failed part way has
/// fewer).
fn interleave(texts: &[String]) -> String {
    let lines: Vec<Vec<&str>> = texts.iter().map(|t| t.lines().collect()).collect();
    let most = lines.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = String::new();
    for k in 0..most {
        for rank in &lines {
            if let Some(l) = rank.get(k) {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    out
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
        self.print_layout();
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
    fn watch_phase(
        &mut self,
        phase: usize,
        done: &dyn Fn() -> bool,
        halt: &dyn Fn(),
        tick: &mut dyn FnMut(),
    ) {
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
                // The run's own watch (steady-state samples) goes on
                // while this one waits.
                tick();
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

#[cfg(test)]
mod tests {
    #[test]
    fn layout_lines_go_clone_by_clone_over_the_ranks() {
        let texts = [
            "a: one\nb: one\n".to_string(),
            "a: two\n".to_string(),
            String::new(),
            "a: four\nb: four\n".to_string(),
        ];
        assert_eq!(
            super::interleave(&texts),
            "a: one\na: two\na: four\nb: one\nb: four\n"
        );
        assert_eq!(super::interleave(&[String::new(), String::new()]), "");
    }
}
