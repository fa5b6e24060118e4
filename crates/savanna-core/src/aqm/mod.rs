//! Queue disciplines. One discipline per file (as Linux `net/sched/sch_*.c`), all behind the
//! `Qdisc` trait, sharing RED's average, drop-curve math and parameters in `redmath.rs`.
//! Each file also owns its spec, check and construction (`registry::DisciplineSpec`);
//! `registry.rs` lists them once by `type` (docs/components.md).
//!
//! The contract a discipline implements (so size-aware disciplines need no engine change):
//! - `enqueue` sees the arriving packet (its flow id, class mark, kind, ECN codepoint) and
//!   may accept it, drop it, or push out queued packets, reporting every drop through
//!   `QCtx::drop` with a reason and ECN marks through `QCtx::mark`;
//! - `dequeue` may pick any queued packet (and may drop others on the way, e.g. CoDel);
//! - the engine keeps the accounting (arrivals, departures, drops by reason and class,
//!   marks, occupancy by class), so every discipline is counted the same way.

pub mod aifo;
pub mod choke;
pub mod cobalt;
pub mod codel;
pub mod droptail;
pub mod drr;
pub mod dualpi2;
pub mod favorqueue;
pub mod fq_codel;
pub mod fq_pie;
pub mod las;
pub mod pfabric;
pub mod pi;
pub mod pias;
pub mod pie;
pub mod prq;
pub mod rank;
pub mod red;
pub mod reddiff;
pub mod redmath;
pub mod registry;
pub mod rio;
pub mod run2c;
pub mod sppifo;
pub mod step;

pub use registry::{DisciplineSpec, QueueSpec};

use crate::engine::{Rng, Time};
use crate::net::{Ecn, PacketPool, PktId};

/// A map keyed by flow id, for the disciplines that keep per-flow state (FavorQueue, LAS,
/// the attained-service rank). Such a map is looked up on every packet, and `std`'s default
/// hasher (SipHash with a random key) cost about 4% of a FavorQueue run (issue 21); a flow
/// id is a small integer the simulator chose, not an adversary's key, so one multiplication
/// spreads it well enough. No discipline depends on a map's iteration order (the default
/// hasher's is random per process), so runs are byte-identical.
pub type FlowMap<V> = std::collections::HashMap<u32, V, std::hash::BuildHasherDefault<FlowHasher>>;

/// A new, empty `FlowMap` with room for `n` flows.
pub fn flow_map<V>(n: usize) -> FlowMap<V> {
    FlowMap::with_capacity_and_hasher(n, Default::default())
}

/// The hasher of `FlowMap`: a multiplication by an odd constant (Fibonacci hashing, as
/// rustc's FxHasher), folded so that the table's index bits see the high bits too.
#[derive(Default, Clone, Copy)]
pub struct FlowHasher(u64);

impl std::hash::Hasher for FlowHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.0 = (self.0.rotate_left(5) ^ x as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum DropReason {
    /// Buffer full (tail drop).
    Overflow = 0,
    /// Random early drop (RED-family probability).
    Early = 1,
    /// Forced drop: the average is above the hard threshold.
    Forced = 2,
    /// A queued packet pushed out to make room for a preferred arrival.
    PushOut = 3,
    /// Dropped by a sojourn-time law (CoDel/PIE) or a discipline-specific rule (CHOKe pair).
    Policy = 4,
    /// Lost on a link (Bernoulli loss or an injected fault); not a queue drop.
    LinkLoss = 5,
}

impl DropReason {
    pub const COUNT: usize = 6;
    pub const ALL: [DropReason; 6] = [
        DropReason::Overflow,
        DropReason::Early,
        DropReason::Forced,
        DropReason::PushOut,
        DropReason::Policy,
        DropReason::LinkLoss,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
            DropReason::PushOut => "pushout",
            DropReason::Policy => "policy",
            DropReason::LinkLoss => "link_loss",
        }
    }
}

/// Drops and marks a discipline reported during one enqueue or dequeue call.
/// The vectors are reused (cleared by the engine), so reporting allocates nothing.
#[derive(Default)]
pub struct QOut {
    pub drops: Vec<(PktId, DropReason)>,
    pub marks: u32,
    pub marked: Vec<PktId>,
    /// The arriving packet was queued with preference (FavorQueue's "favoured").
    pub favored: bool,
}

impl QOut {
    pub fn clear(&mut self) {
        self.drops.clear();
        self.marked.clear();
        self.marks = 0;
        self.favored = false;
    }
}

/// What a discipline may use while handling a packet.
pub struct QCtx<'a> {
    pub now: Time,
    pub pkts: &'a mut PacketPool,
    /// This queue's own random stream.
    pub rng: &'a mut Rng,
    pub out: &'a mut QOut,
    /// Rate of the link the queue feeds, bits per second (RED's idle-time correction).
    pub link_bps: f64,
}

