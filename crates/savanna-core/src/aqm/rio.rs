//! RIO, "RED with In and Out" (Clark & Fang 1998), in the form Guo & Matta 2001 give in
//! their appendix (core RIO-PS queue dropping function) with the defaults of their Table III.
//!
//! One FIFO (packets are never reordered) shared by two drop-precedence classes:
//! - a packet whose edge class mark is `Short` is "In"; `Long` and unmarked (`None`)
//!   packets are "Out" (our reading: an unclassified packet gets no preference);
//! - on each arrival, an In packet updates Q_short, the EWMA (weight w_short) of the number
//!   of In packets queued; every arrival updates Q_total, the EWMA (weight w_total) of the
//!   whole queue (both sampled before the arrival is queued, as RED does);
//! - an In packet is judged on the short curve (min_short, max_short, maxp_short) against
//!   Q_short, an Out packet on the long curve (min_long, max_long, maxp_long) against
//!   Q_total, so In packets are unaffected by an Out backlog while Out packets back off
//!   under the backlog of both classes;
//! - each curve uses ns-2's `gentle_` variant (Guo & Matta: "we use the gentle_ variant")
//!   when `gentle` is set, and ns-2's count-based spreading with `wait_` (one count per
//!   class, restarted when that class's average falls below its min_th, or after a forced
//!   or tail drop of that class);
//! - ns-2's guard (`rio.cc`): an In packet is never dropped early or by the average while
//!   at most one In packet is queued, an Out packet while at most one packet is queued;
//! - with `ecn`, ECT packets are marked instead of early-dropped (not-ECT ones are
//!   dropped); above the hard threshold (max_th, or 2 max_th with gentle) packets are
//!   force-dropped; a full buffer (`limit_pkts`) tail-drops.
//!
//! Idle time: both averages decay as in `red.rs` over periods when the whole queue is
//! empty (`m = idle * link_rate / mean_pkt_bytes` empty samples). Our reading: Q_short is
//! not decayed while the queue holds only Out packets (it is simply not sampled then, as
//! the pseudo-code updates it only on In arrivals).

use super::redmath::{red_verdict, Curve, RedAvg, RedCount};
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::engine::Time;
use crate::net::ClassMark;
use crate::net::PktId;

/// One class's RED parameters: thresholds in packets, max_p, EWMA weight.
#[derive(Clone, Copy, Debug)]
pub struct RioClass {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
}

#[derive(Clone, Debug)]
pub struct RioParams {
    pub limit_pkts: usize,
    /// In (short) packets, judged against Q_short.
    pub short: RioClass,
    /// Out (long or unmarked) packets, judged against Q_total.
    pub long: RioClass,
    pub gentle: bool,
    pub wait: bool,
    pub ecn: bool,
    pub mean_pkt_bytes: f64,
}

pub struct Rio {
    q: Fifo,
    p: RioParams,
    curve_in: Curve,
    curve_out: Curve,
    avg_short: RedAvg,
    avg_total: RedAvg,
    count_in: RedCount,
    count_out: RedCount,
    /// In packets currently queued (q_short).
    in_queued: usize,
    /// Start of the current idle period (queue empty), if any.
    idle_since: Option<Time>,
}

#[inline]
fn is_in(c: ClassMark) -> bool {
    c == ClassMark::Short
}

impl Rio {
    pub fn new(p: RioParams) -> Self {
        let mut avg_short = RedAvg::new(p.short.w_q);
        let mut avg_total = RedAvg::new(p.long.w_q);
        // Idle decay is handled here (one idle period for both averages).
        avg_short.busy();
        avg_total.busy();
        Rio {
            q: Fifo::with_capacity(p.limit_pkts.min(1 << 16)),
            curve_in: Curve { min_th: p.short.min_th, max_th: p.short.max_th, max_p: p.short.max_p, gentle: p.gentle },
            curve_out: Curve { min_th: p.long.min_th, max_th: p.long.max_th, max_p: p.long.max_p, gentle: p.gentle },
            avg_short,
            avg_total,
            count_in: RedCount::new(p.wait),
            count_out: RedCount::new(p.wait),
            in_queued: 0,
            idle_since: Some(0),
            p,
        }
    }

