//! Engine: the integer-nanosecond clock, the event queue, and seeded RNG streams.
//!
//! Events are ordered by (time, insertion sequence), so two events at the same
//! nanosecond fire in the order they were scheduled: runs are deterministic. Re-armable
//! timers (`set_timer`, `cancel_timer`) sit in an indexed heap of their own, one slot each:
//! re-arming replaces the slot's entry and cancelling removes it, so no stale timer fires.
//! A link's propagation delay is constant, so its arrivals leave in the order they entered:
//! the simulator keeps them in a per-link line and only the line's head is queued,
//! with the insertion number it was given when it was sent (`reserve_seq`, `at_seq`), so the
//! order of events is exactly that of one queue holding them all, with a smaller queue.
//! Events of the near future go to a ring of time buckets (`calendar`) when their bucket
//! has room; the others (far ahead, or in a crowded bucket) to the event heap, and a pop
//! takes the least of the ring, the heap and the timers, so the order is the same.
//! The event heap is a 4-ary min-heap written here (`EventHeap`): fewer levels per pop than
//! a binary heap, and its pop moves the last entry down through a hole instead of swapping it
//! into the root and reading it back (measured: that read-back stalled the event loop).
//! Every source of randomness draws from its own stream, derived from the scenario seed
//! and a fixed stream name, so that the seed rule of `../shared/design.md` holds: changing
//! the queue discipline changes no workload draw.

mod calendar;
pub mod rng;

use calendar::Calendar;

pub use rng::Rng;

/// Simulated time in nanoseconds.
pub type Time = u64;

pub const NS_PER_S: f64 = 1e9;

pub fn secs_to_ns(s: f64) -> Time {
    round_u64(s * NS_PER_S)
}

/// `x.round() as u64` (half away from zero, saturating; NaN and negatives give 0), without
/// the call to libm's `round` that baseline x86-64 makes for `f64::round` (no SSE4.1 round
/// instruction): the fraction `x - trunc(x)` of a double is exact, so comparing it with
/// one half rounds exactly as `round` does, for every input (`tests::round_u64_is_round`).
/// Used where a time is rounded per packet (the RTO timer).
#[inline]
pub fn round_u64(x: f64) -> u64 {
    let t = x as u64;
    t.saturating_add(u64::from(x - t as f64 >= 0.5))
}

/// `x.rem_euclid(y)` for a positive, normal `y`, exactly as it (every input gives the same
/// bits: `tests::rem_euclid_is_rem_euclid`), without the bit-at-a-time `fmod` that Rust's
/// `%` on doubles links to (about 230 instructions a call, once per RTT sample of a TCP
/// whose timers tick as ns-2's do). A remainder of two doubles is exact: with x = mx 2^ex
/// and y = my 2^ey (integer mantissas below 2^53, ex >= ey when x >= y), it is
/// (mx 2^(ex-ey) mod my) 2^ey, reduced here a few bits at a time in 64-bit integers.
/// Other inputs (a negative, subnormal or non-finite x; y not above 2^-970, whose 2^ey
/// is not a normal double) go to `rem_euclid` itself.
#[inline]
pub fn rem_euclid_pos(x: f64, y: f64) -> f64 {
    if !(x >= 0.0 && x.is_normal() && y >= f64::from_bits(53 << 52)) || y.is_infinite() {
        return x.rem_euclid(y);
    }
    if x < y {
        return x;
    }
    let parts = |v: f64| {
        let b = v.to_bits();
        ((b & ((1 << 52) - 1)) | (1 << 52), ((b >> 52) & 0x7ff) as i32 - 1075)
    };
    let ((mx, ex), (my, ey)) = (parts(x), parts(y));
    // r = mx 2^d mod my, shifting at most 11 bits at a time (r < my < 2^53, so r 2^11 < 2^64).
    let mut r = mx % my;
    let mut d = ex - ey;
    while d > 0 {
        let s = d.min(11);
        r = (r << s) % my;
        d -= s;
    }
    // r < 2^53 is exact as a double; 2^ey is a normal double (ey >= -1022 for y >= 2^-970),
    // and so is the product unless r is 0.
    r as f64 * f64::from_bits(((ey + 1023) as u64) << 52)
}

pub fn ns_to_secs(t: Time) -> f64 {
    t as f64 / NS_PER_S
}

