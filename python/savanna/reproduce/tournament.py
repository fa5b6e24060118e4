"""The tournament: ``savanna reproduce tournament`` (issue 6, part 5). Every queue discipline
Savanna implements, each with the edge classifier it needs, on two common workloads and
under two TCP settings, compared on the same flows. None of the four papers made this
comparison; the table is ours.

Workloads (the scenario files are the papers' own, overridden here):

- ``pareto``: Anelli, Diana & Lochin 2013 (FavorQueue), section 4: the 10 Mb/s dumbbell with
  heterogeneous RTTs, Poisson arrivals of Pareto (shape 1.3, mean 30 packets) flows
  (``scenarios/favorqueue-2013-fig03-10mbps.toml``), swept over the load;
- ``web``: Guo & Matta 2001 ("The War Between Mice and Elephants"), Experiment 1: Feldmann
  web sessions of Table II on the Fig. 6 topology with foreground probes
  (``scenarios/guo-matta-2001-fig07.toml``), swept over the number of sessions.

TCP settings: ``papers`` (initial window 2, initial RTO 3 s, as all four papers ran ns-2)
and ``today`` (initial window 10, RFC 6928; initial RTO 1 s, RFC 6298).

Disciplines (docs/disciplines.md), all with one common buffer per workload (one
bandwidth-delay product, thresholds scaled to it; see ``queue_for``): DropTail, RED, RIO-PS
(RIO + threshold classifier, Guo & Matta 2001), FavorQueue, CHOKe, LAS, RuN2C, PRQ and the
RED-based differentiator (each + Tokuda et al. 2002's exact marking classifier), class
isolation by DRR (+ size oracle, Matta & Guo 2000), CoDel (RFC 8289), FQ-CoDel (RFC 8290),
PIE (RFC 8033) and PI (Hollot et al. 2001); and the size-aware schedulers after the papers,
each reading a priority tag: pFabric (Alizadeh et al. 2013), SP-PIFO (Alcoz et al. 2020) and
AIFO (Yu et al. 2021) with the flow's remaining size from an oracle (``remaining``
classifier), PIAS (Bai et al. 2015) with its demotion tagging (``pias`` classifier, default
thresholds).

Claims are our own findings stated with a direction only, declared in ``CLAIMS`` before any
simulation runs, and judged by the rule of docs/reproduce.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from savanna.reproduce import common
from savanna.reproduce.common import Batch, Context, Outcome, Report, load_scenario, override, plot_style, seeds

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

KEY = "tournament"
TITLE = "Tournament: every queue discipline on common workloads, the papers' TCP against today's"
PAPER = "Savanna's own comparison (issue 6, part 5): workloads of Anelli, Diana & Lochin 2013 and Guo & Matta 2001"

SC_PARETO = "favorqueue-2013-fig03-10mbps.toml"
SC_WEB = "guo-matta-2001-fig07.toml"

# Disciplines in display order, with their names in the report.
DISCS = [
    "droptail",
    "red",
    "rio",
    "favorqueue",
    "choke",
    "las",
    "run2c",
    "prq",
    "reddiff",
    "drr",
    "codel",
    "fq_codel",
    "pie",
    "pi",
    "pfabric",
    "pias",
    "sppifo",
    "aifo",
]
# Discipline names as the tables print them: common's, with the classifier each class-aware
# discipline runs with (see CLASSIFIER).
NAMES = {
    **common.NAMES,
    "prq": "PRQ + marking",
    "reddiff": "RED-diff + marking",
    "drr": "DRR isolation + oracle",
    "pfabric": "pFabric + size oracle",
    "pias": "PIAS + tagging",
    "sppifo": "SP-PIFO + size oracle",
    "aifo": "AIFO + size oracle",
}
# The classifier each class-aware discipline runs with (on the edge node before the bottleneck).
CLASSIFIER = {
    "rio": "threshold",
    "prq": "marking",
    "reddiff": "marking",
    "drr": "oracle",
    # The schedulers after the papers read a priority tag: the flow's remaining size (oracle),
    # or PIAS's demotion level (its classifier's default thresholds).
    "pfabric": "remaining",
    "pias": "pias",
    "sppifo": "remaining",
    "aifo": "remaining",
}

TCP = {
    "papers": {"init_cwnd": 2, "ito_s": 3.0},  # ns-2 as the four papers ran it
    "today": {"init_cwnd": 10, "ito_s": 1.0},  # RFC 6928 initial window, RFC 6298 initial RTO
}
TCP_NAMES = {"papers": "papers' TCP (IW 2, ITO 3 s)", "today": "today's TCP (IW 10, ITO 1 s)"}

SHORT_MAX_PKTS = 30  # a short flow has at most 30 packets (Guo & Matta's "short" objects)
LONG_MIN_PKTS = 100  # a long flow has more than 100 packets (FavorQueue's "long", section 5.2)
ORACLE_PKTS = 30  # the DRR oracle's threshold: the short-flow definition above

WORKLOADS = {
    "pareto": {
        "scenario": SC_PARETO,
        "edge": "left",
        "bottleneck": "left->right",
        "title": "Pareto load sweep (FavorQueue 2013, 10 Mb/s dumbbell)",
    },
    "web": {
        "scenario": SC_WEB,
        "edge": "n0",
        "bottleneck": "n3->n1",
        "title": "Web mix (Guo & Matta 2001 Exp. 1, 8 Mb/s)",
    },
}

# Metrics: column, label, unit, whether higher is better.
METRICS = [
    ("short_mean_s", "short-flow mean FCT", "s", False),
    ("short_p99_s", "short-flow 99th-percentile FCT", "s", False),
    ("long_goodput_mbps", "long-flow mean goodput", "Mb/s", True),
    ("jain_long", "Jain's index, long-flow goodput", "", True),
    ("jain_short", "Jain's index, short-flow speed", "", True),
    ("utilisation", "bottleneck utilisation", "", True),
]


# ---------------------------------------------------------------------------------------
# Plan


@dataclass(frozen=True)
class Plan:
    pareto_loads: tuple[float, ...]
    pareto_duration_s: float
    pareto_warmup_s: float
    web_loads: tuple[float, ...]
    web_duration_s: float
    web_warmup_s: float
    reps: int


HI_PARETO = 0.9  # the claims' load on the Pareto sweep (in both modes)
HI_WEB = 0.95  # the claims' load on the web mix (in both modes)


def plan(quick: bool) -> Plan:
    """Full: six Pareto loads of 500 s with 50 s warm-up (FavorQueue's section 4) and five
    web loads of 1000 s with 200 s warm-up, five replications. Quick: three Pareto loads of
    120 s, two web loads of 120 s, two replications (about two to three minutes on 2 cores)."""
    if quick:
        return Plan(
            pareto_loads=(0.5, 0.7, HI_PARETO),
            pareto_duration_s=120.0,
            pareto_warmup_s=20.0,
            web_loads=(0.8, HI_WEB),
            web_duration_s=120.0,
            web_warmup_s=30.0,
            reps=2,
        )
    return Plan(
        pareto_loads=(0.3, 0.5, 0.7, 0.8, HI_PARETO, 0.95),
        pareto_duration_s=500.0,
        pareto_warmup_s=50.0,
        web_loads=(0.5, 0.7, 0.8, 0.9, HI_WEB),
        web_duration_s=1000.0,
        web_warmup_s=200.0,
        reps=5,
    )


# ---------------------------------------------------------------------------------------
# Claims: our own findings, direction only, declared before any result.


def _claims():
    from savanna.report import ClaimSpec as C

    ours = "declared before the runs"
    hp, hw = f"Pareto load {HI_PARETO:g}", f"web load {HI_WEB:g}"
    return [
        C(
            "pareto-fqcodel-fct",
            f"{hp}, papers' TCP: FQ-CoDel's short-flow mean FCT below DropTail's (reduction)",
            None,
            "%",
            ours,
            direction=">",
            source="Fig. short-mean",
        ),
        C(
            "pareto-favorqueue-fct",
            f"{hp}, papers' TCP: FavorQueue's short-flow mean FCT below DropTail's (reduction)",
            None,
            "%",
            ours,
            direction=">",
            source="Fig. short-mean",
        ),
        C(
            "pareto-las-p99",
            f"{hp}, papers' TCP: LAS's short-flow 99th-percentile FCT below DropTail's (reduction)",
            None,
            "%",
            ours,
            direction=">",
            source="Fig. short-p99",
        ),
        C(
            "pareto-today-dt",
            f"{hp}: today's TCP lowers DropTail's short-flow mean FCT (reduction)",
            None,
            "%",
            ours,
            direction=">",
            source="Fig. short-mean",
        ),
        C(
            "pareto-fqcodel-jain",
            f"{hp}, papers' TCP: FQ-CoDel's Jain's index of long-flow goodput above DropTail's (difference)",
            None,
            "",
            ours,
            direction=">",
            source="Fig. jain-long",
        ),
        C(
            "pareto-pie-util",
            f"{hp}, papers' TCP: PIE's utilisation at most 5 points below DropTail's (difference)",
            None,
            "points",
            ours,
            direction=">",
            reference=-5.0,
            source="Fig. utilisation",
        ),
        C(
            "web-riops-red",
            f"{hw}, papers' TCP: RIO-PS's short-flow mean FCT below RED's (reduction; Guo & Matta's "
            "result on the common buffer)",
            None,
            "%",
            ours,
            direction=">",
            source="Fig. short-mean",
        ),
        C(
            "web-fqcodel-riops",
            f"{hw}, papers' TCP: FQ-CoDel's short-flow mean FCT below RIO-PS's (reduction)",
            None,
            "%",
            ours,
            direction=">",
            source="Fig. short-mean",
        ),
        C(
            "web-prq-dt",
            f"{hw}, papers' TCP: PRQ's short-flow mean FCT below DropTail's (reduction)",
            None,
            "%",
            ours,
            direction=">",
            source="Fig. short-mean",
        ),
        C(
            "web-today-red",
            f"{hw}: today's TCP lowers RED's short-flow 99th-percentile FCT (reduction)",
            None,
            "%",
            ours,
            direction=">",
            source="Fig. short-p99",
        ),
    ]


CLAIMS = _claims()


# ---------------------------------------------------------------------------------------
# Scenarios


def mean_base_rtt_s(sc: dict) -> float:
    """Mean base RTT of the workload's forward flows (propagation only), from the topology:
    dumbbell 2 (2 d_access + d_bottleneck) with d_access's mean; guo_matta the four hops
    servers-n0-n3-n1-clients, twice."""
    t = sc["topology"]
    if t["type"] == "dumbbell":
        a = t["access_delay_ms"]
        d = (a["min"] + a["max"]) / 2.0 if isinstance(a, dict) else float(a)
        return 2.0 * (2.0 * d + t["bottleneck_delay_ms"]) / 1000.0
    if t["type"] == "guo_matta":
        one_way = t["server_delay_ms"] + t["core_delay_ms"] + t["bottleneck_delay_ms"] + t.get("client_delay_ms", 0.0)
        return 2.0 * one_way / 1000.0
    raise ValueError(f"topology.type {t['type']!r} is not a tournament workload")


def bottleneck_pkts_s(sc: dict) -> float:
    t = sc["topology"]
    rate = t["bottleneck_rate_mbps"] if t["type"] == "dumbbell" else t["rate1_mbps"]
    return rate * 1e6 / (8.0 * sc["packet_bytes"])


def common_buffer(sc: dict) -> int:
    """The common buffer: one bandwidth-delay product at the mean base RTT, in packets
    (85 for the Pareto dumbbell, 200 for the web mix)."""
    return int(round(bottleneck_pkts_s(sc) * mean_base_rtt_s(sc)))


def queue_for(disc: str, buffer_pkts: int, pkts_s: float) -> dict:
    """The bottleneck queue of ``disc`` with buffer B = ``buffer_pkts``. Thresholds scale
    with B by Guo & Matta's Table III (RED 0.15 B .. 0.5 B; RIO short 0.15 B .. 0.35 B, long
    0.15 B .. 0.5 B; Tokuda's RED-diff 45/150 of 300 is the same 0.15 B .. 0.5 B); CHOKe keeps
    its B/3 .. 2B/3 defaults; DRR splits B as it splits the link (0.4 / 0.6, Matta & Guo);
    PI's reference queue is PIE's 15 ms target in packets at the bottleneck rate. Every
    other parameter is the discipline's default (docs/disciplines.md); ECN is off."""
    b = int(buffer_pkts)
    r = lambda x: round(x, 6)  # noqa: E731
    if disc in (
        "droptail",
        "favorqueue",
        "choke",
        "las",
        "run2c",
        "prq",
        "codel",
        "fq_codel",
        "pie",
        "pfabric",
        "pias",
        "sppifo",
        "aifo",
    ):
        q = {"type": disc, "limit_pkts": b}
    elif disc == "red":
        q = {"type": "red", "limit_pkts": b, "min_th": r(0.15 * b), "max_th": r(0.5 * b)}
    elif disc == "rio":
        q = {
            "type": "rio",
            "limit_pkts": b,
            "min_th_short": r(0.15 * b),
            "max_th_short": r(0.35 * b),
            "min_th_long": r(0.15 * b),
            "max_th_long": r(0.5 * b),
        }
    elif disc == "reddiff":
        q = {"type": "reddiff", "limit_pkts": b, "min_th": r(0.15 * b), "max_th": r(0.5 * b)}
    elif disc == "drr":
        short = max(1, int(round(0.4 * b)))
        q = {"type": "drr", "limit_short_pkts": short, "limit_long_pkts": max(1, b - short)}
    elif disc == "pi":
        q = {"type": "pi", "limit_pkts": b, "q_ref_pkts": r(0.015 * pkts_s)}
    else:
        raise ValueError(f"discipline must be one of {', '.join(DISCS)}, got {disc!r}")
    if disc in ("red", "rio", "reddiff", "codel", "fq_codel", "pie", "pi", "choke"):
        q["ecn"] = False
    return q


def classifier_for(disc: str, node: str) -> dict | None:
    """The edge classifier ``disc`` needs, on ``node`` (None for a class-blind discipline):
    RIO-PS's adaptive threshold with Guo & Matta's Table III values, Tokuda's exact marking
    (K = 7), or Matta & Guo's size oracle at ``ORACLE_PKTS``."""
    kind = CLASSIFIER.get(disc)
    if kind == "threshold":
        return {
            "type": "threshold",
            "node": node,
            "initial_threshold": 20,
            "adaptive": True,
            "slr": 3.0,
            "t_u_s": 1.0,
            "t_c_s": 10.0,
        }
    if kind == "marking":
        return {"type": "marking", "node": node, "k": 7}
    if kind == "oracle":
        return {"type": "oracle", "node": node, "threshold": ORACLE_PKTS}
    if kind in ("remaining", "pias"):
        return {"type": kind, "node": node}
    return None


def web_sessions(sc: dict, load: float) -> int:
    """Sessions of the web block that make web plus foreground traffic offer ``load`` of the
    bottleneck (from the means of Table II's laws, as Guo & Matta's reproduction does)."""
    from savanna.reproduce.guo_matta_2001 import probe_rate_pkts_s, web_rate_pkts_s

    cap = bottleneck_pkts_s(sc)
    web = next(t for t in sc["traffic"] if t["type"] == "web")
    per_session = web_rate_pkts_s({**web, "sessions": 1})
    fg = sum(probe_rate_pkts_s(t) for t in sc["traffic"] if t["type"] == "periodic")
    return max(1, int(round((load * cap - fg) / per_session)))


def scenario(workload: str, disc: str, load: float, tcp: str, seed: int, duration_s: float) -> dict:
    """The scenario of one tournament run."""
    if workload not in WORKLOADS:
        raise ValueError(f"workload must be one of {', '.join(WORKLOADS)}, got {workload!r}")
    if tcp not in TCP:
        raise ValueError(f"tcp must be one of {', '.join(TCP)}, got {tcp!r}")
    w = WORKLOADS[workload]
    sc = load_scenario(w["scenario"])
    b = common_buffer(sc)
    changes = {
        "name": f"tournament-{workload}",
        "seed": int(seed),
        "duration_s": float(duration_s),
        "topology.bottleneck_queue": queue_for(disc, b, bottleneck_pkts_s(sc)),
        "tcp.init_cwnd": TCP[tcp]["init_cwnd"],
        "tcp.ito_s": TCP[tcp]["ito_s"],
        "tcp.ecn": False,
    }
    if workload == "pareto":
        changes["topology.reverse_queue"] = {"type": "droptail", "limit_pkts": b}
        i = next(i for i, t in enumerate(sc["traffic"]) if t.get("name") == "forward")
        changes[f"traffic[{i}].load"] = float(load)
    else:
        i = next(i for i, t in enumerate(sc["traffic"]) if t["type"] == "web")
        changes[f"traffic[{i}].sessions"] = web_sessions(sc, load)
    out = override(sc, changes)
    cl = classifier_for(disc, w["edge"])
    if cl is None:
        out.pop("classifiers", None)
    else:
        out["classifiers"] = [cl]
    return out


# ---------------------------------------------------------------------------------------
# Metrics, one row per run (computed in DuckDB over the results store)


def run_metrics(batch: Batch, workload: str, duration_s: float, warmup_s: float, packet_bytes: int) -> pd.DataFrame:
    """Per run (disc, load, tcp, seed): short flows (<= SHORT_MAX_PKTS packets) started after
    the warm-up and at least a tenth of the run before its end: mean and 99th-percentile FCT
    of those that finished, the share unfinished, and Jain's index of their speed
    base_rtt / FCT; long flows (> LONG_MIN_PKTS packets) started in the same window: mean
    goodput (delivered packets x packet size over the time from the SYN to the last byte,
    or to the end of the run if unfinished) and Jain's index of it; and the bottleneck's
    mean utilisation after the warm-up. Reverse traffic is left out."""
    end = duration_s - 0.1 * duration_s
    keys = "disc, load, tcp, seed"
    window = f"kind = 'tcp' AND source <> 'reverse' AND start_s >= {warmup_s} AND start_s < {end}"
    speed = "(base_rtt_s / fct_s)"
    short = batch.query(
        f"{keys}, count(fct_s) AS n_short, avg(fct_s) AS short_mean_s, "
        f"quantile_cont(fct_s, 0.99) AS short_p99_s, 1.0 - count(fct_s) / count(*) AS short_unfinished, "
        f"sum({speed}) * sum({speed}) / (count(fct_s) * sum({speed} * {speed})) AS jain_short",
        where=f"{window} AND size_pkts <= {SHORT_MAX_PKTS}",
        group_by=keys,
    )
    g = f"(delivered_pkts * {packet_bytes * 8} / 1e6 / coalesce(fct_s, {duration_s} - start_s))"
    long = batch.query(
        f"{keys}, count(*) AS n_long, avg({g}) AS long_goodput_mbps, "
        f"sum({g}) * sum({g}) / (count(*) * sum({g} * {g})) AS jain_long",
        where=f"{window} AND size_pkts > {LONG_MIN_PKTS}",
        group_by=keys,
    )
    util = batch.query(
        f"{keys}, avg(utilisation) AS utilisation",
        table="queues",
        where=f"queue = '{WORKLOADS[workload]['bottleneck']}' AND t_s >= {warmup_s}",
        group_by=keys,
    )
    m = short.merge(long, on=["disc", "load", "tcp", "seed"], how="outer").merge(
        util, on=["disc", "load", "tcp", "seed"], how="outer"
    )
    m.insert(0, "workload", workload)
    return m.sort_values(["disc", "load", "tcp", "seed"]).reset_index(drop=True)


def summarise(m: pd.DataFrame) -> pd.DataFrame:
    """Mean and 95% CI over replications of every metric, per (workload, disc, load, tcp):
    columns ``<metric>``, ``<metric>_lo``, ``<metric>_hi`` and ``n``."""
    from savanna.report import mean_ci

    rows = []
    for key, g in m.groupby(["workload", "disc", "load", "tcp"], sort=True):
        row = dict(zip(["workload", "disc", "load", "tcp"], key))
        row["n"] = int(len(g))
        for col, *_ in METRICS:
            mean, lo, hi, _n = mean_ci(g[col].to_numpy(dtype=float))
            row[col], row[col + "_lo"], row[col + "_hi"] = mean, lo, hi
        rows.append(row)
    return pd.DataFrame(rows)


def ranking(s: pd.DataFrame, workload: str, load: float, tcp: str) -> pd.DataFrame:
    """Disciplines ranked on each metric at one (workload, load, tcp) (1 = best; lower FCT,
    higher goodput, Jain's index and utilisation are better; ties share the lower rank),
    sorted by their mean rank over the metrics."""
    g = s[(s["workload"] == workload) & np.isclose(s["load"], load) & (s["tcp"] == tcp)].set_index("disc")
    ranks = pd.DataFrame(index=g.index)
    for col, _label, _unit, higher in METRICS:
        ranks[col] = g[col].rank(ascending=not higher, method="min")
    g = g.assign(mean_rank=ranks.mean(axis=1), **{f"rank_{c}": ranks[c] for c in ranks.columns})
    return g.sort_values(["mean_rank", "short_mean_s"]).reset_index()


# ---------------------------------------------------------------------------------------
# Figures


TCP_STYLE = {"papers": dict(color="#1f5fbf", ls="-", marker="o"), "today": dict(color="#d1495b", ls="--", marker="s")}


def _limits(values: pd.Series, log: bool) -> tuple[float, float]:
    """Axis limits that fit every mean (not the CIs, which with two replications can be far
    wider than the spread between disciplines)."""
    v = values[np.isfinite(values)]
    if log:
        v = v[v > 0]
    if not len(v):
        return (0.1, 1.0) if log else (0.0, 1.0)
    lo, hi = float(v.min()), float(v.max())
    if log:
        return lo / 1.4, hi * 1.4
    pad = 0.1 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1e-9)
    return lo - pad, hi + pad


