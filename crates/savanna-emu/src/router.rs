//! The emulation router: real IP packets read from one TUN device per host cross the
//! scenario's links as the simulator's links carry simulated ones. Each one-way link has the
//! core's queue discipline (`make_qdisc`, unchanged), serialises at its rate and delays by
//! its propagation delay; nodes forward on the core's static routes, and a node's edge
//! classifier (`make_classifier`) marks what it sends on to another router, the mark being
//! carried in the packet's DSCP bits (short AF11 = 10, long AF12 = 12). The schedule is the
//! ideal one (a transmission ends `size x 8 / rate` after it starts, whatever the process's
//! wake-up latency), events are handled in order of their ideal time, and the router measures
//! how far real time strays from it: per-packet lateness of deliveries, the bottleneck's
//! achieved rate over its busy periods in real time, and its own CPU use.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use savanna_core::aqm::{DropReason, QCtx, QOut, Qdisc};
use savanna_core::classify::Classifier;
use savanna_core::engine::{ns_to_secs, Rng, Time};
use savanna_core::net::topology::{NodeKind, Routes};
use savanna_core::net::{ClassMark, Ecn, Packet, PacketPool, PktId, PktKind};
use savanna_core::scenario::build::{make_classifier, make_qdisc, Plan};
use serde_json::{json, Map, Value};

use crate::capture::{Capture, Rec, EV_DROP, EV_IN, EV_OUT};
use crate::plan::{bottleneck, host_nodes, host_of_ip};
use crate::sys;

/// Buffer per packet: room for any MTU the orchestrator sets (at most 2000).
pub const BUF: usize = 2048;
const NONE: u32 = u32::MAX;
pub const DSCP_SHORT: u8 = 10;
pub const DSCP_LONG: u8 = 12;

const EV_TX: u32 = 0;
const EV_ARRIVE: u32 = 1;
const EV_SAMPLE: u32 = 2;
const EV_CLASSIFY: u32 = 3;

#[derive(Default, Clone)]
struct Stats {
    arrivals: [u64; 3],
    enqueued: [u64; 3],
    departed: [u64; 3],
    drops: [[u64; 3]; DropReason::COUNT],
    marks: [u64; 3],
    occupancy: [u64; 3],
}

impl Stats {
    fn dropped(&self, c: usize) -> u64 {
        (0..DropReason::COUNT).filter(|&r| r != DropReason::LinkLoss as usize).map(|r| self.drops[r][c]).sum()
    }
}

struct Link {
    name: String,
    to: u32,
    to_host: u32,
    to_router: bool,
    rate_bps: f64,
    ns_per_byte: f64,
    delay_ns: Time,
    loss: f64,
    qdisc: Box<dyn Qdisc>,
    rng: Rng,
    loss_rng: Rng,
    busy: bool,
    tx_pkt: PktId,
    busy_ns: Time,
    stats: Stats,
    /// Counters at the previous sampling instant (for per-interval rows).
    last: Stats,
    last_busy_ns: Time,
    line: VecDeque<(Time, PktId)>,
}

/// Per-connection counters the router can see (the TCP stacks see the rest).
#[derive(Clone, Default)]
struct Conn {
    client: [u8; 4],
    cport: u16,
    server: [u8; 4],
    sport: u16,
    /// ISN of the data each side sends: [server's (to side 0), client's (to side 1)].
    isn: [u32; 2],
    syn_sent: u64,
    synack_sent: u64,
    syn_drops: u64,
    synack_drops: u64,
    /// Indexed by the side the packets travel to.
    data_sent: [u64; 2],
    drops: [u64; 2],
    first_data_seen: [bool; 2],
    first_data_drop: [bool; 2],
    ecn_marks: [u64; 2],
    class_last: [u8; 2],
    delivered_bytes: [u64; 2],
    favored: u64,
    pushed_out: u64,
    /// Timing of the connection on the router's clock (ns after start, 0 = not seen), so
    /// that an FCT can be split into the path's share and the endpoints' wake-up latency:
    /// the first SYN read, the first SYN-ACK written (real time), per direction the first
    /// data packet read and the last data packet written (ideal and real time).
    syn_in: Time,
    synack_out: Time,
    data_in: [Time; 2],
    last_due: [Time; 2],
    last_out: [Time; 2],
}

/// Histogram of lateness in microseconds (1 us bins up to 100 ms).
struct Hist {
    bins: Vec<u64>,
    n: u64,
    max_ns: u64,
}

