//! The files of one job clone: each with its offset generators, opened
//! through the clone's engine, and `file_service_type` choosing the file
//! of each I/O among the open ones, at most `openfiles` of them. A file is
//! done for the pass once the clone has moved its region's bytes in it
//! (fio's "file done"): it is skipped from then on, and closed when fewer
//! files may be open than there are, so the next one can be opened. When
//! every file is done a new pass begins. With one file all of this is one
//! predictable branch per I/O; opening and closing happen only when the
//! service moves to a file that is not open.
//!
//! fio's skewed choices (`file_service_type=zipf`, `pareto`, `normal`)
//! draw the file from an unhashed skewed generator over `nrfiles << 10`
//! ranges; their files are never done (fio resets a file whose offsets
//! run out and keeps it in service), so only the job's bytes end a pass.

use iolab_engine::{Engine, EngineError, FileId, FileSpec};

use crate::gen::fiodist::FioSkew;
use crate::gen::{Frand, OffsetGen, Rng};
use crate::plan::FileService;

/// One file of the clone.
pub(crate) struct WFile {
    /// The engine's handle, valid while `open`.
    pub id: FileId,
    pub open: bool,
    /// Index into the plan's files.
    pub path_index: usize,
    /// Random directions share one generator, as fio's random map is per
    /// file: a randrw pass reads or writes each block once, never both.
    /// Sequential directions each keep their own position, as fio's do.
    pub gens: Vec<OffsetGen>,
    /// Which of `gens` each direction uses.
    pub gen_of: [Option<usize>; 3],
    pub spec: FileSpec,
    /// The bytes of the file's region: a pass is done when this many have
    /// gone to it.
    pub len: u64,
    pass_bytes: u64,
    done: bool,
    /// fio's random file choice has drawn this file since it was done:
    /// fio found it done then, after a draw of its offset.
    seen_done: bool,
    /// I/Os issued to the file and not yet completed (counted under
    /// `lazy` only).
    inflight: u32,
    /// Found done with I/Os in flight: still open, and counted among the
    /// open files, until the last of them completes (fio's closing file).
    closing: bool,
}

impl WFile {
    pub fn new(path_index: usize, spec: FileSpec, len: u64) -> WFile {
        WFile {
            id: FileId(u32::MAX),
            open: false,
            path_index,
            gens: Vec::new(),
            gen_of: [None; 3],
            spec,
            len,
            pass_bytes: 0,
            done: false,
            seen_done: false,
            inflight: 0,
            closing: false,
        }
    }
}

/// The clone's files and the service that picks among them.
pub(crate) struct FileSet {
    pub files: Vec<WFile>,
    service: FileService,
    single: bool,
    /// Most files open at once.
    limit: usize,
    /// Files in service (open and not done this pass), in service order.
    active: Vec<usize>,
    /// The position in `active` of the file being served.
    cur: usize,
    /// I/Os left on the current file (round robin).
    left: u32,
    rng: Rng,
    /// fio's stream of random file choices (`next_file_state`), and with
    /// `randrepeat` the state each of fio's runs starts it from again.
    fio_pick: Option<(Frand, Option<Frand>)>,
    /// fio's skewed file choice (`next_file_zipf` / `next_file_gauss`),
    /// and with `randrepeat` the state each run starts it from again.
    skew: Option<(FioSkew, Option<FioSkew>)>,
    /// The files fio's random choice found done for the first time at
    /// the last pick (see `found_done`).
    found_done: Vec<usize>,
    /// The files fio's random choice had not yet found done when the last
    /// of them was (see `fio_tries_at_end`).
    unseen: Vec<usize>,
    fsync_on_close: bool,
    /// The file the next pass serves first, when fio's round robin would
    /// not start it at the first (see `retire`).
    resume: Option<usize>,
    /// fio's random choice under `openfiles`: no file opened ahead; the
    /// file a draw falls on is opened while fewer than `limit` are, and
    /// a draw on a closed file otherwise is spent (fio's busy file).
    lazy: bool,
    /// `lazy` with a queue deeper than one I/O: a file is found done when
    /// its offsets are given out (its I/Os may still be in flight), a done
    /// file closes when its last I/O completes, and a busy file with I/Os
    /// in flight makes the clone reap before it draws again, as fio's.
    deep: bool,
    /// I/Os in flight over all files (counted under `lazy` only).
    inflight: u32,
}

