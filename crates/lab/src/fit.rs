//! Whether a suite fits the loop images of a comparison, checked before
//! anything is made. A workload's files are laid out together before its
//! jobs run and removed after it (`unlink=1`), so the image must hold the
//! largest workload's files at once, plus the filesystem's own blocks
//! (journal, inode tables, allocation groups): [`usable`] counts a
//! sixteenth of the image, at least 8 MiB, for them. A metadata workload
//! needs an inode and a directory entry per file, counted as 4 KiB each
//! (ext4's inode ratio on small filesystems). The files scale with the
//! image (an eighth of it, 16 MiB to 1 GiB: [`suite::file_size`]), so a
//! suite's minimum image is found by search, and named in the refusal.
//! Some mkfs tools refuse small devices of their own accord
//! ([`fs_minimum`]); that is checked here too.

use iolab_spec::Host;

use crate::suite::{self, Suite};
use crate::workload::{self, Params};

/// Bytes counted per file of a metadata workload.
pub const META_FILE_BYTES: u64 = 4 << 10;

/// The largest image a minimum is searched up to (1 TiB).
const SEARCH_LIMIT: u64 = 1 << 40;

/// What a loop image of `size` bytes leaves for the workloads' files.
pub fn usable(size: u64) -> u64 {
    size.saturating_sub((size / 16).max(8 << 20))
}

/// The bytes the largest workload of `suite` holds at once on an image
/// of `size`, and that workload's name; an error is a job the plan
/// refuses (the campaign's preflight names it).
pub fn needed(suite: &Suite, size: u64, host: Host) -> Result<(u64, String), String> {
    let dir = std::path::Path::new("/nonexistent-iolab-fit");
    let params = Params {
        dir,
        place: "the image",
        file_size: suite::file_size(size),
        runtime_s: 1,
        host,
    };
    let mut most = (0, String::new());
    for w in &suite.workloads {
        let bytes = match w.meta_files {
            Some(files) => files.saturating_mul(META_FILE_BYTES),
            None => workload::plan_of(w, &params)?
                .files
                .iter()
                .map(|f| f.size)
                .sum(),
        };
        if bytes > most.0 {
            most = (bytes, w.name.clone());
        }
    }
    Ok(most)
}

/// The smallest image, in whole MiB, that holds every workload of
/// `suite`; None when even 1 TiB does not (a job file's fixed size).
pub fn minimum(suite: &Suite, host: Host) -> Option<u64> {
    let fits = |size: u64| {
        needed(suite, size, host)
            .map(|(bytes, _)| bytes <= usable(size))
            .unwrap_or(false)
    };
    if !fits(SEARCH_LIMIT) {
        return None;
    }
    // The files grow at an eighth of the image, the room at fifteen
    // sixteenths: once it fits, larger images fit too.
    let (mut lo, mut hi) = (0u64, SEARCH_LIMIT >> 20);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if fits(mid << 20) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi << 20)
}

/// The smallest device a filesystem's mkfs formats: mkfs.xfs (5.19 and
/// later) 300 MiB, mkfs.btrfs (5.x, 6.x) 114294784 bytes (109 MiB).
pub fn fs_minimum(fs: &str) -> Option<u64> {
    match fs {
        "xfs" => Some(300 << 20),
        "btrfs" => Some(114_294_784),
        _ => None,
    }
}

/// Refuses an image of `size` that the suite's largest workload does not
/// fit in (naming the workload, what it needs and the suite's minimum),
/// or that one of `filesystems` cannot be made on.
pub fn check(suite: &Suite, size: u64, filesystems: &[&str], host: Host) -> Result<(), String> {
    for fs in filesystems {
        if let Some(min) = fs_minimum(fs).filter(|&m| size < m) {
            return Err(format!(
                "--size {}: mkfs.{fs} makes no filesystem on an image under {} MiB; give --size \
                 {}m or more",
                mib(size),
                min.div_ceil(1 << 20),
                min.div_ceil(1 << 20)
            ));
        }
    }
    let (bytes, name) = needed(suite, size, host)?;
    if bytes <= usable(size) {
        return Ok(());
    }
    let least = match minimum(suite, host) {
        Some(m) => format!("give --size {}m or more", m >> 20),
        None => "no image up to 1 TiB holds it".to_string(),
    };
    Err(format!(
        "--size {}: suite `{}` does not fit: its workload `{name}` needs {} MiB of files at once \
         and an image of {} MiB leaves {} MiB beside the filesystem's own blocks; {least}",
        mib(size),
        suite.name,
        bytes.div_ceil(1 << 20),
        size >> 20,
        usable(size) >> 20,
    ))
}

fn mib(bytes: u64) -> String {
    if bytes % (1 << 20) == 0 {
        format!("{}m", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: Host = Host::EXAMPLE;

    #[test]
    fn every_builtin_suite_has_a_minimum_and_fits_at_it() {
        let mut mins = Vec::new();
        for name in suite::NAMES {
            let s = suite::builtin(name).unwrap();
            let m = minimum(&s, HOST).unwrap();
            assert!(check(&s, m, &["ext4"], HOST).is_ok(), "{name} at {m}");
            let e = check(&s, m - (1 << 20), &[], HOST).unwrap_err();
            assert!(
                e.contains(&format!("give --size {}m or more", m >> 20)),
                "{e}"
            );
            mins.push((name, m >> 20));
        }
        // The numbers docs/compare.md gives.
        assert_eq!(
            mins,
            [
                ("studies", 72),
                ("basic", 24),
                ("meta", 48),
                ("bs-sweep", 24)
            ]
        );
    }

    #[test]
    fn the_default_size_fits_the_default_suite_and_small_images_do_not() {
        let s = suite::builtin(suite::DEFAULT).unwrap();
        assert!(check(&s, 4 << 30, &["ext4", "xfs", "btrfs"], HOST).is_ok());
        let e = check(&s, 64 << 20, &["ext4"], HOST).unwrap_err();
        assert!(e.contains("workload `stonewall-4` needs 64 MiB"), "{e}");
        assert!(e.contains("give --size 72m or more"), "{e}");
        let e = check(&s, 10 << 20, &[], HOST).unwrap_err();
        assert!(e.contains("--size 10m"), "{e}");
        // The mkfs tools' own minimums.
        let e = check(&s, 256 << 20, &["ext4", "xfs"], HOST).unwrap_err();
        assert!(e.contains("mkfs.xfs makes no filesystem"), "{e}");
        assert!(e.contains("give --size 300m or more"), "{e}");
        assert!(check(&s, 300 << 20, &["xfs"], HOST).is_ok());
        let e = check(&s, 108 << 20, &["btrfs"], HOST).unwrap_err();
        assert!(e.contains("give --size 109m or more"), "{e}");
        assert!(check(&s, 109 << 20, &["btrfs"], HOST).is_ok());
    }
}
