//! Validate a parsed scenario and resolve it into a `Plan`: the topology with its links and
//! queue specifications, the TCP configurations, the traffic generators with their host
//! pairs and size distributions, sampling and fault injection. All checks a user can fail
//! live here, so `savanna validate` catches them before anything runs.

use std::path::Path;

use super::schema::*;
use super::topo;
use super::workload::{HostSel, UdpPattern};
use super::Scenario;
use crate::aqm::{
    droptail::DropTail,
    favorqueue::FavorQueue,
    red::{Red, RedParams},
    rio::{Rio, RioClass, RioParams},
    Qdisc,
};
use crate::engine::{secs_to_ns, Rng, Time};
use crate::error::{Error, Result};
use crate::net::{LinkSpec, NodeKind, Topology};
use crate::spec::{bad, non_negative, positive, probability};
use crate::tcp::TcpConfig;
use crate::traffic::size::size_dist_mss;
use crate::traffic::SizeDist;

/// Everything the simulator needs, resolved and checked.
#[derive(Clone, Debug)]
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

#[derive(Clone, Debug)]
pub struct TrafficPlan {
    pub name: String,
    pub tag: String,
    pub tcp: u16,
    pub mode: Mode,
    pub kind: TrafficKind,
}

/// One flow of a flow list: start, size in packets (None: persistent), data sender, data
/// receiver.
pub type ListedFlow = (Time, Option<u64>, u32, u32);

#[derive(Clone, Debug)]
pub enum TrafficKind {
    Poisson {
        mean_gap_s: f64,
        size: SizeDist,
        ends: Ends,
        start: Time,
        stop: Time,
    },
    Persistent {
        count: u32,
        start: Time,
        stagger: Time,
        ends: Ends,
    },
    /// (start, size in packets or None for persistent, data sender, data receiver), by start.
    List {
        flows: Vec<ListedFlow>,
    },
    Web {
        sessions: u32,
        pages: Option<u32>,
        inter_page: SizeDist,
        objects: (u32, u32),
        inter_object: Option<SizeDist>,
        size: SizeDist,
        servers: Vec<u32>,
        clients: Vec<u32>,
        start: Time,
        spread: Time,
        stop: Time,
    },
    Closed {
        sessions: u32,
        size: SizeDist,
        think: Option<SizeDist>,
        connections: Option<u32>,
        ends: Ends,
        start: Time,
        spread: Time,
        stop: Time,
    },
    Periodic {
        count: u32,
        size: SizeDist,
        period: Option<Time>,
        ends: Ends,
        start: Time,
        stop: Time,
    },
    Udp {
        /// Mean gap between packets, ns (exact for CBR).
        gap_ns: f64,
        pkt_bytes: u32,
        poisson: bool,
        interarrival: Option<SizeDist>,
        lifetime: Option<SizeDist>,
        initial: u32,
        ends: Ends,
        start: Time,
        stop: Time,
    },
}

/// Which hosts a traffic block's flows run between.
#[derive(Clone, Debug)]
pub enum Ends {
    /// Fixed (sender, receiver) pairs (the dumbbell's): a flow takes one pair.
    Pairs(Vec<(u32, u32)>),
    /// Sender drawn from the first list, receiver from the second.
    Cross(Vec<u32>, Vec<u32>),
}

impl Ends {
    /// A random (sender, receiver); the two differ.
    pub fn draw(&self, rng: &mut Rng) -> (u32, u32) {
        match self {
            Ends::Pairs(p) => p[rng.below(p.len() as u64) as usize],
            Ends::Cross(a, b) => {
                let s = a[rng.below(a.len() as u64) as usize];
                loop {
                    let d = b[rng.below(b.len() as u64) as usize];
                    if d != s {
                        return (s, d);
                    }
                }
            }
        }
    }
    /// The i-th (sender, receiver), cycling through the lists.
    pub fn nth(&self, i: usize) -> (u32, u32) {
        match self {
            Ends::Pairs(p) => p[i % p.len()],
            Ends::Cross(a, b) => {
                let s = a[i % a.len()];
                let d = b[i % b.len()];
                if d != s {
                    (s, d)
                } else {
                    (s, b[(i + 1) % b.len()])
                }
            }
        }
    }
}

