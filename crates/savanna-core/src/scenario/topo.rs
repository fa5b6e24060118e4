//! Topologies beyond the dumbbell: a general graph written in the scenario, and named
//! builders for the papers' topologies, each of which expands to the same graph form.
//!
//! - `graph`: hosts, routers, duplex links with per-direction rate, delay, loss and queue.
//! - `chain`: FavorQueue 2013 Fig. 25, routers in a row, ten long-lived cross flows per hop
//!   (their own hosts) and one reference host pair across all hops.
//! - `guo_matta`: Guo & Matta 2001 Fig. 6 (delays and rates from the talk's slide): a server
//!   pool behind edge router 0, core routers 3, 1 and 2, and two client pools behind their
//!   own bottlenecks 3->1 and 3->2.
//! - `diamond`: Matta & Guo 2000 Fig. 9: servers at node 0, clients at node 1, and between
//!   them a diamond whose edge node 4 splits flows over two parallel paths towards node 6.
//!
//! Every builder also defines host groups (e.g. `servers`, `clients1`) that traffic blocks
//! name in `from` / `to`, and a bottleneck link for loads given as a fraction of capacity.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::schema::{DropTailSpec, QueueSpec};
use crate::engine::secs_to_ns;
use crate::error::{Error, Result};
use crate::net::{LinkSpec, NodeKind, Topology};

fn d_access_queue() -> QueueSpec {
    QueueSpec::Droptail(DropTailSpec { limit_pkts: 1000, limit_bytes: None })
}

/// One direction's settings that may differ from the other's.
#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct LinkDirSpec {
    pub rate_mbps: Option<f64>,
    pub delay_ms: Option<f64>,
    pub loss: Option<f64>,
    pub queue: Option<QueueSpec>,
}

/// A duplex link between two nodes. Both directions take `rate_mbps`, `delay_ms`, `loss`
/// and `queue` unless `reverse` (the direction `between[1] -> between[0]`) overrides them.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphLinkSpec {
    pub between: [String; 2],
    pub rate_mbps: f64,
    pub delay_ms: f64,
    #[serde(default)]
    pub loss: f64,
    #[serde(default = "d_access_queue")]
    pub queue: QueueSpec,
    #[serde(default)]
    pub reverse: Option<LinkDirSpec>,
}

/// A general graph.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphSpec {
    /// End hosts (traffic runs between hosts).
    pub hosts: Vec<String>,
    /// Routers (forward only).
    #[serde(default)]
    pub routers: Vec<String>,
    pub links: Vec<GraphLinkSpec>,
    /// Named host groups for traffic blocks' `from` / `to`.
    #[serde(default)]
    pub groups: BTreeMap<String, Vec<String>>,
    /// The link (`"a->b"`) whose rate a traffic block's `load` refers to, and which
    /// `"bottleneck"` names elsewhere in the scenario.
    #[serde(default)]
    pub bottleneck: Option<String>,
}

fn d_hops() -> u32 {
    5
}
fn d_cross() -> u32 {
    10
}
fn d_chain_rate() -> f64 {
    10.0
}
fn d_chain_delay() -> f64 {
    1.0
}
fn d_chain_access_rate() -> f64 {
    100.0
}
fn d_chain_queue() -> QueueSpec {
    QueueSpec::Droptail(DropTailSpec { limit_pkts: 8, limit_bytes: None })
}
fn d_ref_delay() -> f64 {
    25.0
}
fn d_cross_delay() -> super::schema::DelaySpec {
    super::schema::DelaySpec::Range { min: 1.0, max: 50.0 }
}

