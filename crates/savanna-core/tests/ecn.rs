//! ECN end to end (RFC 3168): with an ECN-capable RED bottleneck, data packets are marked
//! instead of dropped early, receivers see the marks, senders back off on ECE (the queue
//! stays controlled), and what RED still drops early is what cannot be marked.

use savanna_core::api::{load, run, Format, RunOptions};
use savanna_core::metrics::RunOutput;
use std::path::Path;

fn red_run(ecn: bool) -> RunOutput {
    let toml = format!(
        r#"
duration_s = 120.0
[topology]
type = "dumbbell"
pairs = 10
bottleneck_queue = {{ type = "red", limit_pkts = 80, min_th = 12.0, max_th = 40.0, ecn = {ecn} }}
[tcp]
ecn = {ecn}
[[traffic]]
type = "poisson"
load = 0.6
size = {{ dist = "pareto", shape = 1.3, mean = 30.0 }}
[[traffic]]
type = "persistent"
name = "long"
count = 5
"#
    );
    let sc = load(&toml, Format::Toml, Path::new("."), &RunOptions::default()).unwrap();
    run(&sc).unwrap()
}

#[test]
fn ecn_marks_replace_early_drops() {
    let with = red_run(true);
    let without = red_run(false);
    let q = |o: &RunOutput| o.summary.queues.iter().find(|q| q.name == "left->right").unwrap().clone();
    let (qe, qn) = (q(&with), q(&without));
    eprintln!(
        "ecn: marked {} early {:?} util {:.3}; plain: early {:?} util {:.3}",
        qe.marked, qe.dropped_by_reason, qe.utilisation, qn.dropped_by_reason, qn.utilisation
    );
    assert_eq!(qn.marked, 0);
    assert!(qe.marked > 100, "marks: {}", qe.marked);
    let early = |q: &savanna_core::metrics::QueueTotals| q.dropped_by_reason.get("early").copied().unwrap_or(0);
    assert!(early(&qn) > 100);
    assert!(early(&qe) * 5 < early(&qn), "early drops with ECN {} vs without {}", early(&qe), early(&qn));
    // Receivers saw the marks (a marked packet may still be lost further on, never more).
    let seen: u64 = with.flows.iter().map(|f| f.ecn_marks).sum();
    assert!(seen > 0 && seen <= qe.marked, "seen {seen}, marked {}", qe.marked);
    // Senders reacted: the queue stayed controlled, it did not sit at the buffer limit.
    assert!(qe.utilisation > 0.85, "utilisation {}", qe.utilisation);
    let data_drops: u64 = with.flows.iter().map(|f| f.drops).sum();
    let data_drops_plain: u64 = without.flows.iter().map(|f| f.drops).sum();
    assert!(data_drops * 3 < data_drops_plain, "{data_drops} vs {data_drops_plain}");
}
