//! Congestion control: the window arithmetic, behind one trait (as Linux's
//! `tcp_congestion_ops` and ns-3's `TcpCongestionOps`), apart from loss detection and
//! recovery (`recovery.rs`, which decides *when* an event happens and what to retransmit).
//! The trait's default methods are RFC 5681's arithmetic (Reno); NewReno (RFC 6582) and
//! Tahoe override what differs; CUBIC (RFC 9438, with HyStart++ RFC 9406) and DCTCP
//! (RFC 8257) also take the ACK's context (`AckInfo`: the clock, RTT sample, ECE, the
//! round). pFabric's minimal rate control (Alizadeh et al. 2013) keeps Reno's growth with
//! its own timeout rules. `Cc` dispatches statically over the six.
//!
//! Windows are in packets (f64, as ns-2's `cwnd_`); `flight` is snd_max - snd_una. RFC 5681
//! eq. (4) uses FlightSize; with packet-granular sequence numbers that is the flight.

pub mod cubic;
pub mod dctcp;
pub mod hystart;
pub mod newreno;
pub mod pfabric;
pub mod reno;
pub mod tahoe;

pub use cubic::Cubic;
pub use dctcp::Dctcp;
pub use newreno::NewReno;
pub use pfabric::Pfabric;
pub use reno::Reno;
pub use tahoe::Tahoe;

use super::Variant;
use crate::engine::Time;

/// What the sender knows when an ACK of new data arrives, for the congestion controls
/// that need more than the window: CUBIC's clock, HyStart++'s RTT samples and rounds,
/// DCTCP's marked fraction per window.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    /// The simulator clock, ns.
    pub now: Time,
    /// Packets newly acknowledged.
    pub acked: u64,
    /// snd_una after the ACK.
    pub snd_una: u64,
    /// The highest sequence sent + 1 (snd_max): where a round that starts now ends.
    pub snd_max: u64,
    /// The RTT sample this ACK gave (Karn's rule applied), seconds.
    pub rtt_s: Option<f64>,
    /// The smoothed RTT after the sample, seconds.
    pub srtt_s: Option<f64>,
    /// The ACK carries ECN-Echo.
    pub ece: bool,
}

/// The congestion window and slow-start threshold, packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
}

/// What the sender does once the duplicate-ACK threshold is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossResponse {
    /// Retransmit snd_una and enter fast recovery (RFC 5681 3.2, RFC 6582).
    FastRecovery,
    /// No fast recovery: go back N from snd_una with the window the call left (Tahoe).
    GoBackN,
}

/// What a partial ACK (one below `recover`) does during fast recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialAck {
    /// Retransmit the next hole and stay in fast recovery (RFC 6582 3.2 step 3).
    Retransmit,
    /// Leave fast recovery as on any new ACK (RFC 5681 3.2 step 6, Reno).
    Exit,
}

/// RFC 5681 eq. (4): ssthresh = max(FlightSize / 2, 2 SMSS), in whole packets.
pub fn halved_flight(flight: u64) -> f64 {
    ((flight / 2) as f64).max(2.0)
}

/// The slow-start increase for an ACK that newly acknowledged `acked` packets, with at most
/// `abc_limit` counted: 1 is RFC 5681 3.1's min(N, SMSS) (one packet per ACK, as ns-2 and
/// ns-3's NewReno); L is RFC 3465 2.2's Appropriate Byte Counting, min(N, L SMSS) (L = 2
/// recommended); u32::MAX counts every packet, as Linux's `tcp_slow_start` (cwnd + acked).
#[inline]
pub fn slow_start_step(acked: u64, abc_limit: u32) -> f64 {
    if abc_limit <= 1 {
        1.0
    } else {
        acked.clamp(1, abc_limit as u64) as f64
    }
}

/// Window arithmetic for each event the sender sees. Defaults: RFC 5681 (Reno).
pub trait CongestionControl {
    /// An ACK of new data arrived (called before any window change it causes). The default
    /// ignores it: the Reno family needs only the window.
    fn on_ack_info(&mut self, _w: &mut Window, _a: &AckInfo) {}

    /// Whether `on_ack_info` reads the context: an implementation that overrides it says
    /// so here, and the sender builds the context only then (the Reno family never reads
    /// it: building it was a cost on every ACK).
    fn takes_ack_info(&self) -> bool {
        false
    }

    /// ssthresh after a congestion event with `flight` packets outstanding.
    fn ssthresh(&self, _w: &Window, flight: u64) -> f64 {
        halved_flight(flight)
    }