/// FavorQueue 2013 Fig. 25: routers r0..r{hops} in a row joined by `rate_mbps` links of
/// `delay_ms`; hop i (r{i} -> r{i+1}) carries `cross_flows` cross hosts `x{i}_s{j}` ->
/// `x{i}_d{j}` (on r{i} and r{i+1}) and the reference pair `ref_src` (on r0) -> `ref_dst`
/// (on r{hops}) crosses every hop. `first_queue` is the queue of hop 0 (the edge, where
/// FavorQueue sits in Fig. 26), `queue` that of every other hop.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainSpec {
    #[serde(default = "d_hops")]
    pub hops: u32,
    #[serde(default = "d_cross")]
    pub cross_flows: u32,
    #[serde(default = "d_chain_rate")]
    pub rate_mbps: f64,
    #[serde(default = "d_chain_delay")]
    pub delay_ms: f64,
    #[serde(default = "d_chain_access_rate")]
    pub access_rate_mbps: f64,
    /// Access delay of the reference hosts (the paper: 25 ms each side).
    #[serde(default = "d_ref_delay")]
    pub ref_access_delay_ms: f64,
    /// Access delay of each cross host, ms: number, list or {min, max} (the paper says "ten
    /// TCP long-lived flows with different RTT" without values: default uniform 1-50 ms).
    #[serde(default = "d_cross_delay")]
    pub cross_access_delay_ms: super::schema::DelaySpec,
    #[serde(default = "d_chain_queue")]
    pub queue: QueueSpec,
    #[serde(default)]
    pub first_queue: Option<QueueSpec>,
    #[serde(default = "d_access_queue")]
    pub access_queue: QueueSpec,
}

fn d_pool() -> u32 {
    10
}
fn d_gm_rate1() -> f64 {
    8.0
}
fn d_gm_rate2() -> f64 {
    4.8
}
fn d_100() -> f64 {
    100.0
}
fn d_15() -> f64 {
    15.0
}
fn d_20() -> f64 {
    20.0
}
fn d_gm_queue() -> QueueSpec {
    QueueSpec::Droptail(DropTailSpec { limit_pkts: 300, limit_bytes: None })
}

/// Guo & Matta 2001 Fig. 6, with the talk's delays: servers s{i} -(100 Mb/s, 15 ms)- n0
/// -(100 Mb/s, 20 ms)- n3; n3 -(rate1, 15 ms)- n1 - clients c1_{i}; n3 -(rate2, 15 ms)- n2 -
/// clients c2_{i}. Client access links are 100 Mb/s with `client_delay_ms` (0 by default:
/// the figure shows none). The bottlenecks are n3->n1 and n3->n2. The rates x and y are not
/// given; the defaults come from Table III's bandwidth-delay products (about 200 packets of
/// 500 B over a 100 ms RTT is 8 Mb/s; 120 packets is 4.8 Mb/s).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuoMattaSpec {
    #[serde(default = "d_pool")]
    pub servers: u32,
    #[serde(default = "d_pool")]
    pub clients1: u32,
    /// Hosts of client pool 2 (0: Exp. 1, one pool only).
    #[serde(default)]
    pub clients2: u32,
    #[serde(default = "d_gm_rate1")]
    pub rate1_mbps: f64,
    #[serde(default = "d_gm_rate2")]
    pub rate2_mbps: f64,
    #[serde(default = "d_100")]
    pub core_rate_mbps: f64,
    #[serde(default = "d_15")]
    pub server_delay_ms: f64,
    #[serde(default = "d_20")]
    pub core_delay_ms: f64,
    #[serde(default = "d_15")]
    pub bottleneck_delay_ms: f64,
    #[serde(default)]
    pub client_delay_ms: f64,
    /// Queue of both bottlenecks (n3->n1, n3->n2).
    #[serde(default = "d_gm_queue")]
    pub bottleneck_queue: QueueSpec,
    /// Queue of the bottlenecks' reverse direction (default: same as bottleneck_queue).
    #[serde(default)]
    pub reverse_queue: Option<QueueSpec>,
    /// Queue of every other link (lossless in the paper: make it large).
    #[serde(default = "d_access_queue")]
    pub other_queue: QueueSpec,
}

fn d_dm_rate() -> f64 {
    5.0
}
fn d_dm_delay() -> f64 {
    10.0
}
fn d_dm_path_delay() -> f64 {
    15.0
}
fn d_dm_access() -> f64 {
    15.0
}
fn d_dm_queue() -> QueueSpec {
    QueueSpec::Droptail(DropTailSpec { limit_pkts: 250, limit_bytes: None })
}
fn d_dm_access_queue() -> QueueSpec {
    QueueSpec::Droptail(DropTailSpec { limit_pkts: 4000, limit_bytes: None })
}