impl FileSet {
    pub fn new(
        files: Vec<WFile>,
        service: FileService,
        openfiles: u32,
        rng: Rng,
        fsync_on_close: bool,
    ) -> FileSet {
        let n = files.len();
        let limit = (openfiles as usize).clamp(1, n.max(1));
        FileSet {
            single: n == 1,
            files,
            service,
            limit,
            active: Vec::with_capacity(n),
            cur: 0,
            left: 0,
            rng,
            fio_pick: None,
            skew: None,
            found_done: Vec::new(),
            unseen: Vec::new(),
            fsync_on_close,
            resume: None,
            lazy: false,
            deep: false,
            inflight: 0,
        }
    }

    /// `file_service_type=random` draws its files from fio's generator
    /// `rand`, started again at each of fio's runs when `repeats`.
    pub fn set_fio_pick(&mut self, rand: Frand, repeats: bool) {
        let first = repeats.then(|| rand.clone());
        self.fio_pick = Some((rand, first));
    }

    /// `file_service_type=zipf`, `pareto` or `normal` draws its files from
    /// fio's generator `skew` (unhashed, over `nrfiles << 10` ranges),
    /// started again at each of fio's runs when `repeats`. Nothing for a
    /// single file.
    pub fn set_fio_skew(&mut self, skew: FioSkew, repeats: bool) {
        if self.single {
            return;
        }
        let first = repeats.then(|| skew.clone());
        self.skew = Some((skew, first));
    }

    /// Whether the files are chosen by fio's skewed choice, which never
    /// finds a file done.
    #[inline]
    pub fn is_skewed(&self) -> bool {
        self.skew.is_some()
    }

    /// With fio's random or skewed choice and fewer files open than there
    /// are, open them as fio does (see `lazy`), for a job of `iodepth`
    /// I/Os in flight (see `deep`). Before `start`.
    pub fn set_lazy_open(&mut self, iodepth: u32) {
        let fio = self.fio_pick.is_some() || self.skew.is_some();
        self.lazy = fio && self.limit < self.files.len();
        self.deep = self.lazy && iodepth > 1;
    }

    /// Whether files open and close as fio's choice meets them (`lazy`),
    /// which counts the I/Os in flight per file (`issued`, `unissued`).
    #[inline]
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// An I/O to file `fi` was issued (counted under `lazy` only).
    #[inline]
    pub fn issued(&mut self, fi: usize) {
        if self.lazy {
            self.files[fi].inflight += 1;
            self.inflight += 1;
        }
    }

    /// An I/O counted by `issued` was not queued after all.
    #[inline]
    pub fn unissued(&mut self, fi: usize) {
        if self.lazy {
            let f = &mut self.files[fi];
            f.inflight = f.inflight.saturating_sub(1);
            self.inflight = self.inflight.saturating_sub(1);
        }
    }

    /// Closes a done file now, or marks it closing while it has I/Os in
    /// flight (the last completion closes it).
    fn close_when_idle(&mut self, fi: usize, engine: &mut dyn Engine) -> Result<(), EngineError> {
        if self.files[fi].inflight > 0 {
            self.files[fi].closing = true;
            return Ok(());
        }
        self.close(fi, engine)
    }

    /// fio's next file number: the random choice's draw scaled onto the
    /// files, or the skewed choice's range shifted right by 10.
    #[inline]
    fn fio_draw(&mut self) -> Option<usize> {
        let n = self.files.len();
        if let Some((skew, _)) = self.skew.as_mut() {
            return Some(((skew.sample() >> 10) as usize).min(n - 1));
        }
        let (rand, _) = self.fio_pick.as_mut()?;
        Some(((n as f64 * rand.fraction()) as usize).min(n - 1))
    }

