//! The scenario schema: one typed structure that TOML and JSON scenarios deserialize into,
//! with defaults named after where they come from. Unknown keys are errors. The reference
//! for users is docs/scenario.md; keep the two in step.

use serde::Deserialize;

use crate::spec::tagged;
pub use crate::traffic::size::{
    BoundedParetoSize, EmpiricalSize, ExponentialSize, FixedSize, LognormalParetoSize, LognormalSize, ParetoSize,
    SizeSpec, SizeUnit, UniformSize,
};

fn d_seed() -> u64 {
    1
}
fn d_duration() -> f64 {
    100.0
}
fn d_pkt() -> u32 {
    1500
}
fn d_hdr() -> u32 {
    40
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Free text shown in reports.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "d_seed")]
    pub seed: u64,
    #[serde(default = "d_duration")]
    pub duration_s: f64,
    /// Wire size of a full data packet, headers included (FavorQueue: 1500 B).
    #[serde(default = "d_pkt")]
    pub packet_bytes: u32,
    /// TCP/IP header bytes: the size of SYN, SYN-ACK and pure ACKs.
    #[serde(default = "d_hdr")]
    pub header_bytes: u32,
    pub topology: TopologySpec,
    /// TCP settings shared by all flows (keys of `tcp::spec::TcpSpec`); traffic blocks may override.
    #[serde(default)]
    pub tcp: toml::Table,
    #[serde(default)]
    pub traffic: Vec<TrafficSpec>,
    #[serde(default)]
    pub sampling: Option<SamplingSpec>,
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
    /// Edge classifiers, each on a node's ingress.
    #[serde(default)]
    pub classifiers: Vec<ClassifierSpec>,
    /// TCP state traces of chosen flows (traces.parquet); off by default.
    #[serde(default)]
    pub trace: Option<TraceSpec>,
    /// Path policies at edge nodes with parallel paths (Matta & Guo 2000).
    #[serde(default)]
    pub path_policies: Vec<crate::net::policy::PathPolicySpec>,
}

/// Which flows to trace: every TCP event of both ends is recorded (cwnd, ssthresh, snd_una,
/// snd_max, recovery, SRTT, RTO). Meant for a few flows (Matta & Guo Fig. 3-4).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Flow ids (the order flows start in, from 0).
    pub flows: Vec<u64>,
}

// ------------------------------------------------------------------ topology

#[derive(Clone, Debug)]
pub enum TopologySpec {
    /// N sender hosts - left router - bottleneck - right router - N receiver hosts.
    Dumbbell(DumbbellSpec),
    /// A general graph: hosts, routers, duplex links.
    Graph(super::topo::GraphSpec),
    /// FavorQueue 2013 Fig. 25: routers in a row with cross traffic per hop.
    Chain(super::topo::ChainSpec),
    /// Guo & Matta 2001 Fig. 6: server pool, edge node 0, core, two client pools.
    GuoMatta(super::topo::GuoMattaSpec),
    /// Matta & Guo 2000 Fig. 9: a diamond with two parallel paths from edge node 4.
    Diamond(super::topo::DiamondSpec),
}

