//! Records and their writers: per-flow rows (flows.parquet), per-queue time series
//! (queues.parquet) and the run summary (summary.json), laid out as `../shared/design.md`
//! fixes them. Output directories are written atomically (see `output.rs`).

pub mod output;
pub mod parquet;
pub mod records;
pub mod summary;

pub use records::*;

/// Where a run hands its flow records, one by one as flows retire, while it runs: a `Vec`
/// keeps them (the in-memory `sim::run`), a `FlowWriter` spools them to a scratch file and
/// writes flows.parquet from it when the run ends (`sim::run_streamed`).
pub trait FlowSink {
    fn take(&mut self, rec: FlowRecord) -> crate::error::Result<()>;
}

impl FlowSink for Vec<FlowRecord> {
    fn take(&mut self, rec: FlowRecord) -> crate::error::Result<()> {
        self.push(rec);
        Ok(())
    }
}

impl FlowSink for parquet::FlowWriter {
    fn take(&mut self, rec: FlowRecord) -> crate::error::Result<()> {
        self.push(rec)
    }
}
