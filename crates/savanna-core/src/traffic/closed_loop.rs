//! Closed-loop sessions: each session runs one connection at a time; when a connection's data
//! has all arrived (or, with `next_after = "acked"`, when its sender has every packet
//! acknowledged, as ns-2's `done`), the next starts after a think time (Matta & Guo 2000 pipe-size runs;
//! Tokuda et al. 2002; the lossy-link single flow of Guo & Matta Fig. 2b and Tokuda Fig. 2;
//! FavorQueue Fig. 25's reference flow). Each session draws its sizes and think times from
//! its own stream, so they do not depend on the order in which other sessions finish.

use serde::Deserialize;

use super::{Actions, Direction, Ends, Env, Generator, Header, HostSel, Mode, SizeDist, SizeSpec, TrafficBlock};
use crate::engine::{secs_to_ns, Rng, Time};
use crate::error::Result;
use crate::spec::{bad, time0_s};

/// Closed-loop sessions: each session runs one connection at a time; when a connection's
/// data has all arrived, the next starts after a think time (none by default: back to
/// back). Session i uses the i-th host pair (dumbbell pairs, or `from`/`to` drawn per
/// session), so a session is one client-server pair, as in Matta & Guo's pipe-size runs.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedLoopSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    pub sessions: u32,
    /// Size of each connection, packets.
    pub size: SizeSpec,
    /// Think time between a connection's end and the next one's start, seconds.
    #[serde(default)]
    pub think_s: Option<SizeSpec>,
    /// Connections per session (unlimited if unset).
    #[serde(default)]
    pub connections: Option<u32>,
    #[serde(default)]
    pub from: Option<HostSel>,
    #[serde(default)]
    pub to: Option<HostSel>,
    #[serde(default)]
    pub direction: Direction,
    #[serde(default)]
    pub start_s: f64,
    /// Sessions start uniformly spread over [start_s, start_s + start_spread_s] (Matta &
    /// Guo 2000: "in the first 5 seconds").
    #[serde(default)]
    pub start_spread_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
    #[serde(default)]
    pub mode: Mode,
    /// When a connection counts as finished for its session: its data's arrival at the
    /// receiver (default) or the data sender's last acknowledgement (ns-2, where a session
    /// learns of the end from its sender's `done`, one ACK trip later).
    #[serde(default)]
    pub next_after: NextAfter,
    #[serde(default)]
    pub tcp: Option<toml::Table>,
}

/// `next_after`: the event that ends a session's connection.
#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NextAfter {
    /// The receiver holds all the data.
    #[default]
    Delivered,
    /// The data sender has all of it acknowledged.
    Acked,
}

/// One session: its data sender and receiver, connections started, its own stream.
#[derive(Clone, Debug)]
struct Session {
    src: u32,
    dst: u32,
    connections: u32,
    rng: Rng,
}

/// Closed-loop sessions, resolved. Wake-up argument: the session index.
#[derive(Clone, Debug)]
pub struct ClosedLoop {
    pub sessions: u32,
    pub size: SizeDist,
    pub think: Option<SizeDist>,
    pub connections: Option<u32>,
    pub ends: Ends,
    pub mode: Mode,
    pub next_after: NextAfter,
    pub start: Time,
    pub spread: Time,
    pub stop: Time,
    name: String,
    seed: u64,
    rng: Rng,
    state: Vec<Session>,
}

impl TrafficBlock for ClosedLoopSpec {
    type Gen = ClosedLoop;
    fn header(&self) -> Header<'_> {
        Header { name: self.name.as_deref(), tag: &self.tag, tcp: self.tcp.as_ref() }
    }
    fn resolve(&self, field: &str, name: &str, env: &Env) -> Result<ClosedLoop> {
        let c = self;
        if c.sessions == 0 || c.sessions > 1_000_000 {
            return bad(format!("{field}.sessions"), format!("must be between 1 and 1000000, got {}", c.sessions));
        }
        if c.connections == Some(0) {
            return bad(format!("{field}.connections"), "must be at least 1 (omit it for endless sessions)");
        }
        time0_s(&format!("{field}.start_spread_s"), c.start_spread_s)?;
        let (start, stop) = env.window(field, c.start_s, c.stop_s)?;
        Ok(ClosedLoop {
            sessions: c.sessions,
            size: env.size(&format!("{field}.size"), &c.size)?,
            think: env.time_opt(&format!("{field}.think_s"), &c.think_s)?,
            connections: c.connections,
            ends: env.ends(field, &c.from, &c.to, c.direction)?,
            mode: c.mode,
            next_after: c.next_after,
            start,
            spread: secs_to_ns(c.start_spread_s),
            stop,
            name: name.to_string(),
            seed: env.seed,
            rng: Rng::stream(env.seed, &format!("traffic/{name}")),
            state: Vec::new(),
        })
    }
}

impl Generator for ClosedLoop {
    fn start(&mut self, acts: &mut Actions) {
        let rng = &mut self.rng;
        self.state = Vec::with_capacity(self.sessions as usize);
        for i in 0..self.sessions {
            let at = self.start + (self.spread as f64 * rng.uniform()) as Time;
            let (src, dst) = match self.ends {
                Ends::Pairs(_) => self.ends.nth(i as usize),
                Ends::Cross(..) => self.ends.draw(rng),
            };
            let rng = Rng::stream(self.seed, &format!("traffic/{}/session{i}", self.name));
            self.state.push(Session { src, dst, connections: 0, rng });
            acts.wake(at, i);
        }
    }

    fn step(&mut self, i: u32, acts: &mut Actions) {
        if acts.now() >= self.stop {
            return;
        }
        let sess = &mut self.state[i as usize];
        if self.connections.is_some_and(|c| sess.connections >= c) {
            return;
        }
        sess.connections += 1;
        let n = self.size.sample(&mut sess.rng);
        acts.start_tcp(sess.src, sess.dst, Some(n), self.mode, i);
    }

    fn done_on_ack(&self) -> bool {
        self.next_after == NextAfter::Acked
    }

    /// The session's connection is done (`next_after`): start the next one after the think
    /// time.
    fn flow_done(&mut self, i: u32, acts: &mut Actions) {
        let now = acts.now();
        let sess = &mut self.state[i as usize];
        let gap = self.think.as_ref().map_or(0, |d| secs_to_ns(d.draw(&mut sess.rng)));
        if now.saturating_add(gap) < self.stop {
            acts.wake(now + gap, i);
        }
    }
}
