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
fn t() -> bool {
    true
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
#[serde(untagged)]
pub enum DelaySpec {
    Fixed(f64),
    List(Vec<f64>),
    Range { min: f64, max: f64 },
}

// ------------------------------------------------------------------ queues

#[derive(Clone, Debug)]
pub enum QueueSpec {
    Droptail(DropTailSpec),
    Red(RedSpec),
    Rio(RioSpec),
    Favorqueue(FavorQueueSpec),
    /// Class isolation on one link (Matta & Guo 2000): two queues, deficit round robin.
    Drr(crate::aqm::drr::DrrSpec),
    /// CoDel, RFC 8289.
    Codel(crate::aqm::codel::CodelSpec),
    /// FQ-CoDel, RFC 8290.
    FqCodel(crate::aqm::fq_codel::FqCodelSpec),
    /// PIE, RFC 8033.
    Pie(crate::aqm::pie::PieSpec),
    /// The PI controller of Hollot, Misra, Towsley & Gong 2001.
    Pi(crate::aqm::pi::PiSpec),
    /// CHOKe (Pan, Prabhakar & Psounis 2000), the FavorQueue 2013 baseline.
    Choke(crate::aqm::choke::ChokeSpec),
    /// LAS (Rai, Biersack & Urvoy-Keller 2005), the FavorQueue 2013 baseline.
    Las(crate::aqm::las::LasSpec),
    /// RuN2C (Avrachenkov et al. 2004) as FavorQueue 2013 configures it.
    Run2c(crate::aqm::run2c::Run2cSpec),
    /// PRQ of Tokuda, Hasegawa & Murata 2002: strict priority for class-short packets.
    Prq(crate::aqm::prq::PrqSpec),
    /// RED-based differentiation of Tokuda et al. 2002 (p_s = 0, p_l = p_t / a_l).
    Reddiff(crate::aqm::reddiff::RedDiffSpec),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropTailSpec {
    pub limit_pkts: u32,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
}

fn d_wq() -> f64 {
    1.0 / 512.0
}
fn d_maxp() -> f64 {
    0.1
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    /// Buffer size, packets (tail drop beyond it).
    pub limit_pkts: u32,
    pub min_th: f64,
    pub max_th: f64,
    /// max_p (ns-2: 1 / linterm_). Guo & Matta Table III: 1/10.
    #[serde(default = "d_maxp")]
    pub max_p: f64,
    /// EWMA weight (ns-2 q_weight_). Guo & Matta Table III: 1/512.
    #[serde(default = "d_wq")]
    pub w_q: f64,
    #[serde(default = "t")]
    pub gentle: bool,
    #[serde(default = "t")]
    pub wait: bool,
    #[serde(default)]
    pub ecn: bool,
    /// "packets" (thresholds and probabilities per packet) or "bytes" (probability scaled
    /// by packet size / mean packet size, ns-2 `bytes_`).
    #[serde(default)]
    pub mode: RedMode,
    /// Mean packet size for the idle-time correction and byte mode; defaults to packet_bytes.
    #[serde(default)]
    pub mean_pkt_bytes: Option<f64>,
}

fn d_maxp_short() -> f64 {
    1.0 / 20.0
}

/// RIO (Clark & Fang 1998) as Guo & Matta 2001 run it (their RIO-PS core queue): one FIFO,
/// In (class `short`) packets judged on the average of In packets queued, Out (class `long`
/// or unmarked) packets on the average of the whole queue. Thresholds in packets; defaults
/// from Guo & Matta Table III.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RioSpec {
    /// Buffer size, packets (tail drop beyond it).
    pub limit_pkts: u32,
    /// In (short) curve: min threshold on Q_short, packets (Table III: 0.15 B).
    pub min_th_short: f64,
    /// In (short) curve: max threshold on Q_short, packets (Table III: 0.35 B).
    pub max_th_short: f64,
    /// In (short) curve max_p. Table III: 1/20.
    #[serde(default = "d_maxp_short")]
    pub max_p_short: f64,
    /// EWMA weight of Q_short (w_short). Table III: 1/512.
    #[serde(default = "d_wq")]
    pub w_q_short: f64,
    /// Out (long) curve: min threshold on Q_total, packets (Table III: 0.15 B).
    pub min_th_long: f64,
    /// Out (long) curve: max threshold on Q_total, packets (Table III: 0.5 B).
    pub max_th_long: f64,
    /// Out (long) curve max_p. Table III: 1/10.
    #[serde(default = "d_maxp")]
    pub max_p_long: f64,
    /// EWMA weight of Q_total (w_total). Table III: 1/512.
    #[serde(default = "d_wq")]
    pub w_q_long: f64,
    /// ns-2 `gentle_` on both curves (Table III: on).
    #[serde(default = "t")]
    pub gentle: bool,
    /// ns-2 `wait_` count spreading (Table III: on).
    #[serde(default = "t")]
    pub wait: bool,
    /// Mark ECT packets instead of early drops (Table III: on; default off here).
    #[serde(default)]
    pub ecn: bool,
    /// Mean packet size for the idle-time correction; defaults to packet_bytes.
    #[serde(default)]
    pub mean_pkt_bytes: Option<f64>,
}

/// FavorQueue (Anelli, Diana & Lochin 2013): a packet whose flow has no packet queued is
/// favoured (served ahead of standard packets, pushes out the last standard one when full).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FavorQueueSpec {
    /// Buffer size, packets.
    pub limit_pkts: u32,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RedMode {
    #[default]
    Packets,
    Bytes,
}

// ------------------------------------------------------------------ traffic

#[derive(Clone, Debug)]
pub enum TrafficSpec {
    /// Open-loop Poisson flow arrivals at a target load.
    Poisson(PoissonSpec),
    /// `count` never-ending flows starting at `start_s`.
    Persistent(PersistentSpec),
    /// An explicit list of flows (inline or from a CSV file).
    Flows(FlowListSpec),
    /// Web sessions (Feldmann et al. 1999; Guo & Matta 2001 Table II).
    Web(super::workload::WebSpec),
    /// Sessions running connections back to back, optionally with think times.
    ClosedLoop(super::workload::ClosedLoopSpec),
    /// Foreground probes injected every period.
    Periodic(super::workload::PeriodicSpec),
    /// UDP flows: CBR or Poisson packet streams.
    Udp(super::workload::UdpSpec),
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Senders on the left, receivers on the right.
    #[default]
    Forward,
    /// Data from the right-hand hosts to the left-hand ones.
    Reverse,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The connection's initiator sends `size` packets.
    #[default]
    Bulk,
    /// The initiator (the data receiver) sends a one-packet request and the responder
    /// answers with the object.
    RequestResponse,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoissonSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    /// Target load rho = lambda E[S] / C (E[S] in wire bytes of data packets).
    #[serde(default)]
    pub load: Option<f64>,
    /// Or an explicit arrival rate, flows per second.
    #[serde(default)]
    pub rate_per_s: Option<f64>,
    /// Capacity C for the load, Mb/s; defaults to the dumbbell's bottleneck rate.
    #[serde(default)]
    pub capacity_mbps: Option<f64>,
    pub size: SizeSpec,
    /// Data senders: a host group, a host, or a list (default: the dumbbell's pairs).
    #[serde(default)]
    pub from: Option<super::workload::HostSel>,
    /// Data receivers, likewise.
    #[serde(default)]
    pub to: Option<super::workload::HostSel>,
    #[serde(default)]
    pub direction: Direction,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// TCP settings for this block's flows (keys of [tcp]); unset keys inherit [tcp].
    #[serde(default)]
    pub tcp: Option<toml::Table>,
}

fn d_count() -> u32 {
    1
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersistentSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    #[serde(default = "d_count")]
    pub count: u32,
    #[serde(default)]
    pub start_s: f64,
    /// Flows start `stagger_s` apart (0: all at start_s).
    #[serde(default)]
    pub stagger_s: f64,
    #[serde(default)]
    pub from: Option<super::workload::HostSel>,
    #[serde(default)]
    pub to: Option<super::workload::HostSel>,
    #[serde(default)]
    pub direction: Direction,
    #[serde(default)]
    pub tcp: Option<toml::Table>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowListSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    #[serde(default)]
    pub flows: Vec<FlowEntry>,
    /// CSV file with header `start_s,size_pkts,src,dst` (relative to the scenario file).
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub tcp: Option<toml::Table>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowEntry {
    pub start_s: f64,
    /// Data packets; omit for a persistent flow.
    #[serde(default)]
    pub size_pkts: Option<u64>,
    /// Data sender and receiver host names.
    pub src: String,
    pub dst: String,
}

tagged!(TopologySpec, "type", "topology", {
    "dumbbell" => Dumbbell,
    "graph" => Graph,
    "chain" => Chain,
    "guo_matta" => GuoMatta,
    "diamond" => Diamond,
});
tagged!(QueueSpec, "type", "queue discipline", {
    "droptail" => Droptail,
    "red" => Red,
    "rio" => Rio,
    "favorqueue" => Favorqueue,
    "drr" => Drr,
    "codel" => Codel,
    "fq_codel" => FqCodel,
    "pie" => Pie,
    "pi" => Pi,
    "choke" => Choke,
    "las" => Las,
    "run2c" => Run2c,
    "prq" => Prq,
    "reddiff" => Reddiff,
});
tagged!(TrafficSpec, "type", "traffic type", {
    "poisson" => Poisson,
    "persistent" => Persistent,
    "flows" => Flows,
    "web" => Web,
    "closed_loop" => ClosedLoop,
    "periodic" => Periodic,
    "udp" => Udp,
});

// ------------------------------------------------------------------ classifiers

/// An edge classifier on the ingress of `node`, chosen by `type`.
#[derive(Clone, Debug)]
pub enum ClassifierSpec {
    /// Guo & Matta 2001: per-flow packet counter, threshold L_t, soft state, SLR control.
    Threshold(ThresholdClassifierSpec),
    /// The flow's true size against a fixed threshold.
    Oracle(OracleClassifierSpec),
    /// Tokuda et al. 2002 "marking": exact per-connection counter at the edge, reset by SYNs.
    Marking(crate::classify::marking::MarkingClassifierSpec),
    /// Tokuda et al. 2002 "sampling": 1-in-I sampling, classification table updated every T.
    Sampling(crate::classify::sampling::SamplingClassifierSpec),
    /// Tokuda et al. 2002 "hashing": fixed table of (counter, timestamp), reset after T_bar idle.
    Hashing(crate::classify::hashing::HashingClassifierSpec),
}

impl ClassifierSpec {
    pub fn node(&self) -> &str {
        match self {
            ClassifierSpec::Threshold(c) => &c.node,
            ClassifierSpec::Oracle(c) => &c.node,
            ClassifierSpec::Marking(c) => &c.node,
            ClassifierSpec::Sampling(c) => &c.node,
            ClassifierSpec::Hashing(c) => &c.node,
        }
    }
}

fn d_lt() -> u64 {
    20
}
fn d_slr() -> f64 {
    3.0
}
fn d_tu() -> f64 {
    1.0
}
fn d_tc() -> f64 {
    10.0
}
fn d_max_lt() -> u64 {
    1_000_000
}
fn one() -> u64 {
    1
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThresholdClassifierSpec {
    pub node: String,
    /// L_t at the start, packets (the paper does not give it).
    #[serde(default = "d_lt")]
    pub initial_threshold: u64,
    /// Adapt L_t every T_c towards the target SLR (Guo & Matta appendix A); false: static L_t.
    #[serde(default = "t")]
    pub adaptive: bool,
    /// Target ratio of active short to active long flows (Table III: 3).
    #[serde(default = "d_slr")]
    pub slr: f64,
    /// Soft-state period T_u, s (Table III: 1 s).
    #[serde(default = "d_tu")]
    pub t_u_s: f64,
    /// Threshold-control period T_c, s (Table III: 10 s).
    #[serde(default = "d_tc")]
    pub t_c_s: f64,
    #[serde(default = "one")]
    pub min_threshold: u64,
    #[serde(default = "d_max_lt")]
    pub max_threshold: u64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleClassifierSpec {
    pub node: String,
    /// Flows of at most this many data packets are short.
    pub threshold: u64,
}

tagged!(ClassifierSpec, "type", "classifier", {
    "threshold" => Threshold,
    "oracle" => Oracle,
    "marking" => Marking,
    "sampling" => Sampling,
    "hashing" => Hashing,
});

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
    #[serde(default = "d_count")]
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
