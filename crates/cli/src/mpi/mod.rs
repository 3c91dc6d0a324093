//! iolab under MPI (the `mpi` feature): started by mpirun or srun, every
//! rank runs the same plan, barriers align the phases, and rank 0 merges
//! the ranks' results into one report. This module owns the MPI world:
//! starting it, the first exchange in which the ranks agree on iolab's
//! version and the job text (and that each could prepare its part), and
//! the helpers that move results to rank 0.

pub mod meta;
pub mod phases;
pub mod run;

use anyhow::{anyhow, Result};
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use serde_json::{json, Value};

use crate::exit::Status;

/// The MPI world of this process.
pub struct World {
    // Finalizes MPI when dropped, after everything else.
    _universe: Universe,
    pub comm: SimpleCommunicator,
    pub rank: u32,
    pub size: u32,
    pub host: String,
}

impl World {
    /// Starts MPI. Only the main thread calls MPI; workers never do.
    pub fn init() -> Result<World> {
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or_else(|| anyhow!("MPI was already started in this process"))?;
        let comm = universe.world();
        Ok(World {
            rank: comm.rank() as u32,
            size: comm.size() as u32,
            comm,
            _universe: universe,
            host: hostname(),
        })
    }

    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// Each rank's `text`, at rank 0 (None elsewhere), in rank order.
    pub fn gather_text(&self, text: &str) -> Option<Vec<String>> {
        let root = self.comm.process_at_rank(0);
        // One byte more than the text, so that no buffer is empty (some
        // MPIs refuse an empty one: a null pointer).
        let mut mine = Vec::with_capacity(text.len() + 1);
        mine.extend_from_slice(text.as_bytes());
        mine.push(0);
        let mine = &mine[..];
        let len = mine.len() as Count;
        if !self.is_root() {
            root.gather_into(&len);
            root.gather_varcount_into(mine);
            return None;
        }
        let mut counts = vec![0 as Count; self.size as usize];
        root.gather_into_root(&len, &mut counts[..]);
        let displs: Vec<Count> = counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let total: Count = counts.iter().sum();
        let mut buf = vec![0u8; total as usize];
        {
            let mut parts = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(mine, &mut parts);
        }
        Some(
            counts
                .iter()
                .zip(&displs)
                .map(|(&c, &d)| {
                    let end = (d + c - 1).max(d) as usize;
                    String::from_utf8_lossy(&buf[d as usize..end]).into_owned()
                })
                .collect(),
        )
    }

    /// Rank 0's `text` on every rank (the others' `text` is not used).
    pub fn broadcast_text(&self, text: &str) -> String {
        let root = self.comm.process_at_rank(0);
        let mut len = text.len() as u64;
        root.broadcast_into(&mut len);
        if len == 0 {
            // An empty buffer is refused by some MPIs (a null pointer).
            return String::new();
        }
        let mut buf = if self.is_root() {
            text.as_bytes().to_vec()
        } else {
            vec![0u8; len as usize]
        };
        root.broadcast_into(&mut buf[..]);
        String::from_utf8_lossy(&buf).into_owned()
    }

    /// Rank 0's `value` on every rank.
    pub fn broadcast_u8(&self, value: u8) -> u8 {
        let mut v = value;
        self.comm.process_at_rank(0).broadcast_into(&mut v);
        v
    }

    /// The largest of every rank's `value`, on every rank (a barrier too).
    pub fn max_u8(&self, value: u8) -> u8 {
        let mut worst = 0u8;
        self.comm
            .all_reduce_into(&value, &mut worst, SystemOperation::max());
        worst
    }

    /// The largest and the smallest of every rank's `value`, on every
    /// rank (a barrier too).
    pub fn max_min_u8(&self, value: u8) -> (u8, u8) {
        let mut both = [0u8; 2];
        self.comm.all_reduce_into(
            &[value, 255 - value][..],
            &mut both[..],
            SystemOperation::max(),
        );
        (both[0], 255 - both[1])
    }

    /// The exit status rank 0 decided, on every rank.
    pub fn agree_status(&self, status: Status) -> Status {
        from_code(self.broadcast_u8(code(status)))
    }

    /// Who a rank is, for messages: "rank 2 (node7)".
    pub fn who(rank: u64, host: &str) -> String {
        format!("rank {rank} ({host})")
    }
}

fn code(s: Status) -> u8 {
    match s {
        Status::Success => 0,
        Status::Failed => 1,
        Status::BadInput => 2,
    }
}

