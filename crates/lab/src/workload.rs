//! One workload run: its job text parsed with iolab-spec (the lab's
//! variables `${IOLAB_DIR}`, `${IOLAB_SIZE}`, `${IOLAB_SIZE_16}` and
//! `${IOLAB_RUNTIME}` filled in), planned and run by iolab-core, the
//! `RunResult` handed back. A user's job file runs unchanged except that
//! its files land in the target: `directory` is the target's directory
//! (a relative one goes under it), and any file that would land outside
//! it (an absolute `filename` or `directory` elsewhere, a relative one
//! with `..` that climbs out, a `filename_format` or job name that does)
//! is an error naming the job file, the option and the path, found before
//! anything is created.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use iolab_core::probe::resolve_existing;
use iolab_core::{plan, run};
use iolab_spec::filename::{expand_filename_format, DEFAULT_FORMAT};
use iolab_spec::{parse_text, Context, Host, JobSet, JobSpec, Location, Opt, Value};
use iolab_stats::RunResult;

use crate::error::LabError;
use crate::suite::Workload;

/// Where and how big one workload runs.
#[derive(Clone, Debug)]
pub struct Params<'a> {
    /// The directory its files go in.
    pub dir: &'a Path,
    /// How messages name that directory: "target `A`'s work directory
    /// /mnt/a/iolab-compare-12-1", "the filesystem of target `ext4`".
    pub place: &'a str,
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
    make_parents(&plan, p.dir).map_err(fail)?;
    let outcome = run::run(&plan, stop, &mut |_| {}).map_err(|e| fail(e.to_string()))?;
    if outcome.result.interrupted {
        return Err(LabError::Interrupted);
    }
    if let Some(f) = outcome.failure {
        return Err(fail(f));
    }
    Ok(outcome.result)
}

/// Parses and plans `w` for `p.dir` (also the check before a campaign,
/// which creates nothing: a plan only looks at the disk).
pub fn plan_of(w: &Workload, p: &Params) -> Result<plan::Plan, String> {
    let name = match &w.source {
        Some(path) => path.display().to_string(),
        None => w.name.clone(),
    };
    let mut jobs = parse_text(&name, &w.job, &context(p)).map_err(|e| e.to_string())?;
    if w.source.is_some() {
        redirect(&mut jobs, p.dir, &name, p.place)?;
    }
    let plan = plan::build(&jobs).map_err(|e| e.to_string())?;
    if w.source.is_some() {
        // Whatever else names a file (an option the checks above do not
        // know): no file of the plan may be outside the target either.
        if let Some(f) = plan.files.iter().find(|f| !inside(&f.path, p.dir)) {
            return Err(format!(
                "job file `{name}`: the file `{}` is outside {}; use paths inside it",
                f.path.display(),
                p.place
            ));
        }
    }
    Ok(plan)
}

/// Creates the missing parent directories of the plan's files that are
/// inside `dir` (`directory=sub`, `filename=sub/data`).
fn make_parents(plan: &plan::Plan, dir: &Path) -> Result<(), String> {
    for f in &plan.files {
        let Some(parent) = f.path.parent() else {
            continue;
        };
        if inside(parent, dir) && !parent.exists() && dir.is_dir() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
        }
    }
    Ok(())
}

/// Whether `p` is `dir` or below it, once both are resolved as the
/// kernel would: `.` and `..` taken out, and the symbolic links among
/// their existing parts followed (a link in the target that points
/// elsewhere leads outside).
pub fn inside(p: &Path, dir: &Path) -> bool {
    resolve_existing(p).starts_with(resolve_existing(dir))
}

/// Puts a user's jobs' files in `dir`: `directory` becomes `dir` (or a
/// directory under it); a `directory`, `filename`, `filename_format` or
/// job name that would put a file outside `dir` is refused, naming the
/// job file `source`, the job, the option and the path; `place` names
/// `dir` in the message.
pub fn redirect(jobs: &mut JobSet, dir: &Path, source: &str, place: &str) -> Result<(), String> {
    for j in &mut jobs.jobs {
        let outside = |what: &str, value: &str, lands: &Path| {
            let mut m = format!(
                "job file `{source}`, job `{}`: {what} `{value}` is outside {place}",
                j.name
            );
            if Path::new(value) != lands {
                m.push_str(&format!(
                    " (it lands at {})",
                    resolve_existing(lands).display()
                ));
            }
            m.push_str("; use a relative path that stays inside it");
            m
        };
        let target: PathBuf = match j.text(Opt::Directory).filter(|d| !d.is_empty()) {
            None => dir.to_path_buf(),
            Some(d) => {
                let t = dir.join(&d);
                if !inside(&t, dir) {
                    return Err(outside("directory", &d, &t));
                }
                t
            }
        };
        for (what, written, name) in file_names(j) {
            let lands = target.join(&name);
            if !inside(&lands, dir) {
                return Err(outside(what, &written, &lands));
            }
        }
        j.set(
            Opt::Directory,
            Value::Str(target.display().to_string()),
            Location::Builtin,
        );
    }
    Ok(())
}