def metric_figure(plt: ModuleType, s: pd.DataFrame, workload: str, col: str, label: str, unit: str) -> Figure:
    """Small multiples: one panel per discipline, ``col`` against load for both TCP settings
    (line: mean; band: 95% CI, clipped to the axes, which fit the means); DropTail under the
    papers' TCP in grey in every other panel."""
    ws = s[s["workload"] == workload]
    fig, axes = plt.subplots(5, 4, figsize=(11.0, 10.6), sharex=True, sharey=True)
    flat = axes.ravel()
    log = col.startswith("short_")
    ymin, ymax = _limits(ws[col].astype(float), log)
    ref = ws[(ws["disc"] == "droptail") & (ws["tcp"] == "papers")].sort_values("load")
    for ax, d in zip(flat, DISCS):
        if d != "droptail" and len(ref):
            ax.plot(ref["load"], ref[col], color="#8a8a8a", lw=1.1, ls=":", label="DropTail, papers' TCP")
        for tcp in TCP:
            g = ws[(ws["disc"] == d) & (ws["tcp"] == tcp)].sort_values("load")
            if not len(g):
                continue
            st = TCP_STYLE[tcp]
            ax.fill_between(
                g["load"],
                g[col + "_lo"].clip(lower=ymin),
                g[col + "_hi"].clip(upper=ymax),
                color=st["color"],
                alpha=0.12,
                lw=0,
            )
            ax.plot(g["load"], g[col], label=TCP_NAMES[tcp], **st)
        ax.set_title(NAMES[d], fontsize=9.5)
        if log:
            from matplotlib.ticker import FormatStrFormatter

            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
            ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
            ax.tick_params(axis="y", which="minor", labelsize=7)
        ax.set_ylim(ymin, ymax)
    for ax in flat[len(DISCS) :]:
        ax.axis("off")
    handles, labels = flat[1].get_legend_handles_labels()
    flat[-1].legend(handles, labels, loc="center", title="shaded: 95% CI")
    for ax in axes[-1]:
        ax.set_xlabel("offered load")
        ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"{label} ({unit})" if unit else label, fontsize=8.5)
    return fig


