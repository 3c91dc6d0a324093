//! fio's terse output, version 3: one semicolon-separated line per reported
//! job, fields in the order of fio's HOWTO ("Terse output"): version, fio
//! version, job name, group, error; read then write status (KiB, KiB/s,
//! IOPS, ms; slat, clat in usec; 20 percentile slots; lat; bandwidth
//! samples), with `unified_rw_reporting` the "mixed" status instead of
//! them (`mixed`) or after them (`both`); CPU; I/O depths; latency buckets
//! in usec (with the nsec buckets folded into the first) and msec; each
//! disk's statistics; with `continue_on_error`, the error count and the
//! first error; and the description when there is one. Version 3 has no
//! trim fields. After the jobs, an empty line (no name, group -1) per
//! clone that ran with `stats=0`, as fio 3.33 prints them.

use std::fmt::Write;

use iolab_stats::{Dir, JobResult, LatStat, RunResult};

use crate::calc::{self, Shown};
use crate::units::{f6, fixed_w};
use crate::RenderOpts;

/// Percentile slots per direction (fio's `FIO_IO_U_LIST_MAX_LEN`).
const PERCENTILE_SLOTS: usize = 20;

pub fn render(run: &RunResult, opts: &RenderOpts) -> String {
    let mut out = String::new();
    for j in &run.jobs {
        line(&mut out, run, j, opts);
    }
    // fio's lines for the clones that ran with stats=0.
    for &elapsed in &run.stats_off {
        line(&mut out, run, &calc::stats_off_entry(elapsed), opts);
    }
    out
}

fn line(out: &mut String, run: &RunResult, j: &JobResult, opts: &RenderOpts) {
    // fio prints the group id signed here (-1 for a stats=0 entry).
    let _ = write!(
        out,
        "3;{};{};{};{}",
        opts.fio_version, j.name, j.groupid as i32, j.error
    );
    // unified_rw_reporting: the "mixed" status instead of the read and
    // write ones, or after them (fio 3.33's layout).
    for d in calc::shown(j.setup.unified_rw, &[Dir::Read, Dir::Write]) {
        direction(out, run, j, d);
    }

    let (usr, sys) = calc::cpu(j);
    let _ = write!(
        out,
        ";{}%;{}%;{};{};{}",
        f6(usr),
        f6(sys),
        j.cpu.ctx,
        j.cpu.majflt,
        j.cpu.minflt
    );
    for p in calc::depth_level(j) {
        let _ = write!(out, ";{}%", fixed_w(p, 3, 1));
    }

    // The nanosecond buckets count into the first microsecond one, so the
    // field list stays what it was before fio had them. With no I/O issued
    // the share is 0/0, which fio prints as "-nan".
    let (_, mut us, ms) = calc::lat_buckets(j);
    let total = calc::issued_rw(j);
    let ns_count: u64 = j.lat_buckets.ns.iter().sum();
    us[0] += if total == 0 {
        -f64::NAN
    } else {
        100.0 * ns_count as f64 / total as f64
    };
    for p in us.iter().chain(&ms) {
        let _ = write!(out, ";{}%", fixed_w(*p, 3, 2));
    }

    for d in &run.disks {
        let _ = write!(
            out,
            ";{};{};{};{};{};{};{};{};{}%",
            d.name,
            d.read_ios,
            d.write_ios,
            d.read_merges,
            d.write_merges,
            d.read_ticks_ms,
            d.write_ticks_ms,
            d.in_queue_ms,
            fixed_w(d.util, 3, 2)
        );
    }
    if j.setup.continue_on_error {
        let _ = write!(out, ";{};{}", j.total_err, j.first_error);
    }
    if !j.description.is_empty() {
        let _ = write!(out, ";{}", j.description);
    }
    out.push('\n');
}

