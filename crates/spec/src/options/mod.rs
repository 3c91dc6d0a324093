//! The option table: one declarative entry per job option (name, aliases,
//! value kind, default, range, unit, category, one-line help, an example
//! value). The job parser, `--cmdhelp` and `docs/options.md` all read it.

pub mod choices;
mod fio_names;
mod table;
#[cfg(test)]
mod table_tests;

pub use fio_names::FIO_OPTIONS;
pub use table::{Opt, OPTIONS};

use crate::value::TimeUnit;

/// The kind of value an option takes, which decides its parser and printer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `0` or `1`; a bare option name means `1`.
    Bool,
    /// A switch that fio sets by naming it (`time_based`, `stonewall`);
    /// with a value, any non-zero integer sets it.
    Flag,
    /// An integer (suffixes and arithmetic allowed, as fio allows them).
    Int,
    /// A byte count with fio's suffixes.
    Size,
    /// A byte count or a percentage of the file (`50%`).
    SizePct,
    /// A byte count, or a range `LOW-HIGH` of them (`filesize=1m-4m`).
    SizeRange,
    /// A duration; a bare number is in the given unit.
    Time(TimeUnit),
    /// Free text.
    Str,
    /// Free text that may also be given bare (the empty string then).
    OptStr,
    /// One word from a fixed list.
    Choice(&'static [Choice]),
    /// A byte count per direction: `4k`, `4k,64k`, `,8k`.
    SizePerDir,
    /// A count per direction (`rate_iops=100,50`).
    IntPerDir,
    /// Block-size ranges per direction: `1k-4k`, `1k:4k,8k-16k`.
    RangePerDir,
    /// Block-size splits per direction: `4k/10:64k/90`.
    SplitPerDir,
    /// `rw=MODE[:N]`.
    Rw,
    /// `random_distribution=zipf:1.2`.
    Distribution,
    /// `file_service_type=roundrobin:4`.
    FileService,
    /// Colon-separated percentiles: `50:99:99.9`.
    Percentiles,
    /// A CPU list: `0-3,5`.
    Cpus,
    /// Colon-separated file names with `\:` for a literal colon.
    Files,
    /// A fill pattern: `0xdeadbeef`, `"text"`, a number, or a mix.
    Pattern,
}

impl Kind {
    /// Whether the option may appear without `=value`.
    pub fn bare_allowed(self) -> bool {
        matches!(self, Kind::Bool | Kind::Flag | Kind::OptStr)
    }

    /// A short name of the value type, for help and docs.
    pub fn type_name(self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::Flag => "flag",
            Kind::Int => "int",
            Kind::Size => "size",
            Kind::SizePct => "size or percent",
            Kind::SizeRange => "size or size range",
            Kind::Time(_) => "time",
            Kind::Str | Kind::OptStr => "string",
            Kind::Choice(_) => "choice",
            Kind::SizePerDir => "size list (read,write,trim)",
            Kind::IntPerDir => "int list (read,write,trim)",
            Kind::RangePerDir => "size range list (read,write,trim)",
            Kind::SplitPerDir => "block-size split (read,write,trim)",
            Kind::Rw => "rw mode[:N]",
            Kind::Distribution => "distribution[:args]",
            Kind::FileService => "file service[:arg]",
            Kind::Percentiles => "float list (:)",
            Kind::Cpus => "cpu list",
            Kind::Files => "file list (:)",
            Kind::Pattern => "pattern",
        }
    }
}

/// One accepted word of a `Kind::Choice` option.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    /// The canonical word, as `--parse-only` prints it.
    pub word: &'static str,
    /// Other spellings that mean the same (`0` for `none`).
    pub aliases: &'static [&'static str],
    pub help: &'static str,
}

/// Shorthand for a `Choice` in table literals.
pub const fn choice(
    word: &'static str,
    aliases: &'static [&'static str],
    help: &'static str,
) -> Choice {
    Choice {
        word,
        aliases,
        help,
    }
}

/// Where an option's docs and `--cmdhelp` list it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    Description,
    Files,
    IoType,
    IoSize,
    Engine,
    IoDepth,
    Timing,
    Rate,
    Threads,
    Buffers,
    Random,
    Verify,
    Reporting,
    Logging,
    IoUring,
    Libaio,
    Cpuio,
    Exec,
}

