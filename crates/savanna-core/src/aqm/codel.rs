//! CoDel, "Controlled Delay" (Nichols, Jacobson, McGregor & Iyengar, RFC 8289), written from
//! the RFC's pseudocode (section 5). The state machine (`CodelState`) is shared with
//! `fq_codel.rs`, which runs one instance per flow queue.
//!
//! The rule: a packet's sojourn time is measured when it leaves the queue. When the sojourn
//! time has stayed at or above `target` for a whole `interval` (and more than one MTU is
//! queued), CoDel enters the *dropping state*: it drops the packet at the head, and then
//! drops again at times given by the control law `next = previous + interval / sqrt(count)`,
//! `count` being the number of drops since the state was entered, until a dequeued packet's
//! sojourn time falls below `target` (or the backlog falls to one MTU), which ends the state.
//!
//! Readings we chose (each is the RFC's, or Linux `sch_codel`'s where the RFC defers to it):
//! - the sojourn time is `now - Packet.enq_ns` (the engine stamps `enq_ns` on arrival);
//! - the pseudocode's "bytes() <= maxpacket_" (never drop when at most one MTU is queued)
//!   uses the bytes left in the queue after the head is removed and, as the MTU, the
//!   scenario's `packet_bytes` (the wire size of a full data packet);
//! - count decay on re-entering the dropping state is the RFC's (Linux) rule: with
//!   `delta = count - lastcount`, count restarts at `delta` if `delta > 1` and the last
//!   scheduled drop time is less than 16 intervals ago (a scheduled time still in the future
//!   counts as "less than 16 intervals ago", as Linux's signed time comparison does),
//!   otherwise at 1;
//! - the control law uses an exact `1 / sqrt(count)` (Linux uses a Newton approximation);
//! - ECN (`ecn = true`): where CoDel would drop an ECT packet it marks it CE and sends it
//!   instead (counting it like a drop for the control law, as Linux does); not-ECT packets
//!   are dropped;
//! - drops at dequeue are reported as `DropReason::Policy`; a full buffer (`limit_pkts`
//!   packets) tail-drops arrivals as `DropReason::Overflow`.

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

/// `type = "codel"`: CoDel (RFC 8289) on a single FIFO.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelSpec {
    /// Buffer size, packets; arrivals beyond it are tail-dropped. Default 1000 (Linux
    /// `sch_codel`; RFC 8289 sets no limit).
    #[serde(default = "d_limit")]
    pub limit_pkts: u32,
    /// Acceptable standing queue delay, ms. RFC 8289 (section 4, and its pseudocode): 5 ms.
    #[serde(default = "d_target")]
    pub target_ms: f64,
    /// Sliding window over which the minimum sojourn time must exceed `target`, ms.
    /// RFC 8289 (section 4, and its pseudocode): 100 ms.
    #[serde(default = "d_interval")]
    pub interval_ms: f64,
    /// Mark ECT packets instead of dropping them. Default off (Linux `sch_codel`).
    #[serde(default)]
    pub ecn: bool,
}

impl DisciplineSpec for CodelSpec {
    const MINIMAL: &'static str = "";
    fn check(&self, field: &str) -> crate::Result<()> {
        if self.limit_pkts == 0 {
            return Err(crate::Error::input(format!("{field}.limit_pkts"), "must be at least 1 packet"));
        }
        check_times(field, self.target_ms, self.interval_ms)
    }
    fn build(&self, pkt_bytes: u32) -> Box<dyn super::Qdisc> {
        Box::new(Codel::new(
            self.limit_pkts as usize,
            CodelParams::new(self.target_ms, self.interval_ms, self.ecn, pkt_bytes),
        ))
    }
}

/// Check CoDel's target and interval (shared with FQ-CoDel's spec).
pub(crate) fn check_times(field: &str, target_ms: f64, interval_ms: f64) -> crate::Result<()> {
    if !(target_ms.is_finite() && target_ms > 0.0) {
        return Err(crate::Error::input(
            format!("{field}.target_ms"),
            format!("must be a positive number of ms, got {target_ms}"),
        ));
    }
    if !(interval_ms.is_finite() && interval_ms > 0.0) {
        return Err(crate::Error::input(
            format!("{field}.interval_ms"),
            format!("must be a positive number of ms, got {interval_ms}"),
        ));
    }
    if target_ms >= interval_ms {
        return Err(crate::Error::input(
            format!("{field}.target_ms"),
            format!("must be below interval_ms ({interval_ms}), got {target_ms}"),
        ));
    }
    Ok(())
}

