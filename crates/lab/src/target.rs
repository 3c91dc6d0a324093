//! Target descriptions: what `--fs`, `--target` and `--device` name.
//!
//! A filesystem target is `NAME`, `NAME:MKFS-OPTIONS`, `NAME@MOUNT-OPTIONS`
//! or `NAME:MKFS-OPTIONS@MOUNT-OPTIONS`, optionally prefixed by `LABEL=` to
//! tell two configurations of one filesystem apart
//! (`zstd=btrfs:-m single@compress=zstd`). mkfs options are split on
//! whitespace (no shell quoting) and passed to `mkfs.NAME` before the
//! device; mount options go to `mount -o` as written. In a comma list
//! (`--fs ext4,xfs`), a target with options takes the rest of the value,
//! commas included, so mount options such as `compress=zstd,noatime` stay
//! whole; give each configured target its own `--fs`. A directory target
//! is `NAME=DIR`: an existing directory, already mounted, measured as is.

use std::path::PathBuf;

use crate::bcache::CacheMode;
use crate::error::LabError;

/// A block layer the lab stacks between the device and the filesystem.
/// Only bcache today; dm-cache (lvmcache), md RAID or dm-crypt would be
/// further variants, each with its make, release and counters in a
/// module of its own as `bcache` has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stack {
    /// A bcache device in this mode (`--bcache`).
    Bcache(CacheMode),
}

impl Stack {
    /// For tables: "bcache writeback", "bcache, cache detached".
    pub fn describe(self) -> String {
        match self {
            Stack::Bcache(CacheMode::Off) => "bcache, cache detached".into(),
            Stack::Bcache(m) => format!("bcache {}", m.name()),
        }
    }
}

/// What a target is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// A filesystem the lab formats and mounts (on a loop image or the
    /// `--device`).
    Format {
        fs: String,
        mkfs_opts: Vec<String>,
        mount_opts: Option<String>,
        /// Formatted on a stacked device (`--bcache`): a cache device in
        /// front of the backing one.
        stack: Option<Stack>,
    },
    /// An existing directory, benchmarked where it is.
    Dir { path: PathBuf },
}

/// One column of a comparison: a label and what to measure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetSpec {
    /// The column heading; unique within a campaign.
    pub label: String,
    pub kind: TargetKind,
    /// The text the user wrote (for messages).
    pub text: String,
    /// The label was given explicitly.
    pub explicit_label: bool,
}

impl TargetSpec {
    /// The filesystem name of a format target.
    pub fn fs(&self) -> Option<&str> {
        match &self.kind {
            TargetKind::Format { fs, .. } => Some(fs),
            TargetKind::Dir { .. } => None,
        }
    }

    /// A short description for tables: "btrfs -m single, -o compress=zstd".
    pub fn describe(&self) -> String {
        match &self.kind {
            TargetKind::Format {
                fs,
                mkfs_opts,
                mount_opts,
                stack,
            } => {
                let mut s = fs.clone();
                if !mkfs_opts.is_empty() {
                    s.push_str(&format!(" mkfs {}", mkfs_opts.join(" ")));
                }
                if let Some(o) = mount_opts {
                    s.push_str(&format!(" -o {o}"));
                }
                if let Some(st) = stack {
                    s.push_str(&format!(" on {}", st.describe()));
                }
                s
            }
            TargetKind::Dir { path } => format!("directory {}", path.display()),
        }
    }
}

fn bad(spec: &str, reason: impl Into<String>) -> LabError {
    LabError::BadTarget {
        spec: spec.to_string(),
        reason: reason.into(),
    }
}

fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'))
}

fn is_fs_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'))
}

/// Parses one filesystem target (`[LABEL=]NAME[:MKFS][@MOUNT]`).
pub fn parse_fs(text: &str) -> Result<TargetSpec, LabError> {
    let trimmed = text.trim();
    let (label, rest) = match trimmed.split_once('=') {
        Some((l, r)) if is_label(l) && !l.contains(['@', ':']) => (Some(l.to_string()), r),
        _ => (None, trimmed),
    };
    let (head, mount_opts) = match rest.split_once('@') {
        Some((h, m)) => {
            if m.trim().is_empty() {
                return Err(bad(text, "empty mount options after `@`"));
            }
            (h, Some(m.trim().to_string()))
        }
        None => (rest, None),
    };
    let (name, mkfs_opts) = match head.split_once(':') {
        Some((n, o)) => (
            n.trim(),
            o.split_whitespace().map(String::from).collect::<Vec<_>>(),
        ),
        None => (head.trim(), Vec::new()),
    };
    if name.is_empty() {
        return Err(bad(
            text,
            "no filesystem name (expected e.g. `ext4` or `btrfs:-m single@compress=zstd`)",
        ));
    }
    if !is_fs_name(name) {
        return Err(bad(
            text,
            format!("`{name}` is not a filesystem name (letters, digits, `_` and `.` only)"),
        ));
    }
    Ok(TargetSpec {
        label: label.clone().unwrap_or_default(),
        explicit_label: label.is_some(),
        kind: TargetKind::Format {
            fs: name.to_string(),
            mkfs_opts,
            mount_opts,
            stack: None,
        },
        text: trimmed.to_string(),
    })
}

