//! `iolab quick`'s output: every format but JSON is its document
//! ([`crate::kinds::quick`]) through the one exporter of that format
//! (text with the bar column, Markdown, CSV of every test's numbers,
//! HTML); JSON is the result itself, with its provenance.

use iolab_stats::quick::QuickResult;

use crate::export::{export, DocFormat, Style};

/// Renders a quick result in one format, text as for a file or a pipe.
pub fn render_quick(q: &QuickResult, format: DocFormat) -> String {
    render_quick_styled(q, format, Style::default())
}

/// Renders a quick result in one format, text in `style`.
pub fn render_quick_styled(q: &QuickResult, format: DocFormat, style: Style) -> String {
    match format {
        DocFormat::Json => {
            let mut s = serde_json::to_string_pretty(q).unwrap_or_default();
            s.push('\n');
            s
        }
        f => export(&crate::kinds::quick::document(q), f, style),
    }
}

/// Where the suite ran: the directory, its filesystem and device.
pub fn place(q: &QuickResult) -> String {
    let mut on = q.dir.clone();
    match (q.fs_type.is_empty(), q.device.is_empty()) {
        (false, false) => on.push_str(&format!(" ({} on {})", q.fs_type, q.device)),
        (false, true) => on.push_str(&format!(" ({})", q.fs_type)),
        _ => {}
    }
    on
}

/// How the suite ran: engine, direct or buffered, file size, time.
pub fn how(q: &QuickResult) -> String {
    format!(
        "{}, {} I/O, {} MiB test file, {} per test",
        q.engine,
        if q.direct { "direct" } else { "buffered" },
        q.file_bytes >> 20,
        seconds(q.test_ms)
    )
}

/// Where and how the suite ran, in one line.
pub fn heading(q: &QuickResult) -> String {
    format!("{}: {}", place(q), how(q))
}

fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_stats::quick::QuickTest;

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
    fn the_table_has_a_heading_aligned_rows_a_bar_and_notes() {
        let t = render_quick(&sample(), DocFormat::Text);
        let lines: Vec<&str> = t.lines().collect();
        assert!(!t.contains("±95%") && !t.contains("w1"), "{t}");
        assert_eq!(lines[0], "iolab quick: /data (ext4 on sda)", "{t}");
        assert_eq!(
            lines[1],
            "io_uring, direct I/O, 1024 MiB test file, 5 s per test"
        );
        assert!(lines[3].starts_with("test        op"), "{t}");
        // One number formatter: thousands grouped, four figures; the bar
        // of the fastest test is whole.
        assert!(
            lines[4].contains("1,235") && lines[4].contains("1,177"),
            "{t}"
        );
        assert!(lines[4].contains(&crate::export::bar(1.0)), "{t}");
        assert!(lines[4].ends_with("6,500    12,100"), "{t}");
        assert!(lines[5].contains("failed"), "{t}");
        assert!(t.contains("note: a note") && t.contains("note: RND4K Q1T1 write+fsync: ENOSPC"));
        // Numbers align right under their heading.
        let col = lines[3].find("MB/s").unwrap() + 4;
        assert_eq!(&lines[4][col - 5..col], "1,235");
    }

    #[test]
    fn csv_and_json_carry_every_test() {
        let q = sample();
        let csv = render_quick(&q, DocFormat::Csv);
        assert_eq!(csv.lines().count(), 3, "{csv}");
        assert_eq!(
            csv.lines().next().unwrap(),
            "test,op,mb_per_s,iops,p50_ns,p99_ns,error,runs,iops_low,iops_high,warnings"
        );
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .starts_with("SEQ1M Q8T1,read,1234.56789,1177.4,6500000,12100000,"),
            "{csv}"
        );
        assert!(csv.contains(",ENOSPC,"), "{csv}");
        let back: QuickResult = serde_json::from_str(&render_quick(&q, DocFormat::Json)).unwrap();
        assert_eq!(back, q);
        let md = render_quick(&q, DocFormat::Markdown);
        assert!(
            md.starts_with("# iolab quick: /data (ext4 on sda)\n"),
            "{md}"
        );
        assert!(
            md.contains("| SEQ1M Q8T1 | read | 1,235 | 1,177 | 6,500 | 12,100 |"),
            "{md}"
        );
    }

    #[test]
    fn warned_tests_are_marked_and_repeats_show_their_spread() {
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
        let t = render_quick(&q, DocFormat::Text);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[3].contains("IOPS") && lines[3].contains("±95%"),
            "{t}"
        );
        assert!(
            lines[4].contains("1,235 w1") && lines[4].contains("1,177 w1"),
            "{t}"
        );
        assert!(lines[4].contains("±1.9%"), "1200 / 1177.4: {t}");
        assert!(!lines[5].contains("w1"), "{t}");
        assert!(
            t.contains("w1 page-cache: served from memory (at SEQ1M Q8T1 read)"),
            "{t}"
        );
        assert!(
            t.contains("note: repeats: 3 runs, stopped: the runs asked for were made"),
            "{t}"
        );
        assert!(t.contains("geometric means of the runs"), "{t}");
        let csv = render_quick(&q, DocFormat::Csv);
        let row = csv.lines().nth(1).unwrap();
        assert!(row.ends_with(",1100,1200,page-cache"), "{csv}");
        let md = render_quick(&q, DocFormat::Markdown);
        assert!(md.contains("|---|---|---:|---:|---:|---:|---:|"), "{md}");
        assert!(md.contains("- **w1** page-cache"), "{md}");
    }
}
