#!/usr/bin/env python3
"""Guo & Matta 2001, Exp. 1 (Fig. 7) at two readings of "the load is carefully tuned to be
close to the bottleneck link capacity" (section IV-A): the reproduction's 190 web sessions
(98% offered with the foreground) and more. Savanna only, RED and RIO-PS, ITO 3 s and 1 s.
Prints per seed and on average the response-time reduction of RIO-PS against RED for
objects of at most 30 packets and of 31-500 packets (objects that finished under both),
the claims fig7a-short, fig7a-medium and fig7b-short, and the bottleneck's drop and mark
rates.

Usage: python3 benchmarks/gm_exp1_load.py [--sessions 190,200] [--seeds 3] [--duration 4000]
       [--warmup 2000] [--workers 2] [--out DIR]   (runs are kept in DIR and reused)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", default="190,200")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=4000.0)
    ap.add_argument("--warmup", type=float, default=2000.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("/tmp/savanna-gm-exp1-load"))
    a = ap.parse_args()
    import pandas as pd
    from savanna.report import judge
    from savanna.reproduce import guo_matta_2001 as gm
    from savanna.reproduce.common import Context, load_scenario, seeds

    ctx = Context(key="gm-exp1-load", out_dir=a.out, quick=False, workers=a.workers, progress=False)
    base = load_scenario(gm.SC_EXP1)
    bdp = gm.bdp_pkts(base["topology"]["rate1_mbps"], base["packet_bytes"])
    web = [i for i, t in enumerate(base["traffic"]) if t["type"] == "web"][0]
    sessions = [int(x) for x in a.sessions.split(",")]
    jobs = []
    for n in sessions:
        for ito in (3.0, 1.0):
            for s in (gm.RED, gm.RIO):
                for r, seed in enumerate(seeds(a.seeds)):
                    ch = {"tcp.ito_s": ito, f"traffic[{web}].sessions": n}
                    sc = gm.with_scheme(gm._seeded(base, seed, a.duration, **ch), s, bdp)
                    jobs.append(ctx.job("exp1", sc, {"qdisc": s, "ito": ito, "sessions": n, "rep": r + 1}))
    b = ctx.run("exp1", jobs)
    ctx.settle()
    s = b.sql(f"""
        WITH f AS (SELECT qdisc, ito, sessions, rep, flow_id, size_pkts, fct_s FROM flows
                   WHERE {{runs}} AND source = 'web' AND start_s >= {a.warmup}),
             ok AS (SELECT ito, sessions, rep, flow_id FROM f WHERE fct_s IS NOT NULL
                    GROUP BY ito, sessions, rep, flow_id HAVING count(*) = 2)
        SELECT qdisc, ito, sessions, rep, size_pkts, sum(fct_s) AS t, count(*) AS n
        FROM f JOIN ok USING (ito, sessions, rep, flow_id) GROUP BY qdisc, ito, sessions, rep, size_pkts""")
    q = b.sql(f"""SELECT qdisc, ito, sessions, queue, 100.0 * sum(drops_none + drops_short + drops_long) /
        sum(departures_none + departures_short + departures_long + drops_none + drops_short + drops_long) AS drop_pct,
        100.0 * sum(marks_none + marks_short + marks_long) /
        sum(departures_none + departures_short + departures_long + drops_none + drops_short + drops_long) AS mark_pct
        FROM queues WHERE {{runs}} AND t_s >= {a.warmup}
        GROUP BY qdisc, ito, sessions, queue HAVING sum(drops_none + drops_short + drops_long) > 0
        ORDER BY sessions, ito, qdisc""")
    pd.set_option("display.width", 200)
    print(q)
    specs = {c.id: c for c in gm.CLAIMS}
    for n in sessions:
        for cid, ito, (lo, hi) in (
            ("fig7a-short", 3.0, gm.SHORT_OBJ),
            ("fig7a-medium", 3.0, gm.MEDIUM_OBJ),
            ("fig7b-short", 1.0, gm.SHORT_OBJ),
        ):
            g = s[(s["sessions"] == n) & (s["ito"] == ito)]
            m = gm._range_mean(g, lo, hi, ["qdisc", "rep"]).unstack("qdisc")
            vals = [gm.reduction(m.loc[r, gm.RED], m.loc[r, gm.RIO]) for r in m.index]
            j = judge(specs[cid], vals)
            print(
                f"{n} sessions {cid}: {[round(float(v), 1) for v in vals]} mean {j.mean:.1f} [{j.ci_low:.1f}, "
                f"{j.ci_high:.1f}] {j.verdict}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
