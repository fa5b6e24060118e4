//! The PI (proportional-integral) AQM controller of Hollot, Misra, Towsley & Gong 2001 ("On
//! Designing Improved Controllers for AQM Routers Supporting TCP Flows", INFOCOM 2001).
//!
//! The queue length is sampled at frequency `w` (period T = 1 / w) and the drop probability
//! updated by the paper's discrete-time PI law
//!
//! ```text
//! p(kT) = p((k-1)T) + a (q(kT) - q_ref) - b (q((k-1)T) - q_ref)
//! ```
//!
//! with the paper's design example as defaults: a = 1.822e-5, b = 1.816e-5, w = 160 Hz,
//! q_ref = 200 packets. Every arrival is then dropped (or, with `ecn`, ECN-marked if ECT)
//! with probability p.
//!
//! Readings we chose:
//! - q is the instantaneous queue length in packets (the paper's controller regulates the
//!   queue length, not an average);
//! - p is clipped to [0, 1] after every update and the clipped value is the one carried to
//!   the next update (the integrator does not wind up beyond the bounds);
//! - the controller starts from p = 0 and q((−1)T) = 0 (the queue starts empty), and the
//!   first sample is at T;
//! - the sampling is lazy: a discipline gets no timer events, so on each enqueue or dequeue,
//!   before the queue changes, every sample due at `kT <= now` is taken. The queue length
//!   only changes inside enqueue and dequeue, so the length seen then is exactly q(kT) for
//!   all those samples. Once the controller is at a fixed point (q unchanged since the last
//!   sample and p not moving), the remaining samples are skipped in one step;
//! - an arrival is dropped when a uniform draw falls below p (plain Bernoulli, no
//!   count-based spreading); ECN marks replace drops for ECT packets when `ecn` is on,
//!   not-ECT packets are dropped; both are reported as `DropReason::Early`; a full buffer
//!   (`limit_pkts`) tail-drops (`Overflow`).

use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::engine::Time;
use crate::net::PktId;

fn d_a() -> f64 {
    1.822e-5
}
fn d_b() -> f64 {
    1.816e-5
}
fn d_qref() -> f64 {
    200.0
}
fn d_hz() -> f64 {
    160.0
}

/// `type = "pi"`: the PI controller of Hollot et al. 2001 on a single FIFO.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PiSpec {
    /// Buffer size, packets (tail drop beyond it).
    pub limit_pkts: u32,
    /// Coefficient of the current queue error. Hollot et al. 2001 design example: 1.822e-5.
    #[serde(default = "d_a")]
    pub a: f64,
    /// Coefficient of the previous queue error. Hollot et al. 2001 design example: 1.816e-5.
    #[serde(default = "d_b")]
    pub b: f64,
    /// Queue length the controller regulates to, packets. Hollot et al. 2001: 200.
    #[serde(default = "d_qref")]
    pub q_ref_pkts: f64,
    /// Sampling frequency w, Hz. Hollot et al. 2001: 160 Hz.
    #[serde(default = "d_hz")]
    pub sample_hz: f64,
    /// Mark ECT packets instead of dropping them. Default off.
    #[serde(default)]
    pub ecn: bool,
}

impl DisciplineSpec for PiSpec {
    const MINIMAL: &'static str = "limit_pkts = 400";
    fn check(&self, field: &str) -> crate::Result<()> {
        let bad = |k: &str, msg: String| Err(crate::Error::input(format!("{field}.{k}"), msg));
        if self.limit_pkts == 0 {
            return bad("limit_pkts", "must be at least 1 packet".into());
        }
        for (k, v) in [("a", self.a), ("b", self.b)] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(k, format!("must be a non-negative number, got {v}"));
            }
        }
        if !(self.q_ref_pkts.is_finite() && self.q_ref_pkts >= 0.0) {
            return bad("q_ref_pkts", format!("must be a non-negative number of packets, got {}", self.q_ref_pkts));
        }
        if !(self.sample_hz.is_finite() && self.sample_hz > 0.0 && self.sample_hz <= 1e9) {
            return bad("sample_hz", format!("must be in (0, 1e9] Hz, got {}", self.sample_hz));
        }
        Ok(())
    }
    fn build(&self, _pkt_bytes: u32) -> Box<dyn super::Qdisc> {
        Box::new(Pi::new(PiParams {
            limit_pkts: self.limit_pkts as usize,
            a: self.a,
            b: self.b,
            q_ref: self.q_ref_pkts,
            period_ns: ((1e9 / self.sample_hz).round() as Time).max(1),
            ecn: self.ecn,
        }))
    }
}

#[derive(Clone, Debug)]
pub struct PiParams {
    pub limit_pkts: usize,
    pub a: f64,
    pub b: f64,
    pub q_ref: f64,
    /// Sampling period T, ns.
    pub period_ns: Time,
    pub ecn: bool,
}

pub struct Pi {
    q: Fifo,
    p: PiParams,
    prob: f64,
    /// q((k-1)T), packets.
    q_old: f64,
    next_sample: Time,
}

