"""The tournament's figures and tables (tournament.py runs it): slowdown by flow-size bucket
per discipline, the papers' TCP beside the linux profile (and DCTCP where it runs); RFC
7928's delay-against-goodput scatter (section 2.7, "Trade-off between latency and
throughput"; the delay axis reversed so better is up and right); each metric against load;
the answer to issue 20, rankings, the TCP columns side by side, workloads.
Spreads: bands and whiskers are the seeds' minimum and maximum; tables give mean ± half the
95% CI."""

from __future__ import annotations

import math
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from savanna.reproduce.common import Report
from savanna.reproduce.tournament import (
    DISCS,
    HIGHEST,
    L4S_DISCS,
    L4S_FLOWS,
    L4S_RATE_MBPS,
    MAIN_TCP,
    METRICS,
    NAMES,
    TCP,
    TCP_NAMES,
    WORKLOADS,
    Plan,
    Workloads,
    mean_base_rtt_s,
    ranking,
    tcps_for,
    web_sessions,
)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

TCP_STYLE = {
    "papers": dict(color="#1f5fbf", ls="-", marker="o"),
    "linux": dict(color="#d1495b", ls="--", marker="s"),
    "dctcp": dict(color="#2a9d3f", ls=":", marker="^"),
    "linux_nopace": dict(color="#f0a202", ls="-.", marker="D"),
    "pfabric": dict(color="#7b2cbf", ls="-", marker="P"),
}
LOAD_FIG_METRICS = ("short_slow_mean", "long_goodput_mbps", "qdelay_mean_ms")


def _grid(plt: ModuleType, n: int, ncols: int = 4, sharey: bool = True):
    nrows = math.ceil((n + 1) / ncols)  # one spare panel for the legend
    fig, axes = plt.subplots(nrows, ncols, figsize=(11.0, 2.15 * nrows + 0.6), sharex=True, sharey=sharey)
    return fig, np.atleast_2d(axes)


def _limits(values, log: bool) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if log:
        v = v[v > 0]
    if not len(v):
        return (0.1, 1.0) if log else (0.0, 1.0)
    lo, hi = float(v.min()), float(v.max())
    if log:
        return lo / 1.4, hi * 1.4
    pad = 0.1 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1e-9)
    return lo - pad, hi + pad


def _grid_legend(flat, n: int = len(DISCS), title: str | None = "band: seeds' min-max") -> None:
    """One legend for a grid of `n` per-discipline panels, in its last (spare) panel; the
    panels beyond the disciplines are hidden."""
    for ax in flat[n:]:
        ax.axis("off")
    handles = {}
    for ax in flat[:n]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    flat[-1].legend(list(handles.values()), list(handles), loc="center", title=title, fontsize=8)


def _log_axis(ax) -> None:
    from matplotlib.ticker import FormatStrFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
    ax.tick_params(axis="y", which="minor", labelsize=7)


def bucket_labels(edges) -> list[str]:
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        lo_i = int(lo) + (1 if lo > 1 or out else 0)
        out.append(f">{int(lo):d}" if hi >= 1e8 else (f"{lo_i}-{int(hi)}" if lo_i < int(hi) else f"{int(hi)}"))
    return out


