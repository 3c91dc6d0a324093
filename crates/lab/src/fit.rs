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
//!
//! NILFS2 is log-structured: a removed file's blocks come back only when
//! its cleaner (nilfs_cleanerd) cleans their segments, and during a
//! comparison it cleans none. Measured in the virtual machine of
//! crates/cli/tests/vm_lab.rs (Debian's 6.1 kernel, nilfs-tools' default
//! nilfs_cleanerd.conf, `lssu -l` and `df` every half second through the
//! studies suite): on 160 and 320 MiB images the used space only grew
//! (16 MiB after mkfs to 80 and 176 MiB) and no segment was reclaimed,
//! although 32 and 127 MiB of it were dead, with the cleaner's protection
//! period at its default 3600 s and also with `-o pp=0` at mount. The
//! cleaner starts only when fewer than `min_clean_segments` (10%) of the
//! segments are clean, and NILFS2 keeps 8 segments (or 5%) in reserve,
//! which count as clean (9 of 19 were clean when 160 MiB was full): so
//! below 80 segments (640 MiB) the filesystem is full before the cleaner
//! starts, and above, the protection period keeps what the last hour
//! wrote. So on NILFS2 ([`nilfs2_room`]) the image must hold every
//! file the suite lays out with data (read files, written whatever the
//! runtime), not only the largest workload's; the files that jobs write
//! themselves add what the runtime lets them write on top, which the
//! check cannot know: 20 MiB at 320 MiB under emulation on a slow host,
//! and on a device that finishes each job within the runtime every
//! file a job writes (for `studies`, twelve files of an eighth of the
//! image in all: more than NILFS2 holds at any size below 8 GiB).

use iolab_spec::Host;

use iolab_core::plan::Layout;

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

/// Each workload of `suite` on an image of `size`, with the bytes of its
/// files (only those laid out with data when `written_only`; a metadata
/// workload's files either way); an error is a job the plan refuses.
fn workload_bytes(
    suite: &Suite,
    size: u64,
    host: Host,
    written_only: bool,
) -> Result<Vec<(u64, &str)>, String> {
    let params = Params {
        dir: std::path::Path::new("/nonexistent-iolab-fit"),
        place: "the image",
        file_size: suite::file_size(size),
        runtime_s: 1,
        host,
    };
    let mut each = Vec::with_capacity(suite.workloads.len());
    for w in &suite.workloads {
        let bytes = match w.meta_files {
            Some(files) => files.saturating_mul(META_FILE_BYTES),
            None => workload::plan_of(w, &params)?
                .files
                .iter()
                .filter(|f| !written_only || f.layout == Layout::Write)
                .map(|f| f.size)
                .sum(),
        };
        each.push((bytes, w.name.as_str()));
    }
    Ok(each)
}

/// The first workload with the most bytes (0 and "" when there is none).
fn largest(each: &[(u64, &str)]) -> (u64, String) {
    let mut most = (0, "");
    for &(bytes, name) in each {
        if bytes > most.0 {
            most = (bytes, name);
        }
    }
    (most.0, most.1.to_string())
}

/// The bytes the largest workload of `suite` holds at once on an image
/// of `size`, and that workload's name; an error is a job the plan
/// refuses (the campaign's preflight names it).
pub fn needed(suite: &Suite, size: u64, host: Host) -> Result<(u64, String), String> {
    Ok(largest(&workload_bytes(suite, size, host, false)?))
}

/// NILFS2's segments, as mkfs.nilfs2 makes them by default.
const NILFS2_SEGMENT: u64 = 8 << 20;

/// What NILFS2 on an image of `size` leaves for files, as `df` shows it
/// after mkfs (measured: 72 MiB of 160, 232 MiB of 320): its segments but
/// the first (the superblock's), less the reserve (5% of them, at least
/// 8) and the two segments of the first logs.
pub fn nilfs2_room(size: u64) -> u64 {
    let segments = size / NILFS2_SEGMENT;
    let reserved = segments.div_ceil(20).max(8);
    segments
        .saturating_sub(1 + reserved + 2)
        .saturating_mul(NILFS2_SEGMENT)
}

/// The bytes of data the workloads of `suite` lay out over the whole
/// suite on an image of `size` (every file a job reads is written before
/// it runs), with the metadata workloads' files, and the workload that
/// lays out the most.
pub fn laid_out(suite: &Suite, size: u64, host: Host) -> Result<(u64, String), String> {
    let each = workload_bytes(suite, size, host, true)?;
    let total = each.iter().fold(0u64, |t, &(b, _)| t.saturating_add(b));
    Ok((total, largest(&each).1))
}

