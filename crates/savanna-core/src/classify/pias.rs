//! PIAS tagging (Bai et al., NSDI 2015, "Information-Agnostic Flow Scheduling for Commodity
//! Data Centers", section 3): a multi-level feedback queue made of the switches' strict
//! priority queues, driven by tags set where the flow enters the network. A flow starts in
//! the highest priority (tag 0) and is demoted one level each time the bytes it has sent
//! cross a threshold alpha_1 < alpha_2 < ... < alpha_{K-1}: a packet sent after `b` bytes
//! carries tag = #{i : b >= alpha_i}. The `pias` discipline reads the tag (`Packet::tag`).
//!
//! Readings we chose:
//! - the edge node tags, as the paper's end-host module would (a packet filter in the
//!   sender's stack); bytes sent before a data packet are its sequence number in packets
//!   (so thresholds are in packets, as every threshold in Savanna): no per-flow table, and
//!   a retransmission keeps its original priority (it resends bytes already counted);
//! - SYN, SYN-ACK, pure ACKs and FINs: tag 0 (no data, never demoted);
//! - thresholds: given (`thresholds_pkts`, K-1 increasing values), or from the flow-size
//!   distribution (`thresholds_from`, estimated from 200 000 draws of a fixed stream, so the
//!   scenario stays deterministic). With `load`, as the paper derives them (section 3.2):
//!   Poisson flow arrivals at that load, each priority queue an M/G/1-FCFS served in strict
//!   priority, thresholds chosen to minimise the mean FCT. The paper's closed form for the
//!   time in each queue could not be fetched here; we use the exact mean response time of
//!   that model (multi-level processor sharing with FCFS levels, Kleinrock 1976 vol. II
//!   4.7): a flow of x in (a_{j-1}, a_j] takes
//!   T(x) = (lambda E[min(S, a_j)^2] / (2 (1 - rho(a_j))) + x) / (1 - rho(a_{j-1})),
//!   rho(a) = lambda E[min(S, a)], and `optimal_split` minimises E[T(S)] over thresholds
//!   among the observed sizes (coordinate descent from the equal-count split). Without
//!   `load`: an equal-count split, alpha_i = the (i/K) quantile. Repeated values are
//!   merged, so fewer than K levels may be used. Default (neither key): the geometric
//!   ladder 4, 16, 64, ..., 16384 packets for 8 levels (ours).
//! - the class mark is left alone; the tag is capped at 31 (five bits).

use super::registry::EdgeClassifierSpec;
use super::{Classifier, ClassifierReport};
use crate::engine::{Rng, Time};
use crate::error::Result;
use crate::model::tokuda::SizeFn;
use crate::net::{Packet, PktKind};
use crate::traffic::SizeSpec;

/// `thresholds_from = { size = <size table>, queues = 8, load = 0.8 }`: PIAS's optimised
/// thresholds at `load`, or without it an equal-count split.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThresholdsFrom {
    /// The flow-size distribution, as a traffic block's `size` table.
    pub size: SizeSpec,
    /// Number of priority levels K (2..=32). Default 8, the queues of a commodity switch port.
    #[serde(default = "d_queues")]
    pub queues: u32,
    /// The load (0 < load < 1) for which the thresholds minimise the mean FCT of PIAS's
    /// M/G/1 model (section 3.2); absent: an equal-count split.
    #[serde(default)]
    pub load: Option<f64>,
}

fn d_queues() -> u32 {
    8
}

/// `type = "pias"`: tag packets by the bytes their flow has sent (PIAS, Bai et al. 2015).
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PiasClassifierSpec {
    /// Node on whose ingress packets are tagged.
    pub node: String,
    /// Demotion thresholds alpha_1 < ... < alpha_{K-1}, packets sent (at most 31 values).
    /// Default (with no `thresholds_from`): 4, 16, 64, 256, 1024, 4096, 16384 (ours).
    #[serde(default)]
    pub thresholds_pkts: Option<Vec<u64>>,
    /// Derive the thresholds from a size distribution (equal-count split), instead.
    #[serde(default)]
    pub thresholds_from: Option<ThresholdsFrom>,
}

