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
//!   distribution (`thresholds_from`). The paper derives them by solving a sum-of-FCT
//!   optimisation for the load and distribution (section 3.2); we do NOT solve it: the
//!   derived thresholds split the flows into K equal-count parts, alpha_i = the (i/K)
//!   quantile of the flow size (estimated from 200 000 draws of a fixed stream, so the
//!   scenario stays deterministic); repeated quantiles (small integer sizes) are merged,
//!   so fewer than K levels may be used. Default (neither key): the geometric ladder 4, 16,
//!   64, ..., 16384 packets for 8 levels (ours).
//! - the class mark is left alone; the tag is capped at 31 (five bits).

use super::registry::EdgeClassifierSpec;
use super::{Classifier, ClassifierReport};
use crate::engine::{Rng, Time};
use crate::error::Result;
use crate::model::tokuda::SizeFn;
use crate::net::{Packet, PktKind};
use crate::traffic::SizeSpec;

/// `thresholds_from = { size = <size table>, queues = 8 }`: equal-count split.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThresholdsFrom {
    /// The flow-size distribution, as a traffic block's `size` table.
    pub size: SizeSpec,
    /// Number of priority levels K (2..=32). Default 8, the queues of a commodity switch port.
    #[serde(default = "d_queues")]
    pub queues: u32,
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
        let t = equal_split(from.queues, 200_000, || dist.sample(&mut rng));
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
