//! iolab against the real fio on the same small jobs: the JSON holds every
//! key path fio's holds (top level and under each job), the same jobs and
//! group ids, identical io_bytes and total_ios for size-bounded jobs, and
//! the normal text has fio's lines in fio's order.

mod common;
use common::*;
use iolab_testkit::require;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command as Proc;

use serde_json::Value;

/// A job: its job-file text (with DIR for the directory) and whether it is
/// bounded by size (so byte counts must agree exactly).
struct Case {
    name: &'static str,
    text: &'static str,
    sized: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "four stonewalled jobs (job text a, scaled)",
        text: "[global]\ndirectory=DIR\nsize=4MB\n[Read-Seq]\nrw=read\nstonewall\n[Read-Random]\nrw=randread\nstonewall\n[Write-Seq]\nrw=write\nstonewall\n[Write-Random]\nrw=randwrite\nstonewall\n",
        sized: true,
    },
    Case {
        name: "sixteen direct clones in one group (command line b, scaled)",
        text: "[file1]\nfilename=DIR/testtmp\ndirect=1\nrw=randwrite\nbs=4k\nsize=1M\nnumjobs=16\nruntime=20\ngroup_reporting\n",
        sized: true,
    },
    Case {
        name: "randrw 20/80 libaio time based (command line c, scaled)",
        text: "[test]\nfilename=DIR/fio\ndirect=0\nrw=randrw\nrwmixread=20\nbs=4k\nfilesize=5M\nnumjobs=1\nruntime=1\ngroup_reporting\nioengine=libaio\ntime_based\n",
        sized: false,
    },
    Case {
        name: "io_uring, direct, iodepth 8",
        text: "[u]\ndirectory=DIR\nioengine=io_uring\ndirect=1\niodepth=8\nrw=randread\nsize=2m\n",
        sized: true,
    },
    Case {
        name: "randrw with four clones and group_reporting",
        text: "[m]\ndirectory=DIR\nrw=randrw\nsize=2m\nnumjobs=4\ngroup_reporting\n",
        sized: true,
    },
    Case {
        name: "two files per job",
        text: "[two]\ndirectory=DIR\nnrfiles=2\nrw=write\nsize=2m\nbs=8k\n",
        sized: true,
    },
    Case {
        name: "loops, number_ios and io_size",
        text: "[global]\ndirectory=DIR\nsize=1m\nrw=randread\n[l]\nloops=3\n[n]\nnumber_ios=77\nloops=2\n[i]\nio_size=2500k\n[w]\nrw=write\nio_size=3m\n",
        sized: true,
    },
    Case {
        name: "latency switches",
        text: "[global]\ndirectory=DIR\nsize=1m\nrw=randread\n[nolat]\ndisable_lat=1\n[noclat]\ndisable_clat=1\n[pcts]\nclat_percentiles=0\nlat_percentiles=1\npercentile_list=50:99.5\n",
        sized: true,
    },
    Case {
        name: "gtod_reduce, time based",
        text: "[g]\nfilename=DIR/g\nsize=1m\nrw=randread\ngtod_reduce=1\ntime_based\nruntime=1\n",
        sized: false,
    },
    Case {
        name: "continue_on_error without errors",
        text: "[c]\ndirectory=DIR\nsize=256k\nrw=read\ncontinue_on_error=all\n",
        sized: true,
    },
    Case {
        name: "three files served sequentially, two open at once",
        text: "[f]\ndirectory=DIR\nnrfiles=3\nopenfiles=2\nfile_service_type=sequential\nrw=randwrite\nsize=3m\n",
        sized: true,
    },
    Case {
        name: "fsync after every write",
        text: "[f]\ndirectory=DIR\nrw=write\nsize=256k\nfsync=1\n",
        sized: true,
    },
    Case {
        name: "stats=0 jobs left out, an empty group",
        text: "[global]\ndirectory=DIR\nsize=256k\nrw=read\n[a]\n[b]\nstats=0\nnumjobs=2\n[c]\nrw=write\nstonewall\n[d]\nstats=0\nstonewall\n",
        sized: true,
    },
    Case {
        name: "stats=0 inside a reported group",
        text: "[global]\ndirectory=DIR\nsize=256k\nrw=read\ngroup_reporting\n[a]\n[b]\nstats=0\nnumjobs=2\n[c]\nstats=0\nstonewall\n[d]\nstonewall\n",
        sized: true,
    },
    Case {
        name: "reads and writes reported as one (unified_rw_reporting=1)",
        text: "[m]\ndirectory=DIR\nrw=randrw\nsize=1m\nunified_rw_reporting=1\n",
        sized: true,
    },
    Case {
        name: "each direction and their sum, two groups",
        text: "[global]\ndirectory=DIR\nsize=1m\nunified_rw_reporting=both\n[a]\nrw=randrw\n[b]\nrw=write\nnumjobs=2\ngroup_reporting\nstonewall\n",
        sized: true,
    },
    Case {
        name: "a job waiting for another",
        text: "[global]\ndirectory=DIR\nsize=256k\n[w]\nrw=write\n[r]\nrw=read\nwait_for=w\n",
        sized: true,
    },
];

