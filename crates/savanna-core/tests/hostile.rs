//! Hostile input (issue 18): every time and rate is checked against what the integer
//! nanosecond clock and the run's budgets represent, ranges reject NaN and infinity and
//! unknown keys, large named topologies route in linear memory, and a shorter run keeps a
//! prefix. One test per rule; each case is a scenario that used to hang, abort, overflow
//! or run silently wrong, and must now be refused naming its field (or run correctly).

use savanna_core::api::{load, run, Format, RunOptions};
use savanna_core::Error;
use std::path::Path;

/// A small dumbbell run of `duration` s with `topo` keys, `tcp` keys and extra sections.
fn scenario(duration: f64, topo: &str, tcp: &str, rest: &str) -> String {
    format!(
        "duration_s = {duration}\nseed = 3\n[topology]\ntype = \"dumbbell\"\npairs = 2\n{topo}\n[tcp]\n{tcp}\n{rest}\n"
    )
}

/// One ten-packet flow: the workload of the "infinite loop at one instant" cases.
const ONE_FLOW: &str =
    "[[traffic]]\ntype = \"flows\"\nflows = [{ start_s = 0.0, size_pkts = 10, src = \"src0\", dst = \"dst0\" }]\n";

fn load_err(toml: &str, opts: &RunOptions) -> Option<(String, String)> {
    match load(toml, Format::Toml, Path::new("."), opts) {
        Ok(_) => None,
        Err(Error::Input { field, msg }) => Some((field, msg)),
        Err(e) => panic!("not an input error: {e}\n{toml}"),
    }
}

/// `toml` is refused, and the error names `field`.
fn refused(toml: &str, field: &str) {
    match load_err(toml, &RunOptions::default()) {
        None => panic!("accepted:\n{toml}"),
        Some((f, msg)) => assert_eq!(f, field, "wrong field ({msg}) for:\n{toml}"),
    }
}

#[test]
fn a_dumbbell_of_100000_pairs_validates_and_its_routes_fit() {
    // The full route table would take 160 GB (n^2 u32 for 200002 nodes) and abort.
    let t = scenario(1.0, "pairs = 100000", "", ONE_FLOW).replace("pairs = 2\n", "");
    let started = std::time::Instant::now();
    load(&t, Format::Toml, Path::new("."), &RunOptions::default()).expect("valid");
    assert!(started.elapsed().as_secs_f64() < 20.0, "validation took {:?}", started.elapsed());
}

#[test]
fn times_outside_the_clock_range_are_refused_naming_the_field() {
    for (tcp, field) in [
        ("ito_s = 1e-13", "tcp.ito_s"),
        ("ito_s = 2e10", "tcp.ito_s"),
        ("min_rto_s = 1e299\nmax_rto_s = 1e300", "tcp.min_rto_s"),
        ("max_rto_s = inf", "tcp.max_rto_s"),
        ("delack_timeout_s = nan", "tcp.delack_timeout_s"),
    ] {
        refused(&scenario(1.0, "", tcp, ONE_FLOW), field);
    }
    for (topo, field) in [
        ("access_delay_ms = 1e15", "topology.access_delay_ms"),
        ("access_delay_ms = 1e13", "topology.access_delay_ms"),
        ("access_delay_ms = [5.0, 1e300]", "topology.access_delay_ms[1]"),
        ("bottleneck_delay_ms = 1e13", "topology.bottleneck_delay_ms"),
    ] {
        refused(&scenario(1.0, topo, "", ONE_FLOW), field);
    }
    refused(&scenario(1e300, "", "", ONE_FLOW), "duration_s");
    refused(&scenario(1.0, "", "", &format!("{ONE_FLOW}[sampling]\ninterval_s = 1e-10")), "sampling.interval_s");
    refused(
        &scenario(1.0, "", "", &format!("{ONE_FLOW}[sampling]\ninterval_s = 0.1\ngoodput_interval_s = 5e-324")),
        "sampling.goodput_interval_s",
    );
    let cls = |k: &str| {
        format!(
            "{ONE_FLOW}[[classifiers]]\ntype = \"threshold\"\nnode = \"left\"\n{k}\n\
             [topology.bottleneck_queue]\ntype = \"rio\"\nlimit_pkts = 100\nmin_th_short = 10.0\nmax_th_short = 30.0\n\
             max_p_short = 0.05\nmin_th_long = 10.0\nmax_th_long = 40.0\nmax_p_long = 0.1\n"
        )
    };
    for k in ["t_u_s", "t_c_s"] {
        refused(&scenario(1.0, "", "", &cls(&format!("{k} = 1e-13"))), &format!("classifiers[0].{k}"));
    }
    let web = "[[traffic]]\ntype = \"web\"\nsessions = 1\ninter_page_s = { dist = \"exponential\", mean = 1e300 }\n\
               object_size = { dist = \"fixed\", value = 1 }\n";
    refused(&scenario(1.0, "", "", web), "traffic[0].inter_page_s");
}

