//! Test helpers: fresh directories, file specs, a byte pattern, and the
//! contract every data-moving engine must keep, run against each engine.

use std::path::{Path, PathBuf};

use crate::file::probe_o_direct;
use crate::{create_named, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit};
use crate::{Op, Queued};

pub fn temp() -> tempfile::TempDir {
    tempfile::TempDir::new().expect("temporary directory")
}

pub fn spec(path: &Path, read: bool, write: bool) -> FileSpec {
    FileSpec {
        path: path.to_path_buf(),
        read,
        write,
        create: write,
        ..FileSpec::default()
    }
}

pub fn opts(iodepth: u32, buf_size: usize) -> EngineOpts {
    EngineOpts {
        iodepth,
        buf_size,
        ..EngineOpts::default()
    }
}

/// The byte at file offset `at` of the test pattern with `seed`.
pub fn pattern_byte(seed: u8, at: u64) -> u8 {
    (at.wrapping_mul(31) ^ (at >> 9)) as u8 ^ seed
}

pub fn fill(e: &mut dyn Engine, slot: u32, offset: u64, len: usize, seed: u8) {
    for (i, b) in e.buf(slot)[..len].iter_mut().enumerate() {
        *b = pattern_byte(seed, offset + i as u64);
    }
}

pub fn check(e: &mut dyn Engine, slot: u32, offset: u64, len: usize, seed: u8) {
    let buf = &e.buf(slot)[..len];
    for (i, &b) in buf.iter().enumerate() {
        let at = offset + i as u64;
        assert_eq!(b, pattern_byte(seed, at), "byte at file offset {at}");
    }
}

pub fn io(slot: u32, file: FileId, op: Op, offset: u64, len: u32) -> IoUnit {
    IoUnit {
        slot,
        file,
        op,
        offset,
        len,
    }
}

/// Queues one I/O and returns its completion: from `queue` on a synchronous
/// engine, after `commit` and `reap(1)` on an asynchronous one.
pub fn run(e: &mut dyn Engine, unit: IoUnit) -> Completion {
    let c = match e.queue(&unit).expect("queue") {
        Queued::Completed(c) => c,
        Queued::InFlight if !e.caps().sync => {
            e.commit().expect("commit");
            let mut out = Vec::new();
            e.reap(1, usize::MAX, &mut out).expect("reap");
            assert_eq!(out.len(), 1, "{}: one I/O, one completion", e.name());
            out[0]
        }
        other => panic!("{} did not take one I/O: {other:?}", e.name()),
    };
    assert_eq!(c.slot, unit.slot);
    c
}

/// (offset, len) of the writes: sequential, a gap, backwards, unaligned.
const EXTENTS: &[(u64, u32)] = &[
    (0, 4096),
    (4096, 4096),
    (8192, 8192),
    (65536, 4096),
    (32768, 1000),
    (20000, 3333),
    (1 << 20, 8192),
];

/// Writes with engine `name`, reads back with `psync` and with `name`.
fn pattern_round_trip(name: &str, dir: &Path) {
    let path = dir.join(format!("{name}.pattern"));
    let mut e = create_named(name, &opts(4, 8192)).unwrap();
    let f = e.open(&spec(&path, true, true)).unwrap();
    for (i, &(off, len)) in EXTENTS.iter().enumerate() {
        let slot = i as u32 % 4;
        fill(e.as_mut(), slot, off, len as usize, 0x5a);
        let c = run(e.as_mut(), io(slot, f, Op::Write, off, len));
        assert_eq!(c.result, Ok(len), "{name} write at {off}");
    }
    e.close(f).unwrap();

    let mut p = create_named("psync", &opts(1, 8192)).unwrap();
    let pf = p.open(&spec(&path, true, false)).unwrap();
    for &(off, len) in EXTENTS {
        p.buf(0).fill(0);
        let c = run(p.as_mut(), io(0, pf, Op::Read, off, len));
        assert_eq!(c.result, Ok(len), "psync read at {off} of {name}'s file");
        check(p.as_mut(), 0, off, len as usize, 0x5a);
    }

    let f = e.open(&spec(&path, true, false)).unwrap();
    for &(off, len) in EXTENTS.iter().rev() {
        e.buf(1).fill(0);
        let c = run(e.as_mut(), io(1, f, Op::Read, off, len));
        assert_eq!(c.result, Ok(len), "{name} read at {off}");
        check(e.as_mut(), 1, off, len as usize, 0x5a);
    }
    // Reading sequentially from the start works too (sync's lseek skipping).
    for off in [0u64, 4096, 8192] {
        let c = run(e.as_mut(), io(2, f, Op::Read, off, 4096));
        assert_eq!(c.result, Ok(4096));
        check(e.as_mut(), 2, off, 4096, 0x5a);
    }
}

