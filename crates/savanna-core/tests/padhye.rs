//! Savanna's TCP against the full throughput model of Padhye, Firoiu, Towsley & Kurose,
//! "Modeling TCP Throughput: A Simple Model and its Empirical Validation", SIGCOMM 1998
//! (`savanna_core::model::padhye`).
//!
//! Setup: one persistent flow on a dumbbell (1000 Mb/s access links, 10 Mb/s bottleneck,
//! base RTT 100 ms), independent (Bernoulli) loss with probability p on the forward
//! bottleneck, a 1000-packet DropTail buffer that never overflows (checked), an ACK for
//! every segment (b = 1), a 256-packet maximum window that does not bind at these p,
//! min RTO 200 ms.
//!
//! Variant: NewReno. The model describes Reno's congestion control (additive increase,
//! halving at a triple duplicate ACK, timeouts with exponential backoff) at the granularity
//! of rounds: a round that holds losses is ONE loss indication and costs one halving (or one
//! timeout sequence). With independent losses a window often holds two or more losses;
//! NewReno (RFC 6582) reacts to such a window with exactly one halving, as the model does,
//! whereas Reno halves once per lost packet or stalls into a timeout, which the model does
//! not describe. The model's p is accordingly the loss-indication rate, which we approximate
//! by the Bernoulli loss probability p.
//!
//! Measured throughput is the paper's B: data packets SENT per second, retransmissions
//! included (the paper counts packets "regardless of their eventual fate"); the goodput
//! (delivered packets per second) is printed beside it.
//!
//! Model inputs measured in the same run (the simulator does not export per-flow SRTT/RTO):
//! - RTT = base propagation RTT (FlowRecord.base_rtt_s) + serialization of one data packet
//!   and one ACK on every hop + mean queueing delay on every queue of the path. The mean
//!   waiting time of a queue is obtained from Little's law, W = L / lambda, with L the
//!   time-average queue length (queue sampling at an interval incommensurate with the RTT,
//!   so it does not alias with the once-per-RTT burst pattern) and lambda the measured
//!   departure rate of that queue.
//! - T0 = the mean base RTO. RFC 6298 gives RTO = SRTT + max(G, 4 RTTVAR) clamped below at
//!   min_rto. We estimate an upper bound from the measured path delay: RTT_mean + 4 sigma,
//!   sigma the standard deviation of the sampled queueing delay (RTTVAR estimates a mean
//!   absolute deviation, which is <= sigma). When that bound is below min_rto the floor
//!   dominates and T0 = min_rto exactly; otherwise the bound is used and the test says so.
//!   This is the RTO of a sender whose RTT samples are the path's round-trip times. The
//!   present sender also takes samples from ACKs that cover a retransmitted segment (the
//!   sample of the newest segment they cover, whose ACK the hole held back: up to RTO + RTT
//!   after a timeout), which inflates SRTT/RTTVAR after loss recoveries (a suspected bug in
//!   `TcpEndpoint::rtt_on_new_ack`, every-ACK sampling); while it stands the sender's real
//!   mean T0 is larger than this estimate. Flow records do not carry the mean SRTT or the
//!   mean first-timeout RTO yet, so this test cannot measure them directly.

use savanna_core::api::{load, run, Format, RunOptions};
use savanna_core::model::padhye;

const ACCESS_MBPS: f64 = 1000.0;
const BOTTLENECK_MBPS: f64 = 10.0;
const PKT_BYTES: f64 = 1500.0;
const HDR_BYTES: f64 = 40.0;
const MIN_RTO_S: f64 = 0.2;
const MAX_WINDOW: f64 = 256.0;
const B_PER_ACK: f64 = 1.0;
const DURATION_S: f64 = 5000.0;
/// Sampling period: incommensurate with the 100 ms RTT.
const SAMPLE_S: f64 = 0.0137;
const TOLERANCE: f64 = 0.20;

fn scenario(p: f64, variant: &str) -> String {
    format!(
        r#"
name = "padhye-{variant}-p{p}"
seed = 1
duration_s = {DURATION_S}
packet_bytes = {PKT_BYTES}
header_bytes = {HDR_BYTES}

[topology]
type = "dumbbell"
pairs = 1
access_rate_mbps = {ACCESS_MBPS}
access_delay_ms = 5.0
bottleneck_rate_mbps = {BOTTLENECK_MBPS}
bottleneck_delay_ms = 40.0
bottleneck_loss = {p}
bottleneck_queue = {{ type = "droptail", limit_pkts = 1000 }}
access_queue = {{ type = "droptail", limit_pkts = 1000 }}

[tcp]
variant = "{variant}"
handshake = true
min_rto_s = {MIN_RTO_S}
init_cwnd = 2
max_window = {MAX_WINDOW}
delayed_ack = false

[[traffic]]
type = "persistent"
name = "bulk"
count = 1

[sampling]
interval_s = {SAMPLE_S}
queues = ["src0->left", "bottleneck", "right->left"]
"#
    )
}

struct Case {
    p: f64,
    sent_rate: f64,
    goodput: f64,
    loss_ind_rate: f64,
    timeouts: u64,
    fast_retx: u64,
    rtt: f64,
    queueing: f64,
    t0: f64,
    t0_bound: f64,
    model: f64,
    approx: f64,
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
    (m, var.sqrt())
}

