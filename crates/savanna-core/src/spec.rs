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

/// `v` is finite and > 0.
pub fn positive(field: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        bad(field, format!("must be a positive number, got {v}"))
    }
}

/// `v` is finite and >= 0.
pub fn non_negative(field: &str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        bad(field, format!("must be a number >= 0, got {v}"))
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
