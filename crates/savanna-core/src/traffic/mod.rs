//! Workloads: what creates flows, when, between which hosts, and of what size. Every
//! generator draws from its own RNG stream (named after its block), so runs that differ only
//! in queue discipline carry exactly the same flows (the seed rule of design.md).
//!
//! One file per generator (poisson, persistent, flow list, web, closed loop, periodic, udp),
//! each owning its scenario block (`...Spec`: fields, defaults, docs), its checks and
//! resolution (`TrafficBlock::resolve`, errors naming the field) and its runtime state (the
//! `Generator` it resolves into). A generator never touches the simulator: it is woken with
//! an argument it chose and answers by pushing requests into an `Actions` buffer (start a
//! TCP or UDP flow, send a UDP packet, wake me at t), which the simulator then carries out
//! in the order they were pushed. Adding a generator is one file and one `registry!` line.

pub mod closed_loop;
pub mod dist;
pub mod ends;
pub mod flow_list;
pub mod periodic;
pub mod persistent;
pub mod poisson;
pub mod size;
pub mod udp;
pub mod web;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::engine::{secs_to_ns, Time};
use crate::error::Result;
use crate::net::Topology;
use crate::spec::{bad, time0_s, MAX_TIME_S};
pub use dist::SizeDist;
pub use ends::{Ends, HostSel, IntRange};
pub use size::{size_dist_mss, SizeSpec, SizeUnit};

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Senders on the left, receivers on the right.
    #[default]
    Forward,
    /// Data from the right-hand hosts to the left-hand ones.
    Reverse,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The connection's initiator sends `size` packets.
    #[default]
    Bulk,
    /// The initiator (the data receiver) sends a one-packet request and the responder
    /// answers with the object.
    RequestResponse,
}

/// `session` of a flow that belongs to no session.
pub const NO_SESSION: u32 = u32::MAX;

/// What a generator asks the simulator to do. Flow ids are handed out by `Actions` in the
/// order of the start requests; the simulator creates the flows in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Open a TCP connection carrying `size` data packets (None: persistent) from `src` to
    /// `dst`; `session` is echoed in `Generator::flow_done` when its data has all arrived.
    StartTcp { id: u32, src: u32, dst: u32, size: Option<u64>, mode: Mode, session: u32 },
    /// Start a UDP flow from `src` to `dst` of `total` packets (None: until it ends).
    StartUdp { id: u32, src: u32, dst: u32, total: Option<u64> },
    /// Send packet `seq` of UDP flow `flow`, `bytes` on the wire.
    SendUdp { flow: u32, seq: u32, bytes: u32 },
    /// UDP flow `flow` has sent its last packet.
    EndUdp { flow: u32 },
    /// Wake the generator at `at` with `arg` (`Generator::step`).
    Wake { at: Time, arg: u32 },
}

/// The buffer a generator pushes its requests into. The simulator fills in the clock and
/// the next free flow id (`begin`), calls the generator, then carries out `list()` in order.
/// The vector is reused, so a step allocates nothing once it has grown.
#[derive(Debug, Default)]
pub struct Actions {
    now: Time,
    next_flow: u32,
    list: Vec<Action>,
}

impl Actions {
    /// Start a round at time `now`, with `next_flow` the id the next flow started will get.
    pub fn begin(&mut self, now: Time, next_flow: u32) {
        self.now = now;
        self.next_flow = next_flow;
        self.list.clear();
    }
    /// The current simulated time.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }
    /// The requests pushed since `begin`, in order.
    #[inline]
    pub fn list(&self) -> &[Action] {
        &self.list
    }
    /// Request a TCP flow; returns the id it will have.
    pub fn start_tcp(&mut self, src: u32, dst: u32, size: Option<u64>, mode: Mode, session: u32) -> u32 {
        let id = self.take_id();
        self.list.push(Action::StartTcp { id, src, dst, size, mode, session });
        id
    }
    /// Request a UDP flow; returns the id it will have.
    pub fn start_udp(&mut self, src: u32, dst: u32, total: Option<u64>) -> u32 {
        let id = self.take_id();
        self.list.push(Action::StartUdp { id, src, dst, total });
        id
    }
    #[inline]
    pub fn send_udp(&mut self, flow: u32, seq: u32, bytes: u32) {
        self.list.push(Action::SendUdp { flow, seq, bytes });
    }
    #[inline]
    pub fn end_udp(&mut self, flow: u32) {
        self.list.push(Action::EndUdp { flow });
    }
    #[inline]
    pub fn wake(&mut self, at: Time, arg: u32) {
        self.list.push(Action::Wake { at, arg });
    }
    fn take_id(&mut self) -> u32 {
        let id = self.next_flow;
        self.next_flow += 1;
        id
    }
}

