//! The table of `iolab quick`: one line per test with MB/s (decimal, as
//! disk suites print it), IOPS and the p50 and p99 completion latency,
//! under a heading that says where it ran and how (engine, direct or
//! buffered, test file size), and the notes the reader needs. Also
//! Markdown, CSV and JSON.

use std::fmt::Write as _;

use iolab_stats::quick::{QuickResult, QuickTest};

use crate::compare::CompareFormat;

/// Renders a quick result in one format.
pub fn render_quick(q: &QuickResult, format: CompareFormat) -> String {
    match format {
        CompareFormat::Table => table(q, false),
        CompareFormat::Markdown => table(q, true),
        CompareFormat::Csv => csv(q),
        CompareFormat::Json => {
            let mut s = serde_json::to_string_pretty(q).unwrap_or_default();
            s.push('\n');
            s
        }
        CompareFormat::Html => crate::export::html_of(&crate::kinds::quick::document(q)),
    }
}

/// Where and how the suite ran, in one line.
pub fn heading(q: &QuickResult) -> String {
    let mut on = q.dir.clone();
    match (q.fs_type.is_empty(), q.device.is_empty()) {
        (false, false) => on.push_str(&format!(" ({} on {})", q.fs_type, q.device)),
        (false, true) => on.push_str(&format!(" ({})", q.fs_type)),
        _ => {}
    }
    format!(
        "{on}: {}, {} I/O, {} MiB test file, {} per test",
        q.engine,
        if q.direct { "direct" } else { "buffered" },
        q.file_bytes >> 20,
        seconds(q.test_ms)
    )
}

