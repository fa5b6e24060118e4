//! RuN2C, "Running Number 2 Class" differentiation (Avrachenkov, Ayesta, Brown & Nyberg,
//! INFOCOM 2004, "Differentiation between short and long TCP flows: predictability of the
//! response time"), as Anelli, Diana & Lochin 2013 (FavorQueue, sections 2 and 5.1)
//! configure it as a baseline: packets are split into two classes by their TCP sequence
//! number, the first `threshold_pkts` packets of every connection being high priority;
//! the high class is served with strict priority (FIFO within each class), and the two
//! classes share one buffer of `limit_pkts` packets in which a high-priority arrival
//! pushes out low-priority packets.
//!
//! Our readings:
//! - the sequence number is `Packet.seq`, counted in packets from 0 (RuN2C numbers bytes
//!   from 0 with a modified TCP; with fixed-size packets "seq < threshold" is the same
//!   rule): a Data packet with seq < threshold is high, seq >= threshold low (a
//!   retransmission keeps its sequence number, hence its class);
//! - SYN, SYN-ACK and pure ACK packets are high priority: they carry no data, so their
//!   sequence number stays at the start of the connection's space (< threshold);
//! - a FIN carries the sequence number after the last data packet (`Packet.seq` = the
//!   flow's size in packets), so it is classified by it like a data packet;
//! - UDP datagrams carry no TCP sequence number and are low priority;
//! - threshold: FavorQueue chose "twenty packets" (section 5.1; the same section also says
//!   RuN2C favoured "the first fifteen" segments in their runs); we default to 20;
//! - buffer: when a high-priority packet arrives to a full buffer it pushes out the last
//!   queued low-priority packet (`PushOut`), or is dropped (`Overflow`) when only
//!   high-priority packets are queued; a low-priority arrival to a full buffer is dropped
//!   (`Overflow`);
//! - a high-priority packet that is queued is reported as favoured (`QCtx::favor`), so it
//!   counts in the flow's `favored_pkts` as FavorQueue's favoured packets do.

use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::net::{Packet, PktId, PktKind};
use crate::{Error, Result};

fn d_threshold() -> u32 {
    20
}

/// RuN2C (Avrachenkov et al. 2004) as FavorQueue 2013 configures it.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run2cSpec {
    /// Buffer size shared by both classes, packets. FavorQueue: 8 (10 Mb/s), 83 (100 Mb/s).
    pub limit_pkts: u32,
    /// Data packets with sequence number (packets, from 0) below this are high priority.
    /// Default 20, FavorQueue section 5.1.
    #[serde(default = "d_threshold")]
    pub threshold_pkts: u32,
}

impl DisciplineSpec for Run2cSpec {
    const MINIMAL: &'static str = "limit_pkts = 100";
    fn check(&self, field: &str) -> Result<()> {
        if self.limit_pkts == 0 {
            return Err(Error::input(format!("{field}.limit_pkts"), "must be at least 1 packet"));
        }
        Ok(())
    }

    fn build(&self, _pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(Run2c::new(self.limit_pkts as usize, self.threshold_pkts))
    }
}

/// The RuN2C class of a packet: true for high priority.
#[inline]
pub fn is_high(p: &Packet, threshold: u32) -> bool {
    match p.kind {
        PktKind::Syn | PktKind::SynAck | PktKind::Ack => true,
        PktKind::Data | PktKind::Fin => p.seq < threshold,
        PktKind::Udp => false,
    }
}

pub struct Run2c {
    high: Fifo,
    low: Fifo,
    limit_pkts: usize,
    threshold: u32,
}

impl Run2c {
    pub fn new(limit_pkts: usize, threshold: u32) -> Self {
        let cap = limit_pkts.min(1 << 16);
        Run2c { high: Fifo::with_capacity(cap), low: Fifo::with_capacity(cap), limit_pkts, threshold }
    }
}