    /// An ACK of new data outside fast recovery (and not the one that just reduced the
    /// window for ECN): slow start below ssthresh, congestion avoidance above, capped at
    /// the receiver window (RFC 5681 3.1). Slow start adds `slow_start_step(acked,
    /// abc_limit)`: one packet per ACK with `abc_limit` 1 (no ABC, as ns-2 and ns-3's
    /// NewReno), the packets acknowledged up to the limit otherwise (RFC 3465, Linux).
    /// Counting more than one packet, the step stops at ssthresh and the rest of the ACK's
    /// packets count in congestion avoidance (1/cwnd each), as Linux's `tcp_slow_start`
    /// (min(cwnd + acked, ssthresh), the remainder to `tcp_cong_avoid_ai`): a cumulative
    /// ACK over many segments (a hole filled after an RTO) does not lift cwnd past ssthresh.
    fn on_ack(&mut self, w: &mut Window, acked: u64, abc_limit: u32, max_window: u32) {
        if w.cwnd < w.ssthresh {
            let step = slow_start_step(acked, abc_limit);
            if abc_limit > 1 && w.cwnd + step > w.ssthresh {
                let rest = w.cwnd + step - w.ssthresh;
                w.cwnd = w.ssthresh;
                w.cwnd += rest / w.cwnd;
            } else {
                w.cwnd += step;
            }
        } else {
            w.cwnd += 1.0 / w.cwnd;
        }
        w.cwnd = w.cwnd.min(max_window as f64);
    }

    /// The duplicate-ACK threshold was reached: RFC 5681 3.2 steps 2-3 (ssthresh as eq. 4,
    /// cwnd = ssthresh + the duplicates that left the network).
    fn on_fast_retransmit(&mut self, w: &mut Window, flight: u64, dupacks: u32) -> LossResponse {
        w.ssthresh = self.ssthresh(w, flight);
        w.cwnd = w.ssthresh + dupacks as f64;
        LossResponse::FastRecovery
    }

    /// A further duplicate ACK in fast recovery: inflate by one (RFC 5681 3.2 step 4).
    fn on_dupack_in_recovery(&mut self, w: &mut Window) {
        w.cwnd += 1.0;
    }

    /// An ACK of new data below `recover` in fast recovery; `acked` packets newly
    /// acknowledged. Reno has no partial ACKs: it leaves recovery as on a full ACK.
    fn on_partial_ack(&mut self, w: &mut Window, _acked: u64) -> PartialAck {
        self.on_full_ack(w);
        PartialAck::Exit
    }

    /// The ACK that ends fast recovery: deflate to ssthresh (RFC 5681 3.2 step 6; RFC 6582
    /// 3.2 step 4's second option).
    fn on_full_ack(&mut self, w: &mut Window) {
        w.cwnd = w.ssthresh;
    }

    /// The retransmission timer expired: RFC 5681 3.1 eq. (4) and cwnd = 1 (the loss
    /// window). Back-off and go-back-N belong to the sender.
    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        w.ssthresh = self.ssthresh(w, flight);
        w.cwnd = 1.0;
    }

    /// An ECN-Echo answered by a reduction (the sender allows one per window of data,
    /// RFC 3168 6.1.2): halve as for a loss, without a retransmission.
    fn on_ecn_echo(&mut self, w: &mut Window, flight: u64) {
        w.ssthresh = self.ssthresh(w, flight);
        w.cwnd = w.ssthresh;
    }
}

/// The implementations, dispatched statically (a `match` on a one-byte tag per call).
#[derive(Clone, Copy, Debug)]
pub enum Cc {
    NewReno(NewReno),
    Reno(Reno),
    Tahoe(Tahoe),
    Cubic(Cubic),
    Dctcp(Dctcp),
    Pfabric(Pfabric),
}

impl Cc {
    pub fn new(v: Variant) -> Self {
        match v {
            Variant::NewReno => Cc::NewReno(NewReno),
            Variant::Reno => Cc::Reno(Reno),
            Variant::Tahoe => Cc::Tahoe(Tahoe),
            Variant::Cubic { hystart, hystart_rule } => Cc::Cubic(Cubic::new(hystart, hystart_rule)),
            Variant::Dctcp => Cc::Dctcp(Dctcp::default()),
            Variant::Pfabric => Cc::Pfabric(Pfabric::default()),
        }
    }
}

impl Cc {
    /// A loss repaired without fast recovery (RFC 8985 7.4.2: a tail loss probe repaired
    /// it): the congestion control's response to a loss event, ssthresh as for a loss and
    /// cwnd = ssthresh (Linux: tcp_init_cwnd_reduction then tcp_end_cwnd_reduction). For
    /// CUBIC that is its congestion event (RFC 9438 4.6, the path an ECN-Echo takes).
    pub fn on_loss_repaired(&mut self, w: &mut Window, flight: u64) {
        match self {
            Cc::Cubic(c) => c.on_ecn_echo(w, flight),
            _ => {
                w.ssthresh = self.ssthresh(w, flight);
                w.cwnd = w.ssthresh;
            }
        }
    }
}