fn run_both(text: &str, format: &str) -> (Vec<u8>, Vec<u8>) {
    let fio_dir = tempfile::tempdir().unwrap();
    let iolab_dir = tempfile::tempdir().unwrap();
    let write = |dir: &Path| {
        let job = dir.join("job.fio");
        std::fs::write(&job, text.replace("DIR", &dir.display().to_string())).unwrap();
        job
    };
    let fio_job = write(fio_dir.path());
    let fio = Proc::new("fio")
        .arg(format!("--output-format={format}"))
        .arg(&fio_job)
        .output()
        .expect("fio runs");
    assert!(
        fio.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let iolab_job = write(iolab_dir.path());
    let ours = common::iolab()
        .args(["run", &format!("--output-format={format}")])
        .arg(&iolab_job)
        .output()
        .unwrap();
    assert!(
        ours.status.success(),
        "iolab: {}",
        String::from_utf8_lossy(&ours.stderr)
    );
    (fio.stdout, ours.stdout)
}

fn paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{prefix}/{k}");
                out.insert(p.clone());
                // Disk names and percentile lists are data, not structure.
                if prefix.ends_with("percentile") || prefix == "/disk_util[]" {
                    continue;
                }
                paths(x, &p, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                paths(x, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn json_matches_fio_key_for_key_and_counts_exactly() {
    require!(fio);
    for case in CASES {
        let (fio, ours) = run_both(case.text, "json");
        let (fio, ours) = (json_of(&fio), json_of(&ours));
        let (mut fp, mut op) = (BTreeSet::new(), BTreeSet::new());
        paths(&fio, "", &mut fp);
        paths(&ours, "", &mut op);
        let missing: Vec<&String> = fp.difference(&op).collect();
        assert!(
            missing.is_empty(),
            "{}: keys fio has and iolab lacks: {missing:?}",
            case.name
        );

        let (fj, oj) = (
            fio["jobs"].as_array().unwrap(),
            ours["jobs"].as_array().unwrap(),
        );
        assert_eq!(fj.len(), oj.len(), "{}: number of jobs", case.name);
        for (f, o) in fj.iter().zip(oj) {
            assert_eq!(f["jobname"], o["jobname"], "{}", case.name);
            assert_eq!(
                f["groupid"], o["groupid"],
                "{}: group of {}",
                case.name, f["jobname"]
            );
            if case.sized {
                for d in ["read", "write", "trim"] {
                    if case.text.contains("randrw") {
                        // Mixed jobs draw each I/O's direction at random:
                        // the total agrees, the split differs by the draw.
                        continue;
                    }
                    assert_eq!(
                        f[d]["io_bytes"], o[d]["io_bytes"],
                        "{}: {} {d} io_bytes",
                        case.name, f["jobname"]
                    );
                    assert_eq!(
                        f[d]["total_ios"], o[d]["total_ios"],
                        "{}: {} {d} total_ios",
                        case.name, f["jobname"]
                    );
                }
                // With unified_rw_reporting=mixed only "mixed" is there.
                let total = |j: &Value| match j.get("read") {
                    Some(r) => {
                        r["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap()
                    }
                    None => j["mixed"]["io_bytes"].as_u64().unwrap(),
                };
                assert_eq!(
                    total(f),
                    total(o),
                    "{}: {} bytes in all",
                    case.name,
                    f["jobname"]
                );
                assert_eq!(
                    f["sync"]["total_ios"], o["sync"]["total_ios"],
                    "{}: syncs",
                    case.name
                );
            }
        }
    }
}

/// A line's shape: its text up to the first number, with fio's time units
/// made one word (a run may print usec where another prints nsec).
fn shape(line: &str) -> String {
    let cut = line
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(line.len());
    let mut s = line[..cut].to_string();
    for unit in [
        "(nsec)",
        "(usec)",
        "(msec)",
        "(  KiB/s)",
        "(  MiB/s)",
        "(  GiB/s)",
        "(  kB/s)",
        "(  MB/s)",
    ] {
        s = s.replace(unit, "(unit)");
    }
    s.trim_end().to_string()
}

/// The lines whose presence depends on the numbers (latency buckets only
/// print non-empty ranges, percentile tables are as long as they are),
/// that name the program, or that are iolab's own warnings.
fn structural(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with(iolab_report::WARNING_PREFIX))
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("lat (")
                || t.starts_with('|')
                || t.starts_with("fio-")
                || t.starts_with("iolab-")
                || t.starts_with("Starting ")
                || t.contains("Laying out IO file"))
        })
        .map(shape)
        .collect()
}

