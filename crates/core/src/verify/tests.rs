//! Verified chunks written and checked in memory: every method reads back
//! clean, and one flipped byte anywhere is found at its exact offset (or,
//! inside header fields nothing else vouches for, within its range).

use super::*;
use crate::data::BufferSpec;
use crate::gen::Rng;

const METHODS: [Method; 6] = [
    Method::Crc32c,
    Method::Md5,
    Method::Sha256,
    Method::Xxhash,
    Method::Meta,
    Method::Pattern,
];

fn spec(method: Method, interval: u32) -> VerifySpec {
    VerifySpec {
        method,
        after_write: true,
        fatal: false,
        backlog: 0,
        interval,
        pattern: (method == Method::Pattern).then(|| vec![0x5a, 0xa5, 0x01]),
        dump: None,
    }
}

fn datagen() -> DataGen {
    DataGen::new(
        &BufferSpec::default().with_implied_refill(true),
        Rng::from_seed(11),
    )
}

/// One 8 KiB write at file offset 1 MiB.
fn written(s: &VerifySpec, data: &mut DataGen) -> Vec<u8> {
    let mut buf = vec![0u8; 8192];
    let st = Stamp {
        offset: 1 << 20,
        seq: 17,
        clone: 2,
        time_ns: 1_700_000_000_000_000_000,
    };
    prepare_write(s, data, &mut buf, st);
    buf
}

fn failures(s: &VerifySpec, data: &DataGen, buf: &[u8]) -> Vec<Mismatch> {
    let mut out = Vec::new();
    check_read(s, data, buf, 1 << 20, &mut Vec::new(), &mut |m| out.push(m));
    out
}

#[test]
fn every_method_reads_back_clean() {
    for m in METHODS {
        for interval in [0, 512, 4096] {
            let s = spec(m, interval);
            let mut data = datagen();
            let buf = written(&s, &mut data);
            assert!(failures(&s, &data, &buf).is_empty(), "{m:?} {interval}");
        }
    }
}

#[test]
fn a_good_header_gives_the_sequence_number() {
    let s = spec(Method::Crc32c, 0);
    let mut data = datagen();
    let buf = written(&s, &mut data);
    let h = check_read(&s, &data, &buf, 1 << 20, &mut Vec::new(), &mut |_| {
        panic!("clean")
    })
    .unwrap();
    assert_eq!(h.seq, 17);
    // As fio, only verify=meta writes the time (in whole microseconds).
    assert_eq!(h.time_ns, 0);
    let s = spec(Method::Meta, 0);
    let mut data = datagen();
    let buf = written(&s, &mut data);
    let h = check_read(&s, &data, &buf, 1 << 20, &mut Vec::new(), &mut |_| {
        panic!("clean")
    })
    .unwrap();
    assert_eq!(h.time_ns, 1_700_000_000_000_000_000);
}

#[test]
fn a_flipped_data_byte_is_found_at_its_offset() {
    for m in [
        Method::Crc32c,
        Method::Md5,
        Method::Sha256,
        Method::Xxhash,
        Method::Pattern,
    ] {
        for interval in [0u32, 512] {
            let s = spec(m, interval);
            let mut data = datagen();
            let mut buf = written(&s, &mut data);
            for at in [100usize, 600, 5000, 8191] {
                let mut b = buf.clone();
                b[at] ^= 0x40;
                let f = failures(&s, &data, &b);
                assert_eq!(f.len(), 1, "{m:?} byte {at}");
                assert_eq!(
                    f[0].first_bad,
                    BadByte::At((1 << 20) + at as u64),
                    "{m:?} byte {at}"
                );
                let chunk = if interval == 0 { 8192 } else { 512 };
                assert_eq!(f[0].block, (1 << 20) + (at / chunk * chunk) as u64);
                if m != Method::Pattern {
                    assert_ne!(f[0].expected, f[0].found);
                    assert!(f[0].what.contains(m.name()), "{}", f[0]);
                }
            }
            buf[0] ^= 1;
            assert!(!failures(&s, &data, &buf).is_empty());
        }
    }
}

#[test]
fn a_flipped_header_byte_is_found() {
    for m in [Method::Crc32c, Method::Sha256, Method::Meta] {
        let s = spec(m, 0);
        let mut data = datagen();
        let buf = written(&s, &mut data);
        let h = m.header_len();
        for at in 0..h {
            let mut b = buf.clone();
            b[at] ^= 0x08;
            let f = failures(&s, &data, &b);
            assert_eq!(f.len(), 1, "{m:?} header byte {at}");
            let base = 1u64 << 20;
            match f[0].first_bad {
                BadByte::At(x) => assert_eq!(x, base + at as u64, "{m:?} header byte {at}"),
                BadByte::Unlocated => panic!("{m:?} header byte {at} not located"),
                BadByte::Among(a, z) => {
                    // Only fields nothing else vouches for (seed, time,
                    // thread, write number, the CRC itself).
                    assert!(at >= 8, "{m:?} header byte {at} not exact");
                    assert!((a..z).contains(&(base + at as u64)), "{m:?} {at}");
                }
            }
        }
        // The exact ones: magic, type, length, offset, checksum.
        for at in (0..8).chain(16..24).chain(40..m.header_len()) {
            let mut b = buf.clone();
            b[at] ^= 0x08;
            assert_eq!(
                failures(&s, &data, &b)[0].first_bad,
                BadByte::At((1 << 20) + at as u64)
            );
        }
    }
}

