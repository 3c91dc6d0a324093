//! A run over many processes (the ranks of an MPI job), merged exactly:
//! what each rank sends to rank 0 ([`RankRun`]), and the one result rank 0
//! makes of them ([`merge_ranks`]). Counts and bytes add, latency
//! histograms add bin by bin (so percentiles are those of every I/O of
//! every rank), moments merge exactly; beside fio's figures, IOR's
//! aggregate bandwidth (all bytes over the latest end minus the earliest
//! start across ranks), the sum of the ranks' own rates, each phase's
//! start skew, and a section per rank and per host.

use serde::{Deserialize, Serialize};

use crate::{Dir, GroupResult, JobResult, JobWarning, RunResult};

/// When one phase (stonewall group) ran on one rank: wall-clock
/// nanoseconds since the epoch, from the moment the barrier before it let
/// the rank go to the moment its last job clone finished.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PhaseSpan {
    pub start_ns: u64,
    pub end_ns: u64,
}

/// What one rank sends to rank 0 after the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankRun {
    pub rank: u32,
    pub host: String,
    pub result: RunResult,
    /// The error that stopped this rank's run, if one did.
    pub failure: Option<String>,
    /// The phases this rank ran, in order.
    pub phases: Vec<PhaseSpan>,
}

/// One direction of a job summed over the ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankedDir {
    pub io_bytes: u64,
    pub total_ios: u64,
    /// IOR's aggregate: all ranks' bytes over the latest end minus the
    /// earliest start of the job's phase, bytes/s.
    pub aggregate_bw_bytes: u64,
    /// The ranks' own rates (each one's bytes over its runtime) added up,
    /// bytes/s.
    pub sum_rank_bw_bytes: u64,
    /// All ranks' I/Os over the same span as `aggregate_bw_bytes`.
    pub aggregate_iops: f64,
}

/// One reported job over all ranks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankedJob {
    pub name: String,
    pub phase: usize,
    /// Read, write, trim.
    pub dirs: [RankedDir; 3],
}

/// One phase over all ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankedPhase {
    /// Latest end minus earliest start across ranks, ns.
    pub wall_ns: u64,
    /// How far apart the ranks started after the barrier (latest start
    /// minus earliest), ns. Across hosts it includes their clocks'
    /// difference.
    pub start_skew_ns: u64,
}

/// One rank's own figures, for its section of the report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankFigures {
    pub rank: u32,
    pub host: String,
    pub failure: Option<String>,
    /// Per reported job: bytes, I/Os and fio's bandwidth in each direction.
    pub jobs: Vec<RankJobFigures>,
    pub phases: Vec<PhaseSpan>,
}

/// A job's figures on one rank (or host).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankJobFigures {
    pub name: String,
    pub io_bytes: [u64; 3],
    pub total_ios: [u64; 3],
    /// Bytes over the job's runtime in each direction, bytes/s (fio's
    /// headline figure; on a host, its ranks' added up).
    pub bw_bytes: [u64; 3],
}

/// The ranks on one host.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostFigures {
    pub host: String,
    pub ranks: Vec<u32>,
    pub jobs: Vec<RankJobFigures>,
}

/// What a merged result says about its ranks (under "iolab" → "mpi").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RanksSummary {
    pub nranks: u32,
    /// Whether a phase ended for every rank when the first finished it.
    pub stonewall: bool,
    pub jobs: Vec<RankedJob>,
    pub phases: Vec<RankedPhase>,
    pub hosts: Vec<HostFigures>,
    pub ranks: Vec<RankFigures>,
}

impl RanksSummary {
    /// The hosts' names, in rank order of their first rank.
    pub fn host_names(&self) -> Vec<&str> {
        self.hosts.iter().map(|h| h.host.as_str()).collect()
    }
}

