//! Loss detection and recovery without SACK: duplicate-ACK counting, fast retransmit on the
//! threshold (RFC 5681 3.2), fast recovery's partial and full ACKs with the `recover`
//! variable (RFC 6582 3.2), and go-back-N after a timeout. It decides when an event
//! happens and what to retransmit; the window values come from `CongestionControl`.
//!
//! Readings: only pure ACKs count as duplicates (RFC 5681's definition); a new fast
//! retransmit needs duplicate ACKs beyond `recover` (RFC 6582 3.2 step 2, ns-2's
//! `bugfix_`), `recover` being set both on a fast retransmit and on a timeout (RFC 6582
//! 3.2 step 2 and section 4), so go-back-N's duplicates start nothing; the timer is reset on
//! the first partial ACK only ("impatient", RFC 6582 section 4 / ns-2). Reno is RFC 5681's
//! (which has no `recover`) as ns-2's `RenoTcpAgent::dupack_action` runs it: the check
//! applies after a timeout (ns-2's `bugFix_`), not after a fast retransmit, so a second
//! loss in a window gives a second fast retransmit and a second halving (docs/tcp.md).
//!
//! With `recovery_exit_cwnd = "deflated"` the exit window is ns-2.35's (`NewRenoTcpAgent::
//! recv`, `partialnewack`): the window without the inflation, as partial ACKs left it.
//!
//! Seam for SACK-based recovery (RFC 6675, RACK-TLP) and PRR: they replace this type's
//! detection (a scoreboard instead of a duplicate count) and the in-recovery window calls
//! (`on_dupack_in_recovery`, `on_partial_ack`), keeping `CongestionControl`'s ssthresh.

use super::cc::{CongestionControl, LossResponse, PartialAck, Window};
use super::RecoveryExitCwnd;

/// Where the sender is in loss recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryState {
    /// No recovery under way; `dupacks` duplicate ACKs seen for snd_una.
    Open { dupacks: u32 },
    /// Fast recovery after a fast retransmit; `partial_acks` partial ACKs seen so far.
    FastRecovery { partial_acks: u32 },
}

/// What a duplicate ACK means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DupAck {
    /// Counted, nothing else (below the threshold, or not beyond `recover`).
    Counted,
    /// In fast recovery: one more packet has left the network.
    InRecovery,
    /// The threshold is reached: fast retransmit.
    FastRetransmit,
}

/// What an ACK of new data means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewAck {
    /// Not in recovery: the window may grow.
    Open,
    /// A partial ACK in fast recovery: retransmit `retransmit`; restart the timer or not.
    Partial { retransmit: u64, restart_timer: bool },
    /// Fast recovery ended (a full ACK, or any new ACK for Reno).
    Exited,
}

#[derive(Clone, Copy, Debug)]
pub struct Recovery {
    state: RecoveryState,
    /// RFC 6582's `recover`: snd_max when the last fast retransmit or timeout happened.
    recover: Option<u64>,
    /// The last congestion response was a fast retransmit (ns-2's `last_cwnd_action_ ==
    /// CWND_ACTION_DUPACK`), not a timeout or an ECN reduction.
    after_fast_retransmit: bool,
    /// ns-2's `cwnd_` in fast recovery, the window without the inflation (`dupwnd_`), once a
    /// partial ACK has taken it below ssthresh; None: ssthresh. Only with
    /// `RecoveryExitCwnd::Deflated`.
    uninflated: Option<f64>,
}

impl Default for Recovery {
    fn default() -> Self {
        Recovery {
            state: RecoveryState::Open { dupacks: 0 },
            recover: None,
            after_fast_retransmit: false,
            uninflated: None,
        }
    }
}

impl Recovery {
    pub fn state(&self) -> RecoveryState {
        self.state
    }
    pub fn in_fast_recovery(&self) -> bool {
        matches!(self.state, RecoveryState::FastRecovery { .. })
    }
    pub fn recover(&self) -> Option<u64> {
        self.recover
    }

    /// In fast recovery, ns-2's `cwnd_` (the window without the inflation) where it is not
    /// ssthresh: after `fast_retransmit_cwnd = "half"` or a deflation below ssthresh.
    pub fn uninflated(&self) -> Option<f64> {
        self.uninflated
    }

    /// ns-2.35 `TcpAgent::slowdown` with `precisionReduce_` (`CLOSE_CWND_HALF`), called
    /// right after `on_fast_retransmit`: the window entering recovery is min(`before`,
    /// `max_window`) / 2 as a real number, at least 1 (ssthresh stays its integer part, at
    /// least 2), inflated by the `dupacks` duplicates.
    pub fn halve_exactly(&mut self, w: &mut Window, before: f64, max_window: u32, dupacks: u32) {
        let half = (before.min(max_window as f64) / 2.0).max(1.0);
        self.uninflated = Some(half);
        w.cwnd = half + dupacks as f64;
    }

