//! Step marking: DCTCP's switch rule (RFC 8257 3.1; Alizadeh et al. 2010, section 3.1). An
//! ECT packet is CE-marked when it arrives to a queue already holding `k_pkts` packets or
//! more (the instantaneous queue, no average), and, with `k_us` set, when it leaves after
//! a sojourn above `k_us` microseconds (the L4S step, RFC 9332 Appendix A.1, measured as
//! CoDel does). A not-ECT packet is never marked: it is tail-dropped at `limit_pkts`,
//! like every packet.
//!
//! Readings: "exceeds K" at arrival is `occupancy >= K`, as Linux's and ns-3's RED with
//! min_th = max_th = K and weight 1 (the usual way to build DCTCP's queue) compare it; the
//! sojourn is `now - enq_ns` (the engine stamps `enq_ns` on arrival), marked at dequeue.

use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::engine::Time;
use crate::error::Result;
use crate::net::PktId;
use crate::spec::{bad, positive};

/// `type = "step"`: a FIFO that marks ECT packets above a step threshold.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// Buffer size, packets.
    pub limit_pkts: u32,
    /// Marking threshold K, packets: an ECT arrival to a queue of K packets or more is
    /// marked (RFC 8257 3.1; the DCTCP paper uses 20 at 1 Gb/s, 65 at 10 Gb/s). Set it to
    /// `limit_pkts` to mark on sojourn only.
    pub k_pkts: u32,
    /// Sojourn threshold, microseconds: an ECT packet leaving after a longer sojourn is
    /// marked. Default: none (queue-length marking only).
    #[serde(default)]
    pub k_us: Option<f64>,
}

impl DisciplineSpec for StepSpec {
    const MINIMAL: &'static str = "limit_pkts = 100\nk_pkts = 20";
    fn check(&self, field: &str) -> Result<()> {
        if self.limit_pkts == 0 {
            return bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
        }
        if self.k_pkts == 0 || self.k_pkts > self.limit_pkts {
            return bad(
                format!("{field}.k_pkts"),
                format!("must be between 1 and limit_pkts ({}), got {}", self.limit_pkts, self.k_pkts),
            );
        }
        if let Some(k) = self.k_us {
            positive(&format!("{field}.k_us"), k)?;
        }
        Ok(())
    }
    fn build(&self, _pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(Step::new(self.limit_pkts as usize, self.k_pkts as usize, self.k_us))
    }
}

pub struct Step {
    q: Fifo,
    limit_pkts: usize,
    k_pkts: usize,
    /// Sojourn threshold, ns (None: off).
    k_ns: Option<Time>,
}

impl Step {
    pub fn new(limit_pkts: usize, k_pkts: usize, k_us: Option<f64>) -> Self {
        Step {
            q: Fifo::with_capacity(limit_pkts.min(1 << 16)),
            limit_pkts,
            k_pkts,
            k_ns: k_us.map(|k| (k * 1e3).round() as Time),
        }
    }
}

