//! A run over many MPI ranks: the section the normal format prints after
//! fio's report (the ranks and hosts, each phase's wall time and start
//! skew, IOR's aggregate bandwidth beside the sum of the ranks' rates),
//! and the object under the JSON's top-level `"iolab"` → `"mpi"` with a
//! section per host and per rank.

use std::fmt::Write;

use iolab_stats::ranks::{PhaseSpan, RankJobFigures, RanksSummary};
use iolab_stats::Dir;

use crate::jsonw::{Json, Obj};
use crate::units::{num2str, Unit};
use crate::RenderOpts;

/// The normal format's section.
pub fn text(s: &RanksSummary, opts: &RenderOpts) -> String {
    let mut out = String::new();
    let hosts = s.host_names();
    let _ = writeln!(
        out,
        "\nMPI: {} rank{} on {} host{} ({}){}",
        s.nranks,
        if s.nranks == 1 { "" } else { "s" },
        hosts.len(),
        if hosts.len() == 1 { "" } else { "s" },
        hosts.join(", "),
        if s.stonewall {
            "; each phase ended for all ranks when the first finished it"
        } else {
            ""
        }
    );
    for (i, p) in s.phases.iter().enumerate() {
        let _ = writeln!(
            out,
            "  phase {}: wall={}msec, start skew after the barrier={}usec",
            i + 1,
            p.wall_ns / 1_000_000,
            p.start_skew_ns / 1_000
        );
    }
    let rate = |v: u64| num2str(v, opts.sig_figs as usize, opts.pow2(), Unit::BytePerSec);
    for j in &s.jobs {
        for d in Dir::ALL {
            let r = &j.dirs[d as usize];
            if r.total_ios == 0 && r.io_bytes == 0 {
                continue;
            }
            let _ = writeln!(
                out,
                "  {} {}: aggregate bw={} ({} over the phase's wall time across ranks), \
                 sum of ranks' bw={}, iops={:.0}, ios={}",
                j.name,
                d.key(),
                rate(r.aggregate_bw_bytes),
                num2str(r.io_bytes, opts.sig_figs as usize, opts.pow2(), Unit::Byte),
                rate(r.sum_rank_bw_bytes),
                r.aggregate_iops,
                r.total_ios
            );
        }
    }
    for r in &s.ranks {
        if let Some(f) = &r.failure {
            let _ = writeln!(out, "  rank {} ({}): failed: {f}", r.rank, r.host);
        }
    }
    out
}

/// The JSON object.
pub fn json(s: &RanksSummary) -> Obj {
    let mut o = Obj::new();
    o.uint("nranks", u64::from(s.nranks))
        .add("stonewall", Json::Bool(s.stonewall));
    let phases = s
        .phases
        .iter()
        .map(|p| {
            let mut o = Obj::new();
            o.uint("wall_ns", p.wall_ns)
                .uint("start_skew_ns", p.start_skew_ns);
            Json::Obj(o)
        })
        .collect();
    o.add("phases", Json::Arr(phases));
    let jobs = s
        .jobs
        .iter()
        .map(|j| {
            let mut o = Obj::new();
            o.str("jobname", &j.name).uint("phase", j.phase as u64);
            for d in Dir::ALL {
                let r = &j.dirs[d as usize];
                let mut x = Obj::new();
                x.uint("io_bytes", r.io_bytes)
                    .uint("total_ios", r.total_ios)
                    .uint("aggregate_bw_bytes", r.aggregate_bw_bytes)
                    .uint("sum_rank_bw_bytes", r.sum_rank_bw_bytes)
                    .float("aggregate_iops", r.aggregate_iops);
                o.obj(d.key(), x);
            }
            Json::Obj(o)
        })
        .collect();
    o.add("jobs", Json::Arr(jobs));
    let hosts = s
        .hosts
        .iter()
        .map(|h| {
            let mut o = Obj::new();
            o.str("host", &h.host).add(
                "ranks",
                Json::Arr(h.ranks.iter().map(|&r| Json::UInt(u64::from(r))).collect()),
            );
            o.add("jobs", figures(&h.jobs));
            Json::Obj(o)
        })
        .collect();
    o.add("hosts", Json::Arr(hosts));
    let ranks = s
        .ranks
        .iter()
        .map(|r| {
            let mut o = Obj::new();
            o.uint("rank", u64::from(r.rank)).str("host", &r.host);
            match &r.failure {
                Some(f) => o.str("failure", f),
                None => o.add("failure", Json::Null),
            };
            o.add("jobs", figures(&r.jobs));
            o.add("phases", spans(&r.phases));
            Json::Obj(o)
        })
        .collect();
    o.add("ranks", Json::Arr(ranks));
    o
}

fn figures(jobs: &[RankJobFigures]) -> Json {
    Json::Arr(
        jobs.iter()
            .map(|j| {
                let mut o = Obj::new();
                o.str("jobname", &j.name);
                for d in Dir::ALL {
                    let i = d as usize;
                    let mut x = Obj::new();
                    x.uint("io_bytes", j.io_bytes[i])
                        .uint("total_ios", j.total_ios[i])
                        .uint("bw_bytes", j.bw_bytes[i]);
                    o.obj(d.key(), x);
                }
                Json::Obj(o)
            })
            .collect(),
    )
}

fn spans(phases: &[PhaseSpan]) -> Json {
    Json::Arr(
        phases
            .iter()
            .map(|p| {
                let mut o = Obj::new();
                o.uint("start_ns", p.start_ns).uint("end_ns", p.end_ns);
                Json::Obj(o)
            })
            .collect(),
    )
}