/// Matta & Guo 2000 Fig. 9: servers s{i} - n0 - n4 = {n5, n7} = n6 - n1 - clients c{i}.
/// Path 1 is n4->n5->n6, path 2 n4->n7->n6; each path link has `path_rate_mbps` (the
/// bottleneck C, Table IV: 5 Mb/s) and `path_delay_ms`; the other links are access links of
/// at least 3C (`access_rate_mbps`, default 15) with `access_delay_ms`; hosts attach to n0
/// and n1 with zero-delay links. Table IV gives C, buffers and the 238-packet
/// bandwidth-delay product but not the delays: the defaults (10 ms access, 15 ms per path
/// link) give a 100 ms base RTT, 5 Mb/s x 100 ms / 576 B = 108 packets; set the delays for
/// 238 packets if you want Table IV's product (about 220 ms RTT).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiamondSpec {
    #[serde(default = "d_pool")]
    pub servers: u32,
    #[serde(default = "d_pool")]
    pub clients: u32,
    #[serde(default = "d_dm_rate")]
    pub path_rate_mbps: f64,
    #[serde(default = "d_dm_path_delay")]
    pub path_delay_ms: f64,
    #[serde(default = "d_dm_access")]
    pub access_rate_mbps: f64,
    #[serde(default = "d_dm_delay")]
    pub access_delay_ms: f64,
    /// Queue of the four path links (both directions).
    #[serde(default = "d_dm_queue")]
    pub path_queue: QueueSpec,
    #[serde(default = "d_dm_access_queue")]
    pub access_queue: QueueSpec,
}

/// What a topology builder produces besides the links: host groups and the bottleneck.
pub struct Built {
    pub groups: BTreeMap<String, Vec<u32>>,
    /// (link, rate in Mb/s)
    pub bottleneck: Option<(u32, f64)>,
}

fn bad<T>(field: impl Into<String>, msg: impl Into<String>) -> Result<T> {
    Err(Error::input(field, msg))
}

/// Most hosts in one pool of a named topology (the dumbbell's limit on pairs).
const MAX_POOL: u32 = 100_000;

fn pool_size(field: &str, v: u32) -> Result<()> {
    if v > MAX_POOL {
        return bad(field, format!("at most {MAX_POOL} hosts, got {v}"));
    }
    Ok(())
}

fn check_rate(field: &str, v: f64) -> Result<()> {
    crate::spec::rate_in(field, v, 1e6, "Mb/s")
}

fn check_delay(field: &str, v: f64) -> Result<()> {
    crate::spec::delay_ms(field, v)
}

fn check_loss(field: &str, v: f64) -> Result<()> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        bad(field, format!("must be a probability in [0, 1], got {v}"))
    }
}

/// The keys one link direction's settings come from, as the user writes them (or would
/// write them: a default's key), so that an error names a key that exists.
#[derive(Clone, Copy)]
struct Keys<'k> {
    rate: &'k str,
    delay: &'k str,
    loss: &'k str,
    queue: &'k str,
}

impl<'k> Keys<'k> {
    /// Settings with no loss key (the named topologies' links are lossless).
    fn new(rate: &'k str, delay: &'k str, queue: &'k str) -> Self {
        Keys { rate, delay, loss: "", queue }
    }
}

/// Adds one link direction, checking its numbers and queue; remembers the key of each
/// link's queue (`queue_keys`, same index as the queues) for errors found later.
struct Adder<'a> {
    topo: &'a mut Topology,
    queues: &'a mut Vec<QueueSpec>,
    queue_keys: &'a mut Vec<String>,
}

