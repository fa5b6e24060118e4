//! Retransmission timeout estimator, RFC 6298: SRTT/RTTVAR smoothing (alpha 1/8, beta 1/4),
//! RTO = SRTT + max(G, 4 RTTVAR) clamped to [min_rto, max_rto], the initial RTO (ITO)
//! before the first sample, and exponential backoff (the timer doubles on each expiry and
//! is reset when a valid sample arrives; Karn's rule is applied by the caller, which never
//! feeds samples from retransmitted segments).
//!
//! With a tick (`tick_s` > 0, ns-2's `tcpTick_`), it follows ns-2.35's `TcpAgent::rtt_update`
//! and `rtt_timeout` instead (docs/ns2.md, 3c): a sample is the number of tick boundaries its
//! round trip crossed (at least 1), the send time offset by a per-connection phase (ns-2's
//! `boot_time_`, here drawn from the flow id so runs stay reproducible); SRTT and RTTVAR are
//! kept in ticks in ns-2's fixed point (8 SRTT, 4 RTTVAR); RTO = floor(SRTT + 4 RTTVAR) ticks,
//! no G term, at least min RTO (before backoff, ns-2's `rfc2988_`) and at least 2 ticks.
//!
//! The timer in ns (`timer`, read on every ACK of new data) is computed when a sample, a
//! backoff or a restart changes it, not on each read.

use crate::engine::{rem_euclid_pos, Time};

#[derive(Clone, Debug)]
pub struct RtoEstimator {
    srtt: f64,
    rttvar: f64,
    has_sample: bool,
    backoff: u32,
    ito: f64,
    min_rto: f64,
    max_rto: f64,
    granularity: f64,
    /// ns-2's tick (0: continuous time) and the connection's clock phase in [0, tick).
    tick: f64,
    phase: f64,
    /// ns-2's `t_srtt_` (ticks << 3) and `t_rttvar_` (ticks << 2).
    t_srtt: i64,
    t_rttvar: i64,
    /// `compute_timer()` for the current state (every method that changes it updates it).
    timer_ns: Time,
}

impl RtoEstimator {
    pub fn new(ito_s: f64, min_rto_s: f64, max_rto_s: f64, granularity_s: f64) -> Self {
        let mut e = RtoEstimator {
            srtt: 0.0,
            rttvar: 0.0,
            has_sample: false,
            backoff: 0,
            ito: ito_s,
            min_rto: min_rto_s,
            max_rto: max_rto_s,
            granularity: granularity_s,
            tick: 0.0,
            phase: 0.0,
            t_srtt: 0,
            t_rttvar: 0,
            timer_ns: 0,
        };
        e.timer_ns = e.compute_timer();
        e
    }

    /// Round samples and the RTO to `tick_s` (0: off), with the clock phase drawn from
    /// `seed` (a flow id) uniformly in [0, tick).
    pub fn ticked(mut self, tick_s: f64, seed: u64) -> Self {
        if tick_s > 0.0 {
            // splitmix64 of the seed: a fixed, well-spread phase per connection.
            let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            self.tick = tick_s;
            self.phase = (z >> 11) as f64 / (1u64 << 53) as f64 * tick_s;
        }
        self.timer_ns = self.compute_timer();
        self
    }