fn seconds(ms: u64) -> String {
    if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// A latency with a unit that keeps it short: `85 us`, `1.25 ms`.
pub fn latency(ns: u64) -> String {
    match ns {
        0 => "-".to_string(),
        n if n < 10_000 => format!("{:.2} us", n as f64 / 1e3),
        n if n < 1_000_000 => format!("{:.0} us", n as f64 / 1e3),
        n if n < 10_000_000 => format!("{:.2} ms", n as f64 / 1e6),
        n => format!("{:.1} ms", n as f64 / 1e6),
    }
}

/// The warning codes of the suite, numbered from 1 in the order the
/// tests raised them: cells show `wN`.
fn warning_codes(q: &QuickResult) -> Vec<&str> {
    let mut codes: Vec<&str> = Vec::new();
    for w in q.tests.iter().flat_map(|t| &t.warnings) {
        if !codes.contains(&w.code.as_str()) {
            codes.push(&w.code);
        }
    }
    codes
}

/// A figure cell with the `wN` markers of its test's warnings.
fn marked(text: String, codes: &[&str], t: &QuickTest) -> String {
    if text == "-" || t.warnings.is_empty() {
        return text;
    }
    let mut numbers: Vec<usize> = t
        .warnings
        .iter()
        .filter_map(|w| codes.iter().position(|c| *c == w.code))
        .collect();
    numbers.sort_unstable();
    let marks: Vec<String> = numbers.iter().map(|n| format!("w{}", n + 1)).collect();
    format!("{text} {}", marks.join(","))
}

/// The IOPS interval of a repeated test as ± percent of its geometric
/// mean (the wider side): `±2.1%`.
fn spread(t: &QuickTest) -> String {
    match t.iops_interval {
        Some((_, hi)) if t.iops > 0.0 => {
            format!("±{}", iolab_stats::repeat_rule::percent(hi / t.iops - 1.0))
        }
        _ => "-".to_string(),
    }
}

fn cells(t: &QuickTest, codes: &[&str], repeated: bool) -> Vec<String> {
    let (mb, iops) = if t.failed() {
        ("failed".to_string(), "-".to_string())
    } else {
        (
            if t.bw_bytes > 0.0 {
                format!("{:.1}", t.bw_bytes / 1e6)
            } else {
                "-".to_string()
            },
            format!("{:.0}", t.iops),
        )
    };
    let mut row = vec![
        t.name.clone(),
        t.op.clone(),
        marked(mb, codes, t),
        marked(iops, codes, t),
    ];
    if repeated {
        row.push(spread(t));
    }
    row.push(marked(latency(t.p50_ns), codes, t));
    row.push(marked(latency(t.p99_ns), codes, t));
    row
}

fn head(repeated: bool) -> Vec<String> {
    let mut h = vec!["Test", "Op", "MB/s", "IOPS"];
    if repeated {
        h.push("±95%");
    }
    h.extend(["p50", "p99"]);
    h.into_iter().map(String::from).collect()
}

fn table(q: &QuickResult, markdown: bool) -> String {
    let repeated = q.repeat.is_some();
    let codes = warning_codes(q);
    let head = head(repeated);
    let rows: Vec<Vec<String>> = q.tests.iter().map(|t| cells(t, &codes, repeated)).collect();
    let mut out = String::new();
    if markdown {
        let _ = writeln!(out, "**iolab quick** {}\n", heading(q));
        let _ = writeln!(out, "| {} |", head.join(" | "));
        let align: Vec<&str> = (0..head.len())
            .map(|i| if i < 2 { "---" } else { "---:" })
            .collect();
        let _ = writeln!(out, "|{}|", align.join("|"));
        for r in &rows {
            let _ = writeln!(out, "| {} |", r.join(" | "));
        }
    } else {
        let _ = writeln!(out, "iolab quick: {}\n", heading(q));
        // A bar beside MB/s, scaled to the fastest test: the picture of
        // the grid in the terminal.
        let top = q
            .tests
            .iter()
            .filter(|t| !t.failed())
            .map(|t| t.bw_bytes)
            .fold(0.0, f64::max);
        let mut head = head.clone();
        head.insert(3, String::new());
        let rows: Vec<Vec<String>> = rows
            .iter()
            .zip(&q.tests)
            .map(|(r, t)| {
                let mut r = r.clone();
                let b = if top > 0.0 && t.bw_bytes > 0.0 && !t.failed() {
                    crate::export::bar(t.bw_bytes / top)
                } else {
                    String::new()
                };
                r.insert(3, b);
                r
            })
            .collect();
        let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |c: &[String]| {
            let mut s = String::new();
            for (i, cell) in c.iter().enumerate() {
                let pad = w[i].saturating_sub(cell.chars().count());
                if i > 0 {
                    s.push_str("  ");
                }
                if i < 2 || i == 3 {
                    s.push_str(cell);
                    s.push_str(&" ".repeat(pad));
                } else {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(cell);
                }
            }
            s
        };
        let _ = writeln!(out, "{}", line(&head).trim_end());
        for r in &rows {
            let _ = writeln!(out, "{}", line(r).trim_end());
        }
    }
    let mut notes: Vec<String> = Vec::new();
    if let Some(r) = &q.repeat {
        notes.push(format!("repeats: {}", r.describe()));
        notes.push(
            "repeats: MB/s and IOPS are the geometric means of the runs (what diff's verdicts \
             test), latencies their medians; ±95%: the 95% interval of the IOPS' geometric mean"
                .to_string(),
        );
    }
    notes.extend(q.notes.iter().cloned());
    if q.tests.iter().any(|t| t.op == "write+fsync") {
        notes.push(
            "write+fsync: buffered 4k writes, each followed by fsync; its latency is the fsync's"
                .to_string(),
        );
    }
    for t in &q.tests {
        if let Some(e) = &t.error {
            notes.push(format!("{} {}: {e}", t.name, t.op));
        }
    }
    if q.interrupted {
        notes.push("interrupted: the tests not listed did not run".to_string());
    }
    let mut legend: Vec<String> = Vec::new();
    for (n, code) in codes.iter().enumerate() {
        let at: Vec<String> = q
            .tests
            .iter()
            .filter(|t| t.warnings.iter().any(|w| w.code == *code))
            .map(|t| format!("{} {}", t.name, t.op))
            .collect();
        legend.push(format!("w{} {code}: {}", n + 1, at.join(", ")));
    }
    if !codes.is_empty() {
        legend.push(
            "wN: iolab warns that the number may not measure what it seems to; the full texts \
             are in --output-format json"
                .to_string(),
        );
    }
    if !notes.is_empty() || !legend.is_empty() {
        out.push('\n');
        let bullet = if markdown { "- " } else { "" };
        for l in legend {
            let _ = writeln!(out, "{bullet}{l}");
        }
        for n in notes {
            let _ = writeln!(out, "{bullet}note: {n}");
        }
    }
    out
}

fn csv(q: &QuickResult) -> String {
    let mut out = String::from(
        "test,op,mb_per_s,iops,p50_ns,p99_ns,error,runs,iops_low,iops_high,warnings\n",
    );
    for (i, t) in q.tests.iter().enumerate() {
        let err = t.error.as_deref().unwrap_or("").replace('"', "\"\"");
        let (lo, hi) = match t.iops_interval {
            Some((lo, hi)) => (format!("{lo:.1}"), format!("{hi:.1}")),
            None => (String::new(), String::new()),
        };
        let codes: Vec<&str> = t.warnings.iter().map(|w| w.code.as_str()).collect();
        let _ = writeln!(
            out,
            "{},{},{:.3},{:.1},{},{},\"{err}\",{},{lo},{hi},{}",
            t.name,
            t.op,
            t.bw_bytes / 1e6,
            t.iops,
            t.p50_ns,
            t.p99_ns,
            q.runs_of(i, |u| u.iops).len(),
            codes.join(";")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> QuickResult {
        QuickResult {
            dir: "/data".into(),
            fs_type: "ext4".into(),
            device: "sda".into(),
            engine: "io_uring".into(),
            direct: true,
            file_bytes: 1 << 30,
            test_ms: 5000,
            notes: vec!["a note".into()],
            tests: vec![
                QuickTest {
                    name: "SEQ1M Q8T1".into(),
                    op: "read".into(),
                    bw_bytes: 1_234_567_890.0,
                    iops: 1177.4,
                    p50_ns: 6_500_000,
                    p99_ns: 12_100_000,
                    ..Default::default()
                },
                QuickTest {
                    name: "RND4K Q1T1".into(),
                    op: "write+fsync".into(),
                    error: Some("ENOSPC".into()),
                    ..Default::default()
                },
            ],
            interrupted: false,
            ..QuickResult::default()
        }
    }

    #[test]
    fn the_table_has_a_heading_aligned_rows_and_notes() {
        let t = render_quick(&sample(), CompareFormat::Table);
        let lines: Vec<&str> = t.lines().collect();
        assert!(!t.contains("±95%") && !t.contains("w1"), "{t}");
        assert_eq!(
            lines[0],
            "iolab quick: /data (ext4 on sda): io_uring, direct I/O, 1024 MiB test file, 5 s per test"
        );
        assert!(lines[2].starts_with("Test        Op"), "{t}");
        assert!(
            lines[3].contains("1234.6") && lines[3].contains("1177"),
            "{t}"
        );
        assert!(lines[3].ends_with("6.50 ms  12.1 ms"), "{t}");
        assert!(lines[4].contains("failed"), "{t}");
        assert!(t.contains("note: a note") && t.contains("note: RND4K Q1T1 write+fsync: ENOSPC"));
        // Columns line up: every row as wide as the header's MB/s column.
        let col = lines[2].find("MB/s").unwrap() + 4;
        assert_eq!(&lines[3][col - 6..col], "1234.6");
    }

    #[test]
    fn csv_and_json_carry_every_test() {
        let q = sample();
        let csv = render_quick(&q, CompareFormat::Csv);
        assert_eq!(csv.lines().count(), 3);
        assert!(csv
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("SEQ1M Q8T1,read,1234.568,1177.4,"));
        let back: QuickResult =
            serde_json::from_str(&render_quick(&q, CompareFormat::Json)).unwrap();
        assert_eq!(back, q);
        let md = render_quick(&q, CompareFormat::Markdown);
        assert!(
            md.contains("| SEQ1M Q8T1 | read | 1234.6 | 1177 | 6.50 ms | 12.1 ms |"),
            "{md}"
        );
    }

    #[test]
    fn warned_tests_are_marked_and_repeats_show_their_interval() {
        let mut q = sample();
        q.tests[0].warnings.push(iolab_stats::JobWarning {
            code: "page-cache".into(),
            text: "served from memory".into(),
        });
        q.tests[0].iops_interval = Some((1100.0, 1200.0));
        q.repeat = Some(iolab_stats::repeat_rule::outcome(
            &iolab_stats::RepeatRule::Times { runs: 3 },
            3,
            iolab_stats::StopReason::Count,
            std::time::Duration::from_secs(1),
            &[],
        ));
        let t = render_quick(&q, CompareFormat::Table);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[2].contains("IOPS") && lines[2].contains("±95%"),
            "{t}"
        );
        assert!(
            lines[3].contains("1234.6 w1") && lines[3].contains("1177 w1"),
            "{t}"
        );
        assert!(lines[3].contains("±1.9%"), "1200 / 1177.4: {t}");
        assert!(!lines[4].contains("w1"), "{t}");
        assert!(t.contains("w1 page-cache: SEQ1M Q8T1 read"), "{t}");
        assert!(
            t.contains("note: repeats: 3 runs, stopped: the runs asked for were made"),
            "{t}"
        );
        assert!(t.contains("geometric means of the runs"), "{t}");
        let csv = render_quick(&q, CompareFormat::Csv);
        let row = csv.lines().nth(1).unwrap();
        assert!(row.ends_with(",1100.0,1200.0,page-cache"), "{csv}");
        let md = render_quick(&q, CompareFormat::Markdown);
        assert!(md.contains("|---|---|---:|---:|---:|---:|---:|"), "{md}");
        assert!(md.contains("- w1 page-cache"), "{md}");
    }

    #[test]
    fn latencies_keep_three_figures() {
        assert_eq!(latency(0), "-");
        assert_eq!(latency(8_500), "8.50 us");
        assert_eq!(latency(85_000), "85 us");
        assert_eq!(latency(1_250_000), "1.25 ms");
        assert_eq!(latency(125_000_000), "125.0 ms");
    }
}