fn resolve_ends(
    field: &str,
    from: &Option<HostSel>,
    to: &Option<HostSel>,
    dir: Direction,
    pairs: &[(u32, u32)],
    groups: &std::collections::BTreeMap<String, Vec<u32>>,
    topo: &Topology,
) -> Result<Ends> {
    let group_list = || groups.keys().cloned().collect::<Vec<_>>().join(", ");
    let hosts = |key: &str, sel: &HostSel| -> Result<Vec<u32>> {
        let mut out = Vec::new();
        for (i, n) in sel.names().iter().enumerate() {
            let f2 = match sel {
                HostSel::One(_) => format!("{field}.{key}"),
                HostSel::Many(_) => format!("{field}.{key}[{i}]"),
            };
            if let Some(g) = groups.get(n) {
                out.extend_from_slice(g);
            } else {
                match topo.node(n) {
                    Some(id) if topo.node_kinds[id as usize] == NodeKind::Host => out.push(id),
                    Some(_) => return bad(f2, format!("'{n}' is a router; traffic runs between hosts")),
                    None => return bad(f2, format!("'{n}' is neither a host group ({}) nor a host", group_list())),
                }
            }
        }
        if out.is_empty() {
            return bad(format!("{field}.{key}"), "selects no host");
        }
        Ok(out)
    };
    let e = match (from, to) {
        (None, None) if !pairs.is_empty() => Ends::Pairs(pairs.to_vec()),
        (None, None) => {
            return bad(
                format!("{field}.from"),
                format!("required on this topology, with `to`: a host group ({}) or host names", group_list()),
            )
        }
        (Some(_), None) => return bad(format!("{field}.to"), "required with `from`"),
        (None, Some(_)) => return bad(format!("{field}.from"), "required with `to`"),
        (Some(a), Some(b)) => {
            let (a, b) = (hosts("from", a)?, hosts("to", b)?);
            if a.len() == 1 && b.iter().all(|&x| x == a[0]) {
                return bad(format!("{field}.to"), "every receiver is the sender itself");
            }
            Ends::Cross(a, b)
        }
    };
    Ok(match (e, dir) {
        (e, Direction::Forward) => e,
        (Ends::Pairs(p), Direction::Reverse) => Ends::Pairs(p.iter().map(|&(a, b)| (b, a)).collect()),
        (Ends::Cross(a, b), Direction::Reverse) => Ends::Cross(b, a),
    })
}

/// A distribution of times in seconds, written like a size distribution.
fn time_dist(field: &str, s: &SizeSpec, f: &ScenarioFile) -> Result<SizeDist> {
    if s.unit() != SizeUnit::Packets {
        return bad(format!("{field}.unit"), "a time distribution is in seconds; remove `unit`");
    }
    size_dist(field, s, f, Path::new("."))
}

