//! Setting a clone up before its first I/O: the engine and its buffers,
//! each file's offset generators and open flags, the page cache as
//! `pre_read` or `invalidate` want it, and the pacing the options ask for.
//! Nothing here is timed.

use iolab_engine::{create, Access, Engine, EngineOpts, FileSpec, Opener};
use iolab_spec::value::Distribution;
use iolab_stats::Dir;

use crate::data::DataGen;
use crate::gen::fiodist::FioSkew;
use crate::gen::taus::{jhash, Generator};
use crate::gen::{
    BsGen, FioOffsets, FioSeeds, OffsetGen, OffsetRand, Pattern, Purpose, Region, RwMix, Stream,
};
use crate::plan::{BsSpec, Fadvise, FileService, JobFile, Layout, PlanFile, PlanJob};

use super::fileset::{FileSet, WFile};
use super::logs::Logs;
use super::pace::{MinRate, RateLimit, Think};
use super::rewind::Rewind;
use super::verify::Verifier;
use super::{Worker, EINVAL, EIO, ENOSPC};

/// A setup failure: the errno for fio's `error` field and the message.
pub(super) type SetupError = (i32, String);

pub(super) fn engine_error(e: iolab_engine::EngineError) -> SetupError {
    (e.errno(), e.to_string())
}

fn bs_gen(spec: &BsSpec) -> Result<BsGen, SetupError> {
    let g = match spec {
        BsSpec::Fixed(b) => BsGen::fixed(*b),
        BsSpec::Range(r) => BsGen::range(*r, false),
        BsSpec::Split(s) => BsGen::split(s),
    };
    g.map_err(|e| (EINVAL, format!("block size: {e}")))
}

impl Worker {
    /// A new run of fio's inside a loop, after a draw found the random
    /// map full (the direction and offset draws it spent are spent): with
    /// `randrepeat`, the streams start over from their seeds; every
    /// generator is back at its start with its map cleared.
    /// Several files: each back in service. With `unlink_each_loop`, the
    /// files are removed and made again, as fio does after each run.
    /// Err when a file cannot be removed or opened again.
    /// A full map ends the new run too, as it ended the last.
    pub(super) fn new_run(&mut self, unlink: bool) -> Result<(), (i32, String)> {
        if let Some(first) = &self.first_streams {
            let left = self.off_rng.seq_left;
            (self.mix_rng, self.bs_rng, self.off_rng) = (**first).clone();
            self.off_rng.seq_left = left;
        }
        let stop_on_full = self
            .files
            .files
            .iter()
            .any(|f| f.gens.iter().any(crate::gen::OffsetGen::stops_on_full));
        let single = self.files.is_single() && !unlink;
        if !single {
            self.files.new_loop(unlink, self.engine.as_mut())?;
        }
        for f in &mut self.files.files {
            for g in &mut f.gens {
                if single {
                    g.restart();
                }
                g.set_stop_on_full(stop_on_full);
            }
        }
        Ok(())
    }

    /// fio's run ended where a draw found the map full (or a pass ended
    /// it) and no file is left in it: while the job may have more runs
    /// (its `loops`, then `io_size`), the next starts (`new_run`); false
    /// when the job is done, Err when a file cannot be removed or opened
    /// again. fio drains the run's I/O before it decides: nothing is
    /// queued or in flight here (see `general::Issued::Drain`).
    pub(super) fn next_run(
        &mut self,
        job: &crate::plan::PlanJob,
        runs: &mut u32,
        out: &iolab_stats::JobResult,
    ) -> Result<bool, (i32, String)> {
        if *runs >= job.runs() && !self.runs_on(job, out) {
            return Ok(false);
        }
        *runs += 1;
        self.new_run(job.unlink_each_loop)?;
        Ok(true)
    }

    /// Whether a loop is to move more bytes (`io_size`) than the files'
    /// regions hold: fio's run then ends where the files are done (a
    /// random map full, a sequential pass at its end) and the next starts
    /// afresh, as between loops. Not with verify, whose loops read back
    /// what they wrote and never go on from the last (`goes_on`).
    pub(super) fn loop_past_files(&self, job: &crate::plan::PlanJob) -> bool {
        !job.time_based
            && self.verify.is_none()
            && self.io_size > self.files.files.iter().map(|f| f.len).sum::<u64>()
    }