/// A traffic generator at run time.
pub trait Generator: std::fmt::Debug {
    /// At the start of the run: ask for its first wake-ups.
    fn start(&mut self, acts: &mut Actions);
    /// A wake-up it asked for has come, with the `arg` it gave.
    fn step(&mut self, arg: u32, acts: &mut Actions);
    /// A TCP flow it started for `session` has delivered all its data (or, when
    /// `done_on_ack`, its sender has all of it acknowledged).
    fn flow_done(&mut self, _session: u32, _acts: &mut Actions) {}
    /// Whether `flow_done` waits for the data sender's last acknowledgement rather than the
    /// data's arrival.
    fn done_on_ack(&self) -> bool {
        false
    }
    /// Wire size of its packets if it sends UDP (flow records give sizes in bytes).
    fn udp_packet_bytes(&self) -> Option<u32> {
        None
    }
}

/// The block fields every traffic type shares.
pub struct Header<'a> {
    pub name: Option<&'a str>,
    pub tag: &'a str,
    /// TCP settings for the block's flows (keys of [tcp]), resolved by the scenario.
    pub tcp: Option<&'a toml::Table>,
}

/// A traffic block as a scenario writes it.
pub trait TrafficBlock {
    type Gen: Generator + 'static;
    fn header(&self) -> Header<'_>;
    /// Check the block (errors name `field.<key>`) and resolve it against the topology into
    /// a generator named `name`, whose random streams are `traffic/{name}...`.
    fn resolve(&self, field: &str, name: &str, env: &Env) -> Result<Self::Gen>;
}

/// What a block is resolved against: the topology, its host groups, the run's packet
/// sizes and duration.
pub struct Env<'a> {
    /// The scenario seed (random streams derive from it).
    pub seed: u64,
    pub topo: &'a Topology,
    /// The topology's own (sender, receiver) pairs (a dumbbell's), used without from/to.
    pub pairs: &'a [(u32, u32)],
    /// Host groups by name (`senders`, `clients1`, ...).
    pub groups: &'a BTreeMap<String, Vec<u32>>,
    /// Rate of the topology's single bottleneck, Mb/s, if it has one.
    pub bottleneck_mbps: Option<f64>,
    pub duration_s: f64,
    pub packet_bytes: u32,
    pub header_bytes: u32,
    /// Directory relative file names are read from.
    pub base_dir: &'a Path,
}

