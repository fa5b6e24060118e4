//! Flow-size distributions as a scenario writes them (`size = { dist = "...", ... }`) and
//! their resolution into a `SizeDist` in packets of one MSS of payload. Owned by `traffic`
//! so that traffic generators, the analytical models and the size-aware disciplines can all
//! read a size spec without depending on the scenario layer.

use std::path::Path;

use serde::Deserialize;

use super::SizeDist;
use crate::error::{Error, Result};
use crate::spec::{bad, positive, probability, range, tagged, MAX_FLOW_PKTS};

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SizeUnit {
    #[default]
    Packets,
    Bytes,
}

/// A flow-size distribution, chosen by `dist`. Draws from continuous distributions are
/// rounded to the nearest whole packet, at least 1; `unit = "bytes"` divides by the MSS.
#[derive(Clone, Debug)]
pub enum SizeSpec {
    Fixed(FixedSize),
    Exponential(ExponentialSize),
    /// Pareto with `shape` and either `mean` or `min` (the scale x_m).
    Pareto(ParetoSize),
    BoundedPareto(BoundedParetoSize),
    Uniform(UniformSize),
    /// ln(size) ~ Normal(mu, sigma).
    Lognormal(LognormalSize),
    /// Piecewise-linear CDF through `points` = [[size, cumulative probability], ...], or
    /// read from a CSV file with two columns `size,cdf`.
    Empirical(EmpiricalSize),
    /// Lognormal body (ln size ~ Normal(mu, sigma)) below `cutoff`, Pareto tail above.
    LognormalPareto(LognormalParetoSize),
}

