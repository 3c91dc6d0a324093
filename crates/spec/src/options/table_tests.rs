//! Compile-time facts of the option table: names are unique and fio's,
//! every entry is documented, defaults of fixed-word options are among
//! their words, and the options iolab promises are all there. Value parsing
//! is tested where the parsers live.

use std::collections::{BTreeSet, HashSet};

use super::{
    is_fio_only, lookup, suggest, Category, Kind, Opt, Store, Support, FIO_OPTIONS, OPTIONS,
};

/// The options iolab must carry with fio's meaning (names or aliases).
const REQUIRED: &[&str] = &[
    "name",
    "description",
    "filename",
    "directory",
    "filename_format",
    "size",
    "filesize",
    "nrfiles",
    "nr_files",
    "openfiles",
    "file_service_type",
    "io_size",
    "io_limit",
    "number_ios",
    "offset",
    "offset_increment",
    "bs",
    "blocksize",
    "bsrange",
    "blocksize_range",
    "bssplit",
    "ba",
    "blockalign",
    "rw",
    "readwrite",
    "rwmixread",
    "rwmixwrite",
    "percentage_random",
    "direct",
    "buffered",
    "ioengine",
    "iodepth",
    "iodepth_batch",
    "iodepth_batch_submit",
    "iodepth_batch_complete",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "numjobs",
    "thread",
    "runtime",
    "timeout",
    "time_based",
    "ramp_time",
    "startdelay",
    "loops",
    "group_reporting",
    "new_group",
    "stonewall",
    "wait_for_previous",
    "exitall",
    "fsync",
    "fdatasync",
    "end_fsync",
    "fsync_on_close",
    "sync",
    "invalidate",
    "create_on_open",
    "allow_file_create",
    "fallocate",
    "unlink",
    "overwrite",
    "pre_read",
    "refill_buffers",
    "scramble_buffers",
    "zero_buffers",
    "buffer_pattern",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "dedupe_percentage",
    "randrepeat",
    "randseed",
    "random_generator",
    "random_distribution",
    "norandommap",
    "rate",
    "rate_iops",
    "rate_min",
    "rate_process",
    "thinktime",
    "thinktime_blocks",
    "thinktime_spin",
    "verify",
    "verify_pattern",
    "do_verify",
    "verify_fatal",
    "verify_backlog",
    "verify_interval",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "log_avg_msec",
    "log_hist_msec",
    "per_job_logs",
    "percentile_list",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "unified_rw_reporting",
    "kb_base",
    "unit_base",
    "gtod_reduce",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "disable_bw",
    "clocksource",
    "cpus_allowed",
    "cpus_allowed_policy",
    "nice",
    "continue_on_error",
    "hipri",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "nonvectored",
    "force_async",
    "userspace_reap",
];

/// Names iolab has that fio lacks. There are none: every entry claims
/// fio's meaning.
const IOLAB_ONLY: &[&str] = &[];

fn all_names() -> impl Iterator<Item = (Opt, &'static str)> {
    Opt::ALL.iter().flat_map(|&o| {
        let d = o.def();
        std::iter::once(d.name)
            .chain(d.aliases.iter().copied())
            .map(move |n| (o, n))
    })
}

fn choices(kind: Kind) -> &'static [super::Choice] {
    match kind {
        Kind::Choice(c) => c,
        _ => &[],
    }
}

#[test]
fn enum_and_array_agree() {
    assert_eq!(Opt::ALL.len(), OPTIONS.len());
    for (i, o) in Opt::ALL.iter().enumerate() {
        assert_eq!(*o as usize, i);
    }
}

#[test]
fn names_and_aliases_are_unique() {
    let mut seen = HashSet::new();
    for (o, n) in all_names() {
        assert!(seen.insert(n), "`{n}` ({o:?}) is used twice");
    }
}

#[test]
fn names_are_lowercase_and_fio_knows_them() {
    for (o, n) in all_names() {
        assert_eq!(n, n.to_ascii_lowercase(), "{o:?}: `{n}` is not lowercase");
        assert!(
            FIO_OPTIONS.contains(&n) || IOLAB_ONLY.contains(&n),
            "{o:?}: fio has no option `{n}`"
        );
    }
}

#[test]
fn variant_is_camel_case_of_name() {
    for &o in Opt::ALL {
        let camel: String = o
            .name()
            .split('_')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(format!("{o:?}"), camel);
    }
}