const DEFAULT_LADDER: [u64; 7] = [4, 16, 64, 256, 1024, 4096, 16384];

/// The (i/K) quantiles of `draw`'s distribution, i = 1..K-1, without repeats, from `n` draws.
pub fn equal_split(k: u32, n: usize, mut draw: impl FnMut() -> u64) -> Vec<u64> {
    let mut xs: Vec<u64> = (0..n).map(|_| draw()).collect();
    xs.sort_unstable();
    let mut out: Vec<u64> = Vec::new();
    for i in 1..k as usize {
        let q = xs[(i * n / k as usize).min(n - 1)].max(1);
        if out.last().is_none_or(|&l| q > l) {
            out.push(q);
        }
    }
    out
}

/// A discrete flow-size distribution (sizes in packets, ascending, distinct) with prefix
/// sums, for PIAS's M/G/1 model: the time unit is one packet's transmission.
pub struct SizePmf {
    x: Vec<f64>,
    /// Prefix sums over sizes[..i]: probability, E[S; S <= x_i], E[S^2; S <= x_i].
    cp: Vec<f64>,
    c1: Vec<f64>,
    c2: Vec<f64>,
}

impl SizePmf {
    /// From draws of the size (at least one).
    pub fn from_draws(mut v: Vec<u64>) -> Self {
        v.sort_unstable();
        let n = v.len() as f64;
        let (mut x, mut cp, mut c1, mut c2) = (Vec::new(), vec![0.0], vec![0.0], vec![0.0]);
        let mut i = 0;
        while i < v.len() {
            let j = v.partition_point(|&s| s <= v[i]);
            let (s, p) = (v[i].max(1) as f64, (j - i) as f64 / n);
            x.push(s);
            cp.push(cp.last().unwrap() + p);
            c1.push(c1.last().unwrap() + p * s);
            c2.push(c2.last().unwrap() + p * s * s);
            i = j;
        }
        SizePmf { x, cp, c1, c2 }
    }
    /// From (size, probability) pairs, sizes increasing, probabilities summing to 1.
    pub fn from_pairs(pairs: &[(u64, f64)]) -> Self {
        let (mut x, mut cp, mut c1, mut c2) = (Vec::new(), vec![0.0], vec![0.0], vec![0.0]);
        for &(s, p) in pairs {
            let s = s as f64;
            x.push(s);
            cp.push(cp.last().unwrap() + p);
            c1.push(c1.last().unwrap() + p * s);
            c2.push(c2.last().unwrap() + p * s * s);
        }
        SizePmf { x, cp, c1, c2 }
    }
    pub fn sizes(&self) -> &[f64] {
        &self.x
    }
    fn mean(&self) -> f64 {
        *self.c1.last().unwrap()
    }
    /// E[min(S, a)] and E[min(S, a)^2] for a = x_{i-1} (i sizes at most a; i = len: a = inf).
    fn trunc(&self, i: usize) -> (f64, f64) {
        let n = self.x.len();
        if i >= n {
            return (self.c1[n], self.c2[n]);
        }
        let a = self.x[i - 1];
        let tail = 1.0 - self.cp[i];
        (self.c1[i] + a * tail, self.c2[i] + a * a * tail)
    }
    /// Mean FCT (packet times) of PIAS's M/G/1 model at `load` with level boundaries given
    /// as counts of sizes at or below each threshold, increasing, each in 1..len.
    fn mean_fct_idx(&self, cuts: &[usize], load: f64) -> f64 {
        let lambda = load / self.mean();
        let n = self.x.len();
        let (mut prev_i, mut rho_prev, mut total) = (0usize, 0.0, 0.0);
        for &i in cuts.iter().chain(std::iter::once(&n)) {
            let (m1, m2) = self.trunc(i);
            let rho = lambda * m1;
            if rho >= 1.0 {
                return f64::INFINITY;
            }
            let wait = lambda * m2 / (2.0 * (1.0 - rho));
            let (p, x) = (self.cp[i] - self.cp[prev_i], self.c1[i] - self.c1[prev_i]);
            total += (wait * p + x) / (1.0 - rho_prev);
            prev_i = i;
            rho_prev = rho;
        }
        total
    }
    /// Mean FCT (packet times) of PIAS's M/G/1 model at `load` with demotion thresholds
    /// `thresholds` (packets sent, increasing): a flow of x packets stays in level j while
    /// x <= alpha_j.
    pub fn mean_fct(&self, thresholds: &[u64], load: f64) -> f64 {
        let mut cuts: Vec<usize> = Vec::new();
        for &a in thresholds {
            let i = self.x.partition_point(|&s| s <= a as f64);
            if i > 0 && i < self.x.len() && cuts.last().is_none_or(|&l| i > l) {
                cuts.push(i);
            }
        }
        self.mean_fct_idx(&cuts, load)
    }
}

