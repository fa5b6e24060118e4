//! The recorder: what a run writes besides moving packets. Periodic queue, network and
//! classifier samples (queues.parquet and friends), per-flow goodput windows, TCP traces of
//! chosen flows, the run's counters, each flow's record when it retires, and the summary
//! with its consistency checks (every queue's occupancy matches its discipline; packets are
//! conserved). It reads the ports, flows and endpoints the world passes it and owns none.
//! Writing into an output directory (`spool_samples`), the time series go to their files as
//! they are taken, so a run's memory does not grow with its simulated time.

use std::collections::BTreeMap;

use super::flows::{Flow, Flows, NONE, NO_PATH};
use super::port::Port;
use crate::aqm::DropReason;
use crate::classify::Classifier;
use crate::engine::{ns_to_secs, Time};
use crate::error::{Error, Result};
use crate::metrics::parquet::{
    classifier_writer, goodput_writer, network_writer, queue_writer, trace_writer, SpoolWriter,
};
use crate::metrics::{
    ClassMark, ClassTotals, ClassifierSample, DualPi2Sojourns, FlowRecord, GoodputSample, Name, NetSample, QueueSample,
    QueueTotals, RunOutput, RunSummary, TraceSample,
};
use crate::net::{Packet, PktKind};
use crate::scenario::Plan;
use crate::tcp::TcpEndpoint;

/// Run-wide counters.
#[derive(Default)]
pub struct Counters {
    pub tcp_started: u64,
    pub tcp_finished: u64,
    pub udp_started: u64,
    pub udp_finished: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    /// Packets that reached an endpoint already released (counted, not reported).
    pub late_packets: u64,
    pub flows_finished: u64,
}

/// Names for flow records, made once per run: nodes, each traffic block's name and tag,
/// each path policy's hops, and the empty name.
struct RecordNames {
    nodes: Vec<Name>,
    traffic: Vec<(Name, Name)>,
    hops: Vec<Vec<Name>>,
    empty: Name,
}

pub struct Recorder {
    pub counters: Counters,
    names: RecordNames,
    /// Wire bytes of each traffic block's UDP packets (0: a TCP block).
    udp_bytes: Vec<u64>,
    mss: u64,
    /// Queue sampling: period (0: off), the links sampled, the last instant.
    sample_ns: Time,
    sampled_links: Vec<u32>,
    /// `sampling.flow_qdelay`: whether each link's queue adds to its flows' queueing delay
    /// (empty when off).
    qdelay_links: Vec<bool>,
    last_sample_ns: Time,
    /// Node name of each classifier, for its samples.
    classifier_nodes: Vec<String>,
    /// Goodput windows: length (0: off), the last instant, the flows that delivered since.
    goodput_ns: Time,
    last_gp_ns: Time,
    gp_list: Vec<u32>,
    end_ns: Time,
    tracing: bool,
    samples: Vec<QueueSample>,
    classifier_samples: Vec<ClassifierSample>,
    network: Vec<NetSample>,
    goodput: Vec<GoodputSample>,
    traces: Vec<TraceSample>,
    /// After `spool_samples`: the files the time series go to instead of the vectors above.
    spools: Spools,
    spooled: bool,
}

/// The writers of the time series a run writes while it goes (`Recorder::spool_samples`),
/// each None when its table is off, and the first error one of them met (sampling and
/// tracing do not stop the run; `finish_spools` reports it).
#[derive(Default)]
struct Spools {
    queues: Option<SpoolWriter<QueueSample>>,
    network: Option<SpoolWriter<NetSample>>,
    classifiers: Option<SpoolWriter<ClassifierSample>>,
    goodput: Option<SpoolWriter<GoodputSample>>,
    traces: Option<SpoolWriter<TraceSample>>,
    error: Option<Error>,
}

/// Hand `row` to its file when one is open, else keep it in `mem`.
#[inline]
fn keep<R>(file: &mut Option<SpoolWriter<R>>, error: &mut Option<Error>, mem: &mut Vec<R>, row: R) {
    match file {
        Some(w) => {
            if let Err(e) = w.push(row) {
                error.get_or_insert(e);
            }
        }
        None => mem.push(row),
    }
}

