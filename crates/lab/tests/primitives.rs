//! The lab's primitives on a real loop device: image, losetup with direct
//! I/O, mkfs, mount, capacity, read speeds, the device checks on a mounted
//! device, cold mount, and cleanup from the state file. Needs root.

use iolab_testkit::{require, skip};
use std::path::Path;

use iolab_lab::state::{Entry, State};
use iolab_lab::support::{self, Support};
use iolab_lab::{capacity, cleanup, device, image, loopdev, mkfs, mount, mountinfo, readspeed};

#[test]
fn f2fs_is_missing_on_this_kernel() {
    let kernel = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if kernel.contains("f2fs") {
        skip!("this kernel has f2fs");
    }
    let Support::Missing(reason) = support::check("f2fs") else {
        panic!("f2fs reported ready on a kernel without it");
    };
    let kernel = "the kernel does not support f2fs (not in /proc/filesystems, no loadable module)";
    if iolab_lab::exec::find_program("mkfs.f2fs").is_some() {
        assert_eq!(reason, kernel);
    } else {
        assert_eq!(
            reason,
            format!("{kernel} and mkfs.f2fs is not installed (not on PATH)")
        );
    }
}

#[test]
fn loop_mkfs_mount_measure_and_clean() {
    require!(root, filesystems = &["ext4"]);
    let Support::Ready { mkfs: tool } = support::check("ext4") else {
        unreachable!()
    };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    let mut state = State::create(work).unwrap();
    let img = work.join("ext4.img");
    state.add(Entry::Image(img.clone())).unwrap();
    image::create_sparse(&img, 256 << 20).unwrap();
    let dev = loopdev::attach(&img).unwrap();
    state
        .add(Entry::Loop {
            device: dev.clone(),
            image: img.clone(),
        })
        .unwrap();
    assert_eq!(loopdev::backing_file(&dev).as_deref(), Some(img.as_path()));
    assert_eq!(loopdev::devices_backed_by(&img), vec![dev.clone()]);

    let took = mkfs::format(&tool, "ext4", &["-m".into(), "0".into()], &dev).unwrap();
    assert!(took.as_nanos() > 0);

    let mnt = work.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    state.add(Entry::MountDir(mnt.clone())).unwrap();
    state.add(Entry::Mount(mnt.clone())).unwrap();
    mount::mount("ext4", &dev, &mnt, Some("noatime")).unwrap();
    assert!(mountinfo::is_mount_point(&mountinfo::read(), &mnt));

    let cap = capacity::of(&mnt).unwrap();
    assert!(
        cap.size_bytes > 200 << 20 && cap.size_bytes <= 256 << 20,
        "{cap:?}"
    );
    // -m 0: no blocks reserved for root.
    assert!(
        cap.avail_bytes + cap.used_bytes >= cap.size_bytes - (8 << 20),
        "{cap:?}"
    );
    assert!(cap.inodes_total > 1000);

    let speed = readspeed::measure(&dev).unwrap();
    assert!(
        speed.cached_mb_s > 0.0 && speed.device_mb_s > 0.0,
        "{speed:?}"
    );

    // A mounted device is refused, naming where it is mounted.
    let e = device::check(&dev, true).unwrap_err().to_string();
    assert!(e.contains(&dev.display().to_string()), "{e}");
    assert!(e.contains(&format!("mounted at {}", mnt.display())), "{e}");

    let cold = mount::cold_mount("ext4", &dev, &mnt, Some("noatime")).unwrap();
    assert!(cold.as_nanos() > 0);

    // Cleanup removes exactly what the state lists.
    let r = cleanup::clean(&mut state);
    assert!(r.problems.is_empty(), "{r:?}");
    assert!(!mountinfo::is_mount_point(&mountinfo::read(), &mnt));
    assert!(loopdev::devices_backed_by(&img).is_empty());
    assert!(!img.exists() && !mnt.exists());
    assert!(!work.join(iolab_lab::state::FILE_NAME).exists());
    assert!(Path::new(work).exists(), "the test's own directory stays");
}

#[test]
fn unmounted_loop_device_passes_the_checks() {
    require!(root, filesystems = &["ext4"]);
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("x.img");
    image::create_sparse(&img, 64 << 20).unwrap();
    let dev = loopdev::attach(&img).unwrap();
    let ok = device::check(&dev, true);
    let refused = device::check(&dev, false);
    loopdev::detach(&dev).unwrap();
    assert_eq!(ok.unwrap(), dev);
    assert!(refused.unwrap_err().to_string().contains("--destroy-data"));
}
