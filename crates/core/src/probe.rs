//! The environment probe: where and on what a result was measured. The
//! host (name, kernel release, CPU model and count, memory, the virtual
//! machine if any, and the facts job keywords read), the mount
//! that holds a target path (filesystem type, options, source) and the
//! whole block device under it (model, rotational flag, scheduler, size),
//! read from /proc and /sys. Partitions resolve to their disk,
//! device-mapper and md devices to the first device under them, and loop
//! devices to the device that holds their backing file. Everything is
//! best effort: a fact that cannot be read stays empty (`""` or `None`),
//! as under tmpfs, which has no block device.

use std::fs;
use std::path::{Component, Path, PathBuf};

pub use iolab_stats::Environment;

/// Probes the host and the storage under `target` (a directory or file;
/// when it does not exist yet, its nearest existing ancestor). The time
/// is left for the caller to stamp.
pub fn probe(target: &Path) -> Environment {
    let mut env = host();
    let path = resolve_existing(target);
    env.target = path.display().to_string();
    let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mounts = parse_mountinfo(&mounts);
    let Some(mount) = mount_of(&mounts, &path) else {
        return env;
    };
    env.fs_type = mount.fs_type.clone();
    env.mount_point = mount.mount_point.display().to_string();
    env.mount_options = mount.options();
    env.mount_source = mount.source.clone();
    let sys = Sysfs::new("/sys");
    if let Some(disk) = sys.disk_of_mount(mount, &mounts, 0) {
        env.block_device = disk.name;
        env.device_model = disk.model;
        env.rotational = disk.rotational;
        env.scheduler = disk.scheduler;
        env.device_size_bytes = disk.size_bytes;
    }
    env
}

/// The host's facts alone: name, kernel release, CPU, memory, iolab's
/// version and the virtual machine it runs in, if any.
pub fn host() -> Environment {
    let (cpu_model, cpu_count) = cpu_info();
    Environment {
        host: read_trimmed("/proc/sys/kernel/hostname").unwrap_or_default(),
        kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
        cpu_model,
        cpu_count,
        memory_bytes: memory_bytes().unwrap_or(0),
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        hypervisor: crate::virt::detect(),
        ..Environment::default()
    }
}

/// The host facts the job language's keywords read (`$pagesize`,
/// `$mb_memory`, `$ncpus`): every command that parses job text takes
/// them from here.
pub fn keyword_host() -> iolab_spec::Host {
    iolab_spec::Host {
        page_size: iolab_engine::host::page_size(),
        mb_memory: iolab_engine::host::physical_memory() >> 20,
        ncpus: iolab_engine::host::online_cpus(),
    }
}

/// One line of /proc/self/mountinfo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    pub major: u32,
    pub minor: u32,
    pub mount_point: PathBuf,
    /// Per-mount options ("rw,relatime").
    pub mount_options: String,
    pub fs_type: String,
    pub source: String,
    /// The filesystem's options ("rw,discard").
    pub super_options: String,
}

impl MountEntry {
    /// The per-mount options followed by the filesystem's own that are not
    /// already among them, as `findmnt` shows them.
    pub fn options(&self) -> String {
        let mut opts: Vec<&str> = self.mount_options.split(',').collect();
        for o in self.super_options.split(',') {
            if !o.is_empty() && !opts.contains(&o) {
                opts.push(o);
            }
        }
        opts.retain(|o| !o.is_empty());
        opts.join(",")
    }
}

/// The entries of a mountinfo text; malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_mount_line).collect()
}

fn parse_mount_line(line: &str) -> Option<MountEntry> {
    let fields: Vec<&str> = line.split(' ').collect();
    let sep = fields.iter().position(|&f| f == "-")?;
    if sep < 6 || fields.len() < sep + 3 {
        return None;
    }
    let (major, minor) = fields[2].split_once(':')?;
    Some(MountEntry {
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        mount_point: PathBuf::from(unescape(fields[4])),
        mount_options: fields[5].to_string(),
        fs_type: fields[sep + 1].to_string(),
        source: unescape(fields[sep + 2]),
        super_options: fields.get(sep + 3).copied().unwrap_or("").to_string(),
    })
}

/// Undoes the kernel's octal escapes of space, tab, newline and backslash.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if let Ok(byte) = u8::try_from(v) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount holding `path` (absolute, links resolved): the longest mount
/// point that is a prefix of it by whole components, the later entry when
/// one point is mounted over.
pub fn mount_of<'a>(mounts: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for m in mounts {
        if !path.starts_with(&m.mount_point) {
            continue;
        }
        let depth = m.mount_point.components().count();
        let deeper = match best {
            None => true,
            Some(b) => depth >= b.mount_point.components().count(),
        };
        if deeper {
            best = Some(m);
        }
    }
    best
}