/// The file names a job gives: (option, its text, the name it makes).
/// Every `filename`, else the first file by `filename_format` (or fio's
/// default format, which holds the job's name). The placeholders other
/// than the job name expand to numbers, so one expansion shows where
/// every clone's files go.
fn file_names(j: &JobSpec) -> Vec<(&'static str, String, String)> {
    if let Some(Value::Files(files)) = j.get(Opt::Filename) {
        return files
            .iter()
            .map(|f| ("filename", f.clone(), f.clone()))
            .collect();
    }
    let (what, written, format) = match j.text(Opt::FilenameFormat).filter(|f| !f.is_empty()) {
        Some(f) if f != DEFAULT_FORMAT => ("filename_format", f.clone(), f),
        _ => ("job name", j.section.clone(), DEFAULT_FORMAT.to_string()),
    };
    let name = expand_filename_format(&format, &j.section, 0, 0);
    vec![(what, written, name)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_stats::Dir;

    /// Small runs in `dir`, named `place` in messages.
    fn params<'a>(dir: &'a Path, place: &'a str) -> Params<'a> {
        Params {
            dir,
            place,
            file_size: 1 << 20,
            runtime_s: 1,
            host: Host::EXAMPLE,
        }
    }

    #[test]
    fn runs_a_tiny_job_in_a_directory() {
        let d = tempfile::tempdir().unwrap();
        let w = Workload {
            name: "w".into(),
            job: "[global]\ndirectory=${IOLAB_DIR}\nsize=${IOLAB_SIZE}\nunlink=1\n[w]\nrw=write\nbs=64k\n".into(),
            ..Default::default()
        };
        let p = params(d.path(), "the test's directory");
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
        let p = params(&target, "the target");
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

    /// Every path under `d`, relative, sorted.
    fn tree(d: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut todo = vec![d.to_path_buf()];
        while let Some(dir) = todo.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                out.push(p.strip_prefix(d).unwrap().display().to_string());
                if p.is_dir() {
                    todo.push(p);
                }
            }
        }
        out.sort();
        out
    }

    /// A job file in `d/jobs/x.fio`, the target `d/target` (with one
    /// file of the user's in `d`, beside it).
    fn escape_setup(d: &Path) -> (PathBuf, PathBuf) {
        let target = d.join("target");
        std::fs::create_dir_all(&target).unwrap();
        std::fs::create_dir_all(d.join("jobs")).unwrap();
        std::fs::write(d.join("user-file"), b"keep").unwrap();
        (target, d.join("jobs/x.fio"))
    }

    #[test]
    fn no_option_puts_files_outside_the_target() {
        let d = tempfile::tempdir().unwrap();
        let (target, file) = escape_setup(d.path());
        let p = params(&target, "target `A` (its files go in DIR)");
        let outside_dir = d.path().join("elsewhere");
        let format = format!("{}/ESCAPED.$jobnum", outside_dir.display());
        for (job, named) in [
            ("filename=../escaped-file", "filename `../escaped-file`"),
            (
                "filename=ok:sub/../../escaped",
                "filename `sub/../../escaped`",
            ),
            ("directory=../escaped", "directory `../escaped`"),
            ("directory=sub/../..", "directory `sub/../..`"),
            ("directory=../target-x", "directory `../target-x`"),
            (
                &*format!("filename_format={format}"),
                &*format!("filename_format `{format}`"),
            ),
            (
                "filename_format=../$jobname.$jobnum",
                "filename_format `../$jobname.$jobnum`",
            ),
            (
                "directory=sub\nfilename_format=../../up.$filenum",
                "filename_format `../../up.$filenum`",
            ),
        ] {
            let text = format!("[w]\nrw=write\nbs=4k\nsize=64k\n{job}\n");
            std::fs::write(&file, &text).unwrap();
            let w = Workload::from_file(&file).unwrap();
            let e = run(&w, &p, &AtomicBool::new(false))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("job file `{}`, job `w`", file.display()))
                    && e.contains(named)
                    && e.contains("is outside target `A`"),
                "{job}: {e}"
            );
            // Nothing was made, inside the target or beside it.
            let left = tree(d.path());
            assert_eq!(left, ["jobs", "jobs/x.fio", "target", "user-file"], "{job}");
        }
        // A relative path may wander as long as it ends inside.
        std::fs::write(
            &file,
            "[w]\nrw=write\nbs=4k\nsize=64k\ndirectory=a/../b\nfilename=c/../d\n",
        )
        .unwrap();
        let w = Workload::from_file(&file).unwrap();
        run(&w, &p, &AtomicBool::new(false)).unwrap();
        assert!(target.join("b/d").is_file());
    }

    #[test]
    fn a_link_in_the_target_that_leads_out_is_outside() {
        let d = tempfile::tempdir().unwrap();
        let (target, file) = escape_setup(d.path());
        std::fs::create_dir(d.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(d.path().join("elsewhere"), target.join("link")).unwrap();
        std::os::unix::fs::symlink("sub", target.join("inner")).unwrap();
        let p = params(&target, "the target");
        for (job, refused) in [
            ("directory=link", true),
            ("filename=link/f", true),
            ("directory=inner", false),
        ] {
            std::fs::write(&file, format!("[w]\nrw=write\nbs=4k\nsize=64k\n{job}\n")).unwrap();
            let w = Workload::from_file(&file).unwrap();
            let e = plan_of(&w, &p).err();
            assert_eq!(e.is_some(), refused, "{job}: {e:?}");
            if let Some(e) = e {
                let lands = d.path().canonicalize().unwrap().join("elsewhere");
                assert!(
                    e.contains(&format!(
                        "is outside the target (it lands at {}",
                        lands.display()
                    )),
                    "{e}"
                );
            }
        }
        // Nothing was made through the link.
        assert_eq!(tree(&d.path().join("elsewhere")), Vec::<String>::new());
    }

    #[test]
    fn a_job_name_cannot_climb_out() {
        let d = tempfile::tempdir().unwrap();
        let (target, file) = escape_setup(d.path());
        std::fs::write(&file, "[../up]\nrw=write\nbs=4k\nsize=64k\n").unwrap();
        let w = Workload::from_file(&file).unwrap();
        let p = params(&target, "the target");
        let e = plan_of(&w, &p).unwrap_err();
        assert!(
            e.contains("job `../up`: job name `../up` is outside the target (it lands at ")
                && e.contains("/up.0.0)"),
            "{e}"
        );
    }
}
