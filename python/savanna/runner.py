"""Run one scenario from Python: ``savanna.run`` and the ``Result`` it returns.

A scenario is given as a path to a ``.toml``/``.json`` file, as TOML text, or as a dict
(sent to the core as JSON). The core (``savanna._core``, Rust) parses, validates and
simulates it with the GIL released and writes ``flows.parquet``, ``queues.parquet`` (when
sampling is on) and ``summary.json``; this module reads them back into pandas.

The command line's ``run`` imports this module, so it imports nothing at the top but ``os``
and the core: pandas and pyarrow when results are loaded, ``json``, ``pathlib``, ``numbers``
and the TOML parser only where needed (issue 21). A scenario's syntax is checked by the
core's parser; Python's parsers read it again only when the core rejected it, to word a
syntax error the same way whichever parser found it (see `call_core`).
"""

from __future__ import annotations

import os

from savanna import _core
from savanna._core import ScenarioError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, Callable, Union

    import pandas as pd

    ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]

FLOWS_FILE = "flows.parquet"
QUEUES_FILE = "queues.parquet"
SUMMARY_FILE = "summary.json"


class ScenarioText:
    """A scenario ready for the core: its text, its format (``"toml"`` or ``"json"``), the
    directory that relative file names inside it are resolved against (a str), ``origin``
    (names it in error messages) and ``checked``: whether its syntax was checked in Python
    already (see `call_core`)."""

    __slots__ = ("text", "fmt", "base_dir", "origin", "checked")

    def __init__(self, text: str, fmt: str, base_dir: str, origin: str, checked: bool) -> None:
        self.text, self.fmt, self.base_dir, self.origin, self.checked = text, fmt, base_dir, origin, checked

    def __repr__(self) -> str:
        return f"ScenarioText(fmt={self.fmt!r}, base_dir={self.base_dir!r}, origin={self.origin!r})"


class Result:
    """The records of one run.

    ``flows``: one row per flow (pandas DataFrame, columns as in docs/scenario.md: flow_id, src,
    dst, kind, start_s, end_s, size_bytes, fct_s, ...). ``queues``: per-queue time series
    (DataFrame), or None when the scenario did not turn queue sampling on. ``classifiers``
    and ``traces``: the edge classifiers' time series and the TCP state traces of the flows
    listed in ``[trace]`` (DataFrames, or None when not written). ``goodput``: data
    packets each flow delivered per window (goodput.parquet, written with sampling);
    ``network``: active TCP and UDP flows and packets in flight over time
    (network.parquet, written with sampling). ``summary``: the
    run summary (dict, as in summary.json). ``out_dir``: where the files are, or None when
    they were written to a temporary directory that is already gone.
    """

    def __init__(
        self,
        flows: pd.DataFrame,
        queues: pd.DataFrame | None,
        summary: dict,
        out_dir: Path | None = None,
        scenario: str = "",
        classifiers: pd.DataFrame | None = None,
        traces: pd.DataFrame | None = None,
        goodput: pd.DataFrame | None = None,
        network: pd.DataFrame | None = None,
    ) -> None:
        self.flows = flows
        self.queues = queues
        self.summary = summary
        self.out_dir = out_dir
        self.scenario = scenario
        self.classifiers = classifiers
        self.traces = traces
        self.goodput = goodput
        self.network = network

    def __repr__(self) -> str:
        s = self.summary
        q = "None" if self.queues is None else f"{len(self.queues)} rows"
        return (
            f"<savanna.Result {s.get('scenario', '') or self.scenario!s}: "
            f"{len(self.flows)} flows, queues={q}, sim_seconds={s.get('sim_seconds')}, "
            f"out_dir={str(self.out_dir) if self.out_dir else None}>"
        )


