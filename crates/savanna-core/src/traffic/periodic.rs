//! Foreground probes: every `period_s` from `start_s` (once without a period), `count`
//! connections of `size` packets, each between a host drawn from `from` and one from `to`
//! (Guo & Matta 2001: 10 short every 25 s, 10 long every 125 s), tagged for analysis.

use serde::Deserialize;

use super::{Actions, Direction, Ends, Env, Generator, Header, HostSel, Mode, SizeDist, SizeSpec, TrafficBlock};
use crate::engine::{secs_to_ns, Rng, Time};
use crate::error::Result;
use crate::spec::{bad, time_s, within_budget, MAX_FLOWS, MAX_TICKS};

fn d_count() -> u32 {
    1
}

/// Foreground probes: every `period_s` from `start_s` (once if no period), start `count`
/// connections of `size` packets, each between a host drawn from `from` and one from `to`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeriodicSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    #[serde(default = "d_count")]
    pub count: u32,
    pub size: SizeSpec,
    #[serde(default)]
    pub period_s: Option<f64>,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
    #[serde(default)]
    pub from: Option<HostSel>,
    #[serde(default)]
    pub to: Option<HostSel>,
    #[serde(default)]
    pub direction: Direction,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub tcp: Option<toml::Table>,
}

/// Periodic probes, resolved. Wake-up argument: the round number.
#[derive(Clone, Debug)]
pub struct Periodic {
    pub count: u32,
    pub size: SizeDist,
    pub period: Option<Time>,
    pub ends: Ends,
    pub mode: Mode,
    pub start: Time,
    pub stop: Time,
    rng: Rng,
}

impl TrafficBlock for PeriodicSpec {
    type Gen = Periodic;
    fn header(&self) -> Header<'_> {
        Header { name: self.name.as_deref(), tag: &self.tag, tcp: self.tcp.as_ref() }
    }
    fn resolve(&self, field: &str, name: &str, env: &Env) -> Result<Periodic> {
        let p = self;
        if p.count == 0 {
            return bad(format!("{field}.count"), "must be at least 1");
        }
        let (a, b) = env.window_s(field, p.start_s, p.stop_s)?;
        let rounds = match p.period_s {
            Some(x) => {
                time_s(&format!("{field}.period_s"), x)?;
                let r = (env.span_s(a, b) / x).ceil();
                within_budget(&format!("{field}.period_s"), r, MAX_TICKS, "bursts")?;
                r
            }
            None => 1.0,
        };
        within_budget(&format!("{field}.count"), rounds * p.count as f64, MAX_FLOWS, "flows")?;
        let (start, stop) = env.window(field, p.start_s, p.stop_s)?;
        Ok(Periodic {
            count: p.count,
            size: env.size(&format!("{field}.size"), &p.size)?,
            period: p.period_s.map(secs_to_ns),
            ends: env.ends(field, &p.from, &p.to, p.direction)?,
            mode: p.mode,
            start,
            stop,
            rng: Rng::stream(env.seed, &format!("traffic/{name}")),
        })
    }
}

impl Generator for Periodic {
    fn start(&mut self, acts: &mut Actions) {
        acts.wake(self.start, 0);
    }
    fn step(&mut self, round: u32, acts: &mut Actions) {
        let now = acts.now();
        if now >= self.stop {
            return;
        }
        // Draw order per connection: pair, size. The starts happen after the step returns.
        for _ in 0..self.count {
            let (s, d) = self.ends.draw(&mut self.rng);
            let n = self.size.sample(&mut self.rng);
            acts.start_tcp(s, d, Some(n), self.mode, super::NO_SESSION);
        }
        if let Some(p) = self.period {
            if now.saturating_add(p) < self.stop {
                acts.wake(now + p, round + 1);
            }
        }
    }
}