pub fn resolve(sc: &Scenario) -> Result<Plan> {
    let f = &sc.file;
    positive("duration_s", sc.duration_s)?;
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
    let routes = topo.routes();
    topo.check_connected(&routes)?;

    // TCP configurations: index 0 is [tcp]; blocks with overrides get their own.
    let base = crate::tcp::spec::build("tcp", &f.tcp, &toml::Table::new(), f.packet_bytes, f.header_bytes)?;
    let mut tcp = vec![base];
    let mut traffic = Vec::new();
    for (i, t) in f.traffic.iter().enumerate() {
        let field = format!("traffic[{i}]");
        let (name, tag, over) = match t {
            TrafficSpec::Poisson(p) => (p.name.clone(), p.tag.clone(), p.tcp.clone()),
            TrafficSpec::Persistent(p) => (p.name.clone(), p.tag.clone(), p.tcp.clone()),
            TrafficSpec::Flows(p) => (p.name.clone(), p.tag.clone(), p.tcp.clone()),
            TrafficSpec::Web(p) => (p.name.clone(), p.tag.clone(), p.tcp.clone()),
            TrafficSpec::ClosedLoop(p) => (p.name.clone(), p.tag.clone(), p.tcp.clone()),
            TrafficSpec::Periodic(p) => (p.name.clone(), p.tag.clone(), p.tcp.clone()),
            TrafficSpec::Udp(p) => (p.name.clone(), p.tag.clone(), None),
        };
        let tcp_idx = match over {
            Some(o) => {
                tcp.push(crate::tcp::spec::build(&format!("{field}.tcp"), &f.tcp, &o, f.packet_bytes, f.header_bytes)?);
                (tcp.len() - 1) as u16
            }
            None => 0,
        };
        let name = name.unwrap_or_else(|| format!("traffic{i}"));
        let ends = |from: &Option<HostSel>, to: &Option<HostSel>, d: Direction| -> Result<Ends> {
            resolve_ends(&field, from, to, d, &pairs, &groups, &topo)
        };
        let window = |start: f64, stop: Option<f64>| -> Result<(Time, Time)> {
            non_negative(&format!("{field}.start_s"), start)?;
            let stop = stop.unwrap_or(sc.duration_s);
            if stop < start {
                return bad(format!("{field}.stop_s"), format!("must be >= start_s ({start}), got {stop}"));
            }
            Ok((secs_to_ns(start), secs_to_ns(stop)))
        };
        let (mode, kind) = match t {
            TrafficSpec::Poisson(p) => {
                let size = size_dist(&format!("{field}.size"), &p.size, f, &sc.base_dir)?;
                non_negative(&format!("{field}.start_s"), p.start_s)?;
                let stop = p.stop_s.unwrap_or(sc.duration_s);
                if stop < p.start_s {
                    return bad(format!("{field}.stop_s"), format!("must be >= start_s ({}), got {stop}", p.start_s));
                }
                let rate = match (p.load, p.rate_per_s) {
                    (Some(_), Some(_)) => return bad(&field, "give either `load` or `rate_per_s`, not both"),
                    (None, None) => {
                        return bad(&field, "a poisson block needs `load` (target utilisation) or `rate_per_s`")
                    }
                    (None, Some(r)) => {
                        positive(&format!("{field}.rate_per_s"), r)?;
                        r
                    }
                    (Some(load), None) => {
                        if !(load > 0.0 && load < 1.0) {
                            return bad(
                                format!("{field}.load"),
                                format!("open-loop arrivals need a load in (0, 1), got {load}"),
                            );
                        }
                        let cap = match (p.capacity_mbps, bottleneck) {
                            (Some(c), _) => {
                                positive(&format!("{field}.capacity_mbps"), c)?;
                                c
                            }
                            (None, Some((_, c))) => c,
                            (None, None) => {
                                return bad(
                                    format!("{field}.capacity_mbps"),
                                    "required: the topology has no single bottleneck to take it from",
                                )
                            }
                        };
                        let mean = match size.mean() {
                            Some(m) if m.is_finite() && m > 0.0 => m,
                            _ => {
                                return bad(
                                    format!("{field}.size"),
                                    "this size distribution has no finite mean, so no arrival rate gives a load (Pareto needs shape > 1)",
                                )
                            }
                        };
                        load * cap * 1e6 / (mean * f.packet_bytes as f64 * 8.0)
                    }
                };
                let start = secs_to_ns(p.start_s);
                (
                    p.mode,
                    TrafficKind::Poisson {
                        mean_gap_s: 1.0 / rate,
                        size,
                        ends: ends(&p.from, &p.to, p.direction)?,
                        start,
                        stop: secs_to_ns(stop),
                    },
                )
            }
            TrafficSpec::Persistent(p) => {
                non_negative(&format!("{field}.start_s"), p.start_s)?;
                non_negative(&format!("{field}.stagger_s"), p.stagger_s)?;
                if p.count == 0 {
                    return bad(format!("{field}.count"), "must be at least 1");
                }
                (
                    Mode::Bulk,
                    TrafficKind::Persistent {
                        count: p.count,
                        start: secs_to_ns(p.start_s),
                        stagger: secs_to_ns(p.stagger_s),
                        ends: ends(&p.from, &p.to, p.direction)?,
                    },
                )
            }
            TrafficSpec::Flows(p) => (p.mode, TrafficKind::List { flows: flow_list(&field, p, &topo, &sc.base_dir)? }),
            TrafficSpec::Web(w) => {
                if w.sessions == 0 || w.sessions > 1_000_000 {
                    return bad(
                        format!("{field}.sessions"),
                        format!("must be between 1 and 1000000, got {}", w.sessions),
                    );
                }
                if w.pages_per_session == Some(0) {
                    return bad(
                        format!("{field}.pages_per_session"),
                        "must be at least 1 (omit it for endless sessions)",
                    );
                }
                let o = w.objects_per_page;
                if o.min == 0 || o.max < o.min {
                    return bad(
                        format!("{field}.objects_per_page"),
                        format!("needs 1 <= min <= max, got min {} max {}", o.min, o.max),
                    );
                }
                let e = ends(&w.from, &w.to, Direction::Forward)?;
                let (servers, clients) = match e {
                    Ends::Cross(a, b) => (a, b),
                    Ends::Pairs(p) => (p.iter().map(|x| x.0).collect(), p.iter().map(|x| x.1).collect()),
                };
                non_negative(&format!("{field}.start_spread_s"), w.start_spread_s)?;
                let (start, stop) = window(w.start_s, w.stop_s)?;
                (
                    w.mode,
                    TrafficKind::Web {
                        sessions: w.sessions,
                        pages: w.pages_per_session,
                        inter_page: time_dist(&format!("{field}.inter_page_s"), &w.inter_page_s, f)?,
                        objects: (o.min, o.max),
                        inter_object: w
                            .inter_object_s
                            .as_ref()
                            .map(|d| time_dist(&format!("{field}.inter_object_s"), d, f))
                            .transpose()?,
                        size: size_dist(&format!("{field}.object_size"), &w.object_size, f, &sc.base_dir)?,
                        servers,
                        clients,
                        start,
                        spread: secs_to_ns(w.start_spread_s),
                        stop,
                    },
                )
            }
            TrafficSpec::ClosedLoop(c) => {
                if c.sessions == 0 || c.sessions > 1_000_000 {
                    return bad(
                        format!("{field}.sessions"),
                        format!("must be between 1 and 1000000, got {}", c.sessions),
                    );
                }
                if c.connections == Some(0) {
                    return bad(format!("{field}.connections"), "must be at least 1 (omit it for endless sessions)");
                }
                non_negative(&format!("{field}.start_spread_s"), c.start_spread_s)?;
                let (start, stop) = window(c.start_s, c.stop_s)?;
                (
                    c.mode,
                    TrafficKind::Closed {
                        sessions: c.sessions,
                        size: size_dist(&format!("{field}.size"), &c.size, f, &sc.base_dir)?,
                        think: c.think_s.as_ref().map(|d| time_dist(&format!("{field}.think_s"), d, f)).transpose()?,
                        connections: c.connections,
                        ends: ends(&c.from, &c.to, c.direction)?,
                        start,
                        spread: secs_to_ns(c.start_spread_s),
                        stop,
                    },
                )
            }
            TrafficSpec::Periodic(p) => {
                if p.count == 0 {
                    return bad(format!("{field}.count"), "must be at least 1");
                }
                if let Some(x) = p.period_s {
                    positive(&format!("{field}.period_s"), x)?;
                }
                let (start, stop) = window(p.start_s, p.stop_s)?;
                (
                    p.mode,
                    TrafficKind::Periodic {
                        count: p.count,
                        size: size_dist(&format!("{field}.size"), &p.size, f, &sc.base_dir)?,
                        period: p.period_s.map(secs_to_ns),
                        ends: ends(&p.from, &p.to, p.direction)?,
                        start,
                        stop,
                    },
                )
            }
            TrafficSpec::Udp(u) => {
                positive(&format!("{field}.rate_kbps"), u.rate_kbps)?;
                if u.packet_bytes < 28 || u.packet_bytes > 65_535 {
                    return bad(
                        format!("{field}.packet_bytes"),
                        format!("must be between 28 and 65535, got {}", u.packet_bytes),
                    );
                }
                if u.interarrival_s.is_none() && u.initial == 0 {
                    return bad(&field, "a udp block needs `interarrival_s` (flow arrivals) or `initial` flows");
                }
                let (start, stop) = window(u.start_s, u.stop_s)?;
                (
                    Mode::Bulk,
                    TrafficKind::Udp {
                        gap_ns: u.packet_bytes as f64 * 8.0 / (u.rate_kbps * 1e3) * 1e9,
                        pkt_bytes: u.packet_bytes,
                        poisson: u.pattern == UdpPattern::Poisson,
                        interarrival: u
                            .interarrival_s
                            .as_ref()
                            .map(|d| time_dist(&format!("{field}.interarrival_s"), d, f))
                            .transpose()?,
                        lifetime: u
                            .lifetime_s
                            .as_ref()
                            .map(|d| time_dist(&format!("{field}.lifetime_s"), d, f))
                            .transpose()?,
                        initial: u.initial,
                        ends: ends(&u.from, &u.to, u.direction)?,
                        start,
                        stop,
                    },
                )
            }
        };
        traffic.push(TrafficPlan { name, tag, tcp: tcp_idx, mode, kind });
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
            positive("sampling.interval_s", s.interval_s)?;
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
            Some((secs_to_ns(s.interval_s), links))
        }
    };
    let goodput_ns = match &f.sampling {
        None => 0,
        Some(s) => match s.goodput_interval_s {
            None => secs_to_ns(s.interval_s),
            Some(g) => {
                non_negative("sampling.goodput_interval_s", g)?;
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
        check_classifier(&field, c)?;
        classifiers.push((node, c.clone()));
    }
    if !classifiers.is_empty() && !queues.iter().any(reads_class) {
        return bad(
            "classifiers",
            "no queue reads the class marks a classifier writes; use a class-aware discipline (rio, prq, reddiff, drr) on the queue it should act on",
        );
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

/// Whether a discipline acts on the class marks edge classifiers write.
pub fn reads_class(q: &QueueSpec) -> bool {
    matches!(q, QueueSpec::Rio(_) | QueueSpec::Drr(_) | QueueSpec::Prq(_) | QueueSpec::Reddiff(_))
}

fn check_classifier(field: &str, c: &ClassifierSpec) -> Result<()> {
    match c {
        ClassifierSpec::Threshold(t) => {
            if t.initial_threshold == 0 {
                return bad(format!("{field}.initial_threshold"), "must be at least 1 packet");
            }
            positive(&format!("{field}.slr"), t.slr)?;
            positive(&format!("{field}.t_u_s"), t.t_u_s)?;
            positive(&format!("{field}.t_c_s"), t.t_c_s)?;
            if t.min_threshold == 0 || t.min_threshold > t.max_threshold {
                return bad(
                    format!("{field}.min_threshold"),
                    format!("must be between 1 and max_threshold ({}), got {}", t.max_threshold, t.min_threshold),
                );
            }
            if !(t.min_threshold..=t.max_threshold).contains(&t.initial_threshold) {
                return bad(format!("{field}.initial_threshold"), "must lie between min_threshold and max_threshold");
            }
        }
        ClassifierSpec::Oracle(o) => {
            if o.threshold == 0 {
                return bad(format!("{field}.threshold"), "must be at least 1 packet");
            }
        }
        ClassifierSpec::Marking(m) => m.check(field)?,
        ClassifierSpec::Sampling(s) => s.check(field)?,
        ClassifierSpec::Hashing(h) => h.check(field)?,
    }
    Ok(())
}

/// Build the classifier a specification describes.
pub fn make_classifier(c: &ClassifierSpec, seed: u64) -> Box<dyn crate::classify::Classifier> {
    use crate::classify::{
        oracle::SizeOracle,
        threshold::{ThresholdClassifier, ThresholdParams},
    };
    match c {
        ClassifierSpec::Threshold(t) => Box::new(ThresholdClassifier::new(ThresholdParams {
            initial_threshold: t.initial_threshold,
            adaptive: t.adaptive,
            slr: t.slr,
            t_u: secs_to_ns(t.t_u_s),
            t_c: secs_to_ns(t.t_c_s),
            min_threshold: t.min_threshold,
            max_threshold: t.max_threshold,
        })),
        ClassifierSpec::Oracle(o) => Box::new(SizeOracle { threshold: o.threshold }),
        ClassifierSpec::Marking(m) => m.build(),
        ClassifierSpec::Sampling(s) => s.build(seed),
        ClassifierSpec::Hashing(h) => h.build(),
    }
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
    positive(&format!("{fp}.access_rate_mbps"), d.access_rate_mbps)?;
    positive(&format!("{fp}.bottleneck_rate_mbps"), d.bottleneck_rate_mbps)?;
    non_negative(&format!("{fp}.bottleneck_delay_ms"), d.bottleneck_delay_ms)?;
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
            non_negative(field, *v)?;
            vec![*v; n]
        }
        DelaySpec::List(l) => {
            if l.is_empty() {
                return bad(field, "an empty list; give at least one delay");
            }
            for (i, v) in l.iter().enumerate() {
                non_negative(&format!("{field}[{i}]"), *v)?;
            }
            (0..n).map(|i| l[i % l.len()]).collect()
        }
        DelaySpec::Range { min, max } => {
            non_negative(&format!("{field}.min"), *min)?;
            if max < min {
                return bad(format!("{field}.max"), format!("must be >= min ({min}), got {max}"));
            }
            (0..n).map(|_| min + (max - min) * rng.uniform()).collect()
        }
    })
}

