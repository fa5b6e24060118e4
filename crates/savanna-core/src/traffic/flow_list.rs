//! Explicit flow lists: flows given inline (`flows = [{ start_s, size_pkts, src, dst }]`) or
//! read from a CSV file with the header `start_s,size_pkts,src,dst`, started at their times
//! (a missing size is a persistent flow).

use std::path::Path;

use serde::Deserialize;

use super::{Actions, Env, Generator, Header, Mode, TrafficBlock, NO_SESSION};
use crate::engine::{secs_to_ns, Time};
use crate::error::{Error, Result};
use crate::net::{NodeKind, Topology};
use crate::spec::{bad, time0_s};

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

/// One flow of a flow list: start, size in packets (None: persistent), data sender, data
/// receiver.
pub type ListedFlow = (Time, Option<u64>, u32, u32);

/// A flow list, resolved: flows by start time. Wake-up argument: the next flow's index.
#[derive(Clone, Debug)]
pub struct FlowList {
    pub flows: Vec<ListedFlow>,
    pub mode: Mode,
}

impl TrafficBlock for FlowListSpec {
    type Gen = FlowList;
    fn header(&self) -> Header<'_> {
        Header { name: self.name.as_deref(), tag: &self.tag, tcp: self.tcp.as_ref() }
    }
    fn resolve(&self, field: &str, _name: &str, env: &Env) -> Result<FlowList> {
        Ok(FlowList { flows: flow_list(field, self, env.topo, env.base_dir)?, mode: self.mode })
    }
}

impl Generator for FlowList {
    fn start(&mut self, acts: &mut Actions) {
        if let Some(f) = self.flows.first() {
            acts.wake(f.0, 0);
        }
    }
    fn step(&mut self, i: u32, acts: &mut Actions) {
        let (_, size, s, d) = self.flows[i as usize];
        acts.start_tcp(s, d, size, self.mode, NO_SESSION);
        if let Some(f) = self.flows.get(i as usize + 1) {
            acts.wake(f.0, i + 1);
        }
    }
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
        time0_s(&format!("{f2}.start_s"), e.start_s)?;
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
