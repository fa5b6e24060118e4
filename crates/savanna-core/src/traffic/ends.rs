//! Host selection shared by the traffic blocks: `from` / `to` name a host group (`servers`,
//! `clients1`, ... as the topology defines them), a host, or a list of either; without them
//! a block uses the topology's own pairs (the dumbbell's). Resolved once into `Ends`, which
//! generators draw (sender, receiver) pairs from.

use serde::Deserialize;

use super::{Direction, Env};
use crate::engine::Rng;
use crate::error::Result;
use crate::net::NodeKind;
use crate::spec::bad;

/// A host group name, a host name, or a list of them.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum HostSel {
    One(String),
    Many(Vec<String>),
}

impl HostSel {
    pub fn names(&self) -> Vec<String> {
        match self {
            HostSel::One(s) => vec![s.clone()],
            HostSel::Many(v) => v.clone(),
        }
    }
}

/// An inclusive integer range drawn uniformly.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntRange {
    pub min: u32,
    pub max: u32,
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

/// Resolve a block's `from`, `to` and `direction` (errors name `field.from`, `field.to`).
pub fn resolve(field: &str, from: &Option<HostSel>, to: &Option<HostSel>, dir: Direction, env: &Env) -> Result<Ends> {
    let (groups, topo) = (env.groups, env.topo);
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
        (None, None) if !env.pairs.is_empty() => Ends::Pairs(env.pairs.to_vec()),
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
