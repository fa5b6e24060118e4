//! HyStart++ (RFC 9406): slow start that leaves early when the RTT grows, through
//! Conservative Slow Start (CSS), so the first slow start overshoots less.
//!
//! Per round (a round ends when snd_una passes the highest sequence sent when it began,
//! 4.2's windowEnd) it keeps the minimum RTT sample of the round and of the one before.
//! Once a round holds N_RTT_SAMPLE samples and its minimum exceeds the last round's by the
//! threshold eta = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms), slow start gives way to CSS
//! (growth divided by 4). In CSS, a round minimum below the baseline that started CSS
//! returns to slow start; CSS_ROUNDS rounds in CSS end slow start (ssthresh = cwnd).
//! Readings: RTT samples are the endpoint's (tcp/rtt.rs, Karn's rule applied); a sender
//! with no pacing has L = 8 packets, which the simulator's one-packet-per-ACK growth never
//! reaches; HyStart++ runs for the initial slow start only (4.3's recommendation): any
//! congestion event ends it, as does cwnd reaching ssthresh.
//!
//! `Rule::Linux` is instead Linux's HyStart delay test (net/ipv4/tcp_cubic.c,
//! hystart_update; Ha and Rhee 2011): from cwnd 16, the minimum of a round's first samples
//! (at least 8) above the connection's minimum RTT by clamp(min / 8, 4 ms, 16 ms) ends slow
//! start at once (ssthresh = cwnd), with no CSS. Its ACK-train test is not modelled: with
//! pacing on its threshold is a whole minimum RTT of ACKs at most 2 ms apart, which the
//! delayed ACKs of a 10 Mb/s path never give (TCPHystartTrainDetect stayed 0 in the
//! emulated runs, docs/emulate.md).

use super::{AckInfo, Window};

/// RFC 9406 4.3 constants (seconds, counts).
pub const MIN_RTT_THRESH_S: f64 = 0.004;
pub const MAX_RTT_THRESH_S: f64 = 0.016;
pub const MIN_RTT_DIVISOR: f64 = 8.0;
pub const N_RTT_SAMPLE: u32 = 8;
pub const CSS_GROWTH_DIVISOR: f64 = 4.0;
pub const CSS_ROUNDS: u32 = 5;

/// Linux: hystart_low_window, the window below which HyStart does not test.
pub const LINUX_LOW_WINDOW: f64 = 16.0;
/// Linux: HYSTART_MIN_SAMPLES, the samples of a round taken before it tests.
pub const LINUX_MIN_SAMPLES: u32 = 8;

/// Which slow-start exit (`hystart_rule` in `[tcp]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rule {
    /// RFC 9406 HyStart++: a rise between consecutive rounds' minima leads to CSS.
    #[default]
    Rfc9406,
    /// Linux's HyStart delay test: a round's minimum above the connection's minimum ends
    /// slow start.
    Linux,
}

/// Where the initial slow start is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Phase {
    /// Standard slow start, watching the RTT.
    SlowStart,
    /// Conservative slow start since the RTT rose to `baseline_s`; `rounds` rounds in CSS
    /// so far, the current one included.
    Css { baseline_s: f64, rounds: u32 },
    /// Slow start is over (CSS ran its rounds, a congestion event, or cwnd >= ssthresh).
    Done,
}

#[derive(Clone, Copy, Debug)]
pub struct HyStart {
    rule: Rule,
    phase: Phase,
    /// The round ends when snd_una reaches this (RFC 9406's windowEnd).
    window_end: u64,
    last_round_min_s: f64,
    current_round_min_s: f64,
    samples: u32,
    /// Rule::Linux: the connection's minimum RTT sample (cubic's delay_min), seconds.
    delay_min_s: f64,
}

impl Default for HyStart {
    fn default() -> Self {
        HyStart::new(Rule::Rfc9406)
    }
}

impl HyStart {
    pub fn new(rule: Rule) -> Self {
        HyStart {
            rule,
            phase: Phase::SlowStart,
            window_end: 0,
            last_round_min_s: f64::INFINITY,
            current_round_min_s: f64::INFINITY,
            samples: 0,
            delay_min_s: f64::INFINITY,
        }
    }
}

