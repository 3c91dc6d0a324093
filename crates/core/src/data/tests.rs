//! The data generator judged by a real compressor (zstd) and by counting
//! repeated 4 KiB blocks, on what a job would write.

use std::collections::HashSet;

use super::*;

const BS: usize = 4096;
const WRITES: usize = 2048;

/// What a job with one buffer writes: `WRITES` blocks of `BS` bytes.
fn written(spec: BufferSpec) -> Vec<u8> {
    let mut gen = DataGen::new(&spec, Rng::from_seed(7));
    let mut buf = vec![0u8; BS];
    gen.init(&mut buf);
    let mut out = Vec::with_capacity(BS * WRITES);
    for i in 0..WRITES {
        gen.prepare(&mut buf, BS, (i * BS) as u64, i as u64 + 1);
        out.extend_from_slice(&buf);
    }
    out
}

fn ratio(data: &[u8]) -> f64 {
    let z = zstd::bulk::compress(data, 3).unwrap();
    z.len() as f64 / data.len() as f64
}

fn duplicate_share(data: &[u8]) -> f64 {
    let mut seen = HashSet::new();
    let dups = data.chunks(BS).filter(|b| !seen.insert(b.to_vec())).count();
    dups as f64 / (data.len() / BS) as f64
}

#[test]
fn default_data_neither_compresses_nor_deduplicates() {
    let data = written(BufferSpec::default());
    let r = ratio(&data);
    assert!(r > 0.99, "default data compressed to {r}");
    assert_eq!(duplicate_share(&data), 0.0);
}

#[test]
fn scrambled_blocks_carry_their_offset_and_sequence() {
    let data = written(BufferSpec::default());
    let block = &data[7 * BS..8 * BS];
    assert_eq!(block[..8], (7 * BS as u64).to_le_bytes());
    assert_eq!(block[8..16], 8u64.to_le_bytes());
}

#[test]
fn without_scramble_a_reused_buffer_repeats() {
    let spec = BufferSpec {
        scramble: false,
        ..BufferSpec::default()
    };
    let data = written(spec);
    assert!(duplicate_share(&data) > 0.99);
    assert!(ratio(&data) < 0.05);
}

#[test]
fn refill_gives_unique_incompressible_blocks() {
    let spec = BufferSpec {
        refill: true,
        ..BufferSpec::default()
    };
    let data = written(spec);
    assert!(ratio(&data) > 0.99);
    assert_eq!(duplicate_share(&data), 0.0);
}

#[test]
fn buffer_compress_percentage_sets_the_compressed_size() {
    for pct in [0u32, 25, 50, 75] {
        let spec = BufferSpec {
            compress_percentage: Some(pct),
            ..BufferSpec::default()
        }
        .with_implied_refill(false);
        let data = written(spec);
        let r = ratio(&data);
        let expected = (100 - pct) as f64 / 100.0;
        assert!(
            (r - expected).abs() < 0.03,
            "buffer_compress_percentage={pct}: compressed to {r:.3}, expected {expected:.2}"
        );
        assert_eq!(duplicate_share(&data), 0.0, "pct {pct}");
    }
}

#[test]
fn compress_chunk_zero_is_one_split_per_buffer() {
    let spec = BufferSpec {
        compress_percentage: Some(50),
        compress_chunk: 0,
        ..BufferSpec::default()
    }
    .with_implied_refill(false);
    let mut gen = DataGen::new(&spec, Rng::from_seed(1));
    let mut buf = vec![1u8; BS];
    gen.prepare(&mut buf, BS, 0, 1);
    assert!(buf[BS / 2..].iter().all(|b| *b == 0));
    assert!(buf[..BS / 2].iter().filter(|b| **b == 0).count() < 64);
}

#[test]
fn compress_fixed_part_takes_the_buffer_pattern() {
    let spec = BufferSpec {
        compress_percentage: Some(50),
        pattern: Some(vec![0xde, 0xad]),
        ..BufferSpec::default()
    };
    let gen = DataGen::new(&spec, Rng::from_seed(1));
    let mut buf = vec![0u8; 1024];
    gen.fill(&mut buf, 9);
    assert_eq!(&buf[256..260], &[0xde, 0xad, 0xde, 0xad]);
    assert_eq!(&buf[768..772], &[0xde, 0xad, 0xde, 0xad]);
}

#[test]
fn zero_buffers_compress_to_almost_nothing() {
    let spec = BufferSpec {
        zero: true,
        ..BufferSpec::default()
    };
    let data = written(spec);
    assert!(data.iter().all(|b| *b == 0));
    assert!(ratio(&data) < 0.001);
}

#[test]
fn buffer_pattern_repeats_over_every_write() {
    let spec = BufferSpec {
        pattern: Some(b"abc".to_vec()),
        ..BufferSpec::default()
    };
    let data = written(spec);
    for (i, b) in data[..BS].iter().enumerate() {
        assert_eq!(*b, b"abc"[i % 3]);
    }
    assert_eq!(&data[..BS], &data[BS * 5..BS * 6]);
}