impl Pi {
    pub fn new(p: PiParams) -> Self {
        Pi { q: Fifo::with_capacity(p.limit_pkts.min(1 << 16)), prob: 0.0, q_old: 0.0, next_sample: p.period_ns, p }
    }
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// One sample: the PI law with the queue at `q` packets.
    fn sample(&mut self, q: f64) {
        let p = self.prob + self.p.a * (q - self.p.q_ref) - self.p.b * (self.q_old - self.p.q_ref);
        self.prob = p.clamp(0.0, 1.0);
        self.q_old = q;
    }

    /// Take every sample due at or before `now`.
    fn catch_up(&mut self, now: Time) {
        let q = self.q.len() as f64;
        while now >= self.next_sample {
            let before = (self.prob, self.q_old);
            self.sample(q);
            self.next_sample += self.p.period_ns;
            if before == (self.prob, self.q_old) && now >= self.next_sample {
                // Fixed point: every further sample until `now` changes nothing.
                let k = (now - self.next_sample) / self.p.period_ns + 1;
                self.next_sample += k * self.p.period_ns;
            }
        }
    }
}

impl Qdisc for Pi {
    fn kind(&self) -> &'static str {
        "pi"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        self.catch_up(cx.now);
        if self.q.len() >= self.p.limit_pkts {
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        if cx.rng.bernoulli(self.prob) && !(self.p.ecn && cx.mark(id)) {
            cx.drop(id, DropReason::Early);
            return false;
        }
        self.q.push(id, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        self.catch_up(cx.now);
        self.q.pop(cx.pkts)
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
    use crate::net::ClassMark;
    use crate::net::Ecn;

    const A: f64 = 1.822e-5;
    const B: f64 = 1.816e-5;
    /// 1 / 160 Hz.
    const T: Time = 6_250_000;

    fn pi(limit: usize, ecn: bool) -> Pi {
        let s: PiSpec = toml::from_str(&format!("limit_pkts = {limit}\necn = {ecn}")).unwrap();
        Pi::new(PiParams {
            limit_pkts: s.limit_pkts as usize,
            a: s.a,
            b: s.b,
            q_ref: s.q_ref_pkts,
            period_ns: (1e9 / s.sample_hz).round() as Time,
            ecn: s.ecn,
        })
    }

    /// Set the queue to `n` packets without the controller seeing arrivals.
    fn set_len(q: &mut Pi, b: &mut Bench, n: usize) {
        while q.q.len() < n {
            let p = b.pkt(1, 0, ClassMark::None, Ecn::NotEct);
            q.q.push(p, &b.pkts);
        }
        while q.q.len() > n {
            let p = q.q.pop(&b.pkts).unwrap();
            b.pkts.free(p);
        }
    }

    /// Let the sample at `k T` be taken, as an enqueue or dequeue at that instant would.
    fn tick(q: &mut Pi, b: &mut Bench, k: u64) {
        b.now = k * T;
        q.catch_up(b.now);
    }

    #[test]
    fn update_equation_on_a_queue_trace() {
        let mut b = Bench::new(1);
        let mut q = pi(1000, false);
        let trace = [
            0usize, 50, 150, 200, 260, 300, 350, 350, 350, 320, 280, 240, 200, 150, 120, 120, 180, 400, 600, 600, 600,
            500, 200, 100, 0, 0,
        ];
        let (mut p, mut old, mut max) = (0.0f64, 0.0f64, 0.0f64);
        for (k, &n) in trace.iter().enumerate() {
            set_len(&mut q, &mut b, n);
            // Just before the sample nothing changes.
            b.now = (k as u64 + 1) * T - 1;
            q.catch_up(b.now);
            assert_eq!(q.prob(), p, "sample {k} ran early");
            tick(&mut q, &mut b, k as u64 + 1);
            let x = n as f64;
            p = (p + A * (x - 200.0) - B * (old - 200.0)).clamp(0.0, 1.0);
            old = x;
            assert!((q.prob() - p).abs() < 1e-15, "sample {k}: got {}, want {p}", q.prob());
            if k == 0 {
                // From an empty queue: 0 + a (0 - 200) - b (0 - 200) < 0, clipped to 0.
                assert_eq!(q.prob(), 0.0);
            }
            max = max.max(p);
        }
        // The trace drove p up (to about 0.011 at 600 packets) and, with the queue back
        // below q_ref, well down again.
        assert!(max > 0.01, "max p {max}");
        assert!(q.prob() < max / 10.0);
    }

    #[test]
    fn p_stays_put_at_q_ref_and_rises_above_it() {
        let mut b = Bench::new(2);
        let mut q = pi(1000, false);
        // Hold the queue at q_ref from before the first sample. The first sample sees the
        // jump from q_old = 0: p = a * 0 - b * (0 - 200) = 200 b.
        set_len(&mut q, &mut b, 200);
        tick(&mut q, &mut b, 1);
        assert!((q.prob() - 200.0 * B).abs() < 1e-15);
        // From then on q = q_old = q_ref: p does not move, sample after sample.
        let p1 = q.prob();
        for k in 2..500 {
            tick(&mut q, &mut b, k);
            assert_eq!(q.prob(), p1, "sample {k}");
        }
        // A controller at rest (p = 0, q = q_old = q_ref) stays at exactly 0.
        q.prob = 0.0;
        for k in 500..1000 {
            tick(&mut q, &mut b, k);
            assert_eq!(q.prob(), 0.0);
        }
        // Above q_ref by 100: after the step, p grows by (a - b) * 100 = 6e-7 per sample.
        set_len(&mut q, &mut b, 300);
        tick(&mut q, &mut b, 1000);
        assert!((q.prob() - A * 100.0).abs() < 1e-15);
        let mut last = q.prob();
        for k in 1001..1100 {
            tick(&mut q, &mut b, k);
            assert!((q.prob() - last - (A - B) * 100.0).abs() < 1e-15, "sample {k}");
            last = q.prob();
        }
        // Below q_ref it falls again (and stops at 0).
        set_len(&mut q, &mut b, 100);
        tick(&mut q, &mut b, 1100);
        assert!(q.prob() < last);
        for k in 1101..2000 {
            tick(&mut q, &mut b, k);
        }
        assert_eq!(q.prob(), 0.0);
    }

    #[test]
    fn lazy_sampling_catches_up_exactly() {
        // One call long after a change takes every missed sample with the queue as it was:
        // the same p as sampling one by one.
        let mut b = Bench::new(3);
        let mut lazy = pi(1000, false);
        let mut eager = pi(1000, false);
        set_len(&mut lazy, &mut b, 350);
        set_len(&mut eager, &mut b, 350);
        for k in 1..=777 {
            tick(&mut eager, &mut b, k);
        }
        b.now = 777 * T + 5;
        lazy.catch_up(b.now);
        assert!((lazy.prob() - eager.prob()).abs() < 1e-12);
        assert!(lazy.prob() > 0.0);
        // Fixed point skip: q at 0 for a simulated hour costs no more than a few samples,
        // and lands on the same state.
        set_len(&mut lazy, &mut b, 0);
        b.now = 3600 * 1_000_000_000;
        lazy.catch_up(b.now);
        assert_eq!(lazy.prob(), 0.0);
        assert!(lazy.next_sample > b.now && lazy.next_sample <= b.now + T);
    }

    #[test]
    fn arrivals_dropped_with_probability_p() {
        let mut b = Bench::new(4);
        let mut q = pi(100_000, false);
        // Hold p near 0.3 by pushing updates far away.
        q.next_sample = Time::MAX;
        q.prob = 0.3;
        let n = 40_000;
        let mut dropped = 0;
        for _ in 0..n {
            let p = b.pkt(1, 0, ClassMark::None, Ecn::NotEct);
            let (ok, d) = b.offer(&mut q, p);
            if !ok {
                assert_eq!(d, vec![(p, DropReason::Early)]);
                dropped += 1;
            }
        }
        let f = dropped as f64 / n as f64;
        assert!((f - 0.3).abs() < 0.01, "drop fraction {f}");
        // ECN: ECT arrivals are marked instead; not-ECT still dropped.
        let mut q = pi(100_000, true);
        q.next_sample = Time::MAX;
        q.prob = 1.0;
        let e = b.pkt(1, 0, ClassMark::None, Ecn::Ect);
        let (ok, d) = b.offer(&mut q, e);
        assert!(ok && d.is_empty());
        assert_eq!(b.pkts.get(e).ecn, Ecn::Ce);
        let n = b.pkt(1, 0, ClassMark::None, Ecn::NotEct);
        let (ok, d) = b.offer(&mut q, n);
        assert!(!ok);
        assert_eq!(d, vec![(n, DropReason::Early)]);
        // A full buffer tail-drops.
        let mut q = pi(2, false);
        for _ in 0..2 {
            let p = b.pkt(1, 0, ClassMark::None, Ecn::NotEct);
            assert!(b.offer(&mut q, p).0);
        }
        let p = b.pkt(1, 0, ClassMark::None, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, p), (false, vec![(p, DropReason::Overflow)]));
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: PiSpec = toml::from_str("limit_pkts = 800").unwrap();
        assert_eq!((s.a, s.b, s.q_ref_pkts, s.sample_hz, s.ecn), (1.822e-5, 1.816e-5, 200.0, 160.0, false));
        assert!(s.check("q").is_ok());
        assert!(toml::from_str::<PiSpec>("").is_err());
        assert!(toml::from_str::<PiSpec>("limit_pkts = 1\nqref = 3").is_err());
        let bad = PiSpec { sample_hz: 0.0, ..s.clone() };
        assert!(matches!(bad.check("q"), Err(crate::Error::Input { field, .. }) if field == "q.sample_hz"));
        let bad = PiSpec { a: -1.0, ..s.clone() };
        assert!(matches!(bad.check("q"), Err(crate::Error::Input { field, .. }) if field == "q.a"));
        assert_eq!(s.build(1500).kind(), "pi");
    }
}
