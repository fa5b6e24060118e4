//! Tokuda, Hasegawa & Murata 2002, section 3.1, "packet sampling": a router that sees only a
//! sample of its packets. It keeps two tables. Arriving packets are sampled at a rate of one
//! in I, and each sampled packet is recorded in the *sampling table* (connection -> packets
//! sampled in the current interval). Every T the router updates the *classification table*
//! (connection -> counter C_i) from it: a connection sampled but not yet classified is
//! added (it "starts packet transmission"); one in both tables has its counter incremented;
//! one classified but not sampled in the interval is removed (it "finishes packet
//! transmission"). The sampling table then starts afresh. After the update, a connection is
//! long when C_i reaches the threshold; packets of other connections, classified or not, are
//! short. Classes change only at updates, so a connection is short for at least one T.
//!
//! Readings we chose:
//! - The inequality. The paper's text reads "C_i >= K/T", with I the sampling rate
//!   [1/packets] and T the update interval [s] defined in the same sentence. Taken
//!   literally it compares a count with packets per second and leaves I unused; we read it
//!   as C_i >= K/I (the "T" being the sampling parameter I), with C_i the number of packets
//!   of connection i sampled since it entered the table. C_i * I estimates the packets the
//!   connection has sent, so the rule says "long once it is estimated to have sent K
//!   packets". In integers: long when C_i * I >= K, e.g. with K = 7 and I = 3, C_i >= 3
//!   sampled packets (about 9 sent). `threshold_samples` overrides K/I for other readings.
//! - "Increments the counter" of a connection found in both tables: by the number of its
//!   packets sampled in the interval (so C_i counts sampled packets, which the inequality
//!   needs); a newly added connection starts at its sampled count.
//! - Sampling. The paper does not say whether it samples deterministically or at random.
//!   Default (`random_sampling = false`): every I-th packet arriving at the node, counted
//!   over all connections (the I-th, 2I-th, ...), as in count-based sampled NetFlow. With
//!   `random_sampling = true` each packet is sampled independently with probability 1/I,
//!   from the classifier's own RNG stream `classifier/<node>/sampling`, so the build needs
//!   the scenario seed: `build(seed)`.
//! - A connection is one direction of one connection (`flow_key`), and every packet is
//!   sampled and marked, control packets included, as for every classifier here.
//! - A long connection that goes a whole interval without a sampled packet (it paused, or
//!   sends fewer than I packets per T) is removed and starts over as short: this is the
//!   paper's rule, and the "classification instability" it notes for sampling in 4.2.
//! - Report: connections in the classification table with C_i below / at or above the
//!   threshold; `threshold` is the threshold in packets, K (or `threshold_samples` * I).
//! - Defaults: K = 7 packets, T = 0.5 s, I = 3 (section 4.1: "K = 7 [packets] ... T = 0.5
//!   [sec] for sampling and hash algorithms, and I = 3 [1/packets] for the sampling
//!   algorithm"; K = 7 again in 4.2). The paper's Table 3 holds only the RED/RIO parameters.

use super::registry::{resolve_k, EdgeClassifierSpec};
use super::{flow_key, Classifier, ClassifierReport, FlowTable};
use crate::engine::{secs_to_ns, Rng, Time};
use crate::net::ClassMark;
use crate::net::Packet;

fn d_k() -> crate::model::tokuda::KSpec {
    crate::model::tokuda::KSpec::Pkts(7)
}
fn d_every() -> u64 {
    3
}
fn d_t() -> f64 {
    0.5
}

/// `type = "sampling"`: Tokuda et al. 2002's packet sampling with sampling and
/// classification tables.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingClassifierSpec {
    /// Node on whose ingress packets are marked.
    pub node: String,
    /// K, packets: the size beyond which a connection is long-lived (section 4.1: 7), or
    /// `{ criterion = "tokuda-f", ... }` to choose it by F(K) (docs/models.md).
    #[serde(default = "d_k")]
    pub k: crate::model::tokuda::KSpec,
    /// I: one packet in I is sampled (section 4.1: 3).
    #[serde(default = "d_every")]
    pub sample_every: u64,
    /// T: update interval of the classification table, s (section 4.1: 0.5 s).
    #[serde(default = "d_t")]
    pub t_s: f64,
    /// Sample each packet with probability 1/I (own RNG stream) instead of every I-th
    /// packet (the paper does not say which; default: every I-th).
    #[serde(default)]
    pub random_sampling: bool,
    /// Counter threshold, sampled packets: long when C_i >= this. Default K / I (our
    /// reading of the paper's inequality, see the module docs).
    #[serde(default)]
    pub threshold_samples: Option<f64>,
}

