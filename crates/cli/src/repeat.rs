//! The repeat flags of the measuring commands (`--repeat N|auto`,
//! `--repeat-width PCT`, `--repeat-max N`, `--repeat-time TIME`), parsed
//! into a [`RepeatRule`], and the loop that runs a measurement until the
//! rule says stop and records what stopped it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::Args;
use iolab_stats::repeat_rule::{self, DEFAULT_MAX_RUNS, DEFAULT_WIDTH};
use iolab_stats::{RepeatOutcome, RepeatRule, StopReason};

/// The repeat flags, for commands whose flags clap parses.
#[derive(Args, Debug, Clone, Default)]
pub struct RepeatArgs {
    /// Runs of the whole measurement: a count, or `auto` (repeat until
    /// every figure's 95% interval is within --repeat-width, or a budget
    /// is spent)
    #[arg(long, value_name = "N|auto")]
    pub repeat: Option<String>,
    /// With --repeat auto: the interval's half-width, relative to the
    /// geometric mean of the runs (default 5%)
    #[arg(long, value_name = "PCT")]
    pub repeat_width: Option<String>,
    /// With --repeat auto: at most this many runs (default 10)
    #[arg(long, value_name = "N")]
    pub repeat_max: Option<String>,
    /// With --repeat auto: start no run that would end after this much
    /// time (30s, 5m; seconds without a unit)
    #[arg(long, value_name = "TIME")]
    pub repeat_time: Option<String>,
}

impl RepeatArgs {
    pub fn rule(&self) -> Result<RepeatRule, String> {
        parse_rule(
            self.repeat.as_deref(),
            self.repeat_width.as_deref(),
            self.repeat_max.as_deref(),
            self.repeat_time.as_deref(),
        )
    }
}

/// The rule the flags give; an error names the flag and what it expects.
pub fn parse_rule(
    repeat: Option<&str>,
    width: Option<&str>,
    max: Option<&str>,
    time: Option<&str>,
) -> Result<RepeatRule, String> {
    let auto = repeat.map(str::trim) == Some("auto");
    if !auto {
        for (flag, v) in [
            ("--repeat-width", width),
            ("--repeat-max", max),
            ("--repeat-time", time),
        ] {
            if v.is_some() {
                return Err(format!("{flag} goes with --repeat auto"));
            }
        }
        return match repeat.map(|r| r.trim().parse::<u32>()) {
            None => Ok(RepeatRule::Times { runs: 1 }),
            Some(Ok(n)) if n >= 1 => Ok(RepeatRule::Times { runs: n }),
            Some(_) => Err(format!(
                "--repeat `{}`: expected a number of runs, 1 or more, or `auto`",
                repeat.unwrap_or("")
            )),
        };
    }
    let width = match width {
        None => DEFAULT_WIDTH,
        Some(w) => parse_width(w)?,
    };
    let max_runs = match max.map(|m| m.trim().parse::<u32>()) {
        None => DEFAULT_MAX_RUNS,
        Some(Ok(n)) if n >= 1 => n,
        Some(_) => {
            return Err(format!(
                "--repeat-max `{}`: expected a number of runs, 1 or more",
                max.unwrap_or("")
            ))
        }
    };
    let max_time_s = match time {
        None => None,
        Some(t) => match crate::units::duration(t) {
            Ok(d) if !d.is_zero() => Some(d.as_secs_f64()),
            Ok(_) => return Err(format!("--repeat-time `{t}`: expected a time above 0")),
            Err(e) => return Err(format!("--repeat-time `{t}`: {e}")),
        },
    };
    Ok(RepeatRule::Auto {
        width,
        max_runs,
        max_time_s,
    })
}

/// "5%", "2.5%" or "5" (percent either way), above 0 and below 100.
fn parse_width(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let number = t.strip_suffix('%').unwrap_or(t).trim();
    match number.parse::<f64>() {
        Ok(p) if p.is_finite() && p > 0.0 && p < 100.0 => Ok(p / 100.0),
        _ => Err(format!(
            "--repeat-width `{text}`: expected a percentage above 0 and below 100, such as 5%"
        )),
    }
}

/// What one run of a repeated measurement gave.
pub enum Step<T> {
    /// A complete run.
    Done(T),
    /// A run that failed or was interrupted: kept, and the last.
    Last(T, StopReason),
    /// No run could be made (the reason is already said): nothing kept.
    Stop(StopReason),
}

