//! The summary of `iolab run --repeat N`: one line per figure (job,
//! direction, metric) with the median, min-max (`!` where the range
//! exceeds 10% of the median), the confidence interval of the median (from
//! order statistics, distribution-free: its bounds are runs' values, see
//! `iolab_stats::Summary`), and the runs' geometric mean with its spread,
//! the one spread of every iolab table (`doc::num::spread`: the half-width
//! of its 95% interval; what the verdicts test and `--repeat auto` judges);
//! and the JSON document: fio's layout at the top
//! level, from the median run, so that fio parsers read it as one run, and
//! iolab's summary and every run's document under the top-level "iolab".

use std::fmt::Write as _;

use iolab_stats::repeat_rule::gm_interval;
use iolab_stats::repeated::{median_run, RepeatFigure};
use iolab_stats::CONFIDENCE;
use iolab_stats::{RepeatOutcome, RunResult};

use crate::doc::num;
use crate::json;
use crate::jsonw::{Json, Obj};
use crate::RenderOpts;

/// The normal-output summary after the runs' reports. `caches` says what
/// was done between runs.
pub fn repeats_text(figs: &[RepeatFigure], runs: usize, caches: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\nRepeats: {runs} runs; {caches}");
    let mut short_of_95 = false;
    let rows: Vec<[String; 7]> = figs
        .iter()
        .map(|f| {
            let s = &f.summary;
            let ci = s
                .median_ci
                .map(|c| {
                    let mut cell = format!("{} - {}", num(c.low), num(c.high));
                    if c.confidence < CONFIDENCE {
                        short_of_95 = true;
                        let _ = write!(cell, " ({:.0}%)", c.confidence * 100.0);
                    }
                    cell
                })
                .unwrap_or_else(|| "-".into());
            [
                f.job.clone(),
                f.dir.clone(),
                format!("{} {}", label(&f.metric), f.unit),
                num(s.median),
                format!(
                    "{} - {}{}",
                    num(s.min),
                    num(s.max),
                    if f.noisy { " !" } else { "" }
                ),
                ci,
                geo(&f.values),
            ]
        })
        .collect();
    let head = [
        "job",
        "dir",
        "figure",
        "median",
        "min - max",
        "median 95% CI",
        "geo mean ±spread",
    ];
    let mut w = head.map(str::len);
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.len());
        }
    }
    let line = |c: [&str; 7]| {
        let mut l = String::from("  ");
        for (i, cell) in c.iter().enumerate() {
            if i < 3 {
                let _ = write!(l, "{cell:<width$}  ", width = w[i]);
            } else {
                let _ = write!(l, "{cell:>width$}  ", width = w[i]);
            }
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(head));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r.each_ref().map(String::as_str)));
    }
    let _ = writeln!(
        out,
        "  median 95% CI: the runs' values between which the true median lies, from order \
         statistics (no assumption about the distribution)"
    );
    let _ = writeln!(
        out,
        "  geo mean ±spread: the runs' geometric mean, the statistic diff's verdicts test and \
         --repeat auto judges, ± half the width of its 95% interval (Student's t on the runs' \
         logarithms), the spread of every iolab table"
    );
    if short_of_95 {
        let _ = writeln!(
            out,
            "  (N%): fewer than 6 runs cannot give 95%; the interval is then min - max, with the \
             confidence shown"
        );
    }
    if figs.iter().any(|f| f.noisy) {
        let _ = writeln!(
            out,
            "  ! max - min exceeds 10% of the median: the median alone does not describe the runs"
        );
    }
    out
}

/// The geometric mean of the runs and its spread: `1,234 ±2.1%`; `-`
/// when there is no interval (one run, a zero).
fn geo(values: &[f64]) -> String {
    match (gm_interval(values), num::spread(values)) {
        (Some((gm, _, _)), Some(s)) => format!("{} {}", num(gm), num::spread_text(s)),
        _ => "-".into(),
    }
}

fn label(metric: &str) -> &str {
    match metric {
        "clat_p50" => "clat p50",
        "clat_p99" => "clat p99",
        other => other,
    }
}

/// The one number format of iolab's tables.
fn num(v: f64) -> String {
    num::fmt(v)
}

/// The JSON (or json+) document of a repeated run: the median run's fio
/// document at the top level (see `median_run`), and under its top-level
/// "iolab": "repeat" (the runs, what was done to the caches, which run is
/// at the top level, the figures with their medians, intervals and
/// spreads) and "runs" (every run's document, in run order).
pub fn repeats_json(
    figs: &[RepeatFigure],
    caches: &str,
    runs: &[RunResult],
    opts: &RenderOpts,
    plus: bool,
    outcome: Option<&RepeatOutcome>,
) -> String {
    let Some(top) = runs.get(median_run(figs, runs.len())) else {
        return String::new();
    };
    let mut root = json::document(top, opts, plus);
    let mut repeat = Obj::new();
    repeat
        .uint("runs", runs.len() as u64)
        .str("caches", caches)
        .uint("top_level_run", median_run(figs, runs.len()) as u64 + 1)
        .str(
            "interval",
            "confidence interval of the median from order statistics (distribution-free)",
        )
        .add("figures", Json::Arr(figs.iter().map(figure).collect()));
    if let Some(o) = outcome {
        let stopped = serde_json::to_value(o.stopped)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        repeat
            .str("rule", &o.rule.to_string())
            .str("stopped", &stopped)
            .str("stopped_because", o.stopped.words());
        if let Some(w) = o.widest {
            repeat
                .float("widest_gm_half_width", w)
                .str("widest_figure", &o.widest_figure);
        }
    }
    let docs = runs
        .iter()
        .map(|r| Json::Obj(json::document(r, opts, plus)))
        .collect();
    if let Some(Json::Obj(iolab)) = root.get_mut("iolab") {
        iolab.obj("repeat", repeat).add("runs", Json::Arr(docs));
    }
    root.to_document()
}

