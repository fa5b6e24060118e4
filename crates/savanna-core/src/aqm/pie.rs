//! PIE, "Proportional Integral controller Enhanced" (Pan, Natarajan, Baker & White,
//! RFC 8033), written from the RFC's sections 4 and 5.
//!
//! Every `t_update` the drop probability is updated from the queueing delay:
//! `p += alpha (qdelay - target) + beta (qdelay - qdelay_old)` (delays in seconds, alpha and
//! beta in Hz), where the increment is first scaled down while the probability is small
//! (the RFC's auto-tuning table: divided by 2048 below 0.000001, 512 below 0.00001, 128
//! below 0.0001, 32 below 0.001, 8 below 0.01, 2 below 0.1); then the probability decays by
//! 2% when both the current and the previous delay are zero, and is bounded to [0, 1].
//! Arrivals are dropped with probability `p` (when the queue holds `limit_pkts` packets
//! they are tail-dropped).
//!
//! Readings we chose:
//! - queueing delay by timestamps (RFC 8033 section 4.3 allows it in place of the
//!   departure-rate estimate): `qdelay` is the sojourn time (`now - Packet.enq_ns`) of the
//!   last packet dequeued, and 0 when that dequeue left the queue empty or the queue was
//!   found empty (as Linux `sch_pie` does in timestamp mode);
//! - the update is lazy: a discipline gets no timer events, so on each enqueue or dequeue,
//!   before anything else, every update due at `k t_update <= now` is run in turn with the
//!   delay sample current at that time (no dequeue happened in between, so that is the last
//!   one taken); long idle periods are skipped in one step once the state is at rest;
//! - burst allowance (section 4.4): starts at `max_burst`, is lowered by `t_update` at each
//!   update (floored at 0), and is reset to `max_burst` on an arrival that finds
//!   `p == 0` and both the current and the previous delay below target/2; no early drop
//!   while it is positive;
//! - the work-conserving safeguard of the RFC's `drop_early`: no early drop when
//!   `qdelay_old < target/2` and `p < 0.2`, or when at most two mean packets
//!   (`2 * mean_pkt_bytes`) are queued;
//! - cap drop adjustment (section 5.5, on by default as in Linux): once `p >= 0.1`, one
//!   update raises it by at most 0.02;
//! - de-randomization (section 5.4) is optional (`derandomize`, default off as in Linux):
//!   `accu_prob` accumulates `p` at each arrival considered; no drop while it is below 0.85,
//!   always a drop at 8.5 or above, a random drop in between; it is reset on every drop;
//! - ECN (section 5.1): with `ecn`, an ECT arrival chosen for an early drop is marked CE
//!   instead when `p <= mark_ecnth` (default 10%); above it, or for not-ECT packets, it is
//!   dropped;
//! - PIE is always active (the optional active/inactive switch of section 5.3 is not
//!   used), drops are per packet, not scaled by size, and Linux's extra +2% per update
//!   when the delay exceeds 250 ms is not applied;
//! - early drops are reported as `DropReason::Early`, tail drops as `Overflow`.

use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::aqm::codel::ms_to_ns;
use crate::engine::Time;
use crate::net::PktId;

fn d_limit() -> u32 {
    1000
}
fn d_target() -> f64 {
    15.0
}
fn d_tupdate() -> f64 {
    15.0
}
fn d_alpha() -> f64 {
    0.125
}
fn d_beta() -> f64 {
    1.25
}
fn d_burst() -> f64 {
    150.0
}
fn d_ecnth() -> f64 {
    0.1
}
fn t() -> bool {
    true
}

