//! The simulator: builds a world from a `Plan` and runs the event loop.
//!
//! A packet's life: an endpoint emits it at its host, which hands it to the output port
//! towards the destination (static routes, or a path policy at an edge node); the port's
//! queue discipline accepts, drops or pushes out; its transmitter serialises one packet at a
//! time at the link rate, then the packet propagates for the link delay (or is lost with the
//! link's Bernoulli probability) and arrives at the next node, until the destination host
//! hands it to the endpoint.
//!
//! The world keeps routing, the flows and the event dispatch, and the glue between TCP
//! endpoints and the network. The rest is split by responsibility: `port.rs` (a link's
//! queue, counters, transmitter and propagation line), `flows.rs` (per-flow state and its
//! retirement), `recorder.rs` (samples, goodput, traces, records and the summary), and the
//! traffic generators of `crate::traffic`, which ask for flows through an action buffer
//! that `carry_out` executes.
//!
//! The hot loop allocates nothing once pools have grown (packets, endpoints, flow slots and
//! scratch buffers are reused) and looks nothing up by name: nodes, links, flows and
//! endpoints are plain indices. A flow's state lives from its start until its record is
//! final; then the record is built (once per flow) and written, and the slot reused.

pub mod flows;
pub mod line;
pub mod port;
pub mod recorder;

use std::time::Instant;

use crate::aqm::DropReason;
use crate::classify::Classifier;
use crate::engine::{Event, Rng, Scheduler, Time};
use crate::error::Result;
use crate::metrics::{ClassMark, FlowSink, RunOutput};
use crate::net::packet::FLAG_RETX;
use crate::net::topology::{Routes, NO_ROUTE};
use crate::net::{Packet, PacketPool, PktId, PktKind};
use crate::scenario::build::{make_classifier, make_qdisc, Plan};
use crate::scenario::Scenario;
use crate::tcp::{TcpConfig, TcpEndpoint, TcpIo, TcpNotice};
use crate::traffic::{Action, Actions, Mode, NO_SESSION};
use flows::{Flow, Flows, NONE, NO_PATH};
use port::Port;
use recorder::{Recorder, RunTotals};

/// Run a scenario to completion and return its records, flows in flow order.
pub fn run(sc: &Scenario) -> Result<RunOutput> {
    let mut flows = Vec::new();
    let mut out = run_into(sc, &mut flows, None)?;
    // In memory, `flows[i]` is flow i (flows.parquet has them in retirement order).
    flows.sort_unstable_by_key(|f| f.flow_id);
    out.flows = flows;
    Ok(out)
}

/// Run a scenario and write its flow records to `flows_path` (flows.parquet) while it
/// runs, as flows retire, so they are never all in memory; the returned output
/// holds everything else and no flow records.
pub fn run_streamed(sc: &Scenario, flows_path: &std::path::Path) -> Result<RunOutput> {
    let qdelay = sc.file.sampling.as_ref().is_some_and(|s| s.flow_qdelay);
    let mut fw = crate::metrics::parquet::FlowWriter::create_with(flows_path, qdelay)?;
    let out = run_into(sc, &mut fw, flows_path.parent())?;
    fw.finish()?;
    Ok(out)
}

/// Build the world, run its event loop to the end and finish it, handing every flow
/// record to `sink` as the flow retires (see `World::retire`). `wall_seconds` is the
/// event loop's, with the records of the flows it retires on the way. With `series_dir`,
/// the time series are written there as they are taken (see `Recorder::spool_samples`).
fn run_into(sc: &Scenario, sink: &mut dyn FlowSink, series_dir: Option<&std::path::Path>) -> Result<RunOutput> {
    let plan = crate::scenario::resolve(sc)?;
    let mut w = World::new(plan);
    if let Some(dir) = series_dir {
        w.rec.spool_samples(dir)?;
    }
    let t0 = Instant::now();
    w.run(sink)?;
    let wall = t0.elapsed().as_secs_f64();
    w.finish(wall, sink)
}

/// A node's path policy and edge classifier, indices or NONE.
#[derive(Clone, Copy)]
struct NodeFx {
    policy: u32,
    classifier: u32,
}

/// A node with neither.
const NO_FX: NodeFx = NodeFx { policy: NONE, classifier: NONE };

/// Timer slots of endpoint `ep` in the scheduler: its retransmission and delayed-ACK timers.
#[inline]
fn rto_slot(ep: u32) -> u32 {
    2 * ep
}
#[inline]
fn delack_slot(ep: u32) -> u32 {
    2 * ep + 1
}

pub struct World {
    plan: Plan,
    sched: Scheduler,
    pkts: PacketPool,
    /// Output ports, one per link (same index).
    pub ports: Vec<Port>,
    /// Static next hops (`routes.next_hop(node, dst)`: a link or NO_ROUTE).
    routes: Routes,
    /// Each node's path policy and edge classifier (indices, or NONE); empty when the
    /// world has neither, so forwarding reads nothing per node.
    node_fx: Vec<NodeFx>,
    /// Each policy's random stream.
    policy_rng: Vec<Rng>,
    classifiers: Vec<Box<dyn Classifier>>,
    /// Whether each link leads to a router (classifiers mark only such traffic).
    link_to_router: Vec<bool>,
    flows: Flows,
    eps: Vec<TcpEndpoint>,
    /// Per endpoint: the time its retransmission and delayed-ACK timer events are armed for.
    ep_armed: Vec<[Option<Time>; 2]>,
    free_eps: Vec<u32>,
    /// What an endpoint sent during one call (reused).
    tx_buf: Vec<Packet>,
    /// What a traffic generator asked for during one step (reused).
    acts: Actions,
    rec: Recorder,
    /// Deferred transmission ends that passed without an event (see `start_tx`): counted
    /// with the events processed, as the TxDone events they stand for.
    deferred_ends: u64,
}

