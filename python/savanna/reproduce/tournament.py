"""The tournament: ``savanna reproduce tournament`` (issues 6, 20 and 22). Every queue
discipline Savanna implements, each with the edge classifier it needs, on three common
workloads and under three TCP columns, compared on the same flows. None of the four papers
made this comparison; the table is ours, and so is the answer to issue 20's question: do
FavorQueue, RIO-PS, LAS and class isolation still help short flows under today's TCP?

Workloads (``WORKLOADS``; the scenario files are the papers' own, overridden here):

- ``pareto``: Anelli, Diana & Lochin 2013 (FavorQueue), section 4: the 10 Mb/s dumbbell with
  heterogeneous RTTs and Poisson arrivals of Pareto flows, swept over the load;
- ``web``: Guo & Matta 2001, Experiment 1: Feldmann web sessions on the Fig. 6 topology,
  swept over the number of sessions;
- ``websearch``: the data-centre web-search flow sizes (Alizadeh et al., DCTCP, SIGCOMM
  2010, Fig. 4; tabulated in packets by pFabric, Alizadeh et al., SIGCOMM 2013, whose
  simulations draw from it) on a 10 Gb/s dumbbell with 10-microsecond base RTTs.

TCP columns (``TCP``): ``papers`` (each scenario's ns-2 NewReno, IW 2, ITO 3 s: what the
papers ran), ``linux`` (``profile = "linux"``, whatever that profile holds), and ``dctcp``
(the linux profile with ``cc = "dctcp"``) only where the discipline marks ECN (``ECN``).

Claims (``CLAIMS``) are our own, declared before any simulation runs, each with the rule of
its verdict (docs/reproduce.md, section Tournament). Figures and tables: tournament_figures.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from savanna.reproduce import common
from savanna.reproduce.common import Batch, Context, Outcome, Report, load_scenario, override, plot_style, seeds

KEY = "tournament"
TITLE = "Tournament: every queue discipline on common workloads, the papers' TCP against Linux's and DCTCP"
PAPER = (
    "Savanna's own comparison (issues 6, 20, 22): workloads of Anelli, Diana & Lochin 2013, Guo & Matta 2001 "
    "and the web-search distribution of Alizadeh et al. 2010 / 2013"
)

SC_PARETO = "favorqueue-2013-fig03-10mbps.toml"
SC_WEB = "guo-matta-2001-fig07.toml"

# The disciplines that run under every TCP column, in display order.
BASE_DISCS = [
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
    "fq_pie",
    "cobalt",
]


def mark_k(b: int) -> int:
    """The step-marking threshold K for buffer B: 0.2 B (17 packets for Pareto's 85, 40 for
    the web mix's 200, 20 for the data centre's 100; the DCTCP paper uses 20 at 1 Gb/s)."""
    return max(1, int(round(0.2 * b)))


# The DCTCP column: discipline -> (changes to its queue with buffer B, changes to the linux
# profile's TCP besides cc = "dctcp"). RED, CoDel, FQ-CoDel, PIE, FQ-PIE and COBALT mark by their own rule.
ECN: dict[str, tuple[Callable[[int], dict], dict]] = {
    "step": (lambda b: {"k_pkts": mark_k(b)}, {}),
    "red": (lambda b: {"ecn": True}, {}),
    "codel": (lambda b: {"ecn": True}, {}),
    "fq_codel": (lambda b: {"ecn": True}, {}),
    "pie": (lambda b: {"ecn": True}, {}),
    "fq_pie": (lambda b: {"ecn": True}, {}),
    "cobalt": (lambda b: {"ecn": True}, {}),
    "pias": (lambda b: {"ecn_k_pkts": mark_k(b)}, {}),
    # DualPI2 (RFC 9332): its own PI2 and L4S ramp; the scalable senders mark ECT(1).
    "dualpi2": (lambda b: {}, {"ect1": True}),
}
# Disciplines that only make sense with an ECN sender (step without ECN is DropTail).
ECN_ONLY = ("step",)

DISCS = BASE_DISCS + [d for d in ECN if d not in BASE_DISCS]

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
    "fq_pie": "FQ-PIE",
    "cobalt": "COBALT",
    "step": "step marking (K)",
    "dualpi2": "DualPI2",
}
# The classifier each class-aware discipline runs with (on the edge node before the bottleneck).
CLASSIFIER = {
    "rio": "threshold",
    "prq": "marking",
    "reddiff": "marking",
    "drr": "oracle",
    "pfabric": "remaining",
    "pias": "pias",
    "sppifo": "remaining",
    "aifo": "remaining",
}

# Linux's tcp_rmem maximum (6 MB) in 1500-byte packets: the linux columns' receive window.
LINUX_MAX_WINDOW = 4096
TCP = {
    "papers": None,  # the scenario's own [tcp]: ns-2 NewReno, IW 2, ITO 3 s, as the papers ran it
    "linux": {"profile": "linux", "max_window": LINUX_MAX_WINDOW},
    "dctcp": {"profile": "linux", "cc": "dctcp", "max_window": LINUX_MAX_WINDOW},
    # The linux profile without pacing, for the disciplines of the answer to issue 20 only:
    # it tests the stop-25 reading that pacing is what turns FavorQueue around on the web mix.
    "linux_nopace": {"profile": "linux", "pacing": False, "max_window": LINUX_MAX_WINDOW},
    # pFabric's minimal rate control (cc = "pfabric"), for pFabric on web search only: its
    # window and timeout follow the workload (pfabric_tcp), so the entry is filled per run.
    "pfabric": "per workload",
}
TCP_NAMES = {
    "papers": "papers' TCP (ns-2 NewReno, IW 2)",
    "linux": 'linux profile (profile = "linux")',
    "dctcp": "DCTCP (linux profile, cc = dctcp)",
    "linux_nopace": "linux profile, pacing = false",
    "pfabric": "pFabric's rate control (IW = BDP, RTO = 3 RTT)",
}
# The columns every discipline's rankings and figures are drawn for; the other two run for a
# few disciplines and are reported where their claims are.
MAIN_TCP = ("papers", "linux", "dctcp")
NOPACE_DISCS = ("droptail", "red", "favorqueue", "rio", "las", "drr")
RATE_CONTROL = {"pfabric": ("websearch",)}  # discipline -> workloads of the pfabric column


def tcps_for(disc: str, workload: str | None = None) -> list[str]:
    """The TCP columns ``disc`` runs under (on ``workload``; None: on any workload)."""
    out = [] if disc in ECN_ONLY else ["papers", "linux"]
    out += ["dctcp"] if disc in ECN else []
    out += ["linux_nopace"] if disc in NOPACE_DISCS else []
    if disc in RATE_CONTROL and (workload is None or workload in RATE_CONTROL[disc]):
        out.append("pfabric")
    return out


def pfabric_tcp(sc: dict) -> dict:
    """pFabric's rate control on the workload of ``sc`` (Alizadeh et al. 2013, 4.2): an
    initial window of one bandwidth-delay product at the mean base RTT (rounded up: 9
    packets at 10 Gb/s and 10 us), a fixed timeout of 3 base RTTs (30 us), SACK as the
    paper's senders; the receive window as the linux columns'."""
    rtt = mean_base_rtt_s(sc)
    bdp = max(1, math.ceil(bottleneck_pkts_s(sc) * rtt - 1e-9))
    return {
        "cc": "pfabric",
        "sack": True,
        "init_cwnd": int(bdp),
        "min_rto_s": round(3.0 * rtt, 12),
        "max_window": LINUX_MAX_WINDOW,
    }


# Web-search flow sizes, packets of 1500 B, CDF (DCTCP 2010 Fig. 4 as pFabric's simulations
# tabulate it, CDF_search: 15% of flows at 6 packets, then linear between the points).
WEBSEARCH_CDF = [
    [6, 0.15],
    [13, 0.2],
    [19, 0.3],
    [33, 0.4],
    [53, 0.53],
    [133, 0.6],
    [667, 0.7],
    [1333, 0.8],
    [3333, 0.9],
    [6667, 0.97],
    [20000, 1.0],
]

WORKLOADS = {
    "pareto": {
        "scenario": SC_PARETO,
        "edge": "left",
        "bottleneck": "left->right",
        "title": "Pareto load sweep (FavorQueue 2013, 10 Mb/s dumbbell)",
        "short_max": 30,  # Guo & Matta's short objects
        "long_min": 100,  # FavorQueue's long flows (section 5.2)
        "buckets": [1, 2, 4, 8, 16, 32, 64, 128, 512, 1e9],
    },
    "web": {
        "scenario": SC_WEB,
        "edge": "n0",
        "bottleneck": "n3->n1",
        "title": "Web mix (Guo & Matta 2001 Exp. 1, 8 Mb/s)",
        "short_max": 30,
        "long_min": 100,
        "buckets": [1, 2, 4, 8, 16, 32, 64, 128, 512, 1e9],
    },
    "websearch": {
        "scenario": SC_PARETO,  # its dumbbell, overridden to 10 Gb/s and 10 us (websearch_changes)
        "edge": "left",
        "bottleneck": "left->right",
        "title": "Data-centre web search (10 Gb/s, 10 us RTT)",
        "short_max": 67,  # pFabric's short flows: up to 100 KB
        "long_min": 6667,  # pFabric's large flows: over 10 MB
        "buckets": [1, 7, 14, 34, 67, 134, 667, 1334, 6667, 1e9],
    },
}
WS_RATE_MBPS = 10_000.0
WS_ACCESS_DELAY_MS = 0.001  # RTT = 2 (2 x 1 us + 3 us) = 10 us
WS_BOTTLENECK_DELAY_MS = 0.003
WS_BUFFER_PKTS = 100  # 150 KB: a shallow-buffer switch's port share (the BDP is only 8 packets)

# DualPI2 with mixed senders (RFC 9332): classic and L4S long flows share a 100 Mb/s
# bottleneck, where 1 ms is 8 packets; 20 ms base RTT (2 (2 x 4.5 ms + 1 ms)).
L4S_RATE_MBPS = 100.0
L4S_ACCESS_DELAY_MS = 4.5
L4S_BOTTLENECK_DELAY_MS = 1.0
L4S_FLOWS = 2  # of each kind
L4S_SHARE_MIN = 0.4  # the share claim's bound (docs/reproduce.md says why)
L4S_DISCS = ("droptail", "pie", "fq_codel", "dualpi2")  # dualpi2 judged, the others beside it
L4S_TCP = {
    "classic": {"profile": "linux", "max_window": LINUX_MAX_WINDOW},
    "l4s": {"profile": "linux", "cc": "dctcp", "ect1": True, "max_window": LINUX_MAX_WINDOW},
}

# Metrics: column, label, unit, whether higher is better.
METRICS = [
    ("short_slow_mean", "short-flow mean slowdown", "", False),
    ("short_slow_p99", "short-flow 99th-percentile slowdown", "", False),
    ("short_mean_s", "short-flow mean FCT", "s", False),
    ("long_goodput_mbps", "long-flow mean goodput", "Mb/s", True),
    ("jain_long", "Jain's index, long-flow goodput", "", True),
    ("utilisation", "bottleneck utilisation", "", True),
    ("qdelay_mean_ms", "mean queueing delay", "ms", False),
    ("qdelay_p99_ms", "99th-percentile queueing delay", "ms", False),
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
    ws_loads: tuple[float, ...]
    ws_duration_s: float
    ws_warmup_s: float
    reps: int
    l4s_duration_s: float = 60.0  # the DualPI2 mixed-sender runs (L4S_DISCS)

    def loads(self, w: str) -> tuple[float, ...]:
        return {"pareto": self.pareto_loads, "web": self.web_loads, "websearch": self.ws_loads}[w]

    def duration(self, w: str) -> tuple[float, float]:
        return {
            "pareto": (self.pareto_duration_s, self.pareto_warmup_s),
            "web": (self.web_duration_s, self.web_warmup_s),
            "websearch": (self.ws_duration_s, self.ws_warmup_s),
        }[w]


HI_PARETO = 0.9  # the claims' load on the Pareto sweep (in every mode)
HI_WEB = 0.95  # the claims' load on the web mix
HI_WS = 0.8  # the claims' load on the web-search workload (pFabric's)
HIGHEST = {"pareto": HI_PARETO, "web": HI_WEB, "websearch": HI_WS}


def plan(quick: bool) -> Plan:
    """Full: six Pareto loads of 500 s (50 s warm-up), five web loads of 1000 s (200 s),
    three web-search loads of 2 s (0.2 s), mixed senders for 120 s, five replications.
    Quick (CI-sized): two Pareto loads of 60 s, one web load of 60 s, one web-search load
    of 0.1 s, mixed senders for 20 s, two replications."""
    if quick:
        return Plan((0.5, HI_PARETO), 60.0, 10.0, (HI_WEB,), 60.0, 15.0, (HI_WS,), 0.1, 0.01, 2, 20.0)
    return Plan(
        (0.3, 0.5, 0.7, 0.8, HI_PARETO, 0.95),
        500.0,
        50.0,
        (0.5, 0.7, 0.8, 0.9, HI_WEB),
        1000.0,
        200.0,
        (0.5, 0.7, HI_WS),
        2.0,
        0.2,
        5,
        120.0,
    )


def medium_plan() -> Plan:
    """The run reported in docs/reproduce.md (``SAVANNA_TOURNAMENT=medium savanna reproduce
    tournament``), sized for a shared 2-core machine: Pareto loads 0.5 and 0.9 of 150 s,
    web load 0.95 of 150 s, web-search load 0.8 of 0.3 s, the mixed-sender runs of 60 s,
    three replications."""
    return Plan((0.5, HI_PARETO), 150.0, 20.0, (HI_WEB,), 150.0, 30.0, (HI_WS,), 0.3, 0.03, 3, 60.0)


# ---------------------------------------------------------------------------------------
# Claims: our own, declared before any result, each with its verdict rule.


def _claims():
    from savanna.report import ClaimSpec as C

    ours = "declared before the runs"
    hp, hw, hs = f"Pareto load {HI_PARETO:g}", f"web load {HI_WEB:g}", f"web search load {HI_WS:g}"
    sd = "short-flow mean slowdown"
    red = "(reduction, %)"

    def c(id, text, unit="%", direction=">", reference=0.0, source="Fig. slowdown buckets"):
        return C(id, text, None, unit, ours, direction=direction, reference=reference, source=source)

    return [
        c("pareto-favorqueue-papers", f"{hp}, papers' TCP: FavorQueue's {sd} below DropTail's {red}"),
        c("pareto-favorqueue-linux", f"{hp}, linux profile, FavorQueue's {sd} still below DropTail's {red}"),
        c(
            "pareto-favorqueue-shrinks",
            f"{hp}: FavorQueue's gain over DropTail (reduction of the {sd}) is smaller under the linux profile than "
            "under the papers' TCP (papers' gain minus linux's, points)",
            unit="points",
        ),
        c("pareto-las-linux", f"{hp}, linux profile, LAS's short-flow p99 slowdown below DropTail's {red}"),
        c("pareto-drr-linux", f"{hp}, linux profile, DRR class isolation's {sd} below DropTail's {red}"),
        c(
            "pareto-favorqueue-pias",
            f"{hp}, linux profile, FavorQueue, needing no parameter, comes within 25% of PIAS's {sd} "
            "(100 (PIAS - FavorQueue) / PIAS above -25%)",
            reference=-25.0,
        ),
        c("web-riops-linux", f"{hw}, linux profile, RIO-PS's {sd} below RED's {red}"),
        c("web-favorqueue-linux", f"{hw}, linux profile, FavorQueue's {sd} below DropTail's {red}"),
        c(
            "web-linux-dt",
            f"{hw}: the linux profile lowers DropTail's {sd} against the papers' TCP {red}",
        ),
        c(
            "ws-pfabric-lowest",
            f"{hs}, linux profile, pFabric's {sd} is the lowest of all disciplines (100 (best other - pFabric) / "
            "best other, %)",
        ),
        c(
            "ws-dctcp-qdelay",
            f"{hs}: DCTCP with step marking lowers the mean queueing delay against DropTail under the linux profile "
            f"{red}",
            source="Fig. delay vs goodput",
        ),
        c(
            "ws-dctcp-goodput",
            f"{hs}: DCTCP with step marking keeps long-flow goodput within 10% of linux over DropTail or above "
            "(reduction below 10%)",
            direction="<",
            reference=10.0,
            source="Fig. delay vs goodput",
        ),
        c(
            "pareto-fqcodel-papers",
            f"{hp}, papers' TCP: FQ-CoDel's {sd} below DropTail's {red}",
        ),
        c(
            "pareto-pie-util",
            f"{hp}, papers' TCP: PIE's utilisation at most 5 points below DropTail's (difference, points)",
            unit="points",
            reference=-5.0,
            source="Fig. utilisation",
        ),
        # Declared first on the web-search workload (p99 under 1 ms): its 100-packet buffer
        # at 10 Gb/s holds 0.12 ms, so that claim could not fail. Redeclared on the Pareto
        # mix (10 Mb/s, 85 packets = 102 ms) before its run; 5 ms, since 1 ms is less than
        # one 1500-byte packet's 1.2 ms at 10 Mb/s.
        c(
            "pareto-dualpi2-p99",
            f"{hp}, DualPI2 with the ECT(1) scalable sender (DCTCP column): the bottleneck's 99th-percentile "
            "queueing delay stays under 5 ms (RFC 9332's 1 ms is less than one packet's serialisation at 10 Mb/s)",
            unit="ms",
            direction="<",
            reference=5.0,
            source="Fig. delay vs goodput",
        ),
        # Declared at stop 26, before the runs of the columns they judge.
        c(
            "web-favorqueue-nopace",
            f"{hw}, linux profile with pacing = false: FavorQueue's {sd} below DropTail's {red}",
            source="Table TCP columns",
        ),
        c(
            "web-favorqueue-pacing",
            f"{hw}: FavorQueue's gain over DropTail (reduction of the {sd}) is larger without pacing than with it "
            "(gain without pacing minus gain with, points): pacing is what turns it around",
            unit="points",
            source="Table TCP columns",
        ),
        c(
            "ws-pfabric-rate-control",
            f"{hs}: pFabric's own rate control lowers pFabric's {sd} against the linux profile {red}",
            source="Table TCP columns",
        ),
        c(
            "ws-pfabric-rc-lowest",
            f"{hs}: pFabric with its rate control has the lowest {sd} of every discipline under every TCP column "
            "(100 (best other - pFabric) / best other, %)",
            source="Table TCP columns",
        ),
        c(
            "l4s-mix-p99",
            f"DualPI2 at {L4S_RATE_MBPS:g} Mb/s with {L4S_FLOWS} classic (linux profile, CUBIC) and {L4S_FLOWS} L4S "
            "(DCTCP, ECT(1)) long flows: the L4S queue's 99th-percentile sojourn stays under 1 ms (whole run, us)",
            unit="us",
            direction="<",
            reference=1000.0,
            source="Table DualPI2 with mixed senders",
        ),
        c(
            "l4s-mix-share",
            "DualPI2, the same runs: a classic flow's goodput is at least "
            f"{L4S_SHARE_MIN:g} of an L4S flow's (per-flow goodput ratio, classic over L4S; RFC 9332's k = 2 aims "
            "at equal rates at equal RTTs, and the classic queue's 15 ms target lengthens the classic RTT: "
            "(20 + 1) / (20 + 15) = 0.6 expected at a 20 ms base RTT)",
            unit="ratio",
            reference=L4S_SHARE_MIN,
            source="Table DualPI2 with mixed senders",
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


def bottleneck_rate_bps(sc: dict) -> float:
    t = sc["topology"]
    return (t["bottleneck_rate_mbps"] if t["type"] == "dumbbell" else t["rate1_mbps"]) * 1e6


def bottleneck_pkts_s(sc: dict) -> float:
    return bottleneck_rate_bps(sc) / (8.0 * sc["packet_bytes"])


def common_buffer(sc: dict) -> int:
    """The common buffer: one bandwidth-delay product at the mean base RTT, in packets
    (85 for the Pareto dumbbell, 200 for the web mix), and WS_BUFFER_PKTS in the data
    centre, where the BDP (8 packets) is below any TCP's window."""
    if sc["topology"]["type"] == "dumbbell" and sc["topology"]["bottleneck_rate_mbps"] >= WS_RATE_MBPS:
        return WS_BUFFER_PKTS
    return int(round(bottleneck_pkts_s(sc) * mean_base_rtt_s(sc)))


