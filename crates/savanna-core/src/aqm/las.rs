//! LAS, Least Attained Service scheduling with its buffer management (Rai, Biersack &
//! Urvoy-Keller 2005, "Size-based scheduling to improve the performance of short TCP flows";
//! a baseline of FavorQueue 2013): the next packet served is the first queued packet of the
//! flow that has so far received the least service from this queue, and on overflow the
//! packet with the lowest priority (the last queued packet of the flow with the most
//! attained service) is dropped.
//!
//! Our readings:
//! - a flow is `Packet.flow` (one TCP connection, all its packet kinds); its attained
//!   service is the bytes (wire size) of its packets this queue has transmitted (counted
//!   when they are dequeued); dropped packets count nothing;
//! - packets of one flow leave in arrival order; ties in attained service are broken by
//!   arrival order (the head packet that arrived first goes first), so a single LAS priority
//!   queue ordered by (attained service, arrival) is what we implement;
//! - overflow (`limit_pkts` packets queued): as if the arrival were inserted at its place
//!   and the queue's last packet dropped. The last packet belongs to the flow with the most
//!   attained service (latest arrival among ties); if the arrival's own flow has at least
//!   the largest attained service of any queued flow, the arrival is the last packet and is
//!   dropped (`Overflow`); otherwise the victim flow's last queued packet is pushed out
//!   (`PushOut`) and the arrival queued;
//! - forgetting: attained service is kept while the flow has packets queued and for
//!   `forget_after_s` after its last packet left (a later packet of the flow starts again
//!   from zero); by default it is never forgotten, which is LAS over each connection's whole
//!   life, since Savanna's flow ids are never reused. With a timeout, expired entries are
//!   swept once per timeout interval, so the table stays bounded.
//!
//! Data structures: flows with packets queued occupy reusable slots (each a FIFO of packet
//! ids with arrival stamps; capacity reserved for `limit_pkts + 1` flows); dequeue and
//! overflow scan the queued flows, O(number of queued flows), which is small for the
//! papers' buffers (8 and 83 packets). Nothing is allocated per packet after warm-up except
//! the idle-flow table growing when service is never forgotten.

use std::collections::VecDeque;

use super::registry::DisciplineSpec;
use super::{flow_map, DropReason, FlowMap, QCtx, Qdisc};
use crate::engine::Time;
use crate::net::PktId;
use crate::{Error, Result};

/// LAS (Rai, Biersack & Urvoy-Keller 2005), the FavorQueue 2013 baseline.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LasSpec {
    /// Buffer size, packets (shared by all flows). FavorQueue: 8 (10 Mb/s), 83 (100 Mb/s).
    pub limit_pkts: u32,
    /// Seconds a flow with no packet queued keeps its attained service before it is
    /// forgotten. Omitted (default): never forgotten, i.e. per-connection LAS.
    #[serde(default)]
    pub forget_after_s: Option<f64>,
}

impl DisciplineSpec for LasSpec {
    const MINIMAL: &'static str = "limit_pkts = 100";
    fn check(&self, field: &str) -> Result<()> {
        if self.limit_pkts == 0 {
            return Err(Error::input(format!("{field}.limit_pkts"), "must be at least 1 packet"));
        }
        if let Some(s) = self.forget_after_s {
            if !(s.is_finite() && s >= 0.0) {
                return Err(Error::input(
                    format!("{field}.forget_after_s"),
                    format!("must be a number of seconds >= 0 (or omitted: never), got {s}"),
                ));
            }
        }
        Ok(())
    }

    fn build(&self, _pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(Las::new(self.limit_pkts as usize, self.forget_after_s.map(crate::engine::secs_to_ns)))
    }
}

/// A flow with packets queued.
struct Active {
    flow: u32,
    /// Bytes of this flow transmitted by the queue.
    attained: u64,
    /// Position of this slot in `Las::active`.
    pos: usize,
    /// Queued packets with their arrival stamps, oldest first.
    q: VecDeque<(PktId, u64)>,
}

pub struct Las {
    limit: usize,
    forget: Option<Time>,
    slots: Vec<Active>,
    free: Vec<u32>,
    /// Slots of the flows with packets queued.
    active: Vec<u32>,
    /// Flow id to slot, for the flows with packets queued.
    index: FlowMap<u32>,
    /// Flows with no packet queued: attained bytes and when their last packet left.
    idle: FlowMap<(u64, Time)>,
    len: usize,
    bytes: u64,
    stamp: u64,
    last_sweep: Time,
}

