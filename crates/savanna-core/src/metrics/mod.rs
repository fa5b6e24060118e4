//! Records and their writers: per-flow rows (flows.parquet), per-queue time series
//! (queues.parquet) and the run summary (summary.json), laid out as `../shared/design.md`
//! fixes them. Output directories are written atomically (see `output.rs`).

pub mod records;
pub mod parquet;
pub mod summary;
pub mod output;

pub use records::*;
