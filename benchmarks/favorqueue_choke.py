"""FavorQueue 2013, claim drop-choke-run2c-hi (issue 17, cause evidence): the drop ratio of
CHOKe against RuN2C at the highest load (Fig. 4(a)) under readings of "the parameters used
for these AQMs are those proposed by their authors" (section 5.1), which gives no CHOKe
thresholds for an 8-packet buffer. Savanna only (ns-2.35 has no CHOKe): the 10 Mb/s load
sweep's scenario at load 0.95, DropTail, RuN2C and CHOKe with each reading's thresholds.

    .venv/bin/python benchmarks/favorqueue_choke.py [--reps 4] [--duration 500] [--out DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from savanna.reproduce import favorqueue_2013 as fq
from savanna.reproduce.common import Context, seeds

# (label, bottleneck queue table): the reproduction's reading (the CHOKe paper's 100 and 200
# of 300 packets scaled to the buffer), ns-2.35's automatic RED thresholds at 10 Mb/s with
# 1500 B packets (thresh_ 0 and q_weight_ -1: min_th 5, max_th 15, w_q 0.0012, gentle_ true,
# as an ns-2.35 RED queue on a 10 Mb/s, 1 ms link reports them), and the CHOKe paper's
# thresholds unscaled (100 and 200 packets, above the 8-packet buffer: CHOKe never draws,
# which is DropTail).
READINGS = (
    ("DropTail", {"type": "droptail", "limit_pkts": 8}),
    ("RuN2C", {"type": "run2c", "limit_pkts": 8}),
    ("CHOKe, thresholds 1/3 and 2/3 of the buffer (the reproduction)", {"type": "choke", "limit_pkts": 8}),
    (
        "CHOKe, ns-2.35's automatic RED parameters (5, 15, w_q 0.0012, gentle)",
        {"type": "choke", "limit_pkts": 8, "min_th": 5.0, "max_th": 15.0, "w_q": 0.0012, "gentle": True},
    ),
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--duration", type=float, default=500.0)
    ap.add_argument("--load", type=float, default=0.95)
    ap.add_argument("--out", type=Path, default=Path("out/favorqueue-choke"))
    a = ap.parse_args()
    ctx = Context("favorqueue-2013", a.out, quick=False, workers=1, progress=False)
    print(f"| discipline (load {a.load:g}, {a.reps} seeds, {a.duration:g} s) | drop ratio (%) |")
    print("|---|---|")
    for i, (label, q) in enumerate(READINGS):
        jobs = []
        for r, seed in enumerate(seeds(a.reps)):
            sc = fq._scenario(fq.SC_10M, qdisc=q["type"], seed=seed, duration_s=a.duration, load=a.load)
            sc["topology"]["bottleneck_queue"] = dict(q)
            jobs.append(ctx.job(f"reading{i}", sc, {"rep": r + 1}))
        b = ctx.run(f"reading{i}", jobs)
        f = b.query("rep, drops, data_pkts_sent", where="source = 'forward' AND start_s >= 50")
        per = [fq.drop_ratio(g) for _, g in f.groupby("rep")]
        print(f"| {label} | {statistics.mean(per):.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
