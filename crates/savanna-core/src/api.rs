//! The one entry point front ends use: parse a scenario (TOML or JSON text), validate it,
//! run it, and write its records into an output directory atomically. The Python extension
//! (`crates/savanna-py`) and the native binary (`src/bin/savanna-native.rs`) are thin
//! wrappers around these functions.

use std::path::Path;

use crate::error::Result;
use crate::metrics::{output, RunOutput, RunSummary};
pub use crate::scenario::Format;
use crate::scenario::{self, Scenario};

/// Options a front end may set on top of the scenario text.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Replaces the scenario's `seed`.
    pub seed: Option<u64>,
    /// Replaces the scenario's `duration_s`.
    pub duration_s: Option<f64>,
    /// The run's budget: estimated events and memory (GB) above which it is refused
    /// (default `spec::DEFAULT_MAX_EVENTS`, `spec::DEFAULT_MAX_MEMORY_GB`).
    pub max_events: Option<f64>,
    pub max_memory_gb: Option<f64>,
    /// Set by the front end to stop the run (`Error::Interrupted`).
    pub cancel: crate::error::Cancel,
}

/// Parse and validate a scenario. `base_dir` resolves relative file paths inside it
/// (empirical CDFs, flow lists). Errors are `Error::Input` naming the field.
pub fn load(text: &str, format: Format, base_dir: &Path, opts: &RunOptions) -> Result<Scenario> {
    let mut sc = scenario::parse(text, format, base_dir)?;
    if let Some(seed) = opts.seed {
        sc.seed = seed;
    }
    if let Some(d) = opts.duration_s {
        sc.duration_s = d;
    }
    sc.budget = crate::spec::Budget::with(opts.max_events, opts.max_memory_gb)?;
    sc.cancel = opts.cancel.clone();
    scenario::validate(&sc)?;
    Ok(sc)
}

/// Run a validated scenario in memory.
pub fn run(sc: &Scenario) -> Result<RunOutput> {
    crate::sim::run(sc)
}

/// Parse, validate, run, and write `flows.parquet`, `queues.parquet` (when sampling is on)
/// and `summary.json` into `out_dir`. Nothing that looks complete is left behind on error.
pub fn run_to_dir(
    text: &str,
    format: Format,
    base_dir: &Path,
    out_dir: &Path,
    opts: &RunOptions,
) -> Result<RunSummary> {
    let sc = load(text, format, base_dir, opts)?;
    output::check_writable(out_dir)?;
    // Flow records go to the staging directory's flows.parquet as they are built (one row
    // group at a time), so a run's memory does not grow with a second copy of every flow.
    let out = output::write_run_streamed(out_dir, |staging| {
        crate::sim::run_streamed(&sc, &staging.join(output::FLOWS_FILE))
    })?;
    Ok(out.summary)
}
