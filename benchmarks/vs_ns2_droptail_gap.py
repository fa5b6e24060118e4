#!/usr/bin/env python3
"""The drop-tail gap of docs/ns2.md ("Savanna loses more at a full drop-tail queue than
ns-2") per TCP setting, the figures behind that section's last two tables.

``perflow [LOADS] [SEED]``: the reference DropTail dumbbell (``vs_ns2.scenario``, 500 s),
flows of 101-1000 packets started after 50 s: median FCT, retransmissions and timeouts per
flow, share of flows with a timeout; Savanna with RFC 6582's recovery and RFC 5681's
ssthresh (``flight``), with ns-2's (``cwnd``), with ns-2's and IW 1 after a lost SYN
(``cwnd+iw1``), and as vs_ns2.py runs it (``as compared``: also ns-2.35's real halving and
recovery exit), and ns-2.35 (reused agents) on the same flows.

``mg``: Savanna alone on Matta & Guo's shared drop-tail (seed 1, 500 s), with
``ssthresh_base`` flight / cwnd and ``tick_s`` 0 / 0.5: bottleneck drops, timeouts, the
short flows' 99.9th percentile and the long share (vs_ns2.iso_stats); ns-2's figures for
the same sessions are in docs/ns2.md.

``patterns [N] [SEED] [KEY=VALUE ...]``: N random loss patterns of one flow (2-8 first transmissions lost
among the first 10-100 packets of a 20-300-packet flow, an otherwise lossless path), in
Savanna (``[[faults]]``) and ns-2.35 with ``precisionReduce_`` true (its default) and false
(the integer halving Savanna and the ns-2 of 2001 use). ns-2's list error model counts
packets leaving the queue, so each lost packet's index is read off ns-2's own trace of a
run with the earlier losses applied. Prints each pattern whose FCT (to 5 ms), retransmissions
or timeouts differ. Savanna runs as vs_ns2.py compares it (ns-2.35's NewReno: real halving,
its recovery exit); KEY=VALUE: Savanna [tcp] keys (as vs_ns2.py's --savanna-tcp), e.g.
``recovery_exit_cwnd= recovery_exit_increase= fast_retransmit_cwnd=`` for RFC 6582's.

``ab LOAD SEEDS DURATION``: the bottleneck drop rate of the reference DropTail dumbbell,
pooled over seeds, for Savanna as compared (``base``), with ns-2's tick rounding
(``tick_s = 0.001``) and with a 0.1 us longer minimum RTO (a perturbation that changes no
rule: the size of the run-to-run noise), and ns-2.35 with ``precisionReduce_`` true and
false, all on the same flows.

Usage: python3 benchmarks/vs_ns2_droptail_gap.py perflow 0.8,0.95 1 | mg | patterns 60 1
    | ab 0.95 10 500
"""

from __future__ import annotations

import copy
import random
import sys
import tempfile
from pathlib import Path

import vs_ns2 as V

# RFC 6582's recovery (vs_ns2.py's scenario sets ns-2.35's exit and halving; None removes
# a key, giving the default).
RFC_EXIT = {"fast_retransmit_cwnd": None, "recovery_exit_cwnd": None, "recovery_exit_increase": None}
SV = {
    "flight": {"ssthresh_base": "flight", "iw_after_syn_loss": None, **RFC_EXIT},
    "cwnd": {"ssthresh_base": "cwnd", "iw_after_syn_loss": None, **RFC_EXIT},
    "cwnd+iw1": {"ssthresh_base": "cwnd", "iw_after_syn_loss": 1, **RFC_EXIT},
    "as compared": {},
}


def bucket(df) -> str:
    d = df[(df["start_s"] >= 50.0) & df["size_pkts"].between(101, 1000) & df["fct_s"].notna()]
    to = d["timeouts"]
    return (
        f"{len(d)} flows, median {d['fct_s'].median():.3f} s, {d['retransmits'].mean():.1f} retransmissions, "
        f"{to.mean():.2f} timeouts per flow, {100 * (to > 0).mean():.1f}% with a timeout"
    )


