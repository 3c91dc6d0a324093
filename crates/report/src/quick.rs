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

fn cells(t: &QuickTest) -> [String; 6] {
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
    [
        t.name.clone(),
        t.op.clone(),
        mb,
        iops,
        latency(t.p50_ns),
        latency(t.p99_ns),
    ]
}

const HEAD: [&str; 6] = ["Test", "Op", "MB/s", "IOPS", "p50", "p99"];

fn table(q: &QuickResult, markdown: bool) -> String {
    let rows: Vec<[String; 6]> = q.tests.iter().map(cells).collect();
    let mut out = String::new();
    if markdown {
        let _ = writeln!(out, "**iolab quick** {}\n", heading(q));
        let _ = writeln!(out, "| {} |", HEAD.join(" | "));
        let _ = writeln!(out, "|---|---|---:|---:|---:|---:|");
        for r in &rows {
            let _ = writeln!(out, "| {} |", r.join(" | "));
        }
    } else {
        let _ = writeln!(out, "iolab quick: {}\n", heading(q));
        let mut w = HEAD.map(str::len);
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.len());
            }
        }
        let line = |c: &[String; 6]| {
            format!(
                "{:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}  {:>w4$}  {:>w5$}",
                c[0],
                c[1],
                c[2],
                c[3],
                c[4],
                c[5],
                w0 = w[0],
                w1 = w[1],
                w2 = w[2],
                w3 = w[3],
                w4 = w[4],
                w5 = w[5]
            )
        };
        let _ = writeln!(out, "{}", line(&HEAD.map(String::from)).trim_end());
        for r in &rows {
            let _ = writeln!(out, "{}", line(r).trim_end());
        }
    }
    let mut notes: Vec<String> = q.notes.clone();
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
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            let _ = writeln!(out, "{}note: {n}", if markdown { "- " } else { "" });
        }
    }
    out
}

fn csv(q: &QuickResult) -> String {
    let mut out = String::from("test,op,mb_per_s,iops,p50_ns,p99_ns,error\n");
    for t in &q.tests {
        let err = t.error.as_deref().unwrap_or("").replace('"', "\"\"");
        let _ = writeln!(
            out,
            "{},{},{:.3},{:.1},{},{},\"{err}\"",
            t.name,
            t.op,
            t.bw_bytes / 1e6,
            t.iops,
            t.p50_ns,
            t.p99_ns
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
        }
    }

    #[test]
    fn the_table_has_a_heading_aligned_rows_and_notes() {
        let t = render_quick(&sample(), CompareFormat::Table);
        let lines: Vec<&str> = t.lines().collect();
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
    fn latencies_keep_three_figures() {
        assert_eq!(latency(0), "-");
        assert_eq!(latency(8_500), "8.50 us");
        assert_eq!(latency(85_000), "85 us");
        assert_eq!(latency(1_250_000), "1.25 ms");
        assert_eq!(latency(125_000_000), "125.0 ms");
    }
}
