//! The near-future part of the event queue: a ring of time buckets, after Brown's calendar
//! queue (CACM 31(10), 1988), fixed in size rather than resized.
//!
//! Bucket `i` holds events whose slot `time >> shift` is `i` modulo the ring, for slots from
//! the clock's up to one ring ahead; a bucket has room for `ROOM` entries. An event that
//! falls beyond the ring or into a full bucket is refused (`try_push` returns false), and
//! the scheduler keeps it in its heap instead: the least event is the least of the two, so
//! the ring's size and bucket width change no order, only what each push and pop costs
//! (`tests::any_ring_pops_what_a_sorted_list_does`). Readings: a bucket is unsorted (at most
//! `ROOM` entries are compared per pop); the entry counts of the buckets, read eight to a
//! word, find the first occupied bucket.

use super::{Entry, Time};

/// Entries a bucket holds. Measured against 8: FavorQueue's 100 Mb/s load sweep 5% faster
/// and Matta & Guo's 40 Mb/s dumbbells (buckets 262 us wide) 5-7% slower, Guo & Matta's
/// Exp. 1 and the reference dumbbell the same; 4 weighs more in the full reproduction.
const ROOM: usize = 4;

pub(super) struct Calendar {
    /// Bucket width: 2^shift ns.
    shift: u32,
    /// Buckets - 1 (a power of two, at least 64, minus one).
    mask: u64,
    /// Slots ahead of the clock's that the ring takes: its buckets, or 0 when it is off.
    span: u64,
    /// The clock's slot: no entry has a smaller one (entries are never scheduled before now).
    cursor: u64,
    /// Entries in each bucket: also what the search for the first occupied bucket reads,
    /// eight buckets a word.
    lens: Box<[u8]>,
    /// Bucket `i`'s entries at `ROOM i ..`, unordered.
    ents: Box<[Entry]>,
    n: usize,
}

impl Calendar {
    /// A ring of 2^`log2_buckets` buckets (at least 64) of 2^`shift` ns each.
    pub fn new(shift: u32, log2_buckets: u32) -> Self {
        let nb = 1usize << log2_buckets.max(6);
        Calendar {
            shift,
            mask: nb as u64 - 1,
            span: nb as u64,
            cursor: 0,
            lens: vec![0; nb].into_boxed_slice(),
            ents: vec![super::SENTINEL; nb * ROOM].into_boxed_slice(),
            n: 0,
        }
    }

    /// The ring for a network whose smallest full-packet transmission time is `min_tx` and
    /// whose longest link (transmission plus propagation) takes `horizon`: 64 to 4096
    /// buckets spanning the horizon, each about as wide as that transmission, or up to four
    /// times as wide when 4096 of those do not span it; off (every event to the heap) when
    /// 4096 buckets of four transmissions do not. Measured: a ring that spans only part of
    /// the horizon sends most events to the heap anyway and costs more than it saves (the
    /// 10 Gb/s dumbbell of `benchmarks/bench_scaling.py`, 262 us of a 40 ms horizon, ran
    /// 13% slower with one), while wider buckets cost little more where packets are few
    /// per transmission time (FavorQueue fig. 3 at 100 Mb/s: 11% fewer instructions on).
    pub fn for_network(min_tx: Time, horizon: Time) -> Self {
        let mut shift = 63 - min_tx.max(1).leading_zeros(); // 2^shift <= min_tx
        let mut log2 = ((horizon >> shift) + 1).next_power_of_two().trailing_zeros().max(6);
        if log2 > 12 && log2 <= 14 {
            shift += log2 - 12;
            log2 = 12;
        }
        if log2 > 12 {
            // Off: the fewest buckets, none ever used.
            let mut c = Calendar::new(shift, 6);
            c.span = 0;
            return c;
        }
        Calendar::new(shift, log2)
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.n
    }

    /// The clock moved to `now` (never backwards).
    #[inline(always)]
    pub fn advance(&mut self, now: Time) {
        self.cursor = now >> self.shift;
    }

    /// Keep `e` (its time at or after the clock's) if it falls within the ring and its
    /// bucket has room; false if not.
    #[inline(always)]
    pub fn try_push(&mut self, e: Entry) -> bool {
        let slot = e.time() >> self.shift;
        debug_assert!(slot >= self.cursor, "an event before the clock");
        if slot.wrapping_sub(self.cursor) >= self.span {
            return false;
        }
        let i = (slot & self.mask) as usize;
        let l = self.lens[i] as usize;
        if l == ROOM {
            return false;
        }
        self.ents[i * ROOM + l] = e;
        self.lens[i] = l as u8 + 1;
        self.n += 1;
        true
    }