impl Env<'_> {
    /// A size distribution in packets of one MSS.
    pub fn size(&self, field: &str, s: &SizeSpec) -> Result<SizeDist> {
        size_dist_mss(field, s, (self.packet_bytes - self.header_bytes) as f64, self.base_dir)
    }
    /// A distribution of times in seconds, written like a size distribution.
    pub fn time(&self, field: &str, s: &SizeSpec) -> Result<SizeDist> {
        if s.unit() != SizeUnit::Packets {
            return bad(format!("{field}.unit"), "a time distribution is in seconds; remove `unit`");
        }
        let d = size::dist_mss(field, s, (self.packet_bytes - self.header_bytes) as f64, Path::new("."))?;
        // Draws are added to the clock: a mean beyond its range would overflow it.
        if let Some(m) = d.mean() {
            if m.is_nan() || m > MAX_TIME_S {
                return bad(field, format!("a time distribution's mean must be at most {MAX_TIME_S:e} s, got {m}"));
            }
        }
        Ok(d)
    }
    /// An optional time distribution.
    pub fn time_opt(&self, field: &str, s: &Option<SizeSpec>) -> Result<Option<SizeDist>> {
        s.as_ref().map(|d| self.time(field, d)).transpose()
    }
    /// The hosts a block's flows run between (see `ends.rs`).
    pub fn ends(&self, field: &str, from: &Option<HostSel>, to: &Option<HostSel>, dir: Direction) -> Result<Ends> {
        ends::resolve(field, from, to, dir, self)
    }
    /// `start_s` and `stop_s` (default: the run's end) in ns, checked. Without `stop_s` a
    /// block starting after the run's end (a shorter `--duration` keeps a prefix) is empty.
    pub fn window(&self, field: &str, start: f64, stop: Option<f64>) -> Result<(Time, Time)> {
        let (a, b) = self.window_s(field, start, stop)?;
        Ok((secs_to_ns(a), secs_to_ns(b)))
    }
    /// `window` in seconds.
    pub fn window_s(&self, field: &str, start: f64, stop: Option<f64>) -> Result<(f64, f64)> {
        time0_s(&format!("{field}.start_s"), start)?;
        let stop = match stop {
            Some(s) => {
                time0_s(&format!("{field}.stop_s"), s)?;
                if s < start {
                    return bad(format!("{field}.stop_s"), format!("must be >= start_s ({start}), got {s}"));
                }
                s
            }
            None => self.duration_s.max(start),
        };
        Ok((start, stop))
    }
    /// Seconds of the run a block active from `start` to `stop` (s) overlaps.
    pub fn span_s(&self, start: f64, stop: f64) -> f64 {
        (stop.min(self.duration_s) - start).max(0.0)
    }
}

/// The registry: each traffic type's name in scenarios, its variant and its block type.
macro_rules! registry {
    ($($name:literal => $var:ident($spec:ty)),+ $(,)?) => {
        /// A `[[traffic]]` block, chosen by `type`.
        #[derive(Clone, Debug)]
        pub enum TrafficSpec {
            $($var($spec)),+
        }
        crate::spec::tagged!(TrafficSpec, "type", "traffic type", { $($name => $var),+ });
        impl TrafficSpec {
            pub fn header(&self) -> Header<'_> {
                match self {
                    $(TrafficSpec::$var(s) => s.header()),+
                }
            }
            pub fn resolve(&self, field: &str, name: &str, env: &Env) -> Result<Box<dyn Generator>> {
                Ok(match self {
                    $(TrafficSpec::$var(s) => Box::new(s.resolve(field, name, env)?)),+
                })
            }
        }
    };
}