impl World {
    pub fn new(plan: Plan) -> World {
        let topo = &plan.topo;
        let routes = topo.routes().expect("validation built these routes");
        let mut ports: Vec<Port> = topo
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                Port::new(
                    l.name.clone(),
                    l.from,
                    l.to,
                    l.rate_bps,
                    l.delay_ns,
                    l.loss,
                    make_qdisc(&plan.queues[l.queue], plan.pkt_bytes),
                    Rng::stream(plan.seed, &format!("queue/{i}")),
                    Rng::stream(plan.seed, &format!("loss/{i}")),
                )
            })
            .collect();
        for (l, f) in &plan.faults {
            ports[*l as usize].add_fault(f.clone());
        }
        let mut node_fx = Vec::new();
        if !plan.classifiers.is_empty() || !plan.policies.is_empty() {
            node_fx = vec![NO_FX; topo.n_nodes()];
        }
        for (i, (node, _)) in plan.classifiers.iter().enumerate() {
            node_fx[*node as usize].classifier = i as u32;
        }
        let classifiers: Vec<Box<dyn Classifier>> =
            plan.classifiers.iter().map(|(_, c)| make_classifier(c, plan.seed)).collect();
        for (i, p) in plan.policies.iter().enumerate() {
            node_fx[p.node as usize].policy = i as u32;
        }
        let policy_rng = plan
            .policies
            .iter()
            .map(|p| Rng::stream(plan.seed, &format!("policy/{}", topo.node_names[p.node as usize])))
            .collect();
        // The event ring's buckets about one full packet's shortest transmission wide, the
        // ring as long as the longest link's transmission and propagation (only the cost
        // depends on it: `engine::calendar`).
        let full = plan.pkt_bytes;
        let min_tx = ports.iter().map(|p| p.tx_ns(full)).min().unwrap_or(1);
        let horizon = ports.iter().map(|p| p.tx_ns(full).saturating_add(p.delay_ns)).max().unwrap_or(1);
        let udp_bytes = plan.traffic.iter().map(|t| t.gen.udp_packet_bytes().unwrap_or(0) as u64).collect();
        let mut w = World {
            sched: Scheduler::for_network(min_tx, horizon),
            pkts: PacketPool::new(),
            ports,
            routes,
            node_fx,
            policy_rng,
            classifiers,
            link_to_router: topo
                .links
                .iter()
                .map(|l| topo.node_kinds[l.to as usize] == crate::net::NodeKind::Router)
                .collect(),
            flows: Flows::default(),
            eps: Vec::new(),
            ep_armed: Vec::new(),
            free_eps: Vec::new(),
            tx_buf: Vec::with_capacity(64),
            acts: Actions::default(),
            rec: Recorder::new(&plan, udp_bytes),
            plan,
            deferred_ends: 0,
        };
        for t in 0..w.plan.traffic.len() {
            w.acts.begin(w.sched.now(), w.flows.next_id());
            w.plan.traffic[t].gen.start(&mut w.acts);
            w.carry_out(t as u32);
        }
        if let Some(t) = w.rec.first_goodput() {
            w.sched.at(t, Event::Goodput);
        }
        if let Some(t) = w.rec.first_sample() {
            w.sched.at(t, Event::Sample);
        }
        for i in 0..w.classifiers.len() {
            if let Some(p) = w.classifiers[i].period() {
                w.sched.at(p, Event::Classify { idx: i as u32 });
            }
        }
        w.sched.at(w.plan.duration_ns, Event::Stop);
        w
    }

    /// Run the event loop to the end, handing the records of retired flows to `sink`.
    pub fn run(&mut self, sink: &mut dyn FlowSink) -> Result<()> {
        let mut events = 0u32;
        while let Some(ev) = self.sched.pop() {
            // A front end may ask the run to stop (Ctrl-C): look every 2^16 events.
            events = events.wrapping_add(1);
            if events & 0xffff == 0 && self.plan.cancel.is_set() {
                return Err(crate::error::Error::Interrupted);
            }
            match ev {
                Event::Arrive { link } => {
                    let port = &mut self.ports[link as usize];
                    let (pkt, next) = port.arrive();
                    if let Some((t, seq)) = next {
                        self.sched.at_seq(t, seq, Event::Arrive { link });
                        if let Some(n) = port.line_head() {
                            self.pkts.prefetch(n);
                        }
                    }
                    let node = port.to;
                    self.arrive(node, pkt)
                }
                Event::TxDone { link } => self.tx_done(link),
                Event::TcpTimer { ep } => self.fire_timer(ep, false),
                Event::DelAck { ep } => self.fire_timer(ep, true),
                Event::Traffic { src, arg } => {
                    self.acts.begin(self.sched.now(), self.flows.next_id());
                    self.plan.traffic[src as usize].gen.step(arg, &mut self.acts);
                    self.carry_out(src);
                    self.retire(sink)?;
                }
                Event::Classify { idx } => {
                    let now = self.sched.now();
                    let c = &mut self.classifiers[idx as usize];
                    c.tick(now);
                    if let Some(p) = c.period() {
                        self.sched.at(now + p, Event::Classify { idx });
                    }
                }
                Event::Sample => self.sample(),
                Event::Goodput => self.goodput_window()?,
                Event::Stop => {
                    let (sample, goodput) = self.rec.due_at_stop(self.sched.now());
                    if sample {
                        self.sample();
                    }
                    if goodput {
                        self.goodput_window()?;
                    }
                    break;
                }
            }
        }
        Ok(())
    }

    /// Slot of live flow `id`.
    #[inline]
    fn fi(&self, id: u32) -> usize {
        self.flows.fi(id)
    }

    /// Queue the flow in slot `fi` for retirement if it has become retirable.
    #[inline]
    fn check_retire(&mut self, fi: usize) {
        self.flows.check_retire(fi);
    }

    /// Retire the flows found retirable: each one's record goes to `sink` (see
    /// `Flows::retire`).
    fn retire(&mut self, sink: &mut dyn FlowSink) -> Result<()> {
        let (rec, plan) = (&self.rec, &self.plan);
        self.flows.retire(|f| sink.take(rec.record(plan, f)))
    }

    // ------------------------------------------------------------------ forwarding

    #[inline]
    fn arrive(&mut self, node: u32, id: PktId) {
        let dst = self.pkts.get(id).dst;
        if dst == node {
            self.deliver(id);
        } else {
            self.forward(node, id);
        }
    }

    #[inline]
    fn forward(&mut self, node: u32, id: PktId) {
        let dst = self.pkts.get(id).dst;
        let mut l = NO_ROUTE;
        let fx = self.node_fx.get(node as usize).copied().unwrap_or(NO_FX);
        let pi = fx.policy;
        if pi != NONE {
            l = self.policy_route(pi as usize, id);
        }
        if l == NO_ROUTE {
            l = self.routes.next_hop(node, dst);
        }
        if l == NO_ROUTE {
            // Validation guarantees host-to-host routes; count defensively.
            self.drop_packet(id, DropReason::Policy);
            return;
        }
        // An edge classifier marks what its node sends on into the network (to another
        // router); packets leaving for an end host, such as ACKs returning to the senders,
        // are neither counted nor marked.
        let c = fx.classifier;
        if c != NONE && self.link_to_router[l as usize] {
            let size = self.flows[self.fi(self.pkts.get(id).flow)].size;
            let p = self.pkts.get_mut(id);
            self.classifiers[c as usize].classify(p, self.sched.now(), size);
        }
        self.enqueue(l, id);
    }

    /// The link a path policy sends this packet on, or NO_ROUTE if it does not cover the
    /// packet's destination.
    fn policy_route(&mut self, pi: usize, id: PktId) -> u32 {
        use crate::net::policy::PolicyKind;
        let p = &self.plan.policies[pi];
        let (flow, dst) = {
            let pk = self.pkts.get(id);
            (pk.flow, pk.dst as usize)
        };
        let c = &p.cands[dst];
        if c.is_empty() {
            return NO_ROUTE;
        }
        let fi = self.fi(flow);
        let f = &mut self.flows[fi];
        let pos = match p.kind {
            PolicyKind::LoadBalanced => {
                if f.path[1] == NO_PATH {
                    self.policy_rng[pi].below(c.len() as u64) as usize
                } else {
                    c.iter().position(|x| x.0 == f.path[1]).unwrap_or(0)
                }
            }
            PolicyKind::SizeBased => usize::from(f.size.is_none_or(|n| n > p.threshold)),
            PolicyKind::Threshold => {
                f.policy_seen += 1;
                usize::from(f.policy_seen > p.threshold)
            }
        };
        let (hop, link) = c[pos.min(c.len() - 1)];
        if f.path[0] == NO_PATH {
            f.path[0] = hop;
        }
        f.path[1] = hop;
        link
    }

    fn enqueue(&mut self, l: u32, id: PktId) {
        let now = self.sched.now();
        // A deferred transmission end (see `start_tx`): passed, the transmitter is free (and
        // the end counts as the event it stands for); still ahead, it becomes an event after
        // all, with its reserved insertion number, to start what is queued now. (Taken
        // before the discipline sees the packet: the discipline never reads the
        // transmitter, and the event's place is fixed by its reserved number.)
        let port = &mut self.ports[l as usize];
        if let Some((end, seq)) = port.take_deferred_end() {
            if self.sched.has_passed(end, seq) {
                port.end_deferred();
                self.deferred_ends += 1;
            } else {
                self.sched.at_seq(end, seq, Event::TxDone { link: l });
            }
        }
        if let Some(end) = port.try_idle_pass(id, now, &mut self.pkts) {
            self.launched(l, now, end);
            return;
        }
        let q = &mut self.ports[l as usize].queue;
        if q.enqueue(id, now, &mut self.pkts) && q.favored() {
            let fi = self.fi(self.pkts.get(id).flow);
            self.flows[fi].favored += 1;
        }
        self.free_dropped(l);
        if !self.ports[l as usize].busy() {
            self.start_tx(l);
        }
    }

    /// Free the packets port `l`'s discipline dropped in its last call (counted there).
    #[inline]
    fn free_dropped(&mut self, l: u32) {
        for i in 0..self.ports[l as usize].queue.dropped().len() {
            let (d, why) = self.ports[l as usize].queue.dropped()[i];
            self.drop_packet(d, why);
        }
    }

    #[inline(always)]
    fn start_tx(&mut self, l: u32) {
        let now = self.sched.now();
        let end = self.ports[l as usize].start_tx(now, &mut self.pkts);
        self.free_dropped(l);
        if let Some(end) = end {
            self.launched(l, now, end);
        }
    }

    /// A transmission on link `l` started at `now` and ends at `end`: record its queueing
    /// delay if asked, and schedule its end and the packet's arrival.
    #[inline(always)]
    fn launched(&mut self, l: u32, now: Time, end: Time) {
        if self.rec.records_qdelay(l) {
            let p = *self.pkts.get(self.ports[l as usize].tx_pkt());
            let fi = self.fi(p.flow);
            self.rec.queue_wait(&p, &mut self.flows[fi], now);
        }
        // The insertion numbers of the transmission's end and of the packet's arrival, both
        // taken now (`port.rs`: what keeps a deferred end exact).
        let seq = self.sched.reserve_seq();
        let aseq = self.sched.reserve_seq();
        let port = &mut self.ports[l as usize];
        if port.can_defer_end() {
            // Nothing queued behind: send the packet on now and keep its end out of the heap.
            let id = port.defer_end(seq);
            let at = end + port.delay_ns;
            if port.propagate(at, aseq, id) {
                self.sched.at_seq(at, aseq, Event::Arrive { link: l });
            }
        } else {
            port.set_arrival_seq(aseq);
            self.sched.at_seq(end, seq, Event::TxDone { link: l });
        }
    }

    fn tx_done(&mut self, l: u32) {
        let port = &mut self.ports[l as usize];
        if port.end_deferred() {
            self.start_tx(l);
            return;
        }
        let (id, lost) = port.end_tx(&self.pkts);
        if lost {
            self.drop_packet(id, DropReason::LinkLoss);
        } else {
            let at = self.sched.now() + port.delay_ns;
            let seq = port.arrival_seq();
            if port.propagate(at, seq, id) {
                self.sched.at_seq(at, seq, Event::Arrive { link: l });
            }
        }
        self.start_tx(l);
    }

    fn drop_packet(&mut self, id: PktId, why: DropReason) {
        let p = *self.pkts.get(id);
        self.pkts.free(id);
        self.rec.counters.packets_dropped += 1;
        let fi = self.fi(p.flow);
        let f = &mut self.flows[fi];
        f.in_net -= 1;
        if why == DropReason::PushOut {
            f.pushed_out += 1;
        }
        match p.kind {
            PktKind::Data | PktKind::Udp => {
                f.drops += 1;
                if p.seq == 0 && p.to_side == f.data_to_side && p.flags & FLAG_RETX == 0 {
                    f.first_data_drop = true;
                }
            }
            PktKind::Syn => f.syn_drops += 1,
            PktKind::SynAck => f.synack_drops += 1,
            PktKind::Ack | PktKind::Fin => f.ack_drops += 1,
        }
        if f.in_net == 0 {
            self.check_retire(fi);
        }
    }

    // ------------------------------------------------------------------ endpoints

    fn deliver(&mut self, id: PktId) {
        let p = *self.pkts.get(id);
        self.pkts.free(id);
        self.rec.counters.packets_delivered += 1;
        let fi = self.fi(p.flow);
        let f = &mut self.flows[fi];
        f.in_net -= 1;
        if p.kind == PktKind::Udp {
            f.tcp.delivered += 1;
            f.class_at_end = p.class;
            self.rec.delivered(f);
            if f.in_net == 0 {
                self.check_retire(fi);
            }
            return;
        }
        if p.kind == PktKind::Data && p.to_side == f.data_to_side {
            f.class_at_end = p.class;
            self.rec.delivered(f);
        }
        let ep = f.ep[p.to_side as usize];
        if ep == NONE {
            self.rec.counters.late_packets += 1;
            if f.in_net == 0 {
                self.check_retire(fi);
            }
            return;
        }
        let e = &mut self.eps[ep as usize];
        let cfg = &self.plan.tcp[e.cfg as usize];
        let mut io = TcpIo { now: self.sched.now(), cfg, out: &mut self.tx_buf, notice: TcpNotice::default() };
        e.on_packet(&p, &mut io);
        let notice = io.notice;
        self.after_tcp(ep, notice, "packet");
    }

    /// A timer of an endpoint fired (a cancelled or re-armed one never does): act if its
    /// deadline has come, or re-arm it if the deadline moved later since it was armed.
    fn fire_timer(&mut self, ep: u32, delack: bool) {
        let now = self.sched.now();
        let e = &mut self.eps[ep as usize];
        let deadline = if delack { e.delack_deadline() } else { e.timer_deadline() };
        self.ep_armed[ep as usize][delack as usize] = None;
        match deadline {
            Some(d) if d <= now => {
                let cfg = &self.plan.tcp[e.cfg as usize];
                let mut io = TcpIo { now, cfg, out: &mut self.tx_buf, notice: TcpNotice::default() };
                if delack {
                    e.on_delack_timer(&mut io);
                } else {
                    e.on_timer(&mut io);
                }
                let notice = io.notice;
                self.after_tcp(ep, notice, if delack { "delack" } else { "timeout" });
            }
            Some(_) => self.sync_timers(ep),
            None => {}
        }
    }

    /// Inject what an endpoint sent, react to its notices, and arm its timers.
    #[inline(always)]
    fn after_tcp(&mut self, ep: u32, notice: TcpNotice, event: &'static str) {
        let node = self.eps[ep as usize].local;
        let flow = self.eps[ep as usize].flow;
        let side = self.eps[ep as usize].side;
        let fi = self.fi(flow);
        let mut buf = std::mem::take(&mut self.tx_buf);
        for p in buf.drain(..) {
            debug_assert_eq!(p.flow, flow);
            self.flows[fi].in_net += 1;
            let id = self.pkts.alloc(p);
            self.forward(node, id);
        }
        self.tx_buf = buf;
        if self.flows[fi].traced {
            self.rec.trace(self.sched.now(), flow, side, event, &self.eps[ep as usize]);
        }
        let f = &mut self.flows[fi];
        if notice.rx_complete && side == f.data_to_side && f.end.is_none() {
            f.end = Some(self.sched.now());
            self.rec.counters.flows_finished += 1;
            self.rec.counters.tcp_finished += 1;
            let (t, session) = (f.traffic, f.session);
            if session != NONE && !self.plan.traffic[t as usize].gen.done_on_ack() {
                self.session_done(t as usize, session);
            }
        }
        let f = &self.flows[fi];
        if notice.tx_complete && side != f.data_to_side && f.session != NONE {
            let (t, session) = (f.traffic as usize, f.session);
            if self.plan.traffic[t].gen.done_on_ack() {
                self.session_done(t, session);
            }
        }
        let f = &self.flows[fi];
        let (a, b) = (f.ep[0], f.ep[1]);
        let done = |e: &TcpEndpoint| e.finished();
        if a != NONE && b != NONE && done(&self.eps[a as usize]) && done(&self.eps[b as usize]) {
            self.release(flow);
            return;
        }
        self.sync_timers(ep);
    }

    /// Schedule timer events for an endpoint whose deadlines moved earlier than its pending
    /// events (later deadlines are picked up when the pending event fires).
    #[inline(always)]
    fn sync_timers(&mut self, ep: u32) {
        let (e, armed) = (&self.eps[ep as usize], &mut self.ep_armed[ep as usize]);
        if let Some(d) = e.timer_deadline() {
            if armed[0].is_none_or(|t| d < t) {
                armed[0] = Some(d);
                self.sched.set_timer(rto_slot(ep), d, Event::TcpTimer { ep });
            }
        }
        if let Some(d) = e.delack_deadline() {
            if armed[1].is_none_or(|t| d < t) {
                armed[1] = Some(d);
                self.sched.set_timer(delack_slot(ep), d, Event::DelAck { ep });
            }
        }
    }

    fn release(&mut self, flow: u32) {
        let fi = self.fi(flow);
        for side in 0..2 {
            let ep = self.flows[fi].ep[side];
            if ep == NONE {
                continue;
            }
            let e = &mut self.eps[ep as usize];
            let receives_data = side as u8 == self.flows[fi].data_to_side;
            add_stats(&mut self.flows[fi].tcp, &e.stats, receives_data);
            self.ep_armed[ep as usize] = [None, None];
            self.sched.cancel_timer(rto_slot(ep));
            self.sched.cancel_timer(delack_slot(ep));
            self.flows[fi].ep[side] = NONE;
            self.free_eps.push(ep);
        }
        self.check_retire(fi);
    }

    #[allow(clippy::too_many_arguments)]
    fn new_endpoint(&mut self, flow: u32, side: u8, local: u32, remote: u32, cfg: u16, snd: u64, rcv: u64) -> u32 {
        let c: &TcpConfig = &self.plan.tcp[cfg as usize];
        match self.free_eps.pop() {
            Some(i) => {
                self.eps[i as usize].reset(flow, side, local, remote, cfg, c, snd, rcv);
                i
            }
            None => {
                self.eps.push(TcpEndpoint::new(flow, side, local, remote, cfg, c, snd, rcv));
                self.ep_armed.push([None, None]);
                (self.eps.len() - 1) as u32
            }
        }
    }

    // ------------------------------------------------------------------ traffic

    /// Carry out what traffic block `block`'s generator asked for in its last call, in
    /// order.
    fn carry_out(&mut self, block: u32) {
        let acts = std::mem::take(&mut self.acts);
        let tcp = self.plan.traffic[block as usize].tcp;
        for &a in acts.list() {
            match a {
                Action::StartTcp { id, src, dst, size, mode, session } => {
                    let flow = self.start_flow(block as u16, tcp, mode, src, dst, size, session);
                    debug_assert_eq!(flow, id, "flows start in the order they were asked for");
                }
                Action::StartUdp { id, src, dst, total } => {
                    let flow = self.new_flow(block as u16, Mode::Bulk, src, dst, total, true, NO_SESSION);
                    debug_assert_eq!(flow, id, "flows start in the order they were asked for");
                    self.rec.counters.udp_started += 1;
                }
                Action::SendUdp { flow, seq, bytes } => self.send_udp(flow, seq, bytes),
                Action::EndUdp { flow } => {
                    let fi = self.fi(flow);
                    self.flows[fi].end = Some(self.sched.now());
                    self.check_retire(fi);
                    self.rec.counters.udp_finished += 1;
                    self.rec.counters.flows_finished += 1;
                }
                Action::Wake { at, arg } => self.sched.at(at, Event::Traffic { src: block, arg }),
            }
        }
        self.acts = acts;
    }

    /// A session's connection delivered all its data: tell its generator.
    fn session_done(&mut self, t: usize, session: u32) {
        self.acts.begin(self.sched.now(), self.flows.next_id());
        self.plan.traffic[t].gen.flow_done(session, &mut self.acts);
        self.carry_out(t as u32);
    }

    #[allow(clippy::too_many_arguments)]
    fn new_flow(
        &mut self,
        traffic: u16,
        mode: Mode,
        s: u32,
        d: u32,
        size: Option<u64>,
        udp: bool,
        session: u32,
    ) -> u32 {
        let now = self.sched.now();
        let flow = self.flows.next_id();
        let base_rtt = self.path_delay(s, d) + self.path_delay(d, s);
        let f = Flow {
            traffic,
            mode,
            src: s,
            dst: d,
            start: now,
            end: None,
            size,
            data_to_side: if mode == Mode::Bulk { 1 } else { 0 },
            ep: [NONE, NONE],
            drops: 0,
            syn_drops: 0,
            synack_drops: 0,
            pushed_out: 0,
            ack_drops: 0,
            first_data_drop: false,
            tcp: Default::default(),
            base_rtt,
            class_at_end: ClassMark::None,
            favored: 0,
            qdelay: Default::default(),
            traced: !udp && self.plan.trace_flows.contains(&(flow as u64)),
            udp,
            session,
            path: [NO_PATH; 2],
            policy_seen: 0,
            gp_last: 0,
            gp_dirty: false,
            in_net: 0,
            id: flow,
            retiring: false,
        };
        self.flows.insert(f);
        flow
    }

    /// Send packet `seq` of UDP flow `flow`.
    fn send_udp(&mut self, flow: u32, seq: u32, bytes: u32) {
        let fi = self.fi(flow);
        let (s, d) = (self.flows[fi].src, self.flows[fi].dst);
        let id = self.pkts.alloc(Packet {
            flow,
            seq,
            ack: 0,
            src: s,
            dst: d,
            size: bytes,
            enq_ns: 0,
            kind: PktKind::Udp,
            ecn: crate::net::Ecn::NotEct,
            flags: 0,
            class: ClassMark::None,
            to_side: 1,
            path: 0,
            qmark: 0,
            sack: crate::net::packet::SackOpt::NONE,
        });
        self.flows[fi].tcp.data_pkts_sent += 1;
        self.flows[fi].in_net += 1;
        self.forward(s, id);
    }

    /// Create a TCP flow carrying `size` data packets (None: persistent) from host `s` to
    /// `d`, of session `session` of its traffic block (or NO_SESSION); returns its id.
    #[allow(clippy::too_many_arguments)]
    fn start_flow(
        &mut self,
        traffic: u16,
        tcp: u16,
        mode: Mode,
        s: u32,
        d: u32,
        size: Option<u64>,
        session: u32,
    ) -> u32 {
        let now = self.sched.now();
        let n = size.unwrap_or(u64::MAX);
        // Client (side 0) opens the connection. Bulk: the client is the data sender.
        // Request/response: the client is the data receiver and asks with one packet.
        let (client, server) = match mode {
            Mode::Bulk => (s, d),
            Mode::RequestResponse => (d, s),
        };
        let flow = self.new_flow(traffic, mode, s, d, size, false, session);
        self.rec.counters.tcp_started += 1;
        let (c_snd, c_rcv, s_snd, s_rcv) = match mode {
            Mode::Bulk => (n, 0, 0, n),
            Mode::RequestResponse => (1, n, 0, 1),
        };
        let ce = self.new_endpoint(flow, 0, client, server, tcp, c_snd, c_rcv);
        let se = self.new_endpoint(flow, 1, server, client, tcp, s_snd, s_rcv);
        let cfg = &self.plan.tcp[tcp as usize];
        if mode == Mode::RequestResponse {
            self.eps[ce as usize].data_bytes = cfg.request_bytes;
            self.eps[se as usize].respond_with(n);
            self.eps[se as usize].set_active_close(cfg);
        } else {
            self.eps[ce as usize].set_active_close(cfg);
        }
        if !cfg.handshake {
            self.eps[se as usize].accept_without_handshake(cfg);
        }
        let fi = self.fi(flow);
        self.flows[fi].ep = [ce, se];
        let e = &mut self.eps[ce as usize];
        let mut io = TcpIo { now, cfg, out: &mut self.tx_buf, notice: TcpNotice::default() };
        e.open(&mut io);
        let notice = io.notice;
        self.after_tcp(ce, notice, "open");
        flow
    }

    fn path_delay(&self, s: u32, d: u32) -> Time {
        self.plan.topo.path(&self.routes, s, d).iter().map(|&l| self.ports[l as usize].delay_ns).sum()
    }

    // ------------------------------------------------------------------ measurement

    fn sample(&mut self) {
        let now = self.sched.now();
        if let Some(next) = self.rec.sample(now, &mut self.ports, &self.classifiers, self.pkts.live()) {
            self.sched.at(next, Event::Sample);
        }
    }

    fn goodput_window(&mut self) -> Result<()> {
        let now = self.sched.now();
        if let Some(next) = self.rec.goodput_window(now, &mut self.flows, &self.eps)? {
            self.sched.at(next, Event::Goodput);
        }
        Ok(())
    }

    /// End the run: totals and summary; then every flow still live retires, in flow order
    /// after those already queued (see `Flows::retire`). `RunOutput::flows` is left empty.
    /// A run that fails its consistency checks returns the error; what the sink got by then
    /// is the caller's to discard (`run_streamed` writes into a staging directory that is
    /// then removed).
    pub fn finish(mut self, wall_seconds: f64, sink: &mut dyn FlowSink) -> Result<RunOutput> {
        let end = self.sched.now();
        // Fold the counters of still-open endpoints into their flows.
        let live: Vec<usize> = self.flows.live_slots().collect();
        for fi in live {
            for side in 0..2 {
                let ep = self.flows[fi].ep[side];
                if ep != NONE {
                    let receives_data = side as u8 == self.flows[fi].data_to_side;
                    add_stats(&mut self.flows[fi].tcp, &self.eps[ep as usize].stats, receives_data);
                }
            }
        }
        let passed = self
            .ports
            .iter()
            .filter_map(|p| p.deferred_end())
            .filter(|&(t, seq)| self.sched.has_passed(t, seq))
            .count() as u64;
        let totals = RunTotals {
            events: self.sched.events() + self.deferred_ends + passed,
            packets_created: self.pkts.created(),
            packets_live: self.pkts.live(),
            flows_started: self.flows.started(),
        };
        let summary = self.rec.summary(&self.plan, end, wall_seconds, totals, &self.ports)?;
        self.flows.retire_all();
        self.retire(sink)?;
        self.rec.finish_spools()?;
        let n_classifiers = self.classifiers.len();
        Ok(self.rec.output(summary, n_classifiers))
    }
}

