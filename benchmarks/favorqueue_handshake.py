"""FavorQueue 2013: sensitivity of the favour-dependent claims to the handshake's third
packet (issue 17, cause evidence). The paper ran ns-2 with "the ns-2 TCP connection
establishment phase ... enabled" (section 4): ns-2's one-way TCP with ``syn_``, whose first
data packet follows the SYN's ACK with no pure ACK before it. Savanna's reproduction sends
that pure ACK (``[tcp] handshake_ack = true``, as Linux does), which reaches FavorQueue just
before the first data packet and takes its favour. This runs the 10 Mb/s load sweep with
DropTail and FavorQueue both ways, on one reduced plan, through the reproduction's own
analysis functions, and prints the claims both ways.

    .venv/bin/python benchmarks/favorqueue_handshake.py [--reps 4] [--duration 500] [--out DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
from savanna.analysis import favorqueue as fqa
from savanna.report import judge
from savanna.reproduce import favorqueue_2013 as fq
from savanna.reproduce import favorqueue_2013_more as more
from savanna.reproduce.common import Context, Report, plot_style

IDS = (
    "delta-zero",
    "delta-pos",
    "delta-neg",
    "delta-lt-m10ms",
    "delta-more-decrease",
    "p-improve-short",
    "p-decrease-short",
    "drop-every-size",
    "drop-size2-faq",
    "syn-faq-avg",
    "syn-dt-avg",
    "tau-dt",
    "tau-faq",
    "fr-increase",
    "pfavor-2",
    "pfavor-long",
    "model-pz1-025",
    "model-pz1-085",
    "model-rms-025",
    "model-rms-085",
    "qdelay-short-similar",
    "gain-overall",
    "goodput-dt",
    "goodput-faq",
    "goodput-increase",
    "lat-gain-max",
)


def run(out: Path, handshake_ack: bool, reps: int, duration: float, warmup: float, loads) -> dict[str, float]:
    p = dataclasses.replace(fq.plan(False), loads=loads, reps=reps, duration_s=duration, warmup_s=warmup)
    ctx = Context("favorqueue-2013", out, quick=False, workers=1, progress=False)
    extra = dict(more.SWEEP_EXTRA)
    extra["tcp.handshake_ack"] = handshake_ack
    b10 = fq._sweep(ctx, "loads-10mbps", fq.SC_10M, (fq.DT, fq.FQ), p.loads, p.reps, p.duration_s, **extra)
    d = fq._loads10(b10, p)
    report = Report(fq.CLAIMS, out, plot_style(height=3.9, linewidth=1.6))
    # eq. 5's denominator counts the handshake packets this run sent: the SYN (1 +
    # syn_drops) and the pure ACK only when handshake_ack (the reproduction passes the
    # scenario file's setting; here both ways run from the same file).
    orig = fqa.p_favor_by_size

    def p_favor(flows, *a, **k):
        return orig(flows, *a, **{**k, "handshake_ack": handshake_ack})

    fqa.p_favor_by_size = p_favor
    steps = [
        lambda: fq.flow_by_flow(report, p, d, False),
        lambda: fq.fig18_drop_by_length(report, d),
        lambda: fq.fig20_rto_recovery(report, d),
        lambda: fq.fig21_p_favor(report, d),
        lambda: fq.fig19_rto_ratio_syn(report, p, d),
        lambda: more.goodput_51(report, d),
        lambda: more.fig23_24_model(report, d),
        lambda: more.fig17_per_flow(report, p, b10),
    ]
    delta = gains = None
    for i, s in enumerate(steps):
        try:
            r = s()
            if i == 0:
                delta, gains = r
                fq.fig10_delta_cdf(report, delta)
                fq.fig11_12_change_and_gain(report, gains)
        except Exception as e:  # a figure needing a discipline not run here
            print(f"step {i}: {type(e).__name__}: {e}", file=sys.stderr)
    specs = {c.id: c for c in fq.CLAIMS}
    res = {}
    for cid in IDS:
        if report.samples.get(cid):
            j = judge(specs[cid], report.samples[cid])
            res[cid] = (j.mean, j.verdict)
    # eq. 5 as printed: the favoured packets (the SYN, and the pure ACK when sent, among
    # them) over s + R_i data packets, as against the probability above.
    fqa.p_favor_by_size = lambda flows, *a, **k: orig(flows, *a, **{**k, "count_handshake": False})
    printed = Report(fq.CLAIMS, out, report.plt)
    fq.fig21_p_favor(printed, d)
    more.fig23_24_model(printed, d)
    fqa.p_favor_by_size = orig
    for cid in (
        "pfavor-2",
        "pfavor-mid",
        "pfavor-long",
        "model-pz1-025",
        "model-pz1-085",
        "model-rms-025",
        "model-rms-085",
    ):
        if printed.samples.get(cid):
            j = judge(specs[cid], printed.samples[cid])
            res[f"{cid} (eq. 5 as printed)"] = (j.mean, j.verdict)
    # Fig. 10-11 shares with every load weighted alike (the mean of the per-load shares)
    # rather than every flow (loads pooled), and Delta = 0 read at 1 ms.
    per = []
    for load in p.loads:
        for r in d.reps:
            a = d.runs[(fq.DT, r, load)]
            b = d.runs[(fq.FQ, r, load)]
            a, b = a[a["start_s"] >= p.warmup_s], b[b["start_s"] >= p.warmup_s]
            v = fqa.delta_i(a, b)["delta_s"].to_numpy()
            g = fqa.gain(a, b, bins=[fq.SHORT, fq.LONG])
            per.append(
                {
                    "load": load,
                    "rep": r,
                    "zero": 100 * (abs(v) <= 1e-9).mean(),
                    "zero1ms": 100 * (abs(v) < 0.0005).mean(),
                    "neg": 100 * (v < -1e-9).mean(),
                    "lt_m10ms": 100 * (v < -0.01).mean(),
                    "pos": 100 * (v > 1e-9).mean(),
                    "p_dec_short": 100 * float(g["p_slower"].iloc[0]),
                    "p_dec_long": 100 * float(g["p_slower"].iloc[1]),
                }
            )
    import pandas as pd

    per = pd.DataFrame(per)
    cols = "Δ=0 / |Δ|<0.5 ms / Δ<0 / Δ<-10 ms / Δ>0 / short flows slower / long flows slower (%)"
    by_load = per.groupby("load").mean().drop(columns="rep")
    for k, v in by_load.iterrows():
        res[f"by load {k:g}: {cols}"] = tuple(round(float(x), 2) for x in v)
    res[f"loads weighted alike: {cols}"] = tuple(round(float(x), 2) for x in by_load.mean())
    pooled = [
        100
        * float(
            np.mean(
                np.abs(
                    fqa.delta_i(
                        d.pooled[fq.DT][d.pooled[fq.DT]["rep"] == r], d.pooled[fq.FQ][d.pooled[fq.FQ]["rep"] == r]
                    )["delta_s"]
                )
                < 0.0005
            )
        )
        for r in d.reps
    ]
    res["delta-zero at 1 ms (pooled)"] = (float(np.mean(pooled)), "")
    # Flows of 1 and 2 data packets under FavorQueue: P(Favor) with the SYN (and the pure
    # ACK when sent) counted on both sides, and the drop ratio of their data packets and of
    # all their packets (SYNs included): the reading where a flow's size counts its SYN.
    b = d.pooled[fq.FQ]
    for size in (1, 2):
        g = b[b["size_pkts"] == size]
        pf = orig(g, bins=[(size, size)], handshake_ack=handshake_ack)
        sent = float(g["data_pkts_sent"].sum() + g["syn_sent"].sum())
        res[f"{size}-data-packet flows, FavorQueue: P(Favor) / data drop % / all-packet drop %"] = (
            round(100 * float(pf["p_favor"].iloc[0]), 2),
            round(fq.drop_ratio(g), 3),
            round(100 * float(g["drops"].sum() + g["syn_drops"].sum()) / sent, 3),
        )
    _more_readings(res, d, p, orig, handshake_ack, specs)
    return res


def _more_readings(res, d, p, orig, handshake_ack, specs) -> None:
    """Other readings of the paper's aggregates, on the same runs."""
    import pandas as pd

    f = d.f
    # tau (eq. 4) and fast retransmits, pooled or every load weighted alike, and tau without
    # the handshake's timeouts (a SYN sent again follows a timeout).
    rows = []
    for (q, load, r), g in f[f["fct_s"].notna()].groupby(["qdisc", "load", "rep"]):
        rto, fr = float(g["timeouts"].sum()), float(g["fast_retransmits"].sum())
        data_rto = rto - float((g["syn_sent"] - 1).sum())
        rows.append({"q": q, "load": load, "rep": r, "rto": rto, "fr": fr, "data_rto": data_rto})
    t = pd.DataFrame(rows)
    for q in (fq.DT, fq.FQ):
        a = t[t["q"] == q]
        pooled = a.groupby("rep")[["rto", "fr", "data_rto"]].sum()
        res[f"tau {q}: pooled / loads alike / without handshake RTOs"] = (
            round(float((100 * pooled["rto"] / (pooled["rto"] + pooled["fr"])).mean()), 2),
            round(float((100 * a["rto"] / (a["rto"] + a["fr"])).groupby(a["load"]).mean().mean()), 2),
            round(float((100 * pooled["data_rto"] / (pooled["data_rto"] + pooled["fr"])).mean()), 2),
        )
    w = t.pivot_table(index=["load", "rep"], columns="q", values="fr")
    inc = 100 * (w[fq.FQ] - w[fq.DT]) / w[fq.DT]
    res["fr-increase: loads alike"] = (round(float(inc.groupby(level="load").mean().mean()), 2), "")
    # "the ratio of Fast Retransmits" read as eq. 3 for fast retransmits: sum FR / sum (L + R)
    fin = f[f["fct_s"].notna()]
    g = fin.groupby(["qdisc", "rep"])[["fast_retransmits", "size_pkts", "retransmits"]].sum()
    ratio = (g["fast_retransmits"] / (g["size_pkts"] + g["retransmits"])).unstack("qdisc")
    res["fr-increase as FR / (L + R)"] = (float((100 * (ratio[fq.FQ] - ratio[fq.DT]) / ratio[fq.DT]).mean()), "")
    # Fig. 20's "ratio of Fast Retransmits" per flow-length class (classes of at least 50
    # finished flows), averaged over the classes: the share of recoveries by fast
    # retransmit, 1 - tau(x), in points, and the count of fast retransmits, relative
    fin_ = f[f["fct_s"].notna()]
    cls = []
    for lo, hi in d.bins:
        g = fin_[(fin_["size_pkts"] >= lo) & (fin_["size_pkts"] <= hi)]
        s_ = g.groupby("qdisc")[["timeouts", "fast_retransmits"]].sum()
        if len(g) < 50 or len(s_) < 2 or (s_["fast_retransmits"] == 0).any():
            continue
        share = s_["fast_retransmits"] / (s_["timeouts"] + s_["fast_retransmits"])
        frc = s_["fast_retransmits"]
        cls.append((100 * (share[fq.FQ] - share[fq.DT]), 100 * (frc[fq.FQ] / frc[fq.DT] - 1)))
    res["fr by length class (Fig. 20), mean over classes: FR share points / FR count %"] = (
        round(float(np.mean([x for x, _ in cls])), 2),
        round(float(np.mean([y for _, y in cls])), 2),
        len(cls),
    )
    # over the flows that finished under both queues only (section 4: "We only compare all
    # identical terminating flows for both experiments")
    cf = fq.common_finished(f, (fq.DT, fq.FQ))
    g = cf.groupby(["qdisc", "rep"])[["fast_retransmits", "timeouts"]].sum()
    fr = g["fast_retransmits"].unstack("qdisc")
    tau = (100 * g["timeouts"] / (g["timeouts"] + g["fast_retransmits"])).unstack("qdisc")
    res["flows finished under both: fr-increase / tau DT / tau FQ"] = (
        round(float((100 * (fr[fq.FQ] - fr[fq.DT]) / fr[fq.DT]).mean()), 2),
        round(float(tau[fq.DT].mean()), 2),
        round(float(tau[fq.FQ].mean()), 2),
    )
    # normalised goodput: every size class weighted alike ("for all flows size"), and every load alike
    c = fq.common_finished(f, (fq.DT, fq.FQ))
    c = c.assign(gp=100.0 * c["size_pkts"] * 12000 / c["fct_s"] / 10e6)
    by_size = c.groupby(["qdisc", "size_pkts"])["gp"].mean().unstack("qdisc")
    by_load = c.groupby(["qdisc", "load"])["gp"].mean().unstack("qdisc")
    for name, m in (("size classes alike", by_size[by_size.index <= 100].mean()), ("loads alike", by_load.mean())):
        res[f"goodput DT / FQ / increase, {name} (sizes <= 100 for sizes)"] = (
            round(float(m[fq.DT]), 2),
            round(float(m[fq.FQ]), 2),
            round(float(100 * (m[fq.FQ] - m[fq.DT]) / m[fq.DT]), 1),
        )
    # normalised goodput as the flows' data over their latency (ratio of means)
    m = (
        c.groupby(["rep", "qdisc"])
        .apply(lambda x: 100.0 * x["size_pkts"].mean() * 12000 / x["fct_s"].mean() / 10e6, include_groups=False)
        .unstack("qdisc")
    )
    res["goodput DT / FQ / increase, mean size over mean latency"] = (
        round(float(m[fq.DT].mean()), 2),
        round(float(m[fq.FQ].mean()), 2),
        round(float((100 * (m[fq.FQ] - m[fq.DT]) / m[fq.DT]).mean()), 1),
    )
    # the model fit with a flow's size counting its SYN (size s + 1, the SYN once on both sides)
    if not handshake_ack:
        shift = dataclasses.replace(d, f=f.assign(size_pkts=f["size_pkts"] + 1))
        # the denominator's handshake term (1 + syn_drops, no pure ACK) counts that SYN again
        fqa.p_favor_by_size = lambda flows, *a, **k: orig(
            flows.assign(retransmits=flows["retransmits"] - 1), *a, **{**k, "handshake_ack": False}
        )
        for load in (0.25, 0.85):
            key = f"{round(100 * load):03d}"
            vals = []
            for r in shift.reps:
                bins, meas, sizes = more._pfavor_at(shift, load, r)
                if len(bins) >= 5:
                    vals.append(more.fit_model(sizes, meas, bins)["pz1"])
            verdict = judge(specs[f"model-pz1-{key}"], vals).verdict
            res[f"model-pz1-{key}, size counts the SYN"] = (float(np.mean(vals)), verdict)
        fqa.p_favor_by_size = orig


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v[1], str):
        return f"{v[0]:.3g}" + (f" ({v[1]})" if v[1] else "")
    return " / ".join(f"{x:g}" for x in v)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--duration", type=float, default=500.0)
    ap.add_argument("--warmup", type=float, default=50.0)
    ap.add_argument("--loads", default="0.05,0.15,0.25,0.35,0.45,0.55,0.65,0.75,0.85,0.95")
    ap.add_argument("--out", type=Path, default=Path("out/favorqueue-handshake"))
    a = ap.parse_args()
    loads = tuple(float(x) for x in a.loads.split(","))
    both = {}
    for ack in (True, False):
        both[ack] = run(a.out / f"handshake_ack-{str(ack).lower()}", ack, a.reps, a.duration, a.warmup, loads)
    print("| claim | paper | handshake_ack true | handshake_ack false (ns-2's syn_) |")
    print("|---|---|---|---|")
    specs = {c.id: c for c in fq.CLAIMS}
    for cid in IDS:
        t, f = both[True].get(cid), both[False].get(cid)
        print(f"| {cid} | {specs[cid].paper_text or specs[cid].paper_value} | {_fmt(t)} | {_fmt(f)} |")
    for key in list(both[True]) + [k for k in both[False] if k not in both[True]]:
        if key not in IDS:
            print(f"| {key} | | {_fmt(both[True].get(key))} | {_fmt(both[False].get(key))} |")
    (a.out / "result.json").write_text(json.dumps({str(k): v for k, v in both.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
