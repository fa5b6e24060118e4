//! Shared vocabulary of the specs every component owns: the field-path helpers that let an
//! error deep inside a tagged table (`topology.bottleneck_queue.min_th`) name its field, the
//! `tagged!` macro that deserializes a table chosen by its `type` (or `dist`) key, and the
//! number checks components use in their own `check`. A leaf: it imports nothing of ours
//! but `error`.

use crate::error::{Error, Result};

/// An input error naming `field`.
pub fn bad<T>(field: impl Into<String>, msg: impl Into<String>) -> Result<T> {
    Err(Error::input(field, msg))
}

/// A number as a message shows it: plainly when short, else in exponent form (1e300, not
/// three hundred digits).
pub fn num(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() || (1e-6..1e15).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// `v` is finite and > 0.
pub fn positive(field: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        bad(field, format!("must be a positive number, got {}", num(v)))
    }
}

/// `v` is finite and >= 0.
pub fn non_negative(field: &str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        bad(field, format!("must be a number >= 0, got {}", num(v)))
    }
}

/// `v` is in [0, 1].
pub fn probability(field: &str, v: f64) -> Result<()> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        bad(field, format!("must be a probability in [0, 1], got {v}"))
    }
}

// ------------------------------------------------------------------ limits
//
// What the model represents, and the budgets a run must fit in. The clock counts integer
// nanoseconds in a u64 (584 years); a time a scenario gives is kept within MAX_TIME_S so
// that the sums the simulator forms (now + a delay + a timeout ...) stay far from wrapping,
// and a positive time is at least one tick, so it never rounds to zero (a timer of zero
// would fire again at the same instant forever). docs/scenario.md ("Limits") lists them.

/// Longest time a field may give, s (about 31.7 years).
pub const MAX_TIME_S: f64 = 1e9;
/// Shortest positive time, s: one tick of the clock.
pub const MIN_TIME_S: f64 = 1e-9;
/// Link rates, b/s: from 1 b/s to 10 Tb/s.
pub const MIN_RATE_BPS: f64 = 1.0;
pub const MAX_RATE_BPS: f64 = 1e13;
/// Flows a traffic block may be expected to start over the run (rate x duration).
pub const MAX_FLOWS: f64 = 1e7;
/// Packets a UDP block may be expected to send over the run.
pub const MAX_UDP_PACKETS: f64 = 1e9;
/// Firings of a periodic timer (a periodic block's bursts) over the run.
pub const MAX_TICKS: f64 = 1e8;
/// Rows of the sampled tables (samples x sampled queues) and goodput windows over the run.
pub const MAX_SAMPLE_ROWS: f64 = 2e7;

/// Most packets one flow may carry: flow sizes are whole packets counted in the model's
/// sequence space, and a distribution whose mean or largest value is beyond this is refused
/// (draws above it are clipped to it).
pub const MAX_FLOW_PKTS: f64 = 1e12;

/// Default budget of a run (see `Budget`): generous enough for every shipped scenario.
pub const DEFAULT_MAX_EVENTS: f64 = 1e12;
pub const DEFAULT_MAX_MEMORY_GB: f64 = 16.0;

/// What a run may take, checked against its estimate before it starts (front ends:
/// `--max-events`, `--max-memory-gb`; `savanna.run(max_events=..., max_memory_gb=...)`).
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub max_events: f64,
    pub max_memory_gb: f64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget { max_events: DEFAULT_MAX_EVENTS, max_memory_gb: DEFAULT_MAX_MEMORY_GB }
    }
}

impl Budget {
    /// The default budget with the limits a front end gave; each must be positive.
    pub fn with(max_events: Option<f64>, max_memory_gb: Option<f64>) -> Result<Budget> {
        let mut b = Budget::default();
        if let Some(e) = max_events {
            positive("--max-events", e)?;
            b.max_events = e;
        }
        if let Some(m) = max_memory_gb {
            positive("--max-memory-gb", m)?;
            b.max_memory_gb = m;
        }
        Ok(b)
    }
}

/// `v`, in units of `unit_s` seconds (named `unit` in messages), is a time the clock
/// represents: finite, at most MAX_TIME_S, and at least one tick (or zero when `zero_ok`).
pub fn time_in(field: &str, v: f64, unit_s: f64, unit: &str, zero_ok: bool) -> Result<()> {
    let s = v * unit_s;
    let lo = if zero_ok { "0" } else { "1 ns" };
    let ok = v.is_finite() && s <= MAX_TIME_S && ((zero_ok && v == 0.0) || (s * 1e9).round() >= 1.0);
    if ok {
        Ok(())
    } else {
        bad(
            field,
            format!("must be a time in {unit} from {lo} to {MAX_TIME_S:e} s (the clock's range), got {}", num(v)),
        )
    }
}

/// A positive time in seconds (at least 1 ns, at most MAX_TIME_S).
pub fn time_s(field: &str, v: f64) -> Result<()> {
    time_in(field, v, 1.0, "s", false)
}

/// A time in seconds that may be zero (a start, a delay).
pub fn time0_s(field: &str, v: f64) -> Result<()> {
    time_in(field, v, 1.0, "s", true)
}

