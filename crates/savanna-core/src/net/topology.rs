//! Topology: named nodes (hosts and routers) joined by one-way links, and static
//! shortest-path routing (fewest hops; ties go to the lower link index, so routes are
//! deterministic). Builders for named topologies (the dumbbell) live in `scenario::build`.
//!
//! Routes are stored compressed: a leaf host (one link out and one link in, both to the
//! same non-leaf node) routes everything through that node, and every route towards it is
//! the route towards that node plus the last link. So only the routes among the other
//! ("core") nodes are kept in a square table: memory is O(C^2 + N), C core nodes, N nodes
//! (a dumbbell of 100000 pairs has C = 2). `Routes::next_hop` gives exactly the link the
//! full breadth-first table would, in O(1) and without allocating. Small networks (at most
//! `DENSE_MAX_NODES` nodes) also get the full table, filled from the compressed one: one
//! load per hop instead of two to four dependent ones (the dumbbell's forwarding path).

use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Router,
}

/// One direction of a link; the queue discipline sits at its sending end.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: f64,
    pub delay_ns: u64,
    /// Bernoulli loss probability applied to each packet that finishes transmission.
    pub loss: f64,
    /// Index into the scenario's queue specifications.
    pub queue: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub node_names: Vec<String>,
    pub node_kinds: Vec<NodeKind>,
    pub links: Vec<LinkSpec>,
}

pub const NO_ROUTE: u32 = u32::MAX;
const NONE: u32 = u32::MAX;

/// Most core nodes (nodes that are not leaf hosts) whose square route table we build: 20000
/// core nodes would take 1.6 GB.
pub const MAX_CORE_NODES: usize = 20_000;

/// Most nodes for which `Routes` also keeps the full N x N table (256 KiB at this size).
pub const DENSE_MAX_NODES: usize = 256;

/// Static next-hop routes, compressed (see the module header).
#[derive(Clone, Debug, Default)]
pub struct Routes {
    /// Per node: its core index, or NONE for a leaf host.
    core_idx: Vec<u32>,
    /// Per node: for a leaf host, (attachment node, link out, link in); unused otherwise.
    leaf: Vec<(u32, u32, u32)>,
    n_core: usize,
    /// `core[ci(at) * n_core + ci(dst)]`: the link from core node `at` towards core node `dst`.
    core: Vec<u32>,
    /// `dense[at * n + dst]`: the full table when n <= DENSE_MAX_NODES, else empty.
    dense: Vec<u32>,
    n: usize,
}

impl Routes {
    /// The link to take from `at` towards `dst`, or NO_ROUTE (also when `at == dst`).
    #[inline]
    pub fn next_hop(&self, at: u32, dst: u32) -> u32 {
        if !self.dense.is_empty() {
            return self.dense[at as usize * self.n + dst as usize];
        }
        self.next_hop_compressed(at, dst)
    }

    fn next_hop_compressed(&self, at: u32, dst: u32) -> u32 {
        if at == dst {
            return NO_ROUTE;
        }
        let ca = self.core_idx[at as usize];
        if ca == NONE {
            // A leaf host sends everything on its one link, if its attachment node can go on.
            let (r, out, _) = self.leaf[at as usize];
            return if r == dst || self.next_hop_compressed(r, dst) != NO_ROUTE { out } else { NO_ROUTE };
        }
        let cd = self.core_idx[dst as usize];
        if cd != NONE {
            return self.core[ca as usize * self.n_core + cd as usize];
        }
        let (r, _, inl) = self.leaf[dst as usize];
        if r == at {
            inl
        } else {
            self.core[ca as usize * self.n_core + self.core_idx[r as usize] as usize]
        }
    }
}

impl Topology {
    pub fn add_node(&mut self, name: impl Into<String>, kind: NodeKind) -> u32 {
        self.node_names.push(name.into());
        self.node_kinds.push(kind);
        (self.node_names.len() - 1) as u32
    }
    pub fn add_link(&mut self, spec: LinkSpec) -> u32 {
        self.links.push(spec);
        (self.links.len() - 1) as u32
    }
    pub fn n_nodes(&self) -> usize {
        self.node_names.len()
    }
    pub fn node(&self, name: &str) -> Option<u32> {
        self.node_names.iter().position(|n| n == name).map(|i| i as u32)
    }

    /// Leaf hosts: (attachment node, link out, link in) of each node that is one, else None.
    fn leaves(&self) -> Vec<Option<(u32, u32, u32)>> {
        let n = self.n_nodes();
        let (mut out, mut inc) = (vec![(0u32, NONE); n], vec![(0u32, NONE); n]);
        for (i, l) in self.links.iter().enumerate() {
            let o = &mut out[l.from as usize];
            *o = (o.0 + 1, i as u32);
            let c = &mut inc[l.to as usize];
            *c = (c.0 + 1, i as u32);
        }
        let cand: Vec<Option<(u32, u32, u32)>> = (0..n)
            .map(|v| {
                let ((no, lo), (ni, li)) = (out[v], inc[v]);
                let r = self.links.get(lo as usize).map(|l| l.to);
                let ok = self.node_kinds[v] == NodeKind::Host
                    && no == 1
                    && ni == 1
                    && r.is_some_and(|r| r as usize != v && self.links[li as usize].from == r);
                ok.then(|| (r.unwrap_or(0), lo, li))
            })
            .collect();
        // A leaf hangs off a core node: of two hosts joined only to each other, neither is one.
        (0..n).map(|v| cand[v].filter(|&(r, _, _)| cand[r as usize].is_none())).collect()
    }

