//! PIAS's switch (Bai et al., NSDI 2015, section 3): K strict-priority FIFO queues on one
//! port, the multi-level feedback queue whose levels the `pias` edge classifier assigns
//! (a flow is demoted as the bytes it has sent cross the thresholds). The port always
//! sends from the highest-priority non-empty queue; each queue marks ECN on its own
//! occupancy, as DCTCP does on a single queue (PIAS section 3.3: per-queue ECN keeps a
//! demoted long flow from filling the buffer that short flows need).
//!
//! Readings we chose:
//! - the level is the packet's tag (`Packet::tag`), capped at K-1; untagged packets
//!   (tag 0) all go to the highest queue, so without a classifier PIAS is a FIFO;
//! - one shared buffer of `limit_pkts` packets with tail drop (the paper's switches share
//!   their buffer between a port's queues; PIAS adds no drop rule);
//! - ECN: an ECT arrival is marked CE when its queue already holds at least `ecn_k_pkts`
//!   packets (DCTCP's "queue > K" on the instantaneous length); a not-ECT arrival is
//!   neither marked nor dropped for it (the threshold is a marking rule, not a drop rule).
//!   Omitted (default): no marking.
//!
//! Invariant: a packet is served only when every higher-priority queue is empty, and each
//! queue is FIFO.

use super::registry::DisciplineSpec;
use super::{Bands, DropReason, QCtx, Qdisc};
use crate::error::Result;
use crate::net::PktId;

fn d_queues() -> u32 {
    8
}

/// `type = "pias"`: K strict-priority queues, per-queue ECN threshold.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PiasSpec {
    /// Buffer shared by the queues, packets.
    pub limit_pkts: u32,
    /// Number of priority queues K (1..=32). Default 8, the queues of a commodity switch
    /// port (PIAS section 3.1).
    #[serde(default = "d_queues")]
    pub queues: u32,
    /// Per-queue ECN marking threshold, packets. Default: none (no marking).
    #[serde(default)]
    pub ecn_k_pkts: Option<u32>,
}

impl DisciplineSpec for PiasSpec {
    const MINIMAL: &'static str = "limit_pkts = 100";
    fn reads(&self) -> Option<crate::net::Mark> {
        Some(crate::net::Mark::Tag)
    }
    fn check(&self, field: &str) -> Result<()> {
        if self.limit_pkts == 0 {
            return crate::spec::bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
        }
        if !(1..=32).contains(&self.queues) {
            return crate::spec::bad(format!("{field}.queues"), "must be 1 to 32");
        }
        if self.ecn_k_pkts == Some(0) {
            return crate::spec::bad(format!("{field}.ecn_k_pkts"), "must be at least 1 packet (or omitted)");
        }
        Ok(())
    }
    fn build(&self, _pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(Pias::new(self.limit_pkts as usize, self.queues as usize, self.ecn_k_pkts.map(|k| k as usize)))
    }
}

pub struct Pias {
    bands: Bands,
    limit: usize,
    ecn_k: Option<usize>,
}

impl Pias {
    pub fn new(limit_pkts: usize, queues: usize, ecn_k: Option<usize>) -> Self {
        Pias { bands: Bands::new(queues, limit_pkts), limit: limit_pkts, ecn_k }
    }
}

