#!/usr/bin/env python3
"""How the core's cost scales (issue 21, target 4): a benchmark that prints two tables.

1. Cost per packet forwarded from 10 Mb/s to 10 Gb/s: the reference dumbbell
   (``scenarios/dumbbell-droptail.toml``: 20 pairs, load 0.8, Pareto sizes) with the
   bottleneck at each rate, the access links 10 times faster and the bottleneck buffer
   scaled with the rate (8 packets at 10 Mb/s, a constant 9.6 ms of queueing); 100 s
   simulated unless ``--durations`` says otherwise (one per rate). Flat means the CPU time
   per packet forwarded does not grow with the rate.
2. Peak memory against flows open at once: the 1 Gb/s dumbbell run for longer and longer
   (``--memory-durations``): flows started grow with the duration, flows open at once
   (Little's law: the sum of flow lifetimes over the duration, from flows.parquet; and the
   most open at any instant) do not; the peak resident set must follow the latter.
3. Peak memory against simulated time: the reference dumbbell as shipped (10 Mb/s, queue
   sampling and goodput windows on) for 100, 1000 and 10000 s (``--time-durations``): the
   time series go to their files as they are taken, so the peak must stay flat.

Each run is ``savanna-native`` (the Rust core alone, ``benchmarks/native.py``), measured
with ``/usr/bin/time`` (CPU = user + system, peak resident set). CPU time, not wall time, is
the cost: the machine may be shared (the load average is printed).

Usage: python3 benchmarks/bench_scaling.py [--rates 10,100,1000,10000] [--durations 100,100,100,100]
    [--memory-durations 5,10,20,40] [--time-durations 100,1000,10000] [--no-build | --binary PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import native

ROOT = Path(__file__).resolve().parent.parent

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib


def scenario(rate_mbps: float | None, duration: float) -> dict:
    """The reference dumbbell at `rate_mbps` (None: as shipped) for `duration` seconds."""
    sc = tomllib.loads((ROOT / "scenarios" / "dumbbell-droptail.toml").read_text())
    sc["duration_s"] = duration
    if rate_mbps is None:
        return sc
    topo = sc["topology"]
    scale = rate_mbps / topo["bottleneck_rate_mbps"]
    topo["bottleneck_rate_mbps"] = rate_mbps
    topo["access_rate_mbps"] = topo["access_rate_mbps"] * scale
    topo["bottleneck_queue"]["limit_pkts"] = max(1, round(topo["bottleneck_queue"]["limit_pkts"] * scale))
    topo["access_queue"]["limit_pkts"] = max(topo["access_queue"]["limit_pkts"], round(1000 * scale))
    sc["duration_s"] = duration
    return sc


def run(binary: Path, sc: dict, tmp: Path, tag: str) -> dict:
    path = tmp / f"{tag}.json"
    path.write_text(json.dumps(sc))
    out = tmp / tag
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%U %S %M", str(binary), str(path), "--out", str(out), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{tag}: savanna-native failed\n{proc.stderr[-3000:]}")
    user, system, rss_kb = proc.stderr.strip().splitlines()[-1].split()
    s = json.loads((out / "summary.json").read_text())
    import pyarrow.parquet as pq

    flows = pq.read_table(out / "flows.parquet", columns=["start_s", "end_s"]).to_pydict()
    duration = s["sim_seconds"]
    ends = [min(e, duration) if e is not None else duration for e in flows["end_s"]]
    lived = sum(e - st for st, e in zip(flows["start_s"], ends))
    # Most flows open at one instant: +1 at each start, -1 at each end (ends first on ties).
    events = sorted([(st, 1) for st in flows["start_s"]] + [(e, -1) for e in ends])
    open_now = max_open = 0
    for _, d in events:
        open_now += d
        max_open = max(max_open, open_now)
    shutil.rmtree(out, ignore_errors=True)
    return {
        "cpu": float(user) + float(system),
        "rss_mib": int(rss_kb) / 1024.0,
        "packets": s["packets_forwarded"],
        "events": s["events"],
        "flows": s["flows_started"],
        "open": lived / duration,  # mean flows open at once (Little's law)
        "max_open": max_open,
        "sim": duration,
    }


def memory_table(binary: Path, tmp: Path, rate_mbps: float | None, durations: list[float]) -> None:
    print(
        f"| {'sim s':>6} | {'flows started':>13} | {'open (mean)':>11} | {'open (max)':>10} | "
        f"{'peak MiB':>8} | {'CPU s':>7} |"
    )
    print("|" + "---|" * 6)
    for dur in durations:
        r = run(binary, scenario(rate_mbps, dur), tmp, f"mem-{rate_mbps}-{dur:g}")
        print(
            f"| {dur:6g} | {r['flows']:13,} | {r['open']:11.1f} | {r['max_open']:10,} | {r['rss_mib']:8.1f} | "
            f"{r['cpu']:7.2f} |",
            flush=True,
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", default="10,100,1000,10000", help="bottleneck rates, Mb/s")
    ap.add_argument("--durations", default="", help="simulated seconds per rate (default 100 each)")
    ap.add_argument("--memory-durations", default="5,10,20,40", help="durations of the 1 Gb/s memory runs, s")
    ap.add_argument(
        "--time-durations", default="100,1000,10000", help="durations of the reference dumbbell memory runs, s"
    )
    ap.add_argument("--no-build", action="store_true", help="do not run cargo build first")
    ap.add_argument("--binary", type=Path, help="measure this savanna-native instead (e.g. an older build)")
    args = ap.parse_args()
    rates = [float(x) for x in args.rates.split(",") if x]
    durations = [float(x) for x in args.durations.split(",")] if args.durations else [100.0] * len(rates)
    if len(durations) != len(rates):
        raise SystemExit("--durations: one per rate")
    if args.binary:
        binary = args.binary
        print(f"core binary: {binary}")
    else:
        binary, kind = native.existing() if args.no_build else native.build()
        print(f"core binary: {native.describe(kind)}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    tmp = Path(tempfile.mkdtemp(prefix="savanna-scaling-"))
    try:
        if rates:
            print("Cost per packet forwarded (dumbbell, load 0.8, buffer and access links scaled with the rate)\n")
            print(
                f"| {'bottleneck':>10} | {'sim s':>6} | {'packets fwd':>12} | {'events/pkt':>10} | {'CPU s':>7} | "
                f"{'CPU ns/pkt':>10} | {'flows':>9} | {'open (mean)':>11} | {'peak MiB':>8} |"
            )
            print("|" + "---|" * 9)
            for rate, dur in zip(rates, durations):
                r = run(binary, scenario(rate, dur), tmp, f"rate-{rate:g}")
                label = f"{rate / 1000:g} Gb/s" if rate >= 1000 else f"{rate:g} Mb/s"
                print(
                    f"| {label:>10} | {dur:6g} | {r['packets']:12,} | {r['events'] / r['packets']:10.2f} | "
                    f"{r['cpu']:7.2f} | {1e9 * r['cpu'] / r['packets']:10.0f} | {r['flows']:9,} | {r['open']:11.1f} | "
                    f"{r['rss_mib']:8.1f} |",
                    flush=True,
                )
        mem = [float(x) for x in args.memory_durations.split(",") if x]
        if mem:
            print("\nPeak memory against flows started and flows open at once (1 Gb/s dumbbell)\n")
            memory_table(binary, tmp, 1000.0, mem)
        long = [float(x) for x in args.time_durations.split(",") if x]
        if long:
            print("\nPeak memory against simulated time (reference dumbbell, 10 Mb/s, sampling on)\n")
            memory_table(binary, tmp, None, long)
        print(
            "\nCPU = user + system time of the whole savanna-native process (parsing, the run, "
            "writing Parquet); open (mean) = sum of flow lifetimes / simulated time."
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
