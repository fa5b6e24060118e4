//! `savanna._core`: the PyO3 extension module wrapping `savanna_core::api` (thin).
//!
//! Each call takes the scenario as text (TOML or JSON), releases the GIL, runs inside
//! `catch_unwind` so no panic ever crosses into Python, and maps errors to exceptions:
//! user-fixable problems (`Error::is_input`) raise `ScenarioError` (a `ValueError`),
//! everything else `RuntimeError`. The Python package (`python/savanna`) builds the
//! friendly API and the command line on top of this.
//!
//! The analytical models (`savanna_core::model`) are exposed as plain functions of numbers
//! (`padhye_throughput`, `guo_matta_latency`, `tokuda_throughput`, `tokuda_f`, `tokuda_k`,
//! `long_share`, `packet_sizes`, `control_*`); a bad argument raises `ValueError` naming
//! it. `savanna.models` wraps them with documentation and defaults.

use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use savanna_core::api::{self, Format, RunOptions};
use savanna_core::error::Cancel;

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
        other => {
            Err(PyValueError::new_err(format!("fmt: unknown scenario format {other:?}; allowed: \"toml\", \"json\"")))
        }
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
///
/// The run goes on a thread of its own while this one waits without the GIL and every
/// 50 ms runs Python's signal handlers: Ctrl-C (KeyboardInterrupt, or whatever a handler
/// raises) stops the run (`Cancel`), which removes its staging files, and the exception
/// propagates. `max_events` and `max_memory_gb` replace the default budget.
#[pyfunction]
#[pyo3(signature = (text, fmt, base_dir, out_dir, seed=None, duration_s=None, max_events=None, max_memory_gb=None))]
#[allow(clippy::too_many_arguments)]
fn run_to_dir(
    py: Python<'_>,
    text: String,
    fmt: &str,
    base_dir: String,
    out_dir: String,
    seed: Option<u64>,
    duration_s: Option<f64>,
    max_events: Option<f64>,
    max_memory_gb: Option<f64>,
) -> PyResult<String> {
    let format = parse_format(fmt)?;
    let cancel = Cancel::new();
    let opts = RunOptions { seed, duration_s, max_events, max_memory_gb, cancel: cancel.clone() };
    let (tx, rx) = std::sync::mpsc::channel();
    // Waited on without the GIL, so it must be shareable (a Receiver alone is not Sync).
    let rx = std::sync::Mutex::new(rx);
    let worker = std::thread::Builder::new()
        .name("savanna-run".into())
        .spawn(move || {
            let r = panic::catch_unwind(AssertUnwindSafe(|| {
                let summary = api::run_to_dir(&text, format, Path::new(&base_dir), Path::new(&out_dir), &opts)?;
                Ok(savanna_core::metrics::summary::to_json(&summary))
            }));
            let _ = tx.send(match r {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => Err(Failure::Core(e)),
                Err(payload) => Err(Failure::Panic(panic_message(payload.as_ref()))),
            });
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the simulation thread: {e}")))?;
    let tick = std::time::Duration::from_millis(50);
    loop {
        match py
            .detach(|| rx.lock().map_or(Err(std::sync::mpsc::RecvTimeoutError::Disconnected), |r| r.recv_timeout(tick)))
        {
            Ok(r) => {
                let _ = worker.join();
                return Ok(r?);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    cancel.set();
                    // The run stops within 2^16 events and cleans up after itself.
                    py.detach(|| {
                        if let Ok(r) = rx.lock() {
                            let _ = r.recv();
                        }
                        let _ = worker.join();
                    });
                    return Err(e);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                let _ = worker.join();
                return Err(PyRuntimeError::new_err("the simulation thread ended without a result"));
            }
        }
    }
}

/// Parse and validate a scenario without running it. Raises `ScenarioError` if it is invalid.
#[pyfunction]
#[pyo3(signature = (text, fmt, base_dir, seed=None, duration_s=None, max_events=None, max_memory_gb=None))]
#[allow(clippy::too_many_arguments)]
fn validate(
    py: Python<'_>,
    text: String,
    fmt: &str,
    base_dir: String,
    seed: Option<u64>,
    duration_s: Option<f64>,
    max_events: Option<f64>,
    max_memory_gb: Option<f64>,
) -> PyResult<()> {
    let format = parse_format(fmt)?;
    let opts = RunOptions { seed, duration_s, max_events, max_memory_gb, ..RunOptions::default() };
    call_core(py, move || api::load(&text, format, Path::new(&base_dir), &opts).map(drop))?;
    Ok(())
}

// ------------------------------------------------------------------ analytical models

use savanna_core::model::{control, guo_matta, padhye, sizes, tokuda};

fn arg_err(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

/// A model computation with the GIL released and panics turned into RuntimeError.
fn call_model<T: Send, F: FnOnce() -> PyResult<T> + Send>(py: Python<'_>, f: F) -> PyResult<T> {
    py.detach(|| match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(PyRuntimeError::new_err(format!(
            "savanna model panicked: {} (a bug in Savanna)",
            panic_message(payload.as_ref())
        ))),
    })
}

/// Padhye et al. 1998 TCP throughput, packets/s: the full model (eq. 31) or, with
/// `approx`, the closed form (eq. 33).
#[pyfunction]
#[pyo3(signature = (p, rtt_s, t0_s, b=1.0, wmax_pkts=f64::INFINITY, approx=false))]
fn padhye_throughput(p: f64, rtt_s: f64, t0_s: f64, b: f64, wmax_pkts: f64, approx: bool) -> PyResult<f64> {
    if !(0.0..=1.0).contains(&p) {
        return Err(arg_err(format!("p: must be a probability in [0, 1], got {p}")));
    }
    for (name, v) in [("rtt_s", rtt_s), ("t0_s", t0_s)] {
        if !(v.is_finite() && v > 0.0) {
            return Err(arg_err(format!("{name}: must be a positive number of seconds, got {v}")));
        }
    }
    if !(b.is_finite() && b >= 1.0) {
        return Err(arg_err(format!("b: packets per ACK must be >= 1, got {b}")));
    }
    if wmax_pkts.is_nan() || wmax_pkts < 1.0 {
        return Err(arg_err(format!("wmax_pkts: must be at least 1 packet (or infinite), got {wmax_pkts}")));
    }
    Ok(if approx {
        padhye::throughput_approx(p, rtt_s, t0_s, b, wmax_pkts)
    } else {
        padhye::throughput_full(p, rtt_s, t0_s, b, wmax_pkts)
    })
}

/// (first, slow_start, loss, ca, total, d_ss, w_ss, q_timeout).
type LatencyParts = (f64, f64, f64, f64, f64, f64, f64, f64);

/// Guo & Matta 2001 eq. (1)-(2): (first, slow_start, loss, ca, total, d_ss, w_ss, q_timeout).
#[pyfunction]
fn guo_matta_latency(d: f64, p: f64, rtt_s: f64, rto_s: f64, ito_s: f64) -> PyResult<LatencyParts> {
    guo_matta::check(d, p, rtt_s, rto_s, ito_s).map_err(arg_err)?;
    let l = guo_matta::latency(d, p, rtt_s, rto_s, ito_s);
    Ok((l.first, l.slow_start, l.loss, l.ca, l.total, l.d_ss, l.w_ss, l.q_timeout))
}

fn tokuda_tcp(
    rtt_s: f64,
    rto_s: Option<f64>,
    ito_s: f64,
    b: f64,
    init_cwnd: f64,
    max_window: f64,
    handshake: bool,
) -> PyResult<tokuda::Tcp> {
    let tcp = tokuda::Tcp { rtt_s, rto_s: rto_s.unwrap_or(4.0 * rtt_s), ito_s, b, init_cwnd, max_window, handshake };
    tcp.check().map_err(arg_err)?;
    Ok(tcp)
}

/// Tokuda et al. 2002's rho(f) for each f of `sizes`, packets/s, with loss probability
/// `p_s` for packets 1..=k and `p_l` after.
#[pyfunction]
#[pyo3(signature = (
    sizes, k, p_s, p_l, rtt_s, rto_s=None, ito_s=3.0, b=1.0, init_cwnd=1.0,
    max_window=f64::INFINITY, handshake=false
))]
#[allow(clippy::too_many_arguments)]
fn tokuda_throughput(
    py: Python<'_>,
    sizes: Vec<u64>,
    k: u64,
    p_s: f64,
    p_l: f64,
    rtt_s: f64,
    rto_s: Option<f64>,
    ito_s: f64,
    b: f64,
    init_cwnd: f64,
    max_window: f64,
    handshake: bool,
) -> PyResult<Vec<f64>> {
    let tcp = tokuda_tcp(rtt_s, rto_s, ito_s, b, init_cwnd, max_window, handshake)?;
    let loss = tokuda::Losses { k, p_s, p_l };
    loss.check().map_err(arg_err)?;
    if let Some(bad) = sizes.iter().find(|&&f| f == 0 || f > 100_000_000) {
        return Err(arg_err(format!("sizes: each document size must be between 1 and 100000000 packets, got {bad}")));
    }
    let max = sizes.iter().copied().max().unwrap_or(0);
    call_model(py, move || {
        if max <= 2_000_000 && sizes.len() > 4 {
            let rho = tokuda::Curve::new(&tcp, max).throughputs(&loss);
            Ok(sizes.iter().map(|&f| rho[f as usize - 1]).collect())
        } else {
            Ok(sizes.iter().map(|&f| tokuda::throughput(f, &tcp, &loss)).collect())
        }
    })
}