#[test]
fn other_buffer_options_than_the_writers_cannot_locate_the_byte() {
    // Written with compressible data, checked by a job with the default
    // data: the regenerated data is not what was written, so the byte it
    // differs at first is not the damaged one.
    let s = spec(Method::Crc32c, 0);
    let writer = BufferSpec {
        compress_percentage: Some(50),
        ..BufferSpec::default()
    }
    .with_implied_refill(true);
    let mut wdata = DataGen::new(&writer, Rng::from_seed(11));
    let mut buf = written(&s, &mut wdata);
    buf[3000] ^= 0x20;
    let f = failures(&s, &datagen(), &buf);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].first_bad, BadByte::Unlocated, "{}", f[0]);
    let text = f[0].to_string();
    assert!(text.contains("cannot be located"), "{text}");
    assert!(!text.contains("first differing byte"), "{text}");
    assert_ne!(f[0].expected, f[0].found);
    // The writer's own options locate it.
    assert_eq!(
        failures(&s, &wdata, &buf)[0].first_bad,
        BadByte::At((1 << 20) + 3000)
    );
}

#[test]
fn data_without_a_header_is_bad_magic() {
    let s = spec(Method::Md5, 0);
    let data = datagen();
    let buf = vec![0x33u8; 4096];
    let f = failures(&s, &data, &buf);
    assert_eq!(f.len(), 1);
    assert!(f[0].what.contains("bad magic"));
    assert_eq!(f[0].first_bad, BadByte::At(1 << 20));
}

#[test]
fn a_block_read_at_another_offset_fails_on_its_offset_field() {
    let s = spec(Method::Crc32c, 0);
    let mut data = datagen();
    let buf = written(&s, &mut data);
    let mut out = Vec::new();
    check_read(&s, &data, &buf, 2 << 20, &mut Vec::new(), &mut |m| {
        out.push(m)
    });
    assert!(out[0].what.contains("offset"));
}

#[test]
fn headers_fit_fios_smallest_interval_except_sha256() {
    assert!(Method::Crc32c.header_len() <= 80);
    assert!(Method::Md5.header_len() <= 80);
    // fio's sizes: 40 bytes and the checksum's field.
    assert_eq!(Method::Crc32c.header_len(), 44);
    assert_eq!(Method::Md5.header_len(), 56);
    assert_eq!(Method::Sha256.header_len(), 104);
    assert_eq!(Method::Meta.header_len(), 40);
    assert_eq!(Method::Pattern.header_len(), 0);
}

#[test]
fn xxhash_is_xxh32_seeded_as_fio() {
    assert_eq!(Method::Xxhash.sum(b"").len(), 4);
    assert_eq!(
        Method::Xxhash.sum(b"abc").to_vec(),
        xxhash_rust::xxh32::xxh32(b"abc", 1).to_le_bytes().to_vec()
    );
}

#[test]
fn method_names_round_trip() {
    use iolab_spec::options::choices::{ChoiceEnum, Verify};
    for m in METHODS {
        assert_eq!(Verify::from_word(m.name()).and_then(Method::of), Some(m));
    }
    assert_eq!(Method::of(Verify::Off), None);
}

#[test]
fn a_pattern_write_is_one_run_only_when_its_chunks_keep_the_phase() {
    let with = |interval: u32, pattern: &[u8]| VerifySpec {
        pattern: Some(pattern.to_vec()),
        ..spec(Method::Pattern, interval)
    };
    // One chunk, or chunks of whole periods: the buffer filled once from
    // the pattern's first byte is what prepare_write makes.
    for (s, len) in [
        (with(0, &[1, 2, 3]), 8192),
        (with(1024, &[1, 2]), 8192),
        (with(1024, &[7]), 4096),
        (with(8192, &[1, 2, 3]), 4096),
    ] {
        assert!(pattern_is_one_run(&s, len), "{s:?} {len}");
        let mut once = vec![0u8; 16384];
        fill_pattern(&s, &mut once);
        let mut data = datagen();
        let mut buf = vec![0u8; len];
        prepare_write(
            &s,
            &mut data,
            &mut buf,
            Stamp {
                offset: 0,
                seq: 1,
                clone: 0,
                time_ns: 0,
            },
        );
        assert_eq!(buf[..], once[..len], "{s:?} {len}");
    }
    // Chunks of 1 KiB restart a three-byte pattern: not one run.
    assert!(!pattern_is_one_run(&with(1024, &[1, 2, 3]), 8192));
    // A header method never is.
    assert!(!pattern_is_one_run(&spec(Method::Crc32c, 0), 4096));
}
