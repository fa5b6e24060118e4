//! DualPI2, the DualQ Coupled AQM of RFC 9332 (De Schepper, Briscoe & White 2023) with the
//! PI2 base AQM of its Appendix A, as Linux `sch_dualpi2` runs it.
//!
//! Two FIFOs share one buffer: the L queue holds ECT(1) and CE packets (the L4S identifier,
//! RFC 9331; section 2.5.1.1 of RFC 9332), the C queue everything else. Every `t_update` the
//! PI2 controller moves the base probability `p'` by `alpha (q - target) + beta (q - q_old)`
//! (delays in seconds, gains in Hz), `q` being the C queue's head sojourn then; `p'` is kept
//! in [0, 1]. A C packet is dropped (not-ECT) or marked (ECT(0)) with `p_C = p'^2`; an L
//! packet is marked with `p_L = max(p'_L, p_CL)`, where `p_CL = k p'` is the coupled
//! probability and `p'_L` the L queue's native ramp on its own sojourn: 0 below
//! `l_min_th_us`, rising linearly to 1 over `l_range_us` (0: a step at `l_min_th_us`).
//! Both laws act at dequeue, as the RFC's pseudocode and Linux do.
//!
//! Readings we chose:
//! - the controller's delay is the C queue's head sojourn (RFC 9332 A.1 `cq.time()`; Linux
//!   takes the larger of both heads); updates run lazily at each dequeue, each with the C
//!   head of that instant (the head changes only by dequeue), idle periods skipped at rest;
//! - scheduler (section 4.2.2, either is allowed): `wrr` (default) is Linux's credit WRR,
//!   giving the C queue at least `c_weight` (10%, Linux) of the bytes when both are
//!   backlogged and the L queue the rest; `tsfifo` is the RFC's time-shifted FIFO, serving
//!   the L head unless the C head is older by more than `tshift_ms` (RFC: 2 target);
//! - the native ramp applies only when the L queue held more than one packet (RFC A.1's
//!   `Th_len` = 1 packet), so a lone packet is never marked for its own serialisation;
//! - overload (section 4.2.3): once `k p' > 1` (p_C beyond p_Cmax = 1/k^2), L packets are
//!   dropped with `p_C` as classic ones are (`drop_overload`, Linux's default), and C
//!   ECT(0) packets drawn by `p_C` are dropped, not marked; without `drop_overload` p' is
//!   capped at 1/k and the queues grow to the shared `limit_pkts` (tail drop);
//! - probabilistic drops are reported as `Early`, the shared limit's as `Overflow`; the
//!   sojourn of every packet dequeued is kept per queue in a fixed histogram (`sojourns`).

use super::codel::ms_to_ns;
use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::engine::Time;
use crate::error::Result;
use crate::net::{Ecn, PktId};
use crate::spec::{bad, non_negative, positive};

fn d_limit() -> u32 {
    10_000
}
fn d_target() -> f64 {
    15.0
}
fn d_tupdate() -> f64 {
    16.0
}
fn d_alpha() -> f64 {
    0.16
}
fn d_beta() -> f64 {
    3.2
}
fn d_k() -> f64 {
    2.0
}
fn d_min_th() -> f64 {
    800.0
}
fn d_range() -> f64 {
    400.0
}
fn d_cw() -> f64 {
    0.1
}
fn t() -> bool {
    true
}

/// Which queue the scheduler serves when both hold packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Dualq {
    /// Linux's credit-based weighted round robin (`c_weight` of the bytes to C).
    #[default]
    Wrr,
    /// RFC 9332's time-shifted FIFO.
    Tsfifo,
}

