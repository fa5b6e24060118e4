//! pFabric's minimal rate control (Alizadeh et al., SIGCOMM 2013, section 4.2): the
//! switches schedule, so the sender only has to avoid collapse. A flow starts at line rate
//! (initial window one BDP, ssthresh = that window: no slow start at the start), grows
//! additively per ACK as standard TCP, never fast-retransmits, detects loss by a small
//! fixed timeout (about 3 RTTs, no back-off), and on a timeout slow-starts from one packet
//! with ssthresh = half the window it had. After `PROBE_AFTER` consecutive timeouts it is in
//! probe mode: one packet per timeout until an ACK of new data, which re-enters slow start.
//!
//! The window arithmetic is here; the settings a scenario's `cc = "pfabric"` implies (the
//! initial ssthresh, no duplicate-ACK threshold, the fixed RTO) are resolved in `spec.rs`.
//! Readings: the probe is the sender's ordinary one-segment retransmission (the model's
//! segments are whole packets, so the paper's one-byte probe is not modelled); "half the
//! window" is cwnd / 2, at least 2 packets (RFC 5681 eq. (4)'s floor); "re-enters slow
//! start" is a fresh one, from one packet up to the initial ssthresh (one BDP), since the
//! timeouts before probe mode have cut ssthresh to its floor.

use super::{AckInfo, CongestionControl, LossResponse, Window};

/// Consecutive timeouts after which the flow is in probe mode (the paper's implementation: 5).
pub const PROBE_AFTER: u32 = 5;

#[derive(Clone, Copy, Debug, Default)]
pub struct Pfabric {
    /// Timeouts since the last ACK of new data.
    consecutive_timeouts: u32,
    /// The initial ssthresh (one BDP), seen before any timeout changed it: where slow
    /// start after probe mode ends.
    start_ssthresh: Option<f64>,
}

impl Pfabric {
    pub fn consecutive_timeouts(&self) -> u32 {
        self.consecutive_timeouts
    }
    /// Probe mode: `PROBE_AFTER` or more timeouts in a row, no ACK of new data since.
    pub fn probing(&self) -> bool {
        self.consecutive_timeouts >= PROBE_AFTER
    }
}

impl CongestionControl for Pfabric {
    fn takes_ack_info(&self) -> bool {
        true
    }
    /// Any ACK of new data ends a run of timeouts, and with it probe mode; the window is
    /// then below ssthresh, so the default `on_ack` slow-starts.
    fn on_ack_info(&mut self, w: &mut Window, a: &AckInfo) {
        self.start_ssthresh.get_or_insert(w.ssthresh);
        if a.acked == 0 {
            return;
        }
        if self.probing() {
            // Probe mode ends: a fresh slow start from one packet up to one BDP.
            w.cwnd = 1.0;
            w.ssthresh = self.start_ssthresh.unwrap_or(w.ssthresh);
        }
        self.consecutive_timeouts = 0;
    }

    /// No fast retransmission (the spec's duplicate-ACK threshold keeps this from being
    /// reached); should it be, the window is left alone and the timer repairs the loss.
    fn on_fast_retransmit(&mut self, _w: &mut Window, _flight: u64, _dupacks: u32) -> LossResponse {
        LossResponse::FastRecovery
    }

    fn on_dupack_in_recovery(&mut self, _w: &mut Window) {}

    /// Slow start from one packet with ssthresh = half the window before the timeout (in
    /// probe mode, too: the window is one packet there, so ssthresh stays at its floor).
    fn on_timeout(&mut self, w: &mut Window, _flight: u64) {
        self.start_ssthresh.get_or_insert(w.ssthresh);
        self.consecutive_timeouts = self.consecutive_timeouts.saturating_add(1);
        w.ssthresh = (w.cwnd / 2.0).floor().max(2.0);
        w.cwnd = 1.0;
    }
}
