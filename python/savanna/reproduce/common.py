"""Shared machinery of the paper reproductions (``savanna reproduce``, issue 6 part 3):
loading a paper's scenario files from ``scenarios/``, overriding their fields, seeds for
replications, running batches of simulations through ``savanna.sweep.run_many`` into a
results store under the output directory (so a re-run reuses every completed run), and
reading the results back with ``savanna.store``.

It follows no paper itself; the paper modules beside it describe their experiments with it,
and share from it the helpers their figures use (``block``, ``ecdf``, ``line_band``, the
disciplines' names and colours) and ``Report``, what their figure functions add to.

Run caching: every run's id ends with a hash of its complete scenario, of the files it reads
(such as an empirical size CDF) and of the simulator core's binary, so a run is reused only
when it would be the same simulation; quick and full runs, runs of an edited scenario and
runs of another build of the core never mix. Each
experiment has its own dataset directory ``OUT/runs/<experiment>/``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from savanna.sweep import Job

PathLike = "os.PathLike[str] | str"


class ReproduceError(ValueError):
    """Bad input to a reproduction (one line; the command exits with code 2)."""


class RunFailed(ReproduceError):
    """A simulation of a reproduction failed (the command exits with code 1)."""


def scenarios_dir() -> Path:
    """The repository's ``scenarios/`` directory (override with ``SAVANNA_SCENARIOS``)."""
    env = os.environ.get("SAVANNA_SCENARIOS")
    d = Path(env) if env else Path(__file__).resolve().parents[3] / "scenarios"
    if not d.is_dir():
        raise ReproduceError(f"scenarios directory {d} not found; run from a source checkout or set SAVANNA_SCENARIOS")
    return d