/// `type = "dualpi2"`: RFC 9332's coupled L4S and classic queues.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DualPi2Spec {
    /// Shared buffer of both queues, packets. Default 10000 (Linux `sch_dualpi2`).
    #[serde(default = "d_limit")]
    pub limit_pkts: u32,
    /// PI2 target delay, ms. Default 15 (RFC 9332 A.1, Linux).
    #[serde(default = "d_target")]
    pub target_ms: f64,
    /// PI2 update period, ms. Default 16 (Linux; RFC 9332 A.1 derives ~15 from RTT_max).
    #[serde(default = "d_tupdate")]
    pub t_update_ms: f64,
    /// Integral gain, Hz. Default 0.16 (Linux).
    #[serde(default = "d_alpha")]
    pub alpha: f64,
    /// Proportional gain, Hz. Default 3.2 (Linux).
    #[serde(default = "d_beta")]
    pub beta: f64,
    /// Coupling factor k: p_CL = k p'. Default 2 (RFC 9332 section 2.4, Linux).
    #[serde(default = "d_k")]
    pub k: f64,
    /// Start of the L queue's native ramp, microseconds of sojourn. Default 800 (RFC 9332 A.1).
    #[serde(default = "d_min_th")]
    pub l_min_th_us: f64,
    /// Width of the ramp, microseconds; 0 makes it a step at `l_min_th_us` (Linux: a 1 ms
    /// step). Default 400 (RFC 9332 A.1).
    #[serde(default = "d_range")]
    pub l_range_us: f64,
    /// Scheduler between the queues: "wrr" (default, Linux) or "tsfifo" (RFC 9332 A.1).
    #[serde(default)]
    pub scheduler: Dualq,
    /// With "wrr": the C queue's share of the bytes when both queues are backlogged.
    /// Default 0.1 (Linux `c_protection` 10%).
    #[serde(default = "d_cw")]
    pub c_weight: f64,
    /// With "tsfifo": the time shift, ms. Default 2 target_ms (RFC 9332 A.1).
    #[serde(default)]
    pub tshift_ms: Option<f64>,
    /// Drop L packets with p_C on overload (k p' > 1) rather than let the queues grow.
    /// Default on (Linux `drop_overload`).
    #[serde(default = "t")]
    pub drop_overload: bool,
}

impl DisciplineSpec for DualPi2Spec {
    const MINIMAL: &'static str = "";
    fn check(&self, field: &str) -> Result<()> {
        if self.limit_pkts == 0 {
            return bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
        }
        positive(&format!("{field}.target_ms"), self.target_ms)?;
        positive(&format!("{field}.t_update_ms"), self.t_update_ms)?;
        non_negative(&format!("{field}.alpha"), self.alpha)?;
        non_negative(&format!("{field}.beta"), self.beta)?;
        positive(&format!("{field}.k"), self.k)?;
        non_negative(&format!("{field}.l_min_th_us"), self.l_min_th_us)?;
        non_negative(&format!("{field}.l_range_us"), self.l_range_us)?;
        if !(self.c_weight > 0.0 && self.c_weight < 1.0) {
            return bad(format!("{field}.c_weight"), format!("must be in (0, 1), got {}", self.c_weight));
        }
        if self.scheduler != Dualq::Wrr && self.c_weight != d_cw() {
            return bad(format!("{field}.c_weight"), "applies to scheduler = \"wrr\" only");
        }
        if let Some(s) = self.tshift_ms {
            if self.scheduler != Dualq::Tsfifo {
                return bad(format!("{field}.tshift_ms"), "applies to scheduler = \"tsfifo\" only");
            }
            non_negative(&format!("{field}.tshift_ms"), s)?;
        }
        Ok(())
    }
    fn build(&self, pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(DualPi2::new(self, pkt_bytes))
    }
}

/// Sojourn times of dequeued packets: 10 us bins up to 2 ms, then 500 us bins up to
/// 200 ms (the last bin holds everything beyond), for the L4S delay claims.
#[derive(Clone, Debug)]
pub struct SojournHist {
    bins: Vec<u64>,
    n: u64,
}

impl SojournHist {
    const FINE_NS: Time = 10_000;
    const FINE: usize = 200;
    const COARSE_NS: Time = 500_000;
    const BINS: usize = Self::FINE + 396;
    fn new() -> Self {
        SojournHist { bins: vec![0; Self::BINS], n: 0 }
    }
    #[inline]
    fn bin(ns: Time) -> usize {
        let fine_end = Self::FINE_NS * Self::FINE as Time;
        if ns < fine_end {
            (ns / Self::FINE_NS) as usize
        } else {
            (Self::FINE + ((ns - fine_end) / Self::COARSE_NS) as usize).min(Self::BINS - 1)
        }
    }
    /// Upper edge of bin `i`, ns.
    fn edge(i: usize) -> Time {
        if i < Self::FINE {
            (i as Time + 1) * Self::FINE_NS
        } else {
            Self::FINE_NS * Self::FINE as Time + (i - Self::FINE + 1) as Time * Self::COARSE_NS
        }
    }
    #[inline]
    fn add(&mut self, ns: Time) {
        self.bins[Self::bin(ns)] += 1;
        self.n += 1;
    }
    pub fn count(&self) -> u64 {
        self.n
    }
    /// An upper bound on the q-quantile, ns (the upper edge of its bin; `Time::MAX` if it
    /// lies in the last bin, beyond 199.5 ms).
    pub fn quantile_ns(&self, q: f64) -> Time {
        let want = (q * self.n as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, &c) in self.bins.iter().enumerate() {
            acc += c;
            if acc >= want {
                return if i == Self::BINS - 1 { Time::MAX } else { Self::edge(i) };
            }
        }
        0
    }
}

