"""The flow-level metrics of FavorQueue (Anelli, Diana & Lochin 2013): the per-flow latency
difference Delta_i and the gain G(x) between two runs of the same flows (section 5.2,
eq. 2, Figs. 10-12), the RTO ratio T(rho) (section 6.2, eq. 3, Fig. 19), the RTO recovery
ratio tau(x) (eq. 4, Fig. 20), the favouring probability P(Favor | S = s) (section 7.1,
eq. 5, Fig. 21), the push-out share of drops (Fig. 22), the SYN loss ratio (section 6.1)
and the number of flows in the system over time (Figs. 13-14).

Inputs are flows tables (flows.parquet) and, for the push-out share, summary.json.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from savanna.analysis._common import Bins, check_number, need, select_flows, size_groups

_SAME_START_TOL_S = 1e-9


def delta_i(run_a: pd.DataFrame, run_b: pd.DataFrame, warmup_s: float = 0.0) -> pd.DataFrame:
    """Delta_i = Td_i - Tf_i per flow (FavorQueue section 5.2, Fig. 10): the latency (fct_s)
    of flow i in `run_a` (the reference, DropTail in the paper) minus its latency in `run_b`
    (FavorQueue). Positive means `run_b` was faster. Only flows that started after
    `warmup_s` and finished in both runs are compared (section 4: "identical terminating
    flows"). The two runs must carry the same flows (same scenario and seed, differing only
    in the queue; design.md's seed rule): a flow id present in both with a different start
    time or size is an error."""
    cols = ["flow_id", "start_s", "size_pkts", "fct_s"]
    need(run_a, cols, "delta_i", "run_a")
    need(run_b, cols, "delta_i", "run_b")
    warmup_s = check_number(warmup_s, "delta_i", "warmup_s", non_negative=True)
    for name, run in (("run_a", run_a), ("run_b", run_b)):
        if run["flow_id"].duplicated().any():
            raise ValueError(f"delta_i: {name} has repeated flow_id values; pass the flows table of one run")
    both = run_a[cols].merge(run_b[cols], on="flow_id", suffixes=("_a", "_b"), validate="one_to_one")
    bad_start = (both["start_s_a"] - both["start_s_b"]).abs() > _SAME_START_TOL_S
    sa, sb = both["size_pkts_a"], both["size_pkts_b"]
    bad_size = ~((sa == sb) | (sa.isna() & sb.isna()))
    bad = both[bad_start | bad_size]
    if len(bad):
        r = bad.iloc[0]
        raise ValueError(
            f"delta_i: run_a and run_b do not carry the same flows (flow {int(r['flow_id'])}: start_s "
            f"{r['start_s_a']:g} vs {r['start_s_b']:g}, size_pkts {r['size_pkts_a']} vs {r['size_pkts_b']}); "
            "compare two runs of the same scenario and seed that differ only in the queue"
        )
    keep = (both["start_s_a"] >= warmup_s) & both["fct_s_a"].notna() & both["fct_s_b"].notna()
    out = both[keep]
    return (
        pd.DataFrame(
            {
                "flow_id": out["flow_id"].to_numpy(),
                "start_s": out["start_s_a"].to_numpy(dtype=float),
                "size_pkts": out["size_pkts_a"].to_numpy(),
                "fct_a_s": out["fct_s_a"].to_numpy(dtype=float),
                "fct_b_s": out["fct_s_b"].to_numpy(dtype=float),
                "delta_s": (out["fct_s_a"] - out["fct_s_b"]).to_numpy(dtype=float),
            }
        )
        .sort_values("flow_id", kind="stable")
        .reset_index(drop=True)
    )


def gain(run_a: pd.DataFrame, run_b: pd.DataFrame, bins: Bins = None, warmup_s: float = 0.0) -> pd.DataFrame:
    """The latency gain of `run_b` over `run_a` per flow length x (FavorQueue eq. 2, Fig. 12):

        G(x) = sum_i Delta_{x_i} / sum_i Td_{x_i}

    over the N flows of length x that finished in both runs (see `delta_i`), with one group
    per size (bins=None) or per (lo, hi) size bucket; ALL_SIZES, [(1, inf)], gives the overall
    gain. Also the positive and negative parts (sums over Delta > 0 and Delta < 0, same
    denominator; gain = gain_pos + gain_neg) and the shares of flows whose latency fell,
    rose or stayed the same (Fig. 11)."""
    d = delta_i(run_a, run_b, warmup_s=warmup_s)
    rows = []
    for key, label, g in size_groups(d, bins, "gain"):
        dl, td = g["delta_s"].to_numpy(), g["fct_a_s"].to_numpy()
        n, den = len(g), float(np.sum(td))
        ok = n > 0 and den > 0
        rows.append(
            {
                key: label,
                "flows": n,
                "sum_fct_a_s": den,
                "gain": float(np.sum(dl)) / den if ok else float("nan"),
                "gain_pos": float(np.sum(dl[dl > 0])) / den if ok else float("nan"),
                "gain_neg": float(np.sum(dl[dl < 0])) / den if ok else float("nan"),
                "p_faster": float(np.mean(dl > 0)) if n else float("nan"),
                "p_slower": float(np.mean(dl < 0)) if n else float("nan"),
                "p_same": float(np.mean(dl == 0)) if n else float("nan"),
            }
        )
    cols = [
        "bucket" if bins is not None else "size_pkts",
        "flows",
        "sum_fct_a_s",
        "gain",
        "gain_pos",
        "gain_neg",
        "p_faster",
        "p_slower",
        "p_same",
    ]
    return pd.DataFrame(rows, columns=cols)


def _ratio(num: pd.Series, den: pd.Series, by: str | pd.Series | None, name: str):
    if by is None:
        d = float(den.sum())
        return float(num.sum()) / d if d > 0 else float("nan")
    n, d = num.groupby(by, sort=True).sum(), den.groupby(by, sort=True).sum()
    out = (n / d.where(d > 0)).astype(float)
    out.name = name
    return out


def _by(f: pd.DataFrame, by, func: str):
    if by is None:
        return None
    if isinstance(by, str):
        need(f, [by], func, "flows")
        return f[by]
    raise ValueError(
        f"{func}: by must be None (one number) or a column name of flows "
        f"(e.g. 'load' after concatenating runs), got {by!r}"
    )


def rto_ratio(
    flows: pd.DataFrame, by: str | None = None, warmup_s: float = 0.0, finished_only: bool = True
) -> float | pd.Series:
    """The RTO ratio (FavorQueue eq. 3, Fig. 19):

        T(rho) = sum_i RTO_i / sum_i (L_i + R_i)

    with RTO_i the flow's retransmission timeouts (`timeouts`), L_i its size in packets
    (`size_pkts`) and R_i its retransmissions (`retransmits`). The paper computes it per
    load rho, i.e. per run: one float, or a Series per value of column `by` when several
    runs are concatenated with a column telling them apart. Persistent flows (no size) are
    left out; so are unfinished ones unless `finished_only` is False."""
    f = select_flows(
        flows, "rto_ratio", "flows", warmup_s=warmup_s, finished_only=finished_only, sized=True, tcp_only=True
    )
    need(f, ["timeouts", "retransmits"], "rto_ratio", "flows")
    return _ratio(f["timeouts"], f["size_pkts"] + f["retransmits"], _by(f, by, "rto_ratio"), "rto_ratio")


def rto_recovery_ratio(
    flows: pd.DataFrame, bins: Bins = None, warmup_s: float = 0.0, finished_only: bool = True
) -> pd.DataFrame:
    """The RTO recovery ratio per flow length x (FavorQueue eq. 4, Fig. 20):

        tau(x) = sum_i RTO_i / sum_i (RTO_i + FR_i)

    with FR_i the flow's fast retransmits (`fast_retransmits`): the share of loss
    recoveries done by a timeout. One row per size (bins=None) or (lo, hi) bucket;
    ALL_SIZES, [(1, inf)], gives the overall ratio (56% DropTail vs 38% FavorQueue in the paper).
    NaN where no flow of the group recovered from a loss."""
    f = select_flows(
        flows, "rto_recovery_ratio", "flows", warmup_s=warmup_s, finished_only=finished_only, sized=True, tcp_only=True
    )
    need(f, ["timeouts", "fast_retransmits"], "rto_recovery_ratio", "flows")
    rows = []
    for key, label, g in size_groups(f, bins, "rto_recovery_ratio"):
        rto, fr = int(g["timeouts"].sum()), int(g["fast_retransmits"].sum())
        rows.append(
            {
                key: label,
                "flows": len(g),
                "timeouts": rto,
                "fast_retransmits": fr,
                "tau": rto / (rto + fr) if rto + fr > 0 else float("nan"),
            }
        )
    cols = ["bucket" if bins is not None else "size_pkts", "flows", "timeouts", "fast_retransmits", "tau"]
    return pd.DataFrame(rows, columns=cols)


def p_favor_by_size(
    flows: pd.DataFrame,
    bins: Bins = None,
    warmup_s: float = 0.0,
    finished_only: bool = True,
    count_handshake: bool = True,
    handshake_ack: bool = True,
) -> pd.DataFrame:
    """The probability that a packet of a flow of size s is favoured (FavorQueue eq. 5,
    Fig. 21):

        P(Favor | S = s) = sum_i fa_i / sum_i (s + R_i)

    with fa_i the flow's favoured packets (`favored_pkts`) and R_i its retransmissions. One
    row per size (bins=None) or (lo, hi) bucket.

    Savanna's `favored_pkts` counts every packet of the flow a favouring queue accepted as
    favoured, including the sender's SYN and its handshake ACK, which eq. 5's denominator
    leaves out; with `count_handshake` (default) the denominator also counts them, as
    1 + syn_drops SYNs and, with `handshake_ack` (the run's `[tcp] handshake_ack`), one
    pure ACK per flow, so the ratio stays a probability. The flows
    table has no count of SYNs re-sent after a lost SYN-ACK, so this is exact only when
    no SYN-ACK was lost. Set count_handshake=False for eq. 5 as printed (or for runs
    without the handshake). The ratio assumes one favouring queue on the data path (the
    paper's setup: FavorQueue on the uplink only, DropTail on the ACK path)."""
    f = select_flows(
        flows, "p_favor_by_size", "flows", warmup_s=warmup_s, finished_only=finished_only, sized=True, tcp_only=True
    )
    need(f, ["favored_pkts", "retransmits", "syn_drops"], "p_favor_by_size", "flows")
    den = f["size_pkts"] + f["retransmits"]
    if count_handshake:
        den = den + 1 + int(handshake_ack) + f["syn_drops"]
    f = f.assign(_den=den)
    rows = []
    for key, label, g in size_groups(f, bins, "p_favor_by_size"):
        fa, d = int(g["favored_pkts"].sum()), float(g["_den"].sum())
        rows.append(
            {
                key: label,
                "flows": len(g),
                "favored_pkts": fa,
                "offered_pkts": d,
                "p_favor": fa / d if d > 0 else float("nan"),
            }
        )
    cols = ["bucket" if bins is not None else "size_pkts", "flows", "favored_pkts", "offered_pkts", "p_favor"]
    return pd.DataFrame(rows, columns=cols)


def pushout_share(summary: dict) -> pd.DataFrame:
    """The share of each queue's drops that were push-outs (FavorQueue Fig. 22: about 30%
    for every flow length): pushed_out / dropped from summary.json, one row per queue, NaN
    for a queue that dropped nothing. Fig. 22 splits this by flow length, which needs a
    per-flow count of pushed-out packets that flows.parquet does not have; this is the
    per-queue figure."""
    if not isinstance(summary, dict) or not isinstance(summary.get("queues"), list):
        raise ValueError(
            "pushout_share: summary must be the dict of summary.json (Result.summary), with a 'queues' list"
        )
    rows = []
    for q in summary["queues"]:
        missing = [k for k in ("name", "dropped", "pushed_out") if k not in q]
        if missing:
            raise ValueError(f"pushout_share: summary queue entry lacks {', '.join(missing)}")
        dropped, pushed = int(q["dropped"]), int(q["pushed_out"])
        rows.append(
            {
                "queue": q["name"],
                "discipline": q.get("discipline", ""),
                "dropped": dropped,
                "pushed_out": pushed,
                "pushout_share": pushed / dropped if dropped else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=["queue", "discipline", "dropped", "pushed_out", "pushout_share"])


def syn_loss_ratio(flows: pd.DataFrame, by: str | None = None, warmup_s: float = 0.0) -> float | pd.Series:
    """The loss ratio of SYN segments (FavorQueue section 6.1: 1.8% DropTail vs 0.04%
    FavorQueue on average): SYNs dropped over SYNs sent, over TCP flows that started after
    `warmup_s` (finished or not). SYNs sent come from the `syn_sent` column (retransmissions
    included, also those after a lost SYN-ACK); records without it count 1 + syn_drops per
    flow. One float, or a Series per value of column `by`. Meaningful only for runs with
    the handshake."""
    f = select_flows(flows, "syn_loss_ratio", "flows", warmup_s=warmup_s, tcp_only=True)
    need(f, ["syn_drops"], "syn_loss_ratio", "flows")
    sent = f["syn_sent"] if "syn_sent" in f.columns else 1 + f["syn_drops"]
    return _ratio(f["syn_drops"], sent, _by(f, by, "syn_loss_ratio"), "syn_loss_ratio")


def active_flows(flows: pd.DataFrame, times: Sequence[float], by: str | None = None) -> pd.Series | pd.DataFrame:
    """Number of flows in the system at each of `times` (FavorQueue Figs. 13-14): flows
    with start_s <= t < end_s; a flow that never finished (end_s null) counts until the end.
    A Series indexed by time, or a DataFrame with one column per value of `by`."""
    need(flows, ["start_s", "end_s"], "active_flows", "flows")
    try:
        t = np.asarray(list(times), dtype=float)
    except (TypeError, ValueError):
        raise ValueError("active_flows: times must be a sequence of numbers (seconds)") from None
    if t.ndim != 1 or not np.isfinite(t).all():
        raise ValueError("active_flows: times must be a one-dimensional sequence of finite numbers (seconds)")
    idx = pd.Index(t, name="t_s")

    def count(f: pd.DataFrame) -> np.ndarray:
        start = np.sort(f["start_s"].to_numpy(dtype=float))
        end = np.sort(f["end_s"].fillna(np.inf).to_numpy(dtype=float))
        return np.searchsorted(start, t, side="right") - np.searchsorted(end, t, side="right")

    if by is None:
        return pd.Series(count(flows), index=idx, name="active_flows")
    need(flows, [by], "active_flows", "flows")
    return pd.DataFrame({k: count(g) for k, g in flows.groupby(by, sort=True)}, index=idx)