/// Whether `suite` fits an image of `size` for filesystem `fs` (None: the
/// rule of every filesystem but NILFS2's).
fn fits(suite: &Suite, size: u64, fs: Option<&str>, host: Host) -> bool {
    let at_once = needed(suite, size, host).map(|(bytes, _)| bytes <= usable(size));
    let kept = match fs {
        Some("nilfs2") => laid_out(suite, size, host).map(|(bytes, _)| bytes <= nilfs2_room(size)),
        _ => Ok(true),
    };
    matches!((at_once, kept), (Ok(true), Ok(true)))
}

/// The smallest image, in whole MiB, that holds every workload of
/// `suite`; None when even 1 TiB does not (a job file's fixed size).
pub fn minimum(suite: &Suite, host: Host) -> Option<u64> {
    minimum_for(suite, None, host)
}

/// [`minimum`] for filesystem `fs`: on NILFS2, the image that also holds
/// every file the suite lays out.
pub fn minimum_for(suite: &Suite, fs: Option<&str>, host: Host) -> Option<u64> {
    let fits = |size: u64| fits(suite, size, fs, host);
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
        if filesystems.contains(&"nilfs2") {
            return check_nilfs2(suite, size, host);
        }
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

/// Refuses an image on which NILFS2, which reclaims nothing during a
/// comparison, cannot hold every file the suite lays out.
fn check_nilfs2(suite: &Suite, size: u64, host: Host) -> Result<(), String> {
    let (bytes, most) = laid_out(suite, size, host)?;
    let room = nilfs2_room(size);
    if bytes <= room {
        return Ok(());
    }
    let least = match minimum_for(suite, Some("nilfs2"), host) {
        Some(m) => format!("give --size {}m or more", m >> 20),
        None => "no image up to 1 TiB holds it".to_string(),
    };
    Err(format!(
        "--size {}: suite `{}` does not fit NILFS2: its workloads lay out {} MiB of files in all \
         (`{most}` the most), and NILFS2 reclaims no removed file's space during a comparison \
         (its cleaner starts only when under 10% of the segments are clean, and keeps what the \
         last hour wrote), while an image of {} MiB leaves it {} MiB; {least}",
        mib(size),
        suite.name,
        bytes.div_ceil(1 << 20),
        size >> 20,
        room >> 20,
    ))
}

fn mib(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
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
    fn nilfs2_needs_room_for_every_file_the_suite_lays_out() {
        // df after mkfs.nilfs2, measured: 72 MiB of 160, 232 MiB of 320.
        assert_eq!(nilfs2_room(160 << 20), 72 << 20);
        assert_eq!(nilfs2_room(320 << 20), 232 << 20);
        let s = suite::builtin(suite::DEFAULT).unwrap();
        // Five files laid out with data (two reads, stonewall-4's two,
        // randrw's): 100 MiB at 160 MiB, where the suite ran out of space
        // in stonewall-4; 200 MiB at 320 MiB, where it ran.
        assert_eq!(laid_out(&s, 160 << 20, HOST).unwrap().0, 100 << 20);
        let e = check(&s, 160 << 20, &["ext4", "nilfs2"], HOST).unwrap_err();
        assert!(e.contains("does not fit NILFS2"), "{e}");
        assert!(e.contains("lay out 100 MiB of files in all"), "{e}");
        assert!(
            e.contains("leaves it 72 MiB; give --size 240m or more"),
            "{e}"
        );
        assert!(check(&s, 320 << 20, &["nilfs2"], HOST).is_ok());
        assert!(check(&s, 240 << 20, &["nilfs2"], HOST).is_ok());
        assert!(check(&s, 239 << 20, &["nilfs2"], HOST).is_err());
        // Other filesystems keep the largest workload's rule.
        assert!(check(&s, 160 << 20, &["ext4", "f2fs"], HOST).is_ok());
        assert_eq!(minimum_for(&s, Some("nilfs2"), HOST), Some(240 << 20));
        // The metadata suite's files fit the image the VM test gives it.
        let m = suite::builtin("meta").unwrap();
        assert!(check(&m, 160 << 20, &["nilfs2"], HOST).is_ok());
        // Each suite's NILFS2 minimum, which `compare --list-suites` and
        // docs/compare.md give beside the general one.
        let mins: Vec<(&str, u64)> = suite::NAMES
            .iter()
            .map(|name| {
                let s = suite::builtin(name).unwrap();
                let m = minimum_for(&s, Some("nilfs2"), HOST).unwrap();
                assert!(check(&s, m, &["nilfs2"], HOST).is_ok(), "{name}");
                assert!(check(&s, m - (1 << 20), &["nilfs2"], HOST).is_err());
                (*name, m >> 20)
            })
            .collect();
        assert_eq!(
            mins,
            [
                ("studies", 240),
                ("basic", 120),
                ("meta", 128),
                ("bs-sweep", 352)
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