/// Finish a time series' file, if it was open; the first error wins.
fn finish_spool<R>(file: Option<SpoolWriter<R>>, error: &mut Option<Error>) {
    if let Some(w) = file {
        if let Err(e) = w.finish() {
            error.get_or_insert(e);
        }
    }
}

impl Recorder {
    /// `udp_bytes[b]`: wire size of traffic block b's UDP packets (0 for TCP blocks).
    pub fn new(plan: &Plan, udp_bytes: Vec<u64>) -> Self {
        let (sample_ns, sampled_links) = plan.sampling.clone().unwrap_or((0, Vec::new()));
        Recorder {
            counters: Counters::default(),
            names: RecordNames {
                nodes: plan.topo.node_names.iter().map(|n| Name::from(n.as_str())).collect(),
                traffic: plan
                    .traffic
                    .iter()
                    .map(|t| (Name::from(t.name.as_str()), Name::from(t.tag.as_str())))
                    .collect(),
                hops: plan
                    .policies
                    .iter()
                    .map(|p| p.hop_names.iter().map(|n| Name::from(n.as_str())).collect())
                    .collect(),
                empty: Name::from(""),
            },
            udp_bytes,
            mss: (plan.pkt_bytes - plan.hdr_bytes) as u64,
            sample_ns,
            qdelay_links: if plan.flow_qdelay {
                (0..plan.topo.links.len() as u32).map(|l| sampled_links.contains(&l)).collect()
            } else {
                Vec::new()
            },
            sampled_links,
            last_sample_ns: 0,
            classifier_nodes: plan.classifiers.iter().map(|(n, _)| plan.topo.node_names[*n as usize].clone()).collect(),
            goodput_ns: plan.goodput_ns,
            last_gp_ns: 0,
            gp_list: Vec::new(),
            end_ns: plan.duration_ns,
            tracing: !plan.trace_flows.is_empty(),
            samples: Vec::new(),
            classifier_samples: Vec::new(),
            network: Vec::new(),
            goodput: Vec::new(),
            traces: Vec::new(),
            spools: Spools::default(),
            spooled: false,
        }
    }

    /// Write the time series that are on (queues, network and classifiers with sampling,
    /// goodput windows, traces) into `dir` as they are taken, under their output file
    /// names, instead of keeping them until the run ends.
    pub fn spool_samples(&mut self, dir: &std::path::Path) -> Result<()> {
        use crate::metrics::output::{CLASSIFIERS_FILE, GOODPUT_FILE, NETWORK_FILE, QUEUES_FILE, TRACES_FILE};
        let sp = &mut self.spools;
        if self.sample_ns > 0 {
            sp.queues = Some(queue_writer(&dir.join(QUEUES_FILE))?);
            sp.network = Some(network_writer(&dir.join(NETWORK_FILE))?);
            if !self.classifier_nodes.is_empty() {
                sp.classifiers = Some(classifier_writer(&dir.join(CLASSIFIERS_FILE))?);
            }
        }
        if self.goodput_ns > 0 {
            sp.goodput = Some(goodput_writer(&dir.join(GOODPUT_FILE))?);
        }
        if self.tracing {
            sp.traces = Some(trace_writer(&dir.join(TRACES_FILE))?);
        }
        self.spooled = true;
        Ok(())
    }

    /// Finish the files `spool_samples` opened (after the last sample and window).
    pub fn finish_spools(&mut self) -> Result<()> {
        let mut sp = std::mem::take(&mut self.spools);
        finish_spool(sp.queues, &mut sp.error);
        finish_spool(sp.network, &mut sp.error);
        finish_spool(sp.classifiers, &mut sp.error);
        finish_spool(sp.goodput, &mut sp.error);
        finish_spool(sp.traces, &mut sp.error);
        sp.error.map_or(Ok(()), Err)
    }

    /// The first sampling and goodput instants (None: off).
    pub fn first_sample(&self) -> Option<Time> {
        (self.sample_ns > 0).then_some(self.sample_ns)
    }
    pub fn first_goodput(&self) -> Option<Time> {
        (self.goodput_ns > 0).then_some(self.goodput_ns)
    }

