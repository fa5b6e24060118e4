"""What the fuzzer (tests/test_fuzz.py, benchmarks/fuzz.py) shares: the shipped scenarios
as dicts, hostile values, writing a dict back as TOML, and the checks of an outcome (an
error names a real field; records hold no NaN or negative times)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))

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


def field_of(msg: str) -> str:
    return msg.split(": ", 1)[0] if ": " in msg else ""


def _doc_keys() -> set[str]:
    keys: set[str] = set()
    for doc in ("scenario.md", "tcp.md", "disciplines.md"):
        keys |= set(re.findall(r"`([a-z_][a-z0-9_]*)", (ROOT / "docs" / doc).read_text(encoding="utf-8")))
    return keys


DOC_KEYS = _doc_keys()


def path_tokens(field: str) -> list:
    """`topology.links[2].queue` -> ["topology", "links", 2, "queue"]."""
    out: list = []
    for m in re.finditer(r"\[(\d+)\]|([^.\[\]]+)", field):
        out.append(int(m.group(1)) if m.group(1) is not None else m.group(2))
    return out


def exists(d, tokens: list) -> bool:
    for t in tokens:
        if isinstance(t, int):
            if not isinstance(d, list) or t >= len(d):
                return False
        elif not isinstance(d, dict) or t not in d:
            return False
        d = d[t]
    return True


def names_a_real_field(field: str, scenario: dict) -> bool:
    """The field named by an error exists in the scenario, or is a documented key of the
    schema (one the scenario leaves to its default)."""
    if not field or " " in field:
        return False
    tokens = path_tokens(field)
    if not tokens or not isinstance(tokens[0], str):
        return False
    if exists(scenario, tokens):
        return True
    names = [t for t in tokens if isinstance(t, str)]
    return all(n in DOC_KEYS or _is_user_name(scenario, n) for n in names)


def _is_user_name(scenario: dict, name: str) -> bool:
    # Group names and the like are keys the user chose, found as keys in the scenario.
    return any(p and p[-1] == name for p, _ in leaves(scenario))


def check_records(out: Path) -> str:
    """'' when flows.parquet holds no NaN where a value is due and no negative time."""
    import pyarrow.parquet as pq

    flows = pq.read_table(out / "flows.parquet").to_pandas()
    for col in flows.columns:
        kind = flows[col].dtype.kind
        if kind == "f" and flows[col].isna().any() and not col.startswith(("end", "fct", "done", "size")):
            return f"NaN in {col}"
        if col.endswith("_s") and kind in "fi" and (flows[col].dropna() < 0).any():
            return f"negative time in {col}"
    return ""
