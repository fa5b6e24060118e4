//! What `savanna emulate` needs from a scenario, resolved by the core (`scenario::resolve`)
//! and handed to the Python orchestrator as JSON: hosts and their addresses, links, the TCP
//! settings of each traffic block, and the flows themselves. Open-loop flows (Poisson, flow
//! lists, persistent, periodic) are drawn here from the same random streams and in the same
//! draw order as the simulator (`traffic/<block>`: pair, size, gap), so an emulated run
//! carries the flows `savanna run` simulates; closed-loop sessions get their sizes and think
//! times from their `traffic/<block>/session<i>` streams, drawn in the simulator's order
//! (size at each start, think time at each end).

use savanna_core::engine::{ns_to_secs, secs_to_ns, Rng, Time};
use savanna_core::net::topology::NodeKind;
use savanna_core::scenario::build::{Plan, TrafficKind};
use savanna_core::scenario::schema::Mode;
use savanna_core::tcp::{RttSampling, Variant};
use savanna_core::{Error, Result};
use serde_json::{json, Value};

/// Address of host slot `k` (hosts numbered in node order): 10.(100 + k/256).(k%256).1.
pub fn host_ip(k: usize) -> [u8; 4] {
    [10, (100 + k / 256) as u8, (k % 256) as u8, 1]
}

/// Host slot of an address, if it is one of ours.
#[inline]
pub fn host_of_ip(ip: [u8; 4], n_hosts: usize) -> Option<usize> {
    if ip[0] != 10 || ip[1] < 100 || ip[3] != 1 {
        return None;
    }
    let k = (ip[1] as usize - 100) * 256 + ip[2] as usize;
    (k < n_hosts).then_some(k)
}

/// Node index of each host slot.
pub fn host_nodes(plan: &Plan) -> Vec<u32> {
    (0..plan.topo.n_nodes() as u32).filter(|&n| plan.topo.node_kinds[n as usize] == NodeKind::Host).collect()
}

/// One-way propagation delay from `s` to `d` along the static routes, ns.
pub fn path_delay(plan: &Plan, routes: &[u32], s: u32, d: u32) -> Time {
    let n = plan.topo.n_nodes();
    let (mut at, mut total, mut hops) = (s, 0, 0);
    while at != d && hops < n {
        let l = routes[at as usize * n + d as usize];
        if l == u32::MAX {
            break;
        }
        let ls = &plan.topo.links[l as usize];
        total += ls.delay_ns;
        at = ls.to;
        hops += 1;
    }
    total
}

/// The link the load and the accuracy figures refer to: the dumbbell's `left->right`, or
/// else the slowest link.
pub fn bottleneck(plan: &Plan) -> usize {
    let links = &plan.topo.links;
    links.iter().position(|l| l.name == "left->right").unwrap_or_else(|| {
        let mut best = 0;
        for (i, l) in links.iter().enumerate() {
            if l.rate_bps < links[best].rate_bps {
                best = i;
            }
        }
        best
    })
}

/// Refuse what the emulator does not do, naming the field.
pub fn check_supported(plan: &Plan) -> Result<()> {
    if !plan.faults.is_empty() {
        return Err(Error::input(
            "faults",
            "not supported by emulate: real TCP gives no packet numbering to aim a fault at",
        ));
    }
    if !plan.policies.is_empty() {
        return Err(Error::input("path_policies", "not supported by emulate"));
    }
    if !plan.trace_flows.is_empty() {
        return Err(Error::input("trace", "not supported by emulate (use tcpdump on a host's TUN device)"));
    }
    for (i, t) in plan.traffic.iter().enumerate() {
        match t.kind {
            TrafficKind::Web { .. } => {
                return Err(Error::input(format!("traffic[{i}].type"), "'web' is not supported by emulate yet"))
            }
            TrafficKind::Udp { .. } => {
                return Err(Error::input(format!("traffic[{i}].type"), "'udp' is not supported by emulate yet"))
            }
            _ => {}
        }
    }
    for (i, (_, c)) in plan.classifiers.iter().enumerate() {
        if matches!(c, savanna_core::scenario::schema::ClassifierSpec::Oracle(_)) {
            return Err(Error::input(
                format!("classifiers[{i}].type"),
                "'oracle' is not supported by emulate: the router cannot see a flow's true size",
            ));
        }
    }
    let hosts = host_nodes(plan).len();
    if hosts > 256 * 100 {
        return Err(Error::input("topology", "too many hosts for emulate (at most 25600)"));
    }
    Ok(())
}

fn tcp_json(c: &savanna_core::tcp::TcpConfig) -> Value {
    json!({
        "variant": match c.variant { Variant::NewReno => "newreno", Variant::Reno => "reno", Variant::Tahoe => "tahoe" },
        "handshake": c.handshake,
        "ito_s": c.ito_s,
        "min_rto_s": c.min_rto_s,
        "max_rto_s": c.max_rto_s,
        "granularity_s": c.granularity_s,
        "init_cwnd": c.init_cwnd,
        "max_window": c.max_window,
        "init_ssthresh": c.init_ssthresh,
        "delayed_ack": c.delayed_ack,
        "delack_timeout_s": c.delack_timeout_s,
        "ecn": c.ecn,
        "dupack_threshold": c.dupack_threshold,
        "rtt_sampling": match c.rtt_sampling { RttSampling::EveryAck => "every_ack", RttSampling::OncePerRtt => "once_per_rtt" },
        "restart_rto_on_fast_retransmit": c.restart_rto_on_fast_retransmit,
        "teardown": c.teardown,
        "request_bytes": c.request_bytes,
    })
}