fn counting(s: &str) -> PyResult<sizes::Counting> {
    match s {
        "beyond-k" => Ok(sizes::Counting::BeyondK),
        "whole-flow" => Ok(sizes::Counting::WholeFlow),
        other => Err(arg_err(format!("counting: unknown {other:?}; allowed: \"beyond-k\", \"whole-flow\""))),
    }
}

fn packet_law(size_json: &str, mss_bytes: f64) -> PyResult<sizes::PacketSizes> {
    let law = sizes::dist_from_json(size_json, mss_bytes, Path::new(".")).map_err(|e| arg_err(e.to_string()))?;
    sizes::PacketSizes::new(law).map_err(|m| arg_err(format!("size: {m}")))
}

/// (mean packets per document, [P(S = i) for i = 1..=n]) of a JSON size table.
#[pyfunction]
fn packet_sizes(py: Python<'_>, size_json: String, mss_bytes: f64, n: u64) -> PyResult<(f64, Vec<f64>)> {
    if n > 10_000_000 {
        return Err(arg_err(format!("n: at most 10000000 packets, got {n}")));
    }
    call_model(py, move || {
        let ps = packet_law(&size_json, mss_bytes)?;
        Ok((ps.mean(), (1..=n).map(|i| ps.pmf(i)).collect()))
    })
}