fn push_q(queues: &mut Vec<QueueSpec>, q: QueueSpec) -> usize {
    queues.push(q);
    queues.len() - 1
}

/// Check a queue specification's parameters.
pub fn check_queue(field: &str, q: &QueueSpec) -> Result<()> {
    match q {
        QueueSpec::Droptail(d) => {
            if d.limit_pkts == 0 {
                return bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
            }
            if d.limit_bytes == Some(0) {
                return bad(format!("{field}.limit_bytes"), "must be at least 1 byte (or omitted)");
            }
        }
        QueueSpec::Red(r) => {
            if r.limit_pkts == 0 {
                return bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
            }
            non_negative(&format!("{field}.min_th"), r.min_th)?;
            positive(&format!("{field}.max_th"), r.max_th)?;
            if r.min_th >= r.max_th {
                return bad(
                    format!("{field}.min_th"),
                    format!("must be below max_th ({}), got {}", r.max_th, r.min_th),
                );
            }
            if !(r.max_p > 0.0 && r.max_p <= 1.0) {
                return bad(format!("{field}.max_p"), format!("must be in (0, 1], got {}", r.max_p));
            }
            if !(r.w_q > 0.0 && r.w_q <= 1.0) {
                return bad(format!("{field}.w_q"), format!("must be in (0, 1], got {}", r.w_q));
            }
            if let Some(m) = r.mean_pkt_bytes {
                positive(&format!("{field}.mean_pkt_bytes"), m)?;
            }
        }
        QueueSpec::Rio(r) => {
            if r.limit_pkts == 0 {
                return bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
            }
            for (cls, min_th, max_th, max_p, w_q) in [
                ("short", r.min_th_short, r.max_th_short, r.max_p_short, r.w_q_short),
                ("long", r.min_th_long, r.max_th_long, r.max_p_long, r.w_q_long),
            ] {
                non_negative(&format!("{field}.min_th_{cls}"), min_th)?;
                positive(&format!("{field}.max_th_{cls}"), max_th)?;
                if min_th >= max_th {
                    return bad(
                        format!("{field}.min_th_{cls}"),
                        format!("must be below max_th_{cls} ({max_th}), got {min_th}"),
                    );
                }
                if !(max_p > 0.0 && max_p <= 1.0) {
                    return bad(format!("{field}.max_p_{cls}"), format!("must be in (0, 1], got {max_p}"));
                }
                if !(w_q > 0.0 && w_q <= 1.0) {
                    return bad(format!("{field}.w_q_{cls}"), format!("must be in (0, 1], got {w_q}"));
                }
            }
            if let Some(m) = r.mean_pkt_bytes {
                positive(&format!("{field}.mean_pkt_bytes"), m)?;
            }
        }
        QueueSpec::Favorqueue(f) => {
            if f.limit_pkts == 0 {
                return bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
            }
        }
        QueueSpec::Drr(s) => s.check(field)?,
        QueueSpec::Codel(s) => s.check(field)?,
        QueueSpec::FqCodel(s) => s.check(field)?,
        QueueSpec::Pie(s) => s.check(field)?,
        QueueSpec::Pi(s) => s.check(field)?,
        QueueSpec::Choke(s) => s.check(field)?,
        QueueSpec::Las(s) => s.check(field)?,
        QueueSpec::Run2c(s) => s.check(field)?,
        QueueSpec::Prq(s) => s.check(field)?,
        QueueSpec::Reddiff(s) => s.check(field)?,
    }
    Ok(())
}