#[test]
fn rates_outside_what_the_model_represents_are_refused() {
    refused(&scenario(1.0, "access_rate_mbps = 5e-324", "", ONE_FLOW), "topology.access_rate_mbps");
    refused(&scenario(1.0, "bottleneck_rate_mbps = 1e300", "", ONE_FLOW), "topology.bottleneck_rate_mbps");
    let udp = "[[traffic]]\ntype = \"udp\"\ninitial = 1\nrate_kbps = 1e300\n";
    refused(&scenario(1.0, "", "", udp), "traffic[0].rate_kbps");
}

#[test]
fn expected_counts_beyond_the_run_budgets_are_refused_naming_the_cause() {
    let poisson = |k: &str| format!("[[traffic]]\ntype = \"poisson\"\n{k}\n");
    refused(
        &scenario(1.0, "", "", &poisson("rate_per_s = 1e12\nsize = { dist = \"fixed\", value = 1 }")),
        "traffic[0].rate_per_s",
    );
    for size in ["{ dist = \"exponential\", mean = 1e-300 }", "{ dist = \"fixed\", value = 1e-9 }"] {
        refused(&scenario(1.0, "", "", &poisson(&format!("load = 0.5\nsize = {size}"))), "traffic[0].load");
    }
    refused(&scenario(1.0, "", "", &format!("{ONE_FLOW}[sampling]\ninterval_s = 1e-9")), "sampling.interval_s");
    let periodic = |p: &str| {
        format!("[[traffic]]\ntype = \"periodic\"\nperiod_s = {p}\nsize = {{ dist = \"fixed\", value = 1 }}\n")
    };
    refused(&scenario(1.0, "", "", &periodic("1e-9")), "traffic[0].period_s");
    refused(&scenario(1.0, "", "", &periodic("1e300")), "traffic[0].period_s");
    let udp = "[[traffic]]\ntype = \"udp\"\ninterarrival_s = { dist = \"exponential\", mean = 5e-324 }\n";
    refused(&scenario(1.0, "", "", udp), "traffic[0].interarrival_s");
    // Open-loop web pages nearly back to back (found by benchmarks/fuzz.py: 23 GB, then the
    // OOM killer): the pages' flows over the run are counted against the budget.
    let web = |gap: &str| {
        format!(
            "[[traffic]]\ntype = \"web\"\nsessions = 200\npages_per_session = 1900\ninter_page_s = {gap}\n\
             object_size = {{ dist = \"fixed\", value = 4 }}\n"
        )
    };
    refused(&scenario(1.0, "", "", &web("{ dist = \"exponential\", mean = 5.4e-229 }")), "traffic[0].inter_page_s");
    refused(&scenario(1.0, "", "", &web("{ dist = \"fixed\", value = 1e-12 }")), "traffic[0].inter_page_s");
    let ok = scenario(1.0, "", "", &web("{ dist = \"exponential\", mean = 9.5 }"));
    load(&ok, Format::Toml, Path::new("."), &RunOptions::default()).expect("valid");
    // The same blocks at sane values run.
    let ok = scenario(1.0, "", "", &periodic("0.25"));
    let sc = load(&ok, Format::Toml, Path::new("."), &RunOptions::default()).expect("valid");
    assert_eq!(run(&sc).expect("runs").flows.len(), 4);
}

