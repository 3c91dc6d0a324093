//! The verdicts of a comparison table: for every row with values, each
//! target against the baseline, and the row's leader against every other
//! target, by the method of [`crate::verdict`] (the geometric mean of each
//! cell's runs, Welch's t-test on their logarithms). The tests of one
//! workload's rows (its MB/s, IOPS and latency percentiles, keyed
//! `workload.dir.*`) form a family corrected together by Holm; a fixed row
//! (mkfs time, mount time, ...) is a family of its own. A row's best mark
//! goes to its leader only when the leader is better than every other
//! target beyond the noise.

use serde::{Deserialize, Serialize};

use crate::verdict::{decide, ratio_test, RatioTest, Verdict};
use crate::{Better, Comparison, Method, DEFAULT_ALPHA};

/// One pair of cells of a row: the test of column `b` against column `a`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairVerdict {
    pub key: String,
    pub a: usize,
    pub b: usize,
    /// None when a cell holds a value no ratio can take.
    pub test: Option<RatioTest>,
    pub verdict: Verdict,
}

/// Every verdict of a table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ComparisonVerdicts {
    pub method: Method,
    pub alpha: f64,
    pub pairs: Vec<PairVerdict>,
    /// Per row key, the columns marked best (at most one).
    pub best: Vec<(String, Vec<usize>)>,
}

/// The family a row's tests are corrected in: its key up to the last dot
/// (`seqwrite-1m.write` for `seqwrite-1m.write.mb_s`), or the key itself.
pub fn family(key: &str) -> &str {
    key.rsplit_once('.').map_or(key, |(f, _)| f)
}

impl ComparisonVerdicts {
    fn pair(&self, key: &str, x: usize, y: usize) -> Option<&PairVerdict> {
        self.pairs
            .iter()
            .find(|p| p.key == key && ((p.a, p.b) == (x, y) || (p.a, p.b) == (y, x)))
    }

    /// Column `i` against the baseline column `base`: b is `i`.
    pub fn against(&self, key: &str, base: usize, i: usize) -> Option<&PairVerdict> {
        self.pairs
            .iter()
            .find(|p| p.key == key && p.a == base && p.b == i)
    }

    /// The columns marked best in row `key`.
    pub fn best(&self, key: &str) -> &[usize] {
        self.best
            .iter()
            .find(|(k, _)| k == key)
            .map_or(&[], |(_, v)| v.as_slice())
    }

    pub fn is_best(&self, key: &str, i: usize) -> bool {
        self.best(key).contains(&i)
    }
}

impl Comparison {
    /// The statistic of a cell's runs that the table shows and the tests
    /// compare.
    pub fn center(&self, key: &str, i: usize) -> Option<f64> {
        let cell = self.targets.get(i)?.value(key)?;
        DEFAULT_METHOD.statistic().of(&cell.runs)
    }

    /// Every verdict of the table at the default level.
    pub fn verdicts(&self) -> ComparisonVerdicts {
        let method = DEFAULT_METHOD;
        let alpha = DEFAULT_ALPHA;
        let base = self
            .baseline_index()
            .filter(|&b| self.targets[b].skipped.is_none());
        let mut pairs: Vec<PairVerdict> = Vec::new();
        let mut leaders: Vec<(String, usize, Vec<usize>)> = Vec::new();
        for m in &self.metrics {
            // The columns that have a value of this row.
            let have: Vec<usize> = (0..self.targets.len())
                .filter(|&i| self.targets[i].skipped.is_none())
                .filter(|&i| self.center(&m.key, i).is_some())
                .collect();
            let mut want: Vec<(usize, usize)> = Vec::new();
            if let Some(b) = base.filter(|b| have.contains(b)) {
                want.extend(have.iter().filter(|&&i| i != b).map(|&i| (b, i)));
            }
            // The leader among the targets that compete (measured: not
            // failed), against every other that competes.
            let competing: Vec<usize> = have
                .iter()
                .copied()
                .filter(|&i| self.targets[i].measured())
                .collect();
            if m.better != Better::Neither && competing.len() >= 2 {
                let key = |i: &usize| self.center(&m.key, *i).unwrap_or(f64::NAN);
                let top = competing.iter().copied().reduce(|x, y| {
                    let better = match m.better {
                        Better::Higher => key(&y) > key(&x),
                        _ => key(&y) < key(&x),
                    };
                    if better {
                        y
                    } else {
                        x
                    }
                });
                if let Some(top) = top {
                    let others: Vec<usize> =
                        competing.iter().copied().filter(|&j| j != top).collect();
                    for &j in &others {
                        if !want.contains(&(j, top)) && !want.contains(&(top, j)) {
                            want.push((j, top));
                        }
                    }
                    leaders.push((m.key.clone(), top, others));
                }
            }
            for (a, b) in want {
                let runs = |i: usize| {
                    self.targets[i]
                        .value(&m.key)
                        .map(|c| c.runs.clone())
                        .unwrap_or_default()
                };
                pairs.push(PairVerdict {
                    key: m.key.clone(),
                    a,
                    b,
                    test: ratio_test(&runs(a), &runs(b), method, alpha),
                    verdict: Verdict::NoTest,
                });
            }
        }
        // Holm within each family.
        let mut families: Vec<&str> = self.metrics.iter().map(|m| family(&m.key)).collect();
        families.dedup();
        for f in families {
            let idx: Vec<usize> = (0..pairs.len())
                .filter(|&k| family(&pairs[k].key) == f)
                .collect();
            let tests: Vec<Option<&RatioTest>> =
                idx.iter().map(|&k| pairs[k].test.as_ref()).collect();
            let verdicts = decide(&tests, alpha);
            for (k, v) in idx.into_iter().zip(verdicts) {
                pairs[k].verdict = v;
            }
        }
        let mut out = ComparisonVerdicts {
            method,
            alpha,
            pairs,
            best: Vec::new(),
        };
        for (key, top, others) in leaders {
            let better = self.metric(&key).map_or(Better::Neither, |m| m.better);
            let beats_all = others.iter().all(|&j| {
                out.pair(&key, j, top).is_some_and(|p| {
                    let top_is_b = p.b == top;
                    p.verdict.b_is_better(better) == Some(top_is_b)
                })
            });
            if beats_all {
                out.best.push((key, vec![top]));
            }
        }
        out
    }
}