def load_scenario(name: str) -> dict:
    """Parse ``scenarios/<name>`` (TOML) into a dict."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    path = scenarios_dir() / name
    if not path.is_file():
        raise ReproduceError(f"scenario file {path} not found")
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def override(scenario: Mapping[str, Any], changes: Mapping[str, Any]) -> dict:
    """A deep copy of ``scenario`` with dotted paths set, e.g.
    ``{"topology.bottleneck_queue.type": "favorqueue", "traffic[0].load": 0.5}``.
    A path through a missing table creates it; a bad index is an error."""
    out = copy.deepcopy(dict(scenario))
    for path, value in changes.items():
        node: Any = out
        parts = _split(path)
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if isinstance(part, int):
                if not isinstance(node, list) or not -len(node) <= part < len(node):
                    raise ReproduceError(f"override {path}: no element {part}")
                if last:
                    node[part] = copy.deepcopy(value)
                else:
                    node = node[part]
            else:
                if not isinstance(node, dict):
                    raise ReproduceError(f"override {path}: {part} is not inside a table")
                if last:
                    node[part] = copy.deepcopy(value)
                else:
                    node = node.setdefault(part, {})
    return out


def _split(path: str) -> list[Any]:
    parts: list[Any] = []
    for piece in path.split("."):
        name, _, rest = piece.partition("[")
        if name:
            parts.append(name)
        while rest:
            idx, _, rest = rest.partition("]")
            parts.append(int(idx))
            rest = rest[1:] if rest.startswith("[") else rest
    return parts


def seeds(n: int, base: int = 1) -> list[int]:
    """The seeds of ``n`` replications: base, base + 1, ... Every discipline of a
    comparison gets the same seeds, hence the same flows (the seed rule)."""
    return [base + i for i in range(n)]


_CORE_DIGEST: str | None = None
_CORE_STAT: tuple | None = None


def _core_path() -> Path:
    from savanna import _core

    return Path(getattr(_core, "__file__", "") or "")


def _core_stat() -> tuple:
    try:
        st = _core_path().stat()
        return (st.st_size, st.st_mtime_ns)
    except OSError:
        return (0, 0)


def core_digest() -> str:
    """A hash of the simulator core's binary (``savanna._core``): runs made by another build
    of the core are not reused, since its records may differ."""
    global _CORE_DIGEST, _CORE_STAT
    if _CORE_DIGEST is None:
        from savanna import _core

        path = _core_path()
        _CORE_STAT = _core_stat()
        data = path.read_bytes() if path.is_file() else str(getattr(_core, "__version__", "")).encode()
        _CORE_DIGEST = hashlib.sha256(data).hexdigest()[:16]
    return _CORE_DIGEST


def core_changed() -> bool:
    """Whether the core's binary on disk is no longer the one ``core_digest`` hashed (it was
    rebuilt while a reproduction ran: later worker processes would load the new build)."""
    return _CORE_STAT is not None and _core_stat() != _CORE_STAT


def scenario_digest(scenario: Mapping[str, Any], base_dir: Path | None = None) -> str:
    """A short hash of a scenario, of the files it names (``file`` keys) and of the core's
    build, so that a cached run is reused only for an identical simulation."""
    h = hashlib.sha256(json.dumps(scenario, sort_keys=True, default=str).encode())
    h.update(core_digest().encode())
    for f in sorted(_file_refs(scenario)):
        p = Path(f)
        if not p.is_absolute() and base_dir is not None:
            p = base_dir / p
        h.update(f.encode())
        h.update(p.read_bytes() if p.is_file() else b"<missing>")
    return h.hexdigest()[:10]


def _file_refs(x: Any) -> Iterable[str]:
    if isinstance(x, Mapping):
        for k, v in x.items():
            if k == "file" and isinstance(v, str):
                yield v
            else:
                yield from _file_refs(v)
    elif isinstance(x, list):
        for v in x:
            yield from _file_refs(v)


# ---------------------------------------------------------------------------------------
# The context a paper module works in


# DuckDB's memory cap in the reproductions' queries (its default is 80% of the machine):
# above it a query spills to disk rather than growing (issue 21: the whole full-mode
# command within 2 GB). Override with SAVANNA_DUCKDB_MEMORY.
DUCKDB_MEMORY = "1GB"


def query_store(dataset: Path, sql: str) -> Any:
    """``store.query`` for the reproductions: one DuckDB thread, so every float aggregate
    is added in the same order and the same runs give byte-identical claims and reports
    (with several threads the last digits can change from one analysis to the next), and
    a memory cap (``DUCKDB_MEMORY``)."""
    from savanna import store

    return store.query(dataset, sql, threads=1, memory_limit=os.environ.get("SAVANNA_DUCKDB_MEMORY", DUCKDB_MEMORY))


# Dataset directory -> the futures of the batches still being written into it (by a
# Context with ``ahead``); a query over the dataset waits for them.
_PENDING: dict[str, list[Any]] = {}
_PENDING_LOCK = threading.Lock()


def _settle(dataset: Path) -> None:
    with _PENDING_LOCK:
        futures = list(_PENDING.get(str(dataset), ()))
    for f in futures:
        f.result()


@dataclass
class Batch:
    """The runs of one experiment: where they are and which run ids belong to it."""

    name: str
    dataset: Path
    run_ids: list[str]
    done: int = 0
    skipped: int = 0
    wall_s: float = 0.0

    def query(self, sql_select: str, table: str = "flows", where: str = "", group_by: str = "") -> Any:
        """``SELECT <sql_select> FROM <table> WHERE run_id IN (this batch) [AND <where>]
        [GROUP BY <group_by>]`` as a pandas DataFrame (parameter columns and ``run_id`` are
        available). Grouped rows come ordered by the grouping columns, so that sums taken
        over them afterwards (in pandas) add in one order whatever the store's internals."""
        _settle(self.dataset)
        cond = "{runs}" + (f" AND ({where})" if where else "")
        group = f" GROUP BY {group_by} ORDER BY {group_by}" if group_by else ""
        return query_store(self.dataset, self._with_runs(f"SELECT {sql_select} FROM {table} WHERE {cond}{group}"))

    def runs_filter(self) -> str:
        """The SQL condition selecting this batch's runs: ``run_id IN (...)``."""
        ids = ", ".join("'" + r.replace("'", "''") + "'" for r in self.run_ids)
        return f"run_id IN ({ids})"

    def sql(self, query: str) -> Any:
        """Run a full SQL ``query`` over the batch's store, with ``{runs}`` standing for
        the condition that selects this batch's runs; a pandas DataFrame."""
        _settle(self.dataset)
        return query_store(self.dataset, self._with_runs(query))

    def holds_all(self) -> bool:
        """Whether every completed run of the batch's dataset is one of its runs (the
        usual case: one experiment, one dataset)."""
        from savanna import store

        return set(store.completed_runs(self.dataset)) <= set(self.run_ids)

    def _with_runs(self, query: str) -> str:
        """``query`` with ``{runs}`` (or ``<alias>.{runs}``) replaced by the condition
        selecting the batch's runs. When the dataset holds no other run, that is ``TRUE``:
        the same rows, read in the same order, without testing each row's run id against
        a list of thousands (over a second a query on the FavorQueue load sweeps, issue 21)."""
        if "{runs}" not in query:
            return query
        if self.holds_all():
            return _RUNS_REF.sub("TRUE", query)
        return query.replace("{runs}", self.runs_filter())