    /// Whether fio starts another run of the job once its `loops` are
    /// done and its files are: only with `io_size`, while the bytes done
    /// fall short of it by a largest block or more (fio's keep_running).
    pub(super) fn runs_on(&self, job: &crate::plan::PlanJob, out: &iolab_stats::JobResult) -> bool {
        let done: u64 = out.dirs.iter().map(|d| d.io_bytes).sum();
        let max_bs = job.bs.iter().map(|b| b.max()).max().unwrap_or(0);
        job.io_size_given && job.io_size.saturating_sub(done) >= max_bs.max(1) && done < job.io_size
    }

    /// Whether fio would find every file of the clone done as a loop ends
    /// (see `OffsetGen::fio_done`); when not, fio's next loop goes on
    /// where this one stopped.
    pub(super) fn files_done(&self) -> bool {
        // fio's skewed file choice never finds a file done.
        !self.files.is_skewed()
            && self
                .files
                .files
                .iter()
                .all(|f| f.gens.iter().all(crate::gen::OffsetGen::fio_done))
    }

    /// The next loop goes on from this one, as fio's does when its files
    /// are not done: nothing starts over; a random draw that finds the map
    /// full then starts fio's next run (`new_run`).
    pub(super) fn go_on(&mut self, job: &crate::plan::PlanJob) {
        if self.files.is_skewed() || job.time_based {
            // fio resets a file whose map fills and goes on (under its
            // skewed file choice, and in a time_based job, whose runs
            // `number_ios` ends).
            return;
        }
        for f in &mut self.files.files {
            for g in &mut f.gens {
                g.set_stop_on_full(true);
            }
        }
    }

    /// Before a new loop: with `randrepeat`, the directions, sizes and
    /// offsets start over from their seeds, as fio's loops do (the count
    /// of `randread:N` goes on). Without it they go on, after the draws
    /// fio spends as a loop ends: a direction, and an offset that finds
    /// the random map full.
    pub(super) fn streams_again(&mut self) {
        if let Some(first) = &self.first_streams {
            let left = self.off_rng.seq_left;
            (self.mix_rng, self.bs_rng, self.off_rng) = (**first).clone();
            self.off_rng.seq_left = left;
            return;
        }
        let tries = self.files.fio_tries_at_end();
        if !tries.is_empty() {
            for fi in tries {
                let d = self.mix.next(&mut self.mix_rng).dir as usize;
                let f = &mut self.files.files[fi];
                if let Some(g) = f.gen_of[d] {
                    f.gens[g].spend_draw_on_full_map(&mut self.off_rng);
                }
            }
            return;
        }
        let d = self.mix.next(&mut self.mix_rng).dir as usize;
        for f in &mut self.files.files {
            if let Some(g) = f.gen_of[d] {
                f.gens[g].spend_draw_on_full_map(&mut self.off_rng);
            }
        }
    }