    /// A file whose offsets ran out under fio's skewed choice: fio closes
    /// it, resets it (positions back at the start, map cleared) and keeps
    /// it in service; the choice is then made again.
    #[cold]
    pub fn reset_file(&mut self, fi: usize, engine: &mut dyn Engine) -> Result<(), EngineError> {
        for g in &mut self.files[fi].gens {
            g.restart();
        }
        if self.lazy {
            self.close(fi, engine)?;
        }
        Ok(())
    }

    /// The file of the next I/O (`pick`), opening it when fio would (see
    /// `set_lazy_open`). None: fio's busy file (no room to open the file
    /// drawn) while I/Os are in flight, where fio reaps before it draws
    /// again.
    #[inline]
    pub fn pick_with(&mut self, engine: &mut dyn Engine) -> Result<Option<usize>, EngineError> {
        if !self.lazy {
            return Ok(Some(self.pick()));
        }
        loop {
            if self.active.is_empty() {
                // Every file found done as its offsets were given out,
                // under a deep queue: fio's run ends once they complete.
                if self.inflight > 0 {
                    return Ok(None);
                }
                self.end_pass(engine)?;
            }
            let Some(fi) = self.fio_draw() else {
                return Ok(Some(self.pick()));
            };
            // (Never under the skewed choice, whose files are reset instead.)
            let deep = self.deep && self.skew.is_none();
            let f = &mut self.files[fi];
            // fio knows a file is done when a draw of its offset finds
            // none left, which a deep queue sees before its I/Os complete.
            let given_out = deep && !f.gens.is_empty() && f.gens.iter().all(OffsetGen::fio_done);
            if f.done || given_out {
                if !f.seen_done {
                    // fio found it done by trying it, and closed it (once
                    // its I/Os complete).
                    f.seen_done = true;
                    let was_done = f.done;
                    self.found_done.push(fi);
                    if !was_done {
                        self.leave(fi, engine)?;
                    }
                    self.close_when_idle(fi, engine)?;
                }
                continue;
            }
            if f.open {
                return Ok(Some(fi));
            }
            if self.files.iter().filter(|f| f.open).count() < self.limit {
                self.open(fi, engine)?;
                return Ok(Some(fi));
            }
            if self.inflight > 0 {
                return Ok(None);
            }
            // Otherwise fio's busy file: the draw is spent.
        }
    }

    /// fio's random file: a draw scaled onto all the clone's files, drawn
    /// again while it falls on one out of service (done, or not open).
    #[inline]
    fn fio_random(&mut self) -> Option<usize> {
        let (rand, _) = self.fio_pick.as_mut()?;
        if self.active.is_empty() {
            return None;
        }
        let n = self.files.len();
        loop {
            let fi = ((n as f64 * rand.fraction()) as usize).min(n - 1);
            let f = &mut self.files[fi];
            if f.open && !f.done {
                return Some(fi);
            }
            if f.done && !f.seen_done {
                // fio learns that a file is done by trying it: its offset
                // draw finds the random map full.
                f.seen_done = true;
                self.found_done.push(fi);
            }
        }
    }

    /// At the end of a run whose files are all done: the files fio's
    /// random choice still tries before it knows, in the order it draws
    /// them (each try a direction and an offset draw that finds the map
    /// full). Empty without fio's random choice.
    pub fn fio_tries_at_end(&mut self) -> Vec<usize> {
        let mut left = std::mem::take(&mut self.unseen);
        let Some((rand, _)) = self.fio_pick.as_mut() else {
            return Vec::new();
        };
        let n = self.files.len();
        let mut order = Vec::with_capacity(left.len());
        while !left.is_empty() {
            let fi = ((n as f64 * rand.fraction()) as usize).min(n - 1);
            if let Some(p) = left.iter().position(|&x| x == fi) {
                left.swap_remove(p);
                order.push(fi);
            }
        }
        order
    }

