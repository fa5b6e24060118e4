"""Property-based fuzzer (issue 18): the shipped scenarios, mutated one field at a time
(hostile numbers, NaN and infinities, wrong types, unknown keys), must give either a valid
scenario or one ``ScenarioError`` naming a field; a run must end in time with exit 0 and all
its files, or exit 2 with one line, and leave nothing behind.

CI-sized by default; ``SAVANNA_FUZZ_EXAMPLES=N`` (and ``SAVANNA_FUZZ_RUNS=M``) make the long
run (benchmarks: ``SAVANNA_FUZZ_EXAMPLES=3000 pytest tests/test_fuzz.py``).
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
import savanna
from fuzz_common import (
    BASES,
    HOSTILE_NUMBERS,
    HOSTILE_OTHER,
    check_records,
    field_of,
    leaves,
    names_a_real_field,
    set_at,
    to_toml,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.needs_core

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = int(os.environ.get("SAVANNA_FUZZ_EXAMPLES", "250"))
RUNS = int(os.environ.get("SAVANNA_FUZZ_RUNS", "10"))
CORPUS = sorted((ROOT / "tests" / "fuzz_corpus").rglob("*.toml"))


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
        assert names_a_real_field(field_of(msg), d), f"{name} {path}: error names no real field: {msg!r}"


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
    assert not check_records(out), f"{name} {path}: {check_records(out)}"


def _expected(path: Path) -> str:
    """A corpus file's expected outcome: its `# expect: ok` or `# expect: error FIELD` line."""
    for line in path.read_text().splitlines():
        if line.startswith("# expect: "):
            return line[len("# expect: ") :].strip()
    raise AssertionError(f"{path}: no '# expect:' line")


@pytest.mark.parametrize("case", CORPUS, ids=[p.stem for p in CORPUS])
def test_the_failures_the_fuzzer_found_stay_fixed(case):
    """Every case the fuzzer (or the issue) found wrong, replayed: it validates, or it is
    refused naming the expected field (a field that exists or is documented)."""
    import tomllib

    text = case.read_text()
    want = _expected(case)
    try:
        savanna.validate(text, base_dir=ROOT / "scenarios")
        got = "ok"
    except savanna.ScenarioError as e:
        msg = str(e)
        assert "\n" not in msg.strip(), msg
        got = f"error {field_of(msg)}"
        try:
            doc = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError):
            doc = {}
        assert names_a_real_field(field_of(msg), doc) or want.startswith("error <"), msg
    assert got == want, f"{case.name}: expected {want}, got {got}"
