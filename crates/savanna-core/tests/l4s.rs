//! L4S end to end: senders mark ECT(1) with `[tcp] ect1` (RFC 9331), DualPI2 (RFC 9332)
//! classifies them into its L queue, keeps that queue's delay below a millisecond with
//! DCTCP senders, and gives classic NewReno flows a share through the coupling.

use savanna_core::api::{load, run, Format, RunOptions};
use savanna_core::aqm::dualpi2::{DualPi2, SojournHist};
use savanna_core::metrics::{FlowRecord, RunOutput};
use savanna_core::scenario::Scenario;
use savanna_core::sim::World;
use std::path::Path;

fn scenario(queue: &str, l_tcp: &str, n_l: u32, n_c: u32, duration: f64) -> Scenario {
    let classic = match n_c {
        0 => String::new(),
        n => format!("[[traffic]]\ntype = \"persistent\"\nname = \"classic\"\ncount = {n}"),
    };
    let toml = format!(
        r#"
duration_s = {duration}
[topology]
type = "dumbbell"
pairs = 4
access_rate_mbps = 1000.0
access_delay_ms = 1.0
bottleneck_rate_mbps = 100.0
bottleneck_delay_ms = 8.0
bottleneck_queue = {queue}
[tcp]
max_window = 4000
[[traffic]]
type = "persistent"
name = "l4s"
count = {n_l}
tcp = {{ {l_tcp} }}
{classic}
"#
    );
    load(&toml, Format::Toml, Path::new("."), &RunOptions::default()).unwrap()
}

/// Run to the end; return the output and the bottleneck DualPI2's sojourn histograms.
fn run_dualpi2(sc: &Scenario) -> (RunOutput, [SojournHist; 2]) {
    let mut w = World::new(savanna_core::scenario::resolve(sc).unwrap());
    let mut flows: Vec<FlowRecord> = Vec::new();
    w.run(&mut flows).unwrap();
    let port = w.ports.iter().find(|p| p.name == "left->right").unwrap();
    let d = port.queue.qdisc.as_any().and_then(|a| a.downcast_ref::<DualPi2>()).expect("a dualpi2 bottleneck");
    let hist = d.sojourns.clone();
    let mut out = w.finish(0.0, &mut flows).unwrap();
    flows.sort_unstable_by_key(|f| f.flow_id);
    out.flows = flows;
    (out, hist)
}

fn goodputs(out: &RunOutput, tag: &str, secs: f64) -> Vec<f64> {
    out.flows
        .iter()
        .filter(|f| f.source.as_ref() == tag)
        .map(|f| f.delivered_pkts as f64 * 1500.0 * 8.0 / secs / 1e6)
        .collect()
}

/// RFC 9332's aims: with DCTCP on ECT(1) and NewReno sharing a DualPI2 bottleneck at equal
/// base RTTs, the L queue's 99th-percentile sojourn stays under 1 ms, the link stays busy,
/// and the classic flows get a share comparable to the L4S ones (k = 2).
#[test]
fn dualpi2_keeps_l4s_p99_sojourn_under_1ms_while_classic_flows_get_a_share() {
    let secs = 60.0;
    let sc = scenario("{ type = \"dualpi2\" }", "cc = \"dctcp\", ect1 = true", 2, 2, secs);
    let (out, [l, c]) = run_dualpi2(&sc);
    let q = out.summary.queues.iter().find(|q| q.name == "left->right").unwrap();
    let (gl, gc) = (goodputs(&out, "l4s", secs), goodputs(&out, "classic", secs));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let ratio = mean(&gl) / mean(&gc);
    let (l99, c50, c99) = (l.quantile_ns(0.99), c.quantile_ns(0.5), c.quantile_ns(0.99));
    eprintln!(
        "dualpi2: L pkts {} p99 <= {} us; C pkts {} p50 <= {} us p99 <= {} us; goodput L {gl:.2?} C {gc:.2?} Mb/s; \
         L/C per-flow ratio {ratio:.3}; util {:.3}; marked {} dropped {:?}",
        l.count(),
        l99 / 1000,
        c.count(),
        c50 / 1000,
        c99 / 1000,
        q.utilisation,
        q.marked,
        q.dropped_by_reason
    );
    assert!(l.count() > 100_000 && c.count() > 10_000, "both queues carried traffic");
    assert!(l99 <= 1_000_000, "L4S p99 sojourn {} us", l99 / 1000);
    assert!(c50 > 5_000_000, "the classic queue is held near its 15 ms target, not emptied: p50 {} us", c50 / 1000);
    assert!(q.utilisation > 0.95, "utilisation {}", q.utilisation);
    // A share, not starvation either way: within a factor of 3 of equality.
    assert!((1.0 / 3.0..3.0).contains(&ratio), "L/C per-flow goodput ratio {ratio}");
}

/// The ECT(1) option only changes the codepoint: through a queue that does not tell ECT(1)
/// from ECT(0) (DCTCP's step marking), a run is identical with and without it.
#[test]
fn ect1_is_ecn_capable_like_ect0_to_a_classic_marking_queue() {
    let q = "{ type = \"step\", limit_pkts = 400, k_pkts = 20 }";
    let a = run(&scenario(q, "cc = \"dctcp\", ect1 = true", 2, 0, 10.0)).unwrap();
    let b = run(&scenario(q, "cc = \"dctcp\"", 2, 0, 10.0)).unwrap();
    let key = |o: &RunOutput| o.flows.iter().map(|f| (f.delivered_pkts, f.ecn_marks, f.drops)).collect::<Vec<_>>();
    assert_eq!(key(&a), key(&b));
    assert!(a.flows.iter().all(|f| f.ecn_marks > 0));
}

/// Without ECT(1), DCTCP's ECT(0) packets are classic to DualPI2: they share the C queue
/// and its 15 ms target (the L queue stays empty).
#[test]
fn ect0_senders_land_in_the_classic_queue() {
    let sc = scenario("{ type = \"dualpi2\" }", "cc = \"dctcp\"", 2, 0, 10.0);
    let (_, [l, c]) = run_dualpi2(&sc);
    assert_eq!(l.count(), 0);
    assert!(c.count() > 10_000);
}

#[test]
fn ect1_needs_ecn_and_names_its_field() {
    let toml = |tcp: &str| {
        format!(
            r#"
duration_s = 1.0
[topology]
type = "dumbbell"
pairs = 1
bottleneck_queue = {{ type = "dualpi2" }}
[[traffic]]
type = "persistent"
count = 1
tcp = {{ {tcp} }}
"#
        )
    };
    let e = load(&toml("ect1 = true"), Format::Toml, Path::new("."), &RunOptions::default()).unwrap_err().to_string();
    assert!(e.contains("ect1") && e.contains("needs ECN"), "{e}");
    for ok in ["ect1 = true, ecn = true", "ect1 = true, cc = \"dctcp\""] {
        load(&toml(ok), Format::Toml, Path::new("."), &RunOptions::default()).unwrap();
    }
    let e = load(
        &toml("cc = \"dctcp\"").replace("{ type = \"dualpi2\" }", "{ type = \"dualpi2\", c_weight = 2.0 }"),
        Format::Toml,
        Path::new("."),
        &RunOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("bottleneck_queue.c_weight"), "{e}");
}