/// Parses a `--fs` value: a comma list of targets, where a target with
/// `:` or `@` options takes the rest of the value.
pub fn parse_fs_list(value: &str) -> Result<Vec<TargetSpec>, LabError> {
    let mut out = Vec::new();
    let mut rest = value;
    loop {
        let piece_end = rest.find(',').unwrap_or(rest.len());
        let piece = &rest[..piece_end];
        if piece.contains([':', '@']) {
            out.push(parse_fs(rest)?);
            break;
        }
        if piece.trim().is_empty() {
            return Err(bad(value, "empty entry in the filesystem list"));
        }
        out.push(parse_fs(piece)?);
        if piece_end == rest.len() {
            break;
        }
        rest = &rest[piece_end + 1..];
    }
    Ok(out)
}

/// Parses a `--target NAME=DIR`; the directory must exist.
pub fn parse_dir_target(text: &str) -> Result<TargetSpec, LabError> {
    let (name, dir) = text
        .split_once('=')
        .ok_or_else(|| bad(text, "expected NAME=DIR"))?;
    if !is_label(name) {
        return Err(bad(
            text,
            format!("`{name}` is not a target name (letters, digits, `_`, `-`, `.`, `+`)"),
        ));
    }
    if dir.is_empty() {
        return Err(bad(text, "no directory after `=`"));
    }
    let path = PathBuf::from(dir);
    if !path.is_dir() {
        return Err(bad(text, format!("`{dir}` is not an existing directory")));
    }
    Ok(TargetSpec {
        label: name.to_string(),
        explicit_label: true,
        kind: TargetKind::Dir { path },
        text: text.to_string(),
    })
}

/// Gives every target a unique label: an explicit label stays, and two
/// targets given the same explicit label are an error; otherwise the
/// filesystem name when it is the only target of that filesystem, or the
/// whole description when it is not; remaining clashes (with each other or
/// with an explicit label) get `#2`, `#3`.
pub fn assign_labels(targets: &mut [TargetSpec]) -> Result<(), LabError> {
    for (i, t) in targets.iter().enumerate() {
        if let Some(first) = targets[..i]
            .iter()
            .find(|o| o.explicit_label && t.explicit_label && o.label == t.label)
        {
            return Err(bad(
                &t.text,
                format!(
                    "the label `{}` is given twice (also to `{}`); give each target its own",
                    t.label, first.text
                ),
            ));
        }
    }
    let fs_names: Vec<Option<String>> = targets.iter().map(|t| t.fs().map(String::from)).collect();
    for (i, t) in targets.iter_mut().enumerate() {
        if t.explicit_label {
            continue;
        }
        let fs = fs_names[i].clone().unwrap_or_default();
        let shared = fs_names
            .iter()
            .enumerate()
            .any(|(j, n)| j != i && n.as_deref() == Some(fs.as_str()));
        t.label = if shared { t.text.clone() } else { fs };
    }
    for i in 0..targets.len() {
        if targets[i].explicit_label {
            continue;
        }
        let mut n = 1;
        let base = targets[i].label.clone();
        let taken = |targets: &[TargetSpec], label: &str| {
            targets
                .iter()
                .enumerate()
                .any(|(j, t)| j != i && t.label == label && (j < i || t.explicit_label))
        };
        while taken(targets, &targets[i].label) {
            n += 1;
            targets[i].label = format!("{base}#{n}");
        }
    }
    Ok(())
}