def base_scenario(workload: str) -> dict:
    """The workload's scenario before the discipline, load, TCP and seed."""
    if workload not in WORKLOADS:
        raise ValueError(f"workload must be one of {', '.join(WORKLOADS)}, got {workload!r}")
    sc = load_scenario(WORKLOADS[workload]["scenario"])
    if workload != "websearch":
        return sc
    size = {"dist": "empirical", "points": WEBSEARCH_CDF}
    return override(
        sc,
        {
            "topology.bottleneck_rate_mbps": WS_RATE_MBPS,
            "topology.access_rate_mbps": WS_RATE_MBPS,
            "topology.access_delay_ms": WS_ACCESS_DELAY_MS,
            "topology.bottleneck_delay_ms": WS_BOTTLENECK_DELAY_MS,
            "traffic[0].size": size,
            "traffic[1].size": size,
            "sampling.interval_s": 0.001,
        },
    )


def queue_for(disc: str, buffer_pkts: int, pkts_s: float, ecn: bool = False) -> dict:
    """The bottleneck queue of ``disc`` with buffer B = ``buffer_pkts``. Thresholds scale
    with B by Guo & Matta's Table III (RED 0.15 B .. 0.5 B; RIO short 0.15 B .. 0.35 B, long
    0.15 B .. 0.5 B; Tokuda's RED-diff 45/150 of 300 is the same 0.15 B .. 0.5 B); CHOKe keeps
    its B/3 .. 2B/3 defaults; DRR splits B as it splits the link (0.4 / 0.6, Matta & Guo);
    PI's reference queue is PIE's 15 ms target in packets at the bottleneck rate. Every
    other parameter is the discipline's default (docs/disciplines.md). ECN is off unless
    ``ecn`` (the DCTCP column), which applies the discipline's ``ECN`` entry."""
    b = int(buffer_pkts)
    r = lambda x: round(x, 6)  # noqa: E731
    if disc not in DISCS:
        raise ValueError(f"discipline must be one of {', '.join(DISCS)}, got {disc!r}")
    if disc == "red":
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
        q = {"type": disc, "limit_pkts": b}
    if disc in ("red", "rio", "reddiff", "codel", "fq_codel", "fq_pie", "cobalt", "pie", "pi", "choke"):
        q["ecn"] = False
    if ecn:
        if disc not in ECN:
            raise ValueError(f"discipline {disc!r} marks no ECN; the DCTCP column has {', '.join(ECN)}")
        q.update(ECN[disc][0](b))
    elif disc in ECN_ONLY:
        raise ValueError(f"discipline {disc!r} runs only in the DCTCP column")
    return q