/// RFC 9406 4.2: RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR,
/// MAX_RTT_THRESH)).
pub fn rtt_thresh(last_round_min_s: f64) -> f64 {
    (last_round_min_s / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH_S, MAX_RTT_THRESH_S)
}

impl HyStart {
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Slow-start growth per ACK divides by this: 1 in slow start, CSS_GROWTH_DIVISOR in
    /// CSS (RFC 9406 4.2).
    pub fn growth_divisor(&self) -> f64 {
        match self.phase {
            Phase::Css { .. } => CSS_GROWTH_DIVISOR,
            Phase::SlowStart | Phase::Done => 1.0,
        }
    }

    /// Slow start ends for a reason of its own (a congestion event, cwnd >= ssthresh).
    pub fn finish(&mut self) {
        self.phase = Phase::Done;
    }

    /// An ACK of new data in slow start (cwnd < ssthresh). May move to CSS, back to slow
    /// start, or end slow start by setting ssthresh = cwnd.
    pub fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        if self.phase == Phase::Done {
            return;
        }
        if self.rule == Rule::Linux {
            self.on_ack_linux(w, a);
            return;
        }
        // RFC 9406 4.2: a new round starts when the ACK passes windowEnd.
        if a.snd_una > self.window_end {
            self.last_round_min_s = self.current_round_min_s;
            self.current_round_min_s = f64::INFINITY;
            self.samples = 0;
            self.window_end = a.snd_max;
            if let Phase::Css { baseline_s, rounds } = self.phase {
                // RFC 9406 4.2: once CSS_ROUNDS rounds in CSS are complete (the round it
                // began in counts), enter congestion avoidance with ssthresh = cwnd.
                if rounds >= CSS_ROUNDS {
                    w.ssthresh = w.cwnd;
                    self.phase = Phase::Done;
                    return;
                }
                self.phase = Phase::Css { baseline_s, rounds: rounds + 1 };
            }
        }
        if let Some(r) = a.rtt_s {
            self.current_round_min_s = self.current_round_min_s.min(r);
            self.samples += 1;
        }
        if self.samples < N_RTT_SAMPLE {
            return;
        }
        match self.phase {
            Phase::SlowStart => {
                // RFC 9406 4.2: leave slow start for CSS when this round's minimum RTT
                // exceeds the last round's by RttThresh.
                if self.last_round_min_s.is_finite()
                    && self.current_round_min_s >= self.last_round_min_s + rtt_thresh(self.last_round_min_s)
                {
                    self.phase = Phase::Css { baseline_s: self.current_round_min_s, rounds: 1 };
                }
            }
            Phase::Css { baseline_s, .. } => {
                // RFC 9406 4.2: the RTT fell below the baseline: the rise was spurious,
                // resume slow start.
                if self.current_round_min_s < baseline_s {
                    self.phase = Phase::SlowStart;
                }
            }
            Phase::Done => {}
        }
    }

    /// Linux's HyStart delay test (tcp_cubic.c: bictcp_acked, then hystart_update), per
    /// ACK with an RTT sample; Linux calls it for those only.
    fn on_ack_linux(&mut self, w: &mut Window, a: &AckInfo) {
        let Some(r) = a.rtt_s else { return };
        // bictcp_acked: delay_min follows every sample, before the test.
        self.delay_min_s = self.delay_min_s.min(r);
        // hystart_update: a round ends when snd_una passes the snd_nxt of its start.
        if a.snd_una > self.window_end {
            self.window_end = a.snd_max;
            self.current_round_min_s = f64::INFINITY;
            self.samples = 0;
        }
        if w.cwnd < LINUX_LOW_WINDOW {
            return;
        }
        self.current_round_min_s = self.current_round_min_s.min(r);
        if self.samples < LINUX_MIN_SAMPLES {
            self.samples += 1;
        } else if self.current_round_min_s > self.delay_min_s + rtt_thresh(self.delay_min_s) {
            // HYSTART_DELAY: slow start ends here, ssthresh = cwnd.
            w.ssthresh = w.cwnd;
            self.phase = Phase::Done;
        }
    }
}
