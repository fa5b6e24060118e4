//! Engine: the integer-nanosecond clock, the event queue, and seeded RNG streams.
//!
//! One binary heap orders events by (time, insertion sequence), so two events at the same
//! nanosecond fire in the order they were scheduled: runs are deterministic. Timers are
//! cancelled lazily (an event carries a generation number its owner compares against).
//! Every source of randomness draws from its own stream, derived from the scenario seed
//! and a fixed stream name, so that the seed rule of `../shared/design.md` holds: changing
//! the queue discipline changes no workload draw.

pub mod rng;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

pub use rng::Rng;

/// Simulated time in nanoseconds.
pub type Time = u64;

pub const NS_PER_S: f64 = 1e9;

pub fn secs_to_ns(s: f64) -> Time {
    (s * NS_PER_S).round() as Time
}

pub fn ns_to_secs(t: Time) -> f64 {
    t as f64 / NS_PER_S
}

/// What happens when an event fires. Kept small (12 bytes) so the heap stays cache-friendly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The link finished serialising its current packet.
    TxDone { link: u32 },
    /// A packet reaches `node` at the end of a link's propagation delay.
    Arrive { node: u32, pkt: u32 },
    /// Retransmission timer of a TCP endpoint (lazy: `gen` must match the endpoint's).
    TcpTimer { ep: u32, gen: u32 },
    /// Delayed-ACK timer of a TCP endpoint.
    DelAck { ep: u32, gen: u32 },
    /// Next action of a traffic generator (an arrival, a session step, a UDP packet).
    Traffic { src: u32, arg: u32 },
    /// Periodic work of an edge classifier (soft state, threshold control).
    Classify { idx: u32 },
    /// Periodic measurement (queue sampling).
    Sample,
    /// Per-flow goodput record window.
    Goodput,
    /// Next packet of a UDP sender.
    UdpSend { idx: u32 },
    /// End of the run.
    Stop,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // BinaryHeap is a max-heap: reverse so the earliest (time, seq) is on top.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// The event queue and the clock.
pub struct Scheduler {
    heap: BinaryHeap<Entry>,
    seq: u64,
    now: Time,
    popped: u64,
}

impl Default for Scheduler {
    fn default() -> Self {
        Self::new()
    }
}

impl Scheduler {
    pub fn new() -> Self {
        Scheduler { heap: BinaryHeap::with_capacity(1 << 12), seq: 0, now: 0, popped: 0 }
    }
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }
    /// Schedule `ev` at absolute time `at` (never before now).
    #[inline]
    pub fn at(&mut self, at: Time, ev: Event) {
        let time = at.max(self.now);
        self.seq += 1;
        self.heap.push(Entry { time, seq: self.seq, ev });
    }
    /// Schedule `ev` after `delay` nanoseconds.
    #[inline]
    pub fn after(&mut self, delay: Time, ev: Event) {
        self.at(self.now.saturating_add(delay), ev)
    }
    /// Pop the next event and advance the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let e = self.heap.pop()?;
        debug_assert!(e.time >= self.now);
        self.now = e.time;
        self.popped += 1;
        Some(e.ev)
    }
    /// Number of events processed so far.
    pub fn events(&self) -> u64 {
        self.popped
    }
    pub fn pending(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_fire_in_time_then_insertion_order() {
        let mut s = Scheduler::new();
        s.at(10, Event::Sample);
        s.at(5, Event::TxDone { link: 1 });
        s.at(10, Event::Stop);
        s.at(5, Event::TxDone { link: 2 });
        let order: Vec<_> = std::iter::from_fn(|| s.pop().map(|e| (s.now(), e))).collect();
        assert_eq!(
            order,
            vec![
                (5, Event::TxDone { link: 1 }),
                (5, Event::TxDone { link: 2 }),
                (10, Event::Sample),
                (10, Event::Stop)
            ]
        );
        assert_eq!(s.events(), 4);
    }

    #[test]
    fn scheduling_in_the_past_fires_now() {
        let mut s = Scheduler::new();
        s.at(100, Event::Sample);
        s.pop();
        s.at(50, Event::Stop);
        s.pop();
        assert_eq!(s.now(), 100);
    }
}
