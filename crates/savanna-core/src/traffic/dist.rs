//! Flow-size distributions: fixed, exponential, Pareto, bounded Pareto, uniform, lognormal
//! and a piecewise-linear empirical CDF, sampled by inverse transform from a workload RNG
//! stream. Sizes are in packets; a draw is rounded to the nearest whole packet (at least 1).
//! `mean()` is the analytical mean of the continuous distribution, used to set Poisson
//! arrival rates from a target load (None when the mean is infinite).

use crate::engine::Rng;

#[derive(Clone, Debug)]
pub enum SizeDist {
    Fixed(f64),
    Exponential {
        mean: f64,
    },
    Pareto {
        shape: f64,
        min: f64,
    },
    BoundedPareto {
        shape: f64,
        min: f64,
        max: f64,
    },
    Uniform {
        min: f64,
        max: f64,
    },
    Lognormal {
        mu: f64,
        sigma: f64,
    },
    /// Points (size, cdf) with strictly increasing cdf ending at 1.
    Empirical(Vec<(f64, f64)>),
    /// Lognormal body below `cutoff`, Pareto tail (scale `cutoff`) above, spliced so the
    /// CDF is the lognormal's up to the cutoff and the tail carries the lognormal's
    /// remaining mass (Barford & Crovella's SURGE model, as Tokuda et al. 2002 Table 2).
    LognormalPareto {
        mu: f64,
        sigma: f64,
        cutoff: f64,
        shape: f64,
    },
}

