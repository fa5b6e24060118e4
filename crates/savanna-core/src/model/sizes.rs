//! Document sizes in whole packets, computed exactly from a continuous size law: the
//! quantities Tokuda, Hasegawa & Murata 2002 (section 3.2, "RED-based algorithm") derive
//! from the WWW document-size distribution to set their RED-based differentiator:
//! P(i), the probability that a document has i packets (the weights of their F(K)), and
//! a_l, the share of arriving packets that are long for a threshold K.
//!
//! Packets from a continuous draw X follow `traffic::SizeDist::sample`: X is rounded to the
//! nearest whole packet, at least one, S = max(1, round(X)), so P(S >= j) = P(X >= j - 1/2)
//! for j >= 2 (and 1 for j <= 1). Every quantity is a sum of these survival probabilities:
//! E[S] = sum_{j >= 1} P(S >= j) and E[(S - m)^+] = sum_{j > m} P(S >= j). A sum runs
//! explicitly up to an index M and the rest is the integral of the survival function,
//! sum_{j > M} P(X >= j - 1/2) ~ int_M^inf P(X >= x) dx = E[(X - M)^+] (midpoint rule), which
//! every law here has in closed form. For a law with bounded support M lies beyond its
//! upper end and the sum is exact; otherwise M is 2^16 packets past the first term, where
//! the midpoint error (about |d/dx P(X >= x)| / 24 at M) is below 1e-9 of E[S] for every
//! law the scenarios use. No sampling anywhere: the results are deterministic. Laws: every
//! `traffic::SizeDist`, including the lognormal-body / Pareto-tail law of Barford &
//! Crovella 1998 that Tokuda et al.'s scenario 2 (Table 2) uses.

use crate::traffic::SizeDist;

/// How a_l counts a connection's packets (see [`PacketSizes::long_share`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Counting {
    /// Only the packets after the first K of each connection are long: what a counting
    /// classifier (marking, hashing) marks, and what the RED-based differentiator drops
    /// with p_l. Our reading of Tokuda et al. (default).
    BeyondK,
    /// Every packet of a connection of more than K packets is long (the paper's definition
    /// of a long-lived connection applied to all its packets).
    WholeFlow,
}

/// Standard normal survival function, P(Z > z).
pub fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// Upper end of a law's support (infinite for unbounded laws).
fn upper(d: &SizeDist) -> f64 {
    match d {
        SizeDist::Fixed(v) => *v,
        SizeDist::BoundedPareto { max, .. } => *max,
        SizeDist::Uniform { max, .. } => *max,
        SizeDist::Empirical(pts) => pts.last().map(|p| p.0).unwrap_or(0.0),
        _ => f64::INFINITY,
    }
}

/// E[(Y - t)^+] for ln Y ~ Normal(mu, sigma), t >= 0.
fn lognormal_excess(mu: f64, sigma: f64, t: f64) -> f64 {
    let mean = (mu + sigma * sigma / 2.0).exp();
    if t <= 0.0 {
        return mean - t;
    }
    let lt = t.ln();
    // e^(mu + s^2/2) Phi((mu + s^2 - ln t)/s) - t Phi((mu - ln t)/s)
    mean * normal_sf((lt - mu - sigma * sigma) / sigma) - t * normal_sf((lt - mu) / sigma)
}

fn dist_survival(d: &SizeDist, x: f64) -> f64 {
    match *d {
        SizeDist::Fixed(v) => (x <= v) as u8 as f64,
        SizeDist::Exponential { mean } => {
            if x <= 0.0 {
                1.0
            } else {
                (-x / mean).exp()
            }
        }
        SizeDist::Pareto { shape, min } => {
            if x <= min {
                1.0
            } else {
                (min / x).powf(shape)
            }
        }
        SizeDist::BoundedPareto { shape, min, max } => {
            if x <= min {
                1.0
            } else if x >= max {
                0.0
            } else {
                let r = (min / max).powf(shape);
                ((min / x).powf(shape) - r) / (1.0 - r)
            }
        }
        SizeDist::Uniform { min, max } => {
            if x <= min {
                1.0
            } else if x > max {
                0.0
            } else if max == min {
                1.0
            } else {
                (max - x) / (max - min)
            }
        }
        SizeDist::Lognormal { mu, sigma } => {
            if x <= 0.0 {
                1.0
            } else {
                normal_sf((x.ln() - mu) / sigma)
            }
        }
        SizeDist::Empirical(ref pts) => empirical_pieces(pts).map(|(a, b, m)| m * piece_survival(a, b, x)).sum(),
        // The lognormal's own law below the cutoff, its remaining mass as a Pareto tail.
        SizeDist::LognormalPareto { mu, sigma, cutoff, shape } => {
            if x >= cutoff {
                normal_sf((cutoff.ln() - mu) / sigma) * (cutoff / x).powf(shape)
            } else if x <= 0.0 {
                1.0
            } else {
                normal_sf((x.ln() - mu) / sigma)
            }
        }
    }
}

