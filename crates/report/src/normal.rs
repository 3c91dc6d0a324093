//! fio's normal (human-readable) output: the lines before the run (one
//! header per job, the version, "Starting N threads"), and the report at
//! the end: a block per job (per direction IOPS/BW, latency lines with
//! their unit, percentile tables, bandwidth and IOPS samples; latency
//! buckets, sync latencies, CPU, depth distributions), the run status of
//! each group and the disks' statistics. With `unified_rw_reporting` the
//! directions are summed as "mixed" (instead of them, or after them with
//! `both`). fio 3.33 prints that `both` block's first line as
//! "mixed: IOPS=0, BW=0 (0)(0B/...)" whatever was done; iolab prints the
//! numbers its JSON and terse (and fio's) carry.

use std::fmt::Write;

use iolab_stats::{Dir, DirResult, JobResult, LatHist, Moments, RunResult, SteadyResult};

use crate::calc::{self, Shown};
use crate::units::{ctime, digits, fixed_w, num2str, scale_lat, Unit};
use crate::{RenderOpts, UnitBase};

/// fio's line as a job starts creating or extending its files:
/// "NAME: Laying out IO file (1 file / 8MiB)", or for more than one file
/// "NAME: Laying out IO files (3 files / total 24MiB)"; the size is the
/// files' sizes added up, in whole MiB (rounded down, as fio does).
pub fn laying_out(job: &str, files: usize, bytes: u64) -> String {
    let mib = bytes >> 20;
    if files > 1 {
        format!("{job}: Laying out IO files ({files} files / total {mib}MiB)\n")
    } else {
        format!("{job}: Laying out IO file ({files} file / {mib}MiB)\n")
    }
}

pub fn preamble(jobs: &[JobResult], opts: &RenderOpts) -> String {
    let mut out = String::new();
    let mut prev: Option<(&str, u32)> = None;
    let mut dots = false;
    let mut threads: u64 = 0;
    for j in jobs {
        threads += u64::from(calc::members(j));
        let key = (j.name.as_str(), j.groupid);
        if prev == Some(key) {
            // A further clone of the previous job (not merged).
            if !dots {
                out.push_str("...\n");
                dots = true;
            }
            continue;
        }
        prev = Some(key);
        dots = false;
        let s = &j.setup;
        let bs = |v: u64| num2str(v, opts.sig_figs as usize, opts.pow2(), Unit::Byte);
        let _ = writeln!(
            out,
            "{}: (g={}): rw={}, bs=(R) {}-{}, (W) {}-{}, (T) {}-{}, ioengine={}, iodepth={}",
            j.name,
            j.groupid,
            s.rw,
            bs(s.bs[0].0),
            bs(s.bs[0].1),
            bs(s.bs[1].0),
            bs(s.bs[1].1),
            bs(s.bs[2].0),
            bs(s.bs[2].1),
            s.ioengine,
            s.iodepth
        );
        if calc::members(j) > 1 {
            out.push_str("...\n");
            dots = true;
        }
    }
    let _ = writeln!(out, "{}", opts.version);
    let _ = writeln!(
        out,
        "Starting {threads} thread{}",
        if threads == 1 { "" } else { "s" }
    );
    out
}