/// Fold one endpoint's counters into its flow. `delivered` counts only the data direction
/// (not a request); the other counters cover both ends.
fn add_stats(into: &mut crate::tcp::TcpStats, s: &crate::tcp::TcpStats, receives_data: bool) {
    into.data_pkts_sent += s.data_pkts_sent;
    into.retransmits += s.retransmits;
    into.timeouts += s.timeouts;
    into.fast_retransmits += s.fast_retransmits;
    into.ecn_marks += s.ecn_marks;
    if receives_data {
        into.delivered += s.delivered;
    }
    into.syn_sent += s.syn_sent;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::FlowRecord;
    use crate::scenario::parse;
    use crate::scenario::Format;

    fn scenario(file: &str, secs: f64) -> Scenario {
        scenario_edited(file, secs, |l| l.to_string())
    }

    /// `scenario` with each line of the file passed through `edit` first.
    fn scenario_edited(file: &str, secs: f64, edit: impl Fn(&str) -> String) -> Scenario {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<String> = text.lines().filter(|l| !l.starts_with("duration_s")).map(edit).collect();
        let text = format!("duration_s = {secs}\n{}\n", lines.join("\n"));
        parse(&text, Format::Toml, path.parent().unwrap()).unwrap()
    }

    /// Run `sc`; the records in flow order and the most flows held at once.
    fn records(sc: &Scenario, keep_all: bool) -> (Vec<FlowRecord>, usize) {
        let mut w = World::new(crate::scenario::resolve(sc).unwrap());
        w.flows.keep_all = keep_all;
        let mut rows = Vec::new();
        w.run(&mut rows).unwrap();
        let held = w.flows.held();
        let out = w.finish(0.0, &mut rows).unwrap();
        assert_eq!(rows.len() as u64, out.summary.flows_started);
        rows.sort_by_key(|f| f.flow_id);
        (rows, held)
    }

    #[test]
    fn retiring_flows_early_changes_no_record() {
        // Drop-tail (late packets of closed connections, dropped or delivered) and RED
        // dumbbells with goodput windows, UDP flows, web sessions over a path policy:
        // every record written as its flow retires equals the one written at the end
        // with every flow kept.
        let cases = [
            ("dumbbell-droptail.toml", 150.0),
            ("dumbbell-red.toml", 150.0),
            ("matta-guo-2000-table2-udp.toml", 300.0),
            ("matta-guo-2000-fig10-web.toml", 30.0),
        ];
        for (file, secs) in cases {
            let sc = scenario(file, secs);
            let (kept, held_all) = records(&sc, true);
            let (retired, held) = records(&sc, false);
            assert_eq!(held_all, kept.len(), "{file}");
            // Flows did retire early, so the records compared come from both paths.
            assert!(held < kept.len(), "{file}: held {held} of {} flows", kept.len());
            assert_eq!(kept.len(), retired.len(), "{file}");
            for (a, b) in kept.iter().zip(&retired) {
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{file}: flow {}", a.flow_id);
            }
        }
    }

    #[test]
    fn time_series_spooled_during_the_run_equal_those_written_at_the_end() {
        use crate::metrics::output::{self, CLASSIFIERS_FILE, GOODPUT_FILE, NETWORK_FILE, QUEUES_FILE, TRACES_FILE};
        let mut seen = std::collections::BTreeSet::new();
        for (file, secs) in [
            ("dumbbell-red.toml", 60.0),
            ("guo-matta-2001-fig03.toml", 60.0),
            ("matta-guo-2000-fig04-isolation.toml", 40.0),
        ] {
            let sc = scenario(file, secs);
            let mem = run(&sc).unwrap();
            assert!(!mem.spooled, "{file}");
            let dir = std::env::temp_dir().join(format!("savanna-sim-spool-{}-{file}", std::process::id()));
            std::fs::create_dir_all(dir.join("streamed")).unwrap();
            let streamed = run_streamed(&sc, &dir.join("streamed").join(output::FLOWS_FILE)).unwrap();
            assert!(streamed.spooled && streamed.goodput.is_empty() && streamed.queues.is_empty(), "{file}");
            output::write_run(&dir.join("whole"), &mem).unwrap();
            for name in [QUEUES_FILE, NETWORK_FILE, CLASSIFIERS_FILE, GOODPUT_FILE, TRACES_FILE] {
                let whole = std::fs::read(dir.join("whole").join(name)).ok();
                let spooled = std::fs::read(dir.join("streamed").join(name)).ok();
                assert!(whole == spooled, "{file}: {name} differs");
                if whole.is_some() {
                    seen.insert(name);
                }
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
        assert_eq!(seen.len(), 5, "every time series written by some scenario: {seen:?}");
    }

    /// Flow records, summary (events included), queue and network samples of `sc`, each
    /// port first passed to `setup`; and `used(world)` at the end (how often a shortcut
    /// under test was taken).
    fn outputs_with(
        sc: &Scenario,
        setup: impl Fn(&mut Port),
        used: impl Fn(&World) -> u64,
    ) -> (String, String, String, u64) {
        let mut w = World::new(crate::scenario::resolve(sc).unwrap());
        w.ports.iter_mut().for_each(setup);
        let mut rows: Vec<FlowRecord> = Vec::new();
        w.run(&mut rows).unwrap();
        let n = used(&w);
        let out = w.finish(0.0, &mut rows).unwrap();
        let sum = serde_json::to_string(&out.summary).unwrap();
        (format!("{rows:?}"), sum, format!("{:?}{:?}", out.queues, out.network), n)
    }

    /// A shortcut allowed (`on`) and forbidden (`off`) give the same outputs, and it was
    /// taken (more than 1,000 times) only when allowed.
    fn assert_same_outputs(what: &str, on: (String, String, String, u64), off: (String, String, String, u64)) {
        assert!(on.3 > 1000, "{what}: shortcut taken {} times", on.3);
        assert_eq!(off.3, 0, "{what}");
        assert!(on.0 == off.0, "{what}: flow records differ");
        assert_eq!(on.1, off.1, "{what}: summary");
        assert!(on.2 == off.2, "{what}: queue or network samples differ");
    }

    /// Deferral on (where `defer` allows) and off give the same outputs, and it was used.
    fn assert_deferral_changes_no_output(what: &str, sc: &Scenario, defer: impl Fn(&Port) -> bool) {
        let setup = |p: &mut Port| {
            if !defer(p) {
                p.forbid_deferred_ends();
            }
        };
        let on = outputs_with(sc, setup, |w| w.deferred_ends);
        let off = outputs_with(sc, Port::forbid_deferred_ends, |w| w.deferred_ends);
        assert_same_outputs(what, on, off);
    }

    /// The scenarios both port shortcuts (deferred ends, the idle pass) are checked on: the
    /// dumbbell (access links idle most of the time), web sessions with TCP ticks (many
    /// same-nanosecond events), UDP, RIO-PS behind drop-tail edges, five hops, and Tokuda's
    /// lossy link (loss 0.01).
    const SHORTCUT_CASES: [(&str, f64); 6] = [
        ("dumbbell-droptail.toml", 100.0),
        ("matta-guo-2000-fig10-web.toml", 20.0),
        ("matta-guo-2000-table2-udp.toml", 100.0),
        ("guo-matta-2001-fig07.toml", 30.0),
        ("favorqueue-2013-fig26-five-hops.toml", 30.0),
        ("tokuda-2002-fig02-lossy-link.toml", 30.0),
    ];

    #[test]
    fn deferring_transmission_ends_changes_no_output() {
        // Drop-tail links send a packet on when it starts and keep its end out of the heap
        // unless another packet comes: every record, time series and the summary (events
        // included) equal those of a run with an end event per packet. On the lossy link
        // the packets the link keeps defer.
        for (file, secs) in SHORTCUT_CASES {
            assert_deferral_changes_no_output(file, &scenario(file, secs), |_| true);
        }
    }

    #[test]
    fn deferring_ends_behind_disciplines_with_noop_empty_dequeues_changes_no_output() {
        // Bottleneck and reverse queues of each discipline whose empty dequeue is a no-op,
        // on the FavorQueue paper's 10 Mb/s dumbbell (idle periods in both directions), and
        // deferral allowed only on that discipline's ports: outputs equal those of an end
        // event per packet.
        let cases = [
            ("favorqueue", "limit_pkts = 8"),
            ("las", "limit_pkts = 8"),
            ("run2c", "limit_pkts = 8, threshold_pkts = 3"),
            ("prq", "limit_pkts = 8"),
            ("drr", "limit_short_pkts = 8, limit_long_pkts = 8, share_short = 0.2, share_long = 0.8"),
        ];
        for (kind, params) in cases {
            let sc = scenario_edited("favorqueue-2013-fig03-10mbps.toml", 60.0, |l| match l.split_once(" = ") {
                Some((k @ ("bottleneck_queue" | "reverse_queue"), _)) => {
                    format!("{k} = {{ type = \"{kind}\", {params} }}")
                }
                _ => l.to_string(),
            });
            assert_deferral_changes_no_output(kind, &sc, |p| p.queue.qdisc.kind() == kind);
        }
    }

    #[test]
    fn the_idle_pass_changes_no_output() {
        // A packet reaching an idle, empty drop-tail port starts without the discipline's
        // enqueue and dequeue: every record, time series and the summary equal those of the
        // queued path (deferral allowed in both).
        let passes = |w: &World| w.ports.iter().map(Port::idle_passes).sum();
        for (file, secs) in SHORTCUT_CASES {
            let sc = scenario(file, secs);
            let on = outputs_with(&sc, |_| {}, passes);
            let off = outputs_with(&sc, Port::forbid_idle_pass, passes);
            assert_same_outputs(file, on, off);
        }
    }

    #[test]
    fn a_run_holds_only_the_flows_live_at_once() {
        // About 3,300 flows over 150 s, a few dozen open at a time: the state held is
        // bounded by the flows live together, not by the flows started.
        let sc = scenario("dumbbell-droptail.toml", 150.0);
        let (recs, held) = records(&sc, false);
        assert!(recs.len() > 3000, "{} flows", recs.len());
        assert!(held * 20 < recs.len(), "held {held} flow states for {} flows", recs.len());
    }
}