# ``{runs}`` in a batch's query, with the table alias that may qualify it.
_RUNS_REF = re.compile(r"(?:\b\w+\.)?\{runs\}")


@dataclass
class Context:
    """What a paper module gets: the mode, where to write, and ``run`` for simulations."""

    key: str
    out_dir: Path
    quick: bool
    workers: int | None = None
    progress: bool = True
    batches: list[Batch] = field(default_factory=list)
    # Every run of this reproduction by its complete scenario (``_same_key``): a job of a
    # later experiment whose scenario is one of these is copied, not simulated again.
    done_runs: dict[str, Path] = field(default_factory=dict)
    # Run batches ahead of the analysis (``run`` returns at once), as ``savanna reproduce``
    # does: the figures of one experiment are drawn while the next one's runs simulate.
    ahead: bool = False
    # Called (on the batches' thread) whenever the last batch started so far has finished:
    # ``savanna reproduce all`` then starts the next paper, whose runs overlap this one's
    # analysis.
    on_idle: Any = None
    _thread: Any = field(default=None, repr=False)
    _queued: int = field(default=0, repr=False)

    @property
    def mode(self) -> str:
        return "quick" if self.quick else "full"

    def log(self, msg: str) -> None:
        if self.progress:
            print(f"{self.key}: {msg}", file=sys.stderr, flush=True)

    def job(self, experiment: str, scenario: Mapping[str, Any], params: Mapping[str, Any]) -> Job:
        """A sweep ``Job`` for ``scenario`` with ``params``; its run id names the
        parameters and ends with the scenario digest. Relative files resolve in scenarios/."""
        from savanna.sweep import Job

        base = scenarios_dir()
        label = "-".join(f"{k}{_id_value(v)}" for k, v in params.items())
        run_id = f"{experiment}-{label}-{scenario_digest(scenario, base)}"
        return Job(run_id=run_id, scenario=dict(scenario), params=dict(params), base_dir=str(base))

    def run(self, experiment: str, jobs: Sequence[Any]) -> Batch:
        """Run (or reuse) ``jobs`` into ``OUT/runs/<experiment>``; raise ReproduceError
        naming the first failed run. With ``ahead``, return at once: the batches run one
        after another on a thread of their own, and a query waits for the runs of its
        dataset (the error, if any, is raised there, or by ``settle``)."""
        jobs = list(jobs)
        dataset = self.out_dir / "runs" / experiment
        b = Batch(experiment, dataset, [j.run_id for j in jobs])
        self.batches.append(b)
        if not self.ahead:
            self._run(b, jobs)
            return b
        if self._thread is None:
            from concurrent.futures import ThreadPoolExecutor

            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="savanna-batches")
        with _PENDING_LOCK:
            self._queued += 1
        fut = self._thread.submit(self._run_then_count, b, jobs)
        with _PENDING_LOCK:
            _PENDING.setdefault(str(dataset), []).append(fut)
        return b

    def settle(self) -> None:
        """Wait for every batch started with ``ahead``; raise the first one's error."""
        for b in self.batches:
            _settle(b.dataset)

    def close(self) -> None:
        """End the batches' thread: drop the batches not started, wait for the one
        running (errors aside)."""
        if self._thread is not None:
            self._thread.shutdown(wait=True, cancel_futures=True)
            self._thread = None
        with _PENDING_LOCK:
            for b in self.batches:
                _PENDING.pop(str(b.dataset), None)

    def _run_then_count(self, b: Batch, jobs: list[Any]) -> None:
        try:
            self._run(b, jobs)
        finally:
            with _PENDING_LOCK:
                self._queued -= 1
                idle = self._queued == 0
            if idle and self.on_idle is not None:
                self.on_idle()

    def _run(self, b: Batch, jobs: list[Any]) -> None:
        from savanna.sweep import SweepError, run_many

        t0 = time.perf_counter()
        experiment, dataset = b.name, b.dataset
        copied = self._copy_same(dataset, jobs)
        # Longest first, so that the workers finish the batch together (the order of the
        # runs changes no run's records, nor the batch's run ids).
        order = sorted(jobs, key=lambda j: -expected_cost(j.scenario))
        try:
            rep = run_many(order, dataset, workers=self.workers, progress=self.progress)
        except SweepError as e:  # an unusable output directory, or one in use by another run
            raise ReproduceError(f"--out: {e}") from None
        if rep.failed:
            rid, err = next(iter(rep.failed.items()))
            raise RunFailed(f"{self.key}: run {rid} failed: {err} ({len(rep.failed)} failed in {experiment})")
        if core_changed():
            raise RunFailed(
                f"{self.key}: the simulator core ({_core_path().name}) was rebuilt while the "
                "reproduction ran, so its runs may mix two builds; run it again"
            )
        from savanna import store

        stored = store.completed_runs(dataset)
        for j in jobs:
            if j.run_id in stored:
                self.done_runs.setdefault(_same_key(j), stored[j.run_id])
        b.done, b.skipped, b.wall_s = len(rep.done), len(rep.skipped), time.perf_counter() - t0
        also = f", {copied} of them copied from an identical run of another experiment" if copied else ""
        self.log(f"{experiment}: {len(jobs)} runs ({b.skipped} reused{also}) in {b.wall_s:.1f} s")

    def _copy_same(self, dataset: Path, jobs: Sequence[Any]) -> int:
        """Copy into ``dataset`` every job's run that an earlier experiment of this
        reproduction already made with the identical scenario (the same simulation, hence
        the same records): the core's files byte for byte, with this job's parameters
        and summary tables. Returns how many were copied (``run_many`` then reuses them)."""
        from savanna import store
        from savanna.sweep import SweepError, _check_jobs, _check_shadowing, _json_bytes

        todo = [(j, self.done_runs.get(_same_key(j))) for j in jobs]
        todo = [(j, src) for j, src in todo if src is not None and (src / store.COMPLETE_MARKER).is_file()]
        if not todo:
            return 0
        try:
            names, types = _check_jobs(list(jobs))
            dataset.mkdir(parents=True, exist_ok=True)
            store.merge_manifest(dataset, names, types)
        except (SweepError, store.StoreError, OSError) as e:
            raise ReproduceError(f"--out: {e}") from None
        have = store.completed_runs(dataset)
        n = 0
        for j, src in todo:
            if j.run_id in have:
                continue
            derived = {"params.json", "scenario.json", "summaries.parquet"}
            files = {
                p.name: p.read_bytes()
                for p in sorted(src.iterdir())
                if p.is_file() and p.name not in derived and not p.name.startswith("summary_")
            }
            summary = json.loads(files[store.COMPLETE_MARKER])
            files.update(store.summary_tables(summary, skip=j.params))
            try:
                _check_shadowing(files, j.params)
            except ValueError as e:
                raise RunFailed(f"{self.key}: run {j.run_id} failed: {e}") from None
            files["params.json"] = _json_bytes(dict(j.params))
            files["scenario.json"] = _json_bytes({"base_dir": str(Path(j.base_dir).resolve()), "scenario": j.scenario})
            store.commit_run(dataset, j.run_id, j.params, names, files)
            n += 1
        return n


