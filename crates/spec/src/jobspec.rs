//! `JobSpec`: one job as the job text defines it, after `[global]`
//! inheritance and with every value typed, but not yet checked across
//! options (that is the plan's work). `JobSet` is the ordered list of jobs
//! of one run, with fio's reporting-group numbering.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::error::Location;
use crate::kinds;
use crate::options::{Opt, OPTIONS};
use crate::value::{KbBase, PerDir, RwSpec, SizeValue, Value};

/// One job section (or `--name` job) with its typed options.
#[derive(Clone, Debug)]
pub struct JobSpec {
    /// The job's name: its own `name=` when it sets one, else its section's.
    pub name: String,
    /// The section header (or `--name`) the job came from. fio names the
    /// job's files after it (`$jobname` in `filename_format`), even when a
    /// `name=` renames the job.
    pub section: String,
    /// Where the job's section header or `--name` was.
    pub location: Location,
    values: BTreeMap<Opt, Value>,
    origins: BTreeMap<Opt, Location>,
    /// Options whose value came from a `[global]` section (or command-line
    /// globals) rather than the job's own section.
    inherited: std::collections::BTreeSet<Opt>,
    /// The job's own options as fio echoes them in its JSON "job options":
    /// each option's name and its value as written (see `JobSet::global_echo`).
    pub echo: Vec<(String, String)>,
}

/// Two jobs are equal when they have the same name and the same values;
/// where the text came from does not matter.
impl PartialEq for JobSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.section == other.section && self.values == other.values
    }
}

impl JobSpec {
    pub fn new(name: impl Into<String>, location: Location) -> Self {
        let name = name.into();
        JobSpec {
            section: name.clone(),
            name,
            location,
            values: BTreeMap::new(),
            origins: BTreeMap::new(),
            inherited: Default::default(),
            echo: Vec::new(),
        }
    }

    /// Marks whether an option's current value came from `[global]`.
    pub fn set_inherited(&mut self, opt: Opt, inherited: bool) {
        if inherited {
            self.inherited.insert(opt);
        } else {
            self.inherited.remove(&opt);
        }
    }

    /// Whether an option's value came from `[global]` rather than the job's
    /// own section (fio reports the two apart: "global options" and "job
    /// options").
    pub fn is_inherited(&self, opt: Opt) -> bool {
        self.inherited.contains(&opt)
    }

    /// Sets an option's value, recording where it came from.
    pub fn set(&mut self, opt: Opt, value: Value, origin: Location) {
        self.values.insert(opt, value);
        self.origins.insert(opt, origin);
    }

    /// Removes an option's value and returns it.
    pub fn take(&mut self, opt: Opt) -> Option<Value> {
        self.origins.remove(&opt);
        self.inherited.remove(&opt);
        self.values.remove(&opt)
    }

    /// The value the job text gave (inherited from `[global]` included), or
    /// None when the option was not given.
    pub fn get(&self, opt: Opt) -> Option<&Value> {
        self.values.get(&opt)
    }

    /// Where an option's value was written.
    pub fn origin(&self, opt: Opt) -> Option<&Location> {
        self.origins.get(&opt)
    }

    /// The options the job text gave, in table order.
    pub fn explicit(&self) -> impl Iterator<Item = (Opt, &Value)> {
        self.values.iter().map(|(o, v)| (*o, v))
    }

    /// The given value, else the table's default.
    pub fn value(&self, opt: Opt) -> Option<Value> {
        self.get(opt).cloned().or_else(|| default_value(opt))
    }

    pub fn kb_base(&self) -> KbBase {
        match self.value(Opt::KbBase) {
            Some(Value::Choice("1000")) => KbBase::K1000,
            _ => KbBase::K1024,
        }
    }

    /// A boolean option (false when unset and without a default).
    pub fn flag(&self, opt: Opt) -> bool {
        matches!(self.value(opt), Some(Value::Bool(true)))
    }

    /// An integer option.
    pub fn int(&self, opt: Opt) -> Option<i64> {
        match self.value(opt) {
            Some(Value::Int(n)) => Some(n),
            _ => None,
        }
    }

    /// A size option (bytes or percent). A range (`filesize=1m-4m`) gives
    /// its high end: the most any file may take.
    pub fn size(&self, opt: Opt) -> Option<SizeValue> {
        match self.value(opt) {
            Some(Value::Size(s)) => Some(s),
            Some(Value::SizeRange(r)) => Some(SizeValue::Bytes(r.max)),
            _ => None,
        }
    }

    /// A time option, in microseconds.
    pub fn time_us(&self, opt: Opt) -> Option<u64> {
        match self.value(opt) {
            Some(Value::Time(t)) => Some(t),
            _ => None,
        }
    }

