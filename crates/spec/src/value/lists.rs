//! Composite values: per-direction lists (`bs=4k,64k`), block-size ranges
//! (`1k-4k`), block-size splits (`4k/10:64k/90`), CPU lists, colon-separated
//! file names with `\:` escapes, random distributions, file service types and
//! steady-state criteria. Each has a parser and a printer that round-trip.

use crate::error::ValueError;

/// One value per data direction. `None` means "the option's default for this
/// direction".
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PerDir<T> {
    pub read: Option<T>,
    pub write: Option<T>,
    pub trim: Option<T>,
}

impl<T> PerDir<T> {
    pub fn all(v: T) -> Self
    where
        T: Clone,
    {
        PerDir {
            read: Some(v.clone()),
            write: Some(v.clone()),
            trim: Some(v),
        }
    }
}

/// Parses fio's per-direction list: `A` (all three), `A,B` (read A, write and
/// trim B), `A,B,` (trim default), `,B` (read default, write and trim B),
/// `A,B,C`. A value not followed by a comma carries over to the directions
/// after it.
pub fn parse_per_dir<T: Clone>(
    text: &str,
    item: &dyn Fn(&str) -> Result<T, ValueError>,
) -> Result<PerDir<T>, ValueError> {
    let _ = (text, item);
    Err(ValueError::new("per-direction lists are not written yet"))
}

/// Prints a per-direction list so that `parse_per_dir` reads it back.
pub fn format_per_dir<T: PartialEq>(v: &PerDir<T>, item: &dyn Fn(&T) -> String) -> String {
    let _ = (v, item);
    String::new()
}

/// `bsrange=MIN-MAX` (or `MIN:MAX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRange {
    pub min: u64,
    pub max: u64,
}

/// One entry of `bssplit`: a block size and its share in percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitEntry {
    pub bs: u64,
    pub pct: u32,
}

/// `cpus_allowed=0-3,5`: sorted, deduplicated CPU numbers.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CpuList(pub Vec<u32>);

/// `random_distribution`.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    Random,
    Zipf {
        theta: f64,
        center: Option<f64>,
    },
    Pareto {
        h: f64,
        center: Option<f64>,
    },
    Normal {
        dev: f64,
        center: Option<f64>,
    },
    /// `zoned:ACCESS%/RANGE%:...`: per zone, the share of accesses and the
    /// share of the file it covers.
    Zoned(Vec<(f64, f64)>),
    /// `zoned_abs:ACCESS%/SIZE:...`: zones given as absolute sizes.
    ZonedAbs(Vec<(f64, u64)>),
}

/// `file_service_type`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FileService {
    Random,
    /// Switch file after N I/Os (`roundrobin:N`); None = 1.
    RoundRobin(Option<u32>),
    Sequential,
    Zipf(f64),
    Pareto(f64),
    Normal(f64),
}

/// The metric a steady-state criterion watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SteadyMetric {
    Iops,
    IopsSlope,
    Bw,
    BwSlope,
}

/// `steadystate=METRIC:LIMIT[%]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyState {
    pub metric: SteadyMetric,
    pub limit: f64,
    pub percent: bool,
}
