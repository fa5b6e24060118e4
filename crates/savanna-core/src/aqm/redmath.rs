//! The RED math every RED-family discipline shares (Floyd & Jacobson 1993, with ns-2's
//! `gentle_` and `wait_` options as Guo & Matta 2001 configure them):
//! - `RedAvg`: the EWMA of the queue length, updated on each arrival, decayed over idle
//!   periods as if `m = idle_time * link_rate / mean_packet_size` empty-queue samples had
//!   been taken (F&J section 4);
//! - `curve`: the drop-probability curve p_b(avg) (linear from 0 at min_th to max_p at
//!   max_th; with gentle, linear from max_p to 1 between max_th and 2 max_th);
//! - `RedCount`: the count-based spreading of drops, so the number of packets between two
//!   drops is uniform on [1, 1/p_b] (or on [1/p_b, 2/p_b] with `wait`);
//! - ns-2's guard (`red.cc`, `qavg >= th_min && qlen > 1`; ns-3's RED has it too): no early
//!   or average-forced drop for an arrival that finds at most one packet (or byte, in byte
//!   mode) queued, and the first arrival after the average crosses min_th, or after such a
//!   nearly empty spell, only starts the count (`Curve::region_at`, `RedCount`);
//! - ECN (RFC 3168) as ns-2 marks: an ECT arrival picked for an early drop is marked iff
//!   the curve's p_b (before count spreading and byte scaling) is below `mark_p` (ns-2.35
//!   `use_mark_p_`/`mark_p_`); the default `mark_p` = max_p marks while the average is
//!   below max_th and drops in the gentle region (ns-2's `red.cc` since 2001), and
//!   `mark_p = 1` marks throughout the gentle region (ns-2.1b7's RIO).

use super::{DropReason, Fifo, QCtx};
use crate::engine::{Rng, Time};
use crate::error::Result;
use crate::net::PktId;
use crate::spec::{bad, non_negative, positive};

/// The parameters every RED-family discipline shares (RED, RIO's two curves, CHOKe, the
/// RED-based differentiation): one drop curve on the average (thresholds in packets), the
/// EWMA weight of that average, ns-2's `gentle_` and `wait_`, ECN marking, byte mode and
/// the mean packet size. A discipline's spec keeps its own keys, defaults and docs and
/// hands them over as one `RedParams`, checked by the one `check` below.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// Buffer size, packets (tail drop beyond it).
    pub limit_pkts: usize,
    /// No early drop while the average is below min_th, packets.
    pub min_th: f64,
    /// Forced drops above max_th (2 max_th with `gentle`), packets.
    pub max_th: f64,
    /// Early-drop probability at max_th (ns-2 1 / linterm_).
    pub max_p: f64,
    /// EWMA weight of the average (ns-2 q_weight_).
    pub w_q: f64,
    /// ns-2 `gentle_`: p from max_p to 1 between max_th and 2 max_th.
    pub gentle: bool,
    /// ns-2 `wait_` count spreading (unused by disciplines that drop without a count).
    pub wait: bool,
    /// Mark ECT packets instead of early drops (RFC 3168).
    pub ecn: bool,
    /// With `ecn`: an ECT packet picked for an early drop is marked iff p_b < mark_p (ns-2.35
    /// `mark_p_`); None: max_p, so the gentle region drops (ns-2's rule).
    pub mark_p: Option<f64>,
    /// Byte mode (ns-2 `bytes_`): p scaled by packet size / mean size (RED only).
    pub byte_mode: bool,
    /// Mean packet size, bytes (idle-time correction, byte mode); None: the scenario's
    /// `packet_bytes`, given when the discipline is built.
    pub mean_pkt_bytes: Option<f64>,
}