    /// Duplicate ACKs counted since the last new ACK (0 in fast recovery).
    pub fn dupacks(&self) -> u32 {
        match self.state {
            RecoveryState::Open { dupacks } => dupacks,
            RecoveryState::FastRecovery { .. } => 0,
        }
    }

    /// A pure ACK that acknowledges nothing new while data is outstanding. `reno`: RFC 5681
    /// Reno, whose `recover` check applies only after a timeout (ns-2's Reno).
    pub fn on_dupack(&mut self, ack: u64, threshold: u32, reno: bool) -> DupAck {
        let repeat_ok = reno && self.after_fast_retransmit;
        match &mut self.state {
            RecoveryState::FastRecovery { .. } => DupAck::InRecovery,
            RecoveryState::Open { dupacks } => {
                *dupacks += 1;
                // RFC 6582 3.2 step 2: only duplicates covering more than `recover`; Reno
                // (RFC 5681 3.2, ns-2 `RenoTcpAgent::dupack_action`) also after a fast
                // retransmit, so a second loss in a window halves again.
                if *dupacks == threshold && (self.recover.is_none_or(|r| ack > r) || repeat_ok) {
                    DupAck::FastRetransmit
                } else {
                    DupAck::Counted
                }
            }
        }
    }

    /// An ACK advanced snd_una to `ack`, acknowledging `acked` packets; `exit` is the
    /// window a full ACK leaves with.
    pub fn on_new_ack<C: CongestionControl>(
        &mut self,
        ack: u64,
        acked: u64,
        cc: &mut C,
        w: &mut Window,
        exit: RecoveryExitCwnd,
    ) -> NewAck {
        match self.state {
            RecoveryState::Open { .. } => {
                self.state = RecoveryState::Open { dupacks: 0 };
                NewAck::Open
            }
            RecoveryState::FastRecovery { partial_acks } => {
                let inflated = w.cwnd;
                // RFC 6582 3.2 step 3: below `recover` is partial.
                if ack < self.recover.unwrap_or(0) && cc.on_partial_ack(w, acked) == PartialAck::Retransmit {
                    if exit == RecoveryExitCwnd::Deflated {
                        self.ns2_partial_deflation(inflated, acked, w);
                    }
                    self.state = RecoveryState::FastRecovery { partial_acks: partial_acks.saturating_add(1) };
                    return NewAck::Partial { retransmit: ack, restart_timer: partial_acks == 0 };
                }
                if ack >= self.recover.unwrap_or(0) {
                    cc.on_full_ack(w);
                    if let (RecoveryExitCwnd::Deflated, Some(u)) = (exit, self.uninflated) {
                        w.cwnd = u;
                    }
                }
                self.uninflated = None;
                self.state = RecoveryState::Open { dupacks: 0 };
                NewAck::Exited
            }
        }
    }

    /// ns-2.35 `NewRenoTcpAgent::partialnewack` (`partial_window_deflation_ 1`): the
    /// deflation by the `acked` packets (one added back) comes out of the inflation while it
    /// holds more than `acked`; otherwise the inflation is left at 1 and the rest comes out
    /// of the window itself, at least 1. Same total window as RFC 6582's deflation (which
    /// `inflated` had before it) except that floor: ns-2's total is then at least 2.
    fn ns2_partial_deflation(&mut self, inflated: f64, acked: u64, w: &mut Window) {
        let base = self.uninflated.unwrap_or(w.ssthresh);
        let inflation = inflated - base;
        if inflation <= acked as f64 {
            let u = (base - (acked as f64 - inflation)).max(1.0);
            self.uninflated = Some(u);
            w.cwnd = u + 1.0;
        }
    }

    /// A fast retransmit happened with `snd_max` sent; the congestion control chose
    /// `response`.
    pub fn on_fast_retransmit(&mut self, snd_max: u64, response: LossResponse) {
        self.recover = Some(snd_max);
        self.uninflated = None;
        self.after_fast_retransmit = true;
        self.state = match response {
            LossResponse::FastRecovery => RecoveryState::FastRecovery { partial_acks: 0 },
            LossResponse::GoBackN => RecoveryState::Open { dupacks: 0 },
        };
    }

    /// The window was reduced for an ECN-Echo (ns-2's `CWND_ACTION_ECN`).
    pub fn on_ecn_reduction(&mut self) {
        self.after_fast_retransmit = false;
    }

    /// The retransmission timer expired with `snd_max` sent: leave any recovery, and no
    /// fast retransmit until the ACKs pass `snd_max` (RFC 6582 section 4).
    pub fn on_timeout(&mut self, snd_max: u64) {
        self.recover = Some(snd_max);
        self.after_fast_retransmit = false;
        self.state = RecoveryState::Open { dupacks: 0 };
    }
}
