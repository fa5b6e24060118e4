#!/usr/bin/env python3
"""Savanna's simulated NewReno side by side with Linux's TCP through ``savanna emulate``.

The reference dumbbell (``scenarios/dumbbell-droptail.toml``: 20 pairs, 10 Mb/s, base RTT
100 ms, Poisson arrivals of Pareto flows, shape 1.3, mean 30 packets) at loads 0.5 and 0.8
with three bottlenecks (DropTail 8, RED 80 as in ``dumbbell-red.toml``, FavorQueue 8), run
twice on the same flows (same scenario, same seed):

- emulated: Linux ``reno`` without SACK (RACK, TLP and F-RTO off), route ``initcwnd`` and
  ``rto_min`` from the scenario, ACK on every segment (``quickack``), 1 s initial RTO;
- simulated: Savanna NewReno without SACK with the same initial window, minimum RTO,
  ``ito_s = 1.0``, ``delayed_ack = false``.

``--stack cubic-sack`` runs Linux ``cubic`` with SACK (D-SACK, RACK, TLP and F-RTO at the
kernel's defaults, its own delayed ACKs, and TCP's internal pacing requested with
``SO_MAX_PACING_RATE`` when the profile paces: the kernel has no fq qdisc) against the
simulator's ``profile = "linux"``, both
with ``max_window = 128`` as the reference dumbbell. Results go to
``benchmarks/results/vs_linux_cubic-sack.md``.

``--delack`` runs Linux's own delayed ACKs against the simulator's ``delayed_ack = true``
(they differ: Linux quick-acks the start of a connection and adapts its timer between 40
and 200 ms; the simulator acks every second segment with a 200 ms timer).

Per run: flows, bottleneck utilisation and drop rate; per size bucket: median and mean FCT
emulated and simulated with the relative gap (flagged when a bucket of >= 100 flows per
side differs by more than 10% in median); and the effect of FavorQueue and RED against
DropTail (mean FCT per bucket, relative change) with the same sign or not.
Writes ``benchmarks/results/vs_linux.md`` (or ``--out``).

Usage (root): python3 benchmarks/vs_linux.py [--quick] [--stack reno|cubic-sack] [--seeds N]
[--seed-list 1,2] [--duration S] [--loads 0.5,0.8] [--queues droptail8,red80,favorqueue8]
Default: three seeds of 300 s (about 100 minutes of wall-clock time per stack). ``--quick``:
40 s, one seed, load 0.8, DropTail and FavorQueue (the CI smoke run). Every run's figures,
per-bucket tables included, go to the ``.json`` beside the report; ``--merge A.json B.json``
writes one report from several such files (runs split over processes or sessions).

``--accuracy [S]`` instead measures the router alone: one saturating flow (window cap above
the bandwidth-delay product, buffer holding the excess) for S seconds (default 20) at 10 and
100 Mb/s, with and without SCHED_FIFO, and the reference dumbbell at load 0.8; it prints
the router's achieved rate over the configured one, delivery lateness p50/p99/p99.9/max,
its CPU share, and the machine's load average.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

import savanna  # noqa: E402
from savanna.analysis import SIZE_BUCKETS, bucket_label, fct_by_size  # noqa: E402

tomllib = importlib.import_module("tomllib")

QUEUES = {
    "droptail8": {"type": "droptail", "limit_pkts": 8},
    "red80": {
        "type": "red",
        "limit_pkts": 80,
        "min_th": 12.0,
        "max_th": 40.0,
        "max_p": 0.1,
        "w_q": 0.001953125,
        "gentle": True,
        "wait": True,
    },
    "favorqueue8": {"type": "favorqueue", "limit_pkts": 8},
}


STACKS = ("reno", "cubic-sack")


def scenario(load: float, queue: str, duration: float, seed: int, delack: bool, stack: str = "reno") -> dict:
    sc = tomllib.loads((ROOT / "scenarios" / "dumbbell-droptail.toml").read_text())
    sc["name"] = f"vs-linux-{queue}-{load:g}"
    sc["seed"] = seed
    sc["duration_s"] = duration
    sc["topology"]["bottleneck_queue"] = QUEUES[queue]
    if stack == "cubic-sack":
        # The simulator's Linux profile as it stands (tcp/profile.rs); the window cap of the
        # reference dumbbell stays, so both sides have the same receive window.
        sc["tcp"] = {"profile": "linux", "max_window": sc["tcp"]["max_window"]}
    else:
        sc["tcp"].update({"ito_s": 1.0, "delayed_ack": delack})
    sc["traffic"][0]["load"] = load
    sc["sampling"] = {"interval_s": 1.0, "queues": ["bottleneck"]}
    return sc


def bottleneck(summary: dict) -> dict:
    return next(q for q in summary["queues"] if q["name"] == "left->right")


def run_pair(sc: dict, out: Path, warmup: float) -> dict:
    sim = savanna.run(sc, out=out / "sim")
    t = time.monotonic()
    emu = savanna.emulate(sc, out / "emu", progress=sys.stderr.isatty())
    wall = time.monotonic() - t
    r = {}
    for side, res in (("sim", sim), ("emu", emu)):
        q = bottleneck(res.summary)
        r[side] = {
            "flows": len(res.flows),
            "finished": int(res.flows.fct_s.notna().sum()),
            "utilisation": q["utilisation"],
            "drop_rate": q["dropped"] / max(1, q["arrivals"]),
            "table": fct_by_size(res.flows, warmup_s=warmup),
        }
    r["accuracy"] = emu.summary["accuracy"]
    r["kernel"] = emu.summary.get("kernel")
    r["load_avg"] = os.getloadavg()[0]
    r["emu_wall_s"] = wall
    return r


def degraded(a: dict) -> bool:
    """A run whose router missed its own targets (rate within 1%, p99 lateness under
    200 us): a stalled router reads what waited in the TUN devices as one burst, and a
    small buffer then drops it, so such a run's drops and FCTs are not Linux's."""
    ratio = a.get("achieved_over_configured")
    p99 = a.get("delivery_lateness", {}).get("p99_us")
    return (ratio is not None and ratio < 0.99) or (p99 is not None and p99 > 200)


def pct(a: float, b: float) -> str:
    if not (math.isfinite(a) and math.isfinite(b)) or b == 0:
        return "-"
    return f"{100 * (a - b) / b:+.0f}%"


def f3(x) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.3f}"


def report(results: dict, args) -> str:
    seeds = sorted({s for runs in results.values() for s in runs})
    durations = sorted({r["duration_s"] for runs in results.values() for r in runs.values()})
    if args.stack == "cubic-sack":
        title = "# Linux cubic with SACK (savanna emulate) against Savanna's `linux` profile"
        k0 = next((r.get("kernel") for runs in results.values() for r in runs.values() if r.get("kernel")), {}) or {}
        paced = "internal pacing (SO_MAX_PACING_RATE)" if k0.get("pacing") else "no pacing"
        what = f"Linux cubic with SACK, RACK-TLP, its own delayed ACKs, {paced}"
    else:
        title = "# Linux TCP (savanna emulate) against Savanna's NewReno"
        what = f"Linux reno without SACK, {'delayed ACKs' if args.delack else 'ACK per segment (quickack)'}"
    lines = [
        title,
        "",
        f"Reference dumbbell, {'/'.join(f'{d:g}' for d in durations)} s per run, seeds "
        f"{', '.join(map(str, seeds))}, flows started in the first {args.warmup:g} s left out; {what}. "
        "Emulated on a shared 2-core machine (see the accuracy lines: the router's achieved rate over the "
        "configured one and its p99 delivery lateness; the machine's 1-minute load average at the end of "
        "the run).",
        "",
    ]
    k = next((r.get("kernel") for runs in results.values() for r in runs.values() if r.get("kernel")), None)
    if k:
        lines += [
            f"Kernel {k.get('release', '?')}: congestion control `{k.get('congestion_control')}`, route "
            f"`{k.get('route')}`, sysctls "
            + ", ".join(f"`{a.split('/', 2)[-1]}={b}`" for a, b in sorted(k.get("sysctls", {}).items()))
            + ".",
            "",
        ]
    per_run_sim_emu = {}
    big: list = []
    head = len(lines)
    pooled: dict = {}
    for (load, queue), runs in sorted(results.items()):
        lines += [f"## load {load:g}, {queue}", ""]
        for seed, r in runs.items():
            a = r["accuracy"]
            lines.append(
                f"- seed {seed}: flows {r['sim']['flows']} (finished sim {r['sim']['finished']}, emu "
                f"{r['emu']['finished']}); utilisation sim {r['sim']['utilisation']:.3f}, emu "
                f"{r['emu']['utilisation']:.3f}; drop rate sim {r['sim']['drop_rate']:.4f}, emu "
                f"{r['emu']['drop_rate']:.4f}; router: rate {a['achieved_over_configured'] or float('nan'):.4f} "
                f"of configured, lateness p99 {a['delivery_lateness']['p99_us']} us, CPU {100 * a['cpu_fraction']:.0f}%"
                + (f", load avg {r['load_avg']:.1f}" if "load_avg" in r else "")
                + (
                    f"; generator lag p99 write {g['write_p99_us'] / 1e3:.1f} / read {g['read_p99_us'] / 1e3:.1f} ms"
                    if (g := a.get("generator_lag"))
                    and g.get("write_p99_us") is not None
                    and g.get("read_p99_us") is not None
                    else ""
                )
                + (" **degraded: the router fell behind**" if degraded(a) else "")
            )
            per_run_sim_emu[(load, queue, seed)] = r
        lines += [
            "",
            "| bucket (pkts) | flows sim | flows emu | median sim | median emu | gap | mean sim | mean emu | gap |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        # Pool the seeds: flows summed, the mean over all their flows, the median of the per-seed
        # medians (the per-seed tables keep no single flows).
        for i, (lo, hi) in enumerate(SIZE_BUCKETS):
            row = {}
            for side in ("sim", "emu"):
                tabs = [r[side]["table"].iloc[i] for r in runs.values()]
                n = sum(int(t["finished"]) for t in tabs)
                med = [t["median_fct_s"] for t in tabs if t["finished"] > 0]
                wsum = sum(t["mean_fct_s"] * int(t["finished"]) for t in tabs if t["finished"] > 0)
                row[side] = (
                    n,
                    sorted(med)[len(med) // 2] if med else float("nan"),
                    wsum / n if n else float("nan"),
                )
            (ns, ms, as_), (ne, me, ae) = row["sim"], row["emu"]
            pooled[(load, queue, i)] = (as_, ae, ms, me, min(ns, ne))
            flag = " **>10%**" if ns >= 100 and ne >= 100 and abs(me - ms) > 0.1 * ms else ""
            if ns >= 100 and ne >= 100:
                big.append((abs(me - ms) / ms, f"{load:g} {queue} {bucket_label(*SIZE_BUCKETS[i])}", me / ms - 1))
            lines.append(
                f"| {bucket_label(lo, hi)} | {ns} | {ne} | {f3(ms)} | {f3(me)} | {pct(me, ms)}{flag} "
                f"| {f3(as_)} | {f3(ae)} | {pct(ae, as_)} |"
            )
        lines.append("")
    if big:
        within = sum(1 for g, _, _ in big if g <= 0.10)
        worst = sorted(big, reverse=True)[:3]
        lines[head:head] = [
            f"Buckets of at least 100 flows on each side: {within} of {len(big)} have medians within 10% of the "
            f"simulator's; largest gaps: " + ", ".join(f"{w} {100 * d:+.0f}%" for _, w, d in worst) + ".",
            "",
        ]
    lines += [
        "## Mechanism effects against DropTail 8 (relative change of mean and median FCT)",
        "",
        "| load | mechanism | bucket | flows | mean sim | mean emu | same sign | median sim | median emu | same sign |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    def rel(x: float, x0: float) -> float:
        return (x - x0) / x0 if x0 and math.isfinite(x) and math.isfinite(x0) else float("nan")

    def sign(a: float, b: float) -> str:
        return "-" if not (math.isfinite(a) and math.isfinite(b)) else ("yes" if (a > 0) == (b > 0) else "NO")

    def p(x: float) -> str:
        return "-" if not math.isfinite(x) else f"{100 * x:+.0f}%"

    for (load, queue, i), (s, e, sm, em, n) in sorted(pooled.items()):
        if queue == "droptail8" or (load, "droptail8", i) not in pooled:
            continue
        s0, e0, sm0, em0, n0 = pooled[(load, "droptail8", i)]
        ds, de, dsm, dem = rel(s, s0), rel(e, e0), rel(sm, sm0), rel(em, em0)
        lo, hi = SIZE_BUCKETS[i]
        lines.append(
            f"| {load:g} | {queue} | {bucket_label(lo, hi)} | {min(n, n0)} | {p(ds)} | {p(de)} | {sign(ds, de)} "
            f"| {p(dsm)} | {p(dem)} | {sign(dsm, dem)} |"
        )
    return "\n".join(lines) + "\n"


def saturating(rate: float, duration: float) -> dict:
    window, buffer = (150, 200) if rate <= 10 else (1200, 1000)
    return {
        "name": f"accuracy-{rate:g}",
        "duration_s": duration,
        "topology": {
            "type": "dumbbell",
            "pairs": 1,
            "access_rate_mbps": 1000.0,
            "access_delay_ms": 5.0,
            "bottleneck_rate_mbps": rate,
            "bottleneck_delay_ms": 40.0,
            "bottleneck_queue": {"type": "droptail", "limit_pkts": buffer},
        },
        "tcp": {"ito_s": 1.0, "init_cwnd": 10, "max_window": window, "init_ssthresh": float(window)},
        "traffic": [{"type": "persistent", "count": 1}],
        "sampling": {"interval_s": 1.0, "queues": ["bottleneck"]},
    }


def accuracy(duration: float) -> str:
    runs = [
        ("saturating flow, 10 Mb/s", saturating(10.0, duration), 50),
        ("saturating flow, 10 Mb/s, no SCHED_FIFO", saturating(10.0, duration), 0),
        ("saturating flow, 100 Mb/s", saturating(100.0, duration), 50),
        ("reference dumbbell, load 0.8, DropTail 8", scenario(0.8, "droptail8", duration, 1, False), 50),
    ]
    lines = [
        "| run | load avg before | achieved / configured | app goodput / line rate | p50 us | p90 us | p99 us "
        "| p99.9 us | max us | router CPU |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, sc, rt in runs:
        load = os.getloadavg()[0]
        res = savanna.emulate(sc, rt=rt, progress=False)
        a = res.summary["accuracy"]
        d = a["delivery_lateness"]
        ratio = a["achieved_over_configured"]
        gp = "-"
        if sc["traffic"][0]["type"] == "persistent":
            # End to end, independent of the router's bookkeeping: what the receiving
            # application read per second, from 5 s (past slow start) to the last full second.
            rate = sc["topology"]["bottleneck_rate_mbps"] * 1e6 / (1500 * 8)
            w = res.goodput[(res.goodput.t_s > 5.0) & (res.goodput.t_s <= int(sc["duration_s"]) - 1 + 1e-9)]
            gp = f"{w.delivered_pkts.sum() / (len(w) * rate):.4f}" if len(w) else "-"
        lines.append(
            f"| {label} | {load:.1f} | {'-' if ratio is None else f'{ratio:.4f}'} | {gp} | {d['p50_us']} "
            f"| {d['p90_us']} | {d['p99_us']} | {d['p999_us']} | {d['max_us']:.0f} | {100 * a['cpu_fraction']:.0f}% |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--stack", choices=STACKS, default="reno")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seed-list", default=None, help="seeds to run, e.g. 2,3 (overrides --seeds)")
    ap.add_argument("--merge", type=Path, nargs="+", default=None, metavar="JSON")
    ap.add_argument("--duration", type=float, default=300.0)
    ap.add_argument("--loads", default="0.5,0.8")
    ap.add_argument("--queues", default="droptail8,red80,favorqueue8")
    ap.add_argument("--warmup", type=float, default=10.0)
    ap.add_argument("--delack", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--accuracy", type=float, nargs="?", const=20.0, metavar="S")
    args = ap.parse_args()
    if args.accuracy:
        print(accuracy(args.accuracy))
        return 0
    if args.out is None:
        name = "vs_linux.md" if args.stack == "reno" else f"vs_linux_{args.stack}.md"
        args.out = ROOT / "benchmarks" / "results" / name
    if args.quick:
        args.seeds, args.duration, args.loads, args.queues, args.warmup = 1, 40.0, "0.8", "droptail8,favorqueue8", 5.0
    results: dict = {}
    if args.merge:
        for path in args.merge:
            load_raw(json.loads(path.read_text()), results)
    else:
        loads = [float(x) for x in args.loads.split(",")]
        queues = args.queues.split(",")
        seeds = [int(x) for x in args.seed_list.split(",")] if args.seed_list else list(range(1, args.seeds + 1))
        with tempfile.TemporaryDirectory(prefix="vs-linux-") as tmp:
            for load in loads:
                for queue in queues:
                    for seed in seeds:
                        sc = scenario(load, queue, args.duration, seed, args.delack, args.stack)
                        print(f"{args.stack} load {load:g} {queue} seed {seed} ...", file=sys.stderr, flush=True)
                        r = run_pair(sc, Path(tmp) / f"{load}-{queue}-{seed}", args.warmup)
                        r["duration_s"] = args.duration
                        results.setdefault((load, queue), {})[seed] = r
                        # Written after every run, so an interrupted benchmark keeps what it ran.
                        args.out.parent.mkdir(parents=True, exist_ok=True)
                        args.out.with_suffix(".json").write_text(json.dumps(dump_raw(results), indent=1))
    text = report(results, args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    args.out.with_suffix(".json").write_text(json.dumps(dump_raw(results), indent=1))
    print(text)
    return 0


def dump_raw(results: dict) -> dict:
    """Every run's figures, per-bucket tables as records, keyed load/queue/seed."""
    out = {}
    for (load, queue), runs in results.items():
        for seed, r in runs.items():
            d = {k: v for k, v in r.items() if k not in ("sim", "emu")}
            for side in ("sim", "emu"):
                d[side] = {k: v for k, v in r[side].items() if k != "table"}
                d[side]["table"] = r[side]["table"].to_dict("records")
            out[f"{load:g}/{queue}/{seed}"] = d
    return out


def load_raw(raw: dict, results: dict) -> None:
    import pandas as pd

    for key, d in raw.items():
        load, queue, seed = key.split("/")
        for side in ("sim", "emu"):
            d[side]["table"] = pd.DataFrame(d[side]["table"])
        results.setdefault((float(load), queue), {})[int(seed)] = d


if __name__ == "__main__":
    sys.exit(main())
