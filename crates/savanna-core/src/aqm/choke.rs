//! CHOKe, "CHOose and Keep for responsive flows, CHOose and Kill for unresponsive flows"
//! (Pan, Prabhakar & Psounis, INFOCOM 2000), as Anelli, Diana & Lochin 2013 (FavorQueue,
//! section 2 and Table 1) run it as a baseline: a RED queue (one FIFO) that, on each arrival
//! finding the average above min_th, draws one queued packet uniformly at random and, if it
//! belongs to the arrival's flow (`Packet.flow`), drops both.
//!
//! On each arrival: update RED's average (idle-time corrected, `redmath::RedAvg`); if
//! avg <= min_th admit the packet (tail drop at `limit_pkts` still applies); otherwise draw
//! a queued packet uniformly (`cx.rng`); same flow: drop both, the queued victim first, both
//! reported as `DropReason::Policy`; different flow (or empty queue): RED decides for the
//! arrival alone (`Curve` + `RedCount`: early drop, or ECN mark with `ecn` while p_b <
//! `mark_p`, between the thresholds; forced drop above max_th, or 2 max_th with `gentle`), then tail drop.
//!
//! Our readings: the comparison is by flow id only (a TCP connection); a matched pair does
//! not touch RED's count (as Linux `sch_choke`); RED's part keeps ns-2's guard (no early or
//! average-forced drop of an arrival finding at most one packet queued, `redmath`), while
//! the draw itself follows the CHOKe paper (any arrival finding the average above min_th);
//! forced drops are drops, never marks (as `red.rs`). Parameters: FavorQueue says only "the
//! parameters proposed by their authors"; the CHOKe paper's simulations set min_th = buffer
//! / 3 and max_th = 2 min_th (100 and 200 of 300 packets), so by default min_th and max_th
//! are one and two thirds of `limit_pkts`; max_p = 0.1, w_q = 0.002, wait on and gentle off
//! are ns-2's RED defaults of 2000 (the CHOKe paper and FavorQueue both used ns-2; Floyd
//! kept `gentle_` off by default then).

use super::redmath::{red_verdict, Curve, RedCount, RedFifo, RedParams};
use super::registry::DisciplineSpec;
use super::{DropReason, QCtx, Qdisc};
use crate::net::PktId;
use crate::Result;

fn d_max_p() -> f64 {
    0.1
}
fn d_w_q() -> f64 {
    0.002
}
fn t() -> bool {
    true
}