impl Category {
    pub fn title(self) -> &'static str {
        match self {
            Category::Description => "Job description",
            Category::Files => "Files and layout",
            Category::IoType => "I/O type and block size",
            Category::IoSize => "I/O size and offsets",
            Category::Engine => "I/O engine and file handling",
            Category::IoDepth => "I/O depth",
            Category::Timing => "Run time and job control",
            Category::Rate => "Rate limits and think time",
            Category::Threads => "Jobs, threads and CPUs",
            Category::Buffers => "Data buffers",
            Category::Random => "Random offsets",
            Category::Verify => "Verification",
            Category::Reporting => "Statistics and reporting",
            Category::Logging => "Log files",
            Category::IoUring => "io_uring engine",
            Category::Libaio => "libaio engine",
            Category::Cpuio => "cpuio engine",
            Category::Exec => "exec engine",
        }
    }
}

/// What iolab does with an option it accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    /// The option has its fio meaning.
    Implemented,
    /// Accepted so that fio job files run unchanged, with no effect; the
    /// reason is shown in help and docs.
    Ignored(&'static str),
}

/// Where a parsed value is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// In the option itself.
    Own,
    /// As the negation of a boolean option (`buffered=1` is `direct=0`).
    Inverse(Opt),
    /// As 100 minus the value in another option (`rwmixwrite=30` is
    /// `rwmixread=70`).
    Complement100(Opt),
}

/// One entry of the option table.
#[derive(Clone, Copy, Debug)]
pub struct OptDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    /// The default as job text (parsed by the option's own parser), or None
    /// when unset means "not used" or "decided by other options".
    pub default: Option<&'static str>,
    /// Inclusive bounds for integers, sizes and per-direction values.
    pub range: Option<(i64, i64)>,
    /// The unit of a bare number, for help and docs ("bytes", "usec", ...).
    pub unit: &'static str,
    pub category: Category,
    pub help: &'static str,
    /// A valid value, used by the docs and the table's own tests.
    pub example: &'static str,
    pub support: Support,
    pub store: Store,
    /// Values fio accepts for this option that iolab does not implement
    /// (engines, checksum types): named as such in the error.
    pub fio_only_values: &'static [&'static str],
}

/// Starts a table entry.
pub const fn opt(name: &'static str, kind: Kind, category: Category) -> OptDef {
    OptDef {
        name,
        aliases: &[],
        kind,
        default: None,
        range: None,
        unit: "",
        category,
        help: "",
        example: "",
        support: Support::Implemented,
        store: Store::Own,
        fio_only_values: &[],
    }
}

impl OptDef {
    pub const fn aliases(mut self, a: &'static [&'static str]) -> Self {
        self.aliases = a;
        self
    }
    pub const fn default(mut self, d: &'static str) -> Self {
        self.default = Some(d);
        self
    }
    pub const fn range(mut self, min: i64, max: i64) -> Self {
        self.range = Some((min, max));
        self
    }
    pub const fn unit(mut self, u: &'static str) -> Self {
        self.unit = u;
        self
    }
    pub const fn help(mut self, h: &'static str) -> Self {
        self.help = h;
        self
    }
    pub const fn example(mut self, e: &'static str) -> Self {
        self.example = e;
        self
    }
    pub const fn ignored(mut self, reason: &'static str) -> Self {
        self.support = Support::Ignored(reason);
        self
    }
    pub const fn store(mut self, s: Store) -> Self {
        self.store = s;
        self
    }
    pub const fn fio_only(mut self, v: &'static [&'static str]) -> Self {
        self.fio_only_values = v;
        self
    }

    /// The unit of a bare number, derived from the kind where it is fixed.
    pub fn unit_text(&self) -> &'static str {
        match self.kind {
            Kind::Time(TimeUnit::Sec) => "seconds",
            Kind::Time(TimeUnit::Msec) => "msec",
            Kind::Time(TimeUnit::Usec) => "usec",
            Kind::Size
            | Kind::SizePct
            | Kind::SizeRange
            | Kind::SizePerDir
            | Kind::RangePerDir
            | Kind::SplitPerDir
                if self.unit.is_empty() =>
            {
                "bytes"
            }
            _ => self.unit,
        }
    }
}