/// Runs `once(i)` (i from 0) until `rule` says stop, judging the figures
/// `figures` finds in the runs so far; the runs and what stopped them.
pub fn repeat<T>(
    rule: &RepeatRule,
    stop: &AtomicBool,
    mut once: impl FnMut(u32) -> Step<T>,
    figures: impl Fn(&[T]) -> Vec<(String, Vec<f64>)>,
) -> (Vec<T>, RepeatOutcome) {
    let start = Instant::now();
    let mut runs: Vec<T> = Vec::new();
    let stopped = loop {
        let n = runs.len() as u32;
        if let Some(why) = repeat_rule::should_stop(rule, n, start.elapsed(), &figures(&runs)) {
            break why;
        }
        if stop.load(Ordering::Relaxed) {
            break StopReason::Interrupted;
        }
        match once(n) {
            Step::Done(r) => runs.push(r),
            Step::Last(r, why) => {
                runs.push(r);
                break why;
            }
            Step::Stop(why) => break why,
        }
    };
    let outcome = repeat_rule::outcome(
        rule,
        runs.len() as u32,
        stopped,
        start.elapsed(),
        &figures(&runs),
    );
    (runs, outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_give_rules() {
        assert_eq!(
            parse_rule(None, None, None, None),
            Ok(RepeatRule::Times { runs: 1 })
        );
        assert_eq!(
            parse_rule(Some("3"), None, None, None),
            Ok(RepeatRule::Times { runs: 3 })
        );
        assert_eq!(
            parse_rule(Some("auto"), None, None, None),
            Ok(RepeatRule::auto())
        );
        assert_eq!(
            parse_rule(Some("auto"), Some("2.5%"), Some("7"), Some("90s")),
            Ok(RepeatRule::Auto {
                width: 0.025,
                max_runs: 7,
                max_time_s: Some(90.0)
            })
        );
        assert_eq!(
            parse_rule(Some("auto"), Some("10"), None, Some("2m")),
            Ok(RepeatRule::Auto {
                width: 0.1,
                max_runs: DEFAULT_MAX_RUNS,
                max_time_s: Some(120.0)
            })
        );
        for (r, w, m, t, says) in [
            (Some("0"), None, None, None, "--repeat `0`"),
            (Some("often"), None, None, None, "or `auto`"),
            (
                None,
                Some("5%"),
                None,
                None,
                "--repeat-width goes with --repeat auto",
            ),
            (Some("3"), None, Some("4"), None, "--repeat-max goes with"),
            (Some("auto"), Some("0%"), None, None, "--repeat-width `0%`"),
            (Some("auto"), Some("150%"), None, None, "below 100"),
            (Some("auto"), None, Some("0"), None, "--repeat-max `0`"),
            (
                Some("auto"),
                None,
                None,
                Some("soon"),
                "--repeat-time `soon`",
            ),
        ] {
            let e = parse_rule(r, w, m, t).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn the_loop_stops_where_the_rule_says_and_keeps_every_run() {
        let stop = AtomicBool::new(false);
        let figs = |runs: &[f64]| vec![("x".to_string(), runs.to_vec())];
        let (runs, o) = repeat(
            &RepeatRule::Times { runs: 4 },
            &stop,
            |i| Step::Done(f64::from(i) + 1.0),
            figs,
        );
        assert_eq!(runs, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!((o.runs, o.stopped), (4, StopReason::Count));
        let (runs, o) = repeat(&RepeatRule::auto(), &stop, |_| Step::Done(8.0), figs);
        assert_eq!(runs.len(), 3);
        assert_eq!(o.stopped, StopReason::Width);
        let (runs, o) = repeat(
            &RepeatRule::auto(),
            &stop,
            |i| {
                if i == 1 {
                    Step::Last(2.0, StopReason::Failed)
                } else {
                    Step::Done(1.0)
                }
            },
            figs,
        );
        assert_eq!((runs.len(), o.stopped), (2, StopReason::Failed));
        stop.store(true, Ordering::Relaxed);
        let (runs, o) = repeat(&RepeatRule::auto(), &stop, |_| Step::Done(1.0), figs);
        assert!(runs.is_empty());
        assert_eq!(o.stopped, StopReason::Interrupted);
    }
}
