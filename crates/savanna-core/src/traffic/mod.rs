//! Workloads: what creates flows, when, between which hosts, and of what size. Every
//! generator draws from its own RNG stream (named after its block), so runs that differ only
//! in queue discipline carry exactly the same flows (the seed rule of design.md).
//! Implemented here: open-loop Poisson arrivals at a target load, persistent flows, and
//! explicit flow lists.

pub mod dist;
pub mod size;

pub use dist::SizeDist;
pub use size::{size_dist_mss, SizeSpec, SizeUnit};