/// What happens when an event fires. Kept small (12 bytes) so the heap stays cache-friendly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The link finished serialising its current packet.
    TxDone { link: u32 },
    /// The packet at the head of `link`'s propagation line reaches the link's far end.
    Arrive { link: u32 },
    /// Retransmission timer of a TCP endpoint (a timer slot: see `Scheduler::set_timer`).
    TcpTimer { ep: u32 },
    /// Delayed-ACK timer of a TCP endpoint (a timer slot).
    DelAck { ep: u32 },
    /// Next action of a traffic generator (an arrival, a session step, a UDP packet).
    Traffic { src: u32, arg: u32 },
    /// Periodic work of an edge classifier (soft state, threshold control).
    Classify { idx: u32 },
    /// Periodic measurement (queue sampling).
    Sample,
    /// Per-flow goodput record window.
    Goodput,
    /// End of the run.
    Stop,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// (time, seq) packed as time * 2^64 + seq: one branch-free comparison of two words
    /// orders entries exactly as the pair does.
    key: u128,
    ev: Event,
}

impl Entry {
    #[inline(always)]
    fn new(time: Time, seq: u64, ev: Event) -> Self {
        Entry { key: pack(time, seq), ev }
    }
    #[inline(always)]
    fn key(&self) -> u128 {
        self.key
    }
    #[inline(always)]
    fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
}

#[inline(always)]
fn pack(time: Time, seq: u64) -> u128 {
    ((time as u128) << 64) | seq as u128
}

/// A 4-ary min-heap of entries on (time, seq). Keys are unique (seq is), so any correct heap
/// pops the same sequence; this one is just cheaper per pop than `std`'s binary heap here.
/// The vector always holds `PAD` sentinel entries (key `u128::MAX`) after the `n` live ones,
/// so every node that has a child has four readable children: the pop picks the least of
/// four with selects instead of a loop of data-dependent branches (measured: those
/// branches mispredicted on most levels). A sentinel never wins against a live entry.
///
/// A popped entry stays at the root, `held`, until the heap is next changed: a push then
/// takes its place and sifts down once (the root replaced), instead of the pop moving the
/// last entry down and the push moving the new one up. An event's handler usually schedules
/// the next one (a link's next arrival, a transmission's end), so most pops pay one sift.
struct EventHeap {
    v: Vec<Entry>,
    /// Entries in `v`, the held one included.
    n: usize,
    /// The root is an entry already popped (logically gone).
    held: bool,
}

const PAD: usize = 4;
const SENTINEL: Entry = Entry { key: u128::MAX, ev: Event::Stop };

impl EventHeap {
    fn with_capacity(n: usize) -> Self {
        let mut v = Vec::with_capacity(n + PAD);
        v.resize(PAD, SENTINEL);
        EventHeap { v, n: 0, held: false }
    }
    #[inline]
    fn len(&self) -> usize {
        self.n - usize::from(self.held)
    }
    /// The least entry (none held: see `settle`).
    #[inline]
    fn peek(&self) -> Option<&Entry> {
        debug_assert!(!self.held);
        if self.n == 0 {
            None
        } else {
            Some(&self.v[0])
        }
    }
    /// Remove the held root, if any, so that the root is the least live entry.
    #[inline]
    fn settle(&mut self) {
        if self.held {
            self.held = false;
            self.remove_root();
        }
    }
    /// Pop the least entry (after `settle`): it stays at the root, held.
    #[inline]
    fn take(&mut self) -> Option<Entry> {
        debug_assert!(!self.held);
        if self.n == 0 {
            return None;
        }
        self.held = true;
        Some(self.v[0])
    }
    #[inline(always)]
    fn push(&mut self, e: Entry) {
        if self.held {
            // The held root is gone: `e` takes its place.
            self.held = false;
            self.sift_down_root(e, self.n);
            return;
        }
        let mut i = self.n;
        self.n += 1;
        if self.v.len() < self.n + PAD {
            self.v.push(SENTINEL);
        }
        let k = e.key();
        while i > 0 {
            let p = (i - 1) / 4;
            if self.v[p].key() <= k {
                break;
            }
            self.v[i] = self.v[p];
            i = p;
        }
        self.v[i] = e;
    }
    /// Remove the root (n > 0): the last entry moves down from the root.
    #[inline]
    fn remove_root(&mut self) {
        self.n -= 1;
        let n = self.n;
        let last = self.v[n];
        self.v[n] = SENTINEL;
        if n > 0 {
            self.sift_down_root(last, n);
        }
    }
    /// Put `e` at the root of the `n` entries (the root's entry discarded) and move it
    /// down to its place.
    #[inline(always)]
    fn sift_down_root(&mut self, e: Entry, n: usize) {
        let k = e.key();
        let mut i = 0;
        loop {
            let c0 = 4 * i + 1;
            if c0 >= n {
                break;
            }
            // c0 < n, so c0 + 3 < n + PAD: all four are readable (sentinels past n).
            let c = &self.v[c0..c0 + 4];
            let (k0, k1, k2, k3) = (c[0].key(), c[1].key(), c[2].key(), c[3].key());
            let (a, ka) = if k1 < k0 { (1, k1) } else { (0, k0) };
            let (b, kb) = if k3 < k2 { (3, k3) } else { (2, k2) };
            let (best, bk) = if kb < ka { (b, kb) } else { (a, ka) };
            if k <= bk {
                break;
            }
            self.v[i] = c[best];
            i = c0 + best;
        }
        self.v[i] = e;
    }
}

