//! Property: a random job file built from the option table resolves to the
//! same jobs as its own `--parse-only` print.

use iolab_spec::options::{Kind, Opt, OPTIONS};
use iolab_spec::{resolve, Context, Host};
use proptest::prelude::*;

fn ctx() -> Context {
    Context::fixed(Host {
        page_size: 4096,
        mb_memory: 24000,
        ncpus: 2,
    })
}

/// A value for option `i`: its example, its default, or for numeric kinds a
/// random number written in one of fio's forms.
fn value_for(i: usize) -> BoxedStrategy<String> {
    let d = &OPTIONS[i];
    let mut fixed = vec![d.example.to_string()];
    if let Some(def) = d.default {
        fixed.push(def.to_string());
    }
    let fixed = prop::sample::select(fixed);
    match d.kind {
        Kind::Int => {
            let (lo, hi) = d.range.unwrap_or((0, 1_000_000));
            let hi = hi.min(lo.saturating_add(1_000_000));
            prop_oneof![fixed, (lo..=hi).prop_map(|n| n.to_string())].boxed()
        }
        Kind::Size | Kind::SizePct => {
            let lo = d.range.map(|r| r.0.max(0) as u64).unwrap_or(0);
            let sizes = (lo..(1u64 << 40), 0usize..4).prop_map(|(n, form)| match form {
                0 => n.to_string(),
                1 => format!("{}k", n >> 10),
                2 => format!("{}MiB", (n >> 20).max(1)),
                _ => format!("0x{n:x}"),
            });
            prop_oneof![fixed, sizes].boxed()
        }
        Kind::Time(_) => {
            let times = (0u64..10_000, 0usize..4)
                .prop_map(|(n, u)| format!("{n}{}", ["", "ms", "s", "m"][u]));
            prop_oneof![fixed, times].boxed()
        }
        _ => fixed.boxed(),
    }
}

fn section() -> impl Strategy<Value = Vec<(usize, String)>> {
    let usable: Vec<usize> = (0..OPTIONS.len())
        .filter(|&i| Opt::ALL[i] != Opt::Name)
        .collect();
    prop::collection::vec(prop::sample::select(usable), 0..12).prop_flat_map(|idx| {
        idx.into_iter()
            .map(|i| value_for(i).prop_map(move |v| (i, v)))
            .collect::<Vec<_>>()
    })
}

fn render(global: &[(usize, String)], jobs: &[Vec<(usize, String)>]) -> String {
    let mut text = String::from("[global]\n");
    for (i, v) in global {
        text.push_str(&format!("{}={v}\n", OPTIONS[*i].name));
    }
    for (n, job) in jobs.iter().enumerate() {
        text.push_str(&format!("[job{n}]\n"));
        for (i, v) in job {
            text.push_str(&format!("{}={v}\n", OPTIONS[*i].name));
        }
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn parse_print_parse_is_identity(
        global in section(),
        jobs in prop::collection::vec(section(), 1..4),
    ) {
        let text = render(&global, &jobs);
        // Every generated value is valid for its option, so the file parses.
        let first = resolve::parse_text("random.fio", &text, &ctx())
            .map_err(|e| TestCaseError::fail(format!("{e}\n--- input\n{text}")))?;
        let printed = first.to_job_text();
        let second = resolve::parse_text("printed.fio", &printed, &ctx())
            .map_err(|e| TestCaseError::fail(format!("{e}\n--- input\n{text}\n--- printed\n{printed}")))?;
        prop_assert_eq!(&first, &second, "input:\n{}\nprinted:\n{}", text, printed);
    }
}

#[test]
fn every_example_and_default_parses_for_its_option() {
    for (i, d) in OPTIONS.iter().enumerate() {
        for v in std::iter::once(d.example).chain(d.default) {
            let text = format!("[j]\n{}={v}\n", d.name);
            let set = resolve::parse_text("one.fio", &text, &ctx())
                .unwrap_or_else(|e| panic!("{}={v}: {e}", d.name));
            let job = &set.jobs[0];
            if Opt::ALL[i] == Opt::Name {
                assert_eq!(job.name, v);
                continue;
            }
            // The value lands on the option itself or on its counterpart.
            let target = match d.store {
                iolab_spec::options::Store::Own => Opt::ALL[i],
                iolab_spec::options::Store::Inverse(t)
                | iolab_spec::options::Store::Complement100(t) => t,
            };
            assert!(job.get(target).is_some(), "{}={v} set nothing", d.name);
            let printed = set.to_job_text();
            let again = resolve::parse_text("again.fio", &printed, &ctx()).unwrap();
            assert_eq!(set, again, "{}={v} printed as\n{printed}", d.name);
        }
    }
}
