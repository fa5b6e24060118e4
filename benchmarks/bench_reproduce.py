"""Benchmark of ``savanna reproduce`` (issue 21, targets 1 and 2): runs the command as a
user does, in a subprocess, and prints its wall time and peak resident memory (the sum
over the command's process tree: the parent and its simulation workers), then the
per-paper figures the command itself records in ``OUT/timings.json`` (simulation time,
analysis time, peak memory), and each total against its target.

    .venv/bin/python benchmarks/bench_reproduce.py --quick            # make demo's job
    .venv/bin/python benchmarks/bench_reproduce.py                    # full mode, all papers
    .venv/bin/python benchmarks/bench_reproduce.py --paper favorqueue-2013

    # ratios against a reference checkout (its own .venv), measured in the same run:
    .venv/bin/python benchmarks/bench_reproduce.py --paper tokuda-2002 --ref /work/main
    # the analysis alone, over the runs of an earlier full run (simulated by any core):
    .venv/bin/python benchmarks/bench_reproduce.py --paper favorqueue-2013 --runs-from OLD_OUT --ref /work/main

Targets: full mode at most 15 minutes and 2 GB for ``all`` on 2 workers; quick mode at
most 90 s. With ``--ref CHECKOUT`` the same command runs with that checkout's Python
environment too, the reference first, alternating ``--rounds`` times, and every figure
(wall, CPU, simulation, analysis, peak memory) is printed with its ratio to the
reference's (below 1 is faster or smaller); on a shared machine the CPU and memory
ratios are the ones to trust. ``--runs-from OLD_OUT`` hard-links ``OLD_OUT/<paper>/runs``
into each fresh output directory and maps every job to the stored run of the same
experiment and parameters (their core digests differ when the core was rebuilt), so only
the analysis runs: a measure of the analysis alone. Otherwise every run starts from an
empty output directory (nothing reused) unless ``--out`` names one that holds runs.
``--claims OTHER_DIR`` compares the claims.json of each paper with those of an earlier
run (verdicts and values), and exits 1 on a difference.

Estimates of the wall time on free cores, from CPU times (the machine is shared): with
no overlap between the papers (each paper's workers' CPU over the workers plus its main
process's CPU), the floor (all CPU over the workers), and in quick mode, where each
paper's analysis overlaps the next paper's runs, the floor plus the last paper's
analysis after its last run (its ``cpu_tail_s``), which runs alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from savanna.reproduce.memwatch import Watch, gb  # noqa: E402

TARGETS = {"full": (15 * 60.0, 2e9), "quick": (90.0, None)}


# The child of --runs-from: the command's own ``reproduce.run``, with each job mapped to
# the stored run of the same experiment and parameters (the run id without its digest).
REUSE = """
import sys
from pathlib import Path
from savanna.reproduce import common, run
paper, out, workers, quick = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
stored = {}
for d in out.glob("**/run_id=*"):
    rid = d.name[len("run_id="):]
    stored[rid.rsplit("-", 1)[0]] = rid
job = common.Context.job
def mapped(self, experiment, scenario, params):
    j = job(self, experiment, scenario, params)
    j.run_id = stored.get(j.run_id.rsplit("-", 1)[0], j.run_id)
    return j
