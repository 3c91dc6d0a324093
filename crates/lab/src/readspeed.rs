//! Read speed of a block device the way `hdparm -Tt` reports it: cached
//! reads (the same window read again and again through the page cache:
//! memory and kernel speed, not the disk's) and device reads (sequential
//! O_DIRECT reads from the start of the device). Both are short: a few
//! hundred MiB or a few seconds, whichever comes first. Reading is safe on
//! a mounted device; nothing is written.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::LabError;

/// Bytes read per call.
const BLOCK: usize = 1 << 20;
/// The window cached reads go over again and again.
const CACHED_WINDOW: u64 = 32 << 20;
/// The most that cached reads read in all.
const CACHED_TOTAL: u64 = 512 << 20;
/// The most that device reads read.
const DEVICE_TOTAL: u64 = 256 << 20;
/// The longest either measurement runs.
const MAX_TIME: Duration = Duration::from_secs(3);

/// Both speeds, in MB/s (10^6 bytes per second).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReadSpeed {
    pub cached_mb_s: f64,
    pub device_mb_s: f64,
}

/// Measures both speeds of `device`.
pub fn measure(device: &Path) -> Result<ReadSpeed, LabError> {
    Ok(ReadSpeed {
        cached_mb_s: cached(device)?,
        device_mb_s: direct(device)?,
    })
}

fn open(device: &Path, flags: i32) -> Result<(File, u64), LabError> {
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(device)
        .map_err(|e| LabError::io("cannot open for reading", device, e))?;
    let size = f
        .seek(SeekFrom::End(0))
        .map_err(|e| LabError::io("cannot find the size of", device, e))?;
    Ok((f, size))
}

/// A buffer of BLOCK bytes aligned for O_DIRECT, carved from a larger Vec.
fn aligned(storage: &mut Vec<u8>) -> &mut [u8] {
    storage.resize(BLOCK + 4096, 0);
    let off = storage.as_ptr().align_offset(4096);
    &mut storage[off..off + BLOCK]
}

/// Reads `[0, end)` in BLOCK pieces, again and again from `start_over`,
/// until `total` bytes or MAX_TIME; returns MB/s.
fn read_loop(
    f: &File,
    device: &Path,
    buf: &mut [u8],
    end: u64,
    total: u64,
) -> Result<f64, LabError> {
    let start = Instant::now();
    let mut done = 0u64;
    let mut off = 0u64;
    while done < total && start.elapsed() < MAX_TIME {
        if off >= end {
            off = 0;
        }
        let want = (end - off).min(buf.len() as u64) as usize;
        let n = f
            .read_at(&mut buf[..want], off)
            .map_err(|e| LabError::io("cannot read", device, e))?;
        if n == 0 {
            break;
        }
        off += n as u64;
        done += n as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    Ok(if secs > 0.0 {
        done as f64 / secs / 1e6
    } else {
        0.0
    })
}

/// Cached reads: one pass to fill the cache, then the timed passes.
pub fn cached(device: &Path) -> Result<f64, LabError> {
    let (f, size) = open(device, 0)?;
    let end = size.min(CACHED_WINDOW);
    let mut storage = Vec::new();
    let buf = aligned(&mut storage);
    read_loop(&f, device, buf, end, end)?;
    read_loop(&f, device, buf, end, CACHED_TOTAL)
}

/// Device reads: sequential O_DIRECT reads from the start.
pub fn direct(device: &Path) -> Result<f64, LabError> {
    let (f, size) = open(device, libc::O_DIRECT)?;
    let end = size.min(DEVICE_TOTAL) / 4096 * 4096;
    let mut storage = Vec::new();
    let buf = aligned(&mut storage);
    read_loop(&f, device, buf, end, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_regular_file() {
        // The loops work on any file; the lab points them at devices.
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, vec![7u8; 4 << 20]).unwrap();
        let c = cached(&p).unwrap();
        assert!(c > 0.0, "{c}");
        assert!(open(Path::new("/nonexistent-iolab"), 0).is_err());
    }
}