    /// Remove and return the least entry if its key is below `bound`.
    #[inline(always)]
    pub fn pop_below(&mut self, bound: u128) -> Option<Entry> {
        if self.n == 0 {
            return None;
        }
        // The first occupied bucket from the cursor's, going round: it holds the least slot.
        let start = (self.cursor & self.mask) as usize;
        let words = self.lens.len() / 8;
        let word = |w: usize| u64::from_le_bytes(self.lens[8 * w..8 * w + 8].try_into().expect("8 bytes"));
        let mut w = start / 8;
        let mut bits = word(w) & (!0u64 << (8 * (start % 8)));
        while bits == 0 {
            w = (w + 1) & (words - 1);
            bits = word(w);
        }
        let i = 8 * w + bits.trailing_zeros() as usize / 8;
        let l = self.lens[i] as usize;
        let b = &mut self.ents[i * ROOM..i * ROOM + l];
        let mut j = 0;
        let mut k = b[0].key();
        for (x, e) in b.iter().enumerate().skip(1) {
            if e.key() < k {
                k = e.key();
                j = x;
            }
        }
        if k >= bound {
            return None;
        }
        let e = b[j];
        b[j] = b[l - 1];
        self.lens[i] = l as u8 - 1;
        self.n -= 1;
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Event, Rng};
    use super::*;

    /// Pop the least entry of `c` and of `over` (entries `c` refused, as the scheduler keeps
    /// them in its heap), and move the clock to it.
    fn pop_one(c: &mut Calendar, over: &mut Vec<Entry>) -> Option<Entry> {
        over.sort_by_key(|e| std::cmp::Reverse(e.key()));
        let o = over.last().map_or(u128::MAX, |e| e.key());
        let e = match c.pop_below(o) {
            Some(e) => e,
            None => over.pop()?,
        };
        c.advance(e.time());
        Some(e)
    }

    #[test]
    fn any_ring_pops_what_a_sorted_list_does() {
        // Rings from 64 one-ns buckets (most events refused) to wide ones (most taken),
        // pushes and pops interleaved, times spread from the same ns to far beyond the ring:
        // every pop is the least (time, seq) pending, as a sorted list says.
        let mut rng = Rng::stream(3, "calendar-test");
        for (shift, log2) in [(0, 6), (4, 6), (10, 8), (14, 10), (20, 12)] {
            let mut c = Calendar::new(shift, log2);
            let mut over = Vec::new();
            let mut want = Vec::new();
            let mut got = Vec::new();
            let (mut now, mut seq) = (0u64, 0u64);
            for _ in 0..20_000 {
                if rng.bernoulli(0.55) {
                    let span = [4u64, 1 << 12, 1 << 20, 1 << 28][rng.below(4) as usize];
                    seq += 1;
                    let e = Entry::new(now + rng.below(span), seq, Event::Sample);
                    want.push(e.key());
                    if !c.try_push(e) {
                        over.push(e);
                    }
                } else if let Some(e) = pop_one(&mut c, &mut over) {
                    now = e.time();
                    got.push(e.key());
                }
            }
            while let Some(e) = pop_one(&mut c, &mut over) {
                got.push(e.key());
            }
            want.sort();
            assert_eq!(got, want, "shift {shift}, 2^{log2} buckets");
            assert_eq!(c.len(), 0);
        }
    }

    #[test]
    fn a_full_bucket_and_a_slot_beyond_the_ring_are_refused() {
        let mut c = Calendar::new(10, 6); // 64 buckets of 1024 ns
        for s in 0..ROOM as u64 {
            assert!(c.try_push(Entry::new(5, s, Event::Sample)));
        }
        assert!(!c.try_push(Entry::new(1023, 9, Event::Sample)), "bucket 0 is full");
        assert!(c.try_push(Entry::new(1024, 9, Event::Sample)));
        assert!(c.try_push(Entry::new(64 * 1024 - 1, 10, Event::Sample)), "the ring's last slot");
        assert!(!c.try_push(Entry::new(64 * 1024, 11, Event::Sample)), "one ring ahead");
        assert_eq!(c.len(), ROOM + 2);
    }

    #[test]
    fn the_ring_spans_the_longest_link_in_buckets_no_wider_than_the_shortest_transmission() {
        // 120 us transmissions, 41.2 ms horizon: 65.5 us buckets, 1024 of them (67 ms).
        let c = Calendar::for_network(120_000, 41_200_000);
        assert_eq!((c.shift, c.mask + 1), (16, 1024));
        assert!((c.mask + 1) << c.shift >= 41_200_000);
        // 8 us transmissions, 41 ms: 5,000 buckets needed, 4096 of 16 us instead.
        let c = Calendar::for_network(12_000, 41_000_000);
        assert_eq!((c.shift, c.span), (14, 4096));
        // 4096 buckets of four 1 us transmissions do not span a 1 s horizon: off, every
        // event refused.
        let mut c = Calendar::for_network(1_200, 1_000_000_000);
        assert_eq!(c.span, 0);
        assert!(!c.try_push(Entry::new(0, 1, Event::Sample)));
        assert!(c.pop_below(u128::MAX).is_none());
        // 4096 of them span a 4 ms one.
        let c = Calendar::for_network(1_200, 4_000_000);
        assert_eq!((c.shift, c.span), (10, 4096));
        // At least 64.
        let c = Calendar::for_network(1_000_000, 1_000_000);
        assert_eq!(c.mask + 1, 64);
    }
}
