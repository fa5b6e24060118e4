//! Scenarios: parse TOML or JSON into the typed schema (`schema.rs`), then validate and
//! resolve it into a `Plan` the simulator builds its world from (`build.rs`). Every error a
//! user can cause names the field (dotted path, e.g. `topology.bottleneck_queue.min_th`) and
//! what is allowed.

pub mod build;
pub mod schema;
pub mod topo;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
pub use build::{resolve, Estimate, Plan};
pub use schema::ScenarioFile;

/// A parsed scenario and the directory its relative paths are resolved against.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub duration_s: f64,
    pub file: ScenarioFile,
    pub base_dir: PathBuf,
    /// The budget the run must fit in (checked in `resolve`).
    pub budget: crate::spec::Budget,
    /// Set to stop the run.
    pub cancel: crate::error::Cancel,
}

/// Text format of a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Toml,
    Json,
}

/// Parse scenario text. Syntax errors, unknown keys and wrong types become `Error::Input`.
pub fn parse(text: &str, format: Format, base_dir: &Path) -> Result<Scenario> {
    let file: ScenarioFile = match format {
        Format::Toml => {
            let de = toml::Deserializer::parse(text).map_err(|e| toml_error(text, "", e))?;
            serde_path_to_error::deserialize(de).map_err(|e| {
                let outer = e.path().to_string();
                toml_error(text, &outer, e.into_inner())
            })?
        }
        Format::Json => {
            let mut de = serde_json::Deserializer::from_str(text);
            serde_path_to_error::deserialize(&mut de).map_err(|e| {
                let outer = e.path().to_string();
                let inner = e.into_inner();
                let (ipath, msg) = crate::spec::decode(&strip_position(&inner.to_string()));
                Error::input(
                    crate::spec::join_path(&outer, &ipath),
                    format!("{msg} (line {}, column {})", inner.line(), inner.column()),
                )
            })?
        }
    };
    Ok(Scenario {
        name: file.name.clone(),
        seed: file.seed,
        duration_s: file.duration_s,
        file,
        base_dir: base_dir.to_path_buf(),
        budget: crate::spec::Budget::default(),
        cancel: crate::error::Cancel::default(),
    })
}

/// Check everything the simulator will rely on, without running.
pub fn validate(sc: &Scenario) -> Result<()> {
    resolve(sc).map(|_| ())
}

fn strip_position(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn toml_error(text: &str, outer: &str, e: toml::de::Error) -> Error {
    let (inner, msg) = crate::spec::decode(e.message().trim());
    let path = crate::spec::join_path(outer, &inner);
    let mut msg = msg;
    if let Some(span) = e.span() {
        let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
        msg = format!("{msg} (line {line})");
    }
    Error::input(path, msg)
}