/// PIAS's thresholds (section 3.2) for K = `k` levels at `load`: those among the observed
/// sizes that minimise the model's mean FCT (`SizePmf::mean_fct`), by coordinate descent
/// from the equal-count split until no threshold moves.
pub fn optimal_split(pmf: &SizePmf, k: u32, load: f64) -> Vec<u64> {
    let n = pmf.x.len();
    let m = (k as usize - 1).min(n.saturating_sub(1));
    if m == 0 {
        return Vec::new();
    }
    // Cut c in 1..n: levels split after the c smallest sizes. Start: equal count.
    let mut cuts: Vec<usize> = Vec::with_capacity(m);
    for j in 1..=m {
        let want = j as f64 / (m + 1) as f64;
        let c = pmf.cp.partition_point(|&p| p < want).clamp(1, n - 1);
        cuts.push(c.max(cuts.last().map_or(1, |&l| l + 1)).min(n - 1 - (m - j)));
    }
    let mut best = pmf.mean_fct_idx(&cuts, load);
    for _sweep in 0..200 {
        let mut moved = false;
        for j in 0..m {
            let lo = if j == 0 { 1 } else { cuts[j - 1] + 1 };
            let hi = if j + 1 == m { n - 1 } else { cuts[j + 1] - 1 };
            let keep = cuts[j];
            let (mut arg, mut val) = (keep, best);
            for c in lo..=hi {
                cuts[j] = c;
                let v = pmf.mean_fct_idx(&cuts, load);
                if v < val {
                    (arg, val) = (c, v);
                }
            }
            cuts[j] = arg;
            if arg != keep {
                moved = true;
                best = val;
            }
        }
        if !moved {
            break;
        }
    }
    cuts.iter().map(|&c| pmf.x[c - 1] as u64).collect()
}

