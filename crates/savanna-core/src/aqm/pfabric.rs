//! pFabric's switch (Alizadeh et al., SIGCOMM 2013, "pFabric: Minimal Near-Optimal
//! Datacenter Transport", section 4.2): every packet carries a priority, its flow's
//! remaining size (smaller is more urgent). Dequeue: find the highest-priority packet
//! queued and send the *earliest-arrived* packet of that packet's flow (the paper's
//! starvation prevention, which also keeps each flow in order). Enqueue to a full buffer:
//! drop the lowest-priority packet, the arrival itself if it is no better than every queued
//! packet. pFabric's buffers are small (about two bandwidth-delay products), so the paper's
//! switch scans its queue; so do we.
//!
//! Readings we chose:
//! - the priority is the packet's tag (`Packet::tag`), written by the `remaining` edge
//!   classifier from the flow's true size (the oracle the paper assumes; five bits,
//!   exact below 4 packets, two steps per octave above). Untagged packets (tag 0) tie, and
//!   pFabric then serves the earliest arrival: FIFO;
//! - ties on the served side go to the earliest arrival, on the dropped side to the latest
//!   (so the arrival is dropped when it ties with the worst queued packet);
//! - not done: pFabric's minimal rate control (a TCP option: initial window of a BDP, no
//!   fast retransmit, small fixed RTO); the disciplines run under the scenario's TCP.
//!
//! Invariant: the queue is kept in arrival order, so "earliest packet of a flow" is its
//! first entry; after every call, no queued packet is worse than a packet dropped for
//! overflow, and each flow leaves in its arrival order.

use super::registry::DisciplineSpec;
use super::{DropReason, QCtx, Qdisc};
use crate::error::Result;
use crate::net::PktId;

/// `type = "pfabric"`: serve the smallest remaining size, drop the largest.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfabricSpec {
    /// Buffer size, packets (pFabric: about two bandwidth-delay products, e.g. 24 packets
    /// at 10 Gb/s with 12 us RTTs; the paper's section 5 uses 36 KB per port).
    pub limit_pkts: u32,
}

impl DisciplineSpec for PfabricSpec {
    const MINIMAL: &'static str = "limit_pkts = 24";
    fn reads(&self) -> Option<crate::net::Mark> {
        Some(crate::net::Mark::Tag)
    }
    fn check(&self, field: &str) -> Result<()> {
        if self.limit_pkts == 0 {
            return crate::spec::bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
        }
        Ok(())
    }
    fn build(&self, _pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(Pfabric::new(self.limit_pkts as usize))
    }
}

#[derive(Clone, Copy)]
struct Entry {
    id: PktId,
    flow: u32,
    rank: u8,
    size: u32,
}

pub struct Pfabric {
    /// Queued packets in arrival order.
    q: Vec<Entry>,
    limit: usize,
    bytes: u64,
}

impl Pfabric {
    pub fn new(limit_pkts: usize) -> Self {
        Pfabric { q: Vec::with_capacity(limit_pkts.min(1 << 12) + 1), limit: limit_pkts, bytes: 0 }
    }
    fn take(&mut self, i: usize) -> PktId {
        let e = self.q.remove(i);
        self.bytes -= e.size as u64;
        e.id
    }
}

