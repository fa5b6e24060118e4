//! `savanna-router`: the userspace router of `savanna emulate` (see router.rs) and the
//! scenario resolver the Python orchestrator asks for hosts, links and flows (plan.rs).
//!
//! `savanna-router plan SCENARIO [--seed N] [--duration S]` prints the plan as JSON.
//! `savanna-router run SCENARIO --report FILE [--seed N] [--duration S] [--prefix P]
//! [--spin-us U] [--rt PRIO] [--capture FILE] [--base-dir D] [--format toml|json]` opens
//! one TUN device per host (P0, P1, ...), prints `{"tuns": [...]}`, waits for a `go` line on stdin, prints
//! `{"t0_ns": T}` (CLOCK_MONOTONIC), routes until the duration, a `stop` line, EOF on stdin
//! or a signal, then writes its report to FILE.
//! Bad input: one line `error: FIELD: message` on stderr, exit 2.

mod capture;
mod plan;
mod router;
mod sys;

use std::io::{BufRead, Write};
use std::path::Path;

use savanna_core::api::{self, Format, RunOptions};
use savanna_core::scenario::resolve;
use savanna_core::Error;

fn fail(e: &Error) -> ! {
    eprintln!("error: {e}");
    std::process::exit(if e.is_input() { 2 } else { 1 });
}

fn parse<T: std::str::FromStr>(v: &str, what: &str) -> T {
    v.parse().unwrap_or_else(|_| fail(&Error::input(what, format!("not a valid value: '{v}'"))))
}

fn usage() -> ! {
    eprintln!(
        "usage: savanna-router plan|run SCENARIO [--seed N] [--duration S] [--report FILE] [--prefix P] [--spin-us U]"
    );
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        usage();
    }
    let (cmd, path) = (args[1].as_str(), Path::new(&args[2]));
    let mut opts = RunOptions::default();
    let (mut report, mut prefix, mut spin_us) = (None, "svh".to_string(), 0u64);
    let (mut base, mut fmt, mut rt, mut capture) = (None, None, 0i32, None);
    let mut i = 3;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_else(|| usage());
        match args[i].as_str() {
            "--seed" => opts.seed = Some(parse(&v, "--seed")),
            "--duration" => opts.duration_s = Some(parse(&v, "--duration")),
            "--report" => report = Some(v),
            "--prefix" => prefix = v,
            "--base-dir" => base = Some(std::path::PathBuf::from(v)),
            "--format" => fmt = Some(v),
            "--rt" => rt = parse(&v, "--rt"),
            "--capture" => capture = Some(v),
            "--spin-us" => spin_us = parse(&v, "--spin-us"),
            _ => usage(),
        }
        i += 2;
    }
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| fail(&Error::io(path.display().to_string(), e)));
    let json = fmt.map_or(path.extension().is_some_and(|e| e == "json"), |f| f == "json");
    let format = if json { Format::Json } else { Format::Toml };
    let base = base.unwrap_or_else(|| path.parent().unwrap_or(Path::new(".")).to_path_buf());
    let base = base.as_path();
    let sc = api::load(&text, format, base, &opts).unwrap_or_else(|e| fail(&e));
    let mut plan = resolve(&sc).unwrap_or_else(|e| fail(&e));
    plan::check_supported(&sc, &plan).unwrap_or_else(|e| fail(&e));
    match cmd {
        "plan" => println!("{}", plan::to_json(&sc, &mut plan).unwrap_or_else(|e| fail(&e))),
        "run" => {
            let report = report.unwrap_or_else(|| usage());
            sys::catch_signals();
            sys::precise_timers();
            let realtime = rt > 0 && sys::realtime(rt);
            let n = plan::host_nodes(&plan).len();
            let mut fds = Vec::with_capacity(n);
            let mut names = Vec::with_capacity(n);
            for k in 0..n {
                let name = format!("{prefix}{k}");
                match sys::open_tun(&name) {
                    Ok(fd) => fds.push(fd),
                    Err(e) => fail(&Error::input(
                        "tun",
                        format!("cannot open TUN device {name}: {e} (needs root and /dev/net/tun)"),
                    )),
                }
                names.push(name);
            }
            let duration = plan.duration_ns;
            let mut r = router::Router::new(plan, fds);
            if let Some(path) = &capture {
                match capture::Capture::create(path) {
                    Ok(c) => r.set_capture(c),
                    Err(e) => fail(&Error::io(path.clone(), e)),
                }
            }
            println!("{}", serde_json::json!({ "tuns": names }));
            std::io::stdout().flush().ok();
            let mut line = String::new();
            if std::io::stdin().lock().read_line(&mut line).is_err() || line.trim() != "go" {
                std::process::exit(1);
            }
            let mut out = r.run_with(duration, spin_us * 1000, |t0| {
                println!("{}", serde_json::json!({ "t0_ns": t0 }));
                std::io::stdout().flush().ok();
            });
            out["accuracy"]["realtime_priority"] = serde_json::json!(if realtime { Some(rt) } else { None });
            let tmp = format!("{report}.tmp");
            let text = serde_json::to_string(&out).expect("report serialises");
            if let Err(e) = std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, &report)) {
                fail(&Error::io(report, e));
            }
            let acc = &out["accuracy"];
            eprintln!(
                "savanna-router: bottleneck {} achieved {:.4} of configured rate; delivery lateness p50 {} us, p99 {} \
                    us; CPU {:.1}%",
                acc["bottleneck"].as_str().unwrap_or(""),
                acc["achieved_over_configured"].as_f64().unwrap_or(f64::NAN),
                acc["delivery_lateness"]["p50_us"],
                acc["delivery_lateness"]["p99_us"],
                acc["cpu_fraction"].as_f64().unwrap_or(0.0) * 100.0
            );
        }
        _ => usage(),
    }
}