/// The one result of all ranks (ordered by rank, the same plan run on
/// each): each reported job merged over the ranks, the reporting groups
/// over every rank's jobs (so a group's min and max bandwidth are its
/// slowest and fastest rank's), and the ranks' summary. `job_phase` gives
/// the phase of each reported job (by its index); `stonewall` whether
/// phases ended for all with the first rank.
pub fn merge_ranks(runs: &[RankRun], job_phase: &[usize], stonewall: bool) -> RunResult {
    let Some(first) = runs.first() else {
        return RunResult::default();
    };
    let mut merged = first.result.clone();
    for r in &runs[1..] {
        for (mine, theirs) in merged.jobs.iter_mut().zip(&r.result.jobs) {
            mine.merge(theirs);
            union_warnings(&mut mine.warnings, &theirs.warnings);
        }
        merged.interrupted |= r.result.interrupted;
        merged.timestamp = merged.timestamp.max(r.result.timestamp);
        merged.timestamp_ms = merged.timestamp_ms.max(r.result.timestamp_ms);
    }
    // Each host's disks once, named by host when there are several.
    let mut hosts: Vec<&str> = Vec::new();
    for r in runs {
        if !hosts.contains(&r.host.as_str()) {
            hosts.push(&r.host);
        }
    }
    merged.disks.clear();
    let mut seen: Vec<&str> = Vec::new();
    for r in runs {
        if seen.contains(&r.host.as_str()) {
            continue;
        }
        seen.push(&r.host);
        for d in &r.result.disks {
            let mut d = d.clone();
            if hosts.len() > 1 {
                d.name = format!("{}:{}", r.host, d.name);
            }
            merged.disks.push(d);
        }
    }
    let groups: Vec<u32> = merged.groups.iter().map(|g| g.groupid).collect();
    merged.groups = groups
        .into_iter()
        .map(|g| {
            let members = runs
                .iter()
                .flat_map(|r| r.result.jobs.iter())
                .filter(move |j| j.groupid == g);
            GroupResult::from_jobs(g, members)
        })
        .collect();
    merged.ranks = Some(summary(runs, job_phase, stonewall));
    merged
}

fn summary(runs: &[RankRun], job_phase: &[usize], stonewall: bool) -> RanksSummary {
    let nphases = runs.iter().map(|r| r.phases.len()).max().unwrap_or(0);
    let phases: Vec<RankedPhase> = (0..nphases)
        .map(|p| {
            let spans: Vec<PhaseSpan> = runs
                .iter()
                .filter_map(|r| r.phases.get(p))
                .copied()
                .collect();
            let first_start = spans.iter().map(|s| s.start_ns).min().unwrap_or(0);
            let last_start = spans.iter().map(|s| s.start_ns).max().unwrap_or(0);
            let last_end = spans.iter().map(|s| s.end_ns).max().unwrap_or(0);
            RankedPhase {
                wall_ns: last_end.saturating_sub(first_start),
                start_skew_ns: last_start - first_start,
            }
        })
        .collect();
    let njobs = runs.first().map_or(0, |r| r.result.jobs.len());
    let jobs = (0..njobs)
        .map(|j| {
            let phase = job_phase.get(j).copied().unwrap_or(0);
            let wall = phases.get(phase).map_or(0, |p| p.wall_ns);
            let of_ranks = || runs.iter().filter_map(|r| r.result.jobs.get(j));
            let dirs = Dir::ALL.map(|d| {
                let io_bytes = of_ranks().map(|x| x.dir(d).io_bytes).sum::<u64>();
                let total_ios = of_ranks().map(|x| x.dir(d).total_ios).sum::<u64>();
                RankedDir {
                    io_bytes,
                    total_ios,
                    aggregate_bw_bytes: per_second(io_bytes, wall),
                    sum_rank_bw_bytes: of_ranks().map(|x| x.dir(d).bw_bytes()).sum(),
                    aggregate_iops: if wall == 0 {
                        0.0
                    } else {
                        total_ios as f64 * 1e9 / wall as f64
                    },
                }
            });
            RankedJob {
                name: runs[0].result.jobs[j].name.clone(),
                phase,
                dirs,
            }
        })
        .collect();
    let ranks: Vec<RankFigures> = runs
        .iter()
        .map(|r| RankFigures {
            rank: r.rank,
            host: r.host.clone(),
            failure: r.failure.clone(),
            jobs: r.result.jobs.iter().map(job_figures).collect(),
            phases: r.phases.clone(),
        })
        .collect();
    let mut hosts: Vec<HostFigures> = Vec::new();
    for r in &ranks {
        match hosts.iter_mut().find(|h| h.host == r.host) {
            Some(h) => {
                h.ranks.push(r.rank);
                for (mine, theirs) in h.jobs.iter_mut().zip(&r.jobs) {
                    for d in 0..3 {
                        mine.io_bytes[d] += theirs.io_bytes[d];
                        mine.total_ios[d] += theirs.total_ios[d];
                        mine.bw_bytes[d] += theirs.bw_bytes[d];
                    }
                }
            }
            None => hosts.push(HostFigures {
                host: r.host.clone(),
                ranks: vec![r.rank],
                jobs: r.jobs.clone(),
            }),
        }
    }
    RanksSummary {
        nranks: runs.len() as u32,
        stonewall,
        jobs,
        phases,
        hosts,
        ranks,
    }
}