impl QCtx<'_> {
    /// Report a drop. The packet must no longer be held by the discipline.
    #[inline]
    pub fn drop(&mut self, p: PktId, why: DropReason) {
        self.out.drops.push((p, why));
    }
    /// Report that the arriving packet was queued as favoured (counted per flow in
    /// `favored_pkts`).
    #[inline]
    pub fn favor(&mut self) {
        self.out.favored = true;
    }
    /// Try to ECN-mark a packet (RFC 3168): an ECT(0) or ECT(1) packet becomes CE and true is returned;
    /// a not-ECT packet is left alone and false is returned (the caller then drops it).
    #[inline]
    pub fn mark(&mut self, p: PktId) -> bool {
        let pk = self.pkts.get_mut(p);
        match pk.ecn {
            Ecn::Ect | Ecn::Ect1 => {
                pk.ecn = Ecn::Ce;
                self.out.marks += 1;
                self.out.marked.push(p);
                true
            }
            Ecn::Ce => true,
            Ecn::NotEct => false,
        }
    }
}

/// A queue discipline on a link's egress.
pub trait Qdisc {
    /// Short name ("droptail", "red", ...).
    fn kind(&self) -> &'static str;
    /// Offer an arriving packet. Returns true if it was queued (it may still push others
    /// out); false if it was dropped, in which case `cx.drop` was called for it.
    fn enqueue(&mut self, p: PktId, cx: &mut QCtx) -> bool;
    /// Remove the next packet to transmit.
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId>;
    fn len_pkts(&self) -> usize;
    fn len_bytes(&self) -> u64;
    /// Whether `dequeue` on an empty queue does nothing at all (no state, no drop, no
    /// random draw), so that the port may skip that call at the end of a transmission
    /// (`sim::port`: a transmission end kept out of the event heap). False by default.
    fn empty_dequeue_is_noop(&self) -> bool {
        false
    }
    /// The largest packet, in bytes, that an empty queue of this discipline admits and
    /// hands straight back with no other effect (no state, mark, drop or random draw): the
    /// port then sends such a packet arriving at an idle link without the enqueue and
    /// dequeue calls (`sim::port`: the idle pass). None (the default) if either call does
    /// anything more on that path.
    fn idle_pass_max_bytes(&self) -> Option<u64> {
        None
    }
    /// The discipline's average queue estimate in packets (RED's avg), if it keeps one.
    fn avg(&self) -> Option<f64> {
        None
    }
    /// The discipline itself, for tests and tools that read its own readings (DualPI2's
    /// sojourn histograms) from a running port; None by default.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// FIFO of packet ids with byte accounting, the storage most disciplines build on.
#[derive(Default)]
pub struct Fifo {
    q: std::collections::VecDeque<PktId>,
    bytes: u64,
}

impl Fifo {
    /// A FIFO for a queue of up to `n` packets: it reserves room for at most 64 at first
    /// and grows (a few times per run, never once its queue has been full) beyond that, so
    /// that the many lightly used queues of a topology (hosts' access links) stay small.
    pub fn with_capacity(n: usize) -> Self {
        Fifo { q: std::collections::VecDeque::with_capacity(n.min(64)), bytes: 0 }
    }
    #[inline]
    pub fn push(&mut self, p: PktId, pkts: &PacketPool) {
        self.bytes += pkts.get(p).size as u64;
        self.q.push_back(p);
    }
    #[inline]
    pub fn pop(&mut self, pkts: &PacketPool) -> Option<PktId> {
        let p = self.q.pop_front()?;
        self.bytes -= pkts.get(p).size as u64;
        Some(p)
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn iter(&self) -> impl Iterator<Item = &PktId> {
        self.q.iter()
    }
    /// Remove the packet at position `i` (0 = head).
    pub fn remove_at(&mut self, i: usize, pkts: &PacketPool) -> Option<PktId> {
        let p = self.q.remove(i)?;
        self.bytes -= pkts.get(p).size as u64;
        Some(p)
    }
    pub fn insert_at(&mut self, i: usize, p: PktId, pkts: &PacketPool) {
        self.bytes += pkts.get(p).size as u64;
        self.q.insert(i, p);
    }
    pub fn get(&self, i: usize) -> Option<PktId> {
        self.q.get(i).copied()
    }
}

/// Strict-priority bands: FIFOs served lowest index first (PIAS's levels, SP-PIFO's
/// queues), with the packet total kept for an O(1) shared-buffer limit.
pub struct Bands {
    qs: Vec<Fifo>,
    len: usize,
}

impl Bands {
    /// `n` bands sharing a buffer of `limit_pkts`.
    pub fn new(n: usize, limit_pkts: usize) -> Self {
        Bands { qs: (0..n).map(|_| Fifo::with_capacity(limit_pkts)).collect(), len: 0 }
    }
    #[inline]
    pub fn push(&mut self, band: usize, p: PktId, pkts: &PacketPool) {
        self.qs[band].push(p, pkts);
        self.len += 1;
    }
    /// The head of the highest-priority non-empty band.
    #[inline]
    pub fn pop(&mut self, pkts: &PacketPool) -> Option<PktId> {
        let p = self.qs.iter_mut().find(|q| !q.is_empty())?.pop(pkts)?;
        self.len -= 1;
        Some(p)
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn bytes(&self) -> u64 {
        self.qs.iter().map(Fifo::bytes).sum()
    }
    #[inline]
    pub fn count(&self) -> usize {
        self.qs.len()
    }
    #[inline]
    pub fn band(&self, i: usize) -> &Fifo {
        &self.qs[i]
    }
    pub fn iter(&self) -> impl Iterator<Item = &Fifo> {
        self.qs.iter()
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    //! A bench for driving a discipline directly with synthetic packets.
    use super::*;
    use crate::net::ClassMark;
    use crate::net::Packet;

    pub struct Bench {
        pub pkts: PacketPool,
        pub rng: Rng,
        pub out: QOut,
        pub now: Time,
        pub link_bps: f64,
    }

    impl Bench {
        pub fn new(seed: u64) -> Self {
            Bench {
                pkts: PacketPool::new(),
                rng: Rng::stream(seed, "bench"),
                out: QOut::default(),
                now: 0,
                link_bps: 10e6,
            }
        }
        pub fn pkt(&mut self, flow: u32, seq: u32, class: ClassMark, ecn: Ecn) -> PktId {
            self.pkts.alloc(Packet { ecn, class, ..Packet::test_data(flow, seq) })
        }
        /// Offer a packet; returns (accepted, drops reported).
        pub fn offer(&mut self, q: &mut dyn Qdisc, p: PktId) -> (bool, Vec<(PktId, DropReason)>) {
            self.out.clear();
            let mut cx = QCtx {
                now: self.now,
                pkts: &mut self.pkts,
                rng: &mut self.rng,
                out: &mut self.out,
                link_bps: self.link_bps,
            };
            let ok = q.enqueue(p, &mut cx);
            (ok, self.out.drops.clone())
        }
        pub fn take(&mut self, q: &mut dyn Qdisc) -> Option<PktId> {
            self.out.clear();
            let mut cx = QCtx {
                now: self.now,
                pkts: &mut self.pkts,
                rng: &mut self.rng,
                out: &mut self.out,
                link_bps: self.link_bps,
            };
            q.dequeue(&mut cx)
        }
    }

    /// What a discipline does over bursts that drain it, from several flows and both
    /// classes, with (`empty_polls`) or without an extra dequeue on the empty queue in
    /// each idle period: every packet taken, every offer's verdict, drops and marks, and
    /// the next draw of the discipline's stream. Equal traces: the extra dequeues did
    /// nothing a later packet could see.
    pub fn trace_with_empty_polls(q: &mut dyn Qdisc, empty_polls: bool) -> Vec<String> {
        let mut b = Bench::new(7);
        let mut trace = Vec::new();
        let mut seq = 0;
        for round in 0..40u32 {
            b.now = round as Time * 50_000_000;
            for i in 0..(3 + round % 7) {
                let flow = (round * 7 + i) % 5;
                let class = if flow % 2 == 0 { ClassMark::Short } else { ClassMark::Long };
                seq += 1;
                let p = b.pkt(flow, seq, class, crate::net::Ecn::Ect);
                let (ok, drops) = b.offer(q, p);
                let (marks, fav, avg) = (b.out.marks, b.out.favored, q.avg());
                trace.push(format!("offer {p:?} {ok} {drops:?} {marks} {fav} {avg:?}"));
                b.now += 400_000;
            }
            while let Some(p) = b.take(q) {
                trace.push(format!("take {p:?} {:?} {}", b.out.drops, b.out.marks));
                b.now += 1_200_000;
            }
            if empty_polls {
                b.now += 1_200_000;
                assert_eq!(b.take(q), None);
            }
        }
        trace.push(format!("next draw {}", b.rng.uniform()));
        trace
    }

    /// The rule `Qdisc::empty_dequeue_is_noop` promises, checked on fresh instances.
    pub fn assert_empty_dequeue_is_noop(make: impl Fn() -> Box<dyn Qdisc>) {
        let (mut a, mut b) = (make(), make());
        assert!(a.empty_dequeue_is_noop(), "{} does not say so", a.kind());
        assert_eq!(trace_with_empty_polls(a.as_mut(), false), trace_with_empty_polls(b.as_mut(), true));
    }
}