    /// Feed one RTT measurement `r` (seconds) taken at `now` (ns) from a segment that was
    /// not retransmitted.
    pub fn sample_at(&mut self, r: f64, now: Time) {
        if self.tick <= 0.0 {
            return self.sample(r);
        }
        // ns-2 `rtt_update`: ticks crossed, counting from the connection's phase.
        let send = now as f64 * 1e-9 - r + self.phase;
        let ticks = (((r + rem_euclid_pos(send, self.tick)) / self.tick) as i64).max(1);
        if self.has_sample {
            let mut delta = ticks - (self.t_srtt >> 3);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            delta = delta.abs() - (self.t_rttvar >> 2);
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = ticks << 3;
            self.t_rttvar = ticks << 1;
            self.has_sample = true;
        }
        self.srtt = (self.t_srtt as f64 / 8.0) * self.tick;
        self.rttvar = (self.t_rttvar as f64 / 4.0) * self.tick;
        self.backoff = 0;
        self.timer_ns = self.compute_timer();
    }
    /// Feed one RTT measurement (seconds) from a segment that was not retransmitted.
    pub fn sample(&mut self, r: f64) {
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.has_sample = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        self.backoff = 0;
        self.timer_ns = self.compute_timer();
    }
    /// RTO before backoff, seconds.
    pub fn base_rto(&self) -> f64 {
        if !self.has_sample {
            return self.ito;
        }
        if self.tick > 0.0 {
            // ns-2 `t_rtxcur_` = ((t_rttvar << 3) + t_srtt) >> 3 ticks; `rtt_timeout`'s bounds.
            let rto = (((self.t_rttvar << 3) + self.t_srtt) >> 3) as f64 * self.tick;
            return rto.max(self.min_rto).min(self.max_rto).max(2.0 * self.tick);
        }
        let rto = self.srtt + self.granularity.max(4.0 * self.rttvar);
        rto.clamp(self.min_rto, self.max_rto)
    }
    /// The timer to arm now: base RTO times 2^backoff, at most max_rto.
    #[inline]
    pub fn timer(&self) -> Time {
        self.timer_ns
    }
    fn compute_timer(&self) -> Time {
        let t = (self.base_rto() * f64::from(1u32 << self.backoff.min(16))).min(self.max_rto.max(self.ito));
        crate::engine::round_u64(t * 1e9)
    }
    /// The timer expired: double it for the next arming.
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(16);
        self.timer_ns = self.compute_timer();
    }
    /// ns-2.35: data starts from the ITO with the SYN's backoff kept until a sample
    /// (`t_backoff_` is reset only in `newack` with `rtt_active_`).
    pub fn restart_from_ito_keeping_backoff(&mut self) {
        self.has_sample = false;
        self.timer_ns = self.compute_timer();
    }
    /// RFC 6298 (5.7): the SYN timed out, so data transmission starts again from the ITO.
    pub fn restart_from_ito(&mut self) {
        self.has_sample = false;
        self.backoff = 0;
        self.timer_ns = self.compute_timer();
    }
    pub fn srtt(&self) -> Option<f64> {
        self.has_sample.then_some(self.srtt)
    }
    pub fn rttvar(&self) -> f64 {
        self.rttvar
    }
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_smoothing_and_bounds() {
        let mut e = RtoEstimator::new(3.0, 0.2, 60.0, 0.001);
        assert_eq!(e.base_rto(), 3.0);
        e.sample(0.1);
        // SRTT = 0.1, RTTVAR = 0.05 => RTO = 0.1 + 0.2 = 0.3
        assert!((e.base_rto() - 0.3).abs() < 1e-12);
        e.sample(0.2);
        // RTTVAR = 0.75*0.05 + 0.25*0.1 = 0.0625; SRTT = 0.1125 => RTO = 0.3625
        assert!((e.base_rto() - 0.3625).abs() < 1e-12);
        for _ in 0..200 {
            e.sample(0.01);
        }
        assert_eq!(e.base_rto(), 0.2, "clamped to min_rto");
    }

    #[test]
    fn granularity_floor() {
        let mut e = RtoEstimator::new(3.0, 0.0, 60.0, 0.5);
        for _ in 0..100 {
            e.sample(0.1);
        }
        assert!((e.base_rto() - 0.6).abs() < 1e-9, "{}", e.base_rto());
    }

    #[test]
    fn backoff_doubles_and_caps_and_sample_resets() {
        let mut e = RtoEstimator::new(1.0, 0.2, 8.0, 0.001);
        let mut seen = vec![];
        for _ in 0..6 {
            seen.push(e.timer());
            e.back_off();
        }
        assert_eq!(
            seen,
            vec![1_000_000_000, 2_000_000_000, 4_000_000_000, 8_000_000_000, 8_000_000_000, 8_000_000_000]
        );
        e.sample(0.1);
        assert_eq!(e.backoff(), 0);
    }

    /// ns-2 `rtt_update`: a 150 ms round trip crosses one or two 100 ms ticks depending on
    /// the connection's phase (uniform), about half the time each; the RTO after the first
    /// sample is 3 sample ticks (SRTT + 4 RTTVAR with RTTVAR = SRTT / 2).
    #[test]
    fn tick_samples_count_the_ticks_crossed() {
        let mut two = 0;
        for seed in 0..2000u64 {
            let mut e = RtoEstimator::new(3.0, 0.0, 60.0, 0.001).ticked(0.1, seed);
            e.sample_at(0.15, 1_000_000_000);
            let k = (e.srtt().unwrap() / 0.1).round();
            assert!(k == 1.0 || k == 2.0);
            assert!((e.base_rto() - 3.0 * k * 0.1).abs() < 1e-12);
            two += (k == 2.0) as u32;
        }
        assert!((800..1200).contains(&two), "two ticks {two} times in 2000");
    }

    /// The timer read on every ACK is kept, not computed on the read: after any sequence of
    /// samples, back-offs and restarts, with or without ticks, it must be what the state
    /// gives now.
    #[test]
    fn the_kept_timer_is_always_the_one_the_state_gives() {
        let mut rng = crate::engine::Rng::stream(11, "rto-kept-timer");
        for case in 0..200u64 {
            let tick = [0.0, 0.01, 0.1, 0.5][(case % 4) as usize];
            let min_rto = [0.0, 0.2, 1.0][(case % 3) as usize];
            let mut e = RtoEstimator::new(3.0, min_rto, 60.0, 0.001).ticked(tick, case);
            let mut now: Time = 0;
            assert_eq!(e.timer(), e.compute_timer());
            for _ in 0..200 {
                now += 1 + rng.below(2_000_000_000);
                match rng.below(6) {
                    0 | 1 => e.sample_at(rng.uniform() * 2.0 + 1e-4, now),
                    2 => e.sample(rng.uniform() * 2.0 + 1e-4),
                    3 => e.back_off(),
                    4 => e.restart_from_ito(),
                    _ => e.restart_from_ito_keeping_backoff(),
                }
                assert_eq!(e.timer(), e.compute_timer(), "case {case}");
            }
        }
    }

    /// ns-2's fixed point: a later sample moves SRTT by 1/8 and RTTVAR by 1/4 of the
    /// difference, in whole eighths and quarters of a tick.
    #[test]
    fn tick_smoothing_in_fixed_point() {
        let mut e = RtoEstimator::new(3.0, 0.0, 60.0, 0.001).ticked(1.0, 7);
        e.sample_at(4.0, 10_000_000_000);
        let k0 = e.srtt().unwrap();
        assert!(k0 == 4.0 || k0 == 5.0, "a 4-tick round trip counts 4 or 5 ticks");
        let (t_srtt, t_var) = ((k0 * 8.0) as i64, (k0 * 2.0) as i64);
        e.sample_at(12.0, 30_000_000_000);
        // The second sample is 12 or 13 ticks; the state must be ns-2's for one of them.
        let expected = |k: i64| {
            let d = k - (t_srtt >> 3);
            ((t_srtt + d) as f64 / 8.0, (t_var + d.abs() - (t_var >> 2)) as f64 / 4.0)
        };
        let got = (e.srtt().unwrap(), e.rttvar());
        assert!(got == expected(12) || got == expected(13), "{got:?} vs {:?} / {:?}", expected(12), expected(13));
    }
}