fn direction(out: &mut String, run: &RunResult, j: &JobResult, d: Shown) {
    let r = &calc::shown_result(j, d);
    let (bw, iops) = if r.runtime_ns > 0 {
        (r.bw_bytes() / 1024, r.iops() as u64)
    } else {
        (0, 0)
    };
    let _ = write!(
        out,
        ";{};{bw};{iops};{}",
        r.io_bytes >> 10,
        calc::ms(r.runtime_ns)
    );
    usec_stat(out, &r.slat);
    usec_stat(out, &r.clat);

    let s = &j.setup;
    let source = if s.lat_percentiles {
        Some(&r.lat)
    } else if s.clat_percentiles {
        Some(&r.clat)
    } else {
        None
    };
    let mut slots: Vec<(f64, u64)> = match source {
        // fio lists the percentiles even for an empty series, as zeros.
        Some(l) if l.hist.is_empty() => calc::sorted_list(j).into_iter().map(|p| (p, 0)).collect(),
        Some(l) => calc::percentiles(j, &l.hist),
        None => Vec::new(),
    };
    slots.truncate(PERCENTILE_SLOTS);
    for i in 0..PERCENTILE_SLOTS {
        match slots.get(i) {
            Some(&(p, v)) => {
                let _ = write!(out, ";{}%={}", f6(p), v / 1000);
            }
            None => out.push_str(";0%=0"),
        }
    }
    usec_stat(out, &r.lat);

    let bws = &r.bw_samples;
    if bws.is_empty() {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    } else {
        let share = calc::agg_share_terse(bws.mean(), calc::group_agg(run, j, d));
        let _ = write!(
            out,
            ";{};{};{}%;{};{}",
            bws.min().unwrap_or(0),
            bws.max().unwrap_or(0),
            f6(share),
            f6(bws.mean()),
            f6(bws.stdev())
        );
    }
}

/// min;max;mean;stdev in microseconds (min and max cut to integers).
fn usec_stat(out: &mut String, l: &LatStat) {
    let m = &l.moments;
    if m.is_empty() {
        out.push_str(";0;0;0.000000;0.000000");
        return;
    }
    let _ = write!(
        out,
        ";{};{};{};{}",
        m.min().unwrap_or(0) / 1000,
        m.max().unwrap_or(0) / 1000,
        f6(m.mean() / 1000.0),
        f6(m.stdev() / 1000.0)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stats_off_clone_gets_fios_empty_line() {
        // fio 3.33 on [a] and [b] stats=0 (its disk fields left out).
        let fio = "3;fio-3.33;;-1;0;0;0;0;0;0;0;0.000000;0.000000;0;0;0.000000;0.000000;\
            0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;\
            0%=0;0%=0;0%=0;0%=0;0;0;0.000000;0.000000;0;0;0.000000%;0.000000;0.000000;\
            0;0;0;0;0;0;0.000000;0.000000;0;0;0.000000;0.000000;\
            0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;0%=0;\
            0%=0;0%=0;0%=0;0%=0;0;0;0.000000;0.000000;0;0;0.000000%;0.000000;0.000000;\
            0.000000%;0.000000%;0;0;0;0.0%;0.0%;0.0%;0.0%;0.0%;0.0%;0.0%;-nan%;0.00%;0.00%;\
            0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;\
            0.00%;0.00%;0.00%;0.00%;0.00%;0.00%\n";
        let run = RunResult {
            jobs: vec![JobResult {
                name: "a".into(),
                ..Default::default()
            }],
            stats_off: vec![1],
            ..Default::default()
        };
        let text = render(&run, &RenderOpts::default());
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("3;fio-3.33;a;0;0;"));
        assert_eq!(lines[1], fio);
    }

    #[test]
    fn a_job_without_io_has_all_fields_and_fios_nan() {
        // fio 3.33 on a job that failed at setup (err=22): zeros, the
        // percentile names with zero values, and "-nan%" for the first
        // usec bucket (0 of 0 I/Os).
        let run = RunResult {
            jobs: vec![JobResult {
                name: "e".into(),
                error: 22,
                ..Default::default()
            }],
            ..Default::default()
        };
        let text = render(&run, &RenderOpts::default());
        let f: Vec<&str> = text.trim_end().split(';').collect();
        assert_eq!(f.len(), 121);
        assert_eq!(&f[..6], ["3", "fio-3.33", "e", "0", "22", "0"]);
        assert_eq!(f[17], "1.000000%=0");
        assert_eq!(f[34], "0%=0");
        assert_eq!(f[87], "0.000000%");
        assert_eq!(f[92], "0.0%");
        assert_eq!(f[99], "-nan%");
        assert_eq!(f[100], "0.00%");
        assert!(text.ends_with("0.00%\n"));
    }
}
