#!/usr/bin/env python3
"""The drop-tail gap of docs/ns2.md ("Savanna loses more at a full drop-tail queue than
ns-2") per TCP setting, the figures behind that section's last two tables.

``perflow [LOADS] [SEED]``: the reference DropTail dumbbell (``vs_ns2.scenario``, 500 s),
flows of 101-1000 packets started after 50 s: median FCT, retransmissions and timeouts per
flow, share of flows with a timeout; Savanna with RFC 5681's ssthresh (``flight``), with
ns-2's (``cwnd``) and with ns-2's and IW 1 after a lost SYN (``cwnd+iw1``, what vs_ns2.py
runs), and ns-2.35 (reused agents) on the same flows.

``mg``: Savanna alone on Matta & Guo's shared drop-tail (seed 1, 500 s), with
``ssthresh_base`` flight / cwnd and ``tick_s`` 0 / 0.5: bottleneck drops, timeouts, the
short flows' 99.9th percentile and the long share (vs_ns2.iso_stats); ns-2's figures for
the same sessions are in docs/ns2.md.

Usage: python3 benchmarks/vs_ns2_droptail_gap.py perflow 0.8,0.95 1 | mg
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import vs_ns2 as V

SV = {
    "flight": {"ssthresh_base": "flight", "iw_after_syn_loss": None},
    "cwnd": {"ssthresh_base": "cwnd", "iw_after_syn_loss": None},
    "cwnd+iw1": {"ssthresh_base": "cwnd", "iw_after_syn_loss": 1},
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


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in ("perflow", "mg"):
        raise SystemExit(__doc__)
    tmp = Path(tempfile.mkdtemp(prefix="savanna-droptail-gap-"))
    if sys.argv[1] == "perflow":
        loads = [float(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "0.8,0.95").split(",")]
        perflow(tmp, loads, int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    else:
        mg(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
