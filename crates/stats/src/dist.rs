//! The probability distributions the repeat and comparison statistics need:
//! Student's t (CDF through the regularized incomplete beta function, and
//! its quantile by bisection) and the standard normal CDF. Written from the
//! textbook formulas: the Lanczos approximation of ln Γ, the continued
//! fraction of the incomplete beta function evaluated by the modified Lentz
//! method, and a Chebyshev fit of erfc. Accurate to about 1e-10 (t) and
//! 1e-7 relative (normal), far finer than a p-value verdict needs.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms; about 15 digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEF[0];
    for (i, c) in COEF.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularized incomplete beta function I_x(a, b) for a, b > 0 and
/// x in [0, 1]. NaN for arguments outside that domain.
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if !(a > 0.0 && b > 0.0 && (0.0..=1.0).contains(&x)) {
        return f64::NAN;
    }
    if x == 0.0 || x == 1.0 {
        return x;
    }
    // x^a (1-x)^b / (a B(a, b)), the factor in front of the fraction.
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    // The fraction converges fast for x < (a + 1) / (a + b + 2); past that,
    // use I_x(a, b) = 1 - I_{1-x}(b, a).
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function, evaluated by
/// the modified Lentz method.
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let clamp = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / clamp(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..=10_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        // Even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)).
        let even = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 / clamp(1.0 + even * d);
        c = clamp(1.0 + even / c);
        h *= d * c;
        // Odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
        let odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 / clamp(1.0 + odd * d);
        c = clamp(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// P(T <= t) for Student's t with `df` degrees of freedom (df > 0, not
/// necessarily whole, as Welch's test needs).
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    // P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2).
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, df / (df + t * t));
    if t > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The two-sided p-value of a t statistic: P(|T| >= |t|).
pub fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    inc_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// The t with P(T <= t) = p, for p in (0, 1): bisection on the CDF.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0 && df > 0.0) {
        return f64::NAN;
    }
    if p < 0.5 {
        return -student_t_quantile(1.0 - p, df);
    }
    let mut hi = 1.0;
    while student_t_cdf(hi, df) < p && hi < 1e300 {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// erfc(x), the complementary error function (Chebyshev fit, relative
/// error below 1.2e-7 everywhere).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// P(Z <= z) for the standard normal distribution.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn ln_gamma_of_known_values() {
        // Γ(n) = (n-1)!, Γ(1/2) = sqrt(π).
        assert!(close(ln_gamma(1.0), 0.0, 1e-13));
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-13));
        assert!(close(ln_gamma(11.0), 3_628_800f64.ln(), 1e-12));
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-13
        ));
        assert!(close(ln_gamma(0.1), 2.252_712_651_734_206, 1e-12));
    }

    #[test]
    fn incomplete_beta_of_closed_forms() {
        // I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 - (1-x)^b.
        for x in [0.0, 0.1, 0.37, 0.5, 0.9, 1.0] {
            assert!(close(inc_beta(1.0, 1.0, x), x, 1e-13), "{x}");
            assert!(close(inc_beta(3.0, 1.0, x), x.powi(3), 1e-13), "{x}");
            assert!(close(inc_beta(1.0, 4.0, x), 1.0 - (1.0 - x).powi(4), 1e-13));
        }
        // Symmetry I_x(a, b) = 1 - I_{1-x}(b, a).
        let v = inc_beta(2.5, 7.25, 0.3);
        assert!(close(v, 1.0 - inc_beta(7.25, 2.5, 0.7), 1e-13));
        assert!(inc_beta(-1.0, 1.0, 0.5).is_nan());
        assert!(inc_beta(1.0, 1.0, 1.5).is_nan());
    }

    #[test]
    fn t_cdf_matches_closed_forms() {
        // df = 1 is Cauchy: F(t) = 1/2 + atan(t)/π.
        for t in [-10.0, -1.0, 0.0, 0.5, 1.0, 3.0, 40.0] {
            let want = 0.5 + f64::atan(t) / std::f64::consts::PI;
            assert!(close(student_t_cdf(t, 1.0), want, 1e-12), "df 1, t {t}");
        }
        // df = 2: F(t) = 1/2 + t / (2 sqrt(2 + t^2)).
        for t in [-5.0f64, -0.3, 0.0, 1.7, 9.0] {
            let want = 0.5 + t / (2.0 * (2.0 + t * t).sqrt());
            assert!(close(student_t_cdf(t, 2.0), want, 1e-12), "df 2, t {t}");
        }
    }

    #[test]
    fn t_cdf_matches_tables() {
        // Critical values from the standard one-sided t table:
        // (df, t, P(T <= t)). The table's t are rounded to 3 decimals, so
        // the probabilities agree to about 1e-4.
        let table = [
            (1.0, 6.314, 0.95),
            (1.0, 12.706, 0.975),
            (2.0, 4.303, 0.975),
            (3.0, 3.182, 0.975),
            (4.0, 2.776, 0.975),
            (5.0, 4.032, 0.995),
            (7.0, 2.365, 0.975),
            (10.0, 1.812, 0.95),
            (10.0, 2.228, 0.975),
            (10.0, 3.169, 0.995),
            (14.0, 2.145, 0.975),
            (20.0, 2.086, 0.975),
            (30.0, 2.042, 0.975),
            (30.0, 2.750, 0.995),
            (120.0, 1.980, 0.975),
        ];
        for (df, t, p) in table {
            let got = student_t_cdf(t, df);
            assert!(close(got, p, 1.5e-4), "df {df} t {t}: {got} vs {p}");
            assert!(close(student_t_cdf(-t, df), 1.0 - p, 1.5e-4));
            let two = student_t_two_sided_p(t, df);
            assert!(close(two, 2.0 * (1.0 - p), 3e-4), "df {df} t {t}: {two}");
            let q = student_t_quantile(p, df);
            assert!(close(q, t, 2e-3 * t), "df {df} p {p}: {q} vs {t}");
        }
        // Large df tends to the normal: 1.95996 at 0.975.
        assert!(close(student_t_quantile(0.975, 1e7), 1.959_964, 1e-5));
        assert_eq!(student_t_cdf(0.0, 3.0), 0.5);
        assert!(student_t_cdf(1.0, 0.0).is_nan());
        assert_eq!(student_t_two_sided_p(f64::INFINITY, 3.0), 0.0);
    }

    #[test]
    fn normal_cdf_matches_tables() {
        for (z, p) in [
            (0.0, 0.5),
            (1.0, 0.841_344_746),
            (1.959_964, 0.975),
            (2.575_829, 0.995),
            (-3.0, 0.001_349_898),
        ] {
            let got = normal_cdf(z);
            assert!((got - p).abs() <= 2e-7 * p.max(1e-3), "z {z}: {got} vs {p}");
        }
    }
}
