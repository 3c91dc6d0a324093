//! What iolab's default data leaves in a file it wrote: each block starts
//! with its own offset and the sequence number of the write that put it
//! there (both little-endian u64). Tests read them back to check that each
//! block was written once and where.

use std::path::Path;

/// (offset, write sequence number) at the start of each `bs`-byte block of
/// the file at `path`.
pub fn block_stamps(path: &Path, bs: usize) -> Vec<(u64, u64)> {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    data.chunks(bs)
        .map(|b| {
            (
                u64::from_le_bytes(b[..8].try_into().unwrap()),
                u64::from_le_bytes(b[8..16].try_into().unwrap()),
            )
        })
        .collect()
}

/// The write sequence numbers of each `bs`-byte block of the file at
/// `path`, in block order, checking that every block carries its own
/// offset (it was written where it belongs).
pub fn write_order(path: &Path, bs: usize) -> Vec<u64> {
    block_stamps(path, bs)
        .into_iter()
        .enumerate()
        .map(|(i, (offset, seq))| {
            assert_eq!(
                offset,
                (i * bs) as u64,
                "{}: the stamp of block {i}",
                path.display()
            );
            seq
        })
        .collect()
}

/// Checks that the file at `path` is `n` blocks of `bs` bytes each written
/// exactly once, where it belongs: the blocks carry their own offsets and,
/// between them, the write numbers 1..=n.
pub fn assert_each_block_written_once(path: &Path, bs: usize, n: u64) {
    let mut seqs = write_order(path, bs);
    seqs.sort_unstable();
    assert_eq!(
        seqs,
        (1..=n).collect::<Vec<u64>>(),
        "{}: each block written once",
        path.display()
    );
}
