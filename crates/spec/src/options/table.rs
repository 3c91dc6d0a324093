//! The table itself: every job option iolab accepts, in the order the docs
//! list them. `option_table!` makes the `Opt` enum and the `OPTIONS` array
//! from one list, so an option cannot be in one and missing from the other.
//!
//! Names, aliases, defaults, ranges and default time units are fio 3.33's
//! (`fio --cmdhelp=NAME`); the primary name of an option is the one fio's own
//! table uses (`ba`, not `blockalign`; `iodepth_batch`, not
//! `iodepth_batch_submit`). Entries are grouped by `Category`, in that
//! enum's order.

use super::choices::{
    ChoiceEnum, ContinueOnError, CpuMode, CpusAllowedPolicy, ExitWhat, Fadvise, RateProcess,
    SyncWrites, UnifiedRwReporting,
};
use super::Category as C;
use super::{choice, opt, Choice, Kind, OptDef, Store};
use crate::value::TimeUnit;
use iolab_engine::{EngineKind, FIO_ONLY_ENGINES};

macro_rules! option_table {
    ($($id:ident = $def:expr;)*) => {
        /// A job option, by its place in the table.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opt { $($id),* }

        impl Opt {
            /// Every option, in table order.
            pub const ALL: &'static [Opt] = &[$(Opt::$id),*];
        }

        /// The entries, indexed by `Opt as usize`.
        pub static OPTIONS: &[OptDef] = &[$($def),*];
    };
}

/// No upper bound.
const MAX: i64 = i64::MAX;

/// Why `thread` changes nothing.
const THREAD_IGNORED: &str =
    "iolab runs each job clone on its own thread; fio uses it to pick threads over processes";

const FADVISE_HINTS: &[Choice] = Fadvise::CHOICES;

const FALLOCATE_MODES: &[Choice] = super::choices::Fallocate::CHOICES;

/// Every engine iolab knows, from the one table of engine kinds: the
/// names, in its order, with its help lines.
const ENGINES: &[Choice] = &{
    const N: usize = EngineKind::ALL.len();
    let mut out = [choice("", &[], ""); N];
    let mut i = 0;
    while i < N {
        let k = EngineKind::ALL[i];
        out[i] = choice(k.name(), &[], k.help());
        i += 1;
    }
    out
};

const ZONE_MODES: &[Choice] = super::choices::ZoneMode::CHOICES;

const DEDUPE_MODES: &[Choice] = super::choices::DedupeMode::CHOICES;

const SUBMIT_MODES: &[Choice] = super::choices::IoSubmitMode::CHOICES;

const CPU_MODES: &[Choice] = CpuMode::CHOICES;

const SYNC_MODES: &[Choice] = SyncWrites::CHOICES;

const EXIT_WHAT: &[Choice] = ExitWhat::CHOICES;

const CONTINUE_ON_ERROR: &[Choice] = ContinueOnError::CHOICES;

const RATE_PROCESSES: &[Choice] = RateProcess::CHOICES;

const CPU_POLICIES: &[Choice] = CpusAllowedPolicy::CHOICES;

const RANDOM_GENERATORS: &[Choice] = super::choices::RandomGenerator::CHOICES;

/// The verification methods iolab implements.
const VERIFY_METHODS: &[Choice] = super::choices::Verify::CHOICES;

/// fio's other verification methods.
const FIO_ONLY_VERIFY: &[&str] = &[
    "crc64", "crc32", "crc16", "crc7", "sha1", "sha512", "sha3-224", "sha3-256", "sha3-384",
    "sha3-512", "null",
];

const UNIFIED_RW: &[Choice] = UnifiedRwReporting::CHOICES;

const KB_BASES: &[Choice] = &[
    choice(
        "1024",
        &[],
        "k, m, g mean powers of 1024 and kib, mib, gib powers of 1000, as fio",
    ),
    choice(
        "1000",
        &[],
        "k, m, g mean powers of 1000 and kib, mib, gib powers of 1024",
    ),
];

const UNIT_BASES: &[Choice] = super::choices::UnitBase::CHOICES;

const CLOCKSOURCES: &[Choice] = super::choices::Clocksource::CHOICES;

