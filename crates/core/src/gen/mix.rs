//! `RwMix`: the direction of each I/O of a job clone, from `rw=` with fio's
//! semantics (HOWTO, `readwrite`, `rwmixread`):
//!
//! - `read`/`randread`, `write`/`randwrite`, `trim`/`randtrim`: always that
//!   direction;
//! - `rw`/`randrw`: reads and writes in the ratio `rwmixread` (default 50),
//!   decided as fio 3.33 decides (`get_rw_ddir`): a draw v from 1 to 100 of
//!   fio's 32-bit mix stream makes the next I/O a read when v <= rwmixread;
//!   after a change of direction the new one is kept, without drawing, until
//!   its count of issued I/Os reaches the old direction's count times the new
//!   direction's share / 100, so the sequence of directions is fio's;
//! - `trimwrite`/`randtrimwrite`: a trim, then a write of the same block,
//!   and so on. The write's `Pick` says `reuse_last`: it takes the offset
//!   and size of the trim just issued instead of asking the offset and
//!   size generators.

use iolab_spec::value::RwMode;
use iolab_stats::Dir;

use super::taus::Frand;

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
    Mixed {
        read_pct: u32,
        /// The direction of the last I/O (fio starts at read).
        cur: Dir,
        /// I/Os issued per direction (read, write).
        issues: [u64; 2],
        /// The count of `cur` at which the next draw is made.
        draw_at: u64,
    },
    TrimWrite {
        write_next: bool,
    },
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
                cur: Dir::Read,
                issues: [0; 2],
                draw_at: 0,
            },
            RwMode::TrimWrite | RwMode::RandTrimWrite => Kind::TrimWrite { write_next: false },
        };
        RwMix { kind }
    }

    /// The next I/O's direction, counted as issued. Draws from `rng` (fio's
    /// mix stream of the clone) only for mixed reads and writes.
    #[inline(always)]
    pub fn next(&mut self, rng: &mut Frand) -> Pick {
        match &mut self.kind {
            Kind::Only(dir) => Pick {
                dir: *dir,
                reuse_last: false,
            },
            Kind::Mixed {
                read_pct,
                cur,
                issues,
                draw_at,
            } => {
                let c = *cur as usize;
                if issues[c] >= *draw_at {
                    let dir = if rng.between(1, 100) <= u64::from(*read_pct) {
                        Dir::Read
                    } else {
                        Dir::Write
                    };
                    if dir != *cur {
                        let share = match dir {
                            Dir::Read => *read_pct,
                            _ => 100 - *read_pct,
                        };
                        *draw_at = issues[c] * u64::from(share) / 100;
                    }
                    *cur = dir;
                }
                issues[*cur as usize] += 1;
                Pick {
                    dir: *cur,
                    reuse_last: false,
                }
            }
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
            Kind::Mixed { read_pct, .. } => match dir {
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

    fn rng() -> Frand {
        Frand::new(1, false)
    }

    fn reads(mode: RwMode, pct: u32, n: u32) -> u32 {
        let mut m = RwMix::new(mode, pct);
        let mut r = rng();
        (0..n).filter(|_| m.next(&mut r).dir == Dir::Read).count() as u32
    }

    #[test]
    fn rwmixread_sets_the_share_of_reads() {
        let got = reads(RwMode::RandRw, 20, 100_000);
        assert!((got as i64 - 20_000).abs() < 2_000, "{got}");
        let got = reads(RwMode::ReadWrite, 50, 100_000);
        assert!((got as i64 - 50_000).abs() < 2_000, "{got}");
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
            let mut r = Frand::new(seed, false);
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

#[cfg(test)]
mod fio_tests {
    use super::*;
    use crate::gen::taus::{FioSeeds, Purpose};

    #[test]
    fn a_new_direction_is_kept_until_its_share_is_issued() {
        // Draws happen only when the current direction's count reaches the
        // mark set at the last change; count them through the stream.
        let seeds = FioSeeds::new(1, true, false, None, 0, false);
        let mut m = RwMix::new(RwMode::RandRw, 70);
        let mut r = seeds.frand32(Purpose::RwMix);
        let mut shadow = seeds.frand32(Purpose::RwMix);
        let mut draws = 0;
        let mut issues = [0u64; 2];
        let (mut cur, mut at) = (Dir::Read, 0u64);
        for _ in 0..10_000 {
            let got = m.next(&mut r).dir;
            if issues[cur as usize] >= at {
                draws += 1;
                let d = if shadow.between(1, 100) <= 70 {
                    Dir::Read
                } else {
                    Dir::Write
                };
                if d != cur {
                    let share = if d == Dir::Read { 70 } else { 30 };
                    at = issues[cur as usize] * share / 100;
                }
                cur = d;
            }
            issues[cur as usize] += 1;
            assert_eq!(got, cur);
        }
        assert!(draws > 0);
        let reads = issues[0] as f64 / 10_000.0;
        assert!((reads - 0.7).abs() < 0.05, "{reads}");
    }
}