pub struct DualPi2 {
    l: Fifo,
    c: Fifo,
    limit: usize,
    target_ns: Time,
    t_update_ns: Time,
    alpha: f64,
    beta: f64,
    k: f64,
    min_th_ns: Time,
    range_ns: Time,
    sched: Dualq,
    /// WRR weights of C and L (sum 1) and the credit: serve L while it is <= 0.
    wc: f64,
    wl: f64,
    credit: f64,
    credit_init: f64,
    tshift_ns: Time,
    drop_overload: bool,
    /// The PI2 base probability p'.
    p: f64,
    /// The C queue delay at the previous update, ns.
    q_old: Time,
    next_update: Time,
    /// Sojourns of the packets served from the L and the C queue.
    pub sojourns: [SojournHist; 2],
}

impl DualPi2 {
    /// The two queues' sojourn quantiles for summary.json (upper bin edges in us; infinite
    /// beyond the histogram's last edge).
    pub fn sojourn_totals(&self) -> crate::metrics::DualPi2Sojourns {
        let us = |h: &SojournHist, q: f64| match h.quantile_ns(q) {
            Time::MAX => f64::INFINITY,
            t => t as f64 / 1e3,
        };
        let [l, c] = &self.sojourns;
        crate::metrics::DualPi2Sojourns {
            l_pkts: l.count(),
            l_p50_us: us(l, 0.5),
            l_p99_us: us(l, 0.99),
            c_pkts: c.count(),
            c_p50_us: us(c, 0.5),
            c_p99_us: us(c, 0.99),
        }
    }

    pub fn new(s: &DualPi2Spec, pkt_bytes: u32) -> Self {
        let cap = (s.limit_pkts as usize).min(1 << 16);
        let (wc, wl) = (s.c_weight, 1.0 - s.c_weight);
        // Start with the L queue when its weight is the larger (Linux).
        let credit_init = pkt_bytes as f64 * (wc - wl);
        DualPi2 {
            l: Fifo::with_capacity(cap),
            c: Fifo::with_capacity(cap),
            limit: s.limit_pkts as usize,
            target_ns: ms_to_ns(s.target_ms),
            t_update_ns: ms_to_ns(s.t_update_ms).max(1),
            alpha: s.alpha,
            beta: s.beta,
            k: s.k,
            min_th_ns: (s.l_min_th_us * 1e3).round() as Time,
            range_ns: (s.l_range_us * 1e3).round() as Time,
            sched: s.scheduler,
            wc,
            wl,
            credit: credit_init,
            credit_init,
            tshift_ns: ms_to_ns(s.tshift_ms.unwrap_or(2.0 * s.target_ms)),
            drop_overload: s.drop_overload,
            p: 0.0,
            q_old: 0,
            next_update: ms_to_ns(s.t_update_ms).max(1),
            sojourns: [SojournHist::new(), SojournHist::new()],
        }
    }
    /// The base probability p'.
    pub fn base_prob(&self) -> f64 {
        self.p
    }
    /// RFC 9332's classifier: ECT(1) and CE go to the L queue.
    #[inline]
    pub fn is_l4s(ecn: Ecn) -> bool {
        matches!(ecn, Ecn::Ect1 | Ecn::Ce)
    }
    /// The L queue's native ramp on a sojourn (RFC 9332 A.1 `laqm`).
    #[inline]
    fn ramp(&self, sojourn: Time) -> f64 {
        if sojourn <= self.min_th_ns {
            0.0
        } else if sojourn >= self.min_th_ns + self.range_ns {
            1.0
        } else {
            (sojourn - self.min_th_ns) as f64 / self.range_ns as f64
        }
    }
    /// One PI2 update with the C queue delay `q`, ns.
    fn update(&mut self, q: Time) {
        let s = |ns: Time| ns as f64 * 1e-9;
        let mut p = self.p + self.alpha * (s(q) - s(self.target_ns)) + self.beta * (s(q) - s(self.q_old));
        let cap = if self.drop_overload { 1.0 } else { (1.0 / self.k).min(1.0) };
        p = p.clamp(0.0, cap);
        self.p = p;
        self.q_old = q;
    }
    /// Run every update due at or before `now`; the C head is the same at each of them.
    fn catch_up(&mut self, now: Time, cx: &QCtx) {
        while now >= self.next_update {
            let head = self.c.get(0);
            if head.is_none() && self.p == 0.0 && self.q_old == 0 {
                // At rest: the remaining updates leave p' at 0.
                let n = (now - self.next_update) / self.t_update_ns + 1;
                self.next_update += n * self.t_update_ns;
                return;
            }
            let q = head.map_or(0, |h| self.next_update.saturating_sub(cx.pkts.get(h).enq_ns));
            self.update(q);
            self.next_update += self.t_update_ns;
        }
    }
    /// Which queue to serve: true for L.
    #[inline]
    fn pick_l(&self, cx: &QCtx) -> bool {
        match (self.l.get(0), self.c.get(0)) {
            (Some(_), None) => true,
            (None, _) => false,
            (Some(lh), Some(ch)) => match self.sched {
                Dualq::Wrr => self.credit <= 0.0,
                Dualq::Tsfifo => cx.pkts.get(lh).enq_ns <= cx.pkts.get(ch).enq_ns + self.tshift_ns,
            },
        }
    }
}

