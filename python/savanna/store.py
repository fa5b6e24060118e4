"""The results store of sweeps: a Parquet dataset partitioned by parameters, with DuckDB
views over it (issue 6, part 2; the layout follows the Hive partitioning convention that
DuckDB's ``read_parquet(..., hive_partitioning = true)`` and Arrow datasets read).

Layout of a dataset directory ``OUT``::

    OUT/dataset.json                      format version, parameter names and SQL types
    OUT/runs/<p1>=<v1>/.../run_id=<id>/   one directory per completed run:
        flows.parquet, queues.parquet, ...   the core's files, byte for byte
        summary.json                         the core's run summary
        summaries.parquet                    the summary's scalars, one row
        summary_<key>.parquet                one row per entry of each list in the summary
                                             (summary_queues: one row per queue)
        params.json, scenario.json           what was run (provenance)
    OUT/failed/<run_id>.json              a failed run: parameters, error, scenario
    OUT/.staging/                         runs being written (ignored; cleaned on start)

A run directory appears by one ``rename`` of a complete staging directory, so a run is
either fully present or absent; ``completed_runs`` lists the present ones. ``commit_run``
fills the staging directory with the files it is given, ``commit_dir`` takes one that a
local worker process filled (named ``.partial-<pid>-<n>``, as ``runner.sweep_dead_partials``
recognises a dead process's leftovers). Parameter values live in the directory names
(percent-encoded where needed) and come back as typed columns through ``hive_types``.
Each ``X.parquet`` file becomes a view ``X``.

Python: ``load(out_dir, table)`` and ``query(out_dir, sql)`` return pandas DataFrames;
``connect(out_dir)`` gives a DuckDB connection with the views. duckdb, pyarrow and pandas
are imported only when needed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import re
import shutil
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:  # pragma: no cover
    import duckdb
    import pandas as pd

PathLike = Union[str, "os.PathLike[str]"]

FORMAT_VERSION = 1
MANIFEST = "dataset.json"
RUNS_DIR = "runs"
FAILED_DIR = "failed"
STAGING_DIR = ".staging"
LOCK_FILE = ".lock"
RUN_KEY = "run_id"
COMPLETE_MARKER = "summary.json"  # written last into a staging directory

# A parameter name is a column name and a directory-name prefix: keep it to characters
# that need no escaping in either (dotted scenario paths with list indices fit).
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\[\]-]*$")
RUN_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
# Characters left as they are in partition values; everything else is %XX-encoded
# (DuckDB decodes %XX in Hive partition values).
_SAFE_VALUE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-+")

SQL_TYPES = ("BOOLEAN", "BIGINT", "DOUBLE", "VARCHAR")


class StoreError(ValueError):
    """Bad input to the store (a missing dataset, a bad parameter, a SQL error)."""


# ---------------------------------------------------------------------------------------
# Parameters: names, values, types, directory names


def check_param(name: str, value: Any, where: str = "params") -> None:
    """Raise ``StoreError`` unless ``name`` is a usable parameter name and ``value`` a
    scalar that round-trips through a directory name."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise StoreError(
            f"{where}: parameter name {name!r} must start with a letter or '_' and contain "
            "only letters, digits and _ . - [ ]"
        )
    if name == RUN_KEY:
        raise StoreError(f"{where}: '{RUN_KEY}' is reserved and cannot be a parameter name")
    if isinstance(value, (bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise StoreError(f"{where}.{name}: must be a finite number, got {value!r}")
        return
    if isinstance(value, str):
        if value == "":
            raise StoreError(f"{where}.{name}: must not be an empty string")
        return
    raise StoreError(f"{where}.{name}: must be a string, integer, float or boolean, got {type(value).__name__}")


def sql_type(value: Any) -> str:
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "DOUBLE"
    return "VARCHAR"


def widen(a: str | None, b: str) -> str:
    """The SQL type holding values of both types (integers widen to doubles; any other
    mix becomes text)."""
    if a is None or a == b:
        return b
    if {a, b} == {"BIGINT", "DOUBLE"}:
        return "DOUBLE"
    return "VARCHAR"


def encode_value(value: Any) -> str:
    """A parameter value as it appears in a directory name (``k=<this>``)."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float):
        text = repr(value)
    else:
        text = str(value)
    return "".join(c if c in _SAFE_VALUE else "".join(f"%{b:02X}" for b in c.encode()) for c in text)


def partition_dir(params: Mapping[str, Any], names: Iterable[str], run_id: str) -> Path:
    """``<p1>=<v1>/.../run_id=<id>``, relative to ``OUT/runs``."""
    parts = [f"{n}={encode_value(params[n])}" for n in names]
    parts.append(f"{RUN_KEY}={run_id}")
    return Path(*parts)


# ---------------------------------------------------------------------------------------
# The manifest


def read_manifest(out_dir: PathLike) -> dict | None:
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        return None
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise StoreError(f"{path}: unreadable dataset manifest ({e})") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT_VERSION or not isinstance(m.get("params"), list):
        raise StoreError(f"{path}: not a Savanna dataset manifest (format {FORMAT_VERSION})")
    return m


def merge_manifest(out_dir: PathLike, names: list[str], types: dict[str, str]) -> dict:
    """Check the parameters against an existing manifest (same names, same order), widen
    the types, and write the manifest atomically. Returns it."""
    out = Path(out_dir)
    old = read_manifest(out)
    if old is not None:
        old_names = [p["name"] for p in old["params"]]
        if old_names != names:
            raise StoreError(
                f"{out}: the dataset there has parameters {old_names}; these runs have "
                f"{names} (use another output directory)"
            )
        old_types = {p["name"]: p["type"] for p in old["params"]}
        types = {n: widen(old_types.get(n), types[n]) for n in names}
    m = {"format": FORMAT_VERSION, "params": [{"name": n, "type": types[n]} for n in names]}
    if old != m:
        _write_atomic(out / MANIFEST, (json.dumps(m, indent=2) + "\n").encode())
    return m


# ---------------------------------------------------------------------------------------
# Writing runs


def completed_runs(out_dir: PathLike) -> dict[str, Path]:
    """run_id -> directory of every complete run in the dataset."""
    root = Path(out_dir) / RUNS_DIR
    found: dict[str, Path] = {}
    if not root.is_dir():
        return found
    prefix = RUN_KEY + "="
    for dirpath, dirnames, _files in os.walk(root):
        keep = []
        for d in dirnames:
            if d.startswith(prefix):
                p = Path(dirpath) / d
                if (p / COMPLETE_MARKER).is_file():
                    found[d[len(prefix) :]] = p
            else:
                keep.append(d)
        dirnames[:] = sorted(keep)
    return found


def clean_staging(out_dir: PathLike) -> None:
    """Remove what an interrupted writer left in ``OUT/.staging`` (call under the lock)."""
    shutil.rmtree(Path(out_dir) / STAGING_DIR, ignore_errors=True)


def commit_run(
    out_dir: PathLike,
    run_id: str,
    params: Mapping[str, Any],
    names: list[str],
    files: Mapping[str, bytes],
) -> Path:
    """Write one run's files into a staging directory, then rename it into place.

    ``files`` maps file names to contents; ``summary.json`` is written last. If the run
    is already present, nothing changes. Returns the run's directory.
    """
    out = Path(out_dir)
    final = out / RUNS_DIR / partition_dir(params, names, run_id)
    if (final / COMPLETE_MARKER).is_file():
        return final
    staging = out / STAGING_DIR / f"{run_id}-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    try:
        order = sorted(n for n in files if n != COMPLETE_MARKER)
        if COMPLETE_MARKER in files:
            order.append(COMPLETE_MARKER)
        for name in order:
            _write_plain(staging / name, files[name])
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return _publish(out, run_id, staging, order, final)


def commit_dir(
    out_dir: PathLike,
    run_id: str,
    params: Mapping[str, Any],
    names: list[str],
    staged: PathLike,
) -> Path:
    """``commit_run`` for a run whose files a worker already wrote into ``staged``, a
    directory directly inside ``OUT/.staging``: sync the files and rename the directory
    into place, so that their contents never pass through this process.

    If the run is already present, nothing of it changes. ``staged`` is gone afterwards,
    whatever happened: renamed, or removed (the run already present, an incomplete run
    without ``summary.json``, a failed rename). Raises ``StoreError`` for a ``staged``
    outside the staging area (left as it is) or an incomplete run, ``OSError`` when the
    file system refuses. Returns the run's directory."""
    out = Path(out_dir)
    src = Path(staged)
    staging = (out / STAGING_DIR).resolve()
    if src.resolve().parent != staging or src.is_symlink() or not src.is_dir():
        raise StoreError(f"{src}: not a run's directory in {staging}")
    final = out / RUNS_DIR / partition_dir(params, names, run_id)
    try:
        if (final / COMPLETE_MARKER).is_file():
            shutil.rmtree(src, ignore_errors=True)
            return final
        order = sorted(p.name for p in src.iterdir() if p.is_file())
        if COMPLETE_MARKER not in order:
            raise StoreError(f"{src}: no {COMPLETE_MARKER}, not a complete run")
    except BaseException:
        shutil.rmtree(src, ignore_errors=True)
        raise
    return _publish(out, run_id, src, order, final)


def _publish(out: Path, run_id: str, staged: Path, names: list[str], final: Path) -> Path:
    """Make the complete run in ``staged`` (files ``names``) visible as ``final``: the files
    reach the disk before the rename does (one sync of the file system, one journal
    commit, instead of one fsync per file), then the rename and its directory entry. On
    any failure ``staged`` is removed. The run's failure record, if any, goes."""
    try:
        _sync_files(staged, names)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.rename(staged, final)
        _fsync_dir(final.parent)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    clear_failure(out, run_id)
    return final


def record_failure(out_dir: PathLike, run_id: str, record: Mapping[str, Any]) -> Path:
    path = Path(out_dir) / FAILED_DIR / f"{run_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(path, (json.dumps(record, indent=2, default=str) + "\n").encode())
    return path


def clear_failure(out_dir: PathLike, run_id: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        (Path(out_dir) / FAILED_DIR / f"{run_id}.json").unlink()


def failures(out_dir: PathLike) -> dict[str, dict]:
    """run_id -> failure record of the runs that failed last time they were tried."""
    d = Path(out_dir) / FAILED_DIR
    out: dict[str, dict] = {}
    if d.is_dir():
        for p in sorted(d.glob("*.json")):
            try:
                out[p.stem] = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                continue
    return out


def _write_plain(path: Path, data: bytes) -> None:
    """Write without syncing (the caller syncs: see ``_sync_files``)."""
    with open(path, "wb") as f:
        f.write(data)


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _sync_files(directory: Path, names: list[str]) -> None:
    """Make the files ``names`` in ``directory`` durable. On Linux one ``syncfs`` of the
    file system holding them does it in one journal commit (a run's ten-odd files took
    about 37 ms with an fsync each, 4-11 ms this way, measured on this project's ext4);
    elsewhere, or if it fails, each file is fsynced."""
    fn = _syncfs()
    if fn is not None:
        fd = os.open(directory, os.O_RDONLY)
        try:
            if fn(fd) == 0:
                return
        finally:
            os.close(fd)
    for name in names:
        fd = os.open(directory / name, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@functools.cache
def _syncfs():
    """libc's ``syncfs`` (Linux), or None where there is none."""
    if os.name != "posix":
        return None
    try:
        import ctypes

        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        _write_file(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------
# Summary rows (built in the worker that ran the simulation)


def summary_tables(summary: Mapping[str, Any], skip: Iterable[str] = ()) -> dict[str, bytes]:
    """Parquet files for a run's summary: ``summaries.parquet`` (one row of the scalars,
    nested tables flattened with ``_``) and ``summary_<key>.parquet`` for each list of
    tables (``summary_queues``: one row per queue). Keys in ``skip`` (parameters that
    would shadow them) are left out of the one-row table."""
    skip = set(skip)
    row: dict[str, Any] = {}
    lists: dict[str, list[dict]] = {}
    for key, value in summary.items():
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            lists[key] = [_flatten(v) for v in value]
        elif key not in skip:
            row.update(_flatten({key: value}))
    files = {"summaries.parquet": _parquet_bytes([row])}
    for key, rows in lists.items():
        files[f"summary_{key}.parquet"] = _parquet_bytes(rows)
    return files


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, name + "_"))
        elif isinstance(v, list):
            out[name] = json.dumps(v, sort_keys=True)
        else:
            out[name] = v
    return out


def _parquet_bytes(rows: list[dict]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    # Every row gets every column (missing counters are absent from the core's output).
    names: list[str] = []
    for r in rows:
        for k in r:
            if k not in names:
                names.append(k)
    table = pa.Table.from_pylist([{n: r.get(n) for n in names} for r in rows])
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


# ---------------------------------------------------------------------------------------
# Reading: DuckDB views and DataFrames


def tables(out_dir: PathLike) -> list[str]:
    """The tables of a dataset (one per ``X.parquet`` file name found in its runs)."""
    runs = completed_runs(out_dir)
    names = set()
    for d in runs.values():
        names.update(p.stem for p in d.glob("*.parquet"))
    return sorted(names)


def connect(out_dir: PathLike, only: str | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection (in memory) with one view per table of the dataset at
    ``out_dir``: ``flows``, ``queues``, ``summaries``, ``summary_queues``, and
    ``classifiers``/``traces`` when runs wrote them. Each view has the parameter columns
    and ``run_id``. With ``only`` (an SQL text), just the views of the tables it names:
    making a view reads the schema of every file of its table, which over a dataset of
    thousands of runs costs more than a query (issue 21)."""
    import duckdb

    out = _check_dataset(out_dir)
    hive = _hive_types(read_manifest(out) or {})
    con = duckdb.connect()
    root = (out / RUNS_DIR).resolve()
    names = tables(out)
    if only is not None:
        import re

        words = set(re.findall(r"\w+", only.lower()))
        names = [n for n in names if n.lower() in words] or names[:1]
    for name in names:
        pattern = _sql_str(str(root / "**" / f"{name}.parquet"))
        con.execute(
            f"CREATE VIEW {_sql_ident(name)} AS SELECT * FROM read_parquet({pattern}, "
            f"hive_partitioning = true, union_by_name = true, hive_types = {hive})"
        )
    return con


def query(out_dir: PathLike, sql: str, threads: int | None = None, memory_limit: str | None = None) -> pd.DataFrame:
    """Run ``sql`` over the dataset at ``out_dir`` (views as in ``connect``) and return a
    pandas DataFrame. Raises ``StoreError`` for a missing dataset or a SQL error.
    ``threads``: DuckDB's worker threads (default: one per core). With one, float
    aggregates are added in the same order every time, so the same data gives the same
    bits; with several, their last digits can differ from one call to the next.
    ``memory_limit``: DuckDB's own cap (e.g. ``"1GB"``; default DuckDB's, 80% of the
    machine's memory): above it, joins, sorts and aggregates spill to a temporary
    directory instead of growing, so a query over millions of rows keeps a bounded
    footprint. A query that cannot run within the cap even so is run again without it."""
    import duckdb

    if memory_limit is not None:
        try:
            return _query(out_dir, sql, threads, memory_limit)
        except duckdb.OutOfMemoryException:
            pass
    try:
        return _query(out_dir, sql, threads, None)
    except duckdb.Error as e:
        raise StoreError(f"SQL: {_one_line(str(e))}") from None


def _query(out_dir: PathLike, sql: str, threads: int | None, memory_limit: str | None) -> pd.DataFrame:
    import tempfile

    import duckdb

    con = connect(out_dir, only=sql if isinstance(sql, str) else None)
    spill = None
    try:
        if threads is not None:
            con.execute(f"SET threads TO {int(threads)}")
        if memory_limit is not None:
            # DuckDB would spill into .tmp under the current directory; use a private one.
            spill = tempfile.TemporaryDirectory(prefix="savanna-duckdb-")
            con.execute(f"SET temp_directory = {_sql_str(spill.name)}")
            con.execute(f"SET memory_limit = {_sql_str(memory_limit)}")
        if not con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchone()[0]:
            raise StoreError(f"{out_dir}: no completed runs yet")
        if not isinstance(sql, str) or not _has_statement(sql):
            raise StoreError(f'SQL: no statement in {sql!r}; give a query, e.g. "SELECT count(*) FROM flows"')
        result = con.execute(sql)
        if result.description is None:  # a statement that returns no table (SET, a bare ';')
            raise StoreError(f"SQL: {sql.strip()!r} returns no table; give a query (SELECT ...)")
        return result.df()
    except duckdb.OutOfMemoryException:
        raise
    except duckdb.Error as e:
        raise StoreError(f"SQL: {_one_line(str(e))}") from None
    finally:
        con.close()
        if spill is not None:
            spill.cleanup()


def load(out_dir: PathLike, table: str = "flows") -> pd.DataFrame:
    """One table of the dataset as a pandas DataFrame: the rows of every completed run,
    with one column per parameter and ``run_id`` first, ordered by the parameters, then
    run, then ``flow_id`` (flows; the core writes them in retirement order) or row
    within the run (other tables).

    ``table``: ``flows``, ``queues``, ``summaries``, ``summary_queues``, or any other
    table the runs wrote (``classifiers``, ``traces``)."""
    out = _check_dataset(out_dir)
    available = tables(out)
    if table not in available:
        raise StoreError(
            f"table: {table!r} is not in the dataset at {out}; available: "
            f"{', '.join(available) if available else 'none (no completed runs)'}"
        )
    manifest = read_manifest(out) or {"params": []}
    keys = [p["name"] for p in manifest["params"]] + [RUN_KEY]
    order = ", ".join(_sql_ident(k) for k in keys)
    within = "flow_id" if table == "flows" else "file_row_number"
    return query(
        out,
        f"SELECT {order}, * EXCLUDE ({order}, file_row_number) FROM ("
        f"SELECT * FROM read_parquet({_sql_str(str((out / RUNS_DIR).resolve() / '**' / (table + '.parquet')))}, "
        f"hive_partitioning = true, union_by_name = true, file_row_number = true, "
        f"hive_types = {_hive_types(manifest)})) ORDER BY {order}, {within}",
    )


def _hive_types(manifest: Mapping[str, Any]) -> str:
    types = {p["name"]: p["type"] for p in manifest.get("params", [])}
    types[RUN_KEY] = "VARCHAR"
    return "{" + ", ".join(f"{_sql_str(n)}: {_sql_str(t)}" for n, t in types.items()) + "}"


def _check_dataset(out_dir: PathLike) -> Path:
    out = Path(out_dir)
    if not out.exists():
        raise StoreError(f"{out}: no such directory")
    if not out.is_dir():
        raise StoreError(f"{out}: not a directory")
    if read_manifest(out) is None and not (out / RUNS_DIR).is_dir():
        raise StoreError(f"{out}: not a sweep dataset (no {MANIFEST} or {RUNS_DIR}/)")
    return out


def _has_statement(sql: str) -> bool:
    """Whether ``sql`` holds anything but whitespace, semicolons and comments."""
    import re

    bare = re.sub(r"--[^\n]*|/\*.*?(\*/|$)", " ", sql, flags=re.S)
    return bool(bare.replace(";", " ").strip())


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _sql_ident(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def _one_line(msg: str) -> str:
    return " ".join(part.strip() for part in msg.splitlines() if part.strip())
