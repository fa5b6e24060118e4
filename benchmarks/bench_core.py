#!/usr/bin/env python3
"""Speed and memory benchmark of the simulator core (not a test: it prints figures).

Runs ``scenarios/dumbbell-droptail.toml`` (500 s simulated) with the native runner
``savanna-native`` (the Rust core alone) and with the ``savanna`` command (Python front end
plus the same core), several times each, and prints wall seconds, packets forwarded per wall
second, events per second and peak resident memory (the operating system's accounting, as
``/usr/bin/time`` reports it). The ns-3 side-by-side
comparison, measured in one run, is ``benchmarks/vs_ns3.py`` (``benchmarks/ns3/``).

With ``--reference BIN`` (a ``savanna-native`` built from another commit, e.g. before a
refactoring) both binaries run the scenario alternately in the same run, their outputs are
compared byte for byte (``summary.json`` without its wall time), and the ratio of the best
wall times is printed: the check that a change made the core neither slower nor different.

With ``--front-end`` it prints only what the Python front end adds to a run: ``savanna run``
and ``savanna-native`` on the same scenario, alternately, best of N, and the difference of
their best wall and CPU times (interpreter, imports, argument parsing, reading the scenario,
exit; the core's own work is the same in both). The full benchmark prints it too.

With ``--startup`` it prints only the start-up time of the ``savanna`` command: ``savanna
--version`` against a bare ``python -c pass`` of the same interpreter, alternately, best of N
(wall and CPU), with the bytecode cache on as users have it.

Usage: python3 benchmarks/bench_core.py [--repeat N] [--scenario PATH] [--no-build] [--reference BIN]
       python3 benchmarks/bench_core.py --front-end [--repeat N] [--scenario PATH] [--no-build]
       python3 benchmarks/bench_core.py --startup [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import native

ROOT = Path(__file__).resolve().parent.parent
SAVANNA = ROOT / ".venv" / "bin" / "savanna"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scenario", default=str(ROOT / "scenarios" / "dumbbell-droptail.toml"))
    ap.add_argument("--no-build", action="store_true", help="do not run cargo build first")
    ap.add_argument("--reference", type=Path, help="another savanna-native to compare with, alternately")
    ap.add_argument("--startup", action="store_true", help="only the start-up time of `savanna --version`")
    ap.add_argument("--front-end", action="store_true", help="only what `savanna run` adds to the core alone")
    args = ap.parse_args()
    if args.startup:
        return startup(max(args.repeat, 20))

    NATIVE, kind = native.existing() if args.no_build else native.build()
    print(f"core binary: {native.describe(kind)}")
    if args.front_end:
        return front_end(NATIVE, args.scenario, max(args.repeat, 10))
    tmp = Path(tempfile.mkdtemp(prefix="savanna-bench-"))
    try:
        rows = []
        front_ends = [("native (Rust core)", [str(NATIVE)])]
        if SAVANNA.exists():
            front_ends.append(("savanna run (Python CLI)", [str(SAVANNA), "run"]))
        for label, base in front_ends:
            walls, rss = [], []
            summary = None
            for i in range(args.repeat):
                out = tmp / f"{len(rows)}-{i}"
                cmd = base + [args.scenario, "--out", str(out), "--quiet"]
                w, m = native.run_measured(cmd)
                walls.append(w)
                rss.append(m)
                summary = json.loads((out / "summary.json").read_text())
            med = statistics.median(walls)
            rows.append((label, med, min(walls), max(rss), summary))
        s = rows[0][4]
        print(f"scenario: {args.scenario}")
        print(
            f"  simulated {s['sim_seconds']:.0f} s, {s['events']:,} events, "
            f"{s['packets_forwarded']:,} packets forwarded, "
            f"{s['flows_started']:,} flows ({s['flows_finished']:,} finished)"
        )
        print(f"  repeats: {args.repeat} (median wall time reported)\n")
        print(
            f"{'front end':28} {'wall s':>8} {'min s':>8} {'core s':>8} {'Mpkt/s':>8} {'Mevents/s':>10} {'peak MiB':>9}"
        )
        for label, med, lo, rss_mib, summ in rows:
            core = summ["wall_seconds"]
            print(
                f"{label:28} {med:8.3f} {lo:8.3f} {core:8.3f} {summ['packets_forwarded'] / med / 1e6:8.2f} "
                f"{summ['events'] / med / 1e6:10.2f} {rss_mib:9.1f}"
            )
        if args.reference:
            compare(NATIVE, args.reference, args.scenario, args.repeat, tmp)
        if SAVANNA.exists():
            print()
            front_end(NATIVE, args.scenario, max(args.repeat, 10))
        print("\nAgainst ns-3: benchmarks/vs_ns3.py measures both simulators in the same run.")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def startup(repeat: int) -> int:
    """Best wall and CPU time of `savanna --version` and of a bare interpreter, alternating."""
    if not SAVANNA.exists():
        raise SystemExit(f"{SAVANNA} missing: run `make setup` first")
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users' installs keep their bytecode cache
    python = str(SAVANNA.parent / "python")
    cmds = {"savanna --version": [str(SAVANNA), "--version"], "python -c pass": [python, "-c", "pass"]}
    best = {k: [float("inf"), float("inf")] for k in cmds}
    for cmd in cmds.values():  # warm the bytecode and page caches
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
    for _ in range(repeat):
        for name, cmd in cmds.items():
            wall, cpu = timed(cmd, env)
            best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
    print(f"start-up, best of {repeat} alternating (load average {os.getloadavg()[0]:.2f}):")
    for name, (wall, cpu) in best.items():
        print(f"  {name:20} wall {1e3 * wall:6.1f} ms   CPU {1e3 * cpu:6.1f} ms")
    return 0


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    """Run `cmd` to completion; return its wall seconds and its CPU seconds (user + system,
    from this process's children's accounting)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def front_end(binary: Path, scenario: str, repeat: int) -> int:
    """What the Python front end adds: best wall and CPU time of `savanna run` minus those of
    `savanna-native` on the same scenario, run alternately (bytecode cache on, as users have
    it), with a bare interpreter's start and exit for scale. CPU is user + system of the
    whole process, the core's thread included."""
    if not SAVANNA.exists():
        raise SystemExit(f"{SAVANNA} missing: run `make setup` first")
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmds = {
        "savanna-native": [str(binary)],
        "savanna run": [str(SAVANNA), "run"],
        "python -c pass": [str(SAVANNA.parent / "python"), "-c", "pass"],  # the interpreter alone
    }
    best = {k: [float("inf"), float("inf")] for k in cmds}
    with tempfile.TemporaryDirectory(prefix="savanna-front-") as tmp:
        for i in range(repeat + 1):  # the first round warms the caches and is not counted
            for name, base in cmds.items():
                run_args = [scenario, "--out", os.path.join(tmp, f"{len(name)}-{i}"), "--quiet"]
                cmd = base if name.startswith("python") else base + run_args
                wall, cpu = timed(cmd, env)
                if i:
                    best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
    (nw, nc), (sw, sc) = best["savanna-native"], best["savanna run"]
    print(f"front end of `savanna run`, best of {repeat} alternating (load average {os.getloadavg()[0]:.2f}):")
    print(f"  {scenario}")
    for name, (wall, cpu) in best.items():
        print(f"  {name:16} wall {1e3 * wall:7.1f} ms   CPU {1e3 * cpu:7.1f} ms")
    print(f"  front end        wall {1e3 * (sw - nw):7.1f} ms   CPU {1e3 * (sc - nc):7.1f} ms  (savanna run - native)")
    print("  (on a loaded machine the CPU difference is the steadier figure)")
    return 0