/// The event queue and the clock.
pub struct Scheduler {
    /// Near-future events (most of them); the rest wait in `heap`.
    cal: Calendar,
    heap: EventHeap,
    timers: TimerHeap,
    seq: u64,
    now: Time,
    /// Insertion number of the event being processed (with `now`, its key).
    cur_seq: u64,
    popped: u64,
}

/// Re-armable timers, one slot each (e.g. a TCP endpoint's retransmission timer): an
/// indexed min-heap on (time, insertion number). Re-arming a slot replaces its entry and
/// releasing a slot removes it, so a cancelled timer never sits in (or pops from) a heap.
/// Timers are popped in the same (time, seq) order as heap events, interleaved with them.
#[derive(Default)]
struct TimerHeap {
    /// Heap of (time, seq, slot).
    heap: Vec<(Time, u64, u32)>,
    /// Per slot: its position in `heap` (NO_POS when not armed) and its event.
    pos: Vec<u32>,
    ev: Vec<Event>,
}

const NO_POS: u32 = u32::MAX;

impl TimerHeap {
    #[inline]
    fn key(&self, i: usize) -> (Time, u64) {
        let e = self.heap[i];
        (e.0, e.1)
    }
    #[inline]
    fn place(&mut self, i: usize, e: (Time, u64, u32)) {
        self.heap[i] = e;
        self.pos[e.2 as usize] = i as u32;
    }
    fn sift_up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.key(parent) <= (e.0, e.1) {
                break;
            }
            let p = self.heap[parent];
            self.place(i, p);
            i = parent;
        }
        self.place(i, e);
    }
    fn sift_down(&mut self, mut i: usize) {
        let e = self.heap[i];
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && self.key(l + 1) < self.key(l) { l + 1 } else { l };
            if (e.0, e.1) <= self.key(c) {
                break;
            }
            let ce = self.heap[c];
            self.place(i, ce);
            i = c;
        }
        self.place(i, e);
    }
    fn set(&mut self, slot: u32, time: Time, seq: u64, ev: Event) {
        let s = slot as usize;
        if s >= self.pos.len() {
            self.pos.resize(s + 1, NO_POS);
            self.ev.resize(s + 1, Event::Stop);
        }
        self.ev[s] = ev;
        let p = self.pos[s];
        if p == NO_POS {
            self.heap.push((time, seq, slot));
            let i = self.heap.len() - 1;
            self.sift_up(i);
        } else {
            let i = p as usize;
            let old = self.key(i);
            self.heap[i] = (time, seq, slot);
            if (time, seq) < old {
                self.sift_up(i);
            } else {
                self.sift_down(i);
            }
        }
    }
    fn remove(&mut self, slot: u32) {
        let s = slot as usize;
        if s >= self.pos.len() || self.pos[s] == NO_POS {
            return;
        }
        let i = self.pos[s] as usize;
        self.pos[s] = NO_POS;
        let last = self.heap.pop().expect("an armed slot is in the heap");
        if i < self.heap.len() {
            let old = self.key(i);
            self.place(i, last);
            if (last.0, last.1) < old {
                self.sift_up(i);
            } else {
                self.sift_down(i);
            }
        }
    }
    #[inline]
    fn peek(&self) -> Option<(Time, u64)> {
        self.heap.first().map(|e| (e.0, e.1))
    }
    fn pop(&mut self) -> Option<(Time, Event)> {
        let (time, _, slot) = *self.heap.first()?;
        self.remove(slot);
        Some((time, self.ev[slot as usize]))
    }
}