impl Qdisc for Step {
    fn kind(&self) -> &'static str {
        "step"
    }
    fn enqueue(&mut self, p: PktId, cx: &mut QCtx) -> bool {
        if self.q.len() >= self.limit_pkts {
            cx.drop(p, DropReason::Overflow);
            return false;
        }
        // RFC 8257 3.1: mark on the instantaneous queue at arrival (a not-ECT packet is
        // left alone: `mark` returns false and it is queued).
        if self.q.len() >= self.k_pkts {
            cx.mark(p);
        }
        self.q.push(p, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        let p = self.q.pop(cx.pkts)?;
        if let Some(k) = self.k_ns {
            // Sojourn marking at departure.
            if cx.now.saturating_sub(cx.pkts.get(p).enq_ns) > k {
                cx.mark(p);
            }
        }
        Some(p)
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
    use crate::net::{ClassMark, Ecn};

    fn pk(b: &mut Bench, seq: u32, ecn: Ecn) -> PktId {
        b.pkt(0, seq, ClassMark::None, ecn)
    }

    /// RFC 8257 3.1: an ECT arrival is marked iff the queue already holds K packets.
    #[test]
    fn rfc8257_3_1_marks_ect_arrivals_at_or_above_k_packets() {
        let mut b = Bench::new(1);
        let mut q = Step::new(10, 3, None);
        let ids: Vec<_> = (0..6).map(|i| pk(&mut b, i, Ecn::Ect)).collect();
        for &p in &ids {
            assert!(b.offer(&mut q, p).0);
        }
        let ecn: Vec<_> = ids.iter().map(|&p| b.pkts.get(p).ecn).collect();
        assert_eq!(ecn, [Ecn::Ect, Ecn::Ect, Ecn::Ect, Ecn::Ce, Ecn::Ce, Ecn::Ce]);
        // Drain to two: the next arrival is below K again.
        for _ in 0..4 {
            b.take(&mut q);
        }
        let p = pk(&mut b, 9, Ecn::Ect);
        b.offer(&mut q, p);
        assert_eq!(b.pkts.get(p).ecn, Ecn::Ect);
    }

    /// Not-ECT packets are never marked and are dropped only when the buffer is full.
    #[test]
    fn not_ect_is_queued_above_k_and_dropped_only_at_the_limit() {
        let mut b = Bench::new(2);
        let mut q = Step::new(4, 1, None);
        let ids: Vec<_> = (0..6).map(|i| pk(&mut b, i, Ecn::NotEct)).collect();
        for (i, &p) in ids.iter().enumerate() {
            let (ok, drops) = b.offer(&mut q, p);
            assert_eq!(ok, i < 4);
            if i >= 4 {
                assert_eq!(drops, vec![(p, DropReason::Overflow)]);
            }
            assert_eq!(b.pkts.get(p).ecn, Ecn::NotEct);
        }
    }

    /// L4S-style step on sojourn: an ECT packet leaving after more than k_us is marked.
    #[test]
    fn sojourn_above_k_us_marks_at_dequeue() {
        let mut b = Bench::new(3);
        let mut q = Step::new(100, 100, Some(500.0));
        let early = pk(&mut b, 0, Ecn::Ect);
        let late = pk(&mut b, 1, Ecn::Ect);
        b.pkts.get_mut(early).enq_ns = 0;
        b.pkts.get_mut(late).enq_ns = 600_000;
        b.offer(&mut q, early);
        b.offer(&mut q, late);
        b.now = 1_000_000;
        assert_eq!(b.take(&mut q), Some(early));
        assert_eq!(b.pkts.get(early).ecn, Ecn::Ce, "1000 us > 500 us");
        assert_eq!(b.take(&mut q), Some(late));
        assert_eq!(b.pkts.get(late).ecn, Ecn::Ect, "400 us <= 500 us");
    }

    /// Randomised: FIFO order; occupancy never above the limit; a packet is dropped iff the
    /// buffer was full at its arrival; an ECT packet leaves CE iff it arrived to K or more
    /// packets or stayed longer than k_us; a not-ECT packet is never marked.
    #[test]
    fn marking_and_dropping_follow_the_step_rule_under_random_workload() {
        let mut b = Bench::new(4);
        let mut rng = Rng::stream(7, "step-test");
        let (limit, k, k_us) = (12usize, 5usize, 300.0);
        let mut q = Step::new(limit, k, Some(k_us));
        // Per queued packet: (seq, ECT, occupancy at arrival, arrival time).
        let mut shadow = std::collections::VecDeque::new();
        let (mut marked, mut dropped, mut served, mut t) = (0, 0, 0, 0u64);
        for seq in 0..20_000u32 {
            t += rng.below(60_000);
            b.now = t;
            if rng.uniform() < 0.55 {
                let ect = rng.uniform() < 0.7;
                let p = pk(&mut b, seq, if ect { Ecn::Ect } else { Ecn::NotEct });
                b.pkts.get_mut(p).enq_ns = t;
                let full = q.len_pkts() >= limit;
                let (ok, drops) = b.offer(&mut q, p);
                assert_eq!(ok, !full);
                if full {
                    assert_eq!(drops, vec![(p, DropReason::Overflow)]);
                    b.pkts.free(p);
                    dropped += 1;
                } else {
                    shadow.push_back((seq, ect, q.len_pkts() - 1, t));
                }
            } else if let Some(p) = b.take(&mut q) {
                let (seq, ect, occ, at) = shadow.pop_front().expect("shadow holds it");
                let pkt = b.pkts.get(p);
                assert_eq!(pkt.seq, seq, "FIFO order");
                let want = if !ect {
                    Ecn::NotEct
                } else if occ >= k || (t - at) as f64 > k_us * 1e3 {
                    Ecn::Ce
                } else {
                    Ecn::Ect
                };
                assert_eq!(pkt.ecn, want, "seq {seq}: occupancy {occ}, sojourn {} ns", t - at);
                marked += (want == Ecn::Ce) as u32;
                served += 1;
                b.pkts.free(p);
            }
            assert!(q.len_pkts() <= limit);
        }
        assert!(marked > 500 && dropped > 50 && served > 5000, "{marked} {dropped} {served}");
    }

    #[test]
    fn spec_defaults_and_checks_name_the_field() {
        let s: StepSpec = toml::from_str(StepSpec::MINIMAL).unwrap();
        assert_eq!((s.limit_pkts, s.k_pkts, s.k_us), (100, 20, None));
        s.check("q").unwrap();
        let e = StepSpec { k_pkts: 101, ..s.clone() }.check("q").unwrap_err().to_string();
        assert!(e.starts_with("q.k_pkts"), "{e}");
        let e = StepSpec { k_us: Some(0.0), ..s.clone() }.check("q").unwrap_err().to_string();
        assert!(e.starts_with("q.k_us"), "{e}");
        let e = StepSpec { limit_pkts: 0, ..s }.check("q").unwrap_err().to_string();
        assert!(e.starts_with("q.limit_pkts"), "{e}");
    }
}
