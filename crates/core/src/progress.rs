//! What a run has done so far, for a status line: one slot per job clone,
//! on its own cache line, that only its worker writes (plain relaxed
//! stores of counts it keeps anyway) and any thread may read. Nothing here
//! waits or allocates; a reader takes a `Snapshot` and works from that.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use iolab_spec::value::RwMode;

use crate::plan::{Plan, PlanJob};

/// Where a clone is, as fio's run-state characters show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RunState {
    /// Set up, not started (a later phase, or a startdelay).
    NotStarted = b'P',
    /// Opening files and filling buffers.
    Initializing = b'I',
    /// In ramp_time.
    Ramp = b'/',
    SeqRead = b'R',
    RandRead = b'r',
    SeqWrite = b'W',
    RandWrite = b'w',
    SeqMixed = b'M',
    RandMixed = b'm',
    SeqTrim = b'D',
    RandTrim = b'd',
    /// Waiting for an fsync.
    Fsync = b'F',
    /// Done.
    Done = b'_',
    /// Done, with an error.
    Failed = b'X',
    /// Stopped by an interrupt.
    Killed = b'K',
}

impl RunState {
    /// The running state of a job doing `mode`.
    pub fn running(mode: RwMode) -> RunState {
        use RwMode::*;
        match mode {
            Read => RunState::SeqRead,
            RandRead => RunState::RandRead,
            Write => RunState::SeqWrite,
            RandWrite => RunState::RandWrite,
            ReadWrite | TrimWrite => RunState::SeqMixed,
            RandRw | RandTrimWrite => RunState::RandMixed,
            Trim => RunState::SeqTrim,
            RandTrim => RunState::RandTrim,
        }
    }

    pub fn char(self) -> char {
        self as u8 as char
    }

    /// Whether the clone is doing I/O (or setting up for it).
    pub fn is_active(self) -> bool {
        !matches!(
            self,
            RunState::NotStarted | RunState::Done | RunState::Failed | RunState::Killed
        )
    }

    pub fn is_finished(self) -> bool {
        matches!(self, RunState::Done | RunState::Failed | RunState::Killed)
    }

    fn from_u8(b: u8) -> RunState {
        use RunState::*;
        [
            NotStarted,
            Initializing,
            Ramp,
            SeqRead,
            RandRead,
            SeqWrite,
            RandWrite,
            SeqMixed,
            RandMixed,
            SeqTrim,
            RandTrim,
            Fsync,
            Done,
            Failed,
            Killed,
        ]
        .into_iter()
        .find(|s| *s as u8 == b)
        .unwrap_or(NotStarted)
    }
}

/// One clone's counters. Written by its worker alone.
#[repr(align(64))]
#[derive(Default)]
pub struct CloneProgress {
    state: AtomicU8,
    files_open: AtomicU32,
    /// Bytes and I/Os completed per direction (read, write, trim), ramp
    /// time included.
    bytes: [AtomicU64; 3],
    ios: [AtomicU64; 3],
    /// Nanoseconds since the run began at which the clone started I/O.
    started_ns: AtomicU64,
}

impl CloneProgress {
    #[inline]
    pub fn set_state(&self, s: RunState) {
        self.state.store(s as u8, Ordering::Relaxed);
    }

    #[inline]
    pub fn set_files_open(&self, n: u32) {
        self.files_open.store(n, Ordering::Relaxed);
    }

    /// Publishes the clone's running totals for direction `dir` (0 read,
    /// 1 write, 2 trim). The worker keeps the totals; this is two stores.
    #[inline]
    pub fn publish(&self, dir: usize, bytes: u64, ios: u64) {
        self.bytes[dir].store(bytes, Ordering::Relaxed);
        self.ios[dir].store(ios, Ordering::Relaxed);
    }
}

/// How much of a clone's work is done, as a fraction or a time budget.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bound {
    /// Ends after this long (time_based, or runtime cuts it short first).
    Time(Duration),
    /// Ends after this many bytes, or at the runtime if that comes first.
    Bytes(u64, Option<Duration>),
}

/// The progress of every clone of a plan.
pub struct Progress {
    begin: Instant,
    clones: Box<[CloneProgress]>,
    bounds: Box<[Bound]>,
    delays: Box<[Duration]>,
}

impl Progress {
    pub fn new(plan: &Plan) -> Progress {
        let clones: Box<[CloneProgress]> =
            plan.jobs.iter().map(|_| CloneProgress::default()).collect();
        for c in clones.iter() {
            c.set_state(RunState::NotStarted);
        }
        Progress {
            begin: Instant::now(),
            clones,
            bounds: plan.jobs.iter().map(bound).collect(),
            delays: plan.jobs.iter().map(|j| j.startdelay).collect(),
        }
    }

