//! What `savanna emulate` needs from a scenario, resolved by the core (`scenario::resolve`)
//! and handed to the Python orchestrator as JSON: hosts and their addresses, links, the TCP
//! settings of each traffic block, and the flows themselves. The flows come from the core's
//! own generators (`traffic/<block>.rs`), driven here without a network: open-loop blocks
//! (Poisson, flow lists, persistent, periodic) ask for the same flows at the same instants as
//! in `savanna run`; a closed-loop session is told each connection is done the moment it
//! starts, so its generator draws sizes and think times from its own stream in the
//! simulator's order (size at each start, think time at each end), and the orchestrator
//! replays them against real completion times.

use savanna_core::engine::{ns_to_secs, secs_to_ns, Time};
use savanna_core::net::topology::{NodeKind, Routes};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use savanna_core::scenario::build::Plan;
use savanna_core::scenario::schema::{Mode, TrafficSpec};
use savanna_core::scenario::Scenario;
use savanna_core::tcp::{RecoveryRate, RttSampling};
use savanna_core::traffic::{Action, Actions, NO_SESSION};
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
pub fn path_delay(plan: &Plan, routes: &Routes, s: u32, d: u32) -> Time {
    let n = plan.topo.n_nodes();
    let (mut at, mut total, mut hops) = (s, 0, 0);
    while at != d && hops < n {
        let l = routes.next_hop(at, d);
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
pub fn check_supported(sc: &Scenario, plan: &Plan) -> Result<()> {
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
    for (i, t) in sc.file.traffic.iter().enumerate() {
        let kind = match t {
            TrafficSpec::Web(_) => "web",
            TrafficSpec::Udp(_) => "udp",
            _ => continue,
        };
        return Err(Error::input(format!("traffic[{i}].type"), format!("'{kind}' is not supported by emulate yet")));
    }
    for (i, (_, c)) in plan.classifiers.iter().enumerate() {
        // Both read the flow's true size, which the router does not know (it sees packets,
        // not the generator's flow list): without it `remaining` would tag every packet as a
        // flow of unknown size, and pFabric, SP-PIFO or AIFO behind it would silently serve
        // in arrival order.
        use savanna_core::scenario::schema::ClassifierSpec;
        let name = match c {
            ClassifierSpec::Oracle(_) => "oracle",
            ClassifierSpec::Remaining(_) => "remaining",
            _ => continue,
        };
        return Err(Error::input(
            format!("classifiers[{i}].type"),
            format!("'{name}' is not supported by emulate: the router cannot see a flow's true size"),
        ));
    }
    let hosts = host_nodes(plan).len();
    if hosts > 256 * 100 {
        return Err(Error::input("topology", "too many hosts for emulate (at most 25600)"));
    }
    Ok(())
}

fn tcp_json(c: &savanna_core::tcp::TcpConfig) -> Value {
    json!({
        "variant": c.variant.name(),
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
        "rtt_sampling": match c.rtt_sampling {
            RttSampling::EveryAck => "every_ack",
            RttSampling::OncePerRtt => "once_per_rtt",
        },
        "restart_rto_on_fast_retransmit": c.restart_rto_on_fast_retransmit,
        "sack": c.sack,
        "dsack": c.dsack,
        "recovery_rate": match c.recovery_rate {
            RecoveryRate::Prr => "prr",
            RecoveryRate::Rfc6675 => "rfc6675",
        },
        "tick_s": c.tick_s,
        "rack": c.rack,
        "handshake_ack": c.handshake_ack,
        "ect1": c.ect1,
        "pacing": c.pacing,
        "pacing_burst": c.pacing_burst,
        "pacing_autosize": c.pacing_autosize,
        "slow_start_increase": if c.abc_limit > 1 { "acked" } else { "per_ack" },
        "abc_limit": if c.abc_limit > 1 && c.abc_limit < u32::MAX { Some(c.abc_limit) } else { None },
        "partial_ack_timer": if c.restart_rto_on_every_partial_ack { "every" } else { "first" },
        "nosack_recovery_rate": if c.nosack_prr { "prr" } else { "inflation" },
        "teardown": c.teardown,
        "request_bytes": c.request_bytes,
    })
}

/// Closed-loop connections drawn ahead per session (more than any run will start).
const SESSION_DRAWS: usize = 20_000;

/// Generator requests carried out per block before the plan is refused as too large.
const MAX_REQUESTS: usize = 50_000_000;

/// One closed-loop session as its generator drew it.
struct Session {
    start: Time,
    src: u32,
    dst: u32,
    sizes: Vec<u64>,
    thinks: Vec<f64>,
}

/// What one traffic block asks for over the run: open-loop flows (start, src, dst, size) and
/// closed-loop sessions by index, and the mode of its connections.
#[derive(Default)]
struct Drawn {
    flows: Vec<(Time, u32, u32, Option<u64>)>,
    sessions: BTreeMap<u32, Session>,
    mode: Option<Mode>,
}

/// Drive block `b`'s generator as the simulator would, without a network (see the header).
fn draw_block(plan: &mut Plan, b: usize) -> Result<Drawn> {
    let (duration, stop_sessions) = (plan.duration_ns, SESSION_DRAWS);
    let gen = &mut plan.traffic[b].gen;
    let mut acts = Actions::default();
    let mut wakes: BinaryHeap<Reverse<(Time, u64, u32)>> = BinaryHeap::new();
    let mut out = Drawn::default();
    let (mut order, mut requests, mut next_id) = (0u64, 0usize, 0u32);
    acts.begin(0, next_id);
    gen.start(&mut acts);
    let mut pending: Vec<Action> = acts.list().to_vec();
    loop {
        let now = acts.now();
        let mut done: Vec<u32> = Vec::new();
        for a in pending.drain(..) {
            requests += 1;
            match a {
                Action::Wake { at, arg } => {
                    if at < duration {
                        wakes.push(Reverse((at, order, arg)));
                        order += 1;
                    }
                }
                Action::StartTcp { id, src, dst, size, mode, session } => {
                    next_id = next_id.max(id + 1);
                    out.mode.get_or_insert(mode);
                    if session == NO_SESSION {
                        out.flows.push((now, src, dst, size));
                        continue;
                    }
                    let s = out.sessions.entry(session).or_insert_with(|| Session {
                        start: now,
                        src,
                        dst,
                        sizes: Vec::new(),
                        thinks: Vec::new(),
                    });
                    s.sizes.push(size.unwrap_or(0));
                    if s.sizes.len() < stop_sessions {
                        done.push(session);
                    } else {
                        s.thinks.push(0.0);
                    }
                }
                Action::StartUdp { .. } | Action::SendUdp { .. } | Action::EndUdp { .. } => {}
            }
        }
        if requests > MAX_REQUESTS {
            return Err(Error::input(
                format!("traffic[{b}]"),
                format!("asks for more than {MAX_REQUESTS} flows and wake-ups, more than emulate can run"),
            ));
        }
        // A session's connection is "done" at once: its think time is the next wake-up's
        // distance (none: the session ends before its stop time, or its count is reached).
        for session in done {
            acts.begin(now, next_id);
            gen.flow_done(session, &mut acts);
            let s = out.sessions.get_mut(&session).expect("session started");
            let think = acts.list().iter().find_map(|a| match *a {
                Action::Wake { at, arg } if arg == session => Some(ns_to_secs(at - now)),
                _ => None,
            });
            s.thinks.push(think.unwrap_or(0.0));
            pending.extend_from_slice(acts.list());
        }
        if !pending.is_empty() {
            continue;
        }
        let Some(Reverse((at, _, arg))) = wakes.pop() else { break };
        acts.begin(at, next_id);
        gen.step(arg, &mut acts);
        pending.extend_from_slice(acts.list());
    }
    Ok(out)
}

/// The plan as JSON for the orchestrator (drives the plan's generators, so it takes the
/// plan by `mut`; the plan's generators are spent afterwards).
pub fn to_json(sc: &Scenario, plan: &mut Plan) -> Result<Value> {
    let drawn: Vec<Drawn> = (0..plan.traffic.len()).map(|b| draw_block(plan, b)).collect::<Result<_>>()?;
    let plan = &*plan;
    let topo = &plan.topo;
    let routes = topo.routes()?;
    let hosts = host_nodes(plan);
    let host_json: Vec<Value> = hosts
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            let ip = host_ip(k);
            let ip = format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3]);
            json!({"node": n, "name": topo.node_names[n as usize], "ip": ip})
        })
        .collect();
    let links: Vec<Value> = topo
        .links
        .iter()
        .map(|l| {
            let (from, to) = (&topo.node_names[l.from as usize], &topo.node_names[l.to as usize]);
            json!({"name": l.name, "from": from, "to": to, "rate_bps": l.rate_bps,
                   "delay_s": ns_to_secs(l.delay_ns), "loss": l.loss})
        })
        .collect();
    let name = |n: u32| topo.node_names[n as usize].clone();
    let rtt = |s: u32, d: u32| ns_to_secs(path_delay(plan, &routes, s, d) + path_delay(plan, &routes, d, s));
    let mut flows: Vec<(Time, usize, Value)> = Vec::new();
    let mut sessions: Vec<Value> = Vec::new();
    for (b, d) in drawn.iter().enumerate() {
        // A session starts no connection at or after its block's stop time.
        let stop = match &sc.file.traffic[b] {
            TrafficSpec::ClosedLoop(c) => secs_to_ns(c.stop_s.unwrap_or(sc.duration_s)).min(plan.duration_ns),
            _ => plan.duration_ns,
        };
        for &(at, s, t, size) in &d.flows {
            let seq = flows.len();
            let f = json!({"t": ns_to_secs(at), "block": b, "src": name(s), "dst": name(t), "size_pkts": size,
                           "base_rtt_s": rtt(s, t)});
            flows.push((at, seq, f));
        }
        for (&i, s) in &d.sessions {
            sessions.push(
                json!({"block": b, "session": i, "start_s": ns_to_secs(s.start), "src": name(s.src), "dst": name(s.dst),
                "stop_s": ns_to_secs(stop), "sizes": s.sizes, "thinks": s.thinks, "base_rtt_s": rtt(s.src, s.dst)}),
            );
        }
    }
    flows.sort_by_key(|f| (f.0, f.1));
    let blocks: Vec<Value> = plan
        .traffic
        .iter()
        .zip(&drawn)
        .map(|(t, d)| {
            let mode = match d.mode {
                Some(Mode::RequestResponse) => "request_response",
                _ => "bulk",
            };
            json!({"name": t.name, "tag": t.tag, "tcp": t.tcp, "mode": mode})
        })
        .collect();
    let sampling = plan.sampling.as_ref().map(|(iv, qs)| {
        let queues: Vec<String> = qs.iter().map(|&l| topo.links[l as usize].name.clone()).collect();
        json!({"interval_s": ns_to_secs(*iv), "queues": queues})
    });
    Ok(json!({
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
    }))
}
