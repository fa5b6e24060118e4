//! Validate a parsed scenario and resolve it into a `Plan`: the topology with its links and
//! queue specifications, the TCP configurations, the traffic generators with their host
//! pairs and size distributions, sampling and fault injection. Every check a user can fail
//! runs from here (queue disciplines' and classifiers' own checks through their
//! registries), so `savanna validate` catches them before anything runs.

use std::path::Path;

use super::schema::*;
use super::topo;
use super::Scenario;
use crate::aqm::Qdisc;
use crate::engine::{secs_to_ns, Rng, Time};
use crate::error::{Error, Result};
use crate::net::{LinkSpec, NodeKind, Topology};
use crate::spec::{bad, delay_ms, probability, range, rate_in, time0_s, time_s, within_budget, MAX_SAMPLE_ROWS};
use crate::tcp::TcpConfig;
use crate::traffic::size::size_dist_mss;
use crate::traffic::{Env, Generator, SizeDist};

/// Everything the simulator needs, resolved and checked.
#[derive(Debug)]
pub struct Plan {
    pub name: String,
    pub seed: u64,
    pub duration_ns: Time,
    pub pkt_bytes: u32,
    pub hdr_bytes: u32,
    pub topo: Topology,
    /// Queue specification of each link (same index as `topo.links`).
    pub queues: Vec<QueueSpec>,
    pub tcp: Vec<TcpConfig>,
    pub traffic: Vec<TrafficPlan>,
    /// Sampling period and the links whose queues are sampled.
    pub sampling: Option<(Time, Vec<u32>)>,
    /// Record each flow's queueing delay in the sampled queues (`sampling.flow_qdelay`).
    pub flow_qdelay: bool,
    pub faults: Vec<(u32, FaultSpec)>,
    /// (node, classifier) pairs.
    pub classifiers: Vec<(u32, ClassifierSpec)>,
    /// Flow ids whose TCP state is traced.
    pub trace_flows: Vec<u64>,
    /// Window of the per-flow goodput records, ns (0: off).
    pub goodput_ns: Time,
    /// Path policies at edge nodes.
    pub policies: Vec<crate::net::policy::PathPolicy>,
    /// Set by a front end to stop the run (it then returns `Error::Interrupted`).
    pub cancel: crate::error::Cancel,
    /// What the run was estimated to need before it started (checked against the budget).
    pub estimate: Estimate,
}

/// A traffic block, resolved: its generator and the TCP configuration of its flows.
#[derive(Debug)]
pub struct TrafficPlan {
    pub name: String,
    pub tag: String,
    /// Index into `Plan::tcp`.
    pub tcp: u16,
    pub gen: Box<dyn Generator>,
}