    /// The slot of clone `index` (its position in the plan).
    pub fn clone_slot(&self, index: usize) -> &CloneProgress {
        &self.clones[index]
    }

    /// Marks the clone's start of I/O, for its time-bounded progress.
    pub fn mark_started(&self, index: usize) {
        let ns = self.begin.elapsed().as_nanos() as u64;
        self.clones[index]
            .started_ns
            .store(ns.max(1), Ordering::Relaxed);
    }

    /// Clone `index`'s I/Os and bytes so far (every direction, ramp time
    /// included), whether it is active, and since when (from the run's
    /// start) it has done I/O; None before it started.
    pub fn totals(&self, index: usize) -> (u64, u64, bool, Option<Duration>) {
        let c = &self.clones[index];
        let ios = c.ios.iter().map(|n| n.load(Ordering::Relaxed)).sum();
        let bytes = c.bytes.iter().map(|n| n.load(Ordering::Relaxed)).sum();
        let active = RunState::from_u8(c.state.load(Ordering::Relaxed)).is_active();
        let started = c.started_ns.load(Ordering::Relaxed);
        (
            ios,
            bytes,
            active,
            (started > 0).then(|| Duration::from_nanos(started)),
        )
    }

    /// Time since the run began.
    pub fn elapsed(&self) -> Duration {
        self.begin.elapsed()
    }

    /// Reads every clone's counters now.
    pub fn snapshot(&self) -> Snapshot {
        let now = self.begin.elapsed();
        let mut s = Snapshot {
            elapsed: now,
            ..Default::default()
        };
        for (i, c) in self.clones.iter().enumerate() {
            let state = RunState::from_u8(c.state.load(Ordering::Relaxed));
            let bytes = [0, 1, 2].map(|d| c.bytes[d].load(Ordering::Relaxed));
            let ios = [0, 1, 2].map(|d| c.ios[d].load(Ordering::Relaxed));
            let started = c.started_ns.load(Ordering::Relaxed);
            let running_for = if started == 0 {
                Duration::ZERO
            } else {
                now.saturating_sub(Duration::from_nanos(started))
            };
            let done = if state.is_finished() {
                1.0
            } else {
                fraction(self.bounds[i], bytes.iter().sum(), running_for)
            };
            if state.is_active() {
                s.running += 1;
                s.files_open += c.files_open.load(Ordering::Relaxed);
            }
            for d in 0..3 {
                s.bytes[d] += bytes[d];
                s.ios[d] += ios[d];
            }
            s.states.push(state);
            s.done.push(done);
            s.budgets.push(match self.bounds[i] {
                Bound::Time(t) => Some(t + self.delays[i]),
                Bound::Bytes(_, t) => t.map(|t| t + self.delays[i]),
            });
        }
        s
    }
}

/// The bound a clone ends at.
fn bound(job: &PlanJob) -> Bound {
    let time = job.runtime.map(|r| r + job.ramp_time);
    if job.time_based {
        return Bound::Time(time.unwrap_or_default());
    }
    let mut bytes = job.io_size.saturating_mul(u64::from(job.loops.max(1)));
    if let Some(n) = job.number_ios {
        let most = job.bs.iter().map(|b| b.max()).max().unwrap_or(0);
        if most > 0 {
            bytes = bytes.min(n.saturating_mul(most) * u64::from(job.loops.max(1)));
        }
    }
    Bound::Bytes(bytes, time)
}

/// The share of its work a running clone has done: the larger of its
/// bytes and its time, since whichever bound comes first ends it.
fn fraction(b: Bound, bytes: u64, running_for: Duration) -> f64 {
    let by_time = |t: Duration| {
        if t.is_zero() {
            0.0
        } else {
            running_for.as_secs_f64() / t.as_secs_f64()
        }
    };
    let f = match b {
        Bound::Time(t) => by_time(t),
        Bound::Bytes(total, t) => {
            let by_bytes = if total == 0 {
                0.0
            } else {
                bytes as f64 / total as f64
            };
            by_bytes.max(t.map(by_time).unwrap_or(0.0))
        }
    };
    f.clamp(0.0, 1.0)
}

