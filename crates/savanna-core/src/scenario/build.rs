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
    pub faults: Vec<(u32, FaultSpec)>,
    /// (node, classifier) pairs.
    pub classifiers: Vec<(u32, ClassifierSpec)>,
    /// Flow ids whose TCP state is traced.
    pub trace_flows: Vec<u64>,
    /// Window of the per-flow goodput records, ns (0: off).
    pub goodput_ns: Time,
    /// Path policies at edge nodes.
    pub policies: Vec<crate::net::policy::PathPolicy>,
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
    let mut pairs = Vec::new();
    let built = match &f.topology {
        TopologySpec::Dumbbell(d) => {
            build_dumbbell(d, sc.seed, &mut topo, &mut queues, &mut pairs)?;
            let mut groups = std::collections::BTreeMap::new();
            groups.insert("senders".to_string(), pairs.iter().map(|p| p.0).collect());
            groups.insert("receivers".to_string(), pairs.iter().map(|p| p.1).collect());
            let hosts = (0..topo.n_nodes() as u32).filter(|&i| topo.node_kinds[i as usize] == NodeKind::Host).collect();
            groups.insert("hosts".to_string(), hosts);
            let b = topo.links.iter().position(|l| l.name == "left->right").map(|l| (l as u32, d.bottleneck_rate_mbps));
            topo::Built { groups, bottleneck: b }
        }
        TopologySpec::Graph(g) => topo::build_graph(g, &mut topo, &mut queues)?,
        TopologySpec::Chain(c) => topo::build_chain(c, sc.seed, &mut topo, &mut queues)?,
        TopologySpec::GuoMatta(g) => topo::build_guo_matta(g, &mut topo, &mut queues)?,
        TopologySpec::Diamond(d) => topo::build_diamond(d, &mut topo, &mut queues)?,
    };
    let sizes = |field: &str, s: &SizeSpec| size_dist(field, s, f, &sc.base_dir);
    resolve_queue_models(&mut queues, &topo, &sizes)?;
    let bottleneck = built.bottleneck;
    let groups = built.groups;
    let routes = topo.routes()?;
    topo.check_connected(&routes)?;

    // TCP configurations: index 0 is [tcp]; blocks with overrides get their own.
    let base = crate::tcp::spec::build("tcp", &f.tcp, &toml::Table::new(), f.packet_bytes, f.header_bytes)?;
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
                tcp.push(crate::tcp::spec::build(&format!("{field}.tcp"), &f.tcp, o, f.packet_bytes, f.header_bytes)?);
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
    Ok(Plan {
        name: sc.name.clone(),
        seed: sc.seed,
        duration_ns: secs_to_ns(sc.duration_s),
        pkt_bytes: f.packet_bytes,
        hdr_bytes: f.header_bytes,
        topo,
        queues,
        tcp,
        traffic,
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
    let srcs: Vec<u32> = (0..n).map(|i| topo.add_node(format!("src{i}"), NodeKind::Host)).collect();
    let left = topo.add_node("left", NodeKind::Router);
    let right = topo.add_node("right", NodeKind::Router);
    let dsts: Vec<u32> = (0..n).map(|i| topo.add_node(format!("dst{i}"), NodeKind::Host)).collect();
    let q_bn = push_q(queues, d.bottleneck_queue.clone());
    let q_rev = push_q(queues, rev_q);
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

/// Parameters the papers derive from document sizes, resolved against the scenario's
/// packet size once the topology has its queues (Tokuda et al. 2002: reddiff's
/// `a_long_from`, aqm/reddiff.rs and model/tokuda.rs). Their other checks ran with the
/// queue's field path in `check_queue`; errors here name the queue by its link.
fn resolve_queue_models(queues: &mut [QueueSpec], topo: &Topology, sizes: &crate::model::tokuda::SizeFn) -> Result<()> {
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
        let link = topo.links.iter().find(|l| l.queue == i).map(|l| l.name.as_str()).unwrap_or("?");
        q.resolve_models(&format!("queue of {link}"), sizes)?;
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