RATE_KEYS = ("bottleneck_rate_mbps", "core_rate_mbps", "path_rate_mbps", "rate_mbps")


def expected_cost(scenario: Mapping[str, Any]) -> float:
    """A run's cost in proportion to its expected event count, for ordering a batch: the
    simulated seconds times the bottleneck's rate times one plus the offered load (the
    traffic blocks' ``load``). Only compares runs; never read by any result."""
    topo = scenario.get("topology") or {}
    rate = next((float(topo[k]) for k in RATE_KEYS if isinstance(topo.get(k), (int, float))), 1.0)
    loads = [t.get("load") for t in scenario.get("traffic") or [] if isinstance(t, Mapping)]
    load = sum(float(x) for x in loads if isinstance(x, (int, float)))
    return float(scenario.get("duration_s") or 1.0) * rate * (1.0 + load)


def _same_key(job: Any) -> str:
    """What makes two jobs the same simulation: the complete scenario and where its files
    are read from (the run id's digest covers the files' contents and the core)."""
    return json.dumps([job.scenario, str(job.base_dir), job.run_id.rsplit("-", 1)[-1]], sort_keys=True, default=str)


def _id_value(v: Any) -> str:
    s = f"{v:g}" if isinstance(v, float) else str(v)
    return "".join(c if c.isalnum() or c in "._" else "_" for c in s)