common.Context.job = mapped
run(paper, quick=quick, out=out, workers=workers, progress=False)
"""


def run(
    paper: str, quick: bool, workers: int, out: Path, python: Path | None = None, runs_from: Path | None = None
) -> tuple[float, float, int, bool]:
    python = python or Path(sys.executable)
    if runs_from is not None:
        papers = [p.name for p in sorted(runs_from.iterdir()) if (p / "runs").is_dir()] if paper == "all" else [paper]
        for p in papers:
            (out / p).mkdir(parents=True, exist_ok=True)
            subprocess.run(["cp", "-al", str(runs_from / p / "runs"), str(out / p / "runs")], check=True)
        if paper != "all":
            out = out / paper
        cmd = [str(python), "-c", REUSE, paper, str(out), str(workers), "1" if quick else "0"]
    else:
        exe = python.with_name("savanna")
        cmd = [str(exe), "reproduce", paper, "--out", str(out), "--workers", str(workers), "--quiet"]
        if quick:
            cmd.append("--quick")
    print("$ " + " ".join(cmd[:2] + ["REUSE"] + cmd[3:] if runs_from else cmd), flush=True)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    with Watch(proc.pid, interval_s=0.2, pss=True) as w:
        # wait4: the command's rusage, its simulation workers included (they end first).
        _pid, status, ru = os.wait4(proc.pid, 0)
    cpu = ru.ru_utime + ru.ru_stime
    return time.perf_counter() - t0, cpu, w.peak, w.peak_pss, os.waitstatus_to_exitcode(status) == 0


def _free(r: dict, workers: int) -> float:
    return r["cpu_workers_s"] / workers + r["cpu_parent_s"]


def per_paper(out: Path, paper: str = "all") -> list[dict]:
    path = out / "timings.json"
    if not path.is_file() and paper != "all":
        path = out / paper / "timings.json"
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


def _table(title: str, rows: list[dict], whole: tuple[float, float, int], workers: int) -> float:
    """The per-paper table; "peak/2GB" is each peak over the full mode's memory target."""
    wall, cpu, peak, peak_pss = whole
    t_mem = TARGETS["full"][1]
    print(f"\n{title}")
    head = ("paper", "wall s", "sim s", "analysis s", "runs", "reused", "CPU sim", "CPU main", "free s", "peak mem")
    fmt = "{:<18} {:>8} {:>8} {:>11} {:>6} {:>7} {:>8} {:>8} {:>7} {:>9} {:>8}"
    print(fmt.format(*head, "peak/2GB"))
    free = 0.0
    for r in rows:
        print(
            f"{r['paper']:<18} {r['wall_s']:>8.1f} {r['simulation_s']:>8.1f} {r['analysis_s']:>11.1f} "
            f"{r['runs']:>6} {r['reused']:>7} {r['cpu_workers_s']:>8.0f} {r['cpu_parent_s']:>8.0f} "
            f"{_free(r, workers):>7.0f} {gb(r['peak_rss_bytes']):>9} {r['peak_rss_bytes'] / t_mem:>8.2f}"
        )
        free += _free(r, workers)
    total = ("whole command", f"{wall:.1f}", "", "", "", "", "", f"{cpu:.0f} (all)", f"{free:.0f}", gb(peak))
    print(fmt.format(*total, f"{peak / t_mem:.2f}"))
    if peak_pss:
        pss = ("  each page once (PSS)", "", "", "", "", "", "", "", "", gb(peak_pss))
        print(fmt.format(*pss, f"{peak_pss / t_mem:.2f}"))
    return free


RATIO_KEYS = (
    ("wall_s", "wall"),
    ("simulation_s", "simulation"),
    ("analysis_s", "analysis"),
    ("cpu_workers_s", "CPU sim"),
    ("cpu_parent_s", "CPU main"),
    ("peak_rss_bytes", "peak mem"),
)


def _ratios(ref: list[dict], new: list[dict], ref_whole: tuple, new_whole: tuple) -> None:
    """Each figure of this checkout over the reference's (best of the rounds for times,
    largest peak for memory), per paper and for the whole command."""
    print("\nratio to the reference (this / reference; below 1 is faster or smaller)")
    print("{:<18}".format("paper") + "".join(f" {label:>10}" for _, label in RATIO_KEYS))
    by = {r["paper"]: r for r in ref}
    for r in new:
        o = by.get(r["paper"])
        if o is None:
            continue
        cells = [f"{r[k] / o[k]:>10.2f}" if o[k] else f"{'-':>10}" for k, _ in RATIO_KEYS]
        print(f"{r['paper']:<18} " + " ".join(cells))
    w = f"{new_whole[0] / ref_whole[0]:.2f}" if ref_whole[0] else "-"
    c = f"{new_whole[1] / ref_whole[1]:.2f}" if ref_whole[1] else "-"
    m = f"{new_whole[2] / ref_whole[2]:.2f}" if ref_whole[2] else "-"
    p = f"{new_whole[3] / ref_whole[3]:.2f}" if ref_whole[3] else "-"
    print(f"whole command: wall {w}, CPU {c}, peak memory {m} (PSS {p})")


