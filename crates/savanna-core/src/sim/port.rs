//! An output port: a link's sending end. It holds the queue discipline, the port's counters,
//! the transmitter (one packet serialised at a time at the link rate) and the propagation
//! line (packets in flight for the link delay, oldest first).
//!
//! The accounting is done once, here, around the discipline's own enqueue and dequeue, the
//! way ns-3's `QueueDisc::Enqueue` wraps `DoEnqueue`: arrivals, admissions, departures, drops
//! by reason, ECN marks and occupancy, by class, and busy time. Disciplines only decide;
//! the simulator only moves packets. `PortQueue` (discipline + counters) needs nothing of
//! the simulator but a packet pool and a clock, so a router emulating a link on real packets
//! can drive it directly: enqueue, dequeue, free what `dropped()` lists.
//!
//! A deferred transmission end: when a packet starts on a link whose queue is then empty,
//! whose discipline does nothing on an empty dequeue (`Qdisc::empty_dequeue_is_noop`) and
//! which does not lose that packet (the loss is drawn when the transmission starts), the
//! packet goes on the propagation line at once and its end is kept out of the event heap
//! (`defer_end`): only an arrival during the transmission turns that end into an event, with
//! the insertion number reserved for it. Results are those of a TxDone event per packet.
//! For this, every packet's arrival takes its insertion number when its transmission starts
//! (right after that of the transmission's end), deferred or not: two events of the same
//! nanosecond order by these numbers, so an arrival orders before an event scheduled for
//! the same nanosecond during its transmission (before 2026-11 it took its number at the end).
//!
//! The idle pass: a packet reaching an idle link whose queue is empty, under a discipline
//! that would admit it and hand it straight back with no other effect
//! (`Qdisc::idle_pass_max_bytes`: DropTail), starts its transmission without the enqueue
//! and dequeue calls; the counters read as if they had been made (`PortQueue::pass`).

use crate::aqm::{DropReason, QCtx, QOut, Qdisc};
use crate::engine::{Rng, Time};
use crate::net::{Packet, PacketPool, PktId, PktKind};
use crate::scenario::schema::{FaultKind, FaultSpec};

use super::line::Line;

/// Per-queue counters, by class where it matters.
#[derive(Clone, Default)]
pub struct QStats {
    pub arrivals: [u64; 3],
    pub enqueued: [u64; 3],
    pub departed: [u64; 3],
    pub drops: [[u64; 3]; DropReason::COUNT],
    pub marks: [u64; 3],
    pub occupancy: [u64; 3],
}

impl QStats {
    /// Queue drops of class `c` (link losses are not the queue's).
    pub fn dropped(&self, c: usize) -> u64 {
        (0..DropReason::COUNT).filter(|&r| r != DropReason::LinkLoss as usize).map(|r| self.drops[r][c]).sum()
    }
}

/// A queue discipline with its counters: every packet offered, admitted, sent, dropped or
/// marked is counted here, whatever the discipline.
pub struct PortQueue {
    pub qdisc: Box<dyn Qdisc>,
    pub stats: QStats,
    /// The discipline's own random stream.
    rng: Rng,
    /// What the discipline reported in the last call (reused: nothing is allocated per packet).
    out: QOut,
    /// Rate of the link the queue feeds, bits per second.
    rate_bps: f64,
    /// Packets the discipline holds (the occupancy summed over classes), so that the port
    /// asks whether the queue is empty without a call to the discipline.
    held: u64,
}

impl PortQueue {
    pub fn new(qdisc: Box<dyn Qdisc>, rng: Rng, rate_bps: f64) -> Self {
        PortQueue { qdisc, stats: QStats::default(), rng, out: QOut::default(), rate_bps, held: 0 }
    }

