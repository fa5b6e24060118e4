"""Benchmark of ``savanna reproduce`` (issue 21, targets 1 and 2): runs the command as a
user does, in a subprocess, and prints its wall time and peak resident memory (the sum
over the command's process tree: the parent and its simulation workers), then the
per-paper figures the command itself records in ``OUT/timings.json`` (simulation time,
analysis time, peak memory), and each total against its target.

    .venv/bin/python benchmarks/bench_reproduce.py --quick            # make demo's job
    .venv/bin/python benchmarks/bench_reproduce.py                    # full mode, all papers
    .venv/bin/python benchmarks/bench_reproduce.py --paper favorqueue-2013

Targets: full mode at most 15 minutes and 2 GB for ``all`` on 2 workers; quick mode at
most 90 s. Every run starts from an empty output directory (nothing reused) unless
``--out`` names one that holds runs. ``--claims OTHER_DIR`` compares the claims.json of
each paper with those of an earlier run (verdicts and values), and exits 1 on a
difference.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from savanna.reproduce.memwatch import Watch, gb  # noqa: E402

TARGETS = {"full": (15 * 60.0, 2e9), "quick": (90.0, None)}


def run(paper: str, quick: bool, workers: int, out: Path) -> tuple[float, float, int, bool]:
    exe = Path(sys.executable).with_name("savanna")
    cmd = [str(exe), "reproduce", paper, "--out", str(out), "--workers", str(workers), "--quiet"]
    if quick:
        cmd.append("--quick")
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    with Watch(proc.pid, interval_s=0.2) as w:
        # wait4: the command's rusage, its simulation workers included (they end first).
        _pid, status, ru = os.wait4(proc.pid, 0)
    cpu = ru.ru_utime + ru.ru_stime
    return time.perf_counter() - t0, cpu, w.peak, os.waitstatus_to_exitcode(status) == 0


def _free(r: dict, workers: int) -> float:
    return r["cpu_workers_s"] / workers + r["cpu_parent_s"]


def per_paper(out: Path) -> list[dict]:
    path = out / "timings.json"
    if not path.is_file():
        return []
    return json.loads(path.read_text())["papers"]


def compare_claims(out: Path, other: Path) -> int:
    bad = 0
    for new in sorted(out.glob("**/claims.json")):
        rel = new.relative_to(out)
        old = other / rel
        if not old.is_file():
            print(f"claims: {rel}: not in {other}")
            bad += 1
            continue
        a = json.loads(old.read_text())
        b = json.loads(new.read_text())
        # The meta rows (command, wall time, memory) differ from run to run by nature.
        if (a.get("claims"), a.get("verdicts")) == (b.get("claims"), b.get("verdicts")):
            print(f"claims: {rel}: identical claims and verdicts")
            continue
        bad += 1
        ca = {c["id"]: c for c in a.get("claims", [])}
        cb = {c["id"]: c for c in b.get("claims", [])}
        for cid in sorted(set(ca) | set(cb)):
            x, y = ca.get(cid), cb.get(cid)
            if x != y:
                vx = x and x.get("verdict")
                vy = y and y.get("verdict")
                tag = "VERDICT" if vx != vy else "value"
                print(f"claims: {rel}: {cid}: {tag} {vx} -> {vy}")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paper", default="all")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, help="output directory (default: a fresh temporary one, removed after)")
    ap.add_argument("--claims", type=Path, metavar="OTHER_DIR", help="compare claims.json with an earlier run")
    a = ap.parse_args()
    mode = "quick" if a.quick else "full"
    with tempfile.TemporaryDirectory(prefix="savanna-bench-reproduce-") as tmp:
        out = a.out or Path(tmp) / "out"
        wall, cpu, peak, ok = run(a.paper, a.quick, a.workers, out)
        rows = per_paper(out)
        print(f"\nsavanna reproduce {a.paper} ({mode}, {a.workers} workers)")
        head = ("paper", "wall s", "sim s", "analysis s", "runs", "reused", "CPU sim", "CPU main", "free s", "peak mem")
        print("{:<18} {:>8} {:>8} {:>11} {:>6} {:>7} {:>8} {:>8} {:>7} {:>9}".format(*head))
        free = 0.0
        for r in rows:
            print(
                f"{r['paper']:<18} {r['wall_s']:>8.1f} {r['simulation_s']:>8.1f} {r['analysis_s']:>11.1f} "
                f"{r['runs']:>6} {r['reused']:>7} {r['cpu_workers_s']:>8.0f} {r['cpu_parent_s']:>8.0f} "
                f"{_free(r, a.workers):>7.0f} {gb(r['peak_rss_bytes']):>9}"
            )
            free += _free(r, a.workers)
        total = ("whole command", f"{wall:.1f}", "", "", "", "", "", f"{cpu:.0f} (all)", f"{free:.0f}", gb(peak))
        print("{:<18} {:>8} {:>8} {:>11} {:>6} {:>7} {:>8} {:>8} {:>7} {:>9}".format(*total))
        t_wall, t_mem = TARGETS[mode]
        if a.paper == "all":
            print(f"\ntarget: wall <= {t_wall:.0f} s: {wall:.1f} s, ratio {wall / t_wall:.2f}")
            # On a shared machine the wall time measures the others' load too; CPU time does
            # not. "free s" estimates the wall time on free cores: each paper's simulation
            # CPU spread over the workers, plus its main process's CPU (analysis, writing
            # the runs), which runs alone.
            print(f"estimate on {a.workers} free cores: {free:.0f} s, ratio {free / t_wall:.2f}")
            if t_mem is not None:
                print(f"target: peak memory <= {gb(t_mem)}: {gb(peak)}, ratio {peak / t_mem:.2f}")
        bad = compare_claims(out, a.claims) if a.claims else 0
    if not ok:
        print("the command failed", file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
