//! RTT sampling for RFC 6298 with Karn's rule (section 3): which ACK gives a sample, and
//! from which send time. Two ways, both allowed by the RFC: every ACK that advances snd_una
//! and covers no retransmitted segment (Linux, ns-3), or one timed segment at a time
//! (BSD, ns-2).
//!
//! Every-ACK mode keeps the send times of the new segments in [snd_una, snd_max) in a ring
//! indexed by sequence modulo its length (a power of two, grown as the flight grows; a data
//! receiver never allocates one, and a reused endpoint keeps its capacity).

use super::RttSampling;
use crate::engine::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    EveryAck,
    /// The timed segment and its send time, if one is being timed.
    OncePerRtt(Option<(u64, Time)>),
}

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

    /// The ring's memory, for reuse.
    pub fn take_buffer(&mut self) -> Vec<Time> {
        std::mem::take(&mut self.send_times)
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
        let len = ((seq - snd_una + 1) as usize).next_power_of_two().max(16);
        self.send_times.resize(len, 0);
        if old > 0 {
            for s in snd_una as usize..seq as usize {
                self.send_times[s & (len - 1)] = self.send_times[s & (old - 1)];
            }
        }
    }
}
