//! COBALT, "CoDel-BLUE Alternate", the AQM of each CAKE flow queue (Hoeiland-Joergensen,
//! Taht & Morton 2018; Palmei et al. 2019), written from Linux `sch_cake.c`'s
//! `cobalt_should_drop`, `cobalt_queue_full` and `cobalt_queue_empty`, on one FIFO.
//!
//! CoDel part (RFC 8289's control law, CAKE's state handling): a packet leaving with a
//! sojourn time above `target` (and above the `4 mtu_time` floor) puts the queue in the
//! dropping state with the next signal one `interval / sqrt(count)` ahead (`count` 0 or 1
//! gives one full interval); each due signal marks the packet CE (ECT, with `ecn`) or drops
//! it, raises `count` by one and schedules the next `interval / sqrt(count)` later. Leaving
//! the state keeps `count`: while the sojourn is below target it decays by one each time
//! a scheduled time passes, so a queue that goes above target again soon resumes near its
//! last signalling rate (CAKE's re-entry), where RFC 8289 restarts from `count - lastcount`.
//! BLUE part (Feng et al. 2002): `p_drop` rises by `p_inc` when an arrival overflows the
//! buffer and falls by `p_dec` when a dequeue finds the queue empty, each at most once per
//! `target`; every departing packet is dropped with probability `p_drop`, ECT or not. An
//! overflow also forces the dropping state with a signal due at once.
//!
//! Readings we chose:
//! - one queue (`bulk_flows` = 1), so the sojourn floor is `max(2, 4) mtu_time`, with
//!   `mtu_time` the transmission time of one `packet_bytes` packet at the link's rate;
//!   CAKE's raising of target and interval at low rates (to 1.5 mtu_time, interval plus the
//!   same) is not applied: the given values are used;
//! - the buffer tail-drops the arrival (`Overflow`) at `limit_pkts` (CAKE drops from the
//!   head of its fattest flow; with one queue that is the choice of victim only);
//! - the control law uses an exact `1 / sqrt(count)` (Linux: a cached Newton estimate);
//!   probabilities are f64 (Linux: 32-bit fractions, p_inc = 2^24 / 2^32);
//! - drops are reported as `Policy` for the CoDel part and `Early` for BLUE; a CoDel signal
//!   is not also taken by BLUE (when BLUE drops the packet, it is not marked first).

use super::codel::{check_times, CodelParams};
use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::engine::Time;
use crate::net::PktId;

fn d_limit() -> u32 {
    1000
}
fn d_target() -> f64 {
    5.0
}
fn d_interval() -> f64 {
    100.0
}
fn t() -> bool {
    true
}
fn d_inc() -> f64 {
    CAKE_P_INC
}
fn d_dec() -> f64 {
    CAKE_P_DEC
}

/// CAKE's BLUE steps (`cake_set_rate`): p_drop up 1/256 per overflow, down 1/4096 per
/// empty dequeue.
pub const CAKE_P_INC: f64 = 1.0 / 256.0;
pub const CAKE_P_DEC: f64 = 1.0 / 4096.0;

/// `type = "cobalt"`: COBALT (CAKE's AQM) on a single FIFO.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CobaltSpec {
    /// Buffer size, packets; an arrival beyond it is dropped and raises BLUE. Default 1000
    /// (as `codel` and `pie`; CAKE's limit is in bytes).
    #[serde(default = "d_limit")]
    pub limit_pkts: u32,
    /// CoDel target, ms. CAKE: 5.
    #[serde(default = "d_target")]
    pub target_ms: f64,
    /// CoDel interval, ms. CAKE: 100.
    #[serde(default = "d_interval")]
    pub interval_ms: f64,
    /// Mark ECT packets where the CoDel part signals (BLUE always drops). CAKE: on.
    #[serde(default = "t")]
    pub ecn: bool,
    /// BLUE's increase of p_drop per overflow. CAKE: 1/256.
    #[serde(default = "d_inc")]
    pub p_inc: f64,
    /// BLUE's decrease of p_drop per empty dequeue. CAKE: 1/4096.
    #[serde(default = "d_dec")]
    pub p_dec: f64,
}