fn dist_excess(d: &SizeDist, t: f64) -> f64 {
    match *d {
        SizeDist::Fixed(v) => (v - t).max(0.0),
        SizeDist::Exponential { mean } => {
            if t <= 0.0 {
                mean - t
            } else {
                mean * (-t / mean).exp()
            }
        }
        SizeDist::Pareto { shape, min } => {
            if shape <= 1.0 {
                f64::INFINITY
            } else if t <= min {
                shape * min / (shape - 1.0) - t
            } else {
                min.powf(shape) * t.powf(1.0 - shape) / (shape - 1.0)
            }
        }
        SizeDist::BoundedPareto { shape, min, max } => {
            if t >= max {
                return 0.0;
            }
            let t0 = t.max(min);
            // int_t0^max ((min/x)^a - r) / (1 - r) dx
            let r = (min / max).powf(shape);
            let int_pow = if (shape - 1.0).abs() < 1e-12 {
                min * (max / t0).ln()
            } else {
                min.powf(shape) * (max.powf(1.0 - shape) - t0.powf(1.0 - shape)) / (1.0 - shape)
            };
            (t0 - t) + (int_pow - r * (max - t0)) / (1.0 - r)
        }
        SizeDist::Uniform { min, max } => {
            if t <= min {
                (min + max) / 2.0 - t
            } else if t >= max {
                0.0
            } else {
                (max - t) * (max - t) / (2.0 * (max - min))
            }
        }
        SizeDist::Lognormal { mu, sigma } => lognormal_excess(mu, sigma, t),
        SizeDist::Empirical(ref pts) => empirical_pieces(pts).map(|(a, b, m)| m * piece_excess(a, b, t)).sum(),
        SizeDist::LognormalPareto { mu, sigma, cutoff, shape } => {
            let tail_mass = normal_sf((cutoff.ln() - mu) / sigma);
            let tail = |t: f64| {
                if shape <= 1.0 {
                    f64::INFINITY
                } else {
                    tail_mass * cutoff.powf(shape) * t.powf(1.0 - shape) / (shape - 1.0)
                }
            };
            if t >= cutoff {
                tail(t)
            } else {
                // Below the cutoff the survival is the lognormal's: its excess up to the cutoff.
                lognormal_excess(mu, sigma, t) - lognormal_excess(mu, sigma, cutoff) + tail(cutoff)
            }
        }
    }
}

/// The empirical law as (from, to, mass) pieces: an atom at the first point holding its
/// cumulative probability, then uniform mass between consecutive points (an atom where two
/// points share a size), as `SizeDist::draw` interpolates.
fn empirical_pieces(pts: &[(f64, f64)]) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
    let first = pts.first().map(|&(x, c)| (x, x, c));
    first.into_iter().chain(pts.windows(2).map(|w| (w[0].0, w[1].0, w[1].1 - w[0].1))).filter(|p| p.2 > 0.0)
}

/// P(U >= x) for U uniform on [a, b] (an atom at a when a == b).
fn piece_survival(a: f64, b: f64, x: f64) -> f64 {
    if x <= a {
        1.0
    } else if x > b || b <= a {
        0.0
    } else {
        (b - x) / (b - a)
    }
}

/// E[(U - t)^+] for U uniform on [a, b] (an atom at a when a == b).
fn piece_excess(a: f64, b: f64, t: f64) -> f64 {
    if t <= a {
        (a + b) / 2.0 - t
    } else if t >= b {
        0.0
    } else {
        (b - t) * (b - t) / (2.0 * (b - a))
    }
}