/// `type = "pie"`: PIE (RFC 8033) on a single FIFO.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieSpec {
    /// Buffer size, packets. Default 1000 (Linux `sch_pie`; RFC 8033 leaves it open).
    #[serde(default = "d_limit")]
    pub limit_pkts: u32,
    /// Target queueing delay QDELAY_REF, ms. RFC 8033 section 4.2: 15 ms.
    #[serde(default = "d_target")]
    pub target_ms: f64,
    /// Update period T_UPDATE, ms. RFC 8033 section 4.2: 15 ms.
    #[serde(default = "d_tupdate")]
    pub t_update_ms: f64,
    /// Weight of the delay error, Hz. RFC 8033 section 4.2: 0.125.
    #[serde(default = "d_alpha")]
    pub alpha: f64,
    /// Weight of the delay trend, Hz. RFC 8033 section 4.2: 1.25.
    #[serde(default = "d_beta")]
    pub beta: f64,
    /// Burst allowance MAX_BURST, ms. RFC 8033 section 4.4: 150 ms.
    #[serde(default = "d_burst")]
    pub max_burst_ms: f64,
    /// Mark ECT packets instead of early drops while p <= mark_ecnth. Default off.
    #[serde(default)]
    pub ecn: bool,
    /// ECN marking threshold on p. RFC 8033 section 5.1: 10%.
    #[serde(default = "d_ecnth")]
    pub mark_ecnth: f64,
    /// Cap drop adjustment (RFC 8033 section 5.5): at most +0.02 per update once p >= 0.1.
    /// Default on (Linux).
    #[serde(default = "t")]
    pub cap_drop_adjustment: bool,
    /// De-randomization (RFC 8033 section 5.4). Default off (Linux).
    #[serde(default)]
    pub derandomize: bool,
    /// MEAN_PKTSIZE of the safeguard, bytes; defaults to packet_bytes.
    #[serde(default)]
    pub mean_pkt_bytes: Option<f64>,
}

impl DisciplineSpec for PieSpec {
    const MINIMAL: &'static str = "";
    fn check(&self, field: &str) -> crate::Result<()> {
        let bad = |k: &str, msg: String| Err(crate::Error::input(format!("{field}.{k}"), msg));
        if self.limit_pkts == 0 {
            return bad("limit_pkts", "must be at least 1 packet".into());
        }
        for (k, v) in [("target_ms", self.target_ms), ("t_update_ms", self.t_update_ms)] {
            if !(v.is_finite() && v > 0.0) {
                return bad(k, format!("must be a positive number of ms, got {v}"));
            }
        }
        if !(self.max_burst_ms.is_finite() && self.max_burst_ms >= 0.0) {
            return bad("max_burst_ms", format!("must be a non-negative number of ms, got {}", self.max_burst_ms));
        }
        for (k, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(k, format!("must be a non-negative number (Hz), got {v}"));
            }
        }
        if !(0.0..=1.0).contains(&self.mark_ecnth) {
            return bad("mark_ecnth", format!("must be in [0, 1], got {}", self.mark_ecnth));
        }
        if let Some(m) = self.mean_pkt_bytes {
            if !(m.is_finite() && m > 0.0) {
                return bad("mean_pkt_bytes", format!("must be a positive number of bytes, got {m}"));
            }
        }
        Ok(())
    }
    fn build(&self, pkt_bytes: u32) -> Box<dyn super::Qdisc> {
        Box::new(Pie::new(self.params(pkt_bytes)))
    }
}

impl PieSpec {
    /// The controller's parameters (also FQ-PIE's, per flow queue).
    pub fn params(&self, pkt_bytes: u32) -> PieParams {
        PieParams {
            limit_pkts: self.limit_pkts as usize,
            target_ns: ms_to_ns(self.target_ms),
            t_update_ns: ms_to_ns(self.t_update_ms).max(1),
            alpha: self.alpha,
            beta: self.beta,
            max_burst_ns: ms_to_ns(self.max_burst_ms),
            ecn: self.ecn,
            mark_ecnth: self.mark_ecnth,
            cap_drop_adjustment: self.cap_drop_adjustment,
            derandomize: self.derandomize,
            mean_pkt_bytes: self.mean_pkt_bytes.unwrap_or(pkt_bytes as f64),
        }
    }
}

#[derive(Clone, Debug)]
pub struct PieParams {
    pub limit_pkts: usize,
    pub target_ns: Time,
    pub t_update_ns: Time,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst_ns: Time,
    pub ecn: bool,
    pub mark_ecnth: f64,
    pub cap_drop_adjustment: bool,
    pub derandomize: bool,
    pub mean_pkt_bytes: f64,
}

