#!/usr/bin/env python3
"""Savanna side by side with ns-3 3.44: speed, memory and fidelity on the same scenarios.

For each scenario (the dumbbell of ``scenarios/dumbbell-droptail.toml`` with its 8-packet
DropTail bottleneck, and ``dumbbell-red.toml`` with its 80-packet RED one), each load and
each seed, Savanna runs first; the flows it generated (start time, size, host pair) are
handed to the ns-3 program (``benchmarks/ns3/savanna_ns3.cc``), so both simulators carry
exactly the same workload. The script prints and writes (``benchmarks/results/vs_ns3.md``,
with a plot of FCT by flow size) per scenario:

- speed: wall seconds of each, the ratio ns-3 / Savanna, events and packets per wall second,
  peak resident memory of each (as ``/usr/bin/time`` reports it);
- fidelity: flows finished, bottleneck utilisation and drop rate, mean and median FCT per
  flow-size bucket with relative differences (medians pooled over the seeds), and the
  two-sample Kolmogorov-Smirnov distance between the FCT distributions;
- a scaling table: Savanna's wall time and peak memory at 10, 100 and 1000 Mb/s with load
  and buffer scaled, and ns-3's on the same flows (``--no-scaling-ns3``: Savanna alone).

Savanna is measured as the standalone core binary, built by ``native.py`` (Cargo profile
``dist``, as a user builds it).

With ``--sack`` it compares today's TCP instead: NewReno and CUBIC, each with SACK (RFC 6675),
PRR (RFC 6937) and limited transmit in both simulators (``SACK_SETTINGS`` lists every setting
side by side), per-bucket median FCT, drop rate and utilisation, into
``benchmarks/results/vs_ns3_sack.md``.

Usage: python3 benchmarks/vs_ns3.py [--quick] [--sack] [--seeds N] [--duration S] [--loads 0.5,0.8,0.95]
``--quick`` (20 s, one seed, one load) is what the CI smoke test runs.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import native

ROOT = Path(__file__).resolve().parent.parent
# The measured core binary (see native.py); set by main().
NATIVE = None
NATIVE_KIND = ""
NS3_DIR = ROOT / "benchmarks" / "ns3"
NS3_BIN = NS3_DIR / "build" / "savanna-ns3"
RESULTS = ROOT / "benchmarks" / "results"
# ns-3 variants for --recovery-check: each restores one RFC 6582 rule ns-3 3.44 departs from.
DIAGNOSTICS = {
    "C": ["--recovery=dupack-credit"],
    "R": ["--recover-rule=rfc6582"],
    "CR": ["--recovery=dupack-credit", "--recover-rule=rfc6582"],
}
BUCKETS = [(1, 3), (4, 10), (11, 30), (31, 100), (101, 1000), (1001, float("inf"))]

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib


def bucket_name(lo, hi):
    return f">{lo - 1}" if hi == float("inf") else f"{lo}-{int(hi)}"


def scenario(base: str, load: float, seed: int, duration: float, scale: float = 1.0) -> dict:
    sc = tomllib.loads((ROOT / "scenarios" / base).read_text())
    sc = copy.deepcopy(sc)
    sc["seed"] = seed
    sc["duration_s"] = duration
    sc["traffic"][0]["load"] = load
    # ns-3 closes every connection with a FIN exchange; so does Savanna here (`teardown`),
    # so both carry the same packets through the packet-counted buffers.
    sc.setdefault("tcp", {})["teardown"] = True
    # Both write the same records: per-flow rows and per-queue totals (summary.json). The
    # ns-3 program samples no time series, so Savanna's queue sampling is off here too.
    sc.pop("sampling", None)
    topo = sc["topology"]
    if scale != 1.0:
        topo["bottleneck_rate_mbps"] *= scale
        topo["access_rate_mbps"] *= scale
        q = topo["bottleneck_queue"]
        q["limit_pkts"] = int(round(q["limit_pkts"] * scale))
        for k in ("min_th", "max_th"):
            if k in q:
                q[k] *= scale
    return sc


def run_savanna(sc: dict, out: Path):
    # out.name + ".json", not out.with_suffix: a name such as "x-0.5-1" has a "suffix" of
    # ".5-1", which with_suffix would replace, so runs at other loads would share a file.
    path = out.parent / (out.name + ".json")
    if out.exists():
        shutil.rmtree(out)
    path.write_text(json.dumps(sc))
    wall, rss = native.run_measured([str(NATIVE), str(path), "--out", str(out), "--quiet"])
    summary = json.loads((out / "summary.json").read_text())
    import pandas as pd

    flows = pd.read_parquet(out / "flows.parquet")
    return wall, rss, summary, flows


def run_ns3(sc: dict, flows, out_csv: Path, extra=(), reuse=False):
    """Run the ns-3 program on Savanna's flow list. With `reuse`, an earlier run in the same
    place with the same flow list and command is read back instead of run again."""
    import pandas as pd

    flist = out_csv.with_name(out_csv.stem + "-flows.csv")
    f = flows[flows["size_pkts"].notna()]
    old_flows = flist.read_text() if reuse and flist.exists() else None
    pd.DataFrame(
        {
            "flow_id": f["flow_id"],
            "start_s": f["start_s"].map(lambda x: f"{x:.9f}"),
            "size_pkts": f["size_pkts"].astype("int64"),
            "pair": f["src"].str.replace("src", "", regex=False).astype(int),
        }
    ).to_csv(flist, index=False)
    q = sc["topology"]["bottleneck_queue"]
    topo = sc["topology"]
    cmd = [
        str(NS3_BIN),
        f"--flows={flist}",
        f"--out={out_csv}",
        f"--queue={q['type']}",
        f"--duration={sc['duration_s']}",
        f"--pairs={topo['pairs']}",
        f"--seed={sc['seed']}",
        f"--bottleneckRate={topo['bottleneck_rate_mbps']}",
        f"--accessRate={topo['access_rate_mbps']}",
        f"--queueLimit={q['limit_pkts']}",
    ]
    if q["type"] == "red":
        cmd += [f"--minTh={q['min_th']}", f"--maxTh={q['max_th']}"]
    cmd += list(extra)
    stamp = out_csv.with_name(out_csv.name + ".cmd")
    summary = Path(str(out_csv) + ".summary.json")
    fresh = old_flows is not None and old_flows == flist.read_text() and stamp.exists() and summary.exists()
    if fresh and stamp.read_text() == " ".join(cmd):
        res = pd.read_csv(out_csv)
        summ = json.loads(summary.read_text())
        return summ["wall_seconds"], float("nan"), summ, res
    wall, rss = native.run_measured(cmd)
    stamp.write_text(" ".join(cmd))
    res = pd.read_csv(out_csv)
    summ = json.loads(Path(str(out_csv) + ".summary.json").read_text())
    return wall, rss, summ, res


def ks_distance(a, b) -> float:
    import numpy as np

    a = np.sort(np.asarray(a, dtype=float))
    b = np.sort(np.asarray(b, dtype=float))
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / len(a)
    fb = np.searchsorted(b, grid, side="right") / len(b)
    return float(np.max(np.abs(fa - fb)))


def fct_table(flows_sv, flows_ns, warmup):
    """Per bucket: counts, mean and median FCT of each, relative differences."""
    rows = []
    for lo, hi in BUCKETS:

        def pick(df, fct_col, lo=lo, hi=hi):
            d = df[(df["start_s"] >= warmup) & (df["size_pkts"] >= lo) & (df["size_pkts"] <= hi)]
            return d[fct_col].dropna()

        a = pick(flows_sv, "fct_s")
        b = pick(flows_ns, "fct_s")
        row = {"bucket": bucket_name(lo, hi), "n_savanna": len(a), "n_ns3": len(b)}
        for stat in ("mean", "median"):
            sa = getattr(a, stat)() if len(a) else float("nan")
            sb = getattr(b, stat)() if len(b) else float("nan")
            row[f"{stat}_savanna"] = sa
            row[f"{stat}_ns3"] = sb
            row[f"{stat}_diff"] = (sa - sb) / sb if sb == sb and sb > 0 else float("nan")
        rows.append(row)
    return rows


def fmt(x, nd=3):
    return "-" if x != x else f"{x:.{nd}f}"


def pct(x):
    return "-" if x != x else f"{100 * x:+.1f}%"


# The SACK comparison (--sack): today's TCP in both simulators. Each entry: Savanna's [tcp]
# keys, ns-3's program flags. Everything else is the scenario file's and the same in both:
# IW 2, ITO 3 s, min RTO 0.2 s, G 1 ms, no delayed ACK, 128-packet window, no timestamps.
SACK_TCP = {
    "newreno": (
        {"variant": "newreno", "sack": True, "recovery_rate": "prr", "limited_transmit": True},
        ["--cc=newreno", "--sack=1", "--recovery=prr", "--limited-transmit=1"],
    ),
    "cubic": (
        {"cc": "cubic", "sack": True, "recovery_rate": "prr", "limited_transmit": True},
        ["--cc=cubic", "--sack=1", "--recovery=prr", "--limited-transmit=1"],
    ),
}
# Every setting of the SACK comparison, side by side (written into the report).
SACK_SETTINGS = [
    (
        "congestion control",
        '`variant = "newreno"` (RFC 6582 / 5681) or `cc = "cubic"` (RFC 9438)',
        "`SocketType` = `ns3::TcpNewReno` or `ns3::TcpCubic`",
    ),
    ("SACK", "`sack = true` (RFC 2018 option, up to 4 blocks; RFC 6675 scoreboard)", "`Sack` = true"),
    (
        "recovery rate",
        '`recovery_rate = "prr"` (RFC 6937, PRR-SSRB)',
        '`RecoveryType` = `ns3::TcpPrrRecovery` (3.44 default: PRR-CRB, +1 segment on a "safe" ACK)',
    ),
    ("limited transmit", "`limited_transmit = true` (RFC 3042)", "`LimitedTransmit` = true (default)"),
    ("D-SACK", "off (`dsack = false`)", "not sent by ns-3's receiver"),
    ("initial window", "`init_cwnd = 2`", "`InitialCwnd` = 2"),
    (
        "initial RTO",
        "`ito_s = 3.0` (SYN, SYN-ACK, first data)",
        "`ConnTimeout` = 3 s, `RttEstimator::InitialEstimation` = 2.999 s",
    ),
    (
        "minimum RTO, granularity",
        "`min_rto_s = 0.2`, `granularity_s = 0.001`",
        "`MinRto` = 0.2 s, `ClockGranularity` = 1 ms",
    ),
    ("delayed ACK", "`delayed_ack = false`", "`DelAckCount` = 1"),
    ("window cap", "`max_window = 128` (cwnd and flight)", "`RcvBufSize` = 128 x 1460 (flight only)"),
    ("timestamps", "none", "`Timestamp` = false"),
    ("RTT sampling", "every ACK", "every ACK"),
    ("dupack threshold", "3", "`ReTxThreshold` = 3"),
    (
        "timer on fast retransmit",
        "A: restarted (default, as Linux); B: kept running",
        "kept running (RFC 6298 5.1 literally)",
    ),
    ("connection end", "`teardown = true` (FIN exchange)", "FIN exchange"),
    (
        "CUBIC constants",
        "beta 0.7, C 0.4, fast convergence, Reno-friendly region (RFC 9438)",
        "`Beta` 0.7, `C` 0.4, `FastConvergence` true, `TcpFriendliness` true (defaults)",
    ),
    (
        "CUBIC slow start",
        "HyStart++ (RFC 9406; `hystart = true`, default)",
        "`HyStart` true (default): Ha & Rhee's ACK-train + delay exit, from `HyStartLowWindow` 16",
    ),
]


def sack_main(args) -> int:
    """Savanna against ns-3 with SACK and PRR, NewReno and CUBIC (issue 20, Validation)."""
    import pandas as pd

    if args.workdir:
        tmp = Path(args.workdir)
        tmp.mkdir(parents=True, exist_ok=True)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="savanna-vs-ns3-sack-"))
    loads = [float(x) for x in args.loads.split(",")]
    ccs = [c for c in args.sack_cc.split(",") if c]
    report = [
        "# Savanna vs ns-3 3.44 with SACK: NewReno and CUBIC",
        "",
        f"Command: `python3 benchmarks/vs_ns3.py --sack --duration {args.duration:g} --seeds {args.seeds} "
        f"--loads {args.loads} --sack-cc {args.sack_cc}` ({args.duration:g} s simulated, {args.seeds} seed(s); "
        f"FCT statistics over flows starting after {args.warmup:g} s, pooled over seeds). Same flows in both: "
        f"ns-3 replays the flow list Savanna generated. Savanna binary: "
        + (f"`{NATIVE.relative_to(ROOT)}`" if NATIVE_KIND == "given" else native.describe(NATIVE_KIND))
        + ".",
        "",
        "## Settings, side by side",
        "",
        "| setting | Savanna | ns-3 3.44 |",
        "|---|---|---|",
    ]
    report += [f"| {a} | {b} | {c} |" for a, b, c in SACK_SETTINGS]
    report += [
        "",
        "Topology, queues (ns-3's device slot compensated), flows and the FIN exchange are those of the "
        "NewReno comparison (`benchmarks/ns3/README.md`).",
        "",
    ]

    def unit(cc, base, load, seed):
        """One seed of one scenario: Savanna A and B, then ns-3 on Savanna's flow list."""
        sv_tcp, ns_flags = SACK_TCP[cc]
        sc = scenario(base, load, seed, args.duration)
        sc["tcp"].pop("variant", None)
        sc["tcp"].update(sv_tcp)
        tag = f"{cc}-{Path(base).stem}-{load}-{seed}"
        got = {}
        for key, restart in (("A", True), ("B", False)):
            scv = copy.deepcopy(sc)
            scv["tcp"]["restart_rto_on_fast_retransmit"] = restart
            w, _, s, fl = run_savanna(scv, tmp / f"{tag}-{key}")
            q = [q for q in s["queues"] if q["name"] == "left->right"][0]
            got[key] = (fl, (q["utilisation"], q["dropped"] / max(1, q["arrivals"])), w)
        w2, _, s2, res = run_ns3(sc, got["A"][0], tmp / f"{tag}-ns3.csv", extra=ns_flags, reuse=bool(args.workdir))
        nb = s2["bottleneck"]
        got["ns3"] = (res, (nb["utilisation"], nb["dropped"] / max(1, nb["arrivals"])), w2)
        print(f"done {tag}", flush=True)
        return got

    from concurrent.futures import ThreadPoolExecutor

    bases = ("dumbbell-droptail.toml", "dumbbell-red.toml")
    # seed-major: every scenario's first seed before any second one
    keys = [(cc, b, ld, sd) for sd in range(1, args.seeds + 1) for cc in ccs for b in bases for ld in loads]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        done = dict(zip(keys, pool.map(lambda k: unit(*k), keys)))

    summary_rows = []
    for cc in ccs:
        report += [f"## {cc} with SACK and PRR", ""]
        for base in bases:
            for load in loads:
                units = [done[(cc, base, load, sd)] for sd in range(1, args.seeds + 1)]
                acc = {k: [u[k][0] for u in units] for k in ("A", "B", "ns3")}
                link = {k: [u[k][1] for u in units] for k in ("A", "B", "ns3")}
                walls = {k: [u[k][2] for u in units] for k in ("A", "ns3")}
                fa, fb, fn = (pd.concat(acc[k]) for k in ("A", "B", "ns3"))
                tab_a, tab_b = fct_table(fa, fn, args.warmup), fct_table(fb, fn, args.warmup)
                mu = statistics.mean
                util = {k: mu(x[0] for x in v) for k, v in link.items()}
                drop = {k: mu(x[1] for x in v) for k, v in link.items()}

                def fin(df):
                    return int(df["fct_s"].notna().sum())

                def retx(df):
                    d = df[(df["start_s"] >= args.warmup) & (df["size_pkts"] > 100)]
                    return int(d["retransmits"].sum())

                name = f"{cc}, {Path(base).stem} load {load}"
                lines = [
                    f"### {name}",
                    "",
                    "| | Savanna A | Savanna B | ns-3 | A vs ns-3 | B vs ns-3 |",
                    "|---|---|---|---|---|---|",
                    f"| flows finished | {fin(fa)} | {fin(fb)} | {fin(fn)} | "
                    f"{pct((fin(fa) - fin(fn)) / max(1, fin(fn)))} | {pct((fin(fb) - fin(fn)) / max(1, fin(fn)))} |",
                    f"| bottleneck utilisation | {util['A']:.4f} | {util['B']:.4f} | {util['ns3']:.4f} | "
                    f"{100 * (util['A'] - util['ns3']):+.2f} points | {100 * (util['B'] - util['ns3']):+.2f} points |",
                    f"| bottleneck drop rate | {drop['A']:.4f} | {drop['B']:.4f} | {drop['ns3']:.4f} | "
                    f"{pct((drop['A'] - drop['ns3']) / max(1e-12, drop['ns3']))} | "
                    f"{pct((drop['B'] - drop['ns3']) / max(1e-12, drop['ns3']))} |",
                    f"| retransmissions, flows > 100 pkts | {retx(fa):,} | {retx(fb):,} | {retx(fn):,} | | |",
                    f"| wall s per run (median) | {statistics.median(walls['A']):.2f} | | "
                    f"{statistics.median(walls['ns3']):.2f} | | |",
                    "",
                    "| size (pkts) | flows (A / ns-3) | median A | median B | median ns-3 | A diff | B diff | "
                    "mean A | mean B | mean ns-3 |",
                    "|---|---|---|---|---|---|---|---|---|---|",
                ]
                for r, rb in zip(tab_a, tab_b):
                    n = min(r["n_savanna"], r["n_ns3"])
                    flag = "" if n >= 100 else " (< 100)"
                    lines.append(
                        f"| {r['bucket']}{flag} | {r['n_savanna']} / {r['n_ns3']} | {fmt(r['median_savanna'])} | "
                        f"{fmt(rb['median_savanna'])} | {fmt(r['median_ns3'])} | {pct(r['median_diff'])} | "
                        f"{pct(rb['median_diff'])} | {fmt(r['mean_savanna'])} | {fmt(rb['mean_savanna'])} | "
                        f"{fmt(r['mean_ns3'])} |"
                    )
                    if n >= 100:
                        summary_rows.append((name, r["bucket"], r["median_diff"], rb["median_diff"]))
                report += lines + [""]
                print("\n".join(lines), flush=True)
    within = [abs(b) <= 0.10 for *_, b in summary_rows]
    within_a = [abs(a) <= 0.10 for _, _, a, _ in summary_rows]
    head = [
        "## Summary",
        "",
        f"Buckets with at least 100 flows in both: {len(summary_rows)}. Median FCT within 10% of ns-3's: "
        f"Savanna B (timer kept running, as ns-3) {sum(within)}, Savanna A (default) {sum(within_a)}.",
        "",
        "| scenario | bucket | A vs ns-3 | B vs ns-3 |",
        "|---|---|---|---|",
    ]
    head += [f"| {n} | {b} | {pct(a)} | {pct(bb)} |" for n, b, a, bb in summary_rows if abs(bb) > 0.10 or abs(a) > 0.10]
    report += head + [""]
    print("\n".join(head))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(report) + "\n")
    print(f"wrote {out}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20 s, one seed, load 0.8: the CI smoke test")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=500.0)
    ap.add_argument("--loads", default="0.5,0.8,0.95")
    ap.add_argument(
        "--warmup", type=float, default=50.0, help="flows starting before this are left out of FCT statistics"
    )
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--no-scaling", action="store_true")
    ap.add_argument(
        "--no-scaling-ns3",
        action="store_true",
        help="scaling table for Savanna alone (ns-3 takes about 6 min more at 10/100/1000 Mb/s)",
    )
    ap.add_argument(
        "--recovery-check",
        action="store_true",
        help="also run three diagnostic ns-3 variants that each restore an RFC 6582 rule ns-3 "
        "departs from (C: --recovery dupack-credit; R: --recover-rule rfc6582; CR: both) "
        "and add their median FCT per bucket",
    )
    ap.add_argument(
        "--sack",
        action="store_true",
        help="the SACK comparison instead: NewReno and CUBIC, each with SACK, PRR and limited transmit, "
        "in both simulators (writes benchmarks/results/vs_ns3_sack.md)",
    )
    ap.add_argument("--sack-cc", default="newreno,cubic", help="with --sack: congestion controls to compare")
    ap.add_argument(
        "--jobs", type=int, default=1, help="with --sack: scenario seeds run at once (each runs its simulators in turn)"
    )
    ap.add_argument(
        "--workdir",
        default=None,
        help="with --sack: keep every run here, and reuse an ns-3 run whose flow list and command are unchanged "
        "(re-running after a Savanna change then costs Savanna's runs only)",
    )
    ap.add_argument(
        "--savanna-bin",
        default=None,
        help="run this savanna-native binary instead of the dist build (the fidelity tables do not depend on "
        "how it was optimised; the speed table does)",
    )
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.duration, args.loads, args.warmup, args.no_scaling = 1, 20.0, "0.8", 2.0, True
    if args.out is None:
        args.out = str(RESULTS / ("vs_ns3_sack.md" if args.sack else "vs_ns3.md"))
    loads = [float(x) for x in args.loads.split(",")]

    global NATIVE, NATIVE_KIND
    if not args.no_build:
        NATIVE, NATIVE_KIND = native.build()
        subprocess.run(["bash", str(NS3_DIR / "build.sh")], cwd=ROOT, check=True)
    else:
        NATIVE, NATIVE_KIND = native.existing()
    if args.savanna_bin:
        NATIVE, NATIVE_KIND = Path(args.savanna_bin).resolve(), "given"
    if args.sack:
        return sack_main(args)
    import pandas as pd

    tmp = Path(tempfile.mkdtemp(prefix="savanna-vs-ns3-"))
    report = [
        "# Savanna vs ns-3 3.44",
        "",
        f"Command: `python3 benchmarks/vs_ns3.py{' --quick' if args.quick else ''}"
        f"{' --recovery-check' if args.recovery_check else ''}` ({args.duration:g} s simulated, "
        f"{args.seeds} seed(s), loads {args.loads}; FCT statistics over flows "
        f"starting after {args.warmup:g} s, pooled over seeds). Same flows in both: ns-3 replays the flow list "
        f"Savanna generated. Savanna binary: {native.describe(NATIVE_KIND)}.",
        "",
    ]
    speed_rows, fid_sections, plots = [], [], {}
    # Fixed footprint: the same two programs on a 1 s run (code, libraries, start-up state),
    # so the peak of a long run splits into what every run pays and what the run adds.
    footprint = {}
    for base in ("dumbbell-droptail.toml", "dumbbell-red.toml"):
        sc = scenario(base, loads[0], 1, 1.0)
        tag = f"footprint-{Path(base).stem}"
        _, m, _, fl = run_savanna(sc, tmp / tag)
        _, m2, _, _ = run_ns3(sc, fl, tmp / f"{tag}-ns3.csv")
        footprint[base] = (m, m2)
    for base in ("dumbbell-droptail.toml", "dumbbell-red.toml"):
        for load in loads:
            sv_w, ns_w, sv_m, ns_m, sv_ev, ns_ev, sv_pk = [], [], [], [], [], [], []
            sv_flows, ns_flows, sv_util, ns_util, sv_drop, ns_drop, sv_fin, ns_fin = [], [], [], [], [], [], 0, 0
            rfc_flows, rfc_util, rfc_drop, rfc_fin = [], [], [], 0
            diag_flows, diag_link = {}, {}
            for seed in range(1, args.seeds + 1):
                sc = scenario(base, load, seed, args.duration)
                tag = f"{Path(base).stem}-{load}-{seed}"
                w, m, s, fl = run_savanna(sc, tmp / tag)
                sv_w.append(w)
                sv_m.append(m)
                sv_ev.append(s["events"])
                sv_pk.append(s["packets_forwarded"])
                bq = [q for q in s["queues"] if q["name"] == "left->right"][0]
                sv_util.append(bq["utilisation"])
                sv_drop.append(bq["dropped"] / max(1, bq["arrivals"]))
                sv_fin += s["flows_finished"]
                sv_flows.append(fl)
                sc_rfc = copy.deepcopy(sc)
                sc_rfc.setdefault("tcp", {})["restart_rto_on_fast_retransmit"] = False
                _, _, s_rfc, fl_rfc = run_savanna(sc_rfc, tmp / f"{tag}-rfc")
                rfc_flows.append(fl_rfc)
                rq = [q for q in s_rfc["queues"] if q["name"] == "left->right"][0]
                rfc_util.append(rq["utilisation"])
                rfc_drop.append(rq["dropped"] / max(1, rq["arrivals"]))
                rfc_fin += s_rfc["flows_finished"]
                w2, m2, s2, res = run_ns3(sc, fl, tmp / f"{tag}-ns3.csv")
                ns_w.append(w2)
                ns_m.append(m2)
                ns_ev.append(s2.get("events", float("nan")))
                nb = s2["bottleneck"]
                ns_util.append(nb["utilisation"])
                ns_drop.append(nb["dropped"] / max(1, nb["arrivals"]))
                ns_fin += int(res["fct_s"].notna().sum())
                ns_flows.append(res)
                if args.recovery_check:
                    for key, extra in DIAGNOSTICS.items():
                        _, _, sd, rd = run_ns3(sc, fl, tmp / f"{tag}-ns3{key.lower()}.csv", extra=extra)
                        diag_flows.setdefault(key, []).append(rd)
                        vb = sd["bottleneck"]
                        diag_link.setdefault(key, []).append(
                            (vb["utilisation"], vb["dropped"] / max(1, vb["arrivals"]))
                        )
            svf = pd.concat(sv_flows)
            nsf = pd.concat(ns_flows)
            rff = pd.concat(rfc_flows)
            name = f"{Path(base).stem} load {load}"
            sw, nw = statistics.median(sv_w), statistics.median(ns_w)
            speed_rows.append(
                (
                    name,
                    sw,
                    nw,
                    nw / sw,
                    statistics.median(sv_ev) / sw,
                    statistics.median(ns_ev) / nw,
                    statistics.median(sv_pk) / sw,
                    max(sv_m),
                    max(ns_m),
                    *footprint[base],
                )
            )
            tab = fct_table(svf, nsf, args.warmup)
            tab_rfc = fct_table(rff, nsf, args.warmup)

            def done(df):
                return df[df.start_s >= args.warmup]["fct_s"].dropna()

            ks, ks_rfc = ks_distance(done(svf), done(nsf)), ks_distance(done(rff), done(nsf))
            mu = statistics.mean
            lines = [
                f"### {name}",
                "",
                "Savanna A: default TCP (timer restarted on fast retransmit, as Linux and ns-2). "
                "Savanna B: `restart_rto_on_fast_retransmit = false` (RFC 6298 5.1 read literally, as ns-3 does).",
                "",
                "| | Savanna A | Savanna B | ns-3 | A vs ns-3 | B vs ns-3 |",
                "|---|---|---|---|---|---|",
                f"| flows finished | {sv_fin} | {rfc_fin} | {ns_fin} | {pct((sv_fin - ns_fin) / max(1, ns_fin))} | "
                f"{pct((rfc_fin - ns_fin) / max(1, ns_fin))} |",
                f"| bottleneck utilisation | {mu(sv_util):.4f} | {mu(rfc_util):.4f} | {mu(ns_util):.4f} | "
                f"{100 * (mu(sv_util) - mu(ns_util)):+.2f} points | "
                f"{100 * (mu(rfc_util) - mu(ns_util)):+.2f} points |",
                f"| bottleneck drop rate | {mu(sv_drop):.4f} | {mu(rfc_drop):.4f} | {mu(ns_drop):.4f} | "
                f"{pct((mu(sv_drop) - mu(ns_drop)) / max(1e-12, mu(ns_drop)))} | "
                f"{pct((mu(rfc_drop) - mu(ns_drop)) / max(1e-12, mu(ns_drop)))} |",
                f"| KS distance of FCT distributions to ns-3 | | | | {ks:.4f} | {ks_rfc:.4f} |",
                "",
                "| size (pkts) | flows (A / ns-3) | median A | median B | median ns-3 | A diff | B diff | mean A | "
                "mean B | mean ns-3 | A diff | B diff |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|",
            ]
            for r, rb in zip(tab, tab_rfc):
                lines.append(
                    f"| {r['bucket']} | {r['n_savanna']} / {r['n_ns3']} | {fmt(r['median_savanna'])} | "
                    f"{fmt(rb['median_savanna'])} | {fmt(r['median_ns3'])} | "
                    f"{pct(r['median_diff'])} | {pct(rb['median_diff'])} | {fmt(r['mean_savanna'])} | "
                    f"{fmt(rb['mean_savanna'])} | {fmt(r['mean_ns3'])} | "
                    f"{pct(r['mean_diff'])} | {pct(rb['mean_diff'])} |"
                )
            if diag_flows:
                tabs = {k: fct_table(svf, pd.concat(v), args.warmup) for k, v in diag_flows.items()}
                tabs_b = {k: fct_table(rff, pd.concat(v), args.warmup) for k, v in diag_flows.items()}
                keys = list(tabs)
                lines += [
                    "",
                    "Recovery check: ns-3 run again with the RFC 6582 rules it departs from restored, one at "
                    "a time and together (diagnostics, not ns-3 as shipped): C gives fast recovery the "
                    "duplicate-ACK credit (`--recovery dupack-credit`); R lets a new fast retransmit start only "
                    "on an ACK beyond the recovery point (`--recover-rule rfc6582`); CR both. Differences are "
                    "Savanna's median against each.",
                    "",
                    "| size (pkts) | median A | median B | median ns-3 | "
                    + " | ".join(f"median ns-3 {k}" for k in keys)
                    + " | A vs ns-3 | "
                    + " | ".join(f"A vs {k}" for k in keys)
                    + " | B vs ns-3 | "
                    + " | ".join(f"B vs {k}" for k in keys)
                    + " |",
                    "|---" * (4 + 3 * len(keys) + 2) + "|",
                ]
                for i, (r, rb) in enumerate(zip(tab, tab_rfc)):
                    lines.append(
                        f"| {r['bucket']} | {fmt(r['median_savanna'])} | {fmt(rb['median_savanna'])} | "
                        f"{fmt(r['median_ns3'])} | "
                        + " | ".join(fmt(tabs[k][i]["median_ns3"]) for k in keys)
                        + f" | {pct(r['median_diff'])} | "
                        + " | ".join(pct(tabs[k][i]["median_diff"]) for k in keys)
                        + f" | {pct(rb['median_diff'])} | "
                        + " | ".join(pct(tabs_b[k][i]["median_diff"]) for k in keys)
                        + " |"
                    )
                lines += [
                    "",
                    "| | ns-3 | "
                    + " | ".join(f"ns-3 {k}" for k in keys)
                    + " | B vs ns-3 | "
                    + " | ".join(f"B vs {k}" for k in keys)
                    + " |",
                    "|---" * (2 + 2 * len(keys) + 1) + "|",
                ]

                def points(own, ref):
                    return f"{100 * (own - ref):+.2f} points"

                def relative(own, ref):
                    return pct((own - ref) / max(1e-12, ref))

                for j, what, ns_v, own, diff in (
                    (0, "bottleneck utilisation", mu(ns_util), mu(rfc_util), points),
                    (1, "bottleneck drop rate", mu(ns_drop), mu(rfc_drop), relative),
                ):
                    vals = {k: mu([x[j] for x in v]) for k, v in diag_link.items()}
                    lines.append(
                        f"| {what} | {ns_v:.4f} | "
                        + " | ".join(f"{vals[k]:.4f}" for k in keys)
                        + f" | {diff(own, ns_v)} | "
                        + " | ".join(diff(own, vals[k]) for k in keys)
                        + " |"
                    )

                def retx(df):
                    d = df[(df["start_s"] >= args.warmup) & (df["size_pkts"] > 100)]
                    return int(d["retransmits"].sum())

                lines += [
                    "",
                    "Retransmissions by flows of more than 100 packets (summed over seeds): "
                    f"A {retx(svf):,}, B {retx(rff):,}, ns-3 {retx(nsf):,}, "
                    + ", ".join(f"{k} {retx(pd.concat(v)):,}" for k, v in diag_flows.items())
                    + ".",
                ]
            fid_sections.append("\n".join(lines) + "\n")
            plots[name] = tab
            print("\n".join(lines), flush=True)

    head = [
        "## Speed and memory",
        "",
        "| scenario | Savanna wall s | ns-3 wall s | ns-3 / Savanna | Savanna events/s | ns-3 events/s | "
        "Savanna packets/s "
        "| Savanna peak MiB | ns-3 peak MiB | Savanna / ns-3 peak | Savanna 1 s run MiB | ns-3 1 s run MiB | "
        "Savanna growth MiB | ns-3 growth MiB |",
        "|---" * 14 + "|",
    ]
    for r in speed_rows:
        head.append(
            f"| {r[0]} | {r[1]:.3f} | {r[2]:.2f} | {r[3]:.0f}x | {r[4] / 1e6:.1f} M | {r[5] / 1e6:.2f} M | "
            f"{r[6] / 1e6:.1f} M "
            f"| {r[7]:.1f} | {r[8]:.1f} | {r[7] / r[8]:.2f} | {r[9]:.1f} | {r[10]:.1f} | {r[7] - r[9]:.1f} | "
            f"{r[8] - r[10]:.1f} |"
        )
    head += [
        "",
        "Peak MiB is the peak resident set of the whole process (`/usr/bin/time`), the largest over the seeds. "
        "The 1 s run is the same program on the same scenario for 1 simulated second: its peak is the fixed "
        "footprint (code and shared libraries paged in, start-up state); growth = peak - that footprint, the "
        "memory the run itself adds (per-flow state and records, queues, events).",
    ]
    print("\n".join(head))
    report += head + ["", "## Fidelity", ""] + fid_sections

    if not args.no_scaling:
        with_ns3 = not args.no_scaling_ns3
        sc_lines = [
            "## Scaling",
            "",
            "Load 0.8, DropTail, buffer scaled with the rate, 100 s simulated, seed 1"
            + (" (ns-3 replays the same flows)." if with_ns3 else "."),
            "",
            "| bottleneck | flows | packets forwarded | Savanna wall s | ns per packet forwarded | Savanna peak MiB"
            + (" | ns-3 wall s | ns-3 / Savanna | ns-3 peak MiB | Savanna / ns-3 peak |" if with_ns3 else " |"),
            "|---" * (10 if with_ns3 else 6) + "|",
        ]
        for scale in (1, 10, 100):
            sc = scenario("dumbbell-droptail.toml", 0.8, 1, 100.0, scale=scale)
            w, m, s, fl = run_savanna(sc, tmp / f"scale-{scale}")
            row = (
                f"| {10 * scale} Mb/s | {s['flows_started']:,} | {s['packets_forwarded']:,} | {w:.2f} "
                f"| {1e9 * w / s['packets_forwarded']:.0f} | {m:.1f} |"
            )
            if with_ns3:
                w2, m2, _, _ = run_ns3(sc, fl, tmp / f"scale-{scale}-ns3.csv")
                row += f" {w2:.1f} | {w2 / w:.0f}x | {m2:.1f} | {m / m2:.2f} |"
            sc_lines.append(row)
            print(row, flush=True)
        sc_lines += [
            "",
            "Savanna keeps per-flow state only for the flows open at once (a flow's record goes "
            "to a scratch file, and its state is reused, as soon as it is final; flows.parquet "
            "is written from that file at the end), so its memory grows with the connections "
            "open together (about 1.2 KB each, plus 8 bytes per packet of the largest flight "
            "for the sender's send times) and the packets queued, not with the flows started.",
        ]
        print("\n".join(sc_lines))
        report += sc_lines + [""]

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # The plot: median FCT by flow-size bucket, both simulators, one panel per scenario.
    if plots:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(plots), figsize=(4 * len(plots), 3.4), squeeze=False)
        for ax, (name, tab) in zip(axes[0], plots.items()):
            xs = list(range(len(tab)))
            ax.plot(xs, [r["median_savanna"] for r in tab], "o-", label="Savanna")
            ax.plot(xs, [r["median_ns3"] for r in tab], "s--", label="ns-3")
            ax.set_xticks(xs, [r["bucket"] for r in tab], rotation=45, fontsize=7)
            ax.set_yscale("log")
            ax.set_title(name, fontsize=8)
            ax.set_xlabel("flow size (packets)", fontsize=8)
        axes[0][0].set_ylabel("median FCT (s)")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        png = out.with_suffix(".png")
        fig.savefig(png, dpi=110)
        report += [f"![median FCT by flow size]({png.name})", ""]
    out.write_text("\n".join(report) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