/// Build the discipline a queue specification describes.
pub fn make_qdisc(q: &QueueSpec, pkt_bytes: u32) -> Box<dyn Qdisc> {
    match q {
        QueueSpec::Droptail(d) => Box::new(DropTail::new(d.limit_pkts as usize, d.limit_bytes)),
        QueueSpec::Red(r) => Box::new(Red::new(RedParams {
            limit_pkts: r.limit_pkts as usize,
            min_th: r.min_th,
            max_th: r.max_th,
            max_p: r.max_p,
            w_q: r.w_q,
            gentle: r.gentle,
            wait: r.wait,
            ecn: r.ecn,
            byte_mode: r.mode == RedMode::Bytes,
            mean_pkt_bytes: r.mean_pkt_bytes.unwrap_or(pkt_bytes as f64),
        })),
        QueueSpec::Rio(r) => Box::new(Rio::new(RioParams {
            limit_pkts: r.limit_pkts as usize,
            short: RioClass { min_th: r.min_th_short, max_th: r.max_th_short, max_p: r.max_p_short, w_q: r.w_q_short },
            long: RioClass { min_th: r.min_th_long, max_th: r.max_th_long, max_p: r.max_p_long, w_q: r.w_q_long },
            gentle: r.gentle,
            wait: r.wait,
            ecn: r.ecn,
            mean_pkt_bytes: r.mean_pkt_bytes.unwrap_or(pkt_bytes as f64),
        })),
        QueueSpec::Favorqueue(f) => Box::new(FavorQueue::new(f.limit_pkts as usize)),
        QueueSpec::Drr(s) => s.build(pkt_bytes),
        QueueSpec::Codel(s) => s.build(pkt_bytes),
        QueueSpec::FqCodel(s) => s.build(pkt_bytes),
        QueueSpec::Pie(s) => s.build(pkt_bytes),
        QueueSpec::Pi(s) => s.build(pkt_bytes),
        QueueSpec::Choke(s) => s.build(pkt_bytes),
        QueueSpec::Las(s) => s.build(pkt_bytes),
        QueueSpec::Run2c(s) => s.build(pkt_bytes),
        QueueSpec::Prq(s) => s.build(pkt_bytes),
        QueueSpec::Reddiff(s) => s.build(pkt_bytes),
    }
}