impl Qdisc for Pias {
    fn kind(&self) -> &'static str {
        "pias"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        if self.bands.len() >= self.limit {
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        let level = (cx.pkts.get(id).tag() as usize).min(self.bands.count() - 1);
        if let Some(k) = self.ecn_k {
            if self.bands.band(level).len() >= k {
                cx.mark(id);
            }
        }
        if level == 0 {
            cx.favor();
        }
        self.bands.push(level, id, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        self.bands.pop(cx.pkts)
    }
    fn len_pkts(&self) -> usize {
        self.bands.len()
    }
    fn len_bytes(&self) -> u64 {
        self.bands.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testutil::Bench;
    use crate::engine::Rng;
    use crate::net::{ClassMark, Ecn};

    fn pk(b: &mut Bench, flow: u32, seq: u32, level: u8, ecn: Ecn) -> PktId {
        let id = b.pkt(flow, seq, ClassMark::None, ecn);
        b.pkts.get_mut(id).set_tag(level);
        id
    }

    #[test]
    fn strict_priority_between_levels_fifo_within() {
        let mut b = Bench::new(1);
        let mut q = Pias::new(20, 3, None);
        let l2 = pk(&mut b, 1, 30, 2, Ecn::NotEct);
        let l1a = pk(&mut b, 2, 10, 1, Ecn::NotEct);
        let l9 = pk(&mut b, 3, 90, 9, Ecn::NotEct); // capped at the lowest queue
        let l0 = pk(&mut b, 4, 0, 0, Ecn::NotEct);
        let l1b = pk(&mut b, 5, 11, 1, Ecn::NotEct);
        for p in [l2, l1a, l9, l0, l1b] {
            assert!(b.offer(&mut q, p).0);
        }
        let out: Vec<_> = std::iter::from_fn(|| b.take(&mut q)).collect();
        assert_eq!(out, [l0, l1a, l1b, l2, l9]);
    }

    #[test]
    fn each_queue_marks_ecn_on_its_own_occupancy() {
        let mut b = Bench::new(2);
        let mut q = Pias::new(100, 2, Some(2));
        let low: Vec<_> = (0..4).map(|s| pk(&mut b, 1, s, 1, Ecn::Ect)).collect();
        for &p in &low {
            b.offer(&mut q, p);
        }
        // The low queue holds 2 before its third packet: the third and fourth are marked.
        let marks: Vec<bool> = low.iter().map(|&p| b.pkts.get(p).ecn == Ecn::Ce).collect();
        assert_eq!(marks, [false, false, true, true]);
        // The high queue is empty: its packets are not marked whatever the port holds.
        let h0 = pk(&mut b, 2, 0, 0, Ecn::Ect);
        let h1 = pk(&mut b, 2, 1, 0, Ecn::Ect);
        b.offer(&mut q, h0);
        b.offer(&mut q, h1);
        assert_eq!((b.pkts.get(h0).ecn, b.pkts.get(h1).ecn), (Ecn::Ect, Ecn::Ect));
        // A not-ECT packet over the threshold is queued unmarked, not dropped.
        let n = pk(&mut b, 3, 0, 1, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, n), (true, vec![]));
    }

    #[test]
    fn shared_buffer_tail_drops() {
        let mut b = Bench::new(3);
        let mut q = Pias::new(2, 4, None);
        let a = pk(&mut b, 1, 50, 3, Ecn::NotEct);
        let c = pk(&mut b, 2, 50, 3, Ecn::NotEct);
        b.offer(&mut q, a);
        b.offer(&mut q, c);
        let h = pk(&mut b, 3, 0, 0, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, h), (false, vec![(h, DropReason::Overflow)]));
    }

    #[test]
    fn spec_checks_name_the_field() {
        for (t, f) in [
            ("limit_pkts = 0", "q.limit_pkts:"),
            ("limit_pkts = 9\nqueues = 0", "q.queues:"),
            ("limit_pkts = 9\nqueues = 33", "q.queues:"),
            ("limit_pkts = 9\necn_k_pkts = 0", "q.ecn_k_pkts:"),
        ] {
            let s: PiasSpec = toml::from_str(t).unwrap();
            assert!(s.check("q").unwrap_err().to_string().starts_with(f), "{t}");
        }
        let s: PiasSpec = toml::from_str("limit_pkts = 9").unwrap();
        assert_eq!((s.queues, s.ecn_k_pkts), (8, None));
    }

    #[test]
    fn random_workload_serves_only_when_higher_levels_are_empty() {
        let mut b = Bench::new(4);
        let mut rng = Rng::stream(3, "pias-test");
        let mut q = Pias::new(10, 4, Some(3));
        let mut seq = 0u32;
        let mut last_out = [None::<u32>; 4];
        let mut served = [0u32; 4];
        for _ in 0..20_000 {
            if rng.uniform() < 0.55 {
                let lvl = rng.below(5) as u8; // 4 is capped to 3
                let p = pk(&mut b, lvl as u32, seq, lvl, Ecn::Ect);
                seq += 1;
                let (ok, drops) = b.offer(&mut q, p);
                for &(d, _) in &drops {
                    b.pkts.free(d);
                }
                assert_eq!(ok, drops.is_empty());
            } else {
                let lens: Vec<usize> = q.bands.iter().map(|x| x.len()).collect();
                if let Some(p) = b.take(&mut q) {
                    let l = (b.pkts.get(p).tag() as usize).min(3);
                    assert!(lens[..l].iter().all(|&n| n == 0), "served level {l} with {lens:?}");
                    let s = b.pkts.get(p).seq;
                    assert!(last_out[l].is_none_or(|x| s > x), "level {l} not FIFO");
                    last_out[l] = Some(s);
                    served[l] += 1;
                    b.pkts.free(p);
                }
            }
            assert_eq!(q.len_pkts(), q.bands.iter().map(|x| x.len()).sum::<usize>());
            assert!(q.len_pkts() <= 10);
        }
        assert!(served.iter().all(|&n| n > 100), "{served:?}");
    }
}
