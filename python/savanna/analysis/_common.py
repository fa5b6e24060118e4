"""Shared plumbing of the analysis helpers: checking that a table has the columns a metric
needs, choosing flows (warm-up, finished, sized), and grouping flows by size or class.
No metric is computed here; see the sibling modules and docs/analysis.md.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Optional, Union

import numpy as np
import pandas as pd

from savanna.analysis.fct import bucket_label

Bins = Optional[Sequence[tuple[float, float]]]
ClassSpec = Union[str, dict[str, tuple[float, float]]]


def need(df: Any, columns: Iterable[str], func: str, arg: str, what: str = "a flows table (flows.parquet)") -> None:
    """Raise ValueError naming `func`'s argument `arg` if `df` is not a DataFrame holding
    every column in `columns`."""
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"{func}: {arg} must be a pandas DataFrame ({what}), got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{func}: {arg} lacks column(s) {', '.join(missing)}; expected {what}")


def check_number(x: Any, func: str, arg: str, *, positive: bool = False, non_negative: bool = False) -> float:
    """`x` as a float, or ValueError naming the argument and the allowed range."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(float(x)):
        raise ValueError(f"{func}: {arg} must be a finite number, got {x!r}")
    x = float(x)
    if positive and x <= 0:
        raise ValueError(f"{func}: {arg} must be > 0, got {x:g}")
    if non_negative and x < 0:
        raise ValueError(f"{func}: {arg} must be >= 0, got {x:g}")
    return x


def select_flows(
    flows: pd.DataFrame,
    func: str,
    arg: str,
    *,
    warmup_s: float = 0.0,
    finished_only: bool = False,
    sized: bool = False,
    tcp_only: bool = False,
) -> pd.DataFrame:
    """The flows a metric looks at: started at or after `warmup_s`; optionally only those
    that finished (fct_s not null), only those with a size (not persistent) and only TCP."""
    warmup_s = check_number(warmup_s, func, "warmup_s", non_negative=True)
    cols = ["start_s"] + (["fct_s"] if finished_only else []) + (["size_pkts"] if sized else [])
    cols += ["kind"] if tcp_only and "kind" in flows.columns else []
    need(flows, cols, func, arg)
    keep = flows["start_s"] >= warmup_s
    if finished_only:
        keep &= flows["fct_s"].notna()
    if sized:
        keep &= flows["size_pkts"].notna()
    if tcp_only and "kind" in flows.columns:
        keep &= flows["kind"] == "tcp"
    return flows[keep]


def check_bins(bins: Bins, func: str) -> list | None:
    """Validate size buckets: None, or a sequence of (lo, hi) with lo <= hi (packets,
    both ends included; hi may be math.inf)."""
    if bins is None:
        return None
    if isinstance(bins, (str, bytes)) or not isinstance(bins, Sequence) or len(bins) == 0:
        raise ValueError(
            f"{func}: bins must be None (one group per size) or a non-empty list of (lo, hi) size ranges in packets"
        )
    out = []
    for b in bins:
        if not isinstance(b, (tuple, list)) or len(b) != 2:
            raise ValueError(f"{func}: bins must be (lo, hi) pairs of packet counts, got {b!r}")
        lo, hi = b
        if (
            isinstance(lo, bool)
            or isinstance(hi, bool)
            or not isinstance(lo, numbers.Real)
            or not isinstance(hi, numbers.Real)
            or lo != lo
            or hi != hi
            or lo > hi
        ):
            raise ValueError(f"{func}: bins must be (lo, hi) pairs with lo <= hi, got {b!r}")
        out.append((lo, hi))
    return out


def size_groups(flows: pd.DataFrame, bins: Bins, func: str) -> Iterator[tuple[str, Any, pd.DataFrame]]:
    """Yield (key column name, label, sub-frame) per size group. bins=None: one group per
    distinct size_pkts, in increasing order; otherwise one group per (lo, hi) bucket in the
    order given (empty buckets included, so tables line up across runs)."""
    bins = check_bins(bins, func)
    if bins is None:
        sizes = flows["size_pkts"].dropna()
        for s in sorted(sizes.unique()):
            yield "size_pkts", int(s), flows[flows["size_pkts"] == s]
    else:
        for lo, hi in bins:
            sel = (flows["size_pkts"] >= lo) & (flows["size_pkts"] <= hi)
            yield "bucket", _label(lo, hi), flows[sel]


def _label(lo, hi) -> str:
    if lo <= 1 and math.isinf(hi):
        return "all"
    if float(lo).is_integer() and (math.isinf(hi) or float(hi).is_integer()):
        return bucket_label(int(lo), hi)
    return f"{lo:g}-{hi:g}"


def class_labels(flows: pd.DataFrame, by: ClassSpec, func: str) -> pd.Series:
    """Class of every flow: the value of column `by`, or, when `by` is a dict
    {name: (lo, hi)}, the name of the size range (packets, ends included) holding the flow's
    size_pkts (NaN for a flow in no range; ranges must not overlap)."""
    if isinstance(by, str):
        need(flows, [by], func, "flows")
        return flows[by]
    if isinstance(by, dict) and by:
        need(flows, ["size_pkts"], func, "flows")
        ranges = check_bins(list(by.values()), func)
        out = pd.Series([None] * len(flows), index=flows.index, dtype=object)
        for name, (lo, hi) in zip(by.keys(), ranges):
            sel = (flows["size_pkts"] >= lo) & (flows["size_pkts"] <= hi)
            if (sel & out.notna()).any():
                raise ValueError(f"{func}: by: size range {name!r} overlaps another range")
            out[sel] = name
        return out
    raise ValueError(
        f"{func}: by must be a column name (e.g. 'class_at_end', 'source') or a dict "
        f"{{class name: (lo, hi) size range in packets}}, got {by!r}"
    )


def as_array(values: Iterable[float], func: str, arg: str = "values") -> np.ndarray:
    """A 1-D float array of finite values, or ValueError."""
    try:
        a = np.asarray(list(values) if not isinstance(values, (np.ndarray, pd.Series)) else values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{func}: {arg} must be a sequence of numbers") from None
    if a.ndim != 1:
        raise ValueError(f"{func}: {arg} must be one-dimensional, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{func}: {arg} must be finite numbers (no NaN or infinity)")
    return a
