//! Workload specifications beyond open-loop Poisson arrivals (the papers' experiments):
//!
//! - `web`: sessions of pages of objects after Feldmann et al. 1999, as Guo & Matta 2001
//!   Table II and Matta & Guo 2000 Table IV use them (HTTP/1.0: one request/response TCP
//!   connection per object);
//! - `closed_loop`: sessions that run connections back to back, optionally with think times
//!   (Matta & Guo 2000 pipe-size experiments; Tokuda et al. 2002 scenarios; the lossy-link
//!   single-flow experiment of Guo & Matta Fig. 2b and Tokuda Fig. 2; FavorQueue Fig. 25's
//!   reference flow);
//! - `periodic`: foreground probe connections injected every period (Guo & Matta 2001:
//!   10 short every 25 s, 10 long every 125 s), tagged for analysis;
//! - `udp`: UDP flows, constant bit rate (Matta & Guo 2000 Table II: 16 kb/s, 125 B packets,
//!   Pareto lifetimes and inter-arrivals) or Poisson packet streams (a low-rate interactive,
//!   telnet-like background).
//!
//! Host selection is shared: `from` / `to` name a host group (`servers`, `clients1`, ... as
//! the topology defines them), a host, or a list of either.

use serde::Deserialize;

use super::schema::{Mode, SizeSpec};

/// A host group name, a host name, or a list of them.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum HostSel {
    One(String),
    Many(Vec<String>),
}

impl HostSel {
    pub fn names(&self) -> Vec<String> {
        match self {
            HostSel::One(s) => vec![s.clone()],
            HostSel::Many(v) => v.clone(),
        }
    }
}

/// An inclusive integer range drawn uniformly.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntRange {
    pub min: u32,
    pub max: u32,
}

fn one_range() -> IntRange {
    IntRange { min: 1, max: 1 }
}
fn rr() -> Mode {
    Mode::RequestResponse
}

/// Web sessions (Feldmann et al. 1999). Each of `sessions` concurrent sessions belongs to a
/// client drawn from `to`; it fetches pages one after another, each from a server drawn
/// from `from`. A page has `objects_per_page` objects (uniform integer); the objects are
/// requested `inter_object_s` apart (the first at the page's start), each over its own TCP
/// connection (HTTP/1.0); the next page starts `inter_page_s` after the page's last object
/// was requested. Arrivals are open loop: they do not wait for downloads to finish, as in
/// ns-2's web traffic generator. After `pages_per_session` pages (unlimited if unset) the
/// session ends and a new one starts at once for a new client, so `sessions` stay active.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    pub sessions: u32,
    #[serde(default)]
    pub pages_per_session: Option<u32>,
    /// Time between pages, seconds (Guo & Matta Table II: exponential, mean 9.5).
    pub inter_page_s: SizeSpec,
    #[serde(default = "one_range")]
    pub objects_per_page: IntRange,
    /// Time between the objects of a page, seconds (Table II: exponential, mean 0.05).
    #[serde(default)]
    pub inter_object_s: Option<SizeSpec>,
    /// Object size, packets (Table II: bounded Pareto [4, 200000], shape 1.2).
    pub object_size: SizeSpec,
    /// Server hosts (data senders).
    pub from: Option<HostSel>,
    /// Client hosts (data receivers).
    pub to: Option<HostSel>,
    /// Sessions start uniformly spread over [start_s, start_s + start_spread_s].
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub start_spread_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// HTTP/1.0 request/response by default; `bulk` sends the object without a request.
    #[serde(default = "rr")]
    pub mode: Mode,
    #[serde(default)]
    pub tcp: Option<toml::Table>,
}

/// Closed-loop sessions: each session runs one connection at a time; when a connection's
/// data has all arrived, the next starts after a think time (none by default: back to
/// back). Session i uses the i-th host pair (dumbbell pairs, or `from`/`to` drawn per
/// session), so a session is one client-server pair, as in Matta & Guo's pipe-size runs.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedLoopSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    pub sessions: u32,
    /// Size of each connection, packets.
    pub size: SizeSpec,
    /// Think time between a connection's end and the next one's start, seconds.
    #[serde(default)]
    pub think_s: Option<SizeSpec>,
    /// Connections per session (unlimited if unset).
    #[serde(default)]
    pub connections: Option<u32>,
    #[serde(default)]
    pub from: Option<HostSel>,
    #[serde(default)]
    pub to: Option<HostSel>,
    #[serde(default)]
    pub direction: super::schema::Direction,
    #[serde(default)]
    pub start_s: f64,
    /// Sessions start uniformly spread over [start_s, start_s + start_spread_s] (Matta &
    /// Guo 2000: "in the first 5 seconds").
    #[serde(default)]
    pub start_spread_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub tcp: Option<toml::Table>,
}

fn d_count() -> u32 {
    1
}

/// Foreground probes: every `period_s` from `start_s` (once if no period), start `count`
/// connections of `size` packets, each between a host drawn from `from` and one from `to`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeriodicSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    #[serde(default = "d_count")]
    pub count: u32,
    pub size: SizeSpec,
    #[serde(default)]
    pub period_s: Option<f64>,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
    #[serde(default)]
    pub from: Option<HostSel>,
    #[serde(default)]
    pub to: Option<HostSel>,
    #[serde(default)]
    pub direction: super::schema::Direction,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub tcp: Option<toml::Table>,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum UdpPattern {
    /// Evenly spaced packets at `rate_kbps`.
    #[default]
    Cbr,
    /// Exponential gaps with mean packet_bytes * 8 / rate (a low-rate interactive source).
    Poisson,
}

fn d_udp_rate() -> f64 {
    16.0
}
fn d_udp_bytes() -> u32 {
    125
}

/// UDP flows. New flows arrive `interarrival_s` apart (Matta & Guo: Pareto, shape 1.2,
/// mean 1 s) and each lives `lifetime_s` (Pareto, shape 1.25, mean 300 s), sending
/// `packet_bytes`-byte packets at `rate_kbps`. `initial` flows start at `start_s` besides.
/// Without `interarrival_s` only the `initial` flows run (e.g. six telnet-like sources).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    #[serde(default = "d_udp_rate")]
    pub rate_kbps: f64,
    #[serde(default = "d_udp_bytes")]
    pub packet_bytes: u32,
    #[serde(default)]
    pub pattern: UdpPattern,
    #[serde(default)]
    pub interarrival_s: Option<SizeSpec>,
    /// Lifetime, seconds (unset: until the end of the run).
    #[serde(default)]
    pub lifetime_s: Option<SizeSpec>,
    #[serde(default)]
    pub initial: u32,
    #[serde(default)]
    pub from: Option<HostSel>,
    #[serde(default)]
    pub to: Option<HostSel>,
    #[serde(default)]
    pub direction: super::schema::Direction,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
}