#[test]
fn normal_output_has_fios_lines_in_fios_order() {
    require!(fio);
    for case in CASES {
        let (fio, ours) = run_both(case.text, "normal");
        let (fio, ours) = (
            String::from_utf8(fio).unwrap(),
            String::from_utf8(ours).unwrap(),
        );
        let (mut want, mut got) = (structural(&fio), structural(&ours));
        // Bandwidth and IOPS sample lines print once a job has run for a
        // sample window (500 ms): a size-bounded job near that length has
        // them in one run and not in the next, whichever tool runs it.
        let sample = |l: &String| l.starts_with("   bw (") || l.starts_with("   iops ");
        if want.iter().any(sample) != got.iter().any(sample) {
            want.retain(|l| !sample(l));
            got.retain(|l| !sample(l));
        }
        assert_eq!(
            want, got,
            "{}\n--- fio\n{fio}\n--- iolab\n{ours}",
            case.name
        );
    }
}

#[test]
fn terse_has_fios_fields_with_unified_reporting() {
    require!(fio);
    for mode in ["mixed", "both"] {
        let text = format!("[t]\ndirectory=DIR\nrw=randrw\nsize=1m\nunified_rw_reporting={mode}\n");
        let (fio, ours) = run_both(&text, "terse");
        let fields = |out: &[u8]| -> Vec<String> {
            let text = String::from_utf8_lossy(out);
            let line = text
                .lines()
                .find(|l| l.starts_with("3;"))
                .expect("a terse line");
            // Disk fields (nine per disk, from its name) depend on the
            // machine and the run.
            let mut f: Vec<String> = line.split(';').map(str::to_string).collect();
            while f.len() > 9 && {
                let name = &f[f.len() - 9];
                name.chars().any(|c| c.is_ascii_alphabetic()) && !name.contains('%')
            } {
                f.truncate(f.len() - 9);
            }
            f
        };
        let (f, o) = (fields(&fio), fields(&ours));
        assert_eq!(
            f.len(),
            o.len(),
            "{mode}: fields before the disks\n{f:?}\n{o:?}"
        );
        // The same fields hold percentiles, the same hold percentages.
        let kind = |v: &str| (v.contains("%="), v.ends_with('%'));
        let fk: Vec<_> = f.iter().map(|v| kind(v)).collect();
        let ok: Vec<_> = o.iter().map(|v| kind(v)).collect();
        assert_eq!(fk, ok, "{mode}");
        // The mixed section's KiB agree exactly (the split between reads
        // and writes is drawn at random).
        let at = 5 + 41 * if mode == "mixed" { 0 } else { 2 };
        assert_eq!(
            (&f[at], &o[at]),
            (&"1024".to_string(), &"1024".to_string()),
            "{mode}"
        );
    }
}