impl EdgeClassifierSpec for PiasClassifierSpec {
    const MINIMAL: &'static str = "node = \"edge\"";
    const WRITES: crate::net::Mark = crate::net::Mark::Tag;
    fn node(&self) -> &str {
        &self.node
    }
    fn check(&self, field: &str) -> Result<()> {
        if let Some(from) = &self.thresholds_from {
            both(field, self.thresholds_pkts.is_some())?;
            from.check(field)?;
        }
        if let Some(t) = &self.thresholds_pkts {
            let f = format!("{field}.thresholds_pkts");
            if t.is_empty() || t.len() > 31 {
                return crate::spec::bad(f, "give 1 to 31 thresholds (K-1 for K priority levels)");
            }
            if t[0] == 0 || t.windows(2).any(|w| w[1] <= w[0]) {
                return crate::spec::bad(f, "must be increasing and at least 1 packet");
            }
        }
        Ok(())
    }
    fn build(&self, _seed: u64) -> Box<dyn Classifier> {
        let t = self.thresholds_pkts.clone().unwrap_or_else(|| DEFAULT_LADDER.to_vec());
        Box::new(PiasTagger { thresholds: t })
    }
    fn resolve_models(&mut self, field: &str, sizes: &SizeFn) -> Result<()> {
        let Some(from) = self.thresholds_from.take() else { return Ok(()) };
        both(field, self.thresholds_pkts.is_some())?;
        from.check(field)?;
        let dist = sizes(&format!("{field}.thresholds_from.size"), &from.size)?;
        let mut rng = Rng::stream(0, "pias-thresholds");
        let t = match from.load {
            None => equal_split(from.queues, 200_000, || dist.sample(&mut rng)),
            Some(load) => {
                let draws: Vec<u64> = (0..200_000).map(|_| dist.sample(&mut rng)).collect();
                optimal_split(&SizePmf::from_draws(draws), from.queues, load)
            }
        };
        if t.is_empty() {
            return crate::spec::bad(
                format!("{field}.thresholds_from.size"),
                "has a single flow size: there is nothing to split",
            );
        }
        self.thresholds_pkts = Some(t);
        Ok(())
    }
}

fn both(field: &str, given: bool) -> Result<()> {
    if given {
        return crate::spec::bad(
            format!("{field}.thresholds_from"),
            "give either thresholds_pkts or thresholds_from, not both",
        );
    }
    Ok(())
}

impl ThresholdsFrom {
    fn check(&self, field: &str) -> Result<()> {
        if !(2..=32).contains(&self.queues) {
            return crate::spec::bad(format!("{field}.thresholds_from.queues"), "must be 2 to 32");
        }
        if let Some(l) = self.load {
            if !(l > 0.0 && l < 1.0) {
                return crate::spec::bad(
                    format!("{field}.thresholds_from.load"),
                    format!("must be in (0, 1), got {l}"),
                );
            }
        }
        Ok(())
    }
}

pub struct PiasTagger {
    /// alpha_1 < ... < alpha_{K-1}, packets.
    pub thresholds: Vec<u64>,
}

