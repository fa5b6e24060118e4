//! Rank functions for the rank-based approximations of a PIFO (SP-PIFO, AIFO): the rank a
//! packet is given when it arrives, lower served first. Chosen by `rank`:
//! - `"remaining"`: the packet's tag (`Packet::tag`), which the `remaining` edge classifier
//!   sets to its flow's remaining size (pFabric's SRPT rank);
//! - `"attained"`: the bytes of the packet's flow this queue has seen arrive before it
//!   (least attained service; every arrival counts, dropped ones too, as a switch's ingress
//!   counter would; the table keeps every flow seen, Savanna's flow ids being unique, and
//!   grows by one entry per new flow, never per packet);
//! - `"fifo"`: the arrival order (a PIFO ranked so is a FIFO).

use super::{flow_map, FlowMap};
use crate::net::Packet;

/// `rank = "remaining" | "attained" | "fifo"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankFn {
    Remaining,
    Attained,
    Fifo,
}

/// Gives each arriving packet its rank.
pub struct Ranker {
    f: RankFn,
    seen: FlowMap<u64>,
    arrivals: u64,
}

impl Ranker {
    pub fn new(f: RankFn) -> Self {
        Ranker { f, seen: flow_map(if f == RankFn::Attained { 1024 } else { 0 }), arrivals: 0 }
    }
    /// The rank of an arriving packet (and the bookkeeping its arrival implies).
    #[inline]
    pub fn rank(&mut self, p: &Packet) -> u64 {
        match self.f {
            RankFn::Remaining => p.tag() as u64,
            RankFn::Attained => {
                let s = self.seen.entry(p.flow).or_insert(0);
                let r = *s;
                *s += p.size as u64;
                r
            }
            RankFn::Fifo => {
                self.arrivals += 1;
                self.arrivals
            }
        }
    }
}