fn job_figures(j: &JobResult) -> RankJobFigures {
    RankJobFigures {
        name: j.name.clone(),
        io_bytes: Dir::ALL.map(|d| j.dir(d).io_bytes),
        total_ios: Dir::ALL.map(|d| j.dir(d).total_ios),
        bw_bytes: Dir::ALL.map(|d| j.dir(d).bw_bytes()),
    }
}

fn per_second(bytes: u64, ns: u64) -> u64 {
    if ns == 0 {
        0
    } else {
        (bytes as u128 * 1_000_000_000 / ns as u128) as u64
    }
}

/// A warning list without repeats: one of each kind, as the first rank
/// that raised it words it (ranks see the same things, in other numbers).
pub fn union_warnings(a: &mut Vec<JobWarning>, b: &[JobWarning]) {
    for w in b {
        if !a.iter().any(|x| x.code == w.code) {
            a.push(w.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DirResult, LatHist};

    fn rank(rank: u32, host: &str, lats: &[u64], start: u64, end: u64) -> RankRun {
        let mut d = DirResult {
            runtime_ns: end - start,
            ..Default::default()
        };
        for &l in lats {
            d.io_bytes += 4096;
            d.total_ios += 1;
            d.clat.record(l);
        }
        let mut job = JobResult {
            name: "w".into(),
            clones: 1,
            ..Default::default()
        };
        job.dirs[Dir::Write as usize] = d;
        RankRun {
            rank,
            host: host.into(),
            result: RunResult {
                jobs: vec![job.clone()],
                groups: vec![GroupResult::from_jobs(0, [&job].into_iter())],
                ..Default::default()
            },
            failure: None,
            phases: vec![PhaseSpan {
                start_ns: start,
                end_ns: end,
            }],
        }
    }

    #[test]
    fn ranks_merge_exactly_and_aggregate_as_ior_does() {
        let a = [1_000, 2_000, 3_000, 50_000];
        let b = [7, 900_000, 4_000];
        let runs = vec![
            rank(0, "h1", &a, 1_000_000_000, 2_000_000_000),
            rank(1, "h1", &b, 1_000_000_100, 1_500_000_000),
            rank(2, "h2", &a, 1_000_000_300, 3_000_000_000),
        ];
        let m = merge_ranks(&runs, &[0], false);
        let w = m.jobs[0].dir(Dir::Write);
        assert_eq!(w.total_ios, 11);
        assert_eq!(w.io_bytes, 11 * 4096);
        // Percentiles of the merged histogram are those of every latency.
        let mut all = LatHist::new();
        for l in a.iter().chain(&b).chain(&a) {
            all.record(*l);
        }
        assert_eq!(w.clat.hist, all);
        assert_eq!(w.clat.moments.min(), Some(7));
        assert_eq!(w.clat.moments.max(), Some(900_000));
        let n = 11.0;
        let mean = (a.iter().sum::<u64>() * 2 + b.iter().sum::<u64>()) as f64 / n;
        assert!((w.clat.moments.mean() - mean).abs() < 1e-6 * mean);
        let s = m.ranks.as_ref().unwrap();
        assert_eq!(s.nranks, 3);
        // Latest end minus earliest start: 2 s; 11 blocks over it.
        assert_eq!(s.phases[0].wall_ns, 2_000_000_000);
        assert_eq!(s.phases[0].start_skew_ns, 300);
        assert_eq!(s.jobs[0].dirs[1].aggregate_bw_bytes, 11 * 4096 / 2);
        let own: u64 = runs
            .iter()
            .map(|r| r.result.jobs[0].dir(Dir::Write).bw_bytes())
            .sum();
        assert_eq!(s.jobs[0].dirs[1].sum_rank_bw_bytes, own);
        assert_eq!(s.hosts.len(), 2);
        assert_eq!(s.hosts[0].ranks, vec![0, 1]);
        assert_eq!(s.hosts[0].jobs[0].total_ios[1], 7);
        // The group's slowest and fastest job are its slowest and fastest
        // rank.
        let g = &m.groups[0].dirs[Dir::Write as usize];
        assert_eq!(g.io_bytes, 11 * 4096);
        assert_eq!(g.min_bw_bytes, 4 * 4096 / 2);
        assert_eq!(g.max_bw_bytes, 3 * 4096 * 1_000_000_000u64 / 499_999_900);
    }

    #[test]
    fn a_job_only_a_failing_rank_started_has_that_ranks_pid() {
        let mut runs = vec![rank(0, "h", &[], 1, 2), rank(1, "h", &[], 1, 2)];
        runs[1].result.jobs[0].pid = 4242;
        runs[1].result.jobs[0].error = 2;
        let m = merge_ranks(&runs, &[0], false);
        assert_eq!((m.jobs[0].pid, m.jobs[0].error), (4242, 2));
        // A rank 0 that ran the job names it.
        runs[0].result.jobs[0].pid = 17;
        let m = merge_ranks(&runs, &[0], false);
        assert_eq!((m.jobs[0].pid, m.jobs[0].error), (17, 2));
    }
}

/// What one rank of `iolab meta` under MPI sends to rank 0: its result
/// and when each phase began there (wall-clock ns since the epoch, as the
/// barrier before it let the rank go).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankMeta {
    pub rank: u32,
    pub host: String,
    pub result: crate::meta::MetaResult,
    pub starts_ns: Vec<u64>,
    /// Another rank's failure stopped this one.
    pub halted: bool,
}

/// A metadata run's ranks, in the merged result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MetaRanks {
    pub nranks: u32,
    /// Each rank's host, by rank.
    pub hosts: Vec<String>,
    /// Per phase: latest start minus earliest start after its barrier, ns.
    pub start_skew_ns: Vec<u64>,
    /// Per rank (by rank), per phase: the operations it did.
    pub ops: Vec<Vec<u64>>,
    /// Per rank (by rank), per phase: its own time in the phase, from
    /// its first operation to its last, ns.
    pub elapsed_ns: Vec<Vec<u64>>,
    /// All ranks worked in one directory (mdtest without `-u`).
    pub shared_dir: bool,
    /// Per rank: why it stopped early, if it did.
    pub failures: Vec<Option<String>>,
}