/// The method a comparison table uses.
pub const DEFAULT_METHOD: Method = Method::Welch;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Metric, TargetColumn};

    fn table(rows: &[(&str, Better, &[&[f64]])]) -> Comparison {
        let mut c = Comparison {
            baseline: Some("t0".into()),
            repeat: 3,
            ..Default::default()
        };
        let ncol = rows.iter().map(|r| r.2.len()).max().unwrap_or(0);
        for i in 0..ncol {
            c.targets.push(TargetColumn {
                label: format!("t{i}"),
                ..Default::default()
            });
        }
        for (key, better, cols) in rows {
            c.add_metric(Metric {
                key: (*key).into(),
                label: (*key).into(),
                unit: "MB/s".into(),
                better: *better,
            });
            for (i, runs) in cols.iter().enumerate() {
                for v in *runs {
                    c.targets[i].push(key, *v);
                }
            }
        }
        c
    }

    #[test]
    fn noise_gets_no_best_and_only_same_verdicts() {
        let c = table(&[
            (
                "w.read.mb_s",
                Better::Higher,
                &[&[100.0, 52.0, 98.0], &[50.0, 101.0, 60.0]],
            ),
            (
                "w.read.clat_p99",
                Better::Lower,
                &[&[80.0, 90.0, 85.0], &[88.0, 79.0, 86.0]],
            ),
        ]);
        let v = c.verdicts();
        assert!(v.best("w.read.mb_s").is_empty(), "{v:?}");
        assert!(v.best("w.read.clat_p99").is_empty(), "{v:?}");
        for key in ["w.read.mb_s", "w.read.clat_p99"] {
            let p = v.against(key, 0, 1).unwrap();
            assert!(matches!(p.verdict, Verdict::Same { .. }), "{p:?}");
        }
    }

    #[test]
    fn a_clear_leader_is_marked_and_its_ratio_carries_the_verdict() {
        let c = table(&[(
            "w.write.mb_s",
            Better::Higher,
            &[
                &[100.0, 102.0, 98.0],
                &[200.0, 204.0, 196.0],
                &[101.0, 99.0, 103.0],
            ],
        )]);
        let v = c.verdicts();
        assert_eq!(v.best("w.write.mb_s"), [1]);
        let p = v.against("w.write.mb_s", 0, 1).unwrap();
        assert_eq!(p.verdict.mark(Better::Higher), "+");
        assert!((p.test.as_ref().unwrap().ratio.unwrap() - 2.0).abs() < 0.01);
        let p = v.against("w.write.mb_s", 0, 2).unwrap();
        assert_eq!(p.verdict.mark(Better::Higher), "≈");
        assert!(c.is_best("w.write.mb_s", 1));
    }

    #[test]
    fn a_leader_tied_with_another_is_not_marked() {
        // t1 and t2 lead together, both far above t0: neither is best.
        let c = table(&[(
            "w.write.mb_s",
            Better::Higher,
            &[
                &[100.0, 102.0, 98.0],
                &[200.0, 204.0, 196.0],
                &[201.0, 199.0, 203.0],
            ],
        )]);
        let v = c.verdicts();
        assert!(v.best("w.write.mb_s").is_empty(), "{v:?}");
        assert_eq!(
            v.against("w.write.mb_s", 0, 2)
                .unwrap()
                .verdict
                .mark(Better::Higher),
            "+"
        );
    }

    #[test]
    fn single_runs_mark_nothing() {
        let c = table(&[("mkfs_s", Better::Lower, &[&[0.5], &[0.25]])]);
        let v = c.verdicts();
        assert!(v.best("mkfs_s").is_empty());
        let p = v.against("mkfs_s", 0, 1).unwrap();
        assert_eq!(p.verdict, Verdict::OneRun);
        assert_eq!(p.verdict.mark(Better::Lower), "?");
        assert_eq!(c.ratio("mkfs_s", 1), Some(0.5));
    }

    #[test]
    fn a_workload_family_is_corrected_together() {
        // One difference, p just under 0.05 alone, among four rows of one
        // workload: Holm takes it back. In a family of its own it stands.
        let weak: &[&[f64]] = &[&[100.0, 104.0, 96.0], &[112.0, 113.0, 111.0]];
        let same: &[&[f64]] = &[&[100.0, 104.0, 96.0], &[101.0, 97.0, 103.0]];
        let alone = table(&[("w.read.mb_s", Better::Higher, weak)]);
        assert_eq!(alone.verdicts().best("w.read.mb_s"), [1]);
        let four = table(&[
            ("w.read.mb_s", Better::Higher, weak),
            ("w.read.iops", Better::Higher, same),
            ("w.read.clat_p50", Better::Lower, same),
            ("w.read.clat_p99", Better::Lower, same),
        ]);
        assert!(four.verdicts().best("w.read.mb_s").is_empty());
        let apart = table(&[
            ("w.read.mb_s", Better::Higher, weak),
            ("x.read.iops", Better::Higher, same),
        ]);
        assert_eq!(apart.verdicts().best("w.read.mb_s"), [1]);
        assert_eq!(family("w.read.mb_s"), "w.read");
        assert_eq!(family("mkfs_s"), "mkfs_s");
    }
}
