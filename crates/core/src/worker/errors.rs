//! The C library's words for an errno (which errors a job goes on after
//! is the plan's `ErrorPolicy`).

use std::path::Path;

use iolab_engine::{errno_text, EngineKind, Op};
use iolab_stats::Dir;

/// strerror(3)'s text of an errno ("No space left on device").
pub(crate) fn strerror(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    match text.strip_suffix(&format!(" (os error {errno})")) {
        Some(t) => t.to_string(),
        None => text,
    }
}

/// What a failed I/O of `engine` was, for the job's error: the call and
/// its file, offset and length as the engine made it, and the errno once
/// ("EIO (Input/output error) on read of 4096 bytes at offset 0 in `f`").
pub(crate) fn io_failure(
    engine: EngineKind,
    dir: Dir,
    len: u64,
    offset: u64,
    path: &Path,
    errno: i32,
) -> String {
    let (err, path) = (errno_text(errno), path.display());
    match (engine, dir) {
        (EngineKind::Falloc, _) => {
            let op = match dir {
                Dir::Read => Op::Read,
                Dir::Write => Op::Write,
                Dir::Trim => Op::Trim,
            };
            let mode = iolab_engine::falloc_mode_name(op);
            format!(
                "{err} on fallocate(2) ({mode}) of {len} bytes at offset {offset} in `{path}` \
                 (falloc, a {})",
                dir.key()
            )
        }
        (EngineKind::Ftruncate, Dir::Write) => {
            format!("{err} on ftruncate(2) of `{path}` to {offset} bytes (ftruncate)")
        }
        (EngineKind::Ftruncate, _) => format!(
            "{err} on a {} at offset {offset} in `{path}`: the ftruncate engine only truncates, \
             on writes",
            dir.key()
        ),
        _ => format!(
            "{err} on {} of {len} bytes at offset {offset} in `{path}`",
            dir.key()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_io_names_its_call_file_offset_and_length_and_the_errno_once() {
        let p = Path::new("/mnt/f");
        let m = io_failure(EngineKind::Psync, Dir::Read, 4096, 8192, p, libc::EIO);
        assert_eq!(
            m,
            "EIO (Input/output error) on read of 4096 bytes at offset 8192 in `/mnt/f`"
        );
        let m = io_failure(EngineKind::Falloc, Dir::Trim, 4096, 0, p, libc::EOPNOTSUPP);
        assert!(m.starts_with("EOPNOTSUPP ("), "{m}");
        assert!(
            m.contains("on fallocate(2) (FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE) of 4096 bytes at offset 0 in `/mnt/f`"),
            "{m}"
        );
        let m = io_failure(
            EngineKind::Ftruncate,
            Dir::Write,
            4096,
            65536,
            p,
            libc::EFBIG,
        );
        assert!(
            m.contains("on ftruncate(2) of `/mnt/f` to 65536 bytes"),
            "{m}"
        );
        let m = io_failure(EngineKind::Ftruncate, Dir::Read, 4096, 0, p, libc::EINVAL);
        assert!(m.contains("only truncates, on writes"), "{m}");
        for m in [
            m,
            io_failure(EngineKind::IoUring, Dir::Write, 1, 2, p, libc::ENOSPC),
        ] {
            assert!(!m.contains("read/write") && !m.contains("errno "), "{m}");
            assert_eq!(m.matches('(').count(), 1, "the errno's text once: {m}");
        }
    }

    #[test]
    fn strerror_is_the_c_librarys_text() {
        assert_eq!(strerror(28), "No space left on device");
        assert_eq!(strerror(5), "Input/output error");
    }
}