def _outputs(out: Path) -> dict[str, bytes]:
    files = {}
    for f in sorted(out.iterdir()):
        data = f.read_bytes()
        if f.name == "summary.json":
            s = json.loads(data)
            s.pop("wall_seconds", None)
            data = json.dumps(s, sort_keys=True).encode()
        files[f.name] = data
    return files


def compare(binary: Path, reference: Path, scenario: str, repeat: int, tmp: Path) -> None:
    """Run `binary` and `reference` alternately; print best and median walls and the ratio."""
    walls: dict[str, list[float]] = {"this": [], "reference": []}
    outs = {}
    for i in range(repeat):
        for label, b in (("this", binary), ("reference", reference)):
            out = tmp / f"cmp-{label}-{i}"
            w, _ = native.run_measured([b, scenario, "--out", out, "--quiet"])
            walls[label].append(w)
            outs[label] = out
    same = _outputs(outs["this"]) == _outputs(outs["reference"])
    best = {k: min(v) for k, v in walls.items()}
    med = {k: statistics.median(v) for k, v in walls.items()}
    print(f"\nagainst reference {reference} (alternating, {repeat} runs each):")
    print(
        f"  best wall   this {best['this']:.3f} s, reference {best['reference']:.3f} s, "
        f"ratio this/reference {best['this'] / best['reference']:.3f}"
    )
    print(
        f"  median wall this {med['this']:.3f} s, reference {med['reference']:.3f} s, "
        f"ratio this/reference {med['this'] / med['reference']:.3f}"
    )
    print(f"  outputs: {'byte-identical' if same else 'DIFFER'}")


if __name__ == "__main__":
    sys.exit(main())