    /// At the end of the run (`now`): whether the last sample and goodput window, which
    /// coincide with the end, are still to be taken (the Stop event was queued first).
    pub fn due_at_stop(&self, now: Time) -> (bool, bool) {
        (self.sample_ns > 0 && self.last_sample_ns < now, self.goodput_ns > 0 && self.last_gp_ns < now)
    }

    /// Flow `f` delivered data: put it on the goodput list for the current window.
    #[inline]
    pub fn delivered(&mut self, f: &mut Flow) {
        if !f.gp_dirty && self.goodput_ns > 0 {
            f.gp_dirty = true;
            self.gp_list.push(f.id);
        }
    }

    /// Record the TCP state of endpoint `e` of a traced flow after `event`.
    pub fn trace(&mut self, now: Time, flow: u32, side: u8, event: &'static str, e: &TcpEndpoint) {
        let row = TraceSample {
            t_s: ns_to_secs(now),
            flow_id: flow as u64,
            side,
            event,
            cwnd_pkts: e.cwnd(),
            ssthresh_pkts: e.ssthresh(),
            snd_una: e.snd_una(),
            snd_max: e.snd_max(),
            in_recovery: e.in_recovery(),
            srtt_s: e.srtt(),
            rto_s: e.current_rto_s(),
            timeouts: e.stats.timeouts,
        };
        keep(&mut self.spools.traces, &mut self.spools.error, &mut self.traces, row);
    }

