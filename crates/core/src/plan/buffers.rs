//! The data buffer and verify options of a job turned into the plan's
//! `BufferSpec` and `VerifySpec`, with fio's implications
//! (`buffer_compress_percentage`, `dedupe_percentage` and verify imply
//! `refill_buffers`; `verify_pattern` alone means `verify=pattern`) and the
//! checks fio makes before a run (a verify interval that does not divide
//! the block size, `verify=pattern` without a pattern, `verify_only` of a
//! time-based job).

use iolab_spec::options::choices::DedupeMode as Dedupe;
use iolab_spec::value::{RwMode, SizeValue};
use iolab_spec::{Opt, Value};

use crate::data::{BufferSpec, DedupeMode};
use crate::verify::{Method, VerifySpec};

use super::build::Ctx;
use super::{BsSpec, PlanError};

fn pattern(cx: &Ctx, opt: Opt) -> Option<Vec<u8>> {
    match cx.job.value(opt) {
        Some(Value::Pattern(p)) => Some(p),
        _ => None,
    }
}

fn percent(cx: &Ctx, opt: Opt) -> Option<u32> {
    cx.job.int(opt).map(|n| n.clamp(0, 100) as u32)
}

/// The job's `BufferSpec`; `verify` says whether verify regenerates
/// every buffer.
pub(super) fn buffer_spec(cx: &Ctx, verify: bool) -> BufferSpec {
    let job = cx.job;
    BufferSpec {
        refill: job.flag(Opt::RefillBuffers),
        scramble: job.flag(Opt::ScrambleBuffers),
        zero: job.flag(Opt::ZeroBuffers),
        pattern: pattern(cx, Opt::BufferPattern),
        compress_percentage: percent(cx, Opt::BufferCompressPercentage),
        compress_chunk: match job.size(Opt::BufferCompressChunk) {
            Some(SizeValue::Bytes(b)) => b,
            _ => 512,
        },
        dedupe_percentage: percent(cx, Opt::DedupePercentage).unwrap_or(0),
        dedupe_mode: match job.chosen(Opt::DedupeMode).unwrap_or_default() {
            Dedupe::WorkingSet => DedupeMode::WorkingSet {
                percent: percent(cx, Opt::DedupeWorkingSetPercentage).unwrap_or(5),
                global: job.flag(Opt::DedupeGlobal),
                threads: 1,
            },
            Dedupe::Repeat => DedupeMode::Repeat,
        },
    }
    .with_implied_refill(verify)
}

/// Tells every job with a dedupe working set how many job clones the run
/// has (fio's thread count, over which `dedupe_global` rotates).
pub(super) fn count_dedupe_threads(jobs: &mut [super::PlanJob]) {
    let n = jobs.len().min(u32::MAX as usize) as u32;
    for j in jobs {
        if let DedupeMode::WorkingSet { threads, .. } = &mut j.buffers.dedupe_mode {
            *threads = n;
        }
    }
}

/// The job's `VerifySpec`, None when verify is off.
pub(super) fn verify_spec(cx: &Ctx, bs: &[BsSpec; 3]) -> Result<Option<VerifySpec>, PlanError> {
    let job = cx.job;
    let vpattern = pattern(cx, Opt::VerifyPattern);
    let method = match job.chosen(Opt::Verify).and_then(Method::of) {
        Some(m) => m,
        // verify_pattern alone asks for a pattern check, as in fio.
        None if vpattern.is_some() && job.get(Opt::Verify).is_none() => Method::Pattern,
        None => return Ok(None),
    };
    if method == Method::Pattern && vpattern.is_none() {
        return Err(cx.err(
            Some(Opt::Verify),
            "verify=pattern needs verify_pattern= (the bytes every block must hold)",
        ));
    }
    let engine = super::engine_of(job);
    if !engine.moves_file_data() {
        return Err(cx.err(
            Some(Opt::Verify),
            format!("verify needs an engine that moves data; ioengine={engine} does not"),
        ));
    }
    let interval = match job.size(Opt::VerifyInterval) {
        Some(SizeValue::Bytes(b)) => b,
        _ => 0,
    };
    let write_bs = &bs[1];
    let read_bs = &bs[0];
    let header = method.header_len() as u64;
    if interval > 0 {
        for b in [write_bs, read_bs] {
            if b.min() % interval != 0 || b.max() % interval != 0 {
                return Err(cx.err(
                    Some(Opt::VerifyInterval),
                    format!(
                        "verify_interval={interval} must divide the block size ({}) evenly",
                        b.min()
                    ),
                ));
            }
        }
    }
    let smallest = if interval > 0 {
        interval
    } else {
        write_bs.min().min(read_bs.min())
    };
    if smallest < header {
        return Err(cx.err(
            Some(Opt::VerifyInterval),
            format!(
                "verify={} needs blocks of at least {header} bytes for its header; this job has {smallest}",
                method.name()
            ),
        ));
    }
    Ok(Some(VerifySpec {
        method,
        after_write: job.flag(Opt::DoVerify),
        fatal: job.flag(Opt::VerifyFatal),
        backlog: job.int(Opt::VerifyBacklog).unwrap_or(0).max(0) as u64,
        interval: interval.min(u32::MAX as u64) as u32,
        pattern: vpattern,
        dump: job.flag(Opt::VerifyDump).then(std::path::PathBuf::new),
    }))
}

/// `verify_only`: the job reads back what its writes would have written
/// and checks it, writing nothing.
pub(super) fn verify_only_mode(
    cx: &Ctx,
    mode: RwMode,
    verify: bool,
    time_based: bool,
) -> Result<RwMode, PlanError> {
    if !verify {
        return Err(cx.err(
            Some(Opt::VerifyOnly),
            "verify_only needs verify= (the method the data was written with)",
        ));
    }
    if time_based {
        return Err(cx.err(
            Some(Opt::VerifyOnly),
            "verify_only does not work with time_based (as in fio)",
        ));
    }
    match mode {
        RwMode::Write | RwMode::Read => Ok(RwMode::Read),
        RwMode::RandWrite | RwMode::RandRead => Ok(RwMode::RandRead),
        other => Err(cx.err(
            Some(Opt::VerifyOnly),
            format!(
                "verify_only with rw={} is not implemented by iolab (use rw=write or rw=randwrite)",
                other.name()
            ),
        )),
    }
}
