//! General graphs, the papers' named topologies and path policies (Matta & Guo 2000):
//! packets go where the drawing says, policies put flows on the path their rule names, the
//! threshold policy moves a flow after exactly N packets, and bad graphs are rejected with
//! the field named.

use savanna_core::api::{load, run, Format, RunOptions};
use savanna_core::metrics::{FlowRecord, RunOutput};
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

fn arrivals(o: &RunOutput, link: &str) -> u64 {
    o.summary.queues.iter().find(|q| q.name == link).unwrap_or_else(|| panic!("no link {link}")).arrivals
}

fn flow(o: &RunOutput, id: u64) -> &FlowRecord {
    &o.flows[id as usize]
}

const GRAPH: &str = r#"
duration_s = 20.0
[topology]
type = "graph"
hosts = ["h0", "h1", "h2"]
routers = ["a", "b", "c"]
links = [
  { between = ["h0", "a"], rate_mbps = 100.0, delay_ms = 1.0 },
  { between = ["a", "b"], rate_mbps = 10.0, delay_ms = 10.0 },
  { between = ["b", "h1"], rate_mbps = 100.0, delay_ms = 2.0 },
  { between = ["a", "c"], rate_mbps = 10.0, delay_ms = 20.0, reverse = { delay_ms = 5.0 } },
  { between = ["c", "h2"], rate_mbps = 100.0, delay_ms = 3.0 },
]
[[traffic]]
type = "flows"
flows = [ { start_s = 0.0, size_pkts = 50, src = "h0", dst = "h2" },
          { start_s = 0.0, size_pkts = 50, src = "h1", dst = "h0" } ]
"#;

#[test]
fn graph_routes_as_drawn() {
    let o = go(GRAPH);
    // h0 -> h2 goes a -> c and never touches b; its RTT uses each direction's own delay.
    assert!(arrivals(&o, "a->c") > 50);
    assert!(arrivals(&o, "c->a") > 0);
    let f0 = flow(&o, 0);
    assert!((f0.base_rtt_s - (0.001 + 0.020 + 0.003 + 0.003 + 0.005 + 0.001)).abs() < 1e-9, "{}", f0.base_rtt_s);
    // h1 -> h0 goes b -> a only.
    let f1 = flow(&o, 1);
    assert!((f1.base_rtt_s - 2.0 * (0.002 + 0.010 + 0.001)).abs() < 1e-9);
    assert!(arrivals(&o, "b->a") >= 50 && arrivals(&o, "a->b") > 0);
    assert_eq!(
        arrivals(&o, "b->h1") + arrivals(&o, "h1->b"),
        arrivals(&o, "a->b") + arrivals(&o, "b->a"),
        "only h1's flow crosses a-b"
    );
    assert!(o.flows.iter().all(|f| f.fct_s.is_some()));
}