    /// Q_short, the average number of In packets queued.
    pub fn avg_short(&self) -> f64 {
        self.avg_short.avg
    }

    #[cfg(test)]
    fn push_direct(&mut self, id: PktId, pkts: &crate::net::PacketPool) {
        if is_in(pkts.get(id).class) {
            self.in_queued += 1;
        }
        self.idle_since = None;
        self.q.push(id, pkts);
    }
}

impl Qdisc for Rio {
    fn kind(&self) -> &'static str {
        "rio"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        if let Some(t0) = self.idle_since.take() {
            let m = cx.now.saturating_sub(t0) as f64 * 1e-9 * cx.link_bps / (8.0 * self.p.mean_pkt_bytes);
            self.avg_short.avg *= (1.0 - self.avg_short.w_q).powf(m);
            self.avg_total.avg *= (1.0 - self.avg_total.w_q).powf(m);
        }
        let inp = is_in(cx.pkts.get(id).class);
        // pkts_per_sec is irrelevant here: the idle marks inside RedAvg are never set.
        if inp {
            self.avg_short.on_arrival(self.in_queued as f64, cx.now, 0.0);
        }
        let q_total = self.avg_total.on_arrival(self.q.len() as f64, cx.now, 0.0);
        // ns-2's guard: In packets are judged only while more than one In packet is queued,
        // Out packets while more than one packet of either class is.
        let (region, count) = if inp {
            (self.curve_in.region_at(self.avg_short.avg, self.in_queued as u64), &mut self.count_in)
        } else {
            (self.curve_out.region_at(q_total, self.q.len() as u64), &mut self.count_out)
        };
        if !red_verdict(region, 1.0, count, self.p.ecn, id, cx) {
            return false;
        }
        if self.q.len() >= self.p.limit_pkts {
            count.forced();
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        if inp {
            self.in_queued += 1;
        }
        self.q.push(id, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        let p = self.q.pop(cx.pkts)?;
        if is_in(cx.pkts.get(p).class) {
            self.in_queued -= 1;
        }
        if self.q.is_empty() {
            self.idle_since = Some(cx.now);
        }
        Some(p)
    }
    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn avg(&self) -> Option<f64> {
        Some(self.avg_total.avg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testutil::Bench;
    use crate::net::Ecn;

    fn params(ecn: bool) -> RioParams {
        RioParams {
            limit_pkts: 1000,
            short: RioClass { min_th: 10.0, max_th: 20.0, max_p: 0.05, w_q: 1.0 },
            long: RioClass { min_th: 10.0, max_th: 30.0, max_p: 0.1, w_q: 1.0 },
            gentle: true,
            wait: true,
            ecn,
            mean_pkt_bytes: 1500.0,
        }
    }

    #[test]
    fn short_class_unaffected_by_long_backlog() {
        let mut b = Bench::new(7);
        let mut q = Rio::new(params(false));
        // 200 Long packets queued: Q_total (w = 1) is far above 2 max_long = 60.
        for i in 0..200 {
            let p = b.pkt(1, i, ClassMark::Long, Ecn::NotEct);
            q.push_direct(p, &b.pkts);
        }
        // Short arrivals: Q_short = number of In packets queued < min_short, all accepted.
        for i in 0..9 {
            let s = b.pkt(2, i, ClassMark::Short, Ecn::NotEct);
            let (ok, drops) = b.offer(&mut q, s);
            assert!(ok && drops.is_empty(), "short arrival {i} refused");
        }
        assert_eq!(q.in_queued, 9);
        assert!(q.avg().unwrap() > 60.0);
        assert!(q.avg_short() < 10.0);
        // Long and unmarked arrivals see Q_total: forced drops.
        for class in [ClassMark::Long, ClassMark::None] {
            let l = b.pkt(3, 0, class, Ecn::NotEct);
            let (ok, drops) = b.offer(&mut q, l);
            assert!(!ok);
            assert_eq!(drops, vec![(l, DropReason::Forced)]);
        }
        // Fill the In backlog past 2 max_short: Short arrivals are then forced out too.
        for i in 0..40 {
            let s = b.pkt(4, i, ClassMark::Short, Ecn::NotEct);
            q.push_direct(s, &b.pkts);
        }
        let s = b.pkt(5, 0, ClassMark::Short, Ecn::NotEct);
        let (ok, drops) = b.offer(&mut q, s);
        assert!(!ok);
        assert_eq!(drops, vec![(s, DropReason::Forced)]);
    }

    #[test]
    fn long_class_early_drops_follow_total_average() {
        // Q_total held at 20 (between min_long 10 and max_long 30): Long packets see
        // p_b = 0.05 and are sometimes dropped early; Short ones (Q_short = 0) never are.
        let mut b = Bench::new(9);
        // Short min_th 15: about half the 20 queued packets are In at any time.
        let mut q = Rio::new(RioParams {
            wait: false,
            short: RioClass { min_th: 15.0, max_th: 25.0, ..params(false).short },
            ..params(false)
        });
        for i in 0..20 {
            let p = b.pkt(1, i, ClassMark::Long, Ecn::NotEct);
            q.push_direct(p, &b.pkts);
        }
        let (mut long_drops, mut short_drops) = (0, 0);
        let n = 20_000;
        for i in 0..n {
            for (class, drops) in [(ClassMark::Long, &mut long_drops), (ClassMark::Short, &mut short_drops)] {
                let p = b.pkt(2, i, class, Ecn::NotEct);
                let (ok, d) = b.offer(&mut q, p);
                if ok {
                    let out = b.take(&mut q).unwrap();
                    b.pkts.free(out);
                } else {
                    assert_eq!(d, vec![(p, DropReason::Early)]);
                    *drops += 1;
                    b.pkts.free(p);
                }
            }
        }
        assert_eq!(short_drops, 0);
        let f = long_drops as f64 / n as f64;
        // Count-spread drops at p_b = 0.05: about 2 p_b / (1 + p_b) ~ 0.095.
        assert!((0.08..0.11).contains(&f), "long drop fraction {f}");
    }

    #[test]
    fn fifo_order_across_classes() {
        let mut b = Bench::new(1);
        let mut q = Rio::new(params(false));
        let classes =
            [ClassMark::Short, ClassMark::Long, ClassMark::None, ClassMark::Short, ClassMark::Long, ClassMark::Short];
        let ids: Vec<_> = classes.iter().enumerate().map(|(i, &c)| b.pkt(i as u32, 0, c, Ecn::NotEct)).collect();
        for &p in &ids {
            assert!(b.offer(&mut q, p).0);
        }
        assert_eq!(q.in_queued, 3);
        let out: Vec<_> = std::iter::from_fn(|| b.take(&mut q)).collect();
        assert_eq!(out, ids);
        assert_eq!(q.in_queued, 0);
        assert_eq!(q.len_pkts(), 0);
    }

    #[test]
    fn ecn_marks_in_early_region() {
        let mut b = Bench::new(3);
        // Long curve min 0, max 2, max_p 1: with 2 packets queued p_b = 1.
        let mut q = Rio::new(RioParams {
            long: RioClass { min_th: 0.0, max_th: 2.0, max_p: 1.0, w_q: 1.0 },
            wait: false,
            ..params(true)
        });
        for i in 0..2 {
            let x = b.pkt(0, i, ClassMark::Short, Ecn::Ect);
            assert!(b.offer(&mut q, x).0);
        }
        // The first Out arrival in the early region only starts the Out count.
        let first = b.pkt(1, 1, ClassMark::Long, Ecn::Ect);
        assert_eq!(b.offer(&mut q, first), (true, vec![]));
        assert_eq!(b.pkts.get(first).ecn, Ecn::Ect);
        let ect = b.pkt(1, 0, ClassMark::Long, Ecn::Ect);
        let (ok, drops) = b.offer(&mut q, ect);
        assert!(ok && drops.is_empty());
        assert_eq!(b.pkts.get(ect).ecn, Ecn::Ce);
        assert_eq!(b.out.marks, 1);
        // Serve one so the queue (= average) stays below 2 max_th, in the early region.
        let served = b.take(&mut q).unwrap();
        b.pkts.free(served);
        let syn = b.pkt(2, 0, ClassMark::Long, Ecn::NotEct);
        let (ok, drops) = b.offer(&mut q, syn);
        assert!(!ok);
        assert_eq!(drops, vec![(syn, DropReason::Early)]);
    }

    #[test]
    fn idle_decay() {
        let mut b = Bench::new(4);
        let mut q = Rio::new(RioParams {
            short: RioClass { w_q: 0.5, ..params(false).short },
            long: RioClass { w_q: 0.5, ..params(false).long },
            ..params(false)
        });
        for i in 0..4 {
            q.push_direct(b.pkt(0, i, ClassMark::Short, Ecn::NotEct), &b.pkts);
        }
        let p = b.pkt(0, 9, ClassMark::Short, Ecn::NotEct);
        assert!(b.offer(&mut q, p).0);
        assert_eq!(q.avg(), Some(2.0));
        assert_eq!(q.avg_short(), 2.0);
        while b.take(&mut q).is_some() {}
        // 10 Mb/s, 1500 B: 1.2 ms per packet; idle 2.4 ms = 2 samples.
        b.now = 2_400_000;
        let p = b.pkt(0, 10, ClassMark::Short, Ecn::NotEct);
        assert!(b.offer(&mut q, p).0);
        assert!((q.avg().unwrap() - 2.0 * 0.25 * 0.5).abs() < 1e-9);
        assert!((q.avg_short() - 2.0 * 0.25 * 0.5).abs() < 1e-9);
    }

    #[test]
    fn guard_counts_in_packets_for_in_and_all_packets_for_out() {
        // ns-2's RIO guard: an In arrival is judged only while more than one In packet is
        // queued, an Out arrival while more than one packet is. Both averages preset far
        // above 2 max_th (the forced region); w_q small so arrivals barely move them.
        let mut b = Bench::new(13);
        let small = |c: RioClass| RioClass { w_q: 0.002, ..c };
        let mut q =
            Rio::new(RioParams { short: small(params(false).short), long: small(params(false).long), ..params(false) });
        q.avg_short.avg = 100.0;
        q.avg_total.avg = 100.0;
        // An Out arrival at an empty queue, then at one packet: queued. One In packet queued.
        for i in 0..2 {
            let x = b.pkt(1, i, ClassMark::Long, Ecn::NotEct);
            assert_eq!(b.offer(&mut q, x), (true, vec![]), "Out arrival {i}");
        }
        let s0 = b.pkt(2, 0, ClassMark::Short, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, s0), (true, vec![]), "In arrival finding no In packet");
        // Three packets queued now: Out arrivals are forced out.
        let x = b.pkt(1, 9, ClassMark::Long, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, x), (false, vec![(x, DropReason::Forced)]));
        // An In arrival finding one In packet (among three) is still spared ...
        let s1 = b.pkt(2, 1, ClassMark::Short, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, s1), (true, vec![]), "In arrival finding one In packet");
        // ... and one finding two is forced out.
        let s2 = b.pkt(2, 2, ClassMark::Short, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, s2), (false, vec![(s2, DropReason::Forced)]));
        assert_eq!(q.in_queued, 2);
    }
}