impl Qdisc for Run2c {
    fn kind(&self) -> &'static str {
        "run2c"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let high = is_high(cx.pkts.get(id), self.threshold);
        let full = self.high.len() + self.low.len() >= self.limit_pkts;
        if high {
            if full {
                if self.low.is_empty() {
                    cx.drop(id, DropReason::Overflow);
                    return false;
                }
                let victim = self.low.remove_at(self.low.len() - 1, cx.pkts).expect("non-empty");
                cx.drop(victim, DropReason::PushOut);
            }
            self.high.push(id, cx.pkts);
            cx.favor();
        } else {
            if full {
                cx.drop(id, DropReason::Overflow);
                return false;
            }
            self.low.push(id, cx.pkts);
        }
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        self.high.pop(cx.pkts).or_else(|| self.low.pop(cx.pkts))
    }
    fn empty_dequeue_is_noop(&self) -> bool {
        // Two FIFOs served in strict priority: an empty call finds both empty and changes neither.
        true
    }
    fn len_pkts(&self) -> usize {
        self.high.len() + self.low.len()
    }
    fn len_bytes(&self) -> u64 {
        self.high.bytes() + self.low.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testutil::Bench;
    use crate::net::ClassMark;
    use crate::net::Ecn;

    fn data(b: &mut Bench, flow: u32, seq: u32) -> PktId {
        b.pkt(flow, seq, ClassMark::None, Ecn::NotEct)
    }

    fn ctl(b: &mut Bench, flow: u32, kind: PktKind) -> PktId {
        let p = b.pkt(flow, 0, ClassMark::None, Ecn::NotEct);
        let pk = b.pkts.get_mut(p);
        pk.kind = kind;
        pk.size = 40;
        p
    }

    #[test]
    fn threshold_boundary_and_control_packets() {
        let mut b = Bench::new(1);
        let th = 20;
        for (seq, want) in [(0, true), (19, true), (20, false), (21, false), (5000, false)] {
            let p = data(&mut b, 1, seq);
            assert_eq!(is_high(b.pkts.get(p), th), want, "seq {seq}");
        }
        for kind in [PktKind::Syn, PktKind::SynAck, PktKind::Ack] {
            let p = ctl(&mut b, 1, kind);
            b.pkts.get_mut(p).seq = 1000;
            assert!(is_high(b.pkts.get(p), th), "{kind:?}");
        }
        let u = ctl(&mut b, 1, PktKind::Udp);
        assert!(!is_high(b.pkts.get(u), th));
        for (seq, want) in [(19, true), (20, false)] {
            let f = ctl(&mut b, 1, PktKind::Fin);
            b.pkts.get_mut(f).seq = seq;
            assert_eq!(is_high(b.pkts.get(f), th), want, "FIN at {seq}");
        }
        // Through the queue: seq 20 waits behind a later seq 19 of another flow.
        let mut q = Run2c::new(10, th);
        let lo = data(&mut b, 1, 20);
        let hi = data(&mut b, 2, 19);
        assert!(b.offer(&mut q, lo).0);
        assert!(!b.out.favored, "a low-priority packet is not favoured");
        assert!(b.offer(&mut q, hi).0);
        assert!(b.out.favored, "a queued high-priority packet is favoured");
        assert_eq!(b.take(&mut q), Some(hi));
        assert_eq!(b.take(&mut q), Some(lo));
    }

    #[test]
    fn strict_priority_fifo_within_class() {
        let mut b = Bench::new(2);
        let mut q = Run2c::new(100, 20);
        let l1 = data(&mut b, 1, 30);
        let h1 = data(&mut b, 2, 0);
        let l2 = data(&mut b, 3, 25);
        let h2 = ctl(&mut b, 4, PktKind::Syn);
        let h3 = data(&mut b, 1, 3); // a retransmission of an early packet of flow 1
        let l3 = data(&mut b, 2, 40);
        for &p in &[l1, h1, l2, h2, h3, l3] {
            assert!(b.offer(&mut q, p).0);
        }
        assert_eq!(q.len_bytes(), 5 * 1500 + 40);
        let out: Vec<_> = std::iter::from_fn(|| b.take(&mut q)).collect();
        assert_eq!(out, vec![h1, h2, h3, l1, l2, l3]);
        // A high packet arriving while lows wait is served next.
        let l4 = data(&mut b, 1, 50);
        let l5 = data(&mut b, 1, 51);
        assert!(b.offer(&mut q, l4).0 && b.offer(&mut q, l5).0);
        assert_eq!(b.take(&mut q), Some(l4));
        let h4 = data(&mut b, 5, 1);
        assert!(b.offer(&mut q, h4).0);
        assert_eq!(b.take(&mut q), Some(h4));
        assert_eq!(b.take(&mut q), Some(l5));
        assert_eq!(b.take(&mut q), None);
    }

    #[test]
    fn high_arrival_pushes_out_last_low() {
        let mut b = Bench::new(3);
        let mut q = Run2c::new(4, 20);
        let h1 = data(&mut b, 1, 0);
        let l: Vec<_> = (0..3).map(|i| data(&mut b, 2, 100 + i)).collect();
        for &p in [h1].iter().chain(&l) {
            assert!(b.offer(&mut q, p).0);
        }
        // Full: a low arrival is dropped.
        let l9 = data(&mut b, 3, 100);
        assert_eq!(b.offer(&mut q, l9), (false, vec![(l9, DropReason::Overflow)]));
        // A high arrival pushes out the last low packet queued, twice.
        let h2 = data(&mut b, 4, 0);
        assert_eq!(b.offer(&mut q, h2), (true, vec![(l[2], DropReason::PushOut)]));
        let h3 = ctl(&mut b, 5, PktKind::Ack);
        assert_eq!(b.offer(&mut q, h3), (true, vec![(l[1], DropReason::PushOut)]));
        let h4 = data(&mut b, 6, 0);
        assert_eq!(b.offer(&mut q, h4), (true, vec![(l[0], DropReason::PushOut)]));
        // Only high packets left: a high arrival is dropped.
        let h5 = data(&mut b, 7, 0);
        assert_eq!(b.offer(&mut q, h5), (false, vec![(h5, DropReason::Overflow)]));
        assert_eq!(q.len_pkts(), 4);
        let out: Vec<_> = std::iter::from_fn(|| b.take(&mut q)).collect();
        assert_eq!(out, vec![h1, h2, h3, h4]);
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: Run2cSpec = toml::from_str("limit_pkts = 8").unwrap();
        assert_eq!(s.threshold_pkts, 20);
        s.check("q").unwrap();
        assert_eq!(s.build(1500).kind(), "run2c");
        let bad: Run2cSpec = toml::from_str("limit_pkts = 0").unwrap();
        assert!(bad.check("q").unwrap_err().to_string().starts_with("q.limit_pkts"));
        assert!(toml::from_str::<Run2cSpec>("limit_pkts = 8\nthreshold = 3").is_err());
    }

    #[test]
    fn an_empty_dequeue_does_nothing() {
        crate::aqm::testutil::assert_empty_dequeue_is_noop(|| Box::new(Run2c::new(8, 3)));
    }
}