impl DisciplineSpec for CobaltSpec {
    const MINIMAL: &'static str = "";
    fn check(&self, field: &str) -> crate::Result<()> {
        if self.limit_pkts == 0 {
            return Err(crate::Error::input(format!("{field}.limit_pkts"), "must be at least 1 packet"));
        }
        for (k, v) in [("p_inc", self.p_inc), ("p_dec", self.p_dec)] {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return Err(crate::Error::input(format!("{field}.{k}"), format!("must be in [0, 1], got {v}")));
            }
        }
        check_times(field, self.target_ms, self.interval_ms)
    }
    fn build(&self, pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(Cobalt::new(
            self.limit_pkts as usize,
            CobaltParams {
                codel: CodelParams::new(self.target_ms, self.interval_ms, self.ecn, pkt_bytes),
                p_inc: self.p_inc,
                p_dec: self.p_dec,
            },
        ))
    }
}

/// COBALT's parameters: CoDel's (target, interval, ECN, MTU) and BLUE's steps.
#[derive(Clone, Copy, Debug)]
pub struct CobaltParams {
    pub codel: CodelParams,
    pub p_inc: f64,
    pub p_dec: f64,
}

/// What `should_drop` decided for a departing packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Send,
    /// The CoDel part signals and the packet is not ECT (or ECN is off).
    Codel,
    /// BLUE's random drop.
    Blue,
}

/// The per-queue state of COBALT (Linux `cobalt_vars`).
#[derive(Clone, Debug, Default)]
pub struct CobaltState {
    count: u32,
    dropping: bool,
    /// Next signal while dropping; otherwise the time `count` next decays.
    drop_next: Time,
    /// Last change of `p_drop`.
    blue_timer: Time,
    p_drop: f64,
}

impl CobaltState {
    pub fn count(&self) -> u32 {
        self.count
    }
    pub fn dropping(&self) -> bool {
        self.dropping
    }
    pub fn p_drop(&self) -> f64 {
        self.p_drop
    }

    /// An arrival overflowed the buffer (`cobalt_queue_full`).
    pub fn queue_full(&mut self, p: &CobaltParams, now: Time) {
        if now.saturating_sub(self.blue_timer) > p.codel.target_ns {
            self.p_drop = (self.p_drop + p.p_inc).min(1.0);
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
    }

    /// A dequeue found the queue empty (`cobalt_queue_empty`).
    pub fn queue_empty(&mut self, p: &CobaltParams, now: Time) {
        if self.p_drop > 0.0 && now.saturating_sub(self.blue_timer) > p.codel.target_ns {
            self.p_drop = if self.p_drop < p.p_dec { 0.0 } else { self.p_drop - p.p_dec };
            self.blue_timer = now;
        }
        self.dropping = false;
        if self.count > 0 && now >= self.drop_next {
            self.count -= 1;
            self.drop_next = p.codel.control_law(self.drop_next, self.count);
        }
    }

    /// Judge the departing packet `id` (`cobalt_should_drop`); an ECT packet the CoDel part
    /// signals is marked here. `mtu_ns` is one MTU's transmission time.
    fn should_drop(&mut self, p: &CobaltParams, mtu_ns: Time, id: PktId, cx: &mut QCtx) -> Verdict {
        let now = cx.now;
        let c = &p.codel;
        let sojourn = now.saturating_sub(cx.pkts.get(id).enq_ns);
        let over_target = sojourn > c.target_ns && sojourn > 4 * mtu_ns;
        let mut next_due = self.count > 0 && now >= self.drop_next;
        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = c.control_law(now, self.count);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }
        let blue = self.p_drop > 0.0 && cx.rng.bernoulli(self.p_drop);
        let mut verdict = if blue { Verdict::Blue } else { Verdict::Send };
        if next_due && self.dropping {
            if !(blue || (c.ecn && cx.mark(id))) {
                verdict = Verdict::Codel;
            }
            self.count = self.count.saturating_add(1);
            self.drop_next = c.control_law(self.drop_next, self.count);
        } else {
            while next_due {
                self.count -= 1;
                self.drop_next = c.control_law(self.drop_next, self.count);
                next_due = self.count > 0 && now >= self.drop_next;
            }
        }
        // drop_next doubles as an activity timeout.
        if self.count == 0 {
            self.drop_next = now + c.interval_ns;
        } else if now > self.drop_next && verdict == Verdict::Send {
            self.drop_next = now;
        }
        verdict
    }
}