impl Default for Scheduler {
    fn default() -> Self {
        Self::new()
    }
}

impl Scheduler {
    pub fn new() -> Self {
        Self::with_calendar(Calendar::new(16, 8))
    }

    /// A scheduler whose near-future ring suits a network whose shortest full-packet
    /// transmission takes `min_tx` ns and whose longest link `horizon` ns (transmission and
    /// propagation): see `Calendar::for_network`. It changes no order, only the cost.
    pub fn for_network(min_tx: Time, horizon: Time) -> Self {
        Self::with_calendar(Calendar::for_network(min_tx, horizon))
    }

    fn with_calendar(cal: Calendar) -> Self {
        Scheduler {
            cal,
            heap: EventHeap::with_capacity(256),
            timers: TimerHeap::default(),
            seq: 0,
            now: 0,
            cur_seq: 0,
            popped: 0,
        }
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
        self.push(Entry::new(time, self.seq, ev));
    }
    #[inline(always)]
    fn push(&mut self, e: Entry) {
        if !self.cal.try_push(e) {
            self.heap.push(e);
        }
    }
    /// Take the insertion number the next scheduled event would get, for an event kept
    /// outside the heap until it is the earliest of its line (see `at_seq`).
    #[inline]
    pub fn reserve_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }
    /// Schedule `ev` at `at` with an insertion number taken earlier by `reserve_seq`: it
    /// fires exactly where it would have had it been scheduled when the number was taken.
    #[inline]
    pub fn at_seq(&mut self, at: Time, seq: u64, ev: Event) {
        debug_assert!(at >= self.now);
        self.push(Entry::new(at, seq, ev));
    }
    /// Schedule `ev` after `delay` nanoseconds.
    #[inline]
    pub fn after(&mut self, delay: Time, ev: Event) {
        self.at(self.now.saturating_add(delay), ev)
    }
    /// Arm timer `slot` to fire `ev` at `at` (never before now), replacing whatever the
    /// slot held; it takes the next insertion number, as `at` would.
    #[inline]
    pub fn set_timer(&mut self, slot: u32, at: Time, ev: Event) {
        let time = at.max(self.now);
        self.seq += 1;
        self.timers.set(slot, time, self.seq, ev);
    }
    /// Disarm timer `slot` (nothing happens if it is not armed).
    #[inline]
    pub fn cancel_timer(&mut self, slot: u32) {
        self.timers.remove(slot);
    }
    /// Pop the next event and advance the clock to it: the least of the ring's, the heap's
    /// and the timers' (keys are unique).
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.settle();
        let hk = self.heap.peek().map_or(u128::MAX, |h| h.key);
        let tk = self.timers.peek().map_or(u128::MAX, |t| pack(t.0, t.1));
        let (time, seq, ev) = match self.cal.pop_below(hk.min(tk)) {
            Some(e) => (e.time(), e.key as u64, e.ev),
            None if tk < hk => {
                let (time, ev) = self.timers.pop()?;
                (time, tk as u64, ev)
            }
            _ => {
                let e = self.heap.take()?;
                (e.time(), e.key as u64, e.ev)
            }
        };
        debug_assert!(time >= self.now);
        self.now = time;
        self.cal.advance(time);
        self.cur_seq = seq;
        self.popped += 1;
        Some(ev)
    }
    /// Whether an event at `time` with insertion number `seq` (taken by `reserve_seq`) would
    /// already have fired: its key is below that of the event being processed. A port
    /// uses it for a transmission end it keeps out of the heap (`sim::port`).
    #[inline]
    pub fn has_passed(&self, time: Time, seq: u64) -> bool {
        pack(time, seq) < pack(self.now, self.cur_seq)
    }
    /// Number of events processed so far.
    pub fn events(&self) -> u64 {
        self.popped
    }
    pub fn pending(&self) -> usize {
        self.cal.len() + self.heap.len() + self.timers.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_u64_is_round() {
        // Halves, the largest double below one half, around 2^52 and 2^53 (where doubles
        // become whole), negatives, NaN, infinities, saturation; then a sweep of times.
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            0.5000000000000001,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            -0.3,
            -0.5,
            -0.7,
            -2.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1.8446744073709552e19,
            1e30,
        ];
        let mut r = Rng::stream(7, "round");
        for _ in 0..100_000 {
            xs.push(r.uniform() * 1e12);
            xs.push((r.below(1 << 40) as f64) + 0.5);
            xs.push(r.uniform() * 3.0 * 1e9);
        }
        for x in xs {
            assert_eq!(round_u64(x), x.round() as u64, "{x:e}");
        }
    }

    #[test]
    fn rem_euclid_is_rem_euclid() {
        // Divisors from ns-2's ticks to odd ones; dividends at, around and between their
        // multiples, far beyond them, below them, negative, subnormal, zero, non-finite.
        let mut r = Rng::stream(9, "rem-euclid");
        let mut ys = vec![0.01, 0.1, 0.5, 1.0, 0.2, 0.001, 3.0e-9, 1.0e-300, 7.0e300, f64::MIN_POSITIVE];
        for _ in 0..30 {
            ys.push(r.uniform() * 10f64.powi(r.below(12) as i32 - 6));
        }
        for &y in &ys {
            let mut xs = vec![0.0, -0.0, y, -y, 2.0 * y, 1e6 * y, y * (1.0 - f64::EPSILON), 5e-324, f64::NAN];
            xs.extend([f64::INFINITY, f64::NEG_INFINITY, f64::MAX, 1e300, 1e-300]);
            for k in [1.0, 2.0, 3.0, 7.0, 100.0, 12345.0, 4.0e15, 1.0e17] {
                let m = k * y;
                xs.extend([m, m.next_up(), m.next_down(), m + y / 2.0]);
            }
            for _ in 0..20_000 {
                xs.push(r.uniform() * y * 10f64.powi(r.below(9) as i32));
                xs.push(r.uniform() * 600.0 - r.uniform() * 0.2);
                xs.push(f64::from_bits(r.below(1 << 62) + (1 << 61)));
            }
            for x in xs {
                let (got, want) = (rem_euclid_pos(x, y), x.rem_euclid(y));
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{x:e} mod {y:e}: {got:e} != {want:e}"
                );
            }
        }
    }

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
    fn timers_interleave_by_time_then_insertion_and_rearm_replaces() {
        let mut s = Scheduler::new();
        s.at(10, Event::Sample); // seq 1
        s.set_timer(0, 10, Event::TcpTimer { ep: 0 }); // seq 2
        s.set_timer(1, 30, Event::TcpTimer { ep: 1 }); // seq 3
        s.at(10, Event::Stop); // seq 4
        s.set_timer(1, 5, Event::DelAck { ep: 1 }); // re-armed earlier, another event: seq 5
        s.set_timer(2, 7, Event::DelAck { ep: 2 });
        s.cancel_timer(2);
        s.set_timer(3, 40, Event::TcpTimer { ep: 3 });
        s.set_timer(3, 50, Event::DelAck { ep: 3 }); // re-armed later
        let order: Vec<_> = std::iter::from_fn(|| s.pop().map(|e| (s.now(), e))).collect();
        assert_eq!(
            order,
            vec![
                (5, Event::DelAck { ep: 1 }),
                (10, Event::Sample),
                (10, Event::TcpTimer { ep: 0 }),
                (10, Event::Stop),
                (50, Event::DelAck { ep: 3 }),
            ]
        );
    }

    #[test]
    fn timer_heap_matches_a_sorted_list_under_random_rearms() {
        let mut s = Scheduler::new();
        let mut rng = Rng::stream(7, "timer-test");
        let mut want: Vec<Option<(Time, u64)>> = vec![None; 50];
        for _ in 0..5000 {
            let slot = rng.below(50) as usize;
            if rng.bernoulli(0.2) {
                s.cancel_timer(slot as u32);
                want[slot] = None;
            } else {
                let t = 1000 + rng.below(1000);
                s.set_timer(slot as u32, t, Event::TcpTimer { ep: slot as u32 });
                want[slot] = Some((t, s.seq));
            }
        }
        let mut expect: Vec<(Time, u64, u32)> =
            want.iter().enumerate().filter_map(|(i, w)| w.map(|(t, q)| (t, q, i as u32))).collect();
        expect.sort();
        let got: Vec<_> = std::iter::from_fn(|| s.pop().map(|e| (s.now(), e))).collect();
        let expect: Vec<_> = expect.iter().map(|&(t, _, i)| (t, i)).collect();
        let got: Vec<_> = got
            .iter()
            .map(|&(t, e)| {
                (
                    t,
                    match e {
                        Event::TcpTimer { ep, .. } => ep,
                        _ => 999,
                    },
                )
            })
            .collect();
        assert_eq!(got, expect);
    }

    /// Pop one event: the least (time, seq) of `want`, which it leaves.
    fn pop_least(s: &mut Scheduler, want: &mut Vec<(Time, u64, u32)>) {
        want.sort();
        let (t, _, id) = want.remove(0);
        assert_eq!(s.pop(), Some(Event::Classify { idx: id }));
        assert_eq!(s.now(), t);
    }

    /// Pop everything left: `want` in (time, seq) order, then nothing.
    fn pop_all_in_key_order(s: &mut Scheduler, mut want: Vec<(Time, u64, u32)>) {
        while !want.is_empty() {
            pop_least(s, &mut want);
        }
        assert_eq!(s.pop(), None);
        assert_eq!(s.pending(), 0);
    }

    #[test]
    fn the_event_heap_pops_in_key_order_under_random_pushes_and_pops() {
        // Interleaved pushes and pops, many equal times: every pop is the least (time, seq)
        // still queued, as a sorted list says, through growth and back to empty.
        let mut s = Scheduler::new();
        let mut rng = Rng::stream(11, "heap-test");
        let mut want: Vec<(Time, u64, u32)> = Vec::new();
        for i in 0..20_000u32 {
            if rng.bernoulli(0.45) && !want.is_empty() {
                pop_least(&mut s, &mut want);
            } else {
                let t = s.now() + rng.below(50);
                s.at(t, Event::Classify { idx: i });
                want.push((t, s.seq, i));
            }
        }
        pop_all_in_key_order(&mut s, want);
    }

    #[test]
    fn a_push_after_a_pop_takes_the_popped_root_and_keeps_the_order() {
        // After a pop the popped entry stays at the root until the next change: pushes
        // (several after one pop, or none), reserved insertion numbers and timers around
        // it pop in exactly (time, seq) order, and `pending` never counts the popped one.
        let mut s = Scheduler::new();
        let mut rng = Rng::stream(12, "held-root");
        let mut want: Vec<(Time, u64, u32)> = Vec::new();
        let mut id = 0u32;
        for round in 0..5_000u32 {
            for _ in 0..rng.below(4) {
                id += 1;
                let t = s.now() + rng.below(30);
                if rng.bernoulli(0.3) {
                    let seq = s.reserve_seq();
                    s.at_seq(t, seq, Event::Classify { idx: id });
                    want.push((t, seq, id));
                } else {
                    s.at(t, Event::Classify { idx: id });
                    want.push((t, s.seq, id));
                }
            }
            if round % 7 == 0 {
                let t = s.now() + rng.below(30);
                s.set_timer(round, t, Event::Classify { idx: u32::MAX - round });
                want.push((t, s.seq, u32::MAX - round));
            }
            assert_eq!(s.pending(), want.len());
            if want.is_empty() {
                continue;
            }
            pop_least(&mut s, &mut want);
            assert_eq!(s.pending(), want.len());
        }
        pop_all_in_key_order(&mut s, want);
    }

    #[test]
    fn has_passed_compares_with_the_key_of_the_event_being_processed() {
        // A key reserved for an event kept out of the heap has passed iff that event would
        // have fired before the one being processed: earlier time, or same time and a
        // smaller insertion number; the event being processed may come from either heap.
        let mut s = Scheduler::new();
        let early = s.reserve_seq(); // 1
        s.at(10, Event::Sample); // 2
        let late = s.reserve_seq(); // 3
        s.set_timer(0, 10, Event::TcpTimer { ep: 0 }); // 4
        assert_eq!(s.pop(), Some(Event::Sample));
        assert!(s.has_passed(10, early) && s.has_passed(9, late));
        assert!(!s.has_passed(10, late) && !s.has_passed(11, early));
        assert_eq!(s.pop(), Some(Event::TcpTimer { ep: 0 }));
        assert!(s.has_passed(10, late) && !s.has_passed(10, 5));
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
