"""Resident memory of a process tree, sampled: what ``savanna reproduce`` reports as a
paper's peak memory (issue 21), and what ``benchmarks/bench_reproduce.py`` measures for
the whole command.

The figure is the largest *sum* of the resident set sizes (VmRSS) of a process and all
its descendants seen at any sample (every 0.1 s by default): the simulation workers and
the parent together, which is what the machine must hold. Read from ``/proc``; where
there is none (not Linux), ``resource.getrusage`` gives the largest single process
instead and ``Watch.tree`` is False.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def tree_rss_bytes(root: int) -> int | None:
    """Sum of the resident sets of process ``root`` and its descendants, in bytes (None
    without ``/proc``). Follows ``/proc/<pid>/task/<tid>/children`` down from ``root``
    (a scan of every process where the kernel does not provide it)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    if not (proc / str(root) / "task" / str(root) / "children").exists():
        return _tree_rss_by_scan(root)
    total = 0
    todo = [root]
    seen = set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            total += int((proc / str(pid) / "statm").read_text().split()[1]) * _PAGE
            for task in (proc / str(pid) / "task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError, IndexError):  # the process ended meanwhile
            continue
    return total


def _tree_rss_by_scan(root: int) -> int:
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            text = (d / "status").read_text()
        except OSError:  # the process ended meanwhile
            continue
        pid = int(d.name)
        ppid = 0
        kb = 0
        for line in text.splitlines():
            if line.startswith("PPid:"):
                ppid = int(line.split()[1])
            elif line.startswith("VmRSS:"):
                kb = int(line.split()[1])
        children.setdefault(ppid, []).append(pid)
        rss[pid] = kb
    total = 0
    todo = [root]
    seen = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        total += rss.get(p, 0)
        todo.extend(children.get(p, ()))
    return total * 1024


def _self_maxrss_bytes() -> int:
    import resource
    import sys

    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    c = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    return max(r, c) * scale


class Watch:
    """Samples the tree of process ``pid`` (default: this one) in a background thread
    while in a ``with`` block; ``peak`` is the largest sum seen, in bytes."""

    def __init__(self, pid: int | None = None, interval_s: float = 0.1) -> None:
        self.pid = os.getpid() if pid is None else pid
        self.interval_s = interval_s
        self.peak = 0
        self.tree = tree_rss_bytes(self.pid) is not None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> None:
        v = tree_rss_bytes(self.pid) if self.tree else _self_maxrss_bytes()
        if v is not None and v > self.peak:
            self.peak = v

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def __enter__(self) -> Watch:
        self.sample()
        self._thread = threading.Thread(target=self._loop, name="savanna-memwatch", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()


def cpu_seconds() -> tuple[float, float]:
    """CPU time (user + system), in seconds, of this process and of its children that have
    ended (the simulation workers, once their pool is shut down): unlike wall time, it
    does not grow when other work shares the cores."""
    import resource

    out = []
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        out.append(r.ru_utime + r.ru_stime)
    return out[0], out[1]


def gb(n_bytes: float) -> str:
    """``n_bytes`` as GB with two decimals (1 GB = 1e9 bytes)."""
    return f"{n_bytes / 1e9:.2f} GB"