pub(crate) fn ms_to_ns(ms: f64) -> Time {
    (ms * 1e6).round() as Time
}

/// CoDel's parameters.
#[derive(Clone, Copy, Debug)]
pub struct CodelParams {
    pub target_ns: Time,
    pub interval_ns: Time,
    pub ecn: bool,
    /// Never drop while at most this many bytes remain queued (RFC: `maxpacket_`).
    pub mtu_bytes: u64,
}

impl CodelParams {
    pub fn new(target_ms: f64, interval_ms: f64, ecn: bool, mtu_bytes: u32) -> Self {
        CodelParams {
            target_ns: ms_to_ns(target_ms),
            interval_ns: ms_to_ns(interval_ms),
            ecn,
            mtu_bytes: mtu_bytes as u64,
        }
    }
    /// The control law: the next drop time after `t`, given `count` drops so far.
    #[inline]
    pub fn control_law(&self, t: Time, count: u32) -> Time {
        t + (self.interval_ns as f64 / (count.max(1) as f64).sqrt()).round() as Time
    }
}

/// The per-queue state of RFC 8289's algorithm.
#[derive(Clone, Debug, Default)]
pub struct CodelState {
    /// Drops (and marks) since entering the dropping state, with decay on re-entry.
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    dropping: bool,
    /// When the sojourn time will have been above target for an interval (0: it is not
    /// above target).
    first_above_time: Time,
    /// Next scheduled drop while in the dropping state.
    drop_next: Time,
}

impl CodelState {
    pub fn dropping(&self) -> bool {
        self.dropping
    }
    pub fn count(&self) -> u32 {
        self.count
    }

    /// RFC `dodequeue`: take the head of `q` and say whether it may be dropped.
    fn take(&mut self, p: &CodelParams, q: &mut Fifo, cx: &mut QCtx) -> (Option<PktId>, bool) {
        let Some(id) = q.pop(cx.pkts) else {
            self.first_above_time = 0;
            return (None, false);
        };
        let now = cx.now;
        let sojourn = now.saturating_sub(cx.pkts.get(id).enq_ns);
        let mut ok_to_drop = false;
        if sojourn < p.target_ns || q.bytes() <= p.mtu_bytes {
            self.first_above_time = 0;
        } else if self.first_above_time == 0 {
            self.first_above_time = now + p.interval_ns;
        } else if now >= self.first_above_time {
            ok_to_drop = true;
        }
        (Some(id), ok_to_drop)
    }

