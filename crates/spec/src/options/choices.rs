//! Choice options as enums. Each enum makes the `Kind::Choice` list the
//! option table gives its option, so every word the parser accepts is a
//! variant, and the plan matches variants, not strings: a misspelt arm does
//! not compile. [`JobSpec::chosen`](crate::JobSpec::chosen) reads one.

use super::{choice, Choice};

/// An enum whose variants are the words of a choice option.
pub trait ChoiceEnum: Copy + Sized + 'static {
    /// The option table's list: word, aliases and help of each variant.
    const CHOICES: &'static [Choice];
    /// The variants, in the order of `CHOICES`.
    const ALL: &'static [Self];

    /// The canonical word, as `--parse-only` prints it.
    fn word(self) -> &'static str;

    /// The variant whose canonical word is `word`.
    fn from_word(word: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.word() == word)
    }
}

macro_rules! choice_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$vmeta:meta])* $var:ident = $word:literal $aliases:tt $help:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vmeta])* $var),* }

        impl ChoiceEnum for $name {
            const CHOICES: &'static [Choice] = &[$(choice($word, &$aliases, $help)),*];
            const ALL: &'static [Self] = &[$($name::$var),*];

            fn word(self) -> &'static str {
                match self { $($name::$var => $word),* }
            }
        }
    };
}

choice_enum! {
    /// How writes reach stable storage (`sync`).
    pub enum SyncWrites {
        None = "none" ["0"] "no O_SYNC or O_DSYNC",
        Sync = "sync" ["1"] "open with O_SYNC",
        Dsync = "dsync" [] "open with O_DSYNC",
    }
}

choice_enum! {
    /// The posix_fadvise(2) hint a job's files get when opened
    /// (`fadvise_hint`).
    #[derive(Default)]
    pub enum Fadvise {
        /// None at all.
        None = "0" ["false", "no"] "no hint: the kernel's default readahead",
        /// Random for a random job, sequential otherwise (fio's default).
        #[default]
        Pattern = "1" ["true", "yes"]
            "the job's pattern: random for random jobs, sequential otherwise",
        Sequential = "sequential" [] "POSIX_FADV_SEQUENTIAL whatever the pattern",
        Random = "random" [] "POSIX_FADV_RANDOM whatever the pattern",
    }
}

choice_enum! {
    /// Which jobs stop when a job with `exitall` finishes (`exit_what`).
    #[derive(Default)]
    pub enum ExitWhat {
        /// The jobs of its reporting group.
        #[default]
        Group = "group" [] "stop the other jobs of the finishing job's group",
        /// The jobs running now; the run goes on with the next phase.
        Stonewall = "stonewall" []
            "stop the jobs running now, then go on past the next stonewall",
        /// Every job, and the jobs that have not started never do.
        All = "all" [] "stop every job",
    }
}

choice_enum! {
    /// Which errors a job carries on after (`continue_on_error`).
    pub enum ContinueOnError {
        None = "none" ["0"] "stop the job at the first error",
        Read = "read" [] "carry on after read errors",
        Write = "write" [] "carry on after write errors",
        Io = "io" [] "carry on after any I/O error",
        Verify = "verify" [] "carry on after verification failures",
        All = "all" ["1"] "carry on after I/O errors and verification failures",
    }
}

choice_enum! {
    /// How rate-limited I/Os are spaced (`rate_process`).
    pub enum RateProcess {
        Linear = "linear" [] "evenly spaced I/Os",
        Poisson = "poisson" []
            "exponentially distributed gaps, as from independent arrivals",
    }
}

choice_enum! {
    /// How a job's clones share its CPU set (`cpus_allowed_policy`).
    pub enum CpusAllowedPolicy {
        Shared = "shared" [] "every clone of the job may run on any CPU of the set",
        Split = "split" []
            "each thread gets one CPU of the set in turn, counting the run's threads across jobs",
    }
}

choice_enum! {
    /// How directions are reported (`unified_rw_reporting`).
    pub enum UnifiedRwReporting {
        None = "none" ["0"] "report reads, writes and trims separately",
        Mixed = "mixed" ["1"] "report all directions summed as one",
        Both = "both" ["2"] "report each direction, then the sum",
    }
}

choice_enum! {
    /// How the cpuio engine burns the CPU (`cpumode`).
    pub enum CpuMode {
        Noop = "noop" [] "spin in a loop of no-op instructions",
        Qsort = "qsort" [] "sort arrays, which draws more power",
    }
}

choice_enum! {
    /// How a job's region is divided into zones (`zonemode`).
    #[derive(Default)]
    pub enum ZoneMode {
        #[default]
        None = "none" [] "no zones: zonerange, zonesize and zoneskip are not used",
        Strided = "strided" []
            "zonesize bytes in each zone of zonerange bytes, then zoneskip bytes on",
        Zbd = "zbd" [] "a zoned block device's zones (refused where the device is not zoned)",
    }
}

