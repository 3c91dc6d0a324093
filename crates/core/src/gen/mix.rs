//! `RwMix`: the direction of each I/O of a job clone, from `rw=` with fio's
//! semantics (HOWTO, `readwrite`, `rwmixread`):
//!
//! - `read`/`randread`, `write`/`randwrite`, `trim`/`randtrim`: always that
//!   direction;
//! - `rw`/`randrw`: each I/O is a read with probability `rwmixread`% and a
//!   write otherwise, drawn independently (default 50);
//! - `trimwrite`/`randtrimwrite`: a trim, then a write of the same block,
//!   and so on. The write's `Pick` says `reuse_last`: it takes the offset
//!   and size of the trim just issued instead of asking the offset and
//!   size generators.

use iolab_spec::value::RwMode;
use iolab_stats::Dir;

use super::rng::Rng;

/// The direction of the next I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick {
    pub dir: Dir,
    /// The I/O repeats the previous one's offset and size (the write of a
    /// trimwrite pair).
    pub reuse_last: bool,
}

/// The direction generator of one job clone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RwMix {
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Only(Dir),
    Mixed { read_pct: u32 },
    TrimWrite { write_next: bool },
}

impl RwMix {
    /// The directions of `mode`; `rwmixread` (0 to 100, above is 100) only
    /// matters for `rw` and `randrw`.
    pub fn new(mode: RwMode, rwmixread: u32) -> RwMix {
        let kind = match mode {
            RwMode::Read | RwMode::RandRead => Kind::Only(Dir::Read),
            RwMode::Write | RwMode::RandWrite => Kind::Only(Dir::Write),
            RwMode::Trim | RwMode::RandTrim => Kind::Only(Dir::Trim),
            RwMode::ReadWrite | RwMode::RandRw => Kind::Mixed {
                read_pct: rwmixread.min(100),
            },
            RwMode::TrimWrite | RwMode::RandTrimWrite => Kind::TrimWrite { write_next: false },
        };
        RwMix { kind }
    }

    /// The next I/O's direction. Draws from `rng` (normally the clone's
    /// `Stream::RwMix`) only for mixed reads and writes.
    #[inline(always)]
    pub fn next(&mut self, rng: &mut Rng) -> Pick {
        match &mut self.kind {
            Kind::Only(dir) => Pick {
                dir: *dir,
                reuse_last: false,
            },
            Kind::Mixed { read_pct } => Pick {
                dir: if rng.percent(*read_pct) {
                    Dir::Read
                } else {
                    Dir::Write
                },
                reuse_last: false,
            },
            Kind::TrimWrite { write_next } => {
                let write = *write_next;
                *write_next = !write;
                Pick {
                    dir: if write { Dir::Write } else { Dir::Trim },
                    reuse_last: write,
                }
            }
        }
    }

    /// Whether this mode ever issues I/O in `dir`.
    pub fn uses(&self, dir: Dir) -> bool {
        match self.kind {
            Kind::Only(d) => d == dir,
            Kind::Mixed { read_pct } => match dir {
                Dir::Read => read_pct > 0,
                Dir::Write => read_pct < 100,
                Dir::Trim => false,
            },
            Kind::TrimWrite { .. } => dir != Dir::Read,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::rng::Stream;

    fn rng() -> Rng {
        Rng::for_job(1, 0, Stream::RwMix)
    }

    fn reads(mode: RwMode, pct: u32, n: u32) -> u32 {
        let mut m = RwMix::new(mode, pct);
        let mut r = rng();
        (0..n).filter(|_| m.next(&mut r).dir == Dir::Read).count() as u32
    }

    #[test]
    fn rwmixread_sets_the_share_of_reads() {
        let got = reads(RwMode::RandRw, 20, 100_000);
        assert!((got as i64 - 20_000).abs() < 1_000, "{got}");
        let got = reads(RwMode::ReadWrite, 50, 100_000);
        assert!((got as i64 - 50_000).abs() < 1_000, "{got}");
        assert_eq!(reads(RwMode::RandRw, 0, 1000), 0);
        assert_eq!(reads(RwMode::RandRw, 100, 1000), 1000);
        assert_eq!(reads(RwMode::RandRw, 150, 1000), 1000);
        // Mixed modes only read and write.
        let mut m = RwMix::new(RwMode::RandRw, 50);
        let mut r = rng();
        assert!((0..1000).all(|_| {
            let p = m.next(&mut r);
            p.dir != Dir::Trim && !p.reuse_last
        }));
    }

    #[test]
    fn the_same_seed_gives_the_same_directions() {
        let dirs = |seed| {
            let mut m = RwMix::new(RwMode::RandRw, 30);
            let mut r = Rng::for_job(seed, 0, Stream::RwMix);
            (0..200).map(|_| m.next(&mut r).dir).collect::<Vec<_>>()
        };
        assert_eq!(dirs(1), dirs(1));
        assert_ne!(dirs(1), dirs(2));
    }

    #[test]
    fn single_direction_modes() {
        let mut r = rng();
        for (mode, dir) in [
            (RwMode::Read, Dir::Read),
            (RwMode::RandRead, Dir::Read),
            (RwMode::Write, Dir::Write),
            (RwMode::RandWrite, Dir::Write),
            (RwMode::Trim, Dir::Trim),
            (RwMode::RandTrim, Dir::Trim),
        ] {
            let mut m = RwMix::new(mode, 0);
            let before = r.clone();
            for _ in 0..10 {
                assert_eq!(
                    m.next(&mut r),
                    Pick {
                        dir,
                        reuse_last: false
                    }
                );
            }
            // No draws: other streams' sequences do not depend on rw.
            assert_eq!(r, before);
            for d in Dir::ALL {
                assert_eq!(m.uses(d), d == dir);
            }
        }
    }

    #[test]
    fn trimwrite_writes_each_trimmed_block() {
        for mode in [RwMode::TrimWrite, RwMode::RandTrimWrite] {
            let mut m = RwMix::new(mode, 50);
            let mut r = rng();
            let picks: Vec<Pick> = (0..6).map(|_| m.next(&mut r)).collect();
            for pair in picks.chunks(2) {
                assert_eq!(
                    pair[0],
                    Pick {
                        dir: Dir::Trim,
                        reuse_last: false
                    }
                );
                assert_eq!(
                    pair[1],
                    Pick {
                        dir: Dir::Write,
                        reuse_last: true
                    }
                );
            }
            assert!(m.uses(Dir::Trim) && m.uses(Dir::Write) && !m.uses(Dir::Read));
        }
        let m = RwMix::new(RwMode::RandRw, 100);
        assert!(m.uses(Dir::Read) && !m.uses(Dir::Write) && !m.uses(Dir::Trim));
    }
}