impl RedParams {
    /// Check the parameters of the spec at `field`. `sfx` ends the names of the curve's
    /// keys as the user wrote them: "" for `min_th`, `max_th`, `max_p`, `w_q`; RIO's
    /// "_short" and "_long" for `min_th_short` and so on.
    pub fn check(&self, field: &str, sfx: &str) -> Result<()> {
        if self.limit_pkts == 0 {
            return bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
        }
        non_negative(&format!("{field}.min_th{sfx}"), self.min_th)?;
        positive(&format!("{field}.max_th{sfx}"), self.max_th)?;
        if self.min_th >= self.max_th {
            return bad(
                format!("{field}.min_th{sfx}"),
                format!("must be below max_th{sfx} ({}), got {}", self.max_th, self.min_th),
            );
        }
        for (key, v) in [("max_p", self.max_p), ("w_q", self.w_q)] {
            if !(v > 0.0 && v <= 1.0) {
                return bad(format!("{field}.{key}{sfx}"), format!("must be in (0, 1], got {v}"));
            }
        }
        if let Some(m) = self.mean_pkt_bytes {
            positive(&format!("{field}.mean_pkt_bytes"), m)?;
        }
        if let Some(m) = self.mark_p {
            if !(m > 0.0 && m <= 1.0) {
                return bad(format!("{field}.mark_p"), format!("must be in (0, 1], got {m}"));
            }
        }
        Ok(())
    }

    /// The ECN rule for `red_verdict`: Some(mark_p) with ECN on (mark an ECT early pick iff
    /// p_b < mark_p), None with it off.
    pub fn ecn_below(&self) -> Option<f64> {
        self.ecn.then(|| self.mark_p.unwrap_or(self.max_p))
    }

    /// The mean packet size in bytes, given the scenario's packet size.
    pub fn mean_bytes(&self, pkt_bytes: u32) -> f64 {
        self.mean_pkt_bytes.unwrap_or(pkt_bytes as f64)
    }

    /// The drop curve these parameters describe.
    pub fn curve(&self) -> Curve {
        Curve { min_th: self.min_th, max_th: self.max_th, max_p: self.max_p, gentle: self.gentle }
    }
}

/// Where the average sits on the drop curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Region {
    /// Below min_th: never drop early.
    Below,
    /// Between the thresholds: drop or mark with base probability p_b.
    Early(f64),
    /// Above max_th (or 2 max_th with gentle): drop every packet.
    Forced,
}

/// Thresholds of one RED curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Curve {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub gentle: bool,
}

impl Curve {
    /// The base drop probability p_b at average `avg`.
    pub fn region(&self, avg: f64) -> Region {
        if avg < self.min_th {
            Region::Below
        } else if avg < self.max_th {
            Region::Early(self.max_p * (avg - self.min_th) / (self.max_th - self.min_th))
        } else if self.gentle && avg < 2.0 * self.max_th {
            Region::Early(self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th)
        } else {
            Region::Forced
        }
    }
    /// The region for an arrival that finds `queued` packets (or bytes) queued: as `region`,
    /// but `Below` while at most one is queued. This is ns-2's guard (and ns-3's): RED makes
    /// no early or average-forced drop at a queue that has drained, however high the slow
    /// average still is after a busy period.
    #[inline]
    pub fn region_at(&self, avg: f64, queued: u64) -> Region {
        if queued <= 1 {
            Region::Below
        } else {
            self.region(avg)
        }
    }
}

/// EWMA queue average with idle-time decay.
#[derive(Clone, Debug)]
pub struct RedAvg {
    pub avg: f64,
    pub w_q: f64,
    idle_since: Option<Time>,
}

impl RedAvg {
    pub fn new(w_q: f64) -> Self {
        RedAvg { avg: 0.0, w_q, idle_since: Some(0) }
    }
    /// Update on an arrival that finds `q` packets (or bytes / mean size) queued.
    /// `pkts_per_sec` is the link rate in mean-sized packets per second.
    #[inline]
    pub fn on_arrival(&mut self, q: f64, now: Time, pkts_per_sec: f64) -> f64 {
        if let Some(t0) = self.idle_since.take() {
            let m = (now.saturating_sub(t0)) as f64 * 1e-9 * pkts_per_sec;
            self.avg *= (1.0 - self.w_q).powf(m);
        }
        self.avg = (1.0 - self.w_q) * self.avg + self.w_q * q;
        self.avg
    }
    /// The queue just became empty: the idle period starts now.
    #[inline]
    pub fn on_empty(&mut self, now: Time) {
        self.idle_since = Some(now);
    }
    /// A packet arrived to a non-empty queue before the idle mark was consumed (defensive).
    pub fn busy(&mut self) {
        self.idle_since = None;
    }
}

