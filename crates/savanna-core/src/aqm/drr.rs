//! Class-based isolation of short and long flows on one link (Matta & Guo 2000,
//! "Differentiated Predictive Fair Service for TCP Flows", section II-B and IV): short and
//! long flows get separate queues, each with its own buffer and a configured share of the
//! link's capacity, so neither class's bursts or window dynamics disturb the other's.
//! The paper names class-based queueing (CBQ) as one way to build this; we serve the two
//! queues by deficit round robin (Shreedhar & Varghese 1995), which gives each backlogged
//! class its configured share of the bytes sent.
//!
//! Readings we chose:
//! - queue 0 holds packets whose edge class mark is `Short`; queue 1 holds `Long` and
//!   unmarked (`None`) packets (an unclassified packet gets no preference, as in `rio.rs`);
//! - each queue is a drop-tail FIFO with its own limit (`limit_short_pkts`,
//!   `limit_long_pkts`): an arrival to a full class queue is dropped (`Overflow`) whatever
//!   the other queue holds; the paper's experiments split the buffer in the same proportion
//!   as the capacity ("60% of the total link resources (buffer and capacity)"), which is
//!   the scenario's choice here;
//! - DRR by bytes: the quanta are proportional to the shares, the smaller one being one
//!   full packet (`packet_bytes`), so `quantum_i = packet_bytes * share_i / min(shares)`;
//!   a class becoming backlogged joins the round with one quantum of deficit (as Linux
//!   `sch_drr`); a head packet larger than the deficit waits for the next round;
//! - work-conserving: an empty class is skipped, so a backlogged class alone gets the
//!   whole link (the paper's capacity split is a share under contention, not a rate cap).

use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::net::ClassMark;
use crate::net::PktId;

fn d_share_short() -> f64 {
    0.4
}
fn d_share_long() -> f64 {
    0.6
}

/// `type = "drr"`: two class queues (short, long) served by deficit round robin.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrrSpec {
    /// Buffer of the short-class queue, packets.
    pub limit_short_pkts: u32,
    /// Buffer of the long-class queue (long and unmarked packets), packets.
    pub limit_long_pkts: u32,
    /// Share of the link for the short class under contention. Matta & Guo 2000 section
    /// IV-C: long flows get 60% and short flows 40% (also run the other way round).
    #[serde(default = "d_share_short")]
    pub share_short: f64,
    /// Share of the link for the long class; share_short + share_long = 1. Default 0.6
    /// (Matta & Guo 2000 section IV-C).
    #[serde(default = "d_share_long")]
    pub share_long: f64,
}

impl DisciplineSpec for DrrSpec {
    const MINIMAL: &'static str = "limit_short_pkts = 40\nlimit_long_pkts = 60";
    fn reads(&self) -> Option<crate::net::Mark> {
        Some(crate::net::Mark::Class)
    }
    fn check(&self, field: &str) -> crate::Result<()> {
        if self.limit_short_pkts == 0 {
            return Err(crate::Error::input(format!("{field}.limit_short_pkts"), "must be at least 1 packet"));
        }
        if self.limit_long_pkts == 0 {
            return Err(crate::Error::input(format!("{field}.limit_long_pkts"), "must be at least 1 packet"));
        }
        for (k, v) in [("share_short", self.share_short), ("share_long", self.share_long)] {
            if !(v > 0.0 && v < 1.0) {
                return Err(crate::Error::input(format!("{field}.{k}"), format!("must be in (0, 1), got {v}")));
            }
        }
        let sum = self.share_short + self.share_long;
        if (sum - 1.0).abs() > 1e-9 {
            return Err(crate::Error::input(
                format!("{field}.share_long"),
                format!(
                    "share_short + share_long must sum to 1, got {} + {} = {sum}",
                    self.share_short, self.share_long
                ),
            ));
        }
        Ok(())
    }
    fn build(&self, pkt_bytes: u32) -> Box<dyn super::Qdisc> {
        Box::new(Drr::new(
            [self.limit_short_pkts as usize, self.limit_long_pkts as usize],
            [self.share_short, self.share_long],
            pkt_bytes,
        ))
    }
}

pub const SHORT: usize = 0;
pub const LONG: usize = 1;

/// The queue a packet of class mark `c` goes to.
#[inline]
pub fn queue_of(c: ClassMark) -> usize {
    if c == ClassMark::Short {
        SHORT
    } else {
        LONG
    }
}