def run(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    duration_s: float | None = None,
    out: str | os.PathLike[str] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    max_events: float | None = None,
    max_memory_gb: float | None = None,
) -> Result:
    """Run one simulation and return its records.

    ``scenario``: a path (str or pathlib.Path) to a ``.toml`` or ``.json`` file, TOML text,
    or a dict. ``seed`` and ``duration_s`` override the scenario's. ``out``: directory to
    write the output files into (kept); without it they go to a temporary directory that is
    removed once loaded. ``base_dir``: where relative file names inside the scenario are
    resolved (default: the scenario file's directory, or the current directory for text
    and dicts). ``max_events``, ``max_memory_gb``: the run's budget (docs/scenario.md,
    "Limits"): a scenario estimated to need more events or memory is refused up front.

    Ctrl-C (SIGINT) stops the run within a fraction of a second and raises
    ``KeyboardInterrupt``; nothing is written.

    Raises ``ScenarioError`` (a ValueError) for an invalid scenario, budget or output path,
    ``FileNotFoundError`` when the scenario file does not exist, and ``RuntimeError`` for
    an internal error of the simulator.
    """
    sc = resolve_scenario(scenario, base_dir=base_dir, check=False)
    seed, duration_s = check_overrides(seed, duration_s)
    budget = check_budget(max_events, max_memory_gb)
    if out is not None:
        out_dir = check_out(out)
        sweep_dead_partials(out_dir)
        summary_json = call_core(sc, _core.run_to_dir, out_dir, seed, duration_s, *budget)
        return load_result(out_dir, summary_json, scenario=sc.origin, keep_dir=True)
    import shutil  # here, not at the top: the command line's `run` never needs them
    import tempfile

    tmp = tempfile.mkdtemp(prefix="savanna-run-")
    try:
        # A fresh (not yet existing) directory: the core creates it atomically.
        out_dir = os.path.join(tmp, "out")
        summary_json = call_core(sc, _core.run_to_dir, out_dir, seed, duration_s, *budget)
        return load_result(out_dir, summary_json, scenario=sc.origin, keep_dir=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def validate(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    duration_s: float | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    max_events: float | None = None,
    max_memory_gb: float | None = None,
) -> None:
    """Parse and validate a scenario without running it (its budget included); raise
    ``ScenarioError`` if bad."""
    sc = resolve_scenario(scenario, base_dir=base_dir, check=False)
    seed, duration_s = check_overrides(seed, duration_s)
    budget = check_budget(max_events, max_memory_gb)
    call_core(sc, _core.validate, seed, duration_s, *budget)


def call_core(sc: ScenarioText, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(sc.text, sc.fmt, sc.base_dir, *args)``: a call into the core with the scenario.
    When the core rejects it and its syntax was not checked in Python, check it now: a
    TOML/JSON syntax error (or nesting too deep) is then reported as `check_syntax` words it,
    as when the syntax was checked first; any other error is the core's."""
    try:
        return fn(sc.text, sc.fmt, sc.base_dir, *args)
    except ScenarioError:
        if not sc.checked:
            check_syntax(sc.text, sc.fmt, sc.origin)
        raise


def check_budget(max_events: Any, max_memory_gb: Any) -> tuple[float | None, float | None]:
    """Type-check the budget overrides; the core checks they are positive."""
    out = []
    for name, v in (("max_events", max_events), ("max_memory_gb", max_memory_gb)):
        if v is not None:
            if not _is_real(v):
                raise ScenarioError(f"{name}: must be a number, got {v!r}")
            v = float(v)
            if not 0 < v < _INF:
                raise ScenarioError(f"{name}: must be a positive number, got {v}")
        out.append(v)
    return out[0], out[1]


def check_out(out: str | os.PathLike[str]) -> str:
    """An output directory given by the user: a non-empty path (returned as a str)."""
    text = os.fspath(out)
    if isinstance(text, bytes) or not text.strip():
        raise ScenarioError(f"--out: must name a directory, got {text!r}")
    return text


def sweep_dead_partials(out_dir: str | os.PathLike[str]) -> None:
    """Remove staging directories (``.partial-<pid>-<n>``) that killed runs left in
    ``out_dir``: those whose process no longer exists. A live run's are kept."""
    try:
        entries = list(os.scandir(out_dir))
    except OSError:
        return
    for e in entries:
        pid = _partial_pid(e.name)
        if pid is not None and e.is_dir(follow_symlinks=False) and not _alive(pid):
            import shutil

            shutil.rmtree(e.path, ignore_errors=True)


def _partial_pid(name: str) -> int | None:
    """The process id in a staging directory's name ``.partial-<pid>-<n>``, else None."""
    if not name.startswith(".partial-"):
        return None
    pid, dash, n = name[len(".partial-") :].partition("-")
    return int(pid) if dash and pid.isdecimal() and n.isdecimal() else None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    except OSError:
        return True
    return True


# ---------------------------------------------------------------------------------------
# Turning what the user gave into scenario text


def resolve_scenario(
    scenario: ScenarioLike, *, base_dir: str | os.PathLike[str] | None = None, check: bool = True
) -> ScenarioText:
    """Turn a path, TOML text or dict into a ``ScenarioText``; with ``check``, check its
    syntax here (without, pass it to the core through `call_core`).

    A str is a path if such a file exists; otherwise it is TOML text if it looks like TOML
    (has a newline, ``=`` or ``[``); otherwise it is taken as a path that does not exist.
    """
    if isinstance(scenario, str):
        if _looks_like_toml(scenario) and not _is_file(scenario):
            if check:
                check_syntax(scenario, "toml", "<string>")
            return ScenarioText(scenario, "toml", _base(base_dir, None), "<string>", check)
        return _read_file(scenario, base_dir, check)

    if isinstance(scenario, os.PathLike):
        return _read_file(os.fspath(scenario), base_dir, check)

    if isinstance(scenario, bytes):
        raise TypeError("scenario must be a path, TOML text (str) or a dict, not bytes")

    from collections.abc import Mapping

    if isinstance(scenario, Mapping):
        import json

        try:
            text = json.dumps(scenario, default=_json_default, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"scenario dict cannot be encoded as JSON: {e}") from None
        except RecursionError:
            raise ScenarioError("scenario dict: nested too deeply (more than Python's recursion limit)") from None
        return ScenarioText(text, "json", _base(base_dir, None), "<dict>", True)

    raise TypeError(
        f"scenario must be a path (str or pathlib.Path), TOML text or a dict, not {type(scenario).__name__}"
    )


def _base(base_dir: str | os.PathLike[str] | None, path: str | None) -> str:
    """The base directory given, else the scenario file's directory, else the current one."""
    if base_dir is not None:
        return os.fspath(base_dir)
    if path is not None:
        return os.path.dirname(path) or "."
    return os.getcwd()


def _read_file(path: str, base_dir, check: bool) -> ScenarioText:
    if os.path.isdir(path):
        raise ScenarioError(f"{path}: is a directory, not a scenario file")
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such scenario file") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    fmt = "json" if os.path.splitext(path)[1].lower() == ".json" else "toml"
    if check:
        check_syntax(text, fmt, path)
    return ScenarioText(text, fmt, _base(base_dir, path), path, check)


def check_syntax(text: str, fmt: str, origin: str) -> None:
    """Raise ``ScenarioError`` naming the line if ``text`` is not valid TOML/JSON.

    The core checks syntax too; checking here gives the same one-line message whatever
    the core's parser prints (`call_core` calls it when the core rejected a scenario).
    """
    line = too_deep(text, fmt)
    if line:
        raise ScenarioError(
            f"{origin}: arrays or tables nested more than {MAX_DEPTH} deep (at line {line}); "
            "a scenario needs a few levels"
        )
    if fmt == "json":
        import json

        try:
            json.loads(text)
        except json.JSONDecodeError as e:
            raise ScenarioError(f"{origin}: invalid JSON: {e.msg} (at line {e.lineno}, column {e.colno})") from None
        return
    tomllib = _tomllib()
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{origin}: invalid TOML: {e}") from None


# Deepest nesting of arrays and inline tables a scenario may have (the deepest shipped
# scenario has 4; the parsers recurse, so a hostile 1000 would exhaust Python's stack).
MAX_DEPTH = 64


def too_deep(text: str, fmt: str) -> int:
    """The line where brackets and braces outside strings and comments first nest deeper
    than ``MAX_DEPTH``, or 0."""
    depth = 0
    line = 1
    quote = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            if quote in ("'", '"'):  # single-line strings end at the line (a syntax error)
                quote = ""
        elif quote:
            if c == "\\" and quote != "'":
                i += 1
            elif text.startswith(quote, i):
                i += len(quote) - 1
                quote = ""
        elif c == "#" and fmt == "toml":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif c == '"' or (c == "'" and fmt == "toml"):
            quote = text[i : i + 3] if text.startswith(c * 3, i) and fmt == "toml" else c
            i += len(quote) - 1
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return 0


def check_overrides(seed: Any, duration_s: Any) -> tuple[int | None, float | None]:
    """Type-check the ``seed``/``duration_s`` overrides (the core checks their values)."""
    if seed is not None:
        if not _is_int(seed):
            raise ScenarioError(f"seed: must be an integer, got {seed!r}")
        seed = int(seed)
        if not 0 <= seed < 2**64:
            raise ScenarioError(f"seed: must be in 0..2^64-1, got {seed}")
    if duration_s is not None:
        if not _is_real(duration_s):
            raise ScenarioError(f"duration_s: must be a number of seconds, got {duration_s!r}")
        duration_s = float(duration_s)
        if not 0 < duration_s < _INF:
            raise ScenarioError(f"duration_s: must be a positive number of seconds, got {duration_s}")
    return seed, duration_s


_INF = float("inf")


def _is_int(v: Any) -> bool:
    """An integer and not a bool (numpy's too; `numbers` is imported only for those)."""
    if type(v) is int:
        return True
    import numbers

    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_real(v: Any) -> bool:
    """A real number and not a bool."""
    if type(v) in (int, float):
        return True
    import numbers

    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _looks_like_toml(s: str) -> bool:
    return "\n" in s or "=" in s or "[" in s


def _is_file(s: str) -> bool:
    try:
        return len(s) < 4096 and os.path.isfile(s)
    except (OSError, ValueError):
        return False


def _json_default(obj):
    # numpy scalars and arrays, paths: what people put in scenario dicts built in notebooks.
    if hasattr(obj, "item") and callable(obj.item) and getattr(obj, "ndim", None) == 0:
        return obj.item()
    if hasattr(obj, "tolist") and callable(obj.tolist):
        return obj.tolist()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def _tomllib():
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python 3.9/3.10
        import tomli as tomllib
    return tomllib


# ---------------------------------------------------------------------------------------
# Reading the output back


def read_flows(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A flows.parquet file as a pandas DataFrame in flow order (row i is flow i). The
    core writes the rows as flows retire (docs/scenario.md, "What a run writes")."""
    import pyarrow.parquet as pq

    flows = pq.read_table(path).to_pandas()
    if "flow_id" in flows.columns:
        flows = flows.sort_values("flow_id", kind="stable", ignore_index=True)
    return flows


def load_result(
    out_dir: str | os.PathLike[str],
    summary_json: str | None = None,
    *,
    scenario: str = "",
    keep_dir: bool = True,
) -> Result:
    """Load the records of a finished run from ``out_dir``.

    ``summary.json`` in the directory is the source of truth; ``summary_json`` (the text
    the core returned) is used only if the file is missing.
    """
    import json
    import warnings
    from pathlib import Path

    import pandas as pd
    import pyarrow.parquet as pq

    out_dir = Path(out_dir)
    summary_path = out_dir / SUMMARY_FILE
    if summary_path.is_file():
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    elif summary_json is not None:
        summary = json.loads(summary_json)
    else:
        raise FileNotFoundError(f"{summary_path}: no such file (not a Savanna output directory?)")

    flows_path = out_dir / FLOWS_FILE
    if flows_path.is_file():
        flows = read_flows(flows_path)
    else:
        warnings.warn(
            f"the simulator wrote no {FLOWS_FILE} in {out_dir}; Result.flows is empty",
            RuntimeWarning,
            stacklevel=3,
        )
        flows = pd.DataFrame()

    def optional(name: str):
        path = out_dir / name
        return pq.read_table(path).to_pandas() if path.is_file() else None

    return Result(
        flows=flows,
        queues=optional(QUEUES_FILE),
        classifiers=optional("classifiers.parquet"),
        traces=optional("traces.parquet"),
        goodput=optional("goodput.parquet"),
        network=optional("network.parquet"),
        summary=summary,
        out_dir=out_dir if keep_dir else None,
        scenario=scenario,
    )
