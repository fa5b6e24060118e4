#!/usr/bin/env python3
"""Guo & Matta 2001, Exp. 2 (Fig. 11) under the two readings of Table III's "ecn_on,
gentle_on": what an ECN-capable packet meets once the average passes max_th. Savanna only
(ns-2.35's RIO is not the paper's, docs/ns2.md 3d). RED and RIO-PS as the reproduction runs
them (`mark_p` = max_p: mark below max_th, drop in the gentle region, ns-2's RED since
red.cc 1.57 of 2001/06/15) and with `mark_p = 1` (marked throughout the gentle region: RED
before that revision, ns-2.1b7's RIO for In packets). Prints, per seed and on average, the
Fig. 11 claims (pool-1 10-packet foreground connections: mean time reduction and share
taking 3 s or more, RIO-PS against RED; pool-1 web objects' mean response time reduction;
pool-2 1000-packet connections) and the bottlenecks' drops and marks after the warm-up.

Usage: python3 benchmarks/gm_exp2_ecn_rule.py [--seeds 5] [--duration 4000] [--warmup 2000]
       [--out DIR]   (runs are kept in DIR and reused; 20 runs of about 30 CPU-seconds)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))


def summary(b, red: str, rio: str, warm: float):
    """Per seed: the Fig. 11 claims of RIO-PS (`rio`) against RED (`red`); and drops, marks."""
    import numpy as np
    import pandas as pd
    from savanna.reproduce import guo_matta_2001 as gm

    fg = b.query("qdisc, rep, source, start_s, fct_s", where=f"tag = 'foreground' AND start_s >= {warm}")
    rows = []
    for r in sorted(fg["rep"].unique()):
        v = {}
        for d in (red, rio):
            g = fg[(fg["qdisc"] == d) & (fg["rep"] == r)]
            sh, lg = g[g["source"] == "fg-short"]["fct_s"], g[g["source"] == "fg-long"]["fct_s"]
            v[d] = (float(sh.mean()), float(lg.mean()), 100.0 * float((sh.fillna(np.inf) >= 3.0).mean()))
        rows.append(
            dict(
                rep=int(r),
                short_time=gm.reduction(v[red][0], v[rio][0]),
                short_ito=v[red][2] - v[rio][2],
                long_time=gm.reduction(v[red][1], v[rio][1]),
                t_red=v[red][0],
                t_rio=v[rio][0],
                ito_red=v[red][2],
                ito_rio=v[rio][2],
            )
        )
    w = b.sql(f"""
        WITH f AS (SELECT qdisc, rep, flow_id, fct_s FROM flows WHERE {{runs}} AND source = 'web1'
                   AND start_s >= {warm} AND qdisc IN ('{red}', '{rio}')),
             ok AS (SELECT rep, flow_id FROM f WHERE fct_s IS NOT NULL GROUP BY rep, flow_id HAVING count(*) = 2)
        SELECT qdisc, rep, sum(fct_s) / count(*) AS t FROM f JOIN ok USING (rep, flow_id) GROUP BY qdisc, rep""")
    m = w.pivot(index="rep", columns="qdisc", values="t")
    out = pd.DataFrame(rows).set_index("rep")
    out["web1"] = [gm.reduction(m.loc[r, red], m.loc[r, rio]) for r in out.index]
    q = b.sql(f"""SELECT qdisc, sum(drops_none + drops_short + drops_long) AS drops,
        sum(marks_none + marks_short + marks_long) AS marks,
        sum(departures_none + departures_short + departures_long) AS departures FROM queues
        WHERE {{runs}} AND t_s >= {warm} AND qdisc IN ('{red}', '{rio}') GROUP BY qdisc""")
    return out, q


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=4000.0)
    ap.add_argument("--warmup", type=float, default=2000.0)
    ap.add_argument("--out", type=Path, default=Path("/tmp/savanna-gm-exp2-ecn"))
    a = ap.parse_args()
    import pandas as pd
    from savanna.report import judge
    from savanna.reproduce import guo_matta_2001 as gm
    from savanna.reproduce.common import Context, load_scenario, seeds

    ctx = Context(key="gm-exp2-ecn", out_dir=a.out, quick=False, workers=2, progress=False)
    base = load_scenario(gm.SC_EXP2)
    bdp = gm.bdp_pkts(base["topology"]["rate1_mbps"], base["packet_bytes"])
    jobs = []
    for s in (gm.RED, gm.RIO):
        for r, seed in enumerate(seeds(a.seeds)):
            for suffix, mark_p in (("", None), ("-mark1", 1.0)):
                sc = gm.with_scheme(gm._seeded(base, seed, a.duration), s, bdp)
                if mark_p is not None:
                    sc["topology"]["bottleneck_queue"]["mark_p"] = mark_p
                jobs.append(ctx.job("exp2", sc, {"qdisc": s + suffix, "rep": r + 1}))
    b = ctx.run("exp2", jobs)
    ctx.settle()
    specs = {c.id: c for c in gm.CLAIMS}
    cols = {"short_time": "fig11-short-time", "short_ito": "fig11-short-ito", "web1": "fig11-web1"}
    cols["long_time"] = "fig11-long-time"
    pd.set_option("display.width", 200)
    for label, suffix in (("mark_p = max_p (the reproduction's)", ""), ("mark_p = 1", "-mark1")):
        o, q = summary(b, gm.RED + suffix, gm.RIO + suffix, a.warmup)
        print(f"== {label}\n{o.round(2)}\n{q}")
        for col, cid in cols.items():
            j = judge(specs[cid], list(o[col]))
            print(f"{cid}: {j.mean:.2f} [{j.ci_low:.2f}, {j.ci_high:.2f}] {j.verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