/// Closed-loop connections drawn ahead per session (more than any run will start).
const SESSION_DRAWS: u32 = 20_000;

/// The plan as JSON for the orchestrator.
pub fn to_json(plan: &Plan) -> Value {
    let topo = &plan.topo;
    let routes = topo.routes();
    let hosts = host_nodes(plan);
    let host_json: Vec<Value> = hosts
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            let ip = host_ip(k);
            json!({"node": n, "name": topo.node_names[n as usize], "ip": format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3])})
        })
        .collect();
    let links: Vec<Value> = topo
        .links
        .iter()
        .map(|l| json!({"name": l.name, "from": topo.node_names[l.from as usize], "to": topo.node_names[l.to as usize], "rate_bps": l.rate_bps, "delay_s": ns_to_secs(l.delay_ns), "loss": l.loss}))
        .collect();
    let name = |n: u32| topo.node_names[n as usize].clone();
    let rtt = |s: u32, d: u32| ns_to_secs(path_delay(plan, &routes, s, d) + path_delay(plan, &routes, d, s));
    let mut flows: Vec<(Time, usize, Value)> = Vec::new();
    let mut sessions: Vec<Value> = Vec::new();
    for (b, t) in plan.traffic.iter().enumerate() {
        let mut rng = Rng::stream(plan.seed, &format!("traffic/{}", t.name));
        let mut push = |at: Time, s: u32, d: u32, size: Option<u64>| {
            let seq = flows.len();
            flows.push((at, seq, json!({"t": ns_to_secs(at), "block": b, "src": name(s), "dst": name(d), "size_pkts": size, "base_rtt_s": rtt(s, d)})));
        };
        match &t.kind {
            TrafficKind::Poisson { mean_gap_s, size, ends, start, stop } => {
                let mut now = *start;
                while now < *stop && now < plan.duration_ns {
                    let (s, d) = ends.draw(&mut rng);
                    let n = size.sample(&mut rng);
                    let gap = secs_to_ns(rng.exp(*mean_gap_s));
                    push(now, s, d, Some(n));
                    now += gap.max(1);
                }
            }
            TrafficKind::Persistent { count, start, stagger, ends } => {
                for k in 0..*count {
                    let at = *start + k as Time * *stagger;
                    if at < plan.duration_ns {
                        let (s, d) = ends.nth(k as usize);
                        push(at, s, d, None);
                    }
                }
            }
            TrafficKind::List { flows: l } => {
                for &(at, size, s, d) in l {
                    if at < plan.duration_ns {
                        push(at, s, d, size);
                    }
                }
            }
            TrafficKind::Periodic { count, size, period, ends, start, stop } => {
                let mut now = *start;
                while now < *stop && now < plan.duration_ns {
                    for _ in 0..*count {
                        let (s, d) = ends.draw(&mut rng);
                        let n = size.sample(&mut rng);
                        push(now, s, d, Some(n));
                    }
                    match period {
                        Some(p) => now += *p,
                        None => break,
                    }
                }
            }
            TrafficKind::Closed { sessions: n, size, think, connections, ends, start, spread, stop } => {
                for i in 0..*n {
                    let at = *start + (*spread as f64 * rng.uniform()) as Time;
                    let (s, d) = match ends {
                        savanna_core::scenario::build::Ends::Pairs(_) => ends.nth(i as usize),
                        savanna_core::scenario::build::Ends::Cross(..) => ends.draw(&mut rng),
                    };
                    let mut srng = Rng::stream(plan.seed, &format!("traffic/{}/session{i}", t.name));
                    let k = connections.unwrap_or(SESSION_DRAWS).min(SESSION_DRAWS);
                    let (mut sizes, mut thinks) = (Vec::with_capacity(k as usize), Vec::with_capacity(k as usize));
                    for _ in 0..k {
                        sizes.push(size.sample(&mut srng));
                        thinks.push(think.as_ref().map_or(0.0, |d| ns_to_secs(secs_to_ns(d.draw(&mut srng)))));
                    }
                    sessions.push(
                        json!({"block": b, "session": i, "start_s": ns_to_secs(at), "src": name(s), "dst": name(d),
                        "stop_s": ns_to_secs(*stop), "sizes": sizes, "thinks": thinks, "base_rtt_s": rtt(s, d)}),
                    );
                }
            }
            TrafficKind::Web { .. } | TrafficKind::Udp { .. } => {}
        }
    }
    flows.sort_by_key(|f| (f.0, f.1));
    let blocks: Vec<Value> = plan
        .traffic
        .iter()
        .map(|t| json!({"name": t.name, "tag": t.tag, "tcp": t.tcp, "mode": match t.mode { Mode::Bulk => "bulk", _ => "request_response" }}))
        .collect();
    let sampling = plan.sampling.as_ref().map(|(iv, qs)| {
        json!({"interval_s": ns_to_secs(*iv), "queues": qs.iter().map(|&l| topo.links[l as usize].name.clone()).collect::<Vec<_>>()})
    });
    json!({
        "name": plan.name,
        "seed": plan.seed,
        "duration_s": ns_to_secs(plan.duration_ns),
        "packet_bytes": plan.pkt_bytes,
        "header_bytes": plan.hdr_bytes,
        "hosts": host_json,
        "links": links,
        "bottleneck": topo.links[bottleneck(plan)].name,
        "tcp": plan.tcp.iter().map(tcp_json).collect::<Vec<_>>(),
        "blocks": blocks,
        "flows": flows.into_iter().map(|f| f.2).collect::<Vec<_>>(),
        "sessions": sessions,
        "sampling": sampling,
    })
}