    /// Offer packet `id` at `now`; true if it was queued. The packets the discipline dropped
    /// (the arrival itself, or queued ones it pushed out) are then listed in `dropped()`,
    /// counted but still allocated: the caller frees them.
    #[inline]
    pub fn enqueue(&mut self, id: PktId, now: Time, pkts: &mut PacketPool) -> bool {
        let class = {
            let p = pkts.get_mut(id);
            p.enq_ns = now;
            p.class.index()
        };
        self.stats.arrivals[class] += 1;
        self.out.clear();
        let mut cx = QCtx { now, pkts, rng: &mut self.rng, out: &mut self.out, link_bps: self.rate_bps };
        let accepted = self.qdisc.enqueue(id, &mut cx);
        if accepted {
            self.stats.enqueued[class] += 1;
            self.stats.occupancy[class] += 1;
            self.held += 1;
        }
        self.account(Some(id), pkts);
        self.check_held();
        accepted
    }

    /// Count packet `id` offered at `now` to the empty queue of a discipline that passes it
    /// straight through (`Qdisc::idle_pass_max_bytes`): arrived, admitted and departed, as
    /// `enqueue` then `dequeue` would count it, without calling the discipline.
    #[inline]
    pub fn pass(&mut self, id: PktId, now: Time, pkts: &mut PacketPool) {
        let p = pkts.get_mut(id);
        p.enq_ns = now;
        let c = p.class.index();
        self.stats.arrivals[c] += 1;
        self.stats.enqueued[c] += 1;
        self.stats.departed[c] += 1;
    }

    /// The next packet to send, if any (counted as departed). Packets the discipline drops on
    /// the way are listed in `dropped()`, as after `enqueue`.
    #[inline]
    pub fn dequeue(&mut self, now: Time, pkts: &mut PacketPool) -> Option<PktId> {
        self.out.clear();
        let mut cx = QCtx { now, pkts, rng: &mut self.rng, out: &mut self.out, link_bps: self.rate_bps };
        let next = self.qdisc.dequeue(&mut cx);
        self.account(None, pkts);
        if let Some(id) = next {
            let c = pkts.get(id).class.index();
            self.stats.occupancy[c] -= 1;
            self.stats.departed[c] += 1;
            self.held -= 1;
        }
        self.check_held();
        next
    }

    /// Whether the discipline holds no packet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.held == 0
    }

    /// In the crate's tests, every call checks that the count kept here is the discipline's.
    #[inline(always)]
    fn check_held(&self) {
        if cfg!(test) {
            assert_eq!(self.held, self.qdisc.len_pkts() as u64, "packets held: port count against discipline");
        }
    }

    /// The packets dropped in the last `enqueue` or `dequeue`, with the reasons, in order.
    #[inline]
    pub fn dropped(&self) -> &[(PktId, DropReason)] {
        &self.out.drops
    }

    /// Whether the last arrival was queued with preference (FavorQueue's "favoured").
    #[inline]
    pub fn favored(&self) -> bool {
        self.out.favored
    }

    /// Count a packet lost after the queue (on the wire): a drop for the port's totals.
    #[inline]
    pub fn count_link_loss(&mut self, p: &Packet) {
        self.stats.drops[DropReason::LinkLoss as usize][p.class.index()] += 1;
    }

    /// Count what the discipline reported during one call (`arrival`: the offered packet, in
    /// an enqueue). Every dropped packet other than the arrival was queued, so it leaves the
    /// occupancy.
    #[inline]
    fn account(&mut self, arrival: Option<PktId>, pkts: &PacketPool) {
        for &m in &self.out.marked {
            self.stats.marks[pkts.get(m).class.index()] += 1;
        }
        for &(d, why) in &self.out.drops {
            let c = pkts.get(d).class.index();
            self.stats.drops[why as usize][c] += 1;
            if Some(d) != arrival {
                self.stats.occupancy[c] -= 1;
                self.held -= 1;
            }
        }
    }
}