impl Las {
    pub fn new(limit_pkts: usize, forget_after: Option<Time>) -> Self {
        let cap = limit_pkts.min(1 << 16) + 1;
        Las {
            limit: limit_pkts,
            forget: forget_after,
            slots: Vec::with_capacity(cap),
            free: Vec::with_capacity(cap),
            active: Vec::with_capacity(cap),
            index: flow_map(cap),
            idle: flow_map(cap),
            len: 0,
            bytes: 0,
            stamp: 0,
            last_sweep: 0,
        }
    }

    /// The service (bytes) flow `flow` has attained as seen at time `now`.
    pub fn attained(&self, flow: u32, now: Time) -> u64 {
        if let Some(&s) = self.index.get(&flow) {
            return self.slots[s as usize].attained;
        }
        match self.idle.get(&flow) {
            Some(&(a, t)) if self.forget.is_none_or(|f| now.saturating_sub(t) <= f) => a,
            _ => 0,
        }
    }

    /// Flows whose attained service is remembered (queued or idle).
    pub fn flows_remembered(&self) -> usize {
        self.index.len() + self.idle.len()
    }

    /// Slot of `flow`, activating it (with its remembered service) if it has none.
    fn slot_for(&mut self, flow: u32, now: Time) -> usize {
        if let Some(&s) = self.index.get(&flow) {
            return s as usize;
        }
        let attained = self.attained(flow, now);
        self.idle.remove(&flow);
        let pos = self.active.len();
        let s = match self.free.pop() {
            Some(s) => {
                let a = &mut self.slots[s as usize];
                a.flow = flow;
                a.attained = attained;
                a.pos = pos;
                s
            }
            None => {
                self.slots.push(Active { flow, attained, pos, q: VecDeque::with_capacity(4) });
                (self.slots.len() - 1) as u32
            }
        };
        self.active.push(s);
        self.index.insert(flow, s);
        s as usize
    }

    /// The slot's flow has no packet queued any more: remember its service, free the slot.
    fn deactivate(&mut self, s: usize, now: Time) {
        let (flow, attained, pos) = {
            let a = &self.slots[s];
            debug_assert!(a.q.is_empty());
            (a.flow, a.attained, a.pos)
        };
        self.index.remove(&flow);
        self.active.swap_remove(pos);
        if let Some(&moved) = self.active.get(pos) {
            self.slots[moved as usize].pos = pos;
        }
        self.free.push(s as u32);
        self.idle.insert(flow, (attained, now));
        if let Some(f) = self.forget {
            if now.saturating_sub(self.last_sweep) > f {
                self.idle.retain(|_, &mut (_, t)| now.saturating_sub(t) <= f);
                self.last_sweep = now;
            }
        }
    }
}