/// A size law from a JSON `size` table (any scenario size distribution). Sizes in bytes are
/// divided by `mss_bytes`; `base` resolves an empirical `file`. Errors name the field under
/// `size`.
pub fn dist_from_json(text: &str, mss_bytes: f64, base: &std::path::Path) -> crate::Result<SizeDist> {
    use crate::error::Error;
    use crate::spec::{decode, join_path};
    use crate::traffic::SizeSpec;
    if !(mss_bytes.is_finite() && mss_bytes > 0.0) {
        return Err(Error::input("mss_bytes", format!("must be a positive number of bytes, got {mss_bytes}")));
    }
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| Error::input("size", format!("not a JSON table: {e}")))?;
    let spec: SizeSpec = serde_path_to_error::deserialize(v).map_err(|e| {
        let (inner, msg) = decode(&e.inner().to_string());
        Error::input(join_path("size", &join_path(&e.path().to_string(), &inner)), msg)
    })?;
    crate::traffic::size_dist_mss("size", &spec, mss_bytes, base)
}

/// Explicit terms of a sum before the tail integral takes over (unbounded laws).
const EXPLICIT_TERMS: u64 = 1 << 16;
/// Bounded laws up to this many packets are summed exactly, term by term.
const EXACT_UP_TO: f64 = 1e7;

/// A size law seen in whole packets.
#[derive(Clone, Debug)]
pub struct PacketSizes {
    law: SizeDist,
    mean: f64,
}

impl PacketSizes {
    /// Fails (naming the reason) when the law has an infinite mean: then the long share is
    /// 1 for every K and F(K)'s weights are not a distribution over documents we can sum.
    pub fn new(law: SizeDist) -> Result<Self, String> {
        let mut s = PacketSizes { law, mean: 0.0 };
        let m = s.tail_sum(1);
        if !m.is_finite() {
            return Err("the size distribution has an infinite mean (a Pareto needs shape > 1), so every K makes \
                almost all packets long"
                .into());
        }
        s.mean = m;
        Ok(s)
    }

    pub fn law(&self) -> &SizeDist {
        &self.law
    }

    /// P(S >= j).
    pub fn at_least(&self, j: i64) -> f64 {
        if j <= 1 {
            1.0
        } else {
            dist_survival(&self.law, j as f64 - 0.5)
        }
    }

    /// P(S = i): the probability that a document has i packets.
    pub fn pmf(&self, i: u64) -> f64 {
        if i == 0 {
            return 0.0;
        }
        (self.at_least(i as i64) - self.at_least(i as i64 + 1)).max(0.0)
    }

    /// E[S], packets per document.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// sum_{j >= m0} P(S >= j) = E[(S - m0 + 1)^+].
    pub fn tail_sum(&self, m0: i64) -> f64 {
        let mut sum = 0.0;
        let mut j = m0;
        if j < 2 {
            sum += (2 - j) as f64; // the terms j <= 1 are 1 each
            j = 2;
        }
        let upper = upper(&self.law);
        let last = if upper.is_finite() && upper < EXACT_UP_TO {
            (upper + 1.0).ceil() as i64 // P(S >= j) = 0 beyond: exact
        } else {
            j + EXPLICIT_TERMS as i64
        };
        // Summing from the far end adds the small terms first.
        let mut part = 0.0;
        for i in (j..=last).rev() {
            part += self.at_least(i);
        }
        sum + part + dist_excess(&self.law, last as f64)
    }

    /// a_l, the share of a connection's arriving packets that are long, for threshold K:
    /// with `BeyondK`, E[(S + e - K)^+] / E[S + e]; with `WholeFlow`,
    /// E[(S + e) 1{S + e > K}] / E[S + e]; `e` = `extra_pkts` packets each connection sends
    /// through the queue before its data and the classifier counts (2 with our TCP's
    /// handshake, its SYN and final ACK; 0 without a handshake, as in the paper).
    pub fn long_share(&self, k: u64, counting: Counting, extra_pkts: u64) -> f64 {
        let j0 = k as i64 - extra_pkts as i64 + 1;
        self.share(k, counting, extra_pkts, self.tail_sum(j0))
    }

