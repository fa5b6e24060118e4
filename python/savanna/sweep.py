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

Each run is a pure function of its scenario (the seed rule of docs/design), executed by
``execute`` in a worker process through the same core call as ``savanna run``; the local
pool and Dask call the same function, so they give byte-identical run files.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

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
    base_dir: Optional[str] = None


@dataclass
class RunReport:
    """What ``run_many`` did: ``done`` run ids completed now, ``skipped`` ones that were
    complete before, ``failed`` run id -> one-line error. ``stale``: complete runs in the
    output directory that are not among the jobs. ``params``: run id -> parameters."""

    done: List[str] = field(default_factory=list)
    skipped: List[str] = field(default_factory=list)
    failed: Dict[str, str] = field(default_factory=dict)
    stale: List[str] = field(default_factory=list)
    params: Dict[str, dict] = field(default_factory=dict)
    out_dir: Optional[Path] = None
    wall_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed


# ---------------------------------------------------------------------------------------
# The worker side: one run, from scenario to file contents


def execute(task: Mapping[str, Any]) -> dict:
    """Run one job in the calling process and return its files' contents.

    ``task``: ``run_id``, ``scenario`` (dict), ``params`` (dict), ``base_dir`` (str).
    Returns ``{"run_id", "files": {name: bytes}}`` or ``{"run_id", "error": str}``; it
    never raises for a failed run, so pools and clusters treat every run alike. The
    files are the core's outputs byte for byte, plus the summary tables, ``params.json``
    and ``scenario.json``.
    """
    run_id = task["run_id"]
    try:
        return {"run_id": run_id, "files": _simulate(task)}
    except Exception as e:  # noqa: BLE001 - a failed run is data, not a crash
        return {"run_id": run_id, "error": _error_line(e)}


def _simulate(task: Mapping[str, Any]) -> Dict[str, bytes]:
    from savanna import _core
    from savanna.runner import resolve_scenario

    params = dict(task["params"])
    _fail_hook(params)
    sc = resolve_scenario(task["scenario"], base_dir=task["base_dir"])
    with tempfile.TemporaryDirectory(prefix="savanna-sweep-") as tmp:
        out = Path(tmp) / "out"  # not existing yet: the core creates it
        _core.run_to_dir(sc.text, sc.fmt, str(sc.base_dir), str(out), None, None)
        files = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}
    if store.COMPLETE_MARKER not in files:
        raise RuntimeError(f"the core wrote no {store.COMPLETE_MARKER}")
    summary = json.loads(files[store.COMPLETE_MARKER])
    files.update(store.summary_tables(summary, skip=params))
    _check_shadowing(files, params)
    files["params.json"] = _json_bytes(params)
    files["scenario.json"] = _json_bytes(
        {"base_dir": str(sc.base_dir), "scenario": task["scenario"]}
    )
    return files


def _check_shadowing(files: Mapping[str, bytes], params: Mapping[str, Any]) -> None:
    # A partition column hides a file column of the same name in DuckDB; refuse that
    # rather than let a query read the wrong values.
    import pyarrow as pa
    import pyarrow.parquet as pq

    taken = set(params) | {store.RUN_KEY}
    for name, data in files.items():
        if name.endswith(".parquet"):
            cols = set(pq.read_schema(pa.BufferReader(data)).names)
            clash = sorted(cols & taken)
            if clash:
                raise ValueError(
                    f"parameter {clash[0]!r} has the name of a column of {name}; rename it"
                )


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


def _worker_init() -> None:
    # Ctrl-C in the terminal reaches the workers too: let it end them at once (the core
    # runs without returning to Python, and the parent writes nothing of theirs).
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    except ValueError:  # pragma: no cover
        pass


# ---------------------------------------------------------------------------------------
# The parent side