impl Hist {
    fn new() -> Self {
        Hist { bins: vec![0; 100_001], n: 0, max_ns: 0 }
    }
    #[inline]
    fn add(&mut self, ns: u64) {
        let b = ((ns / 1000) as usize).min(self.bins.len() - 1);
        self.bins[b] += 1;
        self.n += 1;
        self.max_ns = self.max_ns.max(ns);
    }
    fn quantile_us(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let want = ((self.n as f64) * q).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, &c) in self.bins.iter().enumerate() {
            acc += c;
            if acc >= want {
                // Upper edge of the bin: an error never below what is reported.
                return Some((i + 1) as f64);
            }
        }
        None
    }
    fn json(&self) -> Value {
        json!({"count": self.n, "p50_us": self.quantile_us(0.5), "p90_us": self.quantile_us(0.9),
               "p99_us": self.quantile_us(0.99), "p999_us": self.quantile_us(0.999),
               "max_us": if self.n > 0 { Some(self.max_ns as f64 / 1000.0) } else { None }})
    }
}

pub struct Router {
    plan: Plan,
    routes: Routes,
    links: Vec<Link>,
    pkts: PacketPool,
    /// Packet bytes by packet id. Boxed so that a read buffer is swapped in, not copied.
    #[allow(clippy::vec_box)]
    bufs: Vec<Box<[u8; BUF]>>,
    /// Per packet id: 1 when it is the first transmission of a direction's data packet 0.
    first: Vec<u8>,
    scratch: Box<[u8; BUF]>,
    qout: QOut,
    host_node: Vec<u32>,
    fds: Vec<i32>,
    conns: Vec<Conn>,
    conn_of: HashMap<([u8; 4], u16, [u8; 4], u16), u32>,
    classifiers: Vec<Box<dyn Classifier>>,
    node_classifier: Vec<u32>,
    heap: BinaryHeap<Reverse<(Time, u64, u32)>>,
    seq: u64,
    t0: u64,
    mss: u32,
    // Sampling.
    sample_ns: Time,
    sampled: Vec<usize>,
    last_sample: Time,
    samples: Vec<Value>,
    // Accounting.
    created: u64,
    delivered: u64,
    dropped: u64,
    link_losses: u64,
    forwarded: u64,
    ignored: u64,
    write_fail: u64,
    // Accuracy.
    deliver_late: Hist,
    event_late: Hist,
    bn: usize,
    bp_open: bool,
    bp_start: u64,
    bp_bits: f64,
    bp_pkts: u64,
    bp_real_ns: u64,
    bp_real_ns_total: u64,
    pkts_size_at_tx: u32,
    bp_sum_bits: f64,
    bp_sum_ideal_ns: u64,
    bp_ideal_start: Time,
    /// Packet capture (`--capture`), off by default.
    capture: Option<Capture>,
}

fn kind_of(flags: u8, payload: usize) -> PktKind {
    const FIN: u8 = 1;
    const SYN: u8 = 2;
    const ACK: u8 = 16;
    if flags & SYN != 0 {
        if flags & ACK != 0 {
            PktKind::SynAck
        } else {
            PktKind::Syn
        }
    } else if payload > 0 {
        PktKind::Data
    } else if flags & FIN != 0 {
        PktKind::Fin
    } else {
        PktKind::Ack
    }
}