    /// [`Self::long_share`] for every K in `k_lo..=k_hi` (index K - k_lo), from one tail sum.
    pub fn long_shares(&self, k_lo: u64, k_hi: u64, counting: Counting, extra_pkts: u64) -> Vec<f64> {
        if k_hi < k_lo {
            return Vec::new();
        }
        let e = extra_pkts as i64;
        let mut beyond = self.tail_sum(k_hi as i64 - e + 1);
        let mut out = vec![0.0; (k_hi - k_lo + 1) as usize];
        for k in (k_lo..=k_hi).rev() {
            let j0 = k as i64 - e + 1;
            if k < k_hi {
                beyond += self.at_least(j0); // sum from j0 = sum from j0 + 1, plus P(S >= j0)
            }
            out[(k - k_lo) as usize] = self.share(k, counting, extra_pkts, beyond);
        }
        out
    }

    /// The long share given beyond = sum_{j >= j0} P(S >= j), j0 = K - e + 1 (the smallest
    /// document whose connection counts more than K packets).
    fn share(&self, k: u64, counting: Counting, extra_pkts: u64, beyond: f64) -> f64 {
        let j0 = k as i64 - extra_pkts as i64 + 1;
        let total = self.mean + extra_pkts as f64;
        if j0 <= 1 {
            return match counting {
                Counting::WholeFlow => 1.0,
                Counting::BeyondK => (total - k as f64) / total,
            };
        }
        let share = match counting {
            Counting::BeyondK => beyond / total,
            // E[(S + e) 1{S >= j0}] = (j0 - 1 + e) P(S >= j0) + sum_{j >= j0} P(S >= j)
            Counting::WholeFlow => ((j0 - 1) as f64 + extra_pkts as f64) * self.at_least(j0) / total + beyond / total,
        };
        share.clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    #[test]
    fn normal_tail() {
        assert!((normal_sf(0.0) - 0.5).abs() < 1e-15);
        assert!((normal_sf(1.959_963_984_540_054) - 0.025).abs() < 1e-12);
        assert!((normal_sf(-1.0) - 0.841_344_746_068_543).abs() < 1e-12);
    }

    /// E[(X - t)^+] is the integral of the survival function: check each closed form
    /// against a fine trapezoid integral of `survival`.
    #[test]
    fn excess_is_the_integral_of_survival() {
        let laws = [
            (SizeDist::Fixed(7.3)),
            (SizeDist::Exponential { mean: 6.0 }),
            (SizeDist::Pareto { shape: 2.5, min: 3.0 }),
            (SizeDist::BoundedPareto { shape: 1.2, min: 4.0, max: 50.0 }),
            (SizeDist::BoundedPareto { shape: 1.0, min: 4.0, max: 50.0 }),
            (SizeDist::Uniform { min: 2.0, max: 10.0 }),
            (SizeDist::Lognormal { mu: 1.0, sigma: 0.5 }),
            (SizeDist::Empirical(vec![(1.0, 0.2), (10.0, 0.5), (10.0, 0.6), (40.0, 1.0)])),
            SizeDist::LognormalPareto { mu: 1.5, sigma: 0.8, cutoff: 20.0, shape: 2.5 },
        ];
        for law in &laws {
            for &t in &[0.0, 2.5, 5.0, 9.0, 12.0, 30.0] {
                // Trapezoids of width h: error below h per jump of the survival function
                // (atoms) plus h^2 terms elsewhere.
                let hi = 400.0;
                let n = 100_000;
                let h = (hi - t) / n as f64;
                let mut integral = 0.0;
                let mut prev = dist_survival(law, t);
                for i in 1..=n {
                    let next = dist_survival(law, t + i as f64 * h);
                    integral += 0.5 * h * (prev + next);
                    prev = next;
                }
                let want = integral + dist_excess(law, hi);
                let got = dist_excess(law, t);
                assert!((got - want).abs() < 2.0 * h + 1e-6 * want, "{law:?} t={t}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn mean_of_rounded_sizes_matches_sampling() {
        // The exact E[S] of the rounded law against a large sample of SizeDist::sample.
        let dists = [
            SizeDist::Pareto { shape: 1.3, min: 30.0 * 0.3 / 1.3 },
            SizeDist::Lognormal { mu: 1.2, sigma: 1.0 },
            SizeDist::Exponential { mean: 3.0 },
            SizeDist::Uniform { min: 0.2, max: 9.7 },
        ];
        for d in &dists {
            let ps = PacketSizes::new(d.clone()).unwrap();
            let mut r = Rng::stream(5, "sizes");
            let n = 400_000;
            let mut sum = 0.0;
            let mut ones = 0;
            for _ in 0..n {
                let s = d.sample(&mut r);
                sum += s as f64;
                ones += (s == 1) as u32;
            }
            let tol = if matches!(d, SizeDist::Pareto { .. }) { 0.03 } else { 0.01 };
            assert!(rel(sum / n as f64, ps.mean()) < tol, "{d:?}: sample {} exact {}", sum / n as f64, ps.mean());
            let p1 = ones as f64 / n as f64;
            assert!((p1 - ps.pmf(1)).abs() < 0.005, "{d:?}: P(S=1) sample {p1} exact {}", ps.pmf(1));
        }
    }

    #[test]
    fn fixed_and_uniform_sizes_are_exact() {
        // A fixed 10-packet document: K = 7 leaves 3 of 10 packets long.
        let ps = PacketSizes::new(SizeDist::Fixed(10.0)).unwrap();
        assert_eq!(ps.mean(), 10.0);
        assert_eq!(ps.pmf(10), 1.0);
        assert!((ps.long_share(7, Counting::BeyondK, 0) - 0.3).abs() < 1e-15);
        assert_eq!(ps.long_share(10, Counting::BeyondK, 0), 0.0);
        assert_eq!(ps.long_share(9, Counting::WholeFlow, 0), 1.0);
        assert_eq!(ps.long_share(10, Counting::WholeFlow, 0), 0.0);
        // With the SYN counted first: 11 packets per connection, K = 7 leaves 4 long.
        assert!((ps.long_share(7, Counting::BeyondK, 1) - 4.0 / 11.0).abs() < 1e-15);
        // Uniform on [0.5, 4.5): S is 1..4 with probability 1/4 each (round half up).
        let ps = PacketSizes::new(SizeDist::Uniform { min: 0.5, max: 4.5 }).unwrap();
        for i in 1..=4 {
            assert!((ps.pmf(i) - 0.25).abs() < 1e-12, "P({i}) = {}", ps.pmf(i));
        }
        assert!((ps.mean() - 2.5).abs() < 1e-12);
        // K = 2: long packets are S - 2 for S = 3, 4: (1 + 2) / 4 / 2.5 = 0.3.
        assert!((ps.long_share(2, Counting::BeyondK, 0) - 0.3).abs() < 1e-12);
        // Whole flows: sizes 3 and 4 are long, (3 + 4) / 4 / 2.5 = 0.7.
        assert!((ps.long_share(2, Counting::WholeFlow, 0) - 0.7).abs() < 1e-12);
    }

    /// The long share against a direct count over a large sample of rounded sizes.
    #[test]
    fn long_share_matches_counting_a_sample() {
        let d = SizeDist::Lognormal { mu: 1.8, sigma: 1.1 };
        let ps = PacketSizes::new(d.clone()).unwrap();
        let mut r = Rng::stream(6, "sizes");
        let sizes: Vec<u64> = (0..300_000).map(|_| d.sample(&mut r)).collect();
        let total: u64 = sizes.iter().sum();
        for k in [1u64, 3, 7, 20, 60] {
            for e in [0u64, 1] {
                let beyond: u64 = sizes.iter().map(|&s| (s + e).saturating_sub(k)).sum();
                let whole: u64 = sizes.iter().filter(|&&s| s + e > k).map(|&s| s + e).sum();
                let n = sizes.len() as u64;
                let want_b = beyond as f64 / (total + e * n) as f64;
                let want_w = whole as f64 / (total + e * n) as f64;
                let got_b = ps.long_share(k, Counting::BeyondK, e);
                let got_w = ps.long_share(k, Counting::WholeFlow, e);
                assert!((got_b - want_b).abs() < 0.01, "K={k} e={e}: beyond {got_b} vs {want_b}");
                assert!((got_w - want_w).abs() < 0.01, "K={k} e={e}: whole {got_w} vs {want_w}");
            }
        }
    }

    #[test]
    fn heavy_tails_and_infinite_means() {
        // Pareto shape 1.13 (Tokuda et al. Table 1): finite mean, long share decreasing in K.
        let ps = PacketSizes::new(SizeDist::Pareto { shape: 1.13, min: 1.0 }).unwrap();
        // Continuous mean 1.13/0.13 = 8.69; rounding moves it slightly.
        assert!(rel(ps.mean(), 1.13 / 0.13) < 0.05, "{}", ps.mean());
        let mut prev = 1.0;
        for k in 1..200 {
            let a = ps.long_share(k, Counting::BeyondK, 0);
            assert!(a < prev && a > 0.0);
            prev = a;
        }
        // The batch form agrees with one K at a time.
        for (counting, e) in [(Counting::BeyondK, 0), (Counting::WholeFlow, 1)] {
            let batch = ps.long_shares(1, 199, counting, e);
            for k in [1u64, 2, 50, 199] {
                assert!(rel(batch[k as usize - 1], ps.long_share(k, counting, e)) < 1e-9, "K={k}");
            }
        }
        // Heavy tail: even K = 100 leaves about half the packets long
        // (continuous law: E[(X-100)^+]/E[X] = 100^-0.13 / 1.13 = 0.49).
        assert!(prev > 0.4, "{prev}");
        let err = PacketSizes::new(SizeDist::Pareto { shape: 1.0, min: 1.0 }).unwrap_err();
        assert!(err.contains("infinite mean"), "{err}");
        let err =
            PacketSizes::new(SizeDist::LognormalPareto { mu: 1.0, sigma: 1.0, cutoff: 10.0, shape: 0.9 }).unwrap_err();
        assert!(err.contains("infinite mean"), "{err}");
    }

    #[test]
    fn pmf_sums_to_one() {
        for law in [
            (SizeDist::Lognormal { mu: 2.0, sigma: 1.3 }),
            SizeDist::LognormalPareto { mu: 2.0, sigma: 1.3, cutoff: 91.0, shape: 1.5 },
        ] {
            let ps = PacketSizes::new(law).unwrap();
            let s: f64 = (1..200_000).map(|i| ps.pmf(i)).sum();
            assert!((s - 1.0).abs() < 1e-3, "{s}");
            // The mean from the pmf (truncated) is below the exact mean, and close.
            let m: f64 = (1..200_000).map(|i| i as f64 * ps.pmf(i)).sum();
            assert!(m <= ps.mean() && rel(m, ps.mean()) < 0.05, "{m} vs {}", ps.mean());
        }
    }

    #[test]
    fn laws_from_json() {
        let base = std::path::Path::new(".");
        let d = dist_from_json(r#"{"dist": "pareto", "shape": 1.5, "mean": 30000, "unit": "bytes"}"#, 1500.0, base)
            .unwrap();
        match d {
            SizeDist::Pareto { shape, min } => assert!(shape == 1.5 && (min - 20.0 / 3.0).abs() < 1e-9, "{min}"),
            other => panic!("{other:?}"),
        }
        // Tokuda et al. Table 2 in bytes: the tail starts at 133 KB = 91.1 packets of 1460 B,
        // spliced continuously, and its mass is the lognormal's above the cutoff.
        let d = dist_from_json(
            concat!(
                r#"{"dist": "lognormal_pareto", "mu": 9.357, "sigma": 1.318, "cutoff": 133000, "#,
                r#""shape": 1.5, "unit": "bytes"}"#
            ),
            1460.0,
            base,
        )
        .unwrap();
        let cut = 133_000.0 / 1460.0;
        assert!((dist_survival(&d, cut) - normal_sf((133_000f64.ln() - 9.357) / 1.318)).abs() < 1e-12);
        assert!((dist_survival(&d, cut - 1e-9) - dist_survival(&d, cut)).abs() < 1e-9, "continuous splice");
        // The exact E[S] of the rounded law is close to the continuous mean.
        let ps = PacketSizes::new(d.clone()).unwrap();
        assert!(rel(ps.mean(), d.mean().unwrap()) < 0.05, "{} vs {}", ps.mean(), d.mean().unwrap());
        for (text, want) in [
            (r#"{"dist": "pareto", "shape": -1, "min": 2}"#, "size.shape: "),
            (r#"{"dist": "weibull"}"#, "size.dist: unknown size distribution"),
            (r#"{"dist": "lognormal_pareto", "mu": 1, "sigma": 1, "cutoff": 10}"#, "size: missing field `shape`"),
            (r#"{"dist": "fixed", "value": 3, "bogus": 1}"#, "size.bogus: unknown field"),
            ("[1, 2]", "size"),
        ] {
            let e = dist_from_json(text, 1460.0, base).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text}: {e}");
        }
        assert!(dist_from_json("{}", 0.0, base).unwrap_err().to_string().starts_with("mss_bytes: "));
    }
}