fn from_code(c: u8) -> Status {
    match c {
        0 => Status::Success,
        2 => Status::BadInput,
        _ => Status::Failed,
    }
}

/// Whether an MPI launcher (mpirun, mpiexec, srun) started this process.
pub fn launched() -> bool {
    [
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMI_RANK",
        "PMIX_RANK",
        "MPI_LOCALNRANKS",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some())
}

/// This host's name.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// A 64-bit FNV-1a digest: enough to tell whether two ranks read the
/// same job text (not a protection against anyone).
pub fn digest(parts: &[&[u8]]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.iter().chain(&[0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The iolab every rank must run: its version and the size of its
/// executable, so that two builds of one version (a node left with an
/// older build, a copy another compiler made) are told apart too.
pub fn build() -> String {
    let size = std::fs::metadata("/proc/self/exe")
        .map(|m| m.len().to_string())
        .unwrap_or_else(|_| "?".to_string());
    format!(
        "{} (an executable of {size} bytes)",
        env!("CARGO_PKG_VERSION")
    )
}

/// The first exchange: every rank says its iolab version, a digest of the
/// job text it read and whether it could prepare its run (`error`: the
/// status and message when not). Rank 0 refuses mismatched versions or
/// job texts, and any rank's error, naming the rank and host; every rank
/// gets the verdict: None to go on, or the status to end with.
pub fn agree_to_start(
    world: &World,
    job_digest: &str,
    error: Option<(Status, String)>,
) -> Option<Status> {
    let hello = json!({
        "rank": world.rank,
        "host": world.host,
        "version": build(),
        "job": job_digest,
        "status": error.as_ref().map(|(s, _)| code(*s)),
        "error": error.as_ref().map(|(_, m)| m.as_str()),
    });
    let all = world.gather_text(&hello.to_string());
    let verdict = match all {
        Some(texts) => {
            let hellos: Vec<Value> = texts
                .iter()
                .map(|t| serde_json::from_str(t).unwrap_or(Value::Null))
                .collect();
            let status = judge_hellos(&hellos);
            code(status.unwrap_or(Status::Success)) + if status.is_some() { 10 } else { 0 }
        }
        None => 0,
    };
    let v = world.broadcast_u8(verdict);
    (v >= 10).then(|| from_code(v - 10))
}

/// Rank 0's reading of the hellos: the status to stop with (its reasons
/// printed), or None when every rank can start.
fn judge_hellos(hellos: &[Value]) -> Option<Status> {
    let who = |h: &Value| {
        World::who(
            h["rank"].as_u64().unwrap_or(0),
            h["host"].as_str().unwrap_or("?"),
        )
    };
    let first = hellos.first()?;
    let version = first["version"].as_str().unwrap_or("");
    let odd: Vec<String> = hellos
        .iter()
        .filter(|h| h["version"].as_str().unwrap_or("") != version)
        .map(|h| {
            format!(
                "{} runs iolab {}",
                who(h),
                h["version"].as_str().unwrap_or("?")
            )
        })
        .collect();
    if !odd.is_empty() {
        eprintln!(
            "iolab: the ranks run different iolab builds: {} runs iolab {version}, {}; \
             every rank must run the same iolab; nothing was run",
            who(first),
            odd.join(", ")
        );
        return Some(Status::BadInput);
    }
    let job = first["job"].as_str().unwrap_or("");
    let odd: Vec<String> = hellos
        .iter()
        .filter(|h| h["job"].as_str().unwrap_or("") != job)
        .map(who)
        .collect();
    if !odd.is_empty() {
        eprintln!(
            "iolab: the job text differs across ranks: {} read another command line or job \
             file than {}; every rank must run the same job; nothing was run",
            odd.join(", "),
            who(first)
        );
        return Some(Status::BadInput);
    }
    let failed: Vec<&Value> = hellos.iter().filter(|h| !h["error"].is_null()).collect();
    if failed.is_empty() {
        return None;
    }
    let same =
        failed.len() == hellos.len() && failed.iter().all(|h| h["error"] == failed[0]["error"]);
    if same {
        eprintln!(
            "iolab: {} (on every rank)",
            failed[0]["error"].as_str().unwrap_or("")
        );
    } else {
        for h in &failed {
            eprintln!("iolab: {}: {}", who(h), h["error"].as_str().unwrap_or(""));
        }
    }
    let worst = failed
        .iter()
        .map(|h| h["status"].as_u64().unwrap_or(1) as u8)
        .max()
        .unwrap_or(1);
    Some(from_code(worst))
}