/// a_l for each K of `ks` (Tokuda et al. 2002 section 3.2).
#[pyfunction]
fn long_share(
    py: Python<'_>,
    size_json: String,
    mss_bytes: f64,
    ks: Vec<u64>,
    counting_name: String,
    extra_pkts: u64,
) -> PyResult<Vec<f64>> {
    let c = counting(&counting_name)?;
    call_model(py, move || {
        let ps = packet_law(&size_json, mss_bytes)?;
        Ok(ks.iter().map(|&k| ps.long_share(k, c, extra_pkts)).collect())
    })
}

fn criterion(p_t: f64, l_pkts: u64, k_max: u64, counting_name: &str, extra_pkts: u64) -> PyResult<tokuda::Criterion> {
    let crit = tokuda::Criterion { p_t, l_pkts, k_max, counting: counting(counting_name)?, extra_pkts };
    crit.check().map_err(arg_err)?;
    Ok(crit)
}

/// F(K) points (k, a_long, p_long, f): for each K of `ks`, or the whole range 1..=k_max.
#[pyfunction]
#[pyo3(signature = (
    size_json, mss_bytes, p_t, rtt_s, ks=None, rto_s=None, ito_s=3.0, b=1.0, init_cwnd=1.0,
    max_window=f64::INFINITY, handshake=false, l_pkts=10_000, k_max=1000,
    counting_name="beyond-k".to_string(), extra_pkts=0
))]
#[allow(clippy::too_many_arguments)]
fn tokuda_f(
    py: Python<'_>,
    size_json: String,
    mss_bytes: f64,
    p_t: f64,
    rtt_s: f64,
    ks: Option<Vec<u64>>,
    rto_s: Option<f64>,
    ito_s: f64,
    b: f64,
    init_cwnd: f64,
    max_window: f64,
    handshake: bool,
    l_pkts: u64,
    k_max: u64,
    counting_name: String,
    extra_pkts: u64,
) -> PyResult<Vec<(u64, f64, f64, f64)>> {
    let tcp = tokuda_tcp(rtt_s, rto_s, ito_s, b, init_cwnd, max_window, handshake)?;
    let crit = criterion(p_t, l_pkts, k_max, &counting_name, extra_pkts)?;
    if let Some(bad) = ks.as_ref().and_then(|ks| ks.iter().find(|&&k| k == 0 || k >= l_pkts)) {
        return Err(arg_err(format!("ks: each K must be between 1 and l_pkts - 1 ({}), got {bad}", l_pkts - 1)));
    }
    call_model(py, move || {
        let ps = packet_law(&size_json, mss_bytes)?;
        let pts = match ks {
            Some(ks) => tokuda::f_values(&ks, &crit, &ps, &tcp),
            None => tokuda::f_curve(&crit, &ps, &tcp),
        };
        Ok(pts.iter().map(|p| (p.k, p.a_long, p.p_long, p.f)).collect())
    })
}