impl Opt {
    /// This option's table entry.
    pub fn def(self) -> &'static OptDef {
        &OPTIONS[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

/// Finds an option by its name or an alias (case-insensitive, as fio reads
/// them).
pub fn lookup(name: &str) -> Option<Opt> {
    static BY_NAME: std::sync::OnceLock<std::collections::HashMap<&'static str, Opt>> =
        std::sync::OnceLock::new();
    let by_name = BY_NAME.get_or_init(|| {
        let mut map = std::collections::HashMap::new();
        for o in Opt::ALL {
            let d = o.def();
            for n in std::iter::once(&d.name).chain(d.aliases.iter()) {
                // The first entry with a name wins, as in table order.
                map.entry(*n).or_insert(*o);
            }
        }
        map
    });
    if name.len() > 64 {
        return None;
    }
    by_name.get(name.to_ascii_lowercase().as_str()).copied()
}

/// Whether fio knows this option name (and iolab does not implement it).
pub fn is_fio_only(name: &str) -> bool {
    if name.len() > 64 {
        return false;
    }
    let lower = name.to_ascii_lowercase();
    lookup(&lower).is_none() && FIO_OPTIONS.contains(&lower.as_str())
}

/// The most edits a suggestion may be away from what was written: a third
/// of its length, 1 to 3.
fn typo_limit(word: &str) -> usize {
    (word.chars().count() / 3).clamp(1, 3)
}

/// The closest option name or alias to a misspelled one, if it is close
/// enough to be a likely typo. The work is bounded: a name far longer than
/// any option is compared with none of them.
pub fn suggest(name: &str) -> Option<&'static str> {
    // A name more than 3 characters longer than the candidate is more than
    // 3 edits away; option names are short, so a long name costs nothing.
    if name.len() > 64 {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    let limit = typo_limit(&lower);
    let mut best: Option<(usize, &'static str)> = None;
    for o in Opt::ALL {
        let d = o.def();
        for cand in std::iter::once(&d.name).chain(d.aliases.iter()) {
            if let Some(dist) = edit_distance_within(&lower, cand, limit) {
                if best.is_none_or(|(b, _)| dist < b) {
                    best = Some((dist, cand));
                }
            }
        }
    }
    best.map(|(_, n)| n)
}

/// The closest word in `words` to `word`, for misspelled choice values.
pub fn suggest_word<'a>(word: &str, words: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    if word.len() > 64 {
        return None;
    }
    let limit = typo_limit(word);
    words
        .filter_map(|w| edit_distance_within(word, w, limit).map(|d| (d, w)))
        .min_by_key(|(d, _)| *d)
        .map(|(_, w)| w)
}

/// `edit_distance(a, b)` if it is at most `max`, else None; strings whose
/// lengths differ by more than `max` are not compared at all.
pub fn edit_distance_within(a: &str, b: &str, max: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > max.saturating_mul(4) {
        return None;
    }
    let (na, nb) = (a.chars().count(), b.chars().count());
    if na.abs_diff(nb) > max {
        return None;
    }
    Some(edit_distance(a, b)).filter(|d| *d <= max)
}

/// Optimal string alignment distance (Levenshtein plus adjacent swaps), in
/// memory linear in the length of `b`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows: i-2, i-1 and i.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(before[j - 2] + 1);
            }
            cur[j] = v;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("iodpeth", "iodepth"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("ca", "abc"), 3);
        assert_eq!(edit_distance_within("bs", "bsx", 1), Some(1));
        assert_eq!(edit_distance_within("bs", "bsxy", 1), None);
    }

    #[test]
    fn a_huge_name_gets_no_suggestion_and_no_work() {
        let huge = "b".repeat(10 << 20);
        assert_eq!(suggest(&huge), None);
        assert_eq!(suggest_word(&huge, ["read", "write"].into_iter()), None);
        // Just past the longest option name, still compared cheaply.
        let longest = Opt::ALL.iter().map(|o| o.name().len()).max().unwrap();
        assert!(longest <= 61, "{longest}");
        assert_eq!(suggest(&"q".repeat(64)), None);
    }
}
