//! Seeded random-number streams. A stream is a PCG generator whose seed is derived from the
//! scenario seed and a stream name (hashed once, at build time, never per packet), so each
//! purpose (a traffic block's arrivals, a queue's random drops, a link's losses) draws from
//! its own sequence and the draws of one never shift those of another.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// One independent random stream.
#[derive(Clone, Debug)]
pub struct Rng {
    inner: Pcg64Mcg,
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Rng {
    /// The stream called `name` for scenario seed `seed`.
    pub fn stream(seed: u64, name: &str) -> Rng {
        let a = splitmix64(seed ^ fnv1a(name));
        let b = splitmix64(a ^ 0x5851_F42D_4C95_7F2D);
        let state = ((a as u128) << 64) | b as u128;
        Rng { inner: Pcg64Mcg::new(state | 1) }
    }
    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        self.inner.random::<f64>()
    }
    /// Uniform in (0, 1]: safe for logarithms.
    #[inline]
    pub fn uniform_open0(&mut self) -> f64 {
        1.0 - self.uniform()
    }
    /// Uniform integer in [0, n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            0
        } else {
            self.inner.random_range(0..n)
        }
    }
    /// True with probability p.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }
    /// Exponential with the given mean.
    #[inline]
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * self.uniform_open0().ln()
    }
    /// Standard normal (Box-Muller; one value per call, the pair's second is discarded so
    /// the stream position depends only on the number of calls).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform_open0();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
    pub fn inner(&mut self) -> &mut Pcg64Mcg {
        &mut self.inner
    }
}

impl SeedableRng for Rng {
    type Seed = [u8; 16];
    fn from_seed(seed: Self::Seed) -> Self {
        Rng { inner: Pcg64Mcg::from_seed(seed) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let mut a = Rng::stream(7, "traffic/0");
        let mut b = Rng::stream(7, "traffic/0");
        let mut c = Rng::stream(7, "queue/0");
        let xa: Vec<f64> = (0..5).map(|_| a.uniform()).collect();
        let xb: Vec<f64> = (0..5).map(|_| b.uniform()).collect();
        let xc: Vec<f64> = (0..5).map(|_| c.uniform()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        let mut d = Rng::stream(8, "traffic/0");
        assert_ne!(xa[0], d.uniform());
    }

    #[test]
    fn exponential_mean() {
        let mut r = Rng::stream(1, "t");
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.exp(2.5)).sum::<f64>() / n as f64;
        assert!((m - 2.5).abs() < 0.03, "{m}");
    }
}