option_table! {
    // ---- Job description ----
    Name = opt("name", Kind::Str, C::Description)
        .help("Name of the job; on the command line each --name starts a new job")
        .example("seqread");
    Description = opt("description", Kind::Str, C::Description)
        .help("Free-text description of the job, carried into its results")
        .example("sequential read of 1 GiB");

    // ---- Files and layout ----
    Filename = opt("filename", Kind::Files, C::Files)
        .help("Files or devices to use, separated by colons; several jobs may share them")
        .example("/dev/sdb:/dev/sdc");
    Directory = opt("directory", Kind::Str, C::Files)
        .help("Directory in which the job's files are created")
        .example("/mnt/test");
    FilenameFormat = opt("filename_format", Kind::Str, C::Files)
        .default("$jobname.$jobnum.$filenum")
        .help("Template for generated file names ($jobname, $jobnum, $filenum, $clientuid)")
        .example("bench.$jobnum.$filenum");
    Nrfiles = opt("nrfiles", Kind::Int, C::Files)
        .aliases(&["nr_files"])
        .default("1")
        .range(1, MAX)
        .unit("files")
        .help("Number of files to spread each job clone's I/O over")
        .example("8");
    Openfiles = opt("openfiles", Kind::Int, C::Files)
        .range(0, MAX)
        .unit("files")
        .help("Most files a job clone keeps open at once (default: all of them)")
        .example("4");
    FileServiceType = opt("file_service_type", Kind::FileService, C::Files)
        .default("roundrobin")
        .help("How the next file to do I/O on is chosen among the open files")
        .example("random");
    Filesize = opt("filesize", Kind::SizeRange, C::Files)
        .range(1, MAX)
        .help("Size of each file, over its share of size; LOW-HIGH gives each a random size in it")
        .example("64m");
    CreateOnOpen = opt("create_on_open", Kind::Bool, C::Files)
        .default("0")
        .help("Create files when they are first opened for I/O instead of before the job")
        .example("1");
    CreateSerialize = opt("create_serialize", Kind::Bool, C::Files)
        .default("1")
        .ignored("iolab lays out every file before the jobs start, one file at a time (fio's create_serialize=1); with 0 fio lays them out in the jobs' threads at once, which changes where data lands on disk, not the I/O")
        .help("Lay out files one at a time (0: each job its own, all jobs at once)")
        .example("0");
    AllowFileCreate = opt("allow_file_create", Kind::Bool, C::Files)
        .default("1")
        .help("Allow creating files that do not exist yet")
        .example("0");
    AllowMountedWrite = opt("allow_mounted_write", Kind::Bool, C::Files)
        .default("0")
        .help("Allow writing to a block device that is mounted, used as swap or held")
        .example("1");
    FadviseHint = opt("fadvise_hint", Kind::Choice(FADVISE_HINTS), C::Files)
        .default("1")
        .help("Hint given to the kernel with posix_fadvise(2) when a file is opened")
        .example("0");
    Fallocate = opt("fallocate", Kind::Choice(FALLOCATE_MODES), C::Files)
        .default("native")
        .help("How space is preallocated when files are laid out")
        .example("none");
    Overwrite = opt("overwrite", Kind::Bool, C::Files)
        .default("0")
        .help("Lay out files completely before writing, so writes overwrite existing blocks")
        .example("1");
    Unlink = opt("unlink", Kind::Bool, C::Files)
        .default("0")
        .help("Delete the job's files when it finishes")
        .example("1");
    UnlinkEachLoop = opt("unlink_each_loop", Kind::Bool, C::Files)
        .default("0")
        .help("Delete the job's files after every loop, not just at the end")
        .example("1");

    // ---- I/O type and block size ----
    Rw = opt("rw", Kind::Rw, C::IoType)
        .aliases(&["readwrite"])
        .default("read")
        .help("I/O pattern: sequential or random reads, writes, trims or a mix, with :N")
        .example("randread:8");
    Rwmixread = opt("rwmixread", Kind::Int, C::IoType)
        .default("50")
        .range(0, 100)
        .unit("percent")
        .help("Share of reads in a mixed read/write pattern")
        .example("70");
    Rwmixwrite = opt("rwmixwrite", Kind::Int, C::IoType)
        .default("50")
        .range(0, 100)
        .unit("percent")
        .store(Store::Complement100(Opt::Rwmixread))
        .help("Share of writes in a mixed read/write pattern; the rest are reads")
        .example("30");
    Bs = opt("bs", Kind::SizePerDir, C::IoType)
        .aliases(&["blocksize"])
        .default("4k")
        .range(1, MAX)
        .help("Block size of each I/O, per direction (read,write,trim)")
        .example("4k,64k");
    Bsrange = opt("bsrange", Kind::RangePerDir, C::IoType)
        .aliases(&["blocksize_range"])
        .range(1, MAX)
        .help("Pick each I/O's block size at random from a range, per direction")
        .example("1k-4k");
    Bssplit = opt("bssplit", Kind::SplitPerDir, C::IoType)
        .help("Mix of block sizes with the share of I/Os for each, per direction")
        .example("4k/10:64k/50:32k/40");
    Ba = opt("ba", Kind::SizePerDir, C::IoType)
        .aliases(&["blockalign"])
        .range(1, MAX)
        .help("Alignment of random offsets, per direction (default: the minimum block size)")
        .example("8k");

    // ---- I/O size and offsets ----
    Size = opt("size", Kind::SizePct, C::IoSize)
        .help("Total bytes per job clone, split over its files; N% is that share of the file")
        .example("100m");
    IoSize = opt("io_size", Kind::SizePct, C::IoSize)
        .aliases(&["io_limit"])
        .help("Bytes of I/O to do, when that differs from the region that size sets")
        .example("10g");
    NumberIos = opt("number_ios", Kind::Int, C::IoSize)
        .default("0")
        .range(0, MAX)
        .unit("ios")
        .help("Stop the job after this many I/Os even if bytes remain (0: no limit)")
        .example("10000");
    Offset = opt("offset", Kind::SizePct, C::IoSize)
        .aliases(&["fileoffset"])
        .default("0")
        .help("Start of the region of each file that the job uses")
        .example("1g");
    OffsetIncrement = opt("offset_increment", Kind::SizePct, C::IoSize)
        .default("0")
        .help("Added to offset once per job clone number, so clones work on disjoint regions")
        .example("10%");
    FillDevice = opt("fill_device", Kind::Bool, C::IoSize)
        .aliases(&["fill_fs"])
        .default("0")
        .help("Without size, write until the filesystem is full; ENOSPC ends the job without an error")
        .example("1");
    Zonemode = opt("zonemode", Kind::Choice(ZONE_MODES), C::IoSize)
        .default("none")
        .help("How I/O keeps to zones: none, strided (zonesize, zonerange, zoneskip) or zbd")
        .example("strided");
    Zonesize = opt("zonesize", Kind::Size, C::IoSize)
        .default("0")
        .range(0, MAX)
        .help("Bytes of I/O in each zone before the next one (zonemode=strided)")
        .example("16m");
    Zonerange = opt("zonerange", Kind::Size, C::IoSize)
        .default("0")
        .range(0, MAX)
        .help("Size of each zone, where its I/O lands (zonemode=strided; 0: zonesize)")
        .example("64m");
    Zoneskip = opt("zoneskip", Kind::Size, C::IoSize)
        .default("0")
        .range(0, MAX)
        .help("Bytes left out between one zone and the next (zonemode=strided)")
        .example("128m");
    FileAppend = opt("file_append", Kind::Bool, C::IoSize)
        .default("0")
        .help("Do the I/O past the current end of each file, growing it")
        .example("1");

    // ---- I/O engine and file handling ----
    Ioengine = opt("ioengine", Kind::Choice(ENGINES), C::Engine)
        .default("psync")
        .fio_only(FIO_ONLY_ENGINES)
        .help("How I/O is issued: the system calls or interface each I/O goes through")
        .example("io_uring");
    Direct = opt("direct", Kind::Bool, C::Engine)
        .default("0")
        .help("Use non-buffered I/O (O_DIRECT)")
        .example("1");
    Buffered = opt("buffered", Kind::Bool, C::Engine)
        .default("1")
        .store(Store::Inverse(Opt::Direct))
        .help("Use buffered I/O; the opposite of direct")
        .example("0");
    Sync = opt("sync", Kind::Choice(SYNC_MODES), C::Engine)
        .default("none")
        .help("Open files for synchronous writes")
        .example("dsync");
    Fsync = opt("fsync", Kind::Int, C::Engine)
        .default("0")
        .range(0, MAX)
        .unit("ios")
        .help("Call fsync(2) after every N writes (0: never)")
        .example("32");
    Fdatasync = opt("fdatasync", Kind::Int, C::Engine)
        .default("0")
        .range(0, MAX)
        .unit("ios")
        .help("Call fdatasync(2) after every N writes (0: never)")
        .example("32");
    EndFsync = opt("end_fsync", Kind::Bool, C::Engine)
        .default("0")
        .help("Call fsync(2) on each file when the job's writing is done")
        .example("1");
    FsyncOnClose = opt("fsync_on_close", Kind::Bool, C::Engine)
        .default("0")
        .help("Call fsync(2) on a file every time the job closes it")
        .example("1");
    Invalidate = opt("invalidate", Kind::Bool, C::Engine)
        .default("1")
        .help("Drop the files' cached pages before the job starts")
        .example("0");
    PreRead = opt("pre_read", Kind::Bool, C::Engine)
        .default("0")
        .help("Read the files into the page cache before the job starts (turns off invalidate)")
        .example("1");

    IoSubmitMode = opt("io_submit_mode", Kind::Choice(SUBMIT_MODES), C::Engine)
        .default("inline")
        .ignored("iolab's job thread submits its own I/O: the same I/O as fio's offload threads, without their hand-off in the latencies")
        .help("Who submits the job's I/O: its own thread, or (offload) a pool of threads")
        .example("offload");

    // ---- I/O depth ----
    Iodepth = opt("iodepth", Kind::Int, C::IoDepth)
        .default("1")
        .range(1, MAX)
        .unit("ios")
        .help("Most I/Os in flight at once per job clone (asynchronous engines)")
        .example("32");
    IodepthBatch = opt("iodepth_batch", Kind::Int, C::IoDepth)
        .aliases(&["iodepth_batch_submit"])
        .default("1")
        .range(0, MAX)
        .unit("ios")
        .help("How many queued I/Os to submit in one call (0: iodepth)")
        .example("8");
    IodepthBatchCompleteMin = opt("iodepth_batch_complete_min", Kind::Int, C::IoDepth)
        .aliases(&["iodepth_batch_complete"])
        .default("1")
        .range(0, MAX)
        .unit("ios")
        .help("Fewest completions to wait for when reaping (0: poll without waiting)")
        .example("4");
    IodepthBatchCompleteMax = opt("iodepth_batch_complete_max", Kind::Int, C::IoDepth)
        .range(0, MAX)
        .unit("ios")
        .help("Most completions to reap in one call (default: iodepth_batch_complete_min)")
        .example("16");
    IodepthLow = opt("iodepth_low", Kind::Int, C::IoDepth)
        .range(0, MAX)
        .unit("ios")
        .help("Once the queue is full, let it drain to this depth before refilling it")
        .example("16");

    LatencyTarget = opt("latency_target", Kind::Time(TimeUnit::Usec), C::IoDepth)
        .help("Find the highest queue depth (up to iodepth) whose I/Os take at most this long")
        .example("10ms");
    LatencyWindow = opt("latency_window", Kind::Time(TimeUnit::Usec), C::IoDepth)
        .default("0")
        .help("How long each queue depth runs before latency_target judges it")
        .example("1s");
    LatencyPercentile = opt("latency_percentile", Kind::Percentiles, C::IoDepth)
        .default("100")
        .help("Share of I/Os, in percent, that must meet latency_target in a window")
        .example("99.9");
    LatencyRun = opt("latency_run", Kind::Bool, C::IoDepth)
        .default("0")
        .help("Go on adjusting the queue depth to latency_target instead of stopping when found")
        .example("1");

    // ---- Run time and job control ----
    Runtime = opt("runtime", Kind::Time(TimeUnit::Sec), C::Timing)
        .aliases(&["timeout"])
        .default("0")
        .help("Stop the job after this long (0: no limit)")
        .example("20");
    TimeBased = opt("time_based", Kind::Flag, C::Timing)
        .default("0")
        .help("Run for the full runtime, starting over when size is done")
        .example("1");
    RampTime = opt("ramp_time", Kind::Time(TimeUnit::Sec), C::Timing)
        .default("0")
        .help("Run this long before measuring, then start the statistics afresh")
        .example("5");
    Startdelay = opt("startdelay", Kind::Time(TimeUnit::Sec), C::Timing)
        .default("0")
        .help("Wait this long before starting the job")
        .example("2");
    Loops = opt("loops", Kind::Int, C::Timing)
        .default("1")
        .range(0, MAX)
        .help("Run the job's workload this many times (0 counts as 1)")
        .example("3");
    Stonewall = opt("stonewall", Kind::Flag, C::Timing)
        .aliases(&["wait_for_previous"])
        .default("0")
        .help("Start only after all earlier jobs have finished; also starts a new group")
        .example("1");
    WaitFor = opt("wait_for", Kind::Str, C::Timing)
        .help("Start only after every clone of the named earlier job has finished")
        .example("prepare");
    Exitall = opt("exitall", Kind::Flag, C::Timing)
        .default("0")
        .help("When this job finishes, stop the others (which ones: exit_what)")
        .example("1");
    ExitWhat = opt("exit_what", Kind::Choice(EXIT_WHAT), C::Timing)
        .default("group")
        .help("Which jobs exitall stops")
        .example("all");
    ContinueOnError = opt("continue_on_error", Kind::Choice(CONTINUE_ON_ERROR), C::Timing)
        .default("none")
        .help("Kinds of error after which the job goes on instead of stopping")
        .example("io");
    IgnoreError = opt("ignore_error", Kind::Str, C::Timing)
        .help("Errors to go on after: READ_LIST,WRITE_LIST,VERIFY_LIST, each `:`-separated")
        .example("EAGAIN,ENOSPC:122");
    Steadystate = opt("steadystate", Kind::Str, C::Timing)
        .aliases(&["ss"])
        .default("iops_slope:0.01%")
        .help("End the job once steady: iops|bw[_slope]:LIMIT[%], judged over ss_dur")
        .example("iops:10%");
    SteadystateDuration = opt("steadystate_duration", Kind::Time(TimeUnit::Sec), C::Timing)
        .aliases(&["ss_dur"])
        .default("0")
        .help("Rolling window (one sample a second) steadystate judges; 0: no detection")
        .example("30s");
    SteadystateRampTime = opt("steadystate_ramp_time", Kind::Time(TimeUnit::Sec), C::Timing)
        .aliases(&["ss_ramp"])
        .default("0")
        .help("Run this long before steadystate starts collecting samples")
        .example("10s");

    // ---- Rate limits and think time ----
    Rate = opt("rate", Kind::SizePerDir, C::Rate)
        .range(0, MAX)
        .unit("bytes/sec")
        .help("Cap on bandwidth per job clone, per direction (0: no cap)")
        .example("10m");
    RateMin = opt("rate_min", Kind::SizePerDir, C::Rate)
        .aliases(&["ratemin"])
        .range(0, MAX)
        .unit("bytes/sec")
        .help("Fail the job if its bandwidth falls below this, per direction")
        .example("5m");
    RateIops = opt("rate_iops", Kind::IntPerDir, C::Rate)
        .range(0, MAX)
        .unit("iops")
        .help("Cap on I/Os per second per job clone, per direction (0: no cap)")
        .example("500,100");
    RateIopsMin = opt("rate_iops_min", Kind::IntPerDir, C::Rate)
        .range(0, MAX)
        .unit("iops")
        .help("Fail the job if its I/Os per second fall below this, per direction")
        .example("100");
    RateProcess = opt("rate_process", Kind::Choice(RATE_PROCESSES), C::Rate)
        .default("linear")
        .help("How rate-limited I/Os are spaced in time")
        .example("poisson");
    RateCycle = opt("rate_cycle", Kind::Int, C::Rate)
        .aliases(&["ratecycle"])
        .default("1000")
        .range(0, MAX)
        .unit("msec")
        .help("Window over which rate_min and rate_iops_min are averaged")
        .example("500");
    Thinktime = opt("thinktime", Kind::Time(TimeUnit::Usec), C::Rate)
        .default("0")
        .help("Pause this long after each batch of thinktime_blocks I/Os")
        .example("100");
    ThinktimeSpin = opt("thinktime_spin", Kind::Time(TimeUnit::Usec), C::Rate)
        .default("0")
        .help("Busy-spin for this part of each thinktime pause instead of sleeping")
        .example("50");
    ThinktimeBlocks = opt("thinktime_blocks", Kind::Int, C::Rate)
        .default("1")
        .range(0, MAX)
        .unit("ios")
        .help("Number of I/Os between thinktime pauses")
        .example("16");

    Flow = opt("flow", Kind::Int, C::Rate)
        .default("0")
        .range(i32::MIN as i64, u32::MAX as i64)
        .help("Weight among its flow_id's jobs, whose I/Os keep these proportions; negative as in fio")
        .example("2");
    FlowId = opt("flow_id", Kind::Int, C::Rate)
        .default("0")
        .range(0, MAX)
        .help("The group of jobs whose I/Os flow weighs against each other")
        .example("1");
    FlowSleep = opt("flow_sleep", Kind::Int, C::Rate)
        .default("0")
        .range(0, MAX)
        .unit("usec")
        .help("Pause when ahead of its flow share, after its I/O in flight (0: retry at once)")
        .example("100");

    // ---- Jobs, threads and CPUs ----
    Numjobs = opt("numjobs", Kind::Int, C::Threads)
        .default("1")
        .range(1, MAX)
        .unit("jobs")
        .help("Run this many identical clones of the job in parallel")
        .example("4");
    Thread = opt("thread", Kind::Flag, C::Threads)
        .default("0")
        .ignored(THREAD_IGNORED)
        .help("Run job clones as threads rather than processes")
        .example("1");
    Threads = opt("threads", Kind::Int, C::Threads)
        .range(0, MAX)
        .unit("threads")
        .ignored("fio's tiobench profile takes it (its thread count); a job of fio's own ignores it, and so does iolab")
        .help("Threads of fio's tiobench profile; accepted and ignored in a job, as fio does")
        .example("4");
    CpusAllowed = opt("cpus_allowed", Kind::Cpus, C::Threads)
        .help("CPUs the job's clones may run on")
        .example("0-1");
    CpusAllowedPolicy = opt("cpus_allowed_policy", Kind::Choice(CPU_POLICIES), C::Threads)
        .default("shared")
        .help("Whether clones share the cpus_allowed set or each get one CPU of it")
        .example("split");
    Nice = opt("nice", Kind::Int, C::Threads)
        .default("0")
        .range(-20, 19)
        .help("Added to the scheduling niceness of each of the job's threads, as nice(3)")
        .example("10");

    // ---- Data buffers ----
    RefillBuffers = opt("refill_buffers", Kind::Flag, C::Buffers)
        .default("0")
        .help("Generate new data for every write instead of reusing the buffer")
        .example("1");
    ScrambleBuffers = opt("scramble_buffers", Kind::Bool, C::Buffers)
        .default("1")
        .help("Vary the reused buffer per write so dedupe and compression find nothing to share")
        .example("0");
    ZeroBuffers = opt("zero_buffers", Kind::Flag, C::Buffers)
        .default("0")
        .help("Fill write buffers with zeros instead of random data")
        .example("1");
    BufferPattern = opt("buffer_pattern", Kind::Pattern, C::Buffers)
        .help("Fill write buffers by repeating this pattern")
        .example("0xdeadbeef");
    BufferCompressPercentage = opt("buffer_compress_percentage", Kind::Int, C::Buffers)
        .range(0, 100)
        .unit("percent")
        .help("Make write data compressible by about this much")
        .example("50");
    BufferCompressChunk = opt("buffer_compress_chunk", Kind::Size, C::Buffers)
        .default("512")
        .range(0, MAX)
        .help("Size of the alternating random and fixed regions that set compressibility")
        .example("4k");
    DedupePercentage = opt("dedupe_percentage", Kind::Int, C::Buffers)
        .range(0, 100)
        .unit("percent")
        .help("Share of written blocks that repeat earlier ones, for dedupe to find")
        .example("20");
    DedupeMode = opt("dedupe_mode", Kind::Choice(DEDUPE_MODES), C::Buffers)
        .default("repeat")
        .help("Which earlier block a deduplicated write repeats (with dedupe_percentage)")
        .example("working_set");
    DedupeWorkingSetPercentage = opt("dedupe_working_set_percentage", Kind::Int, C::Buffers)
        .default("5")
        .range(0, 100)
        .unit("percent")
        .help("Working set of dedupe_mode=working_set, in percent of the job's size")
        .example("10");
    DedupeGlobal = opt("dedupe_global", Kind::Bool, C::Buffers)
        .default("0")
        .help("Draw the dedupe working set from the unique blocks of every job with this option")
        .example("1");

    // ---- Random offsets ----
    PercentageRandom = opt("percentage_random", Kind::IntPerDir, C::Random)
        .default("100")
        .range(0, 100)
        .unit("percent")
        .help("Share of I/Os at random offsets in a random pattern; the rest are sequential")
        .example("90");
    Randrepeat = opt("randrepeat", Kind::Bool, C::Random)
        .default("1")
        .help("Seed the offset generator the same way every run, so runs repeat")
        .example("0");
    Allrandrepeat = opt("allrandrepeat", Kind::Bool, C::Random)
        .default("0")
        .help("Seed every random generator (offsets, sizes, data) the same way every run")
        .example("1");
    Randseed = opt("randseed", Kind::Int, C::Random)
        .default("0x89")
        .range(0, MAX)
        .help("Seed for the random generators; when given, every run repeats, whatever randrepeat says")
        .example("1234");
    RandomGenerator = opt("random_generator", Kind::Choice(RANDOM_GENERATORS), C::Random)
        .default("tausworthe")
        .help("Algorithm that draws random offsets, as fio's (lfsr: each block once, in fio's order)")
        .example("lfsr");
    RandomDistribution = opt("random_distribution", Kind::Distribution, C::Random)
        .default("random")
        .help("How random offsets are spread: uniform, zipf, pareto, normal or zoned")
        .example("zipf:1.2");
    Norandommap = opt("norandommap", Kind::Flag, C::Random)
        .default("0")
        .help("Draw plain random offsets, which may repeat, instead of covering each block once")
        .example("1");

    // ---- Verification ----
    Verify = opt("verify", Kind::Choice(VERIFY_METHODS), C::Verify)
        .default("0")
        .fio_only(FIO_ONLY_VERIFY)
        .help("Check written data by reading it back, with this checksum or pattern")
        .example("crc32c");
    DoVerify = opt("do_verify", Kind::Bool, C::Verify)
        .default("1")
        .help("Run the read-back phase after writing when verify is set")
        .example("0");
    VerifyPattern = opt("verify_pattern", Kind::Pattern, C::Verify)
        .help("Write this pattern and check that it reads back intact")
        .example("0xff");
    VerifyFatal = opt("verify_fatal", Kind::Bool, C::Verify)
        .default("0")
        .help("Stop the job at the first verification failure")
        .example("1");
    VerifyBacklog = opt("verify_backlog", Kind::Int, C::Verify)
        .range(0, MAX)
        .unit("ios")
        .help("Verify after every N blocks written rather than after the whole write")
        .example("1024");
    VerifyInterval = opt("verify_interval", Kind::Size, C::Verify)
        .range(80, MAX)
        .help("Put a verify header in every chunk of this size (default: the block size)")
        .example("4k");
    VerifyDump = opt("verify_dump", Kind::Bool, C::Verify)
        .default("0")
        .help("On a verification failure, write the block read and the block expected to files")
        .example("1");
    VerifyOnly = opt("verify_only", Kind::Flag, C::Verify)
        .default("0")
        .help("Only read back and check data an earlier run of this write job left")
        .example("1");

    // ---- Statistics and reporting ----
    GroupReporting = opt("group_reporting", Kind::Flag, C::Reporting)
        .default("0")
        .help("Report each group of jobs as a whole instead of each job clone")
        .example("1");
    NewGroup = opt("new_group", Kind::Flag, C::Reporting)
        .default("0")
        .help("Start a new reporting group with this job")
        .example("1");
    Stats = opt("stats", Kind::Bool, C::Reporting)
        .default("1")
        .help("Include this job in the results (0 leaves it out)")
        .example("0");
    UnifiedRwReporting = opt("unified_rw_reporting", Kind::Choice(UNIFIED_RW), C::Reporting)
        .default("none")
        .help("Report directions separately, summed together, or both")
        .example("mixed");
    KbBase = opt("kb_base", Kind::Choice(KB_BASES), C::Reporting)
        .default("1024")
        .help("How unit prefixes in sizes are read and printed")
        .example("1000");
    UnitBase = opt("unit_base", Kind::Choice(UNIT_BASES), C::Reporting)
        .default("0")
        .help("Report bandwidth in bytes or in bits")
        .example("1");
    PercentileList = opt("percentile_list", Kind::Percentiles, C::Reporting)
        .default("1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99")
        .help("Latency percentiles to report, separated by colons")
        .example("50:99:99.9");
    ClatPercentiles = opt("clat_percentiles", Kind::Bool, C::Reporting)
        .default("1")
        .help("Report completion latency percentiles")
        .example("0");
    LatPercentiles = opt("lat_percentiles", Kind::Bool, C::Reporting)
        .default("0")
        .help("Report total latency (submission plus completion) percentiles")
        .example("1");
    SlatPercentiles = opt("slat_percentiles", Kind::Bool, C::Reporting)
        .default("0")
        .help("Report submission latency percentiles")
        .example("1");
    GtodReduce = opt("gtod_reduce", Kind::Bool, C::Reporting)
        .default("0")
        .help("Read the clock as little as possible: turns off latency statistics")
        .example("1");
    DisableLat = opt("disable_lat", Kind::Bool, C::Reporting)
        .default("0")
        .help("Do not measure total latency")
        .example("1");
    DisableClat = opt("disable_clat", Kind::Bool, C::Reporting)
        .default("0")
        .help("Do not measure completion latency")
        .example("1");
    DisableSlat = opt("disable_slat", Kind::Bool, C::Reporting)
        .default("0")
        .help("Do not measure submission latency")
        .example("1");
    DisableBwMeasurement = opt("disable_bw_measurement", Kind::Bool, C::Reporting)
        .aliases(&["disable_bw"])
        .default("0")
        .help("No per-I/O bandwidth log entries (log_avg_msec=0) nor the samples they give")
        .example("1");
    Bwavgtime = opt("bwavgtime", Kind::Int, C::Reporting)
        .default("500")
        .range(0, MAX)
        .unit("msec")
        .help("Length of each bandwidth sample window")
        .example("1000");
    Iopsavgtime = opt("iopsavgtime", Kind::Int, C::Reporting)
        .default("500")
        .range(0, MAX)
        .unit("msec")
        .help("Length of each IOPS sample window")
        .example("1000");
    Clocksource = opt("clocksource", Kind::Choice(CLOCKSOURCES), C::Reporting)
        .ignored("iolab always times with CLOCK_MONOTONIC")
        .help("Clock used to time I/Os")
        .example("clock_gettime");

    // ---- Log files ----
    WriteBwLog = opt("write_bw_log", Kind::OptStr, C::Logging)
        .help("Write a bandwidth log; the value is the file name prefix")
        .example("mylog");
    WriteLatLog = opt("write_lat_log", Kind::OptStr, C::Logging)
        .help("Write submission, completion and total latency logs with this prefix")
        .example("mylog");
    WriteIopsLog = opt("write_iops_log", Kind::OptStr, C::Logging)
        .help("Write an IOPS log; the value is the file name prefix")
        .example("mylog");
    WriteHistLog = opt("write_hist_log", Kind::OptStr, C::Logging)
        .help("Write a completion latency histogram log; the value is the file name prefix")
        .example("mylog");
    LogAvgMsec = opt("log_avg_msec", Kind::Int, C::Logging)
        .default("0")
        .range(0, MAX)
        .unit("msec")
        .help("Average log entries over windows of this length (0: one entry per I/O)")
        .example("1000");
    LogHistMsec = opt("log_hist_msec", Kind::Int, C::Logging)
        .default("0")
        .range(0, MAX)
        .unit("msec")
        .help("Write a histogram log entry this often (0: no histogram log)")
        .example("1000");
    LogOffset = opt("log_offset", Kind::Bool, C::Logging)
        .default("0")
        .help("Add each I/O's offset to its log entries")
        .example("1");
    LogPrio = opt("log_prio", Kind::Bool, C::Logging)
        .default("0")
        .help("Log each I/O's priority value (hexadecimal) rather than 1 for real-time, else 0")
        .example("1");
    PerJobLogs = opt("per_job_logs", Kind::Bool, C::Logging)
        .default("1")
        .help("Give each job clone its own log files (0: clones of a job share them)")
        .example("0");

    // ---- io_uring engine ----
    Hipri = opt("hipri", Kind::Bool, C::IoUring)
        .default("0")
        .help("Poll for completions instead of waiting for interrupts (io_uring, pvsync2)")
        .example("1");
    Fixedbufs = opt("fixedbufs", Kind::Bool, C::IoUring)
        .default("0")
        .help("Register the I/O buffers with the kernel (iolab does for direct I/O unless this is 0)")
        .example("1");
    Registerfiles = opt("registerfiles", Kind::Bool, C::IoUring)
        .default("0")
        .help("Register the open files with the ring (iolab does unless this is 0)")
        .example("1");
    SqthreadPoll = opt("sqthread_poll", Kind::Bool, C::IoUring)
        .default("0")
        .help("Let a kernel thread poll the submission queue, saving submit calls")
        .example("1");
    SqthreadPollCpu = opt("sqthread_poll_cpu", Kind::Int, C::IoUring)
        .range(0, MAX)
        .help("CPU to pin the sqthread_poll kernel thread to")
        .example("2");
    ForceAsync = opt("force_async", Kind::Int, C::IoUring)
        .default("0")
        .range(0, MAX)
        .help("Hand every Nth I/O to io_uring's worker threads at once (IOSQE_ASYNC); 0: none")
        .example("4");
    Nonvectored = opt("nonvectored", Kind::Int, C::IoUring)
        .default("-1")
        .help("Use plain read/write instead of readv/writev (-1: if the kernel has them)")
        .example("0");

    // ---- libaio engine ----
    UserspaceReap = opt("userspace_reap", Kind::Bool, C::Libaio)
        .default("0")
        .help("Read completions from the ring the kernel maps (iolab always does)")
        .example("1");

    // ---- cpuio engine ----
    Cpuload = opt("cpuload", Kind::Int, C::Cpuio)
        .range(0, MAX)
        .unit("percent")
        .help("Percent of one CPU the cpuio job keeps busy (needed; above 100 counts as 100)")
        .example("50");
    Cpuchunks = opt("cpuchunks", Kind::Int, C::Cpuio)
        .default("50000")
        .range(1, MAX)
        .unit("usec")
        .help("Length of each burst of CPU work; the pause after it makes the load")
        .example("10000");
    Cpumode = opt("cpumode", Kind::Choice(CPU_MODES), C::Cpuio)
        .default("noop")
        .help("How the CPU is kept busy")
        .example("qsort");
    ExitOnIoDone = opt("exit_on_io_done", Kind::Bool, C::Cpuio)
        .default("0")
        .help("Stop the cpuio job once every job that does I/O has finished")
        .example("1");

    // ---- exec engine ----
    Program = opt("program", Kind::Str, C::Exec)
        .help("The program the exec engine runs beside the job")
        .example("/usr/bin/vmstat");
    Arguments = opt("arguments", Kind::Str, C::Exec)
        .help("Its arguments, split on spaces; %r is the runtime in seconds, %n the job name")
        .example("1 %r");
    GraceTime = opt("grace_time", Kind::Int, C::Exec)
        .default("1")
        .range(0, MAX)
        .unit("seconds")
        .help("Time the program has to stop after SIGTERM, before SIGKILL")
        .example("5");
    StdRedirect = opt("std_redirect", Kind::Bool, C::Exec)
        .default("1")
        .help("Send the program's output to NAME.stdout and NAME.stderr")
        .example("0");
}
