"""FavorQueue 2013 (Anelli, Diana & Lochin, Computer Networks), the figures added to
``favorqueue_2013`` by issue 17 item 5: Fig. 5 (latency by flow length for several RTTs),
the normalised goodput of section 5.1, Figs. 6-7 (Pareto laws of mean 10, 30 and 100
packets), the stochastic model of section 7.2 (Figs. 23-24) and Fig. 17 per flow length.

Fig. 5, the goodput, the model and Fig. 17 read the runs of the 10 Mb/s load sweep; only
Figs. 6-7 run simulations of their own (``size-laws``). Readings of the paper, each with
the sentence it rests on, are in ``READINGS`` (printed in the report's introduction) and
docs/reproduce.md. Claims are declared in ``claims()`` before any result is computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

DT, FQ, CHOKE = "droptail", "favorqueue", "choke"
DISC_LAWS = (DT, CHOKE, FQ)
MEANS = (10.0, 100.0)  # Figs. 6-7: the laws "centered on 10, 30 and 100" (30 is the load sweep's)
RTT_CLASSES = ((0.004, 0.050), (0.050, 0.100), (0.100, 0.150), (0.150, 0.200))  # base RTT, s
LINK_BPS = 10e6
PKT_BITS = 1500 * 8
CA_FAVOR = (
    0.7  # §7.2: "each packet of a flow which has left the slow-start phase has a probability to be favored of 70%"
)
PAPER_PZ1 = {0.25: 0.25, 0.85: 0.7}  # Figs. 23-24: "P(Z = 1) = 0.25" at rho = 0.25, "0.7" at rho = 0.85
FIT_MAX_PKTS = 1000  # the model is fitted on the size classes below this (the paper: phase 3 is a "cloud")
# The load sweep records each flow's queueing delay at the bottleneck (Fig. 17 per flow length).
SWEEP_EXTRA = {"sampling.flow_qdelay": True}


@dataclass(frozen=True)
class MorePlan:
    law_loads: tuple[float, ...]
    law_reps: int
    law_duration_s: float
    law_warmup_s: float


def plan(quick: bool) -> MorePlan:
    """Figs. 6-7's runs: DropTail, CHOKe and FavorQueue for each of the two new laws. The
    claims compare the disciplines at the highest load, which is what the runs must settle;
    the lower loads draw the curve. Quick: two loads, 3 seeds, 150 s (as the load sweep);
    full: five loads, 5 seeds, 500 s (the load sweep's duration; half its seeds)."""
    if quick:
        return MorePlan((0.55, 0.95), 3, 150.0, 30.0)
    return MorePlan((0.25, 0.55, 0.75, 0.85, 0.95), 5, 500.0, 50.0)


READINGS = (
    "Figs. 5-7, the normalised goodput of §5.1, the stochastic model of §7.2 (Figs. 23-24) and Fig. 17 per "
    "flow length are in savanna.reproduce.favorqueue_2013_more, with these readings. "
    'Fig. 5 ("latency obtained by DropTail, CHOKe and FavourQueue according to flow length and various RTT"): '
    'the flows of the load sweep split by base RTT into 4-50, 50-100, 100-150 and 150-200 ms; "smoother" is '
    "measured as the mean absolute second difference of log10 latency across the size classes up to 100 packets. "
    '§5.1 ("we have computed the resulting normalized goodput for all flows size for all experiments and '
    "obtained is 2.4% with DropTail and 3.5% with FavourQueue\"): a flow's goodput is its size (1500 B packets) "
    "over its latency, normalised by the 10 Mb/s bottleneck capacity, averaged over every flow that finished under "
    "both queues, all loads pooled per replication; the paper does not say what it normalised by, and the "
    "capacity is the one reading that gives percentages of this size. "
    'Figs. 6-7 ("three Pareto traffic distribution centered on 10, 30 and 100"): Pareto II laws of shape 1.3 and '
    "mean 10, 30 and 100 packets (as the main law), on the forward traffic only. "
    "§7.2: eqs. (6)-(7) extended to every slow-start burst (bursts 1, 2, 4, 8, ... packets; the first three "
    "packets of a burst favoured when Z = 0, the first one when Z = 1), flows leaving slow start at a packet "
    "uniform on [s1, s2) and favoured with probability 0.7 afterwards. The paper gives P(Z = 1) (0.25 and 0.7) but "
    'not s1 and s2 ("a parameter of the model which depends of the load"): we fit s1 and s2 by least squares to '
    "our P(Favor | S = s), and also fit P(Z = 1) to compare it with the paper's."
)


def claims():
    from savanna.report import ClaimSpec as C

    return [
        C(
            "fig5-faq-below-dt",
            "Fig. 5: (RTT class, size class up to 100 packets) cells where FavorQueue's mean latency is below "
            "DropTail's",
            None,
            "%",
            "FaQ lower, for every RTT",
            direction=">",
            reference=50.0,
            source="§5.1, Fig. 5",
        ),
        C(
            "fig5-smoother-dt",
            "Fig. 5: roughness of the latency-by-length curve, FavorQueue's reduction against DropTail's",
            None,
            "%",
            "FaQ smoother",
            direction=">",
            source="§5.1, Fig. 5",
        ),
        C(
            "fig5-smoother-choke",
            "Fig. 5: roughness of the latency-by-length curve, FavorQueue's reduction against CHOKe's",
            None,
            "%",
            "FaQ smoother",
            direction=">",
            source="§5.1, Fig. 5",
        ),
        C("goodput-dt", "Normalised goodput (share of the bottleneck), DropTail", 2.4, "%", source="§5.1"),
        C("goodput-faq", "Normalised goodput (share of the bottleneck), FavorQueue", 3.5, "%", source="§5.1"),
        C(
            "goodput-increase",
            "Increase of the normalised goodput with FavorQueue",
            45.0,
            "%",
            "an increase of 45%",
            direction=">",
            source="§5.1",
        ),
        C(
            "law10-lat-dt",
            "Pareto mean 10 packets, highest load: FavorQueue's latency reduction against DropTail",
            None,
            "%",
            "homothetic: FaQ lower",
            direction=">",
            source="§5.1, Fig. 7",
        ),
        C(
            "law10-lat-choke",
            "Pareto mean 10 packets, highest load: FavorQueue's latency reduction against CHOKe",
            None,
            "%",
            "homothetic: FaQ lower",
            direction=">",
            source="§5.1, Fig. 7",
        ),
        C(
            "law100-lat-dt",
            "Pareto mean 100 packets, highest load: FavorQueue's latency reduction against DropTail",
            None,
            "%",
            "homothetic: FaQ lower",
            direction=">",
            source="§5.1, Fig. 7",
        ),
        C(
            "law100-lat-choke",
            "Pareto mean 100 packets, highest load: FavorQueue's latency reduction against CHOKe",
            None,
            "%",
            "homothetic: FaQ lower",
            direction=">",
            source="§5.1, Fig. 7",
        ),
        C(
            "model-pz1-025",
            "§7.2 model fitted to P(Favor | S = s) at load 0.25: P(Z = 1)",
            0.25,
            "",
            source="§7.2, Fig. 23",
        ),
        C(
            "model-pz1-085",
            "§7.2 model fitted to P(Favor | S = s) at load 0.85: P(Z = 1)",
            0.7,
            "",
            source="§7.2, Fig. 24",
        ),
        C(
            "model-pz1-rises",
            "§7.2 model: fitted P(Z = 1) at load 0.85 minus at load 0.25",
            0.45,
            "",
            "0.7 - 0.25",
            direction=">",
            source="§7.2, Figs. 23-24",
        ),
        C(
            "model-rms-025",
            "§7.2 model with the paper's P(Z = 1) = 0.25 (s1, s2 fitted), load 0.25: RMS error against our P(Favor)",
            None,
            "points",
            "the model correctly fits",
            direction="<",
            reference=10.0,
            source="§7.2, Fig. 23",
        ),
        C(
            "model-rms-085",
            "§7.2 model with the paper's P(Z = 1) = 0.7 (s1, s2 fitted), load 0.85: RMS error against our P(Favor)",
            None,
            "points",
            "the model correctly fits",
            direction="<",
            reference=10.0,
            source="§7.2, Fig. 24",
        ),
        C(
            "qdelay-mid-faq-higher",
            "Fig. 17 per flow: 10-99 packet flows' mean queueing delay, FavorQueue minus DropTail",
            None,
            "ms",
            "medium flows' queueing delay slightly increases",
            direction=">",
            source="§6.1, Fig. 17",
        ),
        C(
            "qdelay-short-similar",
            "Fig. 17 per flow: flows below 10 packets, mean queueing delay, FavorQueue minus DropTail",
            0.0,
            "ms",
            "both curves similarly behave",
            abs_tol=0.5,
            source="§6.1, Fig. 17",
        ),
    ]


CLAIMS = claims()


# ---------------------------------------------------------------------------------------
# §7.2: the stochastic model


def favored_in_slow_start(s: int, z: int) -> int:
    """Packets favoured among the first ``s`` packets of a flow in slow start (eqs. (6)-(7)
    times s): bursts of 1, 2, 4, 8, ... packets, of which the first three are favoured when
    Z = 0 ("a maximum of 3 packets can be favored in a row") and the first one when Z = 1."""
    n, burst, start = 0, 1, 1
    keep = 3 if z == 0 else 1
    while start <= s:
        n += min(keep, burst, s - start + 1)
        start += burst
        burst *= 2
    return n


def model_p_favor(sizes: np.ndarray, pz1: float, s1: int, s2: int, ca: float = CA_FAVOR) -> np.ndarray:
    """P(Favor | S = s) of section 7.2 for each size in ``sizes`` (eq. (8) and its phases 2
    and 3): a flow leaves slow start at packet k, uniform on [s1, s2); before k its packets
    are favoured as in slow start (``favored_in_slow_start``), after k each with probability
    ``ca``. A flow of size s <= k never leaves slow start."""
    sizes = np.asarray(sizes, dtype=np.int64)
    top = int(max(sizes.max(), s2)) + 1
    out = np.zeros(len(sizes))
    for z, w in ((0, 1.0 - pz1), (1, pz1)):
        f = np.array([favored_in_slow_start(k, z) for k in range(top)], dtype=float)
        ks = np.arange(s1, s2)
        for i, s in enumerate(sizes):
            left = ks[ks < s]
            fav = f[left].sum() + ca * (s - left).sum() + (len(ks) - len(left)) * f[s]
            out[i] += w * fav / (len(ks) * s)
    return out


def _bin_weights(sizes: np.ndarray, bins: list[tuple[float, float]], top: int) -> np.ndarray:
    """Row b: the packets of the flows of bin b by size 1..top (eq. 5 pools packets, so a
    bin's P(Favor) weighs each size by its packets), normalised to sum 1."""
    w = np.zeros((len(bins), top + 1))
    s = sizes[sizes <= top].astype(np.int64)
    cnt = np.bincount(s, minlength=top + 1).astype(float) * np.arange(top + 1)
    for b, (lo, hi) in enumerate(bins):
        row = cnt.copy()
        row[: int(lo)] = 0.0
        row[int(min(hi, top)) + 1 :] = 0.0
        w[b] = row / row.sum() if row.sum() > 0 else row
    return w


def _model_tables(top: int) -> tuple[np.ndarray, np.ndarray]:
    f0 = np.array([favored_in_slow_start(k, 0) for k in range(top + 1)], dtype=float)
    f1 = np.array([favored_in_slow_start(k, 1) for k in range(top + 1)], dtype=float)
    return f0, f1


def _model_zs(f: np.ndarray, s1: int, s2s: np.ndarray, ca: float) -> np.ndarray:
    """Favoured packets (expected) of a flow of each size 0..len(f)-1 for one value of Z,
    row i for s2 = ``s2s[i]``: every s2 of one s1 in one call (issue 21: ``fit_model``
    made some 180,000 calls of one s2 each before)."""
    top = len(f) - 1
    k = np.arange(top + 1)
    s = k.astype(float)
    n = (np.asarray(s2s, dtype=np.int64) - s1)[:, None]
    cf = np.concatenate([[0.0], np.cumsum(f)])  # cf[k] = sum f[0..k-1]
    ck = np.concatenate([[0.0], np.cumsum(s)])
    hi = np.clip(k, s1, s1 + n)  # leave points k in [s1, hi) are below s
    m = hi - s1
    fav = (cf[hi] - cf[s1]) + ca * (s * m - (ck[hi] - ck[s1])) + (n - m) * f
    return fav / n


def fit_model(
    sizes: np.ndarray, measured: np.ndarray, bins: list[tuple[float, float]], pz1: float | None = None
) -> dict[str, float]:
    """Least-squares fit of the model to ``measured`` P(Favor) of ``bins`` (flows' ``sizes``
    give each bin's packet weights): s1 and s2 on a grid, and P(Z = 1) too unless given
    (closed form for each (s1, s2), clipped to [0, 1]). Returns s1, s2, pz1 and the RMS
    error in points."""
    top = int(min(max(hi for _, hi in bins if math.isfinite(hi)), FIT_MAX_PKTS * 2))
    w = _bin_weights(sizes, bins, top)
    f0, f1 = _model_tables(top)
    s = np.arange(top + 1, dtype=float)
    s[0] = 1.0
    best = None
    for s1 in range(2, 61):
        s2s = sorted({s1 + int(round(x)) for x in np.geomspace(1, 800, 40)})
        z0 = _model_zs(f0, s1, np.array(s2s), CA_FAVOR) / s
        z1 = _model_zs(f1, s1, np.array(s2s), CA_FAVOR) / s
        for i, s2 in enumerate(s2s):
            a = w @ z0[i]  # Z = 0, per bin
            b = w @ z1[i]  # Z = 1
            if pz1 is None:
                d = b - a
                den = float(d @ d)
                p = float(np.clip(((measured - a) @ d) / den, 0.0, 1.0)) if den > 0 else 0.0
            else:
                p = pz1
            r = a + p * (b - a) - measured
            err = float(r @ r)
            if best is None or err < best[0]:
                best = (err, s1, s2, p)
    err, s1, s2, p = best
    return {"s1": s1, "s2": s2, "pz1": p, "rms": 100.0 * math.sqrt(err / len(measured))}


# ---------------------------------------------------------------------------------------
# Runs: Figs. 6-7


def _law_points(mean: float) -> list[list[float]]:
    from savanna.reproduce.favorqueue_2013 import lomax_size_cdf

    return [[s, c] for s, c in lomax_size_cdf(mean=mean)]


def law_scenario(qdisc: str, mean: float, load: float, seed: int, duration_s: float) -> dict:
    """The load sweep's scenario with the forward sizes drawn from a Pareto II law of shape
    1.3 and ``mean`` packets (the reverse traffic keeps the main law)."""
    from savanna.reproduce import favorqueue_2013 as base
    from savanna.reproduce.common import block, load_scenario

    fwd = block(load_scenario(base.SC_10M), "forward")
    return base._scenario(
        base.SC_10M,
        qdisc=qdisc,
        seed=seed,
        duration_s=duration_s,
        load=load,
        **{f"traffic[{fwd}].size": {"dist": "empirical", "points": _law_points(mean)}},
    )


def run_laws(ctx: Any, mp: MorePlan):
    from savanna.reproduce.common import seeds

    jobs = []
    for mean in MEANS:
        for d in DISC_LAWS:
            for load in mp.law_loads:
                for r, seed in enumerate(seeds(mp.law_reps)):
                    sc = law_scenario(d, mean, load, seed, mp.law_duration_s)
                    jobs.append(ctx.job("size-laws", sc, {"mean": mean, "qdisc": d, "load": float(load), "rep": r + 1}))
    return ctx.run("size-laws", jobs)


# ---------------------------------------------------------------------------------------
# The figures


def reproduce_more(ctx: Any, report: Any, p: Any, b10: Any, d: Any, laws: Any = None) -> None:
    """Everything this module adds to the FavorQueue report: ``p`` is the main plan, ``b10``
    the load sweep's batch and ``d`` its flows (``favorqueue_2013.Loads10``); ``laws`` the
    size-law batch when the caller started it already (ahead of the analysis)."""
    from savanna.reproduce.memwatch import release_memory

    mp = plan(ctx.quick)
    # As in the main module: each figure's temporaries go back to the system (issue 21).
    fig05_latency_by_rtt(report, p, b10, d)
    release_memory()
    goodput_51(report, d)
    fig23_24_model(report, d)
    release_memory()
    fig17_per_flow(report, p, b10)
    release_memory()
    fig06_07_laws(report, mp, d, laws if laws is not None else run_laws(ctx, mp))


def _roughness(lat: np.ndarray) -> float:
    """Mean absolute second difference of log10 latency along the size classes."""
    v = np.log10(lat[np.isfinite(lat) & (lat > 0)])
    return float(np.mean(np.abs(np.diff(v, 2)))) if len(v) >= 3 else math.nan


def fig05_latency_by_rtt(report: Any, p: Any, b10: Any, d: Any) -> None:
    """Fig. 5: latency by flow length for four RTT classes (DropTail, CHOKe, FavorQueue)."""
    from savanna.reproduce.common import COLORS, MARKERS, NAMES
    from savanna.reproduce.favorqueue_2013 import KEY_COLS, _in, bin_x, common_finished

    rtt = b10.query(
        "load, rep, flow_id, base_rtt_s", where=f"qdisc = '{DT}' AND source = 'forward' AND start_s >= {p.warmup_s}"
    )
    c3 = common_finished(d.f[KEY_COLS + ["size_pkts"]], DISC_LAWS)
    c3 = c3.merge(rtt, on=["load", "rep", "flow_id"], how="inner")
    bins = [bn for bn in d.bins if bn[0] <= 100]
    cells = []  # (rep, rtt class, bin, qdisc, mean latency)
    for (r, q), g in c3.groupby(["rep", "qdisc"]):
        for ci, (lo, hi) in enumerate(RTT_CLASSES):
            h = g[(g["base_rtt_s"] >= lo) & (g["base_rtt_s"] < hi)]
            for bi, bn in enumerate(bins):
                w = h[_in(h, bn)]["fct_s"]
                cells.append((r, ci, bi, q, float(w.mean()) if len(w) >= 5 else math.nan))
    cells = pd.DataFrame(cells, columns=["rep", "rtt", "bin", "qdisc", "lat"])
    piv = cells.pivot_table(index=["rep", "rtt", "bin"], columns="qdisc", values="lat", dropna=False)
    for r in sorted(cells["rep"].unique()):
        g = piv.xs(r, level="rep").dropna()
        if len(g):
            report.samples["fig5-faq-below-dt"].append(100.0 * float((g[FQ] < g[DT]).mean()))
        rough = {q: [] for q in DISC_LAWS}
        for ci in range(len(RTT_CLASSES)):
            h = piv.xs((r, ci), level=("rep", "rtt")).dropna()
            for q in DISC_LAWS:
                rough[q].append(_roughness(h[q].to_numpy()))
        m = {q: float(np.nanmean(v)) for q, v in rough.items()}
        report.samples["fig5-smoother-dt"].append(100.0 * (m[DT] - m[FQ]) / m[DT])
        report.samples["fig5-smoother-choke"].append(100.0 * (m[CHOKE] - m[FQ]) / m[CHOKE])
    fg, axes = report.plt.subplots(1, len(RTT_CLASSES), figsize=(13, 3.6), sharey=True)
    for (lo, hi), ax in zip(RTT_CLASSES, axes):
        h = c3[(c3["base_rtt_s"] >= lo) & (c3["base_rtt_s"] < hi)]
        for q in DISC_LAWS:
            g = h[h["qdisc"] == q]
            xs, ms = [], []
            for bn in d.bins:
                w = g[_in(g, bn)]["fct_s"]
                if len(w) >= 5:
                    xs.append(bin_x(bn))
                    ms.append(w.mean())
            ax.plot(xs, ms, color=COLORS[q], marker=MARKERS[q], ms=3.5, label=NAMES[q])
        ax.set(
            xscale="log", yscale="log", xlabel="flow length (packets)", title=f"RTT {1000 * lo:.0f}-{1000 * hi:.0f} ms"
        )
    axes[0].set(ylabel="mean latency (s)")
    axes[0].legend()
    report.figure(
        fg,
        "fig05-latency-by-rtt",
        "Fig. 5: latency according to flow length and RTT",
        "Mean latency by flow length of the flows that finished under DropTail, CHOKe and FavorQueue, split by the "
        "flow's base RTT (4-200 ms in four classes); every load and replication of the 10 Mb/s sweep pooled. A point "
        "needs at least 5 flows.",
    )


def goodput_51(report: Any, d: Any) -> None:
    """§5.1: the normalised goodput, DropTail against FavorQueue (same flows)."""
    from savanna.reproduce.favorqueue_2013 import KEY_COLS, common_finished

    c = common_finished(d.f[KEY_COLS + ["size_pkts"]], (DT, FQ))
    c = c.assign(gp=100.0 * c["size_pkts"] * PKT_BITS / c["fct_s"] / LINK_BPS)
    m = c.groupby(["rep", "qdisc"])["gp"].mean().unstack("qdisc")
    report.samples["goodput-dt"] = list(m[DT])
    report.samples["goodput-faq"] = list(m[FQ])
    report.samples["goodput-increase"] = list(100.0 * (m[FQ] - m[DT]) / m[DT])
    g = report.samples.get("gain-overall") or [math.nan]
    report.notes["goodput-increase"] = (
        f"The goodput rises as much as the latency falls, and our latency gain over all flows is "
        f"{float(np.mean(g)):.0f}% (gain-overall, the paper's 30%); a 45% rise in mean goodput needs most of the "
        "gain on the short flows, whose goodput is small, rather than on the long ones."
    )
    by_load = c.groupby(["load", "qdisc"])["gp"].mean().unstack("qdisc")
    report.table(
        "Normalised goodput against load (§5.1)",
        ["load", "DropTail (%)", "FavorQueue (%)"],
        [[float(x), float(by_load.loc[x, DT]), float(by_load.loc[x, FQ])] for x in by_load.index],
        "A flow's goodput is its size (1500 B packets) over its latency, as a share of the 10 Mb/s bottleneck; "
        "mean over the flows that finished under both queues, every replication pooled.",
    )


def _pfavor_at(d: Any, load: float, r: int | None):
    from savanna.analysis import favorqueue as fqa
    from savanna.reproduce.favorqueue_2013 import handshake_ack

    f = d.f[(d.f["qdisc"] == FQ) & (d.f["load"] == load)]
    if r is not None:
        f = f[f["rep"] == r]
    bins = [bn for bn in d.bins if bn[1] < FIT_MAX_PKTS]
    t = fqa.p_favor_by_size(f, bins=bins, handshake_ack=handshake_ack())
    keep = t["flows"].to_numpy() >= 10
    fin = f[f["fct_s"].notna()]["size_pkts"].to_numpy()
    return [bn for bn, k in zip(bins, keep) if k], t["p_favor"].to_numpy()[keep], fin


def fig23_24_model(report: Any, d: Any) -> None:
    """§7.2, Figs. 23-24: the stochastic model against our P(Favor | S = s) at loads 0.25 and 0.85."""
    from savanna.reproduce.favorqueue_2013 import bin_x

    loads = [x for x in PAPER_PZ1 if any(abs(x - y) < 1e-9 for y in d.f["load"].unique())]
    fitted = {}
    for load in loads:
        key = f"{round(100 * load):03d}"
        for r in d.reps:
            bins, meas, sizes = _pfavor_at(d, load, r)
            if len(bins) < 5:
                continue
            free = fit_model(sizes, meas, bins)
            fixed = fit_model(sizes, meas, bins, pz1=PAPER_PZ1[load])
            report.samples[f"model-pz1-{key}"].append(free["pz1"])
            report.samples[f"model-rms-{key}"].append(fixed["rms"])
            fitted.setdefault(load, []).append(free["pz1"])
    if len(loads) == 2:
        a, b = (fitted.get(x, []) for x in loads)
        report.samples["model-pz1-rises"] = [y - x for x, y in zip(a, b)]
    for load in loads:
        tb, tp, _ = _pfavor_at(d, load, None)
        tiny = [float(x) for x, bn in zip(tp, tb) if bn[1] <= 2]
        why = (
            "Our 1- and 2-packet flows are favoured less than the model's first burst allows "
            f"({', '.join(f'{100 * x:.0f}%' for x in tiny)} at load {load:g}; see pfavor-2: the first data packet "
            "often finds its handshake ACK still queued), and the fit lowers the short flows' curve by raising "
            "P(Z = 1)."
        )
        key = f"{round(100 * load):03d}"
        report.notes[f"model-pz1-{key}"] = report.notes[f"model-rms-{key}"] = why
    if not loads:
        return
    fg, axes = report.plt.subplots(1, len(loads), figsize=(5.3 * len(loads), 3.9), squeeze=False)
    rows = []
    for ax, load in zip(axes[0], loads):
        bins, meas, sizes = _pfavor_at(d, load, None)
        xs = np.array([bin_x(bn) for bn in bins])
        ax.plot(xs, 100 * meas, "s", color="#1f5fbf", ms=4, label="Savanna, FavorQueue")
        fixed = fit_model(sizes, meas, bins, pz1=PAPER_PZ1[load])
        free = fit_model(sizes, meas, bins)
        grid = np.arange(1, FIT_MAX_PKTS)
        for fit, ls, lab in (
            (fixed, "-", f"model, paper's P(Z=1) = {PAPER_PZ1[load]:g}"),
            (free, "--", f"model, fitted P(Z=1) = {free['pz1']:.2f}"),
        ):
            ax.plot(grid, 100 * model_p_favor(grid, fit["pz1"], fit["s1"], fit["s2"]), ls, color="#b42318", lw=1.0)
            ax.plot([], [], ls, color="#b42318", label=f"{lab} (s1 {fit['s1']}, s2 {fit['s2']})")
            rows.append([load, lab, fit["s1"], fit["s2"], fit["pz1"], fit["rms"]])
        ax.set(
            xscale="log",
            ylim=(0, 105),
            xlabel="flow length (packets)",
            ylabel="P(Favor | S = s) (%)",
            title=f"Fig. {23 if load < 0.5 else 24}: model, load {load:g}",
        )
        ax.legend(fontsize=7, loc="lower right")
    report.figure(
        fg,
        "fig23-24-model",
        "Figs. 23 and 24: the stochastic model of §7.2 against P(Favor | S = s)",
        "Points: our P(Favor | S = s) (eq. 5, SYN and handshake ACK counted) of FavorQueue's flows at loads 0.25 and "
        "0.85, every replication pooled, size classes with at least 10 flows. Lines: the model of §7.2 with the "
        "paper's P(Z = 1) (solid) and with P(Z = 1) fitted (dashed); s1 and s2 fitted by least squares on the "
        f"classes below {FIT_MAX_PKTS} packets.",
    )
    report.table(
        "The §7.2 model fitted to our P(Favor | S = s)",
        ["load", "model", "s1", "s2", "P(Z = 1)", "RMS error (points)"],
        rows,
        "Every replication pooled; the claims fit each replication on its own.",
    )


def fig17_per_flow(report: Any, p: Any, b10: Any) -> None:
    """Fig. 17 per flow length: the mean queueing delay of a flow's data packets at the
    bottleneck (``qdelay_s`` / ``qdelay_pkts``, written with ``sampling.flow_qdelay``)."""
    from savanna.reproduce.common import COLORS, MARKERS, NAMES
    from savanna.reproduce.favorqueue_2013 import LONG, MID, SHORT, bin_x, size_bins

    q = b10.sql(
        "SELECT qdisc, rep, size_pkts, qdelay_s, qdelay_pkts FROM flows WHERE {runs} AND source = 'forward' "
        f"AND start_s >= {p.warmup_s} AND qdisc IN ('{DT}', '{FQ}') AND fct_s IS NOT NULL AND qdelay_pkts > 0"
    )
    bins = size_bins()

    def mean_ms(g: pd.DataFrame) -> float:
        n = float(g["qdelay_pkts"].sum())
        return 1000.0 * float(g["qdelay_s"].sum()) / n if n > 0 else math.nan

    def cls(g: pd.DataFrame, rng: tuple[float, float]) -> pd.DataFrame:
        return g[(g["size_pkts"] >= rng[0]) & (g["size_pkts"] <= rng[1])]

    for r in sorted(q["rep"].unique()):
        a, b = q[(q["rep"] == r) & (q["qdisc"] == DT)], q[(q["rep"] == r) & (q["qdisc"] == FQ)]
        report.samples["qdelay-mid-faq-higher"].append(mean_ms(cls(b, MID)) - mean_ms(cls(a, MID)))
        report.samples["qdelay-short-similar"].append(mean_ms(cls(b, SHORT)) - mean_ms(cls(a, SHORT)))
    fg, ax = report.plt.subplots()
    rows = []
    for qd in (DT, FQ):
        g = q[q["qdisc"] == qd]
        xs, ys = [], []
        for bn in bins:
            h = cls(g, bn)
            if len(h) >= 5:
                xs.append(bin_x(bn))
                ys.append(mean_ms(h))
        ax.plot(xs, ys, color=COLORS[qd], marker=MARKERS[qd], label=NAMES[qd])
        rows.append([NAMES[qd], mean_ms(g), mean_ms(cls(g, SHORT)), mean_ms(cls(g, MID)), mean_ms(cls(g, LONG))])
    (_, a_all, a_s, a_m, a_l), (_, b_all, b_s, b_m, b_l) = rows
    report.notes["qdelay-short-similar"] = (
        f"Over all flows the two queues are alike ({b_all:.2f} ms with FavorQueue against {a_all:.2f} ms, the "
        f"paper's 2.8 and 2.9), but FavorQueue moves waiting from long flows ({b_l:.2f} against {a_l:.2f} ms) to "
        f"short ones ({b_s:.2f} against {a_s:.2f} ms). A likely cause: a favoured packet that meets a full queue "
        "pushes a standard packet out and waits, where DropTail drops it and counts no wait (FavorQueue's short "
        "flows lose fewer packets, Fig. 18)."
    )
    ax.set(
        xscale="log",
        xlabel="flow length (packets)",
        ylabel="mean queueing delay (ms)",
        title="Fig. 17: queueing delay by flow length",
    )
    ax.legend()
    report.figure(
        fg,
        "fig17-qdelay-by-length",
        "Fig. 17: average queueing delay according to flow length",
        "Mean wait in the bottleneck queue (arrival to start of transmission) of the data packets of each flow-length "
        "class, over the packets of the finished flows, every load and replication pooled (flows.parquet's qdelay_s "
        "and qdelay_pkts).",
    )
    report.table(
        "Queueing delay per packet by flow length (Fig. 17)",
        ["queue", "all (ms)", "< 10 packets (ms)", "10-99 (ms)", ">= 100 (ms)"],
        rows,
        "Every load and replication pooled; a flow's packets weigh by their number.",
    )


def fig06_07_laws(report: Any, mp: MorePlan, d: Any, bl: Any) -> None:
    """Figs. 6-7: the three size laws and the latency under each against load."""
    from savanna.reproduce.common import COLORS, MARKERS, NAMES, ci_frame, ecdf, line_band
    from savanna.reproduce.favorqueue_2013 import KEY_COLS, common_finished

    # Only the columns read below (the size law's CDF, common_finished and the latency):
    # the load sweep's flows of three queues are millions of rows in full mode (issue 21).
    cols = KEY_COLS + ["size_pkts"]
    f = bl.query("mean, " + ", ".join(cols), where=f"source = 'forward' AND start_s >= {mp.law_warmup_s}")
    main = d.f.loc[d.f["qdisc"].isin(DISC_LAWS), cols].assign(mean=30.0)
    fg, axes = report.plt.subplots(1, 4, figsize=(15, 3.7))
    for mean, colr in zip((10.0, 30.0, 100.0), ("#2a9d4b", "#1f5fbf", "#b42318")):
        src = main if mean == 30.0 else f[f["mean"] == mean]
        x, y = ecdf(src[src["qdisc"] == DT]["size_pkts"].dropna().to_numpy())
        axes[0].step(x, y, where="post", color=colr, label=f"mean {mean:g} packets")
    axes[0].set(xscale="log", xlabel="flow size (packets)", ylabel="CDF", title="Fig. 6: size laws")
    axes[0].legend()
    rows = []
    hi = max(mp.law_loads)
    for ax, mean in zip(axes[1:], (10.0, 30.0, 100.0)):
        src = main if mean == 30.0 else f[f["mean"] == mean]
        cf = common_finished(src, DISC_LAWS)
        lat = cf.groupby(["qdisc", "load", "rep"])["fct_s"].mean().rename("lat").reset_index()
        for q in DISC_LAWS:
            c = ci_frame(lat[lat["qdisc"] == q], ["load"], "lat")
            line_band(ax, c["load"], c["mean"], c["lo"], c["hi"], COLORS[q], NAMES[q], marker=MARKERS[q])
        ax.set(xlabel="load ρ", ylabel="mean latency (s)", title=f"Fig. 7: mean {mean:g} packets")
        lt = lat.pivot_table(index=["load", "rep"], columns="qdisc", values="lat")
        for load in sorted(lat["load"].unique()):
            g = lt.xs(load, level="load")
            rows.append([mean, float(load)] + [float(g[q].mean()) for q in DISC_LAWS])
        if mean != 30.0:
            top = lt.xs(hi, level="load")
            k = f"law{mean:g}"
            report.samples[f"{k}-lat-dt"] = list(100.0 * (top[DT] - top[FQ]) / top[DT])
            report.samples[f"{k}-lat-choke"] = list(100.0 * (top[CHOKE] - top[FQ]) / top[CHOKE])
    axes[1].legend()
    report.figure(
        fg,
        "fig06-07-size-laws",
        "Figs. 6 and 7: three size laws and the latency under each",
        "Left: CDF of flow sizes, Pareto II of shape 1.3 and mean 10, 30 and 100 packets. Right: mean latency of the "
        "flows that finished under DropTail, CHOKe and FavorQueue against load, for each law; means over "
        f"replications with 95% CIs. Mean 10 and 100: {mp.law_reps} seeds of {mp.law_duration_s:g} s at loads "
        f"{', '.join(f'{x:g}' for x in mp.law_loads)}; mean 30: the load sweep.",
    )
    report.table(
        "Mean latency under each size law (Fig. 7)",
        ["mean size (packets)", "load"] + [f"latency {NAMES[q]} (s)" for q in DISC_LAWS],
        rows,
        "Means over replications; flows that finished under all three queues.",
    )