def bucket_figure(plt: ModuleType, b: pd.DataFrame, workload: str, load: float) -> Figure:
    """Mean slowdown per flow-size bucket, one panel per discipline, one line per TCP column
    (mean over seeds of each seed's bucket mean; band: the seeds' min and max); DropTail under
    the linux profile in grey dotted in every other panel."""
    edges = WORKLOADS[workload]["buckets"]
    labels = bucket_labels(edges)
    x = np.arange(len(labels))
    g = b[(b["workload"] == workload) & np.isclose(b["load"], load) & (b["n"] > 0)]
    agg = g.groupby(["disc", "tcp", "bucket"])["slow_mean"].agg(["mean", "min", "max"]).reset_index()
    fig, axes = _grid(plt, len(DISCS))
    flat = axes.ravel()
    ymin, ymax = _limits(agg["mean"], True)
    ref = agg[(agg["disc"] == "droptail") & (agg["tcp"] == "linux")].sort_values("bucket")
    for ax, d in zip(flat, DISCS):
        if d != "droptail" and len(ref):
            ax.plot(ref["bucket"], ref["mean"], color="#8a8a8a", lw=1.1, ls=":", label="DropTail, linux profile")
        for tcp in tcps_for(d):
            t = agg[(agg["disc"] == d) & (agg["tcp"] == tcp)].sort_values("bucket")
            if not len(t):
                continue
            st = TCP_STYLE[tcp]
            ax.fill_between(
                t["bucket"], t["min"].clip(lower=ymin), t["max"].clip(upper=ymax), color=st["color"], alpha=0.12, lw=0
            )
            ax.plot(t["bucket"], t["mean"], label=TCP_NAMES[tcp], ms=3.0, **st)
        ax.set_title(NAMES[d], fontsize=9.0)
        _log_axis(ax)
        ax.set_ylim(ymin, ymax)
    _grid_legend(flat)
    for ax in axes[-1]:
        ax.set_xticks(x, labels, rotation=60, fontsize=7)
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_xlabel("flow size (packets)")
    for ax in axes[:, 0]:
        ax.set_ylabel("mean slowdown", fontsize=8.5)
    return fig


def bucket_figures(report: Report, w: Workloads) -> None:
    for wl in WORKLOADS:
        load = HIGHEST[wl]
        report.figure(
            bucket_figure(report.plt, w.buckets, wl, load),
            f"{wl}-slowdown-buckets",
            f"{WORKLOADS[wl]['title']}: slowdown by flow size at load {load:g}",
            "Mean slowdown (FCT over the ideal: 1.5 base RTT + size at line rate) of the finished flows of each "
            "size bucket, one panel per discipline: the papers' TCP (blue), the linux profile (red dashed) and "
            "DCTCP where the discipline marks ECN (green dotted), the linux profile without pacing (orange "
            "dash-dotted, the answer's disciplines) and pFabric's rate control (purple, pFabric on web search); "
            "grey dotted: DropTail under the linux profile. "
            "Mean over the seeds, band from the lowest to the highest seed. Log scale.",
        )


def scatter_figure_one(plt: ModuleType, s: pd.DataFrame) -> Figure:
    """RFC 7928's scatter: per workload at its highest load, each (discipline, TCP column) at
    (mean queueing delay, long-flow goodput), whiskers the seeds' min-max; the delay axis is
    reversed (RFC 7928 2.7), so the best corner is top right."""
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    fig, axes = plt.subplots(1, len(WORKLOADS), figsize=(13.0, 6.2), layout="constrained")
    cmap = plt.get_cmap("tab20")
    colour = {d: cmap(i % 20) for i, d in enumerate(DISCS)}
    for ax, wl in zip(axes, WORKLOADS):
        g = s[(s["workload"] == wl) & np.isclose(s["load"], HIGHEST[wl])]
        for _, r in g.iterrows():
            st = TCP_STYLE[r["tcp"]]
            xe = [
                [max(r["qdelay_mean_ms"] - r["qdelay_mean_ms_min"], 0)],
                [max(r["qdelay_mean_ms_max"] - r["qdelay_mean_ms"], 0)],
            ]
            ye = [
                [max(r["long_goodput_mbps"] - r["long_goodput_mbps_min"], 0)],
                [max(r["long_goodput_mbps_max"] - r["long_goodput_mbps"], 0)],
            ]
            ax.errorbar(
                [r["qdelay_mean_ms"]],
                [r["long_goodput_mbps"]],
                xerr=np.nan_to_num(xe),
                yerr=np.nan_to_num(ye),
                marker=st["marker"],
                color=colour[r["disc"]],
                ms=6,
                lw=0.7,
                capsize=1.5,
                ls="none",
            )
        ax.set_xscale("log", nonpositive="clip")
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.invert_xaxis()
        ax.set_xlabel("mean queueing delay (ms), reversed")
        ax.set_title(f"{WORKLOADS[wl]['title']}, load {HIGHEST[wl]:g}", fontsize=9)
    axes[0].set_ylabel("long-flow mean goodput (Mb/s)")
    from matplotlib.lines import Line2D

    h = [Line2D([], [], color=colour[d], marker="o", ls="none", label=NAMES[d]) for d in DISCS]
    h += [Line2D([], [], color="#444444", marker=TCP_STYLE[t]["marker"], ls="none", label=TCP_NAMES[t]) for t in TCP]
    fig.legend(handles=h, loc="outside lower center", ncol=6, fontsize=7.5)
    return fig


