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
//! - with `ecn`, an ECT packet picked for an early drop is marked while its curve's p_b is
//!   below `mark_p` (default: that curve's max_p, so marks while the class's average is
//!   below its max_th and drops in the gentle region, as ns-2.35's `rio.cc`; `mark_p = 1`
//!   marks throughout, as ns-2.1b7's RIO marked In packets); not-ECT ones are dropped;
//!   above the hard threshold (max_th, or 2 max_th with gentle) packets are force-dropped;
//!   a full buffer (`limit_pkts`) tail-drops.
//!
//! Idle time, RED's rule (F&J section 4: `m = idle * link_rate / mean_pkt_bytes` empty
//! samples over the time the averaged queue was empty) applied to each average: Q_total
//! decays over whole-queue idle periods, Q_short over the time no In packet was queued
//! (Out packets may have been), applied at the next In arrival. Q_short is sampled only on
//! In arrivals (the pseudo-code), so without this it would not move during Out-only
//! traffic (docs/ns2.md, 3d).

use super::redmath::{red_verdict, Curve, RedAvg, RedCount, RedParams};
use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::engine::Time;
use crate::error::Result;
use crate::net::ClassMark;
use crate::net::PktId;

fn d_max_p_short() -> f64 {
    1.0 / 20.0
}
fn d_max_p_long() -> f64 {
    0.1
}
fn d_w_q() -> f64 {
    1.0 / 512.0
}
fn t() -> bool {
    true
}

