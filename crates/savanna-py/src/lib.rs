//! `savanna._core`: the PyO3 extension module wrapping `savanna_core::api` (thin).
//!
//! Each call takes the scenario as text (TOML or JSON), releases the GIL, runs inside
//! `catch_unwind` so no panic ever crosses into Python, and maps errors to exceptions:
//! user-fixable problems (`Error::is_input`) raise `ScenarioError` (a `ValueError`),
//! everything else `RuntimeError`. The Python package (`python/savanna`) builds the
//! friendly API and the command line on top of this.

use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use savanna_core::api::{self, Format, RunOptions};

create_exception!(
    savanna._core,
    ScenarioError,
    PyValueError,
    "A scenario, one of its files, or the output path is invalid; the message names the field."
);

/// What a call into the core produced, before we hold the GIL again to raise.
enum Failure {
    Core(savanna_core::Error),
    Panic(String),
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Core(e) if e.is_input() => ScenarioError::new_err(e.to_string()),
            Failure::Core(e) => PyRuntimeError::new_err(e.to_string()),
            Failure::Panic(msg) => PyRuntimeError::new_err(format!(
                "savanna core panicked: {msg} (this is a bug in Savanna; please report it \
                 with the scenario and seed that triggered it)"
            )),
        }
    }
}

fn parse_format(fmt: &str) -> PyResult<Format> {
    match fmt {
        "toml" => Ok(Format::Toml),
        "json" => Ok(Format::Json),
        other => Err(PyValueError::new_err(format!(
            "fmt: unknown scenario format {other:?}; allowed: \"toml\", \"json\""
        ))),
    }
}

/// Run `f` with the GIL released, turning a panic into `Failure::Panic`.
fn call_core<T, F>(py: Python<'_>, f: F) -> Result<T, Failure>
where
    F: FnOnce() -> savanna_core::Result<T> + Send,
    T: Send,
{
    py.detach(|| match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Failure::Core(e)),
        Err(payload) => Err(Failure::Panic(panic_message(payload.as_ref()))),
    })
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

/// Parse, validate and run a scenario, writing flows.parquet, queues.parquet (when
/// sampling is on) and summary.json into `out_dir`. Returns the run summary as JSON text.
#[pyfunction]
#[pyo3(signature = (text, fmt, base_dir, out_dir, seed=None, duration_s=None))]
fn run_to_dir(
    py: Python<'_>,
    text: String,
    fmt: &str,
    base_dir: String,
    out_dir: String,
    seed: Option<u64>,
    duration_s: Option<f64>,
) -> PyResult<String> {
    let format = parse_format(fmt)?;
    let opts = RunOptions { seed, duration_s };
    let json = call_core(py, move || {
        let summary =
            api::run_to_dir(&text, format, Path::new(&base_dir), Path::new(&out_dir), &opts)?;
        Ok(savanna_core::metrics::summary::to_json(&summary))
    })?;
    Ok(json)
}

/// Parse and validate a scenario without running it. Raises `ScenarioError` if it is invalid.
#[pyfunction]
#[pyo3(signature = (text, fmt, base_dir, seed=None, duration_s=None))]
fn validate(
    py: Python<'_>,
    text: String,
    fmt: &str,
    base_dir: String,
    seed: Option<u64>,
    duration_s: Option<f64>,
) -> PyResult<()> {
    let format = parse_format(fmt)?;
    let opts = RunOptions { seed, duration_s };
    call_core(py, move || api::load(&text, format, Path::new(&base_dir), &opts).map(drop))?;
    Ok(())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", savanna_core::VERSION)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(run_to_dir, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    Ok(())
}
