//! Topology: named nodes (hosts and routers) joined by one-way links, and static
//! shortest-path routing (fewest hops; ties go to the lower link index, so routes are
//! deterministic). Builders for named topologies (the dumbbell) live in `scenario::build`.

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

    /// Next-hop table: `table[node * n + dst]` is the link to take from `node` towards
    /// `dst`, or `NO_ROUTE`. Breadth-first search from every destination over reversed
    /// links gives fewest-hop routes.
    pub fn routes(&self) -> Vec<u32> {
        let n = self.n_nodes();
        let mut table = vec![NO_ROUTE; n * n];
        // Incoming links of each node, in link-index order.
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

    /// Check that every host can reach every other host.
    pub fn check_connected(&self, table: &[u32]) -> Result<()> {
        let n = self.n_nodes();
        let hosts: Vec<usize> = (0..n).filter(|&i| self.node_kinds[i] == NodeKind::Host).collect();
        for &a in &hosts {
            for &b in &hosts {
                if a != b && table[a * n + b] == NO_ROUTE {
                    return Err(Error::input(
                        "topology",
                        format!(
                            "no route from node '{}' to node '{}': the graph is disconnected",
                            self.node_names[a], self.node_names[b]
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Links a packet crosses from `src` to `dst`.
    pub fn path(&self, table: &[u32], src: u32, dst: u32) -> Vec<u32> {
        let n = self.n_nodes();
        let mut out = Vec::new();
        let mut at = src;
        while at != dst {
            let l = table[at as usize * n + dst as usize];
            if l == NO_ROUTE || out.len() > n {
                break;
            }
            out.push(l);
            at = self.links[l as usize].to;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(from: u32, to: u32) -> LinkSpec {
        LinkSpec { name: format!("{from}->{to}"), from, to, rate_bps: 1e6, delay_ns: 1, loss: 0.0, queue: 0 }
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
            t.add_link(link(x, y));
            t.add_link(link(y, x));
        }
        let rt = t.routes();
        let p = t.path(&rt, a, b);
        assert_eq!(p.len(), 2);
        assert_eq!(t.links[p[0] as usize].to, r1);
        assert!(t.check_connected(&rt).is_ok());
        let mut t2 = t.clone();
        t2.add_node("c", NodeKind::Host);
        assert!(t2.check_connected(&t2.routes()).is_err());
    }
}