    /// Fewest-hop next hops. Breadth-first search from every core destination over reversed
    /// links; leaf hosts neither transit nor change any other node's route, so the search
    /// skips them. Fails (naming `topology`) if the core is too large to tabulate.
    pub fn routes(&self) -> Result<Routes> {
        let n = self.n_nodes();
        let leaves = self.leaves();
        let mut core_idx = vec![NONE; n];
        let mut core_nodes = Vec::new();
        for v in 0..n {
            if leaves[v].is_none() {
                core_idx[v] = core_nodes.len() as u32;
                core_nodes.push(v as u32);
            }
        }
        let nc = core_nodes.len();
        if nc > MAX_CORE_NODES {
            return Err(Error::input(
                "topology",
                format!(
                    "{nc} nodes that are routers or hosts with more than one link; routing supports at most \
                        {MAX_CORE_NODES}"
                ),
            ));
        }
        let leaf = leaves.iter().map(|l| l.unwrap_or((NONE, NONE, NONE))).collect();
        let mut core = vec![NO_ROUTE; nc * nc];
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, l) in self.links.iter().enumerate() {
            if leaves[l.from as usize].is_none() {
                incoming[l.to as usize].push(i as u32);
            }
        }
        let mut seen = vec![false; nc];
        let mut frontier = std::collections::VecDeque::new();
        for (cd, &dst) in core_nodes.iter().enumerate() {
            seen.iter_mut().for_each(|d| *d = false);
            seen[cd] = true;
            frontier.clear();
            frontier.push_back(dst);
            while let Some(v) = frontier.pop_front() {
                for &li in &incoming[v as usize] {
                    let u = self.links[li as usize].from;
                    let cu = core_idx[u as usize] as usize;
                    if !seen[cu] {
                        seen[cu] = true;
                        core[cu * nc + cd] = li;
                        frontier.push_back(u);
                    }
                }
            }
        }
        let mut routes = Routes { core_idx, leaf, n_core: nc, core, dense: Vec::new(), n };
        if n <= DENSE_MAX_NODES {
            routes.dense = (0..n * n).map(|i| routes.next_hop_compressed((i / n) as u32, (i % n) as u32)).collect();
        }
        Ok(routes)
    }

    /// Check that every host can reach every other host. Hosts are grouped by the core
    /// node they hang off (themselves if core): two hosts of one group reach each other,
    /// and others do when their core nodes do. The error names the first unreachable pair
    /// in node order.
    pub fn check_connected(&self, routes: &Routes) -> Result<()> {
        let n = self.n_nodes();
        let rep = |v: usize| -> u32 {
            if routes.core_idx[v] == NONE {
                routes.leaf[v].0
            } else {
                v as u32
            }
        };
        let hosts: Vec<usize> = (0..n).filter(|&i| self.node_kinds[i] == NodeKind::Host).collect();
        // The first host (in node order) hanging off each core node.
        let mut first = vec![NONE; n];
        for &h in &hosts {
            let r = rep(h) as usize;
            if first[r] == NONE {
                first[r] = h as u32;
            }
        }
        let reps: Vec<u32> = (0..n as u32).filter(|&r| first[r as usize] != NONE).collect();
        // For each group, the first host of another group it cannot reach.
        let mut cut = vec![NONE; n];
        for &a in &reps {
            for &b in &reps {
                if a != b && routes.next_hop(a, b) == NO_ROUTE {
                    cut[a as usize] = cut[a as usize].min(first[b as usize]);
                }
            }
        }
        for &a in &hosts {
            let b = cut[rep(a) as usize];
            if b != NONE {
                return Err(Error::input(
                    "topology",
                    format!(
                        "no route from node '{}' to node '{}': the graph is disconnected",
                        self.node_names[a], self.node_names[b as usize]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Links a packet crosses from `src` to `dst`.
    pub fn path(&self, routes: &Routes, src: u32, dst: u32) -> Vec<u32> {
        let n = self.n_nodes();
        let mut out = Vec::new();
        let mut at = src;
        while at != dst {
            let l = routes.next_hop(at, dst);
            if l == NO_ROUTE || out.len() > n {
                break;
            }
            out.push(l);
            at = self.links[l as usize].to;
        }
        out
    }

    /// The uncompressed table (`table[node * n + dst]`), built by a breadth-first search
    /// from every node: the reference `Routes` is checked against in tests.
    #[cfg(test)]
    fn full_routes(&self) -> Vec<u32> {
        let n = self.n_nodes();
        let mut table = vec![NO_ROUTE; n * n];
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, l) in self.links.iter().enumerate() {
            incoming[l.to as usize].push(i as u32);
        }
        let mut dist = vec![u32::MAX; n];
        let mut frontier = std::collections::VecDeque::new();
        for dst in 0..n {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            frontier.clear();
            frontier.push_back(dst as u32);
            while let Some(v) = frontier.pop_front() {
                for &li in &incoming[v as usize] {
                    let u = self.links[li as usize].from as usize;
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v as usize] + 1;
                        table[u * n + dst] = li;
                        frontier.push_back(u as u32);
                    }
                }
            }
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(from: u32, to: u32) -> LinkSpec {
        LinkSpec { name: format!("{from}->{to}"), from, to, rate_bps: 1e6, delay_ns: 1, loss: 0.0, queue: 0 }
    }

    fn duplex(t: &mut Topology, x: u32, y: u32) {
        t.add_link(link(x, y));
        t.add_link(link(y, x));
    }

    #[test]
    fn fewest_hops_with_deterministic_ties() {
        // a - r1 - b and a - r2 - r3 - b: the two-hop path wins.
        let mut t = Topology::default();
        let a = t.add_node("a", NodeKind::Host);
        let b = t.add_node("b", NodeKind::Host);
        let r1 = t.add_node("r1", NodeKind::Router);
        let r2 = t.add_node("r2", NodeKind::Router);
        let r3 = t.add_node("r3", NodeKind::Router);
        for (x, y) in [(a, r2), (r2, r3), (r3, b), (a, r1), (r1, b)] {
            duplex(&mut t, x, y);
        }
        let rt = t.routes().unwrap();
        let p = t.path(&rt, a, b);
        assert_eq!(p.len(), 2);
        assert_eq!(t.links[p[0] as usize].to, r1);
        assert!(t.check_connected(&rt).is_ok());
        let mut t2 = t.clone();
        t2.add_node("c", NodeKind::Host);
        assert!(t2.check_connected(&t2.routes().unwrap()).is_err());
    }

    /// Every (at, dst) of the compressed routes against the full breadth-first table.
    fn same_as_full(t: &Topology) {
        let rt = t.routes().unwrap();
        let full = t.full_routes();
        let n = t.n_nodes();
        for at in 0..n {
            for dst in 0..n {
                assert_eq!(rt.next_hop(at as u32, dst as u32), full[at * n + dst], "{at} -> {dst}");
            }
        }
    }

    #[test]
    fn compressed_routes_equal_the_full_table_on_leaves_multihomed_hosts_and_cuts() {
        // Routers r0-r1-r2 in a row and r0-r2 directly; leaf hosts on each; a multihomed
        // host m on r0 and r1; a host pair joined only to each other; a one-way leaf.
        let mut t = Topology::default();
        let r: Vec<u32> = (0..3).map(|i| t.add_node(format!("r{i}"), NodeKind::Router)).collect();
        duplex(&mut t, r[0], r[1]);
        duplex(&mut t, r[1], r[2]);
        duplex(&mut t, r[2], r[0]);
        for i in 0..6 {
            let h = t.add_node(format!("h{i}"), NodeKind::Host);
            duplex(&mut t, h, r[i % 3]);
        }
        let m = t.add_node("m", NodeKind::Host);
        duplex(&mut t, m, r[0]);
        duplex(&mut t, m, r[1]);
        let p = t.add_node("p", NodeKind::Host);
        let q = t.add_node("q", NodeKind::Host);
        duplex(&mut t, p, q);
        let o = t.add_node("o", NodeKind::Host);
        t.add_link(link(o, r[2]));
        let s = t.add_node("s", NodeKind::Host);
        t.add_link(link(r[1], s));
        t.add_link(link(s, r[2]));
        same_as_full(&t);
        // Disconnected: the error names the first pair in node order, as the full table would.
        let err = t.check_connected(&t.routes().unwrap()).unwrap_err().to_string();
        assert!(err.contains("'h0' to node 'p'"), "{err}");
    }

    #[test]
    fn a_dumbbell_of_100000_pairs_routes_in_linear_memory() {
        let mut t = Topology::default();
        let (l, r) = (t.add_node("left", NodeKind::Router), t.add_node("right", NodeKind::Router));
        duplex(&mut t, l, r);
        for i in 0..100_000 {
            let s = t.add_node(format!("s{i}"), NodeKind::Host);
            let d = t.add_node(format!("d{i}"), NodeKind::Host);
            duplex(&mut t, s, l);
            duplex(&mut t, d, r);
        }
        let rt = t.routes().unwrap();
        assert_eq!(rt.n_core, 2);
        assert!(t.check_connected(&rt).is_ok());
        let p = t.path(&rt, 2, 5);
        let names: Vec<&str> = p.iter().map(|&k| t.links[k as usize].name.as_str()).collect();
        assert_eq!(names, ["2->0", "0->1", "1->5"]);
    }
}
