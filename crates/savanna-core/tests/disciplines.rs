//! End-to-end runs of each queue discipline and edge classifier on a mixed workload
//! (Poisson Pareto flows plus a few persistent ones): the run completes, conserves packets
//! (checked inside the simulator, which fails the run otherwise, and again here per queue),
//! is deterministic, and the discipline's own counters show it acted.

use savanna_core::api::{load, run, Format, RunOptions};
use savanna_core::metrics::RunOutput;
use std::path::Path;

fn scenario(queue: &str, extra: &str) -> String {
    format!(
        r#"
duration_s = 60.0
seed = 7
[topology]
type = "dumbbell"
pairs = 10
bottleneck_queue = {queue}
[[traffic]]
type = "poisson"
name = "mice"
load = 0.7
size = {{ dist = "pareto", shape = 1.3, mean = 30.0 }}
[[traffic]]
type = "persistent"
name = "elephants"
count = 3
[sampling]
interval_s = 1.0
queues = ["bottleneck"]
{extra}
"#
    )
}

fn go(toml: &str) -> RunOutput {
    let sc = load(toml, Format::Toml, Path::new("."), &RunOptions::default()).expect("valid");
    run(&sc).expect("run")
}

fn check(queue: &str, extra: &str) -> RunOutput {
    let a = go(&scenario(queue, extra));
    let b = go(&scenario(queue, extra));
    let key = |o: &RunOutput| {
        o.flows.iter().map(|f| (f.start_s, f.size_pkts, f.fct_s, f.drops, f.retransmits)).collect::<Vec<_>>()
    };
    assert_eq!(key(&a), key(&b), "{queue}: not deterministic");
    for q in &a.summary.queues {
        assert_eq!(
            q.arrivals,
            q.departed + q.dropped + q.occupancy_at_end,
            "{queue}: queue {} does not conserve",
            q.name
        );
    }
    assert!(a.summary.flows_finished > 100, "{queue}: only {} flows finished", a.summary.flows_finished);
    a
}

fn bottleneck(o: &RunOutput) -> &savanna_core::metrics::QueueTotals {
    o.summary.queues.iter().find(|q| q.name == "left->right").unwrap()
}

/// The RIO queue of the RIO tests: 80 packets, thresholds 12/28 (short) and 12/40 (long).
const RIO80: &str = "{ type = \"rio\", limit_pkts = 80, min_th_short = 12.0, max_th_short = 28.0, \
    min_th_long = 12.0, max_th_long = 40.0 }";

