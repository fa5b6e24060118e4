"""Per-class queue metrics over a time window, from the queues time series
(queues.parquet, written when a scenario has [sampling]):

- the share of a link's departures taken by each class over a sliding window (Guo & Matta
  2001, Fig. 3 and footnote 10: "the ratio of packets transmitted over link bandwidth over
  the last 0.5 second");
- per-class drop and mark rates over a window (Guo & Matta 2001, Fig. 8: "average drop rate
  in the last 20 seconds", forced drops plus ECN marks, per class for RIO-PS).

Each row of queues.parquet at time t covers the sampling interval ending at t: per-class
counters `departures_<c>`, `drops_<c>`, `marks_<c>` for that interval and the queue length
`len_<c>` at t. Every packet that arrives at a queue leaves it, is dropped (on arrival,
pushed out, or dropped from the queue) or is still queued, so the arrivals of class c in a
window (t0, t1] are departures + drops + len_c(t1) - len_c(t0).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pandas as pd

from savanna.analysis._common import check_number, need

_TOL = 1e-9
_WHAT = "the queues table (Result.queues / queues.parquet; needs [sampling] in the scenario)"


def _classes(queues: pd.DataFrame, func: str, prefixes: list[str]) -> list[str]:
    need(queues, ["t_s", "queue"], func, "queues", _WHAT)
    classes = [m.group(1) for c in queues.columns if (m := re.fullmatch(r"departures_(.+)", str(c)))]
    if not classes:
        raise ValueError(f"{func}: queues lacks per-class columns departures_<class>; expected {_WHAT}")
    need(queues, [f"{p}_{c}" for p in prefixes for c in classes], func, "queues", _WHAT)
    return classes


def _windows(
    queues: pd.DataFrame, window_s: float, step_s: float | None, func: str
) -> Iterator[tuple[str, pd.DataFrame, np.ndarray, np.ndarray]]:
    """Per queue: its samples sorted by time, and for each window that starts and ends on a
    sampling instant (or at time 0) the index of its last sample k and the index j of its
    first sample, so that the window covers samples j..k."""
    w = check_number(window_s, func, "window_s", positive=True)
    step = None if step_s is None else check_number(step_s, func, "step_s", positive=True)
    found = False
    for name in sorted(queues["queue"].unique(), key=str):
        g = queues[queues["queue"] == name].sort_values("t_s", kind="stable").reset_index(drop=True)
        t = g["t_s"].to_numpy(dtype=float)
        bounds = np.concatenate([[0.0], t])  # bounds[j] = start of sample j's interval
        starts = t - w
        j = np.searchsorted(bounds, starts - _TOL, side="left")
        jc = np.minimum(j, len(bounds) - 1)
        ok = (j < len(bounds)) & (np.abs(bounds[jc] - starts) <= _TOL * np.maximum(1.0, np.abs(t)))
        if step is not None:
            r = t / step
            ok &= np.abs(r - np.round(r)) <= _TOL * np.maximum(1.0, r)
        ks = np.nonzero(ok)[0]
        found |= len(ks) > 0
        yield name, g, ks, jc[ks]
    if not found and len(queues):
        t = np.sort(queues["t_s"].unique())
        dt = float(t[0]) if len(t) else float("nan")
        raise ValueError(
            f"{func}: no complete window of {w:g} s in queues: window_s (and step_s) must be a multiple of "
            f"the sampling interval ({dt:g} s) and window_s at most the sampled time ({float(t[-1]):g} s)"
        )


def _window_sums(g: pd.DataFrame, col: str, ks: np.ndarray, js: np.ndarray) -> np.ndarray:
    c = np.concatenate([[0], np.cumsum(g[col].to_numpy(dtype=np.int64))])
    return c[ks + 1] - c[js]


def _len_change(g: pd.DataFrame, col: str, ks: np.ndarray, js: np.ndarray) -> np.ndarray:
    ln = np.concatenate([[0], g[col].to_numpy(dtype=np.int64)])  # ln[j] = length at bounds[j]
    return ln[ks + 1] - ln[js]


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    out = np.full(a.shape, np.nan)
    np.divide(a, b, out=out, where=b > 0)
    return out


def departure_share(
    queues: pd.DataFrame,
    window_s: float = 0.5,
    step_s: float | None = None,
    capacity_pkts_s: None | float | dict[str, float] = None,
) -> pd.DataFrame:
    """Per queue, per class and per window: the class's departures in the window and its
    share of all the queue's departures (Guo & Matta 2001, Fig. 3, 0.5 s windows).

    The window slides: one window of `window_s` seconds ends at every sampling instant
    (step_s=None), or at every multiple of `step_s` (step_s = window_s gives back-to-back
    windows); windows must start and end on sampling instants. With `capacity_pkts_s`, the
    link's rate in packets per second (one number, or a dict queue name -> rate; queues not
    in the dict are left out), `link_fraction` is departures / (capacity x window), the
    paper's "packets transmitted over link bandwidth". Rows: t_s (window end), queue, class
    (each class of the table, then "all"), departures, share, link_fraction."""
    func = "departure_share"
    classes = _classes(queues, func, ["departures"])
    caps = _capacities(capacity_pkts_s, func)
    w = check_number(window_s, func, "window_s", positive=True)
    frames = []
    for name, g, ks, js in _windows(queues, w, step_s, func):
        if isinstance(caps, dict) and name not in caps:
            continue
        cap = caps[name] if isinstance(caps, dict) else caps
        dep = {c: _window_sums(g, f"departures_{c}", ks, js) for c in classes}
        total = sum(dep.values()) if dep else np.zeros(len(ks), dtype=np.int64)
        dep["all"] = total
        for c in classes + ["all"]:
            frames.append(
                pd.DataFrame(
                    {
                        "t_s": g["t_s"].to_numpy(dtype=float)[ks],
                        "queue": name,
                        "class": c,
                        "departures": dep[c],
                        "share": _div(dep[c], total),
                        "link_fraction": dep[c] / (cap * w) if cap is not None else np.nan,
                    }
                )
            )
    return _collect(frames, ["t_s", "queue", "class", "departures", "share", "link_fraction"], classes)


def drop_mark_rates(queues: pd.DataFrame, window_s: float = 20.0, step_s: float | None = None) -> pd.DataFrame:
    """Per queue, per class and per window: arrivals, drops and ECN marks, and the drop
    rate, mark rate and their sum per arriving packet (Guo & Matta 2001, Fig. 8: forced
    drops plus ECN marks over the last 20 seconds, per class for RIO-PS). Arrivals are
    departures + drops + the change of the class's queue length over the window. Windows as
    in `departure_share`. Rows: t_s (window end), queue, class (each class, then "all"),
    arrivals, drops, marks, drop_rate, mark_rate, drop_mark_rate (NaN with no arrivals)."""
    func = "drop_mark_rates"
    classes = _classes(queues, func, ["departures", "drops", "marks", "len"])
    frames = []
    for name, g, ks, js in _windows(queues, window_s, step_s, func):
        per = {}
        for c in classes:
            dep = _window_sums(g, f"departures_{c}", ks, js)
            drops = _window_sums(g, f"drops_{c}", ks, js)
            marks = _window_sums(g, f"marks_{c}", ks, js)
            per[c] = (dep + drops + _len_change(g, f"len_{c}", ks, js), drops, marks)
        per["all"] = tuple(sum(per[c][i] for c in classes) for i in range(3))
        for c in classes + ["all"]:
            arr, drops, marks = per[c]
            frames.append(
                pd.DataFrame(
                    {
                        "t_s": g["t_s"].to_numpy(dtype=float)[ks],
                        "queue": name,
                        "class": c,
                        "arrivals": arr,
                        "drops": drops,
                        "marks": marks,
                        "drop_rate": _div(drops, arr),
                        "mark_rate": _div(marks, arr),
                        "drop_mark_rate": _div(drops + marks, arr),
                    }
                )
            )
    cols = ["t_s", "queue", "class", "arrivals", "drops", "marks", "drop_rate", "mark_rate", "drop_mark_rate"]
    return _collect(frames, cols, classes)


def _capacities(caps, func: str):
    if caps is None:
        return None
    if isinstance(caps, dict):
        return {str(k): check_number(v, func, f"capacity_pkts_s[{k!r}]", positive=True) for k, v in caps.items()}
    return check_number(caps, func, "capacity_pkts_s", positive=True)


def _collect(frames: list[pd.DataFrame], cols: list[str], classes: list[str]) -> pd.DataFrame:
    if not frames:
        return pd.DataFrame(columns=cols)
    out = pd.concat(frames, ignore_index=True)
    order = {c: i for i, c in enumerate(classes + ["all"])}
    out = out.assign(_o=out["class"].map(order)).sort_values(["queue", "t_s", "_o"], kind="stable")
    return out.drop(columns="_o").reset_index(drop=True)[cols]


def path_utilisation(queues: pd.DataFrame, warmup_s: float = 0.0) -> pd.DataFrame:
    """Average and deviation of each link's utilisation over the sampling intervals (Matta &
    Guo 2000 Table II: "average utilization and deviation on each path", and Fig. 2's
    utilisation over time). Uses the ``utilisation`` column of queues.parquet (the busy
    fraction of each interval) from samples after ``warmup_s``. One row per queue: mean,
    std (population), and the number of intervals."""
    need(queues, ["t_s", "queue", "utilisation"], "path_utilisation", "queues")
    check_number(warmup_s, "path_utilisation", "warmup_s", non_negative=True)
    q = queues[queues["t_s"] > warmup_s]
    g = q.groupby("queue", sort=True)["utilisation"]
    out = pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=0), "intervals": g.size()})
    out.index.name = "queue"
    return out