/// COBALT on one FIFO with a packet limit.
pub struct Cobalt {
    q: Fifo,
    limit_pkts: usize,
    p: CobaltParams,
    st: CobaltState,
    /// The link rate `mtu_ns` was computed for, and one MTU's transmission time at it.
    rate: f64,
    mtu_ns: Time,
}

impl Cobalt {
    pub fn new(limit_pkts: usize, p: CobaltParams) -> Self {
        Cobalt {
            q: Fifo::with_capacity(limit_pkts.min(1 << 16)),
            limit_pkts,
            p,
            st: CobaltState::default(),
            rate: 0.0,
            mtu_ns: 0,
        }
    }
    pub fn state(&self) -> &CobaltState {
        &self.st
    }
}

impl Qdisc for Cobalt {
    fn kind(&self) -> &'static str {
        "cobalt"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        if self.q.len() >= self.limit_pkts {
            self.st.queue_full(&self.p, cx.now);
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        self.q.push(id, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        if cx.link_bps != self.rate {
            self.rate = cx.link_bps;
            let t = self.p.codel.mtu_bytes as f64 * 8e9 / cx.link_bps;
            self.mtu_ns = if t.is_finite() && t > 0.0 { t.round() as Time } else { 0 };
        }
        loop {
            let Some(id) = self.q.pop(cx.pkts) else {
                self.st.queue_empty(&self.p, cx.now);
                return None;
            };
            match self.st.should_drop(&self.p, self.mtu_ns, id, cx) {
                Verdict::Send => return Some(id),
                Verdict::Codel => cx.drop(id, DropReason::Policy),
                Verdict::Blue => cx.drop(id, DropReason::Early),
            }
        }
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

    const MS: Time = 1_000_000;

    fn cobalt(limit: usize, ecn: bool) -> Cobalt {
        Cobalt::new(
            limit,
            CobaltParams { codel: CodelParams::new(5.0, 100.0, ecn, 1500), p_inc: CAKE_P_INC, p_dec: CAKE_P_DEC },
        )
    }

    fn put(b: &mut Bench, q: &mut Cobalt, enq: Time, ecn: Ecn) -> (PktId, bool) {
        let p = b.pkt(1, 0, ClassMark::None, ecn);
        b.pkts.get_mut(p).enq_ns = enq;
        let (ok, _) = b.offer(q, p);
        if !ok {
            b.pkts.free(p);
        }
        (p, ok)
    }

    /// Serve one packet at `b.now` (freeing it and the drops); returns (sent, CE-marked,
    /// CoDel drops, BLUE drops).
    fn serve(b: &mut Bench, q: &mut Cobalt) -> (bool, bool, usize, usize) {
        let p = b.take(q);
        let drops = b.out.drops.clone();
        let codel = drops.iter().filter(|d| d.1 == DropReason::Policy).count();
        let blue = drops.iter().filter(|d| d.1 == DropReason::Early).count();
        assert_eq!(codel + blue, drops.len());
        for (d, _) in drops {
            b.pkts.free(d);
        }
        let marked = p.is_some_and(|p| b.pkts.get(p).ecn == Ecn::Ce);
        if let Some(p) = p {
            b.pkts.free(p);
        }
        (p.is_some(), marked, codel, blue)
    }

    /// Keep 20 packets queued, all stamped `stamp(t)`, serving one every `dt` from
    /// `from` until `until` or until `stop` says so; returns the times of CoDel signals
    /// (drops and marks) and the time reached.
    fn run(
        b: &mut Bench,
        q: &mut Cobalt,
        from: Time,
        until: Time,
        dt: Time,
        stamp: impl Fn(Time) -> Time,
        mut stop: impl FnMut(&Cobalt, usize) -> bool,
    ) -> (Vec<Time>, Time) {
        let mut at = Vec::new();
        let mut t = from;
        while t < until && !stop(q, at.len()) {
            b.now = t;
            while q.len_pkts() < 20 {
                put(b, q, stamp(t), Ecn::NotEct);
            }
            let ids: Vec<PktId> = q.q.iter().copied().collect();
            for id in ids {
                b.pkts.get_mut(id).enq_ns = stamp(t);
            }
            let (_, marked, codel, blue) = serve(b, q);
            assert_eq!(blue, 0);
            for _ in 0..codel + marked as usize {
                at.push(t);
            }
            t += dt;
        }
        (at, t)
    }

    #[test]
    fn signals_follow_the_control_law_from_one_interval_above_target() {
        // Every packet entered at 0: from 10 ms on the sojourn is above target.
        let mut b = Bench::new(1);
        let mut q = cobalt(1000, false);
        let dt = MS / 10;
        let start = 10 * MS;
        let (at, _) = run(&mut b, &mut q, start, 10_000 * MS, dt, |_| 0, |_, n| n >= 12);
        // The first dequeue above target schedules a signal one interval later; then the
        // k-th signal is followed by the next interval/sqrt(k + 1) later (count is 1 when
        // the first is due and is raised before each reschedule).
        let mut sched = start + 100 * MS;
        for (k, &t) in at.iter().enumerate() {
            assert!(t >= sched && t < sched + dt, "signal {}: at {t}, scheduled {sched}", k + 1);
            sched += (100.0 * MS as f64 / ((k + 2) as f64).sqrt()).round() as Time;
        }
        assert!(q.state().dropping());
        assert_eq!(q.state().count(), 13);
    }

    #[test]
    fn no_signal_below_target() {
        let mut b = Bench::new(2);
        let mut q = cobalt(1000, false);
        let (at, _) = run(&mut b, &mut q, 10 * MS, 3000 * MS, MS / 10, |t| t - 4_900_000, |_, _| false);
        assert!(at.is_empty());
        assert_eq!((q.state().count(), q.state().dropping()), (0, false));
    }

    #[test]
    fn reentry_resumes_the_decayed_count() {
        // CAKE's re-entry: count survives a good spell, decaying by one per scheduled time
        // passed, and a queue that goes above target again signals interval/sqrt(count)
        // later, not a whole interval.
        let mut b = Bench::new(3);
        let mut q = cobalt(1000, false);
        let dt = MS / 10;
        let (_, t) = run(&mut b, &mut q, 10 * MS, 10_000 * MS, dt, |_| 0, |_, n| n >= 8);
        assert_eq!(q.state().count(), 9);
        // A 20 ms good spell (sojourn 1 ms): the state is left, count kept (the next
        // scheduled time, interval/sqrt(9) = 33 ms after the last signal, is not reached).
        while q.len_pkts() > 0 {
            let p = q.q.pop(&b.pkts).unwrap();
            b.pkts.free(p);
        }
        let (at, t) = run(&mut b, &mut q, t, t + 20 * MS, dt, |t| t - MS, |_, _| false);
        assert!(at.is_empty());
        assert!(!q.state().dropping());
        assert_eq!(q.state().count(), 9);
        // Above target again (fresh packets stamped 0): the first signal comes
        // interval/sqrt(9) = 33.3 ms after re-entry.
        while q.len_pkts() > 0 {
            let p = q.q.pop(&b.pkts).unwrap();
            b.pkts.free(p);
        }
        let (at, _) = run(&mut b, &mut q, t, t + 1000 * MS, dt, |_| 0, |_, n| n >= 1);
        let gap = at[0] - t;
        assert!(gap.abs_diff(100 * MS / 3) <= dt, "first signal {gap} ns after re-entry");
    }

    #[test]
    fn count_decays_to_zero_in_a_long_good_spell() {
        let mut b = Bench::new(4);
        let mut q = cobalt(1000, false);
        let dt = MS / 10;
        let (_, t) = run(&mut b, &mut q, 10 * MS, 10_000 * MS, dt, |_| 0, |_, n| n >= 5);
        assert_eq!(q.state().count(), 6);
        while q.len_pkts() > 0 {
            let p = q.q.pop(&b.pkts).unwrap();
            b.pkts.free(p);
        }
        // count 6 decays one step per scheduled time: after interval (1/sqrt(5) + ... +
        // 1/sqrt(1)) = 316 ms at most it is 0.
        let mut seen = vec![q.state().count()];
        let (at, t) = run(
            &mut b,
            &mut q,
            t,
            t + 400 * MS,
            dt,
            |t| t - MS,
            |q, _| {
                seen.push(q.state().count());
                false
            },
        );
        assert!(at.is_empty());
        assert_eq!(q.state().count(), 0);
        seen.dedup();
        assert_eq!(seen, [6, 5, 4, 3, 2, 1, 0], "count decays one step at a time");
        // From count 0, re-entry waits a whole interval, as at the start.
        while q.len_pkts() > 0 {
            let p = q.q.pop(&b.pkts).unwrap();
            b.pkts.free(p);
        }
        let (at, _) = run(&mut b, &mut q, t, t + 1000 * MS, dt, |_| 0, |_, n| n >= 1);
        assert!((at[0] - t).abs_diff(100 * MS) <= dt, "{}", at[0] - t);
    }

    #[test]
    fn blue_raises_p_drop_on_overflow_at_most_once_per_target() {
        let mut b = Bench::new(5);
        let mut q = cobalt(5, true);
        for _ in 0..5 {
            put(&mut b, &mut q, 0, Ecn::NotEct);
        }
        // One overflowing arrival per ms for 100 ms from 1 s: a raise needs more than 5 ms
        // since the last one, so they come every 6 ms.
        let mut raises = 0;
        let mut last: Option<Time> = None;
        for k in 0..100 {
            b.now = 1000 * MS + k * MS;
            let before = q.state().p_drop();
            let now = b.now;
            let (_, ok) = put(&mut b, &mut q, now, Ecn::NotEct);
            assert!(!ok);
            if last.is_none_or(|l| now - l > 5 * MS) {
                last = Some(now);
                raises += 1;
                assert_eq!(q.state().p_drop(), before + CAKE_P_INC);
            } else {
                assert_eq!(q.state().p_drop(), before);
            }
        }
        assert_eq!(raises, 17);
        assert_eq!(q.state().p_drop(), 17.0 / 256.0);
    }

    #[test]
    fn blue_lowers_p_drop_when_the_queue_is_found_empty() {
        let mut b = Bench::new(6);
        let mut q = cobalt(1, true);
        put(&mut b, &mut q, 0, Ecn::NotEct);
        // Two raises (at 1 s and 1.01 s).
        for now in [1000 * MS, 1010 * MS] {
            b.now = now;
            put(&mut b, &mut q, now, Ecn::NotEct);
        }
        assert_eq!(q.state().p_drop(), 2.0 / 256.0);
        // Empty the queue (at 1.011 s; not empty yet, no decrease).
        b.now = 1011 * MS;
        let (sent, ..) = serve(&mut b, &mut q);
        assert!(sent || q.len_pkts() == 0);
        // Dequeues that find the queue empty, one per ms: a decrease each 6 ms.
        let mut want = 2.0 / 256.0;
        let mut last = 1010 * MS;
        for k in 12..600u64 {
            b.now = 1000 * MS + k * MS;
            let (sent, ..) = serve(&mut b, &mut q);
            assert!(!sent);
            if b.now - last > 5 * MS && want > 0.0 {
                want = if want < CAKE_P_DEC { 0.0 } else { want - CAKE_P_DEC };
                last = b.now;
            }
            assert_eq!(q.state().p_drop(), want, "at {k} ms");
        }
        // 32 decreases of 1/4096 from 2/256: it is back at 0 and stays there.
        assert_eq!(q.state().p_drop(), 0.0);
    }

    #[test]
    fn blue_drops_departures_at_p_drop_even_ect_ones() {
        let mut b = Bench::new(7);
        let mut q = cobalt(20, true);
        // 64 overflows spaced 10 ms apart: p_drop = 64/256 = 0.25.
        for _ in 0..20 {
            put(&mut b, &mut q, 0, Ecn::Ect);
        }
        for k in 0..64 {
            let now = 1000 * MS + k * 10 * MS;
            b.now = now;
            put(&mut b, &mut q, now, Ecn::Ect);
        }
        assert_eq!(q.state().p_drop(), 0.25);
        // Packets with no sojourn (no CoDel signal: the count left by the overflows just
        // decays); the queue never empties, so p_drop holds.
        let (mut blue, mut sent, mut marked) = (0, 0, 0);
        let mut t = 2000 * MS;
        for _ in 0..20_000 {
            b.now = t;
            while q.len_pkts() < 20 {
                put(&mut b, &mut q, t, Ecn::Ect);
            }
            let ids: Vec<PktId> = q.q.iter().copied().collect();
            for id in ids {
                b.pkts.get_mut(id).enq_ns = t;
            }
            let (s, m, codel, bl) = serve(&mut b, &mut q);
            assert_eq!(codel, 0);
            blue += bl;
            sent += s as usize;
            marked += m as usize;
            t += MS / 10;
        }
        let f = blue as f64 / (blue + sent) as f64;
        assert!((f - 0.25).abs() < 0.01, "BLUE drop fraction {f}");
        assert_eq!(marked, 0, "BLUE drops, it does not mark");
        assert_eq!(q.state().p_drop(), 0.25);
    }

    #[test]
    fn an_overflow_makes_the_codel_part_signal_at_once() {
        // A standing queue above target, just filled: an overflow forces the dropping state
        // with a signal due now, so the next departure is signalled without waiting an
        // interval.
        let mut b = Bench::new(8);
        let mut q = cobalt(5, true);
        b.now = 1000 * MS;
        for _ in 0..5 {
            put(&mut b, &mut q, 0, Ecn::Ect);
        }
        let (_, ok) = put(&mut b, &mut q, 0, Ecn::Ect);
        assert!(!ok);
        let (sent, marked, codel, _) = serve(&mut b, &mut q);
        assert!(sent && marked && codel == 0);
        // Without the overflow the first departure goes unmarked (one interval to wait).
        let mut b = Bench::new(8);
        let mut q = cobalt(5, true);
        b.now = 1000 * MS;
        for _ in 0..5 {
            put(&mut b, &mut q, 0, Ecn::Ect);
        }
        let (sent, marked, ..) = serve(&mut b, &mut q);
        assert!(sent && !marked);
    }

    #[test]
    fn ecn_marks_ect_packets_where_codel_would_drop() {
        // Same standing queue three ways: ECT packets with ECN on are marked and sent at
        // the times not-ECT packets are dropped; with ECN off, ECT packets are dropped.
        let signals = |ecn: bool, pkt: Ecn| {
            let mut b = Bench::new(9);
            let mut q = cobalt(1000, ecn);
            let (mut marks, mut drops, mut at) = (0, 0, Vec::new());
            for _ in 0..20 {
                put(&mut b, &mut q, 0, pkt);
            }
            let mut t = 10 * MS;
            while t < 1000 * MS {
                b.now = t;
                while q.len_pkts() < 20 {
                    put(&mut b, &mut q, 0, pkt);
                }
                let (_, m, codel, blue) = serve(&mut b, &mut q);
                assert_eq!(blue, 0);
                if m || codel > 0 {
                    at.push(t);
                }
                marks += m as u32;
                drops += codel as u32;
                t += MS;
            }
            (marks, drops, at)
        };
        let (m1, d1, at1) = signals(true, Ecn::Ect);
        let (m2, d2, at2) = signals(true, Ecn::NotEct);
        let (m3, d3, at3) = signals(false, Ecn::Ect);
        assert!(m1 > 20 && d1 == 0, "{m1} {d1}");
        assert!(m2 == 0 && d2 > 20, "{m2} {d2}");
        assert!(m3 == 0 && d3 > 20, "{m3} {d3}");
        // Marks are sent, drops pull the next packet forward in the same dequeue, so the
        // schedules agree: the signal times are the same.
        assert_eq!(at1, at2);
        assert_eq!(at2, at3);
    }

    #[test]
    fn invariants_hold_under_a_random_workload() {
        // Random arrivals (random age, ECN) and departures: every packet is queued, dropped
        // once or served, in FIFO order; the limit holds; p_drop stays in [0, 1]; count is
        // 0 whenever the state is quiet for long.
        let mut b = Bench::new(10);
        let mut rng = Rng::stream(23, "cobalt-random");
        let mut q = cobalt(25, true);
        let mut queued = std::collections::VecDeque::new();
        let (mut codel, mut blue, mut overflow, mut served, mut marks) = (0, 0, 0, 0, 0);
        let mut t: Time = 0;
        let mut seq = 0;
        for _ in 0..80_000 {
            t += (rng.exp(0.5) * MS as f64) as Time;
            b.now = t;
            if rng.uniform() < 0.55 {
                let ecn = if rng.uniform() < 0.5 { Ecn::Ect } else { Ecn::NotEct };
                let p = b.pkt(1, seq, ClassMark::None, ecn);
                seq += 1;
                b.pkts.get_mut(p).enq_ns = t.saturating_sub((rng.uniform() * 30.0 * MS as f64) as Time);
                let (ok, drops) = b.offer(&mut q, p);
                if ok {
                    assert!(drops.is_empty());
                    queued.push_back(p);
                } else {
                    assert_eq!(drops, vec![(p, DropReason::Overflow)]);
                    overflow += 1;
                    b.pkts.free(p);
                }
            } else {
                let got = b.take(&mut q);
                // Drops come off the head, in order, then the packet sent.
                for &(d, why) in &b.out.drops.clone() {
                    assert_eq!(queued.pop_front(), Some(d));
                    match why {
                        DropReason::Policy => codel += 1,
                        DropReason::Early => blue += 1,
                        r => panic!("unexpected {r:?}"),
                    }
                    b.pkts.free(d);
                }
                if let Some(p) = got {
                    assert_eq!(queued.pop_front(), Some(p));
                    marks += (b.pkts.get(p).ecn == Ecn::Ce) as u32;
                    served += 1;
                    b.pkts.free(p);
                } else {
                    assert!(queued.is_empty());
                }
            }
            assert_eq!(q.len_pkts(), queued.len());
            assert!(q.len_pkts() <= 25);
            assert!((0.0..=1.0).contains(&q.state().p_drop()));
        }
        assert!(
            codel > 50 && blue > 50 && overflow > 50 && marks > 50 && served > 20_000,
            "{codel} {blue} {overflow} {marks} {served}"
        );
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: CobaltSpec = toml::from_str("").unwrap();
        assert_eq!((s.limit_pkts, s.target_ms, s.interval_ms, s.ecn), (1000, 5.0, 100.0, true));
        assert_eq!((s.p_inc, s.p_dec), (CAKE_P_INC, CAKE_P_DEC));
        assert!(s.check("q").is_ok());
        assert!(toml::from_str::<CobaltSpec>("blue = 1").is_err());
        let field_of = |bad: CobaltSpec| match bad.check("q") {
            Err(crate::Error::Input { field, .. }) => field,
            r => panic!("{r:?}"),
        };
        assert_eq!(field_of(CobaltSpec { limit_pkts: 0, ..s.clone() }), "q.limit_pkts");
        assert_eq!(field_of(CobaltSpec { p_inc: 1.5, ..s.clone() }), "q.p_inc");
        assert_eq!(field_of(CobaltSpec { p_dec: f64::NAN, ..s.clone() }), "q.p_dec");
        assert_eq!(field_of(CobaltSpec { target_ms: 200.0, ..s.clone() }), "q.target_ms");
        assert_eq!(s.build(1500).kind(), "cobalt");
    }
}
