//! `Tree`: where the metadata benchmark's files live. Either every file in
//! the run's own directory, or a tree with `dirs` subdirectories per
//! directory and `depth` levels whose last level (the leaves) holds the
//! files, spread in contiguous blocks so that file `i` and `i + 1` usually
//! share a directory. Also `NameBuf`, which formats a file's name into a
//! fixed buffer per operation without allocating.

use std::ffi::{CStr, CString};
use std::ops::Range;

/// Directories a tree may have at most, so that a typo like `--dirs 100
/// --depth 6` is refused instead of making 10^12 directories.
pub const MAX_DIRECTORIES: u64 = 1_000_000;

/// The shape of a run's directories.
#[derive(Debug, Clone)]
pub struct Tree {
    files: u64,
    /// Every directory of the tree, relative to the run's directory,
    /// level by level (parents before children).
    dirs: Vec<CString>,
    /// The index in `dirs` where each level starts, and one past the end.
    level_starts: Vec<usize>,
    /// The directories holding files, relative to the run's directory
    /// ("." when there is no tree).
    leaves: Vec<CString>,
}

/// A shape that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    #[error("--depth {0} needs --dirs (subdirectories per directory) above 0")]
    DepthWithoutDirs(u32),
    #[error("--dirs {dirs} --depth {depth} makes more than {MAX_DIRECTORIES} directories")]
    TooLarge { dirs: u64, depth: u32 },
}

impl Tree {
    /// `files` files in one directory (`dirs == 0`), or in the leaves of a
    /// tree `depth` levels deep (0 counts as 1) with `dirs` subdirectories
    /// per directory.
    pub fn new(files: u64, dirs: u64, depth: u32) -> Result<Tree, TreeError> {
        if dirs == 0 {
            if depth > 1 {
                return Err(TreeError::DepthWithoutDirs(depth));
            }
            return Ok(Tree {
                files,
                dirs: Vec::new(),
                level_starts: vec![0],
                leaves: vec![CString::from(c".")],
            });
        }
        let depth = depth.max(1);
        let too_large = TreeError::TooLarge { dirs, depth };
        let mut total: u64 = 0;
        let mut width: u64 = 1;
        for _ in 0..depth {
            width = width.checked_mul(dirs).ok_or(too_large.clone())?;
            total = total.checked_add(width).ok_or(too_large.clone())?;
            if total > MAX_DIRECTORIES {
                return Err(too_large);
            }
        }
        let mut all: Vec<CString> = Vec::with_capacity(total as usize);
        let mut level_starts = vec![0];
        let mut prev: Vec<String> = vec![String::new()];
        for _ in 0..depth {
            let mut level = Vec::with_capacity(prev.len() * dirs as usize);
            for parent in &prev {
                for d in 0..dirs {
                    level.push(format!("{parent}d{d}/"));
                }
            }
            for p in &level {
                all.push(cstring(p.trim_end_matches('/')));
            }
            level_starts.push(all.len());
            prev = level;
        }
        let leaves = all[level_starts[level_starts.len() - 2]..].to_vec();
        Ok(Tree {
            files,
            dirs: all,
            level_starts,
            leaves,
        })
    }

    /// Every directory of the tree, parents first.
    pub fn dirs(&self) -> &[CString] {
        &self.dirs
    }

    /// The index range in [`Tree::dirs`] of each level, top first.
    pub fn levels(&self) -> impl DoubleEndedIterator<Item = Range<usize>> + '_ {
        self.level_starts.windows(2).map(|w| w[0]..w[1])
    }

    pub fn leaves(&self) -> &[CString] {
        &self.leaves
    }

    /// The leaf that holds file `i`.
    pub fn leaf_of(&self, i: u64) -> usize {
        let leaves = self.leaves.len() as u128;
        (u128::from(i) * leaves / u128::from(self.files.max(1))) as usize
    }

    /// The first file index of leaf `leaf` (`files` for one past the last).
    pub fn first_file_of(&self, leaf: usize) -> u64 {
        let leaves = self.leaves.len() as u128;
        let f = u128::from(self.files);
        // The smallest i with i * leaves / files >= leaf.
        ((leaf as u128 * f).div_ceil(leaves)) as u64
    }
}

fn cstring(s: &str) -> CString {
    CString::new(s).expect("tree paths are made of letters and digits")
}

/// A file name, `<prefix><index>`, or `<prefix><rank>.<index>` for a
/// rank of a run whose ranks share one directory, formatted into a fixed
/// buffer.
pub struct NameBuf {
    buf: [u8; 40],
    /// Where the index starts: after the prefix and the rank's tag.
    at: usize,
}

impl Default for NameBuf {
    fn default() -> Self {
        Self::new()
    }
}