/// Standard normal CDF.
pub fn phi(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

impl SizeDist {
    /// One continuous draw (packets).
    pub fn draw(&self, rng: &mut Rng) -> f64 {
        match *self {
            SizeDist::Fixed(v) => v,
            SizeDist::Exponential { mean } => rng.exp(mean),
            SizeDist::Pareto { shape, min } => min / rng.uniform_open0().powf(1.0 / shape),
            SizeDist::BoundedPareto { shape, min, max } => {
                // Inverse CDF of the Pareto truncated to [min, max].
                let u = rng.uniform();
                let r = (min / max).powf(shape);
                min / (1.0 - u * (1.0 - r)).powf(1.0 / shape)
            }
            SizeDist::Uniform { min, max } => min + (max - min) * rng.uniform(),
            SizeDist::Lognormal { mu, sigma } => (mu + sigma * rng.normal()).exp(),
            SizeDist::LognormalPareto { mu, sigma, cutoff, shape } => {
                let body = phi((cutoff.ln() - mu) / sigma);
                if rng.uniform() < body {
                    // The lognormal conditioned below the cutoff, by rejection (the body
                    // holds most of the mass, so few draws are rejected).
                    loop {
                        let x = (mu + sigma * rng.normal()).exp();
                        if x < cutoff {
                            return x;
                        }
                    }
                }
                cutoff / rng.uniform_open0().powf(1.0 / shape)
            }
            SizeDist::Empirical(ref pts) => {
                let u = rng.uniform();
                let mut prev = (pts[0].0, 0.0);
                for &(x, c) in pts {
                    if u <= c {
                        if c <= prev.1 {
                            return x;
                        }
                        return prev.0 + (x - prev.0) * (u - prev.1) / (c - prev.1);
                    }
                    prev = (x, c);
                }
                pts[pts.len() - 1].0
            }
        }
    }

    /// One draw in whole packets.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let x = self.draw(rng);
        if !x.is_finite() || x > crate::spec::MAX_FLOW_PKTS {
            return crate::spec::MAX_FLOW_PKTS as u64;
        }
        (x.round() as u64).max(1)
    }

    /// Analytical mean in packets; None if infinite.
    pub fn mean(&self) -> Option<f64> {
        match *self {
            SizeDist::Fixed(v) => Some(v),
            SizeDist::Exponential { mean } => Some(mean),
            SizeDist::Pareto { shape, min } => (shape > 1.0).then(|| shape * min / (shape - 1.0)),
            SizeDist::BoundedPareto { shape, min, max } => {
                let r = (min / max).powf(shape);
                if (shape - 1.0).abs() < 1e-12 {
                    Some(min * (max / min).ln() / (1.0 - r))
                } else {
                    Some(shape * min / (shape - 1.0) * (1.0 - (min / max).powf(shape - 1.0)) / (1.0 - r))
                }
            }
            SizeDist::Uniform { min, max } => Some((min + max) / 2.0),
            SizeDist::Lognormal { mu, sigma } => Some((mu + sigma * sigma / 2.0).exp()),
            SizeDist::LognormalPareto { mu, sigma, cutoff, shape } => {
                let z = (cutoff.ln() - mu) / sigma;
                let body = (mu + sigma * sigma / 2.0).exp() * phi(z - sigma);
                (shape > 1.0).then(|| body + (1.0 - phi(z)) * shape * cutoff / (shape - 1.0))
            }
            SizeDist::Empirical(ref pts) => {
                let mut m = 0.0;
                let mut prev = (pts[0].0, 0.0);
                for &(x, c) in pts {
                    m += (c - prev.1) * (x + prev.0) / 2.0;
                    prev = (x, c);
                }
                Some(m)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_mean(d: &SizeDist, n: usize) -> f64 {
        let mut r = Rng::stream(9, "dist");
        (0..n).map(|_| d.draw(&mut r)).sum::<f64>() / n as f64
    }

    #[test]
    fn sample_means_match_analytical_means() {
        let cases = [
            SizeDist::Fixed(7.0),
            SizeDist::Exponential { mean: 6.0 },
            SizeDist::Pareto { shape: 2.5, min: 3.0 },
            SizeDist::BoundedPareto { shape: 1.2, min: 4.0, max: 500.0 },
            SizeDist::Uniform { min: 2.0, max: 10.0 },
            SizeDist::Lognormal { mu: 1.0, sigma: 0.5 },
            SizeDist::LognormalPareto { mu: 1.0, sigma: 1.0, cutoff: 6.0, shape: 2.5 },
            SizeDist::Empirical(vec![(1.0, 0.0), (10.0, 0.5), (100.0, 1.0)]),
        ];
        for d in &cases {
            let want = d.mean().unwrap();
            let got = sample_mean(d, 400_000);
            assert!((got - want).abs() / want < 0.02, "{d:?}: sample mean {got}, analytical {want}");
        }
        assert_eq!(SizeDist::Pareto { shape: 1.0, min: 1.0 }.mean(), None);
    }

    #[test]
    fn lognormal_pareto_splices_at_the_cutoff() {
        // Tokuda Table 2 read as SURGE: ln(bytes) ~ N(9.357, 1.318) below 133 KB.
        let d = SizeDist::LognormalPareto { mu: 9.357, sigma: 1.318, cutoff: 133_000.0, shape: 1.5 };
        let mut r = Rng::stream(4, "dist");
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| d.draw(&mut r)).collect();
        let below = xs.iter().filter(|&&x| x < 133_000.0).count() as f64 / n as f64;
        let want = phi((133_000f64.ln() - 9.357) / 1.318);
        assert!((below - want).abs() < 0.003, "{below} vs {want}");
        assert!((want - 0.968).abs() < 0.002);
        // The tail is Pareto with scale at the cutoff: P(X > 2c | X >= c) = 2^-1.5.
        let tail: Vec<f64> = xs.iter().copied().filter(|&x| x >= 133_000.0).collect();
        let beyond = tail.iter().filter(|&&x| x > 266_000.0).count() as f64 / tail.len() as f64;
        assert!((beyond - 0.5f64.powf(1.5)).abs() < 0.03, "{beyond}");
        // The median is the lognormal's.
        let mut s = xs.clone();
        s.sort_by(f64::total_cmp);
        assert!((s[n / 2] / 9.357f64.exp() - 1.0).abs() < 0.02);
    }

    #[test]
    fn pareto_tail_and_rounding() {
        let d = SizeDist::Pareto { shape: 1.3, min: 30.0 * 0.3 / 1.3 };
        assert!((d.mean().unwrap() - 30.0).abs() < 1e-9);
        let mut r = Rng::stream(3, "x");
        let n = 200_000;
        let mut above = 0;
        for _ in 0..n {
            let s = d.sample(&mut r);
            assert!(s >= 7);
            if s as f64 > 100.0 {
                above += 1;
            }
        }
        // P(X > 100) = (x_m / 100)^1.3
        let want = (30.0 * 0.3 / 1.3 / 100.0f64).powf(1.3);
        let got = above as f64 / n as f64;
        assert!((got - want).abs() / want < 0.05, "{got} vs {want}");
    }
}