/// A link's sending end: its queue, transmitter and propagation line, and the losses the
/// link applies (Bernoulli and injected faults).
pub struct Port {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub delay_ns: Time,
    pub loss: f64,
    pub queue: PortQueue,
    ns_per_byte: f64,
    loss_rng: Rng,
    faults: Vec<(FaultSpec, u32)>,
    /// Whether the port may defer transmission ends (see the module header).
    defer_ok: bool,
    /// The largest packet the idle pass takes (see the module header), if the discipline
    /// allows it; and how many packets took it.
    idle_pass: Option<u64>,
    passes: u64,
    /// The packet being serialised, and when it ends.
    busy: bool,
    tx_pkt: PktId,
    tx_end: Time,
    /// The link loses the current packet (drawn when its transmission starts).
    tx_lost: bool,
    /// The current packet is already on the line (its end was deferred); `deferred`: that
    /// end is not in the event heap, and `tx_seq` is the insertion number reserved for it.
    sent_early: bool,
    deferred: bool,
    tx_seq: u64,
    /// The insertion number of the current packet's arrival event, taken when its
    /// transmission started.
    arrival_seq: u64,
    /// Time spent transmitting, ns, including the current transmission's remainder.
    busy_ns: Time,
    /// The last packet size serialised and its transmission time (most packets share a size,
    /// so the float product and rounding are skipped).
    tx_memo: (u32, Time),
    /// Packets propagating on the link, oldest first: (arrival time, event insertion number,
    /// packet). Only the head is in the event heap.
    line: Line,
    /// Counters at the last sample, and busy time up to it.
    pub(super) last_sample: QStats,
    pub(super) last_busy: Time,
}

