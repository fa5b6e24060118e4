//! PRQ, the priority-queue differentiator of Tokuda, Hasegawa & Murata 2002 ("Analysis and
//! Improvement of the Fairness between Long-lived and Short-lived TCP Connections", section
//! 3.2 "PRQ-based algorithm"): two queues, a short queue for packets of short-lived
//! connections and a long queue for the rest; "packets in the long queue are served only
//! when the short queue is empty" (strict priority), FIFO within each queue, tail drop.
//!
//! Our readings:
//! - the class is the mark an edge or router classifier wrote (`Packet.class`): `Short`
//!   goes to the short queue; `Long` and unmarked (`None`) packets go to the long queue
//!   (an unclassified packet gets no preference, as in `rio.rs`);
//! - buffer: the paper gives one "router buffer size" of 300 packets (section 4) and does
//!   not say how PRQ divides it. By default both queues share `limit_pkts` (an arrival is
//!   tail-dropped when the two together hold `limit_pkts`); `limit_short_pkts` and
//!   `limit_long_pkts` optionally cap each queue as well (set both, summing to
//!   `limit_pkts`, for two separate buffers). With a shared buffer, a long backlog that
//!   fills it makes short arrivals tail-drop even though they would be served first;
//! - a packet queued in the short queue is reported as favoured (`QCtx::favor`, counted in
//!   the flow's `favored_pkts`).

use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::net::ClassMark;
use crate::net::PktId;
use crate::{Error, Result};

fn d_limit() -> u32 {
    300
}

/// PRQ (Tokuda, Hasegawa & Murata 2002): strict priority for packets marked short.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrqSpec {
    /// Buffer shared by the two queues, packets. Default 300 (Tokuda section 4).
    #[serde(default = "d_limit")]
    pub limit_pkts: u32,
    /// Optional cap on the short queue, packets (default: only the shared limit).
    #[serde(default)]
    pub limit_short_pkts: Option<u32>,
    /// Optional cap on the long queue, packets (default: only the shared limit).
    #[serde(default)]
    pub limit_long_pkts: Option<u32>,
}

impl DisciplineSpec for PrqSpec {
    const MINIMAL: &'static str = "";
    fn reads(&self) -> Option<crate::net::Mark> {
        Some(crate::net::Mark::Class)
    }
    fn check(&self, field: &str) -> Result<()> {
        if self.limit_pkts == 0 {
            return Err(Error::input(format!("{field}.limit_pkts"), "must be at least 1 packet"));
        }
        for (key, v) in [("limit_short_pkts", self.limit_short_pkts), ("limit_long_pkts", self.limit_long_pkts)] {
            if let Some(v) = v {
                if v == 0 || v > self.limit_pkts {
                    return Err(Error::input(
                        format!("{field}.{key}"),
                        format!("must be between 1 and limit_pkts ({}) packets, or omitted; got {v}", self.limit_pkts),
                    ));
                }
            }
        }
        Ok(())
    }

    fn build(&self, _pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(Prq::new(
            self.limit_pkts as usize,
            self.limit_short_pkts.map(|v| v as usize),
            self.limit_long_pkts.map(|v| v as usize),
        ))
    }
}

pub struct Prq {
    short: Fifo,
    long: Fifo,
    limit: usize,
    limit_short: usize,
    limit_long: usize,
}

impl Prq {
    pub fn new(limit_pkts: usize, limit_short: Option<usize>, limit_long: Option<usize>) -> Self {
        let cap = limit_pkts.min(1 << 16);
        Prq {
            short: Fifo::with_capacity(cap),
            long: Fifo::with_capacity(cap),
            limit: limit_pkts,
            limit_short: limit_short.unwrap_or(usize::MAX),
            limit_long: limit_long.unwrap_or(usize::MAX),
        }
    }
    /// Packets in the short queue.
    pub fn short_len(&self) -> usize {
        self.short.len()
    }
}

