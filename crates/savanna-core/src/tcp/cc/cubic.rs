//! CUBIC (RFC 9438): in congestion avoidance the window follows a cubic function of the
//! time since the last congestion event, W_cubic(t) = C (t - K)^3 + W_max (4.2, eq. 1),
//! concave below W_max and convex above, with K = cbrt((W_max - cwnd_epoch) / C) (eq. 2).
//! Each ACK moves cwnd toward W_cubic(t + RTT), clamped to [cwnd, 1.5 cwnd] (4.4, 4.5);
//! where W_cubic(t) is below the Reno estimate W_est (4.3) cwnd follows W_est instead. A
//! congestion event sets ssthresh = beta cwnd and W_max = cwnd, lowered to
//! cwnd (1 + beta) / 2 when the window did not regain the last W_max (fast convergence,
//! 4.7). Slow start is RFC 5681's or, with `hystart = true`, HyStart++ (hystart.rs; or
//! Linux's HyStart with `hystart_rule = "linux"`).
//! Constants: beta = 0.7, C = 0.4 (RFC 9438 4.1 and 5, Linux's values); fast convergence on.
//!
//! Readings: t is the simulator clock (ns), not wall time; RTT in W_cubic(t + RTT) is the
//! smoothed RTT; beta multiplies cwnd, as Linux and Windows do (the RFC's flight_size is
//! the same for a sender that is not application-limited), except on a timeout, where the
//! flight is used when smaller, and a timeout within a loss episode (fast recovery, or a
//! repeated timeout) reduces nothing more, as in Linux; the epoch starts at the first
//! ACK in congestion avoidance, with cwnd_epoch = W_est = cwnd; when slow start ended with
//! no congestion event (HyStart++, or cwnd reaching ssthresh), W_max = cwnd_prior = cwnd,
//! so K = 0 (RFC 9438 4.10); the first epoch after a timeout also has K = 0 and W_max =
//! W_est = cwnd at its start (4.8; Linux's and ns-3's CUBIC forget W_max on a timeout);
//! W_cubic's step is per ACK and W_est's per packet acknowledged (4.3); fast recovery is
//! NewReno's (RFC 9438 leaves recovery to the RFCs).

use super::hystart::{HyStart, Rule};
use super::{slow_start_step, AckInfo, CongestionControl, LossResponse, PartialAck, Window};
use crate::engine::Time;

/// RFC 9438 4.1: multiplicative decrease factor.
pub const BETA: f64 = 0.7;
/// RFC 9438 4.1: the cubic's scaling constant, packets / s^3.
pub const C: f64 = 0.4;
/// RFC 9438 4.3: the Reno-friendly additive increase, 3 (1 - beta) / (1 + beta).
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

/// The congestion-avoidance epoch (RFC 9438 4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Epoch {
    /// t_epoch, ns.
    pub start: Time,
    pub cwnd_epoch: f64,
    /// K, seconds.
    pub k: f64,
}

#[derive(Clone, Copy, Debug)]
pub struct Cubic {
    /// HyStart++ while the initial slow start lasts (None: off or over).
    hystart: Option<HyStart>,
    epoch: Option<Epoch>,
    /// W_max (None until the first congestion event or the end of slow start).
    w_max: Option<f64>,
    /// cwnd before the last reduction (RFC 9438 4.3's cwnd_prior).
    cwnd_prior: f64,
    /// The Reno-friendly estimate W_est (4.3).
    w_est: f64,
    /// The clock and smoothed RTT of the ACK being processed.
    now: Time,
    srtt_s: f64,
    /// A loss episode (fast recovery, or a timeout's go-back-N) is under way: no new ACK
    /// outside recovery since it began.
    in_loss: bool,
    /// A timeout reduced the window and no congestion-avoidance epoch has started since:
    /// the next epoch is RFC 9438 4.8's (K = 0, W_max = W_est = cwnd at its start).
    after_timeout: bool,
}

/// RFC 9438 eq. 2: K = cbrt((W_max - cwnd_epoch) / C). Signed: with cwnd_epoch above W_max
/// K < 0 and W_cubic(0) is still cwnd_epoch.
pub fn k(w_max: f64, cwnd_epoch: f64) -> f64 {
    ((w_max - cwnd_epoch) / C).cbrt()
}

/// RFC 9438 eq. 1: W_cubic(t) = C (t - K)^3 + W_max, t in seconds since the epoch.
pub fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    C * (t - k).powi(3) + w_max
}

impl Cubic {
    pub fn new(hystart: bool, rule: Rule) -> Self {
        Cubic {
            hystart: hystart.then(|| HyStart::new(rule)),
            epoch: None,
            w_max: None,
            cwnd_prior: 0.0,
            w_est: 0.0,
            now: 0,
            srtt_s: 0.0,
            in_loss: false,
            after_timeout: false,
        }
    }
    pub fn hystart(&self) -> Option<&HyStart> {
        self.hystart.as_ref()
    }
    pub fn epoch(&self) -> Option<Epoch> {
        self.epoch
    }
    pub fn w_max(&self) -> Option<f64> {
        self.w_max
    }
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    /// RFC 9438 4.6 and 4.7: a congestion event (loss or ECN-Echo) with a window of `cwnd`.
    fn congestion(&mut self, w: &mut Window, cwnd: f64) {
        // 4.7 fast convergence: a window that did not regain W_max lowers it further.
        self.w_max = Some(match self.w_max {
            Some(m) if cwnd < m => cwnd * (1.0 + BETA) / 2.0,
            _ => cwnd,
        });
        self.cwnd_prior = cwnd;
        // 4.6: ssthresh = cwnd beta, at least 2 packets.
        w.ssthresh = (cwnd * BETA).max(2.0);
        self.epoch = None;
        self.after_timeout = false;
        // RFC 9406 4.3: HyStart++ for the initial slow start only.
        self.hystart = None;
    }