fn size_dist(field: &str, s: &SizeSpec, f: &ScenarioFile, base: &Path) -> Result<SizeDist> {
    size_dist_mss(field, s, (f.packet_bytes - f.header_bytes) as f64, base)
}

fn flow_list(field: &str, p: &FlowListSpec, topo: &Topology, base: &Path) -> Result<Vec<ListedFlow>> {
    let mut entries: Vec<(String, FlowEntry)> =
        p.flows.iter().enumerate().map(|(i, e)| (format!("{field}.flows[{i}]"), e.clone())).collect();
    if let Some(file) = &p.file {
        let path = base.join(file);
        let ff = format!("{field}.file");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::input(&ff, format!("cannot read '{}': {e}", path.display())))?;
        let mut lines =
            text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        let header: Vec<String> = match lines.next() {
            Some((_, h)) => h.split(',').map(|s| s.trim().to_string()).collect(),
            None => return bad(ff, format!("'{}' is empty", path.display())),
        };
        let col = |name: &str| header.iter().position(|h| h == name);
        let (cs, cz, csrc, cdst) = match (col("start_s"), col("size_pkts"), col("src"), col("dst")) {
            (Some(a), Some(b), Some(c), Some(d)) => (a, b, c, d),
            _ => return bad(ff, format!("'{}' needs a header with columns start_s,size_pkts,src,dst", path.display())),
        };
        for (ln, line) in lines {
            let cols: Vec<&str> = line.split(',').map(str::trim).collect();
            let get = |i: usize| cols.get(i).copied().unwrap_or("");
            let start = get(cs).parse::<f64>().map_err(|_| {
                Error::input(&ff, format!("'{}' line {}: start_s is not a number", path.display(), ln + 1))
            })?;
            let size = match get(cz) {
                "" => None,
                s => Some(s.parse::<u64>().map_err(|_| {
                    Error::input(&ff, format!("'{}' line {}: size_pkts is not a whole number", path.display(), ln + 1))
                })?),
            };
            entries.push((
                format!("{ff} line {}", ln + 1),
                FlowEntry { start_s: start, size_pkts: size, src: get(csrc).to_string(), dst: get(cdst).to_string() },
            ));
        }
    }
    if entries.is_empty() {
        return bad(field, "a flow list needs `flows` or `file` with at least one flow");
    }
    let mut out = Vec::with_capacity(entries.len());
    for (f2, e) in entries {
        non_negative(&format!("{f2}.start_s"), e.start_s)?;
        if e.size_pkts == Some(0) {
            return bad(format!("{f2}.size_pkts"), "must be at least 1 (omit it for a persistent flow)");
        }
        let host = |n: &str, which: &str| -> Result<u32> {
            match topo.node(n) {
                Some(i) if topo.node_kinds[i as usize] == NodeKind::Host => Ok(i),
                Some(_) => bad(format!("{f2}.{which}"), format!("'{n}' is a router; flows run between hosts")),
                None => bad(format!("{f2}.{which}"), format!("no host named '{n}'")),
            }
        };
        let s = host(&e.src, "src")?;
        let d = host(&e.dst, "dst")?;
        if s == d {
            return bad(format!("{f2}.dst"), "must differ from src");
        }
        out.push((secs_to_ns(e.start_s), e.size_pkts, s, d));
    }
    out.sort_by_key(|x| x.0);
    Ok(out)
}