def scatter_figure(report: Report, w: Workloads) -> None:
    report.figure(
        scatter_figure_one(report.plt, w.summary),
        "delay-goodput",
        "Queueing delay against long-flow goodput (RFC 7928)",
        "Each discipline (colour) under each TCP column (marker: circle papers' TCP, square linux profile, "
        "triangle DCTCP, diamond linux without pacing, plus pFabric's rate control) at each workload's highest "
        "load: the bottleneck's mean queueing delay (sampled backlog "
        "over the line rate; axis reversed as RFC 7928 section 2.7 draws it) against long flows' mean goodput. "
        "Whiskers: the seeds' min and max.",
    )


def metric_figure(plt: ModuleType, s: pd.DataFrame, workload: str, col: str, label: str, unit: str) -> Figure:
    """Small multiples: one panel per discipline, ``col`` against load for each TCP column
    (line: mean; band: the seeds' min-max, clipped to the axes, which fit the means)."""
    ws = s[s["workload"] == workload]
    fig, axes = _grid(plt, len(DISCS))
    flat = axes.ravel()
    log = col.startswith("short_") or col.startswith("qdelay")
    ymin, ymax = _limits(ws[col], log)
    for ax, d in zip(flat, DISCS):
        for tcp in tcps_for(d):
            g = ws[(ws["disc"] == d) & (ws["tcp"] == tcp)].sort_values("load")
            if not len(g):
                continue
            st = TCP_STYLE[tcp]
            ax.fill_between(
                g["load"],
                g[col + "_min"].clip(lower=ymin),
                g[col + "_max"].clip(upper=ymax),
                color=st["color"],
                alpha=0.12,
                lw=0,
            )
            ax.plot(g["load"], g[col], label=TCP_NAMES[tcp], ms=3.0, **st)
        ax.set_title(NAMES[d], fontsize=9.0)
        if log:
            _log_axis(ax)
        ax.set_ylim(ymin, ymax)
    _grid_legend(flat)
    for ax in axes[-1]:
        ax.set_xlabel("offered load")
        ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"{label} ({unit})" if unit else label, fontsize=8)
    return fig


def load_figure_ids(p: Plan) -> list[str]:
    """The against-load figures: LOAD_FIG_METRICS for each workload run at several loads."""
    return [f"{wl}-{col}" for wl in WORKLOADS if len(p.loads(wl)) > 1 for col in LOAD_FIG_METRICS]


def metric_figures(report: Report, p: Plan, w: Workloads) -> None:
    for wl in WORKLOADS:
        for col, label, unit, _h in METRICS:
            if f"{wl}-{col}" not in load_figure_ids(p):
                continue
            report.figure(
                metric_figure(report.plt, w.summary, wl, col, label, unit),
                f"{wl}-{col}",
                f"{WORKLOADS[wl]['title']}: {label} against load",
                f"{label[0].upper() + label[1:]} against offered load, one panel per discipline: papers' TCP "
                "(blue), linux profile (red dashed), DCTCP (green dotted), linux without pacing (orange). "
                "Common buffer "
                f"{w.buffers[wl]} packets. Mean over {p.reps} seeds, band from the lowest to the highest seed.",
            )


def _fmt(x, col: str, digits: int) -> str:
    v, lo, hi = float(x[col]), float(x[col + "_lo"]), float(x[col + "_hi"])
    if not math.isfinite(v):
        return "n/a"
    half = (hi - lo) / 2.0 if math.isfinite(hi) and math.isfinite(lo) else 0.0
    return f"{v:.{digits}g} ± {half:.2g}" if half > 0 else f"{v:.{digits}g}"


