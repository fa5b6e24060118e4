"""``savanna reproduce``: run a paper's experiments and write its figures and a report
(HTML + Markdown) setting the paper's numbers beside ours (issue 6, parts 3-4).

The papers are Guo & Matta 2001, Anelli, Diana & Lochin 2013 "FavorQueue", Matta & Guo 2000
and Tokuda, Hasegawa & Murata 2002 (full references in docs/reproduce.md). Each is a module
of this package defining ``KEY`` (the name on the command line), ``TITLE`` and
``reproduce(ctx: common.Context) -> common.Outcome``, which calls one function per figure or
table; the registry below is built from the modules present, and ``all`` runs every
registered paper but the tournament. ``run(paper, quick, out)`` runs one (or ``all``) and
writes the reports.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import time
from pathlib import Path

from savanna.reproduce.common import Context, Outcome, ReproduceError, RunFailed
from savanna.reproduce.memwatch import Watch, cpu_seconds, gb, release_memory, tree_rss_bytes

# Command-line order of the papers (the issue's); modules found but not listed here come
# after, by name.
ORDER = ["guo-matta-2001", "favorqueue-2013", "matta-guo-2000", "tokuda-2002"]

DEFAULT_OUT = Path("out") / "reproduce"

# Registered keys that ``all`` leaves out: ``all`` is the four papers (issue 6), and the
# tournament (``tournament.py``, our own comparison of every discipline) runs only by name.
NOT_IN_ALL = ("tournament",)


def registry() -> dict[str, str]:
    """KEY -> module name of every paper module in this package, in command-line order."""
    found: dict[str, str] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name in ("common", "command"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        key = getattr(mod, "KEY", None)
        if isinstance(key, str) and callable(getattr(mod, "reproduce", None)):
            found[key] = mod.__name__
    rank = {k: i for i, k in enumerate(ORDER)}
    return {k: found[k] for k in sorted(found, key=lambda k: (rank.get(k, len(ORDER)), k))}


def papers() -> list[str]:
    """The registered paper keys."""
    return list(registry())


def run(
    paper: str,
    quick: bool = False,
    out: str | Path | None = None,
    workers: int | None = None,
    progress: bool = True,
    command: str | None = None,
) -> dict[str, Path]:
    """Reproduce ``paper`` (a registered key, or ``all``) into ``out``.

    One paper: its report goes to ``out`` (default ``out/reproduce/<paper>``). ``all``:
    each paper into ``out/<paper>`` (default ``out/reproduce``) and an index
    ``out/index.html`` / ``index.md``. Returns the paths written, by name (``report.html``
    of each paper as ``<paper>``, and ``index`` for ``all``). Raises ``ReproduceError``
    for an unknown paper, bad ``workers``, or a failed run.
    """
    reg = registry()
    if paper != "all" and paper not in reg:
        valid = ", ".join(list(reg) + ["all"])
        raise ReproduceError(f"PAPER: unknown paper {paper!r}; valid: {valid}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ReproduceError(f"--workers: must be a positive integer, got {workers!r}")
    mode = "--quick" if quick else ""
    if paper != "all":
        out_dir = Path(out) if out is not None else DEFAULT_OUT / paper
        cmd = command or " ".join(x for x in ("savanna reproduce", paper, mode, f"--out {out_dir}") if x)
        timings: list[dict] = []
        html = _one(paper, reg[paper], quick, out_dir, workers, progress, cmd, timings)
        _write_timings(out_dir, quick, workers, timings, timings[0]["wall_s"], timings[0]["peak_rss_bytes"])
        return {paper: html}

    from savanna import __version__
    from savanna.report import IndexEntry, write_index

    reg = {k: v for k, v in reg.items() if k not in NOT_IN_ALL}
    root = Path(out) if out is not None else DEFAULT_OUT
    _make_dir(root)
    cmd = command or " ".join(x for x in ("savanna reproduce all", mode, f"--out {root}") if x)
    written: dict[str, Path] = {}
    entries = []
    timings: list[dict] = []
    t0 = time.perf_counter()
    done = _papers_in_processes(reg, quick, root, workers, progress, cmd, overlap=quick)
    whole_peak = done.pop("", {}).get("peak", 0)
    for key, modname in reg.items():
        written[key], cost = done[key]
        timings.append(cost)
        counts = json.loads((root / key / "claims.json").read_text(encoding="utf-8"))["verdicts"]
        title = getattr(importlib.import_module(modname), "TITLE", key)
        entries.append(IndexEntry(key, title, key, counts, cost["wall_s"]))
    wall = time.perf_counter() - t0
    # Two samplers see different instants: the whole command's peak is at least each paper's.
    peak = max([whole_peak] + [t["peak_rss_bytes"] for t in timings])
    meta = {
        "command": cmd,
        "mode": "quick" if quick else "full",
        "papers": ", ".join(reg),
        "wall time": f"{wall:.0f} s",
        "peak memory": f"{gb(peak)} (all processes: this one and its simulation workers)",
    }
    for t in timings:
        meta[f"{t['paper']}"] = _cost_line(t)
    meta["savanna version"] = __version__
    idx = write_index(root, "Savanna: paper reproductions", entries, meta=meta)
    _write_timings(root, quick, workers, timings, wall, peak)
    written["index"] = idx["html"]
    return written


def _papers_in_processes(
    reg: dict[str, str], quick: bool, root: Path, workers, progress, cmd: str, overlap: bool
) -> dict:
    """Reproduce each paper of ``reg`` in a process of its own (forked: the whole paper, its
    pool of workers and its analysis), into ``root/<paper>``. With ``overlap``, the next
    paper starts as soon as the running one has no batch of runs left (its analysis then
    shares the cores with the next paper's runs); at most two papers run at once. Without
    it, one after another. A paper's process gives all its memory back when it ends.
    Returns ``{paper: (report.html, costs)}`` and, under ``""``, the peak resident memory
    of the whole tree seen meanwhile; raises the first paper's error (the others are
    stopped)."""
    import multiprocessing

    # This process has no other thread when it forks (the memory is sampled below, not by
    # a ``Watch``), so the child starts from a consistent state.
    fork = multiprocessing.get_context("fork")
    todo = list(reg.items())
    running: list[list] = []  # [key, process, connection, idle]
    done: dict = {}
    peak = 0
    try:
        while todo or running:
            if todo and (not running or (overlap and len(running) == 1 and running[0][3])):
                key, modname = todo.pop(0)
                here, there = fork.Pipe(duplex=False)
                proc = fork.Process(
                    target=_paper_process,
                    args=(key, modname, quick, root / key, workers, progress, cmd, there),
                    name=f"savanna-reproduce-{key}",
                )
                proc.start()
                there.close()
                running.append([key, proc, here, False])
            peak = max(peak, tree_rss_bytes(os.getpid()) or 0)
            for r in list(running):
                key, proc, conn = r[0], r[1], r[2]
                ended = False
                while not ended and conn.poll(0.1 / len(running)):
                    try:
                        msg = conn.recv()
                    except EOFError:  # the process closed its end: it has ended
                        ended = True
                        continue
                    if msg[0] == "idle":
                        r[3] = True
                    elif msg[0] == "done":
                        done[key] = (Path(msg[1]), msg[2])
                    else:
                        raise (RunFailed if msg[0] == "failed" else ReproduceError)(msg[1])
                if ended or not proc.is_alive():
                    proc.join()
                    running.remove(r)
                    if key not in done:
                        raise RunFailed(f"{key}: the reproduction's process ended with exit code {proc.exitcode}")
    finally:
        for _key, proc, conn, _idle in running:
            proc.terminate()
            proc.join()
            conn.close()
    done[""] = {"peak": peak}
    return done


def _paper_process(key: str, modname: str, quick: bool, out_dir: Path, workers, progress, cmd: str, conn) -> None:
    """A paper's process of ``_papers_in_processes``: its reproduction, then its costs (or
    its error) back through ``conn``; "idle" whenever it has no batch of runs left."""
    import threading

    lock = threading.Lock()

    def send(*msg) -> None:
        with lock:
            conn.send(msg)

    try:
        timings: list[dict] = []
        html = _one(key, modname, quick, out_dir, workers, progress, cmd, timings, on_idle=lambda: send("idle"))
        send("done", str(html), timings[0])
    except RunFailed as e:
        send("failed", str(e))
    except ReproduceError as e:
        send("error", str(e))
    finally:
        conn.close()


def _cost_line(t: dict) -> str:
    return (
        f"{t['wall_s']:.1f} s: simulation {t['simulation_s']:.1f} s ({t['runs']} runs, {t['reused']} reused), "
        f"analysis {t['analysis_s']:.1f} s; CPU {t['cpu_workers_s']:.0f} s in workers, {t['cpu_parent_s']:.0f} s here; "
        f"peak memory {gb(t['peak_rss_bytes'])}"
    )


def _write_timings(root: Path, quick: bool, workers, papers: list[dict], wall: float, peak: int) -> None:
    """``timings.json``: where the time and memory of the command went, per paper (read by
    benchmarks/bench_reproduce.py). Not part of the reports, whose bytes depend on the
    results only."""
    doc = {
        "mode": "quick" if quick else "full",
        "workers": workers or os.cpu_count(),
        "wall_s": round(wall, 3),
        "peak_rss_bytes": peak,
        "papers": papers,
    }
    (root / "timings.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _make_dir(d: Path) -> None:
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReproduceError(f"--out: cannot create the output directory {d} ({e.strerror or e})") from None
    if not d.is_dir():
        raise ReproduceError(f"--out: {d} is not a directory")


def _one(
    key: str, modname: str, quick: bool, out_dir: Path, workers, progress, cmd: str, timings: list, on_idle=None
) -> Path:
    """Reproduce one paper into ``out_dir``; append its costs to ``timings`` (wall,
    simulation and analysis seconds, runs, peak memory of the process tree)."""
    from savanna import __version__
    from savanna.report import write_report
    from savanna.sweep import shared_pool

    mod = importlib.import_module(modname)
    _make_dir(out_dir)
    # This process's CPU when the paper last had no batch of runs left: what it spends after
    # the last one is its analysis that no run of this paper overlaps (``cpu_tail_s``).
    idle_cpu: list[float] = []

    def idle() -> None:
        idle_cpu.append(cpu_seconds()[0])
        if on_idle is not None:
            on_idle()

    ctx = Context(key=key, out_dir=out_dir, quick=quick, workers=workers, progress=progress, ahead=True, on_idle=idle)
    t0 = time.perf_counter()
    cpu0 = cpu_seconds()
    ctx.log(f"{ctx.mode} reproduction into {out_dir}")
    # One pool of simulation workers for every batch of the paper (a batch no longer starts
    # and imports into fresh processes); it ends with the paper, so that the workers' CPU
    # time is the paper's (RUSAGE_CHILDREN counts ended processes).
    with Watch() as watch:
        with shared_pool():
            try:
                outcome: Outcome = mod.reproduce(ctx)
                ctx.settle()
            finally:
                ctx.close()
        wall = time.perf_counter() - t0
        runs = sum(len(b.run_ids) for b in ctx.batches)
        reused = sum(b.skipped for b in ctx.batches)
        sim = sum(b.wall_s for b in ctx.batches)
        meta = {
            "paper": getattr(mod, "PAPER", outcome.title),
            "mode": ctx.mode,
            "command": cmd,
            "wall time": f"{wall:.1f} s (simulation {sim:.1f} s, analysis {wall - sim:.1f} s)",
            "simulations": f"{runs} ({reused} reused from an earlier run)",
            "peak memory": f"{gb(watch.peak)} (all processes: this one and its simulation workers)",
            "savanna version": __version__,
            "python": sys.version.split()[0],
        }
        meta.update(outcome.meta)
        paths = write_report(
            out_dir, outcome.title, outcome.intro, outcome.figures, outcome.claims, outcome.tables, meta
        )
    del outcome
    release_memory()
    wall = time.perf_counter() - t0
    cost = {
        "paper": key,
        "wall_s": round(wall, 3),
        "simulation_s": round(sim, 3),
        "analysis_s": round(wall - sim, 3),
        "runs": runs,
        "reused": reused,
        "peak_rss_bytes": watch.peak,
    }
    cpu1 = cpu_seconds()
    # This process (the analysis, and the writing of the runs) and the workers (simulations).
    cost["cpu_parent_s"] = round(cpu1[0] - cpu0[0], 3)
    cost["cpu_workers_s"] = round(cpu1[1] - cpu0[1], 3)
    cost["cpu_tail_s"] = round(cpu1[0] - (idle_cpu[-1] if idle_cpu else cpu0[0]), 3)
    timings.append(cost)
    ctx.log(f"wrote {paths['html']} and {paths['md']} ({_cost_line(cost)})")
    return paths["html"]


__all__ = ["run", "papers", "registry", "ReproduceError", "DEFAULT_OUT"]
