//! How a run keeps step with other processes that run the same plan (the
//! ranks of an MPI job): before each phase every rank says whether it can
//! start it, and all start together or none does; while a phase runs, a
//! rank may be told to stop it (stonewalling across ranks). The run calls
//! these hooks; the binary implements them on MPI, so this crate needs no
//! MPI. A run on its own uses [`Solo`].

/// Whether a rank can start the next phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ready {
    /// Its files are laid out and nothing stopped it.
    Go = 0,
    /// Interrupted, or every job of the phase halted (exitall).
    Stop = 1,
    /// It failed (a file could not be made, a thread not started): the
    /// run ends for every rank.
    Failed = 2,
}

/// The hooks a run calls around each phase (stonewall group).
pub trait Ranks {
    /// Every rank calls this before phase `phase`, with whether it can
    /// start it; it returns when every rank has called it (a barrier),
    /// with the worst of the ranks' answers: `Go` when all can go, else
    /// the run ends here for all.
    fn start_phase(&mut self, phase: usize, ready: Ready) -> Ready;

    /// Called while this rank's job clones of the phase run: `done` says
    /// whether all of them finished, `halt` stops them. Returns when this
    /// rank is done with the phase or was told to stop it (then having
    /// called `halt`); the run then waits for its clones. While it
    /// watches, it calls `tick` at each of its polls (a few milliseconds
    /// apart), which keeps the run's own watch going (steady-state
    /// sampling), so that neither waits for the other.
    fn watch_phase(
        &mut self,
        phase: usize,
        done: &dyn Fn() -> bool,
        halt: &dyn Fn(),
        tick: &mut dyn FnMut(),
    );

    /// Every clone of this rank's phase has finished.
    fn end_phase(&mut self, phase: usize);

    /// Whether a job's error ends the run before the next phase (on one
    /// machine the next phase runs, as in fio; across ranks a rank that
    /// failed stops them all).
    fn stop_after_error(&self) -> bool {
        false
    }
}

/// A run on its own: every phase starts when this process is ready.
#[derive(Clone, Copy, Debug, Default)]
pub struct Solo;

impl Ranks for Solo {
    fn start_phase(&mut self, _phase: usize, ready: Ready) -> Ready {
        ready
    }

    fn watch_phase(
        &mut self,
        _phase: usize,
        _done: &dyn Fn() -> bool,
        _halt: &dyn Fn(),
        _tick: &mut dyn FnMut(),
    ) {
    }

    fn end_phase(&mut self, _phase: usize) {}
}

/// The phase of each job as the run reports them (one per clone, or one
/// per group with `group_reporting`; `stats=0` jobs left out), in the
/// order of `RunResult::jobs`.
pub fn reported_phases(plan: &crate::plan::Plan) -> Vec<usize> {
    let phase_of = |ji: usize| {
        plan.phases
            .iter()
            .position(|p| p.contains(&ji))
            .unwrap_or(0)
    };
    let mut out = Vec::new();
    let mut merging: Option<u32> = None;
    for (ji, job) in plan.jobs.iter().enumerate() {
        if !job.reported {
            continue;
        }
        match (job.group_reporting, merging) {
            (true, Some(g)) if g == job.groupid && !out.is_empty() => {}
            (true, _) => {
                merging = Some(job.groupid);
                out.push(phase_of(ji));
            }
            _ => {
                merging = None;
                out.push(phase_of(ji));
            }
        }
    }
    out
}
