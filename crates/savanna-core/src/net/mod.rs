//! Network: packets and their pool, links (rate, propagation delay, Bernoulli loss, egress
//! queue discipline), nodes, and static shortest-path routing over a general graph.

pub mod packet;
pub mod policy;
pub mod topology;

pub use packet::{ClassMark, Ecn, Mark, Packet, PacketPool, PktId, PktKind};
pub use topology::{LinkSpec, NodeKind, Topology};