def perflow(tmp: Path, loads: list[float], seed: int) -> None:
    ns = V.ensure_ns()
    for load in loads:
        sc = V.scenario("dumbbell-droptail.toml", load, seed, 500.0, True)
        first = None
        for name, over in SV.items():
            V.SAVANNA_TCP.clear()
            V.SAVANNA_TCP.update(over)
            _, _, _, fl = V.run_savanna(sc, tmp / f"sv-{name}-{load}")
            first = fl if first is None else first
            print(f"load {load} Savanna {name}: {bucket(fl)}", flush=True)
        V.SAVANNA_TCP.clear()
        _, _, _, res = V.run_ns2(ns, sc, first, tmp / f"ns-{load}.csv", "reuse", True, False)
        print(f"load {load} ns-2: {bucket(res)}", flush=True)


def mg(tmp: Path) -> None:
    from savanna.reproduce import matta_guo_2000 as m

    for base in ("flight", "cwnd"):
        for tick in (0.0, 0.5):
            sc = m.iso_scenario("droptail", 1, 500.0)
            sc.pop("sampling", None)
            sc.pop("trace", None)
            sc["tcp"].update({"ssthresh_base": base, "tick_s": tick})
            _, _, summ, fl = V.run_savanna(sc, tmp / f"mg-{base}-{tick}")
            q = [q for q in summ["queues"] if q["name"] == "left->right"][0]
            st = V.iso_stats(fl.rename(columns={"delivered_pkts": "delivered"}), 20.0, 250.0)
            print(
                f"ssthresh_base {base}, tick_s {tick}: {q['dropped']} drops, {int(fl['timeouts'].sum())} timeouts, "
                f"short p99.9 {st['short_p999']:.1f} s, long share {st['long_share']:.1f}%",
                flush=True,
            )


def one_flow_losses(ns: str, tmp: Path, size: int, lost: list[int], ns_extra=()):
    """One flow of `size` packets alone on the dumbbell (a 1000-packet buffer), the first
    transmissions of data packets `lost` (from 0) lost at the bottleneck in both
    simulators; returns Savanna's and ns-2's flow rows. ns-2's ErrorModel/List counts
    packets leaving the bottleneck queue: each loss's index is the position of that data
    packet's first departure (sequence number k + 1, after the SYN) in ns-2's trace of the
    run with the earlier losses applied."""
    sc = V.scenario("dumbbell-droptail.toml", 0.5, 1, 60.0, True)
    sc["traffic"] = [
        {"type": "flows", "name": "one", "flows": [{"start_s": 1.0, "size_pkts": size, "src": "src0", "dst": "dst0"}]}
    ]
    sc["faults"] = [{"link": "bottleneck", "flow": 0, "kind": "data", "seq": k} for k in lost]
    sc["topology"]["bottleneck_queue"] = {"type": "droptail", "limit_pkts": 1000}
    _, _, _, fl = V.run_savanna(sc, tmp / "sv")
    trace = tmp / "ns.tr"
    index: list[int] = []
    for k in [*lost, None]:
        extra = [f"drops={','.join(map(str, index))}", f"trace={trace}", *ns_extra]
        _, _, _, res = V.run_ns2(ns, sc, fl.assign(src="src0"), tmp / "ns.csv", "reuse", True, False, extra=extra)
        if k is None:
            break
        departures = [int(f[10]) for f in map(str.split, trace.open()) if f[0] == "-" and f[2:4] == ["0", "1"]]
        index.append(departures.index(k + 1))
    return fl.iloc[0], res.iloc[0]