#[test]
fn every_option_is_documented() {
    for &o in Opt::ALL {
        let d = o.def();
        assert!(!d.help.is_empty(), "{}: no help", d.name);
        assert!(!d.example.is_empty(), "{}: no example", d.name);
        assert!(
            d.help.len() < 90,
            "{}: help is {} chars",
            d.name,
            d.help.len()
        );
        assert!(
            !d.help.ends_with('.'),
            "{}: help ends with a period",
            d.name
        );
        assert!(
            d.help.starts_with(|c: char| c.is_ascii_uppercase()),
            "{}: help should start with a capital",
            d.name
        );
        assert_ne!(
            d.default,
            Some(d.example),
            "{}: example is the default",
            d.name
        );
        if let Support::Ignored(reason) = d.support {
            assert!(!reason.is_empty(), "{}: ignored without a reason", d.name);
        }
        for c in choices(d.kind) {
            assert!(!c.help.is_empty(), "{}={}: no help", d.name, c.word);
            assert!(c.help.len() < 90, "{}={}: help too long", d.name, c.word);
            assert!(
                !c.help.ends_with('.'),
                "{}={}: trailing period",
                d.name,
                c.word
            );
        }
    }
}

#[test]
fn entries_are_in_category_order() {
    for pair in OPTIONS.windows(2) {
        assert!(
            pair[0].category <= pair[1].category,
            "{} ({:?}) comes before {} ({:?})",
            pair[0].name,
            pair[0].category,
            pair[1].name,
            pair[1].category
        );
    }
    // Every category has at least one option, so no docs section is empty.
    let used: BTreeSet<Category> = OPTIONS.iter().map(|d| d.category).collect();
    assert_eq!(used.len(), 18);
}

#[test]
fn choice_words_defaults_and_examples() {
    for &o in Opt::ALL {
        let d = o.def();
        let Kind::Choice(cs) = d.kind else {
            assert!(
                d.fio_only_values.is_empty(),
                "{}: fio_only without choices",
                d.name
            );
            continue;
        };
        let words: Vec<&str> = cs
            .iter()
            .flat_map(|c| std::iter::once(c.word).chain(c.aliases.iter().copied()))
            .collect();
        let unique: HashSet<&str> = words.iter().copied().collect();
        assert_eq!(
            unique.len(),
            words.len(),
            "{}: a word is listed twice",
            d.name
        );
        for w in &words {
            assert_eq!(
                *w,
                w.to_ascii_lowercase(),
                "{}: `{w}` is not lowercase",
                d.name
            );
        }
        if let Some(def) = d.default {
            assert!(
                words.contains(&def),
                "{}: default `{def}` is not a word",
                d.name
            );
        }
        assert!(
            words.contains(&d.example),
            "{}: example is not a word",
            d.name
        );
        for v in d.fio_only_values {
            assert!(
                !words.contains(v),
                "{}: `{v}` is both iolab's and fio-only",
                d.name
            );
        }
    }
}

#[test]
fn ranges_hold_defaults_of_integers() {
    for &o in Opt::ALL {
        let d = o.def();
        let Some((min, max)) = d.range else { continue };
        assert!(min <= max, "{}: empty range", d.name);
        if d.kind == Kind::Int {
            for text in d.default.iter().chain([&d.example]) {
                let n: i64 = if let Some(hex) = text.strip_prefix("0x") {
                    i64::from_str_radix(hex, 16).unwrap()
                } else {
                    text.parse().unwrap()
                };
                assert!(
                    (min..=max).contains(&n),
                    "{}: `{text}` is out of range",
                    d.name
                );
            }
        }
    }
}

#[test]
fn stores_point_at_the_right_kind() {
    for &o in Opt::ALL {
        let d = o.def();
        match d.store {
            Store::Own => {}
            Store::Inverse(t) => {
                assert_eq!(d.kind, Kind::Bool, "{}", d.name);
                assert_eq!(t.def().kind, Kind::Bool, "{}", d.name);
                assert_eq!(t.def().store, Store::Own, "{}", d.name);
            }
            Store::Complement100(t) => {
                assert_eq!(d.kind, Kind::Int, "{}", d.name);
                assert_eq!(t.def().kind, Kind::Int, "{}", d.name);
                assert_eq!(t.def().range, Some((0, 100)), "{}", d.name);
                assert_eq!(t.def().store, Store::Own, "{}", d.name);
            }
        }
    }
}