/// Parameters the papers derive from document sizes, resolved against the scenario's
/// packet size once the topology has its queues (Tokuda et al. 2002: reddiff's
/// `a_long_from`, aqm/reddiff.rs and model/tokuda.rs). Their other checks ran with the
/// queue's field path in `check_queue`; errors here name the queue by its link.
fn resolve_queue_models(queues: &mut [QueueSpec], topo: &Topology, sizes: &crate::model::tokuda::SizeFn) -> Result<()> {
    // Queues built from one specification (a dumbbell's reverse queue copies the
    // bottleneck's) share one result: the F(K) criterion takes a fraction of a second.
    let mut done: Vec<(String, Option<(f64, u64)>)> = Vec::new();
    for (i, q) in queues.iter_mut().enumerate() {
        if let QueueSpec::Reddiff(r) = q {
            let key = format!("{:?}", r.a_long_from);
            if let Some((_, d)) = done.iter().find(|(k, _)| *k == key) {
                r.derived = *d;
                continue;
            }
            let link = topo.links.iter().find(|l| l.queue == i).map(|l| l.name.as_str()).unwrap_or("?");
            *r = r.resolved(&format!("queue of {link}"), sizes)?;
            done.push((key, r.derived));
        }
    }
    Ok(())
}

/// A classifier specification with K chosen by the F(K) criterion when asked
/// (`k = { criterion = "tokuda-f", ... }` on marking and hashing classifiers).
fn resolve_classifier_models(
    field: &str,
    c: &ClassifierSpec,
    sizes: &crate::model::tokuda::SizeFn,
) -> Result<ClassifierSpec> {
    use crate::model::tokuda::KSpec;
    let mut c = c.clone();
    let k = match &mut c {
        ClassifierSpec::Marking(m) => &mut m.k,
        ClassifierSpec::Hashing(h) => &mut h.k,
        ClassifierSpec::Sampling(x) => &mut x.k,
        _ => return Ok(c),
    };
    *k = KSpec::Pkts(k.resolve(&format!("{field}.k"), None, sizes)?);
    Ok(c)
}
