//! NewReno (RFC 6582): Reno's arithmetic (RFC 5681) plus partial ACKs in fast recovery.
//! A partial ACK deflates the window by the packets it acknowledges and adds one back, so
//! about ssthresh packets stay in flight while the next hole is retransmitted (3.2 step 3).
//! The full ACK sets cwnd = ssthresh (step 4's second option, as ns-3).

use super::{CongestionControl, PartialAck, Window};

#[derive(Clone, Copy, Debug, Default)]
pub struct NewReno;

impl CongestionControl for NewReno {
    fn on_partial_ack(&mut self, w: &mut Window, acked: u64) -> PartialAck {
        w.cwnd = (w.cwnd - acked as f64 + 1.0).max(1.0);
        PartialAck::Retransmit
    }
}