    /// RFC `dequeue`: the next packet to send from `q`, dropping (reported to `cx` as
    /// `Policy`) or marking on the way as the state machine says.
    pub fn dequeue(&mut self, p: &CodelParams, q: &mut Fifo, cx: &mut QCtx) -> Option<PktId> {
        let now = cx.now;
        let (mut pkt, ok_to_drop) = self.take(p, q, cx);
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            }
            // Drop while the schedule says so; a large backlog may need several now.
            while self.dropping && now >= self.drop_next {
                let Some(id) = pkt else {
                    self.dropping = false;
                    break;
                };
                self.count += 1;
                if p.ecn && cx.mark(id) {
                    self.drop_next = p.control_law(self.drop_next, self.count);
                    return Some(id);
                }
                cx.drop(id, DropReason::Policy);
                let (next, ok) = self.take(p, q, cx);
                pkt = next;
                if ok {
                    self.drop_next = p.control_law(self.drop_next, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            // Above target for an interval: enter the dropping state with this packet.
            let id = pkt.expect("ok_to_drop implies a packet");
            if !(p.ecn && cx.mark(id)) {
                cx.drop(id, DropReason::Policy);
                pkt = self.take(p, q, cx).0;
            }
            self.dropping = true;
            // Count decay: resume near the drop rate that controlled the last episode if
            // it ended recently.
            let delta = self.count.saturating_sub(self.lastcount);
            let since = now as i128 - self.drop_next as i128;
            self.count = if delta > 1 && since < 16 * p.interval_ns as i128 { delta } else { 1 };
            self.drop_next = p.control_law(now, self.count);
            self.lastcount = self.count;
        }
        pkt
    }
}

/// CoDel on one FIFO with a packet limit.
pub struct Codel {
    q: Fifo,
    limit_pkts: usize,
    params: CodelParams,
    st: CodelState,
}

impl Codel {
    pub fn new(limit_pkts: usize, params: CodelParams) -> Self {
        Codel { q: Fifo::with_capacity(limit_pkts.min(1 << 16)), limit_pkts, params, st: CodelState::default() }
    }
    pub fn state(&self) -> &CodelState {
        &self.st
    }
}

impl Qdisc for Codel {
    fn kind(&self) -> &'static str {
        "codel"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        if self.q.len() >= self.limit_pkts {
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        self.q.push(id, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        self.st.dequeue(&self.params, &mut self.q, cx)
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

    fn codel(ecn: bool) -> Codel {
        Codel::new(1000, CodelParams::new(5.0, 100.0, ecn, 1500))
    }

    /// Queue a packet that entered the queue at `enq`.
    fn put(b: &mut Bench, q: &mut Codel, flow: u32, enq: Time, ecn: Ecn) -> PktId {
        let p = b.pkt(flow, 0, ClassMark::None, ecn);
        b.pkts.get_mut(p).enq_ns = enq;
        let (ok, _) = b.offer(q, p);
        assert!(ok);
        p
    }

    /// Dequeue at `b.now`; returns (packet, drops reported).
    fn serve(b: &mut Bench, q: &mut Codel) -> (Option<PktId>, Vec<(PktId, DropReason)>) {
        let p = b.take(q);
        (p, b.out.drops.clone())
    }

    #[test]
    fn no_drops_while_sojourn_below_target() {
        let mut b = Bench::new(1);
        let mut q = codel(false);
        // A standing queue of 10 packets whose sojourn times are 4.9 ms, for 2 s.
        for _ in 0..10 {
            put(&mut b, &mut q, 1, 0, Ecn::NotEct);
        }
        let mut t: Time = 10 * MS;
        while t < 2000 * MS {
            b.now = t;
            // Keep every queued packet's age just under target.
            let ids: Vec<PktId> = q.q.iter().copied().collect();
            for id in ids {
                b.pkts.get_mut(id).enq_ns = t - 4_900_000;
            }
            let (p, drops) = serve(&mut b, &mut q);
            assert!(drops.is_empty(), "drop at {t}");
            assert!(p.is_some());
            put(&mut b, &mut q, 1, t, Ecn::NotEct);
            t += MS / 10;
        }
        assert!(!q.state().dropping());
    }

    #[test]
    fn drop_times_follow_the_control_law() {
        let mut b = Bench::new(2);
        let mut q = codel(false);
        // Every packet entered at time 0, so from 10 ms on the sojourn time is always above
        // target. Dequeue every 0.1 ms and keep 20 packets queued.
        let dt = MS / 10;
        for _ in 0..20 {
            put(&mut b, &mut q, 1, 0, Ecn::NotEct);
        }
        let start = 10 * MS;
        let mut drops_at = Vec::new();
        let mut t = start;
        while drops_at.len() < 12 {
            b.now = t;
            let (p, drops) = serve(&mut b, &mut q);
            assert!(p.is_some());
            for _ in 0..drops.len() {
                drops_at.push(t);
            }
            while q.len_pkts() < 20 {
                put(&mut b, &mut q, 1, 0, Ecn::NotEct);
            }
            t += dt;
            assert!(t < 10_000 * MS, "too few drops");
        }
        // The first dequeue above target arms the timer; one interval later the state is
        // entered with a drop; then drop k+1 is scheduled interval/sqrt(k) after drop k.
        let mut sched = start + 100 * MS;
        for (k, &at) in drops_at.iter().enumerate() {
            assert!(at >= sched && at < sched + dt, "drop {}: at {at}, scheduled {sched}", k + 1);
            sched += (100.0 * MS as f64 / ((k + 1) as f64).sqrt()).round() as Time;
        }
        assert!(q.state().dropping());
        assert_eq!(q.state().count(), 12);
    }

    #[test]
    fn leaves_dropping_state_when_sojourn_falls_below_target() {
        let mut b = Bench::new(3);
        let mut q = codel(false);
        for _ in 0..20 {
            put(&mut b, &mut q, 1, 0, Ecn::NotEct);
        }
        let mut t = 10 * MS;
        while !q.state().dropping() {
            b.now = t;
            serve(&mut b, &mut q);
            while q.len_pkts() < 20 {
                put(&mut b, &mut q, 1, 0, Ecn::NotEct);
            }
            t += MS;
        }
        // Now replace the queue by fresh packets (sojourn 1 ms): the next dequeue ends the
        // dropping state and nothing more is dropped, however long we go on.
        while q.len_pkts() > 0 {
            b.now = t;
            let p = q.q.pop(&b.pkts).unwrap();
            b.pkts.free(p);
        }
        for _ in 0..20 {
            put(&mut b, &mut q, 1, t - MS, Ecn::NotEct);
        }
        for _ in 0..2000 {
            b.now = t;
            // Every queued packet is 1 ms old: the queue stands, but its delay is short.
            let ids: Vec<PktId> = q.q.iter().copied().collect();
            for id in ids {
                b.pkts.get_mut(id).enq_ns = t - MS;
            }
            let (p, drops) = serve(&mut b, &mut q);
            assert!(drops.is_empty(), "drop at {t} after the queue drained");
            assert!(!q.state().dropping());
            b.pkts.free(p.unwrap());
            put(&mut b, &mut q, 1, t - MS, Ecn::NotEct);
            t += MS;
        }
    }

    #[test]
    fn count_resumes_from_last_episode_on_quick_reentry() {
        let mut b = Bench::new(4);
        let mut q = codel(false);
        let dt = MS / 10;
        let mut t = 10 * MS;
        for _ in 0..20 {
            put(&mut b, &mut q, 1, 0, Ecn::NotEct);
        }
        // Episode 1: run until 6 drops (count = 6, lastcount = 1).
        let mut drops = 0;
        while drops < 6 {
            b.now = t;
            drops += serve(&mut b, &mut q).1.len();
            while q.len_pkts() < 20 {
                put(&mut b, &mut q, 1, 0, Ecn::NotEct);
            }
            t += dt;
        }
        assert_eq!(q.state().count(), 6);
        // A short good spell (sojourn 1 ms) ends the state.
        while q.len_pkts() > 0 {
            let p = q.q.pop(&b.pkts).unwrap();
            b.pkts.free(p);
        }
        for _ in 0..20 {
            put(&mut b, &mut q, 1, t - MS, Ecn::NotEct);
        }
        b.now = t;
        serve(&mut b, &mut q);
        assert!(!q.state().dropping());
        // Bad again: re-entry is one interval after the first bad dequeue, well within
        // 16 intervals of the last scheduled drop, so count restarts at delta = 6 - 1 = 5
        // and the first drops are spaced interval/sqrt(5), interval/sqrt(6).
        while q.len_pkts() > 0 {
            let p = q.q.pop(&b.pkts).unwrap();
            b.pkts.free(p);
        }
        let mut at = Vec::new();
        while at.len() < 3 {
            b.now = t;
            for _ in serve(&mut b, &mut q).1 {
                at.push(t);
            }
            while q.len_pkts() < 20 {
                put(&mut b, &mut q, 1, 0, Ecn::NotEct);
            }
            t += dt;
        }
        let gap = |k: f64| (100.0 * MS as f64 / k.sqrt()).round() as Time;
        assert!((at[1] - at[0]).abs_diff(gap(5.0)) <= dt, "{:?}", at);
        assert!((at[2] - at[1]).abs_diff(gap(6.0)) <= dt, "{:?}", at);
        assert_eq!(q.state().count(), 7);
    }

    #[test]
    fn count_restarts_at_one_after_a_long_calm() {
        let mut b = Bench::new(5);
        let mut q = codel(false);
        let dt = MS / 10;
        let mut t = 10 * MS;
        for _ in 0..20 {
            put(&mut b, &mut q, 1, 0, Ecn::NotEct);
        }
        let mut drops = 0;
        while drops < 6 {
            b.now = t;
            drops += serve(&mut b, &mut q).1.len();
            while q.len_pkts() < 20 {
                put(&mut b, &mut q, 1, 0, Ecn::NotEct);
            }
            t += dt;
        }
        // Drain and stay idle for 20 intervals.
        while q.len_pkts() > 0 {
            b.now = t;
            let p = q.q.pop(&b.pkts).unwrap();
            b.pkts.free(p);
        }
        b.now = t;
        serve(&mut b, &mut q);
        assert!(!q.state().dropping());
        t += 2000 * MS;
        let mut at = Vec::new();
        for _ in 0..20 {
            put(&mut b, &mut q, 1, 0, Ecn::NotEct);
        }
        while at.len() < 2 {
            b.now = t;
            for _ in serve(&mut b, &mut q).1 {
                at.push(t);
            }
            while q.len_pkts() < 20 {
                put(&mut b, &mut q, 1, 0, Ecn::NotEct);
            }
            t += dt;
        }
        assert!((at[1] - at[0]).abs_diff(100 * MS) <= dt, "{:?}", at);
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        let mut b = Bench::new(6);
        let mut q = codel(true);
        for _ in 0..20 {
            put(&mut b, &mut q, 1, 0, Ecn::Ect);
        }
        let mut t = 10 * MS;
        let mut marks = 0;
        while t < 1000 * MS {
            b.now = t;
            let (p, drops) = serve(&mut b, &mut q);
            assert!(drops.is_empty());
            let p = p.unwrap();
            if b.pkts.get(p).ecn == Ecn::Ce {
                marks += 1;
            }
            put(&mut b, &mut q, 1, 0, Ecn::Ect);
            t += MS;
        }
        // Marks scheduled at 110 ms, 210 ms, then interval/sqrt(k) apart (280.7, 338.4,
        // 388.4, ...): 27 of them fall before 1 s (the 28th is due at 1012.8 ms).
        assert!((26..=28).contains(&marks), "marks {marks}");
        // A not-ECT packet at the head when a mark is due is dropped instead.
        let mut q = codel(true);
        for _ in 0..20 {
            put(&mut b, &mut q, 1, 0, Ecn::NotEct);
        }
        let mut dropped = 0;
        let mut t = 10 * MS;
        while t < 300 * MS {
            b.now = t;
            dropped += serve(&mut b, &mut q).1.len();
            put(&mut b, &mut q, 1, 0, Ecn::NotEct);
            t += MS;
        }
        assert_eq!(dropped, 3);
    }

    #[test]
    fn never_drops_the_last_mtu_and_tail_drops_at_limit() {
        let mut b = Bench::new(7);
        let mut q = Codel::new(3, CodelParams::new(5.0, 100.0, false, 1500));
        // One packet at a time, each very old: the queue never holds more than one MTU
        // after the dequeue, so nothing is dropped.
        for i in 0..1000u64 {
            b.now = 1000 * MS + i * MS;
            put(&mut b, &mut q, 1, 0, Ecn::NotEct);
            let (p, drops) = serve(&mut b, &mut q);
            assert!(drops.is_empty() && p.is_some());
        }
        for _ in 0..3 {
            put(&mut b, &mut q, 1, 0, Ecn::NotEct);
        }
        let x = b.pkt(2, 0, ClassMark::None, Ecn::NotEct);
        let (ok, drops) = b.offer(&mut q, x);
        assert!(!ok);
        assert_eq!(drops, vec![(x, DropReason::Overflow)]);
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: CodelSpec = toml::from_str("").unwrap();
        assert_eq!((s.limit_pkts, s.target_ms, s.interval_ms, s.ecn), (1000, 5.0, 100.0, false));
        assert!(s.check("q").is_ok());
        assert!(toml::from_str::<CodelSpec>("foo = 1").is_err());
        let bad = CodelSpec { target_ms: 200.0, ..s.clone() };
        match bad.check("q") {
            Err(crate::Error::Input { field, .. }) => assert_eq!(field, "q.target_ms"),
            r => panic!("{r:?}"),
        }
        let bad = CodelSpec { limit_pkts: 0, ..s.clone() };
        assert!(matches!(bad.check("q"), Err(crate::Error::Input { field, .. }) if field == "q.limit_pkts"));
        assert_eq!(s.build(1500).kind(), "codel");
    }
}
