//! A keyed pseudo-random permutation of `[0, n)` in O(1) memory: what stands
//! in for fio's random map (which remembers every block visited). A counter
//! runs over `[0, 2^k)`, the next power of two at or above `n`; each count
//! goes through a keyed bijection of k-bit numbers (rounds of xor with a key,
//! multiplication by an odd number and xorshift, all modulo 2^k), and results
//! of `n` or more are skipped ("cycle walking"), so each value below `n`
//! comes out exactly once per pass and fewer than two counts are spent per
//! value on average. A new key gives a new order, one per pass.
//!
//! The same bijection, walked until it lands below `n` (`image`), scatters
//! the ranks of the zipf and pareto distributions over the region.

use super::rng::Rng;

/// Odd multipliers of the fixed rounds (from splitmix64 and the golden
/// ratio; any odd numbers with mixed bits would do).
const M1: u64 = 0x9E37_79B9_7F4A_7C15;
const M2: u64 = 0xD6E8_FEB8_6659_FD93;

/// One pass over `[0, n)` in a pseudo-random order.
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    /// k: values are scrambled as k-bit numbers, `n <= 2^k`.
    bits: u32,
    mask: u64,
    /// xorshift distances, at least 1.
    half: u32,
    third: u32,
    keys: [u64; 4],
    /// The next k-bit number to scramble.
    counter: u64,
    /// Values handed out in this pass.
    emitted: u64,
}

impl Permutation {
    /// A permutation of `[0, n)` keyed from `rng`. `n` of 0 gives an empty
    /// permutation.
    pub fn new(n: u64, rng: &mut Rng) -> Permutation {
        let bits = if n <= 1 {
            0
        } else {
            64 - (n - 1).leading_zeros()
        };
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut p = Permutation {
            n,
            bits,
            mask,
            half: (bits / 2).max(1),
            third: (bits / 3).max(1),
            keys: [0; 4],
            counter: 0,
            emitted: 0,
        };
        p.rekey(rng);
        p
    }

    #[cfg(test)]
    /// How many values one pass hands out.
    pub fn len(&self) -> u64 {
        self.n
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Whether this pass has handed out every value.
    pub fn exhausted(&self) -> bool {
        self.emitted >= self.n
    }

    /// Starts a new pass in a new order.
    pub fn rekey(&mut self, rng: &mut Rng) {
        for k in &mut self.keys {
            *k = rng.next_u64();
        }
        self.counter = 0;
        self.emitted = 0;
    }

    /// The permutation as a function: a bijection of `[0, n)` (for `x < n`),
    /// fixed for the current key.
    #[inline]
    pub fn image(&self, x: u64) -> u64 {
        let mut y = self.scramble(x & self.mask);
        // x is on a cycle of the k-bit bijection that holds at least one
        // value below n (x itself), so the walk ends.
        while y >= self.n {
            y = self.scramble(y);
        }
        y
    }

    /// The keyed bijection of k-bit numbers. Each step is invertible modulo
    /// 2^k: xor and add of a constant, multiplication by an odd number, and
    /// `x ^ (x >> s)` with s >= 1.
    #[inline]
    fn scramble(&self, x: u64) -> u64 {
        if self.bits == 0 {
            return 0;
        }
        let m = self.mask;
        let [k0, k1, k2, k3] = self.keys;
        let mut x = (x ^ k0) & m;
        x = x.wrapping_mul(k1 | 1) & m;
        x ^= x >> self.half;
        x = x.wrapping_add(k2) & m;
        x = x.wrapping_mul(M1) & m;
        x ^= x >> self.third;
        x = x.wrapping_mul(k3 | 1) & m;
        x ^= x >> self.half;
        x = (x ^ (k0 >> 32)) & m;
        x = x.wrapping_mul(M2) & m;
        x ^= x >> self.half;
        x
    }
}

/// The values of the current pass; `rekey` starts the next one.
impl Iterator for Permutation {
    type Item = u64;

