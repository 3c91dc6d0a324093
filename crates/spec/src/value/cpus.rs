//! CPU lists (`cpus_allowed=0-3,5`): numbers and inclusive ranges parsed
//! into sorted, deduplicated CPU numbers below fio's limit of 1024, and printed
//! back compactly.

use crate::error::ValueError;

/// `cpus_allowed=0-3,5`: sorted, deduplicated CPU numbers.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CpuList(pub Vec<u32>);

/// CPU numbers must be below this (glibc's CPU_SETSIZE, fio's limit on
/// Linux: "your OS only supports up to 1024 CPUs").
pub const MAX_CPUS: u32 = 1024;

/// Parses a CPU list: numbers and inclusive ranges separated by commas
/// (`0-3,5,7-8`). The result is sorted and without duplicates. An empty
/// item, a reversed range (`3-1`) or a CPU number of 1024 or more is an
/// error.
pub fn parse_cpus(text: &str) -> Result<CpuList, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::new(
            "an empty value is not a CPU list (expected CPU numbers and ranges such as 0-3,5)",
        ));
    }
    let cpu = |s: &str| -> Result<u32, ValueError> {
        let s = s.trim();
        let n: u32 = s.parse().map_err(|_| {
            ValueError::new(format!(
                "`{t}` is not a CPU list: `{s}` is not a CPU number (expected numbers and \
                 ranges such as 0-3,5)"
            ))
        })?;
        if n >= MAX_CPUS {
            return Err(ValueError::new(format!(
                "`{t}` is not a CPU list: CPU {n} is too large (at most {})",
                MAX_CPUS - 1
            )));
        }
        Ok(n)
    };
    // One flag per CPU: a list that names the same CPUs many times
    // (`0-1023,0-1023,...`) takes no more memory than naming them once.
    let mut given = vec![false; MAX_CPUS as usize];
    for item in t.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(ValueError::new(format!(
                "`{t}` is not a CPU list: it has an empty item"
            )));
        }
        match item.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (cpu(lo)?, cpu(hi)?);
                if lo > hi {
                    return Err(ValueError::new(format!(
                        "`{t}` is not a CPU list: the range `{item}` is reversed (write {hi}-{lo})"
                    )));
                }
                given[lo as usize..=hi as usize].fill(true);
            }
            None => given[cpu(item)? as usize] = true,
        }
    }
    Ok(CpuList(
        (0..MAX_CPUS).filter(|&c| given[c as usize]).collect(),
    ))
}

/// Prints a CPU list compactly: runs of consecutive CPUs as `a-b`, others
/// as single numbers, comma-separated (`0-3,5,7-8`). An empty list prints
/// as the empty string.
pub fn format_cpus(list: &CpuList) -> String {
    let mut cpus = list.0.clone();
    cpus.sort_unstable();
    cpus.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            end += 1;
            i += 1;
        }
        out.push(if end > start {
            format!("{start}-{end}")
        } else {
            start.to_string()
        });
        i += 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::test_util::assert_err;
    use proptest::prelude::*;

    // ---- CPU lists ----

    #[test]
    fn a_list_repeating_every_cpu_is_the_cpus_once() {
        let text = vec!["0-1023"; 20_000].join(",");
        let list = parse_cpus(&text).unwrap();
        assert_eq!(list.0, (0..1024).collect::<Vec<u32>>());
        assert_eq!(format_cpus(&list), "0-1023");
    }

    #[test]
    fn cpus() {
        assert_eq!(
            parse_cpus("0-3,5,7-8").unwrap().0,
            vec![0, 1, 2, 3, 5, 7, 8]
        );
        assert_eq!(
            parse_cpus("0,5,8-15").unwrap().0,
            vec![0, 5, 8, 9, 10, 11, 12, 13, 14, 15]
        );
        assert_eq!(parse_cpus(" 5, 1 ,1,2-3 ").unwrap().0, vec![1, 2, 3, 5]);
        assert_eq!(parse_cpus("3-3").unwrap().0, vec![3]);
        assert_eq!(parse_cpus("1023").unwrap().0, vec![1023]);
        assert_eq!(
            format_cpus(&CpuList(vec![0, 1, 2, 3, 5, 7, 8])),
            "0-3,5,7-8"
        );
        assert_eq!(format_cpus(&CpuList(vec![8, 7, 7, 0])), "0,7-8");
        assert_eq!(format_cpus(&CpuList(vec![4])), "4");
        assert_eq!(format_cpus(&CpuList(vec![])), "");
    }

    #[test]
    fn cpu_errors() {
        assert_err(parse_cpus(""), &["empty"]);
        assert_err(parse_cpus("3-1"), &["`3-1`", "reversed"]);
        assert_err(parse_cpus("0,,1"), &["`0,,1`", "empty item"]);
        assert_err(parse_cpus("0-"), &["`0-`", "`` is not a CPU number"]);
        assert_err(parse_cpus("a"), &["`a`", "not a CPU number"]);
        assert_err(parse_cpus("-1"), &["`-1`"]);
        assert_err(parse_cpus("0-3:5"), &["`0-3:5`", "`3:5`"]);
        assert_err(parse_cpus("1024"), &["`1024`", "too large"]);
        assert_err(parse_cpus("0-4000000000"), &["too large"]);
    }

    proptest! {
        #[test]
        fn cpus_round_trip(mut cpus in prop::collection::vec(0u32..MAX_CPUS, 1..64)) {
            cpus.sort_unstable();
            cpus.dedup();
            let list = CpuList(cpus);
            let text = format_cpus(&list);
            prop_assert_eq!(parse_cpus(&text).unwrap(), list, "{}", text);
        }
    }
}