def answer_table(report: Report, rows: list[dict]) -> None:
    out = []
    for r in rows:
        if r["tcp"] != "linux":
            continue
        p = next(
            x
            for x in rows
            if x["tcp"] == "papers" and (x["workload"], x["disc"], x["base"]) == (r["workload"], r["disc"], r["base"])
        )
        cell = lambda x: f"{x['mean']:+.1f}% [{x['lo']:+.1f}, {x['hi']:+.1f}]" if x["n"] else "n/a"  # noqa: E731
        out.append(
            [
                r["workload"],
                f"{HIGHEST[r['workload']]:g}",
                NAMES[r["disc"]],
                NAMES[r["base"]],
                cell(p),
                p["word"],
                cell(r),
                r["word"],
            ]
        )
    report.table(
        "Answer to issue 20: do the papers' mechanisms still help short flows under today's TCP?",
        ["workload", "load", "mechanism", "against", "gain, papers' TCP", "", "gain, linux profile", ""],
        out,
        "Gain: 100 (baseline - mechanism) / baseline of the short-flow mean slowdown, per seed, mean [95% CI]. "
        "'helps': the whole CI above 0; 'helps (not significant)': the mean only.",
    )


def ranking_tables(report: Report, s: pd.DataFrame) -> None:
    for w in WORKLOADS:
        for tcp in MAIN_TCP:
            r = ranking(s, w, HIGHEST[w], tcp)
            if not len(r):
                continue
            rows = [
                [i + 1, NAMES[x["disc"]], round(float(x["mean_rank"]), 2)] + [_fmt(x, col, 3) for col, *_ in METRICS]
                for i, x in r.iterrows()
            ]
            report.table(
                f"Ranking: {WORKLOADS[w]['title']}, load {HIGHEST[w]:g}, {TCP_NAMES[tcp]}",
                ["place", "discipline", "mean rank"] + [f"{lab} ({u})" if u else lab for _c, lab, u, _h in METRICS],
                rows,
                "Disciplines ranked on each metric (1 = best) and sorted by their mean rank. Cells: mean ± half the "
                "95% CI over the seeds.",
            )


def tcp_table(report: Report, s: pd.DataFrame) -> None:
    """The TCP columns side by side: short-flow mean slowdown at each workload's highest load."""
    rows = []
    # Per workload, the columns some discipline runs under there.
    cols = [(w, t) for w in WORKLOADS for t in TCP if any(t in tcps_for(d, w) for d in DISCS)]
    for d in DISCS:
        row = [NAMES[d]]
        for w, tcp in cols:
            g = s[(s["workload"] == w) & np.isclose(s["load"], HIGHEST[w]) & (s["disc"] == d)].set_index("tcp")
            row.append(f"{float(g.loc[tcp, 'short_slow_mean']):.3g}" if tcp in g.index else "-")
        rows.append(row)
    report.table(
        "TCP columns: short-flow mean slowdown at the highest load",
        ["discipline"] + [f"{w}: {t}" for w, t in cols],
        rows,
        "Mean over the seeds; '-': the discipline does not run under that column (DCTCP only where it marks ECN; "
        "linux_nopace, the linux profile with pacing = false, for the answer's disciplines; pfabric, pFabric's own "
        "rate control, for pFabric on web search).",
    )