#[test]
fn a_range_or_distribution_maximum_must_be_finite_and_at_least_its_minimum() {
    for max in ["nan", "inf"] {
        refused(
            &scenario(1.0, &format!("access_delay_ms = {{ min = 0.5, max = {max} }}"), "", ONE_FLOW),
            "topology.access_delay_ms.max",
        );
        for dist in ["uniform", "bounded_pareto"] {
            let shape = if dist == "uniform" { "" } else { ", shape = 1.2" };
            let t = format!(
                "[[traffic]]\ntype = \"poisson\"\nrate_per_s = 1.0\nsize = {{ dist = \"{dist}\", min = 1.0, max = \
                    {max}{shape} }}\n"
            );
            refused(&scenario(1.0, "", "", &t), "traffic[0].size.max");
        }
        let think = format!(
            "[[traffic]]\ntype = \"closed_loop\"\nsessions = 1\nsize = {{ dist = \"fixed\", value = 1 }}\n\
             think_s = {{ dist = \"uniform\", min = 0.1, max = {max} }}\n"
        );
        refused(&scenario(1.0, "", "", &think), "traffic[0].think_s.max");
    }
}

#[test]
fn min_max_tables_reject_unknown_keys() {
    let t = scenario(1.0, "access_delay_ms = { min = 1.0, max = 2.0, typo = 3.0 }", "", ONE_FLOW);
    let (field, _) = load_err(&t, &RunOptions::default()).expect("refused");
    assert!(field.starts_with("topology.access_delay_ms"), "{field}");
    let web = "[[traffic]]\ntype = \"web\"\nsessions = 1\ninter_page_s = { dist = \"fixed\", value = 1.0 }\n\
               object_size = { dist = \"fixed\", value = 1 }\nobjects_per_page = { min = 1, max = 2, typo = 3 }\n";
    let (field, msg) = load_err(&scenario(1.0, "", "", web), &RunOptions::default()).expect("refused");
    assert!(field.starts_with("traffic[0].objects_per_page"), "{field}: {msg}");
}

#[test]
fn a_run_shorter_than_a_blocks_start_keeps_an_empty_prefix_of_it() {
    let late = "[[traffic]]\ntype = \"periodic\"\nstart_s = 25.0\nsize = { dist = \"fixed\", value = 1 }\n\
                [[traffic]]\ntype = \"poisson\"\nstart_s = 25.0\nrate_per_s = 10.0\nsize = { dist = \"fixed\", value \
                    = 1 }\n";
    let t = scenario(30.0, "", "", &format!("{ONE_FLOW}{late}"));
    let opts = RunOptions { duration_s: Some(20.0), ..RunOptions::default() };
    let sc = load(&t, Format::Toml, Path::new("."), &opts).expect("a shorter duration keeps a prefix");
    let out = run(&sc).expect("runs");
    assert_eq!(out.flows.len(), 1, "only the flow list's flow starts before 20 s");
    // An explicit stop before the start is still an error.
    let bad = late.replace("start_s = 25.0\n", "start_s = 25.0\nstop_s = 20.0\n");
    refused(&scenario(30.0, "", "", &bad), "traffic[0].stop_s");
}

/// `toml` (a whole scenario) is refused naming `field`.
fn refused_whole(toml: &str, field: &str) {
    refused(toml, field)
}

