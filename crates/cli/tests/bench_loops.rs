//! The C limit loops of bench/ (what docs/performance.md holds iolab's
//! per-core figures against) build cleanly, run, and read in the order a
//! random job of fio and iolab reads: bench/blockmap.h gives every block
//! once per pass, in an order of its own in each copy, the same in every
//! run of a numbered copy.

mod common;

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use common::{bench_dir, cc};
use iolab_testkit::{have, require};

/// Builds `src` (C, with bench/ on the include path) into `out` with every
/// warning an error.
fn build(src: &Path, out: &Path) {
    let bench = bench_dir();
    let flags = ["-O2", "-Wall", "-Wextra", "-Werror", "-I"].map(OsStr::new);
    let files = [
        bench.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        src.as_os_str(),
    ];
    cc(&[&flags[..], &files[..]].concat());
}

/// The blocks `passes` passes of blockmap.h give over `blocks` blocks, one
/// pass per line, from a new process: the seed of copy number `copy`
/// (LOOP_COPY), of its process id without one, or `seed`.
fn passes(
    exe: &Path,
    blocks: u64,
    passes: u64,
    copy: Option<u64>,
    seed: Option<u64>,
) -> Vec<Vec<u64>> {
    let mut args = vec![blocks.to_string(), passes.to_string()];
    args.extend(seed.map(|s| s.to_string()));
    let mut cmd = Command::new(exe);
    match copy {
        Some(n) => cmd.env("LOOP_COPY", n.to_string()),
        None => cmd.env_remove("LOOP_COPY"),
    };
    let out = cmd.args(args).output().expect("the blockmap program runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("the program prints numbers")
        .lines()
        .map(|l| {
            l.split_whitespace()
                .map(|w| w.parse().expect("a block number"))
                .collect()
        })
        .collect()
}

#[test]
fn the_loops_read_every_block_once_per_pass_in_an_order_of_their_own() {
    require!(tool = "cc");
    let dir = iolab_testkit::dir();
    let src = dir.join("order.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include \"blockmap.h\"\n\
         int main(int argc, char **argv) {\n\
         \tif (argc != 3 && argc != 4)\n\t\treturn 2;\n\
         \tuint64_t blocks = strtoull(argv[1], 0, 10), n = strtoull(argv[2], 0, 10);\n\
         \tstruct blockmap m;\n\
         \tif (blockmap_init(&m, blocks))\n\t\treturn 1;\n\
         \tif (argc == 4)\n\t\tm.x = strtoull(argv[3], 0, 10);\n\
         \tfor (uint64_t p = 0; p < n; p++) {\n\
         \t\tfor (uint64_t i = 0; i < blocks; i++)\n\
         \t\t\tprintf(\"%llu \", (unsigned long long)blockmap_next(&m));\n\
         \t\tputchar('\\n');\n\t}\n\treturn 0;\n}\n",
    )
    .expect("the program's source is written");
    let exe = dir.join("order");
    build(&src, &exe);
    // Word-sized maps and ones with a partial last word.
    for blocks in [1u64, 2, 63, 64, 65, 130, 1000, 4103] {
        let got = passes(&exe, blocks, 3, None, None);
        assert_eq!(got.len(), 3, "{blocks} blocks: three passes");
        for (p, pass) in got.iter().enumerate() {
            let mut sorted = pass.clone();
            sorted.sort_unstable();
            let every: Vec<u64> = (0..blocks).collect();
            assert_eq!(sorted, every, "{blocks} blocks, pass {p}: each block once");
        }
        if blocks >= 64 {
            assert_ne!(got[0], got[1], "{blocks} blocks: each pass its own order");
            assert_ne!(
                got[0],
                (0..blocks).collect::<Vec<_>>(),
                "{blocks} blocks: a random order, not the file's"
            );
            // Another process (two copies of a loop at numjobs=2) reads in
            // another order, as fio's and iolab's clones do.
            assert_ne!(
                passes(&exe, blocks, 1, None, None)[0],
                got[0],
                "{blocks} blocks: a second process's order"
            );
            // Numbered copies (as compare.py starts them): each its own
            // order, the same in every run.
            let first = passes(&exe, blocks, 2, Some(0), None);
            assert_eq!(
                passes(&exe, blocks, 2, Some(0), None),
                first,
                "{blocks} blocks: copy 0 again"
            );
            assert_ne!(
                passes(&exe, blocks, 1, Some(1), None)[0],
                first[0],
                "{blocks} blocks: copy 1 against copy 0"
            );
        }
        // From a given seed, the choices of fio's map: the drawn block
        // when this pass has not read it, else the next one it has not
        // read (after it, else from the start).
        let seed = 0x9e37_79b9_7f4a_7c15 ^ blocks;
        assert_eq!(
            passes(&exe, blocks, 3, None, Some(seed)),
            map_order(blocks, 3, seed),
            "{blocks} blocks from seed {seed}"
        );
    }
}

/// What bench/blockmap.h should give from seed `x`: xorshift64 (13, 7,
/// 17), the block `x % blocks`, moved on to the next unread one as fio's
/// random map does; the map cleared when a pass has read every block.
fn map_order(blocks: u64, passes: u64, mut x: u64) -> Vec<Vec<u64>> {
    let n = usize::try_from(blocks).expect("a small map");
    let mut out = Vec::new();
    for _ in 0..passes {
        let mut read = vec![false; n];
        let mut pass = Vec::new();
        for _ in 0..blocks {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut b = usize::try_from(x % blocks).expect("below the map's size");
            while read[b] {
                b = (b + 1) % n;
            }
            read[b] = true;
            pass.push(b as u64);
        }
        out.push(pass);
    }
    out
}

#[test]
fn the_limit_loops_build_without_warnings_and_time_their_reads() {
    require!(tool = "cc");
    let dir = iolab_testkit::dir();
    let file = dir.join("f.bin");
    // 64 KiB of data: 16 blocks, read for a tenth of a second.
    std::fs::write(&file, vec![7u8; 64 << 10]).expect("the file is written");
    for name in ["pread_loop", "aio_loop", "uring_loop"] {
        if name == "uring_loop" && !have!(io_uring) {
            continue;
        }
        let exe = dir.join(name);
        build(&bench_dir().join(format!("{name}.c")), &exe);
        if name == "pread_loop" {
            // Without a clock read per I/O: the IOPS alone.
            let out = Command::new(&exe)
                .arg(&file)
                .arg("0.1")
                .output()
                .expect("the loop runs");
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{name} untimed: {text}");
            let words: Vec<&str> = text.split_whitespace().collect();
            assert!(
                words.len() == 2
                    && words[0] == "iops"
                    && words[1].parse::<f64>().is_ok_and(|v| v > 0.0),
                "{name} untimed: {text}"
            );
        }
        let mut cmd = Command::new(&exe);
        cmd.arg(&file).arg("0.1");
        if name == "pread_loop" {
            cmd.arg("timed");
        } else {
            cmd.arg("4");
        }
        let out = cmd.output().expect("the loop runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {}{}",
            text,
            String::from_utf8_lossy(&out.stderr)
        );
        let words: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(words.first(), Some(&"iops"), "{name}: {text}");
        let iops: f64 = words
            .get(1)
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("{name}: no IOPS figure in {text}"));
        assert!(iops > 0.0, "{name}: {text}");
        assert!(
            words.contains(&"p50") && words.contains(&"p99"),
            "{name}: each read timed, percentiles printed: {text}"
        );
    }
}

