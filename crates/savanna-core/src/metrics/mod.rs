//! Records and their writers: per-flow rows (flows.parquet), per-queue time series
//! (queues.parquet) and the run summary (summary.json), laid out as `../shared/design.md`
//! fixes them. Output directories are written atomically (see `output.rs`).

pub mod records;
pub mod parquet;
pub mod summary;
pub mod output;

pub use records::*;

/// Where a run hands its flow records, as flows retire, one row group
/// (`parquet::FLOW_ROW_GROUP_ROWS`) at a time (the last one shorter), while it runs: a `Vec` keeps them (the
/// in-memory `sim::run`), a `FlowWriter` writes them to flows.parquet (`sim::run_streamed`).
pub trait FlowSink {
    /// Take the records in `rows`; whatever is left in `rows` afterwards is dropped.
    fn take(&mut self, rows: &mut Vec<FlowRecord>) -> crate::error::Result<()>;
}

impl FlowSink for Vec<FlowRecord> {
    fn take(&mut self, rows: &mut Vec<FlowRecord>) -> crate::error::Result<()> {
        self.append(rows);
        Ok(())
    }
}

impl FlowSink for parquet::FlowWriter {
    fn take(&mut self, rows: &mut Vec<FlowRecord>) -> crate::error::Result<()> {
        self.write(rows)
    }
}
