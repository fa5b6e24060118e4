//! Tahoe (4.3BSD-Tahoe, Jacobson 1988; RFC 5681's slow start and congestion avoidance):
//! fast retransmit without fast recovery. On the duplicate-ACK threshold it halves
//! ssthresh, sets cwnd = 1 and goes back N from snd_una, as after a timeout (but without
//! backing the timer off).

use super::{CongestionControl, LossResponse, Window};

#[derive(Clone, Copy, Debug, Default)]
pub struct Tahoe;

impl CongestionControl for Tahoe {
    fn on_fast_retransmit(&mut self, w: &mut Window, flight: u64, _dupacks: u32) -> LossResponse {
        w.ssthresh = self.ssthresh(w, flight);
        w.cwnd = 1.0;
        LossResponse::GoBackN
    }
}