    pub(super) fn new(job: &PlanJob, index: u32, files: &[PlanFile]) -> Result<Worker, SetupError> {
        let mut engine = open_engine(job)?;
        let mode = job.rw.mode;
        let mix = RwMix::new(mode, job.rwmixread);
        let seeds = &job.random.seeds;
        // fio numbers its job threads from 1 in job order, a job's clones
        // after it, as the plan orders them.
        let thread = index + 1;
        let generator = job.random.generator;
        let fio_seeds = seeds.fio(thread, generator == Generator::Tausworthe64);
        let draws = Draws {
            job,
            pattern: pattern_of(job, &mix),
            mix: &mix,
            offset_rng: seeds.rng(index, Stream::Offset),
            thread,
            fio_seeds: &fio_seeds,
        };
        let mut rewind =
            super::rewind::wanted(job, &draws.pattern).then(|| Box::new(Rewind::new()));
        let (wfiles, io_size) = draws.files(files, &mut rewind)?;
        let mut fileset = FileSet::new(
            wfiles,
            job.file_service,
            job.openfiles,
            seeds.rng(index, Stream::Offset).substream(u64::MAX),
            job.fsync_on_close,
        );
        if job.file_service == FileService::Random {
            fileset.set_fio_pick(fio_seeds.frand(Purpose::FileService), seeds.repeats());
            fileset.set_lazy_open(job.iodepth);
        } else if let Some(skew) = file_skew(job.file_service, job.files.len(), &fio_seeds) {
            fileset.set_fio_skew(skew, seeds.repeats());
            fileset.set_lazy_open(job.iodepth);
        }
        fileset.start(engine.as_mut()).map_err(engine_error)?;
        let needs_data = engine.caps().needs_buffers && (mode.writes());
        let data_rng = seeds.rng(index, Stream::Data);
        let region: u64 = job.files.iter().map(|f| f.len).sum();
        let mut data = DataGen::new(&job.buffers, data_rng.substream(2)).with_working_set(
            thread,
            region,
            job.bs[Dir::Write as usize].min(),
        );
        if needs_data {
            for slot in 0..job.iodepth {
                data.init(engine.buf(slot));
            }
        }
        let verify = match &job.verify {
            Some(_) if !engine.caps().needs_buffers => {
                return Err((
                    EINVAL,
                    format!(
                        "verify needs an engine that moves data; {} does not",
                        job.engine
                    ),
                ))
            }
            Some(spec) => Some(Verifier::new(job, spec, index)),
            None => None,
        };
        let both = mix.uses(Dir::Read) && mix.uses(Dir::Write);
        let mix_rng = fio_seeds.frand32(Purpose::RwMix);
        let bs_rng = bs_streams(&fio_seeds, job);
        let off_rng = OffsetRand::new(
            fio_seeds.frand(Purpose::Offset),
            fio_seeds.frand32(Purpose::Zone),
            fio_seeds.frand32(Purpose::SeqRandRead),
        );
        let first_streams = seeds
            .repeats()
            .then(|| Box::new((mix_rng.clone(), bs_rng.clone(), off_rng.clone())));
        let sync = engine.caps().sync;
        Ok(Worker {
            engine,
            files: fileset,
            bs: [
                bs_gen(&job.bs[0])?,
                bs_gen(&job.bs[1])?,
                bs_gen(&job.bs[2])?,
            ],
            mix,
            mix_rng,
            bs_rng,
            off_rng,
            first_streams,
            needs_data,
            noio: job.engine.no_io(),
            data,
            verify,
            io_size,
            logs: job
                .logs
                .as_ref()
                .map(|spec| Box::new(Logs::new(spec, job.reported, job.stats.disable_bw, sync))),
            rewind,
            rate: RateLimit::new(&job.pace, data_rng.substream(1), both),
            think: Think::new(&job.pace),
            min_rate: MinRate::new(&job.pace),
            ctl: super::control::Control::new(job, files),
            busy: false,
            run_over: false,
        })
    }
}

/// The job's engine, with its buffers for the job's depth and block
/// sizes.
fn open_engine(job: &PlanJob) -> Result<Box<dyn Engine>, SetupError> {
    let opts = EngineOpts {
        iodepth: job.iodepth,
        buf_size: job.max_bs() as usize,
        align: iolab_engine::host::page_size() as usize,
        // Registered buffers spare direct I/O the pinning of its pages
        // on every I/O; buffered I/O copies either way, so it gains
        // nothing from them.
        fixedbufs: match job.engine_opts.fixedbufs {
            None if !job.direct => Some(false),
            asked => asked,
        },
        ..job.engine_opts
    };
    match &job.exec {
        Some(spec) => iolab_engine::create_exec(spec.clone(), &opts),
        None => create(job.engine, &opts),
    }
    .map_err(engine_error)
}

/// The offsets' pattern of the job, whose directions `mix` uses.
fn pattern_of(job: &PlanJob, mix: &RwMix) -> Pattern {
    Pattern::from_rw(
        job.rw,
        job.random.distribution.clone(),
        job.random.norandommap,
        // The I/Os of each direction follow its own percentage (fio's
        // offsets, below); a mode is sequential only when none is
        // random.
        Dir::ALL
            .iter()
            .filter(|d| mix.uses(**d))
            .map(|d| job.random.percentage_random[*d as usize])
            .max()
            .unwrap_or(100),
    )
}

