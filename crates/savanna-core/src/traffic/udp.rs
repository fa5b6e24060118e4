//! UDP flows: constant bit rate (Matta & Guo 2000 Table II: 16 kb/s, 125 B packets, Pareto
//! lifetimes and inter-arrivals) or Poisson packet streams (a low-rate interactive,
//! telnet-like background). The generator is also the flows' sender: it paces their packets
//! (one wake-up per packet) and draws Poisson gaps from the block's stream.

use serde::Deserialize;

use super::{Actions, Direction, Ends, Env, Generator, Header, HostSel, SizeDist, SizeSpec, TrafficBlock};
use crate::engine::{secs_to_ns, Rng, Time};
use crate::error::Result;
use crate::spec::{bad, rate_in, within_budget, MAX_FLOWS, MAX_UDP_PACKETS};

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum UdpPattern {
    /// Evenly spaced packets at `rate_kbps`.
    #[default]
    Cbr,
    /// Exponential gaps with mean packet_bytes * 8 / rate (a low-rate interactive source).
    Poisson,
}

fn d_udp_rate() -> f64 {
    16.0
}
fn d_udp_bytes() -> u32 {
    125
}

/// UDP flows. New flows arrive `interarrival_s` apart (Matta & Guo: Pareto, shape 1.2,
/// mean 1 s) and each lives `lifetime_s` (Pareto, shape 1.25, mean 300 s), sending
/// `packet_bytes`-byte packets at `rate_kbps`. `initial` flows start at `start_s` besides.
/// Without `interarrival_s` only the `initial` flows run (e.g. six telnet-like sources).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    #[serde(default = "d_udp_rate")]
    pub rate_kbps: f64,
    #[serde(default = "d_udp_bytes")]
    pub packet_bytes: u32,
    #[serde(default)]
    pub pattern: UdpPattern,
    #[serde(default)]
    pub interarrival_s: Option<SizeSpec>,
    /// Lifetime, seconds (unset: until the end of the run).
    #[serde(default)]
    pub lifetime_s: Option<SizeSpec>,
    #[serde(default)]
    pub initial: u32,
    #[serde(default)]
    pub from: Option<HostSel>,
    #[serde(default)]
    pub to: Option<HostSel>,
    #[serde(default)]
    pub direction: Direction,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
}

/// A running UDP flow.
#[derive(Clone, Copy, Debug)]
struct Sender {
    flow: u32,
    sent: u64,
    /// Packets to send (None: until the block stops).
    total: Option<u64>,
}

/// Wake-up arguments: the initial flows, a flow arrival, and (from `SEND`) the next packet
/// of sender `arg - SEND`.
const INITIAL: u32 = 0;
const ARRIVAL: u32 = 1;
const SEND: u32 = 2;

/// UDP flows, resolved.
#[derive(Clone, Debug)]
pub struct Udp {
    /// Mean gap between packets, ns (exact for CBR).
    pub gap_ns: f64,
    pub pkt_bytes: u32,
    pub poisson: bool,
    pub interarrival: Option<SizeDist>,
    pub lifetime: Option<SizeDist>,
    pub initial: u32,
    pub ends: Ends,
    pub start: Time,
    pub stop: Time,
    rng: Rng,
    senders: Vec<Sender>,
    free: Vec<u32>,
    /// Flows drawn in the current step, waiting to start (reused).
    todo: Vec<(u32, u32, Option<u64>)>,
}

