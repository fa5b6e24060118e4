//! Plain record types the simulator emits: one `FlowRecord` per flow, one `QueueSample`
//! per (queue, sampling instant), and the `RunSummary`. These are the contract of
//! `../shared/design.md` (flows.parquet, queues.parquet, summary.json); the writers in
//! `parquet.rs` and `summary.rs` turn them into files without changing their meaning.

use serde::Serialize;

pub use crate::net::ClassMark;

/// A name shared by many records (a node, a traffic block, a tag, a path): cloning it
/// copies a pointer, so a record costs no allocation of its own.
pub type Name = std::sync::Arc<str>;

/// One row of flows.parquet.
#[derive(Clone, Debug, Default)]
pub struct FlowRecord {
    pub flow_id: u64,
    /// Node names of the two ends (data flows from src to dst; in request/response
    /// mode src is the server that sends the object and dst the client).
    pub src: Name,
    pub dst: Name,
    /// "tcp" or "udp".
    pub kind: &'static str,
    /// Name of the traffic block that created the flow.
    pub source: Name,
    /// Free-form tag from the traffic block (e.g. "foreground"); empty when none.
    pub tag: Name,
    pub start_s: f64,
    /// Time the last data byte was delivered; None if unfinished.
    pub end_s: Option<f64>,
    /// Payload bytes of the transfer (size_pkts * MSS); None for persistent flows.
    pub size_bytes: Option<u64>,
    /// Data packets of the transfer; None for persistent flows.
    pub size_pkts: Option<u64>,
    /// First SYN sent (or first data packet without handshake) to last byte delivered.
    pub fct_s: Option<f64>,
    pub data_pkts_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub drops: u64,
    pub ecn_marks: u64,
    pub syn_drops: u64,
    pub first_data_drop: bool,
    pub favored_pkts: u64,
    pub class_at_end: ClassMark,
    pub path: Name,
    /// Base round-trip propagation delay of the flow's path (both directions), seconds.
    pub base_rtt_s: f64,
    /// Data packets delivered in order to the receiving application.
    pub delivered_pkts: u64,
    /// SYNs the client sent (1 + retransmissions); 0 without the handshake or for UDP.
    pub syn_sent: u64,
    /// Lost SYN-ACKs.
    pub synack_drops: u64,
    /// The flow's packets pushed out of a queue by another arrival (FavorQueue, RuN2C, LAS).
    pub pushed_out: u64,
    /// With `sampling.flow_qdelay`: the flow's queueing delay (`FlowQdelay`), written as
    /// flows.parquet's `qdelay_s` and `qdelay_pkts`; None otherwise (no such columns).
    pub qdelay: Option<FlowQdelay>,
}

/// The waits of a flow's data packets in the queues a run records (`sampling.flow_qdelay`:
/// the sampled queues), each from its arrival at the queue to the start of its transmission
/// (FavorQueue 2013 Fig. 17: a packet's queueing delay). Packets dropped in the queue, or
/// pushed out of it, are not counted; a packet that crosses two recorded queues counts twice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowQdelay {
    /// Sum of the waits, ns.
    pub wait_ns: u64,
    /// Number of waits summed.
    pub pkts: u64,
}

impl FlowQdelay {
    /// Count one wait of `wait_ns`.
    #[inline]
    pub fn add(&mut self, wait_ns: u64) {
        self.wait_ns += wait_ns;
        self.pkts += 1;
    }

    /// Total wait in seconds.
    pub fn wait_s(&self) -> f64 {
        self.wait_ns as f64 * 1e-9
    }
}

/// One row of queues.parquet: one queue at one sampling instant. Counters cover the
/// interval (t_s - interval, t_s]; arrays are indexed by `ClassMark::index()`.
#[derive(Clone, Debug, Default)]
pub struct QueueSample {
    pub t_s: f64,
    pub queue: String,
    pub len_pkts: u64,
    pub len_bytes: u64,
    /// The discipline's average queue estimate (RED's avg), None if it keeps none.
    pub avg_pkts: Option<f64>,
    pub len_by_class: [u64; 3],
    pub departures: [u64; 3],
    pub drops: [u64; 3],
    pub marks: [u64; 3],
    /// Fraction of the interval since the previous sample the link spent transmitting.
    pub utilisation: f64,
}

/// One row of goodput.parquet: data packets a flow delivered (new, in order) during the
/// window ending at `t_s`; flows that delivered nothing in a window have no row.
#[derive(Clone, Debug, Default)]
pub struct GoodputSample {
    pub t_s: f64,
    pub flow_id: u64,
    pub delivered_pkts: u64,
}

