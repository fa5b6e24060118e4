//! FQ-PIE and COBALT end to end, on the mixed workload of `disciplines.rs` (Poisson Pareto
//! mice at load 0.7 plus three persistent elephants, 10 pairs): each run conserves packets
//! and is deterministic; FQ-PIE's flow queues give the mice shorter completion times than
//! one PIE queue; COBALT keeps the mice faster than a bloated drop-tail buffer, and marks
//! rather than drops for ECN senders.

use savanna_core::api::{load, run, Format, RunOptions};
use savanna_core::metrics::{QueueTotals, RunOutput};
use std::path::Path;

fn scenario(queue: &str, tcp: &str) -> String {
    format!(
        r#"
duration_s = 60.0
seed = 11
[topology]
type = "dumbbell"
pairs = 10
bottleneck_queue = {queue}
{tcp}
[[traffic]]
type = "poisson"
name = "mice"
load = 0.7
size = {{ dist = "pareto", shape = 1.3, mean = 30.0 }}
[[traffic]]
type = "persistent"
name = "elephants"
count = 3
"#
    )
}

fn go(toml: &str) -> RunOutput {
    let sc = load(toml, Format::Toml, Path::new("."), &RunOptions::default()).expect("valid");
    run(&sc).expect("run")
}

/// Run twice (same bytes), check every queue conserves packets.
fn check(queue: &str, tcp: &str) -> RunOutput {
    let a = go(&scenario(queue, tcp));
    let b = go(&scenario(queue, tcp));
    let key = |o: &RunOutput| o.flows.iter().map(|f| (f.start_s, f.fct_s, f.drops, f.ecn_marks)).collect::<Vec<_>>();
    assert_eq!(key(&a), key(&b), "{queue}: not deterministic");
    for q in &a.summary.queues {
        assert_eq!(q.arrivals, q.departed + q.dropped + q.occupancy_at_end, "{queue}: {} leaks", q.name);
    }
    assert!(a.summary.flows_finished > 100, "{queue}: {} flows finished", a.summary.flows_finished);
    a
}

fn bottleneck(o: &RunOutput) -> &QueueTotals {
    o.summary.queues.iter().find(|q| q.name == "left->right").unwrap()
}

/// Mean completion time of finished mice of at most 10 packets, s.
fn short_fct(o: &RunOutput) -> f64 {
    let f: Vec<f64> = o
        .flows
        .iter()
        .filter(|f| f.source.as_ref() == "mice" && f.size_pkts.is_some_and(|s| s <= 10))
        .filter_map(|f| f.fct_s)
        .collect();
    assert!(f.len() > 100, "{} short flows finished", f.len());
    f.iter().sum::<f64>() / f.len() as f64
}

fn reason(q: &QueueTotals, r: &str) -> u64 {
    q.dropped_by_reason.get(r).copied().unwrap_or(0)
}

#[test]
fn fq_pie_isolates_short_flows_better_than_pie() {
    let pie = check(r#"{ type = "pie", limit_pkts = 1000 }"#, "");
    let fq = check(r#"{ type = "fq_pie" }"#, "");
    let (s_pie, s_fq) = (short_fct(&pie), short_fct(&fq));
    println!("short-flow mean FCT: pie {s_pie:.4} s, fq_pie {s_fq:.4} s");
    assert!(s_fq < 0.8 * s_pie, "fq_pie {s_fq} vs pie {s_pie}");
    // FQ-PIE's per-flow PIE acted on the elephants' queues (early drops, no overflow at
    // the 10240-packet shared limit).
    let q = bottleneck(&fq);
    assert_eq!(q.discipline, "fq_pie");
    assert!(reason(q, "early") > 100, "{:?}", q.dropped_by_reason);
    assert_eq!(reason(q, "overflow"), 0);
}

#[test]
fn cobalt_keeps_short_flows_faster_than_a_bloated_fifo_and_marks_ecn() {
    let fifo = check(r#"{ type = "droptail", limit_pkts = 1000 }"#, "");
    let cobalt = check(r#"{ type = "cobalt" }"#, "");
    let (s_fifo, s_cobalt) = (short_fct(&fifo), short_fct(&cobalt));
    println!("short-flow mean FCT: droptail(1000) {s_fifo:.4} s, cobalt {s_cobalt:.4} s");
    assert!(s_cobalt < 0.5 * s_fifo, "cobalt {s_cobalt} vs droptail {s_fifo}");
    let q = bottleneck(&cobalt);
    assert!(reason(q, "policy") > 100, "{:?}", q.dropped_by_reason);
    assert_eq!(q.marked, 0, "not-ECT senders are never marked");
    // ECN senders: the CoDel part marks instead of dropping.
    let ecn = check(r#"{ type = "cobalt" }"#, "[tcp]\necn = true");
    let q = bottleneck(&ecn);
    println!("cobalt with ECN: {} marks, drops {:?}", q.marked, q.dropped_by_reason);
    assert!(q.marked > 100);
    assert!(reason(q, "policy") < q.marked / 10, "{:?} vs {} marks", q.dropped_by_reason, q.marked);
}