fn run_case(p: f64, variant: &str) -> Case {
    let text = scenario(p, variant);
    let sc = load(&text, Format::Toml, std::path::Path::new("."), &RunOptions::default()).unwrap();
    let out = run(&sc).unwrap();
    assert_eq!(out.flows.len(), 1);
    let f = &out.flows[0];
    let dur = out.summary.sim_seconds;

    // The buffers must never overflow: every loss is the Bernoulli loss under test.
    for q in &out.summary.queues {
        assert_eq!(q.dropped, 0, "queue {} overflowed ({} drops): the setup is wrong", q.name, q.dropped);
    }
    assert!(out.summary.link_losses > 0);

    // Little's law per sampled queue: mean wait = time-average length / departure rate.
    // Sampled queueing delay of a data packet crossing the path at each instant (for the
    // dispersion): length / service rate on the data queues plus the ACK queue.
    let names = ["src0->left", "left->right", "right->left"];
    let rates_pps = [
        ACCESS_MBPS * 1e6 / (8.0 * PKT_BYTES),
        BOTTLENECK_MBPS * 1e6 / (8.0 * PKT_BYTES),
        BOTTLENECK_MBPS * 1e6 / (8.0 * HDR_BYTES),
    ];
    let mut queueing = 0.0;
    let mut per_instant: Vec<f64> = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let s: Vec<_> = out.queues.iter().filter(|q| q.queue == *name).collect();
        assert!(!s.is_empty(), "no samples for queue {name}");
        let l_mean = s.iter().map(|q| q.len_pkts as f64).sum::<f64>() / s.len() as f64;
        let departures: u64 = s.iter().map(|q| q.departures.iter().sum::<u64>()).sum();
        let span = s.last().unwrap().t_s;
        let lambda = departures as f64 / span;
        queueing += l_mean / lambda;
        if per_instant.is_empty() {
            per_instant = vec![0.0; s.len()];
        }
        for (i, q) in s.iter().enumerate() {
            per_instant[i] += q.len_pkts as f64 / rates_pps[k];
        }
    }
    let serialization = 8.0 * PKT_BYTES * (2.0 / (ACCESS_MBPS * 1e6) + 1.0 / (BOTTLENECK_MBPS * 1e6))
        + 8.0 * HDR_BYTES * (2.0 / (ACCESS_MBPS * 1e6) + 1.0 / (BOTTLENECK_MBPS * 1e6));
    let rtt = f.base_rtt_s + serialization + queueing;
    let (_, q_sd) = mean_sd(&per_instant);
    let t0_bound = rtt + 4.0 * q_sd;
    let t0 = t0_bound.max(MIN_RTO_S);

    let model = padhye::throughput_full(p, rtt, t0, B_PER_ACK, MAX_WINDOW);
    let approx = padhye::throughput_approx(p, rtt, t0, B_PER_ACK, MAX_WINDOW);
    Case {
        p,
        sent_rate: f.data_pkts_sent as f64 / dur,
        goodput: f.delivered_pkts as f64 / dur,
        loss_ind_rate: (f.fast_retransmits + f.timeouts) as f64 / f.data_pkts_sent as f64,
        timeouts: f.timeouts,
        fast_retx: f.fast_retransmits,
        rtt,
        queueing,
        t0,
        t0_bound,
        model,
        approx,
    }
}

fn print_table(title: &str, cases: &[Case]) {
    println!("\n{title}");
    println!(
        "{:>6} {:>10} {:>10} {:>10} {:>8} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "p",
        "sent/s",
        "model/s",
        "rel.err",
        "approx/s",
        "goodput/s",
        "RTT ms",
        "queue ms",
        "T0 ms",
        "TDs",
        "TOs",
        "ind.rate"
    );
    for c in cases {
        println!(
            "{:>6} {:>10.2} {:>10.2} {:>+10.3} {:>8.2} {:>10.2} {:>8.2} {:>8.3} {:>8.1} {:>8} {:>8} {:>8.4}",
            c.p,
            c.sent_rate,
            c.model,
            (c.sent_rate - c.model) / c.model,
            c.approx,
            c.goodput,
            c.rtt * 1e3,
            c.queueing * 1e3,
            c.t0 * 1e3,
            c.fast_retx,
            c.timeouts,
            c.loss_ind_rate
        );
        if c.t0_bound > MIN_RTO_S {
            println!(
                "       (T0 from the RTT_mean + 4 sigma bound {:.1} ms, above the min_rto floor)",
                c.t0_bound * 1e3
            );
        }
    }
}

#[test]
fn newreno_matches_padhye_full_model() {
    let ps = [0.005, 0.01, 0.02, 0.05];
    let cases: Vec<Case> = ps.iter().map(|&p| run_case(p, "newreno")).collect();
    print_table("NewReno vs Padhye et al. 1998 full model (packets/s sent; b = 1, Wmax = 256)", &cases);
    for c in &cases {
        let err = (c.sent_rate - c.model).abs() / c.model;
        assert!(
            err <= TOLERANCE,
            "p = {}: measured {:.2} pkt/s vs model {:.2} pkt/s ({:+.1}%), RTT {:.2} ms, T0 {:.1} ms",
            c.p,
            c.sent_rate,
            c.model,
            100.0 * (c.sent_rate - c.model) / c.model,
            c.rtt * 1e3,
            c.t0 * 1e3
        );
    }
}

/// Informative only (the model does not describe Reno's reaction to several losses in a
/// window): `cargo test --release -p savanna-core --test padhye -- --ignored --nocapture`.
#[test]
#[ignore]
fn reno_against_padhye_full_model() {
    let ps = [0.005, 0.01, 0.02, 0.05];
    let cases: Vec<Case> = ps.iter().map(|&p| run_case(p, "reno")).collect();
    print_table("Reno vs Padhye et al. 1998 full model (informative)", &cases);
}