def classifier_for(disc: str, node: str) -> dict | None:
    """The edge classifier ``disc`` needs, on ``node`` (None for a class-blind discipline):
    RIO-PS's adaptive threshold with Guo & Matta's Table III values, Tokuda's exact marking
    (K = 7), Matta & Guo's size oracle at 30 packets, or the schedulers' priority tags."""
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
        return {"type": "oracle", "node": node, "threshold": 30}
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
    if tcp not in TCP:
        raise ValueError(f"tcp must be one of {', '.join(TCP)}, got {tcp!r}")
    sc = base_scenario(workload)
    w = WORKLOADS[workload]
    b = common_buffer(sc)
    changes = {
        "name": f"tournament-{workload}",
        "seed": int(seed),
        "duration_s": float(duration_s),
        "topology.bottleneck_queue": queue_for(disc, b, bottleneck_pkts_s(sc), ecn=tcp == "dctcp"),
    }
    if workload in ("pareto", "websearch"):
        changes["topology.reverse_queue"] = {"type": "droptail", "limit_pkts": b}
        i = next(i for i, t in enumerate(sc["traffic"]) if t.get("name") == "forward")
        changes[f"traffic[{i}].load"] = float(load)
    else:
        i = next(i for i, t in enumerate(sc["traffic"]) if t["type"] == "web")
        changes[f"traffic[{i}].sessions"] = web_sessions(sc, load)
    out = override(sc, changes)
    if tcp not in tcps_for(disc, workload):
        raise ValueError(f"discipline {disc!r} does not run under the {tcp!r} column on {workload!r}")
    if TCP[tcp] is None:
        out["tcp"] = {**out["tcp"], "ecn": False}
    elif tcp == "pfabric":
        out["tcp"] = pfabric_tcp(out)
    else:
        out["tcp"] = {**TCP[tcp], **(ECN[disc][1] if tcp == "dctcp" else {})}
    cl = classifier_for(disc, w["edge"])
    if cl is None:
        out.pop("classifiers", None)
    else:
        out["classifiers"] = [cl]
    return out


