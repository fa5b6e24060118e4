#!/usr/bin/env python3
"""Flow-by-flow comparison of Savanna and ns-3 on the same flows, from the runs that
``vs_ns3.py --sack --workdir DIR`` keeps.

A bucket's median FCT can differ between the two simulators because the same flows take
longer in one of them, or because the bucket's FCT distribution has a sparse stretch around
its median (flows that finish without a timeout and flows that take one form two modes),
where a few flows moving across move the median by a lot. This script tells the two apart:
for one scenario (congestion control, base scenario, load, seed) and one size bucket it
pairs each flow of Savanna's run with the same flow in ns-3's and prints

- the median of the per-flow ratio ns-3 / Savanna (1.0: the same flows take as long);
- the bucket's quantiles in each, and the share of flows done by a few times around the
  median (a sparse stretch shows as a flat CDF);
- per flow, the mean retransmissions, timeouts and fast retransmits in each, split by
  whether the flow took a timeout in either simulator;
- the flows split four ways by where they took a retransmission timeout (neither, both,
  ns-3 only, Savanna only) with each group's geometric-mean FCT ratio: when flows with the
  same timeout experience take as long in both, a bucket's difference is the share of
  flows that take a timeout, not the time each takes.

Usage:
    python3 benchmarks/ns3_paired.py DIR --cc cubic --base dumbbell-droptail --load 0.8
        [--seed 1] [--savanna B] [--bucket 101-1000] [--warmup 50]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def paired(workdir: Path, cc: str, base: str, load: float, seed: int, which: str, lo: int, hi: int, warmup: float):
    import pandas as pd

    tag = f"{cc}-{base}-{load}-{seed}"
    sv_path = workdir / f"{tag}-{which}" / "flows.parquet"
    ns_path = workdir / f"{tag}-ns3.csv"
    for p in (sv_path, ns_path):
        if not p.exists():
            raise SystemExit(f"ns3_paired: {p} does not exist (run vs_ns3.py --sack --workdir {workdir} first)")
    sv = pd.read_parquet(sv_path)
    ns = pd.read_csv(ns_path)
    m = sv.merge(ns, on="flow_id", suffixes=("_sv", "_ns"))
    m = m[
        (m["start_s_sv"] >= warmup)
        & (m["size_pkts_sv"] >= lo)
        & (m["size_pkts_sv"] <= hi)
        & m["fct_s_sv"].notna()
        & m["fct_s_ns"].notna()
    ].copy()
    m["ratio"] = m["fct_s_ns"] / m["fct_s_sv"]
    return m


def timeout_split(m) -> list[tuple[str, int, float]]:
    """(group, flows, geometric-mean FCT ratio ns-3 / Savanna) for the flows that took a
    retransmission timeout in neither simulator, in both, in ns-3 only and in Savanna only."""
    import numpy as np

    sv, ns = m["timeouts_sv"] > 0, m["timeouts_ns"] > 0
    out = []
    for name, sel in (
        ("no timeout in either", ~sv & ~ns),
        ("timeouts in both", sv & ns),
        ("a timeout in ns-3 only", ~sv & ns),
        ("a timeout in Savanna only", sv & ~ns),
    ):
        d = m[sel]
        g = float(np.exp(np.log(d["fct_s_ns"] / d["fct_s_sv"]).mean())) if len(d) else float("nan")
        out.append((name, len(d), g))
    return out


def report(m, lo: int, hi: int) -> list[str]:
    out = [f"{len(m)} flows of {lo}-{hi} packets finished in both"]
    if m.empty:
        return out
    out.append(f"per-flow FCT ratio ns-3 / Savanna: median {m['ratio'].median():.3f}, mean {m['ratio'].mean():.3f}")
    qs = [0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7]
    out.append("quantile  " + "  ".join(f"{q:>6.2f}" for q in qs))
    out.append("Savanna   " + "  ".join(f"{v:6.3f}" for v in m["fct_s_sv"].quantile(qs)))
    out.append("ns-3      " + "  ".join(f"{v:6.3f}" for v in m["fct_s_ns"].quantile(qs)))
    med = m["fct_s_sv"].median()
    grid = [round(med * f, 3) for f in (0.85, 0.95, 1.0, 1.05, 1.15, 1.25)]
    out.append("done by   " + "  ".join(f"{t:6.3f}" for t in grid))
    out.append("Savanna   " + "  ".join(f"{(m['fct_s_sv'] <= t).mean():6.3f}" for t in grid))
    out.append("ns-3      " + "  ".join(f"{(m['fct_s_ns'] <= t).mean():6.3f}" for t in grid))
    rto = (m["timeouts_sv"] > 0) | (m["timeouts_ns"] > 0)
    for name, d in (("all", m), ("no timeout in either", m[~rto]), ("a timeout in either", m[rto])):
        if d.empty:
            continue
        out.append(
            f"{name}: {len(d)} flows; median FCT {d['fct_s_sv'].median():.3f} / {d['fct_s_ns'].median():.3f} s; "
            f"retransmissions {d['retransmits_sv'].mean():.2f} / {d['retransmits_ns'].mean():.2f}; "
            f"timeouts {d['timeouts_sv'].mean():.2f} / {d['timeouts_ns'].mean():.2f}; "
            f"fast retransmits {d['fast_retransmits_sv'].mean():.2f} / {d['fast_retransmits_ns'].mean():.2f} "
            "(Savanna / ns-3, per flow)"
        )
    out.append(
        f"flows with a timeout: Savanna {(m['timeouts_sv'] > 0).mean():.3f}, ns-3 {(m['timeouts_ns'] > 0).mean():.3f}"
    )
    for name, n, g in timeout_split(m):
        out.append(f"{name}: {n} flows, geometric-mean FCT ratio ns-3 / Savanna {g:.3f}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workdir", type=Path)
    ap.add_argument("--cc", default="cubic")
    ap.add_argument("--base", default="dumbbell-droptail", help="scenario file stem")
    ap.add_argument("--load", type=float, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--savanna", default="B", choices=["A", "B"], help="which Savanna run (A: default timer)")
    ap.add_argument("--bucket", default="101-1000")
    ap.add_argument("--warmup", type=float, default=50.0)
    a = ap.parse_args(argv)
    try:
        lo, hi = (int(x) for x in a.bucket.split("-"))
    except ValueError:
        print(f"ns3_paired: --bucket must be LO-HI in packets, got {a.bucket!r}", file=sys.stderr)
        return 2
    m = paired(a.workdir, a.cc, a.base, a.load, a.seed, a.savanna, lo, hi, a.warmup)
    print("\n".join(report(m, lo, hi)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