    /// Take a sample of the network, the sampled queues and the classifiers; the next
    /// sampling instant, if within the run.
    pub fn sample(
        &mut self,
        now: Time,
        ports: &mut [Port],
        classifiers: &[Box<dyn Classifier>],
        packets_in_network: u64,
    ) -> Option<Time> {
        let interval = now - self.last_sample_ns;
        self.last_sample_ns = now;
        let t = ns_to_secs(now);
        let c = &self.counters;
        let row = NetSample {
            t_s: t,
            active_tcp_flows: c.tcp_started - c.tcp_finished,
            active_udp_flows: c.udp_started - c.udp_finished,
            packets_in_network,
        };
        keep(&mut self.spools.network, &mut self.spools.error, &mut self.network, row);
        for &l in &self.sampled_links {
            let port = &mut ports[l as usize];
            let busy = port.busy_until(now);
            let utilisation = if interval > 0 { (busy - port.last_busy) as f64 / interval as f64 } else { 0.0 };
            port.last_busy = busy;
            let q = &port.queue;
            let s = &q.stats;
            let p = &port.last_sample;
            let diff = |a: &[u64; 3], b: &[u64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
            let drops_now = [s.dropped(0), s.dropped(1), s.dropped(2)];
            let drops_prev = [p.dropped(0), p.dropped(1), p.dropped(2)];
            let row = QueueSample {
                t_s: t,
                queue: port.name.clone(),
                len_pkts: q.qdisc.len_pkts() as u64,
                len_bytes: q.qdisc.len_bytes(),
                avg_pkts: q.qdisc.avg(),
                len_by_class: s.occupancy,
                departures: diff(&s.departed, &p.departed),
                drops: diff(&drops_now, &drops_prev),
                marks: diff(&s.marks, &p.marks),
                utilisation,
            };
            keep(&mut self.spools.queues, &mut self.spools.error, &mut self.samples, row);
            port.last_sample = port.queue.stats.clone();
        }
        for (i, c) in classifiers.iter().enumerate() {
            let r = c.report();
            let row = ClassifierSample {
                t_s: t,
                node: self.classifier_nodes[i].clone(),
                classifier: c.kind().to_string(),
                flows_short: r.flows_short,
                flows_long: r.flows_long,
                threshold: r.threshold,
            };
            keep(&mut self.spools.classifiers, &mut self.spools.error, &mut self.classifier_samples, row);
        }
        let next = now + self.sample_ns;
        (next <= self.end_ns).then_some(next)
    }

    /// Close a goodput window: one row per flow that delivered data since the last one. The
    /// next window's end, if within the run.
    pub fn goodput_window(&mut self, now: Time, flows: &mut Flows, eps: &[TcpEndpoint]) -> Result<Option<Time>> {
        self.last_gp_ns = now;
        let t = ns_to_secs(now);
        for &id in &self.gp_list {
            let fi = flows.fi(id);
            let f = &flows[fi];
            let mut total = f.tcp.delivered;
            if !f.udp {
                let ep = f.ep[f.data_to_side as usize];
                if ep != NONE {
                    total += eps[ep as usize].stats.delivered;
                }
            }
            let f = &mut flows[fi];
            if total > f.gp_last {
                let row = GoodputSample { t_s: t, flow_id: id as u64, delivered_pkts: total - f.gp_last };
                keep(&mut self.spools.goodput, &mut self.spools.error, &mut self.goodput, row);
            }
            f.gp_last = total;
            f.gp_dirty = false;
            flows.check_retire(fi);
        }
        self.gp_list.clear();
        let next = now + self.goodput_ns;
        Ok((next <= self.end_ns).then_some(next))
    }

    /// Whether link `l`'s queue counts in its flows' queueing delay (`sampling.flow_qdelay`).
    #[inline]
    pub fn records_qdelay(&self, l: u32) -> bool {
        self.qdelay_links.get(l as usize).copied().unwrap_or(false)
    }

    /// Packet `p` of flow `f` starts its transmission at `now`: add its wait in the queue to
    /// the flow's queueing delay if it is a data packet of the flow's data direction.
    #[inline]
    pub fn queue_wait(&self, p: &Packet, f: &mut Flow, now: Time) {
        if matches!(p.kind, PktKind::Data | PktKind::Udp) && p.to_side == f.data_to_side {
            f.qdelay.add(now.saturating_sub(p.enq_ns));
        }
    }

    /// The flows.parquet record of a flow.
    pub fn record(&self, plan: &Plan, f: &Flow) -> FlowRecord {
        let names = &self.names;
        let path = match f.path {
            [NO_PATH, _] => names.empty.clone(),
            [a, b] => {
                // The policy that chose it is the one on the flow's path.
                let pol = plan
                    .policies
                    .iter()
                    .position(|p| p.cands[f.dst as usize].iter().any(|c| c.0 == a))
                    .or((!plan.policies.is_empty()).then_some(0));
                match pol {
                    Some(p) if a == b => names.hops[p][a as usize].clone(),
                    Some(p) => Name::from(format!("{}>{}", names.hops[p][a as usize], names.hops[p][b as usize])),
                    None => names.empty.clone(),
                }
            }
        };
        let (source, tag) = &names.traffic[f.traffic as usize];
        let udp_bytes = self.udp_bytes[f.traffic as usize];
        FlowRecord {
            flow_id: f.id as u64,
            src: names.nodes[f.src as usize].clone(),
            dst: names.nodes[f.dst as usize].clone(),
            kind: if f.udp { "udp" } else { "tcp" },
            source: source.clone(),
            tag: tag.clone(),
            start_s: ns_to_secs(f.start),
            end_s: f.end.map(ns_to_secs),
            size_bytes: f.size.map(|n| if f.udp { n * udp_bytes } else { n * self.mss }),
            size_pkts: f.size,
            fct_s: f.end.map(|e| ns_to_secs(e - f.start)),
            data_pkts_sent: f.tcp.data_pkts_sent,
            retransmits: f.tcp.retransmits,
            timeouts: f.tcp.timeouts,
            fast_retransmits: f.tcp.fast_retransmits,
            drops: f.drops,
            ecn_marks: f.tcp.ecn_marks,
            syn_drops: f.syn_drops,
            first_data_drop: f.first_data_drop,
            favored_pkts: f.favored,
            class_at_end: f.class_at_end,
            path,
            base_rtt_s: ns_to_secs(f.base_rtt),
            delivered_pkts: f.tcp.delivered,
            syn_sent: f.tcp.syn_sent,
            synack_drops: f.synack_drops,
            pushed_out: f.pushed_out,
            qdelay: (!self.qdelay_links.is_empty()).then_some(f.qdelay),
        }
    }

    /// The run's totals at `end`, checked: each queue's accounting against what its
    /// discipline holds, and packet conservation.
    pub fn summary(
        &self,
        plan: &Plan,
        end: Time,
        wall_seconds: f64,
        run: RunTotals,
        ports: &[Port],
    ) -> Result<RunSummary> {
        let mut queues = Vec::with_capacity(ports.len());
        let (mut forwarded, mut link_losses) = (0, 0);
        for port in ports {
            let q = &port.queue;
            let s = &q.stats;
            let occ: u64 = s.occupancy.iter().sum();
            if occ != q.qdisc.len_pkts() as u64 {
                return Err(Error::Internal(format!(
                    "queue {}: accounting says {} queued, discipline holds {}",
                    port.name,
                    occ,
                    q.qdisc.len_pkts()
                )));
            }
            forwarded += s.departed.iter().sum::<u64>();
            link_losses += s.drops[DropReason::LinkLoss as usize].iter().sum::<u64>();
            let busy = port.busy_until(end);
            let mut by_reason = BTreeMap::new();
            for r in DropReason::ALL {
                let n: u64 = s.drops[r as usize].iter().sum();
                if n > 0 {
                    by_reason.insert(r.as_str().to_string(), n);
                }
            }
            let mut by_class = BTreeMap::new();
            for c in ClassMark::ALL {
                let i = c.index();
                if s.arrivals[i] > 0 {
                    by_class.insert(
                        c.as_str().to_string(),
                        ClassTotals {
                            arrivals: s.arrivals[i],
                            enqueued: s.enqueued[i],
                            departed: s.departed[i],
                            dropped: s.dropped(i),
                            marked: s.marks[i],
                            pushed_out: s.drops[DropReason::PushOut as usize][i],
                        },
                    );
                }
            }
            queues.push(QueueTotals {
                name: port.name.clone(),
                discipline: q.qdisc.kind().to_string(),
                arrivals: s.arrivals.iter().sum(),
                enqueued: s.enqueued.iter().sum(),
                departed: s.departed.iter().sum(),
                dropped: (0..3).map(|c| s.dropped(c)).sum(),
                marked: s.marks.iter().sum(),
                pushed_out: s.drops[DropReason::PushOut as usize].iter().sum(),
                utilisation: if end > 0 { busy as f64 / end as f64 } else { 0.0 },
                occupancy_at_end: occ,
                dropped_by_reason: by_reason,
                by_class,
                dualpi2: dualpi2_sojourns(q.qdisc.as_any()),
            });
        }
        let summary = RunSummary {
            savanna_version: crate::VERSION.to_string(),
            scenario: plan.name.clone(),
            seed: plan.seed,
            sim_seconds: ns_to_secs(end),
            wall_seconds,
            events: run.events,
            packets_forwarded: forwarded,
            packets_created: run.packets_created,
            packets_delivered: self.counters.packets_delivered,
            packets_dropped: self.counters.packets_dropped,
            packets_in_network_at_end: run.packets_live,
            link_losses,
            flows_started: run.flows_started,
            flows_finished: self.counters.flows_finished,
            queues,
        };
        if summary.packets_created
            != summary.packets_delivered + summary.packets_dropped + summary.packets_in_network_at_end
        {
            return Err(Error::Internal("packet conservation failed".into()));
        }
        Ok(summary)
    }

    /// The run's output (without flow records) from what was recorded.
    pub fn output(self, summary: RunSummary, classifiers: usize) -> RunOutput {
        RunOutput {
            flows: Vec::new(),
            queues: self.samples,
            queue_sampling: self.sample_ns > 0,
            classifiers: self.classifier_samples,
            classifier_sampling: self.sample_ns > 0 && classifiers > 0,
            tracing: self.tracing,
            traces: self.traces,
            goodput: self.goodput,
            goodput_on: self.goodput_ns > 0,
            spooled: self.spooled,
            network: self.network,
            summary,
        }
    }
}

/// Totals the world holds: events popped, packets created and still live, flows started.
pub struct RunTotals {
    pub events: u64,
    pub packets_created: u64,
    pub packets_live: u64,
    pub flows_started: u64,
}

/// DualPI2's sojourn quantiles for the summary (None for any other discipline).
fn dualpi2_sojourns(q: Option<&dyn std::any::Any>) -> Option<DualPi2Sojourns> {
    Some(q?.downcast_ref::<crate::aqm::dualpi2::DualPi2>()?.sojourn_totals())
}