#[test]
fn dedupe_percentage_repeats_that_share_of_blocks() {
    for pct in [10u32, 25, 50, 75] {
        let spec = BufferSpec {
            dedupe_percentage: pct,
            ..BufferSpec::default()
        }
        .with_implied_refill(false);
        let share = duplicate_share(&written(spec));
        let expected = pct as f64 / 100.0;
        assert!(
            (share - expected).abs() < 0.04,
            "dedupe_percentage={pct}: {share:.3} of blocks repeat"
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let spec = BufferSpec {
        compress_percentage: Some(30),
        ..BufferSpec::default()
    };
    let gen = DataGen::new(&spec, Rng::from_seed(3));
    let (mut a, mut b) = (vec![0u8; 5000], vec![1u8; 5000]);
    gen.fill(&mut a, 42);
    gen.fill(&mut b, 42);
    assert_eq!(a, b);
    gen.fill(&mut b, 43);
    assert_ne!(a, b);
}

#[test]
fn implied_refill_follows_fio() {
    let base = BufferSpec::default();
    assert!(!base.clone().with_implied_refill(false).refill);
    assert!(base.clone().with_implied_refill(true).refill);
    let c100 = BufferSpec {
        compress_percentage: Some(100),
        ..BufferSpec::default()
    };
    assert!(!c100.with_implied_refill(false).refill);
    let d = BufferSpec {
        dedupe_percentage: 5,
        ..BufferSpec::default()
    };
    assert!(d.with_implied_refill(false).refill);
}

#[test]
fn fixed_fill_repeats_the_pattern_from_its_phase() {
    // Byte by byte, as the definition says, against the doubling copies.
    let patterns: [&[u8]; 5] = [
        &[0xff],
        &[1, 2],
        &[1, 2, 3],
        &[9; 7],
        &[5, 6, 7, 8, 9, 10, 11],
    ];
    for p in patterns {
        for len in [0, 1, 2, 3, 7, 8, 100, 4096, 4099] {
            for phase in [0, 1, 5, 4096] {
                let mut buf = vec![0xeeu8; len];
                fill_fixed(&mut buf, Some(p), phase);
                let want: Vec<u8> = (0..len).map(|i| p[(phase + i) % p.len()]).collect();
                assert_eq!(buf, want, "{p:?} {len} {phase}");
            }
        }
    }
    let mut buf = vec![0xeeu8; 10];
    fill_fixed(&mut buf, None, 3);
    assert_eq!(buf, [0; 10]);
    fill_fixed(&mut buf, Some(&[]), 3);
    assert_eq!(buf, [0; 10]);
}

/// What one clone with a dedupe working set writes: `WRITES` blocks of
/// `BS` bytes in a job of that size.
fn written_with_set(spec: &BufferSpec, thread: u32) -> Vec<Vec<u8>> {
    let size = (BS * WRITES) as u64;
    let mut gen = DataGen::new(spec, Rng::from_seed(7 + u64::from(thread)))
        .with_working_set(thread, size, BS as u64);
    let mut buf = vec![0u8; BS];
    gen.init(&mut buf);
    (0..WRITES)
        .map(|i| {
            gen.prepare(&mut buf, BS, (i * BS) as u64, i as u64 + 1);
            buf.clone()
        })
        .collect()
}

fn working_set(pct: u32, set: u32, global: bool, threads: u32) -> BufferSpec {
    BufferSpec {
        dedupe_percentage: pct,
        dedupe_mode: DedupeMode::WorkingSet {
            percent: set,
            global,
            threads,
        },
        ..BufferSpec::default()
    }
    .with_implied_refill(false)
}

#[test]
fn a_working_set_repeats_its_first_unique_blocks() {
    for (pct, set) in [(20u32, 5u32), (50, 10), (75, 10)] {
        let blocks = written_with_set(&working_set(pct, set, false, 1), 1);
        let pages = WRITES * set as usize / 100;
        // Unique blocks in write order; the working set is the first
        // `pages` of them (fio's: the first unique buffers).
        let mut first_seen: Vec<&Vec<u8>> = Vec::new();
        let mut seen = HashSet::new();
        for b in &blocks {
            if seen.insert(b) {
                first_seen.push(b);
            }
        }
        let set_blocks: HashSet<&Vec<u8>> = first_seen.iter().take(pages).copied().collect();
        let mut counts = std::collections::HashMap::new();
        for b in &blocks {
            *counts.entry(b).or_insert(0u32) += 1;
        }
        let dups: usize = counts.values().map(|n| *n as usize - 1).sum();
        let share = dups as f64 / WRITES as f64;
        // A deduplicated write may draw a set block not written yet:
        // then it is that block's first copy; so the share of repeats is
        // a little under the percentage.
        let want = pct as f64 / 100.0;
        assert!(
            share <= want + 0.03 && share >= want - 0.06,
            "dedupe_percentage={pct}: {share:.3} of blocks repeat"
        );
        // Every block written more than once is in the set.
        for (b, n) in &counts {
            if *n > 1 {
                assert!(set_blocks.contains(b), "a repeated block outside the set");
            }
        }
        // And the set's blocks are drawn about evenly.
        assert!(counts.iter().filter(|(_, n)| **n > 1).count() > pages / 2);
    }
}

#[test]
fn dedupe_global_shares_one_working_set_between_clones() {
    let spec = working_set(50, 10, true, 2);
    let (a, b) = (written_with_set(&spec, 1), written_with_set(&spec, 2));
    let in_a: HashSet<&Vec<u8>> = a.iter().collect();
    // Clone 2's set holds half of clone 1's first unique blocks.
    let shared = b.iter().filter(|x| in_a.contains(x)).count();
    assert!(
        shared > WRITES / 8,
        "{shared} blocks of clone 2 are clone 1's"
    );
    // Without dedupe_global the clones share nothing.
    let spec = working_set(50, 10, false, 2);
    let (a, b) = (written_with_set(&spec, 1), written_with_set(&spec, 2));
    let in_a: HashSet<&Vec<u8>> = a.iter().collect();
    assert_eq!(b.iter().filter(|x| in_a.contains(x)).count(), 0);
}