registry! {
    "poisson" => Poisson(poisson::PoissonSpec),
    "persistent" => Persistent(persistent::PersistentSpec),
    "flows" => Flows(flow_list::FlowListSpec),
    "web" => Web(web::WebSpec),
    "closed_loop" => ClosedLoop(closed_loop::ClosedLoopSpec),
    "periodic" => Periodic(periodic::PeriodicSpec),
    "udp" => Udp(udp::UdpSpec),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::net::NodeKind;

    /// Four hosts h0..h3 behind a router; the pairs (h0, h1) and (h2, h3).
    fn topo() -> Topology {
        let mut t = Topology::default();
        for i in 0..4 {
            t.add_node(format!("h{i}"), NodeKind::Host);
        }
        t.add_node("r", NodeKind::Router);
        t
    }

    /// Resolve the traffic block written in `toml` (as `[[traffic]]` would hold it).
    fn resolve(toml: &str) -> Result<Box<dyn Generator>> {
        let t = topo();
        let groups = BTreeMap::new();
        let env = Env {
            seed: 7,
            topo: &t,
            pairs: &[(0, 1), (2, 3)],
            groups: &groups,
            bottleneck_mbps: Some(10.0),
            duration_s: 100.0,
            packet_bytes: 1500,
            header_bytes: 40,
            base_dir: Path::new("."),
        };
        let spec: TrafficSpec = toml::from_str(toml).expect("a valid block");
        spec.resolve("traffic[0]", "t", &env)
    }

    /// Run one call of a generator at `now` with flow ids from `next_flow`.
    fn call(now: Time, next_flow: u32, f: impl FnOnce(&mut Actions)) -> Vec<Action> {
        let mut a = Actions::default();
        a.begin(now, next_flow);
        f(&mut a);
        a.list().to_vec()
    }

    #[test]
    fn actions_hand_out_flow_ids_in_the_order_flows_are_asked_for() {
        let got = call(5, 40, |a| {
            assert_eq!(a.start_tcp(0, 1, Some(3), Mode::Bulk, NO_SESSION), 40);
            a.wake(9, 1);
            assert_eq!(a.start_udp(2, 3, None), 41);
        });
        assert_eq!(got.len(), 3);
        assert!(matches!(got[2], Action::StartUdp { id: 41, src: 2, dst: 3, total: None }));
    }

    #[test]
    fn a_poisson_arrival_starts_one_flow_and_asks_for_the_next_until_stop() {
        let mut g =
            resolve("type = 'poisson'\nrate_per_s = 10.0\nstop_s = 1.0\nsize = { dist = 'fixed', value = 4 }").unwrap();
        assert_eq!(call(0, 0, |a| g.start(a)), [Action::Wake { at: 0, arg: 0 }]);
        let got = call(0, 0, |a| g.step(0, a));
        let [Action::StartTcp { id: 0, size: Some(4), session: NO_SESSION, src, dst, .. }, next] = got[..] else {
            panic!("{got:?}")
        };
        assert!((src, dst) == (0, 1) || (src, dst) == (2, 3));
        assert!(matches!(next, Action::Wake { at, arg: 0 } if at > 0), "{next:?}");
        assert!(call(1_000_000_000, 1, |a| g.step(0, a)).is_empty(), "no arrival at or after stop_s");
    }

    #[test]
    fn a_udp_flow_sends_its_lifetime_in_packets_then_ends() {
        // 125-byte packets at 16 kb/s leave 62.5 ms apart; a 0.1875 s lifetime is 3 packets.
        let mut g = resolve("type = 'udp'\ninitial = 1\nlifetime_s = { dist = 'fixed', value = 0.1875 }").unwrap();
        assert_eq!(g.udp_packet_bytes(), Some(125));
        let got = call(0, 7, |a| g.step(0, a));
        assert!(matches!(got[0], Action::StartUdp { id: 7, total: Some(3), .. }), "{got:?}");
        assert_eq!(got[1], Action::SendUdp { flow: 7, seq: 0, bytes: 125 });
        let Action::Wake { at, arg } = got[2] else { panic!("{got:?}") };
        assert_eq!(at, 62_500_000);
        let got = call(at, 8, |a| g.step(arg, a));
        assert_eq!(got[0], Action::SendUdp { flow: 7, seq: 1, bytes: 125 });
        let Action::Wake { at, arg } = got[1] else { panic!("{got:?}") };
        let got = call(at, 8, |a| g.step(arg, a));
        assert_eq!(got, [Action::SendUdp { flow: 7, seq: 2, bytes: 125 }, Action::EndUdp { flow: 7 }]);
    }

    #[test]
    fn a_closed_loop_session_starts_a_connection_only_after_the_last_one_and_stops_at_its_limit() {
        let mut g =
            resolve("type = 'closed_loop'\nsessions = 1\nconnections = 2\nsize = { dist = 'fixed', value = 5 }")
                .unwrap();
        assert_eq!(call(0, 0, |a| g.start(a)), [Action::Wake { at: 0, arg: 0 }]);
        for k in 0..2 {
            let got = call(10, k, |a| g.step(0, a));
            assert!(matches!(got[..], [Action::StartTcp { size: Some(5), session: 0, .. }]), "{got:?}");
            // Nothing more until the flow is done; then the next one at once (no think time).
            assert_eq!(call(20, k + 1, |a| g.flow_done(0, a)), [Action::Wake { at: 20, arg: 0 }]);
        }
        assert!(call(20, 2, |a| g.step(0, a)).is_empty(), "the session has had its 2 connections");
    }

    #[test]
    fn a_bad_block_names_its_field() {
        let err = resolve("type = 'udp'\ninitial = 1\npacket_bytes = 10").unwrap_err();
        assert!(matches!(&err, Error::Input { field, .. } if field == "traffic[0].packet_bytes"), "{err}");
        let err = resolve("type = 'persistent'\ncount = 1\nfrom = 'h0'").unwrap_err();
        assert!(matches!(&err, Error::Input { field, .. } if field == "traffic[0].to"), "{err}");
    }
}
