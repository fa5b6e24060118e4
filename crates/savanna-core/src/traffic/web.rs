//! Web sessions of pages of objects after Feldmann et al. 1999, as Guo & Matta 2001 Table II
//! and Matta & Guo 2000 Table IV use them: HTTP/1.0, one request/response TCP connection per
//! object. Open loop, as ns-2's web traffic generator: arrivals do not wait for downloads.

use serde::Deserialize;

use super::{
    Actions, Direction, Ends, Env, Generator, Header, HostSel, IntRange, Mode, SizeDist, SizeSpec, TrafficBlock,
    NO_SESSION,
};
use crate::engine::{secs_to_ns, Rng, Time};
use crate::error::Result;
use crate::spec::{bad, time0_s, within_budget, MAX_FLOWS};

fn one_range() -> IntRange {
    IntRange { min: 1, max: 1 }
}
fn rr() -> Mode {
    Mode::RequestResponse
}

/// Web sessions (Feldmann et al. 1999). Each of `sessions` concurrent sessions belongs to a
/// client drawn from `to`; it fetches pages one after another, each from a server drawn
/// from `from`. A page has `objects_per_page` objects (uniform integer); the objects are
/// requested `inter_object_s` apart (the first at the page's start), each over its own TCP
/// connection (HTTP/1.0); the next page starts `inter_page_s` after the page's last object
/// was requested. Arrivals are open loop: they do not wait for downloads to finish, as in
/// ns-2's web traffic generator. After `pages_per_session` pages (unlimited if unset) the
/// session ends and a new one starts at once for a new client, so `sessions` stay active.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub tag: String,
    pub sessions: u32,
    #[serde(default)]
    pub pages_per_session: Option<u32>,
    /// Time between pages, seconds (Guo & Matta Table II: exponential, mean 9.5).
    pub inter_page_s: SizeSpec,
    #[serde(default = "one_range")]
    pub objects_per_page: IntRange,
    /// Time between the objects of a page, seconds (Table II: exponential, mean 0.05).
    #[serde(default)]
    pub inter_object_s: Option<SizeSpec>,
    /// Object size, packets (Table II: bounded Pareto [4, 200000], shape 1.2).
    pub object_size: SizeSpec,
    /// Server hosts (data senders).
    pub from: Option<HostSel>,
    /// Client hosts (data receivers).
    pub to: Option<HostSel>,
    /// Sessions start uniformly spread over [start_s, start_s + start_spread_s].
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub start_spread_s: f64,
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// HTTP/1.0 request/response by default; `bulk` sends the object without a request.
    #[serde(default = "rr")]
    pub mode: Mode,
    #[serde(default)]
    pub tcp: Option<toml::Table>,
}

/// One session: the current page's server and the client, pages fetched, objects of the
/// page still to request.
#[derive(Clone, Copy, Debug)]
struct Session {
    server: u32,
    client: u32,
    pages: u32,
    objects_left: u32,
}

/// Web sessions, resolved. Wake-up argument: session index << 1, low bit set for the next
/// object of the current page, clear for a new page.
#[derive(Clone, Debug)]
pub struct Web {
    pub sessions: u32,
    pub pages: Option<u32>,
    pub inter_page: SizeDist,
    pub objects: (u32, u32),
    pub inter_object: Option<SizeDist>,
    pub size: SizeDist,
    pub servers: Vec<u32>,
    pub clients: Vec<u32>,
    pub mode: Mode,
    pub start: Time,
    pub spread: Time,
    pub stop: Time,
    rng: Rng,
    state: Vec<Session>,
}