impl Qdisc for DualPi2 {
    fn kind(&self) -> &'static str {
        "dualpi2"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        if self.l.len() + self.c.len() >= self.limit {
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        let l4s = Self::is_l4s(cx.pkts.get(id).ecn);
        cx.pkts.get_mut(id).qmark = l4s as u8;
        if l4s {
            self.l.push(id, cx.pkts);
        } else {
            self.c.push(id, cx.pkts);
        }
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        self.catch_up(cx.now, cx);
        loop {
            if self.l.is_empty() && self.c.is_empty() {
                self.credit = self.credit_init;
                return None;
            }
            let overload = self.k * self.p > 1.0;
            if self.pick_l(cx) {
                let lone = self.l.len() == 1;
                let id = self.l.pop(cx.pkts).expect("L non-empty");
                let size = cx.pkts.get(id).size as f64;
                if !self.c.is_empty() {
                    self.credit += self.wc * size;
                }
                let sojourn = cx.now.saturating_sub(cx.pkts.get(id).enq_ns);
                if overload {
                    if cx.rng.uniform() < self.p * self.p {
                        cx.drop(id, DropReason::Early);
                        continue;
                    }
                    cx.mark(id);
                } else {
                    let native = if lone { 0.0 } else { self.ramp(sojourn) };
                    let p_l = native.max(self.k * self.p);
                    if p_l >= 1.0 || (p_l > 0.0 && cx.rng.uniform() < p_l) {
                        cx.mark(id);
                    }
                }
                self.sojourns[0].add(sojourn);
                return Some(id);
            }
            let id = self.c.pop(cx.pkts).expect("C non-empty");
            let size = cx.pkts.get(id).size as f64;
            if !self.l.is_empty() {
                self.credit -= self.wl * size;
            }
            if self.p > 0.0 && cx.rng.uniform() < self.p * self.p && (overload || !cx.mark(id)) {
                cx.drop(id, DropReason::Early);
                continue;
            }
            let sojourn = cx.now.saturating_sub(cx.pkts.get(id).enq_ns);
            self.sojourns[1].add(sojourn);
            return Some(id);
        }
    }
    fn len_pkts(&self) -> usize {
        self.l.len() + self.c.len()
    }
    fn len_bytes(&self) -> u64 {
        self.l.bytes() + self.c.bytes()
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testutil::Bench;
    use crate::engine::Rng;
    use crate::net::ClassMark;

    const US: Time = 1_000;
    const MS: Time = 1_000_000;

    fn spec(extra: &str) -> DualPi2Spec {
        toml::from_str(extra).unwrap()
    }
    fn q(extra: &str) -> DualPi2 {
        DualPi2::new(&spec(extra), 1500)
    }
    fn put(b: &mut Bench, q: &mut DualPi2, flow: u32, seq: u32, ecn: Ecn, enq: Time) -> PktId {
        let p = b.pkt(flow, seq, ClassMark::None, ecn);
        b.pkts.get_mut(p).enq_ns = enq;
        assert!(b.offer(q, p).0);
        p
    }

    #[test]
    fn rfc9332_classifier_puts_ect1_and_ce_in_l_and_the_rest_in_c() {
        let mut b = Bench::new(1);
        let mut d = q("");
        for (i, e) in [Ecn::NotEct, Ecn::Ect, Ecn::Ect1, Ecn::Ce].into_iter().enumerate() {
            put(&mut b, &mut d, i as u32, 0, e, 0);
        }
        assert_eq!((d.l.len(), d.c.len()), (2, 2));
        let ecn_of = |f: &Fifo, b: &Bench| f.iter().map(|&p| b.pkts.get(p).ecn).collect::<Vec<_>>();
        assert_eq!(ecn_of(&d.l, &b), [Ecn::Ect1, Ecn::Ce]);
        assert_eq!(ecn_of(&d.c, &b), [Ecn::NotEct, Ecn::Ect]);
    }

    /// RFC 9332 A.1: p' += alpha (q - target) + beta (q - q_old) every t_update, from the
    /// C queue's head sojourn at the update instant, and p' stays in [0, 1].
    #[test]
    fn pi2_update_follows_the_rfc_formula_on_the_c_head_sojourn() {
        let mut b = Bench::new(2);
        let mut d = q("");
        // A C packet queued at 0 stays the head: at update k (16k ms) its sojourn is 16k ms.
        put(&mut b, &mut d, 0, 0, Ecn::NotEct, 0);
        put(&mut b, &mut d, 0, 1, Ecn::NotEct, 0);
        let (mut p, mut old) = (0.0f64, 0.0f64);
        for k in 1..=6u64 {
            let qd = (16 * k) as f64 * 1e-3;
            p = (p + 0.16 * (qd - 0.015) + 3.2 * (qd - old)).clamp(0.0, 1.0);
            old = qd;
        }
        // Run the six updates lazily, at a dequeue of an L packet just after 96 ms.
        b.now = 96 * MS + 1;
        put(&mut b, &mut d, 9, 0, Ecn::Ect1, 96 * MS + 1);
        d.credit = -1e9; // serve L: the C head stays
        b.take(&mut d);
        assert!((d.base_prob() - p).abs() < 1e-12, "{} vs {p}", d.base_prob());
        assert!(p > 0.3 && p < 1.0, "a non-trivial trace: {p}");
        // An empty C queue drives p' down by alpha * target per update until 0, then rests.
        let mut b2 = Bench::new(3);
        let mut d2 = q("");
        d2.p = 0.01;
        b2.now = 10 * 16 * MS;
        assert_eq!(b2.take(&mut d2), None);
        assert!((d2.p - (0.01f64 - 10.0 * 0.16 * 0.015).max(0.0)).abs() < 1e-12, "{}", d2.p);
        assert_eq!(d2.next_update, 11 * 16 * MS);
    }

    fn fraction(d: &mut DualPi2, b: &mut Bench, ecn: Ecn, n: u32) -> (f64, f64) {
        let (mut marked, mut dropped) = (0, 0);
        for i in 0..n {
            b.now = 0;
            let p = put(b, d, 1, i, ecn, 0);
            let out = b.take(d);
            if out.is_none() {
                dropped += 1;
                b.pkts.free(p);
                continue;
            }
            if b.pkts.get(p).ecn == Ecn::Ce && ecn != Ecn::Ce {
                marked += 1;
            }
            b.pkts.free(p);
        }
        (marked as f64 / n as f64, dropped as f64 / n as f64)
    }

    fn near(x: f64, p: f64, n: u32) {
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        assert!((x - p).abs() < 5.0 * sd + 1e-12, "{x} vs {p} (sd {sd})");
    }

    /// RFC 9332 section 2.4: classic packets see p_C = p'^2 (dropped if not-ECT, marked if
    /// ECT(0)); L packets see the coupled p_CL = k p'.
    #[test]
    fn classic_sees_p_squared_and_l_sees_k_times_p() {
        let n = 40_000;
        let mut b = Bench::new(4);
        let mut d = q("");
        d.p = 0.3;
        d.next_update = Time::MAX;
        let (m, dr) = fraction(&mut d, &mut b, Ecn::NotEct, n);
        assert_eq!(m, 0.0);
        near(dr, 0.09, n);
        let (m, dr) = fraction(&mut d, &mut b, Ecn::Ect, n);
        assert_eq!(dr, 0.0);
        near(m, 0.09, n);
        let (m, dr) = fraction(&mut d, &mut b, Ecn::Ect1, n);
        assert_eq!(dr, 0.0);
        near(m, 0.6, n);
        let mut d3 = q("k = 3.0");
        d3.p = 0.1;
        d3.next_update = Time::MAX;
        let (m, _) = fraction(&mut d3, &mut b, Ecn::Ect1, n);
        near(m, 0.3, n);
    }

    /// RFC 9332 A.1 `laqm`: no native mark below min_th, certain above min_th + range,
    /// linear between; a step when range is 0; never for a packet alone in the L queue.
    #[test]
    fn l_native_ramp_marks_by_sojourn_and_spares_a_lone_packet() {
        let mut b = Bench::new(5);
        let mut d = q("");
        d.next_update = Time::MAX;
        let at = |d: &mut DualPi2, b: &mut Bench, sojourn: Time, n: u32| {
            let mut marked = 0;
            for i in 0..n {
                b.now = 10 * MS;
                let p = put(b, d, 1, 2 * i, Ecn::Ect1, 10 * MS - sojourn);
                let second = put(b, d, 1, 2 * i + 1, Ecn::Ect1, 10 * MS);
                assert_eq!(b.take(d), Some(p));
                marked += (b.pkts.get(p).ecn == Ecn::Ce) as u32;
                assert_eq!(b.take(d), Some(second));
                assert_eq!(b.pkts.get(second).ecn, Ecn::Ect1, "lone packet, zero sojourn");
                b.pkts.free(p);
                b.pkts.free(second);
            }
            marked as f64 / n as f64
        };
        assert_eq!(at(&mut d, &mut b, 800 * US, 200), 0.0);
        assert_eq!(at(&mut d, &mut b, 1200 * US, 200), 1.0);
        near(at(&mut d, &mut b, 1000 * US, 20_000), 0.5, 20_000);
        let mut s = q("l_range_us = 0.0\nl_min_th_us = 1000.0");
        s.next_update = Time::MAX;
        assert_eq!(at(&mut s, &mut b, 1000 * US, 100), 0.0);
        assert_eq!(at(&mut s, &mut b, 1001 * US, 100), 1.0);
        // A lone L packet is not marked however long it stayed.
        b.now = 20 * MS;
        let p = put(&mut b, &mut d, 1, 0, Ecn::Ect1, 0);
        assert_eq!(b.take(&mut d), Some(p));
        assert_eq!(b.pkts.get(p).ecn, Ecn::Ect1);
    }

    /// p_L = max(p'_L, p_CL): the coupled probability applies below the ramp.
    #[test]
    fn l_probability_is_the_larger_of_native_and_coupled() {
        let n = 20_000;
        let mut b = Bench::new(6);
        let mut d = q("");
        d.p = 0.2; // p_CL = 0.4
        d.next_update = Time::MAX;
        let mut marked = 0;
        for i in 0..n {
            b.now = 10 * MS;
            // Native 0.25 (900 us): the coupled 0.4 wins.
            let p = put(&mut b, &mut d, 1, 2 * i, Ecn::Ect1, 10 * MS - 900 * US);
            let x = put(&mut b, &mut d, 1, 2 * i + 1, Ecn::Ect1, 10 * MS);
            b.take(&mut d);
            b.take(&mut d);
            marked += (b.pkts.get(p).ecn == Ecn::Ce) as u32;
            b.pkts.free(p);
            b.pkts.free(x);
        }
        near(marked as f64 / n as f64, 0.4, n);
    }

    /// Linux's WRR: with both queues backlogged, C gets c_weight of the bytes.
    #[test]
    fn wrr_gives_the_c_queue_its_weight_when_both_are_backlogged() {
        let mut b = Bench::new(7);
        let mut d = q("c_weight = 0.25");
        d.next_update = Time::MAX;
        for i in 0..400 {
            put(&mut b, &mut d, 1, i, Ecn::Ect1, 0);
            put(&mut b, &mut d, 2, i, Ecn::NotEct, 0);
        }
        let mut from_c = 0;
        for _ in 0..400 {
            let p = b.take(&mut d).unwrap();
            from_c += (b.pkts.get(p).flow == 2) as u32;
        }
        assert_eq!(from_c, 100, "a quarter of 400 equal-size packets");
        // The first packet served is L's (its weight is the larger).
        let mut d2 = q("");
        let l = put(&mut b, &mut d2, 1, 0, Ecn::Ect1, 0);
        put(&mut b, &mut d2, 2, 0, Ecn::NotEct, 0);
        assert_eq!(b.take(&mut d2), Some(l));
    }

    /// RFC 9332 A.1 time-shifted FIFO: the L head goes first unless the C head arrived more
    /// than tshift earlier.
    #[test]
    fn time_shifted_fifo_serves_l_unless_c_is_older_by_tshift() {
        let mut b = Bench::new(8);
        let mut d = q("scheduler = \"tsfifo\"\ntshift_ms = 10.0");
        d.next_update = Time::MAX;
        let c = put(&mut b, &mut d, 2, 0, Ecn::NotEct, 0);
        let l1 = put(&mut b, &mut d, 1, 0, Ecn::Ect1, 10 * MS);
        let l2 = put(&mut b, &mut d, 1, 1, Ecn::Ect1, 10 * MS + 1);
        b.now = 20 * MS;
        assert_eq!(b.take(&mut d), Some(l1), "C older by exactly tshift: L first");
        assert_eq!(b.take(&mut d), Some(c), "C older by more than tshift");
        assert_eq!(b.take(&mut d), Some(l2));
    }

    #[test]
    fn the_limit_is_shared_by_both_queues() {
        let mut b = Bench::new(9);
        let mut d = q("limit_pkts = 3");
        put(&mut b, &mut d, 1, 0, Ecn::Ect1, 0);
        put(&mut b, &mut d, 2, 0, Ecn::NotEct, 0);
        put(&mut b, &mut d, 1, 1, Ecn::Ect1, 0);
        for e in [Ecn::NotEct, Ecn::Ect1] {
            let p = b.pkt(3, 0, ClassMark::None, e);
            assert_eq!(b.offer(&mut d, p), (false, vec![(p, DropReason::Overflow)]));
        }
    }

    /// RFC 9332 section 4.2.3: on overload (k p' > 1) L packets are dropped with p_C and
    /// classic ECT(0) packets drawn are dropped, not marked.
    #[test]
    fn overload_drops_l_packets_with_p_c_and_classic_ect_instead_of_marking() {
        let n = 20_000;
        let mut b = Bench::new(10);
        let mut d = q("");
        d.p = 0.7;
        d.next_update = Time::MAX;
        let (m, dr) = fraction(&mut d, &mut b, Ecn::Ect1, n);
        near(dr, 0.49, n);
        assert!((m + dr - 1.0).abs() < 1e-12, "survivors are all marked");
        let (m, dr) = fraction(&mut d, &mut b, Ecn::Ect, n);
        assert_eq!(m, 0.0);
        near(dr, 0.49, n);
        // Without drop_overload p' is capped at 1/k: L packets are marked, never dropped.
        let mut d2 = q("drop_overload = false");
        d2.p = 0.4;
        d2.update(100 * MS);
        assert_eq!(d2.p, 0.5);
        d2.next_update = Time::MAX;
        let (m, dr) = fraction(&mut d2, &mut b, Ecn::Ect1, 1000);
        assert_eq!((m, dr), (1.0, 0.0));
    }

    /// Randomised: each queue is FIFO, both together never exceed the limit, the L queue
    /// holds only ECT(1)/CE packets, a not-ECT packet is never marked, and every packet
    /// offered leaves exactly once (served or dropped).
    #[test]
    fn queues_stay_fifo_and_within_the_limit_under_random_workload() {
        let mut b = Bench::new(11);
        let mut rng = Rng::stream(13, "dualpi2-test");
        let limit = 20;
        let mut d = q("limit_pkts = 20\nt_update_ms = 1.0\ntarget_ms = 0.5");
        let mut next_seq = [0u32; 8];
        let mut last_out: [Option<u32>; 8] = [None; 8];
        let (mut offered, mut gone, mut served, mut marked) = (0u64, 0u64, 0u64, 0u64);
        let ecns = [Ecn::NotEct, Ecn::Ect, Ecn::Ect1, Ecn::Ect1];
        for step in 0..40_000u64 {
            b.now = step * 20 * US;
            if rng.uniform() < 0.6 {
                let flow = rng.below(8) as u32;
                let ecn = ecns[flow as usize % 4];
                let p = b.pkt(flow, next_seq[flow as usize], ClassMark::None, ecn);
                next_seq[flow as usize] += 1;
                b.pkts.get_mut(p).enq_ns = b.now;
                offered += 1;
                let (_, drops) = b.offer(&mut d, p);
                for (x, _) in drops {
                    gone += 1;
                    b.pkts.free(x);
                }
            } else {
                b.out.clear();
                let r = b.take(&mut d);
                for &(x, why) in &b.out.drops.clone() {
                    assert_eq!(why, DropReason::Early);
                    gone += 1;
                    b.pkts.free(x);
                }
                if let Some(p) = r {
                    let pk = *b.pkts.get(p);
                    let f = pk.flow as usize;
                    if let Some(prev) = last_out[f] {
                        assert!(pk.seq > prev, "flow {f} reordered");
                    }
                    last_out[f] = Some(pk.seq);
                    if pk.ecn == Ecn::Ce {
                        marked += 1;
                        assert_ne!(ecns[f % 4], Ecn::NotEct);
                    }
                    served += 1;
                    gone += 1;
                    b.pkts.free(p);
                }
            }
            assert!(d.len_pkts() <= limit);
            assert!(d.l.iter().all(|&p| DualPi2::is_l4s(b.pkts.get(p).ecn)));
            assert!(d.c.iter().all(|&p| !DualPi2::is_l4s(b.pkts.get(p).ecn)));
            assert!((0.0..=1.0).contains(&d.p));
            assert_eq!(offered, gone + d.len_pkts() as u64);
        }
        assert!(served > 10_000 && marked > 100, "{served} {marked}");
        assert_eq!(d.sojourns[0].count() + d.sojourns[1].count(), served);
    }

    #[test]
    fn sojourn_quantiles_are_upper_bin_edges() {
        let mut h = SojournHist::new();
        for us in [5, 15, 25, 1990, 2000, 2600, 300_000] {
            h.add(us * US);
        }
        let q: Vec<Time> = [0.1, 0.3, 0.5, 0.6, 0.75, 0.8, 1.0].iter().map(|&x| h.quantile_ns(x)).collect();
        assert_eq!(q, [10 * US, 30 * US, 2000 * US, 2500 * US, 3000 * US, 3000 * US, Time::MAX]);
        assert_eq!(h.count(), 7);
    }

    #[test]
    fn defaults_are_rfc9332_and_linux_values() {
        let s = spec("");
        assert_eq!(
            (s.limit_pkts, s.target_ms, s.t_update_ms, s.alpha, s.beta, s.k),
            (10_000, 15.0, 16.0, 0.16, 3.2, 2.0)
        );
        assert_eq!((s.l_min_th_us, s.l_range_us, s.scheduler, s.c_weight), (800.0, 400.0, Dualq::Wrr, 0.1));
        assert!(s.drop_overload && s.tshift_ms.is_none());
        assert_eq!(q("scheduler = \"tsfifo\"").tshift_ns, 30 * MS);
    }

    #[test]
    fn each_check_names_its_field() {
        for (table, key) in [
            ("limit_pkts = 0", "limit_pkts"),
            ("target_ms = 0.0", "target_ms"),
            ("t_update_ms = -1.0", "t_update_ms"),
            ("alpha = -0.1", "alpha"),
            ("beta = -1.0", "beta"),
            ("k = 0.0", "k"),
            ("l_min_th_us = -1.0", "l_min_th_us"),
            ("l_range_us = -1.0", "l_range_us"),
            ("c_weight = 1.0", "c_weight"),
            ("scheduler = \"tsfifo\"\nc_weight = 0.2", "c_weight"),
            ("tshift_ms = 5.0", "tshift_ms"),
            ("scheduler = \"tsfifo\"\ntshift_ms = -5.0", "tshift_ms"),
        ] {
            let e = spec(table).check("q").unwrap_err().to_string();
            assert!(e.contains(&format!("q.{key}")), "{table}: {e}");
        }
    }
}