def overview_figure(plt: ModuleType, s: pd.DataFrame, loads: dict[str, float]) -> Figure:
    """Short-flow mean FCT of every discipline at each workload's highest load, both TCP
    settings, sorted by the papers' TCP."""
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 5.0), layout="constrained")
    for ax, (w, load) in zip(axes, loads.items()):
        g = s[(s["workload"] == w) & np.isclose(s["load"], load)]
        order = g[g["tcp"] == "papers"].sort_values("short_mean_s")["disc"].tolist()
        y = np.arange(len(order))
        for k, tcp in enumerate(TCP):
            t = g[g["tcp"] == tcp].set_index("disc").reindex(order)
            err = np.vstack(
                [
                    (t["short_mean_s"] - t["short_mean_s_lo"]).clip(lower=0),
                    (t["short_mean_s_hi"] - t["short_mean_s"]).clip(lower=0),
                ]
            )
            ax.barh(
                y + (k - 0.5) * 0.4,
                t["short_mean_s"],
                height=0.4,
                xerr=np.nan_to_num(err),
                color=TCP_STYLE[tcp]["color"],
                alpha=0.85,
                label=TCP_NAMES[tcp],
                capsize=2,
                error_kw={"elinewidth": 0.8, "ecolor": "#444444"},
            )
        ax.set_yticks(y, [NAMES[d] for d in order])
        ax.invert_yaxis()
        ax.set_xlabel("short-flow mean FCT (s)")
        ax.set_title(f"{WORKLOADS[w]['title']}, load {load:g}", fontsize=9.5)
        ax.grid(axis="y", visible=False)
        top = float(np.nanmax(g["short_mean_s"])) if len(g) else 1.0
        ax.set_xlim(0.0, 1.6 * top)  # whiskers past the longest bar are cut (wide CIs with few replications)
    h, lab = axes[0].get_legend_handles_labels()
    fig.legend(h, lab, loc="outside lower center", ncol=2)
    return fig