pub fn render(run: &RunResult, opts: &RenderOpts) -> String {
    let mut out = String::from("\n");
    for j in &run.jobs {
        job(&mut out, run, j, opts);
    }
    for g in &run.groups {
        let _ = writeln!(out, "\nRun status group {} (all jobs):", g.groupid);
        for s in calc::shown(g.unified_rw, &Dir::ALL) {
            let (gd, name) = match s {
                Shown::Dir(Dir::Read) => (&g.dirs[0], "READ"),
                Shown::Dir(Dir::Write) => (&g.dirs[1], "WRITE"),
                Shown::Dir(Dir::Trim) => (&g.dirs[2], "TRIM"),
                Shown::Mixed => (&g.mixed, "MIXED"),
            };
            if gd.max_runtime_ns == 0 {
                continue;
            }
            let bw = |v: u64| rate(v, opts, opts.pow2());
            let bw_alt = |v: u64| rate(v, opts, !opts.pow2());
            let _ = writeln!(
                out,
                "{name:>7}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
                bw(gd.agg_bw_bytes),
                bw_alt(gd.agg_bw_bytes),
                bw(gd.min_bw_bytes),
                bw(gd.max_bw_bytes),
                bw_alt(gd.min_bw_bytes),
                bw_alt(gd.max_bw_bytes),
                size(gd.io_bytes, opts, opts.pow2()),
                size(gd.io_bytes, opts, !opts.pow2()),
                calc::ms(gd.min_runtime_ns),
                calc::ms(gd.max_runtime_ns)
            );
        }
    }
    if !run.disks.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        for d in &run.disks {
            let _ = writeln!(
                out,
                "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={}%",
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
    }
    if let Some(ranks) = &run.ranks {
        out.push_str(&crate::ranks::text(ranks, opts));
    }
    out
}

/// A bandwidth abbreviated with the prefixes `pow2` picks, in bytes or
/// bits per second as the options say.
fn rate(bytes_per_s: u64, opts: &RenderOpts, pow2: bool) -> String {
    let unit = match opts.unit_base {
        UnitBase::Bytes => Unit::BytePerSec,
        UnitBase::Bits => Unit::BitPerSec,
    };
    num2str(bytes_per_s, opts.sig_figs as usize, pow2, unit)
}

fn size(bytes: u64, opts: &RenderOpts, pow2: bool) -> String {
    num2str(bytes, opts.sig_figs as usize, pow2, Unit::Byte)
}

fn job(out: &mut String, run: &RunResult, j: &JobResult, opts: &RenderOpts) {
    let io: u64 = j.dirs.iter().map(|d| d.io_bytes).sum();
    // fio prints nothing of a job that did no I/O. One that failed before
    // its first I/O (its file could not be made, laid out or opened) gets
    // its header line with the error, so that the report says why.
    let idle = io == 0 && calc::issued_rw(j) == 0;
    if idle && j.error == 0 {
        return;
    }
    job_header(out, run, j, opts);
    if idle {
        return;
    }
    if !j.description.is_empty() {
        let _ = writeln!(out, "  Description  : [{}]", j.description);
    }
    for s in calc::shown(j.setup.unified_rw, &Dir::ALL) {
        let r = calc::shown_result(j, s);
        if r.io_bytes > 0 && r.runtime_ns > 0 {
            direction(out, run, j, s, &r, opts);
        }
    }

    let (ns, us, ms) = calc::lat_buckets(j);
    lat_buckets(out, &ns, "nsec");
    lat_buckets(out, &us, "usec");
    lat_buckets(out, &ms, "msec");

    if !j.sync.moments.is_empty() {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        lat_line(out, "sync", &j.sync.moments);
        percentile_table(out, "sync", j, &j.sync.hist);
    }

    cpu_and_depths(out, j);
    errors_and_latency(out, j);
    if let Some(ss) = &j.steadystate {
        steadystate(out, ss, opts);
    }
    // iolab's own lines, after everything fio prints for the job.
    for w in &j.warnings {
        let _ = writeln!(out, "{WARNING_PREFIX}{} ({})", w.text, w.code);
    }
}

/// A job's first line: name, group, members, error (with its detail when
/// there is one), pid and start time.
fn job_header(out: &mut String, run: &RunResult, j: &JobResult, opts: &RenderOpts) {
    let when = ctime(run.timestamp, opts.utc_offset_s);
    if j.error == 0 {
        let _ = writeln!(
            out,
            "{}: (groupid={}, jobs={}): err={:2}: pid={}: {when}",
            j.name,
            j.groupid,
            calc::members(j),
            j.error,
            j.pid
        );
    } else {
        let _ = writeln!(
            out,
            "{}: (groupid={}, jobs={}): err={:2} ({}): pid={}: {when}",
            j.name,
            j.groupid,
            calc::members(j),
            j.error,
            j.error_detail,
            j.pid
        );
    }
}

/// The cpu line and the IO depths and issued counts under it.
fn cpu_and_depths(out: &mut String, j: &JobResult) {
    let (usr, sys) = calc::cpu(j);
    let _ = writeln!(
        out,
        "  cpu          : usr={}%, sys={}%, ctx={}, majf={}, minf={}",
        fixed_w(usr, 3, 2),
        fixed_w(sys, 3, 2),
        j.cpu.ctx,
        j.cpu.majflt,
        j.cpu.minflt
    );
    let dist = |v: &[f64], keys: [&str; 7]| -> String {
        keys.iter()
            .zip(v)
            .map(|(k, &p)| format!("{k}={}%", fixed_w(p, 3, 1)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    const LEVELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
    const BATCHES: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    let _ = writeln!(
        out,
        "  IO depths    : {}",
        dist(&calc::depth_level(j), LEVELS)
    );
    let _ = writeln!(
        out,
        "     submit    : {}",
        dist(&calc::depth_batches(&j.depth.submit), BATCHES)
    );
    let _ = writeln!(
        out,
        "     complete  : {}",
        dist(&calc::depth_batches(&j.depth.complete), BATCHES)
    );
    let [issued, short, dropped] = calc::issued_rwts(j);
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        issued[0],
        issued[1],
        issued[2],
        j.sync.count(),
        short[0],
        short[1],
        short[2],
        dropped[0],
        dropped[1],
        dropped[2]
    );
}

/// The errors line (with continue_on_error) and the latency target line.
fn errors_and_latency(out: &mut String, j: &JobResult) {
    let s = &j.setup;
    if s.continue_on_error {
        let text = if j.first_error == 0 {
            "Success"
        } else {
            j.first_error_text.as_str()
        };
        let _ = writeln!(
            out,
            "     errors    : total={}, first_error={}/<{text}>",
            j.total_err, j.first_error
        );
    }
    let depth = j.latency_depth.unwrap_or(s.iodepth);
    if depth > 0 {
        let _ = writeln!(
            out,
            "     latency   : target={}, window={}, percentile={:.2}%, depth={depth}",
            s.latency_target_ns, s.latency_window_us, s.latency_percentile
        );
    }
}

/// fio's "steadystate" line: whether it was attained, the window's mean
/// bandwidth and IOPS, and the last criterion.
fn steadystate(out: &mut String, ss: &SteadyResult, opts: &RenderOpts) {
    let pow2 = opts.pow2();
    // fio prints the mean in kb_base units, with the other prefixes on the
    // same number for the second figure: 7979KiB/s (7979kB/s).
    let k = ss.bw_mean() / u64::from(opts.kb_base.max(1));
    let in_units = |pow2: bool| rate(k * if pow2 { 1024 } else { 1000 }, opts, pow2);
    let _ = writeln!(
        out,
        "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={:.3}{}",
        if ss.attained { "yes" } else { "no" },
        in_units(pow2),
        in_units(!pow2),
        num2str(ss.iops_mean(), opts.sig_figs as usize, false, Unit::None),
        if ss.rule.iops { "iops" } else { "bw" },
        if ss.rule.slope { " slope" } else { " mean dev" },
        ss.criterion,
        if ss.rule.pct { "%" } else { "" }
    );
}

/// How a warning line starts in the normal output, for readers (and
/// tests) that compare the rest with fio's.
pub const WARNING_PREFIX: &str = "  iolab warning: ";

fn direction(
    out: &mut String,
    run: &RunResult,
    j: &JobResult,
    d: Shown,
    r: &DirResult,
    opts: &RenderOpts,
) {
    let pow2 = opts.pow2();
    let iops = num2str(r.iops() as u64, opts.sig_figs as usize, false, Unit::None);
    let bw = r.bw_bytes();
    let _ = writeln!(
        out,
        "  {}: IOPS={iops}, BW={} ({})({}/{}msec){}",
        d.key(),
        rate(bw, opts, pow2),
        rate(bw, opts, !pow2),
        size(r.io_bytes, opts, pow2),
        calc::ms(r.runtime_ns),
        if d == Shown::Dir(Dir::Write) {
            "; 0 zone resets"
        } else {
            ""
        }
    );
    if !r.slat.moments.is_empty() {
        lat_line(out, "slat", &r.slat.moments);
    }
    if !r.clat.moments.is_empty() {
        lat_line(out, "clat", &r.clat.moments);
    }
    if !r.lat.moments.is_empty() {
        lat_line(out, " lat", &r.lat.moments);
    }
    let s = &j.setup;
    if s.slat_percentiles && !r.slat.moments.is_empty() {
        percentile_table(out, "slat", j, &r.slat.hist);
    }
    if s.clat_percentiles && !r.clat.moments.is_empty() {
        percentile_table(out, "clat", j, &r.clat.hist);
    }
    if s.lat_percentiles && !r.lat.moments.is_empty() {
        percentile_table(out, "lat", j, &r.lat.hist);
    }

    let bws = &r.bw_samples;
    if !bws.is_empty() {
        // fio 3.33 shows these samples in KiB/s (kB/s with kb_base=1000)
        // whatever unit_base says, and switches to "MiB" by dividing by
        // kb_base once the mean passes kb_base^2.
        let share = calc::agg_share(bws.mean(), calc::group_agg(run, j, d));
        let kb = opts.kb_base.max(1);
        let (mut min, mut max) = (bws.min().unwrap_or(0), bws.max().unwrap_or(0));
        let (mut mean, mut dev) = (bws.mean(), bws.stdev());
        let mut label = if pow2 { "KiB" } else { "kB" };
        let fkb = f64::from(kb);
        if mean > fkb * fkb {
            min /= u64::from(kb);
            max /= u64::from(kb);
            mean /= fkb;
            dev /= fkb;
            label = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({label:>5}/s): min={min:5}, max={max:5}, per={}%, avg={}, stdev={}, samples={}",
            fixed_w(share, 3, 2),
            fixed_w(mean, 5, 2),
            fixed_w(dev, 5, 2),
            bws.count()
        );
    }
    let io = &r.iops_samples;
    if !io.is_empty() {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={}, stdev={}, samples={}",
            io.min().unwrap_or(0),
            io.max().unwrap_or(0),
            fixed_w(io.mean(), 5, 2),
            fixed_w(io.stdev(), 5, 2),
            io.count()
        );
    }
}

/// "    clat (usec): min=24, max=132, avg=28.08, stdev= 5.72"
fn lat_line(out: &mut String, name: &str, m: &Moments) {
    let s = scale_lat(
        m.min().unwrap_or(0),
        m.max().unwrap_or(0),
        m.mean(),
        m.stdev(),
    );
    let _ = writeln!(
        out,
        "    {name} ({}): min={}, max={}, avg={}, stdev={}",
        s.unit,
        num2str(s.min, 6, false, Unit::None),
        num2str(s.max, 6, false, Unit::None),
        fixed_w(s.mean, 5, 2),
        fixed_w(s.dev, 5, 2)
    );
}

/// A percentile table: values in the unit their smallest and largest call
/// for (rounded up when scaled), framed with `|`, as many per line as fit
/// 73 columns.
fn percentile_table(out: &mut String, name: &str, j: &JobResult, hist: &LatHist) {
    let vals = calc::percentiles(j, hist);
    if vals.is_empty() {
        return;
    }
    let minv = vals.iter().map(|&(_, v)| v).min().unwrap_or(0);
    let maxv = vals.iter().map(|&(_, v)| v).max().unwrap_or(0);
    let (unit, scale, div) = if minv > 2_000_000 && maxv > 99_999_999 {
        ("msec", 2, 1_000_000)
    } else if minv > 2000 && maxv > 99_999 {
        ("usec", 1, 1000)
    } else {
        ("nsec", 0, 1)
    };
    let _ = write!(out, "    {name} percentiles ({unit}):\n     |");
    let prec = j.setup.percentile_precision as usize;
    let time_width = digits(maxv / div).max(5);
    let per_line = (73 / (prec + 10 + time_width)).max(1);
    let last = vals.len() - 1;
    for (i, &(p, v)) in vals.iter().enumerate() {
        if i != 0 && i % per_line == 0 {
            out.push_str("     |");
        }
        let mut v = v;
        for _ in 0..scale {
            v = v.div_ceil(1000);
        }
        let _ = write!(
            out,
            " {}th=[{v:>time_width$}]{}",
            fixed_w(p, prec + 3, prec),
            if i == last { '\n' } else { ',' }
        );
        if i == last {
            break;
        }
        if i % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// "  lat (usec)   : 4=39.94%, 10=11.16%, ...": the non-zero buckets, five
/// per line.
fn lat_buckets(out: &mut String, pcts: &[f64], unit: &str) {
    const RANGES: [&str; 12] = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    let shown: Vec<String> = RANGES
        .iter()
        .zip(pcts)
        .filter(|(_, &p)| p > 0.0)
        .map(|(r, &p)| format!("{r}={}%", fixed_w(p, 3, 2)))
        .collect();
    for line in shown.chunks(5) {
        let _ = writeln!(out, "  lat ({unit})   : {}", line.join(", "));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn laying_out_says_file_or_files_as_fio_does() {
        assert_eq!(
            super::laying_out("w1", 1, 8 << 20),
            "w1: Laying out IO file (1 file / 8MiB)\n"
        );
        assert_eq!(
            super::laying_out("w2", 2, 8 << 20),
            "w2: Laying out IO files (2 files / total 8MiB)\n"
        );
        // Under a MiB, and a part of one, are rounded down.
        assert_eq!(
            super::laying_out("w3", 1, 512 << 10),
            "w3: Laying out IO file (1 file / 0MiB)\n"
        );
        assert_eq!(
            super::laying_out("w4", 3, (3 << 20) + 1),
            "w4: Laying out IO files (3 files / total 3MiB)\n"
        );
    }

    use super::*;
    use iolab_stats::{GroupResult, JobSetup};

    fn job_with_clat(values: &[u64]) -> JobResult {
        let mut j = JobResult {
            name: "x".into(),
            clones: 1,
            ..Default::default()
        };
        let r = &mut j.dirs[0];
        for &v in values {
            r.clat.record(v);
            r.lat.record(v);
            j.lat_buckets.record(v);
        }
        r.total_ios = values.len() as u64;
        r.io_bytes = 4096 * values.len() as u64;
        r.runtime_ns = 1_000_000;
        j.issued[0] = values.len() as u64;
        j.depth.level[0] = values.len() as u64;
        j
    }

    fn table(j: &JobResult) -> Vec<String> {
        let mut out = String::new();
        percentile_table(&mut out, "clat", j, &j.dirs[0].clat.hist);
        out.lines().map(str::to_string).collect()
    }

    #[test]
    fn entries_per_line_follow_the_width() {
        // Observed with fio 3.33 --percentile_list at these precisions
        // (values below 100 us, so 5-wide): 0 to 3 decimals give 4 per
        // line, 4 to 9 give 3, 10 and 11 give 2.
        let mut j = job_with_clat(&(1..=100).collect::<Vec<_>>());
        j.setup.percentile_list = vec![10.0, 20.0, 30.0, 40.0, 50.0, 60.0];
        for (prec, per_line) in [(0, 4), (3, 4), (4, 3), (9, 3), (10, 2), (11, 2)] {
            j.setup.percentile_precision = prec;
            let t = table(&j);
            assert_eq!(t[0], "    clat percentiles (nsec):");
            assert_eq!(t[1].matches("th=[").count(), per_line, "precision {prec}");
        }
        j.setup.percentile_precision = 0;
        assert_eq!(
            table(&j)[1],
            "     |  10th=[   10],  20th=[   20],  30th=[   30],  40th=[   40],"
        );
        assert_eq!(table(&j)[2], "     |  50th=[   50],  60th=[   60]");
    }

    #[test]
    fn msec_tables_round_up() {
        // 3.1 ms .. 300 ms: percentiles in msec, each value rounded up.
        let j = job_with_clat(&[3_100_000, 150_000_000, 300_000_000]);
        let t = table(&j);
        assert_eq!(t[0], "    clat percentiles (msec):");
        // 3_100_000 ns is in the bin whose value is 3_096_576: 4 ms up.
        assert!(t[1].starts_with("     |  1.00th=[    4],"), "{}", t[1]);
        let mut out = String::new();
        lat_line(&mut out, "clat", &j.dirs[0].clat.moments);
        assert!(
            out.starts_with("    clat (msec): min=3, max=300, avg=151.03"),
            "{out}"
        );
    }

    #[test]
    fn bucket_lines_skip_zeros_and_wrap_at_five() {
        let mut out = String::new();
        let p = [0.0, 1.0, 0.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 0.01, 0.0, 7.5];
        lat_buckets(&mut out, &p, "msec");
        assert_eq!(
            out,
            "  lat (msec)   : 4=1.00%, 20=2.00%, 50=3.00%, 100=4.00%, 250=5.00%\n  \
             lat (msec)   : 500=6.00%, 1000=0.01%, >=2000=7.50%\n"
        );
    }

    #[test]
    fn latency_and_steadystate_lines_are_fios() {
        let mut run = RunResult::default();
        let mut j = job_with_clat(&[1000]);
        j.setup.latency_target_ns = 1_000_000;
        j.setup.latency_window_us = 50_000;
        j.setup.latency_percentile = 50.0;
        j.latency_depth = Some(12);
        // fio 3.33's line for a 2 s window at 7979 KiB/s and 1994 IOPS.
        j.steadystate = Some(SteadyResult {
            rule: iolab_stats::SteadyRule {
                iops: true,
                slope: false,
                pct: true,
                limit: 50.0,
                dur: 2,
            },
            attained: true,
            criterion: 0.3762,
            iops: vec![1994, 1994],
            bw: vec![7979 * 1024 + 100, 7979 * 1024 + 300],
            ..Default::default()
        });
        run.jobs = vec![j];
        run.groups = vec![GroupResult::from_jobs(0, run.jobs.iter())];
        let text = render(&run, &RenderOpts::default());
        assert!(
            text.contains(
                "\n     latency   : target=1000000, window=50000, percentile=50.00%, depth=12\n  \
                 steadystate  : attained=yes, bw=7979KiB/s (7979kB/s), iops=1994, \
                 iops mean dev=0.376%\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn jobs_without_io_are_left_out_and_errors_shown() {
        let mut run = RunResult::default();
        let mut failed = job_with_clat(&[1000]);
        failed.error = 5;
        failed.error_detail = "file:/tmp/x, offset=0, error=Input/output error".into();
        run.jobs = vec![
            JobResult {
                name: "idle".into(),
                ..Default::default()
            },
            failed,
        ];
        run.groups = vec![GroupResult::from_jobs(0, run.jobs.iter())];
        let text = render(&run, &RenderOpts::default());
        assert!(!text.contains("idle:"));
        assert!(text.contains(
            "x: (groupid=0, jobs=1): err= 5 (file:/tmp/x, offset=0, error=Input/output error): pid=0: Thu Jan  1 00:00:00 1970\n"
        ));
        assert!(text.contains("\nRun status group 0 (all jobs):\n   READ: bw=4000KiB/s (4096kB/s)"));
        assert!(!text.contains("Disk stats"));
    }

    #[test]
    fn a_job_that_failed_before_its_first_io_shows_its_header_line_alone() {
        let mut run = RunResult::default();
        run.jobs = vec![JobResult {
            name: "x".into(),
            error: 28,
            error_detail: "file:/mnt/x.0.0, func=write, error=No space left on device".into(),
            ..Default::default()
        }];
        run.groups = vec![GroupResult::from_jobs(0, run.jobs.iter())];
        let text = render(&run, &RenderOpts::default());
        assert_eq!(
            text,
            "\nx: (groupid=0, jobs=1): err=28 (file:/mnt/x.0.0, func=write, error=No space left on device): pid=0: Thu Jan  1 00:00:00 1970\n\nRun status group 0 (all jobs):\n"
        );
        assert!(!text.contains("cpu"), "{text}");
        assert!(!text.contains("IO depths"), "{text}");
    }

    #[test]
    fn unified_mixed_reports_one_direction_and_issued_counts_in_the_first() {
        // fio 3.33 with unified_rw_reporting=mixed on randrw: "mixed" and
        // "MIXED" lines only, issued rwts all in the first place.
        let mut j = job_with_clat(&[1000, 2000, 3000]);
        j.dirs[1] = j.dirs[0].clone();
        j.issued = [3, 3, 0];
        j.dirs[0].short_ios = 1;
        j.dirs[1].short_ios = 2;
        j.setup.unified_rw = iolab_stats::UnifiedRw::Mixed;
        let mut run = RunResult {
            jobs: vec![j],
            ..Default::default()
        };
        run.groups = vec![GroupResult::from_jobs(0, run.jobs.iter())];
        let text = render(&run, &RenderOpts::default());
        assert!(
            text.contains("\n  mixed: IOPS=6000, BW=23.4MiB/s (24.6MB/s)(24.0KiB/1msec)\n"),
            "{text}"
        );
        assert!(
            !text.contains(" read:") && !text.contains(" write:"),
            "{text}"
        );
        assert!(
            text.contains("     issued rwts: total=6,0,0,0 short=3,0,0,0 dropped=0,0,0,0\n"),
            "{text}"
        );
        assert!(
            text.contains("\n  MIXED: bw=23.4MiB/s (24.6MB/s), 23.4MiB/s-23.4MiB/s"),
            "{text}"
        );
        assert!(
            !text.contains("READ:") && !text.contains("WRITE:"),
            "{text}"
        );
    }

    #[test]
    fn preamble_counts_threads_and_marks_clones_once() {
        let setup = JobSetup {
            rw: "randwrite".into(),
            bs: [(512, 131072), (4096, 4096), (1 << 20, 1 << 20)],
            ioengine: "libaio".into(),
            iodepth: 32,
            ..Default::default()
        };
        let a = JobResult {
            name: "a".into(),
            setup,
            clones: 1,
            ..Default::default()
        };
        let b = JobResult {
            name: "b".into(),
            groupid: 1,
            clones: 3,
            ..Default::default()
        };
        let text = preamble(&[a.clone(), a.clone(), a, b], &RenderOpts::default());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "a: (g=0): rw=randwrite, bs=(R) 512B-128KiB, (W) 4096B-4096B, (T) 1024KiB-1024KiB, ioengine=libaio, iodepth=32"
        );
        assert_eq!(lines[1], "...");
        assert!(lines[2].starts_with("b: (g=1): rw=read, bs=(R) 4096B-4096B"));
        assert_eq!(lines[3], "...");
        assert!(lines[4].starts_with("iolab-"));
        assert_eq!(lines[5], "Starting 6 threads");
        assert_eq!(lines.len(), 6);
    }
}