/// Every clone's counters at one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Since the run began.
    pub elapsed: Duration,
    /// Clones doing I/O or setting up for it.
    pub running: u32,
    pub files_open: u32,
    /// Totals over the clones, per direction (read, write, trim).
    pub bytes: [u64; 3],
    pub ios: [u64; 3],
    pub states: Vec<RunState>,
    /// Each clone's share of its work done, 0 to 1.
    pub done: Vec<f64>,
    /// Each clone's time budget, when a runtime bounds it.
    budgets: Vec<Option<Duration>>,
}

impl Snapshot {
    /// The share of the whole run done: the clones' shares, averaged.
    pub fn percent(&self) -> f64 {
        if self.done.is_empty() {
            return 100.0;
        }
        100.0 * self.done.iter().sum::<f64>() / self.done.len() as f64
    }

    /// Time left: the longest of the running clones' remaining time
    /// budgets, or else extrapolated from the share done so far.
    pub fn eta(&self) -> Duration {
        let f = self.percent() / 100.0;
        if f >= 1.0 {
            return Duration::ZERO;
        }
        let all_timed = self
            .states
            .iter()
            .zip(&self.budgets)
            .all(|(s, b)| s.is_finished() || b.is_some());
        if all_timed {
            // Time-bounded clones: what remains of each one's budget.
            let left = self
                .states
                .iter()
                .zip(&self.budgets)
                .zip(&self.done)
                .filter(|((s, _), _)| !s.is_finished())
                .map(|((_, b), d)| b.unwrap_or_default().mul_f64(1.0 - d))
                .max()
                .unwrap_or_default();
            return left;
        }
        if f <= 0.0 {
            return Duration::ZERO;
        }
        self.elapsed.mul_f64((1.0 - f) / f)
    }

    /// fio's run-state string: each clone's character, runs of the same
    /// one written `c(n)`, joined by commas: `R(2),_(1)`.
    pub fn states_text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut i = 0;
        while i < self.states.len() {
            let c = self.states[i];
            let n = self.states[i..].iter().take_while(|s| **s == c).count();
            parts.push(format!("{}({n})", c.char()));
            i += n;
        }
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(states: &[RunState], done: &[f64], budgets: &[Option<u64>]) -> Snapshot {
        Snapshot {
            elapsed: Duration::from_secs(10),
            states: states.to_vec(),
            done: done.to_vec(),
            budgets: budgets.iter().map(|b| b.map(Duration::from_secs)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn states_are_run_length_encoded_as_fio_prints_them() {
        use RunState::*;
        let s = snap(&[RandRead, RandRead, Done, SeqWrite], &[0.0; 4], &[None; 4]);
        assert_eq!(s.states_text(), "r(2),_(1),W(1)");
        assert_eq!(snap(&[], &[], &[]).states_text(), "");
    }

    #[test]
    fn state_bytes_round_trip() {
        for s in [
            RunState::Ramp,
            RunState::Fsync,
            RunState::Killed,
            RunState::RandMixed,
        ] {
            assert_eq!(RunState::from_u8(s as u8), s);
        }
        assert_eq!(RunState::running(RwMode::RandRw).char(), 'm');
        assert_eq!(RunState::running(RwMode::Write).char(), 'W');
    }

    #[test]
    fn percent_averages_the_clones_and_eta_follows_the_budgets() {
        use RunState::*;
        // Two time-bounded clones of 20 s, half done: 10 s left.
        let s = snap(&[RandRead, RandRead], &[0.5, 0.5], &[Some(20), Some(20)]);
        assert_eq!(s.percent(), 50.0);
        assert_eq!(s.eta(), Duration::from_secs(10));
        // A size-bounded clone a quarter done after 10 s: 30 s to go.
        let s = snap(&[SeqWrite], &[0.25], &[None]);
        assert_eq!(s.percent(), 25.0);
        assert_eq!(s.eta(), Duration::from_secs(30));
        // Finished: nothing left.
        let s = snap(&[Done, Done], &[1.0, 1.0], &[None, None]);
        assert_eq!((s.percent(), s.eta()), (100.0, Duration::ZERO));
    }

    #[test]
    fn the_fraction_is_whichever_bound_comes_first() {
        let t = Duration::from_secs;
        assert_eq!(fraction(Bound::Time(t(4)), 0, t(1)), 0.25);
        assert_eq!(fraction(Bound::Bytes(100, None), 50, t(100)), 0.5);
        assert_eq!(fraction(Bound::Bytes(100, Some(t(10))), 10, t(5)), 0.5);
        assert_eq!(fraction(Bound::Bytes(100, Some(t(10))), 200, t(5)), 1.0);
    }
}