# ---------------------------------------------------------------------------------------
# Claims from the per-run metrics


def _paired(
    m: pd.DataFrame, workload: str, load: float, a: tuple[str, str], b: tuple[str, str], col: str, how: str
) -> list[float]:
    """Per seed, ``how`` = 'reduction' (100 (A - B) / A) or 'difference' (B - A) of ``col``
    between A = (disc, tcp) and B = (disc, tcp), at one workload and load."""
    w = m[(m["workload"] == workload) & np.isclose(m["load"], load)]
    xa = w[(w["disc"] == a[0]) & (w["tcp"] == a[1])].set_index("seed")[col]
    xb = w[(w["disc"] == b[0]) & (w["tcp"] == b[1])].set_index("seed")[col]
    out = []
    for seed in sorted(set(xa.index) & set(xb.index)):
        va, vb = float(xa[seed]), float(xb[seed])
        if how == "reduction":
            out.append(100.0 * (va - vb) / va if va > 0 else math.nan)
        else:
            out.append(vb - va)
    return out


def claim_samples(m: pd.DataFrame) -> dict[str, list[float]]:
    P, T = "papers", "today"
    hp, hw = HI_PARETO, HI_WEB
    util = m.assign(util_pts=100.0 * m["utilisation"])
    return {
        "pareto-fqcodel-fct": _paired(m, "pareto", hp, ("droptail", P), ("fq_codel", P), "short_mean_s", "reduction"),
        "pareto-favorqueue-fct": _paired(
            m, "pareto", hp, ("droptail", P), ("favorqueue", P), "short_mean_s", "reduction"
        ),
        "pareto-las-p99": _paired(m, "pareto", hp, ("droptail", P), ("las", P), "short_p99_s", "reduction"),
        "pareto-today-dt": _paired(m, "pareto", hp, ("droptail", P), ("droptail", T), "short_mean_s", "reduction"),
        "pareto-fqcodel-jain": _paired(m, "pareto", hp, ("droptail", P), ("fq_codel", P), "jain_long", "difference"),
        "pareto-pie-util": _paired(util, "pareto", hp, ("droptail", P), ("pie", P), "util_pts", "difference"),
        "web-riops-red": _paired(m, "web", hw, ("red", P), ("rio", P), "short_mean_s", "reduction"),
        "web-fqcodel-riops": _paired(m, "web", hw, ("rio", P), ("fq_codel", P), "short_mean_s", "reduction"),
        "web-prq-dt": _paired(m, "web", hw, ("droptail", P), ("prq", P), "short_mean_s", "reduction"),
        "web-today-red": _paired(m, "web", hw, ("red", P), ("red", T), "short_p99_s", "reduction"),
    }


