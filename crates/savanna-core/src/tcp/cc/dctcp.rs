//! DCTCP (RFC 8257): the sender estimates the fraction of its packets that were CE-marked,
//! alpha, as an EWMA with gain g = 1/16 updated once per window of data (3.3), and on
//! ECN-Echo reduces cwnd by alpha / 2 rather than by half, at most once per window (the
//! endpoint's RFC 3168 once-per-window rule). Growth and loss are RFC 5681's (3.4, 3.5);
//! fast recovery is NewReno's. The receiver's exact CE echo is the endpoint's
//! (`Variant::exact_ce_echo`, RFC 8257 3.2).
//!
//! Readings: bytes are counted in packets (every data packet has the same size); alpha
//! starts at 1 (RFC 8257 3.3, Linux's default); the first window ends at the first ACK
//! (WindowEnd = SND.NXT = 0 at initialisation); ssthresh = max(cwnd (1 - alpha/2), 2), as
//! Linux.

use super::{AckInfo, CongestionControl, PartialAck, Window};

/// RFC 8257 3.3: the EWMA gain g (Linux's dctcp_shift_g = 4).
pub const G: f64 = 1.0 / 16.0;

#[derive(Clone, Copy, Debug)]
pub struct Dctcp {
    alpha: f64,
    /// DCTCP.WindowEnd: alpha is updated when an ACK passes it.
    window_end: u64,
    /// Packets acknowledged and those acknowledged with ECE in the current window.
    acked: u64,
    marked: u64,
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp { alpha: 1.0, window_end: 0, acked: 0, marked: 0 }
    }
}

impl Dctcp {
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    pub fn window_end(&self) -> u64 {
        self.window_end
    }
}

impl CongestionControl for Dctcp {
    fn takes_ack_info(&self) -> bool {
        true
    }
    fn on_ack_info(&mut self, _w: &mut Window, a: &AckInfo) {
        // RFC 8257 3.3: count the acknowledged and the marked (ECE) packets ...
        self.acked += a.acked;
        if a.ece {
            self.marked += a.acked;
        }
        // ... and once per window of data (the ACK passes WindowEnd) fold the marked
        // fraction F into alpha = (1 - g) alpha + g F, then start the next window.
        if a.snd_una > self.window_end {
            let f = self.marked as f64 / self.acked.max(1) as f64;
            self.alpha = (1.0 - G) * self.alpha + G * f;
            self.window_end = a.snd_max;
            self.acked = 0;
            self.marked = 0;
        }
    }

    /// RFC 6582 3.2 step 3, as NewReno.
    fn on_partial_ack(&mut self, w: &mut Window, acked: u64) -> PartialAck {
        w.cwnd = (w.cwnd - acked as f64 + 1.0).max(1.0);
        PartialAck::Retransmit
    }

    /// RFC 8257 3.3: cwnd = cwnd (1 - alpha / 2), once per window (the endpoint's rule).
    fn on_ecn_echo(&mut self, w: &mut Window, _flight: u64) {
        w.ssthresh = (w.cwnd * (1.0 - self.alpha / 2.0)).max(2.0);
        w.cwnd = w.ssthresh;
    }
}