impl Qdisc for Las {
    fn kind(&self) -> &'static str {
        "las"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let flow = cx.pkts.get(id).flow;
        if self.len >= self.limit {
            // The lowest-priority queued packet: the last one of the flow with the most
            // attained service (the latest among ties).
            let victim = self
                .active
                .iter()
                .map(|&s| s as usize)
                .max_by_key(|&s| {
                    let a = &self.slots[s];
                    (a.attained, a.q.back().map_or(0, |&(_, st)| st))
                })
                .expect("a full queue has a queued flow");
            if self.attained(flow, cx.now) >= self.slots[victim].attained {
                cx.drop(id, DropReason::Overflow);
                return false;
            }
            let (v, _) = self.slots[victim].q.pop_back().expect("active flows have packets");
            self.len -= 1;
            self.bytes -= cx.pkts.get(v).size as u64;
            if self.slots[victim].q.is_empty() {
                self.deactivate(victim, cx.now);
            }
            cx.drop(v, DropReason::PushOut);
        }
        let s = self.slot_for(flow, cx.now);
        self.slots[s].q.push_back((id, self.stamp));
        self.stamp += 1;
        self.len += 1;
        self.bytes += cx.pkts.get(id).size as u64;
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        let s = self.active.iter().map(|&s| s as usize).min_by_key(|&s| {
            let a = &self.slots[s];
            (a.attained, a.q.front().map_or(u64::MAX, |&(_, st)| st))
        })?;
        let (p, _) = self.slots[s].q.pop_front().expect("active flows have packets");
        let size = cx.pkts.get(p).size as u64;
        self.len -= 1;
        self.bytes -= size;
        self.slots[s].attained += size;
        if self.slots[s].q.is_empty() {
            self.deactivate(s, cx.now);
        }
        Some(p)
    }
    fn empty_dequeue_is_noop(&self) -> bool {
        // The least-attained flow is chosen among backlogged flows only; with none, nothing moves
        // (a flow's idle clock starts when its last packet leaves, not on an empty call).
        true
    }
    fn len_pkts(&self) -> usize {
        self.len
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
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

    fn drain(b: &mut Bench, q: &mut Las) -> Vec<PktId> {
        std::iter::from_fn(|| b.take(q)).collect()
    }

    #[test]
    fn least_attained_served_first() {
        let mut b = Bench::new(1);
        let mut q = Las::new(100, None);
        // Flow 1 has been served 3 packets.
        for s in 0..3 {
            let p = pk(&mut b, 1, s);
            assert!(b.offer(&mut q, p).0);
        }
        assert_eq!(drain(&mut b, &mut q).len(), 3);
        assert_eq!(q.attained(1, 0), 4500);
        // Flow 1 arrives first, new flow 2 later with 3 packets, flow 3 later with one:
        // flows 2 and 3 (0 bytes) go before flow 1; among them, flow 2 goes first (its head
        // arrived first) and then they alternate as their attained service grows.
        let a = pk(&mut b, 1, 3);
        let c: Vec<_> = (0..3).map(|s| pk(&mut b, 2, s)).collect();
        let d = pk(&mut b, 3, 0);
        for &p in [a].iter().chain(&c).chain([&d]) {
            assert!(b.offer(&mut q, p).0);
        }
        assert_eq!(drain(&mut b, &mut q), vec![c[0], d, c[1], c[2], a]);
        assert_eq!(q.attained(2, 0), 4500);
        assert_eq!(q.attained(3, 0), 1500);
        assert_eq!(q.attained(1, 0), 6000);
    }

    #[test]
    fn equal_service_shares_round_robin_and_fifo_within_flow() {
        let mut b = Bench::new(2);
        let mut q = Las::new(100, None);
        let x: Vec<_> = (0..3).map(|s| pk(&mut b, 1, s)).collect();
        let y: Vec<_> = (0..3).map(|s| pk(&mut b, 2, s)).collect();
        for &p in x.iter().chain(&y) {
            assert!(b.offer(&mut q, p).0);
        }
        assert_eq!(drain(&mut b, &mut q), vec![x[0], y[0], x[1], y[1], x[2], y[2]]);
    }

    #[test]
    fn overflow_drops_from_the_largest_attained_flow() {
        let mut b = Bench::new(3);
        let mut q = Las::new(4, None);
        // Attained: flow 1 = 2 packets, flow 2 = 1 packet, flow 3 = 0.
        for (f, n) in [(1u32, 2u32), (2, 1)] {
            for s in 0..n {
                let p = pk(&mut b, f, s);
                b.offer(&mut q, p);
            }
        }
        drain(&mut b, &mut q);
        let a1 = pk(&mut b, 1, 2);
        let a2 = pk(&mut b, 1, 3);
        let b1 = pk(&mut b, 2, 1);
        let c1 = pk(&mut b, 3, 0);
        for &p in &[a1, a2, b1, c1] {
            assert!(b.offer(&mut q, p).0);
        }
        // Full. A flow-2 arrival pushes out flow 1's last packet (a2), not its first.
        let b2 = pk(&mut b, 2, 2);
        assert_eq!(b.offer(&mut q, b2), (true, vec![(a2, DropReason::PushOut)]));
        // A flow-1 arrival: its flow has the most service, so the arrival itself is dropped.
        let a3 = pk(&mut b, 1, 4);
        assert_eq!(b.offer(&mut q, a3), (false, vec![(a3, DropReason::Overflow)]));
        // A new flow pushes out a1 (flow 1 still has the most), and flow 1 leaves the queue.
        let d = pk(&mut b, 4, 0);
        assert_eq!(b.offer(&mut q, d), (true, vec![(a1, DropReason::PushOut)]));
        // Now flow 2 (1500 B, latest packet b2) is the largest: a flow-3 arrival pushes b2.
        let c2 = pk(&mut b, 3, 1);
        assert_eq!(b.offer(&mut q, c2), (true, vec![(b2, DropReason::PushOut)]));
        assert_eq!(q.len_pkts(), 4);
        assert_eq!(q.len_bytes(), 6000);
        // Flow 1's service was kept although it has nothing queued.
        assert_eq!(q.attained(1, 0), 3000);
        // After c1 and d, flows 2 and 3 both have 1500 B: b1 arrived before c2.
        assert_eq!(drain(&mut b, &mut q), vec![c1, d, b1, c2]);
    }

    #[test]
    fn tie_on_overflow_drops_the_arrival() {
        let mut b = Bench::new(4);
        let mut q = Las::new(2, None);
        let x = pk(&mut b, 1, 0);
        let y = pk(&mut b, 2, 0);
        assert!(b.offer(&mut q, x).0 && b.offer(&mut q, y).0);
        // All at 0 bytes: the arrival is the latest, hence the last packet: dropped.
        let z = pk(&mut b, 3, 0);
        assert_eq!(b.offer(&mut q, z), (false, vec![(z, DropReason::Overflow)]));
    }

    #[test]
    fn attained_service_forgotten_after_idle_timeout() {
        let mut b = Bench::new(5);
        let mut q = Las::new(10, Some(1_000_000_000));
        let mut never = Las::new(10, None);
        for s in 0..2 {
            let p = pk(&mut b, 1, s);
            b.offer(&mut q, p);
            let p = pk(&mut b, 1, s);
            b.offer(&mut never, p);
        }
        drain(&mut b, &mut q);
        drain(&mut b, &mut never);
        b.now = 900_000_000;
        assert_eq!(q.attained(1, b.now), 3000);
        b.now = 2_000_000_000;
        assert_eq!(q.attained(1, b.now), 0);
        assert_eq!(never.attained(1, b.now), 3000);
        // A later flow-1 packet starts from zero: it goes before flow 2's (served once) packet.
        let f2 = pk(&mut b, 2, 0);
        b.offer(&mut q, f2);
        b.take(&mut q);
        let p2 = pk(&mut b, 2, 1);
        let p1 = pk(&mut b, 1, 2);
        b.offer(&mut q, p2);
        b.offer(&mut q, p1);
        assert_eq!(drain(&mut b, &mut q), vec![p1, p2]);
        // The sweep drops expired entries from the table.
        b.now = 10_000_000_000;
        let p = pk(&mut b, 7, 0);
        b.offer(&mut q, p);
        b.take(&mut q);
        assert_eq!(q.flows_remembered(), 1);
    }

    #[test]
    fn random_workload_keeps_flow_order_and_accounting() {
        let mut b = Bench::new(6);
        let mut rng = Rng::stream(3, "las-test");
        let mut q = Las::new(8, Some(50_000_000));
        let mut next = [0u32; 12];
        let mut last: Vec<Option<u32>> = vec![None; 12];
        let (mut served, mut pushed) = (0, 0);
        for step in 0..20_000u64 {
            b.now = step * 1_000_000;
            if rng.uniform() < 0.6 {
                let f = rng.below(12) as u32;
                let p = pk(&mut b, f, next[f as usize]);
                next[f as usize] += 1;
                let (ok, drops) = b.offer(&mut q, p);
                assert_eq!(ok, drops.iter().all(|&(d, _)| d != p));
                for &(d, why) in &drops {
                    pushed += (why == DropReason::PushOut) as u32;
                    b.pkts.free(d);
                }
            } else if let Some(p) = b.take(&mut q) {
                let pkt = *b.pkts.get(p);
                if let Some(prev) = last[pkt.flow as usize] {
                    assert!(pkt.seq > prev, "flow {} reordered", pkt.flow);
                }
                last[pkt.flow as usize] = Some(pkt.seq);
                served += 1;
                b.pkts.free(p);
            }
            let n: usize = q.active.iter().map(|&s| q.slots[s as usize].q.len()).sum();
            assert_eq!(n, q.len_pkts());
            assert_eq!(q.len_bytes(), 1500 * n as u64);
            assert!(n <= 8);
            assert_eq!(q.index.len(), q.active.len());
            for (i, &s) in q.active.iter().enumerate() {
                assert_eq!(q.slots[s as usize].pos, i);
            }
        }
        assert!(served > 5000 && pushed > 0, "{served} {pushed}");
        // Slots are reused: never more than limit + 1 were created.
        assert!(q.slots.len() <= 9);
    }

    #[test]
    fn spec_checks() {
        let s: LasSpec = toml::from_str("limit_pkts = 8").unwrap();
        assert_eq!(s.forget_after_s, None);
        s.check("q").unwrap();
        assert_eq!(s.build(1500).kind(), "las");
        let bad: LasSpec = toml::from_str("limit_pkts = 8\nforget_after_s = -1.0").unwrap();
        assert!(bad.check("q").unwrap_err().to_string().starts_with("q.forget_after_s"));
        let bad: LasSpec = toml::from_str("limit_pkts = 0").unwrap();
        assert!(bad.check("q").unwrap_err().to_string().starts_with("q.limit_pkts"));
    }

    #[test]
    fn an_empty_dequeue_does_nothing() {
        crate::aqm::testutil::assert_empty_dequeue_is_noop(|| Box::new(Las::new(8, Some(10_000_000))));
    }
}
