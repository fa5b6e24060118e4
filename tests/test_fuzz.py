"""Property-based fuzzer (issue 18): the shipped scenarios, mutated one field at a time
(hostile numbers, NaN and infinities, wrong types, unknown keys), must give either a valid
scenario or one ``ScenarioError`` naming a field; a run must end in time with exit 0 and all
its files, or exit 2 with one line, and leave nothing behind.

CI-sized by default; ``SAVANNA_FUZZ_EXAMPLES=N`` (and ``SAVANNA_FUZZ_RUNS=M``) make the long
run (benchmarks: ``SAVANNA_FUZZ_EXAMPLES=3000 pytest tests/test_fuzz.py``).
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import savanna
import tomllib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.needs_core

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))
EXAMPLES = int(os.environ.get("SAVANNA_FUZZ_EXAMPLES", "250"))
RUNS = int(os.environ.get("SAVANNA_FUZZ_RUNS", "10"))
# Known top-level sections and keys: a named field must start with one of them.
TOP = {"name", "seed", "duration_s", "packet_bytes", "header_bytes", "topology", "tcp", "traffic", "sampling"}
TOP |= {"faults", "classifiers", "trace", "path_policies", "description", "queue of"}

HOSTILE_NUMBERS = [
    math.nan,
    math.inf,
    -math.inf,
    0,
    -1,
    0.0,
    -0.0,
    5e-324,
    1e-13,
    1e-9,
    1e-3,
    1e13,
    1e300,
    2**31,
    2**63 - 1,
    -(2**63),
]
HOSTILE_OTHER = ["", "x", "left->right", [], [1e300], {"min": 1, "max": math.nan}, {"typo": 1}, True]


def _load(p: Path) -> dict:
    with p.open("rb") as f:
        return tomllib.load(f)


BASES = {p.name: _load(p) for p in SCENARIOS}


def leaves(v, path=()):
    """Every (path, value) inside a scenario, tables and lists included."""
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(x, (*path, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from leaves(x, (*path, i))


def toml_value(v) -> str:
    """A value as inline TOML (tables inline, so any nesting fits on one line)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(type(v))


def to_toml(d: dict) -> str:
    return "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in d.items())


def set_at(d, path, value):
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value


@st.composite
def mutated(draw):
    """(scenario name, mutated dict, mutated path as text)."""
    name = draw(st.sampled_from(sorted(BASES)))
    d = copy.deepcopy(BASES[name])
    paths = [p for p, _ in leaves(d) if p]
    path = draw(st.sampled_from(paths))
    if draw(st.integers(0, 9)) == 0:
        # An unknown key inside a table on the path (or at the top).
        tables = [path[:i] for i in range(len(path)) if isinstance(_get(d, path[:i]), dict)]
        at = draw(st.sampled_from(tables))
        _get(d, at)["typo_key"] = 1
        return name, d, ".".join(map(str, (*at, "typo_key")))
    value = draw(st.sampled_from(HOSTILE_NUMBERS + HOSTILE_OTHER) | st.floats(allow_nan=True, allow_infinity=True))
    set_at(d, path, copy.deepcopy(value))
    return name, d, ".".join(map(str, path))


def _get(d, path):
    for k in path:
        d = d[k]
    return d


def field_of(msg: str) -> str:
    return msg.split(": ", 1)[0] if ": " in msg else ""


def names_a_known_field(field: str, mutated_path: str) -> bool:
    """The field is a known section's, or the mutated key itself (an unknown key)."""
    root = field.split(".", 1)[0].split("[", 1)[0]
    return bool(field) and (root in TOP or field.startswith("queue of ") or field == mutated_path)


@settings(
    max_examples=EXAMPLES,
    deadline=10_000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
@given(mutated())
def test_a_mutated_scenario_validates_or_is_refused_naming_a_field(case):
    name, d, path = case
    text = to_toml(d)
    try:
        savanna.validate(text, base_dir=ROOT / "scenarios")
    except savanna.ScenarioError as e:
        msg = str(e)
        assert "\n" not in msg.strip(), f"{name} {path}: multi-line error {msg!r}"
        assert names_a_known_field(field_of(msg), path), f"{name} {path}: error names no field: {msg!r}"


def _run(tmp: Path, text: str) -> subprocess.CompletedProcess:
    src = tmp / "sc.toml"
    src.write_text(text)
    cmd = [sys.executable, "-m", "savanna", "run", str(src), "--out", str(tmp / "out"), "--duration", "0.5"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=ROOT / "scenarios")


@settings(
    max_examples=RUNS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)
@given(mutated())
def test_a_mutated_scenario_runs_to_all_its_files_or_exits_2_leaving_nothing(tmp_path_factory, case):
    name, d, path = case
    tmp = tmp_path_factory.mktemp("fuzz")
    p = _run(tmp, to_toml(d))
    assert p.returncode in (0, 2), f"{name} {path}: exit {p.returncode}\n{p.stderr[-2000:]}"
    assert "Traceback" not in p.stderr, f"{name} {path}: {p.stderr[-2000:]}"
    out = tmp / "out"
    if p.returncode == 2:
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("savanna: error: "), p.stderr
        assert not out.exists() or not any(out.iterdir()), f"{name} {path}: left {list(out.iterdir())}"
        return
    for f in ("summary.json", "flows.parquet"):
        assert (out / f).is_file(), f"{name} {path}: {f} missing"
    if "sampling" in d:
        assert (out / "queues.parquet").is_file(), f"{name} {path}: queues.parquet missing"
    assert not [x for x in out.iterdir() if x.name.startswith(".partial")]
    flows = pq.read_table(out / "flows.parquet").to_pandas()
    for col in flows.columns:
        if flows[col].dtype.kind == "f":
            assert not flows[col].isna().any() or col.startswith(("end", "fct", "done")), f"NaN in {col}"
        if col.endswith("_s") and flows[col].dtype.kind in "fi":
            assert (flows[col].dropna() >= 0).all(), f"{name} {path}: negative time in {col}"
