//! The studied filesystems for real: `iolab compare` on f2fs, nilfs2,
//! jfs and reiserfs beside ext4, and ext4 on a bcache stack with its cache
//! in writethrough and writeback mode and detached, inside a virtual
//! machine running Debian's own kernel (scripts/vm-test.sh), where this
//! host's kernel may have none of them. It checks function and the structure of the results,
//! never speed (figures under emulation are not device figures).
//! Skipped, with the reason, where the machine cannot be made (no QEMU,
//! no static busybox, no kernel package); scripts/setup.sh installs them.

use iolab_testkit::{require, skip};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The studied filesystems this host's kernel may lack that the studies
/// suite runs on, beside ext4 as the studies' baseline (xfs and btrfs are
/// measured on the host, in crates/lab's tests); NILFS2 runs the basic
/// suite (see `JOB`).
const FILESYSTEMS: [&str; 4] = ["ext4", "f2fs", "jfs", "reiserfs"];
/// The metadata suite: on the filesystems only the machine has.
const META_FILESYSTEMS: [&str; 4] = ["f2fs", "nilfs2", "jfs", "reiserfs"];

/// The row `key` of a comparison's report (`iolab compare`'s object).
fn metric<'a>(compare: &'a Value, key: &str) -> &'a Value {
    compare["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|m| m["key"] == key)
        .unwrap_or_else(|| panic!("no row {key}"))
}

/// What the machine runs: compares of every studied filesystem on loop
/// images in an ext4 scratch disk: the studies suite on 320 MiB images,
/// but for NILFS2 the basic suite on its own; then the metadata suite
/// (160 MiB images, empty files). NILFS2 reclaims the space of removed
/// files only when its cleaner cleans their segments, which it does not
/// during a comparison (crates/lab/src/fit.rs), so every file a suite
/// lays out or writes stays: the studies suite's twelve files of an
/// eighth of the image each are 1.5 times the image once the machine is
/// fast enough to write each whole within the runtime (it ran out of
/// space in `stonewall-4` at 448 MiB on a faster host), while the basic
/// suite's four files are half of it, whatever the speed;
/// a bcache comparison on the machine's two small disks (vdb the cache,
/// vdc the backing device), then what is still mounted, attached or
/// registered.
const JOB: &str = r#"
export IOLAB_DB=/tmp/results.db
mkfs.ext4 -q -F /dev/vda && mkdir -p /scratch && mount /dev/vda /scratch || exit 90
export TMPDIR=/scratch
iolab compare --fs ext4,f2fs,jfs,reiserfs --size 320m --runtime 1 --repeat 1 \
  --suite studies --output-format json --output /out/compare.json
echo $? >/out/compare.status
iolab compare --fs nilfs2 --size 320m --runtime 1 --repeat 1 \
  --suite basic --output-format json --output /out/nilfs2.json
echo $? >/out/nilfs2.status
# The stored result's provenance, and a run's note on stderr.
iolab show 1 --output-format record >/out/record.json 2>/out/record.err
printf '[x]\nioengine=null\nsize=1m\n' >/tmp/null.fio
iolab run /tmp/null.fio --no-store >/out/run.out 2>/out/run.err
iolab compare --fs f2fs,nilfs2,jfs,reiserfs --size 160m --repeat 1 \
  --suite meta --output-format json --output /out/meta.json
echo $? >/out/meta.status
iolab compare --fs ext4 --bcache writethrough,writeback,off --device /dev/vdc \
  --cache-device /dev/vdb --destroy-data --size 256m --runtime 1 --repeat 1 \
  --suite basic --output-format json --output /out/bcache.json
echo $? >/out/bcache.status
# Interrupted while the stack is mounted: Ctrl-C (SIGINT), then a kill -9
# and the next compare's --cleanup.
wait_mounted() {
  i=0
  while [ $i -lt 3000 ] && ! grep -q '^/dev/bcache' /proc/mounts; do sleep 0.1; i=$((i+1)); done
}
iolab compare --fs ext4 --bcache writeback --size 256m --runtime 30 --repeat 1 \
  --suite basic --no-store >/out/int.log 2>&1 &
pid=$!
wait_mounted; kill -INT $pid; wait $pid; echo $? >/out/int.status
iolab compare --fs ext4 --bcache writeback --size 256m --runtime 30 --repeat 1 \
  --suite basic --no-store >/out/kill.log 2>&1 &
pid=$!
wait_mounted; kill -9 $pid; wait $pid
ls /sys/block | grep -e '^bcache' >/out/killed.left
iolab compare --cleanup >/out/cleanup.log 2>&1; echo $? >/out/cleanup.status
grep -v -e '^rootfs ' -e ' /proc ' -e ' /sys ' -e ' /dev ' -e ' /tmp ' -e ' /out ' -e ' /scratch ' -e ' /run ' -e ' /dev/shm ' \
  /proc/mounts >/out/mounts.after
