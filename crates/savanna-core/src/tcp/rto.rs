//! Retransmission timeout estimator, RFC 6298: SRTT/RTTVAR smoothing (alpha 1/8, beta 1/4),
//! RTO = SRTT + max(G, 4 RTTVAR) clamped to [min_rto, max_rto], the initial RTO (ITO)
//! before the first sample, and exponential backoff (the timer doubles on each expiry and
//! is reset when a valid sample arrives; Karn's rule is applied by the caller, which never
//! feeds samples from retransmitted segments).

use crate::engine::Time;

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
}

impl RtoEstimator {
    pub fn new(ito_s: f64, min_rto_s: f64, max_rto_s: f64, granularity_s: f64) -> Self {
        RtoEstimator {
            srtt: 0.0,
            rttvar: 0.0,
            has_sample: false,
            backoff: 0,
            ito: ito_s,
            min_rto: min_rto_s,
            max_rto: max_rto_s,
            granularity: granularity_s,
        }
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
    }
    /// RTO before backoff, seconds.
    pub fn base_rto(&self) -> f64 {
        if !self.has_sample {
            return self.ito;
        }
        let rto = self.srtt + self.granularity.max(4.0 * self.rttvar);
        rto.clamp(self.min_rto, self.max_rto)
    }
    /// The timer to arm now: base RTO times 2^backoff, at most max_rto.
    pub fn timer(&self) -> Time {
        let t = (self.base_rto() * f64::from(1u32 << self.backoff.min(16))).min(self.max_rto.max(self.ito));
        (t * 1e9).round() as Time
    }
    /// The timer expired: double it for the next arming.
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(16);
    }
    /// RFC 6298 (5.7): the SYN timed out, so data transmission starts again from the ITO.
    pub fn restart_from_ito(&mut self) {
        self.has_sample = false;
        self.backoff = 0;
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
}
