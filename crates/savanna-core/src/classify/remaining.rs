//! Remaining-size tagging for pFabric (Alizadeh et al., SIGCOMM 2013, section 4.1): each
//! packet carries its flow's remaining size as its priority, smaller first. The paper
//! assumes the sender knows the flow's size; here an oracle at the edge does (as `oracle`
//! does for the short/long split), and writes the tag every rank-based queue downstream
//! reads (`Packet::tag`, five bits of a DSCP-like field, 0 = highest).
//!
//! Readings we chose:
//! - remaining size of a data packet = the flow's true size minus its sequence number, in
//!   packets (so a flow's packets carry decreasing sizes, 1 on its last; a retransmission
//!   keeps its sequence number, hence its tag), as the sender-carried "size - seq" would;
//! - SYN, SYN-ACK, pure ACKs and FINs carry no data: tag 0 (they are never starved nor
//!   dropped in favour of data);
//! - persistent flows (no size) and UDP datagrams: the largest tag, 31;
//! - the tag is a five-bit float of the remaining size r (packets) so it fits the header
//!   field: r exactly below 4, then two steps per octave (`remaining_tag`), 30 at
//!   32768..49151 packets and 31 above. Flows whose remaining sizes share a tag tie; pFabric
//!   then serves the earliest arrival. The class mark is left alone. It keeps no table.

use super::registry::EdgeClassifierSpec;
use super::{Classifier, ClassifierReport};
use crate::engine::Time;
use crate::error::Result;
use crate::net::packet::TAG_MAX;
use crate::net::{Packet, PktKind};

/// `type = "remaining"`: tag each packet with its flow's remaining size (oracle).
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemainingClassifierSpec {
    /// Node on whose ingress packets are tagged.
    pub node: String,
}

impl EdgeClassifierSpec for RemainingClassifierSpec {
    const MINIMAL: &'static str = "node = \"edge\"";
    const WRITES: crate::net::Mark = crate::net::Mark::Tag;
    fn node(&self) -> &str {
        &self.node
    }
    fn check(&self, _field: &str) -> Result<()> {
        Ok(())
    }
    fn build(&self, _seed: u64) -> Box<dyn Classifier> {
        Box::new(RemainingTagger)
    }
}

/// The five-bit tag of a remaining size of `r` packets: non-decreasing in `r`, exact
/// below 4, then 2 steps per octave (4, 6, 8, 12, 16, 24, ... -> 4, 5, 6, 7, 8, 9, ...).
pub fn remaining_tag(r: u64) -> u8 {
    if r < 4 {
        return r as u8;
    }
    let e = 63 - r.leading_zeros() as u64; // floor(log2 r), >= 2
    let half = (r >> (e - 1)) & 1;
    (4 + 2 * (e - 2) + half).min(TAG_MAX as u64) as u8
}

pub struct RemainingTagger;

impl Classifier for RemainingTagger {
    fn kind(&self) -> &'static str {
        "remaining"
    }
    fn classify(&mut self, p: &mut Packet, _now: Time, flow_size: Option<u64>) {
        let t = match (p.kind, flow_size) {
            (PktKind::Data, Some(n)) => remaining_tag(n.saturating_sub(p.seq as u64).max(1)),
            (PktKind::Data | PktKind::Udp, _) => TAG_MAX,
            _ => 0,
        };
        p.set_tag(t);
    }
    fn report(&self) -> ClassifierReport {
        ClassifierReport::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{FLAG_ECE, FLAG_RETX};
    use crate::net::ClassMark;

    fn pkt(kind: PktKind, seq: u32) -> Packet {
        Packet { kind, flags: FLAG_ECE | FLAG_RETX, ..Packet::test_data(0, seq) }
    }

    #[test]
    fn tag_is_monotone_exact_below_four_and_saturates() {
        let mut prev = 0;
        for r in 0..200_000u64 {
            let t = remaining_tag(r);
            assert!(t >= prev && t <= TAG_MAX, "r={r}: {t} after {prev}");
            prev = t;
        }
        assert_eq!((0..4).map(remaining_tag).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!([4, 5, 6, 8, 12, 16, 24].map(remaining_tag), [4, 4, 5, 6, 7, 8, 9]);
        assert_eq!(remaining_tag(32767), 29);
        assert_eq!(remaining_tag(32768), 30);
        assert_eq!(remaining_tag(49152), 31);
        assert_eq!(remaining_tag(u64::MAX), 31);
        // Two steps per octave: sizes a factor 2 apart never share a tag (above 4).
        for r in 4..100_000u64 {
            if remaining_tag(2 * r) < TAG_MAX {
                assert!(remaining_tag(2 * r) >= remaining_tag(r) + 2, "r={r}");
            }
        }
    }

    #[test]
    fn a_flows_packets_carry_its_remaining_size() {
        let mut c = RemainingTagger;
        let mut tags = Vec::new();
        for seq in 0..10 {
            let mut p = pkt(PktKind::Data, seq);
            c.classify(&mut p, 0, Some(10));
            assert_eq!(p.flags & 7, FLAG_ECE | FLAG_RETX, "TCP flags untouched");
            assert_eq!(p.class, ClassMark::None, "class mark untouched");
            tags.push(p.tag());
        }
        // Remaining 10, 9, ..., 1 packets.
        let expect: Vec<u8> = (1..=10u64).rev().map(remaining_tag).collect();
        assert_eq!(tags, expect);
        let mut p = pkt(PktKind::Data, 3);
        c.classify(&mut p, 0, None);
        assert_eq!(p.tag(), TAG_MAX, "persistent flows are the lowest priority");
        for k in [PktKind::Syn, PktKind::SynAck, PktKind::Ack, PktKind::Fin] {
            let mut p = pkt(k, 0);
            p.set_tag(9);
            c.classify(&mut p, 0, Some(1000));
            assert_eq!(p.tag(), 0, "{k:?} carries no data");
        }
    }
}
