//! Proportional Rate Reduction (RFC 6937) for SACK loss recovery, and for NewReno's fast
//! recovery without SACK when configured (`on_ack_without_sack`): during recovery the
//! sender sends in proportion to what the receiver reports delivered, so the flight comes
//! down to ssthresh smoothly instead of in one step; once the flight (pipe) is below
//! ssthresh, the slow-start reduction bound (PRR-SSRB, the RFC's recommended bound) lets it
//! grow back by at most one packet more than was delivered per ACK.
//!
//! Readings: RecoverFS is the flight at entry (snd.nxt - snd.una, RFC 6937 section 3);
//! units are packets; the fast retransmit itself is sent at entry even when the first
//! ACK's quota is zero (RFC 6675 (4.3) sends it unconditionally; Linux does the same), and
//! counted in prr_out.

/// PRR's state for one recovery episode.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prr {
    recover_fs: u64,
    delivered: u64,
    out: u64,
}

impl Prr {
    /// RFC 6937 section 3, at the start of recovery: prr_delivered = prr_out = 0,
    /// RecoverFS = snd.nxt - snd.una.
    pub fn start(flight: u64) -> Self {
        Prr { recover_fs: flight.max(1), delivered: 0, out: 0 }
    }

    /// RFC 6937 section 3, on every ACK in recovery: `delivered` packets newly delivered
    /// (DeliveredData), `pipe` as RFC 6675 computes it: how many packets may be sent now
    /// (sndcnt).
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: f64) -> u64 {
        self.sndcnt(delivered, pipe, ssthresh, 1).max(0) as u64
    }

    /// The same without SACK (`nosack_recovery_rate = "prr"`): DeliveredData is RFC 6937
    /// section 3's estimate from duplicate ACKs (the caller's), and below ssthresh the bound
    /// has no extra packet, MIN(ssthresh - pipe, MAX(prr_delivered - prr_out,
    /// DeliveredData)), as Linux's tcp_cwnd_reduction adds it only on an ACK that advances
    /// snd_una without marking a new loss, which a NewReno partial ACK always does. The
    /// first call of a recovery allows at least one packet (the fast retransmit).
    pub fn on_ack_without_sack(&mut self, delivered: u64, pipe: u64, ssthresh: f64) -> u64 {
        let floor = if self.out == 0 { 1 } else { 0 };
        self.sndcnt(delivered, pipe, ssthresh, 0).max(floor) as u64
    }

    /// RFC 6937 section 3's sndcnt after adding `delivered`: the proportional part above
    /// ssthresh, PRR-SSRB below it with `extra` packets (the MSS) over MAX(prr_delivered -
    /// prr_out, DeliveredData). Unclamped.
    fn sndcnt(&mut self, delivered: u64, pipe: u64, ssthresh: f64, extra: i64) -> i64 {
        self.delivered += delivered;
        if pipe as f64 > ssthresh {
            // Proportional part: CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
            let target = (self.delivered as f64 * ssthresh / self.recover_fs as f64).ceil() as i64;
            target - self.out as i64
        } else {
            // PRR-SSRB: MIN(ssthresh - pipe, MAX(prr_delivered - prr_out, DeliveredData) + extra).
            let limit = (self.delivered as i64 - self.out as i64).max(delivered as i64) + extra;
            (ssthresh.floor() as i64 - pipe as i64).min(limit)
        }
    }

    /// One packet sent during recovery (prr_out += 1).
    pub fn on_send(&mut self) {
        self.out += 1;
    }

    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    pub fn out(&self) -> u64 {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6937 section 3's proportional part: with ssthresh half of RecoverFS, one packet
    /// goes out for every two delivered.
    #[test]
    fn half_the_delivered_while_pipe_above_ssthresh() {
        let mut p = Prr::start(20);
        p.on_send(); // the fast retransmit
        let mut sent = 1;
        for _ in 0..8 {
            let n = p.on_ack(1, 15, 10.0);
            for _ in 0..n {
                p.on_send();
            }
            sent += n;
        }
        assert_eq!(sent, 4, "ceil(8 * 10 / 20) = 4 in all");
    }

    #[test]
    fn slow_start_reduction_bound_below_ssthresh() {
        let mut p = Prr::start(20);
        p.on_send();
        // pipe 4 < ssthresh 10: at most delivered + 1 (here 2 + 1), and at most ssthresh - pipe.
        assert_eq!(p.on_ack(2, 4, 10.0), 3);
        assert_eq!(p.on_ack(1, 9, 10.0), 1);
    }
}
