//! fio's flow control between jobs (`flow`, `flow_id`, `flow_sleep`): the
//! jobs of one flow id share a counter of the I/Os they issued and the sum
//! of their weights, and a job issues its next I/O only while its share of
//! the counter is at most its share of the weights. So jobs weighted 3, 2
//! and 1 issue I/Os in the ratio 3:2:1, however fast each could go.
//!
//! This is the one thing workers share beyond their progress counters, and
//! only jobs that ask for it: two relaxed atomics per I/O.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::plan::{FlowSpec, Plan};

/// The shared state of one flow id.
#[derive(Debug)]
pub struct FlowGroup {
    /// I/Os issued by the jobs running in the flow, plus one (fio starts
    /// it at 1, so that the first job's share is defined).
    issued: AtomicU64,
    /// The weights of the jobs running in the flow, summed in 32 bits with
    /// wrap-around as fio sums them.
    weights: AtomicU32,
}

/// The flow groups of a run, one per flow id its jobs use.
#[derive(Debug, Default)]
pub struct Flows {
    groups: Vec<(u64, Arc<FlowGroup>)>,
}

impl Flows {
    /// A group for each flow id of the plan's jobs.
    pub fn of(plan: &Plan) -> Flows {
        let mut groups: Vec<(u64, Arc<FlowGroup>)> = Vec::new();
        for f in plan.jobs.iter().filter_map(|j| j.flow) {
            if !groups.iter().any(|(id, _)| *id == f.id) {
                let g = FlowGroup {
                    issued: AtomicU64::new(1),
                    weights: AtomicU32::new(0),
                };
                groups.push((f.id, Arc::new(g)));
            }
        }
        Flows { groups }
    }

    /// A job clone's place in its flow, from when it starts until it is
    /// dropped (its weight and I/Os then leave the group, as in fio, so
    /// that the others go on unheld).
    pub fn join(&self, spec: &FlowSpec) -> Option<FlowShare> {
        let group = self.groups.iter().find(|(id, _)| *id == spec.id)?.1.clone();
        group.weights.fetch_add(spec.weight, Ordering::Relaxed);
        Some(FlowShare {
            group,
            weight: spec.weight,
            issued: 0,
            sleep: spec.sleep,
        })
    }
}

/// One job clone's share of a flow.
#[derive(Debug)]
pub struct FlowShare {
    group: Arc<FlowGroup>,
    weight: u32,
    /// I/Os this clone issued.
    issued: u64,
    /// `flow_sleep`.
    pub sleep: Duration,
}

impl FlowShare {
    /// fio's test before each I/O: true when the clone is ahead of its
    /// share and must hold back; otherwise the I/O is counted (in the
    /// clone's and the group's counters) and may go.
    #[inline]
    pub fn held(&mut self) -> bool {
        let total = self.group.issued.load(Ordering::Relaxed).max(1);
        let weights = self.group.weights.load(Ordering::Relaxed).max(1);
        // issued / total > weight / weights, without division.
        if u128::from(self.issued) * u128::from(weights)
            > u128::from(self.weight) * u128::from(total)
        {
            return true;
        }
        self.group.issued.fetch_add(1, Ordering::Relaxed);
        self.issued += 1;
        false
    }
}

impl Drop for FlowShare {
    fn drop(&mut self) {
        self.group.issued.fetch_sub(self.issued, Ordering::Relaxed);
        self.group.weights.fetch_sub(self.weight, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows(id: u64) -> Flows {
        Flows {
            groups: vec![(
                id,
                Arc::new(FlowGroup {
                    issued: AtomicU64::new(1),
                    weights: AtomicU32::new(0),
                }),
            )],
        }
    }

    fn spec(weight: u32) -> FlowSpec {
        FlowSpec {
            id: 1,
            weight,
            sleep: Duration::ZERO,
        }
    }

    #[test]
    fn jobs_issue_in_the_ratio_of_their_weights() {
        let f = flows(1);
        let mut a = f.join(&spec(3)).unwrap();
        let mut b = f.join(&spec(1)).unwrap();
        // Each tries in turn, as two equally fast jobs would.
        let (mut na, mut nb) = (0u64, 0u64);
        for _ in 0..40_000 {
            na += u64::from(!a.held());
            nb += u64::from(!b.held());
        }
        let ratio = na as f64 / nb as f64;
        assert!((2.9..3.1).contains(&ratio), "{na}:{nb}");
    }

    #[test]
    fn a_job_alone_in_its_flow_is_never_held() {
        let f = flows(1);
        let mut a = f.join(&spec(2)).unwrap();
        assert!((0..1000).all(|_| !a.held()));
        // Another flow id is not this one.
        assert!(f.join(&FlowSpec { id: 2, ..spec(1) }).is_none());
    }

    #[test]
    fn leaving_takes_the_jobs_weight_and_ios_out() {
        let f = flows(1);
        let mut a = f.join(&spec(1)).unwrap();
        {
            let mut b = f.join(&spec(1)).unwrap();
            for _ in 0..100 {
                b.held();
            }
        }
        // b is gone: a goes on unheld.
        assert!((0..1000).all(|_| !a.held()));
        let g = &f.groups[0].1;
        assert_eq!(g.weights.load(Ordering::Relaxed), 1);
        assert_eq!(g.issued.load(Ordering::Relaxed), 1 + 1000);
    }

    #[test]
    fn a_negative_weight_is_fios_unsigned_one() {
        // fio's butterfly example: `flow=-2` beside `flow=1`. fio keeps
        // -2 as 2^32 - 2, so the first job runs nearly alone until it ends.
        let f = flows(1);
        let mut a = f.join(&spec(-2i32 as u32)).unwrap();
        let mut b = f.join(&spec(1)).unwrap();
        let (mut na, mut nb) = (0u64, 0u64);
        for _ in 0..10_000 {
            na += u64::from(!a.held());
            nb += u64::from(!b.held());
        }
        // b's first I/O goes (no share is above a weight then), no other.
        assert_eq!((na, nb), (10_000, 1));
        // The weights summed in 32 bits, as fio sums them.
        let g = &f.groups[0].1;
        assert_eq!(g.weights.load(Ordering::Relaxed), u32::MAX);
        drop(a);
        assert!(!b.held());
    }
}