impl Classifier for PiasTagger {
    fn kind(&self) -> &'static str {
        "pias"
    }
    fn classify(&mut self, p: &mut Packet, _now: Time, _flow_size: Option<u64>) {
        let t = match p.kind {
            PktKind::Data | PktKind::Udp => {
                let sent = p.seq as u64;
                self.thresholds.partition_point(|&a| a <= sent) as u8
            }
            _ => 0,
        };
        p.set_tag(t);
    }
    fn report(&self) -> ClassifierReport {
        ClassifierReport {
            flows_short: 0,
            flows_long: 0,
            threshold: self.thresholds.first().copied().unwrap_or(0) as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(kind: PktKind, seq: u32) -> Packet {
        Packet { kind, ..Packet::test_data(0, seq) }
    }

    #[test]
    fn a_flow_is_demoted_as_its_bytes_sent_cross_each_threshold() {
        let mut c = PiasTagger { thresholds: vec![2, 5, 9] };
        let tags: Vec<u8> = (0..12)
            .map(|s| {
                let mut p = pkt(PktKind::Data, s);
                c.classify(&mut p, 0, None);
                p.tag()
            })
            .collect();
        assert_eq!(tags, [0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3]);
        for k in [PktKind::Syn, PktKind::SynAck, PktKind::Ack, PktKind::Fin] {
            let mut p = pkt(k, 40);
            c.classify(&mut p, 0, None);
            assert_eq!(p.tag(), 0, "{k:?}");
        }
    }

    #[test]
    fn equal_split_cuts_flows_into_equal_counts() {
        let mut i = 0u64;
        // Sizes 1..=1000 uniformly: quartiles at 251, 501, 751.
        let t = equal_split(4, 1000, || {
            i += 1;
            i
        });
        assert_eq!(t, [251, 501, 751]);
        // Repeated quantiles are merged: one level boundary for a one-size workload.
        assert_eq!(equal_split(8, 100, || 3), [3]);
    }

    #[test]
    fn thresholds_from_a_distribution_are_its_equal_count_quantiles() {
        let mut s: PiasClassifierSpec = toml::from_str(
            "node = \"a\"\nthresholds_from = { size = { dist = \"uniform\", min = 1.0, max = 101.0 }, queues = 4 }",
        )
        .unwrap();
        let sizes = |_: &str, _: &SizeSpec| -> Result<crate::traffic::SizeDist> {
            Ok(crate::traffic::SizeDist::Uniform { min: 1.0, max: 101.0 })
        };
        s.resolve_models("c", &sizes).unwrap();
        s.check("c").unwrap();
        let t = s.thresholds_pkts.clone().unwrap();
        assert_eq!(t.len(), 3);
        for (got, want) in t.iter().zip([26.0, 51.0, 76.0]) {
            assert!((*got as f64 - want).abs() <= 1.0, "{t:?}");
        }
        // Both ways at once is an error naming the key.
        let mut s: PiasClassifierSpec = toml::from_str(
            "node = \"a\"\nthresholds_pkts = [3]\nthresholds_from = { size = { dist = \"fixed\", value = 3.0 } }",
        )
        .unwrap();
        let e = s.resolve_models("c", &sizes).unwrap_err().to_string();
        assert!(e.starts_with("c.thresholds_from:"), "{e}");
    }

    /// PIAS's model with one level is an M/G/1-FCFS queue: the Pollaczek-Khinchine mean
    /// sojourn E[S] + lambda E[S^2] / (2 (1 - rho)); with a threshold, a worked example
    /// (where demotion does not pay: the two sizes are too close).
    #[test]
    fn pias_model_is_pollaczek_khinchine_with_one_level() {
        let pmf = SizePmf::from_pairs(&[(1, 0.5), (3, 0.5)]);
        let (es, es2, load) = (2.0, 5.0, 0.5);
        let lambda = load / es;
        let pk = es + lambda * es2 / (2.0 * (1.0 - load));
        assert!((pmf.mean_fct(&[], load) - pk).abs() < 1e-12);
        // Threshold 1: size-1 flows wait only behind level-1 work (min(S, 1)); size-3 flows
        // wait behind all work, slowed by level-1 arrivals: (1.25 + 3) / (1 - 0.25).
        let t1 = lambda * 1.0 / (2.0 * (1.0 - lambda)) + 1.0;
        let t3 = (lambda * es2 / (2.0 * (1.0 - load)) + 3.0) / (1.0 - lambda);
        assert!((pmf.mean_fct(&[1], load) - (0.5 * t1 + 0.5 * t3)).abs() < 1e-12);
    }

    /// Section 3.2: the derived thresholds minimise the model's mean FCT. Against an
    /// exhaustive search over every threshold triple (K = 4) on the web-search sizes (the
    /// CDF's points as masses), at three loads; and they beat the equal-count split.
    #[test]
    fn pias_derived_thresholds_minimise_the_models_mean_fct() {
        let cdf = [
            (6, 0.15),
            (13, 0.2),
            (19, 0.3),
            (33, 0.4),
            (53, 0.53),
            (133, 0.6),
            (667, 0.7),
            (1333, 0.8),
            (3333, 0.9),
            (6667, 0.97),
            (20000, 1.0),
        ];
        let mut prev = 0.0;
        let pairs: Vec<(u64, f64)> = cdf
            .iter()
            .map(|&(s, c)| {
                let p = c - prev;
                prev = c;
                (s, p)
            })
            .collect();
        let pmf = SizePmf::from_pairs(&pairs);
        let sizes: Vec<u64> = pairs.iter().map(|p| p.0).collect();
        for load in [0.5, 0.7, 0.9] {
            let mut brute = (f64::INFINITY, vec![]);
            for a in 0..sizes.len() - 1 {
                for b in a + 1..sizes.len() - 1 {
                    for c in b + 1..sizes.len() - 1 {
                        let t = vec![sizes[a], sizes[b], sizes[c]];
                        let v = pmf.mean_fct(&t, load);
                        if v < brute.0 {
                            brute = (v, t);
                        }
                    }
                }
            }
            let got = optimal_split(&pmf, 4, load);
            let v = pmf.mean_fct(&got, load);
            assert!((v - brute.0).abs() <= 1e-9 * brute.0, "load {load}: {got:?} {v} vs {:?} {}", brute.1, brute.0);
            let equal = pmf.mean_fct(&[19, 53, 1333], load);
            assert!(v < equal, "load {load}: optimum {v} vs equal-count {equal}");
        }
    }

    #[test]
    fn thresholds_from_a_distribution_and_load_are_the_models_optimum() {
        // A decreasing-hazard size (bounded Pareto), where demotion pays.
        let spec = "node = \"a\"\nthresholds_from = { size = { dist = \"bounded_pareto\", shape = 1.2, min = 1.0, \
                    max = 1000.0 }, queues = 3, load = 0.8 }";
        let mut s: PiasClassifierSpec = toml::from_str(spec).unwrap();
        let d = crate::traffic::SizeDist::BoundedPareto { shape: 1.2, min: 1.0, max: 1000.0 };
        let sizes = |_: &str, _: &SizeSpec| -> Result<crate::traffic::SizeDist> { Ok(d.clone()) };
        s.resolve_models("c", &sizes).unwrap();
        let t = s.thresholds_pkts.clone().unwrap();
        let mut rng = Rng::stream(0, "pias-thresholds");
        let pmf = SizePmf::from_draws((0..200_000).map(|_| d.sample(&mut rng)).collect());
        assert_eq!(t, optimal_split(&pmf, 3, 0.8));
        assert_eq!(t.len(), 2);
        let v = pmf.mean_fct(&t, 0.8);
        for (a, b) in [(t[0] - 1, t[1]), (t[0] + 1, t[1]), (t[0], t[1] - 1), (t[0], t[1] + 1)] {
            assert!(pmf.mean_fct(&[a, b], 0.8) >= v, "a neighbour of {t:?} is better: {a}, {b}");
        }
        let bad: PiasClassifierSpec = toml::from_str(&spec.replace("0.8", "1.2")).unwrap();
        let e = bad.check("c").unwrap_err().to_string();
        assert!(e.starts_with("c.thresholds_from.load:"), "{e}");
    }

    #[test]
    fn checks_name_the_field() {
        let bad = |toml: &str| -> String {
            let s: PiasClassifierSpec = toml::from_str(toml).unwrap();
            s.check("classifiers[0]").unwrap_err().to_string()
        };
        assert!(bad("node = \"a\"\nthresholds_pkts = [5, 5]").starts_with("classifiers[0].thresholds_pkts:"));
        assert!(bad("node = \"a\"\nthresholds_pkts = []").starts_with("classifiers[0].thresholds_pkts:"));
        let e = bad("node = \"a\"\nthresholds_from = { size = { dist = \"fixed\", value = 3.0 }, queues = 1 }");
        assert!(e.starts_with("classifiers[0].thresholds_from.queues:"), "{e}");
        let s: PiasClassifierSpec = toml::from_str("node = \"a\"").unwrap();
        s.check("c").unwrap();
        let b = s.build(1);
        let mut p = pkt(PktKind::Data, 4);
        let mut b = b;
        b.classify(&mut p, 0, None);
        assert_eq!(p.tag(), 1, "default ladder starts at 4 packets");
    }
}