macro_rules! each {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            Cc::NewReno($c) => $e,
            Cc::Reno($c) => $e,
            Cc::Tahoe($c) => $e,
            Cc::Cubic($c) => $e,
            Cc::Dctcp($c) => $e,
            Cc::Pfabric($c) => $e,
        }
    };
}

impl CongestionControl for Cc {
    #[inline]
    fn on_ack_info(&mut self, w: &mut Window, a: &AckInfo) {
        each!(self, c => c.on_ack_info(w, a))
    }
    #[inline]
    fn takes_ack_info(&self) -> bool {
        each!(self, c => c.takes_ack_info())
    }
    #[inline]
    fn ssthresh(&self, w: &Window, flight: u64) -> f64 {
        each!(self, c => c.ssthresh(w, flight))
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u64, abc_limit: u32, max_window: u32) {
        each!(self, c => c.on_ack(w, acked, abc_limit, max_window))
    }
    #[inline]
    fn on_fast_retransmit(&mut self, w: &mut Window, flight: u64, dupacks: u32) -> LossResponse {
        each!(self, c => c.on_fast_retransmit(w, flight, dupacks))
    }
    #[inline]
    fn on_dupack_in_recovery(&mut self, w: &mut Window) {
        each!(self, c => c.on_dupack_in_recovery(w))
    }
    #[inline]
    fn on_partial_ack(&mut self, w: &mut Window, acked: u64) -> PartialAck {
        each!(self, c => c.on_partial_ack(w, acked))
    }
    #[inline]
    fn on_full_ack(&mut self, w: &mut Window) {
        each!(self, c => c.on_full_ack(w))
    }
    #[inline]
    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        each!(self, c => c.on_timeout(w, flight))
    }
    #[inline]
    fn on_ecn_echo(&mut self, w: &mut Window, flight: u64) {
        each!(self, c => c.on_ecn_echo(w, flight))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(cwnd: f64, ssthresh: f64) -> Window {
        Window { cwnd, ssthresh }
    }

    #[test]
    fn a_congestion_control_reads_the_ack_context_exactly_when_it_says_so() {
        // The sender builds the context only for those whose `takes_ack_info` is true: one
        // that reads it without saying so would silently get none (its state here changes).
        let variants = [
            Variant::NewReno,
            Variant::Reno,
            Variant::Tahoe,
            Variant::Cubic { hystart: true, hystart_rule: hystart::Rule::default() },
            Variant::Cubic { hystart: false, hystart_rule: hystart::Rule::default() },
            Variant::Dctcp,
            Variant::Pfabric,
        ];
        let info = AckInfo {
            now: 5_000_000_000,
            acked: 3,
            snd_una: 40,
            snd_max: 50,
            rtt_s: Some(0.1),
            srtt_s: Some(0.1),
            ece: true,
        };
        for v in variants {
            let mut c = Cc::new(v);
            let mut x = w(10.0, 64.0);
            let before = format!("{c:?} {x:?}");
            c.on_ack_info(&mut x, &info);
            let read = format!("{c:?} {x:?}") != before;
            assert_eq!(c.takes_ack_info(), read, "{}: takes_ack_info against what on_ack_info does", v.name());
        }
    }

    #[test]
    fn the_three_differ_only_where_their_rfcs_do() {
        for v in [Variant::NewReno, Variant::Reno, Variant::Tahoe] {
            let mut c = Cc::new(v);
            // Growth is RFC 5681's for all three.
            let mut x = w(2.0, 4.0);
            c.on_ack(&mut x, 1, 1, 128);
            assert_eq!(x.cwnd, 3.0);
            let mut x = w(10.0, 4.0);
            c.on_ack(&mut x, 1, 1, 128);
            assert_eq!(x.cwnd, 10.1);
            // Fast retransmit: Tahoe drops to one packet, the others to ssthresh + 3.
            let mut x = w(20.0, 64.0);
            let r = c.on_fast_retransmit(&mut x, 20, 3);
            assert_eq!(x.ssthresh, 10.0);
            match v {
                Variant::Tahoe => assert_eq!((r, x.cwnd), (LossResponse::GoBackN, 1.0)),
                _ => assert_eq!((r, x.cwnd), (LossResponse::FastRecovery, 13.0)),
            }
            // Partial ACK: NewReno deflates and stays, Reno leaves.
            let mut x = w(15.0, 10.0);
            let r = c.on_partial_ack(&mut x, 4);
            match v {
                Variant::NewReno => assert_eq!((r, x.cwnd), (PartialAck::Retransmit, 12.0)),
                _ => assert_eq!((r, x.cwnd), (PartialAck::Exit, 10.0)),
            }
        }
    }
}