impl TrafficBlock for UdpSpec {
    type Gen = Udp;
    fn header(&self) -> Header<'_> {
        Header { name: self.name.as_deref(), tag: &self.tag, tcp: None }
    }
    fn resolve(&self, field: &str, name: &str, env: &Env) -> Result<Udp> {
        let u = self;
        rate_in(&format!("{field}.rate_kbps"), u.rate_kbps, 1e3, "kb/s")?;
        if u.packet_bytes < 28 || u.packet_bytes > 65_535 {
            return bad(
                format!("{field}.packet_bytes"),
                format!("must be between 28 and 65535, got {}", u.packet_bytes),
            );
        }
        if u.interarrival_s.is_none() && u.initial == 0 {
            return bad(field, "a udp block needs `interarrival_s` (flow arrivals) or `initial` flows");
        }
        let (start, stop) = env.window(field, u.start_s, u.stop_s)?;
        let gap_ns = u.packet_bytes as f64 * 8.0 / (u.rate_kbps * 1e3) * 1e9;
        if gap_ns < 1.0 {
            return bad(
                format!("{field}.rate_kbps"),
                format!("packets of {} B would leave less than 1 ns apart (the clock's tick)", u.packet_bytes),
            );
        }
        let interarrival = env.time_opt(&format!("{field}.interarrival_s"), &u.interarrival_s)?;
        let lifetime = env.time_opt(&format!("{field}.lifetime_s"), &u.lifetime_s)?;
        // Expected flows and packets over the run, against the budgets.
        let (a, b) = env.window_s(field, u.start_s, u.stop_s)?;
        let span = env.span_s(a, b);
        let arrivals = match &interarrival {
            Some(d) => {
                let m = d.mean().unwrap_or(f64::INFINITY);
                let n = span / m;
                within_budget(&format!("{field}.interarrival_s"), n, MAX_FLOWS, "flows")?;
                n
            }
            None => 0.0,
        };
        let life = lifetime.as_ref().and_then(|d| d.mean()).unwrap_or(span).min(span);
        let pkts = (u.initial as f64 + arrivals) * life * 1e9 / gap_ns;
        within_budget(&format!("{field}.rate_kbps"), pkts, MAX_UDP_PACKETS, "UDP packets")?;
        Ok(Udp {
            gap_ns,
            pkt_bytes: u.packet_bytes,
            poisson: u.pattern == UdpPattern::Poisson,
            interarrival,
            lifetime,
            initial: u.initial,
            ends: env.ends(field, &u.from, &u.to, u.direction)?,
            start,
            stop,
            rng: Rng::stream(env.seed, &format!("traffic/{name}")),
            senders: Vec::new(),
            free: Vec::new(),
            todo: Vec::new(),
        })
    }
}

impl Udp {
    /// Send sender `k`'s next packet, then end the flow or ask to be woken for the next.
    fn send(&mut self, k: u32, acts: &mut Actions) {
        let now = acts.now();
        let u = &mut self.senders[k as usize];
        acts.send_udp(u.flow, u.sent as u32, self.pkt_bytes);
        u.sent += 1;
        if u.total.is_some_and(|n| u.sent >= n) || now >= self.stop {
            acts.end_udp(u.flow);
            self.free.push(k);
            return;
        }
        let gap = if self.poisson { self.rng.exp(self.gap_ns) } else { self.gap_ns };
        acts.wake(now.saturating_add((gap.round() as Time).max(1)), SEND + k);
    }
}

impl Generator for Udp {
    fn start(&mut self, acts: &mut Actions) {
        acts.wake(self.start, INITIAL);
    }

    fn step(&mut self, arg: u32, acts: &mut Actions) {
        if arg >= SEND {
            return self.send(arg - SEND, acts);
        }
        let now = acts.now();
        if now >= self.stop {
            return;
        }
        let starts = if arg == INITIAL { self.initial } else { 1 };
        // Draw order: (pair, lifetime) per new flow, the next arrival, then each flow's
        // first packet (and its Poisson gap).
        let mut todo = std::mem::take(&mut self.todo);
        for _ in 0..starts {
            let (s, d) = self.ends.draw(&mut self.rng);
            let total =
                self.lifetime.as_ref().map(|l| ((l.draw(&mut self.rng) * 1e9 / self.gap_ns).round() as u64).max(1));
            todo.push((s, d, total));
        }
        let next = self.interarrival.as_ref().map(|g| now.saturating_add(secs_to_ns(g.draw(&mut self.rng)).max(1)));
        for &(s, d, total) in &todo {
            let flow = acts.start_udp(s, d, total);
            let sender = Sender { flow, sent: 0, total };
            let k = match self.free.pop() {
                Some(k) => {
                    self.senders[k as usize] = sender;
                    k
                }
                None => {
                    self.senders.push(sender);
                    (self.senders.len() - 1) as u32
                }
            };
            self.send(k, acts);
        }
        todo.clear();
        self.todo = todo;
        if let Some(at) = next {
            if at < self.stop {
                acts.wake(at, ARRIVAL);
            }
        }
    }

    fn udp_packet_bytes(&self) -> Option<u32> {
        Some(self.pkt_bytes)
    }
}