impl Adder<'_> {
    fn node(&mut self, name: &str, kind: NodeKind) -> u32 {
        self.topo.add_node(name, kind)
    }
    #[allow(clippy::too_many_arguments)]
    fn link(
        &mut self,
        keys: Keys,
        from: u32,
        to: u32,
        rate_mbps: f64,
        delay_ms: f64,
        loss: f64,
        queue: &QueueSpec,
    ) -> Result<u32> {
        check_rate(keys.rate, rate_mbps)?;
        check_delay(keys.delay, delay_ms)?;
        if !keys.loss.is_empty() {
            check_loss(keys.loss, loss)?;
        }
        super::build::check_queue(keys.queue, queue)?;
        self.queues.push(queue.clone());
        self.queue_keys.push(keys.queue.to_string());
        let q = self.queues.len() - 1;
        let name = format!("{}->{}", self.topo.node_names[from as usize], self.topo.node_names[to as usize]);
        Ok(self.topo.add_link(LinkSpec {
            name,
            from,
            to,
            rate_bps: rate_mbps * 1e6,
            delay_ns: secs_to_ns(delay_ms / 1000.0),
            loss,
            queue: q,
        }))
    }
    /// Both directions with the same settings.
    fn duplex(&mut self, keys: Keys, a: u32, b: u32, rate: f64, delay: f64, queue: &QueueSpec) -> Result<(u32, u32)> {
        Ok((self.link(keys, a, b, rate, delay, 0.0, queue)?, self.link(keys, b, a, rate, delay, 0.0, queue)?))
    }
}

fn check_name(field: &str, n: &str) -> Result<()> {
    if n.is_empty() || n.contains("->") || n.chars().any(char::is_whitespace) {
        return bad(field, format!("'{n}' is not a usable node name (non-empty, no spaces, no '->')"));
    }
    Ok(())
}

pub fn build_graph(
    g: &GraphSpec,
    topo: &mut Topology,
    queues: &mut Vec<QueueSpec>,
    queue_keys: &mut Vec<String>,
) -> Result<Built> {
    let fp = "topology";
    if g.hosts.len() < 2 {
        return bad(format!("{fp}.hosts"), "a graph needs at least two hosts");
    }
    let mut a = Adder { topo, queues, queue_keys };
    let mut seen = std::collections::HashSet::new();
    for (list, kind, key) in [(&g.hosts, NodeKind::Host, "hosts"), (&g.routers, NodeKind::Router, "routers")] {
        for (i, n) in list.iter().enumerate() {
            let field = format!("{fp}.{key}[{i}]");
            check_name(&field, n)?;
            if !seen.insert(n.clone()) {
                return bad(field, format!("node '{n}' is declared twice"));
            }
            a.node(n, kind);
        }
    }
    if g.links.is_empty() {
        return bad(format!("{fp}.links"), "a graph needs links");
    }
    let declared = |field: &str, n: &str, topo: &Topology| -> Result<u32> {
        topo.node(n).ok_or_else(|| {
            Error::input(
                field,
                format!("'{n}' is not a declared node (declare it in topology.hosts or topology.routers)"),
            )
        })
    };
    for (i, l) in g.links.iter().enumerate() {
        let field = format!("{fp}.links[{i}]");
        let x = declared(&format!("{field}.between[0]"), &l.between[0], a.topo)?;
        let y = declared(&format!("{field}.between[1]"), &l.between[1], a.topo)?;
        if x == y {
            return bad(format!("{field}.between"), "a link joins two different nodes");
        }
        let name = format!("{}->{}", l.between[0], l.between[1]);
        if a.topo.links.iter().any(|k| k.name == name) {
            return bad(
                format!("{field}.between"),
                format!("nodes '{}' and '{}' are already linked", l.between[0], l.between[1]),
            );
        }
        let key = |k: &str| format!("{field}.{k}");
        let (rate, delay, loss, queue) = (key("rate_mbps"), key("delay_ms"), key("loss"), key("queue"));
        a.link(
            Keys { rate: &rate, delay: &delay, loss: &loss, queue: &queue },
            x,
            y,
            l.rate_mbps,
            l.delay_ms,
            l.loss,
            &l.queue,
        )?;
        let r = l.reverse.clone().unwrap_or_default();
        // The reverse direction's key is the override's when it gives one.
        let rkey = |given: bool, k: &str| if given { format!("{field}.reverse.{k}") } else { key(k) };
        let (rrate, rdelay, rloss, rqueue) = (
            rkey(r.rate_mbps.is_some(), "rate_mbps"),
            rkey(r.delay_ms.is_some(), "delay_ms"),
            rkey(r.loss.is_some(), "loss"),
            rkey(r.queue.is_some(), "queue"),
        );
        a.link(
            Keys { rate: &rrate, delay: &rdelay, loss: &rloss, queue: &rqueue },
            y,
            x,
            r.rate_mbps.unwrap_or(l.rate_mbps),
            r.delay_ms.unwrap_or(l.delay_ms),
            r.loss.unwrap_or(l.loss),
            r.queue.as_ref().unwrap_or(&l.queue),
        )?;
    }
    let topo = a.topo;
    // Hosts forward nothing, so a host with two links would be a dead end for transit:
    // say so rather than route through it silently (routes never transit hosts anyway).
    let mut groups = BTreeMap::new();
    groups.insert("hosts".to_string(), (0..g.hosts.len() as u32).collect());
    for (name, members) in &g.groups {
        let field = format!("{fp}.groups.{name}");
        if name == "hosts" || topo.node(name).is_some() {
            return bad(
                field,
                format!(
                    "'{name}' is already the name of a node (or of the group of all hosts); \
                     give the group its own name"
                ),
            );
        }
        if members.is_empty() {
            return bad(field, "an empty group");
        }
        let mut ids = Vec::new();
        for (i, m) in members.iter().enumerate() {
            match topo.node(m) {
                Some(id) if topo.node_kinds[id as usize] == NodeKind::Host => ids.push(id),
                Some(_) => return bad(format!("{field}[{i}]"), format!("'{m}' is a router; groups hold hosts")),
                None => return bad(format!("{field}[{i}]"), format!("'{m}' is not a declared host")),
            }
        }
        groups.insert(name.clone(), ids);
    }
    let bottleneck = match &g.bottleneck {
        None => None,
        Some(b) => {
            let l = topo.links.iter().position(|k| &k.name == b).ok_or_else(|| {
                Error::input(
                    format!("{fp}.bottleneck"),
                    format!("no link named '{b}' (links are named 'a->b' after their `between` nodes)"),
                )
            })?;
            Some((l as u32, topo.links[l].rate_bps / 1e6))
        }
    };
    Ok(Built { groups, bottleneck })
}

