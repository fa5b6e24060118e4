//! Workload generators: web sessions (Feldmann et al. 1999, Guo & Matta 2001 Table II)
//! reproduce their distributions' means, closed-loop sessions keep exactly one connection
//! open, foreground probes appear on schedule, UDP sources send at their rate, and the
//! goodput and network time series add up to the per-flow records.

use savanna_core::api::{load, run, Format, RunOptions};
use savanna_core::metrics::RunOutput;
use std::collections::BTreeMap;
use std::path::Path;

fn go(toml: &str) -> RunOutput {
    let sc = load(toml, Format::Toml, Path::new("."), &RunOptions::default()).expect("valid");
    run(&sc).expect("run")
}

fn err(toml: &str) -> String {
    match load(toml, Format::Toml, Path::new("."), &RunOptions::default()).and_then(|sc| run(&sc)) {
        Ok(_) => panic!("accepted a bad scenario:\n{toml}"),
        Err(e) => e.to_string(),
    }
}

/// A fast, uncongested dumbbell so workload timing is not disturbed by the network.
fn fast(duration: f64, traffic: &str) -> String {
    format!(
        "duration_s = {duration}\nseed = 11\n[topology]\ntype = \"dumbbell\"\npairs = 4\nbottleneck_rate_mbps = \
            1000.0\naccess_rate_mbps = 1000.0\nbottleneck_queue = {{ type = \"droptail\", limit_pkts = 10000 \
                }}\n{traffic}"
    )
}

#[test]
fn web_sessions_match_their_distributions() {
    // One session, pages of 2..7 one-packet objects 1 ms apart, 10 ms to 3.99 s between
    // pages (uniform, mean 2 s; never near 1 ms, so pages are exactly the clusters of flow
    // starts; the exponential draw itself is tested with the size distributions).
    let o = go(&fast(
        20_000.0,
        r#"[[traffic]]
type = "web"
sessions = 1
inter_page_s = { dist = "uniform", min = 0.01, max = 3.99 }
objects_per_page = { min = 2, max = 7 }
inter_object_s = { dist = "fixed", value = 0.001 }
object_size = { dist = "fixed", value = 1 }
from = "receivers"
to = "senders"
"#,
    ));
    let starts: Vec<f64> = o.flows.iter().map(|f| f.start_s).collect();
    let mut pages: Vec<Vec<f64>> = vec![vec![starts[0]]];
    for w in starts.windows(2) {
        if w[1] - w[0] > 0.0015 {
            pages.push(vec![w[1]]);
        } else {
            pages.last_mut().unwrap().push(w[1]);
        }
    }
    pages.pop(); // the last page may be cut by the end of the run
    let n = pages.len() as f64;
    assert!(n > 8000.0, "{n} pages");
    let mut hist = BTreeMap::new();
    for p in &pages {
        *hist.entry(p.len()).or_insert(0u32) += 1;
    }
    assert_eq!(hist.keys().copied().collect::<Vec<_>>(), vec![2, 3, 4, 5, 6, 7], "objects per page outside [2, 7]");
    let mean_objs = pages.iter().map(|p| p.len() as f64).sum::<f64>() / n;
    // Uniform on 2..7: mean 4.5, sd 1.71; 4 standard errors.
    assert!((mean_objs - 4.5).abs() < 4.0 * 1.71 / n.sqrt(), "mean objects per page {mean_objs}");
    // Gap from a page's last object to the next page: mean 2 s, sd 3.98 / sqrt(12).
    let gaps: Vec<f64> = pages.windows(2).map(|w| w[1][0] - w[0].last().unwrap()).collect();
    let mean_gap = gaps.iter().sum::<f64>() / gaps.len() as f64;
    assert!((mean_gap - 2.0).abs() < 4.0 * 1.15 / (gaps.len() as f64).sqrt(), "mean inter-page {mean_gap}");
    assert!(gaps.iter().all(|&g| (0.0099..3.991).contains(&g)));
    // Objects of a page come from one server to the session's one client, and are
    // request/response transfers (HTTP/1.0).
    assert!(o.flows.iter().all(|f| f.src.starts_with("dst") && f.dst.starts_with("src")));
    assert_eq!(o.flows.iter().map(|f| &*f.dst).collect::<std::collections::BTreeSet<_>>().len(), 1);
}