/// What the clone's files and their offset generators are made from.
struct Draws<'a> {
    job: &'a PlanJob,
    mix: &'a RwMix,
    pattern: Pattern,
    /// The clone's offset stream, of which each file and direction takes
    /// a substream.
    offset_rng: crate::gen::Rng,
    /// fio's thread number of the clone.
    thread: u32,
    fio_seeds: &'a FioSeeds,
}

impl Draws<'_> {
    /// The clone's files, each with its open flags and generators and
    /// its page cache prepared; and the bytes of I/O per loop, less when
    /// fill_device found less room than planned.
    fn files(
        &self,
        files: &[PlanFile],
        rewind: &mut Option<Box<Rewind>>,
    ) -> Result<(Vec<WFile>, u64), SetupError> {
        let job = self.job;
        let mut wfiles = Vec::with_capacity(job.files.len());
        let mut io_size = job.io_size;
        for (fi, jf) in job.files.iter().enumerate() {
            let pf = &files[jf.file];
            let jf = &filled(job, pf, jf)?;
            io_size = io_size.saturating_sub(job.files[fi].len - jf.len);
            let spec = self.file_spec(pf, jf);
            if pf.layout != Layout::OnOpen {
                prepare_cache(job, pf, jf.offset, jf.len)?;
            }
            if let Some(r) = rewind.as_deref_mut() {
                r.add(
                    pf.path.clone(),
                    jf.offset,
                    jf.len,
                    pf.block_device || pf.char_device,
                );
            }
            let mut wf = WFile::new(jf.file, spec, jf.len);
            self.add_gens(&mut wf, fi, pf, jf)?;
            wfiles.push(wf);
        }
        Ok((wfiles, io_size))
    }

    /// How the engine opens the file: for what, and with which flags.
    fn file_spec(&self, pf: &PlanFile, jf: &JobFile) -> FileSpec {
        let job = self.job;
        let mode = job.rw.mode;
        let writes = mode.writes() || mode.trims();
        FileSpec {
            path: pf.path.clone(),
            read: mode.reads()
                || job.pre_read
                || job.verify.as_ref().is_some_and(|v| v.after_write),
            write: writes,
            // The job's open makes the file when create_on_open left it
            // to the job, or unlink_each_loop removed it.
            create: job.allow_file_create
                && writes
                && (pf.layout == Layout::OnOpen || job.unlink_each_loop),
            direct: job.direct,
            sync: job.sync,
            access: match job.fadvise {
                Fadvise::None => Access::Normal,
                Fadvise::Sequential => Access::Sequential,
                Fadvise::Random => Access::Random,
                Fadvise::Pattern if mode.is_random() => Access::Random,
                Fadvise::Pattern => Access::Sequential,
            },
            size: jf.offset.saturating_add(jf.len),
            opener: Some(Opener(crate::links::open)),
        }
    }

    /// The offset generators of file `fi` (region `jf`), one per
    /// direction the job uses; a random mode's directions share one, and
    /// with it one random map.
    fn add_gens(
        &self,
        wf: &mut WFile,
        fi: usize,
        pf: &PlanFile,
        jf: &JobFile,
    ) -> Result<(), SetupError> {
        let (job, mix) = (self.job, self.mix);
        let shared_map = job.rw.mode.is_random();
        for d in Dir::ALL {
            if !mix.uses(d) {
                continue;
            }
            if shared_map {
                if let Some(g) = wf.gen_of.iter().flatten().next() {
                    wf.gen_of[d as usize] = Some(*g);
                    continue;
                }
            }
            let block = if shared_map {
                Dir::ALL
                    .iter()
                    .filter(|x| mix.uses(**x))
                    .map(|x| job.blockalign[*x as usize])
                    .min()
                    .unwrap_or(job.blockalign[d as usize])
            } else {
                job.blockalign[d as usize]
            };
            // Strided zones: the generators work in one zone's range,
            // which the zones move along the file.
            let region = Region {
                start: jf.offset,
                len: job.zones.map_or(jf.len, |z| z.range),
                block,
            };
            let rng = self.offset_rng.substream(fi as u64 * 3 + d as u64);
            let gen_err = |e| (EINVAL, format!("{}: {e}", pf.path.display()));
            let mut gen = OffsetGen::new(region, &self.pattern, rng).map_err(gen_err)?;
            // fio's own offsets (its random map cuts I/Os that span
            // several blocks to the blocks a pass has not touched).
            let min_bs = |x: Dir| job.bs[x as usize].min();
            let used_min = Dir::ALL
                .iter()
                .filter(|x| mix.uses(**x))
                .map(|x| min_bs(*x))
                .min()
                .unwrap_or(block);
            let seeds = &job.random.seeds;
            gen.fio(&FioOffsets {
                distribution: &job.random.distribution,
                norandommap: job.random.norandommap,
                min_bs: used_min,
                range_size: min_bs(Dir::Read).min(min_bs(Dir::Write)),
                skew_seed: skew_seed(
                    &pf.path,
                    self.thread,
                    seeds.repeats() && !seeds.randseed_given(),
                    self.fio_seeds,
                ),
                percentage_random: job.random.percentage_random,
                lfsr_seed: (job.random.generator == Generator::Lfsr)
                    .then(|| self.fio_seeds.seed(Purpose::Offset)),
                units: dir_units(job, mix, block, used_min),
            })
            .map_err(gen_err)?;
            // As in fio, a sequential pass with a gap that reaches the
            // end ends the run (time_based jobs wrap; zones, verify and
            // unlink_each_loop keep iolab's own loops).
            // So does, over several files, a sequential direction of
            // `rw=rw` at its file's end: fio's file is done when the
            // direction drawn for it has no next offset there, not when
            // its bytes are.
            let plain = !job.time_based
                && job.zones.is_none()
                && job.verify.is_none()
                && !job.unlink_each_loop;
            let mixed_seq = !shared_map
                && job.files.len() > 1
                && Dir::ALL.iter().filter(|x| mix.uses(**x)).count() > 1;
            // Under fio's skewed file choice, a sequential direction at
            // its file's end has no next offset there either: fio resets
            // the file and chooses again (`FileSet::reset_file`).
            let skewed = job.file_service.skewed() && job.files.len() > 1;
            gen.set_ends_runs(plain || skewed, (plain && mixed_seq) || skewed);
            if job.zones.is_none() {
                gen.set_file_size(pf.size.max(pf.existing.unwrap_or(0)));
            }
            wf.gens.push(gen);
            wf.gen_of[d as usize] = Some(wf.gens.len() - 1);
        }
        Ok(())
    }
}