    /// Start the epoch at the first ACK in congestion avoidance (RFC 9438 4.2).
    fn start_epoch(&mut self, cwnd: f64) -> Epoch {
        if let Some(h) = &mut self.hystart {
            h.finish();
        }
        self.hystart = None;
        // RFC 9438 4.8: the first congestion-avoidance stage after a timeout has K = 0 and
        // W_max = cwnd at its start (and W_est = cwnd, below).
        if std::mem::take(&mut self.after_timeout) {
            self.w_max = Some(cwnd);
        }
        // 4.10: slow start ended without a congestion event: W_max = cwnd_prior = cwnd.
        let w_max = *self.w_max.get_or_insert(cwnd);
        if self.cwnd_prior == 0.0 {
            self.cwnd_prior = cwnd;
        }
        self.w_est = cwnd;
        let e = Epoch { start: self.now, cwnd_epoch: cwnd, k: k(w_max, cwnd) };
        self.epoch = Some(e);
        e
    }
}

impl CongestionControl for Cubic {
    fn takes_ack_info(&self) -> bool {
        true
    }
    fn on_ack_info(&mut self, w: &mut Window, a: &AckInfo) {
        self.now = a.now;
        if let Some(s) = a.srtt_s {
            self.srtt_s = s;
        }
        if w.cwnd < w.ssthresh {
            if let Some(h) = &mut self.hystart {
                h.on_ack(w, a);
            }
        }
    }

    fn ssthresh(&self, w: &Window, _flight: u64) -> f64 {
        (w.cwnd * BETA).max(2.0)
    }

    fn on_ack(&mut self, w: &mut Window, acked: u64, abc_limit: u32, max_window: u32) {
        self.in_loss = false;
        if w.cwnd < w.ssthresh {
            // RFC 5681 slow start (RFC 3465's or Linux's count with `abc_limit` above 1), or
            // HyStart++'s CSS (the same growth / CSS_GROWTH_DIVISOR, RFC 9406 4.2).
            w.cwnd += slow_start_step(acked, abc_limit) / self.hystart.map_or(1.0, |h| h.growth_divisor());
        } else {
            let e = match self.epoch {
                Some(e) => e,
                None => self.start_epoch(w.cwnd),
            };
            let w_max = self.w_max.unwrap_or(e.cwnd_epoch);
            let t = (self.now - e.start) as f64 * 1e-9;
            // 4.3: W_est grows by alpha per window of packets acknowledged; alpha becomes 1
            // once W_est has reached cwnd_prior.
            let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { ALPHA };
            self.w_est += alpha * acked as f64 / w.cwnd;
            if w_cubic(t, e.k, w_max) < self.w_est {
                // 4.3: the Reno-friendly region: cwnd = W_est.
                w.cwnd = self.w_est;
            } else {
                // 4.4 (concave) and 4.5 (convex): toward W_cubic(t + RTT), clamped to
                // [cwnd, 1.5 cwnd], by (target - cwnd) / cwnd per ACK.
                let target = w_cubic(t + self.srtt_s, e.k, w_max).clamp(w.cwnd, 1.5 * w.cwnd);
                w.cwnd += (target - w.cwnd) / w.cwnd;
            }
        }
        w.cwnd = w.cwnd.min(max_window as f64);
    }

    fn on_fast_retransmit(&mut self, w: &mut Window, _flight: u64, dupacks: u32) -> LossResponse {
        self.congestion(w, w.cwnd);
        self.in_loss = true;
        // RFC 5681 3.2 step 3 with CUBIC's ssthresh.
        w.cwnd = w.ssthresh + dupacks as f64;
        LossResponse::FastRecovery
    }

    /// RFC 6582 3.2 step 3, as NewReno.
    fn on_partial_ack(&mut self, w: &mut Window, acked: u64) -> PartialAck {
        w.cwnd = (w.cwnd - acked as f64 + 1.0).max(1.0);
        PartialAck::Retransmit
    }

    /// RFC 9438 4.8: on a timeout, ssthresh as for any congestion event, cwnd = 1. A
    /// timeout within a loss episode (in fast recovery, or a backed-off repeat) is no new
    /// congestion event: ssthresh and W_max stay (Linux's tcp_enter_loss); fast recovery's
    /// inflated cwnd is no window to remember. The first epoch after it has K = 0 (4.8).
    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        if self.in_loss {
            self.epoch = None;
        } else {
            self.congestion(w, w.cwnd.min(flight as f64));
        }
        self.in_loss = true;
        self.after_timeout = true;
        w.cwnd = 1.0;
    }

    /// RFC 9438 4.6: an ECN-Echo is a congestion event; cwnd = ssthresh at once.
    fn on_ecn_echo(&mut self, w: &mut Window, _flight: u64) {
        self.congestion(w, w.cwnd);
        w.cwnd = w.ssthresh;
    }
}
