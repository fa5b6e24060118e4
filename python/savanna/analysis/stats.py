"""Statistics over flows: Jain's fairness index (Chiu & Jain 1989, as used by Matta & Guo
2000 section IV-A and Guo & Matta 2001 section IV-B.2), the coefficient of variation of
transfer times (Guo & Matta 2001, Fig. 2(b) and footnote 8), latency by flow size
(FavorQueue 2013, Fig. 8), per-class percentiles of transmission time (Matta & Guo 2000,
section IV-C: 99.9th percentile) and a Student-t confidence interval for replications.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
import pandas as pd

from savanna.analysis._common import (
    Bins,
    ClassSpec,
    as_array,
    check_number,
    class_labels,
    need,
    select_flows,
    size_groups,
)


def jain(values: Iterable[float]) -> float:
    """Jain's fairness index f = (sum x_i)^2 / (N sum x_i^2) of non-negative allocations
    x_1..x_N (Matta & Guo 2000, section IV-A). 1 when all are equal, 1/N when one takes
    everything. NaN for an empty list or when every x_i is 0 (no allocation to compare)."""
    x = as_array(values, "jain")
    if (x < 0).any():
        raise ValueError("jain: values must be non-negative (goodputs or response times)")
    if len(x) == 0:
        return float("nan")
    sq = float(np.sum(x * x))
    if sq == 0.0:
        return float("nan")
    return float(np.sum(x)) ** 2 / (len(x) * sq)


def cov(values: Iterable[float], ddof: int = 1) -> float:
    """Coefficient of variation: standard deviation over mean (Guo & Matta 2001, footnote
    8). `ddof`=1 uses the sample standard deviation, 0 the population one. NaN when there
    are too few values or the mean is 0."""
    x = as_array(values, "cov")
    if ddof not in (0, 1):
        raise ValueError(f"cov: ddof must be 0 or 1, got {ddof!r}")
    if len(x) <= ddof:
        return float("nan")
    m = float(np.mean(x))
    if m == 0.0:
        return float("nan")
    return float(np.std(x, ddof=ddof)) / m


class CI(NamedTuple):
    """A mean with its confidence interval [low, high] = mean -/+ half_width over n values."""

    mean: float
    low: float
    high: float
    half_width: float
    n: int


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> CI:
    """Mean of independent replications and its Student-t confidence interval:
    mean +/- t_{(1+c)/2, n-1} * s / sqrt(n), s the sample standard deviation (the ten
    replications of FavorQueue 2013, section 4). With one value the half-width is NaN."""
    from scipy import stats

    x = as_array(values, "mean_ci")
    c = check_number(confidence, "mean_ci", "confidence")
    if not 0.0 < c < 1.0:
        raise ValueError(f"mean_ci: confidence must be in (0, 1), got {c:g}")
    n = len(x)
    if n == 0:
        raise ValueError("mean_ci: values must hold at least one number")
    m = float(np.mean(x))
    if n == 1:
        return CI(m, float("nan"), float("nan"), float("nan"), 1)
    half = float(stats.t.ppf((1.0 + c) / 2.0, n - 1)) * float(np.std(x, ddof=1)) / math.sqrt(n)
    return CI(m, m - half, m + half, half, n)


def latency_by_size(flows: pd.DataFrame, bins: Bins = None, warmup_s: float = 0.0) -> pd.DataFrame:
    """Latency (fct_s) by flow length, one row per size (bins=None, FavorQueue Fig. 8) or
    per (lo, hi) bucket: flows started after `warmup_s`, how many finished, and the mean,
    median, standard deviation and C.O.V. (Guo & Matta Fig. 2(b)) of fct_s over the
    finished ones. Persistent flows are left out."""
    f = select_flows(flows, "latency_by_size", "flows", warmup_s=warmup_s, sized=True)
    need(f, ["fct_s"], "latency_by_size", "flows")
    rows = []
    for key, label, g in size_groups(f, bins, "latency_by_size"):
        done = g["fct_s"].dropna().to_numpy(dtype=float)
        rows.append(
            {
                key: label,
                "flows": len(g),
                "finished": len(done),
                "mean_fct_s": float(np.mean(done)) if len(done) else float("nan"),
                "median_fct_s": float(np.median(done)) if len(done) else float("nan"),
                "std_fct_s": float(np.std(done, ddof=1)) if len(done) > 1 else float("nan"),
                "cov_fct_s": cov(done),
            }
        )
    cols = [
        "bucket" if bins is not None else "size_pkts",
        "flows",
        "finished",
        "mean_fct_s",
        "median_fct_s",
        "std_fct_s",
        "cov_fct_s",
    ]
    return pd.DataFrame(rows, columns=cols)


def percentile_by_class(
    flows: pd.DataFrame, q: float = 99.9, by: ClassSpec = "class_at_end", value: str = "fct_s", warmup_s: float = 0.0
) -> pd.DataFrame:
    """The `q`-th percentile of `value` (default the transmission time fct_s) per class of
    flows (Matta & Guo 2000, section IV-C: 99.9th percentile for short and long flows).
    `by` is a column (class_at_end, source, tag, ...) or a dict of size ranges such as
    {"short": (5, 20), "long": (900, 1100)}. Percentiles interpolate linearly between order
    statistics over the finished flows; `unfinished` counts the others, whose transmission
    time is unknown (the percentile is then a lower bound)."""
    qf = check_number(q, "percentile_by_class", "q")
    if not 0.0 <= qf <= 100.0:
        raise ValueError(f"percentile_by_class: q must be in [0, 100], got {qf:g}")
    f = select_flows(flows, "percentile_by_class", "flows", warmup_s=warmup_s)
    need(f, [value], "percentile_by_class", "flows")
    labels = class_labels(f, by, "percentile_by_class")
    rows = []
    for cls in sorted(labels.dropna().unique(), key=str):
        v = f.loc[labels == cls, value]
        done = v.dropna().to_numpy(dtype=float)
        rows.append(
            {
                "class": cls,
                "flows": len(v),
                "unfinished": int(v.isna().sum()),
                "mean": float(np.mean(done)) if len(done) else float("nan"),
                f"p{qf:g}": float(np.percentile(done, qf)) if len(done) else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=["class", "flows", "unfinished", "mean", f"p{qf:g}"])