#[test]
fn droptail_and_red() {
    check(r#"{ type = "droptail", limit_pkts = 20 }"#, "");
    let o = check(r#"{ type = "red", limit_pkts = 80, min_th = 12.0, max_th = 40.0 }"#, "");
    assert!(bottleneck(&o).dropped_by_reason.contains_key("early"));
}

#[test]
fn favorqueue_favours_and_pushes_out() {
    let o = check(r#"{ type = "favorqueue", limit_pkts = 8 }"#, "");
    assert!(bottleneck(&o).pushed_out > 0);
    let favored: u64 = o.flows.iter().map(|f| f.favored_pkts).sum();
    assert!(favored > 0);
    // Per-flow push-outs add up to the queues' (the reverse queue is FavorQueue too).
    let per_flow: u64 = o.flows.iter().map(|f| f.pushed_out).sum();
    let per_queue: u64 = o.summary.queues.iter().map(|q| q.pushed_out).sum();
    assert_eq!(per_flow, per_queue);
    // Every flow's SYNs: one, plus one per SYN lost.
    assert!(o.flows.iter().all(|f| f.syn_sent > f.syn_drops));
}

#[test]
fn rio_with_the_threshold_classifier_is_rio_ps() {
    let extra = "[[classifiers]]\ntype = \"threshold\"\nnode = \"left\"\n";
    let o = check(RIO80, extra);
    let q = bottleneck(&o);
    assert!(q.by_class.contains_key("short") && q.by_class.contains_key("long"), "{:?}", q.by_class.keys());
    // Long packets see the total average, short ones only their own: long ones lose more.
    let rate = |c: &str| q.by_class[c].dropped as f64 / q.by_class[c].arrivals as f64;
    assert!(rate("long") > rate("short"), "long {} vs short {}", rate("long"), rate("short"));
    assert!(o.flows.iter().any(|f| f.class_at_end == savanna_core::metrics::ClassMark::Long));
    assert!(!o.classifiers.is_empty());
}

#[test]
fn a_classifier_needs_a_queue_that_reads_what_it_writes() {
    let err = |queue: &str, classifier: &str| {
        let toml = scenario(queue, &format!("[[classifiers]]\ntype = \"{classifier}\"\nnode = \"left\"\n"));
        load(&toml, Format::Toml, Path::new("."), &RunOptions::default()).err().map(|e| e.to_string())
    };
    // Class marks: read by RIO, DRR, PRQ and RED-diff, ignored by the tag readers.
    let e = err(r#"{ type = "droptail", limit_pkts = 20 }"#, "threshold").unwrap();
    assert!(e.starts_with("classifiers[0]: it writes class marks, which no queue reads"), "{e}");
    assert!(e.contains("(rio, drr, prq, reddiff)"), "{e}");
    assert!(err(r#"{ type = "pfabric", limit_pkts = 20 }"#, "threshold").unwrap().contains("class marks"));
    assert_eq!(err(RIO80, "threshold"), None);
    // Priority tags: read by pFabric and PIAS, and by SP-PIFO / AIFO ranking by remaining size.
    let e = err(RIO80, "remaining").unwrap();
    assert!(e.starts_with("classifiers[0]: it writes priority tags") && e.contains("(pfabric, pias, sppifo, aifo)"));
    assert!(err(r#"{ type = "sppifo", limit_pkts = 20, rank = "fifo" }"#, "remaining").is_some());
    assert_eq!(err(r#"{ type = "sppifo", limit_pkts = 20, rank = "remaining" }"#, "remaining"), None);
    assert_eq!(err(r#"{ type = "pias", limit_pkts = 20 }"#, "pias"), None);
    let toml = scenario(RIO80, "[[classifiers]]\ntype = \"threshold\"\nnode = \"nowhere\"\n");
    let err = load(&toml, Format::Toml, Path::new("."), &RunOptions::default()).unwrap_err();
    assert!(err.to_string().starts_with("classifiers[0].node:"), "{err}");
}

#[test]
fn tokuda_classifiers_feed_rio() {
    let rio = RIO80;
    for c in [
        "type = \"marking\"",
        "type = \"sampling\"",
        "type = \"sampling\"\nrandom_sampling = true",
        "type = \"hashing\"",
        "type = \"oracle\"\nthreshold = 30",
    ] {
        let o = check(rio, &format!("[[classifiers]]\nnode = \"left\"\n{c}\n"));
        let q = bottleneck(&o);
        assert!(q.by_class.contains_key("short") && q.by_class.contains_key("long"), "{c}: {:?}", q.by_class.keys());
        assert!(o.classifiers.iter().all(|s| s.node == "left"), "{c}");
    }
    let bad = scenario(rio, "[[classifiers]]\nnode = \"left\"\ntype = \"sampling\"\nsample_every = 0\n");
    let err = load(&bad, Format::Toml, Path::new("."), &RunOptions::default()).unwrap_err();
    assert!(err.to_string().starts_with("classifiers[0].sample_every"), "{err}");
}

#[test]
fn modern_baselines() {
    let o = check(r#"{ type = "codel", limit_pkts = 1000 }"#, "");
    assert!(bottleneck(&o).dropped > 0);
    check(r#"{ type = "fq_codel" }"#, "");
    let o = check(r#"{ type = "pie", limit_pkts = 1000 }"#, "");
    assert!(bottleneck(&o).dropped > 0);
    check(r#"{ type = "pi", limit_pkts = 300 }"#, "");
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

fn reason(q: &savanna_core::metrics::QueueTotals, r: &str) -> u64 {
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

#[test]
fn drr_isolation_with_a_classifier() {
    let o = check(
        r#"{ type = "drr", limit_short_pkts = 40, limit_long_pkts = 40, share_short = 0.4, share_long = 0.6 }"#,
        "[[classifiers]]\ntype = \"threshold\"\nnode = \"left\"\n",
    );
    let q = bottleneck(&o);
    assert!(q.by_class.contains_key("short") && q.by_class.contains_key("long"));
    let bad = scenario(
        r#"{ type = "drr", limit_short_pkts = 40, limit_long_pkts = 40, share_short = 0.5, share_long = 0.6 }"#,
        "",
    );
    let err = load(&bad, Format::Toml, Path::new("."), &RunOptions::default()).unwrap_err();
    assert!(err.to_string().contains("topology.bottleneck_queue.share"), "{err}");
}

#[test]
fn favorqueue_baselines() {
    let o = check(r#"{ type = "choke", limit_pkts = 60 }"#, "");
    assert!(bottleneck(&o).dropped_by_reason.contains_key("policy"), "CHOKe drops matched pairs");
    check(r#"{ type = "las", limit_pkts = 8 }"#, "");
    let o = check(r#"{ type = "run2c", limit_pkts = 8 }"#, "");
    assert!(o.flows.iter().map(|f| f.favored_pkts).sum::<u64>() > 0);
}

#[test]
fn tokuda_nine_combinations() {
    for q in [
        "{ type = \"rio\", limit_pkts = 300, min_th_short = 45.0, max_th_short = 105.0, \
         min_th_long = 45.0, max_th_long = 150.0 }",
        r#"{ type = "reddiff", limit_pkts = 300 }"#,
        r#"{ type = "prq", limit_pkts = 300 }"#,
    ] {
        for c in ["marking", "sampling", "hashing"] {
            let o = check(q, &format!("[[classifiers]]\nnode = \"left\"\ntype = \"{c}\"\n"));
            let b = bottleneck(&o);
            assert!(b.by_class.contains_key("short"), "{q} with {c}: {:?}", b.by_class.keys());
        }
    }
}

#[test]
fn edge_classifiers_count_only_traffic_sent_into_the_network() {
    // Three long flows through `left`: their ACKs come back through `left` towards the
    // senders, but the classifier marks and counts only what `left` sends on to a router.
    let toml = r#"
duration_s = 20.0
[topology]
type = "dumbbell"
pairs = 3
bottleneck_queue = RIO80
[[classifiers]]
type = "threshold"
node = "left"
[[traffic]]
type = "persistent"
count = 3
[sampling]
interval_s = 1.0
queues = ["bottleneck"]
"#
    .replace("RIO80", RIO80);
    let o = go(&toml);
    let last = o.classifiers.last().unwrap();
    assert_eq!(last.flows_short + last.flows_long, 3, "{last:?}");
    let q = bottleneck(&o);
    assert!(
        q.by_class.get("none").is_none_or(|c| c.arrivals == 0),
        "unmarked data reached the core: {:?}",
        q.by_class.keys()
    );
}
