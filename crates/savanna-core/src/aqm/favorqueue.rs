//! FavorQueue, Algorithm 1 of Anelli, Diana & Lochin 2013 ("FavorQueue: a parameterless
//! active queue management to improve TCP traffic performance").
//!
//! A packet is *favoured* when no packet of its flow (`Packet.flow`) is in the queue.
//! Favoured packets are inserted behind the last favoured packet and ahead of every
//! standard packet (temporal priority); standard packets are appended at the tail. When the
//! buffer (`limit_pkts`) is full, an arriving favoured packet pushes out the last standard
//! packet (drop precedence, reported as `PushOut`) and is inserted, or is dropped
//! (`Overflow`) when only favoured packets are queued; an arriving standard packet is
//! tail-dropped (`Overflow`).
//!
//! Favoured packets therefore always form a prefix of the queue, so we keep only their
//! number; the last standard packet is the tail. No flow is ever reordered: a favoured
//! packet is by definition the only packet of its flow in the queue.
//!
//! Per-flow state (the number of queued packets of each flow) exists only while the flow
//! has packets queued (paper section 3): a hash map whose entry is removed when the count
//! falls to zero, with capacity for `limit_pkts + 1` flows reserved up front, so it never
//! allocates after construction.
//!
//! Our readings: "full" means `limit_pkts` packets queued; the packet's `qmark` byte is set
//! to 1 when it is classified favoured on arrival (even if it is then dropped because the
//! queue holds only favoured packets) and to 0 when it is standard.

use super::registry::DisciplineSpec;
use super::{flow_map, DropReason, Fifo, FlowMap, QCtx, Qdisc};
use crate::error::Result;
use crate::net::PktId;

/// `type = "favorqueue"`: FavorQueue has no parameter but its buffer.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FavorQueueSpec {
    /// Buffer size, packets.
    pub limit_pkts: u32,
}

impl DisciplineSpec for FavorQueueSpec {
    const MINIMAL: &'static str = "limit_pkts = 100";
    fn check(&self, field: &str) -> Result<()> {
        if self.limit_pkts == 0 {
            return crate::spec::bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
        }
        Ok(())
    }
    fn build(&self, _pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(FavorQueue::new(self.limit_pkts as usize))
    }
}

pub struct FavorQueue {
    q: Fifo,
    limit_pkts: usize,
    /// Favoured packets queued (they occupy positions 0..n_fav).
    n_fav: usize,
    /// Queued packets per flow; only flows with packets queued have an entry.
    per_flow: FlowMap<u32>,
}

impl FavorQueue {
    pub fn new(limit_pkts: usize) -> Self {
        let cap = limit_pkts.min(1 << 16) + 1;
        FavorQueue { q: Fifo::with_capacity(cap), limit_pkts, n_fav: 0, per_flow: flow_map(cap) }
    }
    /// Number of flows with packets queued (the per-flow state held).
    pub fn flows_queued(&self) -> usize {
        self.per_flow.len()
    }
    fn left(&mut self, flow: u32) {
        match self.per_flow.get_mut(&flow) {
            Some(c) if *c > 1 => *c -= 1,
            Some(_) => {
                self.per_flow.remove(&flow);
            }
            None => debug_assert!(false, "flow {flow} not tracked"),
        }
    }
}