#[test]
fn an_error_names_the_key_the_user_wrote() {
    // Named topologies expand to links; an error names the topology's own key, not the
    // link or queue it fed.
    for (typ, key, value) in [
        ("chain", "access_rate_mbps", "0"),
        ("chain", "rate_mbps", "1e300"),
        ("chain", "ref_access_delay_ms", "1e15"),
        ("guo_matta", "rate1_mbps", "0"),
        ("guo_matta", "server_delay_ms", "-1"),
        ("guo_matta", "client_delay_ms", "1e300"),
        ("guo_matta", "core_rate_mbps", "nan"),
        ("diamond", "access_rate_mbps", "0"),
        ("diamond", "path_delay_ms", "1e300"),
    ] {
        let t = format!("duration_s = 1\n[topology]\ntype = \"{typ}\"\n{key} = {value}\n");
        refused_whole(&t, &format!("topology.{key}"));
    }
    // A graph link's reverse direction inherits the forward keys unless it overrides them.
    let graph = |rev: &str| {
        format!(
            "duration_s = 1\n[topology]\ntype = \"graph\"\nhosts = [\"a\", \"b\"]\nrouters = [\"r\"]\nlinks = [\n\
             {{ between = [\"a\", \"r\"], rate_mbps = 10.0, delay_ms = 1.0 }},\n\
             {{ between = [\"r\", \"b\"], rate_mbps = 10.0, delay_ms = 1.0{rev} }},\n]\n"
        )
    };
    refused_whole(&graph(", reverse = { rate_mbps = 0.0 }"), "topology.links[1].reverse.rate_mbps");
    refused_whole(&graph(", loss = 2.0"), "topology.links[1].loss");
    // Parameters derived once the topology is built name the queue's key as a path.
    let derived = "a_long_from = { size = { dist = \"pareto\", shape = 1.0, min = 1.0 }, k = 5 }";
    let reddiff = format!(
        "{}\nbottleneck_queue = {{ type = \"reddiff\", limit_pkts = 100, min_th = 5.0, max_th = 15.0, \
         max_p = 0.1, w_q = 0.002, {derived} }}\n",
        scenario(1.0, "", "", "").split("[tcp]").next().unwrap()
    );
    let (field, msg) = load_err(&reddiff, &RunOptions::default()).expect("refused");
    assert!(field.starts_with("topology.bottleneck_queue.a_long_from"), "{field}: {msg}");
    // A packet smaller than the default request size is not blamed on `tcp.request_bytes`
    // (a key the user never wrote, used only by request/response traffic).
    let small = format!("packet_bytes = 200\n{}", scenario(1.0, "", "", ONE_FLOW));
    load(&small, Format::Toml, Path::new("."), &RunOptions::default()).expect("a 200-byte packet is valid");
    // Written explicitly, it is the user's key and it is named.
    refused(
        &format!("packet_bytes = 200\n{}", scenario(1.0, "", "request_bytes = 300", ONE_FLOW)),
        "tcp.request_bytes",
    );
}

#[test]
fn a_name_must_not_shadow_another_and_a_next_hop_is_listed_once() {
    let graph = |extra: &str| {
        format!(
            "duration_s = 1\n[topology]\ntype = \"graph\"\nhosts = [\"a\", \"b\"]\n\
             routers = [\"r\", \"s\", \"t\", \"u\"]\n\
             links = [\n{{ between = [\"a\", \"r\"], rate_mbps = 10.0, delay_ms = 1.0 }},\n\
             {{ between = [\"r\", \"s\"], rate_mbps = 10.0, delay_ms = 1.0 }},\n\
             {{ between = [\"r\", \"t\"], rate_mbps = 10.0, delay_ms = 1.0 }},\n\
             {{ between = [\"s\", \"u\"], rate_mbps = 10.0, delay_ms = 1.0 }},\n\
             {{ between = [\"t\", \"u\"], rate_mbps = 10.0, delay_ms = 1.0 }},\n\
             {{ between = [\"u\", \"b\"], rate_mbps = 10.0, delay_ms = 1.0 }},\n]\n{extra}"
        )
    };
    load(&graph(""), Format::Toml, Path::new("."), &RunOptions::default()).expect("valid");
    refused_whole(&graph("[topology.groups]\nb = [\"a\"]\n"), "topology.groups.b");
    refused_whole(&graph("[topology.groups]\nhosts = [\"a\"]\n"), "topology.groups.hosts");
    let pol = |hops: &str| format!("[[path_policies]]\npolicy = \"load_balanced\"\nnode = \"r\"\nnext_hops = {hops}\n");
    let ok = graph(&pol("[\"s\", \"t\"]"));
    if let Some((f, m)) = load_err(&ok, &RunOptions::default()) {
        panic!("a policy over two next hops is valid, got {f}: {m}");
    }
    refused_whole(&graph(&pol("[\"s\", \"s\"]")), "path_policies[0].next_hops[1]");
}

