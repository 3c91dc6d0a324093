//! The job language against the real fio (Debian package `fio`, installed by
//! `scripts/setup.sh`): what iolab prints with `--parse-only` is a job file
//! fio accepts, and sizes are the number of bytes fio makes of them.

mod common;
use iolab_testkit::require;

use std::fs;
use std::process::Command as Proc;

use iolab_spec::options::Category;
use iolab_spec::{Opt, OPTIONS};

fn fio_parse_only(path: &std::path::Path) -> (bool, String) {
    let out = Proc::new("fio")
        .arg("--parse-only")
        .arg(path)
        .output()
        .expect("fio runs");
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    (out.status.success() && !text.contains("Bad option"), text)
}

#[test]
fn fio_accepts_what_parse_only_prints_for_every_option() {
    require!(fio);
    let dir = tempfile::tempdir().unwrap();
    // One job per option, set to the table's example value.
    let mut text = String::new();
    for (i, d) in OPTIONS.iter().enumerate() {
        if Opt::ALL[i] == Opt::Name {
            continue;
        }
        text.push_str(&format!("[opt_{}]\n{}={}\n", d.name, d.name, d.example));
        // fio knows engine options only once the engine is chosen.
        match d.category {
            Category::IoUring => text.push_str("ioengine=io_uring\n"),
            Category::Libaio => text.push_str("ioengine=libaio\n"),
            Category::Cpuio => text.push_str("ioengine=cpuio\n"),
            Category::Exec => text.push_str("ioengine=exec\n"),
            _ => {}
        }
    }
    let original = dir.path().join("all.fio");
    fs::write(&original, &text).unwrap();
    let (ok, msg) = fio_parse_only(&original);
    assert!(ok, "fio rejects the table's examples:\n{msg}");

    let out = common::iolab()
        .args(["run", "--parse-only"])
        .arg(&original)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = dir.path().join("printed.fio");
    fs::write(&printed, &out.stdout).unwrap();
    let (ok, msg) = fio_parse_only(&printed);
    assert!(ok, "fio rejects iolab's --parse-only output:\n{msg}");
}

/// The bytes fio moves for `size=TEXT` with one I/O of that size.
fn fio_bytes(size: &str, kb_base: &str) -> u64 {
    let out = Proc::new("fio")
        .args([
            "--name=s",
            &format!("--kb_base={kb_base}"),
            "--ioengine=null",
            &format!("--size={size}"),
            &format!("--bs={size}"),
            "--output-format=json",
        ])
        .output()
        .expect("fio runs");
    assert!(
        out.status.success(),
        "fio size={size}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("fio prints JSON");
    v["jobs"][0]["read"]["io_bytes"].as_u64().expect("io_bytes")
}

fn iolab_bytes(size: &str, kb_base: &str) -> u64 {
    let out = common::iolab()
        .args(["run", "--parse-only", "--name=s"])
        .arg(format!("--kb_base={kb_base}"))
        .arg(format!("--size={size}"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("size="))
        .expect("size line");
    let ctx = iolab_spec::Context::fixed(iolab_spec::Host {
        page_size: 4096,
        mb_memory: 1,
        ncpus: 1,
    });
    let set = iolab_spec::parse_text("p.fio", &text, &ctx).unwrap();
    match set.jobs[0].size(Opt::Size) {
        Some(iolab_spec::value::SizeValue::Bytes(b)) => b,
        other => panic!("{line}: {other:?}"),
    }
}

#[test]
fn sizes_are_the_bytes_fio_makes_of_them() {
    require!(fio);
    for kb in ["1024", "1000"] {
        for size in [
            "4096", "4k", "4K", "4kB", "4KiB", "64m", "100MB", "100MiB", "1M", "3mib", "0x2000",
        ] {
            assert_eq!(
                iolab_bytes(size, kb),
                fio_bytes(size, kb),
                "size={size} kb_base={kb}"
            );
        }
    }
}