impl Qdisc for FavorQueue {
    fn kind(&self) -> &'static str {
        "favorqueue"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let flow = cx.pkts.get(id).flow;
        let favoured = !self.per_flow.contains_key(&flow);
        cx.pkts.get_mut(id).qmark = favoured as u8;
        let full = self.q.len() >= self.limit_pkts;
        if favoured {
            if full {
                if self.n_fav >= self.q.len() {
                    cx.drop(id, DropReason::Overflow);
                    return false;
                }
                // Push out the last standard packet (the tail).
                let victim = self.q.remove_at(self.q.len() - 1, cx.pkts).expect("non-empty");
                let vflow = cx.pkts.get(victim).flow;
                self.left(vflow);
                cx.drop(victim, DropReason::PushOut);
            }
            self.q.insert_at(self.n_fav, id, cx.pkts);
            self.n_fav += 1;
            self.per_flow.insert(flow, 1);
            cx.favor();
        } else {
            if full {
                cx.drop(id, DropReason::Overflow);
                return false;
            }
            self.q.push(id, cx.pkts);
            *self.per_flow.get_mut(&flow).expect("standard packet's flow is queued") += 1;
        }
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        let p = self.q.pop(cx.pkts)?;
        if self.n_fav > 0 {
            self.n_fav -= 1;
        }
        let flow = cx.pkts.get(p).flow;
        self.left(flow);
        Some(p)
    }
    fn empty_dequeue_is_noop(&self) -> bool {
        // Nothing is held but the queue and its per-flow counts, changed only with a packet.
        true
    }
    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testutil::Bench;
    use crate::engine::Rng;
    use crate::net::ClassMark;
    use crate::net::Ecn;

    fn pk(b: &mut Bench, flow: u32, seq: u32) -> PktId {
        b.pkt(flow, seq, ClassMark::None, Ecn::NotEct)
    }

    fn contents(q: &FavorQueue) -> Vec<PktId> {
        q.q.iter().copied().collect()
    }

    #[test]
    fn favoured_ordering() {
        let mut b = Bench::new(1);
        let mut q = FavorQueue::new(100);
        let a0 = pk(&mut b, 1, 0); // favoured
        let a1 = pk(&mut b, 1, 1); // standard
        let a2 = pk(&mut b, 1, 2); // standard
        let c0 = pk(&mut b, 2, 0); // favoured: ahead of a1, a2, behind a0
        let c1 = pk(&mut b, 2, 1); // standard
        let d0 = pk(&mut b, 3, 0); // favoured: behind c0
        for &p in &[a0, a1, a2, c0, c1, d0] {
            assert!(b.offer(&mut q, p).0);
        }
        assert_eq!(contents(&q), vec![a0, c0, d0, a1, a2, c1]);
        assert_eq!(q.n_fav, 3);
        for (p, m) in [(a0, 1), (a1, 0), (a2, 0), (c0, 1), (c1, 0), (d0, 1)] {
            assert_eq!(b.pkts.get(p).qmark, m);
        }
        let out: Vec<_> = std::iter::from_fn(|| b.take(&mut q)).collect();
        assert_eq!(out, vec![a0, c0, d0, a1, a2, c1]);
        assert_eq!(q.n_fav, 0);
        assert_eq!(q.flows_queued(), 0);
    }

    #[test]
    fn full_queue_pushes_out_last_standard() {
        let mut b = Bench::new(2);
        let mut q = FavorQueue::new(4);
        let a: Vec<_> = (0..4).map(|s| pk(&mut b, 1, s)).collect();
        for &p in &a {
            assert!(b.offer(&mut q, p).0);
        }
        // Full: a new flow's packet pushes out the tail (a[3]) and goes behind a[0].
        let c = pk(&mut b, 2, 0);
        let (ok, drops) = b.offer(&mut q, c);
        assert!(ok);
        assert_eq!(drops, vec![(a[3], DropReason::PushOut)]);
        assert_eq!(contents(&q), vec![a[0], c, a[1], a[2]]);
        assert_eq!(q.per_flow[&1], 3);
        // Standard arrival to the full queue: tail drop.
        let a4 = pk(&mut b, 1, 4);
        let (ok, drops) = b.offer(&mut q, a4);
        assert!(!ok);
        assert_eq!(drops, vec![(a4, DropReason::Overflow)]);
        assert_eq!(contents(&q), vec![a[0], c, a[1], a[2]]);
    }

    #[test]
    fn all_favoured_full_drops_arrival() {
        let mut b = Bench::new(3);
        let mut q = FavorQueue::new(3);
        let f: Vec<_> = (0..3).map(|fl| pk(&mut b, fl, 0)).collect();
        for &p in &f {
            assert!(b.offer(&mut q, p).0);
        }
        assert_eq!(q.n_fav, 3);
        let x = pk(&mut b, 9, 0);
        let (ok, drops) = b.offer(&mut q, x);
        assert!(!ok);
        assert_eq!(drops, vec![(x, DropReason::Overflow)]);
        assert_eq!(contents(&q), f);
        assert_eq!(q.flows_queued(), 3);
    }

    #[test]
    fn flow_state_cleared_when_flow_leaves() {
        let mut b = Bench::new(4);
        let mut q = FavorQueue::new(10);
        let a0 = pk(&mut b, 5, 0);
        let a1 = pk(&mut b, 5, 1);
        assert!(b.offer(&mut q, a0).0);
        assert!(b.offer(&mut q, a1).0);
        assert_eq!(b.pkts.get(a1).qmark, 0);
        assert_eq!(b.take(&mut q), Some(a0));
        // a1 still queued: the next packet of flow 5 is standard.
        let a2 = pk(&mut b, 5, 2);
        assert!(b.offer(&mut q, a2).0);
        assert_eq!(b.pkts.get(a2).qmark, 0);
        assert_eq!(b.take(&mut q), Some(a1));
        assert_eq!(b.take(&mut q), Some(a2));
        assert_eq!(q.flows_queued(), 0);
        // All of flow 5 has left: its next packet is favoured again, ahead of standard ones.
        let c0 = pk(&mut b, 6, 0);
        let c1 = pk(&mut b, 6, 1);
        let a3 = pk(&mut b, 5, 3);
        for &p in &[c0, c1, a3] {
            assert!(b.offer(&mut q, p).0);
        }
        assert_eq!(b.pkts.get(a3).qmark, 1);
        assert_eq!(contents(&q), vec![c0, a3, c1]);
    }

    #[test]
    fn no_flow_is_reordered_under_random_workload() {
        let mut b = Bench::new(5);
        let mut rng = Rng::stream(11, "favorqueue-test");
        let mut q = FavorQueue::new(12);
        let mut next_seq = [0u32; 16];
        let mut last_out: Vec<Option<u32>> = vec![None; 16];
        let (mut pushed_out, mut fav, mut served) = (0, 0, 0);
        for _ in 0..5000 {
            if rng.uniform() < 0.55 {
                let flow = rng.below(16) as u32;
                let p = pk(&mut b, flow, next_seq[flow as usize]);
                next_seq[flow as usize] += 1;
                let (ok, drops) = b.offer(&mut q, p);
                if b.pkts.get(p).qmark == 1 {
                    fav += 1;
                }
                for &(d, why) in &drops {
                    if why == DropReason::PushOut {
                        pushed_out += 1;
                    }
                    b.pkts.free(d);
                }
                assert_eq!(ok, drops.iter().all(|&(d, _)| d != p));
            } else if let Some(p) = b.take(&mut q) {
                served += 1;
                let pk = b.pkts.get(p);
                let (f, s) = (pk.flow as usize, pk.seq);
                if let Some(prev) = last_out[f] {
                    assert!(s > prev, "flow {f} reordered: {s} after {prev}");
                }
                last_out[f] = Some(s);
                b.pkts.free(p);
            }
            // Invariants: favoured prefix, per-flow counts match the queue contents.
            let mut counts: crate::aqm::FlowMap<u32> = crate::aqm::flow_map(0);
            for &p in q.q.iter() {
                *counts.entry(b.pkts.get(p).flow).or_default() += 1;
            }
            assert_eq!(counts, q.per_flow);
            assert!(q.n_fav <= q.len_pkts() && q.len_pkts() <= 12);
        }
        assert!(pushed_out > 0 && fav > 0 && served > 1000, "{pushed_out} {fav} {served}");
    }

    #[test]
    fn an_empty_dequeue_does_nothing() {
        crate::aqm::testutil::assert_empty_dequeue_is_noop(|| Box::new(FavorQueue::new(8)));
    }
}