#[test]
fn flow_sizes_beyond_what_a_flow_carries_are_refused_naming_the_key() {
    let block = |lead: &str, size: &str| format!("[[traffic]]\ntype = \"poisson\"\n{lead}\nsize = {size}\n");
    for lead in ["load = 0.5", "rate_per_s = 1.0"] {
        for (size, key) in [
            ("{ dist = \"lognormal\", mu = 1e300, sigma = 1.0 }", "mu"),
            ("{ dist = \"lognormal\", mu = 1.0, sigma = 1e10 }", "sigma"),
            ("{ dist = \"fixed\", value = 1e13 }", "value"),
            ("{ dist = \"uniform\", min = 1.0, max = 1e13 }", "max"),
            ("{ dist = \"bounded_pareto\", shape = 1.2, min = 1.0, max = 1e19 }", "max"),
            ("{ dist = \"exponential\", mean = 1e13 }", "mean"),
            ("{ dist = \"empirical\", points = [[1.0, 0.0], [1e14, 1.0]] }", "points"),
        ] {
            refused(&scenario(1.0, "", "", &block(lead, size)), &format!("traffic[0].size.{key}"));
        }
    }
    // Within the cap they are fine, and a Pareto tail's draws are clipped to it.
    let ok = block("rate_per_s = 20.0", "{ dist = \"pareto\", shape = 0.5, min = 1e6 }");
    let sc = load(&scenario(0.5, "", "", &ok), Format::Toml, Path::new("."), &RunOptions::default()).expect("valid");
    let out = run(&sc).expect("runs");
    assert!(out.flows.iter().all(|f| f.size_pkts.is_none_or(|n| n as f64 <= savanna_core::spec::MAX_FLOW_PKTS)));
}

#[test]
fn a_run_over_its_budget_is_refused_and_a_larger_budget_admits_it() {
    // 10 Mb/s persistent traffic for 100 s: about 83,000 packets a second at most.
    let t = scenario(100.0, "", "", "[[traffic]]\ntype = \"persistent\"\ncount = 2\n");
    let tight = RunOptions { max_events: Some(1e6), ..RunOptions::default() };
    let (field, msg) = load_err(&t, &tight).expect("refused by the event budget");
    assert_eq!(field, "duration_s");
    assert!(msg.contains("budget of 1.00e6") && msg.contains("--max-events"), "{msg}");
    let est: f64 = msg.split("about ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(est > 1e6 && est < 1e9, "estimate {est}");
    let enough = RunOptions { max_events: Some(est * 1.01), ..RunOptions::default() };
    assert!(load_err(&t, &enough).is_none(), "a budget above the estimate admits the run");
    // Memory: the sampled rows of a long, finely sampled run.
    let sampled = scenario(1e4, "", "", &format!("{ONE_FLOW}[sampling]\ninterval_s = 0.01"));
    let small = RunOptions { max_memory_gb: Some(0.1), ..RunOptions::default() };
    let (field, msg) = load_err(&sampled, &small).expect("refused by the memory budget");
    assert!(field == "duration_s" && msg.contains("--max-memory-gb"), "{field}: {msg}");
    assert!(load_err(&sampled, &RunOptions { max_memory_gb: Some(100.0), ..RunOptions::default() }).is_none());
    // A budget must be a positive number.
    assert_eq!(
        load_err(&t, &RunOptions { max_events: Some(f64::NAN), ..RunOptions::default() }).unwrap().0,
        "--max-events"
    );
    // A finite workload is estimated by what it offers, not by the links over a long run.
    let long = scenario(1e7, "", "", ONE_FLOW);
    assert!(load_err(&long, &RunOptions { max_events: Some(1e4), ..RunOptions::default() }).is_none());
}

#[test]
fn a_cancelled_run_stops_and_writes_nothing() {
    let t = scenario(100.0, "", "", "[[traffic]]\ntype = \"persistent\"\ncount = 2\n");
    let cancel = savanna_core::error::Cancel::new();
    cancel.set();
    let opts = RunOptions { cancel, ..RunOptions::default() };
    let dir = std::env::temp_dir().join(format!("savanna-cancel-{}", std::process::id()));
    let out = dir.join("out");
    let started = std::time::Instant::now();
    let r = savanna_core::api::run_to_dir(&t, Format::Toml, Path::new("."), &out, &opts);
    assert!(matches!(r, Err(Error::Interrupted)), "{r:?}");
    assert!(started.elapsed().as_secs_f64() < 5.0);
    assert!(!out.exists(), "a cancelled run leaves no output directory");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn deeply_nested_input_is_one_input_error() {
    for text in [
        format!("x = {}{}\n", "[".repeat(1000), "]".repeat(1000)),
        format!("x = {}1{}\n", "{a = ".repeat(1000), "}".repeat(1000)),
    ] {
        let e = load(&text, Format::Toml, Path::new("."), &RunOptions::default()).unwrap_err();
        assert!(e.is_input(), "{e}");
    }
    let json = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
    let e = load(&json, Format::Json, Path::new("."), &RunOptions::default()).unwrap_err();
    assert!(e.is_input(), "{e}");
}
