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