impl Port {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        from: u32,
        to: u32,
        rate_bps: f64,
        delay_ns: Time,
        loss: f64,
        qdisc: Box<dyn Qdisc>,
        rng: Rng,
        loss_rng: Rng,
    ) -> Self {
        let defer_ok = qdisc.empty_dequeue_is_noop();
        let idle_pass = qdisc.idle_pass_max_bytes();
        Port {
            name,
            from,
            to,
            delay_ns,
            loss,
            queue: PortQueue::new(qdisc, rng, rate_bps),
            ns_per_byte: 8e9 / rate_bps,
            loss_rng,
            faults: Vec::new(),
            defer_ok,
            idle_pass,
            passes: 0,
            busy: false,
            tx_pkt: 0,
            tx_end: 0,
            tx_lost: false,
            sent_early: false,
            deferred: false,
            tx_seq: 0,
            arrival_seq: 0,
            busy_ns: 0,
            tx_memo: (u32::MAX, 0),
            line: Line::default(),
            last_sample: QStats::default(),
            last_busy: 0,
        }
    }

    pub fn add_fault(&mut self, f: FaultSpec) {
        self.faults.push((f, 0));
        self.defer_ok = false;
    }

    #[inline]
    pub fn busy(&self) -> bool {
        self.busy
    }

    /// Start sending the next queued packet if the transmitter is idle and one is queued;
    /// returns when its transmission ends. Drops made by the dequeue are in
    /// `queue.dropped()`.
    #[inline]
    pub fn start_tx(&mut self, now: Time, pkts: &mut PacketPool) -> Option<Time> {
        let id = self.queue.dequeue(now, pkts)?;
        Some(self.begin_tx(id, now, pkts))
    }

    /// Whether packet `id`, arriving now, takes the idle pass: the transmitter is idle, the
    /// queue empty, and the discipline passes such a packet straight through. If so it is
    /// counted (`PortQueue::pass`) and its transmission started; returns when it ends.
    #[inline]
    pub fn try_idle_pass(&mut self, id: PktId, now: Time, pkts: &mut PacketPool) -> Option<Time> {
        let max = self.idle_pass?;
        if self.busy || pkts.get(id).size as u64 > max || !self.queue.is_empty() {
            return None;
        }
        self.queue.pass(id, now, pkts);
        self.passes += 1;
        Some(self.begin_tx(id, now, pkts))
    }

    /// Packets that took the idle pass so far.
    pub fn idle_passes(&self) -> u64 {
        self.passes
    }

    /// Never take the idle pass (tests compare runs with and without it).
    #[cfg(test)]
    pub(crate) fn forbid_idle_pass(&mut self) {
        self.idle_pass = None;
    }

    /// Time to serialise `bytes` on this link, ns.
    #[inline]
    pub fn tx_ns(&self, bytes: u32) -> Time {
        (bytes as f64 * self.ns_per_byte).round() as Time
    }

    /// Start serialising packet `id` (taken from the queue, or passed): returns when its
    /// transmission ends.
    #[inline(always)]
    fn begin_tx(&mut self, id: PktId, now: Time, pkts: &PacketPool) -> Time {
        let p = pkts.get(id);
        let size = p.size;
        let tx = if self.tx_memo.0 == size {
            self.tx_memo.1
        } else {
            let tx = self.tx_ns(size);
            self.tx_memo = (size, tx);
            tx
        };
        // The link's verdict on the packet, drawn now rather than at the end: the port's own
        // stream, one draw per packet in transmission order either way, so a packet the link
        // keeps may have its end deferred.
        self.tx_lost = (!self.faults.is_empty() && fault_hits(&mut self.faults, p))
            || (self.loss > 0.0 && self.loss_rng.bernoulli(self.loss));
        self.busy = true;
        self.tx_pkt = id;
        self.tx_end = now + tx;
        self.busy_ns += tx;
        now + tx
    }

    /// The packet being transmitted (valid while the link is busy).
    #[inline]
    pub fn tx_pkt(&self) -> PktId {
        self.tx_pkt
    }

    /// Never defer transmission ends (tests compare runs with and without deferral).
    #[cfg(test)]
    pub(crate) fn forbid_deferred_ends(&mut self) {
        self.defer_ok = false;
    }

    /// Whether the transmission just started may end without an event: the port allows it
    /// nothing is queued behind the packet and the link keeps it.
    #[inline]
    pub fn can_defer_end(&self) -> bool {
        self.defer_ok && !self.tx_lost && self.queue.is_empty()
    }

    /// Defer the end of the transmission just started (insertion number `seq` reserved for
    /// it): the packet is sent on now (the caller puts it on the line); returns it.
    #[inline]
    pub fn defer_end(&mut self, seq: u64) -> PktId {
        self.sent_early = true;
        self.deferred = true;
        self.tx_seq = seq;
        self.tx_pkt
    }

    /// The insertion number of the current packet's arrival event (see `set_arrival_seq`).
    #[inline]
    pub fn arrival_seq(&self) -> u64 {
        self.arrival_seq
    }

    /// Keep the insertion number taken for the current packet's arrival at the start of its
    /// transmission, for when the transmission ends.
    #[inline]
    pub fn set_arrival_seq(&mut self, seq: u64) {
        self.arrival_seq = seq;
    }

    /// The deferred transmission end, if there is one: (time, insertion number). Taking it
    /// leaves the caller to either schedule it or, if it has passed, call `end_deferred`.
    #[inline]
    pub fn take_deferred_end(&mut self) -> Option<(Time, u64)> {
        if !self.deferred {
            return None;
        }
        self.deferred = false;
        Some((self.tx_end, self.tx_seq))
    }

    /// The deferred end is not taken yet: (time, insertion number).
    #[inline]
    pub fn deferred_end(&self) -> Option<(Time, u64)> {
        self.deferred.then_some((self.tx_end, self.tx_seq))
    }

    /// The transmission of a packet already sent on (a deferred end) is over: the
    /// transmitter is free. True if it was such a transmission.
    #[inline]
    pub fn end_deferred(&mut self) -> bool {
        if !self.sent_early {
            return false;
        }
        self.sent_early = false;
        self.busy = false;
        true
    }

    /// The current transmission ended: the packet sent, and whether the link lost it (then
    /// counted as a link loss; the caller frees it).
    #[inline]
    pub fn end_tx(&mut self, pkts: &PacketPool) -> (PktId, bool) {
        self.busy = false;
        let id = self.tx_pkt;
        if self.tx_lost {
            self.queue.count_link_loss(pkts.get(id));
        }
        (id, self.tx_lost)
    }

    /// Put packet `id` on the line, to arrive at `at` (event insertion number `seq`); true if
    /// it is the line's head (the caller then schedules its arrival).
    #[inline]
    pub fn propagate(&mut self, at: Time, seq: u64, id: PktId) -> bool {
        self.line.push_back((at, seq, id));
        self.line.len() == 1
    }

    /// Take the packet at the head of the line; the next head's (time, insertion number).
    #[inline]
    pub fn arrive(&mut self) -> (PktId, Option<(Time, u64)>) {
        let (_, _, id) = self.line.pop_front().expect("an arrival event has its packet in the line");
        (id, self.line.front().map(|&(t, seq, _)| (t, seq)))
    }

    /// The packet at the head of the line (the next to arrive), if any.
    #[inline]
    pub fn line_head(&self) -> Option<PktId> {
        self.line.front().map(|&(_, _, id)| id)
    }

    /// Busy time up to `now`, without the part of the current transmission still ahead.
    pub fn busy_until(&self, now: Time) -> Time {
        self.busy_ns - if self.busy { self.tx_end.saturating_sub(now) } else { 0 }
    }
}