/// One row of network.parquet: network-wide state at a sampling instant.
#[derive(Clone, Debug, Default)]
pub struct NetSample {
    pub t_s: f64,
    /// TCP flows started and not yet finished (all data delivered).
    pub active_tcp_flows: u64,
    /// UDP flows still sending.
    pub active_udp_flows: u64,
    pub packets_in_network: u64,
}

/// One row of classifiers.parquet: one edge classifier at one sampling instant.
#[derive(Clone, Debug, Default)]
pub struct ClassifierSample {
    pub t_s: f64,
    /// Node the classifier sits on.
    pub node: String,
    /// Classifier type ("threshold", "oracle", ...).
    pub classifier: String,
    /// Flows it currently holds as short and as long.
    pub flows_short: u64,
    pub flows_long: u64,
    /// Its current threshold, packets.
    pub threshold: f64,
}

/// One row of traces.parquet: the TCP state of one end of a traced flow right after an
/// event (a packet arrived, a timer fired, the connection opened).
#[derive(Clone, Debug, Default)]
pub struct TraceSample {
    pub t_s: f64,
    pub flow_id: u64,
    /// 0: the connection's initiator (client), 1: the responder (server).
    pub side: u8,
    /// "open", "packet", "timeout" or "delack".
    pub event: &'static str,
    pub cwnd_pkts: f64,
    pub ssthresh_pkts: f64,
    pub snd_una: u64,
    pub snd_max: u64,
    pub in_recovery: bool,
    pub srtt_s: Option<f64>,
    /// The RTO before backoff, s.
    pub rto_s: f64,
    pub timeouts: u64,
}

/// Per-queue totals for summary.json.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueTotals {
    pub name: String,
    pub discipline: String,
    pub arrivals: u64,
    pub enqueued: u64,
    pub departed: u64,
    pub dropped: u64,
    pub marked: u64,
    pub pushed_out: u64,
    /// Fraction of simulated time the link behind the queue was transmitting.
    pub utilisation: f64,
    pub occupancy_at_end: u64,
    /// Drops by reason: "overflow", "early", "forced", "pushout", ...
    pub dropped_by_reason: std::collections::BTreeMap<String, u64>,
    /// Split by class ("none", "short", "long"): arrivals, enqueued, departed, dropped, marked.
    pub by_class: std::collections::BTreeMap<String, ClassTotals>,
    /// DualPI2 only: the sojourn of its L4S and classic queues over the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dualpi2: Option<DualPi2Sojourns>,
}

/// Quantiles of the sojourn (upper bin edges, microseconds) of DualPI2's two queues, over
/// every packet each served in the run, and how many that was.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DualPi2Sojourns {
    pub l_pkts: u64,
    pub l_p50_us: f64,
    pub l_p99_us: f64,
    pub c_pkts: u64,
    pub c_p50_us: f64,
    pub c_p99_us: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ClassTotals {
    pub arrivals: u64,
    pub enqueued: u64,
    pub departed: u64,
    pub dropped: u64,
    pub marked: u64,
    pub pushed_out: u64,
}

/// summary.json.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunSummary {
    pub savanna_version: String,
    pub scenario: String,
    pub seed: u64,
    pub sim_seconds: f64,
    pub wall_seconds: f64,
    pub events: u64,
    pub packets_forwarded: u64,
    pub packets_created: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    pub packets_in_network_at_end: u64,
    pub link_losses: u64,
    pub flows_started: u64,
    pub flows_finished: u64,
    pub queues: Vec<QueueTotals>,
}

/// Everything one run produces.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    pub flows: Vec<FlowRecord>,
    pub queues: Vec<QueueSample>,
    /// Whether queue sampling was on (queues.parquet is written only then).
    pub queue_sampling: bool,
    /// Classifier time series (classifiers.parquet is written when sampling is on and the
    /// scenario has classifiers).
    pub classifiers: Vec<ClassifierSample>,
    pub classifier_sampling: bool,
    /// TCP state traces of the flows listed in the scenario's `[trace]` (traces.parquet).
    pub traces: Vec<TraceSample>,
    pub tracing: bool,
    /// Per-flow goodput windows (goodput.parquet), written when on.
    pub goodput: Vec<GoodputSample>,
    pub goodput_on: bool,
    /// The time series that are on (queues, network, classifiers, goodput, traces) were
    /// written into the output directory during the run (`sim::run_streamed`); their
    /// vectors are then empty.
    pub spooled: bool,
    /// Network time series (network.parquet), written with queue sampling.
    pub network: Vec<NetSample>,
    pub summary: RunSummary,
}
