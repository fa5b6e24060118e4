"""Resident memory of a process tree, sampled: what ``savanna reproduce`` reports as a
paper's peak memory (issue 21), and what ``benchmarks/bench_reproduce.py`` measures for
the whole command.

The figure is the largest *sum* of the resident set sizes of a process and all its
descendants seen at any sample (every 0.1 s by default): the simulation workers and the
parent together. Linux's /proc gives them cheaply; elsewhere psutil reads them (it is
already there for Dask's distributed scheduler). The sum counts a page shared by several
processes of the tree once per process: the libraries each maps, and what a forked paper
process still shares with its parent. ``tree_pss_bytes`` (Linux) sums the proportional
set sizes instead, each shared page split among the processes that map it: what the
tree holds, each page once. It costs about 1 ms per GB resident a sample (the kernel
walks the page tables), so the benchmark takes it (``Watch(pss=True)``) and the command's
own per-paper figures stay the cheap sum.
"""

from __future__ import annotations

import functools
import os
import threading

import psutil

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _proc_tree_sum(root: int, size) -> int | None:
    """The sum of ``size(pid)`` (bytes, read from /proc) over process ``root`` and its
    descendants, found through the children of each thread of each process
    (``task/*/children``). None when /proc has no ``children`` files (another kernel) or
    ``root`` cannot be read; a descendant that ends meanwhile counts 0."""
    if not os.path.exists(f"/proc/{root}/task/{root}/children"):
        return None
    total, todo, first = 0, [root], True
    while todo:
        pid = todo.pop()
        try:
            total += size(pid)
            tasks = os.listdir(f"/proc/{pid}/task")
        except (OSError, IndexError, ValueError, StopIteration):  # it ended meanwhile
            if first:
                return None
            continue
        first = False
        for t in tasks:
            try:
                with open(f"/proc/{pid}/task/{t}/children", "rb") as fh:
                    todo.extend(int(x) for x in fh.read().split())
            except (OSError, ValueError):
                continue
    return total


def _statm_rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm", "rb") as fh:
        return int(fh.read().split()[1]) * _PAGE


def _smaps_pss(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
        return int(next(line for line in fh if line.startswith(b"Pss:")).split()[1]) * 1024


def _proc_tree_rss(root: int) -> int | None:
    """``tree_rss_bytes`` from Linux's /proc (each process's ``statm``). About 0.1 ms a
    sample against psutil's 1.5 ms, which reads every process of the machine to find the
    children."""
    return _proc_tree_sum(root, _statm_rss)


def tree_rss_bytes(root: int) -> int | None:
    """Sum of the resident sets of process ``root`` and its descendants, in bytes (None
    if ``root`` cannot be read). A descendant that ends meanwhile counts 0."""
    fast = _proc_tree_rss(root)
    if fast is not None:
        return fast
    try:
        proc = psutil.Process(root)
        tree = [proc, *proc.children(recursive=True)]
        total = proc.memory_info().rss
    except psutil.Error:
        return None
    for p in tree[1:]:
        try:
            total += p.memory_info().rss
        except psutil.Error:  # it ended meanwhile
            continue
    return total


def tree_pss_bytes(root: int) -> int | None:
    """Sum of the proportional set sizes (``Pss`` of ``/proc/PID/smaps_rollup``) of process
    ``root`` and its descendants, in bytes: a page shared by n processes counts 1/n in
    each, so a page the tree shares counts once. None where /proc has no such files (not
    Linux) or ``root`` cannot be read."""
    return _proc_tree_sum(root, _smaps_pss)


class Watch:
    """Samples the tree of process ``pid`` (default: this one) in a background thread
    while in a ``with`` block; ``peak`` is the largest sum of resident sets seen, in bytes,
    and with ``pss`` ``peak_pss`` the largest sum of proportional sets (0 where there is
    none to read)."""

    def __init__(self, pid: int | None = None, interval_s: float = 0.1, pss: bool = False) -> None:
        self.pid = os.getpid() if pid is None else pid
        self.interval_s = interval_s
        self.pss = pss
        self.peak = 0
        self.peak_pss = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> None:
        v = tree_rss_bytes(self.pid)
        if v is not None and v > self.peak:
            self.peak = v
        if self.pss:
            v = tree_pss_bytes(self.pid)
            if v is not None and v > self.peak_pss:
                self.peak_pss = v

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


def release_memory() -> None:
    """Give the memory a finished paper let go back to the system: a garbage collection,
    then glibc's ``malloc_trim`` (where there is one). Without it the main process keeps
    the heap of the largest analysis so far, and the papers after it start from there
    (``all`` measured 2.5 GB for Matta & Guo, whose analysis alone peaks at 1.3 GB)."""
    import gc

    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (not glibc). Looked up among the symbols the
    process has loaded already: ``ctypes.util.find_library`` would run ``ldconfig`` in a
    forked child, whose copy of a large analysis's pages the samplers above count as a
    second process's (issue 21: a reported peak of 2.89 GB for a parent of 1.72 GB)."""
    import ctypes

    try:
        fn = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


def gb(n_bytes: float) -> str:
    """``n_bytes`` as GB with two decimals (1 GB = 1e9 bytes)."""
    return f"{n_bytes / 1e9:.2f} GB"
