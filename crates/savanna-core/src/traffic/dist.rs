//! Flow-size distributions: fixed, exponential, Pareto, bounded Pareto, uniform, lognormal
//! and a piecewise-linear empirical CDF, sampled by inverse transform from a workload RNG
//! stream. Sizes are in packets; a draw is rounded to the nearest whole packet (at least 1).
//! `mean()` is the analytical mean of the continuous distribution, used to set Poisson
//! arrival rates from a target load (None when the mean is infinite).

use crate::engine::Rng;

#[derive(Clone, Debug)]
pub enum SizeDist {
    Fixed(f64),
    Exponential { mean: f64 },
    Pareto { shape: f64, min: f64 },
    BoundedPareto { shape: f64, min: f64, max: f64 },
    Uniform { min: f64, max: f64 },
    Lognormal { mu: f64, sigma: f64 },
    /// Points (size, cdf) with strictly increasing cdf ending at 1.
    Empirical(Vec<(f64, f64)>),
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
        if !x.is_finite() || x > 1e15 {
            return 1_000_000_000_000_000;
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