def _best(rounds: list[tuple[list[dict], tuple]]) -> tuple[list[dict], tuple]:
    """Per paper the best (smallest) time of the rounds and the largest peak memory."""
    rows = [dict(r) for r in rounds[0][0]]
    for other, _ in rounds[1:]:
        by = {r["paper"]: r for r in other}
        for r in rows:
            o = by.get(r["paper"], r)
            for k in ("wall_s", "simulation_s", "analysis_s", "cpu_workers_s", "cpu_parent_s"):
                r[k] = min(r[k], o[k])
            r["peak_rss_bytes"] = max(r["peak_rss_bytes"], o["peak_rss_bytes"])
    wall = min(w[0] for _, w in rounds)
    cpu = min(w[1] for _, w in rounds)
    peak = max(w[2] for _, w in rounds)
    peak_pss = max(w[3] for _, w in rounds)
    return rows, (wall, cpu, peak, peak_pss)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paper", default="all")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, help="output directory (default: a fresh temporary one, removed after)")
    ap.add_argument("--claims", type=Path, metavar="OTHER_DIR", help="compare claims.json with an earlier run")
    ap.add_argument("--ref", type=Path, metavar="CHECKOUT", help="reference checkout (with its .venv)")
    ap.add_argument("--rounds", type=int, default=1, help="with --ref: runs of each, alternating (default 1)")
    ap.add_argument("--runs-from", type=Path, metavar="OLD_OUT", help="analysis only, over these stored runs")
    a = ap.parse_args()
    if a.ref is not None and a.out is not None:
        ap.error("--ref runs into fresh temporary directories; leave out --out")
    mode = "quick" if a.quick else "full"
    ok_all = True
    bad = 0
    with tempfile.TemporaryDirectory(prefix="savanna-bench-reproduce-") as tmp:
        sides = [("this checkout", None)]
        if a.ref is not None:
            sides.insert(0, ("reference " + str(a.ref), a.ref.resolve() / ".venv" / "bin" / "python"))
        results: dict[str, list] = {name: [] for name, _ in sides}
        for i in range(a.rounds if a.ref is not None else 1):
            for name, py in sides:
                out = a.out or Path(tmp) / f"out-{len(results[name])}-{'ref' if py else 'new'}"
                wall, cpu, peak, peak_pss, ok = run(a.paper, a.quick, a.workers, out, py, a.runs_from)
                ok_all &= ok
                rows = per_paper(out, a.paper)
                results[name].append((rows, (wall, cpu, peak, peak_pss)))
                if py is None and a.claims and i == 0:
                    bad = compare_claims(out, a.claims)
                if a.ref is not None:
                    shutil.rmtree(out, ignore_errors=True)
        for name, _ in sides:
            rows, whole = _best(results[name])
            what = "analysis only over stored runs" if a.runs_from else mode
            free = _table(f"{name}: savanna reproduce {a.paper} ({what}, {a.workers} workers)", rows, whole, a.workers)
        if a.ref is not None:
            (ref_rows, ref_whole), (new_rows, new_whole) = (_best(results[n]) for n, _ in sides)
            _ratios(ref_rows, new_rows, ref_whole, new_whole)
        rows, (wall, cpu, peak, peak_pss) = _best(results[sides[-1][0]])
        t_wall, t_mem = TARGETS[mode]
        if a.paper != "all" or a.runs_from:
            # One paper, or the analysis alone: the targets are the whole command's, so
            # these are its share of them (the memory target holds for any part).
            part = "analysis only" if a.runs_from else "one paper"
            print(f"\n{part}, against the whole command's targets:")
            print(f"  free-core estimate {free:.0f} s, {free / t_wall:.2f} of {t_wall:.0f} s")
            print(f"  peak memory {gb(peak)}, {peak / TARGETS['full'][1]:.2f} of {gb(TARGETS['full'][1])}")
            if peak_pss:
                print(f"  each page once (PSS): {gb(peak_pss)}, {peak_pss / TARGETS['full'][1]:.2f}")
        if a.paper == "all" and not a.runs_from:
            print(f"\ntarget: wall <= {t_wall:.0f} s: {wall:.1f} s, ratio {wall / t_wall:.2f}")
            # On a shared machine the wall time measures the others' load too; CPU time does
            # not. "free s" estimates the wall time on free cores: each paper's simulation
            # CPU spread over the workers, plus its main process's CPU (analysis, writing
            # the runs), which runs alone.
            print(f"estimate on {a.workers} free cores: {free:.0f} s, ratio {free / t_wall:.2f}")
            # Since the batches run ahead of the analysis, the main process's work overlaps
            # the simulations': the whole CPU time spread over the cores is the floor.
            print(f"floor on {a.workers} free cores (all CPU overlapped): {cpu / a.workers:.0f} s")
            if a.quick and rows and "cpu_tail_s" in rows[-1]:
                # Quick mode overlaps each paper's analysis with the next paper's runs: what
                # nothing overlaps is the last paper's analysis after its last run.
                tail = rows[-1]["cpu_tail_s"]
                est = (cpu - tail) / a.workers + tail
                print(f"estimate on {a.workers} free cores, papers overlapped: {est:.0f} s, ratio {est / t_wall:.2f}")
            if t_mem is not None:
                rss = f"{gb(peak)}, ratio {peak / t_mem:.2f}"
                print(f"target: peak memory <= {gb(t_mem)}: {rss} (sum of resident sets)")
                if peak_pss:
                    print(
                        f"target: peak memory <= {gb(t_mem)}: {gb(peak_pss)}, ratio {peak_pss / t_mem:.2f} "
                        "(proportional sets: each shared page once)"
                    )
    if not ok_all:
        print("the command failed", file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
