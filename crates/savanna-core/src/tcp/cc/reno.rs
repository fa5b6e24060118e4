//! Reno (RFC 5681): slow start, congestion avoidance, fast retransmit and fast recovery
//! with window inflation; any ACK of new data ends fast recovery (cwnd = ssthresh), so a
//! second loss in the same window gives a second halving or a timeout. All of it is the
//! trait's default arithmetic.

use super::CongestionControl;

#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {}