    /// A file fio's random choice found done for the first time, each
    /// once: fio spent an offset draw on it (see `fio_random`).
    #[inline]
    pub fn found_done(&mut self) -> Option<usize> {
        self.found_done.pop()
    }

    /// Whether the clone has one file (no choice to make per I/O).
    pub fn is_single(&self) -> bool {
        self.single
    }

    /// Opens the files of the first pass.
    pub fn start(&mut self, engine: &mut dyn Engine) -> Result<(), EngineError> {
        self.new_pass(engine)
    }

    /// The file of the next I/O.
    #[inline]
    pub fn pick(&mut self) -> usize {
        if self.single {
            return 0;
        }
        match self.service {
            FileService::RoundRobin(n) => {
                if self.left == 0 {
                    self.cur += 1;
                    if self.cur >= self.active.len() {
                        self.cur = 0;
                    }
                    self.left = n;
                }
                self.left -= 1;
                self.active[self.cur]
            }
            FileService::Sequential => self.active[self.cur],
            FileService::Random => match self.fio_random() {
                Some(fi) => fi,
                None => self.active[self.rng.below(self.active.len() as u64) as usize],
            },
            FileService::Zipf(..) | FileService::Pareto(..) | FileService::Normal(..) => {
                // Every file is open (fewer may be only with `lazy`,
                // which `pick_with` serves), and none is ever done.
                loop {
                    match self.fio_draw() {
                        Some(fi) if self.files[fi].open => break fi,
                        Some(_) => {}
                        None => break self.active[0],
                    }
                }
            }
        }
    }

    /// Books `bytes` moved in file `fi`; a file whose region is done
    /// leaves the service, which may close it and open the next.
    #[inline]
    pub fn account(
        &mut self,
        fi: usize,
        bytes: u64,
        engine: &mut dyn Engine,
    ) -> Result<(), EngineError> {
        if self.lazy {
            let f = &mut self.files[fi];
            f.inflight = f.inflight.saturating_sub(1);
            self.inflight = self.inflight.saturating_sub(1);
            if f.closing && f.inflight == 0 {
                f.closing = false;
                self.close(fi, engine)?;
            }
        }
        if self.single || self.skew.is_some() {
            return Ok(());
        }
        let f = &mut self.files[fi];
        f.pass_bytes += bytes;
        if f.done || f.pass_bytes < f.len || f.gens.iter().any(OffsetGen::ends_runs) {
            // A file whose end is found by its offsets (see
            // `OffsetGen::set_ends_runs`) is done when they find it.
            return Ok(());
        }
        self.finish(fi, engine)
    }

    /// A file in which fio finds no next offset (a strided zone past its
    /// end): done, out of the service, as fio's file done; the others go
    /// on. False when none is left in service: the job ends there.
    #[cold]
    pub fn retire(&mut self, fi: usize, engine: &mut dyn Engine) -> Result<bool, EngineError> {
        if self.single {
            return Ok(false);
        }
        if !self.files[fi].done {
            self.leave(fi, engine)?;
        }
        // fio found it done by trying it: its random choice knows it.
        self.files[fi].seen_done = true;
        if self.lazy {
            self.close_when_idle(fi, engine)?;
        }
        if self.active.is_empty() {
            // fio's round robin goes on from the file after the last it
            // found done, in the next run too.
            self.resume = Some((fi + 1) % self.files.len());
        }
        Ok(!self.active.is_empty())
    }

    #[cold]
    fn finish(&mut self, fi: usize, engine: &mut dyn Engine) -> Result<(), EngineError> {
        self.leave(fi, engine)?;
        if self.active.is_empty() {
            self.end_pass(engine)?;
        }
        Ok(())
    }

    /// Every file is done: the files fio's random choice has not found
    /// done yet are noted (see `fio_tries_at_end`), and a new pass begins.
    fn end_pass(&mut self, engine: &mut dyn Engine) -> Result<(), EngineError> {
        if self.fio_pick.is_some() {
            self.unseen.clear();
            let unseen = (0..self.files.len()).filter(|&i| !self.files[i].seen_done);
            self.unseen.extend(unseen);
        }
        self.new_pass(engine)
    }