def patterns(tmp: Path, n: int, seed: int) -> None:
    ns = V.ensure_ns()
    rng = random.Random(seed)
    differ = {"true": 0, "false": 0}
    for i in range(n):
        size = rng.choice([20, 30, 50, 80, 120, 200, 300])
        span = min(size, rng.choice([10, 20, 40, 60, 100]))
        lost = sorted(rng.sample(range(span), rng.randint(2, min(8, span))))
        for pr in differ:
            d = tmp / f"p{i}-{pr}"
            d.mkdir()
            a, b = one_flow_losses(ns, d, size, lost, [f"precision_reduce={pr}"])
            if abs(a["fct_s"] - b["fct_s"]) > 5e-3 or (a["retransmits"], a["timeouts"]) != (
                b["retransmits"],
                b["timeouts"],
            ):
                differ[pr] += 1
                print(
                    f"precisionReduce_ {pr}: {size} packets, lost {lost}: Savanna {a['fct_s']:.4f} s, "
                    f"{a['retransmits']} retransmissions, {a['timeouts']} timeouts; ns-2 {b['fct_s']:.4f} s, "
                    f"{int(b['retransmits'])}, {int(b['timeouts'])}",
                    flush=True,
                )
    print(f"{n} patterns: differ with precisionReduce_ true {differ['true']}, false {differ['false']}")


SV_AB = {"base": {}, "tick_s 0.001": {"tick_s": 0.001}, "min RTO + 0.1 us": {"min_rto_s": 0.2000001}}
NS_AB = {"precisionReduce_ true": [], "precisionReduce_ false": ["precision_reduce=false"]}


def ab(tmp: Path, load: float, nseeds: int, dur: float) -> None:
    ns = V.ensure_ns()
    tot: dict[str, list[int]] = {}
    for seed in range(1, nseeds + 1):
        sc = V.scenario("dumbbell-droptail.toml", load, seed, dur, True)
        first = None
        for name, over in SV_AB.items():
            s2 = copy.deepcopy(sc)
            s2["tcp"].update(over)
            _, _, summ, fl = V.run_savanna(s2, tmp / f"sv-{len(tot)}-{seed}")
            first = fl if first is None else first
            q = [q for q in summ["queues"] if q["name"] == "left->right"][0]
            t = tot.setdefault(f"Savanna {name}", [0, 0])
            t[0], t[1] = t[0] + q["arrivals"], t[1] + q["dropped"]
        for name, extra in NS_AB.items():
            _, _, s, _ = V.run_ns2(
                ns, sc, first, tmp / f"ns-{seed}-{len(extra)}.csv", "reuse", True, False, extra=extra
            )
            t = tot.setdefault(f"ns-2 {name}", [0, 0])
            t[0], t[1] = t[0] + s["bottleneck"]["arrivals"], t[1] + s["bottleneck"]["dropped"]
        print(f"seed {seed} done", flush=True)
    ref = tot["ns-2 precisionReduce_ true"]
    for k, (arr, drop) in tot.items():
        print(
            f"load {load}, {nseeds} seeds of {dur:g} s, {k}: drop rate {drop / arr:.5f} "
            f"({(drop / arr) / (ref[1] / ref[0]) - 1:+.1%} against ns-2 as compared)"
        )


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in ("perflow", "mg", "patterns", "ab"):
        raise SystemExit(__doc__)
    tmp = Path(tempfile.mkdtemp(prefix="savanna-droptail-gap-"))
    a = sys.argv[2:]
    if sys.argv[1] == "perflow":
        loads = [float(x) for x in (a[0] if a else "0.8,0.95").split(",")]
        perflow(tmp, loads, int(a[1]) if len(a) > 1 else 1)
    elif sys.argv[1] == "patterns":
        V.SAVANNA_TCP.update(V.parse_tcp_override(x) for x in a[2:])
        patterns(tmp, int(a[0]) if a else 60, int(a[1]) if len(a) > 1 else 1)
    elif sys.argv[1] == "ab":
        ab(tmp, float(a[0]) if a else 0.95, int(a[1]) if len(a) > 1 else 10, float(a[2]) if len(a) > 2 else 500.0)
    else:
        mg(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