impl Qdisc for Pfabric {
    fn kind(&self) -> &'static str {
        "pfabric"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let p = cx.pkts.get(id);
        let e = Entry { id, flow: p.flow, rank: p.tag(), size: p.size };
        if self.q.len() >= self.limit {
            // The worst queued packet: largest rank, latest arrival among ties.
            let (wi, worst) = self
                .q
                .iter()
                .enumerate()
                .rev()
                .max_by_key(|&(i, x)| (x.rank, i))
                .map(|(i, x)| (i, x.rank))
                .expect("full buffer is non-empty");
            if e.rank >= worst {
                cx.drop(id, DropReason::Overflow);
                return false;
            }
            let v = self.take(wi);
            cx.drop(v, DropReason::PushOut);
        }
        self.bytes += e.size as u64;
        self.q.push(e);
        true
    }
    fn dequeue(&mut self, _cx: &mut QCtx) -> Option<PktId> {
        // Highest priority (smallest rank), earliest arrival among ties...
        let best = self.q.iter().enumerate().min_by_key(|&(i, x)| (x.rank, i))?.1.flow;
        // ...then the earliest queued packet of its flow.
        let i = self.q.iter().position(|x| x.flow == best).expect("its flow is queued");
        Some(self.take(i))
    }
    fn len_pkts(&self) -> usize {
        self.q.len()
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
    use crate::net::{ClassMark, Ecn};

    fn pk(b: &mut Bench, flow: u32, seq: u32, rank: u8) -> PktId {
        let id = b.pkt(flow, seq, ClassMark::None, Ecn::NotEct);
        b.pkts.get_mut(id).set_tag(rank);
        id
    }

    #[test]
    fn serves_the_smallest_remaining_size_first() {
        let mut b = Bench::new(1);
        let mut q = Pfabric::new(10);
        let a = pk(&mut b, 1, 0, 9);
        let c = pk(&mut b, 2, 0, 3);
        let d = pk(&mut b, 3, 0, 5);
        let e = pk(&mut b, 4, 0, 3); // ties with c: c arrived first
        for p in [a, c, d, e] {
            assert!(b.offer(&mut q, p).0);
        }
        let out: Vec<_> = std::iter::from_fn(|| b.take(&mut q)).collect();
        assert_eq!(out, [c, e, d, a]);
        assert_eq!(q.len_bytes(), 0);
    }

    #[test]
    fn serves_the_earliest_packet_of_the_most_urgent_flow() {
        let mut b = Bench::new(2);
        let mut q = Pfabric::new(10);
        // Flow 1's first packet carries a large remaining size (tagged when it was sent);
        // its later packet is now the most urgent: the flow's earliest packet goes first.
        let a0 = pk(&mut b, 1, 0, 8);
        let x = pk(&mut b, 2, 0, 4);
        let a1 = pk(&mut b, 1, 1, 2);
        for p in [a0, x, a1] {
            assert!(b.offer(&mut q, p).0);
        }
        assert_eq!(b.take(&mut q), Some(a0));
        assert_eq!(b.take(&mut q), Some(a1));
        assert_eq!(b.take(&mut q), Some(x));
    }

    #[test]
    fn full_buffer_drops_the_largest_remaining_size() {
        let mut b = Bench::new(3);
        let mut q = Pfabric::new(3);
        let p: Vec<_> = [(1, 5), (2, 9), (3, 9)].iter().map(|&(f, r)| pk(&mut b, f, 0, r)).collect();
        for &x in &p {
            assert!(b.offer(&mut q, x).0);
        }
        // Better arrival: the worst queued (rank 9, latest among ties) is pushed out.
        let n = pk(&mut b, 4, 0, 2);
        assert_eq!(b.offer(&mut q, n), (true, vec![(p[2], DropReason::PushOut)]));
        // An arrival tying with the worst queued packet is itself dropped.
        let t = pk(&mut b, 5, 0, 9);
        assert_eq!(b.offer(&mut q, t), (false, vec![(t, DropReason::Overflow)]));
        let out: Vec<_> = std::iter::from_fn(|| b.take(&mut q)).collect();
        assert_eq!(out, [n, p[0], p[1]]);
    }

    #[test]
    fn spec_checks_name_the_field() {
        let s: PfabricSpec = toml::from_str("limit_pkts = 0").unwrap();
        assert!(s.check("q").unwrap_err().to_string().starts_with("q.limit_pkts:"));
    }

    #[test]
    fn random_workload_keeps_flows_in_order_and_drops_only_the_worst() {
        let mut b = Bench::new(5);
        let mut rng = Rng::stream(17, "pfabric-test");
        let mut q = Pfabric::new(8);
        let mut next_seq = [0u32; 12];
        let mut last_out: Vec<Option<u32>> = vec![None; 12];
        let (mut pushed, mut served) = (0, 0);
        for _ in 0..20_000 {
            if rng.uniform() < 0.6 {
                let f = rng.below(12) as u32;
                // A flow's remaining size falls as it sends (rank tied to the flow's id and seq).
                let s = next_seq[f as usize];
                let rank = (f as u64 * 2 + 20).saturating_sub(s as u64 / 4).min(31) as u8;
                let p = pk(&mut b, f, s, rank);
                next_seq[f as usize] += 1;
                let before: Vec<u8> = q.q.iter().map(|e| e.rank).collect();
                let (ok, drops) = b.offer(&mut q, p);
                for &(d, why) in &drops {
                    let r = b.pkts.get(d).tag();
                    // The dropped packet is no better than anything still queued.
                    assert!(q.q.iter().all(|e| e.rank <= r), "dropped rank {r} but kept worse");
                    if why == DropReason::PushOut {
                        pushed += 1;
                        assert!(before.len() == 8 && rank < r);
                    }
                    b.pkts.free(d);
                }
                assert_eq!(ok, drops.iter().all(|&(d, _)| d != p));
            } else {
                let min = q.q.iter().map(|e| e.rank).min();
                if let Some(p) = b.take(&mut q) {
                    served += 1;
                    let pk = b.pkts.get(p);
                    let (f, s) = (pk.flow as usize, pk.seq);
                    // The served flow holds the most urgent queued packet.
                    let flow_min = q.q.iter().filter(|e| e.flow == pk.flow).map(|e| e.rank).chain([pk.tag()]).min();
                    assert_eq!(flow_min, min);
                    if let Some(prev) = last_out[f] {
                        assert!(s > prev, "flow {f} reordered: {s} after {prev}");
                    }
                    last_out[f] = Some(s);
                    b.pkts.free(p);
                }
            }
            assert!(q.len_pkts() <= 8);
            assert_eq!(q.len_bytes(), 1500 * q.len_pkts() as u64);
        }
        assert!(pushed > 100 && served > 5000, "{pushed} {served}");
    }
}