/// `type = "rio"`: RIO as Guo & Matta 2001 run it (their RIO-PS core queue): one FIFO, In
/// (class `short`) packets judged on the average of In packets queued, Out (class `long` or
/// unmarked) packets on the average of the whole queue. Thresholds in packets; defaults
/// from Guo & Matta Table III.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RioSpec {
    /// Buffer size, packets (tail drop beyond it).
    pub limit_pkts: u32,
    /// In (short) curve: min threshold on Q_short, packets (Table III: 0.15 B).
    pub min_th_short: f64,
    /// In (short) curve: max threshold on Q_short, packets (Table III: 0.35 B).
    pub max_th_short: f64,
    /// In (short) curve max_p. Table III: 1/20.
    #[serde(default = "d_max_p_short")]
    pub max_p_short: f64,
    /// EWMA weight of Q_short (w_short). Table III: 1/512.
    #[serde(default = "d_w_q")]
    pub w_q_short: f64,
    /// Out (long) curve: min threshold on Q_total, packets (Table III: 0.15 B).
    pub min_th_long: f64,
    /// Out (long) curve: max threshold on Q_total, packets (Table III: 0.5 B).
    pub max_th_long: f64,
    /// Out (long) curve max_p. Table III: 1/10.
    #[serde(default = "d_max_p_long")]
    pub max_p_long: f64,
    /// EWMA weight of Q_total (w_total). Table III: 1/512.
    #[serde(default = "d_w_q")]
    pub w_q_long: f64,
    /// ns-2 `gentle_` on both curves (Table III: on).
    #[serde(default = "t")]
    pub gentle: bool,
    /// ns-2 `wait_` count spreading (Table III: on).
    #[serde(default = "t")]
    pub wait: bool,
    /// Mark ECT packets instead of early drops (Table III: on; default off here).
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`, mark an ECT packet picked for an early drop iff its curve's p_b <
    /// mark_p, else drop it. Default: each curve's max_p (mark while the class average is
    /// below its max_th, drop in the gentle region: ns-2.35); 1: mark throughout.
    #[serde(default)]
    pub mark_p: Option<f64>,
    /// Mean packet size for the idle-time correction; defaults to packet_bytes.
    #[serde(default)]
    pub mean_pkt_bytes: Option<f64>,
}

impl RioSpec {
    /// The two curves' RED parameters (the buffer, gentle, wait, ECN and mean size shared).
    pub fn params(&self) -> RioParams {
        let curve = |min_th, max_th, max_p, w_q| RedParams {
            limit_pkts: self.limit_pkts as usize,
            min_th,
            max_th,
            max_p,
            w_q,
            gentle: self.gentle,
            wait: self.wait,
            ecn: self.ecn,
            mark_p: self.mark_p,
            byte_mode: false,
            mean_pkt_bytes: self.mean_pkt_bytes,
        };
        RioParams {
            short: curve(self.min_th_short, self.max_th_short, self.max_p_short, self.w_q_short),
            long: curve(self.min_th_long, self.max_th_long, self.max_p_long, self.w_q_long),
        }
    }
}

impl DisciplineSpec for RioSpec {
    const MINIMAL: &'static str =
        "limit_pkts = 100\nmin_th_short = 5.0\nmax_th_short = 15.0\nmin_th_long = 5.0\nmax_th_long = 25.0";
    fn reads(&self) -> Option<crate::net::Mark> {
        Some(crate::net::Mark::Class)
    }
    fn check(&self, field: &str) -> Result<()> {
        let p = self.params();
        p.short.check(field, "_short")?;
        p.long.check(field, "_long")
    }
    fn build(&self, pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(Rio::new(self.params(), pkt_bytes))
    }
}

/// RIO's two RED curves. The buffer (`limit_pkts`), `gentle`, `wait`, `ecn`, `mark_p` and
/// the mean packet size are the queue's, taken from `long`; `short` gives them equal.
#[derive(Clone, Copy, Debug)]
pub struct RioParams {
    /// In (short) packets, judged against Q_short.
    pub short: RedParams,
    /// Out (long or unmarked) packets, judged against Q_total.
    pub long: RedParams,
}

pub struct Rio {
    q: Fifo,
    /// The queue's settings (`RioParams`): buffer, ECN, mean packet size, bytes.
    limit_pkts: usize,
    /// `RedParams::ecn_below` of the In and the Out curve.
    ecn_in: Option<f64>,
    ecn_out: Option<f64>,
    mean: f64,
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
    /// Since when no In packet has been queued (Q_short's idle period), if none is.
    in_idle_since: Option<Time>,
}

#[inline]
fn is_in(c: ClassMark) -> bool {
    c == ClassMark::Short
}

impl Rio {
    /// A RIO queue; `pkt_bytes` stands for the mean packet size when `p` gives none.
    pub fn new(p: RioParams, pkt_bytes: u32) -> Self {
        let (s, l) = (&p.short, &p.long);
        debug_assert!(
            (s.limit_pkts, s.gentle, s.wait, s.ecn, s.mark_p, s.mean_pkt_bytes)
                == (l.limit_pkts, l.gentle, l.wait, l.ecn, l.mark_p, l.mean_pkt_bytes),
            "the queue's settings are shared by both curves"
        );
        let mut avg_short = RedAvg::new(s.w_q);
        let mut avg_total = RedAvg::new(l.w_q);
        // Idle decay is handled here (one idle period for both averages).
        avg_short.busy();
        avg_total.busy();
        Rio {
            q: Fifo::with_capacity(l.limit_pkts.min(1 << 16)),
            limit_pkts: l.limit_pkts,
            ecn_in: s.ecn_below(),
            ecn_out: l.ecn_below(),
            mean: l.mean_bytes(pkt_bytes),
            curve_in: s.curve(),
            curve_out: l.curve(),
            avg_short,
            avg_total,
            count_in: RedCount::new(l.wait),
            count_out: RedCount::new(l.wait),
            in_queued: 0,
            idle_since: Some(0),
            in_idle_since: Some(0),
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
            self.in_idle_since = None;
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
        let pps = cx.link_bps / (8.0 * self.mean);
        if let Some(t0) = self.idle_since.take() {
            let m = cx.now.saturating_sub(t0) as f64 * 1e-9 * pps;
            self.avg_total.avg *= (1.0 - self.avg_total.w_q).powf(m);
        }
        let inp = is_in(cx.pkts.get(id).class);
        // pkts_per_sec is irrelevant here: the idle marks inside RedAvg are never set.
        if inp {
            if let Some(t0) = self.in_idle_since {
                // The In class idle until now; it stays idle from now unless this is queued.
                let m = cx.now.saturating_sub(t0) as f64 * 1e-9 * pps;
                self.avg_short.avg *= (1.0 - self.avg_short.w_q).powf(m);
                self.in_idle_since = Some(cx.now);
            }
            self.avg_short.on_arrival(self.in_queued as f64, cx.now, 0.0);
        }
        let q_total = self.avg_total.on_arrival(self.q.len() as f64, cx.now, 0.0);
        // ns-2's guard: In packets are judged only while more than one In packet is queued,
        // Out packets while more than one packet of either class is.
        let (region, count, ecn) = if inp {
            (self.curve_in.region_at(self.avg_short.avg, self.in_queued as u64), &mut self.count_in, self.ecn_in)
        } else {
            (self.curve_out.region_at(q_total, self.q.len() as u64), &mut self.count_out, self.ecn_out)
        };
        if !red_verdict(region, 1.0, count, ecn, id, cx) {
            return false;
        }
        if self.q.len() >= self.limit_pkts {
            count.forced();
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        if inp {
            self.in_queued += 1;
            self.in_idle_since = None;
        }
        self.q.push(id, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        let p = self.q.pop(cx.pkts)?;
        if is_in(cx.pkts.get(p).class) {
            self.in_queued -= 1;
            if self.in_queued == 0 {
                self.in_idle_since = Some(cx.now);
            }
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
        let red = |min_th, max_th, max_p| RedParams {
            limit_pkts: 1000,
            min_th,
            max_th,
            max_p,
            w_q: 1.0,
            gentle: true,
            wait: true,
            ecn,
            mark_p: None,
            byte_mode: false,
            mean_pkt_bytes: None,
        };
        RioParams { short: red(10.0, 20.0, 0.05), long: red(10.0, 30.0, 0.1) }
    }

    /// `p` with `f` applied to both curves (for the queue's shared settings).
    fn both(mut p: RioParams, f: impl Fn(&mut RedParams)) -> RioParams {
        f(&mut p.short);
        f(&mut p.long);
        p
    }

    #[test]
    fn short_class_unaffected_by_long_backlog() {
        let mut b = Bench::new(7);
        let mut q = Rio::new(params(false), 1500);
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
        let p = both(params(false), |c| c.wait = false);
        let mut q = Rio::new(RioParams { short: RedParams { min_th: 15.0, max_th: 25.0, ..p.short }, ..p }, 1500);
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
        let mut q = Rio::new(params(false), 1500);
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

    /// A fresh RIO queue (both curves min_th 0, max_th 4, max_p 0.5, gentle, no wait, w_q
    /// 1, ECN, `mark_p`) holding `ins` In then `outs` Out packets; two ECT arrivals of
    /// `class` follow (the first only starts that class's count; the second, with p_b >=
    /// 1/3, has p_a >= 1 and is picked). The second's fate: Some(true) marked, None dropped.
    fn second_pick(mark_p: Option<f64>, ins: u32, outs: u32, class: ClassMark) -> Option<bool> {
        let mut b = Bench::new(3);
        let c = |p: RedParams| RedParams { min_th: 0.0, max_th: 4.0, max_p: 0.5, w_q: 1.0, wait: false, mark_p, ..p };
        let p = params(true);
        let mut q = Rio::new(RioParams { short: c(p.short), long: c(p.long) }, 1500);
        for i in 0..ins {
            q.push_direct(b.pkt(0, i, ClassMark::Short, Ecn::NotEct), &b.pkts);
        }
        for i in 0..outs {
            q.push_direct(b.pkt(0, 100 + i, ClassMark::Long, Ecn::NotEct), &b.pkts);
        }
        let first = b.pkt(1, 0, class, Ecn::Ect);
        assert_eq!(b.offer(&mut q, first), (true, vec![]));
        assert_eq!(b.pkts.get(first).ecn, Ecn::Ect);
        let x = b.pkt(1, 1, class, Ecn::Ect);
        match b.offer(&mut q, x) {
            (true, d) if d.is_empty() => Some(b.pkts.get(x).ecn == Ecn::Ce),
            (false, d) if d == vec![(x, DropReason::Early)] => None,
            r => panic!("{r:?}"),
        }
    }

    #[test]
    fn ecn_marks_while_the_class_average_is_below_its_max_th_and_drops_in_the_gentle_region() {
        use ClassMark::{Long, Short};
        // In: Q_short 3 (p_b 0.375 < max_p) marks; Q_short 6 (gentle, p_b 0.75) drops.
        assert_eq!(second_pick(None, 2, 0, Short), Some(true));
        assert_eq!(second_pick(None, 5, 0, Short), None);
        // Out: judged on Q_total, In packets included. Q_total 3 marks, 6 drops, even when
        // the In packets' own average (2) would still mark an In arrival.
        assert_eq!(second_pick(None, 0, 2, Long), Some(true));
        assert_eq!(second_pick(None, 2, 3, Long), None);
        assert_eq!(second_pick(None, 2, 3, Short), Some(true));
        // mark_p = 1 marks throughout the gentle region (ns-2.1b7's In rule), both classes.
        assert_eq!(second_pick(Some(1.0), 5, 0, Short), Some(true));
        assert_eq!(second_pick(Some(1.0), 2, 3, Long), Some(true));
        // A not-ECT early pick is dropped.
        let mut b = Bench::new(3);
        let p = both(params(true), |c| {
            c.wait = false;
            c.w_q = 1.0;
        });
        let mut q =
            Rio::new(RioParams { long: RedParams { min_th: 0.0, max_th: 4.0, max_p: 0.5, ..p.long }, ..p }, 1500);
        for i in 0..2 {
            q.push_direct(b.pkt(0, i, ClassMark::Long, Ecn::NotEct), &b.pkts);
        }
        let first = b.pkt(1, 0, ClassMark::Long, Ecn::NotEct);
        assert!(b.offer(&mut q, first).0);
        let syn = b.pkt(2, 0, ClassMark::Long, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, syn), (false, vec![(syn, DropReason::Early)]));
    }

    #[test]
    fn idle_decay() {
        let mut b = Bench::new(4);
        let mut q = Rio::new(both(params(false), |c| c.w_q = 0.5), 1500);
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
    fn short_average_decays_over_the_time_no_in_packet_is_queued() {
        // RED's idle rule applied to Q_short: while Out packets keep the queue busy but no In
        // packet is queued, the next In arrival first applies m = idle * rate / size empty
        // samples. 10 Mb/s, 1500 B: 1.2 ms per packet.
        let mut b = Bench::new(5);
        let mut q = Rio::new(both(params(false), |c| c.w_q = 0.5), 1500);
        for i in 0..4 {
            q.push_direct(b.pkt(0, i, ClassMark::Short, Ecn::NotEct), &b.pkts);
        }
        let s = b.pkt(0, 9, ClassMark::Short, Ecn::NotEct);
        assert!(b.offer(&mut q, s).0);
        assert_eq!(q.avg_short(), 2.0);
        // Out packets arrive; then every In packet leaves at t = 0 (the In class idles).
        for i in 0..3 {
            let l = b.pkt(1, i, ClassMark::Long, Ecn::NotEct);
            assert!(b.offer(&mut q, l).0);
        }
        for _ in 0..5 {
            let out = b.take(&mut q).unwrap();
            b.pkts.free(out);
        }
        assert_eq!((q.in_queued, q.len_pkts()), (0, 3));
        // 3.6 ms later (3 samples), with Out packets still queued, an Out arrival leaves
        // Q_short alone; an In arrival then decays it by 0.5^3 before its own sample (0).
        b.now = 3_600_000;
        let l = b.pkt(1, 9, ClassMark::Long, Ecn::NotEct);
        assert!(b.offer(&mut q, l).0);
        assert_eq!(q.avg_short(), 2.0);
        let s = b.pkt(2, 0, ClassMark::Short, Ecn::NotEct);
        assert!(b.offer(&mut q, s).0);
        assert!((q.avg_short() - 2.0 * 0.125 * 0.5).abs() < 1e-9, "{}", q.avg_short());
        // Queued now: no further decay at the next In arrival, 1.2 ms later.
        b.now = 4_800_000;
        let s2 = b.pkt(2, 1, ClassMark::Short, Ecn::NotEct);
        assert!(b.offer(&mut q, s2).0);
        assert!((q.avg_short() - (0.125 * 0.5 + 0.5)).abs() < 1e-9, "{}", q.avg_short());
    }

    #[test]
    fn guard_counts_in_packets_for_in_and_all_packets_for_out() {
        // ns-2's RIO guard: an In arrival is judged only while more than one In packet is
        // queued, an Out arrival while more than one packet is. Both averages preset far
        // above 2 max_th (the forced region); w_q small so arrivals barely move them.
        let mut b = Bench::new(13);
        let mut q = Rio::new(both(params(false), |c| c.w_q = 0.002), 1500);
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

    #[test]
    fn spec_defaults_share_the_queue_settings_and_checks_name_the_class() {
        let text = "limit_pkts = 100\nmin_th_short = 5\nmax_th_short = 15\nmin_th_long = 5\nmax_th_long = 25";
        let s: RioSpec = toml::from_str(text).unwrap();
        let p = s.params();
        assert_eq!((p.short.max_p, p.long.max_p, p.short.w_q, p.long.w_q), (0.05, 0.1, 1.0 / 512.0, 1.0 / 512.0));
        assert_eq!((p.short.limit_pkts, p.short.gentle, p.short.wait, p.short.ecn), (100, true, true, false));
        assert_eq!((p.long.limit_pkts, p.long.gentle, p.long.wait, p.long.ecn), (100, true, true, false));
        s.check("q").unwrap();
        assert_eq!(s.build(1500).kind(), "rio");
        let bad = RioSpec { max_th_short: 5.0, ..s.clone() };
        assert_eq!(bad.check("q").unwrap_err().to_string(), "q.min_th_short: must be below max_th_short (5), got 5");
        let bad = RioSpec { w_q_long: 0.0, ..s.clone() };
        assert_eq!(bad.check("q").unwrap_err().to_string(), "q.w_q_long: must be in (0, 1], got 0");
    }
}
