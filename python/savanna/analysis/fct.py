"""Analysis of run records: flow-completion time by flow-size bucket, and side-by-side
comparison of several runs. Works on the ``flows`` DataFrame of ``savanna.run`` (or read
from ``flows.parquet``). The buckets are those of the ns-3 comparison (issue 3): 1-3, 4-10,
11-30, 31-100, 101-1000 and more than 1000 packets.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

SIZE_BUCKETS: list[tuple[int, float]] = [(1, 3), (4, 10), (11, 30), (31, 100), (101, 1000), (1001, math.inf)]


def bucket_label(lo: int, hi: float) -> str:
    return f">{lo - 1}" if math.isinf(hi) else f"{lo}-{int(hi)}"


def fct_by_size(
    flows: pd.DataFrame, buckets: Sequence[tuple[int, float]] = SIZE_BUCKETS, warmup_s: float = 0.0
) -> pd.DataFrame:
    """One row per size bucket: flows started after `warmup_s`, how many finished, mean,
    median and 99th percentile of fct_s over the finished ones, and the share of flows that
    had at least one timeout. Persistent flows (no size) are left out."""
    import pandas as pd

    f = flows[(flows["start_s"] >= warmup_s) & flows["size_pkts"].notna()]
    rows = []
    for lo, hi in buckets:
        b = f[(f["size_pkts"] >= lo) & (f["size_pkts"] <= hi)]
        done = b["fct_s"].dropna()
        rows.append(
            {
                "bucket": bucket_label(lo, hi),
                "flows": len(b),
                "finished": len(done),
                "mean_fct_s": done.mean() if len(done) else float("nan"),
                "median_fct_s": done.median() if len(done) else float("nan"),
                "p99_fct_s": done.quantile(0.99) if len(done) else float("nan"),
                "timeout_share": (b["timeouts"] > 0).mean() if len(b) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def load_flows(out_dir: Path) -> pd.DataFrame:
    """The flows table of the run in `out_dir`, in flow order."""
    from savanna.runner import read_flows

    return read_flows(Path(out_dir) / "flows.parquet")


def compare_markdown(runs: dict[str, object], warmup_s: float = 0.0, summaries: dict[str, dict] | None = None) -> str:
    """A Markdown report comparing runs (name -> flows DataFrame): mean and median FCT per
    size bucket side by side, then per-run totals."""
    tables = {name: fct_by_size(fl, warmup_s=warmup_s) for name, fl in runs.items()}
    names = list(tables)
    lines = [f"Flow-completion time by flow size (flows started after {warmup_s:g} s; seconds).", ""]
    head = "| size (packets) | " + " | ".join(f"{n}: flows | {n}: mean | {n}: median" for n in names) + " |"
    lines += [head, "|" + "---|" * (1 + 3 * len(names))]
    for i, (lo, hi) in enumerate(SIZE_BUCKETS):
        cells = []
        for n in names:
            r = tables[n].iloc[i]
            cells += [f"{int(r['flows'])}", _f(r["mean_fct_s"]), _f(r["median_fct_s"])]
        lines.append(f"| {bucket_label(lo, hi)} | " + " | ".join(cells) + " |")
    if summaries:
        lines += [
            "",
            "| run | flows started | finished | bottleneck utilisation | bottleneck drop rate |",
            "|---|---|---|---|---|",
        ]
        for n in names:
            s = summaries[n]
            q = _bottleneck(s)
            util = f"{q['utilisation']:.3f}" if q else "n/a"
            drop = f"{q['dropped'] / q['arrivals']:.4f}" if q and q["arrivals"] else "n/a"
            lines.append(f"| {n} | {s['flows_started']} | {s['flows_finished']} | {util} | {drop} |")
    return "\n".join(lines) + "\n"


def _bottleneck(summary: dict) -> dict | None:
    qs = summary.get("queues", [])
    named = [q for q in qs if q["name"] == "left->right"]
    if named:
        return named[0]
    return max(qs, key=lambda q: q["utilisation"]) if qs else None


def _f(x: float) -> str:
    return "-" if x != x else f"{x:.3f}"


def compare_dirs(dirs: Iterable[Path], warmup_s: float = 0.0) -> str:
    import json

    from savanna import ScenarioError

    runs, summaries = {}, {}
    for d in dirs:
        d = Path(d)
        name = d.name
        # A damaged run (truncated Parquet, malformed JSON) is bad input: one line naming it.
        try:
            runs[name] = load_flows(d)
        except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
            raise ScenarioError(f"{d / 'flows.parquet'}: not a readable Parquet file ({_first_line(e)})") from None
        try:
            summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ScenarioError(f"{d / 'summary.json'}: not a readable run summary ({_first_line(e)})") from None
        if not isinstance(summary, dict):
            raise ScenarioError(f"{d / 'summary.json'}: not a run summary (a JSON object)")
        summaries[name] = summary
    try:
        return compare_markdown(runs, warmup_s=warmup_s, summaries=summaries)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ScenarioError(
            f"{', '.join(map(str, dirs))}: not Savanna run records ({type(e).__name__}: {_first_line(e)})"
        ) from None


def _first_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[0] if lines else type(e).__name__