/// PIE's controller for one queue: the drop probability and what updates it. `Pie` runs
/// one on its FIFO; `fq_pie.rs` runs one per flow queue.
#[derive(Clone, Debug)]
pub struct PieState {
    /// Drop probability.
    drop_prob: f64,
    /// Latest queueing delay sample, ns.
    qdelay: Time,
    /// The sample used at the previous update, ns.
    qdelay_old: Time,
    burst_allowance: Time,
    next_update: Time,
    accu_prob: f64,
}

pub struct Pie {
    q: Fifo,
    p: PieParams,
    st: PieState,
}

/// The RFC's auto-tuning: the increment is scaled down while p is small.
#[inline]
fn scale(p: f64) -> f64 {
    if p < 0.000001 {
        1.0 / 2048.0
    } else if p < 0.00001 {
        1.0 / 512.0
    } else if p < 0.0001 {
        1.0 / 128.0
    } else if p < 0.001 {
        1.0 / 32.0
    } else if p < 0.01 {
        1.0 / 8.0
    } else if p < 0.1 {
        1.0 / 2.0
    } else {
        1.0
    }
}

impl PieState {
    pub fn new(p: &PieParams) -> Self {
        PieState {
            drop_prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_allowance: p.max_burst_ns,
            next_update: p.t_update_ns,
            accu_prob: 0.0,
        }
    }
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }
    pub fn burst_allowance_ns(&self) -> Time {
        self.burst_allowance
    }

    /// One periodic update (RFC `calculate_drop_prob`).
    fn update(&mut self, p: &PieParams) {
        let cur = self.qdelay as f64 * 1e-9;
        let old = self.qdelay_old as f64 * 1e-9;
        let target = p.target_ns as f64 * 1e-9;
        let mut delta = (p.alpha * (cur - target) + p.beta * (cur - old)) * scale(self.drop_prob);
        if p.cap_drop_adjustment && self.drop_prob >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        self.drop_prob += delta;
        if self.qdelay == 0 && self.qdelay_old == 0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.qdelay_old = self.qdelay;
        self.burst_allowance = self.burst_allowance.saturating_sub(p.t_update_ns);
    }

    /// Run every update due at or before `now`.
    pub fn catch_up(&mut self, p: &PieParams, now: Time) {
        while now >= self.next_update {
            // At rest (p = 0, no delay now or before), updates only run the burst
            // allowance down: skip the remaining ones in one step.
            if self.drop_prob == 0.0 && self.qdelay == 0 && self.qdelay_old == 0 {
                let k = (now - self.next_update) / p.t_update_ns + 1;
                self.burst_allowance = self.burst_allowance.saturating_sub(k.saturating_mul(p.t_update_ns));
                self.next_update += k * p.t_update_ns;
                return;
            }
            self.update(p);
            self.next_update += p.t_update_ns;
        }
    }

    /// RFC `drop_early`: should this arrival be dropped (or marked)? `backlog` is the
    /// bytes queued in this controller's queue.
    fn drop_early(&mut self, p: &PieParams, backlog: u64, cx: &mut QCtx) -> bool {
        let half = p.target_ns / 2;
        if (self.qdelay_old < half && self.drop_prob < 0.2) || (backlog as f64) <= 2.0 * p.mean_pkt_bytes {
            return false;
        }
        if p.derandomize {
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        cx.rng.bernoulli(self.drop_prob)
    }

    /// An arrival was tail-dropped (the buffer was full): de-randomization starts over.
    pub fn overflowed(&mut self) {
        self.accu_prob = 0.0;
    }

    /// The arrival `id` meets the controller (after `catch_up` and the buffer check): reset
    /// the burst allowance if congestion has cleared, then drop it early (reported as
    /// `Early`, returning false) or mark it, as the RFC says. `backlog` is the bytes queued.
    pub fn admit(&mut self, p: &PieParams, backlog: u64, id: PktId, cx: &mut QCtx) -> bool {
        let half = p.target_ns / 2;
        if self.drop_prob == 0.0 && self.qdelay < half && self.qdelay_old < half {
            self.burst_allowance = p.max_burst_ns;
        }
        if self.burst_allowance == 0
            && self.drop_early(p, backlog, cx)
            && !(p.ecn && self.drop_prob <= p.mark_ecnth && cx.mark(id))
        {
            self.accu_prob = 0.0;
            cx.drop(id, DropReason::Early);
            return false;
        }
        true
    }

    /// Take the delay sample of a dequeue: `got` left the queue, which `now_empty` says
    /// whether it emptied (0 then, as for a queue found empty).
    pub fn dequeued(&mut self, got: Option<PktId>, now_empty: bool, cx: &QCtx) {
        self.qdelay = match got {
            Some(id) if !now_empty => cx.now.saturating_sub(cx.pkts.get(id).enq_ns),
            _ => 0,
        };
    }
}