    /// A text option.
    pub fn text(&self, opt: Opt) -> Option<String> {
        match self.value(opt) {
            Some(Value::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// A choice option's canonical word.
    pub fn choice(&self, opt: Opt) -> Option<&'static str> {
        match self.value(opt) {
            Some(Value::Choice(w)) => Some(w),
            _ => None,
        }
    }

    /// A choice option as its enum (`T` must be the enum whose list the
    /// table gives `opt`; `options::choices` tests each pair).
    pub fn chosen<T: crate::options::choices::ChoiceEnum>(&self, opt: Opt) -> Option<T> {
        debug_assert!(
            matches!(opt.def().kind, crate::options::Kind::Choice(c) if c == T::CHOICES),
            "{opt:?} is not read as its enum"
        );
        self.choice(opt).and_then(T::from_word)
    }

    /// A per-direction size or count option, with the default filled in
    /// for directions the text left empty.
    pub fn per_dir(&self, opt: Opt) -> PerDir<u64> {
        let given = match self.get(opt) {
            Some(Value::PerDir(p)) => p.clone(),
            _ => PerDir::default(),
        };
        let dflt = match default_value(opt) {
            Some(Value::PerDir(p)) => p,
            _ => PerDir::default(),
        };
        PerDir {
            read: given.read.or(dflt.read),
            write: given.write.or(dflt.write),
            trim: given.trim.or(dflt.trim),
        }
    }

    pub fn rw(&self) -> RwSpec {
        match self.value(Opt::Rw) {
            Some(Value::Rw(rw)) => rw,
            _ => RwSpec {
                mode: crate::value::RwMode::Read,
                modifier: None,
            },
        }
    }

    /// How many clones of this job run (`numjobs`, at least 1).
    pub fn numjobs(&self) -> u32 {
        self.int(Opt::Numjobs)
            .map(|n| n.clamp(1, u32::MAX as i64) as u32)
            .unwrap_or(1)
    }

    /// The job's options in job-file syntax, one `name=value` per line, in
    /// table order.
    pub fn option_lines(&self) -> Vec<String> {
        let kb = self.kb_base();
        self.values
            .iter()
            .map(|(o, v)| format!("{}={}", o.name(), kinds::format_value(o.def(), v, kb)))
            .collect()
    }
}

/// An option's default from the table, parsed once.
pub fn default_value(opt: Opt) -> Option<Value> {
    static DEFAULTS: OnceLock<Vec<Option<Value>>> = OnceLock::new();
    DEFAULTS
        .get_or_init(|| {
            OPTIONS
                .iter()
                .map(|d| {
                    d.default
                        .and_then(|t| kinds::parse_value(d, Some(t), KbBase::K1024).ok())
                })
                .collect()
        })
        .get(opt as usize)
        .cloned()
        .flatten()
}

/// The jobs of one run, in the order they start.
#[derive(Clone, Debug, Default)]
pub struct JobSet {
    pub jobs: Vec<JobSpec>,
    /// Every global option as fio echoes them in its JSON "global
    /// options": the command line's, then each `[global]` section's in
    /// turn; the option's name (an alias gives the option it stands for)
    /// and its value as written, after variable substitution; an option
    /// given twice is there twice; an option without a value has an empty
    /// one, which the JSON leaves out, as fio 3.33 does.
    pub global_echo: Vec<(String, String)>,
    /// fio's `--aux-path`: the directory for the files a run writes
    /// beside its results (the verify dumps); none: the current one.
    pub aux_path: Option<PathBuf>,
}

/// Two job sets are equal when their jobs are: how the text spelled the
/// options does not matter.
impl PartialEq for JobSet {
    fn eq(&self, other: &Self) -> bool {
        self.jobs == other.jobs
    }
}

impl JobSet {
    /// fio's reporting group of each job: a job with `stonewall` or
    /// `new_group` starts a new group, unless the current group is still
    /// empty.
    pub fn groups(&self) -> Vec<u32> {
        let mut group = 0u32;
        let mut in_group = 0usize;
        self.jobs
            .iter()
            .map(|j| {
                if (j.flag(Opt::Stonewall) || j.flag(Opt::NewGroup)) && in_group > 0 {
                    group += 1;
                    in_group = 0;
                }
                in_group += j.numjobs() as usize;
                group
            })
            .collect()
    }

    /// The number of reporting groups.
    pub fn group_count(&self) -> usize {
        self.groups().last().map(|g| *g as usize + 1).unwrap_or(0)
    }

    /// The number of threads the run starts (clones included).
    pub fn clone_count(&self) -> usize {
        self.jobs.iter().map(|j| j.numjobs() as usize).sum()
    }

    /// The jobs in fio job-file syntax, with a comment per job saying its
    /// reporting group and clones. Parsing this text gives the same jobs.
    pub fn to_job_text(&self) -> String {
        let groups = self.groups();
        let mut out = format!(
            "; {} job(s), {} thread(s), {} reporting group(s)\n",
            self.jobs.len(),
            self.clone_count(),
            self.group_count()
        );
        for (job, group) in self.jobs.iter().zip(groups) {
            out.push('\n');
            out.push_str(&format!("[{}]\n", job.section));
            let n = job.numjobs();
            // A comment line must stay within a job file's line length, so
            // a long name is not repeated in it.
            if n > 1 && job.name.len() > 1000 {
                out.push_str(&format!("; reporting group {group}; {n} clones\n"));
            } else if n > 1 {
                out.push_str(&format!(
                    "; reporting group {group}; {n} clones: {name}.0 .. {name}.{}\n",
                    n - 1,
                    name = job.name
                ));
            } else {
                out.push_str(&format!("; reporting group {group}\n"));
            }
            if job.name != job.section {
                out.push_str(&format!("name={}\n", job.name));
            }
            for line in job.option_lines() {
                out.push_str(&line);
                out.push('\n');
            }
        }
        out
    }
}