#[test]
fn graph_input_errors_name_the_field() {
    let e = err(&GRAPH.replace(r#"{ between = ["c", "h2"]"#, r#"{ between = ["c", "h9"]"#));
    assert!(e.contains("topology.links[4].between[1]") && e.contains("'h9' is not a declared node"), "{e}");
    // Remove c-h2: h2 is cut off.
    let e = err(&GRAPH.replace(r#"  { between = ["c", "h2"], rate_mbps = 100.0, delay_ms = 3.0 },"#, ""));
    assert!(e.contains("topology") && e.contains("disconnected"), "{e}");
    let e = err(&GRAPH.replace(r#"rate_mbps = 10.0, delay_ms = 10.0"#, r#"rate_mbps = -1.0, delay_ms = 10.0"#));
    assert!(e.contains("topology.links[1].rate_mbps"), "{e}");
    let e = err(&GRAPH.replace(r#"routers = ["a", "b", "c"]"#, r#"routers = ["a", "b", "c", "a"]"#));
    assert!(e.contains("topology.routers[3]") && e.contains("declared twice"), "{e}");
    // A graph has no implicit host pairs: poisson traffic must say where it runs.
    let e = err(&format!(
        "{GRAPH}\n[[traffic]]\ntype = \"poisson\"\nrate_per_s = 1.0\nsize = {{ dist = \"fixed\", value = 3 }}\n"
    ));
    assert!(e.contains("traffic[1].from") && e.contains("hosts"), "{e}");
    let e = err(&format!(
        "{GRAPH}\n[[traffic]]\ntype = \"poisson\"\nrate_per_s = 1.0\nfrom = \"nobody\"\nto = \
        \"h1\"\nsize = {{ dist = \"fixed\", value = 3 }}\n"
    ));
    assert!(e.contains("traffic[1].from") && e.contains("'nobody'"), "{e}");
}

#[test]
fn chain_reference_flow_crosses_every_hop_and_cross_traffic_one() {
    let o = go(r#"
duration_s = 30.0
[topology]
type = "chain"
hops = 5
cross_flows = 2
[[traffic]]
type = "persistent"
name = "cross0"
from = "cross0_src"
to = "cross0_dst"
count = 2
[[traffic]]
type = "flows"
name = "ref"
flows = [ { start_s = 1.0, size_pkts = 30, src = "ref_src", dst = "ref_dst" } ]
"#);
    let r = o.flows.iter().find(|f| &*f.source == "ref").unwrap();
    // 25 ms access each side, five 1 ms hops.
    assert!((r.base_rtt_s - 2.0 * (0.025 + 0.005 + 0.025)).abs() < 1e-9, "{}", r.base_rtt_s);
    for i in 0..5 {
        assert!(arrivals(&o, &format!("r{i}->r{}", i + 1)) >= 30, "hop {i}");
    }
    // Cross flows of hop 0 load r0->r1 only: the other hops see the reference flow alone.
    assert!(arrivals(&o, "r0->r1") > 10 * arrivals(&o, "r1->r2"));
    for f in o.flows.iter().filter(|f| &*f.source == "cross0") {
        assert!(f.src.starts_with("x0_s") && f.dst.starts_with("x0_d"));
    }
}

#[test]
fn guo_matta_pools_reach_clients_through_their_own_bottleneck() {
    let o = go(r#"
duration_s = 20.0
[topology]
type = "guo_matta"
servers = 2
clients1 = 2
clients2 = 2
[[traffic]]
type = "flows"
flows = [ { start_s = 0.0, size_pkts = 40, src = "s0", dst = "c1_0" },
          { start_s = 0.0, size_pkts = 60, src = "s1", dst = "c2_1" } ]
"#);
    // Slide delays: 15 + 20 + 15 ms one way.
    assert!((flow(&o, 0).base_rtt_s - 0.100).abs() < 1e-9);
    let n1 = arrivals(&o, "n3->n1");
    let n2 = arrivals(&o, "n3->n2");
    assert!((40..60).contains(&n1) && n2 >= 60, "{n1} {n2}");
    assert!(arrivals(&o, "n0->n3") >= 100);
}

const DIAMOND: &str = r#"
duration_s = 60.0
[topology]
type = "diamond"
servers = 2
clients = 2
[[traffic]]
type = "flows"
flows = [ { start_s = 0.0, size_pkts = 10, src = "s0", dst = "c0" },
          { start_s = 0.5, size_pkts = 1000, src = "s1", dst = "c1" },
          { start_s = 1.0, size_pkts = 75, src = "s0", dst = "c1" },
          { start_s = 1.5, size_pkts = 76, src = "s1", dst = "c0" } ]
"#;

#[test]
fn size_based_policy_splits_by_true_size() {
    let o = go(&format!("{DIAMOND}\n[[path_policies]]\nnode = \"n4\"\npolicy = \"size_based\"\nthreshold_pkts = 75\n"));
    let paths: Vec<&str> = o.flows.iter().map(|f| &*f.path).collect();
    assert_eq!(paths, ["n5", "n7", "n5", "n7"]);
    assert!(o.flows.iter().all(|f| f.fct_s.is_some()));
    // Reverse traffic (ACKs to the servers) is not covered and takes the normal route.
    assert_eq!(arrivals(&o, "n5->n4") + arrivals(&o, "n7->n4"), arrivals(&o, "n4->n0"));
}

#[test]
fn threshold_policy_moves_a_flow_after_exactly_n_packets() {
    let one = DIAMOND.replace(
        r#"flows = [ { start_s = 0.0, size_pkts = 10, src = "s0", dst = "c0" },
          { start_s = 0.5, size_pkts = 1000, src = "s1", dst = "c1" },
          { start_s = 1.0, size_pkts = 75, src = "s0", dst = "c1" },
          { start_s = 1.5, size_pkts = 76, src = "s1", dst = "c0" } ]"#,
        r#"flows = [ { start_s = 0.0, size_pkts = 200, src = "s0", dst = "c0" } ]"#,
    );
    let o = go(&format!(
        "{one}\n[[path_policies]]\nnode = \"n4\"\npolicy = \"threshold\"\nthreshold_pkts = \
        32\nnext_hops = [\"n5\", \"n7\"]\n"
    ));
    assert_eq!(&*o.flows[0].path, "n5>n7");
    // Every packet of the flow towards the client crosses n4: the first 32 (SYN included)
    // on path 1, all later ones on path 2.
    assert_eq!(arrivals(&o, "n4->n5"), 32);
    assert!(arrivals(&o, "n4->n7") > 200 - 32);
    assert_eq!(o.flows[0].delivered_pkts, 200);
    // A short flow never leaves path 1.
    let o = go(&format!("{DIAMOND}\n[[path_policies]]\nnode = \"n4\"\npolicy = \"threshold\"\nthreshold_pkts = 32\n"));
    assert_eq!(&*o.flows[0].path, "n5");
    assert_eq!(&*o.flows[1].path, "n5>n7");
}

#[test]
fn load_balanced_policy_spreads_flows_evenly_and_keeps_each_on_one_path() {
    let mut toml = String::from(
        "duration_s = 200.0\nseed = 3\n[topology]\ntype = \"diamond\"\nservers = 4\nclients = 4\n[[traffic]]\ntype = \
            \"poisson\"\nrate_per_s = 2.0\nstop_s = 150.0\nfrom = \"servers\"\nto = \"clients\"\nsize = { dist = \
                \"fixed\", value = 5 }\n",
    );
    toml.push_str("[[path_policies]]\nnode = \"n4\"\npolicy = \"load_balanced\"\n");
    let o = go(&toml);
    let n = o.flows.len() as f64;
    let on5 = o.flows.iter().filter(|f| &*f.path == "n5").count() as f64;
    let on7 = o.flows.iter().filter(|f| &*f.path == "n7").count() as f64;
    assert_eq!(on5 + on7, n, "a flow switched paths or took none");
    // Binomial(n, 1/2): within 4 standard deviations.
    assert!((on5 - n / 2.0).abs() < 4.0 * (n / 4.0).sqrt(), "{on5} of {n}");
}

#[test]
fn policy_errors_name_the_field() {
    let e = err(&format!("{DIAMOND}\n[[path_policies]]\nnode = \"n0\"\npolicy = \"load_balanced\"\n"));
    assert!(e.contains("path_policies[0].node") && e.contains("only one path"), "{e}");
    let e = err(&format!("{DIAMOND}\n[[path_policies]]\nnode = \"n4\"\npolicy = \"size_based\"\n"));
    assert!(e.contains("path_policies[0].threshold_pkts"), "{e}");
    let e = err(&format!(
        "{DIAMOND}\n[[path_policies]]\nnode = \"n4\"\npolicy = \"threshold\"\nthreshold_pkts = \
        3\nnext_hops = [\"n5\", \"n6\"]\n"
    ));
    assert!(e.contains("path_policies[0].next_hops[1]") && e.contains("not a neighbour"), "{e}");
    let e = err(&format!("{DIAMOND}\n[[path_policies]]\nnode = \"n4\"\npolicy = \"sideways\"\n"));
    assert!(e.contains("path_policies[0].policy") || e.contains("path_policies[0]"), "{e}");
}
