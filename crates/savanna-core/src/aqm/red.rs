//! RED (Floyd & Jacobson 1993) as ns-2 ran it in Guo & Matta 2001 and Tokuda et al. 2002:
//! average updated on every arrival (idle-time corrected from the link rate), count-based
//! uniform early drops between min_th and max_th, `gentle` (linear to 1 between max_th and
//! 2 max_th), `wait` (no early drop until 1/p_b packets have passed since the last), ECN
//! marking of ECT packets instead of early drops while p_b < `mark_p` (RFC 3168, ns-2's
//! rule: by default marks below max_th, drops in the gentle region; not-ECT packets such
//! as SYNs are dropped), forced drops above the hard threshold, and tail drop when the buffer is
//! full. Thresholds are in packets; in byte mode the probability of a packet is scaled by
//! its size over the mean packet size (ns-2 `bytes_`). As in ns-2 (and ns-3), an arrival
//! that finds at most one packet queued (one byte in byte mode) is never dropped early or
//! by the average, and a tail drop restarts the count as a forced drop does.

use super::redmath::{red_verdict, Curve, RedCount, RedFifo, RedParams};
use super::registry::DisciplineSpec;
use super::{QCtx, Qdisc};
use crate::error::Result;
use crate::net::PktId;

fn d_max_p() -> f64 {
    0.1
}
fn d_w_q() -> f64 {
    1.0 / 512.0
}
fn t() -> bool {
    true
}