def l4s_scenario(disc: str, seed: int, duration_s: float) -> dict:
    """DualPI2's mixed-sender run (or a baseline discipline's): L4S_FLOWS classic flows
    (the linux profile: CUBIC, no ECN) and L4S_FLOWS L4S flows (DCTCP sending ECT(1)),
    long-lived, on a dumbbell at L4S_RATE_MBPS with 20 ms base RTTs. DualPI2 runs with RFC
    9332's defaults (its 10 000-packet limit, as Linux's); the baselines get that limit
    too, PIE and FQ-CoDel with ECN on (so DCTCP is marked, not dropped)."""
    if disc not in L4S_DISCS:
        raise ValueError(f"discipline must be one of {', '.join(L4S_DISCS)}, got {disc!r}")
    q: dict = {"type": disc, "limit_pkts": 10_000}
    if disc in ("pie", "fq_codel"):
        q["ecn"] = True
    return {
        "name": "tournament-l4smix",
        "seed": int(seed),
        "duration_s": float(duration_s),
        "topology": {
            "type": "dumbbell",
            "pairs": 2 * L4S_FLOWS,
            "access_rate_mbps": 10.0 * L4S_RATE_MBPS,
            "access_delay_ms": L4S_ACCESS_DELAY_MS,
            "bottleneck_rate_mbps": L4S_RATE_MBPS,
            "bottleneck_delay_ms": L4S_BOTTLENECK_DELAY_MS,
            "bottleneck_queue": q,
        },
        "tcp": dict(L4S_TCP["classic"]),
        "traffic": [
            {
                "type": "persistent",
                "name": kind,
                "count": L4S_FLOWS,
                "from": [f"src{i}" for i in range(k * L4S_FLOWS, (k + 1) * L4S_FLOWS)],
                "to": [f"dst{i}" for i in range(k * L4S_FLOWS, (k + 1) * L4S_FLOWS)],
                "tcp": tcp,
            }
            for k, (kind, tcp) in enumerate(L4S_TCP.items())
        ],
        "sampling": {"interval_s": 0.01},
    }


