//! The warnings of each kind of result as the store keeps them
//! ([`Flag`]s: code, where, text), so that history, export and diff read
//! them without knowing each kind's result layout.

use iolab_stats::quick::QuickResult;
use iolab_stats::sweep::SweepResult;
use iolab_stats::{Comparison, RunResult};

use crate::Flag;

/// Every job's warnings, at the job's name.
pub fn run_flags(r: &RunResult) -> Vec<Flag> {
    let mut out = Vec::new();
    for j in &r.jobs {
        for w in &j.warnings {
            push(&mut out, Flag::new(w.code.clone(), &j.name, &w.text));
        }
    }
    out
}

/// The warnings of the runs of a repeated job set, each (code, job) once.
pub fn runs_flags(runs: &[RunResult]) -> Vec<Flag> {
    let mut out = Vec::new();
    for f in runs.iter().flat_map(run_flags) {
        push(&mut out, f);
    }
    out
}

/// Every test's warnings, at "test op" ("RND4K Q32T1 read").
pub fn quick_flags(q: &QuickResult) -> Vec<Flag> {
    let mut out = Vec::new();
    for t in &q.tests {
        for w in &t.warnings {
            push(
                &mut out,
                Flag::new(w.code.clone(), format!("{} {}", t.name, t.op), &w.text),
            );
        }
    }
    out
}

/// Every point's warnings, at the point ("bs=4k rw=read").
pub fn sweep_flags(s: &SweepResult) -> Vec<Flag> {
    let mut out = Vec::new();
    for p in &s.points {
        let at = s
            .axes
            .iter()
            .zip(&p.values)
            .map(|(a, v)| format!("{}={v}", a.name))
            .collect::<Vec<_>>()
            .join(" ");
        for w in &p.warnings {
            push(&mut out, Flag::new(w.code.clone(), &at, &w.text));
        }
    }
    out
}

/// A comparison's warnings, at "target workload".
pub fn comparison_flags(c: &Comparison) -> Vec<Flag> {
    let mut out = Vec::new();
    for w in &c.warnings {
        push(
            &mut out,
            Flag::new(w.code.clone(), format!("{} {}", w.target, w.rows), &w.text),
        );
    }
    out
}

/// Adds `f` unless the same code was already raised at the same place.
fn push(out: &mut Vec<Flag>, f: Flag) {
    if !out.iter().any(|g| g.code == f.code && g.at == f.at) {
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_stats::quick::QuickTest;
    use iolab_stats::{JobResult, JobWarning};

    fn warning(code: &str) -> JobWarning {
        JobWarning {
            code: code.into(),
            text: format!("{code} text"),
        }
    }

    #[test]
    fn each_kind_names_where_its_warnings_were_raised() {
        let job = |name: &str, codes: &[&str]| JobResult {
            name: name.into(),
            warnings: codes.iter().map(|c| warning(c)).collect(),
            ..JobResult::default()
        };
        let run = RunResult {
            jobs: vec![job("a", &["page-cache", "short-run"]), job("b", &[])],
            ..RunResult::default()
        };
        let f = run_flags(&run);
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].code.as_str(), f[0].at.as_str()), ("page-cache", "a"));
        assert_eq!(f[0].text, "page-cache text");
        // The same warning in every run of a repeat is listed once.
        assert_eq!(runs_flags(&[run.clone(), run]).len(), 2);

        let q = QuickResult {
            tests: vec![QuickTest {
                name: "SEQ1M Q8T1".into(),
                op: "read".into(),
                warnings: vec![warning("page-cache")],
                ..QuickTest::default()
            }],
            ..QuickResult::default()
        };
        assert_eq!(quick_flags(&q)[0].at, "SEQ1M Q8T1 read");
        assert_eq!(crate::flag_codes(&quick_flags(&q)), ["page-cache"]);
    }
}