def run_many(
    jobs: List[Job],
    out_dir: PathLike,
    workers: Optional[int] = None,
    dask: Optional[Any] = None,
    progress: bool = True,
) -> RunReport:
    """Run ``jobs`` into the dataset at ``out_dir`` and report what happened.

    ``workers``: size of the local process pool (default ``os.cpu_count()``; 1 runs in
    this process). ``dask``: the address of a Dask distributed scheduler
    (``tcp://host:port``) or a ``distributed.Client``; the runs then go to that cluster
    (results come back to this process, which writes them, so the workers need no shared
    file system). ``progress``: a progress bar on stderr when it is a terminal.

    Raises ``SweepError`` for a bad job list or an output directory in use by another
    sweep; failed runs do not raise.
    """
    t0 = time.perf_counter()
    out = Path(out_dir)
    names, types = _check_jobs(jobs)
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
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
        tasks = [
            {
                "run_id": j.run_id,
                "scenario": j.scenario,
                "params": dict(j.params),
                "base_dir": str(Path(j.base_dir).resolve()) if j.base_dir else cwd,
            }
            for j in todo
        ]
        by_id = {t["run_id"]: t for t in tasks}
        done = set()
        bar = _Progress(len(jobs), len(report.skipped), enabled=progress)
        try:
            for result in _results(tasks, workers, dask):
                rid = result["run_id"]
                err = result.get("error")
                if err is None:
                    try:
                        store.commit_run(out, rid, by_id[rid]["params"], names, result["files"])
                    except OSError as e:
                        err = f"cannot write the run into {out}: {e}"
                if err is None:
                    done.add(rid)
                else:
                    report.failed[rid] = err
                    t = by_id[rid]
                    store.record_failure(
                        out,
                        rid,
                        {"run_id": rid, "params": t["params"], "error": err,
                         "base_dir": t["base_dir"], "scenario": t["scenario"]},
                    )
                bar.update(len(report.failed))
        finally:
            bar.close()
        report.done = [j.run_id for j in todo if j.run_id in done]
    # Order failures as the jobs were given (completion order is not deterministic).
    report.failed = {j.run_id: report.failed[j.run_id] for j in todo if j.run_id in report.failed}
    report.wall_seconds = time.perf_counter() - t0
    return report


def _check_jobs(jobs: List[Job]) -> Tuple[List[str], Dict[str, str]]:
    if not isinstance(jobs, (list, tuple)):
        raise SweepError(f"jobs: must be a list of Job, got {type(jobs).__name__}")
    names: Optional[List[str]] = None
    types: Dict[str, str] = {}
    seen = set()
    for i, j in enumerate(jobs):
        where = f"jobs[{i}]"
        if not isinstance(j, Job):
            raise SweepError(f"{where}: must be a Job, got {type(j).__name__}")
        if not isinstance(j.run_id, str) or not store.RUN_ID_RE.match(j.run_id):
            raise SweepError(
                f"{where}.run_id: {j.run_id!r} must be letters, digits, '_', '.' or '-' "
                "(not starting with '.' or '-')"
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


def _results(tasks: List[dict], workers: Optional[int], dask: Any):
    """Yield ``execute``'s result for every task, in completion order."""
    if not tasks:
        return
    if dask is not None:
        yield from _results_dask(tasks, dask)
        return
    n = min(workers or os.cpu_count() or 1, len(tasks))
    if n == 1:
        for t in tasks:
            yield execute(t)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_worker_init)
    try:
        futures = {pool.submit(execute, t): t["run_id"] for t in tasks}
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except BrokenProcessPool:
                yield {"run_id": futures[fut], "error": "the worker process died"}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _results_dask(tasks: List[dict], dask: Any):
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
        futures = {client.submit(execute, t, pure=False): t["run_id"] for t in tasks}
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
                total=total, initial=initial, unit="run", desc="sweep", file=sys.stderr,
                dynamic_ncols=True, smoothing=0.1,
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
        self.fd: Optional[int] = None

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
            raise SweepError(
                f"{self.path.parent}: another sweep is writing this dataset (lock {self.path})"
            ) from None
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        return False