/// `type = "red"`. Thresholds in packets; defaults from Guo & Matta 2001 Table III.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    /// Buffer size, packets (tail drop beyond it).
    pub limit_pkts: u32,
    /// Min threshold on the average, packets.
    pub min_th: f64,
    /// Max threshold on the average, packets.
    pub max_th: f64,
    /// max_p (ns-2: 1 / linterm_). Guo & Matta Table III: 1/10.
    #[serde(default = "d_max_p")]
    pub max_p: f64,
    /// EWMA weight (ns-2 q_weight_). Guo & Matta Table III: 1/512.
    #[serde(default = "d_w_q")]
    pub w_q: f64,
    /// ns-2 `gentle_` (Table III: on).
    #[serde(default = "t")]
    pub gentle: bool,
    /// ns-2 `wait_` count spreading (Table III: on).
    #[serde(default = "t")]
    pub wait: bool,
    /// Mark ECT packets instead of early drops. Default off.
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`, mark an ECT packet picked for an early drop iff p_b < mark_p, else drop
    /// it (ns-2.35 `mark_p_`). Default max_p: mark while the average is below max_th, drop
    /// in the gentle region (ns-2's rule); 1: mark throughout.
    #[serde(default)]
    pub mark_p: Option<f64>,
    /// "packets" (thresholds and probabilities per packet) or "bytes" (probability scaled
    /// by packet size / mean packet size, ns-2 `bytes_`).
    #[serde(default)]
    pub mode: RedMode,
    /// Mean packet size for the idle-time correction and byte mode; defaults to packet_bytes.
    #[serde(default)]
    pub mean_pkt_bytes: Option<f64>,
}

/// RED's unit for the drop probability.
#[derive(Clone, Copy, Debug, serde::Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RedMode {
    #[default]
    Packets,
    Bytes,
}

impl RedSpec {
    /// The shared RED parameters these keys give.
    pub fn params(&self) -> RedParams {
        RedParams {
            limit_pkts: self.limit_pkts as usize,
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            w_q: self.w_q,
            gentle: self.gentle,
            wait: self.wait,
            ecn: self.ecn,
            mark_p: self.mark_p,
            byte_mode: self.mode == RedMode::Bytes,
            mean_pkt_bytes: self.mean_pkt_bytes,
        }
    }
}

impl DisciplineSpec for RedSpec {
    const MINIMAL: &'static str = "limit_pkts = 100\nmin_th = 5.0\nmax_th = 15.0";
    fn check(&self, field: &str) -> Result<()> {
        self.params().check(field, "")
    }
    fn build(&self, pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(Red::new(self.params(), pkt_bytes))
    }
}

pub struct Red {
    rf: RedFifo,
    p: RedParams,
    /// Mean packet size, bytes.
    mean: f64,
    curve: Curve,
    count: RedCount,
    /// `RedParams::ecn_below`.
    ecn: Option<f64>,
}

impl Red {
    /// A RED queue; `pkt_bytes` stands for the mean packet size when `p` gives none.
    pub fn new(p: RedParams, pkt_bytes: u32) -> Self {
        Red {
            rf: RedFifo::new(p.limit_pkts, p.w_q),
            mean: p.mean_bytes(pkt_bytes),
            curve: p.curve(),
            count: RedCount::new(p.wait),
            ecn: p.ecn_below(),
            p,
        }
    }
}

impl Qdisc for Red {
    fn kind(&self) -> &'static str {
        "red"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let pps = cx.link_bps / (8.0 * self.mean);
        let qlen = if self.p.byte_mode { self.rf.q.bytes() as f64 / self.mean } else { self.rf.q.len() as f64 };
        let avg = self.rf.avg.on_arrival(qlen, cx.now, pps);
        let queued = if self.p.byte_mode { self.rf.q.bytes() } else { self.rf.q.len() as u64 };
        let region = self.curve.region_at(avg, queued);
        let scale = if self.p.byte_mode { cx.pkts.get(id).size as f64 / self.mean } else { 1.0 };
        if !red_verdict(region, scale, &mut self.count, self.ecn, id, cx) {
            return false;
        }
        if !self.rf.admit(id, cx) {
            self.count.forced();
            return false;
        }
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        self.rf.pop(cx)
    }
    fn len_pkts(&self) -> usize {
        self.rf.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.rf.q.bytes()
    }
    fn avg(&self) -> Option<f64> {
        Some(self.rf.avg.avg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::redmath::Region;
    use crate::aqm::testutil::Bench;
    use crate::aqm::DropReason;
    use crate::net::ClassMark;
    use crate::net::Ecn;

    fn params(gentle: bool, wait: bool, ecn: bool) -> RedParams {
        RedParams {
            limit_pkts: 1000,
            min_th: 10.0,
            max_th: 30.0,
            max_p: 0.1,
            w_q: 1.0,
            gentle,
            wait,
            ecn,
            mark_p: None,
            byte_mode: false,
            mean_pkt_bytes: None,
        }
    }

    /// Hold the instantaneous queue (= average, with w_q = 1) at `level` packets and offer
    /// `n` packets; return the fraction dropped.
    fn measured_drop_fraction(gentle: bool, wait: bool, level: usize, n: usize) -> f64 {
        let mut b = Bench::new(42);
        let mut q = Red::new(params(gentle, wait, false), 1500);
        // Fill to `level` directly (RED itself would refuse packets above its thresholds);
        // with w_q = 1 the next arrival sets avg = level.
        for i in 0..level {
            let p = b.pkt(0, i as u32, ClassMark::None, Ecn::NotEct);
            q.rf.q.push(p, &b.pkts);
        }
        let mut dropped = 0;
        for i in 0..n {
            let p = b.pkt(1, i as u32, ClassMark::None, Ecn::NotEct);
            let (ok, _) = b.offer(&mut q, p);
            if ok {
                // Keep the level constant: serve one packet for each one accepted.
                let out = b.take(&mut q).unwrap();
                b.pkts.free(out);
            } else {
                dropped += 1;
                b.pkts.free(p);
            }
        }
        dropped as f64 / n as f64
    }

    /// F&J section 7: with p_a = p_b / (1 - count p_b) the number X of packets from one
    /// drop to the next is uniform, P(X > k) = 1 - k p_b / (1 - p_b), so the drop fraction
    /// is 1 / E[X] = 1 / sum_k P(X > k) (about 2 p_b). With ns-2's `wait`, no drop comes
    /// before n0 = ceil(1 / p_b) packets and P(X > k) = (2 - (k + 1) p_b) / (2 - n0 p_b)
    /// after, uniform between 1/p_b and 2/p_b (about 2 p_b / 3).
    fn expected_fraction(pb: f64, wait: bool) -> f64 {
        let n0 = (1.0 / pb).ceil();
        let mut mean_gap = 0.0;
        for k in 0..100_000 {
            let k = k as f64;
            let survive = if !wait {
                1.0 - k * pb / (1.0 - pb)
            } else if k < n0 {
                1.0
            } else {
                (2.0 - (k + 1.0) * pb) / (2.0 - n0 * pb)
            };
            if survive <= 0.0 {
                break;
            }
            mean_gap += survive.min(1.0);
        }
        1.0 / mean_gap
    }

    #[test]
    fn drop_fraction_follows_the_curve() {
        let c = Curve { min_th: 10.0, max_th: 30.0, max_p: 0.1, gentle: false };
        for &(level, gentle) in &[(15usize, false), (20, false), (28, false), (35, true), (50, true)] {
            let cg = Curve { gentle, ..c };
            let pb = match cg.region(level as f64) {
                Region::Early(p) => p,
                r => panic!("{r:?}"),
            };
            let n = 200_000;
            let got = measured_drop_fraction(gentle, false, level, n);
            let want = expected_fraction(pb, false);
            assert!((got - want).abs() / want < 0.03, "level {level}: got {got}, want {want}");
            let got_w = measured_drop_fraction(gentle, true, level, n);
            let want_w = expected_fraction(pb, true);
            assert!((got_w - want_w).abs() / want_w < 0.03, "wait, level {level}: got {got_w}, want {want_w}");
        }
        // Below min_th nothing is dropped; at or above max_th without gentle all is.
        assert_eq!(measured_drop_fraction(false, false, 8, 5000), 0.0);
        assert_eq!(measured_drop_fraction(false, false, 31, 5000), 1.0);
        assert_eq!(measured_drop_fraction(true, false, 61, 5000), 1.0);
    }

    /// Offer ECT (or, with `not_ect`, a last not-ECT) arrivals to a fresh queue with `p`
    /// held at `level` packets (w_q = 1, so the average is the level) and return the last
    /// one's fate: Some(true) marked, Some(false) queued unmarked, None dropped early. The
    /// first arrival only starts the count (ns-2's `old`); the second, with p_a >= 1, is
    /// picked.
    fn fate_at(p: RedParams, b: &mut Bench, level: usize, not_ect: bool) -> Option<bool> {
        let q = &mut Red::new(p, 1500);
        let mut fate = None;
        for k in 0..2 {
            while q.rf.q.len() > level {
                let out = b.take(q).unwrap();
                b.pkts.free(out);
            }
            while q.rf.q.len() < level {
                let x = b.pkt(0, 0, ClassMark::None, Ecn::NotEct);
                q.rf.q.push(x, &b.pkts);
            }
            let x = b.pkt(1, k, ClassMark::None, if not_ect && k == 1 { Ecn::NotEct } else { Ecn::Ect });
            let (ok, drops) = b.offer(q, x);
            fate = if ok {
                Some(b.pkts.get(x).ecn == Ecn::Ce)
            } else {
                assert_eq!(drops, vec![(x, DropReason::Early)]);
                None
            };
        }
        fate
    }

    #[test]
    fn ecn_marks_while_p_b_is_below_mark_p_and_drops_in_the_gentle_region_by_default() {
        // min_th 0, max_th 4, max_p 0.5, gentle, w_q = 1. At 3 packets p_b = 0.375 (early
        // region), at 6 packets p_b = 0.75 (gentle region); from the second arrival on p_a
        // >= 1 (no `wait`), so each arrival is picked. ns-2's rule (mark_p = max_p): mark
        // below max_th, drop above it; mark_p = 0.8 marks at p_b 0.75; mark_p = 1 throughout.
        let base = RedParams { min_th: 0.0, max_th: 4.0, max_p: 0.5, ..params(true, false, true) };
        let mut b = Bench::new(3);
        assert_eq!(fate_at(base, &mut b, 3, false), Some(true), "early region: marked");
        assert_eq!(fate_at(base, &mut b, 6, false), None, "gentle region: dropped");
        assert_eq!(fate_at(base, &mut b, 3, true), None, "not-ECT: dropped");
        for (mark_p, want) in [(0.7, None), (0.8, Some(true)), (1.0, Some(true))] {
            let p = RedParams { mark_p: Some(mark_p), ..base };
            assert_eq!(fate_at(p, &mut b, 6, false), want, "gentle region, mark_p {mark_p}");
        }
        // Without ECN every pick is a drop.
        assert_eq!(fate_at(RedParams { ecn: false, mark_p: Some(1.0), ..base }, &mut b, 3, false), None);
    }

    /// A RED queue holding `level` packets, its average preset to `avg` (w_q small, so
    /// one arrival barely moves it).
    fn preset(p: RedParams, b: &mut Bench, level: usize, avg: f64) -> Red {
        let mut q = Red::new(RedParams { w_q: 0.002, ..p }, 1500);
        for i in 0..level {
            let x = b.pkt(0, i as u32, ClassMark::None, Ecn::NotEct);
            q.rf.q.push(x, &b.pkts);
        }
        q.rf.avg.avg = avg;
        q
    }

    #[test]
    fn no_drop_by_the_average_while_at_most_one_packet_is_queued() {
        // ns-2's guard: the average far above 2 max_th (forced region), but the arrival finds
        // the queue empty, then holding one packet: both are queued; the next, finding two,
        // is force-dropped.
        let mut b = Bench::new(11);
        let mut q = preset(params(true, true, false), &mut b, 0, 100.0);
        for i in 0..2 {
            let x = b.pkt(1, i, ClassMark::None, Ecn::NotEct);
            assert_eq!(b.offer(&mut q, x), (true, vec![]), "arrival {i} finding {i} queued");
        }
        let x = b.pkt(1, 2, ClassMark::None, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, x), (false, vec![(x, DropReason::Forced)]));
        // In the early region too: a queue that never holds more than one packet loses
        // nothing, however high the average (p_b = 0.05 at avg 20: about 1 in 20 otherwise).
        let mut q = preset(params(false, false, false), &mut b, 0, 20.0);
        for i in 0..2000 {
            let x = b.pkt(2, i, ClassMark::None, Ecn::NotEct);
            assert!(b.offer(&mut q, x).0, "arrival {i} dropped");
            let out = b.take(&mut q).unwrap();
            b.pkts.free(out);
        }
        // In byte mode the guard counts bytes (ns-2 `qib_`): one queued packet is enough.
        let mut q = preset(RedParams { byte_mode: true, ..params(false, false, false) }, &mut b, 1, 100.0);
        let x = b.pkt(3, 0, ClassMark::None, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, x), (false, vec![(x, DropReason::Forced)]));
    }

    #[test]
    fn first_arrival_in_the_early_region_only_starts_the_count() {
        // w_q = 1, min_th 10, max_th 30, max_p 1: at avg 25, p_b = 0.75, so p_a(1) = 3 and
        // p_a(2) = 1 (both certain drops) without `wait`. ns-2: the first arrival after the
        // average crosses min_th sets count = 1 and is queued; the ones after are dropped.
        let mut b = Bench::new(12);
        let mut q = Red::new(RedParams { max_p: 1.0, ..params(false, false, false) }, 1500);
        let set_level = |q: &mut Red, b: &mut Bench, level: usize| {
            while q.rf.q.len() > level {
                let out = b.take(q).unwrap();
                b.pkts.free(out);
            }
            while q.rf.q.len() < level {
                let x = b.pkt(0, 0, ClassMark::None, Ecn::NotEct);
                q.rf.q.push(x, &b.pkts);
            }
        };
        for round in 0..3 {
            set_level(&mut q, &mut b, 5);
            let x = b.pkt(1, round, ClassMark::None, Ecn::NotEct);
            assert!(b.offer(&mut q, x).0, "below min_th");
            set_level(&mut q, &mut b, 25);
            let first = b.pkt(2, round, ClassMark::None, Ecn::NotEct);
            assert_eq!(b.offer(&mut q, first), (true, vec![]), "round {round}: first arrival above min_th");
            for k in 0..3 {
                set_level(&mut q, &mut b, 25);
                let x = b.pkt(3, k, ClassMark::None, Ecn::NotEct);
                assert_eq!(b.offer(&mut q, x), (false, vec![(x, DropReason::Early)]), "round {round}, arrival {k}");
            }
        }
    }

    #[test]
    fn a_tail_drop_restarts_the_count() {
        // The buffer is full (25 packets) and the average (w_q = 1) is 25: p_b = 0.45. The
        // first arrival starts the count (count = 1) and is tail-dropped, which restarts the
        // count (ns-2: a forced drop sets count = 0). The second then has count 1 and
        // p_a = 0.45 / 0.55 = 0.82: 18% of the time it passes RED and is tail-dropped too.
        // Without the restart it would have count 2, p_a = 1, and always be an early drop.
        let trials = 400;
        let mut overflow = 0;
        for seed in 0..trials {
            let mut b = Bench::new(seed);
            let mut q = Red::new(RedParams { limit_pkts: 25, max_p: 0.6, ..params(false, false, false) }, 1500);
            for i in 0..25 {
                let x = b.pkt(0, i, ClassMark::None, Ecn::NotEct);
                q.rf.q.push(x, &b.pkts);
            }
            let a1 = b.pkt(1, 0, ClassMark::None, Ecn::NotEct);
            assert_eq!(b.offer(&mut q, a1), (false, vec![(a1, DropReason::Overflow)]));
            let a2 = b.pkt(1, 1, ClassMark::None, Ecn::NotEct);
            let (ok, drops) = b.offer(&mut q, a2);
            assert!(!ok);
            match drops[..] {
                [(p, DropReason::Overflow)] if p == a2 => overflow += 1,
                [(p, DropReason::Early)] if p == a2 => {}
                _ => panic!("{drops:?}"),
            }
        }
        let f = overflow as f64 / trials as f64;
        let want = 1.0 - 0.45 / 0.55;
        assert!((f - want).abs() < 0.06, "second arrival tail-dropped in {f} of trials, want {want}");
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: RedSpec = toml::from_str("limit_pkts = 100\nmin_th = 5\nmax_th = 15").unwrap();
        assert_eq!(
            (s.max_p, s.w_q, s.gentle, s.wait, s.ecn, s.mode),
            (0.1, 1.0 / 512.0, true, true, false, RedMode::Packets)
        );
        s.check("q").unwrap();
        assert_eq!(s.build(1500).kind(), "red");
        assert_eq!(s.mark_p, None);
        assert_eq!(RedSpec { ecn: true, ..s.clone() }.params().ecn_below(), Some(0.1), "mark_p defaults to max_p");
        let bad = RedSpec { mark_p: Some(2.0), ..s.clone() };
        assert_eq!(bad.check("q").unwrap_err().to_string(), "q.mark_p: must be in (0, 1], got 2");
        let bytes: RedSpec = toml::from_str("limit_pkts = 100\nmin_th = 5\nmax_th = 15\nmode = \"bytes\"").unwrap();
        assert!(bytes.params().byte_mode);
        let bad = RedSpec { max_th: 4.0, ..s.clone() };
        assert_eq!(bad.check("q").unwrap_err().to_string(), "q.min_th: must be below max_th (4), got 5");
        assert!(toml::from_str::<RedSpec>("limit_pkts = 100\nmin_th = 5").is_err(), "max_th is required");
    }
}