# ---------------------------------------------------------------------------------------
# The reproduction


def _jobs(ctx: Context, workload: str, loads: Sequence[float], reps: int, duration_s: float):
    jobs = []
    for d in DISCS:
        for load in loads:
            for tcp in TCP:
                for seed in seeds(reps):
                    sc = scenario(workload, d, load, tcp, seed, duration_s)
                    jobs.append(ctx.job(workload, sc, {"disc": d, "load": float(load), "tcp": tcp, "seed": seed}))
    return jobs


def reproduce(ctx: Context) -> Outcome:
    report = Report(CLAIMS, ctx.out_dir, plot_style(height=None, font_size=9.0, legend_font_size=9.0, marker_size=4.0))
    p = plan(ctx.quick)
    w = _workloads(ctx, p)
    (ctx.out_dir / "metrics.csv").write_text(w.metrics.to_csv(index=False), encoding="utf-8")
    overview(report, w.summary)
    metric_figures(report, p, w)
    ranking_tables(report, w.summary)
    tcp_table(report, w.summary)
    workloads_table(report, p, w)
    report.samples.update(claim_samples(w.metrics))
    meta = {
        "paper": PAPER,
        "disciplines": ", ".join(NAMES[d] for d in DISCS),
        "seeds": ", ".join(str(x) for x in seeds(p.reps)),
        "metrics per run": "metrics.csv",
    }
    return Outcome(TITLE, _intro(p, w, ctx.quick), report.figures, report.claims(), report.tables, meta)