/// Count this transmission against every matching fault; true if one of them says this is
/// the transmission to lose.
fn fault_hits(faults: &mut [(FaultSpec, u32)], p: &Packet) -> bool {
    let mut hit = false;
    for (f, seen) in faults.iter_mut() {
        let kind_ok = matches!(
            (f.kind, p.kind),
            (FaultKind::Syn, PktKind::Syn)
                | (FaultKind::SynAck, PktKind::SynAck)
                | (FaultKind::Data, PktKind::Data)
                | (FaultKind::Ack, PktKind::Ack)
                | (FaultKind::Fin, PktKind::Fin)
        );
        let seq_ok = matches!(f.kind, FaultKind::Syn | FaultKind::SynAck) || f.seq == p.seq;
        if kind_ok && f.flow == p.flow && seq_ok {
            *seen += 1;
            hit |= *seen == f.occurrence;
        }
    }
    hit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::droptail::DropTail;

    fn pkt(flow: u32, size: u32) -> Packet {
        Packet { size, ..Packet::test_data(flow, 0) }
    }

    #[test]
    fn the_queue_wrapper_counts_every_arrival_drop_and_departure_once() {
        // A 2-packet drop-tail offered 5 packets: 2 queued, 3 dropped on overflow and listed
        // for the caller to free; the occupancy follows the discipline through a dequeue.
        let mut pkts = PacketPool::new();
        let mut q = PortQueue::new(Box::new(DropTail::new(2, None)), Rng::stream(1, "q"), 1e7);
        let mut freed = 0;
        for i in 0..5 {
            let id = pkts.alloc(pkt(i, 1500));
            let queued = q.enqueue(id, 10, &mut pkts);
            assert_eq!(queued, i < 2, "packet {i}");
            for &(d, why) in q.dropped() {
                assert_eq!((d, why), (id, DropReason::Overflow));
                pkts.free(d);
                freed += 1;
            }
        }
        let s = &q.stats;
        assert_eq!((s.arrivals[0], s.enqueued[0], s.dropped(0), freed), (5, 2, 3, 3));
        assert_eq!(s.occupancy[0], q.qdisc.len_pkts() as u64);
        let first = q.dequeue(20, &mut pkts).expect("a queued packet");
        assert_eq!(pkts.get(first).flow, 0);
        assert_eq!(pkts.get(first).enq_ns, 10, "the wrapper stamps the enqueue time");
        assert_eq!((q.stats.departed[0], q.stats.occupancy[0]), (1, 1));
        assert_eq!(q.stats.occupancy[0], q.qdisc.len_pkts() as u64);
    }

    #[test]
    fn a_port_serialises_at_the_link_rate_and_keeps_the_line_in_order() {
        // 10 Mb/s: a 1500-byte packet takes 1.2 ms. Two packets leave back to back, and the
        // line gives them back oldest first; busy time excludes what is still ahead.
        let mut pkts = PacketPool::new();
        let dt = Box::new(DropTail::new(10, None));
        let mut port =
            Port::new("a->b".into(), 0, 1, 1e7, 5_000_000, 0.0, dt, Rng::stream(1, "q"), Rng::stream(1, "l"));
        let a = pkts.alloc(pkt(0, 1500));
        let b = pkts.alloc(pkt(1, 1500));
        port.queue.enqueue(a, 0, &mut pkts);
        port.queue.enqueue(b, 0, &mut pkts);
        assert_eq!(port.start_tx(0, &mut pkts), Some(1_200_000));
        assert!(port.busy());
        assert_eq!(port.busy_until(400_000), 400_000);
        assert_eq!(port.end_tx(&pkts), (a, false));
        assert!(port.propagate(1_200_000 + port.delay_ns, 1, a), "the first packet heads the line");
        assert_eq!(port.start_tx(1_200_000, &mut pkts), Some(2_400_000));
        assert_eq!(port.end_tx(&pkts), (b, false));
        assert!(!port.propagate(2_400_000 + port.delay_ns, 2, b));
        assert_eq!(port.arrive(), (a, Some((7_400_000, 2))));
        assert_eq!(port.arrive(), (b, None));
        assert_eq!(port.busy_until(3_000_000), 2_400_000);
    }

    #[test]
    fn a_deferred_end_is_offered_only_for_a_kept_packet_on_an_empty_noop_port() {
        // Deferral needs an empty queue behind the packet, a discipline whose empty dequeue
        // does nothing, a packet the link does not lose and no injected fault; the deferred end is taken once,
        // and frees the transmitter of a packet already sent on.
        let mut pkts = PacketPool::new();
        let mk = |loss: f64, q: Box<dyn Qdisc>| {
            Port::new("a->b".into(), 0, 1, 1e7, 1_000, loss, q, Rng::stream(1, "q"), Rng::stream(1, "l"))
        };
        let mut port = mk(0.0, Box::new(DropTail::new(10, None)));
        let a = pkts.alloc(pkt(0, 1500));
        let b = pkts.alloc(pkt(1, 1500));
        port.queue.enqueue(a, 0, &mut pkts);
        port.queue.enqueue(b, 0, &mut pkts);
        port.start_tx(0, &mut pkts);
        assert!(!port.can_defer_end(), "a packet is queued behind");
        port.end_tx(&pkts);
        assert!(!port.end_deferred(), "an ordinary end is not a deferred one");
        assert_eq!(port.start_tx(1_200_000, &mut pkts), Some(2_400_000));
        assert!(port.can_defer_end());
        assert_eq!(port.defer_end(7), b);
        assert_eq!(port.deferred_end(), Some((2_400_000, 7)));
        assert_eq!(port.take_deferred_end(), Some((2_400_000, 7)));
        assert_eq!(port.take_deferred_end(), None);
        assert!(port.busy() && port.end_deferred() && !port.busy());
        use crate::aqm::registry::DisciplineSpec;
        let red_spec: crate::aqm::red::RedSpec = toml::from_str("limit_pkts = 10\nmin_th = 2.0\nmax_th = 6.0").unwrap();
        let red = red_spec.build(1500);
        for (name, mut p) in [("lost", mk(1.0, Box::new(DropTail::new(10, None)))), ("red", mk(0.0, red))] {
            let c = pkts.alloc(pkt(2, 1500));
            p.queue.enqueue(c, 0, &mut pkts);
            p.start_tx(0, &mut pkts);
            assert!(!p.can_defer_end(), "{name}");
        }
        let mut faulty = mk(0.0, Box::new(DropTail::new(10, None)));
        faulty.add_fault(toml::from_str("link = \"a->b\"\nflow = 0\nkind = \"data\"").unwrap());
        let c = pkts.alloc(pkt(3, 1500));
        faulty.queue.enqueue(c, 0, &mut pkts);
        faulty.start_tx(0, &mut pkts);
        assert!(!faulty.can_defer_end(), "faults");
    }

    #[test]
    fn an_idle_pass_counts_and_times_a_packet_as_enqueue_then_dequeue_would() {
        // A packet reaching an idle drop-tail port with an empty queue starts at once, counted
        // arrived, admitted and departed, stamped with its enqueue time, and ends when the
        // queued path's transmission would. A busy transmitter, a packet queued, a packet
        // over the byte limit or a discipline that acts on that path (RED) take the queue.
        let mut pkts = PacketPool::new();
        let mk = |q: Box<dyn Qdisc>| {
            Port::new("a->b".into(), 0, 1, 1e7, 1_000, 0.0, q, Rng::stream(1, "q"), Rng::stream(1, "l"))
        };
        let mut queued = mk(Box::new(DropTail::new(10, None)));
        let a = pkts.alloc(pkt(0, 1500));
        queued.queue.enqueue(a, 5, &mut pkts);
        let queued_end = queued.start_tx(5, &mut pkts);
        let mut passed = mk(Box::new(DropTail::new(10, None)));
        let b = pkts.alloc(pkt(0, 1500));
        assert_eq!(passed.try_idle_pass(b, 5, &mut pkts), queued_end);
        assert_eq!((passed.tx_pkt(), pkts.get(b).enq_ns, passed.idle_passes()), (b, 5, 1));
        let (q, p) = (&queued.queue.stats, &passed.queue.stats);
        assert_eq!(
            (p.arrivals, p.enqueued, p.departed, p.occupancy),
            (q.arrivals, q.enqueued, q.departed, q.occupancy)
        );
        assert_eq!(p.arrivals[0], 1);
        let c = pkts.alloc(pkt(1, 1500));
        assert_eq!(passed.try_idle_pass(c, 6, &mut pkts), None, "the transmitter is busy");
        assert_eq!(passed.queue.stats.arrivals[0], 1, "a refused pass counts nothing");
        passed.end_tx(&pkts);
        passed.queue.enqueue(c, 7, &mut pkts);
        let d = pkts.alloc(pkt(2, 1500));
        assert_eq!(passed.try_idle_pass(d, 8, &mut pkts), None, "a packet is queued");
        let mut small = mk(Box::new(DropTail::new(10, Some(1000))));
        assert_eq!(small.try_idle_pass(d, 8, &mut pkts), None, "over the byte limit");
        let e = pkts.alloc(pkt(3, 1000));
        assert!(small.try_idle_pass(e, 8, &mut pkts).is_some(), "within the byte limit");
        use crate::aqm::registry::DisciplineSpec;
        let red_spec: crate::aqm::red::RedSpec = toml::from_str("limit_pkts = 10\nmin_th = 2.0\nmax_th = 6.0").unwrap();
        let mut red = mk(red_spec.build(1500));
        assert_eq!(red.try_idle_pass(d, 8, &mut pkts), None, "RED updates its average on arrival");
    }

    #[test]
    fn a_lossy_link_defers_exactly_the_packets_it_keeps() {
        // Loss 0.5: the verdict drawn at the start decides; every packet not deferred is one
        // the link loses at its end, and the draws follow the port's stream as before.
        let mut pkts = PacketPool::new();
        let mut port = Port::new(
            "a->b".into(),
            0,
            1,
            1e7,
            1_000,
            0.5,
            Box::new(DropTail::new(10, None)),
            Rng::stream(1, "q"),
            Rng::stream(1, "l"),
        );
        let mut reference = Rng::stream(1, "l");
        let (mut kept, mut lost) = (0, 0);
        for i in 0..200 {
            let c = pkts.alloc(pkt(i, 1500));
            port.queue.enqueue(c, 0, &mut pkts);
            port.start_tx(0, &mut pkts);
            let will_lose = reference.bernoulli(0.5);
            if port.can_defer_end() {
                assert!(!will_lose, "packet {i}");
                port.defer_end(0);
                assert!(port.end_deferred());
                kept += 1;
            } else {
                assert_eq!(port.end_tx(&pkts), (c, true), "packet {i}");
                assert!(will_lose, "packet {i}");
                lost += 1;
            }
        }
        assert!(kept > 60 && lost > 60, "{kept} kept, {lost} lost");
        assert_eq!(port.queue.stats.drops[DropReason::LinkLoss as usize][0], lost);
    }
}