impl Pie {
    pub fn new(p: PieParams) -> Self {
        Pie { q: Fifo::with_capacity(p.limit_pkts.min(1 << 16)), st: PieState::new(&p), p }
    }
    pub fn drop_prob(&self) -> f64 {
        self.st.drop_prob()
    }
    pub fn burst_allowance_ns(&self) -> Time {
        self.st.burst_allowance_ns()
    }
}

impl Qdisc for Pie {
    fn kind(&self) -> &'static str {
        "pie"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        self.st.catch_up(&self.p, cx.now);
        if self.q.len() >= self.p.limit_pkts {
            self.st.overflowed();
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        if !self.st.admit(&self.p, self.q.bytes(), id, cx) {
            return false;
        }
        self.q.push(id, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        self.st.catch_up(&self.p, cx.now);
        let p = self.q.pop(cx.pkts);
        self.st.dequeued(p, self.q.is_empty(), cx);
        p
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

    const MS: Time = 1_000_000;

    fn spec() -> PieSpec {
        toml::from_str("").unwrap()
    }

    fn pie(s: &PieSpec) -> Pie {
        Pie::new(PieParams {
            limit_pkts: s.limit_pkts as usize,
            target_ns: ms_to_ns(s.target_ms),
            t_update_ns: ms_to_ns(s.t_update_ms),
            alpha: s.alpha,
            beta: s.beta,
            max_burst_ns: ms_to_ns(s.max_burst_ms),
            ecn: s.ecn,
            mark_ecnth: s.mark_ecnth,
            cap_drop_adjustment: s.cap_drop_adjustment,
            derandomize: s.derandomize,
            mean_pkt_bytes: 1500.0,
        })
    }

    fn put(b: &mut Bench, q: &mut Pie, enq: Time, ecn: Ecn) -> (PktId, bool, Vec<(PktId, DropReason)>) {
        let p = b.pkt(1, 0, ClassMark::None, ecn);
        b.pkts.get_mut(p).enq_ns = enq;
        let (ok, d) = b.offer(q, p);
        (p, ok, d)
    }

    /// The RFC's update, transcribed independently of `Pie::update` (no cap, no decay
    /// unless both delays are zero), delays in seconds.
    fn rfc_step(p: f64, cur: f64, old: f64) -> f64 {
        let mut d = 0.125 * (cur - 0.015) + 1.25 * (cur - old);
        d /= match p {
            x if x < 1e-6 => 2048.0,
            x if x < 1e-5 => 512.0,
            x if x < 1e-4 => 128.0,
            x if x < 1e-3 => 32.0,
            x if x < 1e-2 => 8.0,
            x if x < 0.1 => 2.0,
            _ => 1.0,
        };
        let mut p = p + d;
        if cur == 0.0 && old == 0.0 {
            p *= 0.98;
        }
        p.clamp(0.0, 1.0)
    }

    #[test]
    fn update_follows_the_rfc_formula_on_a_delay_trace() {
        let mut b = Bench::new(1);
        let mut q = pie(&PieSpec { cap_drop_adjustment: false, ..spec() });
        // Two packets queued (at most 2 MTU: the safeguard keeps the arrivals in).
        put(&mut b, &mut q, 0, Ecn::NotEct);
        put(&mut b, &mut q, 0, Ecn::NotEct);
        // Before each update instant k T, dequeue the head with a chosen sojourn time and
        // queue a replacement, so the delay sample at the update is exactly trace[k].
        let trace_ms = [
            30.0, 30.0, 45.0, 60.0, 60.0, 80.0, 100.0, 100.0, 100.0, 100.0, 50.0, 20.0, 10.0, 5.0, 5.0, 2.0, 2.0, 2.0,
            40.0, 200.0, 400.0, 400.0, 400.0, 400.0, 400.0, 400.0, 10.0, 10.0,
        ];
        let t_up = 15 * MS;
        let (mut p, mut old) = (0.0f64, 0.0f64);
        let mut ps = Vec::new();
        // Start at 1.5 s so that every timestamp is positive (the idle updates before are
        // skipped at rest).
        let base = 100 * t_up;
        for (k, &d) in trace_ms.iter().enumerate() {
            let t = base + (k as Time + 1) * t_up - 1000;
            b.now = t;
            let head = q.q.get(0).unwrap();
            b.pkts.get_mut(head).enq_ns = t - (d * 1e6) as Time;
            let out = b.take(&mut q).unwrap();
            b.pkts.free(out);
            let (_, ok, _) = put(&mut b, &mut q, t, Ecn::NotEct);
            assert!(ok);
            // Let the update at (k + 1) T run.
            b.now = base + (k as Time + 1) * t_up;
            let now = b.now;
            let (_, ok, _) = put(&mut b, &mut q, now, Ecn::NotEct);
            assert!(ok);
            let x = q.q.remove_at(2, &b.pkts).unwrap();
            b.pkts.free(x);
            let cur = d * 1e-3;
            let before = p;
            p = rfc_step(p, cur, old);
            assert!((q.drop_prob() - p).abs() <= 1e-12 * p.max(1e-9), "update {k}: got {}, want {p}", q.drop_prob());
            // Direction: up while the delay is above target and not falling fast.
            if cur > 0.015 && cur >= old {
                assert!(p > before || p == 1.0, "update {k} should raise p");
            }
            if cur < 0.015 && cur <= old {
                assert!(p < before || p == 0.0, "update {k} should lower p");
            }
            old = cur;
            ps.push(p);
        }
        // The first update: (0.125 * 0.015 + 1.25 * 0.030) / 2048.
        assert!((ps[0] - 0.039375 / 2048.0).abs() < 1e-15);
        // The trace drove p well into the unscaled range and back down.
        assert!(ps.iter().cloned().fold(0.0, f64::max) > 0.1);
        assert!(*ps.last().unwrap() < ps[25]);
    }

    #[test]
    fn cap_and_idle_decay() {
        let mut b = Bench::new(2);
        let mut q = pie(&spec());
        // p = 0.3 with a huge delay sample: the increment is capped at 0.02.
        q.st.drop_prob = 0.3;
        q.st.qdelay = 500 * MS;
        q.st.qdelay_old = 500 * MS;
        b.now = 15 * MS;
        b.take(&mut q);
        assert!((q.drop_prob() - 0.32).abs() < 1e-12);
        // Queue empty since: every update sees zero delay and decays p by 2%.
        let mut want = 0.32;
        // Update at 30 ms: cur 0, old 0.5 s.
        want += 0.125 * (0.0 - 0.015) + 1.25 * (0.0 - 0.5);
        want = f64::max(want, 0.0);
        b.now = 30 * MS;
        b.take(&mut q);
        assert!((q.drop_prob() - want).abs() < 1e-12, "{} vs {want}", q.drop_prob());
        // Set p back up and watch the decay over 10 idle updates (one call catches up).
        q.st.drop_prob = 0.5;
        let mut want = 0.5f64;
        for _ in 0..10 {
            want = ((want - 0.125 * 0.015 * scale(want)) * 0.98).max(0.0);
        }
        b.now = 180 * MS;
        b.take(&mut q);
        assert!((q.drop_prob() - want).abs() < 1e-12, "{} vs {want}", q.drop_prob());
    }

    /// From `t0` (a multiple of t_update, so the allowance starts at a tick), keep 50
    /// packets queued that are all `age` old, serve one per ms and top the queue up;
    /// returns (time since t0, burst allowance left) of every early drop before t0 + `until`.
    fn run_congested(q: &mut Pie, b: &mut Bench, age: Time, until: Time) -> Vec<(Time, Time)> {
        let t0 = 1050 * MS;
        b.now = t0;
        for _ in 0..50 {
            put(b, q, t0 - age, Ecn::NotEct);
        }
        let mut drops = Vec::new();
        let mut t = t0 + MS;
        while t < t0 + until {
            b.now = t;
            let ids: Vec<PktId> = q.q.iter().copied().collect();
            for id in ids {
                b.pkts.get_mut(id).enq_ns = t - age;
            }
            if let Some(p) = b.take(q) {
                b.pkts.free(p);
            }
            while q.len_pkts() < 50 {
                let (p, ok, d) = put(b, q, t - age, Ecn::NotEct);
                if !ok {
                    assert_eq!(d, vec![(p, DropReason::Early)]);
                    drops.push((t - t0, q.burst_allowance_ns()));
                    b.pkts.free(p);
                }
            }
            t += MS;
        }
        drops
    }

    #[test]
    fn burst_allowance_suppresses_early_drops_at_start() {
        // A standing queue with 1 s of delay: p rises from the first update on (to 0.22 by
        // 150 ms: 0.0007, 0.0045, 0.02, 0.08, 0.14, then +0.02 per update under the cap),
        // but the 150 ms allowance, lowered 15 ms per update, holds back every early drop
        // until the 10th update.
        let mut b = Bench::new(3);
        let mut q = pie(&spec());
        let drops = run_congested(&mut q, &mut b, 1000 * MS, 150 * MS);
        assert!(drops.is_empty(), "drops during the burst allowance: {drops:?}");
        assert!(q.drop_prob() > 0.2, "p = {}", q.drop_prob());
        assert_eq!(q.burst_allowance_ns(), 15 * MS);
        let mut b = Bench::new(3);
        let mut q = pie(&spec());
        let drops = run_congested(&mut q, &mut b, 1000 * MS, 400 * MS);
        assert!(drops.len() > 50);
        // The first arrival at or after 150 ms meets p ~ 0.24: drops start within a few ms.
        assert!((150 * MS..160 * MS).contains(&drops[0].0), "first drop at {}", drops[0].0);
        assert!(drops.iter().all(|&(_, allowance)| allowance == 0));
        // Without an allowance the same load is dropped as soon as p is sizeable (p is
        // about 0.02 after the third update at 45 ms and 0.08 after the fourth).
        let mut b = Bench::new(3);
        let mut q = pie(&PieSpec { max_burst_ms: 0.0, ..spec() });
        let drops = run_congested(&mut q, &mut b, 1000 * MS, 150 * MS);
        assert!(drops.len() > 5 && drops[0].0 < 100 * MS, "{:?}", drops.first());
    }

    #[test]
    fn burst_allowance_resets_when_congestion_clears() {
        let mut b = Bench::new(4);
        let mut q = pie(&spec());
        q.st.burst_allowance = 0;
        // An empty queue: delays 0, p 0: the next arrival restores the allowance.
        b.now = 100 * MS;
        let now = b.now;
        put(&mut b, &mut q, now, Ecn::NotEct);
        assert_eq!(q.burst_allowance_ns(), 150 * MS);
    }

    #[test]
    fn drop_fraction_and_ecn() {
        // Hold p (updates pushed out of reach by a huge t_update) and offer arrivals to a
        // queue of 10 packets (the safeguard's conditions off).
        let mut b = Bench::new(5);
        let mut q = pie(&PieSpec { t_update_ms: 1e9, ..spec() });
        q.st.burst_allowance = 0;
        q.st.drop_prob = 0.25;
        q.st.qdelay_old = 100 * MS;
        for _ in 0..10 {
            q.q.push(b.pkt(1, 0, ClassMark::None, Ecn::NotEct), &b.pkts);
        }
        let n = 40_000;
        let mut dropped = 0;
        for _ in 0..n {
            let (p, ok, _) = put(&mut b, &mut q, 0, Ecn::NotEct);
            if ok {
                let x = q.q.remove_at(10, &b.pkts).unwrap();
                assert_eq!(x, p);
            } else {
                dropped += 1;
            }
            b.pkts.free(p);
        }
        let f = dropped as f64 / n as f64;
        assert!((f - 0.25).abs() < 0.01, "drop fraction {f}");
        // With ECN and p <= 10%, ECT packets are marked, not dropped; above 10% dropped.
        let mut q = pie(&PieSpec { t_update_ms: 1e9, ecn: true, ..spec() });
        q.st.burst_allowance = 0;
        q.st.drop_prob = 0.1;
        q.st.qdelay_old = 100 * MS;
        for _ in 0..10 {
            q.q.push(b.pkt(1, 0, ClassMark::None, Ecn::NotEct), &b.pkts);
        }
        let mut marks = 0;
        for _ in 0..2000 {
            let (p, ok, d) = put(&mut b, &mut q, 0, Ecn::Ect);
            assert!(ok && d.is_empty());
            marks += (b.pkts.get(p).ecn == Ecn::Ce) as u32;
            q.q.remove_at(10, &b.pkts);
        }
        assert!((150..250).contains(&marks), "marks {marks}");
        q.st.drop_prob = 0.5;
        let mut drops = 0;
        for _ in 0..2000 {
            let (_, ok, _) = put(&mut b, &mut q, 0, Ecn::Ect);
            if ok {
                q.q.remove_at(10, &b.pkts);
            } else {
                drops += 1;
            }
        }
        assert!((900..1100).contains(&drops), "drops {drops}");
    }

    #[test]
    fn derandomized_drops_are_spread() {
        let mut b = Bench::new(6);
        let mut q = pie(&PieSpec { t_update_ms: 1e9, derandomize: true, ..spec() });
        q.st.burst_allowance = 0;
        q.st.drop_prob = 0.1;
        q.st.qdelay_old = 100 * MS;
        for _ in 0..10 {
            q.q.push(b.pkt(1, 0, ClassMark::None, Ecn::NotEct), &b.pkts);
        }
        // accu_prob must reach 0.85 (9 arrivals) before a drop may happen, and a drop is
        // certain once it reaches 8.5: gaps between drops are within [9, 85] (86 allowing
        // for rounding in the sum).
        let mut last: Option<usize> = None;
        let mut gaps = Vec::new();
        for i in 0..20_000 {
            let (_, ok, _) = put(&mut b, &mut q, 0, Ecn::NotEct);
            if ok {
                q.q.remove_at(10, &b.pkts);
            } else {
                if let Some(l) = last {
                    gaps.push(i - l);
                }
                last = Some(i);
            }
        }
        assert!(gaps.len() > 100);
        assert!(gaps.iter().all(|&g| (9..=86).contains(&g)), "{:?}", (gaps.iter().min(), gaps.iter().max()));
    }

    #[test]
    fn tail_drop_at_limit() {
        let mut b = Bench::new(7);
        let mut q = pie(&PieSpec { limit_pkts: 3, ..spec() });
        for _ in 0..3 {
            assert!(put(&mut b, &mut q, 0, Ecn::NotEct).1);
        }
        let (p, ok, d) = put(&mut b, &mut q, 0, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(d, vec![(p, DropReason::Overflow)]);
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s = spec();
        assert_eq!(
            (s.limit_pkts, s.target_ms, s.t_update_ms, s.alpha, s.beta, s.max_burst_ms),
            (1000, 15.0, 15.0, 0.125, 1.25, 150.0)
        );
        assert_eq!(
            (s.ecn, s.mark_ecnth, s.cap_drop_adjustment, s.derandomize, s.mean_pkt_bytes),
            (false, 0.1, true, false, None)
        );
        assert!(s.check("q").is_ok());
        assert!(toml::from_str::<PieSpec>("qdelay_ref = 1").is_err());
        let bad = PieSpec { t_update_ms: 0.0, ..s.clone() };
        assert!(matches!(bad.check("q"), Err(crate::Error::Input { field, .. }) if field == "q.t_update_ms"));
        let bad = PieSpec { mark_ecnth: 2.0, ..s.clone() };
        assert!(matches!(bad.check("q"), Err(crate::Error::Input { field, .. }) if field == "q.mark_ecnth"));
        assert_eq!(s.build(1500).kind(), "pie");
    }
}