HIGHEST = {"pareto": HI_PARETO, "web": HI_WEB}  # the load the overview and the rankings are taken at


@dataclass
class Workloads:
    """Both workloads' scenarios, common buffers, per-run metrics and their summary."""

    pareto: dict
    web: dict
    buffers: dict[str, int]
    metrics: pd.DataFrame
    summary: pd.DataFrame


def _workloads(ctx: Context, p: Plan) -> Workloads:
    sc_p, sc_w = load_scenario(SC_PARETO), load_scenario(SC_WEB)
    buf = {"pareto": common_buffer(sc_p), "web": common_buffer(sc_w)}
    bp = ctx.run("pareto", _jobs(ctx, "pareto", p.pareto_loads, p.reps, p.pareto_duration_s))
    bw = ctx.run("web", _jobs(ctx, "web", p.web_loads, p.reps, p.web_duration_s))
    m = pd.concat(
        [
            run_metrics(bp, "pareto", p.pareto_duration_s, p.pareto_warmup_s, sc_p["packet_bytes"]),
            run_metrics(bw, "web", p.web_duration_s, p.web_warmup_s, sc_w["packet_bytes"]),
        ],
        ignore_index=True,
    )
    return Workloads(sc_p, sc_w, buf, m, summarise(m))


def overview(report: Report, s: pd.DataFrame) -> None:
    """The overview figure: short flows' mean FCT at each workload's highest load."""
    report.figure(
        overview_figure(report.plt, s, HIGHEST),
        "overview",
        "Short-flow mean FCT at the highest load",
        "Mean flow completion time of short flows (at most 30 packets) under every discipline at the highest "
        "load of each workload, with the papers' TCP (blue) and today's (red); bars are sorted by the papers' "
        "TCP, whiskers are 95% CIs over the replications.",
    )


