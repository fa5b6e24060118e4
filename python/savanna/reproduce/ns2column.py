"""The third column of the reproduction reports (issue 17, item 4): beside the paper's number
and ours, ns-2.35's on the same set-up where ns-2 can run it, read from
``benchmarks/results/ns2_papers.json`` (written by ``benchmarks/vs_ns2.py --papers-only``,
keyed by claim id), and for each claim not reproduced (or only in direction) its cause:

- ``model``: ns-2 on the same set-up reproduces the paper's number and Savanna does not;
- ``set-up``: ns-2 on the same set-up misses the paper's number as Savanna does, so the
  paper ran something its text does not describe (or describes otherwise); or both
  simulators reproduce it on the set-up ns-2 ran (``savanna_same_setup``), which differs
  from the reproduction's (fewer points, another range);
- ``paper ambiguity``: the paper's own sentence admits more than one reading (declared by
  the paper module with the sentence quoted, in its ``NS2_CAUSES``).

ns-2's value is judged with the claim's own rule (``savanna.report.judge``). A declared
cause wins over the automatic one (when ns-2 reproduces such a claim, its evidence says
so); with neither ns-2 data nor a declaration the row has no cause (the report says ns-2
did not run it). An entry marked ``"comparable": false`` (ns-2's
mechanism is not the paper's, e.g. ns-2.35's RIO, whose total average stands still between
In arrivals) is shown, with its verdict in brackets, but draws no cause.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

CAUSES = ("model", "set-up", "paper ambiguity")


def results_path() -> Path:
    """``benchmarks/results/ns2_papers.json`` of the source checkout (``SAVANNA_NS2_RESULTS``
    overrides it)."""
    env = os.environ.get("SAVANNA_NS2_RESULTS")
    return Path(env) if env else Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "ns2_papers.json"


def load(path: Path | None = None) -> dict[str, dict]:
    """The ns-2 results by claim id; empty when the file is absent (an installed package)."""
    p = path or results_path()
    if not p.is_file():
        return {}
    return dict(json.loads(p.read_text()).get("claims", {}))


def annotate(
    claims: Sequence[Any],
    specs: Sequence[Any],
    declared: Mapping[str, tuple[str, str]] | None = None,
    ns2: Mapping[str, dict] | None = None,
) -> list[Any]:
    """Fill each judged claim's ``ns2``, ``ns2_verdict``, ``cause`` and ``evidence``."""
    from savanna.report import REPRODUCED, judge

    declared = dict(declared or {})
    ns2 = load() if ns2 is None else ns2
    by_id = {s.id: s for s in specs}
    for c in claims:
        r = ns2.get(c.id)
        if r is not None and "ns2" in r and c.id in by_id:
            samples = r.get("ns2_samples") or [r["ns2"]]
            j = judge(by_id[c.id], samples)
            c.ns2, c.ns2_verdict = j.mean, j.verdict if r.get("comparable", True) else f"[{j.verdict}; not comparable]"
        if c.verdict == REPRODUCED:
            continue
        if c.id in declared:
            cause, evidence = declared[c.id]
            if cause not in CAUSES:
                raise ValueError(f"claim {c.id}: cause must be one of {CAUSES}, not {cause!r}")
            c.cause, c.evidence = cause, evidence
            if r is not None and r.get("sensitivity"):
                c.evidence = f"{evidence} {r['sensitivity']}"
            if c.ns2_verdict == REPRODUCED:
                # ns-2 reproduces it on the reading the reproduction took: the declared
                # cause does not explain the miss alone unless Savanna reproduces it there
                # too (the reproduction's set-up differs), and the evidence says which.
                same = r.get("savanna_same_setup")
                same_v = judge(by_id[c.id], [same]).verdict if same is not None and c.id in by_id else None
                both = same_v == REPRODUCED
                tail = (
                    "Savanna reproduces it there too: the reproduction's own set-up is what differs."
                    if both
                    else "a model difference is open."
                )
                but = "" if both else "But "
                c.evidence = (
                    f"{c.evidence} {but}ns-2.35 on the same set-up reproduces it ({_fmt(c.ns2, c.unit)}"
                    + (f"; Savanna there {_fmt(same, c.unit)}" if same is not None else "")
                    + f"; {r.get('experiment', '')}): {tail}"
                )
        elif r is not None and "ns2" in r and r.get("comparable", True):
            setup = r.get("experiment", "")
            same = r.get("savanna_same_setup")
            same_v = judge(by_id[c.id], [same]).verdict if same is not None and c.id in by_id else None
            if c.ns2_verdict == REPRODUCED and same_v == REPRODUCED:
                c.cause = "set-up"
                c.evidence = (
                    f"On the set-up ns-2 ran, both reproduce it (ns-2 {_fmt(c.ns2, c.unit)}, Savanna "
                    f"{_fmt(same, c.unit)}; {setup}): the reproduction's own set-up is what differs."
                )
            elif c.ns2_verdict == REPRODUCED:
                c.cause = "model"
                c.evidence = (
                    f"ns-2.35 on the same set-up reproduces it ({_fmt(c.ns2, c.unit)}"
                    + (f"; Savanna there {_fmt(same, c.unit)}" if same is not None else "")
                    + f"; {setup})."
                )
            else:
                c.cause = "set-up"
                c.evidence = (
                    f"ns-2.35 on the same set-up misses it too ({_fmt(c.ns2, c.unit)}, {c.ns2_verdict}; {setup})."
                )
    return list(claims)


