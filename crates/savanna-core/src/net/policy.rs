//! Path policies at an edge node with parallel paths (Matta & Guo 2000, section III-A):
//!
//! - `load_balanced`: each flow goes to a path drawn uniformly at random when its first
//!   packet reaches the node;
//! - `size_based`: a flow whose true size is at most `threshold_pkts` takes path 1, a larger
//!   (or endless) one path 2;
//! - `threshold`: every flow starts on path 1 and moves to path 2 once `threshold_pkts` of its
//!   packets have been seen at the node; packets already in flight on path 1 may then arrive
//!   after later ones sent on path 2 (reordering, as in the paper).
//!
//! A path is a next hop of the node; beyond it, packets follow the normal shortest-path
//! routes. The policy covers every destination that at least two of the candidate next hops
//! reach without coming back through the node; other packets are routed normally. State is
//! per flow (kept in the simulator's flow table), so a flow's packets see one policy node.

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::net::topology::{Routes, NO_ROUTE};
use crate::net::Topology;

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PolicyKind {
    LoadBalanced,
    SizeBased,
    Threshold,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathPolicySpec {
    /// The edge node that splits flows.
    pub node: String,
    pub policy: PolicyKind,
    /// Candidate next hops in path order (path 1 first). Default: every neighbour with a
    /// loop-free route, in link order.
    #[serde(default)]
    pub next_hops: Vec<String>,
    /// Size (size_based) or packet count (threshold) that separates the paths. Matta & Guo
    /// Table IV: 75 packets size-based, 32 packets threshold-based.
    #[serde(default)]
    pub threshold_pkts: Option<u64>,
}

/// Resolved policy: for each destination node, the candidate links out of `node` (path 1
/// first), or an empty list when the policy does not cover it.
#[derive(Clone, Debug)]
pub struct PathPolicy {
    pub node: u32,
    pub kind: PolicyKind,
    pub threshold: u64,
    /// Names of the candidate next hops, path order.
    pub hop_names: Vec<String>,
    /// `cands[dst]`: (path index, link) pairs usable towards dst.
    pub cands: Vec<Vec<(u8, u32)>>,
}

impl PathPolicySpec {
    pub fn resolve(&self, field: &str, topo: &Topology, routes: &Routes) -> Result<PathPolicy> {
        let n = topo.n_nodes();
        let node = topo
            .node(&self.node)
            .ok_or_else(|| Error::input(format!("{field}.node"), format!("no node named '{}'", self.node)))?;
        let threshold = match (self.policy, self.threshold_pkts) {
            (PolicyKind::LoadBalanced, Some(_)) => {
                return Err(Error::input(format!("{field}.threshold_pkts"), "load_balanced takes no threshold"))
            }
            (PolicyKind::LoadBalanced, None) => 0,
            (_, None) => {
                return Err(Error::input(
                    format!("{field}.threshold_pkts"),
                    "required for size_based and threshold policies (packets)",
                ))
            }
            (_, Some(0)) => return Err(Error::input(format!("{field}.threshold_pkts"), "must be at least 1 packet")),
            (_, Some(t)) => t,
        };
        // Links out of the node, by neighbour.
        let out: Vec<(u32, u32)> =
            topo.links.iter().enumerate().filter(|(_, l)| l.from == node).map(|(i, l)| (l.to, i as u32)).collect();
        let hops: Vec<(u32, u32)> = if self.next_hops.is_empty() {
            out.clone()
        } else {
            let mut v = Vec::new();
            for (i, h) in self.next_hops.iter().enumerate() {
                let f = format!("{field}.next_hops[{i}]");
                let id = topo.node(h).ok_or_else(|| Error::input(&f, format!("no node named '{h}'")))?;
                if self.next_hops[..i].contains(h) {
                    return Err(Error::input(&f, format!("'{h}' is listed twice; each next hop once")));
                }
                match out.iter().find(|(to, _)| *to == id) {
                    Some(&x) => v.push(x),
                    None => return Err(Error::input(&f, format!("'{h}' is not a neighbour of '{}'", self.node))),
                }
            }
            v
        };
        // Does the route from `from` to `dst` avoid `node`?
        let avoids = |from: u32, dst: u32| -> bool {
            let mut at = from;
            for _ in 0..=n {
                if at == dst {
                    return true;
                }
                if at == node {
                    return false;
                }
                let l = routes.next_hop(at, dst);
                if l == NO_ROUTE {
                    return false;
                }
                at = topo.links[l as usize].to;
            }
            false
        };
        let mut cands = vec![Vec::new(); n];
        let mut used = vec![false; hops.len()];
        for (dst, c) in cands.iter_mut().enumerate() {
            if dst as u32 == node {
                continue;
            }
            let ok: Vec<(u8, u32)> = hops
                .iter()
                .enumerate()
                .filter(|(_, (h, _))| avoids(*h, dst as u32))
                .map(|(i, (_, l))| (i as u8, *l))
                .collect();
            if ok.len() >= 2 {
                for &(i, _) in &ok {
                    used[i as usize] = true;
                }
                *c = ok;
            }
        }
        if cands.iter().all(|c| c.is_empty()) {
            return Err(Error::input(
                format!("{field}.node"),
                format!(
                    "node '{}' has only one path to every destination; a path policy needs a node with parallel paths",
                    self.node
                ),
            ));
        }
        if !self.next_hops.is_empty() {
            if let Some(i) = used.iter().position(|u| !u) {
                return Err(Error::input(
                    format!("{field}.next_hops[{i}]"),
                    format!("'{}' reaches no destination that another next hop also reaches", self.next_hops[i]),
                ));
            }
        }
        let hop_names = hops.iter().map(|(h, _)| topo.node_names[*h as usize].clone()).collect();
        Ok(PathPolicy { node, kind: self.policy, threshold, hop_names, cands })
    }
}