choice_enum! {
    /// What a deduplicated write repeats (`dedupe_mode`).
    #[derive(Default)]
    pub enum DedupeMode {
        #[default]
        Repeat = "repeat" [] "a deduplicated write repeats the last unique one",
        WorkingSet = "working_set" []
            "a deduplicated write repeats one drawn from the first unique writes",
    }
}

choice_enum! {
    /// Who submits a job's I/O (`io_submit_mode`).
    pub enum IoSubmitMode {
        Inline = "inline" [] "the job's thread submits and reaps its I/O",
        Offload = "offload" []
            "fio: a pool of threads submits; iolab submits from the job's thread",
    }
}

choice_enum! {
    /// The generator of random offsets (`random_generator`).
    #[derive(Default)]
    pub enum RandomGenerator {
        #[default]
        Tausworthe = "tausworthe" [] "32-bit Tausworthe generator",
        Lfsr = "lfsr" [] "linear feedback shift register: visits each block once, no map",
        Tausworthe64 = "tausworthe64" [] "64-bit Tausworthe generator, for very large devices",
    }
}

choice_enum! {
    /// Whether rates are reported in bytes or bits (`unit_base`).
    #[derive(Default)]
    pub enum UnitBase {
        #[default]
        Auto = "0" [] "pick bytes or bits automatically",
        Bytes = "8" [] "report in bytes",
        Bits = "1" [] "report in bits",
    }
}

choice_enum! {
    /// The clock fio times with (`clocksource`); iolab times with its own
    /// calibrated clock whichever is asked.
    pub enum Clocksource {
        Gettimeofday = "gettimeofday" [] "gettimeofday(2)",
        ClockGettime = "clock_gettime" [] "clock_gettime(2)",
        Cpu = "cpu" [] "the CPU's time stamp counter",
    }
}

choice_enum! {
    /// How a job's files are preallocated (`fallocate`).
    pub enum Fallocate {
        None = "none" ["0"] "do not preallocate; blocks are allocated as data is written",
        Native = "native" [] "fallocate(2) where the filesystem supports it, else nothing",
        Posix = "posix" ["1"] "posix_fallocate(3), which may write zeros where not supported",
        Keep = "keep" [] "fallocate(2) with FALLOC_FL_KEEP_SIZE: reserve without growing",
        Truncate = "truncate" [] "only ftruncate(2) the file to its size, leaving it sparse",
    }
}

choice_enum! {
    /// The verification methods iolab implements (`verify`); fio's others
    /// are refused by name.
    pub enum Verify {
        Off = "0" [] "no verification",
        Crc32c = "crc32c" ["crc32c-intel"] "CRC32C checksum (hardware assisted where available)",
        Md5 = "md5" [] "MD5 checksum",
        Sha256 = "sha256" [] "SHA-256 checksum",
        Xxhash = "xxhash" [] "xxHash32 checksum",
        Pattern = "pattern" [] "compare the data with verify_pattern, no header",
        Meta = "meta" []
            "check only the header (offset, length, seed); fio treats it as obsolete",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{Kind, Opt};

    fn check<T: ChoiceEnum + std::fmt::Debug + PartialEq>(opt: Opt) {
        let Kind::Choice(list) = opt.def().kind else {
            panic!("{opt:?} is not a choice option");
        };
        assert_eq!(list, T::CHOICES, "{opt:?}");
        for &v in T::ALL {
            assert_eq!(T::from_word(v.word()), Some(v));
        }
    }

    #[test]
    fn the_table_lists_each_enums_words() {
        check::<SyncWrites>(Opt::Sync);
        check::<Fadvise>(Opt::FadviseHint);
        check::<ExitWhat>(Opt::ExitWhat);
        check::<ContinueOnError>(Opt::ContinueOnError);
        check::<RateProcess>(Opt::RateProcess);
        check::<CpusAllowedPolicy>(Opt::CpusAllowedPolicy);
        check::<UnifiedRwReporting>(Opt::UnifiedRwReporting);
        check::<CpuMode>(Opt::Cpumode);
        check::<ZoneMode>(Opt::Zonemode);
        check::<DedupeMode>(Opt::DedupeMode);
        check::<IoSubmitMode>(Opt::IoSubmitMode);
        check::<RandomGenerator>(Opt::RandomGenerator);
        check::<UnitBase>(Opt::UnitBase);
        check::<Clocksource>(Opt::Clocksource);
        check::<Fallocate>(Opt::Fallocate);
        check::<Verify>(Opt::Verify);
    }
}
