//! Open-loop Poisson flow arrivals at a target load rho = lambda E[S] / C, E[S] in wire bytes
//! of data packets (the M/G/1-PS reading of Harchol-Balter et al.; FavorQueue 2013 and RIO-PS
//! size their loads this way). Draw order per arrival is fixed (pair, size, gap), so the
//! workload is a function of the seed alone.

use serde::Deserialize;

use super::{Actions, Direction, Ends, Env, Generator, Header, HostSel, Mode, SizeDist, SizeSpec, TrafficBlock};
use crate::engine::{secs_to_ns, Rng, Time};
use crate::error::Result;
use crate::spec::{bad, positive, rate_in, within_budget, MAX_FLOWS};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoissonSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    /// Target load rho = lambda E[S] / C (E[S] in wire bytes of data packets).
    #[serde(default)]
    pub load: Option<f64>,
    /// Or an explicit arrival rate, flows per second.
    #[serde(default)]
    pub rate_per_s: Option<f64>,
    /// Capacity C for the load, Mb/s; defaults to the dumbbell's bottleneck rate.
    #[serde(default)]
    pub capacity_mbps: Option<f64>,
    pub size: SizeSpec,
    /// Data senders: a host group, a host, or a list (default: the dumbbell's pairs).
    #[serde(default)]
    pub from: Option<HostSel>,
    /// Data receivers, likewise.
    #[serde(default)]
    pub to: Option<HostSel>,
    #[serde(default)]
    pub direction: Direction,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// TCP settings for this block's flows (keys of [tcp]); unset keys inherit [tcp].
    #[serde(default)]
    pub tcp: Option<toml::Table>,
}

/// Poisson arrivals, resolved.
#[derive(Clone, Debug)]
pub struct Poisson {
    pub mean_gap_s: f64,
    pub size: SizeDist,
    pub ends: Ends,
    pub mode: Mode,
    pub start: Time,
    pub stop: Time,
    rng: Rng,
}

impl TrafficBlock for PoissonSpec {
    type Gen = Poisson;
    fn header(&self) -> Header<'_> {
        Header { name: self.name.as_deref(), tag: &self.tag, tcp: self.tcp.as_ref() }
    }
    fn resolve(&self, field: &str, name: &str, env: &Env) -> Result<Poisson> {
        let p = self;
        let size = env.size(&format!("{field}.size"), &p.size)?;
        let (start_s, stop) = env.window_s(field, p.start_s, p.stop_s)?;
        let span = env.span_s(start_s, stop);
        let rate = match (p.load, p.rate_per_s) {
            (Some(_), Some(_)) => return bad(field, "give either `load` or `rate_per_s`, not both"),
            (None, None) => return bad(field, "a poisson block needs `load` (target utilisation) or `rate_per_s`"),
            (None, Some(r)) => {
                positive(&format!("{field}.rate_per_s"), r)?;
                within_budget(&format!("{field}.rate_per_s"), r * span, MAX_FLOWS, "flows")?;
                r
            }
            (Some(load), None) => {
                if !(load > 0.0 && load < 1.0) {
                    return bad(
                        format!("{field}.load"),
                        format!("open-loop arrivals need a load in (0, 1), got {load}"),
                    );
                }
                let cap = match (p.capacity_mbps, env.bottleneck_mbps) {
                    (Some(c), _) => {
                        rate_in(&format!("{field}.capacity_mbps"), c, 1e6, "Mb/s")?;
                        c
                    }
                    (None, Some(c)) => c,
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
                            "this size distribution has no finite mean, so no arrival rate gives a load \
                             (Pareto needs shape > 1)",
                        )
                    }
                };
                let r = load * cap * 1e6 / (mean * env.packet_bytes as f64 * 8.0);
                // A tiny mean size or a huge capacity implies an absurd arrival rate.
                within_budget(
                    &format!("{field}.load"),
                    r * span,
                    MAX_FLOWS,
                    "flows (arrivals at this load, size mean and capacity)",
                )?;
                r
            }
        };
        Ok(Poisson {
            mean_gap_s: 1.0 / rate,
            size,
            ends: env.ends(field, &p.from, &p.to, p.direction)?,
            mode: p.mode,
            start: secs_to_ns(p.start_s),
            stop: secs_to_ns(stop),
            rng: Rng::stream(env.seed, &format!("traffic/{name}")),
        })
    }
}

impl Generator for Poisson {
    fn start(&mut self, acts: &mut Actions) {
        acts.wake(self.start, 0);
    }
    fn step(&mut self, _arg: u32, acts: &mut Actions) {
        let now = acts.now();
        if now >= self.stop {
            return;
        }
        let rng = &mut self.rng;
        let (s, d) = self.ends.draw(rng);
        let n = self.size.sample(rng);
        let gap = secs_to_ns(rng.exp(self.mean_gap_s));
        let next = now.saturating_add(gap.max(1));
        acts.start_tcp(s, d, Some(n), self.mode, super::NO_SESSION);
        if next < self.stop {
            acts.wake(next, 0);
        }
    }
}
