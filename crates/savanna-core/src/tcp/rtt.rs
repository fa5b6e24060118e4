//! RTT sampling for RFC 6298 with Karn's rule (section 3): which ACK gives a sample, and
//! from which send time. Two ways, both allowed by the RFC: every ACK that advances snd_una
//! and covers no retransmitted segment (Linux, ns-3), or one timed segment at a time
//! (BSD, ns-2).
//!
//! Every-ACK mode keeps the send times of the new segments in [snd_una, snd_max) in a ring
//! indexed by sequence modulo its length (a power of two, grown as the flight grows; a data
//! receiver never allocates one). A reused endpoint keeps a ring of up to `KEPT_RING`
//! entries and frees a larger one, so the rings held follow the flights of the flows open
//! now, not the largest flight each endpoint slot ever carried.

use super::RttSampling;
use crate::engine::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    EveryAck,
    /// The timed segment and its send time, if one is being timed.
    OncePerRtt(Option<(u64, Time)>),
}

/// Largest send-time ring (entries) a reused endpoint keeps: the smallest ring `grow`
/// makes (the flights of most flows of a web-like mix fit), so every endpoint slot holds the
/// same 128 bytes between connections whatever flights it carried before.
pub const KEPT_RING: usize = 16;

#[derive(Clone, Debug)]
pub struct RttSampler {
    mode: Mode,
    send_times: Vec<Time>,
    /// Highest sequence retransmitted so far (Karn's rule in every-ACK mode).
    retx_high: Option<u64>,
}

impl RttSampler {
    /// A sampler reusing `send_times`' memory.
    pub fn new(how: RttSampling, mut send_times: Vec<Time>) -> Self {
        send_times.clear();
        let mode = match how {
            RttSampling::EveryAck => Mode::EveryAck,
            RttSampling::OncePerRtt => Mode::OncePerRtt(None),
        };
        RttSampler { mode, send_times, retx_high: None }
    }

    /// The ring's memory, for reuse by the endpoint's next connection: kept if it holds at
    /// most `KEPT_RING` entries, freed otherwise (a large flight is rare; its ring is grown
    /// again by the few doublings of `grow`).
    pub fn take_buffer(&mut self) -> Vec<Time> {
        let ring = std::mem::take(&mut self.send_times);
        if ring.capacity() > KEPT_RING {
            Vec::new()
        } else {
            ring
        }
    }

    /// Length and capacity of the send-time ring (tests).
    pub fn ring(&self) -> (usize, usize) {
        (self.send_times.len(), self.send_times.capacity())
    }

    /// New data `seq` sent at `now`, with `snd_una` the oldest unacknowledged.
    #[inline]
    pub fn on_send(&mut self, seq: u64, snd_una: u64, now: Time) {
        match &mut self.mode {
            Mode::EveryAck => {
                if seq - snd_una >= self.send_times.len() as u64 {
                    self.grow(seq, snd_una);
                }
                let n = self.send_times.len();
                self.send_times[(seq as usize) & (n - 1)] = now;
            }
            Mode::OncePerRtt(timed) => {
                if timed.is_none() {
                    *timed = Some((seq, now));
                }
            }
        }
    }

    /// `seq` was retransmitted: no sample from it (Karn).
    #[inline]
    pub fn on_retransmit(&mut self, seq: u64) {
        self.retx_high = Some(self.retx_high.map_or(seq, |h| h.max(seq)));
        if let Mode::OncePerRtt(timed) = &mut self.mode {
            if timed.is_some_and(|(s, _)| s == seq) {
                *timed = None;
            }
        }
    }

    /// Stop timing the current segment (a loss was detected: it may be retransmitted).
    pub fn forget_timed(&mut self) {
        if let Mode::OncePerRtt(timed) = &mut self.mode {
            *timed = None;
        }
    }

    /// An ACK for everything below `ack` arrived at `now`, `snd_una` being the oldest
    /// unacknowledged before it: the RTT sample it gives, seconds.
    #[inline]
    pub fn on_new_ack(&mut self, ack: u64, snd_una: u64, now: Time) -> Option<f64> {
        match &mut self.mode {
            Mode::EveryAck => {
                // Karn: no sample from an ACK that covers any retransmitted segment (the
                // newest segment's ACK may have been held back by the repaired hole).
                if self.retx_high.is_none_or(|h| h < snd_una) {
                    let n = self.send_times.len();
                    let t0 = self.send_times[((ack - 1) as usize) & (n - 1)];
                    Some((now - t0) as f64 * 1e-9)
                } else {
                    None
                }
            }
            Mode::OncePerRtt(timed) => match *timed {
                Some((seq, t0)) if ack > seq => {
                    *timed = None;
                    Some((now - t0) as f64 * 1e-9)
                }
                _ => None,
            },
        }
    }

