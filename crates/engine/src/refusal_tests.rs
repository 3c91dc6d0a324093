//! Engines the kernel refuses: a seccomp filter on the test's own thread
//! makes one system call fail with EPERM (as a container's profile does),
//! and each engine built on it must fail at creation with an error that
//! names the engine, the system call, the errno and an engine that works.
//! A filter applies to the thread that installs it and to nothing else,
//! so the other tests of the process are untouched.

use crate::testutil::opts;
use crate::{create_named, EngineError};
use iolab_testkit::{need, Missing};

/// Runs `f` on a new thread on which system call `nr` fails with EPERM;
/// None when the kernel does not let the filter be installed.
fn with_syscall_refused<T: Send + 'static>(
    nr: libc::c_long,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    std::thread::spawn(move || {
        // Classic BPF: load the syscall number (offset 0 of seccomp_data),
        // return EPERM when it is `nr`, allow everything else.
        const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
        const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
        const RET_K: u16 = 0x06; // BPF_RET | BPF_K
        const RET_ERRNO: u32 = 0x0005_0000; // SECCOMP_RET_ERRNO
        const RET_ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
        let mut prog = [
            libc::sock_filter {
                code: LD_W_ABS,
                jt: 0,
                jf: 0,
                k: 0,
            },
            libc::sock_filter {
                code: JEQ_K,
                jt: 0,
                jf: 1,
                k: nr as u32,
            },
            libc::sock_filter {
                code: RET_K,
                jt: 0,
                jf: 0,
                k: RET_ERRNO | libc::EPERM as u32,
            },
            libc::sock_filter {
                code: RET_K,
                jt: 0,
                jf: 0,
                k: RET_ALLOW,
            },
        ];
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_mut_ptr(),
        };
        // SAFETY: prctl with integer arguments only; no_new_privs is what
        // an unprivileged filter needs, and it stays on this thread.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return None;
        }
        // SAFETY: `fprog` points at `prog`, both live across the call; the
        // kernel copies the program.
        let rc = unsafe {
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &fprog as *const libc::sock_fprog,
            )
        };
        (rc == 0).then(f)
    })
    .join()
    .expect("the filtered thread")
}

/// The error creating `engine` gives with system call `nr` refused; why
/// not when this kernel takes no seccomp filter.
fn refusal(engine: &'static str, nr: libc::c_long) -> Result<EngineError, Missing> {
    match with_syscall_refused(nr, move || create_named(engine, &opts(8, 4096)).err()) {
        None => Err(Missing::here("this kernel does not take a seccomp filter")),
        Some(None) => panic!("{engine} was created with its setup call refused"),
        Some(Some(e)) => Ok(e),
    }
}

#[test]
fn io_uring_refused_by_seccomp_names_the_errno_and_a_working_engine() {
    let e = need!(refusal("io_uring", libc::SYS_io_uring_setup));
    assert!(
        matches!(
            e,
            EngineError::Refused {
                engine: "io_uring",
                errno: libc::EPERM,
                ..
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    for want in ["io_uring", "io_uring_setup", "EPERM", "ioengine=psync"] {
        assert!(text.contains(want), "`{want}` missing from: {text}");
    }
}

#[test]
fn libaio_refused_by_seccomp_names_the_errno_and_a_working_engine() {
    let e = need!(refusal("libaio", libc::SYS_io_setup));
    let text = e.to_string();
    assert!(
        matches!(
            e,
            EngineError::Refused {
                engine: "libaio",
                errno: libc::EPERM,
                ..
            }
        ),
        "{e:?}"
    );
    for want in ["libaio", "io_setup", "EPERM", "ioengine=psync"] {
        assert!(text.contains(want), "`{want}` missing from: {text}");
    }
}

#[test]
fn the_filter_refuses_only_its_own_thread() {
    // The same engine is created fine on this thread while another thread
    // is refused: the tests above cannot leak into the rest of the suite.
    assert!(refusal("io_uring", libc::SYS_io_uring_setup).is_ok());
    assert!(create_named("io_uring", &opts(8, 4096)).is_ok());
}
