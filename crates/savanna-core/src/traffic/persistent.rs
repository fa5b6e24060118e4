//! Persistent flows: `count` never-ending bulk transfers, the i-th on the block's i-th host
//! pair, started `stagger_s` apart from `start_s` (the long-lived background of the RED and
//! RIO papers' experiments).

use serde::Deserialize;

use super::{Actions, Direction, Ends, Env, Generator, Header, HostSel, Mode, TrafficBlock, NO_SESSION};
use crate::engine::{secs_to_ns, Time};
use crate::error::Result;
use crate::spec::{bad, time0_s, within_budget, MAX_FLOWS, MAX_TIME_S};

fn d_count() -> u32 {
    1
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersistentSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    #[serde(default = "d_count")]
    pub count: u32,
    #[serde(default)]
    pub start_s: f64,
    /// Flows start `stagger_s` apart (0: all at start_s).
    #[serde(default)]
    pub stagger_s: f64,
    #[serde(default)]
    pub from: Option<HostSel>,
    #[serde(default)]
    pub to: Option<HostSel>,
    #[serde(default)]
    pub direction: Direction,
    #[serde(default)]
    pub tcp: Option<toml::Table>,
}

/// Persistent flows, resolved. Wake-up argument: the index of the flow to start.
#[derive(Clone, Debug)]
pub struct Persistent {
    pub count: u32,
    pub start: Time,
    pub stagger: Time,
    pub ends: Ends,
}

impl TrafficBlock for PersistentSpec {
    type Gen = Persistent;
    fn header(&self) -> Header<'_> {
        Header { name: self.name.as_deref(), tag: &self.tag, tcp: self.tcp.as_ref() }
    }
    fn resolve(&self, field: &str, _name: &str, env: &Env) -> Result<Persistent> {
        let p = self;
        time0_s(&format!("{field}.start_s"), p.start_s)?;
        time0_s(&format!("{field}.stagger_s"), p.stagger_s)?;
        if p.count == 0 {
            return bad(format!("{field}.count"), "must be at least 1");
        }
        within_budget(&format!("{field}.count"), p.count as f64, MAX_FLOWS, "flows")?;
        let last = p.start_s + p.stagger_s * (p.count - 1) as f64;
        if last > MAX_TIME_S {
            return bad(
                format!("{field}.stagger_s"),
                format!("the last flow would start at {last:e} s, beyond the clock's range ({MAX_TIME_S:e} s)"),
            );
        }
        Ok(Persistent {
            count: p.count,
            start: secs_to_ns(p.start_s),
            stagger: secs_to_ns(p.stagger_s),
            ends: env.ends(field, &p.from, &p.to, p.direction)?,
        })
    }
}

impl Generator for Persistent {
    fn start(&mut self, acts: &mut Actions) {
        acts.wake(self.start, 0);
    }
    fn step(&mut self, i: u32, acts: &mut Actions) {
        let (s, d) = self.ends.nth(i as usize);
        acts.start_tcp(s, d, None, Mode::Bulk, NO_SESSION);
        if i + 1 < self.count {
            acts.wake(acts.now() + self.stagger, i + 1);
        }
    }
}