#[inline]
fn be16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}
#[inline]
fn be32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Recompute the IPv4 header checksum in place.
fn ip_checksum(b: &mut [u8]) {
    let ihl = ((b[0] & 0x0f) as usize) * 4;
    b[10] = 0;
    b[11] = 0;
    let mut sum: u32 = 0;
    for i in (0..ihl).step_by(2) {
        sum += be16(b, i) as u32;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let c = !(sum as u16);
    b[10..12].copy_from_slice(&c.to_be_bytes());
}

impl Router {
    pub fn new(plan: Plan, fds: Vec<i32>) -> Router {
        let topo = &plan.topo;
        let routes = topo.routes().expect("validation built these routes");
        let host_node = host_nodes(&plan);
        let mut node_host = vec![NONE; topo.n_nodes()];
        for (k, &n) in host_node.iter().enumerate() {
            node_host[n as usize] = k as u32;
        }
        let links = topo
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| Link {
                name: l.name.clone(),
                to: l.to,
                to_host: node_host[l.to as usize],
                to_router: topo.node_kinds[l.to as usize] == NodeKind::Router,
                rate_bps: l.rate_bps,
                ns_per_byte: 8e9 / l.rate_bps,
                delay_ns: l.delay_ns,
                loss: l.loss,
                qdisc: make_qdisc(&plan.queues[l.queue], plan.pkt_bytes),
                rng: Rng::stream(plan.seed, &format!("queue/{i}")),
                loss_rng: Rng::stream(plan.seed, &format!("loss/{i}")),
                busy: false,
                tx_pkt: 0,
                busy_ns: 0,
                stats: Stats::default(),
                last: Stats::default(),
                last_busy_ns: 0,
                line: VecDeque::with_capacity(64),
            })
            .collect();
        let mut node_classifier = vec![NONE; topo.n_nodes()];
        for (i, (node, _)) in plan.classifiers.iter().enumerate() {
            node_classifier[*node as usize] = i as u32;
        }
        let classifiers = plan.classifiers.iter().map(|(_, c)| make_classifier(c, plan.seed)).collect();
        let (sample_ns, sampled) = match &plan.sampling {
            Some((iv, qs)) if qs.is_empty() => (
                *iv,
                (0..topo.links.len())
                    .filter(|&l| topo.node_kinds[topo.links[l].from as usize] == NodeKind::Router)
                    .collect(),
            ),
            Some((iv, qs)) => (*iv, qs.iter().map(|&q| q as usize).collect()),
            None => (0, Vec::new()),
        };
        let bn = bottleneck(&plan);
        let mss = plan.pkt_bytes - plan.hdr_bytes;
        Router {
            routes,
            links,
            pkts: PacketPool::new(),
            bufs: Vec::with_capacity(1024),
            first: Vec::with_capacity(1024),
            scratch: Box::new([0; BUF]),
            qout: QOut::default(),
            host_node,
            fds,
            conns: Vec::new(),
            conn_of: HashMap::new(),
            classifiers,
            node_classifier,
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
            t0: 0,
            mss,
            sample_ns,
            sampled,
            last_sample: 0,
            samples: Vec::new(),
            created: 0,
            delivered: 0,
            dropped: 0,
            link_losses: 0,
            forwarded: 0,
            ignored: 0,
            write_fail: 0,
            deliver_late: Hist::new(),
            event_late: Hist::new(),
            bn,
            bp_open: false,
            bp_start: 0,
            bp_bits: 0.0,
            bp_pkts: 0,
            bp_real_ns: 0,
            bp_real_ns_total: 0,
            pkts_size_at_tx: 0,
            bp_sum_bits: 0.0,
            bp_sum_ideal_ns: 0,
            bp_ideal_start: 0,
            capture: None,
            plan,
        }
    }

    pub fn set_capture(&mut self, c: Capture) {
        self.capture = Some(c);
    }

    /// Record packet `id` (its bytes still in its buffer) in the capture, if one is open.
    fn cap(&mut self, ev: u8, t: Time, id: PktId, reason: u8, link: usize) {
        let Some(cap) = self.capture.as_mut() else { return };
        let p = self.pkts.get(id);
        let b = &self.bufs[id as usize][..];
        let mut r = Rec {
            t_ns: t,
            conn: p.flow,
            ev,
            kind: p.kind as u8,
            to_side: p.to_side,
            reason,
            link: link.min(u16::MAX as usize) as u16,
            ..Rec::default()
        };
        let ihl = ((b[0] & 0x0f) as usize) * 4;
        if p.is_tcp() && (p.size as usize) >= ihl + 20 {
            let t = &b[ihl..];
            let doff = ((t[12] >> 4) as usize) * 4;
            let s = p.to_side as usize;
            let isn = self.conns.get(p.flow as usize).map_or([0, 0], |c| c.isn);
            r.seq = be32(t, 4).wrapping_sub(isn[s]).wrapping_sub(1);
            r.ack = be32(t, 8).wrapping_sub(isn[1 - s]).wrapping_sub(1);
            r.len = (be16(b, 2) as usize).saturating_sub(ihl + doff) as u16;
            r.win = be16(t, 14);
            r.flags = t[13];
        }
        cap.write(&r);
    }

    #[inline]
    fn at(&mut self, t: Time, code: u32) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, code)));
    }

    #[inline]
    fn vnow(&self) -> Time {
        sys::mono_ns().saturating_sub(self.t0)
    }

    /// Run until `stop_at` (ns after start), a signal, or a "stop" line / EOF on stdin.
    /// `spin_ns`: wake this long before each deadline and poll without sleeping.
    pub fn run_with(&mut self, stop_at: Time, spin_ns: u64, started: impl FnOnce(u64)) -> Value {
        self.t0 = sys::mono_ns();
        started(self.t0);
        let cpu0 = sys::cpu_ns();
        if self.sample_ns > 0 {
            self.at(self.sample_ns, EV_SAMPLE);
        }
        for i in 0..self.classifiers.len() {
            if let Some(p) = self.classifiers[i].period() {
                self.at(p, EV_CLASSIFY | (i as u32) << 2);
            }
        }
        let mut pfds: Vec<libc::pollfd> =
            self.fds.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
        pfds.push(libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 });
        let mut stdin_buf = [0u8; 256];
        let mut end = stop_at;
        'main: loop {
            if sys::STOP.load(std::sync::atomic::Ordering::Relaxed) {
                end = self.vnow();
                break;
            }
            // Events due.
            let mut now = self.vnow();
            if now >= stop_at {
                break;
            }
            while let Some(&Reverse((t, _, code))) = self.heap.peek() {
                if t > now {
                    break;
                }
                self.heap.pop();
                self.event_late.add(now - t);
                self.handle(code, t);
                now = self.vnow();
            }
            let timeout = self.heap.peek().map(|r| r.0 .0.saturating_sub(self.vnow()));
            let timeout = timeout.map(|t| t.min(stop_at.saturating_sub(self.vnow())));
            let t = match timeout {
                Some(t) if t <= spin_ns => Some(0),
                Some(t) => Some(t - spin_ns),
                None => Some(stop_at.saturating_sub(self.vnow()).min(100_000_000)),
            };
            if sys::wait(&mut pfds, t) == 0 {
                continue;
            }
            for (h, pfd) in pfds.iter().enumerate().take(self.fds.len()) {
                if pfd.revents & libc::POLLIN != 0 {
                    for _ in 0..64 {
                        let fd = self.fds[h];
                        match sys::read_pkt(fd, &mut self.scratch[..]) {
                            Some(n) => {
                                let at = self.vnow();
                                self.ingress(h, n, at);
                            }
                            None => break,
                        }
                    }
                }
            }
            let ctl = pfds.len() - 1;
            if pfds[ctl].revents & (libc::POLLIN | libc::POLLHUP) != 0 {
                // SAFETY: reading into a stack buffer from stdin.
                let n = unsafe { libc::read(0, stdin_buf.as_mut_ptr() as *mut libc::c_void, stdin_buf.len()) };
                if n <= 0 || stdin_buf[..n as usize].windows(4).any(|w| w == b"stop") {
                    end = self.vnow();
                    break 'main;
                }
            }
        }
        // Handle what is due up to the end (no packet is written after it), then take the
        // last sample at the end of the run.
        let end = end.min(self.vnow());
        while let Some(&Reverse((t, _, code))) = self.heap.peek() {
            if t > end || code & 3 == EV_SAMPLE {
                break;
            }
            self.heap.pop();
            self.handle(code, t);
        }
        if self.sample_ns > 0 && self.last_sample < end {
            self.sample(end);
        }
        self.close_busy_period(true);
        let cpu = sys::cpu_ns() - cpu0;
        let mut out = self.report(end, cpu);
        if let Some(c) = self.capture.as_mut() {
            out["capture_ok"] = json!(c.finish());
        }
        out
    }

    fn handle(&mut self, code: u32, t: Time) {
        match code & 3 {
            EV_TX => self.tx_done((code >> 2) as usize, t),
            EV_ARRIVE => self.arrive((code >> 2) as usize, t),
            EV_SAMPLE => {
                self.sample(t);
                self.at(t + self.sample_ns, EV_SAMPLE);
            }
            _ => {
                let i = (code >> 2) as usize;
                self.classifiers[i].tick(t);
                if let Some(p) = self.classifiers[i].period() {
                    self.at(t + p, code);
                }
            }
        }
    }

    /// A packet read from host `h`'s device (in `scratch`, `n` bytes) at time `now`.
    fn ingress(&mut self, h: usize, n: usize, now: Time) {
        let b = &self.scratch[..n];
        if n < 20 || b[0] >> 4 != 4 {
            self.ignored += 1;
            return;
        }
        let src = [b[12], b[13], b[14], b[15]];
        let dst = [b[16], b[17], b[18], b[19]];
        let Some(dh) = host_of_ip(dst, self.host_node.len()) else {
            self.ignored += 1;
            return;
        };
        if dh == h {
            self.ignored += 1;
            return;
        }
        let tos = b[1];
        let ecn = match tos & 3 {
            0 => Ecn::NotEct,
            3 => Ecn::Ce,
            _ => Ecn::Ect,
        };
        let class = match tos >> 2 {
            DSCP_SHORT => ClassMark::Short,
            DSCP_LONG => ClassMark::Long,
            _ => ClassMark::None,
        };
        let ihl = ((b[0] & 0x0f) as usize) * 4;
        let (mut kind, mut seq, mut flow, mut to_side, mut first) = (PktKind::Udp, 0, 0, 1u8, false);
        if b[9] == 6 && n >= ihl + 20 {
            let t = &b[ihl..];
            let (sport, dport, tseq, flags) = (be16(t, 0), be16(t, 2), be32(t, 4), t[13]);
            let doff = ((t[12] >> 4) as usize) * 4;
            let payload = (be16(b, 2) as usize).saturating_sub(ihl + doff);
            kind = kind_of(flags, payload);
            let fwd = (src, sport, dst, dport);
            let c = match kind {
                PktKind::Syn => {
                    // A new connection, or the SYN of one we know (a retransmission).
                    let c = match self.conn_of.get(&fwd) {
                        Some(&c) if self.conns[c as usize].isn[1] == tseq => c,
                        _ => {
                            let c = self.conns.len() as u32;
                            self.conns.push(Conn {
                                client: src,
                                cport: sport,
                                server: dst,
                                sport: dport,
                                isn: [0, tseq],
                                ..Conn::default()
                            });
                            self.conn_of.insert(fwd, c);
                            c
                        }
                    };
                    let cn = &mut self.conns[c as usize];
                    cn.syn_sent += 1;
                    if cn.syn_in == 0 {
                        cn.syn_in = now.max(1);
                    }
                    c
                }
                _ => {
                    if let Some(&c) = self.conn_of.get(&fwd) {
                        c
                    } else if let Some(&c) = self.conn_of.get(&(dst, dport, src, sport)) {
                        to_side = 0;
                        c
                    } else {
                        let c = self.conns.len() as u32;
                        self.conns.push(Conn {
                            client: src,
                            cport: sport,
                            server: dst,
                            sport: dport,
                            ..Conn::default()
                        });
                        self.conn_of.insert(fwd, c);
                        c
                    }
                }
            };
            let cn = &mut self.conns[c as usize];
            if kind == PktKind::SynAck {
                to_side = 0;
                cn.isn[0] = tseq;
                cn.synack_sent += 1;
            }
            let side = to_side as usize;
            if matches!(kind, PktKind::Data | PktKind::Fin) {
                let off = tseq.wrapping_sub(cn.isn[side]).wrapping_sub(1);
                seq = off / self.mss;
            }
            if kind == PktKind::Data {
                cn.data_sent[side] += 1;
                if cn.data_in[side] == 0 {
                    cn.data_in[side] = now.max(1);
                }
                if seq == 0 && !cn.first_data_seen[side] {
                    cn.first_data_seen[side] = true;
                    first = true;
                }
            }
            flow = c;
        }
        let id = self.pkts.alloc(Packet {
            flow,
            seq,
            ack: 0,
            src: self.host_node[h],
            dst: self.host_node[dh],
            size: n as u32,
            enq_ns: now,
            kind,
            ecn,
            flags: 0,
            class,
            to_side,
            path: 0,
            qmark: 0,
            sack: savanna_core::net::packet::SackOpt::NONE,
        });
        let i = id as usize;
        if i >= self.bufs.len() {
            self.bufs.resize_with(i + 1, || Box::new([0; BUF]));
            self.first.resize(i + 1, 0);
        }
        std::mem::swap(&mut self.bufs[i], &mut self.scratch);
        self.first[i] = first as u8;
        self.created += 1;
        self.cap(EV_IN, now, id, 0, NONE as usize);
        self.forward(self.host_node[h], id, now);
    }

    fn forward(&mut self, node: u32, id: PktId, now: Time) {
        let dst = self.pkts.get(id).dst;
        let l = self.routes.next_hop(node, dst);
        if l == u32::MAX {
            self.drop_packet(id, DropReason::Policy, NONE as usize, now);
            return;
        }
        let c = self.node_classifier[node as usize];
        if c != NONE && self.links[l as usize].to_router {
            let p = self.pkts.get_mut(id);
            self.classifiers[c as usize].classify(p, now, None);
            let dscp = match p.class {
                ClassMark::Short => DSCP_SHORT,
                ClassMark::Long => DSCP_LONG,
                ClassMark::None => 0,
            };
            let b = &mut self.bufs[id as usize];
            if b[1] >> 2 != dscp {
                b[1] = dscp << 2 | (b[1] & 3);
                ip_checksum(&mut b[..]);
            }
        }
        self.enqueue(l as usize, id, now);
    }

    fn enqueue(&mut self, l: usize, id: PktId, now: Time) {
        let link = &mut self.links[l];
        let class = {
            let p = self.pkts.get_mut(id);
            p.enq_ns = now;
            p.class.index()
        };
        link.stats.arrivals[class] += 1;
        self.qout.clear();
        let mut cx =
            QCtx { now, pkts: &mut self.pkts, rng: &mut link.rng, out: &mut self.qout, link_bps: link.rate_bps };
        let accepted = link.qdisc.enqueue(id, &mut cx);
        if accepted {
            link.stats.enqueued[class] += 1;
            link.stats.occupancy[class] += 1;
            if self.qout.favored {
                let f = self.pkts.get(id).flow as usize;
                if let Some(c) = self.conns.get_mut(f) {
                    c.favored += 1;
                }
            }
        }
        self.account_qout(l, Some(id), now);
        if !self.links[l].busy {
            if l == self.bn {
                self.close_busy_period(false);
                self.bp_open = true;
                self.bp_start = self.t0 + now;
                self.bp_ideal_start = now;
                self.bp_bits = 0.0;
                self.bp_pkts = 0;
            }
            self.start_tx(l, now);
        }
    }

    fn account_qout(&mut self, l: usize, arrival: Option<PktId>, now: Time) {
        for i in 0..self.qout.marked.len() {
            let c = self.pkts.get(self.qout.marked[i]).class.index();
            self.links[l].stats.marks[c] += 1;
        }
        for i in 0..self.qout.drops.len() {
            let (d, why) = self.qout.drops[i];
            let c = self.pkts.get(d).class.index();
            let link = &mut self.links[l];
            link.stats.drops[why as usize][c] += 1;
            if Some(d) != arrival {
                link.stats.occupancy[c] -= 1;
            }
            self.drop_packet(d, why, l, now);
        }
    }

    fn start_tx(&mut self, l: usize, now: Time) {
        let link = &mut self.links[l];
        self.qout.clear();
        let mut cx =
            QCtx { now, pkts: &mut self.pkts, rng: &mut link.rng, out: &mut self.qout, link_bps: link.rate_bps };
        let next = link.qdisc.dequeue(&mut cx);
        self.account_qout(l, None, now);
        if let Some(id) = next {
            let link = &mut self.links[l];
            let p = self.pkts.get(id);
            let c = p.class.index();
            link.stats.occupancy[c] -= 1;
            link.stats.departed[c] += 1;
            let tx = (p.size as f64 * link.ns_per_byte).round() as Time;
            link.busy = true;
            link.tx_pkt = id;
            link.busy_ns += tx;
            self.forwarded += 1;
            self.at(now + tx, EV_TX | (l as u32) << 2);
        }
    }

    /// Close the bottleneck's busy period: the bits of its finished transmissions over the
    /// real time from its ideal start to the moment the router handled the end of its last
    /// transmission count towards the achieved rate (periods of at least 10 packets; in
    /// shorter ones the wake-up latency at the end dominates).
    fn close_busy_period(&mut self, at_end: bool) {
        if self.bp_open && (at_end || !self.links[self.bn].busy) {
            self.bp_open = false;
            if self.bp_pkts >= 10 && self.bp_real_ns > self.bp_start {
                self.bp_sum_bits += self.bp_bits;
                self.bp_sum_ideal_ns += (self.bp_bits / self.links[self.bn].rate_bps * 1e9) as u64;
                self.bp_real_ns_total += self.bp_real_ns - self.bp_start;
            }
        }
    }

    fn tx_done(&mut self, l: usize, now: Time) {
        let link = &mut self.links[l];
        link.busy = false;
        let id = link.tx_pkt;
        self.pkts_size_at_tx = self.pkts.get(id).size;
        if link.loss > 0.0 && link.loss_rng.bernoulli(link.loss) {
            self.link_losses += 1;
            let c = self.pkts.get(id).class.index();
            self.links[l].stats.drops[DropReason::LinkLoss as usize][c] += 1;
            self.drop_packet(id, DropReason::LinkLoss, l, now);
        } else {
            let at = now + link.delay_ns;
            if link.line.is_empty() {
                self.at(at, EV_ARRIVE | (l as u32) << 2);
            }
            self.links[l].line.push_back((at, id));
        }
        if l == self.bn {
            self.bp_bits += self.pkts_size_at_tx as f64 * 8.0;
            self.bp_pkts += 1;
        }
        self.start_tx(l, now);
        if l == self.bn {
            self.bp_real_ns = sys::mono_ns();
            if !self.links[l].busy {
                self.close_busy_period(false);
            }
        }
    }

    fn arrive(&mut self, l: usize, now: Time) {
        let Some((_, id)) = self.links[l].line.pop_front() else { return };
        if let Some(&(at, _)) = self.links[l].line.front() {
            self.at(at, EV_ARRIVE | (l as u32) << 2);
        }
        let (to, to_host) = (self.links[l].to, self.links[l].to_host);
        if to_host != NONE {
            self.deliver(id, to_host as usize, now);
        } else {
            self.forward(to, id, now);
        }
    }

    fn deliver(&mut self, id: PktId, h: usize, due: Time) {
        self.cap(EV_OUT, due, id, 0, h);
        let p = *self.pkts.get(id);
        let b = &mut self.bufs[id as usize];
        if p.ecn == Ecn::Ce && b[1] & 3 != 3 {
            b[1] |= 3;
            ip_checksum(&mut b[..]);
        }
        let ok = sys::write_pkt(self.fds[h], &b[..p.size as usize]);
        let out = self.vnow();
        self.deliver_late.add(out.saturating_sub(due));
        if !ok {
            self.write_fail += 1;
        }
        self.delivered += 1;
        if p.is_tcp() {
            if let Some(c) = self.conns.get_mut(p.flow as usize) {
                let s = p.to_side as usize;
                if p.kind == PktKind::SynAck && c.synack_out == 0 {
                    c.synack_out = out.max(1);
                }
                if p.kind == PktKind::Data {
                    c.class_last[s] = p.class as u8;
                    c.delivered_bytes[s] += (p.size - self.plan.hdr_bytes) as u64;
                    if p.ecn == Ecn::Ce {
                        c.ecn_marks[s] += 1;
                    }
                    c.last_due[s] = due.max(1);
                    c.last_out[s] = out.max(1);
                }
            }
        }
        self.pkts.free(id);
    }

    fn drop_packet(&mut self, id: PktId, why: DropReason, link: usize, now: Time) {
        self.cap(EV_DROP, now, id, why as u8, link);
        let p = *self.pkts.get(id);
        self.pkts.free(id);
        self.dropped += 1;
        if !p.is_tcp() {
            return;
        }
        let Some(c) = self.conns.get_mut(p.flow as usize) else { return };
        let s = p.to_side as usize;
        if why == DropReason::PushOut {
            c.pushed_out += 1;
        }
        match p.kind {
            PktKind::Data => {
                c.drops[s] += 1;
                if self.first[id as usize] == 1 {
                    c.first_data_drop[s] = true;
                }
            }
            PktKind::Syn => c.syn_drops += 1,
            PktKind::SynAck => c.synack_drops += 1,
            _ => {}
        }
    }

    fn sample(&mut self, t: Time) {
        let dt = t.saturating_sub(self.last_sample).max(1) as f64;
        for k in 0..self.sampled.len() {
            let l = self.sampled[k];
            let link = &mut self.links[l];
            let mut row = Map::new();
            row.insert("t_s".into(), json!(ns_to_secs(t)));
            row.insert("queue".into(), json!(link.name));
            row.insert("len_pkts".into(), json!(link.qdisc.len_pkts()));
            row.insert("len_bytes".into(), json!(link.qdisc.len_bytes()));
            row.insert("avg_pkts".into(), json!(link.qdisc.avg()));
            for c in ClassMark::ALL {
                let i = c.index();
                let s = c.as_str();
                row.insert(format!("len_{s}"), json!(link.stats.occupancy[i]));
                row.insert(format!("departures_{s}"), json!(link.stats.departed[i] - link.last.departed[i]));
                row.insert(format!("drops_{s}"), json!(link.stats.dropped(i) - link.last.dropped(i)));
                row.insert(format!("marks_{s}"), json!(link.stats.marks[i] - link.last.marks[i]));
            }
            let busy = link.busy_ns - link.last_busy_ns;
            row.insert("utilisation".into(), json!((busy as f64 / dt).min(1.0)));
            link.last = link.stats.clone();
            link.last_busy_ns = link.busy_ns;
            self.samples.push(Value::Object(row));
        }
        self.last_sample = t;
    }

    fn report(&self, end: Time, cpu_ns: u64) -> Value {
        let mut queues = Vec::new();
        for l in &self.links {
            let s = &l.stats;
            let tot = |a: &[u64; 3]| a.iter().sum::<u64>();
            let dropped: u64 = (0..3).map(|c| s.dropped(c)).sum();
            let pushed: u64 = tot(&s.drops[DropReason::PushOut as usize]);
            let mut reasons = Map::new();
            for r in DropReason::ALL {
                let n = tot(&s.drops[r as usize]);
                if n > 0 {
                    reasons.insert(r.as_str().into(), json!(n));
                }
            }
            let mut by_class = Map::new();
            for c in ClassMark::ALL {
                let i = c.index();
                if s.arrivals[i] > 0 {
                    by_class.insert(
                        c.as_str().into(),
                        json!({"arrivals": s.arrivals[i], "enqueued": s.enqueued[i], "departed": s.departed[i],
                               "dropped": s.dropped(i), "marked": s.marks[i],
                               "pushed_out": s.drops[DropReason::PushOut as usize][i]}),
                    );
                }
            }
            queues.push(json!({
                "name": l.name, "discipline": l.qdisc.kind(),
                "arrivals": tot(&s.arrivals), "enqueued": tot(&s.enqueued),
                "departed": tot(&s.departed), "dropped": dropped, "marked": tot(&s.marks), "pushed_out": pushed,
                "utilisation": if end > 0 { (l.busy_ns as f64 / end as f64).min(1.0) } else { 0.0 },
                "occupancy_at_end": l.qdisc.len_pkts(), "dropped_by_reason": reasons, "by_class": by_class,
            }));
        }
        let conns: Vec<Value> = self
            .conns
            .iter()
            .map(|c| {
                let ip = |a: [u8; 4]| format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
                let secs = |t: Time| (t > 0).then(|| ns_to_secs(t));
                json!({"client": ip(c.client), "cport": c.cport, "server": ip(c.server), "sport": c.sport,
                       "syn_sent": c.syn_sent, "synack_sent": c.synack_sent,
                       "syn_drops": c.syn_drops, "synack_drops": c.synack_drops,
                       "data_sent": c.data_sent, "drops": c.drops,
                       "first_data_drop": c.first_data_drop, "ecn_marks": c.ecn_marks,
                       "class_last": c.class_last.map(|x| ClassMark::ALL[x as usize].as_str()),
                       "delivered_bytes": c.delivered_bytes, "favored": c.favored, "pushed_out": c.pushed_out,
                       "syn_in_s": secs(c.syn_in), "synack_out_s": secs(c.synack_out),
                       "data_in_s": c.data_in.map(secs), "last_data_due_s": c.last_due.map(secs),
                       "last_data_out_s": c.last_out.map(secs)})
            })
            .collect();
        let bn = &self.links[self.bn];
        let achieved = (self.bp_real_ns_total > 0).then(|| self.bp_sum_bits / (self.bp_real_ns_total as f64 / 1e9));
        let wall = end as f64 / 1e9;
        json!({
            "duration_s": wall,
            "queues": queues,
            "samples": self.samples,
            "conns": conns,
            "packets": {"created": self.created, "delivered": self.delivered, "dropped": self.dropped,
                        "in_network_at_end": self.pkts.live(), "forwarded": self.forwarded,
                        "link_losses": self.link_losses,
                        "ignored_not_ours": self.ignored, "write_failures": self.write_fail},
            "accuracy": {
                "bottleneck": bn.name,
                "configured_bps": bn.rate_bps,
                "achieved_bps": achieved,
                "achieved_over_configured": achieved.map(|a| a / bn.rate_bps),
                "busy_periods_bits": self.bp_sum_bits,
                "busy_periods_real_s": self.bp_real_ns_total as f64 / 1e9,
                "busy_periods_ideal_s": self.bp_sum_ideal_ns as f64 / 1e9,
                "delivery_lateness": self.deliver_late.json(),
                "event_lateness": self.event_late.json(),
                "cpu_s": cpu_ns as f64 / 1e9,
                "cpu_fraction": if wall > 0.0 { cpu_ns as f64 / 1e9 / wall } else { 0.0 },
            },
        })
    }
}
