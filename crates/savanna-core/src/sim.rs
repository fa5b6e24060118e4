//! The simulation loop (being written).
use crate::error::Result;
use crate::metrics::RunOutput;
use crate::scenario::Scenario;
pub fn run(_sc: &Scenario) -> Result<RunOutput> { Ok(RunOutput::default()) }