@dataclass
class Outcome:
    """What a paper module returns for its report (see ``savanna.report.write_report``)."""

    title: str
    intro: str
    figures: list[Any]
    claims: list[Any]
    tables: list[Any] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------
# Helpers the paper modules share: figure style and per-group confidence intervals


def plot_style(
    height: float | None = 3.9,
    linewidth: float = 1.5,
    hashsalt: str = "savanna",
    font_size: float = 9.5,
    legend_font_size: float = 8.5,
    marker_size: float = 4.5,
) -> ModuleType:
    """matplotlib (Agg backend) with the reports' look: light grid, no top/right spines,
    constrained layout, 6.4 x ``height`` inch figures (``height=None`` keeps matplotlib's
    default size), and a fixed SVG hash salt so that figures are byte-identical run to run.
    Returns ``matplotlib.pyplot``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    params = {
        "font.size": font_size,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "legend.frameon": False,
        "legend.fontsize": legend_font_size,
        "svg.hashsalt": hashsalt,
        "lines.linewidth": linewidth,
        "lines.markersize": marker_size,
        "figure.constrained_layout.use": True,
    }
    if height is not None:
        params["figure.figsize"] = (6.4, height)
    plt.rcParams.update(params)
    return plt


def ci_frame(df: Any, by: list[str], value: str, keep_empty: bool = False) -> Any:
    """Mean and 95% CI of ``value`` over replications, per group ``by``: a DataFrame with the
    ``by`` columns, ``mean``, ``lo``, ``hi`` and ``n`` (``savanna.report.mean_ci``:
    non-finite values are ignored, one replication gives lo = hi = mean). A group with no
    finite value is left out, or kept with NaNs when ``keep_empty``."""
    import pandas as pd

    from savanna.report import mean_ci

    rows = []
    for key, g in df.groupby(by, sort=True):
        m, lo, hi, n = mean_ci(g[value].to_numpy(dtype=float))
        if n == 0 and not keep_empty:
            continue
        key = key if isinstance(key, tuple) else (key,)
        rows.append(dict(zip(by, key), mean=m, lo=lo, hi=hi, n=n))
    return pd.DataFrame(rows)


def block(sc: Mapping[str, Any], name: str) -> int:
    """Index of the ``[[traffic]]`` block called ``name`` in scenario ``sc`` (for dotted
    override paths such as ``traffic[2].load``); ReproduceError if there is none."""
    for i, t in enumerate(sc.get("traffic", [])):
        if t.get("name") == name:
            return i
    raise ReproduceError(f"traffic block {name!r} not in scenario {sc.get('name')}")


def ecdf(values: Any, points: int = 1500) -> tuple[Any, Any]:
    """Points of the empirical CDF of ``values`` for a step plot (``where="post"``): the
    smallest value at 0, then each distinct value, sorted, with P(X <= x). Above ``points``
    values the curve is thinned, for light SVGs, to about ``points`` evenly spaced values
    plus a geometric sample of the upper tail (so log-scale CCDFs keep their tail); each
    value kept carries its exact CDF, ties included, so the drawn steps stay on the curve."""
    import numpy as np

    v = np.sort(np.asarray(values, dtype=float))
    n = len(v)
    if n == 0:
        return v, np.array([])
    kept = v
    if n > points:
        idx = np.concatenate([np.linspace(0, n - 1, points), n - np.geomspace(1, n, points // 3)])
        kept = v[np.clip(idx.astype(int), 0, n - 1)]
    kept = np.unique(kept)
    return np.concatenate([kept[:1], kept]), np.concatenate([[0.0], np.searchsorted(v, kept, side="right") / n])


# Display names, colours and markers of the queue disciplines, shared by every paper's
# figures and tables (a paper labelling a configuration otherwise keeps its own table).
NAMES = {
    "droptail": "DropTail",
    "red": "RED",
    "rio": "RIO-PS",
    "favorqueue": "FavorQueue",
    "choke": "CHOKe",
    "las": "LAS",
    "run2c": "RuN2C",
    "prq": "PRQ",
    "reddiff": "RED-diff",
    "drr": "DRR",
    "codel": "CoDel",
    "fq_codel": "FQ-CoDel",
    "pie": "PIE",
    "pi": "PI",
}
COLORS = {
    "droptail": "#3b3b3b",
    "red": "#b42318",
    "rio": "#1f5fbf",
    "favorqueue": "#1f5fbf",
    "choke": "#e07b00",
    "las": "#2a9d4b",
    "run2c": "#8e44ad",
}
MARKERS = {"droptail": "o", "red": "^", "rio": "s", "favorqueue": "s", "choke": "^", "las": "D", "run2c": "v"}


def band(ax: Any, x: Any, lo: Any, hi: Any, color: str, alpha: float = 0.15, log: bool = False) -> None:
    """A confidence band between ``lo`` and ``hi``. With ``log`` (a log y axis) a lower
    bound at or below zero (few replications) is drawn as reaching below the axis rather
    than dropped."""
    import numpy as np

    if log:
        lo = np.where(np.asarray(lo, dtype=float) > 0, lo, 1e-12)
    ax.fill_between(x, lo, hi, color=color, alpha=alpha, linewidth=0)


def line_band(
    ax: Any, x: Any, m: Any, lo: Any, hi: Any, color: str, label: str, marker: str | None = None, ls: str = "-"
) -> None:
    """A line of means with its 95% confidence band."""
    ax.plot(x, m, ls, color=color, marker=marker, label=label)
    band(ax, x, lo, hi, color)


# ---------------------------------------------------------------------------------------
# The report a paper module builds


@dataclass
class Report:
    """What a paper's figure and table functions add to, and what becomes its ``Outcome``:
    the samples of every declared claim (by id), the notes explaining a verdict (``notes``
    add to the verdict's sentence, ``fixed`` replaces it), the figures (saved under
    ``out_dir``) and the tables. ``plt`` is ``plot_style()``'s pyplot."""

    specs: Sequence[Any]
    out_dir: Path
    plt: Any = None
    samples: dict[str, list[float]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    figures: list[Any] = field(default_factory=list)
    tables: list[Any] = field(default_factory=list)
    fixed: dict[str, str] = field(default_factory=dict)  # notes replacing the verdict's own sentence
    causes: dict[str, tuple[str, str]] = field(default_factory=dict)  # declared (cause, evidence), ns2column

    def __post_init__(self) -> None:
        for c in self.specs:
            self.samples.setdefault(c.id, [])

    def figure(self, fg: Any, id: str, title: str, caption: str) -> None:
        """Save matplotlib figure ``fg`` as ``id`` (PNG and SVG) and add it to the report."""
        from savanna.report import save_figure

        self.figures.append(save_figure(fg, self.out_dir, id, title, caption))

    def table(self, title: str, columns: list[str], rows: list[list[Any]], caption: str = "") -> None:
        """Add a table to the report."""
        from savanna.report import Table

        self.tables.append(Table(title, columns, rows, caption))

    def claims(self) -> list[Any]:
        """Every declared claim judged on its samples (``savanna.report.judge``), in order, with
        ns-2's column and the cause of each miss (``savanna.reproduce.ns2column``)."""
        from savanna.report import judge
        from savanna.reproduce.ns2column import annotate

        judged = [
            judge(c, self.samples[c.id], note=self.fixed.get(c.id, ""), why=self.notes.get(c.id, ""))
            for c in self.specs
        ]
        return annotate(judged, self.specs, self.causes)
