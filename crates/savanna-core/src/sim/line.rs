//! A link's propagation line: the packets in flight on a link, oldest first, each with its
//! arrival time and the event insertion number reserved for its arrival (`sim::port`).
//!
//! A ring of power-of-two capacity that only grows (to the most packets in flight at once
//! on the link). It does what `VecDeque` did here with an index mask and every operation
//! inlined: the line is pushed and popped once per packet per hop, and std's `push_back`
//! was an out-of-line call of about 20 instructions (callgrind, the reference dumbbell).

use crate::engine::Time;
use crate::net::PktId;

/// One packet in flight: (arrival time, arrival's insertion number, packet).
pub type InFlight = (Time, u64, PktId);

#[derive(Default)]
pub struct Line {
    /// The ring: its length is the capacity, zero or a power of two.
    buf: Vec<InFlight>,
    /// Index of the oldest entry.
    head: usize,
    len: usize,
}

impl Line {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append the newest entry.
    #[inline]
    pub fn push_back(&mut self, x: InFlight) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & (self.buf.len() - 1);
        self.buf[i] = x;
        self.len += 1;
    }

    /// Remove and return the oldest entry.
    #[inline]
    pub fn pop_front(&mut self) -> Option<InFlight> {
        if self.len == 0 {
            return None;
        }
        let x = self.buf[self.head];
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        Some(x)
    }

    /// The oldest entry.
    #[inline]
    pub fn front(&self) -> Option<&InFlight> {
        if self.len == 0 {
            None
        } else {
            Some(&self.buf[self.head])
        }
    }

    /// Double the capacity (at least 8), the entries moved to the front in order.
    #[cold]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(8);
        let mut buf = Vec::with_capacity(cap);
        let mask = self.buf.len().wrapping_sub(1);
        buf.extend((0..self.len).map(|k| self.buf[(self.head + k) & mask]));
        buf.resize(cap, (0, 0, 0));
        self.buf = buf;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;
    use std::collections::VecDeque;

    #[test]
    fn the_line_is_first_in_first_out_through_wraps_and_growth() {
        // Random pushes and pops against std's VecDeque: the same entries in the same order,
        // across the ring's wrap-around and each doubling (with the head mid-ring).
        let mut rng = Rng::stream(7, "line-test");
        let (mut line, mut want) = (Line::default(), VecDeque::new());
        for n in 0..20_000u64 {
            // Phases that fill up (to a few hundred) and drain, so the ring grows when full
            // with its head anywhere.
            let push_p = if (n / 2_000) % 2 == 0 { 0.7 } else { 0.3 };
            if rng.bernoulli(push_p) {
                let x = (n * 3, n, n as PktId);
                line.push_back(x);
                want.push_back(x);
            } else {
                assert_eq!(line.pop_front(), want.pop_front());
            }
            assert_eq!(line.len(), want.len());
            assert_eq!(line.front(), want.front());
            assert_eq!(line.is_empty(), want.is_empty());
        }
        while let Some(x) = want.pop_front() {
            assert_eq!(line.pop_front(), Some(x));
        }
        assert_eq!(line.pop_front(), None);
    }
}