pub fn build_chain(
    c: &ChainSpec,
    seed: u64,
    topo: &mut Topology,
    queues: &mut Vec<QueueSpec>,
    queue_keys: &mut Vec<String>,
) -> Result<Built> {
    let fp = "topology";
    if c.hops == 0 || c.hops > 1000 {
        return bad(format!("{fp}.hops"), format!("must be between 1 and 1000, got {}", c.hops));
    }
    if c.cross_flows > 10_000 {
        return bad(format!("{fp}.cross_flows"), "at most 10000 per hop");
    }
    if c.hops as u64 * c.cross_flows as u64 > MAX_POOL as u64 {
        return bad(format!("{fp}.cross_flows"), format!("hops x cross_flows must be at most {MAX_POOL}"));
    }
    let n_cross = (c.hops * c.cross_flows) as usize;
    let cross_delays =
        super::build::delays(&format!("{fp}.cross_access_delay_ms"), &c.cross_access_delay_ms, n_cross, seed)?;
    let first_q = c.first_queue.clone().unwrap_or_else(|| c.queue.clone());
    let mut a = Adder { topo, queues, queue_keys };
    let routers: Vec<u32> = (0..=c.hops).map(|i| a.node(&format!("r{i}"), NodeKind::Router)).collect();
    let mut groups = BTreeMap::new();
    let mut bottleneck = None;
    for i in 0..c.hops as usize {
        let q = if i == 0 { &first_q } else { &c.queue };
        // Hop 0's forward queue is `first_queue` when given (else `queue`).
        let fq = if i == 0 && c.first_queue.is_some() { format!("{fp}.first_queue") } else { format!("{fp}.queue") };
        let (rate, delay, bq) = (format!("{fp}.rate_mbps"), format!("{fp}.delay_ms"), format!("{fp}.queue"));
        let fwd = a.link(Keys::new(&rate, &delay, &fq), routers[i], routers[i + 1], c.rate_mbps, c.delay_ms, 0.0, q)?;
        a.link(Keys::new(&rate, &delay, &bq), routers[i + 1], routers[i], c.rate_mbps, c.delay_ms, 0.0, &c.queue)?;
        if i == 0 {
            bottleneck = Some((fwd, c.rate_mbps));
        }
    }
    let rs = a.node("ref_src", NodeKind::Host);
    let rd = a.node("ref_dst", NodeKind::Host);
    let (ar, aq) = (format!("{fp}.access_rate_mbps"), format!("{fp}.access_queue"));
    let refd = format!("{fp}.ref_access_delay_ms");
    let crossd = format!("{fp}.cross_access_delay_ms");
    let rk = Keys::new(&ar, &refd, &aq);
    a.duplex(rk, rs, routers[0], c.access_rate_mbps, c.ref_access_delay_ms, &c.access_queue)?;
    a.duplex(rk, rd, routers[c.hops as usize], c.access_rate_mbps, c.ref_access_delay_ms, &c.access_queue)?;
    let xk = Keys::new(&ar, &crossd, &aq);
    groups.insert("ref_src".to_string(), vec![rs]);
    groups.insert("ref_dst".to_string(), vec![rd]);
    for i in 0..c.hops as usize {
        let (mut ss, mut ds) = (Vec::new(), Vec::new());
        for j in 0..c.cross_flows as usize {
            let d = cross_delays[i * c.cross_flows as usize + j];
            let s = a.node(&format!("x{i}_s{j}"), NodeKind::Host);
            let t = a.node(&format!("x{i}_d{j}"), NodeKind::Host);
            a.duplex(xk, s, routers[i], c.access_rate_mbps, d, &c.access_queue)?;
            a.duplex(xk, t, routers[i + 1], c.access_rate_mbps, d, &c.access_queue)?;
            ss.push(s);
            ds.push(t);
        }
        if c.cross_flows > 0 {
            groups.insert(format!("cross{i}_src"), ss);
            groups.insert(format!("cross{i}_dst"), ds);
        }
    }
    Ok(Built { groups, bottleneck })
}

