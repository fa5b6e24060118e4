#!/usr/bin/env python3
"""Alternate two commands (two builds, A and B) on a shared machine and compare their CPU
and wall times: run A, B, A, B, ... N times each, then print best and median of each and
the ratios A / B (> 1: B is faster). CPU is user + system time of the finished child
(`RUSAGE_CHILDREN`), the figure least disturbed by other processes; alternating spreads
the machine's load over both builds alike.

Usage: python3 benchmarks/ab.py [-n 7] --a 'CMD A ...' --b 'CMD B ...' [--ref 'CMD R ...']
With --ref (e.g. ns-2 on the same flows), R runs in the same rotation (A, B, R, A, B, R, ...)
and the speed ratios R / A and R / B of best times are printed as well.
Each command is split with shlex; the string {i} in it is replaced with the run number (so
that runs can write to fresh output directories).
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import time


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(cmd: str, i: int) -> tuple[float, float]:
    argv = shlex.split(cmd.replace("{i}", str(i)))
    c0, t0 = cpu_children(), time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0, cpu_children() - c0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=7, help="runs of each command")
    ap.add_argument("--a", required=True, help="command A (before)")
    ap.add_argument("--b", required=True, help="command B (after)")
    ap.add_argument("--ref", help="reference command R run in the same rotation (e.g. ns-2)")
    args = ap.parse_args()
    cmds = {"A": args.a, "B": args.b} | ({"R": args.ref} if args.ref else {})
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in cmds}
    load0 = os.getloadavg()
    for i in range(args.n):
        for k, cmd in cmds.items():
            runs[k].append(run_once(cmd, i))
    load1 = os.getloadavg()
    stats = {}
    for k, v in runs.items():
        walls, cpus = [w for w, _ in v], [c for _, c in v]
        stats[k] = (min(cpus), statistics.median(cpus), min(walls), statistics.median(walls))
        print(
            f"{k}: CPU best {stats[k][0]:.3f} s median {stats[k][1]:.3f} s; "
            f"wall best {stats[k][2]:.3f} s median {stats[k][3]:.3f} s"
        )
    a, b = stats["A"], stats["B"]
    print(
        f"A/B: CPU best {a[0] / b[0]:.3f} median {a[1] / b[1]:.3f}; wall best {a[2] / b[2]:.3f} "
        f"median {a[3] / b[3]:.3f} (n={args.n}, load {load0[0]:.2f} -> {load1[0]:.2f})"
    )
    if "R" in stats:
        r = stats["R"]
        for k in ("A", "B"):
            x = stats[k]
            print(f"R/{k}: CPU best {r[0] / x[0]:.2f}x median {r[1] / x[1]:.2f}x; wall best {r[2] / x[2]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