fn short_read_at_eof(name: &str, dir: &Path) {
    let path = dir.join(format!("{name}.short"));
    std::fs::write(&path, vec![9u8; 5000]).unwrap();
    let mut e = create_named(name, &opts(1, 8192)).unwrap();
    let f = e.open(&spec(&path, true, false)).unwrap();
    assert_eq!(
        run(e.as_mut(), io(0, f, Op::Read, 4096, 4096)).result,
        Ok(904)
    );
    assert!(e.buf(0)[..904].iter().all(|&b| b == 9));
    assert_eq!(
        run(e.as_mut(), io(0, f, Op::Read, 8192, 4096)).result,
        Ok(0)
    );
    assert_eq!(
        run(e.as_mut(), io(0, f, Op::Read, 0, 4096)).result,
        Ok(4096)
    );
}

fn errors_are_completions(name: &str, dir: &Path) {
    let path = dir.join(format!("{name}.ro"));
    std::fs::write(&path, vec![1u8; 8192]).unwrap();
    let mut e = create_named(name, &opts(2, 4096)).unwrap();
    let f = e.open(&spec(&path, true, false)).unwrap();
    let c = run(e.as_mut(), io(1, f, Op::Write, 0, 4096));
    assert_eq!(
        c.result,
        Err(libc::EBADF),
        "{name}: write on a read-only fd"
    );
    let c = run(e.as_mut(), io(1, f, Op::Read, u64::MAX - 10, 4096));
    assert_eq!(c.result, Err(libc::EINVAL), "{name}: offset beyond off_t");
    let c = run(e.as_mut(), io(0, f, Op::Trim, 0, 4096));
    assert_eq!(c.result, Err(libc::EOPNOTSUPP), "{name}: trim on a file");
    // Still usable after errors.
    assert_eq!(
        run(e.as_mut(), io(0, f, Op::Read, 0, 4096)).result,
        Ok(4096)
    );

    // Caller bugs are EngineErrors, not completions or panics.
    let too_long = e.queue(&io(0, f, Op::Read, 0, 4097));
    assert!(matches!(too_long, Err(EngineError::BadUnit { .. })));
    let no_slot = e.queue(&io(2, f, Op::Read, 0, 1));
    assert!(matches!(no_slot, Err(EngineError::BadUnit { .. })));
    let no_file = e.queue(&io(0, FileId(9), Op::Read, 0, 1));
    assert!(matches!(no_file, Err(EngineError::UnknownFile(FileId(9)))));
    e.close(f).unwrap();
    let closed = e.queue(&io(0, f, Op::Fsync, 0, 0));
    assert!(matches!(closed, Err(EngineError::UnknownFile(_))));
}

fn syncs_complete(name: &str, dir: &Path) {
    let path = dir.join(format!("{name}.sync"));
    let mut e = create_named(name, &opts(1, 4096)).unwrap();
    let f = e.open(&spec(&path, true, true)).unwrap();
    fill(e.as_mut(), 0, 0, 4096, 1);
    assert_eq!(
        run(e.as_mut(), io(0, f, Op::Write, 0, 4096)).result,
        Ok(4096)
    );
    assert_eq!(run(e.as_mut(), io(0, f, Op::Fsync, 0, 0)).result, Ok(0));
    assert_eq!(run(e.as_mut(), io(0, f, Op::Fdatasync, 0, 0)).result, Ok(0));
    e.commit().unwrap();
    let mut out = Vec::new();
    e.reap(0, usize::MAX, &mut out).unwrap();
    assert!(out.is_empty());
}

