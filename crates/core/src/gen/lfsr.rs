//! fio's linear feedback shift register (`random_generator=lfsr`): a
//! maximal-length XNOR shift register of the smallest width whose period
//! covers the region's blocks, stepped once per value (twice for the
//! first), values past the last block skipped, so that each block comes
//! out exactly once, in fio 3.33's order for the same seed, with no map.
//!
//! The register starts from the job's offset seed, cut to its width; a
//! seed of all ones (the one state an XNOR register never leaves) cannot
//! start it, as in fio.

/// The tap positions of a maximal-length register of each width from 3
/// to 63 bits (positions counted from 1), as fio uses them.
const TAPS: [&[u8]; 61] = [
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
];

/// One register over `[0, n)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lfsr {
    state: u64,
    max: u64,
    xormask: u64,
    top: u64,
    /// Values given since the start.
    given: u64,
    /// The first step after a start is a double one.
    first: bool,
}

impl Lfsr {
    /// A register over `[0, n)` started from `seed`; None when no width
    /// up to 63 bits covers `n`, or when the seed cut to the width is the
    /// forbidden all-ones state.
    pub fn new(n: u64, seed: u64) -> Option<Lfsr> {
        let width = (3..64u32).find(|&w| (1u64 << w) > n)?;
        let taps = TAPS[(width - 3) as usize];
        let xormask = taps.iter().fold(0u64, |m, t| m | 1 << (t - 1));
        let top = 1u64 << (width - 1);
        let mut l = Lfsr {
            state: 0,
            max: n.saturating_sub(1),
            xormask,
            top,
            given: 0,
            first: true,
        };
        l.reset(seed).then_some(l)
    }

    /// Starts over from `seed` (a new loop or pass, as fio resets a
    /// file): every value again, single steps only; false for the
    /// all-ones state.
    pub fn reset(&mut self, seed: u64) -> bool {
        let mask = (self.top << 1) - 1;
        self.state = seed & mask;
        self.given = 0;
        self.state != mask
    }

    #[inline]
    fn step(&mut self) {
        let v = self.state;
        let feedback = (v & 1).wrapping_sub(1) & self.xormask;
        self.state = ((v >> 1) | self.top) ^ feedback;
    }
}

/// The values below n, each once; then None.
impl Iterator for Lfsr {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let given = self.given;
        self.given += 1;
        if given > self.max {
            return None;
        }
        loop {
            if self.first {
                self.first = false;
                self.step();
            }
            self.step();
            if self.state <= self.max {
                return Some(self.state);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_once_then_none() {
        for n in [1u64, 2, 7, 8, 64, 1000, 4097] {
            let mut l = Lfsr::new(n, 0xb189_9bed).unwrap();
            let mut seen = vec![false; n as usize];
            for _ in 0..n {
                let v = l.next().unwrap();
                assert!(!seen[v as usize], "n={n}: {v} twice");
                seen[v as usize] = true;
            }
            assert_eq!(l.next(), None, "n={n}");
        }
    }

    #[test]
    fn fios_order_for_its_default_seed() {
        // fio 3.33, randread bs=4k size=256k random_generator=lfsr: the
        // blocks of its first reads (strace).
        let mut l = Lfsr::new(64, 0xb189_9bed).unwrap();
        let got: Vec<u64> = (0..8).map(|_| l.next().unwrap()).collect();
        assert_eq!(got, [27, 19, 18, 41, 10, 37, 9, 2]);
    }

    #[test]
    fn the_all_ones_state_cannot_start() {
        assert!(Lfsr::new(64, 0x7f).is_none());
        assert!(Lfsr::new(64, 0x7e).is_some());
    }
}