/// Count-based drop spreading (F&J section 7), with ns-2's `wait_` variant and its `old`
/// flag: the first arrival in the early region after a spell below it only sets the count
/// to 1 (ns-2 `red.cc`: "the average queue size has just crossed the threshold").
#[derive(Clone, Debug)]
pub struct RedCount {
    /// Packets since the last early drop or mark, or since the average entered the early
    /// region.
    pub count: u64,
    pub wait: bool,
    /// An arrival was judged in the early region since the last one judged below min_th
    /// (or at a nearly empty queue): ns-2's `old`.
    old: bool,
}

impl RedCount {
    pub fn new(wait: bool) -> Self {
        RedCount { count: 0, wait, old: false }
    }
    /// The actual drop probability p_a for base probability `pb` given the current count.
    pub fn p_a(&self, pb: f64) -> f64 {
        let c = self.count as f64;
        if self.wait {
            if c * pb < 1.0 {
                0.0
            } else if c * pb < 2.0 {
                pb / (2.0 - c * pb)
            } else {
                1.0
            }
        } else if c * pb < 1.0 {
            pb / (1.0 - c * pb)
        } else {
            1.0
        }
    }
    /// Decide for one arrival in the early region: true means drop (or mark) it.
    #[inline]
    pub fn decide(&mut self, pb: f64, rng: &mut Rng) -> bool {
        if !self.old {
            self.old = true;
            self.count = 1;
            return false;
        }
        self.count += 1;
        let pa = self.p_a(pb);
        if rng.uniform() < pa {
            self.count = 0;
            true
        } else {
            false
        }
    }
    /// The arrival was judged below min_th (or at a nearly empty queue): the next one in
    /// the early region starts a new count.
    #[inline]
    pub fn below(&mut self) {
        self.old = false;
    }
    /// A forced drop (average above the hard threshold, or a full buffer) restarts the
    /// count, as ns-2 does.
    #[inline]
    pub fn forced(&mut self) {
        self.count = 0;
    }
}

/// RED's verdict on one arrival whose average sits in `region` (F&J section 7): below
/// min_th the count stops (the next early-region arrival restarts it); in the forced region
/// the packet is dropped; in the early region the count-spread decision picks it, and a
/// picked packet is marked instead of dropped when `ecn` is `Some(mark_p)`, the packet is
/// ECT (RFC 3168) and p_b < mark_p (ns-2's rule, `RedParams::ecn_below`). `pb_scale`
/// multiplies p_b for the pick (byte mode: size / mean size; else 1), not for the mark
/// test. Returns false when the packet was dropped (the drop is reported through `cx`).
#[inline]
pub fn red_verdict(
    region: Region,
    pb_scale: f64,
    count: &mut RedCount,
    ecn: Option<f64>,
    id: PktId,
    cx: &mut QCtx,
) -> bool {
    match region {
        Region::Below => {
            count.below();
            true
        }
        Region::Forced => {
            count.forced();
            cx.drop(id, DropReason::Forced);
            false
        }
        Region::Early(pb) => {
            if count.decide((pb * pb_scale).min(1.0), cx.rng) && !(ecn.is_some_and(|m| pb < m) && cx.mark(id)) {
                cx.drop(id, DropReason::Early);
                false
            } else {
                true
            }
        }
    }
}

/// The storage every RED-family FIFO shares: the queue, its average, and the buffer limit.
/// Disciplines decide early drops themselves and call `admit` for the tail-drop check.
pub struct RedFifo {
    pub q: Fifo,
    pub avg: RedAvg,
    pub limit_pkts: usize,
}