#[test]
fn web_object_sizes_follow_the_bounded_pareto_and_sessions_renew() {
    let o = go(&fast(
        2_000.0,
        r#"[[traffic]]
type = "web"
sessions = 20
pages_per_session = 3
inter_page_s = { dist = "exponential", mean = 1.0 }
objects_per_page = { min = 2, max = 7 }
inter_object_s = { dist = "exponential", mean = 0.05 }
object_size = { dist = "bounded_pareto", shape = 1.2, min = 4, max = 500 }
from = "receivers"
to = "senders"
start_spread_s = 1.0
"#,
    ));
    let sizes: Vec<f64> = o.flows.iter().map(|f| f.size_pkts.unwrap() as f64).collect();
    let n = sizes.len() as f64;
    let (a, lo, hi) = (1.2f64, 4.0f64, 500.0f64);
    let want = a * lo / (a - 1.0) * (1.0 - (lo / hi).powf(a - 1.0)) / (1.0 - (lo / hi).powf(a));
    let mean = sizes.iter().sum::<f64>() / n;
    let sd = (sizes.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    assert!(sizes.iter().all(|&s| (4.0..=500.0).contains(&s)));
    // Rounding to whole packets moves the mean by well under half a packet.
    assert!((mean - want).abs() < 4.0 * sd / n.sqrt() + 0.5, "mean size {mean}, want {want}");
    // Sessions of three pages are replaced by new ones: all four clients get used.
    let clients: std::collections::BTreeSet<&str> = o.flows.iter().map(|f| &*f.dst).collect();
    assert_eq!(clients.len(), 4);
    assert!(o.flows.iter().filter(|f| f.fct_s.is_some()).count() as f64 > 0.99 * n);
}

#[test]
fn closed_loop_sessions_keep_exactly_one_connection_open() {
    let o = go(&format!(
        "duration_s = 300.0\nseed = 5\n[topology]\ntype = \"dumbbell\"\npairs = 3\n{}",
        r#"[[traffic]]
type = "closed_loop"
name = "pipe"
sessions = 3
size = { dist = "fixed", value = 20 }
start_spread_s = 5.0
"#
    ));
    type Times = Vec<(f64, Option<f64>)>;
    let mut by_pair: BTreeMap<(String, String), Times> = BTreeMap::new();
    for f in &o.flows {
        by_pair.entry((f.src.to_string(), f.dst.to_string())).or_default().push((f.start_s, f.end_s));
    }
    assert_eq!(by_pair.len(), 3, "one session per pair");
    for (pair, v) in &by_pair {
        assert!(v[0].0 <= 5.0, "{pair:?} started late");
        assert!(v.len() > 50, "{pair:?}: {} connections", v.len());
        for w in v.windows(2) {
            // The next connection starts the instant the previous one has delivered all.
            assert_eq!(Some(w[1].0), w[0].1, "{pair:?}: overlap or gap");
        }
        assert!(v[..v.len() - 1].iter().all(|x| x.1.is_some()));
    }
}

/// `next_after = "acked"` (ns-2's `done`): a session's next connection starts when the
/// sender has its last ACK, one ACK trip (the reverse path's propagation and the ACK's
/// transmissions) after the data's arrival, where the default starts it at the arrival.
#[test]
fn closed_loop_next_after_acked_waits_one_ack_trip() {
    let sc = |next: &str| {
        format!(
            "duration_s = 60.0\nseed = 3\n[topology]\ntype = \"dumbbell\"\npairs = 1\nbottleneck_rate_mbps = 10.0\n\
             access_rate_mbps = 100.0\naccess_delay_ms = 5.0\nbottleneck_delay_ms = 40.0\n[[traffic]]\n\
             type = \"closed_loop\"\nsessions = 1\nsize = {{ dist = \"fixed\", value = 10 }}\n{next}"
        )
    };
    let gaps = |o: &RunOutput| -> Vec<f64> {
        o.flows.windows(2).map(|w| w[1].start_s - w[0].end_s.expect("finished")).collect()
    };
    let base = go(&sc(""));
    assert!(base.flows.len() > 50);
    assert!(gaps(&base).iter().all(|&g| g == 0.0), "delivered: back to back");
    let acked = go(&sc("next_after = \"acked\""));
    assert!(acked.flows.len() > 50);
    // The ACK's trip: 5 + 40 + 5 ms of propagation plus a 40-byte ACK's transmission on
    // each of the three links (well under a millisecond here).
    for g in gaps(&acked) {
        assert!((0.050..0.0505).contains(&g), "gap {g} is not one ACK trip");
    }
    assert!(acked.flows.len() < base.flows.len(), "the extra trip per connection costs connections");
    let e = err(&sc("next_after = \"sent\""));
    assert!(e.contains("next_after") && e.contains("`delivered` or `acked`"), "{e}");
}

#[test]
fn closed_loop_think_times_and_connection_limit() {
    let o = go(&fast(
        5_000.0,
        r#"[[traffic]]
type = "closed_loop"
sessions = 1
connections = 400
size = { dist = "fixed", value = 2 }
think_s = { dist = "exponential", mean = 3.0 }
"#,
    ));
    assert_eq!(o.flows.len(), 400);
    let gaps: Vec<f64> = o.flows.windows(2).map(|w| w[1].start_s - w[0].end_s.unwrap()).collect();
    assert!(gaps.iter().all(|&g| g >= 0.0));
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    assert!((mean - 3.0).abs() < 4.0 * 3.0 / (gaps.len() as f64).sqrt(), "mean think {mean}");
}

#[test]
fn foreground_probes_appear_on_schedule() {
    let o = go(&fast(
        260.0,
        r#"[[traffic]]
type = "periodic"
name = "fg-short"
tag = "foreground"
count = 10
size = { dist = "fixed", value = 10 }
period_s = 25.0
start_s = 5.0
[[traffic]]
type = "periodic"
name = "fg-long"
tag = "foreground"
count = 10
size = { dist = "fixed", value = 1000 }
period_s = 125.0
start_s = 5.0
"#,
    ));
    let times = |name: &str| {
        let mut m: BTreeMap<i64, usize> = BTreeMap::new();
        for f in o.flows.iter().filter(|f| &*f.source == name) {
            assert_eq!(&*f.tag, "foreground");
            *m.entry((f.start_s * 1000.0).round() as i64).or_default() += 1;
        }
        m
    };
    let short = times("fg-short");
    assert_eq!(short.keys().copied().collect::<Vec<_>>(), (0..11).map(|k| 5000 + 25_000 * k).collect::<Vec<_>>());
    assert!(short.values().all(|&c| c == 10));
    let long = times("fg-long");
    assert_eq!(long.keys().copied().collect::<Vec<_>>(), vec![5000, 130_000, 255_000]);
}

#[test]
fn udp_sources_send_at_their_rate() {
    let o = go(&fast(
        100.0,
        r#"[[traffic]]
type = "udp"
name = "cbr"
initial = 1
lifetime_s = { dist = "fixed", value = 10.0 }
start_s = 1.0
[[traffic]]
type = "udp"
name = "telnet"
pattern = "poisson"
rate_kbps = 8.0
packet_bytes = 100
initial = 2
[sampling]
interval_s = 1.0
queues = ["bottleneck"]
"#,
    ));
    let cbr = o.flows.iter().find(|f| &*f.source == "cbr").unwrap();
    // 16 kb/s of 125-byte packets is 16 packets a second.
    assert_eq!(cbr.kind, "udp");
    assert_eq!(cbr.size_pkts, Some(160));
    assert_eq!(cbr.size_bytes, Some(160 * 125));
    assert_eq!(cbr.data_pkts_sent, 160);
    assert_eq!(cbr.delivered_pkts, 160);
    assert!((cbr.fct_s.unwrap() - 159.0 / 16.0).abs() < 1e-6);
    // Poisson streams of 10 packets a second, sending until the end.
    for f in o.flows.iter().filter(|f| &*f.source == "telnet") {
        let n = f.data_pkts_sent as f64;
        assert!((n - 1000.0).abs() < 4.0 * 1000f64.sqrt(), "{n}");
    }
    // Goodput windows add up to each flow's delivered packets.
    let mut sum: BTreeMap<u64, u64> = BTreeMap::new();
    for g in &o.goodput {
        *sum.entry(g.flow_id).or_default() += g.delivered_pkts;
    }
    for f in &o.flows {
        assert_eq!(sum.get(&f.flow_id).copied().unwrap_or(0), f.delivered_pkts, "flow {}", f.flow_id);
    }
    // The network series sees the CBR flow active during its lifetime only.
    let active = |t: f64| o.network.iter().find(|n| (n.t_s - t).abs() < 1e-9).unwrap().active_udp_flows;
    assert_eq!(active(5.0), 3);
    assert_eq!(active(20.0), 2);
}

#[test]
fn udp_flow_arrivals_with_pareto_gaps_and_lifetimes() {
    let o = go(&fast(
        3_000.0,
        r#"[[traffic]]
type = "udp"
interarrival_s = { dist = "pareto", shape = 1.2, mean = 1.0 }
lifetime_s = { dist = "pareto", shape = 1.25, mean = 30.0 }
"#,
    ));
    let n = o.flows.len() as f64;
    // Pareto gaps have infinite variance at shape 1.2: a loose check of the rate.
    assert!(n > 1500.0 && n < 4500.0, "{n} flows in 3000 s");
    assert!(o.flows.iter().all(|f| f.size_pkts.unwrap() as f64 >= 0.2 * 30.0 * 16.0 - 1.0));
}

#[test]
fn lossy_link_back_to_back_connections() {
    // Guo & Matta Fig. 2b / Tokuda Fig. 2: one connection after another over a lossy link.
    let o = go(
        "duration_s = 600.0\n[topology]\ntype = \"dumbbell\"\npairs = 1\nbottleneck_loss = 0.05\n[[traffic]]\ntype = \
            \"closed_loop\"\nsessions = 1\nsize = { dist = \"fixed\", value = 30 }\n",
    );
    assert!(o.flows.len() > 50);
    assert!(o.flows.iter().map(|f| f.retransmits).sum::<u64>() > 0);
    assert!(o.flows.windows(2).all(|w| w[0].end_s == Some(w[1].start_s)));
}

#[test]
fn workload_input_errors_name_the_field() {
    let base = "duration_s = 10.0\n[topology]\ntype = \"dumbbell\"\n[[traffic]]\n";
    let e = err(&format!(
        "{base}type = \"web\"\nsessions = 0\ninter_page_s = {{ dist = \"exponential\", mean = 1.0 \
        }}\nobject_size = {{ dist = \"fixed\", value = 1 }}\n"
    ));
    assert!(e.contains("traffic[0].sessions"), "{e}");
    let e = err(&format!(
        "{base}type = \"web\"\nsessions = 1\nobjects_per_page = {{ min = 5, max = 2 }}\ninter_page_s = {{ dist = \
            \"exponential\", mean = 1.0 }}\nobject_size = {{ dist = \"fixed\", value = 1 }}\n"
    ));
    assert!(e.contains("traffic[0].objects_per_page"), "{e}");
    let e = err(&format!("{base}type = \"udp\"\nrate_kbps = 16.0\n"));
    assert!(e.contains("traffic[0]") && e.contains("initial"), "{e}");
    let e = err(&format!(
        "{base}type = \"closed_loop\"\nsessions = 1\nsize = {{ dist = \"fixed\", value = 1 \
        }}\nthink_s = {{ dist = \"exponential\", mean = -1.0 }}\n"
    ));
    assert!(e.contains("traffic[0].think_s.mean"), "{e}");
    let e = err(&format!("{base}type = \"periodic\"\nsize = {{ dist = \"fixed\", value = 1 }}\nperiod_s = 0.0\n"));
    assert!(e.contains("traffic[0].period_s"), "{e}");
    let e = err(&format!(
        "{base}type = \"poisson\"\nrate_per_s = 1.0\nfrom = \"senders\"\nsize = {{ dist = \"fixed\", value = 1 }}\n"
    ));
    assert!(e.contains("traffic[0].to"), "{e}");
}

#[test]
fn closed_loop_sessions_draw_from_their_own_streams() {
    // The seed rule for closed loops: a session's sizes do not depend on when other
    // sessions' connections end, so two disciplines carry the same documents per session.
    let sc = |q: &str| {
        format!(
            "duration_s = 200.0\nseed = 9\n[topology]\ntype = \"dumbbell\"\npairs = 4\nbottleneck_queue = \
                {q}\n[[traffic]]\ntype = \"closed_loop\"\nname = \"hosts\"\nsessions = 4\nsize = {{ dist = \
                    \"pareto\", shape = 1.3, mean = 30.0 }}\nthink_s = {{ dist = \"exponential\", mean = 0.5 }}\n"
        )
    };
    let a = go(&sc(r#"{ type = "droptail", limit_pkts = 8 }"#));
    let b = go(&sc(r#"{ type = "red", limit_pkts = 60, min_th = 5.0, max_th = 30.0 }"#));
    let per = |o: &RunOutput| {
        let mut m: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for f in &o.flows {
            m.entry(f.src.to_string()).or_default().push(f.size_pkts.unwrap());
        }
        m
    };
    let (pa, pb) = (per(&a), per(&b));
    assert_eq!(pa.len(), 4);
    let mut differs = false;
    for (k, va) in &pa {
        let vb = &pb[k];
        let n = va.len().min(vb.len());
        assert!(n > 10);
        assert_eq!(va[..n], vb[..n], "session {k}: documents differ between disciplines");
        differs |= va.len() != vb.len();
    }
    // The disciplines did change the timing (otherwise the check above proves nothing).
    let fct = |o: &RunOutput| o.flows.iter().filter_map(|f| f.fct_s).sum::<f64>();
    assert!(differs || (fct(&a) - fct(&b)).abs() > 1e-6);
}