losetup -a >/out/loops.after
{ ls /sys/block | grep -e '^bcache'; ls /sys/fs/bcache | grep -e '-'; } >/out/bcache.after
ls /scratch >/out/scratch.after
ps | grep -e nilfs_cleanerd | grep -v grep >/out/cleaners.after
exit 0
"#;

#[test]
fn compare_measures_every_studied_filesystem_in_a_virtual_machine() {
    require!(qemu);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = tempfile::tempdir().unwrap();
    let job = out.path().join("job.sh");
    std::fs::write(&job, JOB).unwrap();
    let res = Command::new("bash")
        .arg(root.join("scripts/vm-test.sh"))
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .arg(out.path().join("out"))
        .arg(&job)
        .output()
        .expect("run scripts/vm-test.sh");
    let stderr = String::from_utf8_lossy(&res.stderr);
    if res.status.code() == Some(77) {
        // vm-test.sh says `skipped: REASON` on its last line.
        let why = stderr.trim().lines().last().unwrap_or_default();
        skip!("{}", why.trim_start_matches("skipped: "));
    }
    let dir = out.path().join("out");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    assert!(
        res.status.success(),
        "vm-test.sh failed: {stderr}\njob log:\n{}",
        read("job.log")
    );
    assert_eq!(
        read("compare.status").trim(),
        "0",
        "compare failed:\n{}",
        read("job.log")
    );
    let v: Value = serde_json::from_str(&read("compare.json")).expect("compare's JSON");
    let c = &v["iolab compare"];

    // Every target measured: none skipped or failed.
    let targets = c["targets"].as_array().expect("targets");
    let labels: Vec<&str> = targets.iter().filter_map(|t| t["label"].as_str()).collect();
    assert_eq!(labels, FILESYSTEMS, "{targets:?}");
    for t in targets {
        assert_eq!(t["status"], "ok", "{t}");
        assert!(t["skipped"].is_null() && t["failed"].is_null(), "{t}");
    }

    // Each has its mkfs time, mount times, capacity and workload rows.
    let row = |key: &str| metric(c, key);
    // The studies suite: buffered and write+fsync writes, reads, four
    // stonewalled jobs, sixteen direct writers, a libaio mix.
    let rows = [
        "mkfs_s",
        "mount_first_ms",
        "mount_cold_ms",
        "umount_ms",
        "size_mib",
        "avail_mib",
        "seqwrite-1m.write.mb_s",
        "seqwrite-fsync.write.fsync_p99_us",
        "randwrite-fsync.write.iops",
        "seqread-1m.read.mb_s",
        "randread-4k.read.iops",
        "stonewall-4/Write-Random.write.iops",
        "randwrite-16j.write.iops",
        "randrw-20-80.read.iops",
    ];
    for key in rows {
        let m = row(key);
        for fs in FILESYSTEMS {
            let cell = &m["values"][fs];
            let value = cell["geomean"].as_f64();
            assert!(
                value.is_some_and(|x| x.is_finite() && x > 0.0),
                "{key} for {fs}: {cell}"
            );
        }
    }
    // The figures say they came from an emulator.
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("measured inside an emulated machine (QEMU)"),
        "{notes}"
    );

    assert!(
        notes.contains("performance figures under emulation are not device figures"),
        "{notes}"
    );
    // The results say which machine measured them: the comparison's host,
    // the stored record's provenance, and each target's mkfs and mount.
    let vm = &c["host"]["hypervisor"];
    assert_eq!(vm["name"], "QEMU", "{}", c["host"]);
    assert_eq!(vm["emulated"], true, "{}", c["host"]);
    let record: Value = serde_json::from_str(&read("record.json"))
        .unwrap_or_else(|e| panic!("show's record: {e}: {}", read("record.err")));
    assert_eq!(
        record["provenance"]["hypervisor"]["name"], "QEMU",
        "{}",
        record["provenance"]
    );
    for t in targets {
        let s = &t["setup"];
        let fs = t["label"].as_str().unwrap_or_default();
        assert_eq!(s["fs_type"], fs, "{s}");
        assert!(
            s["mkfs_tool"]
                .as_str()
                .is_some_and(|p| p.ends_with(&format!("mkfs.{fs}"))),
            "{s}"
        );
        assert!(
            s["mount_options"]
                .as_str()
                .is_some_and(|o| o.starts_with("rw")),
            "{s}"
        );
        assert!(!s["kernel"].as_str().unwrap_or_default().is_empty(), "{s}");
    }
    // NILFS2 with the basic suite: measured, with its setup, and its
    // cleaner ran while it was (mount.nilfs2 starts it).
    assert_eq!(
        read("nilfs2.status").trim(),
        "0",
        "the NILFS2 compare failed:\n{}",
        read("job.log")
    );
    let v: Value = serde_json::from_str(&read("nilfs2.json")).expect("the NILFS2 compare's JSON");
    let n = &v["iolab compare"];
    let t = &n["targets"][0];
    assert_eq!(t["label"], "nilfs2", "{t}");
    assert_eq!(t["status"], "ok", "{t}");
    assert_eq!(t["setup"]["fs_type"], "nilfs2", "{t}");
    for key in [
        "mkfs_s",
        "mount_first_ms",
        "avail_mib",
        "seqwrite-1m.write.mb_s",
        "seqread-1m.read.mb_s",
        "randread-4k.read.iops",
        "randwrite-4k.write.iops",
    ] {
        let cell = &metric(n, key)["values"]["nilfs2"];
        assert!(
            cell["geomean"]
                .as_f64()
                .is_some_and(|x| x.is_finite() && x > 0.0),
            "{key} for nilfs2: {cell}"
        );
    }
    let notes = n["notes"].to_string();
    assert!(
        notes.contains("nilfs2: NILFS2's cleaner ran during the workloads"),
        "{notes}"
    );

    let run_err = read("run.err");
    assert!(
        run_err.contains("iolab run: note: measured inside an emulated machine (QEMU)"),
        "{run_err}"
    );

    // The metadata suite on each filesystem.
    assert_eq!(
        read("meta.status").trim(),
        "0",
        "meta failed:\n{}",
        read("job.log")
    );
    let v: Value = serde_json::from_str(&read("meta.json")).expect("meta compare's JSON");
    let m = &v["iolab compare"];
    for phase in ["create", "stat", "readdir", "rename", "unlink"] {
        let key = format!("meta.{phase}.ops_s");
        let row = metric(m, &key);
        for fs in META_FILESYSTEMS {
            assert!(
                row["values"][fs]["geomean"]
                    .as_f64()
                    .is_some_and(|x| x > 0.0),
                "{key} for {fs}: {row}"
            );
        }
    }

    // The cache study: every mode measured on the stack, with bcache's
    // own counters beside the workload rows.
    assert_eq!(
        read("bcache.status").trim(),
        "0",
        "bcache compare failed:\n{}",
        read("job.log")
    );
    let v: Value = serde_json::from_str(&read("bcache.json")).expect("bcache compare's JSON");
    let c = &v["iolab compare"];
    let modes = ["bcache-writethrough", "bcache-writeback", "bcache-off"];
    let targets = c["targets"].as_array().expect("targets");
    let labels: Vec<&str> = targets.iter().filter_map(|t| t["label"].as_str()).collect();
    assert_eq!(labels, modes, "{targets:?}");
    for t in targets {
        assert_eq!(t["status"], "ok", "{t}");
        let d = t["description"].as_str().unwrap_or_default();
        assert!(
            d.contains("/dev/bcache") && d.contains("cache /dev/vdb"),
            "{d}"
        );
    }
    for key in [
        "mkfs_s",
        "mount_cold_ms",
        "randwrite-4k.write.iops",
        "randwrite-4k.bcache.dirty_mib",
        "seqwrite-1m.bcache.bypassed_mib",
    ] {
        let m = metric(c, key);
        for t in modes {
            assert!(
                m["values"][t]["geomean"].as_f64().is_some(),
                "{key} {t}: {m}"
            );
        }
    }
    // Writeback leaves written data in the cache; detached, none is there.
    let dirty = metric(c, "randwrite-4k.bcache.dirty_mib");
    assert!(
        dirty["values"]["bcache-writeback"]["geomean"].as_f64() > Some(0.0),
        "{dirty}"
    );
    assert_eq!(
        dirty["values"]["bcache-off"]["geomean"].as_f64(),
        Some(0.0),
        "{dirty}"
    );

    // Ctrl-C and kill -9 while a stack was mounted: the first cleans up
    // at once, the second's leftovers go with --cleanup.
    assert_ne!(read("int.status").trim(), "0", "{}", read("int.log"));
    assert!(
        !read("killed.left").trim().is_empty(),
        "kill -9 left no stack to clean: {}",
        read("kill.log")
    );
    assert_eq!(
        read("cleanup.status").trim(),
        "0",
        "{}",
        read("cleanup.log")
    );
    let cleaned = read("cleanup.log");
    assert!(
        cleaned.contains("stopped /dev/bcache")
            && cleaned.contains("unregistered bcache cache set"),
        "{cleaned}"
    );

    // Nothing left mounted, attached or registered, and no work directory.
    for (name, what) in [
        ("mounts.after", "mounted"),
        ("loops.after", "attached"),
        ("bcache.after", "registered"),
        ("scratch.after", "left in the scratch disk"),
        ("cleaners.after", "still cleaning"),
    ] {
        let text = read(name);
        let leftover: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim().is_empty() && *l != "lost+found")
            .collect();
        assert!(leftover.is_empty(), "{what} after compare: {leftover:?}");
    }
}
