//! fio's `exec` engine: moves no data and opens no file; it runs a program
//! beside the job. The job's first I/O starts the program (its standard
//! output and error go to `NAME.stdout` and `NAME.stderr` with
//! `std_redirect`, the default); each later I/O waits 50 ms, and once the
//! job's runtime is over sends the program SIGTERM and waits `grace_time`
//! for it to finish. When the job ends, a program still running is killed
//! (SIGKILL), as fio's cleanup does.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::null::FileSlots;
use crate::{
    BufPool, Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit, Queued,
};

/// What the engine runs, fixed by the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecSpec {
    /// The program, looked up in PATH when it has no slash.
    pub program: String,
    /// Its arguments, `%r` and `%n` already replaced.
    pub args: Vec<String>,
    /// Standard output and error to these files (None: inherited).
    pub redirect: Option<(PathBuf, PathBuf)>,
    /// The job's runtime, after which the program is told to stop.
    pub runtime: Duration,
    /// How long the program has to stop after SIGTERM.
    pub grace: Duration,
}

impl ExecSpec {
    /// fio's splitting of `arguments=`: on spaces, with `%r` the runtime in
    /// whole seconds and `%n` the job's name.
    pub fn split_arguments(text: &str, runtime: Duration, name: &str) -> Vec<String> {
        let text = text
            .replace("%r", &runtime.as_secs().to_string())
            .replace("%n", name);
        text.split(' ')
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect()
    }
}

/// The wait between two looks at the program (fio's 50 ms).
const POLL: Duration = Duration::from_millis(50);

pub(crate) struct ExecEngine {
    spec: ExecSpec,
    bufs: BufPool,
    open: FileSlots,
    child: Option<Child>,
    started: Option<Instant>,
}

impl ExecEngine {
    pub fn new(spec: ExecSpec, opts: &EngineOpts) -> Result<Self, EngineError> {
        Ok(Self {
            spec,
            bufs: BufPool::new(1, opts.buf_size, opts.align)?,
            open: FileSlots::default(),
            child: None,
            started: None,
        })
    }

    fn spawn(&mut self) -> std::io::Result<()> {
        let mut cmd = Command::new(&self.spec.program);
        cmd.args(&self.spec.args).stdin(Stdio::null());
        if let Some((out, err)) = &self.spec.redirect {
            let open = |p: &PathBuf| {
                OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o644)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(p)
            };
            cmd.stdout(open(out)?).stderr(open(err)?);
        }
        self.child = Some(cmd.spawn()?);
        Ok(())
    }

    fn signal(&mut self, sig: libc::c_int) {
        if let Some(child) = &mut self.child {
            if matches!(child.try_wait(), Ok(None)) {
                if let Ok(pid) = libc::pid_t::try_from(child.id()) {
                    // SAFETY: kill takes no pointers; the pid is our own
                    // child's, not yet reaped, so it names no other process.
                    unsafe { libc::kill(pid, sig) };
                }
            }
        }
    }
}

impl Drop for ExecEngine {
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
        if let Some(child) = &mut self.child {
            let _ = child.wait();
        }
    }
}

impl Engine for ExecEngine {
    fn name(&self) -> &'static str {
        "exec"
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            needs_buffers: false,
            vectored: false,
        }
    }

    fn open(&mut self, _file: &FileSpec) -> Result<FileId, EngineError> {
        self.open.open()
    }

    fn close(&mut self, file: FileId) -> Result<(), EngineError> {
        self.open.close(file)
    }

    fn queue(&mut self, io: &IoUnit) -> Result<Queued, EngineError> {
        let mut result = Ok(io.len);
        match self.started {
            None => {
                self.started = Some(Instant::now());
                if let Err(e) = self.spawn() {
                    result = Err(e.raw_os_error().unwrap_or(libc::ENOENT));
                }
            }
            Some(t0) => {
                std::thread::sleep(POLL);
                if t0.elapsed() > self.spec.runtime {
                    self.signal(libc::SIGTERM);
                    std::thread::sleep(self.spec.grace);
                }
            }
        }
        Ok(Queued::Completed(Completion {
            slot: io.slot,
            result,
        }))
    }

    fn buf(&mut self, _slot: u32) -> &mut [u8] {
        self.bufs.slot(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Op;

    #[test]
    fn arguments_split_on_spaces_with_runtime_and_name() {
        assert_eq!(
            ExecSpec::split_arguments("-c  %n:%r x", Duration::from_secs(3), "job"),
            ["-c", "job:3", "x"]
        );
    }

    #[test]
    fn the_program_runs_with_its_output_redirected_and_is_stopped_after_the_runtime() {
        let dir = crate::testutil::temp();
        let (out, err) = (dir.path().join("j.stdout"), dir.path().join("j.stderr"));
        let spec = ExecSpec {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                "echo up; echo oops >&2; trap 'echo term; exit 0' TERM; while :; do sleep 0.01; done"
                    .into(),
            ],
            redirect: Some((out.clone(), err.clone())),
            runtime: Duration::ZERO,
            grace: Duration::from_secs(1),
        };
        let mut e = ExecEngine::new(spec, &EngineOpts::default()).unwrap();
        let f = e.open(&FileSpec::default()).unwrap();
        let unit = IoUnit {
            slot: 0,
            file: f,
            op: Op::Read,
            offset: 0,
            len: 0,
        };
        for _ in 0..2 {
            assert!(matches!(
                e.queue(&unit).unwrap(),
                Queued::Completed(Completion { result: Ok(0), .. })
            ));
        }
        // The second I/O came after the runtime: SIGTERM, and the grace
        // time for the program to answer it.
        drop(e);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "up\nterm\n");
        assert_eq!(std::fs::read_to_string(&err).unwrap(), "oops\n");
    }

    #[test]
    fn a_missing_program_is_the_first_ios_error() {
        let spec = ExecSpec {
            program: "/nonexistent/program".into(),
            args: Vec::new(),
            redirect: None,
            runtime: Duration::from_secs(1),
            grace: Duration::ZERO,
        };
        let mut e = ExecEngine::new(spec, &EngineOpts::default()).unwrap();
        let f = e.open(&FileSpec::default()).unwrap();
        let unit = IoUnit {
            slot: 0,
            file: f,
            op: Op::Read,
            offset: 0,
            len: 0,
        };
        assert!(matches!(
            e.queue(&unit).unwrap(),
            Queued::Completed(Completion {
                result: Err(libc::ENOENT),
                ..
            })
        ));
    }
}