    /// Grow the ring so that it holds [snd_una, seq], keeping the times of [snd_una, seq).
    /// Rare: the ring doubles until it covers the largest flight. In place: the new length
    /// is a multiple of the old, so each kept time moves to its own slot or to one beyond
    /// the old ring, never onto a time still to be moved.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, seq: u64, snd_una: u64) {
        let old = self.send_times.len();
        let len = ((seq - snd_una + 1) as usize).next_power_of_two().max(KEPT_RING);
        self.send_times.resize(len, 0);
        if old > 0 {
            for s in snd_una as usize..seq as usize {
                self.send_times[s & (len - 1)] = self.send_times[s & (old - 1)];
            }
        }
    }
}

/// RFC 8985 6.2 step 1's windowed minimum of the RTT samples: Linux keeps RACK's min_RTT
/// in a windowed min filter over tcp_min_rtt_wlen = 300 s (Kathleen Nichols' scheme, as in
/// BBR): the best sample of the window and two later, larger candidates that take over as
/// the best one ages out, so a path that lengthens is followed within a window and no
/// sample list is kept. Times and RTTs in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowedMin {
    /// (time, rtt) of the best, second and third candidates; `None` before any sample.
    est: Option<[(Time, Time); 3]>,
}

/// Linux's tcp_min_rtt_wlen default: 300 s.
pub const MIN_RTT_WINDOW: Time = 300_000_000_000;

impl WindowedMin {
    pub fn get(&self) -> Option<Time> {
        self.est.map(|e| e[0].1)
    }

    /// A sample `rtt` at `now`, with window `win`; returns the minimum.
    pub fn update(&mut self, now: Time, rtt: Time, win: Time) -> Time {
        let new = (now, rtt);
        let Some(mut c) = self.est else {
            self.est = Some([new; 3]);
            return rtt;
        };
        if rtt <= c[0].1 || now.saturating_sub(c[2].0) > win {
            // A new best, or even the last candidate has aged out: start again.
            c = [new; 3];
        } else if rtt <= c[1].1 {
            c[1] = new;
            c[2] = new;
        } else if rtt <= c[2].1 {
            c[2] = new;
        }
        // Age: the best leaves once older than the window and the candidates move up; a
        // best not backed by a later candidate after a quarter (half) window takes this
        // sample as its second (third) candidate.
        let age = now.saturating_sub(c[0].0);
        if age > win {
            c = [c[1], c[2], new];
            if now.saturating_sub(c[0].0) > win {
                c = [c[1], c[2], new];
            }
        } else if c[1].0 == c[0].0 && age > win / 4 {
            c[1] = new;
            c[2] = new;
        } else if c[2].0 == c[1].0 && age > win / 2 {
            c[2] = new;
        }
        self.est = Some(c);
        c[0].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Time = 1_000_000_000;

    /// RFC 8985 6.2 step 1 (Linux's windowed min filter): within the window the minimum is
    /// the smallest sample; a smaller one takes over at once.
    #[test]
    fn windowed_min_keeps_the_smallest_sample_of_the_window() {
        let mut m = WindowedMin::default();
        assert_eq!(m.get(), None);
        assert_eq!(m.update(0, 100, MIN_RTT_WINDOW), 100);
        assert_eq!(m.update(10 * S, 150, MIN_RTT_WINDOW), 100);
        assert_eq!(m.update(299 * S, 120, MIN_RTT_WINDOW), 100);
        assert_eq!(m.update(299 * S + 1, 90, MIN_RTT_WINDOW), 90);
    }

    /// The minimum ages out after the window (300 s): on a path that lengthened from 100
    /// to 200 ms the estimate follows within one window, where a global minimum would
    /// stay at 100 ms for ever.
    #[test]
    fn windowed_min_follows_a_longer_path_after_the_window() {
        let mut m = WindowedMin::default();
        m.update(0, 100, MIN_RTT_WINDOW);
        let mut t = 0;
        let mut got = 0;
        while t < 700 * S {
            t += S / 10;
            got = m.update(t, 200 + (t / S) % 7, MIN_RTT_WINDOW);
            if t <= 300 * S {
                assert_eq!(got, 100, "at {t}: the 100 ms sample is inside the window");
            }
        }
        assert!((200..207).contains(&got), "after the window: {got}");
    }
}
