//! The size-aware schedulers after the papers (pFabric, PIAS, SP-PIFO, AIFO) on FavorQueue
//! 2013's dumbbell at load 0.8 (10 Mb/s bottleneck, 8-packet buffers, RTTs 4-200 ms,
//! Pareto sizes of shape 1.3 and mean 30 packets, reverse load 0.1): each must give short
//! flows (at most 10 packets) a lower median completion time than DropTail does on the same
//! arrivals. Unfinished short flows count as infinitely slow. Run with `--nocapture` to
//! see the figures (FavorQueue alongside, for reference).

use savanna_core::api::{load, run, Format, RunOptions};
use std::path::Path;

const DURATION_S: f64 = 300.0;

fn scenario(queue: &str, extra: &str) -> String {
    format!(
        r#"
duration_s = {DURATION_S}
seed = 3
packet_bytes = 1500
header_bytes = 40
[topology]
type = "dumbbell"
pairs = 50
access_rate_mbps = 100.0
access_delay_ms = {{ min = 0.5, max = 49.5 }}
bottleneck_rate_mbps = 10.0
bottleneck_delay_ms = 1.0
bottleneck_queue = {queue}
reverse_queue = {{ type = "droptail", limit_pkts = 8 }}
access_queue = {{ type = "droptail", limit_pkts = 1000 }}
[tcp]
variant = "newreno"
handshake = true
ito_s = 3.0
min_rto_s = 0.2
init_cwnd = 2
max_window = 128
delayed_ack = false
[[traffic]]
type = "poisson"
name = "forward"
load = 0.8
size = {{ dist = "pareto", shape = 1.3, mean = 30.0 }}
[[traffic]]
type = "poisson"
name = "reverse"
direction = "reverse"
load = 0.1
size = {{ dist = "pareto", shape = 1.3, mean = 30.0 }}
{extra}
"#
    )
}

/// Median FCT (s) of forward flows of at most 10 packets started in [20 s, end - 40 s].
fn short_median(queue: &str, extra: &str) -> f64 {
    let toml = scenario(queue, extra);
    let sc = load(&toml, Format::Toml, Path::new("."), &RunOptions::default()).expect("valid scenario");
    let o = run(&sc).expect("run");
    let mut f: Vec<f64> = o
        .flows
        .iter()
        .filter(|f| &*f.source == "forward" && f.start_s >= 20.0 && f.start_s <= DURATION_S - 40.0)
        .filter(|f| f.size_pkts.is_some_and(|n| n <= 10))
        .map(|f| f.fct_s.unwrap_or(f64::INFINITY))
        .collect();
    assert!(f.len() > 1000, "{queue}: only {} short flows", f.len());
    f.sort_by(|a, b| a.partial_cmp(b).unwrap());
    f[f.len() / 2]
}

const TAG_REMAINING: &str = "[[classifiers]]\ntype = \"remaining\"\nnode = \"left\"\n";

fn beats_droptail(name: &str, queue: &str, extra: &str) {
    let dt = short_median(r#"{ type = "droptail", limit_pkts = 8 }"#, "");
    let fq = short_median(r#"{ type = "favorqueue", limit_pkts = 8 }"#, "");
    let m = short_median(queue, extra);
    eprintln!("short-flow median FCT at load 0.8: droptail {dt:.4} s, favorqueue {fq:.4} s, {name} {m:.4} s");
    assert!(m < dt, "{name}: short-flow median {m} s is not below DropTail's {dt} s");
}

#[test]
fn pfabric_short_flows_finish_sooner_than_under_droptail() {
    beats_droptail("pfabric", r#"{ type = "pfabric", limit_pkts = 8 }"#, TAG_REMAINING);
}

#[test]
fn pias_short_flows_finish_sooner_than_under_droptail() {
    let tag = "[[classifiers]]\ntype = \"pias\"\nnode = \"left\"\n\
               thresholds_from = { size = { dist = \"pareto\", shape = 1.3, mean = 30.0 }, queues = 8 }\n";
    beats_droptail("pias", r#"{ type = "pias", limit_pkts = 8 }"#, tag);
}

#[test]
fn sppifo_short_flows_finish_sooner_than_under_droptail() {
    beats_droptail("sppifo", r#"{ type = "sppifo", limit_pkts = 8, rank = "remaining" }"#, TAG_REMAINING);
}

#[test]
fn aifo_short_flows_finish_sooner_than_under_droptail() {
    beats_droptail("aifo", r#"{ type = "aifo", limit_pkts = 8, rank = "remaining" }"#, TAG_REMAINING);
}