/// bench/builds.py's --code-lines reads a callgrind profile: every
/// instruction's count towards the instructions per I/O, none of a call's
/// inclusive cost, and a 64-byte line of code (per object) when one of its
/// instructions ran on at least half of the I/Os.
#[test]
fn builds_counts_the_instructions_and_lines_of_code_per_io() {
    require!(tool = "python3");
    let dir = iolab_testkit::dir();
    let profile = dir.join("callgrind.out");
    // 4 I/Os. /bin/x: the line at 0x1000 ran 4 times, the one at 0x1040
    // once, the one at 0x1080 twice; a call's cost of 100 follows its
    // calls= line. /lib/y: the line at 0x1000 again, another object's.
    let text = "version: 1\npositions: instr line\nevents: Ir\n\
                ob=/bin/x\nfn=f\n0x1000 1 4\n0x1004 1 4\n0x1040 2 1\n\
                cfn=g\ncalls=4 0x2000 3\n0x1008 1 100\n0x1080 3 2\n\
                ob=/lib/y\nfn=g\n0x1000 5 3\n";
    std::fs::write(&profile, text).expect("the profile is written");
    let script = format!(
        "import sys; sys.path.insert(0, {bench:?}); import builds; \
         print(*builds.code_lines({profile:?}, 4))",
        bench = bench_dir(),
        profile = profile,
    );
    let out = Command::new("python3")
        // No bytecode cache left in bench/.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args(["-c", &script])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // (4 + 4 + 1 + 2 + 3) / 4 instructions per I/O; lines 0x1000 and
    // 0x1080 of /bin/x and 0x1000 of /lib/y.
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "3.5 3");
}

/// builds.py --code-lines refuses, before it sets anything up, what one
/// profile cannot count: a row of several jobs, and no row at all.
#[test]
fn builds_code_lines_refuses_rows_it_cannot_count() {
    require!(tool = "python3");
    let builds = bench_dir().join("builds.py");
    let cases: [(&[&str], &str); 3] = [
        (
            &["--row", "psync-randread-warm-numjobs2"],
            "--code-lines takes rows with one job",
        ),
        (
            &["--row", "io_uring-randread-qd32-direct-ram-numjobs2"],
            "--code-lines takes rows with one job",
        ),
        (&["--logging-cost"], "--code-lines goes with --row ROW"),
    ];
    for (args, message) in cases {
        let out = Command::new("python3")
            // No bytecode cache left in bench/.
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .arg(&builds)
            .args(args)
            .args(["--code-lines", "/bin/true"])
            .output()
            .expect("python3 runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.trim(), message, "{args:?}");
    }
}