/// Direct I/O where the test directory's filesystem takes it.
fn direct_io(name: &str, dir: &Path) {
    if !probe_o_direct(dir).unwrap_or(false) {
        iolab_testkit::skip_case!("{name} O_DIRECT: {} does not take O_DIRECT", dir.display());
        return;
    }
    let path = dir.join(format!("{name}.direct"));
    let mut e = create_named(name, &opts(2, 8192)).unwrap();
    for slot in 0..2 {
        let addr = e.buf(slot).as_ptr() as usize;
        assert_eq!(addr % crate::host::page_size() as usize, 0);
    }
    let mut s = spec(&path, true, true);
    s.direct = true;
    let f = e.open(&s).unwrap();
    for (slot, off) in [(0u32, 8192u64), (1, 0), (0, 4096)] {
        fill(e.as_mut(), slot, off, 4096, 7);
        assert_eq!(
            run(e.as_mut(), io(slot, f, Op::Write, off, 4096)).result,
            Ok(4096)
        );
    }
    for off in [0u64, 4096, 8192] {
        e.buf(1).fill(0);
        assert_eq!(
            run(e.as_mut(), io(1, f, Op::Read, off, 4096)).result,
            Ok(4096)
        );
        check(e.as_mut(), 1, off, 4096, 7);
    }
    // Unaligned offset and length: EINVAL from the kernel, as a completion.
    let c = run(e.as_mut(), io(0, f, Op::Read, 100, 4096));
    assert_eq!(
        c.result,
        Err(libc::EINVAL),
        "{name}: unaligned O_DIRECT offset"
    );
    let c = run(e.as_mut(), io(0, f, Op::Write, 0, 100));
    assert_eq!(
        c.result,
        Err(libc::EINVAL),
        "{name}: unaligned O_DIRECT length"
    );
    // And aligned I/O still works after them.
    assert_eq!(
        run(e.as_mut(), io(0, f, Op::Read, 0, 4096)).result,
        Ok(4096)
    );
    check(e.as_mut(), 0, 0, 4096, 7);
}

/// Everything a data-moving engine promises, one I/O at a time.
pub fn engine_contract(name: &str) {
    let dir = temp();
    pattern_round_trip(name, dir.path());
    short_read_at_eof(name, dir.path());
    errors_are_completions(name, dir.path());
    syncs_complete(name, dir.path());
    direct_io(name, dir.path());
    complete_now_is_the_completion(name, dir.path());
    reap_one_is_reap(name, dir.path());
}

/// `reap_one` hands back one at a time what `reap` does: for the same
/// I/Os in flight (a full read, a short one, one at the end of the file,
/// a write the read-only descriptor refuses) the same completions, and
/// None once nothing is in flight (at once for an engine whose I/O
/// completes inside `queue`); and so does `submit_one` for each I/O.
fn reap_one_is_reap(name: &str, dir: &Path) {
    // Buffered, then with O_DIRECT where the filesystem takes it: a queued
    // engine's reads then complete after the call that submits them, and
    // reap_one waits for them (io_getevents, io_uring_enter with
    // GETEVENTS). The second read is short in the 5000-byte file.
    for (direct, len, second) in [(false, 5000, 904), (true, 12288, 4096)] {
        if direct && !probe_o_direct(dir).unwrap_or(false) {
            iolab_testkit::skip_case!(
                "{name} reap_one with O_DIRECT: {} does not take it",
                dir.display()
            );
            return;
        }
        let path = dir.join(format!("{name}.one-{direct}"));
        std::fs::write(&path, vec![5u8; len]).expect("the test file is written");
        let results = reap_one_against_reap(name, &path, direct);
        assert_eq!(
            results,
            [
                (0, Ok(4096)),
                (1, Ok(second)),
                (2, Ok(0)),
                (3, Err(libc::EBADF))
            ],
            "{name} (direct: {direct})"
        );
    }
}