impl Qdisc for Prq {
    fn kind(&self) -> &'static str {
        "prq"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let is_short = cx.pkts.get(id).class == ClassMark::Short;
        let (qlen, cap) =
            if is_short { (self.short.len(), self.limit_short) } else { (self.long.len(), self.limit_long) };
        if self.short.len() + self.long.len() >= self.limit || qlen >= cap {
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        if is_short {
            self.short.push(id, cx.pkts);
            cx.favor();
        } else {
            self.long.push(id, cx.pkts);
        }
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        self.short.pop(cx.pkts).or_else(|| self.long.pop(cx.pkts))
    }
    fn empty_dequeue_is_noop(&self) -> bool {
        // Two FIFOs served in strict priority: an empty call finds both empty and changes neither.
        true
    }
    fn len_pkts(&self) -> usize {
        self.short.len() + self.long.len()
    }
    fn len_bytes(&self) -> u64 {
        self.short.bytes() + self.long.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testutil::Bench;
    use crate::engine::Rng;
    use crate::net::Ecn;

    #[test]
    fn strict_priority_fifo_within_queue() {
        let mut b = Bench::new(1);
        let mut q = Prq::new(100, None, None);
        let classes = [ClassMark::Long, ClassMark::None, ClassMark::Short, ClassMark::Long, ClassMark::Short];
        let ids: Vec<_> = classes.iter().enumerate().map(|(i, &c)| b.pkt(i as u32, 0, c, Ecn::NotEct)).collect();
        for (&p, &c) in ids.iter().zip(&classes) {
            assert!(b.offer(&mut q, p).0);
            assert_eq!(b.out.favored, c == ClassMark::Short, "only short-queue packets are favoured");
        }
        assert_eq!(q.short_len(), 2);
        let out: Vec<_> = std::iter::from_fn(|| b.take(&mut q)).collect();
        assert_eq!(out, vec![ids[2], ids[4], ids[0], ids[1], ids[3]]);
    }

    #[test]
    fn long_flood_never_delays_a_short_packet() {
        // Random arrivals, 90% long; a short packet may wait only behind short packets that
        // arrived before it: no long packet is ever served while a short one is queued.
        let mut b = Bench::new(2);
        let mut rng = Rng::stream(5, "prq-test");
        let mut q = Prq::new(1000, None, None);
        let mut shorts_waiting = 0usize;
        let mut next_short_out = 0u32;
        let mut short_seq = 0u32;
        let mut served_long = 0;
        for _ in 0..50_000 {
            if rng.uniform() < 0.7 {
                let short = rng.uniform() < 0.1;
                let class = if short { ClassMark::Short } else { ClassMark::Long };
                let seq = if short { short_seq } else { 0 };
                let p = b.pkt(short as u32, seq, class, Ecn::NotEct);
                if b.offer(&mut q, p).0 && short {
                    short_seq += 1;
                    shorts_waiting += 1;
                }
            } else if let Some(p) = b.take(&mut q) {
                let pk = *b.pkts.get(p);
                if pk.class == ClassMark::Short {
                    assert_eq!(pk.seq, next_short_out, "short packets leave in order");
                    next_short_out += 1;
                    shorts_waiting -= 1;
                } else {
                    assert_eq!(shorts_waiting, 0, "a long packet was served while a short one waited");
                    served_long += 1;
                }
                b.pkts.free(p);
            }
        }
        assert!(served_long > 1000 && next_short_out > 1000, "{served_long} {next_short_out}");
        // The long backlog had built up (the arrival rate exceeds the service rate).
        assert!(q.len_pkts() > 500);
    }

    #[test]
    fn shared_and_per_queue_limits() {
        let mut b = Bench::new(3);
        // Shared buffer of 4: a long backlog of 4 makes a short arrival tail-drop.
        let mut q = Prq::new(4, None, None);
        for i in 0..4 {
            let p = b.pkt(1, i, ClassMark::Long, Ecn::NotEct);
            assert!(b.offer(&mut q, p).0);
        }
        let s = b.pkt(2, 0, ClassMark::Short, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, s), (false, vec![(s, DropReason::Overflow)]));
        // Separate buffers (2 + 2): longs are capped at 2, shorts still find room.
        let mut q = Prq::new(4, Some(2), Some(2));
        let mut res = vec![];
        for i in 0..3 {
            let p = b.pkt(1, i, ClassMark::Long, Ecn::NotEct);
            res.push(b.offer(&mut q, p).0);
        }
        assert_eq!(res, vec![true, true, false]);
        for i in 0..3 {
            let p = b.pkt(2, i, ClassMark::Short, Ecn::NotEct);
            assert_eq!(b.offer(&mut q, p).0, i < 2);
        }
        assert_eq!((q.len_pkts(), q.short_len()), (4, 2));
        // Caps and the shared limit together: 3 + 3 caps in a shared 4.
        let mut q = Prq::new(4, Some(3), Some(3));
        for i in 0..3 {
            let p = b.pkt(1, i, ClassMark::Long, Ecn::NotEct);
            assert!(b.offer(&mut q, p).0);
        }
        let s1 = b.pkt(2, 0, ClassMark::Short, Ecn::NotEct);
        let s2 = b.pkt(2, 1, ClassMark::Short, Ecn::NotEct);
        assert!(b.offer(&mut q, s1).0);
        assert!(!b.offer(&mut q, s2).0);
        assert_eq!(q.len_bytes(), 4 * 1500);
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: PrqSpec = toml::from_str("").unwrap();
        assert_eq!((s.limit_pkts, s.limit_short_pkts, s.limit_long_pkts), (300, None, None));
        s.check("q").unwrap();
        assert_eq!(s.build(1500).kind(), "prq");
        let bad: PrqSpec = toml::from_str("limit_pkts = 10\nlimit_short_pkts = 11").unwrap();
        assert!(bad.check("q").unwrap_err().to_string().starts_with("q.limit_short_pkts"));
        let bad: PrqSpec = toml::from_str("limit_long_pkts = 0").unwrap();
        assert!(bad.check("q").unwrap_err().to_string().starts_with("q.limit_long_pkts"));
    }

    #[test]
    fn an_empty_dequeue_does_nothing() {
        crate::aqm::testutil::assert_empty_dequeue_is_noop(|| Box::new(Prq::new(8, None, None)));
    }
}