def metric_figures(report: Report, p: Plan, w: Workloads) -> None:
    """One figure per workload and metric: the metric against load, a panel per discipline."""
    for wl in WORKLOADS:
        for col, label, unit, _h in METRICS:
            report.figure(
                metric_figure(report.plt, w.summary, wl, col, label, unit),
                f"{wl}-{col}",
                f"{WORKLOADS[wl]['title']}: {label} against load",
                f"{label[0].upper() + label[1:]} against offered load, one panel per discipline; solid blue: the "
                f"papers' TCP (IW 2, ITO 3 s), dashed red: today's (IW 10, ITO 1 s); grey dotted: DropTail with "
                f"the papers' TCP. Common buffer {w.buffers[wl]} packets. Mean and 95% CI over {p.reps} "
                "replications." + (" Log scale." if col.startswith("short_") else ""),
            )


def ranking_tables(report: Report, s: pd.DataFrame) -> None:
    """The disciplines ranked at each workload's highest load, one table per workload and TCP."""
    for w in WORKLOADS:
        for tcp in TCP:
            r = ranking(s, w, HIGHEST[w], tcp)
            rows = []
            for i, x in r.iterrows():
                rows.append(
                    [
                        i + 1,
                        NAMES[x["disc"]],
                        round(float(x["mean_rank"]), 2),
                        _fmt(x, "short_mean_s", 3),
                        _fmt(x, "short_p99_s", 2),
                        _fmt(x, "long_goodput_mbps", 3),
                        _fmt(x, "jain_long", 3),
                        _fmt(x, "jain_short", 3),
                        _fmt(x, "utilisation", 3),
                    ]
                )
            report.table(
                f"Ranking: {WORKLOADS[w]['title']}, load {HIGHEST[w]:g}, {TCP_NAMES[tcp]}",
                [
                    "place",
                    "discipline",
                    "mean rank",
                    "short mean FCT (s)",
                    "short p99 FCT (s)",
                    "long goodput (Mb/s)",
                    "Jain long",
                    "Jain short",
                    "utilisation",
                ],
                rows,
                "Disciplines ranked on each of the six metrics (1 = best: lower FCT, higher goodput, Jain's index "
                "and utilisation) and sorted by their mean rank. Cells: mean ± half the 95% CI over the replications.",
            )