/// The completions (slot, result) of four I/Os on `path` (reads at 0,
/// 4096 and 12288, a write the read-only descriptor refuses), reaped one
/// by one with `reap_one` and with `reap(1, 1)`, and submitted one by one
/// with `submit_one`: the same, in slot order.
fn reap_one_against_reap(name: &str, path: &Path, direct: bool) -> Vec<(u32, Result<u32, i32>)> {
    let units = |f| {
        [
            io(0, f, Op::Read, 0, 4096),
            io(1, f, Op::Read, 4096, 4096),
            io(2, f, Op::Read, if direct { 12288 } else { 8192 }, 4096),
            io(3, f, Op::Write, 0, 4096),
        ]
    };
    // `each`: every I/O by submit_one, else all queued and committed at
    // once; `one`: reaped by reap_one, else by reap(1, 1).
    let completions = |each: bool, one: bool| {
        let mut e = create_named(name, &opts(4, 8192)).expect("the engine is made");
        let mut s = spec(path, true, false);
        s.direct = direct;
        let f = e.open(&s).expect("the test file opens");
        let mut got = Vec::new();
        for u in units(f) {
            let queued = if each {
                e.submit_one(&u).expect("submit_one")
            } else {
                e.queue(&u).expect("queue")
            };
            match queued {
                Queued::Completed(c) => got.push(c),
                Queued::InFlight => {}
                Queued::Busy => panic!("{name}: busy with 4 slots and 4 I/Os"),
            }
        }
        if !each {
            e.commit().expect("commit");
        }
        let queued = got.len();
        loop {
            let c = if one {
                e.reap_one().expect("reap_one")
            } else {
                let mut out = Vec::new();
                e.reap(1, 1, &mut out).expect("reap");
                assert!(out.len() <= 1, "{name}: reap(1, 1) gave {out:?}");
                out.pop()
            };
            let Some(c) = c else { break };
            got.push(c);
        }
        if e.caps().sync {
            assert_eq!(queued, 4, "{name}: every I/O completes inside queue");
        }
        assert_eq!(e.reap_one().expect("reap_one"), None, "{name}: none left");
        e.close(f).expect("the test file closes");
        got.sort_by_key(|c| c.slot);
        got
    };
    let one = completions(false, true);
    assert_eq!(one, completions(false, false), "{name} (direct: {direct})");
    assert_eq!(
        one,
        completions(true, true),
        "{name} by submit_one (direct: {direct})"
    );
    one.iter().map(|c| (c.slot, c.result)).collect()
}

/// `complete_now` gives what `queue` completes with (a full read, a short
/// one, an error) for an engine whose I/O completes inside the call, and a
/// caller's bad unit is an error as from `queue`; for a queued engine it
/// is an error that names the engine.
fn complete_now_is_the_completion(name: &str, dir: &Path) {
    let path = dir.join(format!("{name}.now"));
    std::fs::write(&path, vec![3u8; 5000]).expect("the test file is written");
    let mut e = create_named(name, &opts(1, 8192)).expect("the engine is made");
    let f = e
        .open(&spec(&path, true, false))
        .expect("the test file opens");
    let cases = || {
        [
            io(0, f, Op::Read, 0, 4096),
            io(0, f, Op::Read, 4096, 4096),
            io(0, f, Op::Write, 0, 4096),
        ]
    };
    if e.caps().sync {
        for (a, b) in cases().into_iter().zip(cases()) {
            let queued = run(e.as_mut(), a).result;
            let now = e.complete_now(&b).expect("a completion");
            assert_eq!(now, queued, "{name}: {b:?}");
        }
        let too_long = e.complete_now(&io(0, f, Op::Read, 0, 8193));
        assert!(
            matches!(too_long, Err(EngineError::BadUnit { .. })),
            "{name}"
        );
    } else {
        let err = e
            .complete_now(&cases()[0])
            .expect_err("a queued engine does not complete inside the call");
        assert!(
            matches!(err, EngineError::NotCompleted { .. }) && err.to_string().contains(name),
            "{name}: {err}"
        );
        e.commit().expect("commit");
        let mut out = Vec::new();
        e.reap(1, usize::MAX, &mut out).expect("reap");
    }
    e.close(f).expect("the test file closes");
}

/// A filesystem mounted for a test, unmounted (lazily) on drop.
pub struct Mount(pub PathBuf);

impl Mount {
    /// `mount -t FSTYPE -o size=16m FSTYPE DIR`, or `None` (with the reason)
    /// when that is not possible here.
    pub fn new(fstype: &str, dir: &Path) -> Result<Mount, String> {
        // SAFETY: geteuid takes no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root".to_string());
        }
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let out = std::process::Command::new("mount")
            .args(["-t", fstype, "-o", "size=16m", fstype])
            .arg(dir)
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t {fstype} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Mount(dir.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// A loop device over a file, detached on drop.
pub struct LoopDev(pub PathBuf);

impl LoopDev {
    /// `losetup --find --show FILE`, or why that is not possible here.
    pub fn new(backing: &Path) -> Result<LoopDev, String> {
        // SAFETY: geteuid takes no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root".to_string());
        }
        let out = std::process::Command::new("losetup")
            .args(["--find", "--show"])
            .arg(backing)
            .output()
            .map_err(|e| format!("losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "losetup failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok(LoopDev(PathBuf::from(dev)))
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .arg("-d")
            .arg(&self.0)
            .status();
    }
}