/// fio's generator of a skewed file choice (`file_service_type=zipf`,
/// `pareto`, `normal`), as fio's `init_rand_file_service` makes it: over
/// `nrfiles << 10` ranges, seeded with the low 32 bits of the clone's
/// file-choice seed, its ranks not hashed, its rotation the center's
/// when given, else (zipf, pareto) drawn from its stream. None for the
/// other choices.
fn file_skew(service: FileService, nrfiles: usize, seeds: &FioSeeds) -> Option<FioSkew> {
    let dist = match service {
        FileService::Zipf(theta, center) => Distribution::Zipf { theta, center },
        FileService::Pareto(h, center) => Distribution::Pareto { h, center },
        FileService::Normal(dev, center) => Distribution::Normal { dev, center },
        _ => return None,
    };
    let ranges = (nrfiles as u64) << 10;
    FioSkew::unhashed(&dist, ranges, seeds.seed(Purpose::FileService) as u32)
}

/// fio's block-size streams per direction: a verify job's writes draw
/// from the reads' stream and trimwrite's trims from the writes', so that
/// the read-back and the writes after trims see the same sizes.
fn bs_streams(seeds: &FioSeeds, job: &PlanJob) -> [crate::gen::Frand; 3] {
    let read = seeds.seed(Purpose::BlockSizeRead);
    let mut write = seeds.seed(Purpose::BlockSizeWrite);
    let mut trim = seeds.seed(Purpose::BlockSizeTrim);
    if job.verify.is_some() {
        write = read;
    }
    if matches!(
        job.rw.mode,
        iolab_spec::value::RwMode::TrimWrite | iolab_spec::value::RwMode::RandTrimWrite
    ) {
        trim = write;
    }
    [read, write, trim].map(|s| crate::gen::Frand::new(s, seeds.use64))
}