def tcp_table(report: Report, s: pd.DataFrame) -> None:
    """Today's TCP against the papers': short flows' mean FCT at the highest load."""
    tcp_rows = []
    for d in DISCS:
        row = [NAMES[d]]
        for w in WORKLOADS:
            g = s[(s["workload"] == w) & np.isclose(s["load"], HIGHEST[w]) & (s["disc"] == d)].set_index("tcp")
            a, b = float(g.loc["papers", "short_mean_s"]), float(g.loc["today", "short_mean_s"])
            row += [round(a, 3), round(b, 3), f"{100.0 * (a - b) / a:+.0f}%"]
        tcp_rows.append(row)
    report.table(
        "Today's TCP against the papers': short-flow mean FCT at the highest load",
        [
            "discipline",
            "Pareto: papers' (s)",
            "Pareto: today's (s)",
            "Pareto: reduction",
            "web: papers' (s)",
            "web: today's (s)",
            "web: reduction",
        ],
        tcp_rows,
        "A positive reduction means today's TCP (IW 10, ITO 1 s) finishes short flows faster.",
    )


def workloads_table(report: Report, p: Plan, w: Workloads) -> None:
    """The two workloads' scenarios, buffers, loads, durations and replications."""
    setup = [
        [
            "Pareto",
            SC_PARETO,
            f"{w.buffers['pareto']} packets (10 Mb/s x {1000 * mean_base_rtt_s(w.pareto):.0f} ms mean RTT)",
            ", ".join(f"{x:g}" for x in p.pareto_loads),
            f"{p.pareto_duration_s:g} s ({p.pareto_warmup_s:g} s warm-up)",
            p.reps,
        ],
        [
            "web",
            SC_WEB,
            f"{w.buffers['web']} packets (8 Mb/s x {1000 * mean_base_rtt_s(w.web):.0f} ms RTT)",
            ", ".join(f"{x:g} ({web_sessions(w.web, x)} sessions)" for x in p.web_loads),
            f"{p.web_duration_s:g} s ({p.web_warmup_s:g} s warm-up)",
            p.reps,
        ],
    ]
    report.table(
        "Workloads",
        ["workload", "scenario", "common buffer", "loads", "duration", "replications"],
        setup,
        "Every discipline, load and TCP setting runs the same seeds, hence the same flows.",
    )


def _intro(p: Plan, w: Workloads, quick: bool) -> str:
    intro = (
        "Every queue discipline Savanna implements, with the edge classifier it needs, on two common workloads: "
        "FavorQueue's Pareto load sweep on the 10 Mb/s dumbbell (Anelli, Diana & Lochin 2013) and Guo & Matta's "
        "web mix (2001, Exp. 1). Each runs with the papers' TCP (initial window 2, initial RTO 3 s) and with "
        "today's (initial window 10, initial RTO 1 s). None of the papers compared their mechanisms with each "
        "other or with CoDel, FQ-CoDel, PIE and PI: this comparison is ours.\n\n"
        f"All disciplines of a workload share one buffer, a bandwidth-delay product ({w.buffers['pareto']} packets "
        f"for the Pareto sweep, {w.buffers['web']} for the web mix), with RED-family thresholds scaled to it; ECN is "
        f"off. Short flows have at most {SHORT_MAX_PKTS} packets, long flows more than {LONG_MIN_PKTS}. The claims "
        "are our own expectations, stated with a direction only and declared before the runs; the verdict "
        "rule is that of the paper reproductions (docs/reproduce.md, section Tournament)."
    )
    if quick:
        intro += (
            "\n\nQuick mode: three Pareto loads and two web loads, short runs, two replications. The CIs "
            "are wide and the web mix's long flows are few."
        )
    return intro


def _fmt(x, col: str, digits: int) -> str:
    v, lo, hi = float(x[col]), float(x[col + "_lo"]), float(x[col + "_hi"])
    if not math.isfinite(v):
        return "n/a"
    half = (hi - lo) / 2.0 if math.isfinite(hi) and math.isfinite(lo) else 0.0
    return f"{v:.{digits}f} ± {half:.{digits}f}" if half > 0 else f"{v:.{digits}f}"