    /// The next value of this pass, or None once all `n` are out.
    #[inline]
    fn next(&mut self) -> Option<u64> {
        while self.emitted < self.n {
            let y = self.scramble(self.counter);
            self.counter = self.counter.wrapping_add(1);
            if y < self.n {
                self.emitted += 1;
                return Some(y);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.n - self.emitted).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::rng::Stream;

    fn bitset_pass(p: &mut Permutation) -> Vec<u64> {
        let n = p.len();
        let mut seen = vec![0u64; n.div_ceil(64) as usize];
        let mut order = Vec::with_capacity(n as usize);
        for i in 0..n {
            let v = p
                .next()
                .unwrap_or_else(|| panic!("pass ended after {i} of {n}"));
            assert!(v < n, "{v} out of [0, {n})");
            let (w, b) = ((v / 64) as usize, v % 64);
            assert_eq!(seen[w] & (1 << b), 0, "{v} twice");
            seen[w] |= 1 << b;
            order.push(v);
        }
        assert!(p.exhausted());
        assert_eq!(p.next(), None);
        order
    }

    #[test]
    fn each_value_once_per_pass() {
        let mut rng = Rng::for_job(1, 0, Stream::Offset);
        for n in [1u64, 2, 3, 5, 64, 65, 1000, 4097, 1 << 20] {
            let mut p = Permutation::new(n, &mut rng);
            bitset_pass(&mut p);
            p.rekey(&mut rng);
            bitset_pass(&mut p);
        }
        let mut empty = Permutation::new(0, &mut rng);
        assert!(empty.is_empty() && empty.exhausted());
        assert_eq!(empty.next(), None);
    }

    #[test]
    fn passes_and_seeds_give_different_orders() {
        let mut rng = Rng::for_job(1, 0, Stream::Offset);
        let mut p = Permutation::new(1000, &mut rng);
        let first = bitset_pass(&mut p);
        p.rekey(&mut rng);
        let second = bitset_pass(&mut p);
        assert_ne!(first, second);
        let mut other = Rng::for_job(2, 0, Stream::Offset);
        let mut q = Permutation::new(1000, &mut other);
        assert_ne!(first, bitset_pass(&mut q));
        let mut again = Rng::for_job(1, 0, Stream::Offset);
        let mut r = Permutation::new(1000, &mut again);
        assert_eq!(first, bitset_pass(&mut r));
    }

    #[test]
    fn order_looks_random() {
        // Neighbours in the order are rarely neighbours in value, and the
        // first half of a pass is spread over the whole range.
        let mut rng = Rng::for_job(9, 0, Stream::Offset);
        let n = 100_000u64;
        let mut p = Permutation::new(n, &mut rng);
        let order = bitset_pass(&mut p);
        let adjacent = order
            .windows(2)
            .filter(|w| w[0].abs_diff(w[1]) <= 2)
            .count();
        assert!(adjacent < 50, "{adjacent} near-adjacent steps");
        let half = &order[..(n / 2) as usize];
        let mut buckets = [0u32; 10];
        for &v in half {
            buckets[(v * 10 / n) as usize] += 1;
        }
        for b in buckets {
            assert!((b as i64 - 5_000).abs() < 400, "{buckets:?}");
        }
        // Even and odd values interleave irregularly (a plain LCG modulo a
        // power of two would alternate them).
        let parity_flips = order.windows(2).filter(|w| (w[0] ^ w[1]) & 1 == 1).count();
        let share = parity_flips as f64 / n as f64;
        assert!((share - 0.5).abs() < 0.02, "{share}");
    }

    #[test]
    fn map_is_a_bijection() {
        let mut rng = Rng::for_job(3, 0, Stream::Offset);
        for n in [1u64, 2, 3, 1000, 4097] {
            let p = Permutation::new(n, &mut rng);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.image(x);
                assert!(y < n);
                assert!(!seen[y as usize], "n={n}: {y} twice");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn huge_ranges_work() {
        let mut rng = Rng::for_job(3, 0, Stream::Offset);
        for n in [u64::MAX, (1 << 63) + 1, 1 << 40] {
            let mut p = Permutation::new(n, &mut rng);
            for _ in 0..1000 {
                assert!(p.next().unwrap() < n);
            }
            assert!(p.image(n - 1) < n);
        }
    }
}