def _fmt(x: float | None, unit: str) -> str:
    if x is None or x != x:
        return "n/a"
    s = f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"
    return f"{s} {unit}".strip()


def refresh(claims_json: Path, paper: str, ns2: Mapping[str, dict] | None = None, write: bool = False) -> list[dict]:
    """Re-apply ``annotate`` to a finished reproduction's ``claims.json`` (paper module
    ``paper``, e.g. ``matta_guo_2000``) with the ns-2 results as they stand now, without
    re-running it: the claims' verdicts and Savanna's values stay; ``ns2``, ``ns2_verdict``,
    ``cause`` and ``evidence`` are recomputed. Returns the claims (dicts); ``write`` saves
    them back (report.md and report.html get the column on the reproduction's next run)."""
    import importlib
    from types import SimpleNamespace

    mod = importlib.import_module(f"savanna.reproduce.{paper}")
    doc = json.loads(Path(claims_json).read_text())
    objs = []
    for d in doc["claims"]:
        o = SimpleNamespace(**d)
        o.ns2 = o.ns2_verdict = None
        o.cause = o.evidence = None
        objs.append(o)
    annotate(objs, mod.CLAIMS, getattr(mod, "NS2_CAUSES", {}), ns2)
    out = [
        {**d, **{k: getattr(o, k) for k in ("ns2", "ns2_verdict", "cause", "evidence")}}
        for d, o in zip(doc["claims"], objs)
    ]
    if write:
        doc["claims"] = out
        Path(claims_json).write_text(json.dumps(doc, indent=2) + "\n")
    return out


def three_way_rows(claims: Sequence[dict]) -> list[str]:
    """Markdown rows (claim, verdict, paper, Savanna, ns-2 with its verdict, cause) for every
    claim not reproduced, and for every claim ns-2 ran."""
    rows = []
    for c in claims:
        if c.get("verdict") == "reproduced" and c.get("ns2") is None:
            continue
        ns2 = "-" if c.get("ns2") is None else f"{_fmt(c['ns2'], c.get('unit', ''))} ({c.get('ns2_verdict')})"
        rows.append(
            f"| {c['id']} | {c.get('verdict')} | {c.get('paper')} | {_fmt(c.get('mean'), c.get('unit', ''))} | {ns2} "
            f"| {c.get('cause') or '-'} |"
        )
    return rows


if __name__ == "__main__":  # python -m savanna.reproduce.ns2column CLAIMS_JSON PAPER_MODULE [--write]
    import sys

    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--write"):
        sys.exit("usage: python -m savanna.reproduce.ns2column CLAIMS_JSON PAPER_MODULE [--write]")
    for row in three_way_rows(refresh(Path(sys.argv[1]), sys.argv[2], write=len(sys.argv) == 4)):
        print(row)
