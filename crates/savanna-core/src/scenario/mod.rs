//! Scenario: the typed TOML/JSON schema, its validation, and the world builder. (being written)
use std::path::Path;
use crate::api::Format;
use crate::error::Result;

#[derive(Clone, Debug, Default)]
pub struct Scenario { pub name: String, pub seed: u64, pub duration_s: f64 }

pub fn parse(_text: &str, _format: Format, _base_dir: &Path) -> Result<Scenario> { Ok(Scenario::default()) }
pub fn validate(_sc: &Scenario) -> Result<()> { Ok(()) }
