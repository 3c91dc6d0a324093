//! `EngineError`: why an engine could not be set up or used. An error of a
//! single I/O is not here; it travels as the errno of its `Completion`.

use std::path::PathBuf;

use crate::{EngineKind, FileId};

/// A setup failure or a caller bug, never the error of one I/O.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// open(2) failed. `message` says why in the user's terms (for O_DIRECT
    /// on a filesystem without it: which filesystem, and to use direct=0).
    #[error("{message}")]
    Open {
        path: PathBuf,
        errno: i32,
        message: String,
    },
    /// close(2) reported an error (a deferred write-back error, say).
    #[error("close {}: {}", path.display(), errno_text(*errno))]
    Close { path: PathBuf, errno: i32 },
    #[error(
        "unknown ioengine '{name}'; iolab has: {}",
        EngineKind::implemented_names()
    )]
    UnknownEngine { name: String },
    #[error(
        "ioengine '{name}' is a fio engine that iolab does not implement yet{}; iolab has: {}",
        better_engine(name),
        EngineKind::implemented_names()
    )]
    NotImplemented { name: String },
    /// The kernel refuses a system call the engine is built on (too old a
    /// kernel, a seccomp filter, io_uring disabled by sysctl). `hint` says
    /// what works instead ("use ioengine=psync instead").
    #[error("ioengine {engine}: the kernel refuses {syscall}: {}; {hint}", errno_text(*errno))]
    Refused {
        engine: &'static str,
        syscall: &'static str,
        errno: i32,
        hint: &'static str,
    },
    #[error("ioengine {name} queued an I/O instead of completing it")]
    NotCompleted { name: &'static str },
    #[error("invalid engine options: {0}")]
    Options(String),
    #[error("cannot allocate {bytes} bytes of I/O buffers aligned to {align}")]
    OutOfMemory { bytes: usize, align: usize },
    /// A caller bug: the file was never opened or is closed.
    #[error("I/O names file {} which is not open", .0 .0)]
    UnknownFile(FileId),
    /// A caller bug: the slot does not exist or `len` exceeds its buffer.
    #[error("I/O on slot {slot} of {len} bytes does not fit {slots} buffers of {size} bytes")]
    BadUnit {
        slot: u32,
        len: u32,
        slots: usize,
        size: usize,
    },
}

/// A pointer to the engine that does the same job better, where there is
/// one.
fn better_engine(name: &str) -> &'static str {
    match name {
        // glibc's POSIX AIO runs each request on a helper thread; the
        // kernel's own queues do what it imitates.
        "posixaio" => {
            " (it emulates asynchronous I/O with threads: use ioengine=io_uring or ioengine=libaio)"
        }
        "vsync" => " (use ioengine=pvsync, which also moves data through an iovec)",
        _ => "",
    }
}

impl EngineError {
    /// The errno behind the error, for fio's per-job `error` field (EINVAL
    /// for errors that are not a system call's).
    pub fn errno(&self) -> i32 {
        match self {
            EngineError::Open { errno, .. }
            | EngineError::Close { errno, .. }
            | EngineError::Refused { errno, .. } => *errno,
            EngineError::OutOfMemory { .. } => libc::ENOMEM,
            _ => libc::EINVAL,
        }
    }
}

/// The errno's symbolic name, for the common I/O errors.
pub fn errno_name(errno: i32) -> Option<&'static str> {
    Some(match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ENOSYS => "ENOSYS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EDQUOT => "EDQUOT",
        _ => return None,
    })
}

/// `EINVAL (Invalid argument)`: the name where known and the C library's text.
pub fn errno_text(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    // std appends " (os error N)"; the name says the same more usefully.
    let text = text
        .strip_suffix(&format!(" (os error {errno})"))
        .unwrap_or(&text)
        .to_string();
    match errno_name(errno) {
        Some(name) => format!("{name} ({text})"),
        None => format!("errno {errno} ({text})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_text_names_the_errno() {
        assert_eq!(errno_text(libc::EINVAL), "EINVAL (Invalid argument)");
        assert!(errno_text(9999).starts_with("errno 9999 ("));
    }
}