/// CHOKe (Pan, Prabhakar & Psounis 2000), the FavorQueue 2013 baseline. Thresholds in packets.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChokeSpec {
    /// Buffer size, packets (tail drop beyond it). FavorQueue: 8 (10 Mb/s), 83 (100 Mb/s).
    pub limit_pkts: u32,
    /// RED min threshold on the average, packets. Default limit_pkts / 3 (the CHOKe paper's
    /// 100 of 300 packets).
    #[serde(default)]
    pub min_th: Option<f64>,
    /// RED max threshold, packets. Default 2 limit_pkts / 3 (CHOKe paper: max_th = 2 min_th).
    #[serde(default)]
    pub max_th: Option<f64>,
    /// RED max_p (ns-2 1 / linterm_). Default 0.1, ns-2's linterm_ = 10.
    #[serde(default = "d_max_p")]
    pub max_p: f64,
    /// EWMA weight of the average (ns-2 q_weight_). Default 0.002, ns-2's 2000 default.
    #[serde(default = "d_w_q")]
    pub w_q: f64,
    /// ns-2 `gentle_` (p from max_p to 1 between max_th and 2 max_th). Default off, as the
    /// CHOKe paper's RED and ns-2's default in 2000.
    #[serde(default)]
    pub gentle: bool,
    /// ns-2 `wait_` count spreading. Default on (ns-2 default).
    #[serde(default = "t")]
    pub wait: bool,
    /// Mark ECT arrivals instead of RED early drops (never for matched pairs). Default off.
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`, mark iff p_b < mark_p (as `red`); default max_p.
    #[serde(default)]
    pub mark_p: Option<f64>,
    /// Mean packet size for the idle-time correction; defaults to packet_bytes.
    #[serde(default)]
    pub mean_pkt_bytes: Option<f64>,
}

impl ChokeSpec {
    fn thresholds(&self) -> (f64, f64) {
        let l = self.limit_pkts as f64;
        (self.min_th.unwrap_or(l / 3.0), self.max_th.unwrap_or(2.0 * l / 3.0))
    }

    /// The RED parameters of CHOKe's queue, thresholds defaulted from `limit_pkts`.
    pub fn params(&self) -> RedParams {
        let (min_th, max_th) = self.thresholds();
        RedParams {
            limit_pkts: self.limit_pkts as usize,
            min_th,
            max_th,
            max_p: self.max_p,
            w_q: self.w_q,
            gentle: self.gentle,
            wait: self.wait,
            ecn: self.ecn,
            mark_p: self.mark_p,
            byte_mode: false,
            mean_pkt_bytes: self.mean_pkt_bytes,
        }
    }
}

impl DisciplineSpec for ChokeSpec {
    const MINIMAL: &'static str = "limit_pkts = 90";
    fn check(&self, field: &str) -> Result<()> {
        self.params().check(field, "")
    }
    fn build(&self, pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(Choke::new(self.params(), pkt_bytes))
    }
}

pub struct Choke {
    rf: RedFifo,
    p: RedParams,
    /// Mean packet size, bytes.
    mean: f64,
    curve: Curve,
    count: RedCount,
    /// `RedParams::ecn_below`.
    ecn: Option<f64>,
}

impl Choke {
    /// A CHOKe queue; `pkt_bytes` stands for the mean packet size when `p` gives none.
    pub fn new(p: RedParams, pkt_bytes: u32) -> Self {
        Choke {
            rf: RedFifo::new(p.limit_pkts, p.w_q),
            mean: p.mean_bytes(pkt_bytes),
            curve: p.curve(),
            count: RedCount::new(p.wait),
            ecn: p.ecn_below(),
            p,
        }
    }
}

impl Qdisc for Choke {
    fn kind(&self) -> &'static str {
        "choke"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let pps = cx.link_bps / (8.0 * self.mean);
        let avg = self.rf.avg.on_arrival(self.rf.q.len() as f64, cx.now, pps);
        if avg <= self.p.min_th {
            self.count.below();
        } else {
            // CHOKe: compare the arrival with one queued packet drawn uniformly at random.
            if !self.rf.q.is_empty() {
                let i = cx.rng.below(self.rf.q.len() as u64) as usize;
                let drawn = self.rf.q.get(i).expect("index below len");
                if cx.pkts.get(drawn).flow == cx.pkts.get(id).flow {
                    self.rf.remove_at(i, cx);
                    cx.drop(drawn, DropReason::Policy);
                    cx.drop(id, DropReason::Policy);
                    return false;
                }
            }
            // Not matched: RED decides for the arrival.
            let region = self.curve.region_at(avg, self.rf.q.len() as u64);
            if !red_verdict(region, 1.0, &mut self.count, self.ecn, id, cx) {
                return false;
            }
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
    use crate::aqm::testutil::Bench;
    use crate::net::ClassMark;
    use crate::net::Ecn;

    /// w_q = 1: the average is the queue length the arrival finds.
    fn params() -> RedParams {
        RedParams {
            limit_pkts: 100,
            min_th: 10.0,
            max_th: 30.0,
            max_p: 0.1,
            w_q: 1.0,
            gentle: false,
            wait: false,
            ecn: false,
            mark_p: None,
            byte_mode: false,
            mean_pkt_bytes: None,
        }
    }

    fn fill(b: &mut Bench, q: &mut Choke, flows: &[u32]) -> Vec<PktId> {
        flows
            .iter()
            .enumerate()
            .map(|(i, &f)| {
                let p = b.pkt(f, i as u32, ClassMark::None, Ecn::NotEct);
                q.rf.q.push(p, &b.pkts);
                p
            })
            .collect()
    }

    #[test]
    fn matched_pair_both_dropped() {
        let mut b = Bench::new(1);
        let mut q = Choke::new(params(), 1500);
        // 15 packets of flow 1 (avg 15 > min_th): whatever is drawn matches a flow-1 arrival.
        let queued = fill(&mut b, &mut q, &[1; 15]);
        for k in 0..5 {
            let before = q.len_pkts();
            let x = b.pkt(1, 100 + k, ClassMark::None, Ecn::NotEct);
            let (ok, drops) = b.offer(&mut q, x);
            assert!(!ok);
            assert_eq!(drops.len(), 2, "{drops:?}");
            let (victim, why) = drops[0];
            assert_eq!(why, DropReason::Policy);
            assert!(queued.contains(&victim) && victim != x);
            assert_eq!(drops[1], (x, DropReason::Policy));
            assert_eq!(q.len_pkts(), before - 1, "the victim left the queue, the arrival never entered");
            assert!(!q.rf.q.iter().any(|&p| p == victim));
            assert_eq!(q.len_bytes(), 1500 * q.len_pkts() as u64);
        }
    }

    #[test]
    fn victim_drawn_uniformly() {
        // 20 queued, 5 of flow 1: a flow-1 arrival is matched with probability 5 / 20.
        // max_p tiny so RED itself (almost) never drops the unmatched arrivals.
        let mut b = Bench::new(2);
        let mut flows = vec![2u32; 20];
        for f in flows.iter_mut().step_by(4) {
            *f = 1;
        }
        let (mut matched, n) = (0, 20_000);
        let mut q = Choke::new(RedParams { max_p: 1e-12, ..params() }, 1500);
        fill(&mut b, &mut q, &flows);
        for i in 0..n {
            let x = b.pkt(1, i, ClassMark::None, Ecn::NotEct);
            let (ok, drops) = b.offer(&mut q, x);
            if ok {
                // Keep the queue's composition: remove the arrival again.
                let last = q.rf.q.len() - 1;
                assert_eq!(q.rf.q.remove_at(last, &b.pkts), Some(x));
            } else {
                assert_eq!(drops.len(), 2);
                matched += 1;
                // Put a flow-1 packet back where the victim was taken from (any position).
                let (v, _) = drops[0];
                q.rf.q.push(v, &b.pkts);
            }
            assert_eq!(q.len_pkts(), 20);
        }
        let f = matched as f64 / n as f64;
        assert!((f - 0.25).abs() < 0.015, "matched fraction {f}");
    }

    #[test]
    fn unmatched_arrival_is_treated_by_red() {
        let mut b = Bench::new(3);
        // Queue of flow 1 only; flow 2 arrivals never match.
        let mut q = Choke::new(params(), 1500);
        fill(&mut b, &mut q, &[1; 20]);
        // avg 20: p_b = 0.05; count spreading without wait: fraction 2 p_b / (1 + p_b).
        let n = 100_000;
        let mut dropped = 0;
        for i in 0..n {
            let x = b.pkt(2, i, ClassMark::None, Ecn::NotEct);
            let (ok, drops) = b.offer(&mut q, x);
            if ok {
                assert!(drops.is_empty());
                let last = q.rf.q.len() - 1;
                q.rf.q.remove_at(last, &b.pkts);
            } else {
                assert_eq!(drops, vec![(x, DropReason::Early)]);
                dropped += 1;
            }
        }
        let f = dropped as f64 / n as f64;
        let want = 2.0 * 0.05 / 1.05;
        assert!((f - want).abs() / want < 0.05, "early-drop fraction {f}, want {want}");
        // Above max_th: forced drop of the arrival only.
        fill(&mut b, &mut q, &[1; 15]);
        let x = b.pkt(2, 0, ClassMark::None, Ecn::NotEct);
        let (ok, drops) = b.offer(&mut q, x);
        assert!(!ok);
        assert_eq!(drops, vec![(x, DropReason::Forced)]);
        assert_eq!(q.len_pkts(), 35);
        // ECN: an ECT unmatched arrival in the early region (below max_th) is marked, not
        // dropped (p_b 0.75 at 3 queued).
        let mut q =
            Choke::new(RedParams { min_th: 0.0, max_th: 4.0, max_p: 1.0, gentle: true, ecn: true, ..params() }, 1500);
        fill(&mut b, &mut q, &[1, 1]);
        // The first arrival in the early region only starts RED's count (ns-2's `old`).
        let first = b.pkt(3, 0, ClassMark::None, Ecn::Ect);
        assert_eq!(b.offer(&mut q, first), (true, vec![]));
        assert_eq!(b.pkts.get(first).ecn, Ecn::Ect);
        let x = b.pkt(2, 0, ClassMark::None, Ecn::Ect);
        let (ok, drops) = b.offer(&mut q, x);
        assert!(ok && drops.is_empty());
        assert_eq!(b.pkts.get(x).ecn, Ecn::Ce);
    }

    #[test]
    fn red_part_spares_an_arrival_at_a_nearly_empty_queue() {
        // ns-2's guard: the average far above 2 max_th, but one packet queued: the
        // (unmatched) arrival is neither force-dropped nor early-dropped; with two queued it
        // is force-dropped.
        let mut b = Bench::new(5);
        let mut q = Choke::new(RedParams { w_q: 0.002, ..params() }, 1500);
        q.rf.avg.avg = 100.0;
        fill(&mut b, &mut q, &[1]);
        let x = b.pkt(2, 0, ClassMark::None, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, x), (true, vec![]));
        let y = b.pkt(3, 0, ClassMark::None, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, y), (false, vec![(y, DropReason::Forced)]));
    }

    #[test]
    fn nothing_happens_below_min_th() {
        let mut b = Bench::new(4);
        let mut q = Choke::new(RedParams { limit_pkts: 12, ..params() }, 1500);
        // Same-flow arrivals while the queue (= avg) is at most min_th = 10: all admitted.
        for i in 0..11 {
            let x = b.pkt(1, i, ClassMark::None, Ecn::NotEct);
            let (ok, drops) = b.offer(&mut q, x);
            assert!(ok && drops.is_empty(), "arrival {i} refused: {drops:?}");
        }
        assert_eq!(q.len_pkts(), 11);
        // The 12th finds avg 11 > min_th: now a same-flow arrival is matched.
        let x = b.pkt(1, 11, ClassMark::None, Ecn::NotEct);
        let (ok, drops) = b.offer(&mut q, x);
        assert!(!ok && drops.len() == 2);
        assert_eq!(q.len_pkts(), 10);
        // Tail drop still applies below min_th.
        let mut q = Choke::new(RedParams { limit_pkts: 3, ..params() }, 1500);
        for i in 0..3 {
            let x = b.pkt(i, 0, ClassMark::None, Ecn::NotEct);
            assert!(b.offer(&mut q, x).0);
        }
        let x = b.pkt(9, 0, ClassMark::None, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, x), (false, vec![(x, DropReason::Overflow)]));
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: ChokeSpec = toml::from_str("limit_pkts = 300").unwrap();
        assert_eq!(s.thresholds(), (100.0, 200.0));
        assert_eq!((s.max_p, s.w_q, s.gentle, s.wait, s.ecn), (0.1, 0.002, false, true, false));
        s.check("q").unwrap();
        assert_eq!(s.build(1500).kind(), "choke");
        let bad: ChokeSpec = toml::from_str("limit_pkts = 8\nmin_th = 6.0\nmax_th = 5.0").unwrap();
        let e = bad.check("q").unwrap_err().to_string();
        assert!(e.starts_with("q.min_th"), "{e}");
        assert!(toml::from_str::<ChokeSpec>("limit_pkts = 8\nfoo = 1").is_err());
    }

    #[test]
    fn an_empty_dequeue_starts_the_idle_period() {
        // RED's average (CHOKe's too) decays over the idle time counted from the last
        // dequeue that found the queue empty: such a call is not a no-op, and the check
        // that the no-op disciplines pass tells it apart.
        let make = || Choke::new(RedParams { w_q: 0.2, ..params() }, 1500);
        let (mut a, mut b) = (make(), make());
        assert!(!a.empty_dequeue_is_noop());
        use crate::aqm::testutil::trace_with_empty_polls;
        assert_ne!(trace_with_empty_polls(&mut a, false), trace_with_empty_polls(&mut b, true));
    }
}
