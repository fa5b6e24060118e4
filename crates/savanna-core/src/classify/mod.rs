//! Edge classifiers: placed on a node's ingress, they write a class mark (short or long)
//! into each packet entering the node, which class-aware queues downstream (RIO, PRQ, the
//! RED-based differentiation, class isolation) read. One classifier per file:
//! - `threshold.rs`: Guo & Matta 2001's per-flow packet counter with threshold L_t, soft
//!   state (T_u) and the SLR-driven threshold control (T_c);
//! - `oracle.rs`: a size oracle that knows each flow's true size (Matta & Guo 2000's
//!   size-based splitting), i.e. a fixed threshold on the real size;
//! - `marking.rs`: Tokuda, Hasegawa & Murata 2002's "marking" at the edge: an exact
//!   per-connection counter reset by SYNs, long after K packets;
//! - `sampling.rs`: Tokuda et al.'s "sampling": one packet in I sampled into a sampling
//!   table, folded every T into a classification table; long when C_i >= K/I;
//! - `hashing.rs`: Tokuda et al.'s "hashing": a fixed table of (counter, timestamp) entries
//!   indexed by a hash of the connection tuple, reset after T_bar idle; long above K.
//!
//! Each file also owns its spec, check and construction (`registry::EdgeClassifierSpec`);
//! `registry.rs` lists them once by `type` (docs/components.md).
//!
//! A "flow" for a classifier is one direction of one connection (the flow id and the side
//! it travels to), so a connection's data packets and its ACKs are counted apart. Every
//! packet is counted and marked, control packets included (Guo & Matta: the first packets,
//! "including control packets", benefit from the short class).

pub mod hashing;
pub mod marking;
pub mod oracle;
pub mod pias;
pub mod registry;
pub mod remaining;
pub mod sampling;
pub mod threshold;

pub use registry::{ClassifierSpec, EdgeClassifierSpec};

use crate::engine::Time;
use crate::net::Packet;

/// What a classifier reports at each sampling instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClassifierReport {
    /// Flows in its table currently classed short / long.
    pub flows_short: u64,
    pub flows_long: u64,
    /// Current threshold, packets.
    pub threshold: f64,
}

pub trait Classifier {
    fn kind(&self) -> &'static str;
    /// Mark a packet entering the node. `flow_size` is the flow's true size in data packets
    /// (None for persistent flows); only an oracle may look at it.
    fn classify(&mut self, p: &mut Packet, now: Time, flow_size: Option<u64>);
    /// Period of `tick`, when the classifier has periodic work.
    fn period(&self) -> Option<Time> {
        None
    }
    /// Periodic work (soft-state expiry, threshold control, table updates).
    fn tick(&mut self, _now: Time) {}
    fn report(&self) -> ClassifierReport;
}

/// A classifier's per-flow table, looked up once per packet it classifies: ahash rather
/// than std's SipHash (made to resist chosen keys; these are flow numbers), which took 1.4%
/// of a Guo & Matta Exp. 1 run. Nothing read from a table depends on its order.
pub type FlowTable<V> = std::collections::HashMap<u64, V, ahash::RandomState>;

/// The key a classifier tracks: one direction of one connection.
#[inline]
pub fn flow_key(p: &Packet) -> u64 {
    (p.flow as u64) << 1 | p.to_side as u64
}
