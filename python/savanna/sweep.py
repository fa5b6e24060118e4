"""Sweeps: run many scenarios, resumably, on a local process pool or a Dask cluster
(issue 6, part 1). The results go into the partitioned Parquet dataset of
``savanna.store``.

Two levels:

* ``run_many(jobs, out_dir, workers=None, dask=None, progress=True)`` runs a list of
  ``Job`` (a run id, a complete scenario dict, its parameters). A run whose results are
  already in ``out_dir`` is skipped; every run is written by one atomic rename; a run
  that fails is recorded in ``RunReport.failed`` and ``out_dir/failed/`` and the others
  go on.
* ``load_sweep(path)`` reads a SWEEP.toml (a base scenario, a grid of scenario fields,
  seeds; see docs/sweeps.md) into jobs, checking every grid point with the core's
  validation first; ``run_sweep`` runs them. ``savanna sweep`` is the command.

Each run is a pure function of its scenario (the seed rule of docs/scenario.md), executed by
``execute`` in a worker process through the same core call as ``savanna run``; the local
pool and Dask call the same function, so they give byte-identical run files.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import itertools
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from savanna import store

PathLike = Union[str, "os.PathLike[str]"]

# Test hook (documented in docs/sweeps.md): "name=value[,name=value...]"; a run whose
# parameters match every pair raises in the worker instead of simulating.
FAIL_HOOK_ENV = "SAVANNA_SWEEP_FAIL"


class SweepError(ValueError):
    """Bad input to a sweep: the sweep file, a grid value, a job list, an output path."""


@dataclass
class Job:
    """One run of a sweep.

    ``run_id``: unique, filesystem-safe (letters, digits, ``_ . -``). ``scenario``: a
    complete scenario dict, as ``savanna.run`` accepts, seed included. ``params``:
    parameter name -> scalar (str/int/float/bool), the run's partition keys and query
    columns. ``base_dir``: where relative file names inside the scenario resolve (default:
    the current directory when ``run_many`` is called).
    """

    run_id: str
    scenario: dict
    params: dict
    base_dir: str | None = None


@dataclass
class RunReport:
    """What ``run_many`` did: ``done`` run ids completed now, ``skipped`` ones that were
    complete before, ``failed`` run id -> one-line error. ``stale``: complete runs in the
    output directory that are not among the jobs. ``params``: run id -> parameters."""

    done: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)
    params: dict[str, dict] = field(default_factory=dict)
    out_dir: Path | None = None
    wall_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed


# ---------------------------------------------------------------------------------------
# The worker side: one run, from scenario to file contents


def execute(task: Mapping[str, Any]) -> dict:
    """Run one job in the calling process and hand back its files.

    ``task``: ``run_id``, ``scenario`` (dict), ``params`` (dict), ``base_dir`` (str), and
    optionally ``tmp_dir`` (the sweep's ``OUT/.staging``) and ``in_place``. Returns
    ``{"run_id", "files": {name: bytes}}``, or with ``in_place`` (a worker that shares
    the sweep's file system: the local pool) ``{"run_id", "dir": str}``, a directory in
    ``tmp_dir`` holding the files, for ``store.commit_dir``; or ``{"run_id", "error":
    str}``. It never raises for a failed run, so pools and clusters treat every run alike.
    The files are the same either way: the core's outputs byte for byte, plus the summary
    tables, ``params.json`` and ``scenario.json`` (``_write_run``).
    """
    run_id = task["run_id"]
    try:
        if task.get("in_place"):
            return {"run_id": run_id, "dir": str(_simulate_in_place(task))}
        return {"run_id": run_id, "files": _simulate(task)}
    except Exception as e:  # noqa: BLE001 - a failed run is data, not a crash
        return {"run_id": run_id, "error": _error_line(e)}


def _simulate(task: Mapping[str, Any]) -> dict[str, bytes]:
    """The run's files as bytes, for a worker that may not see the sweep's directory."""
    # Beside the output (its .staging, cleared when a sweep starts), so that a killed
    # sweep leaves nothing in the system's temporary directory; there when the sweep's
    # directory is not reachable (a remote worker).
    tmp_dir = task.get("tmp_dir")
    if tmp_dir is not None:
        try:
            Path(tmp_dir).mkdir(parents=True, exist_ok=True)
        except OSError:
            tmp_dir = None
    with tempfile.TemporaryDirectory(prefix=f"run-{os.getpid()}-", dir=tmp_dir) as tmp:
        out = Path(tmp) / "out"  # not existing yet: the core creates it
        _write_run(task, out)
        return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def _simulate_in_place(task: Mapping[str, Any]) -> Path:
    """The run's files left in a new directory of the sweep's staging area (``tmp_dir``)
    for the parent to rename into place (``store.commit_dir``): they cross no pipe and
    neither process holds them in memory (issue 21). On failure the directory is removed;
    if this process is killed, the directory's name (``.partial-<pid>-<n>``) lets the sweep
    remove it once the process is gone (``runner.sweep_dead_partials``)."""
    out = _partial_dir(Path(task["tmp_dir"]))
    try:
        _write_run(task, out)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    return out


# runner.sweep_dead_partials removes a directory named so once process <pid> is gone; the
# core names its own staging directories alike.
_PARTIAL_PREFIX = ".partial-"
_partial_seq = itertools.count()


def _partial_dir(parent: Path) -> Path:
    """A new empty directory ``.partial-<pid>-<n>`` in ``parent`` (created if missing)."""
    parent.mkdir(parents=True, exist_ok=True)
    while True:
        d = parent / f"{_PARTIAL_PREFIX}{os.getpid()}-{next(_partial_seq)}"
        try:
            d.mkdir()
        except FileExistsError:  # left by a dead process that had this pid: the next n
            continue
        return d


def _write_run(task: Mapping[str, Any], out: Path) -> None:
    """Simulate the task's run into directory ``out`` (existing and empty, or not yet
    existing) and add the files the store keeps beside the core's: the summary tables,
    ``params.json`` and ``scenario.json``. Both ways of handing a run back go through here."""
    from savanna import _core
    from savanna.runner import resolve_scenario

    params = dict(task["params"])
    _fail_hook(params)
    sc = resolve_scenario(task["scenario"], base_dir=task["base_dir"])
    _core.run_to_dir(sc.text, sc.fmt, str(sc.base_dir), str(out), None, None)
    marker = out / store.COMPLETE_MARKER
    if not marker.is_file():
        raise RuntimeError(f"the core wrote no {store.COMPLETE_MARKER}")
    extra = store.summary_tables(json.loads(marker.read_bytes()), skip=params)
    core_files = {p.name: p for p in sorted(out.iterdir()) if p.is_file()}
    _check_shadowing({**core_files, **extra}, params)
    extra["params.json"] = _json_bytes(params)
    extra["scenario.json"] = _json_bytes({"base_dir": str(sc.base_dir), "scenario": task["scenario"]})
    for name, data in extra.items():
        (out / name).write_bytes(data)


def _check_shadowing(files: Mapping[str, bytes | Path], params: Mapping[str, Any]) -> None:
    # A partition column hides a file column of the same name in DuckDB; refuse that
    # rather than let a query read the wrong values. A file is its bytes or its path.
    import pyarrow as pa
    import pyarrow.parquet as pq

    taken = set(params) | {store.RUN_KEY}
    for name, data in files.items():
        if name.endswith(".parquet"):
            if isinstance(data, Path):
                # An open file, not its name: a name goes through pyarrow's file systems,
                # whose first use costs a process some 4 MB more (measured).
                with open(data, "rb") as f:
                    cols = set(pq.read_schema(f).names)
            else:
                cols = set(pq.read_schema(pa.BufferReader(data)).names)
            clash = sorted(cols & taken)
            if clash:
                raise ValueError(f"parameter {clash[0]!r} has the name of a column of {name}; rename it")


def _fail_hook(params: Mapping[str, Any]) -> None:
    spec = os.environ.get(FAIL_HOOK_ENV)
    if not spec:
        return
    want = dict(item.split("=", 1) for item in spec.split(",") if "=" in item)
    if want and all(k in params and store.encode_value(params[k]) == v for k, v in want.items()):
        raise RuntimeError(f"failure injected by {FAIL_HOOK_ENV}={spec}")


def _error_line(e: BaseException) -> str:
    from savanna import ScenarioError

    msg = " ".join(line.strip() for line in str(e).splitlines() if line.strip())
    if isinstance(e, (ScenarioError, RuntimeError)) and msg:
        return msg
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def _json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode()


def _worker_init(started=None) -> None:
    # Ctrl-C in the terminal reaches the workers too: let it end them at once (the core
    # runs without returning to Python, and the parent writes nothing of theirs).
    import signal

    global _STARTED
    _STARTED = started
    _exit_with_parent()

    with contextlib.suppress(ValueError):  # pragma: no cover
        signal.signal(signal.SIGINT, signal.SIG_DFL)


# ---------------------------------------------------------------------------------------
# The parent side


def run_many(
    jobs: list[Job],
    out_dir: PathLike,
    workers: int | None = None,
    dask: Any | None = None,
    progress: bool = True,
) -> RunReport:
    """Run ``jobs`` into the dataset at ``out_dir`` and report what happened.

    ``workers``: size of the local process pool (default ``os.cpu_count()``; 1 runs in
    this process); a worker writes each run into ``OUT/.staging`` itself and this process
    renames it into place. ``dask``: the address of a Dask distributed scheduler
    (``tcp://host:port``) or a ``distributed.Client``; the runs then go to that cluster
    (results come back to this process, which writes them, so the workers need no shared
    file system). ``progress``: a progress bar on stderr when it is a terminal.

    Raises ``SweepError`` for a bad job list or an output directory in use by another
    sweep; failed runs do not raise.
    """
    t0 = time.perf_counter()
    out = Path(out_dir)
    names, types = _check_jobs(jobs)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SweepError(f"workers: must be a positive integer, got {workers!r}")
    if dask is not None and workers is not None:
        raise SweepError("workers and dask: give one or the other")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SweepError(f"{out}: cannot create the output directory ({e.strerror or e})") from None
    if not out.is_dir():
        raise SweepError(f"{out}: not a directory")

    report = RunReport(out_dir=out, params={j.run_id: dict(j.params) for j in jobs})
    with _Lock(out):
        store.clean_staging(out)
        if jobs:
            try:
                store.merge_manifest(out, names, types)
            except store.StoreError as e:
                raise SweepError(str(e)) from None
        existing = store.completed_runs(out)
        wanted = {j.run_id for j in jobs}
        report.stale = sorted(set(existing) - wanted)
        todo = []
        for j in jobs:
            if j.run_id in existing:
                report.skipped.append(j.run_id)
            else:
                todo.append(j)
        cwd = os.getcwd()
        staging = out.resolve() / store.STAGING_DIR
        tasks = [
            {
                "run_id": j.run_id,
                "scenario": j.scenario,
                "params": dict(j.params),
                "base_dir": str(Path(j.base_dir).resolve()) if j.base_dir else cwd,
                "tmp_dir": str(staging),
                # A local worker (or this process) writes the run's files into the staging
                # area itself and sends back the directory's name; a Dask worker, which
                # may not see this file system, sends the files.
                "in_place": dask is None,
            }
            for j in todo
        ]
        by_id = {t["run_id"]: t for t in tasks}
        done = set()
        bar = _Progress(len(jobs), len(report.skipped), enabled=progress)
        results = _results(tasks, workers, dask)
        try:
            for result in results:
                rid = result["run_id"]
                err = result.get("error")
                if err is None:
                    try:
                        if "dir" in result:
                            store.commit_dir(out, rid, by_id[rid]["params"], names, result["dir"])
                        else:
                            store.commit_run(out, rid, by_id[rid]["params"], names, result["files"])
                    except (OSError, store.StoreError) as e:
                        err = f"cannot write the run into {out}: {e}"
                if err is None:
                    done.add(rid)
                else:
                    report.failed[rid] = err
                    t = by_id[rid]
                    store.record_failure(
                        out,
                        rid,
                        {
                            "run_id": rid,
                            "params": t["params"],
                            "error": err,
                            "base_dir": t["base_dir"],
                            "scenario": t["scenario"],
                        },
                    )
                bar.update(len(report.failed))
        finally:
            # Closing ends the local pool (its workers finish or are gone); then what a
            # worker that died (killed, Ctrl-C) left in the staging area can go.
            results.close()
            bar.close()
            from savanna.runner import sweep_dead_partials

            sweep_dead_partials(staging)
        report.done = [j.run_id for j in todo if j.run_id in done]
    # Order failures as the jobs were given (completion order is not deterministic).
    report.failed = {j.run_id: report.failed[j.run_id] for j in todo if j.run_id in report.failed}
    report.wall_seconds = time.perf_counter() - t0
    return report


def _check_jobs(jobs: list[Job]) -> tuple[list[str], dict[str, str]]:
    if not isinstance(jobs, (list, tuple)):
        raise SweepError(f"jobs: must be a list of Job, got {type(jobs).__name__}")
    names: list[str] | None = None
    types: dict[str, str] = {}
    seen = set()
    for i, j in enumerate(jobs):
        where = f"jobs[{i}]"
        if not isinstance(j, Job):
            raise SweepError(f"{where}: must be a Job, got {type(j).__name__}")
        if not isinstance(j.run_id, str) or not store.RUN_ID_RE.match(j.run_id):
            raise SweepError(
                f"{where}.run_id: {j.run_id!r} must be letters, digits, '_', '.' or '-' (not starting with '.' or '-')"
            )
        if j.run_id in seen:
            raise SweepError(f"{where}.run_id: {j.run_id!r} is used twice")
        seen.add(j.run_id)
        if not isinstance(j.scenario, Mapping):
            raise SweepError(f"{where}.scenario: must be a dict, got {type(j.scenario).__name__}")
        if not isinstance(j.params, Mapping):
            raise SweepError(f"{where}.params: must be a dict, got {type(j.params).__name__}")
        for k, v in j.params.items():
            try:
                store.check_param(k, v, where=f"{where}.params")
            except store.StoreError as e:
                raise SweepError(str(e)) from None
            types[k] = store.widen(types.get(k), store.sql_type(v))
        keys = list(j.params)
        if names is None:
            names = keys
        elif set(keys) != set(names):
            raise SweepError(
                f"{where}.params: has {sorted(keys)}, but jobs[0] has {sorted(names)}; "
                "every job must have the same parameters"
            )
    return names or [], types


def _results(tasks: list[dict], workers: int | None, dask: Any, fn=None):
    """Yield the result of ``fn`` (default ``execute``) for every task, in completion
    order."""
    fn = fn or execute
    if not tasks:
        return
    if dask is not None:
        yield from _results_dask(tasks, dask, fn)
        return
    n = min(workers or os.cpu_count() or 1, len(tasks))
    if n == 1:
        for t in tasks:
            yield fn(t)
        return
    yield from _results_pool(tasks, n, fn)


def _results_pool(tasks: list[dict], n: int, fn):
    """Local process pool. A worker that dies (killed for lack of memory, a crash)
    breaks the whole pool: the runs that had not started go to a fresh pool, and each run
    that was running then is run again alone, in a pool of its own, so that only a run
    that kills its worker by itself is reported as failed."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    shared = list(tasks)
    alone: list[dict] = []
    while shared or alone:
        if shared:
            batch, shared = shared, []
            for item in _pool_pass(ctx, batch, min(n, len(batch)), fn):
                if isinstance(item, _Broken):
                    _sweep_dead_workers(batch)
                    shared.extend(item.not_started)
                    alone.extend(item.running)
                else:
                    yield item
        else:
            t = alone.pop(0)
            for item in _pool_pass(ctx, [t], 1, fn):
                if isinstance(item, _Broken):
                    _sweep_dead_workers([t])
                    yield {
                        "run_id": t["run_id"],
                        "error": "the worker process running it died (out of memory? a crash?)",
                    }
                else:
                    yield item


def _sweep_dead_workers(tasks: list[dict]) -> None:
    """Remove what the workers of a broken pool left in the tasks' staging area: a run
    written in place by a worker that was killed (``_simulate_in_place``). The pool's
    processes are all gone by then, and every result it gave has been taken."""
    from savanna.runner import sweep_dead_partials

    for tmp_dir in sorted({t["tmp_dir"] for t in tasks if t.get("in_place")}):
        sweep_dead_partials(tmp_dir)


@dataclass
class _Broken:
    running: list[dict]
    not_started: list[dict]


def _pool_pass(ctx, tasks: list[dict], n: int, fn):
    """Run ``tasks`` on a fresh pool of ``n`` processes (or the one ``shared_pool`` kept);
    yield results, and a final ``_Broken`` if a worker died, with the unfinished tasks
    split by whether they had started."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # Each worker announces the run it starts on `started`, synchronously (so a run that
    # kills its worker at once is known to have started). The parent reads the notices at
    # every result: unread, they fill the pipe (64 KiB, about 800 notices) and every worker
    # blocks on its next announcement, a silent stall of any larger sweep. A worker
    # announces a run only after its previous one's result, so what waits unread is at most
    # one notice per worker and one per result not yet taken.
    key = (n, ctx.get_start_method())
    kept = _SHARED.get("pool")
    if kept is not None and _SHARED.get("key") != key:
        _SHARED["pool"] = None
        kept[0].shutdown(wait=True, cancel_futures=True)
        kept[1].close()
        kept = None
    if kept is not None:
        pool, started = kept
        while not started.empty():  # the last pass's notices, its runs all answered
            started.get()
    else:
        started = ctx.SimpleQueue()
        pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_worker_init, initargs=(started,))
    ran: set[str] = set()

    def read_notices() -> None:
        while not started.empty():
            ran.add(started.get())

    left: dict[Any, dict] = {}
    broken = False
    ok = False
    try:
        left = {pool.submit(_pool_call, fn, t): t for t in tasks}
        for fut in as_completed(list(left)):
            read_notices()
            try:
                result = fut.result()
            except BrokenProcessPool:
                broken = True
                break
            del left[fut]
            yield result
        ok = not broken
    finally:
        keep = ok and "key" in _SHARED
        if keep:
            # Inside shared_pool(): keep the workers (and their imports) for the next batch.
            _SHARED["key"], _SHARED["pool"] = key, (pool, started)
        else:
            if kept is not None:
                _SHARED["pool"] = None
            pool.shutdown(wait=True, cancel_futures=True)
    if not broken:
        if not keep:
            started.close()
        return
    read_notices()
    started.close()
    running, not_started = [], []
    for fut, t in left.items():
        if fut.done() and not fut.cancelled() and fut.exception() is None:
            yield fut.result()
        elif t["run_id"] in ran:
            running.append(t)
        else:
            not_started.append(t)
    yield _Broken(running, not_started)


_STARTED = None  # in a pool worker: where it announces the run it starts

# Inside ``shared_pool()``: "key" (workers, start method) and "pool" (executor, notice
# queue) of the local pool that successive ``run_many`` calls reuse.
_SHARED: dict[str, Any] = {}


@contextlib.contextmanager
def shared_pool():
    """Within this block, successive ``run_many`` calls on a local pool of the same size
    reuse one pool of worker processes instead of starting (and importing) a fresh one per
    call; it ends with the block. A broken pool is dropped and the next call starts anew."""
    if "key" in _SHARED:  # nested: the outer block owns it
        yield
        return
    _SHARED["key"], _SHARED["pool"] = None, None
    try:
        yield
    finally:
        kept = _SHARED.get("pool")
        _SHARED.clear()
        if kept is not None:
            kept[0].shutdown(wait=True, cancel_futures=True)
            kept[1].close()


def _exit_with_parent(every_s: float = 0.5) -> None:
    """End this worker process soon after its parent dies (killed, say): a pool worker
    would otherwise wait forever on the pool's queue. Also works while the core runs,
    which releases the GIL."""
    import threading

    parent = os.getppid()

    def watch():
        while True:
            time.sleep(every_s)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="savanna-parent-watch", daemon=True).start()


def _pool_call(fn, task):
    if _STARTED is not None:
        _STARTED.put(task["run_id"])
    return fn(task)


def _results_dask(tasks: list[dict], dask: Any, fn):
    try:
        from distributed import Client, as_completed
    except ImportError as e:  # pragma: no cover - dask[distributed] is a dependency
        raise SweepError(f"dask: the distributed package is not installed ({e})") from None
    own = isinstance(dask, str)
    if own:
        try:
            client = Client(dask, timeout="10s")
        except (OSError, TimeoutError, ValueError) as e:
            raise SweepError(f"dask: cannot connect to {dask} ({_error_line(e)})") from None
    else:
        client = dask
    try:
        futures = {client.submit(fn, t, pure=False): t["run_id"] for t in tasks}
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as e:  # noqa: BLE001 - e.g. KilledWorker
                yield {"run_id": futures[fut], "error": f"dask: {_error_line(e)}"}
    finally:
        if own:
            client.close()


class _Progress:
    """tqdm bar of runs (done/total, rate, ETA, failures), only on a terminal."""

    def __init__(self, total: int, initial: int, enabled: bool):
        self.bar = None
        if enabled and total and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                initial=initial,
                unit="run",
                desc="sweep",
                file=sys.stderr,
                dynamic_ncols=True,
                smoothing=0.1,
            )
            self.bar.set_postfix(failed=0)

    def update(self, failed: int) -> None:
        if self.bar is not None:
            self.bar.set_postfix(failed=failed, refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Lock:
    """An exclusive lock on ``OUT/.lock`` for the duration of a sweep, so two sweeps do
    not write (or clean) the same dataset at once. Released when the process ends, even
    when it is killed."""

    def __init__(self, out: Path):
        self.path = out / store.LOCK_FILE
        self.fd: int | None = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:  # pragma: no cover - no advisory locks on this platform
            return self
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self.fd)
            self.fd = None
            raise SweepError(f"{self.path.parent}: another sweep is writing this dataset (lock {self.path})") from None
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        return False


# ---------------------------------------------------------------------------------------
# Sweep files (SWEEP.toml): a base scenario, a grid of its fields, seeds

# Most runs one sweep may hold (its jobs are listed in memory).
MAX_RUNS = 1_000_000

SWEEP_KEYS = {"name", "description", "base", "out", "seeds", "replications", "set", "grid", "linked"}
SEED_PARAM = "seed"
# Columns of the core's tables (docs/scenario.md) that a parameter name would hide in a
# query. The worker also checks each run's real columns; this catches the common ones
# before anything runs.
RESERVED_NAMES = {
    store.RUN_KEY,
    "flow_id",
    "src",
    "dst",
    "kind",
    "source",
    "tag",
    "start_s",
    "end_s",
    "size_bytes",
    "size_pkts",
    "fct_s",
    "data_pkts_sent",
    "retransmits",
    "timeouts",
    "fast_retransmits",
    "drops",
    "ecn_marks",
    "syn_drops",
    "first_data_drop",
    "favored_pkts",
    "class_at_end",
    "path",
    "base_rtt_s",
    "delivered_pkts",
    "t_s",
    "queue",
    "len_pkts",
    "len_bytes",
    "avg_pkts",
    "node",
    "classifier",
    "threshold",
    "side",
    "event",
    "name",
    "discipline",
}
_SEGMENT_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[[0-9]+\])*)$")


@dataclass
class Axis:
    """One dimension of the grid: a parameter ``name`` whose ``values`` (scalars, the
    column values) each set one or more scenario fields: ``sets[path][i]`` goes with
    ``values[i]``."""

    name: str
    values: list[Any]
    sets: dict[str, list[Any]]
    where: str  # how the sweep file names it, for errors


@dataclass
class Sweep:
    """A parsed sweep file. ``jobs`` is in grid order (seed varying fastest)."""

    path: Path
    name: str
    out_dir: Path
    base_dir: Path
    axes: list[Axis]
    seeds: list[int]
    jobs: list[Job]

    @property
    def shape(self) -> str:
        dims = [str(len(a.values)) for a in self.axes] + [f"{len(self.seeds)} seed(s)"]
        return " x ".join(dims)


def load_sweep(path: PathLike, *, out: PathLike | None = None, validate: bool = True) -> Sweep:
    """Read a sweep file and build its jobs; with ``validate``, check every grid point's
    scenario with the core (stops at the first bad one, naming its parameter).

    ``out`` overrides the file's ``out`` (default ``out/<sweep file name>``). Raises
    ``SweepError`` with a one-line message naming the field.
    """
    from savanna.runner import _tomllib

    path = Path(path)
    if path.is_dir():
        raise SweepError(f"{path}: is a directory, not a sweep file")
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise SweepError(f"{path}: no such sweep file") from None
    except UnicodeDecodeError as e:
        raise SweepError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise SweepError(f"{path}: {e.strerror or e}") from None
    tomllib = _tomllib()
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{path}: invalid TOML: {e}") from None
    return build_sweep(doc, path, out=out, validate=validate)


def build_sweep(doc: Mapping[str, Any], path: PathLike, *, out: PathLike | None = None, validate: bool = True) -> Sweep:
    """``load_sweep`` for an already parsed document; ``path`` names it in errors and
    anchors its relative paths."""
    path = Path(path)
    src = str(path)

    def fail(field_: str, msg: str):
        raise SweepError(f"{src}: {field_}: {msg}")

    unknown = sorted(set(doc) - SWEEP_KEYS)
    if unknown:
        fail(unknown[0], f"unknown key; allowed: {', '.join(sorted(SWEEP_KEYS))}")
    here = path.resolve().parent

    # The base scenario.
    base_spec = doc.get("base")
    if base_spec is None:
        fail("base", "required: a scenario file (path relative to the sweep file) or a table")
    if isinstance(base_spec, str):
        base_path = (here / base_spec) if not Path(base_spec).is_absolute() else Path(base_spec)
        base = _read_base(base_path, src)
        base_dir = base_path.resolve().parent
    elif isinstance(base_spec, Mapping):
        base = copy.deepcopy(dict(base_spec))
        base_dir = here
    else:
        fail("base", f"must be a file name or a table, got {_tname(base_spec)}")

    name = doc.get("name", path.stem)
    if not isinstance(name, str):
        fail("name", f"must be a string, got {_tname(name)}")
    if not isinstance(doc.get("description", ""), str):
        fail("description", "must be a string")

    # Fixed changes to the base.
    set_spec = doc.get("set", {})
    if not isinstance(set_spec, Mapping):
        fail("set", f"must be a table of field paths, got {_tname(set_spec)}")
    fixed = _flatten_paths(set_spec, stop=lambda v: not isinstance(v, Mapping))
    for p, v in fixed.items():
        _check_path(p, f"set.{p}", src)
        _assign(base, p, v, f"set.{p}", src)

    # The axes.
    axes: list[Axis] = []
    grid = doc.get("grid", {})
    if not isinstance(grid, Mapping):
        fail("grid", f"must be a table of field paths to lists of values, got {_tname(grid)}")
    for key, spec in _flatten_paths(grid, stop=lambda v: not isinstance(v, Mapping) or "values" in v).items():
        where = f"grid.{key}"
        if isinstance(spec, Mapping):
            extra = sorted(set(spec) - {"path", "values"})
            if extra:
                fail(f"{where}.{extra[0]}", "unknown key; allowed: path, values")
            fpath = spec.get("path", key)
            if not isinstance(fpath, str):
                fail(f"{where}.path", f"must be a field path (string), got {_tname(fpath)}")
            values = spec["values"]
            where_values = f"{where}.values"
        else:
            fpath, values, where_values = key, spec, where
        _check_path(fpath, where, src)
        values = _check_values(values, where_values, src)
        axes.append(Axis(key, values, {fpath: values}, where))

    linked = doc.get("linked", [])
    if not isinstance(linked, list):
        fail("linked", f"must be an array of tables ([[linked]]), got {_tname(linked)}")
    for i, spec in enumerate(linked):
        where = f"linked[{i}]"
        if not isinstance(spec, Mapping):
            fail(where, f"must be a table, got {_tname(spec)}")
        extra = sorted(set(spec) - {"name", "values", "set"})
        if extra:
            fail(f"{where}.{extra[0]}", "unknown key; allowed: name, values, set")
        lname = spec.get("name")
        if not isinstance(lname, str):
            fail(f"{where}.name", "required: the parameter's name (a string)")
        if "values" not in spec:
            fail(f"{where}.values", "required: the parameter's values (a list)")
        values = _check_values(spec["values"], f"{where}.values", src)
        sets_spec = spec.get("set")
        if not isinstance(sets_spec, Mapping) or not sets_spec:
            fail(f"{where}.set", "required: a table of field paths to lists, one entry per value")
        sets = _flatten_paths(sets_spec, stop=lambda v: not isinstance(v, Mapping))
        for p, lst in sets.items():
            _check_path(p, f"{where}.set.{p}", src)
            if not isinstance(lst, list) or len(lst) != len(values):
                fail(
                    f"{where}.set.{p}",
                    f"must be a list of {len(values)} entries (one per value), got "
                    + (f"{len(lst)}" if isinstance(lst, list) else _tname(lst)),
                )
        axes.append(Axis(lname, values, dict(sets), where))

    # Names and paths must not collide.
    names: dict[str, str] = {}
    paths: dict[str, str] = {p: f"set.{p}" for p in fixed}
    for a in axes:
        if not store.NAME_RE.match(a.name):
            fail(
                a.where,
                f"parameter name {a.name!r} must start with a letter or '_' and "
                "contain only letters, digits and _ . - [ ]",
            )
        if a.name == SEED_PARAM or any(_same_field(p, SEED_PARAM) for p in a.sets):
            fail(a.where, "the seed is not a grid field; use seeds = [...] or replications = N")
        if a.name in RESERVED_NAMES:
            fail(
                a.where,
                f"parameter name {a.name!r} is also a column of the results; "
                "choose another (in [grid]: other = { path = ..., values = [...] })",
            )
        if a.name in names:
            fail(a.where, f"parameter {a.name!r} is also defined by {names[a.name]}")
        names[a.name] = a.where
        for p in a.sets:
            for q, owner in paths.items():
                if _overlaps(p, q):
                    fail(a.where, f"field {p} is also set by {owner}")
            paths[p] = a.where

    seeds = _seeds(doc, base, src)

    # Output directory.
    if out is not None:
        out_dir = Path(out)
    elif "out" in doc:
        if not isinstance(doc["out"], str) or not doc["out"]:
            fail("out", "must be a directory name (string)")
        out_dir = here / doc["out"] if not Path(doc["out"]).is_absolute() else Path(doc["out"])
    else:
        out_dir = Path("out") / path.stem

    # Refuse a sweep too large to list before listing it (replications = 10**8 would
    # otherwise build its jobs in memory, even for --dry-run).
    total = len(seeds)
    for a in axes:
        total *= len(a.values)
    if total > MAX_RUNS:
        raise SweepError(
            f"{src}: the sweep has {total:,} runs ({len(seeds):,} seeds x the grid), more than "
            f"the {MAX_RUNS:,} a sweep may hold; use fewer replications or grid values, or split it"
        )

    # Grid points (seed fastest), each checked by the core.
    jobs: list[Job] = []
    for point in _product([len(a.values) for a in axes]):
        sc = copy.deepcopy(base)
        params: dict[str, Any] = {}
        for a, k in zip(axes, point):
            params[a.name] = a.values[k]
            for p, lst in a.sets.items():
                _assign(sc, p, copy.deepcopy(lst[k]), a.where, src)
        if validate:
            _validate_point(sc, seeds[0], base_dir, axes, point, src)
        for s in seeds:
            job_sc = copy.deepcopy(sc)
            job_sc["seed"] = s
            job_params = dict(params)
            job_params[SEED_PARAM] = s
            jobs.append(Job(_run_id(job_sc, job_params), job_sc, job_params, str(base_dir)))
    return Sweep(path, name, out_dir, base_dir, axes, seeds, jobs)


def run_sweep(sweep: Sweep, *, workers: int | None = None, dask: Any = None, progress: bool = True) -> RunReport:
    """Run a loaded sweep's jobs into its output directory (see ``run_many``)."""
    return run_many(sweep.jobs, sweep.out_dir, workers=workers, dask=dask, progress=progress)


def prune(out_dir: PathLike, keep: list[str]) -> list[str]:
    """Delete the complete runs (and failure records) in ``out_dir`` whose ids are not in
    ``keep``; drop the manifest when no run is left. Returns the deleted ids."""
    import shutil

    out = Path(out_dir)
    keep_set = set(keep)
    with _Lock(out):
        gone = []
        for rid, d in sorted(store.completed_runs(out).items()):
            if rid not in keep_set:
                shutil.rmtree(d)
                gone.append(rid)
        for rid in store.failures(out):
            if rid not in keep_set:
                store.clear_failure(out, rid)
        if not store.completed_runs(out):
            with contextlib.suppress(FileNotFoundError):
                (out / store.MANIFEST).unlink()
        _remove_empty_dirs(out / store.RUNS_DIR)
    return gone


def _remove_empty_dirs(root: Path) -> None:
    if not root.is_dir():
        return
    for dirpath, _dirs, _files in os.walk(root, topdown=False):
        p = Path(dirpath)
        if p != root:
            with contextlib.suppress(OSError):
                p.rmdir()


def _read_base(path: Path, src: str) -> dict:
    from savanna.runner import _tomllib

    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise SweepError(f"{src}: base: {path}: no such scenario file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SweepError(f"{src}: base: {path}: cannot read ({e})") from None
    try:
        doc = json.loads(text) if path.suffix.lower() == ".json" else _tomllib().loads(text)
    except ValueError as e:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise SweepError(f"{src}: base: {path}: invalid scenario syntax: {e}") from None
    if not isinstance(doc, dict):
        raise SweepError(f"{src}: base: {path}: must hold a table")
    return doc


def _flatten_paths(table: Mapping[str, Any], stop, prefix: str = "") -> dict[str, Any]:
    """Dotted paths of a (possibly nested, from bare dotted TOML keys) table; descends
    into sub-tables until ``stop(value)`` is true."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        p = f"{prefix}{k}"
        if stop(v):
            out[p] = v
        else:
            out.update(_flatten_paths(v, stop, p + "."))
    return out


def _parse_path(p: str) -> list[str | int]:
    segs: list[str | int] = []
    for part in p.split("."):
        m = _SEGMENT_RE.match(part)
        if not m:
            raise ValueError(part)
        segs.append(m.group(1))
        segs.extend(int(i) for i in re.findall(r"\[([0-9]+)\]", m.group(2)))
    return segs


def _check_path(p: str, where: str, src: str) -> None:
    try:
        _parse_path(p)
    except ValueError:
        raise SweepError(
            f"{src}: {where}: {p!r} is not a field path (names joined by '.', list entries "
            "as name[i], e.g. traffic[0].load)"
        ) from None


def _assign(sc: dict, p: str, value: Any, where: str, src: str) -> None:
    """Set field ``p`` of scenario ``sc``; missing tables on the way are created (the core
    then rejects unknown fields), list entries must exist."""
    segs = _parse_path(p)
    cur: Any = sc
    done = ""
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        if isinstance(seg, int):
            if not isinstance(cur, list):
                raise SweepError(f"{src}: {where}: {done} is not a list in the base scenario")
            if seg >= len(cur):
                raise SweepError(
                    f"{src}: {where}: {done}[{seg}] does not exist (the base scenario's "
                    f"{done} has {len(cur)} entr{'y' if len(cur) == 1 else 'ies'})"
                )
            here = f"{done}[{seg}]"
        else:
            if not isinstance(cur, dict):
                raise SweepError(f"{src}: {where}: {done} is not a table in the base scenario")
            here = f"{done}.{seg}" if done else seg
            if not last and seg not in cur:
                if isinstance(segs[i + 1], int):
                    raise SweepError(f"{src}: {where}: {here} is not in the base scenario")
                cur[seg] = {}
        if last:
            cur[seg] = value
        else:
            cur = cur[seg]
        done = here


def _check_values(values: Any, where: str, src: str) -> list[Any]:
    if not isinstance(values, list):
        raise SweepError(f"{src}: {where}: must be a list of values, got {_tname(values)}")
    if not values:
        raise SweepError(f"{src}: {where}: must not be empty")
    seen = []
    for i, v in enumerate(values):
        if isinstance(v, (dict, list)):
            raise SweepError(
                f"{src}: {where}[{i}]: grid values must be strings, numbers or booleans; "
                "to set tables or lists, use [[linked]] with a name for each value"
            )
        try:
            store.check_param("p", v)
        except store.StoreError:
            raise SweepError(
                f"{src}: {where}[{i}]: {v!r} is not allowed (strings must not be empty, "
                "numbers must be finite; no dates)"
            ) from None
        key = (type(v).__name__ if isinstance(v, (bool, str)) else "num", v)
        if key in seen:
            raise SweepError(f"{src}: {where}[{i}]: {v!r} is listed twice")
        seen.append(key)
    return list(values)


def _seeds(doc: Mapping[str, Any], base: Mapping[str, Any], src: str) -> list[int]:
    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool)

    if "seeds" in doc and "replications" in doc:
        raise SweepError(f"{src}: seeds: give either seeds or replications, not both")
    if "seeds" in doc:
        seeds = doc["seeds"]
        if not isinstance(seeds, list) or not seeds:
            raise SweepError(f"{src}: seeds: must be a non-empty list of integers")
        for i, s in enumerate(seeds):
            if not is_int(s) or not 0 <= s < 2**64:
                raise SweepError(f"{src}: seeds[{i}]: must be an integer in 0..2^64-1, got {s!r}")
        if len(set(seeds)) != len(seeds):
            raise SweepError(f"{src}: seeds: a seed is listed twice")
        return list(seeds)
    first = base.get("seed", 1)
    if not is_int(first) or not 0 <= first < 2**64:
        raise SweepError(f"{src}: base: seed must be an integer in 0..2^64-1, got {first!r}")
    if "replications" in doc:
        n = doc["replications"]
        if not is_int(n) or n < 1:
            raise SweepError(f"{src}: replications: must be a positive integer, got {n!r}")
        if n > MAX_RUNS:
            raise SweepError(f"{src}: replications: at most {MAX_RUNS:,} runs in a sweep, got {n:,}")
        if first + n > 2**64:
            raise SweepError(f"{src}: replications: seeds {first}..{first + n - 1} exceed 2^64-1")
        return [first + i for i in range(n)]
    return [first]


def _product(sizes: list[int]):
    if not sizes:
        yield ()
        return
    idx = [0] * len(sizes)
    while True:
        yield tuple(idx)
        for d in range(len(sizes) - 1, -1, -1):
            idx[d] += 1
            if idx[d] < sizes[d]:
                break
            idx[d] = 0
        else:
            return


def _validate_point(sc, seed, base_dir, axes, point, src) -> None:
    from savanna import ScenarioError
    from savanna.runner import validate as core_validate

    try:
        core_validate(sc, seed=seed, base_dir=base_dir)
    except ScenarioError as e:
        msg = " ".join(line.strip() for line in str(e).splitlines() if line.strip())
        # The position is in the JSON text made from the dict, which the user never saw.
        msg = re.sub(r"\s*\(line \d+, column \d+\)$", "", msg)
        field_ = msg.split(": ", 1)[0] if ": " in msg else ""
        blame = None
        for a, k in zip(axes, point):
            for p in a.sets:
                if field_ and _overlaps(field_, p) and (blame is None or len(p) > len(blame[2])):
                    blame = (a, k, p)
        if blame is not None:
            a, k, _p = blame
            raise SweepError(f"{src}: {a.where} value {a.values[k]!r}: {msg}") from None
        where = ", ".join(f"{a.name}={a.values[k]!r}" for a, k in zip(axes, point))
        raise SweepError(f"{src}: grid point ({where or 'base'}): {msg}") from None


def _same_field(text: str, p: str) -> bool:
    """Whether ``text`` starts with field path ``p`` (the whole field or inside it)."""
    return text == p or (text.startswith(p) and text[len(p)] in ".[: ")


def _overlaps(p: str, q: str) -> bool:
    return _same_field(p, q) or _same_field(q, p)


def _run_id(scenario: Mapping[str, Any], params: Mapping[str, Any]) -> str:
    text = json.dumps({"params": params, "scenario": scenario}, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _tname(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, Mapping):
        return "a table"
    return type(v).__name__
