#!/usr/bin/env python3
"""Speed and memory benchmark of the simulator core (not a test: it prints figures).

Runs ``scenarios/dumbbell-droptail.toml`` (500 s simulated) with the native runner
``savanna-native`` (the Rust core alone) and with the ``savanna`` command (Python front end
plus the same core), several times each, and prints wall seconds, packets forwarded per wall
second, events per second and peak resident memory (the operating system's accounting, as
``/usr/bin/time`` reports it). The ns-3 side-by-side
comparison, measured in one run, is ``benchmarks/vs_ns3.py`` (``benchmarks/ns3/``).

Usage: python3 benchmarks/bench_core.py [--repeat N] [--scenario PATH] [--no-build]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import native

ROOT = Path(__file__).resolve().parent.parent
SAVANNA = ROOT / ".venv" / "bin" / "savanna"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scenario", default=str(ROOT / "scenarios" / "dumbbell-droptail.toml"))
    ap.add_argument("--no-build", action="store_true", help="do not run cargo build first")
    args = ap.parse_args()

    NATIVE, kind = native.existing() if args.no_build else native.build()
    print(f"core binary: {native.describe(kind)}")
    tmp = Path(tempfile.mkdtemp(prefix="savanna-bench-"))
    try:
        rows = []
        front_ends = [("native (Rust core)", [str(NATIVE)])]
        if SAVANNA.exists():
            front_ends.append(("savanna run (Python CLI)", [str(SAVANNA), "run"]))
        for label, base in front_ends:
            walls, rss = [], []
            summary = None
            for i in range(args.repeat):
                out = tmp / f"{len(rows)}-{i}"
                cmd = base + [args.scenario, "--out", str(out), "--quiet"]
                w, m = native.run_measured(cmd)
                walls.append(w)
                rss.append(m)
                summary = json.loads((out / "summary.json").read_text())
            med = statistics.median(walls)
            rows.append((label, med, min(walls), max(rss), summary))
        s = rows[0][4]
        print(f"scenario: {args.scenario}")
        print(
            f"  simulated {s['sim_seconds']:.0f} s, {s['events']:,} events, "
            f"{s['packets_forwarded']:,} packets forwarded, "
            f"{s['flows_started']:,} flows ({s['flows_finished']:,} finished)"
        )
        print(f"  repeats: {args.repeat} (median wall time reported)\n")
        print(
            f"{'front end':28} {'wall s':>8} {'min s':>8} {'core s':>8} {'Mpkt/s':>8} {'Mevents/s':>10} {'peak MiB':>9}"
        )
        for label, med, lo, rss_mib, summ in rows:
            core = summ["wall_seconds"]
            print(
                f"{label:28} {med:8.3f} {lo:8.3f} {core:8.3f} {summ['packets_forwarded'] / med / 1e6:8.2f} "
                f"{summ['events'] / med / 1e6:10.2f} {rss_mib:9.1f}"
            )
        print("\nAgainst ns-3: benchmarks/vs_ns3.py measures both simulators in the same run.")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