#[test]
fn engines_are_the_engine_kinds() {
    use iolab_engine::{EngineKind, FIO_ONLY_ENGINES};
    let d = Opt::Ioengine.def();
    let ours: Vec<&str> = choices(d.kind).iter().map(|c| c.word).collect();
    let kinds: Vec<&str> = EngineKind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(ours, kinds);
    for (c, k) in choices(d.kind).iter().zip(EngineKind::ALL) {
        assert_eq!(c.help, k.help(), "{k}");
    }
    assert_eq!(d.fio_only_values, FIO_ONLY_ENGINES);
    // The help lists every engine, iolab's and fio's.
    let help = crate::help::cmdhelp(Some("ioengine")).expect("ioengine has help");
    for k in EngineKind::ALL {
        assert!(help.contains(k.name()), "{k} missing from\n{help}");
    }
    for e in FIO_ONLY_ENGINES {
        assert!(help.contains(e), "{e} missing from\n{help}");
    }
}

#[test]
fn table_names_are_not_fio_only() {
    for (o, n) in all_names() {
        assert!(!is_fio_only(n), "{o:?}: `{n}` is reported as fio-only");
        assert!(!is_fio_only(&n.to_ascii_uppercase()));
    }
    assert!(is_fio_only("replay_redirect"));
    assert!(!is_fio_only("no_such_option"));
}

#[test]
fn required_options_are_present() {
    for n in REQUIRED {
        assert!(lookup(n).is_some(), "`{n}` is missing");
    }
}

#[test]
fn aliases_find_their_option() {
    assert_eq!(lookup("blocksize"), Some(Opt::Bs));
    assert_eq!(lookup("BS"), Some(Opt::Bs));
    assert_eq!(lookup("readwrite"), Some(Opt::Rw));
    assert_eq!(lookup("timeout"), Some(Opt::Runtime));
    assert_eq!(lookup("blockalign"), Some(Opt::Ba));
    assert_eq!(lookup("blocksize_range"), Some(Opt::Bsrange));
    assert_eq!(lookup("iodepth_batch_submit"), Some(Opt::IodepthBatch));
    assert_eq!(
        lookup("iodepth_batch_complete"),
        Some(Opt::IodepthBatchCompleteMin)
    );
    assert_eq!(lookup("nr_files"), Some(Opt::Nrfiles));
    assert_eq!(lookup("wait_for_previous"), Some(Opt::Stonewall));
    assert_eq!(lookup("disable_bw"), Some(Opt::DisableBwMeasurement));
    assert_eq!(lookup("fill_fs"), Some(Opt::FillDevice));
    assert_eq!(lookup("io_limit"), Some(Opt::IoSize));
    assert_eq!(lookup("fileoffset"), Some(Opt::Offset));
    assert_eq!(lookup("ratemin"), Some(Opt::RateMin));
    assert_eq!(lookup("ratecycle"), Some(Opt::RateCycle));
    assert_eq!(lookup("replay_redirect"), None);
    assert_eq!(lookup("dedupe_global"), Some(Opt::DedupeGlobal));
}

#[test]
fn misspellings_get_suggestions() {
    assert_eq!(suggest("bloksize"), Some("blocksize"));
    assert_eq!(suggest("runtme"), Some("runtime"));
    assert_eq!(suggest("iodpeth"), Some("iodepth"));
    assert_eq!(suggest("xyzzy"), None);
}

#[test]
fn fio_defaults_and_units() {
    let def = |o: Opt| o.def().default;
    assert_eq!(def(Opt::Ioengine), Some("psync"));
    assert_eq!(def(Opt::Rw), Some("read"));
    assert_eq!(def(Opt::Rwmixread), Some("50"));
    assert_eq!(def(Opt::Iodepth), Some("1"));
    assert_eq!(def(Opt::Size), None);
    assert_eq!(
        Opt::Thinktime.def().kind,
        Kind::Time(crate::value::TimeUnit::Usec)
    );
    assert_eq!(Opt::Runtime.def().unit_text(), "seconds");
    assert_eq!(Opt::RampTime.def().unit_text(), "seconds");
    assert_eq!(Opt::Bs.def().unit_text(), "bytes");
    assert_eq!(Opt::LogAvgMsec.def().unit_text(), "msec");
    assert!(matches!(Opt::Thread.def().support, Support::Ignored(_)));
    assert!(matches!(
        Opt::Clocksource.def().support,
        Support::Ignored(_)
    ));
    let ignored: Vec<&str> = OPTIONS
        .iter()
        .filter(|d| matches!(d.support, Support::Ignored(_)))
        .map(|d| d.name)
        .collect();
    assert_eq!(
        ignored,
        [
            "create_serialize",
            "io_submit_mode",
            "thread",
            "threads",
            "clocksource"
        ]
    );
}
