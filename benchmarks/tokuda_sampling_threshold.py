#!/usr/bin/env python3
"""Tokuda, Hasegawa & Murata 2002, Fig. 6's sampling-PRQ under two readings of section
3.1's "When the inequality C_i >= K/T is satisfied, the connection i is detected as a
long-lived TCP connection": the reproduction's C_i >= K/I (K = 7, I = 3: 3 sampled
packets) and the text as printed, C_i >= K/T (T = 0.5 s: 14 sampled packets; set on every
sampling method, sampling-RED's K = 17 included). Savanna only (ns-2 has no sampling
classifier). Scenario 2 with --hosts hosts; prints per method the mean throughput of
short-lived (at most 7 packets) and long-lived documents, the unfairness and the link
utilisation, and per seed sampling-PRQ's long-lived and short-lived documents against the
other eight methods' mean (the claims fig6-sprq-long and fig6-sprq-short).

Usage: python3 benchmarks/tokuda_sampling_threshold.py [--hosts 500] [--seeds 2]
       [--duration 500] [--workers 2] [--out DIR]   (runs are kept in DIR and reused)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=500)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--duration", type=float, default=500.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("/tmp/savanna-tokuda-sampling-threshold"))
    a = ap.parse_args()
    import pandas as pd
    from savanna.reproduce import tokuda_2002 as tk
    from savanna.reproduce.common import Context, seeds

    p = tk.plan(False)
    pd.set_option("display.width", 200)
    for label, thr in (("C_i >= K/I (the reproduction's)", None), ("C_i >= K/T = 14", 14)):
        ctx = Context(key="tokuda-sampling", out_dir=a.out / str(thr), quick=False, workers=a.workers, progress=False)
        jobs = []
        for m in tk.METHODS:
            for r, seed in enumerate(seeds(a.seeds)):
                sc = tk.fig6_scenario(m, seed, a.duration, a.hosts)
                for c in sc.get("classifiers", []):
                    if thr is not None and c["type"] == "sampling":
                        c["threshold_samples"] = thr
                jobs.append(ctx.job("fig06", sc, {"method": m, "rep": r + 1}))
        b = ctx.run("fig06", jobs)
        ctx.settle()
        res = tk._fig06_results(b, p)
        fr = res.fairness
        print(f"== {label}, {a.hosts} hosts, {a.seeds} seed(s), {a.duration:g} s")
        print(fr.groupby("method")[["short", "long", "unfair"]].mean().join(res.util.groupby("method")["util"].mean()))
        others = [m for m in tk.NINE if m != "sampling-PRQ"]
        for col in ("long", "short"):
            vals = []
            for r in sorted(fr["rep"].unique()):
                f = fr[fr["rep"] == r].set_index("method")
                ref = float(f.loc[others, col].mean())
                vals.append(round(100.0 * (float(f.loc["sampling-PRQ", col]) - ref) / ref, 1))
            print(f"sampling-PRQ {col}-lived against the other eight, per seed (%): {vals}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