def l4s_table(report: Report, m: pd.DataFrame) -> None:
    """DualPI2 with mixed senders, beside the baselines: per discipline, mean (min-max over
    the seeds) of the per-flow goodputs, their ratio, the queues' delays."""

    def cell(g: pd.DataFrame, col: str, digits: int = 3) -> str:
        x = g[col].to_numpy(dtype=float)
        x = x[np.isfinite(x)]
        if not len(x):
            return "-"
        return f"{x.mean():.{digits}g} ({x.min():.{digits}g}-{x.max():.{digits}g})"

    rows = []
    for d in L4S_DISCS:
        g = m[m["disc"] == d]
        if not len(g):
            continue
        rows.append(
            [NAMES[d]]
            + [cell(g, c) for c in ("classic_mbps", "l4s_mbps", "share", "utilisation", "qdelay_p99_ms")]
            + [cell(g, c, 4) for c in ("l_p99_us", "c_p50_us", "c_p99_us")]
        )
    report.table(
        "DualPI2 with mixed senders",
        [
            "discipline",
            "classic goodput per flow (Mb/s)",
            "L4S goodput per flow (Mb/s)",
            "share (classic / L4S)",
            "utilisation",
            "queueing delay p99 (ms, samples)",
            "L queue sojourn p99 (us)",
            "C queue sojourn p50 (us)",
            "C queue sojourn p99 (us)",
        ],
        rows,
        f"{L4S_FLOWS} classic flows (the linux profile, CUBIC, no ECN) and {L4S_FLOWS} L4S flows (DCTCP, ECT(1)), "
        f"long-lived, at {L4S_RATE_MBPS:g} Mb/s with 20 ms base RTTs; mean (min-max) over the seeds. Sojourns: "
        "DualPI2's own histograms over every packet of the run (upper bin edges); PIE and FQ-CoDel mark ECN.",
    )


def workloads_table(report: Report, p: Plan, w: Workloads) -> None:
    rows = []
    for wl in WORKLOADS:
        sc = w.scenarios[wl]
        t = sc["topology"]
        rate = t["bottleneck_rate_mbps"] if t["type"] == "dumbbell" else t["rate1_mbps"]
        loads = ", ".join(f"{x:g} ({web_sessions(sc, x)} sessions)" if wl == "web" else f"{x:g}" for x in p.loads(wl))
        dur, warm = p.duration(wl)
        rows.append(
            [
                wl,
                WORKLOADS[wl]["scenario"] + (" (10 Gb/s, web-search sizes)" if wl == "websearch" else ""),
                f"{w.buffers[wl]} packets ({rate:g} Mb/s, mean base RTT {1e3 * mean_base_rtt_s(sc):.3g} ms)",
                f"<= {WORKLOADS[wl]['short_max']} / > {WORKLOADS[wl]['long_min']} packets",
                loads,
                f"{dur:g} s ({warm:g} s warm-up)",
                p.reps,
            ]
        )
    report.table(
        "Workloads",
        ["workload", "scenario", "common buffer", "short / long", "loads", "duration", "seeds"],
        rows,
        "Every discipline, load and TCP column runs the same seeds, hence the same flows.",
    )


def intro(p: Plan, w: Workloads, quick: bool, answer: str) -> str:
    text = (
        "Every queue discipline Savanna implements, with the edge classifier it needs, on three common workloads: "
        "FavorQueue's Pareto load sweep (10 Mb/s), Guo & Matta's web mix (8 Mb/s), and the data-centre web-search "
        "flow sizes (DCTCP 2010 / pFabric 2013) at 10 Gb/s with 10-microsecond base RTTs. Each runs under the "
        'papers\' TCP (ns-2 NewReno, IW 2, ITO 3 s), under the linux profile (profile = "linux"), and, where the '
        "discipline marks ECN, under DCTCP; the answer's disciplines also under the linux profile without pacing, "
        "pFabric on web search also under its own rate control, and DualPI2 with classic and L4S senders sharing "
        f"a {L4S_RATE_MBPS:g} Mb/s bottleneck.\n\n"
        "Slowdown is a flow's FCT over its ideal: 1.5 base RTTs (the handshake, then the data's one-way trip) "
        "plus its size sent at the bottleneck's line rate. All disciplines of a workload share one buffer "
        f"({', '.join(f'{k} {v} packets' for k, v in w.buffers.items())}). The claims are our own, declared before "
        "the runs; the verdict rule is docs/reproduce.md's (section Tournament).\n\n" + answer
    )
    if quick:
        text += "\n\nQuick mode: CI-sized runs (short, two seeds); the figures are wide and the verdicts weak."
    return text