fn d_pairs() -> u32 {
    1
}
fn d_access_rate() -> f64 {
    100.0
}
fn d_access_delay() -> DelaySpec {
    DelaySpec::Fixed(5.0)
}
fn d_bn_rate() -> f64 {
    10.0
}
fn d_bn_delay() -> f64 {
    40.0
}
fn d_access_queue() -> QueueSpec {
    QueueSpec::Droptail(DropTailSpec { limit_pkts: 1000, limit_bytes: None })
}
fn d_bn_queue() -> QueueSpec {
    QueueSpec::Droptail(DropTailSpec { limit_pkts: 100, limit_bytes: None })
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellSpec {
    /// Number of (sender, receiver) host pairs.
    #[serde(default = "d_pairs")]
    pub pairs: u32,
    #[serde(default = "d_access_rate")]
    pub access_rate_mbps: f64,
    /// One-way delay of each access link, ms: a number, a list (host i takes entry
    /// i mod len), or a range {min, max} drawn uniformly per host. Pair i's sender and
    /// receiver access links both get host i's value.
    #[serde(default = "d_access_delay")]
    pub access_delay_ms: DelaySpec,
    #[serde(default = "d_bn_rate")]
    pub bottleneck_rate_mbps: f64,
    #[serde(default = "d_bn_delay")]
    pub bottleneck_delay_ms: f64,
    /// Bernoulli loss probability on the bottleneck, forward direction.
    #[serde(default)]
    pub bottleneck_loss: f64,
    /// Bernoulli loss probability on the bottleneck, reverse direction (ACKs).
    #[serde(default)]
    pub reverse_loss: f64,
    /// Queue at the left router feeding the bottleneck (forward direction).
    #[serde(default = "d_bn_queue")]
    pub bottleneck_queue: QueueSpec,
    /// Queue at the right router feeding the bottleneck's reverse direction; defaults to
    /// the same as `bottleneck_queue`.
    #[serde(default)]
    pub reverse_queue: Option<QueueSpec>,
    /// Queue of every access link (both directions).
    #[serde(default = "d_access_queue")]
    pub access_queue: QueueSpec,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum DelaySpec {
    Fixed(f64),
    List(Vec<f64>),
    Range { min: f64, max: f64 },
}

// ------------------------------------------------------------------ queues

// Queue disciplines own their specs (aqm/<name>.rs); `QueueSpec` is generated from the
// registry in aqm/registry.rs.
pub use crate::aqm::droptail::DropTailSpec;
pub use crate::aqm::registry::QueueSpec;

// ------------------------------------------------------------------ traffic

// Each traffic type owns its block in its own file under `traffic/` (spec, checks,
// generator); the registry is `traffic::TrafficSpec`.
pub use crate::traffic::closed_loop::ClosedLoopSpec;
pub use crate::traffic::flow_list::{FlowEntry, FlowListSpec};
pub use crate::traffic::periodic::PeriodicSpec;
pub use crate::traffic::persistent::PersistentSpec;
pub use crate::traffic::poisson::PoissonSpec;
pub use crate::traffic::udp::{UdpPattern, UdpSpec};
pub use crate::traffic::web::WebSpec;
pub use crate::traffic::{Direction, HostSel, IntRange, Mode, TrafficSpec};

tagged!(TopologySpec, "type", "topology", {
    "dumbbell" => Dumbbell,
    "graph" => Graph,
    "chain" => Chain,
    "guo_matta" => GuoMatta,
    "diamond" => Diamond,
});

// ------------------------------------------------------------------ classifiers

// Classifiers own their specs (classify/<name>.rs); `ClassifierSpec` is generated from the
// registry in classify/registry.rs.
pub use crate::classify::registry::ClassifierSpec;

// ------------------------------------------------------------------ measurement

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingSpec {
    /// Queue sampling period, s.
    pub interval_s: f64,
    /// Link names whose queues are sampled ("bottleneck" is an alias on the dumbbell);
    /// empty: every router queue.
    #[serde(default)]
    pub queues: Vec<String>,
    /// Window of the per-flow goodput records (goodput.parquet), s; default interval_s;
    /// 0 turns them off.
    #[serde(default)]
    pub goodput_interval_s: Option<f64>,
    /// Per-flow queueing delay: flows.parquet gets `qdelay_s` and `qdelay_pkts`, the time the
    /// flow's data packets waited in the sampled queues and how many waits that is
    /// (FavorQueue Fig. 17); off by default, and the file is then unchanged.
    #[serde(default)]
    pub flow_qdelay: bool,
}

fn d_occurrence() -> u32 {
    1
}

/// Drop one specific packet: the `occurrence`-th transmission of packet (`kind`, `seq`)
/// of flow `flow` when it finishes crossing `link`. For controlled experiments and tests.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    pub link: String,
    pub flow: u32,
    pub kind: FaultKind,
    #[serde(default)]
    pub seq: u32,
    #[serde(default = "d_occurrence")]
    pub occurrence: u32,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    Syn,
    SynAck,
    Data,
    Ack,
    Fin,
}