/// `i`'s decimal digits at `out`'s start; how many.
fn digits(out: &mut [u8], mut i: u64) -> usize {
    let mut d = [0u8; 20];
    let mut n = 0;
    loop {
        d[19 - n] = b'0' + (i % 10) as u8;
        n += 1;
        i /= 10;
        if i == 0 {
            break;
        }
    }
    out[..n].copy_from_slice(&d[20 - n..]);
    n
}

impl NameBuf {
    pub fn new() -> Self {
        NameBuf {
            buf: [0; 40],
            at: 1,
        }
    }

    /// Names that carry `rank` (`f3.17`), so that ranks sharing one
    /// directory never name the same file.
    pub fn tagged(rank: Option<u32>) -> Self {
        let mut b = NameBuf::new();
        if let Some(r) = rank {
            let n = digits(&mut b.buf[1..], u64::from(r));
            b.buf[1 + n] = b'.';
            b.at = n + 2;
        }
        b
    }

    /// The name of file `i` with a one-letter `prefix` (`f` as created,
    /// `r` after rename).
    #[inline]
    pub fn name(&mut self, prefix: u8, i: u64) -> &CStr {
        // At most 1 + 11 + 20 bytes and the NUL.
        self.buf[0] = prefix;
        let end = self.at + digits(&mut self.buf[self.at..], i);
        self.buf[end] = 0;
        CStr::from_bytes_with_nul(&self.buf[..=end]).expect("a name of digits holds no NUL")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let mut b = NameBuf::new();
        assert_eq!(b.name(b'f', 0), c"f0");
        assert_eq!(b.name(b'r', 1234567), c"r1234567");
        assert_eq!(b.name(b'f', u64::MAX).to_bytes().len(), 21);
        let mut t = NameBuf::tagged(Some(3));
        assert_eq!(t.name(b'f', 17), c"f3.17");
        assert_eq!(t.name(b'r', 0), c"r3.0");
        let mut t = NameBuf::tagged(Some(u32::MAX));
        assert_eq!(t.name(b'f', u64::MAX).to_bytes().len(), 32);
        assert_eq!(NameBuf::tagged(None).name(b'f', 5), c"f5");
    }

    #[test]
    fn one_directory() {
        let t = Tree::new(10, 0, 0).unwrap();
        assert!(t.dirs().is_empty());
        assert_eq!(t.leaves(), &[CString::from(c".")]);
        assert_eq!(t.leaf_of(9), 0);
        assert_eq!(t.levels().count(), 0);
        assert!(matches!(
            Tree::new(10, 0, 3),
            Err(TreeError::DepthWithoutDirs(3))
        ));
    }

    #[test]
    fn two_by_two() {
        let t = Tree::new(10, 2, 2).unwrap();
        let names: Vec<&str> = t.dirs().iter().map(|c| c.to_str().unwrap()).collect();
        assert_eq!(names, ["d0", "d1", "d0/d0", "d0/d1", "d1/d0", "d1/d1"]);
        let levels: Vec<Range<usize>> = t.levels().collect();
        assert_eq!(levels, [0..2, 2..6]);
        assert_eq!(t.leaves().len(), 4);
        // Ten files over four leaves in contiguous blocks of 3, 2, 3, 2.
        let per_leaf: Vec<usize> = (0..4)
            .map(|l| (0..10).filter(|&i| t.leaf_of(i) == l).count())
            .collect();
        assert_eq!(per_leaf.iter().sum::<usize>(), 10);
        assert!(per_leaf.iter().all(|&n| n == 2 || n == 3), "{per_leaf:?}");
        for l in 0..=4 {
            let first = t.first_file_of(l);
            if l < 4 {
                assert_eq!(t.leaf_of(first), l);
            }
            if first > 0 {
                assert_eq!(t.leaf_of(first - 1), l - 1);
            }
        }
        assert_eq!(t.first_file_of(4), 10);
    }

    #[test]
    fn fewer_files_than_leaves() {
        let t = Tree::new(3, 10, 1).unwrap();
        let used: Vec<usize> = (0..3).map(|i| t.leaf_of(i)).collect();
        assert_eq!(used, [0, 3, 6]);
        assert_eq!(t.first_file_of(1), 1);
        assert_eq!(t.leaf_of(t.first_file_of(1)), 3);
    }

    #[test]
    fn huge_trees_are_refused() {
        assert!(matches!(
            Tree::new(10, 100, 6),
            Err(TreeError::TooLarge { .. })
        ));
        assert!(Tree::new(10, u64::MAX, 3).is_err());
        assert_eq!(Tree::new(10, 10, 3).unwrap().dirs().len(), 1110);
    }
}