pub struct Drr {
    q: [Fifo; 2],
    limit: [usize; 2],
    quantum: [i64; 2],
    deficit: [i64; 2],
    /// Backlogged classes in round order: `active[0]` is served next.
    active: [usize; 2],
    n_active: usize,
}

impl Drr {
    /// `limits` and `shares` are indexed by `SHORT`, `LONG`; shares must be positive.
    pub fn new(limits: [usize; 2], shares: [f64; 2], pkt_bytes: u32) -> Self {
        let min = shares[0].min(shares[1]);
        let quantum = shares.map(|s| ((pkt_bytes.max(1) as f64) * s / min).round().max(1.0) as i64);
        Drr {
            q: [Fifo::with_capacity(limits[0].min(1 << 16)), Fifo::with_capacity(limits[1].min(1 << 16))],
            limit: limits,
            quantum,
            deficit: [0; 2],
            active: [0; 2],
            n_active: 0,
        }
    }
    pub fn quantum(&self) -> [i64; 2] {
        self.quantum
    }
    pub fn class_len(&self, c: usize) -> usize {
        self.q[c].len()
    }
}

impl Qdisc for Drr {
    fn kind(&self) -> &'static str {
        "drr"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let c = queue_of(cx.pkts.get(id).class);
        if self.q[c].len() >= self.limit[c] {
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        if self.q[c].is_empty() {
            self.active[self.n_active] = c;
            self.n_active += 1;
            self.deficit[c] = self.quantum[c];
        }
        self.q[c].push(id, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        while self.n_active > 0 {
            let c = self.active[0];
            let head = self.q[c].get(0).expect("active class is backlogged");
            let size = cx.pkts.get(head).size as i64;
            if size <= self.deficit[c] {
                self.deficit[c] -= size;
                let p = self.q[c].pop(cx.pkts);
                if self.q[c].is_empty() {
                    self.active[0] = self.active[1];
                    self.n_active -= 1;
                }
                return p;
            }
            // Not enough deficit: next round for this class.
            self.deficit[c] += self.quantum[c];
            self.active.swap(0, self.n_active - 1);
        }
        None
    }
    fn empty_dequeue_is_noop(&self) -> bool {
        // With no backlogged class the round loop does not run: deficits and order stay.
        true
    }
    fn len_pkts(&self) -> usize {
        self.q[0].len() + self.q[1].len()
    }
    fn len_bytes(&self) -> u64 {
        self.q[0].bytes() + self.q[1].bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testutil::Bench;
    use crate::net::Ecn;

    fn send(b: &mut Bench, q: &mut Drr, class: ClassMark, size: u32) -> (PktId, bool, Vec<(PktId, DropReason)>) {
        let p = b.pkt(class as u32, 0, class, Ecn::NotEct);
        b.pkts.get_mut(p).size = size;
        let (ok, d) = b.offer(q, p);
        (p, ok, d)
    }

    /// Both classes kept backlogged; returns the short class's share of bytes sent.
    fn short_share(shares: [f64; 2], size_short: u32, size_long: u32, long_class: ClassMark) -> f64 {
        let mut b = Bench::new(1);
        let mut q = Drr::new([1000, 1000], shares, 1500);
        for _ in 0..50 {
            send(&mut b, &mut q, ClassMark::Short, size_short);
            send(&mut b, &mut q, long_class, size_long);
        }
        let (mut short, mut total) = (0u64, 0u64);
        while total < 20_000_000 {
            let p = b.take(&mut q).unwrap();
            let (class, size) = (b.pkts.get(p).class, b.pkts.get(p).size);
            total += size as u64;
            if class == ClassMark::Short {
                short += size as u64;
            }
            b.pkts.free(p);
            send(&mut b, &mut q, class, size);
        }
        short as f64 / total as f64
    }

    #[test]
    fn backlogged_classes_split_bytes_by_share() {
        for (shares, ss, sl) in [
            ([0.4, 0.6], 1500, 1500),
            ([0.6, 0.4], 1500, 1500),
            ([0.6, 0.4], 40, 1500),
            ([0.25, 0.75], 1000, 576),
            ([0.9, 0.1], 1500, 40),
        ] {
            let got = short_share(shares, ss, sl, ClassMark::Long);
            assert!((got - shares[0]).abs() < 0.01, "shares {shares:?}, sizes {ss}/{sl}: short got {got}");
        }
        // Unmarked packets are served as the long class.
        let got = short_share([0.6, 0.4], 1500, 1500, ClassMark::None);
        assert!((got - 0.6).abs() < 0.01, "short got {got} against unmarked");
    }

    #[test]
    fn work_conserving() {
        let mut b = Bench::new(2);
        // The long class has only 10% of the link, yet alone it gets all of it: every
        // dequeue returns a packet while any is queued.
        let mut q = Drr::new([100, 100], [0.9, 0.1], 1500);
        let ids: Vec<_> = (0..50).map(|_| send(&mut b, &mut q, ClassMark::Long, 1500).0).collect();
        let out: Vec<_> = std::iter::from_fn(|| b.take(&mut q)).collect();
        assert_eq!(out, ids);
        // Mixed: once the short class empties, the long one takes every slot.
        for _ in 0..5 {
            send(&mut b, &mut q, ClassMark::Short, 1500);
        }
        for _ in 0..20 {
            send(&mut b, &mut q, ClassMark::Long, 1500);
        }
        let mut n = 0;
        while let Some(p) = b.take(&mut q) {
            n += 1;
            b.pkts.free(p);
        }
        assert_eq!(n, 25);
        assert_eq!(q.len_pkts(), 0);
        assert_eq!(q.len_bytes(), 0);
    }

    #[test]
    fn separate_buffers() {
        let mut b = Bench::new(3);
        let mut q = Drr::new([5, 3], [0.4, 0.6], 1500);
        let long: Vec<_> = (0..3).map(|_| send(&mut b, &mut q, ClassMark::Long, 1500)).collect();
        assert!(long.iter().all(|x| x.1));
        // The long queue is full: long and unmarked arrivals are tail-dropped ...
        for class in [ClassMark::Long, ClassMark::None] {
            let (p, ok, d) = send(&mut b, &mut q, class, 1500);
            assert!(!ok);
            assert_eq!(d, vec![(p, DropReason::Overflow)]);
        }
        // ... while the short queue still takes its five, dropping nothing queued.
        for _ in 0..5 {
            let (_, ok, d) = send(&mut b, &mut q, ClassMark::Short, 1500);
            assert!(ok && d.is_empty());
        }
        let (p, ok, d) = send(&mut b, &mut q, ClassMark::Short, 1500);
        assert!(!ok);
        assert_eq!(d, vec![(p, DropReason::Overflow)]);
        assert_eq!((q.class_len(SHORT), q.class_len(LONG)), (5, 3));
        // The long packets are all still there, in order.
        let mut longs = Vec::new();
        while let Some(p) = b.take(&mut q) {
            if b.pkts.get(p).class == ClassMark::Long {
                longs.push(p);
            }
        }
        assert_eq!(longs, long.iter().map(|x| x.0).collect::<Vec<_>>());
    }

    #[test]
    fn quanta_proportional_to_shares() {
        assert_eq!(Drr::new([1, 1], [0.4, 0.6], 1500).quantum(), [1500, 2250]);
        assert_eq!(Drr::new([1, 1], [0.75, 0.25], 1000).quantum(), [3000, 1000]);
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: DrrSpec = toml::from_str("limit_short_pkts = 200\nlimit_long_pkts = 300").unwrap();
        assert_eq!((s.share_short, s.share_long), (0.4, 0.6));
        assert!(s.check("q").is_ok());
        assert!(toml::from_str::<DrrSpec>("limit_short_pkts = 1").is_err());
        assert!(toml::from_str::<DrrSpec>("limit_short_pkts = 1\nlimit_long_pkts = 1\nweight = 2").is_err());
        let bad = DrrSpec { share_short: 0.5, ..s.clone() };
        match bad.check("topology.bottleneck_queue") {
            Err(crate::Error::Input { field, msg }) => {
                assert_eq!(field, "topology.bottleneck_queue.share_long");
                assert!(msg.contains("sum to 1"), "{msg}");
            }
            r => panic!("{r:?}"),
        }
        let bad = DrrSpec { share_short: 0.0, share_long: 1.0, ..s.clone() };
        assert!(matches!(bad.check("q"), Err(crate::Error::Input { field, .. }) if field == "q.share_short"));
        let bad = DrrSpec { limit_long_pkts: 0, ..s.clone() };
        assert!(matches!(bad.check("q"), Err(crate::Error::Input { field, .. }) if field == "q.limit_long_pkts"));
        assert_eq!(s.build(1500).kind(), "drr");
    }

    #[test]
    fn an_empty_dequeue_does_nothing() {
        crate::aqm::testutil::assert_empty_dequeue_is_noop(|| Box::new(Drr::new([8, 8], [0.7, 0.3], 1500)));
    }
}
