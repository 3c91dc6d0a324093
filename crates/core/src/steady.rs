//! Steady-state detection (`steadystate`, `ss_dur`, `ss_ramp`) while a
//! phase runs. As fio's helper thread does, the run's own thread takes one
//! sample a second of each watched job's IOPS and bandwidth from the
//! clones' progress counters (which the workers publish anyway), so a job
//! pays nothing per I/O for it. A job is watched clone by clone, or with
//! `group_reporting` as its reporting group, whose samples add up its
//! clones'. Samples start one second after `ss_ramp`; once the rule holds
//! over a full window (`iolab_stats::SteadyWindow`), the clones are told to
//! stop, as fio ends them, and each reports the window.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use iolab_stats::{JobResult, SteadyResult, SteadyWindow};

use crate::plan::{Plan, SteadySpec};
use crate::progress::Progress;

/// Samples are a second apart, as fio's.
const EVERY: Duration = Duration::from_secs(1);
/// How often the watch looks whether the phase is over between samples.
const POLL: Duration = Duration::from_millis(20);

/// One job clone, or a reporting group's clones, watched together.
struct Watched {
    /// Indexes of the clones in the plan.
    members: Vec<usize>,
    spec: SteadySpec,
    window: SteadyWindow,
    /// The members' I/Os and bytes at the last sample, and when (since
    /// the run began); None before the first member started.
    prev: Option<(u64, u64, Duration)>,
}

/// The steady-state watch of one phase.
pub(crate) struct SteadyWatch {
    watched: Vec<Watched>,
    /// When the next sample is due (since the run began); None before
    /// the first look.
    next: Option<Duration>,
}

impl SteadyWatch {
    /// The watch of the jobs of `phase` that ask for it; None when none
    /// does.
    pub fn of_phase(plan: &Plan, phase: Range<usize>) -> Option<SteadyWatch> {
        let mut watched: Vec<Watched> = Vec::new();
        let mut group: Option<u32> = None;
        for ji in phase {
            let job = &plan.jobs[ji];
            let Some(spec) = job.steady else {
                group = None;
                continue;
            };
            match (job.group_reporting, group, watched.last_mut()) {
                (true, Some(g), Some(w)) if g == job.groupid => w.members.push(ji),
                _ => {
                    group = job.group_reporting.then_some(job.groupid);
                    watched.push(Watched {
                        members: vec![ji],
                        spec,
                        window: SteadyWindow::new(spec.rule),
                        prev: None,
                    });
                }
            }
        }
        (!watched.is_empty()).then_some(SteadyWatch {
            watched,
            next: None,
        })
    }

    /// Samples every second until `done` (every clone of the phase has
    /// finished); a job found steady has its clones' `halts` raised.
    pub fn watch(&mut self, progress: &Progress, halts: &[AtomicBool], done: &dyn Fn() -> bool) {
        while !done() {
            let wait = self.tick(progress, halts);
            std::thread::sleep(wait.min(POLL));
        }
    }

    /// Takes the sample that is due, if one is (the first look only sets
    /// the clock: samples are a second apart from it); a job found steady
    /// has its clones' `halts` raised. Returns the time until the next
    /// sample, so that a loop that also watches something else (the
    /// other ranks) can call this at each of its own polls.
    pub fn tick(&mut self, progress: &Progress, halts: &[AtomicBool]) -> Duration {
        let now = progress.elapsed();
        let next = *self.next.get_or_insert(now + EVERY);
        if now < next {
            return next - now;
        }
        self.next = Some(next + EVERY);
        for w in &mut self.watched {
            if w.sample(progress, now) {
                for &ji in &w.members {
                    halts[ji].store(true, Ordering::Relaxed);
                }
            }
        }
        (next + EVERY).saturating_sub(now)
    }

    /// Gives each watched clone's result (by its index in the plan) what
    /// its job's detection found.
    pub fn attach(&self, results: &mut [(usize, JobResult)]) {
        for w in &self.watched {
            let r: SteadyResult = w.window.result();
            for (ji, c) in results.iter_mut() {
                if w.members.contains(ji) {
                    c.steadystate = Some(r.clone());
                }
            }
        }
    }
}

impl Watched {
    /// Takes the sample due at `now` (since the run began); true when it
    /// made the job steady.
    fn sample(&mut self, progress: &Progress, now: Duration) -> bool {
        if self.window.attained() {
            return false;
        }
        let (mut ios, mut bytes, mut active, mut since) = (0, 0, false, None::<Duration>);
        for &ji in &self.members {
            let (i, b, a, s) = progress.totals(ji);
            ios += i;
            bytes += b;
            active |= a;
            if let Some(s) = s {
                since = Some(since.map_or(s, |t| t.min(s)));
            }
        }
        let Some(start) = since else {
            return false;
        };
        if !active {
            return false;
        }
        // The first sample covers the time since the job started.
        let (pi, pb, pt) = self.prev.unwrap_or((0, 0, start));
        self.prev = Some((ios, bytes, now));
        // fio starts collecting one second after ss_ramp.
        if now.saturating_sub(start) < self.spec.ramp + EVERY && !self.spec.ramp.is_zero() {
            return false;
        }
        let ms = now.saturating_sub(pt).as_millis().max(1) as u64;
        let iops = (ios - pi) * 1000 / ms;
        let bw = (bytes - pb) * 1000 / ms;
        self.window.push(iops, bw)
    }
}