def l4s_metrics(batch: Batch, duration_s: float) -> pd.DataFrame:
    """Per mixed-sender run (disc, seed): mean per-flow goodput of the classic and of the
    L4S flows over the run (delivered packets x 1500 B / duration), their ratio (classic
    over L4S), the bottleneck's utilisation and 99th-percentile queueing delay (samples),
    and DualPI2's L and C queue sojourn quantiles over the run (NaN for the others)."""
    g = f"delivered_pkts * 1500 * 8 / 1e6 / {duration_s}"
    fl = batch.query(
        f"disc, seed, avg(CASE WHEN source = 'classic' THEN {g} END) AS classic_mbps, "
        f"avg(CASE WHEN source = 'l4s' THEN {g} END) AS l4s_mbps",
        where="kind = 'tcp'",
        group_by="disc, seed",
    )
    ms_per_pkt = 1000.0 * 1500 * 8 / (L4S_RATE_MBPS * 1e6)
    qs = batch.query(
        f"disc, seed, avg(utilisation) AS utilisation, quantile_cont(len_pkts, 0.99) * {ms_per_pkt} AS qdelay_p99_ms",
        table="queues",
        where="queue = 'left->right' AND t_s >= 1.0",
        group_by="disc, seed",
    )
    m = fl.merge(qs, on=["disc", "seed"], how="outer")
    sq = batch.query("*", table="summary_queues", where="name = 'left->right'")
    cols = ["l_pkts", "l_p50_us", "l_p99_us", "c_pkts", "c_p50_us", "c_p99_us"]
    for col in cols:  # absent from the store when no DualPI2 ran
        if f"dualpi2_{col}" not in sq.columns:
            sq[f"dualpi2_{col}"] = math.nan
    sq = sq[["disc", "seed"] + [f"dualpi2_{c}" for c in cols]].rename(columns=lambda c: c.removeprefix("dualpi2_"))
    m = m.merge(sq, on=["disc", "seed"], how="left")
    m["share"] = m["classic_mbps"] / m["l4s_mbps"]
    return m.sort_values(["disc", "seed"]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------
# Metrics, one row per run (computed in DuckDB over the results store)


def ideal_fct_sql(packet_bytes: int, rate_bps: float) -> str:
    """The ideal FCT of a flow (SQL over the flows table): its SYN's round trip, then its
    data's one-way trip, plus its size sent at the bottleneck's line rate,
    1.5 base_rtt + size_pkts x packet bits / rate (every column runs the handshake; FCT is
    first SYN to last byte)."""
    return f"(1.5 * base_rtt_s + size_pkts * {packet_bytes * 8} / {rate_bps})"


def run_metrics(batch: Batch, workload: str, duration_s: float, warmup_s: float, sc: dict) -> pd.DataFrame:
    """Per run (disc, load, tcp, seed): short flows (at most ``short_max`` packets) started
    after the warm-up and at least a tenth of the run before its end: mean and 99th
    percentile of FCT and of slowdown (FCT / ideal_fct) over those that finished, the share
    unfinished; long flows (over ``long_min`` packets) in the same window: mean goodput
    (delivered packets x packet size over the time from the SYN to the last byte, or to the
    end of the run if unfinished) and Jain's index of it; the bottleneck's mean utilisation
    and its queueing delay (sampled backlog / line rate: mean and 99th percentile of the
    samples) after the warm-up. Reverse traffic is left out."""
    w = WORKLOADS[workload]
    pb = sc["packet_bytes"]
    end = duration_s - 0.1 * duration_s
    keys = "disc, load, tcp, seed"
    window = f"kind = 'tcp' AND source <> 'reverse' AND start_s >= {warmup_s} AND start_s < {end}"
    slow = f"(fct_s / {ideal_fct_sql(pb, bottleneck_rate_bps(sc))})"
    short = batch.query(
        f"{keys}, count(fct_s) AS n_short, avg(fct_s) AS short_mean_s, "
        f"quantile_cont(fct_s, 0.99) AS short_p99_s, 1.0 - count(fct_s) / count(*) AS short_unfinished, "
        f"avg({slow}) AS short_slow_mean, quantile_cont({slow}, 0.99) AS short_slow_p99",
        where=f"{window} AND size_pkts <= {w['short_max']}",
        group_by=keys,
    )
    g = f"(delivered_pkts * {pb * 8} / 1e6 / coalesce(fct_s, {duration_s} - start_s))"
    long = batch.query(
        f"{keys}, count(*) AS n_long, avg({g}) AS long_goodput_mbps, "
        f"sum({g}) * sum({g}) / (count(*) * sum({g} * {g})) AS jain_long",
        where=f"{window} AND size_pkts > {w['long_min']}",
        group_by=keys,
    )
    ms_per_pkt = 1000.0 / bottleneck_pkts_s(sc)
    util = batch.query(
        f"{keys}, avg(utilisation) AS utilisation, avg(len_pkts) * {ms_per_pkt} AS qdelay_mean_ms, "
        f"quantile_cont(len_pkts, 0.99) * {ms_per_pkt} AS qdelay_p99_ms",
        table="queues",
        where=f"queue = '{w['bottleneck']}' AND t_s >= {warmup_s}",
        group_by=keys,
    )
    on = ["disc", "load", "tcp", "seed"]
    m = short.merge(long, on=on, how="outer").merge(util, on=on, how="outer")
    m.insert(0, "workload", workload)
    return m.sort_values(on).reset_index(drop=True)


def bucket_metrics(batch: Batch, workload: str, duration_s: float, warmup_s: float, sc: dict) -> pd.DataFrame:
    """Per run and flow-size bucket (``WORKLOADS[w]['buckets']``, edges in packets, a bucket
    is (lo, hi]): the number of finished flows and their mean slowdown."""
    w = WORKLOADS[workload]
    edges = w["buckets"]
    end = duration_s - 0.1 * duration_s
    window = f"kind = 'tcp' AND source <> 'reverse' AND start_s >= {warmup_s} AND start_s < {end}"
    case = " ".join(f"WHEN size_pkts <= {hi:g} THEN {i}" for i, hi in enumerate(edges[1:]))
    slow = f"(fct_s / {ideal_fct_sql(sc['packet_bytes'], bottleneck_rate_bps(sc))})"
    b = batch.query(
        f"disc, load, tcp, seed, (CASE {case} END) AS bucket, count(fct_s) AS n, avg({slow}) AS slow_mean",
        where=f"{window} AND fct_s IS NOT NULL",
        group_by="disc, load, tcp, seed, bucket",
    )
    b.insert(0, "workload", workload)
    return b


def summarise(m: pd.DataFrame) -> pd.DataFrame:
    """Mean and 95% CI over replications of every metric, per (workload, disc, load, tcp):
    columns ``<metric>``, ``<metric>_lo``, ``<metric>_hi``, ``<metric>_min``/``_max`` (the
    spread of the seeds) and ``n``."""
    from savanna.report import mean_ci

    rows = []
    for key, g in m.groupby(["workload", "disc", "load", "tcp"], sort=True):
        row = dict(zip(["workload", "disc", "load", "tcp"], key))
        row["n"] = int(len(g))
        for col, *_ in METRICS:
            x = g[col].to_numpy(dtype=float)
            mean, lo, hi, _n = mean_ci(x)
            row[col], row[col + "_lo"], row[col + "_hi"] = mean, lo, hi
            fin = x[np.isfinite(x)]
            row[col + "_min"] = float(fin.min()) if len(fin) else math.nan
            row[col + "_max"] = float(fin.max()) if len(fin) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def ranking(s: pd.DataFrame, workload: str, load: float, tcp: str) -> pd.DataFrame:
    """Disciplines ranked on each metric at one (workload, load, tcp) (1 = best; lower FCT,
    slowdown and delay, higher goodput, Jain's index and utilisation are better; ties share
    the lower rank), sorted by their mean rank over the metrics."""
    g = s[(s["workload"] == workload) & np.isclose(s["load"], load) & (s["tcp"] == tcp)].set_index("disc")
    ranks = pd.DataFrame(index=g.index)
    for col, _label, _unit, higher in METRICS:
        ranks[col] = g[col].rank(ascending=not higher, method="min")
    g = g.assign(mean_rank=ranks.mean(axis=1), **{f"rank_{c}": ranks[c] for c in ranks.columns})
    return g.sort_values(["mean_rank", "short_slow_mean"]).reset_index()


# ---------------------------------------------------------------------------------------
# Claims from the per-run metrics


def _per_seed(m: pd.DataFrame, workload: str, load: float, disc: str, tcp: str, col: str) -> pd.Series:
    w = m[(m["workload"] == workload) & np.isclose(m["load"], load)]
    return w[(w["disc"] == disc) & (w["tcp"] == tcp)].set_index("seed")[col].astype(float)


def _paired(
    m: pd.DataFrame, workload: str, load: float, a: tuple[str, str], b: tuple[str, str], col: str, how: str
) -> list[float]:
    """Per seed, ``how`` = 'reduction' (100 (A - B) / A) or 'difference' (B - A) of ``col``
    between A = (disc, tcp) and B = (disc, tcp), at one workload and load."""
    xa = _per_seed(m, workload, load, *a, col)
    xb = _per_seed(m, workload, load, *b, col)
    out = []
    for seed in sorted(set(xa.index) & set(xb.index)):
        va, vb = float(xa[seed]), float(xb[seed])
        if how == "reduction":
            out.append(100.0 * (va - vb) / va if va > 0 else math.nan)
        else:
            out.append(vb - va)
    return out


def gain(
    m: pd.DataFrame, workload: str, load: float, disc: str, tcp: str, base: str = "droptail", col="short_slow_mean"
):
    """Per seed, 100 (base - disc) / base of ``col`` under ``tcp``: disc's gain over base."""
    return _paired(m, workload, load, (base, tcp), (disc, tcp), col, "reduction")


def _lowest(m: pd.DataFrame, workload: str, load: float, disc: str, tcp: str, col: str) -> list[float]:
    """Per seed, 100 (best other - disc) / best other of ``col`` (lower is better) among the
    disciplines run under ``tcp``: positive when ``disc`` is the lowest of all."""
    w = m[(m["workload"] == workload) & np.isclose(m["load"], load) & (m["tcp"] == tcp)]
    out = []
    for _seed, g in w.groupby("seed", sort=True):
        g = g.set_index("disc")[col].astype(float)
        if disc not in g.index:
            continue
        best = float(g.drop(disc).min())
        out.append(100.0 * (best - float(g[disc])) / best if best > 0 else math.nan)
    return out


def _lowest_overall(m: pd.DataFrame, workload: str, load: float, disc: str, tcp: str, col: str) -> list[float]:
    """Per seed, 100 (best other - A) / best other of ``col`` (lower is better), A = (disc,
    tcp), the others every (discipline, TCP column) run at that workload and load."""
    w = m[(m["workload"] == workload) & np.isclose(m["load"], load)]
    out = []
    for _seed, g in w.groupby("seed", sort=True):
        g = g.set_index(["disc", "tcp"])[col].astype(float)
        if (disc, tcp) not in g.index:
            continue
        best = float(g.drop((disc, tcp)).min())
        out.append(100.0 * (best - float(g[(disc, tcp)])) / best if best > 0 else math.nan)
    return out


def claim_samples(m: pd.DataFrame, l4s: pd.DataFrame | None = None) -> dict[str, list[float]]:
    P, L = "papers", "linux"
    hp, hw, hs = HI_PARETO, HI_WEB, HI_WS
    fq_p, fq_l = gain(m, "pareto", hp, "favorqueue", P), gain(m, "pareto", hp, "favorqueue", L)
    util = m.assign(util_pts=100.0 * m["utilisation"])
    out = {
        "pareto-favorqueue-papers": fq_p,
        "pareto-favorqueue-linux": fq_l,
        "pareto-favorqueue-shrinks": [a - b for a, b in zip(fq_p, fq_l)],
        "pareto-las-linux": gain(m, "pareto", hp, "las", L, col="short_slow_p99"),
        "pareto-drr-linux": gain(m, "pareto", hp, "drr", L),
        "pareto-favorqueue-pias": gain(m, "pareto", hp, "favorqueue", L, base="pias"),
        "web-riops-linux": gain(m, "web", hw, "rio", L, base="red"),
        "web-favorqueue-linux": gain(m, "web", hw, "favorqueue", L),
        "web-linux-dt": _paired(m, "web", hw, ("droptail", P), ("droptail", L), "short_slow_mean", "reduction"),
        "ws-pfabric-lowest": _lowest(m, "websearch", hs, "pfabric", L, "short_slow_mean"),
        "ws-dctcp-qdelay": _paired(
            m, "websearch", hs, ("droptail", L), ("step", "dctcp"), "qdelay_mean_ms", "reduction"
        ),
        "ws-dctcp-goodput": _paired(
            m, "websearch", hs, ("droptail", L), ("step", "dctcp"), "long_goodput_mbps", "reduction"
        ),
        "pareto-fqcodel-papers": gain(m, "pareto", hp, "fq_codel", P),
        "pareto-pie-util": _paired(util, "pareto", hp, ("droptail", P), ("pie", P), "util_pts", "difference"),
        "pareto-dualpi2-p99": list(_per_seed(m, "pareto", hp, "dualpi2", "dctcp", "qdelay_p99_ms")),
    }
    fq_np = gain(m, "web", hw, "favorqueue", "linux_nopace")
    fq_wl = gain(m, "web", hw, "favorqueue", L)
    out["web-favorqueue-nopace"] = fq_np
    out["web-favorqueue-pacing"] = [a - b for a, b in zip(fq_np, fq_wl)]
    out["ws-pfabric-rate-control"] = _paired(
        m, "websearch", hs, ("pfabric", L), ("pfabric", "pfabric"), "short_slow_mean", "reduction"
    )
    out["ws-pfabric-rc-lowest"] = _lowest_overall(m, "websearch", hs, "pfabric", "pfabric", "short_slow_mean")
    d = l4s[l4s["disc"] == "dualpi2"] if l4s is not None else pd.DataFrame(columns=["l_p99_us", "share"])
    out["l4s-mix-p99"] = [float(x) for x in d["l_p99_us"]]
    out["l4s-mix-share"] = [float(x) for x in d["share"]]
    return out


# The answer to issue 20: do these still help short flows under today's TCP?
ANSWER = [
    ("favorqueue", "droptail"),
    ("rio", "droptail"),
    ("rio", "red"),
    ("las", "droptail"),
    ("drr", "droptail"),
]


def answer_rows(m: pd.DataFrame) -> list[dict]:
    """Per (workload at its highest load, mechanism, baseline, TCP column papers/linux): the
    mean and 95% CI of the per-seed reduction of the short-flow mean slowdown against the
    baseline, and a word for it: ``helps`` (whole CI above 0), ``helps (not significant)``
    (mean above 0), ``does not help``."""
    from savanna.report import mean_ci

    rows = []
    for w in WORKLOADS:
        for disc, base in ANSWER:
            for tcp in ("papers", "linux"):
                mean, lo, hi, n = mean_ci(gain(m, w, HIGHEST[w], disc, tcp, base=base))
                word = (
                    "helps"
                    if n and lo > 0
                    else "helps (not significant)"
                    if n and mean > 0
                    else "does not help"
                    if n
                    else "n/a"
                )
                rows.append(
                    {"workload": w, "disc": disc, "base": base, "tcp": tcp, "mean": mean, "lo": lo, "hi": hi, "n": n}
                    | {"word": word}
                )
    return rows


def answer_text(rows: list[dict]) -> str:
    """Issue 20's answer in plain words, from ``answer_rows`` (no figure typed in)."""
    parts = []
    for disc in dict.fromkeys(d for d, _b in ANSWER):
        bits = []
        for r in rows:
            if r["disc"] != disc or r["tcp"] != "linux" or not r["n"]:
                continue
            p = next(x for x in rows if x["disc"] == disc and x["base"] == r["base"] and x["workload"] == r["workload"])
            p_txt = f"{p['mean']:+.0f}%" if p["n"] else "n/a"
            bits.append(
                f"{r['workload']} {HIGHEST[r['workload']]:g} vs {NAMES[r['base']]}: {r['word']}, "
                f"{r['mean']:+.0f}% [{r['lo']:+.0f}, {r['hi']:+.0f}] (papers' TCP {p_txt})"
            )
        if bits:
            parts.append(f"{NAMES[disc]} under the linux profile, " + "; ".join(bits) + ".")
    return (
        "Answer to issue 20 (do FavorQueue, RIO-PS, LAS and class isolation still help short flows under "
        "today's TCP?), as the reduction of the short-flow mean slowdown against the baseline, mean [95% CI] "
        "over the seeds: " + " ".join(parts)
    )


# ---------------------------------------------------------------------------------------
# The reproduction


def _jobs(ctx: Context, workload: str, loads: Sequence[float], reps: int, duration_s: float):
    jobs = []
    for d in DISCS:
        for load in loads:
            for tcp in tcps_for(d, workload):
                for seed in seeds(reps):
                    sc = scenario(workload, d, load, tcp, seed, duration_s)
                    jobs.append(ctx.job(workload, sc, {"disc": d, "load": float(load), "tcp": tcp, "seed": seed}))
    return jobs


@dataclass
class Workloads:
    """The workloads' scenarios, common buffers, per-run metrics, per-bucket slowdowns and
    the metrics' summary."""

    scenarios: dict[str, dict]
    buffers: dict[str, int]
    metrics: pd.DataFrame
    buckets: pd.DataFrame
    summary: pd.DataFrame


def _workloads(ctx: Context, p: Plan) -> Workloads:
    scs = {w: base_scenario(w) for w in WORKLOADS}
    ms, bs = [], []
    for w in WORKLOADS:
        dur, warm = p.duration(w)
        batch = ctx.run(w, _jobs(ctx, w, p.loads(w), p.reps, dur))
        ms.append(run_metrics(batch, w, dur, warm, scs[w]))
        bs.append(bucket_metrics(batch, w, dur, warm, scs[w]))
    m = pd.concat(ms, ignore_index=True)
    return Workloads(
        scs, {w: common_buffer(s) for w, s in scs.items()}, m, pd.concat(bs, ignore_index=True), summarise(m)
    )


def reproduce(ctx: Context) -> Outcome:
    import os

    from savanna.reproduce import tournament_emu as E
    from savanna.reproduce import tournament_figures as F

    # The emulated column (tournament_emu.py) runs only when asked for, as root; it runs
    # first, so the simulations of this reproduction do not compete with its routers.
    emu_on, emu_why = E.status()
    specs = CLAIMS + (E.CLAIMS if emu_on else [])
    report = Report(specs, ctx.out_dir, plot_style(height=None, font_size=9.0, legend_font_size=9.0, marker_size=4.0))
    p = medium_plan() if (not ctx.quick and os.environ.get("SAVANNA_TOURNAMENT") == "medium") else plan(ctx.quick)
    emu = E.run(ctx) if emu_on else None
    w = _workloads(ctx, p)
    l4s_jobs = [
        ctx.job("l4smix", l4s_scenario(d, seed, p.l4s_duration_s), {"disc": d, "seed": seed})
        for d in L4S_DISCS
        for seed in seeds(p.reps)
    ]
    l4s = l4s_metrics(ctx.run("l4smix", l4s_jobs), p.l4s_duration_s)
    (ctx.out_dir / "l4s.csv").write_text(l4s.to_csv(index=False), encoding="utf-8")
    (ctx.out_dir / "metrics.csv").write_text(w.metrics.to_csv(index=False), encoding="utf-8")
    (ctx.out_dir / "buckets.csv").write_text(w.buckets.to_csv(index=False), encoding="utf-8")
    ans = answer_rows(w.metrics)
    F.bucket_figures(report, w)
    F.scatter_figure(report, w)
    F.metric_figures(report, p, w)
    F.answer_table(report, ans)
    F.ranking_tables(report, w.summary)
    F.tcp_table(report, w.summary)
    F.l4s_table(report, l4s)
    F.workloads_table(report, p, w)
    report.samples.update(claim_samples(w.metrics, l4s))
    if emu is not None:
        E.table(report, emu)
        E.figures(report, emu)
        report.samples.update(E.claim_samples(emu.metrics))
        note = E.degraded_note(emu.accuracy)
        if note:
            report.notes.update({c.id: note for c in E.CLAIMS})
    meta = {
        "paper": PAPER,
        "disciplines": ", ".join(NAMES[d] for d in DISCS),
        "seeds": ", ".join(str(x) for x in seeds(p.reps)),
        "metrics per run": "metrics.csv, buckets.csv, l4s.csv",
    }
    return Outcome(
        TITLE,
        F.intro(p, w, ctx.quick, answer_text(ans)) + "\n\n" + E.intro(emu_on, emu_why, emu),
        report.figures,
        report.claims(),
        report.tables,
        meta | {"emulated column": "run" if emu is not None else f"not run: {emu_why}"},
    )
