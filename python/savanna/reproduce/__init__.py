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
import pkgutil
import sys
import time
from pathlib import Path

from savanna.reproduce.common import Context, Outcome, ReproduceError

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
        html = _one(paper, reg[paper], quick, out_dir, workers, progress, cmd)
        return {paper: html}

    from savanna import __version__
    from savanna.report import IndexEntry, write_index

    reg = {k: v for k, v in reg.items() if k not in NOT_IN_ALL}
    root = Path(out) if out is not None else DEFAULT_OUT
    _make_dir(root)
    cmd = command or " ".join(x for x in ("savanna reproduce all", mode, f"--out {root}") if x)
    written: dict[str, Path] = {}
    entries = []
    t0 = time.perf_counter()
    for key, modname in reg.items():
        t1 = time.perf_counter()
        written[key] = _one(key, modname, quick, root / key, workers, progress, cmd)
        import json

        counts = json.loads((root / key / "claims.json").read_text(encoding="utf-8"))["verdicts"]
        title = getattr(importlib.import_module(modname), "TITLE", key)
        entries.append(IndexEntry(key, title, key, counts, time.perf_counter() - t1))
    idx = write_index(
        root,
        "Savanna: paper reproductions",
        entries,
        meta={
            "command": cmd,
            "mode": "quick" if quick else "full",
            "papers": ", ".join(reg),
            "wall time": f"{time.perf_counter() - t0:.0f} s",
            "savanna version": __version__,
        },
    )
    written["index"] = idx["html"]
    return written


def _make_dir(d: Path) -> None:
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReproduceError(f"--out: cannot create the output directory {d} ({e.strerror or e})") from None
    if not d.is_dir():
        raise ReproduceError(f"--out: {d} is not a directory")


def _one(key: str, modname: str, quick: bool, out_dir: Path, workers, progress, cmd: str) -> Path:
    from savanna import __version__
    from savanna.report import write_report

    mod = importlib.import_module(modname)
    _make_dir(out_dir)
    ctx = Context(key=key, out_dir=out_dir, quick=quick, workers=workers, progress=progress)
    t0 = time.perf_counter()
    ctx.log(f"{ctx.mode} reproduction into {out_dir}")
    outcome: Outcome = mod.reproduce(ctx)
    wall = time.perf_counter() - t0
    runs = sum(len(b.run_ids) for b in ctx.batches)
    reused = sum(b.skipped for b in ctx.batches)
    meta = {
        "paper": getattr(mod, "PAPER", outcome.title),
        "mode": ctx.mode,
        "command": cmd,
        "wall time": f"{wall:.1f} s",
        "simulations": f"{runs} ({reused} reused from an earlier run)",
        "savanna version": __version__,
        "python": sys.version.split()[0],
    }
    meta.update(outcome.meta)
    paths = write_report(out_dir, outcome.title, outcome.intro, outcome.figures, outcome.claims, outcome.tables, meta)
    ctx.log(f"wrote {paths['html']} and {paths['md']} ({wall:.1f} s)")
    return paths["html"]


__all__ = ["run", "papers", "registry", "ReproduceError", "DEFAULT_OUT"]
