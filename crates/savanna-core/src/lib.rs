//! Savanna core: a packet-level discrete-event simulator for size-aware queue management.
//!
//! Layers (see `../shared/design.md`): `scenario` parses and validates a scenario and
//! builds a world; `sim` runs it on the `engine` (event queue, integer-nanosecond clock,
//! seeded RNG streams) over `net` (packets, links, routing) with `tcp` endpoints, `aqm`
//! queue disciplines and `traffic` generators; `metrics` holds the records and writes them.

pub mod api;
pub mod aqm;
pub mod classify;
pub mod engine;
pub mod error;
pub mod metrics;
pub mod model;
pub mod net;
pub mod scenario;
pub mod sim;
pub mod spec;
pub mod tcp;
pub mod traffic;

pub use error::{Error, Result};

/// Version string written into every summary.json.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