pub fn build_guo_matta(
    g: &GuoMattaSpec,
    topo: &mut Topology,
    queues: &mut Vec<QueueSpec>,
    queue_keys: &mut Vec<String>,
) -> Result<Built> {
    let fp = "topology";
    if g.servers == 0 || g.clients1 == 0 {
        return bad(format!("{fp}.servers"), "the server pool and client pool 1 need at least one host each");
    }
    for (k, v) in [("servers", g.servers), ("clients1", g.clients1), ("clients2", g.clients2)] {
        pool_size(&format!("{fp}.{k}"), v)?;
    }
    let rev = g.reverse_queue.clone().unwrap_or_else(|| g.bottleneck_queue.clone());
    let mut a = Adder { topo, queues, queue_keys };
    let n0 = a.node("n0", NodeKind::Router);
    let n3 = a.node("n3", NodeKind::Router);
    let n1 = a.node("n1", NodeKind::Router);
    let n2 = if g.clients2 > 0 { Some(a.node("n2", NodeKind::Router)) } else { None };
    let k = |key: &str| format!("{fp}.{key}");
    let (oq, bq, core_rate) = (k("other_queue"), k("bottleneck_queue"), k("core_rate_mbps"));
    let rq = if g.reverse_queue.is_some() { k("reverse_queue") } else { bq.clone() };
    let (core_delay, bd, sd, cd) =
        (k("core_delay_ms"), k("bottleneck_delay_ms"), k("server_delay_ms"), k("client_delay_ms"));
    let (r1, r2) = (k("rate1_mbps"), k("rate2_mbps"));
    a.duplex(Keys::new(&core_rate, &core_delay, &oq), n0, n3, g.core_rate_mbps, g.core_delay_ms, &g.other_queue)?;
    let b1 = a.link(Keys::new(&r1, &bd, &bq), n3, n1, g.rate1_mbps, g.bottleneck_delay_ms, 0.0, &g.bottleneck_queue)?;
    a.link(Keys::new(&r1, &bd, &rq), n1, n3, g.rate1_mbps, g.bottleneck_delay_ms, 0.0, &rev)?;
    if let Some(n2) = n2 {
        a.link(Keys::new(&r2, &bd, &bq), n3, n2, g.rate2_mbps, g.bottleneck_delay_ms, 0.0, &g.bottleneck_queue)?;
        a.link(Keys::new(&r2, &bd, &rq), n2, n3, g.rate2_mbps, g.bottleneck_delay_ms, 0.0, &rev)?;
    }
    let mut groups = BTreeMap::new();
    let servers: Vec<u32> = (0..g.servers).map(|i| a.node(&format!("s{i}"), NodeKind::Host)).collect();
    for &s in &servers {
        a.duplex(Keys::new(&core_rate, &sd, &oq), s, n0, g.core_rate_mbps, g.server_delay_ms, &g.other_queue)?;
    }
    let c1: Vec<u32> = (0..g.clients1).map(|i| a.node(&format!("c1_{i}"), NodeKind::Host)).collect();
    for &c in &c1 {
        a.duplex(Keys::new(&core_rate, &cd, &oq), c, n1, g.core_rate_mbps, g.client_delay_ms, &g.other_queue)?;
    }
    if let Some(n2) = n2 {
        let c2: Vec<u32> = (0..g.clients2).map(|i| a.node(&format!("c2_{i}"), NodeKind::Host)).collect();
        for &c in &c2 {
            a.duplex(Keys::new(&core_rate, &cd, &oq), c, n2, g.core_rate_mbps, g.client_delay_ms, &g.other_queue)?;
        }
        groups.insert("clients2".to_string(), c2);
    }
    groups.insert("servers".to_string(), servers);
    groups.insert("clients1".to_string(), c1);
    Ok(Built { groups, bottleneck: Some((b1, g.rate1_mbps)) })
}