    /// File `fi` is done: out of the service, closed and the next one
    /// opened when fewer may be open than there are.
    fn leave(&mut self, fi: usize, engine: &mut dyn Engine) -> Result<(), EngineError> {
        self.files[fi].done = true;
        if let Some(pos) = self.active.iter().position(|&a| a == fi) {
            self.active.remove(pos);
            if pos < self.cur {
                self.cur -= 1;
            } else if pos == self.cur {
                // The next file in order is now at `cur`: serve it next.
                if self.cur >= self.active.len() {
                    self.cur = 0;
                }
                self.left = self.turn();
            }
        }
        if self.lazy {
            // Closed when fio finds it done (`pick_with`, `retire`).
            return Ok(());
        }
        if self.limit < self.files.len() {
            self.close(fi, engine)?;
            if let Some(next) = (0..self.files.len()).find(|&i| {
                let f = &self.files[i];
                !f.done && !f.open
            }) {
                self.open(next, engine)?;
                self.active.push(next);
            }
        }
        Ok(())
    }

    /// A new pass over the files: none done, the first `limit` in service.
    fn new_pass(&mut self, engine: &mut dyn Engine) -> Result<(), EngineError> {
        self.active.clear();
        for i in 0..self.files.len() {
            let f = &mut self.files[i];
            f.done = false;
            f.seen_done = false;
            f.closing = false;
            f.pass_bytes = 0;
            if self.lazy {
                // fio opens each file when a draw first falls on it.
                if f.open {
                    self.close(i, engine)?;
                }
                self.active.push(i);
            } else if i < self.limit {
                if !f.open {
                    self.open(i, engine)?;
                }
                self.active.push(i);
            } else if f.open {
                self.close(i, engine)?;
            }
        }
        self.cur = 0;
        if let Some(next) = self.resume.take() {
            if let Some(at) = self.active.iter().position(|&a| a == next) {
                self.cur = at;
            }
        }
        self.left = self.turn();
        Ok(())
    }

    fn turn(&self) -> u32 {
        match self.service {
            FileService::RoundRobin(n) => n,
            _ => 0,
        }
    }

    /// A new loop: every generator back at the start of its region and a
    /// new pass over the files. With `unlink`, the files are closed,
    /// removed and made again by the opens (fio's unlink_each_loop). A
    /// failure is the errno and what failed.
    pub fn new_loop(&mut self, unlink: bool, engine: &mut dyn Engine) -> Result<(), (i32, String)> {
        let engine_err = |e: EngineError| (e.errno(), e.to_string());
        if let Some((rand, Some(first))) = &mut self.fio_pick {
            // fio seeds its streams again at each run with randrepeat.
            rand.clone_from(first);
        }
        if let Some((skew, Some(first))) = &mut self.skew {
            skew.clone_from(first);
        }
        for f in &mut self.files {
            for g in &mut f.gens {
                g.restart();
            }
        }
        if unlink {
            self.close_all(engine).map_err(engine_err)?;
            // Only regular files go; a device is never unlinked.
            let regular = |p: &std::path::Path| {
                std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file())
            };
            for f in self.files.iter().filter(|f| regular(&f.spec.path)) {
                match std::fs::remove_file(&f.spec.path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err((
                            e.raw_os_error().unwrap_or(0),
                            format!("cannot unlink `{}`: {e}", f.spec.path.display()),
                        ))
                    }
                    _ => {}
                }
            }
        }
        self.new_pass(engine).map_err(engine_err)
    }

    fn open(&mut self, i: usize, engine: &mut dyn Engine) -> Result<(), EngineError> {
        let f = &mut self.files[i];
        f.id = engine.open(&f.spec)?;
        f.open = true;
        Ok(())
    }

    fn close(&mut self, i: usize, engine: &mut dyn Engine) -> Result<(), EngineError> {
        let f = &mut self.files[i];
        if !f.open {
            return Ok(());
        }
        f.open = false;
        if self.fsync_on_close {
            fsync(engine, f.id);
        }
        engine.close(f.id)
    }

    /// fsyncs every open file (end_fsync).
    pub fn fsync_open(&self, engine: &mut dyn Engine) {
        for f in self.files.iter().filter(|f| f.open) {
            fsync(engine, f.id);
        }
    }

    /// Closes every open file; the first error close(2) reports wins.
    pub fn close_all(&mut self, engine: &mut dyn Engine) -> Result<(), EngineError> {
        let mut first = Ok(());
        for i in 0..self.files.len() {
            let r = self.close(i, engine);
            if first.is_ok() {
                first = r;
            }
        }
        self.active.clear();
        first
    }

    /// How many files are open now.
    #[cfg(test)]
    pub fn open_count(&self) -> usize {
        self.files.iter().filter(|f| f.open).count()
    }
}

