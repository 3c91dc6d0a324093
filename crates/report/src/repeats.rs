//! The summary of `iolab run --repeat N`: one line per figure (job,
//! direction, metric) with the median, min-max, the 95% interval of the
//! mean and the spread, `!` where the spread exceeds 10%; and the JSON
//! document that carries the summary and every run's fio JSON.

use std::fmt::Write as _;

use iolab_stats::repeated::RepeatFigure;

/// The normal-output summary after the runs' reports. `caches` says what
/// was done between runs.
pub fn repeats_text(figs: &[RepeatFigure], runs: usize, caches: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\nRepeats: {runs} runs; {caches}");
    let rows: Vec<[String; 7]> = figs
        .iter()
        .map(|f| {
            let s = &f.summary;
            let ci = s
                .ci95
                .map(|(lo, hi)| format!("{} - {}", num(lo), num(hi)))
                .unwrap_or_else(|| "-".into());
            let spread = f
                .spread()
                .map(|p| format!("{:.1}%{}", p * 100.0, if f.noisy { " !" } else { "" }))
                .unwrap_or_else(|| "-".into());
            [
                f.job.clone(),
                f.dir.clone(),
                format!("{} {}", label(&f.metric), f.unit),
                num(s.median),
                format!("{} - {}", num(s.min), num(s.max)),
                ci,
                spread,
            ]
        })
        .collect();
    let head = [
        "job",
        "dir",
        "figure",
        "median",
        "min - max",
        "95% interval",
        "spread",
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
    if figs.iter().any(|f| f.noisy) {
        let _ = writeln!(
            out,
            "  ! the runs differ by more than 10%: the median alone does not describe them"
        );
    }
    out
}

fn label(metric: &str) -> &str {
    match metric {
        "clat_p50" => "clat p50",
        "clat_p99" => "clat p99",
        other => other,
    }
}

/// Three or so significant figures.
fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The JSON document of a repeated run: iolab's summary and every run's
/// fio JSON document (`docs`, already rendered), in run order.
pub fn repeats_json(figs: &[RepeatFigure], caches: &str, docs: &[String]) -> String {
    let summary = serde_json::json!({
        "repeat": docs.len(),
        "caches": caches,
        "figures": figs,
    });
    let mut out = String::from("{\n  \"iolab\" : ");
    out.push_str(&serde_json::to_string(&summary).unwrap_or_else(|_| "null".into()));
    out.push_str(",\n  \"runs\" : [\n");
    for (i, d) in docs.iter().enumerate() {
        out.push_str(d.trim_end());
        out.push_str(if i + 1 < docs.len() { ",\n" } else { "\n" });
    }
    out.push_str("  ]\n}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_stats::Summary;

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
        assert!(
            lines[3].contains("1000") && lines[3].contains("980 - 1040"),
            "{t}"
        );
        assert!(lines[3].ends_with("6.0%"), "{t}");
        assert!(lines[4].ends_with("26.1% !"), "{t}");
        assert!(t.contains("differ by more than 10%"));
    }

    #[test]
    fn the_json_holds_the_summary_and_every_run() {
        let docs = vec![
            "{\n  \"a\" : 1\n}\n".to_string(),
            "{\n  \"a\" : 2\n}\n".to_string(),
        ];
        let j = repeats_json(&[fig(&[1.0, 2.0], true)], "none", &docs);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["iolab"]["repeat"], 2);
        assert_eq!(v["iolab"]["figures"][0]["values"][1], 2.0);
        assert_eq!(v["runs"][1]["a"], 2);
    }
}
