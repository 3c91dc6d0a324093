//! Skewed block choice for `random_distribution`: zipf, pareto, normal,
//! zoned and zoned_abs over the `n` blocks of a region (uniform is here too,
//! for `norandommap`). Draws may repeat, as in fio, which turns its random
//! map off for every non-uniform model.
//!
//! - zipf:θ draws rank r with probability proportional to 1/(r+1)^θ, by
//!   Hörmann and Derflinger's rejection-inversion (exact, O(1) set-up; fio
//!   sums the zeta series up front instead). θ <= 0 weighs no block above
//!   another and is uniform.
//! - pareto:h draws rank ⌊n·u^p⌋ with p = ln h / ln(1-h) and u uniform, as
//!   fio does: a share h of the blocks takes a share 1-h of the accesses
//!   (pareto:0.2 is the 80/20 rule).
//! - Ranks become blocks as follows. Without a center, rank r goes to block
//!   `perm(r)`, a keyed bijection of `[0, n)` (`Permutation::image`, keyed
//!   from the offset stream), so the hot blocks are scattered over the region,
//!   distinct, and fixed for the run. fio does the same with a hash of the
//!   rank plus a random rotation (which, unlike a bijection, may fold two
//!   ranks onto one block). With a center c, rank r goes to block
//!   `(⌊c·n⌋ + r) mod n`: the hottest block is at c and heat falls off to
//!   the right, wrapping, which is how fio's HOWTO describes the center
//!   ("maps linearly to the range"); fio itself still hashes the rank and
//!   only rotates by the center.
//! - normal:dev[:c] is a Gaussian centred on c·n (c = 0.5 by default), with
//!   the spread of fio's generator: fio averages 12 uniform draws over the
//!   region (standard deviation n/12) and adds a uniform jitter of width
//!   dev% of the region (capped at half of it), so σ = n·√(1/144 + d²/120000)
//!   with d = min(dev, 50): 8.3% of the region for the default dev of 0,
//!   16.7% at most. Draws outside the region are drawn again. Unlike fio,
//!   which hashes the result over the file, blocks stay around the center,
//!   as the HOWTO describes.
//! - zoned picks a zone by its share of accesses, then a uniform block in
//!   it. Zone boundaries are rounded down to whole blocks; zoned_abs zones
//!   past the end of the region are cut at it. A zone left without a block
//!   loses its share to the others, in proportion.

use iolab_spec::value::Distribution;

use super::perm::Permutation;
use super::rng::Rng;

/// A source of block numbers in `[0, n)` following one distribution.
#[derive(Clone, Debug)]
pub struct Skewed {
    n: u64,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Uniform,
    Zipf(Zipf, Placement),
    Pareto { pow: f64, place: Placement },
    Normal { mean: f64, sd: f64 },
    Zoned { zones: Box<[Zone]>, total: f64 },
}

/// Where rank r of a zipf or pareto draw lands.
#[derive(Clone, Debug)]
enum Placement {
    Scatter(Permutation),
    From(u64),
}

#[derive(Clone, Copy, Debug)]
struct Zone {
    /// Accumulated access weight up to and including this zone.
    upto: f64,
    first: u64,
    count: u64,
}

/// How many times a normal draw outside the region is drawn again before
/// it is clamped (at σ <= n/6 and a center inside the region, at least 45%
/// of draws land inside, so this is never reached in practice).
const NORMAL_TRIES: u32 = 64;