impl EdgeClassifierSpec for SamplingClassifierSpec {
    const MINIMAL: &'static str = "node = \"edge\"";
    fn node(&self) -> &str {
        &self.node
    }
    fn check(&self, field: &str) -> crate::Result<()> {
        self.k.check(&format!("{field}.k"))?;
        if self.k.pkts().is_none() {
            return Err(crate::Error::Internal(format!(
                "{field}.k: the criterion was not resolved (model::tokuda::KSpec::resolve)"
            )));
        }
        if self.sample_every == 0 {
            return Err(crate::Error::input(
                format!("{field}.sample_every"),
                "must be at least 1 (1 samples every packet)",
            ));
        }
        if !(self.t_s.is_finite() && self.t_s > 0.0) || secs_to_ns(self.t_s) == 0 {
            return Err(crate::Error::input(
                format!("{field}.t_s"),
                format!("must be a positive number of seconds, got {}", self.t_s),
            ));
        }
        if let Some(v) = self.threshold_samples {
            if !(v.is_finite() && v > 0.0) {
                return Err(crate::Error::input(
                    format!("{field}.threshold_samples"),
                    format!("must be a positive number of sampled packets (or omitted for K / sample_every), got {v}"),
                ));
            }
        }
        Ok(())
    }
    /// `seed` is the scenario seed; random sampling draws from the stream
    /// `classifier/<node>/sampling` (deterministic sampling draws nothing).
    fn build(&self, seed: u64) -> Box<dyn super::Classifier> {
        let rng = self.random_sampling.then(|| Rng::stream(seed, &format!("classifier/{}/sampling", self.node)));
        Box::new(SamplingClassifier::new(
            SamplingParams {
                k: self.k.pkts().expect("K resolved before check and build"),
                sample_every: self.sample_every,
                t: secs_to_ns(self.t_s),
                threshold_samples: self.threshold_samples,
            },
            rng,
        ))
    }
    fn resolve_models(&mut self, field: &str, sizes: &crate::model::tokuda::SizeFn) -> crate::Result<()> {
        resolve_k(&mut self.k, field, sizes)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct SamplingParams {
    pub k: u64,
    pub sample_every: u64,
    pub t: Time,
    pub threshold_samples: Option<f64>,
}

pub struct SamplingClassifier {
    every: u64,
    t: Time,
    /// Long when C_i >= this many sampled packets.
    thr: f64,
    /// The threshold in packets, for the report: K, or `threshold_samples` * I.
    thr_pkts: f64,
    /// Some: sample at random with probability 1/I; None: every I-th packet.
    rng: Option<Rng>,
    /// Packets seen since the last sample (deterministic sampling).
    since_sample: u64,
    /// Sampling table: flow key -> packets sampled in the current interval.
    sampled: FlowTable<u64>,
    /// Classification table: flow key -> C_i, sampled packets since the flow was added.
    table: FlowTable<u64>,
}

impl SamplingClassifier {
    pub fn new(p: SamplingParams, rng: Option<Rng>) -> Self {
        let every = p.sample_every.max(1);
        SamplingClassifier {
            every,
            t: p.t.max(1),
            thr: p.threshold_samples.unwrap_or(p.k as f64 / every as f64),
            thr_pkts: p.threshold_samples.map_or(p.k as f64, |v| v * every as f64),
            rng,
            since_sample: 0,
            sampled: FlowTable::with_capacity_and_hasher(256, Default::default()),
            table: FlowTable::with_capacity_and_hasher(256, Default::default()),
        }
    }
    /// C_i of a flow key, if the flow is in the classification table.
    pub fn counter(&self, key: u64) -> Option<u64> {
        self.table.get(&key).copied()
    }
    /// Flows in the classification table.
    pub fn flows(&self) -> usize {
        self.table.len()
    }
    #[inline]
    fn is_long(&self, c: u64) -> bool {
        c as f64 >= self.thr
    }
    #[inline]
    fn sample(&mut self) -> bool {
        match &mut self.rng {
            Some(r) => r.bernoulli(1.0 / self.every as f64),
            None => {
                self.since_sample += 1;
                if self.since_sample == self.every {
                    self.since_sample = 0;
                    true
                } else {
                    false
                }
            }
        }
    }
    /// The update at the end of each interval T.
    fn update(&mut self) {
        let sampled = &self.sampled;
        self.table.retain(|key, _| sampled.contains_key(key));
        for (key, n) in self.sampled.drain() {
            *self.table.entry(key).or_insert(0) += n;
        }
    }
}

impl Classifier for SamplingClassifier {
    fn kind(&self) -> &'static str {
        "sampling"
    }
    fn classify(&mut self, p: &mut Packet, _now: Time, _flow_size: Option<u64>) {
        let key = flow_key(p);
        if self.sample() {
            *self.sampled.entry(key).or_insert(0) += 1;
        }
        let long = matches!(self.table.get(&key), Some(&c) if self.is_long(c));
        p.class = if long { ClassMark::Long } else { ClassMark::Short };
    }
    fn period(&self) -> Option<Time> {
        Some(self.t)
    }
    fn tick(&mut self, _now: Time) {
        self.update();
    }
    fn report(&self) -> ClassifierReport {
        let long = self.table.values().filter(|&&c| self.is_long(c)).count() as u64;
        ClassifierReport { flows_short: self.table.len() as u64 - long, flows_long: long, threshold: self.thr_pkts }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Time = 1_000_000_000;
    const T: Time = S / 2;

    fn pkt(flow: u32) -> Packet {
        Packet::test_data(flow, 0)
    }
    fn key(flow: u32) -> u64 {
        flow_key(&pkt(flow))
    }
    fn mark(c: &mut SamplingClassifier, flow: u32, now: Time) -> ClassMark {
        let mut p = pkt(flow);
        c.classify(&mut p, now, None);
        p.class
    }
    fn paper(random: Option<u64>) -> SamplingClassifier {
        SamplingClassifier::new(
            SamplingParams { k: 7, sample_every: 3, t: T, threshold_samples: None },
            random.map(|s| Rng::stream(s, "test")),
        )
    }

    #[test]
    fn deterministic_sampling_takes_every_ith_packet_overall() {
        let mut c = paper(None);
        // Flows 1 and 2 interleaved: packets 3 and 6 (overall) are flow 1's and flow 2's.
        for f in [1, 2, 1, 2, 2, 2, 1, 1, 1] {
            mark(&mut c, f, 0);
        }
        c.tick(T);
        assert_eq!(
            (c.counter(key(1)), c.counter(key(2))),
            (Some(2), Some(1)),
            "packets 3, 6, 9 sampled: flows 1, 2, 1"
        );
    }

    #[test]
    fn short_flows_are_kept_short_and_misclassified_at_the_expected_rate() {
        // K = 7, I = 3: long when C_i >= 7/3, i.e. 3 samples. Flows sent back to back.
        // Deterministic: a 6-packet flow gets exactly 2 samples, never long; a 7-packet flow
        // gets 3 samples exactly when its first packet is a sampled one: 1 flow in 3.
        for (size, long) in [(6u32, 0u64), (7, 100)] {
            let mut c = paper(None);
            for f in 0..300 {
                for _ in 0..size {
                    assert_eq!(mark(&mut c, f, 0), ClassMark::Short, "nothing is long before the first update");
                }
            }
            c.tick(T);
            let r = c.report();
            assert_eq!(r.flows_short + r.flows_long, 300);
            assert_eq!(r.flows_long, long, "{size}-packet flows");
        }
        // Random: a 6-packet flow is long with probability P(Binomial(6, 1/3) >= 3) = 0.3196.
        let mut c = paper(Some(7));
        let n = 20_000u32;
        for f in 0..n {
            for _ in 0..6 {
                mark(&mut c, f, 0);
            }
        }
        c.tick(T);
        let r = c.report();
        let missed = n as u64 - (r.flows_short + r.flows_long); // flows with no sample at all
        let share = r.flows_long as f64 / n as f64;
        assert!((share - 0.3196).abs() < 0.015, "long share {share}");
        let unseen = missed as f64 / n as f64; // (2/3)^6 = 0.0878
        assert!((unseen - 0.0878).abs() < 0.01, "unsampled share {unseen}");
    }

    #[test]
    fn long_flow_becomes_long_after_the_expected_number_of_periods() {
        // 3 packets per interval with I = 3: one sample per interval, so C_i = n after n
        // updates and the flow is long from the 3rd update (C_i = 3 >= 7/3) on.
        let mut c = paper(None);
        for period in 0..6u64 {
            let now = period * T + 1;
            let marks: Vec<_> = (0..3).map(|_| mark(&mut c, 1, now)).collect();
            let want = if period >= 3 { ClassMark::Long } else { ClassMark::Short };
            assert_eq!(marks, vec![want; 3], "interval {period}");
            c.tick((period + 1) * T);
            assert_eq!(c.counter(key(1)), Some(period + 1));
        }
        assert_eq!(c.report(), ClassifierReport { flows_short: 0, flows_long: 1, threshold: 7.0 });
    }

    #[test]
    fn flows_absent_for_a_period_are_removed() {
        // Flow 1 sends 3 packets per interval: overall packets 3, 6, 9 are its samples.
        let mut c = paper(None);
        for period in 0..3u64 {
            for _ in 0..3 {
                mark(&mut c, 1, period * T);
            }
            c.tick((period + 1) * T);
        }
        assert_eq!(c.counter(key(1)), Some(3));
        // An interval without flow 1 (flow 2 sends packets 10-12, sampled at 12): flow 1
        // leaves the table and starts over as short; flow 2 enters it.
        for _ in 0..3 {
            mark(&mut c, 2, 3 * T);
        }
        c.tick(4 * T);
        assert_eq!((c.counter(key(1)), c.counter(key(2))), (None, Some(1)));
        assert_eq!(c.report(), ClassifierReport { flows_short: 1, flows_long: 0, threshold: 7.0 });
        assert_eq!(mark(&mut c, 1, 4 * T), ClassMark::Short);
        // A flow that sends but has no packet sampled in an interval is removed too (the
        // paper's rule, and the instability it notes for sampling).
        let mut c = paper(None);
        for period in 0..3u64 {
            for _ in 0..3 {
                mark(&mut c, 1, period * T);
            }
            c.tick((period + 1) * T);
        }
        assert_eq!(mark(&mut c, 1, 3 * T), ClassMark::Long); // overall packet 10: not sampled
        assert_eq!(mark(&mut c, 1, 3 * T), ClassMark::Long); // 11: not sampled
        c.tick(4 * T);
        assert_eq!((c.counter(key(1)), c.flows()), (None, 0));
        assert_eq!(mark(&mut c, 1, 4 * T), ClassMark::Short);
    }

    #[test]
    fn threshold_samples_overrides_k_over_i() {
        let mut c = SamplingClassifier::new(
            SamplingParams { k: 7, sample_every: 1, t: T, threshold_samples: Some(14.0) },
            None,
        );
        for _ in 0..13 {
            mark(&mut c, 1, 0);
        }
        c.tick(T);
        assert_eq!(mark(&mut c, 1, T), ClassMark::Short);
        c.tick(2 * T);
        assert_eq!(mark(&mut c, 1, 2 * T), ClassMark::Long);
        assert_eq!(c.report().threshold, 14.0);
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: SamplingClassifierSpec = toml::from_str("node = \"left\"").unwrap();
        assert_eq!(
            (s.k.pkts(), s.sample_every, s.t_s, s.random_sampling, s.threshold_samples),
            (Some(7), 3, 0.5, false, None)
        );
        assert!(s.check("classifiers[0]").is_ok());
        assert!(toml::from_str::<SamplingClassifierSpec>("node = \"left\"\ni = 3").is_err());
        let bad = SamplingClassifierSpec { sample_every: 0, ..s.clone() };
        assert!(matches!(bad.check("c"), Err(crate::Error::Input { field, .. }) if field == "c.sample_every"));
        let bad = SamplingClassifierSpec { t_s: f64::NAN, ..s.clone() };
        assert!(matches!(bad.check("c"), Err(crate::Error::Input { field, .. }) if field == "c.t_s"));
        let bad = SamplingClassifierSpec { threshold_samples: Some(0.0), ..s.clone() };
        assert!(matches!(bad.check("c"), Err(crate::Error::Input { field, .. }) if field == "c.threshold_samples"));
        let c = s.build(1);
        assert_eq!((c.kind(), c.period(), c.report().threshold), ("sampling", Some(T), 7.0));
        // Random sampling is a pure function of the seed.
        let r = SamplingClassifierSpec { random_sampling: true, ..s.clone() };
        let run = |seed| {
            let mut c = r.build(seed);
            for f in 0..200 {
                let mut p = pkt(f);
                c.classify(&mut p, 0, None);
            }
            c.tick(T);
            c.report()
        };
        assert_eq!(run(5), run(5));
    }
}
