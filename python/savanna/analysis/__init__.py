"""Analysis of run records (flows.parquet, queues.parquet, summary.json and the goodput
record): the metrics the four papers report, computed from Savanna's outputs. See
docs/analysis.md for each function's definition and the paper, figure or equation it
follows.

- fct: FCT by size bucket and the `savanna compare` report (the ns-3 comparison, issue 3)
- stats: Jain's index, C.O.V., latency by size, per-class percentiles, confidence intervals
- favorqueue: FavorQueue 2013's Delta_i, G(x), T(rho), tau(x), P(Favor | size), push-out
  share, SYN loss ratio, flows in the system
- fairness: windowed goodput and Jain's index per class (Matta & Guo 2000), foreground
  fairness (Guo & Matta 2001)
- queues: per-class departure share and drop/mark rates over windows (Guo & Matta 2001)
"""

from savanna.analysis.fairness import foreground_fairness, goodput_fairness, windowed_goodput
from savanna.analysis.favorqueue import (
    active_flows,
    delta_i,
    gain,
    p_favor_by_size,
    pushout_share,
    rto_ratio,
    rto_recovery_ratio,
    syn_loss_ratio,
)
from savanna.analysis.fct import (
    SIZE_BUCKETS,
    bucket_label,
    compare_dirs,
    compare_markdown,
    fct_by_size,
    load_flows,
)
from savanna.analysis.queues import departure_share, drop_mark_rates, path_utilisation
from savanna.analysis.stats import CI, cov, jain, latency_by_size, mean_ci, percentile_by_class

ALL_SIZES = [(1, float("inf"))]
"""Bins that put every sized flow in one group (overall G, tau, P(Favor))."""

__all__ = [
    "ALL_SIZES",
    "CI",
    "SIZE_BUCKETS",
    "active_flows",
    "bucket_label",
    "compare_dirs",
    "compare_markdown",
    "cov",
    "delta_i",
    "departure_share",
    "drop_mark_rates",
    "fct_by_size",
    "foreground_fairness",
    "gain",
    "goodput_fairness",
    "jain",
    "latency_by_size",
    "load_flows",
    "mean_ci",
    "p_favor_by_size",
    "path_utilisation",
    "percentile_by_class",
    "pushout_share",
    "rto_ratio",
    "rto_recovery_ratio",
    "syn_loss_ratio",
    "windowed_goodput",
]