/// `path` made absolute with links resolved; a part that does not exist
/// yet is appended, normalized, to its nearest existing ancestor.
pub fn resolve_existing(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let mut base = abs.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(real) = fs::canonicalize(&base) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return normalize(&out);
        }
        match (base.file_name(), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                base = parent.to_path_buf();
            }
            _ => return normalize(&abs),
        }
    }
}

/// Removes `.` and `..` components lexically.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A whole block device as /sys describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Disk {
    pub name: String,
    pub model: String,
    pub rotational: Option<bool>,
    pub scheduler: String,
    pub size_bytes: Option<u64>,
}

/// Block device lookups under a sysfs root (/sys, or a test tree).
pub struct Sysfs {
    root: PathBuf,
}

/// How many loop-backing-file hops to follow before giving up.
const MAX_DEPTH: usize = 4;

impl Sysfs {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Sysfs { root: root.into() }
    }

    /// The disk under a mount: from its device numbers, or, when those are
    /// anonymous (btrfs, overlay), from a `/dev/...` source.
    pub fn disk_of_mount(
        &self,
        mount: &MountEntry,
        mounts: &[MountEntry],
        depth: usize,
    ) -> Option<Disk> {
        let dir = if mount.major != 0 {
            fs::canonicalize(
                self.root
                    .join(format!("dev/block/{}:{}", mount.major, mount.minor)),
            )
            .ok()
        } else {
            None
        };
        let dir = dir.or_else(|| {
            let src = mount.source.strip_prefix("/dev/")?;
            let real = fs::canonicalize(Path::new("/dev").join(src)).ok()?;
            let name = real.file_name()?;
            fs::canonicalize(self.root.join("class/block").join(name)).ok()
        })?;
        self.disk_of(&dir, mounts, depth)
    }

    /// The whole disk under the block device whose sysfs directory is
    /// `dir`.
    pub fn disk_of(&self, dir: &Path, mounts: &[MountEntry], depth: usize) -> Option<Disk> {
        let mut dir = dir.to_path_buf();
        for _ in 0..16 {
            if dir.join("partition").exists() {
                dir = dir.parent()?.to_path_buf();
                continue;
            }
            if let Some(slave) = first_entry(&dir.join("slaves")) {
                dir = fs::canonicalize(self.root.join("class/block").join(slave)).ok()?;
                continue;
            }
            if let Some(backing) = read_trimmed(dir.join("loop/backing_file")) {
                if depth < MAX_DEPTH {
                    let path = resolve_existing(Path::new(&backing));
                    if let Some(d) = mount_of(mounts, &path)
                        .and_then(|m| self.disk_of_mount(m, mounts, depth + 1))
                    {
                        return Some(d);
                    }
                }
            }
            break;
        }
        Some(read_disk(&dir))
    }
}

/// The first name in a directory, sorted; None when empty or missing.
fn first_entry(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.into_iter().next()
}

fn read_disk(dir: &Path) -> Disk {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let scheduler = read_trimmed(dir.join("queue/scheduler"))
        .map(|s| active_choice(&s))
        .unwrap_or_default();
    Disk {
        name,
        model: read_trimmed(dir.join("device/model")).unwrap_or_default(),
        rotational: read_trimmed(dir.join("queue/rotational")).and_then(|s| match s.as_str() {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        }),
        scheduler,
        size_bytes: read_trimmed(dir.join("size"))
            .and_then(|s| s.parse::<u64>().ok())
            .and_then(|sectors| sectors.checked_mul(512)),
    }
}