/// The K minimising F(K): (k, a_long, p_long, f).
#[pyfunction]
#[pyo3(signature = (
    size_json, mss_bytes, p_t, rtt_s, rto_s=None, ito_s=3.0, b=1.0, init_cwnd=1.0,
    max_window=f64::INFINITY, handshake=false, l_pkts=10_000, k_max=1000,
    counting_name="beyond-k".to_string(), extra_pkts=0
))]
#[allow(clippy::too_many_arguments)]
fn tokuda_k(
    py: Python<'_>,
    size_json: String,
    mss_bytes: f64,
    p_t: f64,
    rtt_s: f64,
    rto_s: Option<f64>,
    ito_s: f64,
    b: f64,
    init_cwnd: f64,
    max_window: f64,
    handshake: bool,
    l_pkts: u64,
    k_max: u64,
    counting_name: String,
    extra_pkts: u64,
) -> PyResult<(u64, f64, f64, f64)> {
    let tcp = tokuda_tcp(rtt_s, rto_s, ito_s, b, init_cwnd, max_window, handshake)?;
    let crit = criterion(p_t, l_pkts, k_max, &counting_name, extra_pkts)?;
    call_model(py, move || {
        let ps = packet_law(&size_json, mss_bytes)?;
        let p = tokuda::choose_k(&crit, &ps, &tcp);
        Ok((p.k, p.a_long, p.p_long, p.f))
    })
}

/// Matta & Guo 2000 eq. (12)'s poles for the sums of the gains: [(re, im), (re, im)].
#[pyfunction]
fn control_poles(alpha_sum: f64, beta_sum: f64) -> PyResult<Vec<(f64, f64)>> {
    if !(alpha_sum.is_finite() && beta_sum.is_finite()) {
        return Err(arg_err("alpha_sum, beta_sum: must be finite numbers"));
    }
    Ok(control::poles(alpha_sum, beta_sum).to_vec())
}

/// Run eq. (1) from a perturbed equilibrium: (stable, rate, steps).
#[pyfunction]
fn control_iterate(py: Python<'_>, alpha: Vec<f64>, beta: Vec<f64>, max_steps: usize) -> PyResult<(bool, f64, usize)> {
    if alpha.is_empty() || alpha.len() != beta.len() {
        return Err(arg_err(format!(
            "alpha, beta: need the same number (at least 1) of gains, got {} and {}",
            alpha.len(),
            beta.len()
        )));
    }
    if alpha.iter().chain(&beta).any(|x| !x.is_finite()) {
        return Err(arg_err("alpha, beta: must be finite numbers"));
    }
    if !(16..=100_000_000).contains(&max_steps) {
        return Err(arg_err(format!("max_steps: must be between 16 and 100000000, got {max_steps}")));
    }
    call_model(py, move || {
        let v = control::stable_by_iteration(&alpha, &beta, max_steps);
        Ok((v.stable, v.rate, v.steps))
    })
}

/// Simulate eq. (1) (aggregate) or eq. (5) (individual): (q per step, w per step).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[allow(clippy::type_complexity)]
fn control_simulate(
    py: Python<'_>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    w0: Vec<f64>,
    q0: Vec<f64>,
    target: Vec<f64>,
    service: Vec<f64>,
    steps: usize,
    individual: bool,
) -> PyResult<(Vec<Vec<f64>>, Vec<Vec<f64>>)> {
    let setup = control::Setup { alpha, beta, w0, q0, target, service };
    setup.check(individual).map_err(arg_err)?;
    if steps > 10_000_000 / setup.alpha.len().max(1) {
        return Err(arg_err(format!(
            "steps: at most {} for {} flows",
            10_000_000 / setup.alpha.len().max(1),
            setup.alpha.len()
        )));
    }
    call_model(py, move || {
        let t = if individual {
            control::simulate_individual(&setup, steps)
        } else {
            control::simulate_aggregate(&setup, steps)
        };
        Ok((t.q, t.w))
    })
}

/// flows.parquet's columns in file order with their Arrow types (the emulator writes the
/// same table).
#[pyfunction]
fn flow_schema() -> Vec<(String, &'static str)> {
    savanna_core::metrics::parquet::flow_schema()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", savanna_core::VERSION)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(run_to_dir, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(flow_schema, m)?)?;
    for f in [
        wrap_pyfunction!(padhye_throughput, m)?,
        wrap_pyfunction!(guo_matta_latency, m)?,
        wrap_pyfunction!(tokuda_throughput, m)?,
        wrap_pyfunction!(packet_sizes, m)?,
        wrap_pyfunction!(long_share, m)?,
        wrap_pyfunction!(tokuda_f, m)?,
        wrap_pyfunction!(tokuda_k, m)?,
        wrap_pyfunction!(control_poles, m)?,
        wrap_pyfunction!(control_iterate, m)?,
        wrap_pyfunction!(control_simulate, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