impl Skewed {
    /// A source for `dist` over `n` blocks of `block` bytes (the block size
    /// converts zoned_abs sizes). The keys that scatter zipf and pareto
    /// ranks come from `rng`.
    pub fn new(dist: &Distribution, n: u64, block: u64, rng: &mut Rng) -> Skewed {
        let place = |center: Option<f64>, rng: &mut Rng| match center {
            Some(c) => {
                Placement::From(((c.clamp(0.0, 1.0) * n as f64) as u64).min(n.saturating_sub(1)))
            }
            None => Placement::Scatter(Permutation::new(n, rng)),
        };
        let kind = match dist {
            Distribution::Random => Kind::Uniform,
            Distribution::Zipf { theta, center } => match Zipf::new(n, *theta) {
                Some(z) => Kind::Zipf(z, place(*center, rng)),
                None => Kind::Uniform,
            },
            Distribution::Pareto { h, center } if *h > 0.0 && *h < 1.0 => Kind::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
                place: place(*center, rng),
            },
            Distribution::Pareto { .. } => Kind::Uniform,
            Distribution::Normal { dev, center } => {
                let d = dev.clamp(0.0, 50.0);
                let sd = n as f64 * (1.0 / 144.0 + d * d / 120_000.0).sqrt();
                let c = center.unwrap_or(0.5).clamp(0.0, 1.0);
                Kind::Normal {
                    mean: c * n as f64,
                    sd,
                }
            }
            Distribution::Zoned(zones) => {
                let mut at = 0.0f64;
                let spans = zones.iter().map(|&(access, range)| {
                    let first = pct_of(at, n);
                    at += range;
                    (access, first, pct_of(at, n))
                });
                zoned(spans.collect::<Vec<_>>())
            }
            Distribution::ZonedAbs(zones) => {
                let mut at = 0u128;
                let block = u128::from(block.max(1));
                let spans = zones.iter().map(|&(access, size)| {
                    let first = (at / block).min(u128::from(n)) as u64;
                    at += u128::from(size);
                    (access, first, (at / block).min(u128::from(n)) as u64)
                });
                zoned(spans.collect::<Vec<_>>())
            }
        };
        Skewed { n, kind }
    }

    /// The next block number, in `[0, n)` (0 when `n` is 0).
    #[inline]
    pub fn sample(&mut self, rng: &mut Rng) -> u64 {
        let n = self.n;
        if n <= 1 {
            return 0;
        }
        match &self.kind {
            Kind::Uniform => rng.below(n),
            Kind::Zipf(z, place) => place.block(z.sample(rng), n),
            Kind::Pareto { pow, place } => {
                let rank = (n as f64 * rng.unit_f64().powf(*pow)) as u64;
                place.block(rank.min(n - 1), n)
            }
            Kind::Normal { mean, sd } => {
                for _ in 0..NORMAL_TRIES {
                    let x = mean + sd * gaussian(rng);
                    if x >= 0.0 && x < n as f64 {
                        return (x as u64).min(n - 1);
                    }
                }
                (mean.max(0.0) as u64).min(n - 1)
            }
            Kind::Zoned { zones, total } => {
                let u = rng.unit_f64() * total;
                let i = zones.partition_point(|z| z.upto <= u).min(zones.len() - 1);
                let z = zones[i];
                z.first + rng.below(z.count)
            }
        }
    }
}

impl Placement {
    #[inline]
    fn block(&self, rank: u64, n: u64) -> u64 {
        match self {
            Placement::Scatter(p) => p.image(rank),
            Placement::From(first) => {
                // (first + rank) mod n, without overflow.
                let room = n - first;
                if rank >= room {
                    rank - room
                } else {
                    first + rank
                }
            }
        }
    }
}

/// The block at `pct` percent of `n` blocks, rounded down.
fn pct_of(pct: f64, n: u64) -> u64 {
    ((pct.clamp(0.0, 100.0) / 100.0 * n as f64) as u64).min(n)
}

/// The zone table from (access share, first block, end block) triples;
/// uniform when no zone holds a block.
fn zoned(spans: Vec<(f64, u64, u64)>) -> Kind {
    let mut total = 0.0;
    let mut zones = Vec::with_capacity(spans.len());
    for (access, first, end) in spans {
        if end > first && access > 0.0 {
            total += access;
            zones.push(Zone {
                upto: total,
                first,
                count: end - first,
            });
        }
    }
    if zones.is_empty() {
        Kind::Uniform
    } else {
        Kind::Zoned {
            zones: zones.into_boxed_slice(),
            total,
        }
    }
}

/// A standard normal variate (Marsaglia's polar method).
#[inline]
fn gaussian(rng: &mut Rng) -> f64 {
    loop {
        let u = 2.0 * rng.unit_f64() - 1.0;
        let v = 2.0 * rng.unit_f64() - 1.0;
        let s = u * u + v * v;
        if s > 0.0 && s < 1.0 {
            return u * (-2.0 * s.ln() / s).sqrt();
        }
    }
}

/// Zipf ranks by rejection-inversion (W. Hörmann, G. Derflinger,
/// "Rejection-inversion to generate variates from monotone discrete
/// distributions", ACM TOMACS 6(3), 1996): invert the integral of the
/// continuous density x^-θ, accept the rounded value when it falls under
/// the discrete mass. Fewer than 1.1 tries per draw for any θ > 0.
#[derive(Clone, Debug)]
struct Zipf {
    n: u64,
    theta: f64,
    h_x1: f64,
    h_n: f64,
    /// Below this distance from the inverted value a rank is accepted
    /// without evaluating the density.
    shortcut: f64,
}