/// The bracketed entry of a sysfs choice list ("mq-deadline [none]" gives
/// "none"), or the whole text when there is a single unbracketed one.
pub(crate) fn active_choice(list: &str) -> String {
    list.split_whitespace()
        .find_map(|s| s.strip_prefix('[').and_then(|s| s.strip_suffix(']')))
        .unwrap_or(list)
        .to_string()
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The CPU model and the number of processors /proc/cpuinfo lists (the
/// threads this process may use when it lists none).
fn cpu_info() -> (String, u32) {
    let text = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let value = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let model = value("model name")
        .or_else(|| value("Model"))
        .or_else(|| value("Hardware"))
        .or_else(|| value("cpu"))
        .unwrap_or_default();
    let listed = text
        .lines()
        .filter(|l| l.split(':').next().is_some_and(|k| k.trim() == "processor"))
        .count() as u32;
    let count = if listed > 0 {
        listed
    } else {
        std::thread::available_parallelism().map_or(0, |n| n.get() as u32)
    };
    (model, count)
}

/// MemTotal from /proc/meminfo, in bytes.
fn memory_bytes() -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
30 27 8:1 / /mnt/my\\040disk rw,noatime shared:1 - xfs /dev/sda1 rw,attr2
31 30 0:40 / /mnt/my\\040disk/sub rw - tmpfs tmpfs rw,size=4k
32 30 0:41 / /mnt/my\\040disk/sub rw - tmpfs second rw
bad line
";

    #[test]
    fn mountinfo_lines_and_escapes() {
        let m = parse_mountinfo(MOUNTINFO);
        assert_eq!(m.len(), 5);
        assert_eq!(m[2].mount_point, PathBuf::from("/mnt/my disk"));
        assert_eq!((m[2].major, m[2].minor), (8, 1));
        assert_eq!(m[2].fs_type, "xfs");
        assert_eq!(m[2].source, "/dev/sda1");
        assert_eq!(m[2].options(), "rw,noatime,attr2");
        assert_eq!(m[1].options(), "rw,relatime,discard");
    }

    #[test]
    fn longest_mount_point_by_components_wins() {
        let m = parse_mountinfo(MOUNTINFO);
        let at = |p: &str| mount_of(&m, Path::new(p)).map(|e| e.source.as_str());
        assert_eq!(at("/home/user"), Some("/dev/vda"));
        assert_eq!(at("/mnt/my disk/x"), Some("/dev/sda1"));
        assert_eq!(
            at("/mnt/my diskette"),
            Some("/dev/vda"),
            "not a component prefix"
        );
        assert_eq!(
            at("/mnt/my disk/sub/f"),
            Some("second"),
            "the later mount on top"
        );
        assert_eq!(at("/proc"), Some("proc"));
    }

    #[test]
    fn scheduler_is_the_bracketed_one() {
        assert_eq!(active_choice("mq-deadline kyber [bfq] none"), "bfq");
        assert_eq!(active_choice("[none] mq-deadline"), "none");
        assert_eq!(active_choice("none"), "none");
    }

    #[test]
    fn missing_parts_of_a_target_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(dir.path()).unwrap();
        let p = resolve_existing(&dir.path().join("not/yet/../there"));
        assert_eq!(p, real.join("not/there"));
    }

    /// A sysfs tree: disk sda with partition sda1, dm-0 on sda1, and a
    /// loop device.
    fn fake_sysfs() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let sda = r.join("devices/pci0/block/sda");
        fs::create_dir_all(sda.join("device")).unwrap();
        fs::create_dir_all(sda.join("queue")).unwrap();
        fs::create_dir_all(sda.join("sda1")).unwrap();
        fs::write(sda.join("device/model"), "Spinning Disk   \n").unwrap();
        fs::write(sda.join("queue/rotational"), "1\n").unwrap();
        fs::write(sda.join("queue/scheduler"), "none [mq-deadline]\n").unwrap();
        fs::write(sda.join("size"), "2048\n").unwrap();
        fs::write(sda.join("sda1/partition"), "1\n").unwrap();
        let dm = r.join("devices/virtual/block/dm-0");
        fs::create_dir_all(dm.join("slaves")).unwrap();
        symlink(sda.join("sda1"), dm.join("slaves/sda1")).unwrap();
        let lp = r.join("devices/virtual/block/loop0");
        fs::create_dir_all(lp.join("loop")).unwrap();
        fs::create_dir_all(r.join("class/block")).unwrap();
        fs::create_dir_all(r.join("dev/block")).unwrap();
        symlink(sda.join("sda1"), r.join("class/block/sda1")).unwrap();
        symlink(&sda, r.join("class/block/sda")).unwrap();
        symlink(&dm, r.join("class/block/dm-0")).unwrap();
        symlink(sda.join("sda1"), r.join("dev/block/8:1")).unwrap();
        symlink(&dm, r.join("dev/block/253:0")).unwrap();
        symlink(&lp, r.join("dev/block/7:0")).unwrap();
        t
    }

    #[test]
    fn partitions_and_device_mapper_resolve_to_the_disk() {
        let t = fake_sysfs();
        let sys = Sysfs::new(t.path());
        let mount = |maj, min| MountEntry {
            major: maj,
            minor: min,
            mount_point: "/x".into(),
            mount_options: String::new(),
            fs_type: "ext4".into(),
            source: String::new(),
            super_options: String::new(),
        };
        let want = Disk {
            name: "sda".into(),
            model: "Spinning Disk".into(),
            rotational: Some(true),
            scheduler: "mq-deadline".into(),
            size_bytes: Some(2048 * 512),
        };
        assert_eq!(sys.disk_of_mount(&mount(8, 1), &[], 0), Some(want.clone()));
        assert_eq!(sys.disk_of_mount(&mount(253, 0), &[], 0), Some(want));
        // A loop device without a readable backing file stays itself.
        let lp = sys.disk_of_mount(&mount(7, 0), &[], 0).unwrap();
        assert_eq!(lp.name, "loop0");
        assert_eq!(lp.rotational, None);
        assert_eq!(sys.disk_of_mount(&mount(9, 9), &[], 0), None);
    }

    #[test]
    fn host_facts_are_read() {
        let (model, count) = cpu_info();
        assert!(count >= 1);
        assert!(!model.is_empty() || !cfg!(target_arch = "x86_64"));
        assert!(memory_bytes().unwrap() > 1 << 20);
    }
}