impl SizeSpec {
    pub fn unit(&self) -> SizeUnit {
        match self {
            SizeSpec::Fixed(x) => x.unit,
            SizeSpec::Exponential(x) => x.unit,
            SizeSpec::Pareto(x) => x.unit,
            SizeSpec::BoundedPareto(x) => x.unit,
            SizeSpec::Uniform(x) => x.unit,
            SizeSpec::Lognormal(x) => x.unit,
            SizeSpec::Empirical(x) => x.unit,
            SizeSpec::LognormalPareto(x) => x.unit,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedSize {
    pub value: f64,
    #[serde(default)]
    pub unit: SizeUnit,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExponentialSize {
    pub mean: f64,
    #[serde(default)]
    pub unit: SizeUnit,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParetoSize {
    pub shape: f64,
    #[serde(default)]
    pub mean: Option<f64>,
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub unit: SizeUnit,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundedParetoSize {
    pub shape: f64,
    pub min: f64,
    pub max: f64,
    #[serde(default)]
    pub unit: SizeUnit,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UniformSize {
    pub min: f64,
    pub max: f64,
    #[serde(default)]
    pub unit: SizeUnit,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LognormalSize {
    pub mu: f64,
    pub sigma: f64,
    #[serde(default)]
    pub unit: SizeUnit,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LognormalParetoSize {
    pub mu: f64,
    pub sigma: f64,
    pub cutoff: f64,
    pub shape: f64,
    #[serde(default)]
    pub unit: SizeUnit,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmpiricalSize {
    #[serde(default)]
    pub points: Vec<[f64; 2]>,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub unit: SizeUnit,
}

tagged!(SizeSpec, "dist", "size distribution", {
    "fixed" => Fixed,
    "exponential" => Exponential,
    "pareto" => Pareto,
    "bounded_pareto" => BoundedPareto,
    "uniform" => Uniform,
    "lognormal" => Lognormal,
    "empirical" => Empirical,
    "lognormal_pareto" => LognormalPareto,
});

/// A `size` table in packets of `mss` payload bytes (also for the analytical models),
/// within the sizes a flow may have.
pub fn size_dist_mss(field: &str, s: &SizeSpec, mss: f64, base: &Path) -> Result<SizeDist> {
    let d = dist_mss(field, s, mss, base)?;
    within_flow_cap(field, s, &d)?;
    Ok(d)
}

/// A distribution written like a size table, without the flow-size cap (times use it).
pub fn dist_mss(field: &str, s: &SizeSpec, mss: f64, base: &Path) -> Result<SizeDist> {
    let unit = s.unit();
    // Sizes given in bytes are converted to packets of one MSS of payload.
    let k = if unit == SizeUnit::Bytes { 1.0 / mss } else { 1.0 };
    let d = match s {
        SizeSpec::Fixed(FixedSize { value, .. }) => {
            positive(&format!("{field}.value"), *value)?;
            SizeDist::Fixed(value * k)
        }
        SizeSpec::Exponential(ExponentialSize { mean, .. }) => {
            positive(&format!("{field}.mean"), *mean)?;
            SizeDist::Exponential { mean: mean * k }
        }
        SizeSpec::Pareto(ParetoSize { shape, mean, min, .. }) => {
            positive(&format!("{field}.shape"), *shape)?;
            match (mean, min) {
                (Some(_), Some(_)) => return bad(field, "give either `mean` or `min` (the scale), not both"),
                (None, None) => return bad(field, "a Pareto needs `mean` or `min` (the scale)"),
                (None, Some(m)) => {
                    positive(&format!("{field}.min"), *m)?;
                    SizeDist::Pareto { shape: *shape, min: m * k }
                }
                (Some(m), None) => {
                    positive(&format!("{field}.mean"), *m)?;
                    if *shape <= 1.0 {
                        return bad(
                            format!("{field}.shape"),
                            format!(
                                "a Pareto with shape {shape} <= 1 has no finite \
                            mean; give `min` instead of `mean`, or a shape > 1"
                            ),
                        );
                    }
                    SizeDist::Pareto { shape: *shape, min: m * k * (shape - 1.0) / shape }
                }
            }
        }
        SizeSpec::BoundedPareto(BoundedParetoSize { shape, min, max, .. }) => {
            positive(&format!("{field}.shape"), *shape)?;
            positive(&format!("{field}.min"), *min)?;
            if !(max.is_finite() && max > min) {
                return bad(format!("{field}.max"), format!("must be a finite number above min ({min}), got {max}"));
            }
            SizeDist::BoundedPareto { shape: *shape, min: min * k, max: max * k }
        }
        SizeSpec::Uniform(UniformSize { min, max, .. }) => {
            range(field, *min, *max, true)?;
            SizeDist::Uniform { min: min * k, max: max * k }
        }
        SizeSpec::Lognormal(LognormalSize { mu, sigma, .. }) => {
            if !mu.is_finite() {
                return bad(format!("{field}.mu"), "must be a finite number");
            }
            positive(&format!("{field}.sigma"), *sigma)?;
            SizeDist::Lognormal { mu: mu + k.ln(), sigma: *sigma }
        }
        SizeSpec::LognormalPareto(LognormalParetoSize { mu, sigma, cutoff, shape, .. }) => {
            if !mu.is_finite() {
                return bad(format!("{field}.mu"), "must be a finite number");
            }
            positive(&format!("{field}.sigma"), *sigma)?;
            positive(&format!("{field}.cutoff"), *cutoff)?;
            positive(&format!("{field}.shape"), *shape)?;
            SizeDist::LognormalPareto { mu: mu + k.ln(), sigma: *sigma, cutoff: cutoff * k, shape: *shape }
        }
        SizeSpec::Empirical(EmpiricalSize { points, file, .. }) => {
            let pts: Vec<[f64; 2]> = match (points.is_empty(), file) {
                (false, Some(_)) => return bad(field, "give either `points` or `file`, not both"),
                (true, None) => return bad(field, "an empirical distribution needs `points` or `file`"),
                (false, None) => points.clone(),
                (true, Some(path)) => read_cdf(&format!("{field}.file"), &base.join(path))?,
            };
            let mut prev = (0.0f64, 0.0f64);
            for (i, p) in pts.iter().enumerate() {
                let f2 = format!("{field}.points[{i}]");
                positive(&f2, p[0])?;
                probability(&f2, p[1])?;
                if i > 0 && (p[0] < prev.0 || p[1] < prev.1) {
                    return bad(f2, "sizes and cumulative probabilities must not decrease");
                }
                prev = (p[0], p[1]);
            }
            if (prev.1 - 1.0).abs() > 1e-9 {
                return bad(field, format!("the last cumulative probability must be 1, got {}", prev.1));
            }
            SizeDist::Empirical(pts.iter().map(|p| (p[0] * k, p[1])).collect())
        }
    };
    Ok(d)
}

/// A distribution's mean and largest value must be flow sizes the model represents (at
/// most `MAX_FLOW_PKTS` packets); the error names the key that sets them.
fn within_flow_cap(field: &str, s: &SizeSpec, d: &SizeDist) -> Result<()> {
    let (key, largest) = match (s, d) {
        (SizeSpec::Fixed(_), SizeDist::Fixed(v)) => ("value", *v),
        (SizeSpec::BoundedPareto(_), SizeDist::BoundedPareto { max, .. }) => ("max", *max),
        (SizeSpec::Uniform(_), SizeDist::Uniform { max, .. }) => ("max", *max),
        (SizeSpec::Empirical(e), SizeDist::Empirical(pts)) => {
            let key = if e.file.is_some() { "file" } else { "points" };
            (key, pts.last().map_or(0.0, |p| p.0))
        }
        (SizeSpec::Pareto(p), SizeDist::Pareto { min, .. }) => (if p.mean.is_some() { "mean" } else { "min" }, *min),
        (SizeSpec::LognormalPareto(_), SizeDist::LognormalPareto { cutoff, .. }) => ("cutoff", *cutoff),
        (SizeSpec::Lognormal(l), _) => (if l.mu >= l.sigma * l.sigma / 2.0 { "mu" } else { "sigma" }, 0.0),
        (SizeSpec::Exponential(_), _) => ("mean", 0.0),
        _ => ("", 0.0),
    };
    let mean = d.mean().unwrap_or(0.0);
    let big = if largest > MAX_FLOW_PKTS { largest } else { mean };
    if big.is_nan() || big > MAX_FLOW_PKTS {
        let key = if key.is_empty() { field.to_string() } else { format!("{field}.{key}") };
        return bad(
            key,
            format!(
                "gives flows of about {big:.3e} packets (mean or largest size), more than the {MAX_FLOW_PKTS:e} \
                 packets a flow may carry"
            ),
        );
    }
    Ok(())
}

fn read_cdf(field: &str, path: &Path) -> Result<Vec<[f64; 2]>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::input(field, format!("cannot read '{}': {e}", path.display())))?;
    let mut out = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty()
            || line.starts_with('#')
            || (ln == 0 && line.chars().next().is_some_and(|c| c.is_alphabetic()))
        {
            continue;
        }
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed = (cols.len() == 2).then(|| (cols[0].parse::<f64>(), cols[1].parse::<f64>()));
        match parsed {
            Some((Ok(a), Ok(b))) => out.push([a, b]),
            _ => return bad(field, format!("'{}' line {}: expected two numbers `size,cdf`", path.display(), ln + 1)),
        }
    }
    if out.is_empty() {
        return bad(field, format!("'{}' has no data rows", path.display()));
    }
    Ok(out)
}