/// The ranks' metadata results as one, mdtest's way: each phase's
/// operations added up over the ranks, its wall time from the earliest
/// start to the latest end across ranks (so its rate is all operations
/// over that time), its latency histograms added bin by bin. A phase is
/// kept only when every rank finished it.
pub fn merge_meta_ranks(runs: &[RankMeta]) -> crate::meta::MetaResult {
    let Some(first) = runs.first() else {
        return Default::default();
    };
    let mut merged = first.result.clone();
    let done = runs
        .iter()
        .map(|r| r.result.phases.len())
        .min()
        .unwrap_or(0);
    merged.phases.truncate(done);
    let mut skews = Vec::with_capacity(done);
    for (p, phase) in merged.phases.iter_mut().enumerate() {
        let mut first_start = u64::MAX;
        let mut last_start = 0;
        let mut last_end = 0;
        for (i, r) in runs.iter().enumerate() {
            let mine = &r.result.phases[p];
            if i > 0 {
                phase.ops += mine.ops;
                phase.lat.merge(&mine.lat);
            }
            let start = r.starts_ns.get(p).copied().unwrap_or(0);
            first_start = first_start.min(start);
            last_start = last_start.max(start);
            last_end = last_end.max(start + mine.elapsed_ns);
        }
        phase.elapsed_ns = last_end - first_start;
        skews.push(last_start - first_start);
    }
    merged.failure = runs.iter().filter(|r| !r.halted).find_map(|r| {
        r.result
            .failure
            .as_ref()
            .map(|f| format!("rank {} ({}): {f}", r.rank, r.host))
    });
    merged.ranks = Some(MetaRanks {
        nranks: runs.len() as u32,
        hosts: runs.iter().map(|r| r.host.clone()).collect(),
        start_skew_ns: skews,
        ops: runs
            .iter()
            .map(|r| r.result.phases.iter().map(|p| p.ops).collect())
            .collect(),
        elapsed_ns: runs
            .iter()
            .map(|r| r.result.phases.iter().map(|p| p.elapsed_ns).collect())
            .collect(),
        shared_dir: false,
        failures: runs
            .iter()
            .map(|r| r.result.failure.clone().filter(|_| !r.halted))
            .collect(),
    });
    merged
}