fn figure(f: &RepeatFigure) -> Json {
    let s = &f.summary;
    let mut o = Obj::new();
    o.str("job", &f.job)
        .str("dir", &f.dir)
        .str("metric", &f.metric)
        .str("unit", &f.unit)
        .add(
            "values",
            Json::Arr(f.values.iter().map(|v| Json::Float(*v)).collect()),
        )
        .float("median", s.median)
        .float("min", s.min)
        .float("max", s.max)
        .float("mean", s.mean);
    if let Some(c) = s.median_ci {
        let mut ci = Obj::new();
        ci.float("low", c.low)
            .float("high", c.high)
            .float("confidence", c.confidence);
        o.obj("median_ci", ci);
    }
    if let Some((gm, lo, hi)) = gm_interval(&f.values) {
        let mut g = Obj::new();
        g.float("value", gm).float("low", lo).float("high", hi);
        o.obj("geometric_mean", g);
    }
    if let Some(p) = num::spread(&f.values) {
        o.float("spread", p);
    }
    if let Some(r) = f.range_ratio() {
        o.float("range_ratio", r);
    }
    o.add("noisy", Json::Bool(f.noisy));
    Json::Obj(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_stats::{Dir, DirResult, JobResult, Summary};

    fn fig(values: &[f64], noisy: bool) -> RepeatFigure {
        RepeatFigure {
            job: "j".into(),
            dir: "read".into(),
            metric: "iops".into(),
            unit: "IOPS".into(),
            values: values.to_vec(),
            summary: Summary::of(values).unwrap(),
            noisy,
        }
    }

    #[test]
    fn the_summary_lines_up_and_flags_noise() {
        let t = repeats_text(
            &[
                fig(&[1000.0, 1040.0, 980.0], false),
                fig(&[10.0, 13.0], true),
            ],
            3,
            "caches dropped before each run",
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[1], "Repeats: 3 runs; caches dropped before each run");
        assert!(lines[2].starts_with("  job  dir   figure"), "{t}");
        assert!(lines[2].contains("median 95% CI"), "{t}");
        assert!(
            lines[3].contains("1,000") && lines[3].contains("980 - 1,040"),
            "{t}"
        );
        // Three runs: the range, which holds the median 75% of the time.
        assert!(lines[3].contains("980 - 1,040 (75%)"), "{t}");
        // The geometric mean (cube root of 1000 * 1040 * 980) and its
        // spread, the one of every table: the half-width of its 95%
        // interval, what the verdicts test.
        assert!(lines[2].contains("geo mean ±spread"), "{t}");
        let spread = crate::doc::num::spread(&[1000.0, 1040.0, 980.0]).unwrap();
        assert!(
            lines[3].ends_with(&format!("1,006 {}", crate::doc::num::spread_text(spread))),
            "{t}"
        );
        // A range over 10% of the median is flagged beside the range.
        assert!(lines[4].contains("10 - 13 !"), "{t}");
        assert!(!lines[3].contains('!'), "{t}");
        assert!(t.contains("fewer than 6 runs cannot give 95%"), "{t}");
        assert!(t.contains("max - min exceeds 10% of the median"));
    }

    #[test]
    fn latency_intervals_stay_within_the_values() {
        // Skewed values, where a t interval of the mean goes negative.
        let t = repeats_text(&[fig(&[3.0, 4.0, 150.0, 5.0, 4.5, 4.2], true)], 6, "x");
        let row = t.lines().nth(3).unwrap();
        assert!(row.contains("3 - 150 !"), "{t}");
        assert!(!t.contains("cannot give 95%"), "six runs give 96.9%: {t}");
    }

    /// A run of one job that read `iops` 4 KiB blocks in a second, ended
    /// at time `iops`.
    fn run(iops: u64) -> RunResult {
        let mut job = JobResult::default();
        job.name.push('j');
        job.dirs[Dir::Read as usize] = DirResult {
            total_ios: iops,
            io_bytes: iops * 4096,
            runtime_ns: 1_000_000_000,
            ..DirResult::default()
        };
        let mut r = RunResult::default();
        r.jobs.push(job);
        r.timestamp = iops;
        r
    }

    #[test]
    fn the_json_is_the_median_run_with_the_summary_and_every_run_under_iolab() {
        let runs = [run(1200), run(1000), run(1100)];
        let figs = iolab_stats::repeated::repeat_figures(&runs);
        let j = repeats_json(&figs, "none", &runs, &RenderOpts::default(), false, None);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        // fio's layout at the top: the median run (1100 IOPS, run 3).
        assert_eq!(v["timestamp"], 1100);
        assert_eq!(v["jobs"][0]["read"]["total_ios"], 1100);
        let rep = &v["iolab"]["repeat"];
        assert_eq!(rep["runs"], 3);
        assert_eq!(rep["top_level_run"], 3);
        assert_eq!(rep["caches"], "none");
        let iops = rep["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["metric"] == "iops")
            .unwrap();
        assert_eq!(iops["values"][1], 1000.0);
        assert_eq!(iops["median_ci"]["low"], 1000.0);
        assert_eq!(iops["median_ci"]["high"], 1200.0);
        assert_eq!(iops["noisy"], true);
        let all = v["iolab"]["runs"].as_array().unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0]["jobs"][0]["read"]["total_ios"], 1200);
        assert_eq!(v["iolab"]["interrupted"], false);
    }
}