pub fn build_diamond(
    d: &DiamondSpec,
    topo: &mut Topology,
    queues: &mut Vec<QueueSpec>,
    queue_keys: &mut Vec<String>,
) -> Result<Built> {
    let fp = "topology";
    if d.servers == 0 || d.clients == 0 {
        return bad(format!("{fp}.servers"), "the server and client pools need at least one host each");
    }
    pool_size(&format!("{fp}.servers"), d.servers)?;
    pool_size(&format!("{fp}.clients"), d.clients)?;
    let mut a = Adder { topo, queues, queue_keys };
    let n: Vec<u32> = [0, 1, 4, 5, 6, 7].iter().map(|i| a.node(&format!("n{i}"), NodeKind::Router)).collect();
    let (n0, n1, n4, n5, n6, n7) = (n[0], n[1], n[2], n[3], n[4], n[5]);
    let k = |key: &str| format!("{fp}.{key}");
    let (ar, ad, aq) = (k("access_rate_mbps"), k("access_delay_ms"), k("access_queue"));
    let (pr, pd, pq) = (k("path_rate_mbps"), k("path_delay_ms"), k("path_queue"));
    let (ak, pk) = (Keys::new(&ar, &ad, &aq), Keys::new(&pr, &pd, &pq));
    // Hosts attach with zero-delay links: only their rate and queue are the user's.
    let hk = Keys::new(&ar, &ad, &aq);
    a.duplex(ak, n0, n4, d.access_rate_mbps, d.access_delay_ms, &d.access_queue)?;
    let (p1, _) = a.duplex(pk, n4, n5, d.path_rate_mbps, d.path_delay_ms, &d.path_queue)?;
    a.duplex(pk, n5, n6, d.path_rate_mbps, d.path_delay_ms, &d.path_queue)?;
    a.duplex(pk, n4, n7, d.path_rate_mbps, d.path_delay_ms, &d.path_queue)?;
    a.duplex(pk, n7, n6, d.path_rate_mbps, d.path_delay_ms, &d.path_queue)?;
    a.duplex(ak, n6, n1, d.access_rate_mbps, d.access_delay_ms, &d.access_queue)?;
    let servers: Vec<u32> = (0..d.servers).map(|i| a.node(&format!("s{i}"), NodeKind::Host)).collect();
    for &s in &servers {
        a.duplex(hk, s, n0, d.access_rate_mbps, 0.0, &d.access_queue)?;
    }
    let clients: Vec<u32> = (0..d.clients).map(|i| a.node(&format!("c{i}"), NodeKind::Host)).collect();
    for &c in &clients {
        a.duplex(hk, c, n1, d.access_rate_mbps, 0.0, &d.access_queue)?;
    }
    let mut groups = BTreeMap::new();
    groups.insert("servers".to_string(), servers);
    groups.insert("clients".to_string(), clients);
    Ok(Built { groups, bottleneck: Some((p1, d.path_rate_mbps)) })
}