impl TrafficBlock for WebSpec {
    type Gen = Web;
    fn header(&self) -> Header<'_> {
        Header { name: self.name.as_deref(), tag: &self.tag, tcp: self.tcp.as_ref() }
    }
    fn resolve(&self, field: &str, name: &str, env: &Env) -> Result<Web> {
        let w = self;
        if w.sessions == 0 || w.sessions > 1_000_000 {
            return bad(format!("{field}.sessions"), format!("must be between 1 and 1000000, got {}", w.sessions));
        }
        if w.pages_per_session == Some(0) {
            return bad(format!("{field}.pages_per_session"), "must be at least 1 (omit it for endless sessions)");
        }
        let o = w.objects_per_page;
        if o.min == 0 || o.max < o.min {
            return bad(
                format!("{field}.objects_per_page"),
                format!("needs 1 <= min <= max, got min {} max {}", o.min, o.max),
            );
        }
        let (servers, clients) = match env.ends(field, &w.from, &w.to, Direction::Forward)? {
            Ends::Cross(a, b) => (a, b),
            Ends::Pairs(p) => (p.iter().map(|x| x.0).collect(), p.iter().map(|x| x.1).collect()),
        };
        time0_s(&format!("{field}.start_spread_s"), w.start_spread_s)?;
        let (start, stop) = env.window(field, w.start_s, w.stop_s)?;
        let inter_page = env.time(&format!("{field}.inter_page_s"), &w.inter_page_s)?;
        let inter_object = env.time_opt(&format!("{field}.inter_object_s"), &w.inter_object_s)?;
        // Arrivals are open loop: each session starts a page every inter_page_s plus its
        // objects' spacing, whatever the network does, so the flows over the run follow from
        // the means (a mean far below 1 ns would start pages without end at one instant).
        let objects = (o.min as f64 + o.max as f64) / 2.0;
        let page_s = inter_page.mean().unwrap_or(f64::INFINITY)
            + (objects - 1.0) * inter_object.as_ref().and_then(|d| d.mean()).unwrap_or(0.0);
        let (start_s, stop_s) = env.window_s(field, w.start_s, w.stop_s)?;
        let pages = w.sessions as f64 * (env.span_s(start_s, stop_s) / page_s).ceil().max(1.0);
        within_budget(&format!("{field}.inter_page_s"), pages * objects, MAX_FLOWS, "flows")?;
        Ok(Web {
            sessions: w.sessions,
            pages: w.pages_per_session,
            inter_page,
            objects: (o.min, o.max),
            inter_object,
            size: env.size(&format!("{field}.object_size"), &w.object_size)?,
            servers,
            clients,
            mode: w.mode,
            start,
            spread: secs_to_ns(w.start_spread_s),
            stop,
            rng: Rng::stream(env.seed, &format!("traffic/{name}")),
            state: Vec::new(),
        })
    }
}

impl Generator for Web {
    fn start(&mut self, acts: &mut Actions) {
        // Draw order per session: start offset, client.
        let rng = &mut self.rng;
        self.state = Vec::with_capacity(self.sessions as usize);
        for i in 0..self.sessions {
            let at = self.start + (self.spread as f64 * rng.uniform()) as Time;
            let c = self.clients[rng.below(self.clients.len() as u64) as usize];
            self.state.push(Session { server: u32::MAX, client: c, pages: 0, objects_left: 0 });
            acts.wake(at, i << 1);
        }
    }

    fn step(&mut self, arg: u32, acts: &mut Actions) {
        let now = acts.now();
        if now >= self.stop {
            return;
        }
        let (i, object_step) = ((arg >> 1) as usize, arg & 1 == 1);
        let rng = &mut self.rng;
        let sess = &mut self.state[i];
        if !object_step {
            // A new page; a session that has had its pages ends and is replaced by a new
            // one for a new client.
            if self.pages.is_some_and(|p| sess.pages >= p) {
                sess.pages = 0;
                sess.client = self.clients[rng.below(self.clients.len() as u64) as usize];
            }
            sess.pages += 1;
            let servers = &self.servers;
            let mut server = servers[rng.below(servers.len() as u64) as usize];
            let mut tries = 0;
            while server == sess.client && tries < 64 {
                server = servers[rng.below(servers.len() as u64) as usize];
                tries += 1;
            }
            sess.server = server;
            let (lo, hi) = self.objects;
            sess.objects_left = lo + rng.below((hi - lo + 1) as u64) as u32;
        }
        // Request one object now.
        sess.objects_left -= 1;
        let n = self.size.sample(rng);
        let next = if sess.objects_left > 0 {
            let gap = self.inter_object.as_ref().map_or(0.0, |g| g.draw(rng));
            (now.saturating_add(secs_to_ns(gap)), (i as u32) << 1 | 1)
        } else {
            (now.saturating_add(secs_to_ns(self.inter_page.draw(rng)).max(1)), (i as u32) << 1)
        };
        acts.start_tcp(sess.server, sess.client, Some(n), self.mode, NO_SESSION);
        if next.0 < self.stop {
            acts.wake(next.0, next.1);
        }
    }
}
