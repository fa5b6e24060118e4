"""Fairness among flows of one class:

- goodput per flow over fixed windows and Jain's index within each class per window
  (Matta & Guo 2000, section IV-A: "we measure the goodput and fairness index over
  20-second intervals every 20 seconds"; Figs. 6-8 and 10);
- Jain's index over the response times of foreground connections (Guo & Matta 2001,
  section IV-B.2, Fig. 9: short and long foreground connections injected periodically).

The windowed goodput reads the per-flow, per-window delivery record goodput.parquet with
columns t_s (end of the record's window), flow_id and delivered_pkts (data packets
delivered in that window; a flow that delivered nothing has no row), and optionally class.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from savanna.analysis._common import ClassSpec, check_number, class_labels, need, select_flows
from savanna.analysis.stats import jain

_TOL = 1e-9
_WHAT = "the goodput record (goodput.parquet: t_s, flow_id, delivered_pkts)"


def windowed_goodput(
    goodput: pd.DataFrame,
    window_s: float = 20.0,
    flows: pd.DataFrame | None = None,
    by: ClassSpec | None = None,
    packet_bytes: float | None = None,
    until_s: float | None = None,
) -> pd.DataFrame:
    """Goodput of every flow in back-to-back windows of `window_s` seconds (Matta & Guo
    2000, section IV-A: 20 s): the record's delivered_pkts summed over the record windows
    ending in ((k-1) W, k W], divided by W. `window_s` must be a multiple of the record's
    interval (the smallest gap between its window ends).

    The class of a flow: with `by` (a column of `flows`, or a dict of size ranges such as
    {"short": (5, 20), "long": (900, 1100)}), taken from the flows table, and flows in no
    class are left out; otherwise the record's own `class` column if it has one (a flow
    delivering in two classes in one window then gets a row per class); otherwise the
    flows' `class_at_end`; with neither, every flow is in class "all".

    With `flows` (the flows table), every flow in the system during a window (start_s <
    window end, end_s null or > window start) gets a row even if the record has none for it
    (it delivered nothing), so that a shut-off flow counts as 0 in the fairness index; with
    a record `class` column its class there is the one of its latest record row up to that
    window (else its first row; with no row at all, its class_at_end). `until_s` drops
    windows that end after it (a last window cut short by the end of the run).
    Rows: t_s (window end), class, flow_id, delivered_pkts, goodput_pkts_s and, with
    `packet_bytes`, goodput_bps (payload bits per second)."""
    func = "windowed_goodput"
    need(goodput, ["t_s", "flow_id", "delivered_pkts"], func, "goodput", _WHAT)
    w = check_number(window_s, func, "window_s", positive=True)
    pb = None if packet_bytes is None else check_number(packet_bytes, func, "packet_bytes", positive=True)
    until = None if until_s is None else check_number(until_s, func, "until_s", positive=True)
    t = goodput["t_s"].to_numpy(dtype=float)
    if len(t) and (not np.isfinite(t).all() or (t <= 0).any()):
        raise ValueError(f"{func}: goodput t_s must be positive finite window end times")
    ts = np.unique(t)
    if len(ts):
        step = float(np.min(np.diff(np.concatenate([[0.0], ts]))))
        r = w / step
        if abs(r - round(r)) > 1e-6 * max(1.0, r) or round(r) < 1:
            raise ValueError(f"{func}: window_s must be a multiple of the record's interval ({step:g} s), got {w:g}")

    flow_class = None  # flow_id -> class, when the class is a property of the flow
    if flows is not None:
        need(flows, ["flow_id", "start_s", "end_s"], func, "flows")
        if flows["flow_id"].duplicated().any():
            raise ValueError(f"{func}: flows has repeated flow_id values; pass the flows table of one run")
    if by is not None:
        if flows is None:
            raise ValueError(f"{func}: by needs flows (the flows table the classes come from)")
        flow_class = pd.Series(class_labels(flows, by, func).to_numpy(), index=flows["flow_id"].to_numpy())
    elif "class" not in goodput.columns:
        if flows is not None and "class_at_end" in flows.columns:
            flow_class = pd.Series(flows["class_at_end"].to_numpy(), index=flows["flow_id"].to_numpy())
        elif flows is not None:
            flow_class = pd.Series("all", index=flows["flow_id"].to_numpy())

    rec = goodput[["t_s", "flow_id", "delivered_pkts"]].copy()
    if flow_class is not None:
        rec["class"] = rec["flow_id"].map(flow_class)
    elif "class" in goodput.columns:
        rec["class"] = goodput["class"].to_numpy()
    else:
        rec["class"] = "all"
    rec = rec[rec["class"].notna()]
    k = np.ceil(rec["t_s"].to_numpy(dtype=float) / w - _TOL).astype(np.int64)
    rec = rec.assign(_k=k)
    agg = rec.groupby(["_k", "class", "flow_id"], sort=True, as_index=False)["delivered_pkts"].sum()
    if flows is not None:
        agg = _fill_idle(agg, rec, flows, w, flow_class)
    agg["t_s"] = agg["_k"].to_numpy(dtype=float) * w
    if until is not None:
        agg = agg[agg["t_s"] <= until + _TOL * max(1.0, until)]
    agg = agg.sort_values(["t_s", "class", "flow_id"], kind="stable").reset_index(drop=True)
    out = pd.DataFrame(
        {
            "t_s": agg["t_s"].to_numpy(dtype=float),
            "class": agg["class"].to_numpy(),
            "flow_id": agg["flow_id"].to_numpy(),
            "delivered_pkts": agg["delivered_pkts"].to_numpy(dtype=np.int64),
            "goodput_pkts_s": agg["delivered_pkts"].to_numpy(dtype=float) / w,
        }
    )
    if pb is not None:
        out["goodput_bps"] = out["goodput_pkts_s"] * pb * 8.0
    return out


def _fill_idle(agg: pd.DataFrame, rec: pd.DataFrame, flows, w: float, flow_class) -> pd.DataFrame:
    """Add a zero row for every (window, flow) with the flow in the system but absent from
    the record in that window, up to the record's last window."""
    if rec.empty or len(flows) == 0:
        return agg
    kmax = int(rec["_k"].max())
    start = flows["start_s"].to_numpy(dtype=float)
    end = flows["end_s"].to_numpy(dtype=float, na_value=np.inf)
    # windows ((k-1)w, kw] with kw > start and (k-1)w < end
    k0 = np.maximum(1, np.floor(start / w).astype(np.int64) + 1)
    k1 = np.where(np.isfinite(end), np.ceil(np.where(np.isfinite(end), end, 0.0) / w - _TOL), kmax).astype(np.int64)
    n = np.maximum(0, np.minimum(k1, kmax) - k0 + 1)
    if n.sum() == 0:
        return agg
    offset = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    cand = pd.DataFrame({"_k": np.repeat(k0, n) + offset, "flow_id": np.repeat(flows["flow_id"].to_numpy(), n)})
    seen = agg[["_k", "flow_id"]].drop_duplicates().assign(_seen=True)
    cand = cand.merge(seen, on=["_k", "flow_id"], how="left")
    cand = cand[cand["_seen"].isna()].drop(columns="_seen").sort_values("_k", kind="stable")
    if cand.empty:
        return agg
    if flow_class is not None:
        cls = cand["flow_id"].map(flow_class)
    else:
        # the flow's class in its latest record row up to that window, else its first row,
        # else its class at the end
        r = rec.sort_values(["_k", "t_s"], kind="stable")[["_k", "flow_id", "class"]]
        back = pd.merge_asof(cand, r, on="_k", by="flow_id", direction="backward")["class"]
        fwd = pd.merge_asof(cand, r, on="_k", by="flow_id", direction="forward")["class"]
        cls = pd.Series(back.where(back.notna(), fwd).to_numpy(), index=cand.index)
        if "class_at_end" in flows.columns:
            end_cls = cand["flow_id"].map(
                pd.Series(flows["class_at_end"].to_numpy(), index=flows["flow_id"].to_numpy())
            )
            cls = cls.where(cls.notna(), end_cls)
    extra = pd.DataFrame(
        {
            "_k": cand["_k"].to_numpy(),
            "class": cls.to_numpy(),
            "flow_id": cand["flow_id"].to_numpy(),
            "delivered_pkts": 0,
        }
    )
    extra = extra[extra["class"].notna()]
    return pd.concat([agg, extra], ignore_index=True) if len(extra) else agg