/// A delay in milliseconds that may be zero.
pub fn delay_ms(field: &str, v: f64) -> Result<()> {
    time_in(field, v, 1e-3, "ms", true)
}

/// A rate in units of `unit_bps` b/s (named `unit`), within MIN_RATE_BPS..=MAX_RATE_BPS.
pub fn rate_in(field: &str, v: f64, unit_bps: f64, unit: &str) -> Result<()> {
    let b = v * unit_bps;
    if v.is_finite() && (MIN_RATE_BPS..=MAX_RATE_BPS).contains(&b) {
        Ok(())
    } else {
        bad(
            field,
            format!(
                "must be a rate in {unit} from {} to {} (1 b/s to 10 Tb/s), got {}",
                MIN_RATE_BPS / unit_bps,
                MAX_RATE_BPS / unit_bps,
                num(v)
            ),
        )
    }
}

/// An expected count (`what`, e.g. "flows") of at most `limit`, or an error naming `field`.
pub fn within_budget(field: &str, expected: f64, limit: f64, what: &str) -> Result<()> {
    if expected.is_finite() && expected <= limit {
        Ok(())
    } else {
        bad(
            field,
            format!(
                "would make about {expected:.3e} {what} over the run, more than the limit of {limit:e}; \
                 use a longer period, a lower rate or a shorter duration"
            ),
        )
    }
}

/// A `{min, max}` range: both finite, min >= 0 (or > 0 when `positive_min`), max >= min.
pub fn range(field: &str, min: f64, max: f64, positive_min: bool) -> Result<()> {
    if positive_min {
        positive(&format!("{field}.min"), min)?;
    } else {
        non_negative(&format!("{field}.min"), min)?;
    }
    if !(max.is_finite() && max >= min) {
        return bad(format!("{field}.max"), format!("must be a finite number >= min ({min}), got {max}"));
    }
    Ok(())
}

// The four sections chosen by a tag (`type` or `dist`) are deserialized by hand: the tag is
// read first, then the chosen variant's struct is deserialized with path tracking, so an
// error deep inside (e.g. `topology.bottleneck_queue.min_th`) still names its field. Serde's
// derived internally-tagged enums buffer their content and lose that path. A nested error
// travels up as "@path@ message" and is joined to the outer path (see `join_path`).

/// Marker-encode a path and message for the next level up.
pub fn encode(path: &str, msg: &str) -> String {
    format!("@{path}@ {msg}")
}

/// Split an encoded message into (inner path, message); plain messages have no path.
pub fn decode(msg: &str) -> (String, String) {
    if let Some(rest) = msg.strip_prefix('@') {
        if let Some(i) = rest.find("@ ") {
            return (rest[..i].to_string(), rest[i + 2..].to_string());
        }
    }
    (String::new(), msg.to_string())
}

/// Join an outer path (from serde_path_to_error, "." for the root) and an inner one.
pub fn join_path(outer: &str, inner: &str) -> String {
    let outer = if outer == "." { "" } else { outer };
    match (outer.is_empty(), inner.is_empty()) {
        (true, _) => inner.to_string(),
        (false, true) => outer.to_string(),
        (false, false) if inner.starts_with('[') => format!("{outer}{inner}"),
        _ => format!("{outer}.{inner}"),
    }
}

pub fn sub<T: serde::de::DeserializeOwned>(v: toml::Value) -> std::result::Result<T, String> {
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let outer = e.path().to_string();
        let (inner, msg) = decode(e.inner().message());
        encode(&join_path(&outer, &inner), &msg)
    })
}

pub fn split_tag<'de, D: serde::Deserializer<'de>>(
    d: D,
    tag: &str,
    what: &str,
    allowed: &[&str],
) -> std::result::Result<(String, toml::Value), D::Error> {
    use serde::de::Error as _;
    let mut t = <toml::Table as serde::Deserialize>::deserialize(d)?;
    let list = allowed.join(", ");
    match t.remove(tag) {
        Some(toml::Value::String(s)) if allowed.contains(&s.as_str()) => Ok((s, toml::Value::Table(t))),
        Some(toml::Value::String(s)) => {
            Err(D::Error::custom(encode(tag, &format!("unknown {what} '{s}'; expected one of: {list}"))))
        }
        Some(_) => Err(D::Error::custom(encode(tag, &format!("must be a string naming the {what}, one of: {list}")))),
        None => Err(D::Error::custom(encode(tag, &format!("missing; name the {what}, one of: {list}")))),
    }
}

macro_rules! tagged {
    ($ty:ident, $tag:literal, $what:literal, { $($name:literal => $var:ident),+ $(,)? }) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                use serde::de::Error as _;
                let (name, rest) = $crate::spec::split_tag(d, $tag, $what, &[$($name),+])?;
                match name.as_str() {
                    $($name => $crate::spec::sub(rest).map($ty::$var),)+
                    _ => unreachable!("split_tag checked the name"),
                }
                .map_err(D::Error::custom)
            }
        }
    };
}
pub(crate) use tagged;