pub fn resolve(sc: &Scenario) -> Result<Plan> {
    let f = &sc.file;
    time_s("duration_s", sc.duration_s)?;
    if f.header_bytes == 0 || f.packet_bytes <= f.header_bytes {
        return bad("packet_bytes", format!("must exceed header_bytes ({}), got {}", f.header_bytes, f.packet_bytes));
    }
    let mut topo = Topology::default();
    let mut queues = Vec::new();
    // The key each queue comes from (same index), for errors found after the topology.
    let mut queue_keys = Vec::new();
    let mut pairs = Vec::new();
    let built = match &f.topology {
        TopologySpec::Dumbbell(d) => {
            build_dumbbell(d, sc.seed, &mut topo, &mut queues, &mut queue_keys, &mut pairs)?;
            let mut groups = std::collections::BTreeMap::new();
            groups.insert("senders".to_string(), pairs.iter().map(|p| p.0).collect());
            groups.insert("receivers".to_string(), pairs.iter().map(|p| p.1).collect());
            let hosts = (0..topo.n_nodes() as u32).filter(|&i| topo.node_kinds[i as usize] == NodeKind::Host).collect();
            groups.insert("hosts".to_string(), hosts);
            let b = topo.links.iter().position(|l| l.name == "left->right").map(|l| (l as u32, d.bottleneck_rate_mbps));
            topo::Built { groups, bottleneck: b }
        }
        TopologySpec::Graph(g) => topo::build_graph(g, &mut topo, &mut queues, &mut queue_keys)?,
        TopologySpec::Chain(c) => topo::build_chain(c, sc.seed, &mut topo, &mut queues, &mut queue_keys)?,
        TopologySpec::GuoMatta(g) => topo::build_guo_matta(g, &mut topo, &mut queues, &mut queue_keys)?,
        TopologySpec::Diamond(d) => topo::build_diamond(d, &mut topo, &mut queues, &mut queue_keys)?,
    };
    let sizes = |field: &str, s: &SizeSpec| size_dist(field, s, f, &sc.base_dir);
    resolve_queue_models(&mut queues, &queue_keys, &sizes)?;
    let bottleneck = built.bottleneck;
    let groups = built.groups;
    let routes = topo.routes()?;
    topo.check_connected(&routes)?;

    // TCP configurations: index 0 is [tcp]; blocks with overrides get their own.
    let tcp_base = tcp_defaults_within(&f.tcp, f.packet_bytes);
    let base = crate::tcp::spec::build("tcp", &tcp_base, &toml::Table::new(), f.packet_bytes, f.header_bytes)?;
    let mut tcp = vec![base];
    let mut traffic = Vec::new();
    let env = Env {
        seed: sc.seed,
        topo: &topo,
        pairs: &pairs,
        groups: &groups,
        bottleneck_mbps: bottleneck.map(|b| b.1),
        duration_s: sc.duration_s,
        packet_bytes: f.packet_bytes,
        header_bytes: f.header_bytes,
        base_dir: &sc.base_dir,
    };
    for (i, t) in f.traffic.iter().enumerate() {
        let field = format!("traffic[{i}]");
        let h = t.header();
        let tcp_idx = match h.tcp {
            Some(o) => {
                tcp.push(crate::tcp::spec::build(
                    &format!("{field}.tcp"),
                    &tcp_base,
                    o,
                    f.packet_bytes,
                    f.header_bytes,
                )?);
                (tcp.len() - 1) as u16
            }
            None => 0,
        };
        let name = h.name.map_or_else(|| format!("traffic{i}"), str::to_string);
        let gen = t.resolve(&field, &name, &env)?;
        traffic.push(TrafficPlan { tag: h.tag.to_string(), name, tcp: tcp_idx, gen });
    }
    let mut names = std::collections::HashSet::new();
    for (i, t) in traffic.iter().enumerate() {
        if !names.insert(t.name.clone()) {
            return bad(
                format!("traffic[{i}].name"),
                format!("'{}' is used by two traffic blocks; names must be unique", t.name),
            );
        }
    }

    let link_by_name = |field: &str, name: &str| -> Result<u32> {
        if name == "bottleneck" {
            return bottleneck.map(|b| b.0).ok_or_else(|| {
                Error::input(
                    field,
                    "this topology has no bottleneck link to call 'bottleneck'; name the link 'from->to'",
                )
            });
        }
        topo.links.iter().position(|l| l.name == name).map(|i| i as u32).ok_or_else(|| {
            let some: Vec<&str> = topo.links.iter().take(6).map(|l| l.name.as_str()).collect();
            Error::input(
                field,
                format!(
                    "no link named '{name}' (links are named 'from->to', e.g. {}; or 'bottleneck')",
                    some.join(", ")
                ),
            )
        })
    };
    let sampling = match &f.sampling {
        None => None,
        Some(s) => {
            time_s("sampling.interval_s", s.interval_s)?;
            let links = if s.queues.is_empty() {
                (0..topo.links.len() as u32)
                    .filter(|&l| topo.node_kinds[topo.links[l as usize].from as usize] == NodeKind::Router)
                    .collect()
            } else {
                s.queues
                    .iter()
                    .enumerate()
                    .map(|(i, n)| link_by_name(&format!("sampling.queues[{i}]"), n))
                    .collect::<Result<Vec<_>>>()?
            };
            // Every sample is a row per sampled queue (and one of network totals).
            let rows = (sc.duration_s / s.interval_s).ceil() * (links.len() + 1) as f64;
            within_budget("sampling.interval_s", rows, MAX_SAMPLE_ROWS, "sample rows")?;
            Some((secs_to_ns(s.interval_s), links))
        }
    };
    let goodput_ns = match &f.sampling {
        None => 0,
        Some(s) => match s.goodput_interval_s {
            None => secs_to_ns(s.interval_s),
            Some(g) => {
                time0_s("sampling.goodput_interval_s", g)?;
                if g > 0.0 {
                    let w = (sc.duration_s / g).ceil();
                    within_budget("sampling.goodput_interval_s", w, MAX_SAMPLE_ROWS, "goodput windows")?;
                }
                secs_to_ns(g)
            }
        },
    };
    let mut policies = Vec::new();
    for (i, p) in f.path_policies.iter().enumerate() {
        let field = format!("path_policies[{i}]");
        let pol = p.resolve(&field, &topo, &routes)?;
        if policies.iter().any(|q: &crate::net::policy::PathPolicy| q.node == pol.node) {
            return bad(format!("{field}.node"), format!("node '{}' already has a path policy; one per node", p.node));
        }
        policies.push(pol);
    }
    let mut faults = Vec::new();
    for (i, ft) in f.faults.iter().enumerate() {
        let l = link_by_name(&format!("faults[{i}].link"), &ft.link)?;
        if ft.occurrence == 0 {
            return bad(format!("faults[{i}].occurrence"), "counts transmissions from 1");
        }
        faults.push((l, ft.clone()));
    }
    let mut classifiers: Vec<(u32, ClassifierSpec)> = Vec::new();
    for (i, c) in f.classifiers.iter().enumerate() {
        let field = format!("classifiers[{i}]");
        let c = &resolve_classifier_models(&field, c, &sizes)?;
        let node = topo.node(c.node()).ok_or_else(|| {
            Error::input(
                format!("{field}.node"),
                format!(
                    "no node named '{}' (nodes: {})",
                    c.node(),
                    topo.node_names.iter().take(8).cloned().collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        if classifiers.iter().any(|(n, _)| *n == node) {
            return bad(format!("{field}.node"), format!("node '{}' already has a classifier; one per node", c.node()));
        }
        c.check(&field)?;
        classifiers.push((node, c.clone()));
    }
    for (i, (_, c)) in classifiers.iter().enumerate() {
        let mark = c.writes();
        if !queues.iter().any(|q| q.reads() == Some(mark)) {
            return bad(
                format!("classifiers[{i}]"),
                format!(
                    "it writes {}, which no queue reads; use a discipline that does ({}) on the queue it should \
                     act on",
                    mark.describe(),
                    QueueSpec::readers_of(mark).join(", ")
                ),
            );
        }
    }
    let estimate = estimate(sc, &topo, sampling.as_ref().map_or(0.0, |s| s.1.len() as f64), goodput_ns, f.packet_bytes);
    estimate.check(&sc.budget)?;
    Ok(Plan {
        cancel: sc.cancel.clone(),
        estimate,
        name: sc.name.clone(),
        seed: sc.seed,
        duration_ns: secs_to_ns(sc.duration_s),
        pkt_bytes: f.packet_bytes,
        hdr_bytes: f.header_bytes,
        topo,
        queues,
        tcp,
        traffic,
        flow_qdelay: f.sampling.as_ref().is_some_and(|s| s.flow_qdelay),
        sampling,
        faults,
        classifiers,
        trace_flows: f.trace.as_ref().map(|t| t.flows.clone()).unwrap_or_default(),
        goodput_ns,
        policies,
    })
}

/// Build the classifier a specification describes (through classify/registry.rs).
pub fn make_classifier(c: &ClassifierSpec, seed: u64) -> Box<dyn crate::classify::Classifier> {
    c.build(seed)
}

fn build_dumbbell(
    d: &DumbbellSpec,
    seed: u64,
    topo: &mut Topology,
    queues: &mut Vec<QueueSpec>,
    queue_keys: &mut Vec<String>,
    pairs: &mut Vec<(u32, u32)>,
) -> Result<()> {
    let fp = "topology";
    if d.pairs == 0 || d.pairs > 100_000 {
        return bad(format!("{fp}.pairs"), format!("must be between 1 and 100000, got {}", d.pairs));
    }
    rate_in(&format!("{fp}.access_rate_mbps"), d.access_rate_mbps, 1e6, "Mb/s")?;
    rate_in(&format!("{fp}.bottleneck_rate_mbps"), d.bottleneck_rate_mbps, 1e6, "Mb/s")?;
    delay_ms(&format!("{fp}.bottleneck_delay_ms"), d.bottleneck_delay_ms)?;
    probability(&format!("{fp}.bottleneck_loss"), d.bottleneck_loss)?;
    probability(&format!("{fp}.reverse_loss"), d.reverse_loss)?;
    check_queue(&format!("{fp}.bottleneck_queue"), &d.bottleneck_queue)?;
    check_queue(&format!("{fp}.access_queue"), &d.access_queue)?;
    let rev_q = d.reverse_queue.clone().unwrap_or_else(|| d.bottleneck_queue.clone());
    check_queue(&format!("{fp}.reverse_queue"), &rev_q)?;

    let n = d.pairs as usize;
    let delays = delays(&format!("{fp}.access_delay_ms"), &d.access_delay_ms, n, seed)?;
    let ms = |v: f64| secs_to_ns(v / 1000.0);
    let q_access = push_q(queues, d.access_queue.clone());
    queue_keys.push(format!("{fp}.access_queue"));
    let srcs: Vec<u32> = (0..n).map(|i| topo.add_node(format!("src{i}"), NodeKind::Host)).collect();
    let left = topo.add_node("left", NodeKind::Router);
    let right = topo.add_node("right", NodeKind::Router);
    let dsts: Vec<u32> = (0..n).map(|i| topo.add_node(format!("dst{i}"), NodeKind::Host)).collect();
    let q_bn = push_q(queues, d.bottleneck_queue.clone());
    queue_keys.push(format!("{fp}.bottleneck_queue"));
    let q_rev = push_q(queues, rev_q);
    queue_keys.push(format!("{fp}.{}", if d.reverse_queue.is_some() { "reverse_queue" } else { "bottleneck_queue" }));
    let link = |topo: &mut Topology, from: u32, to: u32, rate: f64, delay: Time, loss: f64, queue: usize| {
        let name = format!("{}->{}", topo.node_names[from as usize], topo.node_names[to as usize]);
        topo.add_link(LinkSpec { name, from, to, rate_bps: rate * 1e6, delay_ns: delay, loss, queue });
    };
    link(topo, left, right, d.bottleneck_rate_mbps, ms(d.bottleneck_delay_ms), d.bottleneck_loss, q_bn);
    link(topo, right, left, d.bottleneck_rate_mbps, ms(d.bottleneck_delay_ms), d.reverse_loss, q_rev);
    for i in 0..n {
        let dl = ms(delays[i]);
        link(topo, srcs[i], left, d.access_rate_mbps, dl, 0.0, q_access);
        link(topo, left, srcs[i], d.access_rate_mbps, dl, 0.0, q_access);
        link(topo, dsts[i], right, d.access_rate_mbps, dl, 0.0, q_access);
        link(topo, right, dsts[i], d.access_rate_mbps, dl, 0.0, q_access);
        pairs.push((srcs[i], dsts[i]));
    }
    Ok(())
}

/// `n` delays (ms) from a fixed value, a list (entry i mod len) or a uniform range (drawn
/// from the `topology/access_delay` stream).
pub(crate) fn delays(field: &str, spec: &DelaySpec, n: usize, seed: u64) -> Result<Vec<f64>> {
    let mut rng = Rng::stream(seed, "topology/access_delay");
    Ok(match spec {
        DelaySpec::Fixed(v) => {
            delay_ms(field, *v)?;
            vec![*v; n]
        }
        DelaySpec::List(l) => {
            if l.is_empty() {
                return bad(field, "an empty list; give at least one delay");
            }
            for (i, v) in l.iter().enumerate() {
                delay_ms(&format!("{field}[{i}]"), *v)?;
            }
            (0..n).map(|i| l[i % l.len()]).collect()
        }
        DelaySpec::Range { min, max } => {
            range(field, *min, *max, false)?;
            delay_ms(&format!("{field}.max"), *max)?;
            (0..n).map(|_| min + (max - min) * rng.uniform()).collect()
        }
    })
}

fn push_q(queues: &mut Vec<QueueSpec>, q: QueueSpec) -> usize {
    queues.push(q);
    queues.len() - 1
}

/// Check a queue specification's parameters (the discipline's own `check`, through the
/// registry in aqm/registry.rs).
pub fn check_queue(field: &str, q: &QueueSpec) -> Result<()> {
    q.check(field)
}

/// Build the discipline a queue specification describes.
pub fn make_qdisc(q: &QueueSpec, pkt_bytes: u32) -> Box<dyn Qdisc> {
    q.build(pkt_bytes)
}

fn size_dist(field: &str, s: &SizeSpec, f: &ScenarioFile, base: &Path) -> Result<SizeDist> {
    size_dist_mss(field, s, (f.packet_bytes - f.header_bytes) as f64, base)
}

/// The `[tcp]` table with the request size kept within a packet when the scenario leaves
/// it to its default: a small `packet_bytes` is then not an error blamed on a key the user
/// never wrote (and that only request/response traffic uses).
fn tcp_defaults_within(tcp: &toml::Table, packet_bytes: u32) -> toml::Table {
    let mut t = tcp.clone();
    const DEFAULT_REQUEST_BYTES: u32 = 300;
    if !t.contains_key("request_bytes") && packet_bytes < DEFAULT_REQUEST_BYTES {
        t.insert("request_bytes".into(), toml::Value::Integer(packet_bytes.into()));
    }
    t
}

// ------------------------------------------------------------------ budget

/// What a run is estimated to need before it starts: events (from the packets its traffic
/// offers, at most what the links between routers carry over the run) and memory (the
/// state of nodes and links, packets the links hold in flight, the sampled rows kept until
/// the end).
#[derive(Clone, Copy, Debug, Default)]
pub struct Estimate {
    pub packets: f64,
    pub events: f64,
    pub memory_bytes: f64,
}

/// Events per packet and per link it crosses: its transmission and arrival there, and its
/// ACK's on the way back (timers and samples are added apart).
const EVENTS_PER_PACKET_HOP: f64 = 4.0;

/// Packets a traffic block offers over the run, or None when it is bounded only by what
/// the network carries (persistent flows, open-ended sessions, UDP).
fn offered_packets(t: &TrafficSpec, f: &ScenarioFile, duration: f64, base: &Path) -> Option<f64> {
    let mean = |s: &SizeSpec| size_dist("", s, f, base).ok().and_then(|d| d.mean()).filter(|m| m.is_finite());
    let span = |start: f64, stop: Option<f64>| (stop.unwrap_or(duration).min(duration) - start).max(0.0);
    match t {
        TrafficSpec::Flows(l) if l.file.is_none() => {
            l.flows.iter().map(|e| e.size_pkts.map(|n| n as f64)).sum::<Option<f64>>()
        }
        TrafficSpec::ClosedLoop(c) => Some(c.sessions as f64 * c.connections? as f64 * mean(&c.size)?),
        TrafficSpec::Periodic(p) => {
            let bursts = p.period_s.map_or(1.0, |q| (span(p.start_s, p.stop_s) / q).floor() + 1.0);
            Some(bursts * p.count as f64 * mean(&p.size)?)
        }
        TrafficSpec::Poisson(p) => Some(p.rate_per_s? * span(p.start_s, p.stop_s) * mean(&p.size)?),
        TrafficSpec::Web(w) => {
            let objects = w.sessions as f64 * w.pages_per_session? as f64 * w.objects_per_page.max as f64;
            Some(objects * mean(&w.object_size)?)
        }
        _ => None,
    }
}

fn estimate(sc: &Scenario, topo: &Topology, sampled_queues: f64, goodput_ns: Time, pkt_bytes: u32) -> Estimate {
    let is_router = |n: u32| topo.node_kinds[n as usize] == NodeKind::Router;
    // Links between routers; a topology without any (a star) has its router's links.
    let core: Vec<&LinkSpec> = topo.links.iter().filter(|l| is_router(l.from) && is_router(l.to)).collect();
    let core = if core.is_empty() { topo.links.iter().filter(|l| is_router(l.from)).collect() } else { core };
    let pkt_bits = 8.0 * pkt_bytes as f64;
    let d = sc.duration_s;
    // What the core carries, counted once per core link a packet crosses, so also a bound
    // on packets; a packet's path is taken through every router (at most 8 hops).
    let carried: f64 = core.iter().map(|l| l.rate_bps / pkt_bits).sum::<f64>() * d;
    let routers = topo.node_kinds.iter().filter(|k| **k == NodeKind::Router).count() as f64;
    let hops = 2.0 + (routers - 1.0).clamp(1.0, 8.0);
    let offered: Option<f64> = sc.file.traffic.iter().map(|t| offered_packets(t, &sc.file, d, &sc.base_dir)).sum();
    let packets = offered.map_or(carried, |o| o.min(carried));
    let mut events = EVENTS_PER_PACKET_HOP * hops * packets;
    let mut rows = 0.0;
    if let Some(s) = &sc.file.sampling {
        let n = (d / s.interval_s).ceil();
        events += n;
        rows += n * (sampled_queues + 1.0);
    }
    if goodput_ns > 0 {
        let w = (d * 1e9 / goodput_ns as f64).ceil();
        events += w;
        rows += w;
    }
    // In flight: every link's bandwidth-delay product, in packets (at most what is sent).
    let bdp: f64 = topo.links.iter().map(|l| l.rate_bps * l.delay_ns as f64 * 1e-9 / pkt_bits).sum();
    let in_flight = bdp.min(packets);
    let memory = 256.0 * topo.n_nodes() as f64 + 1024.0 * topo.links.len() as f64 + 128.0 * in_flight + 64.0 * rows;
    Estimate { packets, events, memory_bytes: memory }
}

impl Estimate {
    /// Refuse a run that would exceed `budget`, saying by how much and how to raise it.
    pub fn check(&self, budget: &crate::spec::Budget) -> Result<()> {
        if self.events > budget.max_events {
            return bad(
                "duration_s",
                format!(
                    "the run would take about {:.2e} events ({:.2e} packets: what its traffic offers, at most \
                     what its links carry over duration_s), more than the budget of {:.2e}; shorten the run, \
                     or raise the budget (--max-events, or max_events in savanna.run())",
                    self.events, self.packets, budget.max_events
                ),
            );
        }
        let gb = self.memory_bytes / 1e9;
        if gb > budget.max_memory_gb {
            return bad(
                "duration_s",
                format!(
                    "the run would need about {gb:.2} GB of memory (nodes, links, packets in flight, \
                     sampled rows), more than the budget of {} GB; make it smaller, or raise the budget \
                     (--max-memory-gb, or max_memory_gb in savanna.run())",
                    budget.max_memory_gb
                ),
            );
        }
        Ok(())
    }
}

/// Parameters the papers derive from document sizes, resolved against the scenario's
/// packet size once the topology has its queues (Tokuda et al. 2002: reddiff's
/// `a_long_from`, aqm/reddiff.rs and model/tokuda.rs). Errors name the key the queue
/// was written under (`keys`, e.g. `topology.links[2].queue`).
fn resolve_queue_models(queues: &mut [QueueSpec], keys: &[String], sizes: &crate::model::tokuda::SizeFn) -> Result<()> {
    // Queues built from one specification (a dumbbell's reverse queue copies the
    // bottleneck's) share one result: the F(K) criterion takes a fraction of a second.
    let mut done: Vec<(String, QueueSpec)> = Vec::new();
    for (i, q) in queues.iter_mut().enumerate() {
        if !q.derives_models() {
            continue;
        }
        let key = format!("{q:?}");
        if let Some((_, r)) = done.iter().find(|(k, _)| *k == key) {
            *q = r.clone();
            continue;
        }
        q.resolve_models(&keys[i], sizes)?;
        done.push((key, q.clone()));
    }
    Ok(())
}

/// A classifier specification with K chosen by the F(K) criterion when asked
/// (`k = { criterion = "tokuda-f", ... }` on marking, sampling and hashing classifiers).
fn resolve_classifier_models(
    field: &str,
    c: &ClassifierSpec,
    sizes: &crate::model::tokuda::SizeFn,
) -> Result<ClassifierSpec> {
    let mut c = c.clone();
    c.resolve_models(field, sizes)?;
    Ok(c)
}
