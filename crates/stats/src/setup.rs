//! `JobSetup`: the facts about how a job was set up that travel with its
//! results, because reports echo them (fio's job header line, its
//! "latency" line, which percentiles are printed and how) and the store
//! files results under them. The core fills it from the plan; renderers
//! only read it. Plain types only: this crate knows nothing of the job
//! language.

use serde::{Deserialize, Serialize};

/// fio's default `percentile_list`, ascending.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// How a job's directions are reported (fio's `unified_rw_reporting`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnifiedRw {
    /// Reads, writes and trims apart.
    #[default]
    None,
    /// The three summed as one direction, "mixed", instead.
    Mixed,
    /// Each direction, then their sum as "mixed".
    Both,
}

impl UnifiedRw {
    /// Whether the report has a "mixed" direction.
    pub fn mixed(self) -> bool {
        self != UnifiedRw::None
    }
}

/// How one job (or, with group_reporting, the group's first job) was set up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JobSetup {
    /// The `rw=` value as fio prints it: "read", "randrw", "randwrite", ...
    pub rw: String,
    /// Smallest and largest block size per direction (read, write, trim),
    /// bytes.
    pub bs: [(u64, u64); 3],
    /// The engine's name as fio prints it ("psync", "libaio", ...).
    pub ioengine: String,
    pub iodepth: u32,
    /// The percentiles to report, in (0, 100]. Renderers print them sorted.
    pub percentile_list: Vec<f64>,
    /// Decimals of the percentile names in fio's normal output. fio counts
    /// them in the option text (`99.50` has 2), which a float cannot tell;
    /// 2 for the default list.
    pub percentile_precision: u32,
    /// Which latency series get percentiles (fio's `clat_percentiles`,
    /// `lat_percentiles`, `slat_percentiles`).
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    /// `continue_on_error` is set: reports show the error count and the
    /// first error (fio's "errors" line, `total_err` and `first_error`).
    pub continue_on_error: bool,
    /// `latency_target` in nanoseconds, 0 when unset.
    pub latency_target_ns: u64,
    /// `latency_window` in microseconds, 0 when unset.
    pub latency_window_us: u64,
    /// `latency_percentile`, 100 by default.
    pub latency_percentile: f64,
    /// `unified_rw_reporting`.
    pub unified_rw: UnifiedRw,
}

impl Default for JobSetup {
    /// fio's defaults: rw=read, bs=4k, psync, iodepth=1, clat percentiles
    /// at the default list.
    fn default() -> Self {
        Self {
            rw: "read".to_string(),
            bs: [(4096, 4096); 3],
            ioengine: "psync".to_string(),
            iodepth: 1,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            percentile_precision: 2,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            continue_on_error: false,
            latency_target_ns: 0,
            latency_window_us: 0,
            latency_percentile: 100.0,
            unified_rw: UnifiedRw::None,
        }
    }
}

impl JobSetup {
    /// The decimals a percentile list needs when its text is not at hand:
    /// the most any value shows in its shortest decimal form (2 for the
    /// default list, 3 for `50:99.999`). fio counts the digits the user
    /// typed, so `99.50` gives 2 there and 1 here.
    pub fn precision_of(list: &[f64]) -> u32 {
        list.iter()
            .map(|p| {
                let s = format!("{p}");
                s.split_once('.').map_or(0, |(_, f)| f.len() as u32)
            })
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_of_lists() {
        assert_eq!(JobSetup::precision_of(&DEFAULT_PERCENTILES), 2);
        assert_eq!(JobSetup::precision_of(&[50.0, 90.0, 99.5, 99.999]), 3);
        assert_eq!(JobSetup::precision_of(&[10.0, 20.0]), 0);
        assert_eq!(JobSetup::precision_of(&[]), 0);
        assert_eq!(JobSetup::default().percentile_precision, 2);
    }
}