/// `--bcache MODES`: each formatted target (labels assigned) becomes one
/// target per mode, on a bcache device in that mode, labelled
/// `LABEL-bcache-MODE` (`bcache-MODE` when there is one filesystem).
/// Directory targets cannot be stacked.
pub fn stack_bcache(
    targets: Vec<TargetSpec>,
    modes: &[CacheMode],
) -> Result<Vec<TargetSpec>, LabError> {
    let formats = targets
        .iter()
        .filter(|t| matches!(t.kind, TargetKind::Format { .. }))
        .count();
    let mut out = Vec::new();
    for t in targets {
        let TargetKind::Format {
            fs,
            mkfs_opts,
            mount_opts,
            ..
        } = &t.kind
        else {
            return Err(bad(
                &t.text,
                "--bcache stacks the filesystems the lab formats (--fs); a directory target is measured where it is",
            ));
        };
        for &m in modes {
            let label = if formats == 1 {
                format!("bcache-{}", m.name())
            } else {
                format!("{}-bcache-{}", t.label, m.name())
            };
            out.push(TargetSpec {
                label,
                explicit_label: true,
                kind: TargetKind::Format {
                    fs: fs.clone(),
                    mkfs_opts: mkfs_opts.clone(),
                    mount_opts: mount_opts.clone(),
                    stack: Some(Stack::Bcache(m)),
                },
                text: format!("{} (bcache {})", t.text, m.name()),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(fs: &str, mkfs: &[&str], mount: Option<&str>) -> TargetKind {
        TargetKind::Format {
            fs: fs.into(),
            mkfs_opts: mkfs.iter().map(|s| s.to_string()).collect(),
            mount_opts: mount.map(String::from),
            stack: None,
        }
    }

    #[test]
    fn plain_and_configured_targets() {
        assert_eq!(parse_fs("ext4").unwrap().kind, fmt("ext4", &[], None));
        let t = parse_fs("btrfs:-m single@compress=zstd").unwrap();
        assert_eq!(
            t.kind,
            fmt("btrfs", &["-m", "single"], Some("compress=zstd"))
        );
        assert!(!t.explicit_label);
        let t = parse_fs("xfs@noatime,nodiratime").unwrap();
        assert_eq!(t.kind, fmt("xfs", &[], Some("noatime,nodiratime")));
        let t = parse_fs("ext4:-E lazy_itable_init=0").unwrap();
        assert_eq!(t.kind, fmt("ext4", &["-E", "lazy_itable_init=0"], None));
    }

    #[test]
    fn labels() {
        let t = parse_fs("zstd=btrfs@compress=zstd").unwrap();
        assert_eq!(t.label, "zstd");
        assert!(t.explicit_label);
        assert_eq!(t.kind, fmt("btrfs", &[], Some("compress=zstd")));
        // `=` inside the mount options is not a label.
        assert!(!parse_fs("btrfs@compress=zstd").unwrap().explicit_label);

        let mut ts = parse_fs_list("btrfs,ext4").unwrap();
        ts.push(parse_fs("btrfs@compress=zstd").unwrap());
        ts.push(parse_fs("ext4").unwrap());
        assign_labels(&mut ts).unwrap();
        let labels: Vec<&str> = ts.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["btrfs", "ext4", "btrfs@compress=zstd", "ext4#2"]);
    }

    #[test]
    fn explicit_labels_are_never_renamed() {
        let d = tempfile::tempdir().unwrap();
        let dir = |l: &str| parse_dir_target(&format!("{l}={}", d.path().display())).unwrap();
        // Given twice: an error naming the label.
        let mut ts = vec![dir("a"), dir("a")];
        let e = assign_labels(&mut ts).unwrap_err().to_string();
        assert!(e.contains("the label `a` is given twice"), "{e}");
        // An automatic label that clashes with an explicit one yields,
        // whichever comes first.
        let mut ts = vec![parse_fs("ext4").unwrap(), dir("ext4")];
        assign_labels(&mut ts).unwrap();
        let labels: Vec<&str> = ts.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["ext4#2", "ext4"]);
        let mut ts = vec![dir("ext4"), parse_fs("ext4").unwrap()];
        assign_labels(&mut ts).unwrap();
        let labels: Vec<&str> = ts.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["ext4", "ext4#2"]);
    }

    #[test]
    fn lists_keep_option_commas() {
        let ts = parse_fs_list("ext4,xfs,btrfs:-m single@compress=zstd,noatime").unwrap();
        assert_eq!(ts.len(), 3);
        assert_eq!(ts[1].kind, fmt("xfs", &[], None));
        assert_eq!(
            ts[2].kind,
            fmt("btrfs", &["-m", "single"], Some("compress=zstd,noatime"))
        );
    }

    #[test]
    fn bad_targets_name_the_problem() {
        for bad in ["", "ext4,,xfs", "../x", ":-F", "ext4@", "e xt4"] {
            let e = parse_fs_list(bad).unwrap_err().to_string();
            assert!(e.contains("target"), "{bad}: {e}");
        }
        let e = parse_dir_target("a=/nonexistent/dir")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not an existing directory"), "{e}");
        assert!(parse_dir_target("nodir").is_err());
    }

    #[test]
    fn bcache_stacks_each_filesystem_in_each_mode() {
        let modes = [CacheMode::Writeback, CacheMode::Off];
        let mut one = parse_fs_list("ext4").unwrap();
        assign_labels(&mut one).unwrap();
        let ts = stack_bcache(one, &modes).unwrap();
        let labels: Vec<&str> = ts.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["bcache-writeback", "bcache-off"]);
        assert_eq!(ts[0].describe(), "ext4 on bcache writeback");
        assert_eq!(ts[1].describe(), "ext4 on bcache, cache detached");
        let mut two = parse_fs_list("ext4,xfs").unwrap();
        assign_labels(&mut two).unwrap();
        let ts = stack_bcache(two, &modes).unwrap();
        let labels: Vec<&str> = ts.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "ext4-bcache-writeback",
                "ext4-bcache-off",
                "xfs-bcache-writeback",
                "xfs-bcache-off"
            ]
        );
        let d = tempfile::tempdir().unwrap();
        let dir = parse_dir_target(&format!("a={}", d.path().display())).unwrap();
        let e = stack_bcache(vec![dir], &modes).unwrap_err().to_string();
        assert!(e.contains("--bcache stacks"), "{e}");
    }

    #[test]
    fn dir_targets() {
        let d = tempfile::tempdir().unwrap();
        let text = format!("fast={}", d.path().display());
        let t = parse_dir_target(&text).unwrap();
        assert_eq!(t.label, "fast");
        assert_eq!(
            t.kind,
            TargetKind::Dir {
                path: d.path().into()
            }
        );
    }
}