/// fio's units of each direction, `ba` and `min_bs`, when a direction the
/// job uses has others than the shared generator's (`bs=4k,8k`): fio
/// then draws and marks its random blocks in each direction's own.
fn dir_units(job: &PlanJob, mix: &RwMix, block: u64, min_bs: u64) -> Option<[(u64, u64); 3]> {
    let units = Dir::ALL.map(|d| (job.blockalign[d as usize], job.bs[d as usize].min()));
    let differ = Dir::ALL
        .iter()
        .any(|d| mix.uses(*d) && units[*d as usize] != (block, min_bs));
    differ.then_some(units)
}

/// The seed of a file's zipf, pareto or normal generator, as fio 3.33
/// seeds it: with `randrepeat` on and no `randseed`, fio's hash of the
/// file's name (`jhash`) times the thread number; otherwise the clone's
/// offset seed (its low 32 bits), the same for every file.
fn skew_seed(path: &std::path::Path, thread: u32, name_hash: bool, seeds: &FioSeeds) -> u32 {
    use std::os::unix::ffi::OsStrExt;
    if !name_hash {
        return seeds.seed(Purpose::Offset) as u32;
    }
    jhash(path.as_os_str().as_bytes(), 0).wrapping_mul(thread)
}

/// A file region after a `fill_device` layout, which stops where the
/// filesystem was full: as much of the region as the file holds, in whole
/// blocks (the region itself for every other file).
fn filled(job: &PlanJob, pf: &PlanFile, jf: &JobFile) -> Result<JobFile, SetupError> {
    if !pf.fill || pf.layout != Layout::Write {
        return Ok(*jf);
    }
    let have = std::fs::metadata(&pf.path).map(|m| m.len()).unwrap_or(0);
    let room = have.saturating_sub(jf.offset).min(jf.len);
    let min_bs = job.bs.iter().map(BsSpec::min).min().unwrap_or(1).max(1);
    let len = room - room % min_bs;
    if len < job.max_bs() {
        return Err((
            ENOSPC,
            format!(
                "fill_device: `{}` holds {have} bytes after filling its filesystem, \
                 less than a block of the job's region",
                pf.path.display()
            ),
        ));
    }
    Ok(JobFile { len, ..*jf })
}

/// The clone's thread on the CPUs and at the niceness the job asks for
/// (`cpus_allowed`, `nice`), before anything else of the job happens, as
/// fio places its job processes.
pub(super) fn place_thread(job: &PlanJob) -> Result<(), SetupError> {
    let fail = |what: String, e: std::io::Error| {
        (e.raw_os_error().unwrap_or(EINVAL), format!("{what}: {e}"))
    };
    if let Some(cpus) = &job.cpus {
        iolab_engine::host::pin_thread(cpus).map_err(|e| {
            let list = cpus
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",");
            fail(format!("cpus_allowed: cannot run on CPUs {list}"), e)
        })?;
    }
    if job.nice != 0 {
        iolab_engine::host::renice_thread(job.nice)
            .map_err(|e| fail(format!("nice={}", job.nice), e))?;
    }
    Ok(())
}

/// Before the job: `pre_read` reads the clone's region of the file into
/// the page cache (it also turns `invalidate` off, as in fio); otherwise
/// `invalidate` drops the region's cached pages. Neither is measured.
fn prepare_cache(job: &PlanJob, pf: &PlanFile, offset: u64, len: u64) -> Result<(), SetupError> {
    let path = pf.path.as_path();
    if job.pre_read {
        let f = std::fs::File::open(path)
            .map_err(|e| (e.raw_os_error().unwrap_or(EIO), pre_read_error(path, &e)))?;
        let mut buf = vec![0u8; 1 << 20];
        let mut pos = offset;
        while pos < offset + len {
            let n = buf.len().min((offset + len - pos) as usize);
            match std::os::unix::fs::FileExt::read_at(&f, &mut buf[..n], pos) {
                Ok(0) => break,
                Ok(got) => pos += got as u64,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err((e.raw_os_error().unwrap_or(EIO), pre_read_error(path, &e))),
            }
        }
    } else if job.invalidate && !pf.block_device && !pf.char_device {
        if let Ok(f) = std::fs::File::open(path) {
            let _ = iolab_engine::file::drop_cache(&f, offset, len);
        }
    }
    Ok(())
}

fn pre_read_error(path: &std::path::Path, e: &std::io::Error) -> String {
    format!("pre_read of `{}`: {e}", path.display())
}