impl RedFifo {
    pub fn new(limit_pkts: usize, w_q: f64) -> Self {
        RedFifo { q: Fifo::with_capacity(limit_pkts.min(1 << 16)), avg: RedAvg::new(w_q), limit_pkts }
    }
    /// Queue the packet unless the buffer is full (then report an overflow drop).
    #[inline]
    pub fn admit(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        if self.q.len() >= self.limit_pkts {
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        self.q.push(id, cx.pkts);
        true
    }
    /// Take the head packet; an emptied queue starts the average's idle period.
    #[inline]
    pub fn pop(&mut self, cx: &mut QCtx) -> Option<PktId> {
        let p = self.q.pop(cx.pkts);
        if self.q.is_empty() {
            self.avg.on_empty(cx.now);
        }
        p
    }
    /// Remove the packet at position `i` (e.g. CHOKe's victim), with the same idle rule.
    pub fn remove_at(&mut self, i: usize, cx: &mut QCtx) -> Option<PktId> {
        let p = self.q.remove_at(i, cx.pkts);
        if self.q.is_empty() {
            self.avg.on_empty(cx.now);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_shape() {
        let c = Curve { min_th: 10.0, max_th: 30.0, max_p: 0.1, gentle: false };
        assert_eq!(c.region(9.9), Region::Below);
        assert_eq!(c.region(20.0), Region::Early(0.05));
        assert_eq!(c.region(30.0), Region::Forced);
        let g = Curve { gentle: true, ..c };
        assert_eq!(g.region(30.0), Region::Early(0.1));
        match g.region(45.0) {
            Region::Early(p) => assert!((p - 0.55).abs() < 1e-12),
            r => panic!("{r:?}"),
        }
        assert_eq!(g.region(60.0), Region::Forced);
    }

    fn red() -> RedParams {
        RedParams {
            limit_pkts: 100,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: true,
            wait: true,
            ecn: false,
            mark_p: None,
            byte_mode: false,
            mean_pkt_bytes: None,
        }
    }

    #[test]
    fn one_check_names_each_key_as_the_user_wrote_it() {
        red().check("q", "").unwrap();
        red().check("q", "_long").unwrap();
        let cases: [(RedParams, &str); 10] = [
            (RedParams { limit_pkts: 0, ..red() }, "q.limit_pkts: must be at least 1 packet"),
            (RedParams { min_th: -1.0, ..red() }, "q.min_th_x: must be a number >= 0, got -1"),
            (RedParams { max_th: 0.0, ..red() }, "q.max_th_x: must be a positive number, got 0"),
            (RedParams { min_th: 15.0, ..red() }, "q.min_th_x: must be below max_th_x (15), got 15"),
            (RedParams { max_p: 0.0, ..red() }, "q.max_p_x: must be in (0, 1], got 0"),
            (RedParams { w_q: 1.5, ..red() }, "q.w_q_x: must be in (0, 1], got 1.5"),
            (RedParams { w_q: f64::NAN, ..red() }, "q.w_q_x: must be in (0, 1], got NaN"),
            (RedParams { mean_pkt_bytes: Some(0.0), ..red() }, "q.mean_pkt_bytes: must be a positive number, got 0"),
            (RedParams { mark_p: Some(0.0), ..red() }, "q.mark_p: must be in (0, 1], got 0"),
            (RedParams { mark_p: Some(1.5), ..red() }, "q.mark_p: must be in (0, 1], got 1.5"),
        ];
        for (p, want) in cases {
            assert_eq!(p.check("q", "_x").unwrap_err().to_string(), want);
        }
    }

    #[test]
    fn mean_packet_size_defaults_to_the_scenarios() {
        assert_eq!(red().mean_bytes(1460), 1460.0);
        assert_eq!(RedParams { mean_pkt_bytes: Some(500.0), ..red() }.mean_bytes(1460), 500.0);
        assert_eq!(red().curve(), Curve { min_th: 5.0, max_th: 15.0, max_p: 0.1, gentle: true });
    }

    #[test]
    fn idle_decay_follows_link_rate() {
        let mut a = RedAvg::new(0.5);
        a.busy();
        a.on_arrival(10.0, 0, 1000.0);
        assert_eq!(a.avg, 5.0);
        a.on_empty(0);
        // 2 ms idle at 1000 pkt/s = 2 packet times: avg * 0.5^2, then the new sample.
        let v = a.on_arrival(0.0, 2_000_000, 1000.0);
        assert!((v - 5.0 * 0.25 * 0.5).abs() < 1e-12, "{v}");
    }
}
