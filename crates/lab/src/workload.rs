//! One workload run: its job text parsed with iolab-spec (the lab's
//! variables `${IOLAB_DIR}`, `${IOLAB_SIZE}`, `${IOLAB_SIZE_16}` and
//! `${IOLAB_RUNTIME}` filled in), planned and run by iolab-core, the
//! `RunResult` handed back. A user's job file runs unchanged except that
//! its files land in the target: `directory` is the target's directory
//! (a relative one goes under it), and an absolute `filename` or
//! `directory` outside the target is an error that names it.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use iolab_core::spec::{parse_text, Context, Host, JobSet, Location, Opt, Value};
use iolab_core::{plan, run};
use iolab_stats::RunResult;

use crate::error::LabError;
use crate::suite::Workload;

/// Where and how big one workload runs.
#[derive(Clone, Debug)]
pub struct Params<'a> {
    /// The directory its files go in.
    pub dir: &'a Path,
    /// Bytes of one job's file.
    pub file_size: u64,
    /// Seconds it runs.
    pub runtime_s: u64,
    pub host: Host,
}

/// The variables a suite's job text reads.
pub fn context(p: &Params) -> Context {
    let mut ctx = Context::fixed(p.host);
    let small = (p.file_size / 16).max(1 << 20) >> 12 << 12;
    for (k, v) in [
        ("IOLAB_DIR", p.dir.display().to_string()),
        ("IOLAB_SIZE", p.file_size.to_string()),
        ("IOLAB_SIZE_16", small.to_string()),
        ("IOLAB_RUNTIME", p.runtime_s.max(1).to_string()),
    ] {
        ctx.vars.insert(k.to_string(), v);
    }
    ctx
}

/// Runs `w` in `p.dir`; a job error fails the workload.
pub fn run(w: &Workload, p: &Params, stop: &AtomicBool) -> Result<RunResult, LabError> {
    let fail = |reason: String| LabError::Workload {
        name: w.name.clone(),
        reason,
    };
    let plan = plan_of(w, p).map_err(fail)?;
    let outcome = run::run(&plan, stop, &mut |_| {}).map_err(|e| fail(e.to_string()))?;
    if outcome.result.interrupted {
        return Err(LabError::Interrupted);
    }
    if let Some(f) = outcome.failure {
        return Err(fail(f));
    }
    Ok(outcome.result)
}

/// Parses and plans `w` for `p.dir` (also the check before a campaign).
pub fn plan_of(w: &Workload, p: &Params) -> Result<plan::Plan, String> {
    let name = match &w.source {
        Some(path) => path.display().to_string(),
        None => w.name.clone(),
    };
    let mut jobs = parse_text(&name, &w.job, &context(p)).map_err(|e| e.to_string())?;
    if w.source.is_some() {
        redirect(&mut jobs, p.dir)?;
    }
    plan::build(&jobs).map_err(|e| e.to_string())
}

/// Puts a user's jobs' files in `dir`: `directory` becomes `dir` (or a
/// sub-directory of it, made here); absolute paths outside `dir` are
/// refused with the job and path named.
pub fn redirect(jobs: &mut JobSet, dir: &Path) -> Result<(), String> {
    let outside = |what: &str, job: &str, path: &str| {
        format!(
            "job `{job}`: {what} `{path}` is outside the target {}; use a relative path",
            dir.display()
        )
    };
    for j in &mut jobs.jobs {
        let target: PathBuf = match j.text(Opt::Directory).filter(|d| !d.is_empty()) {
            None => dir.to_path_buf(),
            Some(d) if Path::new(&d).is_absolute() => {
                if !Path::new(&d).starts_with(dir) {
                    return Err(outside("directory", &j.name, &d));
                }
                PathBuf::from(d)
            }
            Some(d) => dir.join(d),
        };
        if let Some(Value::Files(files)) = j.get(Opt::Filename) {
            for f in files {
                let fp = Path::new(f);
                if fp.is_absolute() && !fp.starts_with(dir) {
                    return Err(outside("filename", &j.name, f));
                }
            }
        }
        if target.starts_with(dir) && target != dir && dir.is_dir() {
            std::fs::create_dir_all(&target)
                .map_err(|e| format!("cannot create `{}`: {e}", target.display()))?;
        }
        j.set(
            Opt::Directory,
            Value::Str(target.display().to_string()),
            Location::Builtin,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_stats::Dir;

    #[test]
    fn runs_a_tiny_job_in_a_directory() {
        let d = tempfile::tempdir().unwrap();
        let w = Workload {
            name: "w".into(),
            about: String::new(),
            job: "[global]\ndirectory=${IOLAB_DIR}\nsize=${IOLAB_SIZE}\nunlink=1\n[w]\nrw=write\nbs=64k\n".into(),
            source: None,
            meta_files: None,
        };
        let p = Params {
            dir: d.path(),
            file_size: 1 << 20,
            runtime_s: 1,
            host: Host {
                page_size: 4096,
                mb_memory: 1024,
                ncpus: 2,
            },
        };
        let stop = AtomicBool::new(false);
        let r = run(&w, &p, &stop).unwrap();
        assert_eq!(r.jobs[0].dir(Dir::Write).io_bytes, 1 << 20);
        // unlink=1: nothing left behind.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);

        let bad = Workload {
            job: "[w]\nrw=wirte\n".into(),
            ..w
        };
        let e = run(&bad, &p, &stop).unwrap_err().to_string();
        assert!(e.starts_with("workload `w`:"), "{e}");
    }

    #[test]
    fn user_job_files_land_in_the_target() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let file = d.path().join("mine.fio");
        std::fs::write(
            &file,
            "[a]\ndirectory=sub\nfilename=data\nrw=write\nbs=4k\nsize=64k\n\
             [b]\nrw=write\nbs=4k\nsize=64k\n",
        )
        .unwrap();
        let w = Workload::from_file(&file).unwrap();
        assert_eq!(w.name, "mine");
        let p = Params {
            dir: &target,
            file_size: 1 << 20,
            runtime_s: 1,
            host: Host {
                page_size: 4096,
                mb_memory: 1024,
                ncpus: 2,
            },
        };
        let r = run(&w, &p, &AtomicBool::new(false)).unwrap();
        assert_eq!(r.jobs.len(), 2);
        assert_eq!(
            std::fs::metadata(target.join("sub/data")).unwrap().len(),
            64 << 10
        );
        assert!(target.join("b.0.0").is_file());
        // Nothing next to the job file.
        assert!(!d.path().join("sub").exists() && !d.path().join("b.0.0").exists());

        for (text, named) in [
            (
                "[c]\nfilename=/etc/iolab-x\nrw=read\nsize=4k\n",
                "filename `/etc/iolab-x`",
            ),
            (
                "[c]\ndirectory=/var/tmp\nrw=read\nsize=4k\n",
                "directory `/var/tmp`",
            ),
        ] {
            std::fs::write(&file, text).unwrap();
            let w = Workload::from_file(&file).unwrap();
            let e = plan_of(&w, &p).unwrap_err();
            assert!(e.contains(named) && e.contains("outside the target"), "{e}");
        }
    }
}