def goodput_fairness(
    goodput: pd.DataFrame,
    window_s: float = 20.0,
    flows: pd.DataFrame | None = None,
    by: ClassSpec | None = None,
    until_s: float | None = None,
) -> pd.DataFrame:
    """Jain's fairness index of the flows' goodputs within each class in each window
    (Matta & Guo 2000, section IV-A, 20 s windows), from `windowed_goodput` (see it for
    `flows`, `by` and `until_s`). Rows: t_s (window end), class, flows, goodput_pkts_s (the
    class's total), mean_goodput_pkts_s, jain."""
    wg = windowed_goodput(goodput, window_s=window_s, flows=flows, by=by, until_s=until_s)
    rows = []
    for (t, cls), g in wg.groupby(["t_s", "class"], sort=True):
        x = g["goodput_pkts_s"].to_numpy(dtype=float)
        rows.append(
            {
                "t_s": float(t),
                "class": cls,
                "flows": len(x),
                "goodput_pkts_s": float(x.sum()),
                "mean_goodput_pkts_s": float(x.mean()),
                "jain": jain(x),
            }
        )
    return pd.DataFrame(rows, columns=["t_s", "class", "flows", "goodput_pkts_s", "mean_goodput_pkts_s", "jain"])


def foreground_fairness(
    flows: pd.DataFrame, tag: str | None = "foreground", by: ClassSpec = "size_pkts", warmup_s: float = 0.0
) -> pd.DataFrame:
    """Jain's fairness index over the response times T_i of foreground connections (Guo &
    Matta 2001, section IV-B.2, Fig. 9): the flows whose `tag` column equals `tag` (None:
    every flow), grouped by `by` (a column such as size_pkts or source, or a dict of size
    ranges {"short": (1, 20), "long": (1000, 1000)}). The index is over the connections that
    finished; `unfinished` counts the others. Rows: class, connections, unfinished,
    mean_fct_s, max_fct_s, jain."""
    func = "foreground_fairness"
    f = select_flows(flows, func, "flows", warmup_s=warmup_s)
    need(f, ["fct_s"], func, "flows")
    if tag is not None:
        need(f, ["tag"], func, "flows")
        f = f[f["tag"] == tag]
    labels = class_labels(f, by, func)
    rows = []
    for cls in sorted(labels.dropna().unique(), key=lambda v: (isinstance(v, str), v)):
        v = f.loc[labels == cls, "fct_s"]
        done = v.dropna().to_numpy(dtype=float)
        rows.append(
            {
                "class": cls,
                "connections": len(v),
                "unfinished": int(v.isna().sum()),
                "mean_fct_s": float(done.mean()) if len(done) else float("nan"),
                "max_fct_s": float(done.max()) if len(done) else float("nan"),
                "jain": jain(done),
            }
        )
    return pd.DataFrame(rows, columns=["class", "connections", "unfinished", "mean_fct_s", "max_fct_s", "jain"])