fn fsync(engine: &mut dyn Engine, file: FileId) {
    let unit = iolab_engine::IoUnit {
        slot: 0,
        file,
        op: iolab_engine::Op::Fsync,
        offset: 0,
        len: 0,
    };
    if let Ok(iolab_engine::Queued::InFlight) = engine.queue(&unit) {
        let _ = engine.commit();
        let mut done = Vec::with_capacity(1);
        let _ = engine.reap(1, usize::MAX, &mut done);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_engine::{create, EngineOpts};
    use std::path::PathBuf;

    fn set(n: usize, service: FileService, openfiles: u32) -> (FileSet, Box<dyn Engine>) {
        let engine = create(iolab_engine::EngineKind::Null, &EngineOpts::default()).unwrap();
        let files = (0..n)
            .map(|i| {
                WFile::new(
                    i,
                    FileSpec {
                        path: PathBuf::from(format!("/nonexistent/{i}")),
                        read: true,
                        ..Default::default()
                    },
                    4 * 4096,
                )
            })
            .collect();
        (
            FileSet::new(files, service, openfiles, Rng::from_seed(3), false),
            engine,
        )
    }

    /// The files of `ios` I/Os of 4 KiB each.
    fn order(s: &mut FileSet, e: &mut dyn Engine, ios: usize) -> Vec<usize> {
        (0..ios)
            .map(|_| {
                let fi = s.pick();
                s.account(fi, 4096, e).unwrap();
                fi
            })
            .collect()
    }

    #[test]
    fn round_robin_switches_after_n_and_skips_done_files() {
        let (mut s, mut e) = set(3, FileService::RoundRobin(3), 3);
        s.start(e.as_mut()).unwrap();
        assert_eq!(
            order(&mut s, e.as_mut(), 12),
            [0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 1, 2],
            "fio's order for roundrobin:3 over three files of four blocks"
        );
        let (mut s, mut e) = set(3, FileService::RoundRobin(1), 3);
        s.start(e.as_mut()).unwrap();
        assert_eq!(
            order(&mut s, e.as_mut(), 13),
            [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0],
            "a new pass after every file is done"
        );
    }

    #[test]
    fn sequential_finishes_a_file_before_the_next() {
        let (mut s, mut e) = set(3, FileService::Sequential, 3);
        s.start(e.as_mut()).unwrap();
        assert_eq!(
            order(&mut s, e.as_mut(), 12),
            [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
        );
    }

    #[test]
    fn random_visits_each_file_for_its_region_once_per_pass() {
        let (mut s, mut e) = set(4, FileService::Random, 4);
        s.start(e.as_mut()).unwrap();
        let o = order(&mut s, e.as_mut(), 16);
        for f in 0..4 {
            assert_eq!(o.iter().filter(|&&x| x == f).count(), 4, "{o:?}");
        }
        assert_ne!(o, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    }

    #[test]
    fn skewed_choice_draws_every_file_from_its_generator_and_retires_none() {
        let dist = iolab_spec::value::Distribution::Zipf {
            theta: 1.2,
            center: None,
        };
        let skew = FioSkew::unhashed(&dist, 4 << 10, 77).unwrap();
        let (mut s, mut e) = set(4, FileService::Zipf(1.2, None), 4);
        s.set_fio_skew(skew.clone(), true);
        s.start(e.as_mut()).unwrap();
        // Four blocks a file: 64 I/Os would end four passes of the
        // uniform choice; the skewed one draws on, files never done.
        let got = order(&mut s, e.as_mut(), 64);
        let mut want_gen = skew.clone();
        let want: Vec<usize> = (0..64)
            .map(|_| (want_gen.sample() >> 10) as usize)
            .collect();
        assert_eq!(got, want);
        assert!(s.files.iter().all(|f| !f.done && f.open));
        // A new loop starts the choice over (randrepeat).
        s.new_loop(false, e.as_mut()).unwrap();
        assert_eq!(order(&mut s, e.as_mut(), 8), want[..8]);

        // openfiles=2 with one I/O in flight: the first two files drawn
        // are opened, draws on the others are spent, none is closed.
        let (mut s, mut e) = set(4, FileService::Zipf(1.2, None), 2);
        s.set_fio_skew(skew.clone(), false);
        s.set_lazy_open(1);
        s.start(e.as_mut()).unwrap();
        let mut opened: Vec<usize> = Vec::new();
        for &fi in &want {
            if !opened.contains(&fi) && opened.len() < 2 {
                opened.push(fi);
            }
        }
        let got: Vec<usize> = (0..32)
            .map(|_| {
                let fi = s.pick_with(e.as_mut()).unwrap().unwrap();
                s.account(fi, 4096, e.as_mut()).unwrap();
                fi
            })
            .collect();
        assert!(got.iter().all(|f| opened.contains(f)), "{got:?} {opened:?}");
        assert!(s.open_count() <= 2);
    }

    #[test]
    fn a_deep_queue_reaps_before_it_opens_a_file_past_openfiles_as_fio() {
        let (mut s, mut e) = set(4, FileService::Random, 2);
        s.set_fio_pick(Frand::new(5, false), false);
        s.set_lazy_open(4);
        s.start(e.as_mut()).unwrap();
        assert_eq!(s.open_count(), 0, "no file opened ahead");
        // I/Os issued and none completed: the first two files drawn are
        // opened; a draw on a third is fio's busy file, reaped for.
        let mut seen: Vec<usize> = Vec::new();
        while let Some(fi) = s.pick_with(e.as_mut()).unwrap() {
            s.issued(fi);
            if !seen.contains(&fi) {
                seen.push(fi);
            }
            assert!(seen.len() <= 2, "{seen:?}");
        }
        assert_eq!((seen.len(), s.open_count()), (2, 2));
        // Once they complete, a draw on a closed file is spent instead,
        // and the next one on an open file is served.
        for &fi in &seen {
            while s.files[fi].inflight > 0 {
                s.account(fi, 0, e.as_mut()).unwrap();
            }
        }
        let fi = s
            .pick_with(e.as_mut())
            .unwrap()
            .expect("a file, nothing in flight");
        assert!(seen.contains(&fi));
    }

    #[test]
    fn openfiles_bounds_the_open_files() {
        let (mut s, mut e) = set(4, FileService::RoundRobin(1), 2);
        s.start(e.as_mut()).unwrap();
        assert_eq!(s.open_count(), 2);
        let mut seen = Vec::new();
        for _ in 0..32 {
            let fi = s.pick();
            assert!(s.files[fi].open);
            seen.push(fi);
            s.account(fi, 4096, e.as_mut()).unwrap();
            assert!(s.open_count() <= 2);
        }
        assert_eq!(
            &seen[..16],
            [0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3],
            "fio's order with openfiles=2 of 4"
        );
        s.close_all(e.as_mut()).unwrap();
        assert_eq!(s.open_count(), 0);
    }
}