impl Zipf {
    /// None for θ <= 0 or a non-finite θ, which weigh no rank above another.
    fn new(n: u64, theta: f64) -> Option<Zipf> {
        if !(theta > 0.0 && theta.is_finite()) {
            return None;
        }
        let mut z = Zipf {
            n,
            theta,
            h_x1: 0.0,
            h_n: 0.0,
            shortcut: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(n as f64 + 0.5);
        z.shortcut = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        Some(z)
    }

    /// A rank in `[0, n)`; 0 is the most frequent.
    #[inline]
    fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.unit_f64() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inv(u);
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.shortcut || u >= self.h_integral(kf + 0.5) - self.h(kf) {
                return k - 1;
            }
        }
    }

    /// The density x^-θ.
    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }

    /// ∫₁ˣ t^-θ dt = (x^(1-θ) - 1)/(1-θ), computed stably near θ = 1.
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        expm1_over_x((1.0 - self.theta) * log_x) * log_x
    }

    /// The inverse of `h_integral`.
    fn h_integral_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.theta)).max(-1.0);
        (log1p_over_x(t) * x).exp()
    }
}

/// ln(1+x)/x, with its series near 0.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1)/x, with its series near 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::rng::Stream;

    fn rng() -> Rng {
        Rng::for_job(11, 0, Stream::Offset)
    }

    fn counts(dist: &Distribution, n: u64, draws: u32) -> Vec<u32> {
        let mut r = rng();
        let mut s = Skewed::new(dist, n, 4096, &mut r);
        let mut c = vec![0u32; n as usize];
        for _ in 0..draws {
            c[s.sample(&mut r) as usize] += 1;
        }
        c
    }

    /// The share of accesses that went to the hottest `frac` of blocks.
    fn top_share(c: &[u32], frac: f64) -> f64 {
        let mut sorted = c.to_vec();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let top = (c.len() as f64 * frac) as usize;
        let hot: u64 = sorted[..top].iter().map(|&x| u64::from(x)).sum();
        let all: u64 = c.iter().map(|&x| u64::from(x)).sum();
        hot as f64 / all as f64
    }

    /// The exact zipf share of the top `k` of `n` ranks.
    fn zipf_share(theta: f64, n: u64, k: u64) -> f64 {
        let w = |i: u64| (i as f64).powf(-theta);
        let top: f64 = (1..=k).map(w).sum();
        let all: f64 = (1..=n).map(w).sum();
        top / all
    }

    #[test]
    fn zipf_matches_the_exact_shares() {
        for theta in [0.5, 0.9, 1.2, 2.0] {
            let mut r = rng();
            let z = Zipf::new(1000, theta).unwrap();
            let mut c = [0u32; 1000];
            let draws = 200_000;
            for _ in 0..draws {
                c[z.sample(&mut r) as usize] += 1;
            }
            for k in [1u64, 10, 100] {
                let got: u32 = c[..k as usize].iter().sum();
                let got = f64::from(got) / f64::from(draws);
                let want = zipf_share(theta, 1000, k);
                assert!(
                    (got - want).abs() < 0.01,
                    "θ={theta} top {k}: {got} vs {want}"
                );
            }
        }
        assert!(Zipf::new(10, 0.0).is_none());
        assert!(Zipf::new(10, -1.0).is_none());
        // θ = 1 (which fio refuses) still works here.
        let z = Zipf::new(10, 1.0).unwrap();
        let mut r = rng();
        assert!((0..1000).all(|_| z.sample(&mut r) < 10));
    }

    #[test]
    fn zipf_hot_set_is_small_and_scattered() {
        let n = 100_000;
        let c = counts(
            &Distribution::Zipf {
                theta: 1.2,
                center: None,
            },
            n,
            100_000,
        );
        let share = top_share(&c, 0.01);
        assert!(share > 0.5, "hottest 1% took {share}");
        // The ten hottest blocks are spread, not packed at the start.
        let mut idx: Vec<usize> = (0..c.len()).collect();
        idx.sort_unstable_by(|&a, &b| c[b].cmp(&c[a]));
        let spread = idx[..10].iter().filter(|&&i| i >= n as usize / 10).count();
        assert!(spread >= 5, "{:?}", &idx[..10]);
    }

    #[test]
    fn zipf_with_a_center_starts_there() {
        let n = 1000;
        let c = counts(
            &Distribution::Zipf {
                theta: 1.2,
                center: Some(0.25),
            },
            n,
            50_000,
        );
        let hottest = (0..c.len()).max_by_key(|&i| c[i]).unwrap();
        assert_eq!(hottest, 250);
        assert!(c[251] > c[260] && c[260] > c[400]);
    }

    #[test]
    fn pareto_follows_its_rule() {
        let c = counts(
            &Distribution::Pareto {
                h: 0.2,
                center: None,
            },
            10_000,
            200_000,
        );
        let share = top_share(&c, 0.2);
        assert!((share - 0.8).abs() < 0.03, "{share}");
        let c = counts(
            &Distribution::Pareto {
                h: 0.2,
                center: Some(0.0),
            },
            10_000,
            100_000,
        );
        let first_fifth: u32 = c[..2000].iter().sum();
        assert!((f64::from(first_fifth) / 100_000.0 - 0.8).abs() < 0.03);
    }

    #[test]
    fn normal_concentrates_around_the_center() {
        let n = 100_000u64;
        let c = counts(
            &Distribution::Normal {
                dev: 0.0,
                center: None,
            },
            n,
            100_000,
        );
        // σ = n/12: ±1σ holds 68%, ±3σ (the middle half) 99.7%.
        let within = |lo: u64, hi: u64| -> f64 {
            f64::from(c[lo as usize..hi as usize].iter().sum::<u32>()) / 100_000.0
        };
        let sigma = n / 12;
        let one = within(n / 2 - sigma, n / 2 + sigma);
        assert!((one - 0.683).abs() < 0.01, "{one}");
        assert!(within(n / 4, 3 * n / 4) > 0.99);
        // A wider deviation and another center.
        let c = counts(
            &Distribution::Normal {
                dev: 50.0,
                center: Some(0.25),
            },
            1000,
            100_000,
        );
        let mean = c
            .iter()
            .enumerate()
            .map(|(i, &k)| i as f64 * f64::from(k))
            .sum::<f64>()
            / 100_000.0;
        // Truncated at 0 (1.5σ below the center), so the mean moves right.
        assert!(mean > 250.0 && mean < 320.0, "{mean}");
    }

    #[test]
    fn zoned_gives_each_zone_its_share() {
        let n = 100_000u64;
        let dist = Distribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (10.0, 70.0)]);
        let c = counts(&dist, n, 100_000);
        let sum = |lo: u64, hi: u64| f64::from(c[lo as usize..hi as usize].iter().sum::<u32>());
        assert!((sum(0, 10_000) / 1e5 - 0.6).abs() < 0.02);
        assert!((sum(10_000, 30_000) / 1e5 - 0.3).abs() < 0.02);
        assert!((sum(30_000, n) / 1e5 - 0.1).abs() < 0.02);
        // Ranges adding up to less than 100 leave the end untouched.
        let c = counts(
            &Distribution::Zoned(vec![(50.0, 10.0), (50.0, 10.0)]),
            1000,
            10_000,
        );
        assert_eq!(c[200..].iter().sum::<u32>(), 0);
    }

    #[test]
    fn zoned_abs_cuts_zones_at_the_region() {
        // 1000 blocks of 4 KiB: 60% to the first 400 KiB (100 blocks), 40%
        // to the next 40 MiB, cut at the region's end.
        let dist = Distribution::ZonedAbs(vec![(60.0, 400 << 10), (40.0, 40 << 20)]);
        let c = counts(&dist, 1000, 100_000);
        let first = f64::from(c[..100].iter().sum::<u32>()) / 1e5;
        assert!((first - 0.6).abs() < 0.02, "{first}");
        assert!(c[100..].iter().all(|&k| k > 0));
        // A zone entirely past the end gives its share to the others.
        let dist = Distribution::ZonedAbs(vec![(50.0, 4096 * 1000), (50.0, 4096)]);
        let c = counts(&dist, 1000, 10_000);
        assert_eq!(c.iter().sum::<u32>(), 10_000);
    }

    #[test]
    fn tiny_regions() {
        let mut r = rng();
        for dist in [
            Distribution::Random,
            Distribution::Zipf {
                theta: 1.2,
                center: None,
            },
            Distribution::Pareto {
                h: 0.3,
                center: Some(1.0),
            },
            Distribution::Normal {
                dev: 10.0,
                center: Some(1.0),
            },
            Distribution::Zoned(vec![(50.0, 10.0), (50.0, 90.0)]),
        ] {
            for n in [0u64, 1, 2, 3] {
                let mut s = Skewed::new(&dist, n, 512, &mut r);
                for _ in 0..200 {
                    let b = s.sample(&mut r);
                    assert!(b < n.max(1), "{dist:?} n={n}: {b}");
                }
            }
        }
    }
}
