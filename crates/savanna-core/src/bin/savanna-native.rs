//! `savanna-native SCENARIO.toml --out DIR [--seed N] [--duration S]`: the simulator
//! without Python, for benchmarks (peak memory and start-up cost of the core alone) and
//! for environments without the Python package. Same files, same exit codes (2 on bad
//! input) as `savanna run`.

use std::path::Path;
use std::process::ExitCode;

use savanna_core::api::{run_to_dir, Format, RunOptions};

fn usage() -> ExitCode {
    eprintln!("usage: savanna-native SCENARIO.(toml|json) --out DIR [--seed N] [--duration S] [--quiet]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut scenario = None;
    let mut out = None;
    let mut opts = RunOptions::default();
    let mut quiet = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--out" => {
                i += 1;
                out = args.get(i).cloned();
            }
            "--seed" => {
                i += 1;
                match args.get(i).and_then(|s| s.parse().ok()) {
                    Some(s) => opts.seed = Some(s),
                    None => {
                        eprintln!("savanna-native: error: --seed: expected a whole number >= 0");
                        return ExitCode::from(2);
                    }
                }
            }
            "--duration" => {
                i += 1;
                match args.get(i).and_then(|s| s.parse().ok()) {
                    Some(s) => opts.duration_s = Some(s),
                    None => {
                        eprintln!("savanna-native: error: --duration: expected a number of seconds");
                        return ExitCode::from(2);
                    }
                }
            }
            "--quiet" => quiet = true,
            "-h" | "--help" => {
                usage();
                return ExitCode::SUCCESS;
            }
            a if scenario.is_none() && !a.starts_with("--") => scenario = Some(a.to_string()),
            _ => return usage(),
        }
        i += 1;
    }
    let (Some(scenario), Some(out)) = (scenario, out) else { return usage() };
    let path = Path::new(&scenario);
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("savanna-native: error: cannot read scenario '{scenario}': {e}");
            return ExitCode::from(2);
        }
    };
    let format = if scenario.ends_with(".json") { Format::Json } else { Format::Toml };
    let base = path.parent().unwrap_or(Path::new("."));
    match run_to_dir(&text, format, base, Path::new(&out), &opts) {
        Ok(s) => {
            if !quiet {
                println!(
                    "{}: {:.1} s simulated in {:.3} s wall, {} events, {} packets forwarded, {}/{} flows finished",
                    scenario,
                    s.sim_seconds,
                    s.wall_seconds,
                    s.events,
                    s.packets_forwarded,
                    s.flows_finished,
                    s.flows_started
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("savanna-native: error: {e}");
            ExitCode::from(if e.is_input() { 2 } else { 1 })
        }
    }
}
