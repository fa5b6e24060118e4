"""Analysis metrics of the four papers (savanna.analysis): every function on small
hand-built tables whose answers are worked out by hand in the comments, then one short real
run (DropTail vs FavorQueue on the same flows) checked against invariants the definitions
imply (probabilities in [0, 1], G = G+ + G-, queue arrivals conserved)."""

import copy
import math

import numpy as np
import pandas as pd
import pytest
from savanna import analysis as A

NAN = float("nan")


# --------------------------------------------------------------------------- Jain, C.O.V.


def test_jain_equal_values_is_one():
    assert A.jain([5.0, 5.0, 5.0, 5.0]) == pytest.approx(1.0)


def test_jain_one_nonzero_among_n_is_one_over_n():
    assert A.jain([0.0, 0.0, 7.0, 0.0]) == pytest.approx(1 / 4)
    assert A.jain([0, 3]) == pytest.approx(1 / 2)


def test_jain_worked_example():
    # (1 + 2 + 3)^2 / (3 * (1 + 4 + 9)) = 36 / 42
    assert A.jain([1, 2, 3]) == pytest.approx(6 / 7)
    # (2 + 3 + 7 + 11)^2 / (4 * (4 + 9 + 49 + 121)) = 529 / 732
    assert A.jain(np.array([2.0, 3.0, 7.0, 11.0])) == pytest.approx(529 / 732)


def test_jain_and_population_cov_agree():
    # Jain's index equals 1 / (1 + C.O.V.^2) with the population standard deviation.
    x = [2.0, 3.0, 7.0, 11.0, 0.5]
    assert A.jain(x) == pytest.approx(1 / (1 + A.cov(x, ddof=0) ** 2))


def test_jain_edge_cases_and_bad_input():
    assert math.isnan(A.jain([]))
    assert math.isnan(A.jain([0, 0]))
    with pytest.raises(ValueError, match="non-negative"):
        A.jain([1, -1])
    with pytest.raises(ValueError, match="finite"):
        A.jain([1, NAN])


def test_cov_hand_cases():
    # [1, 3]: mean 2, sample sd sqrt(2), population sd 1
    assert A.cov([1, 3]) == pytest.approx(math.sqrt(2) / 2)
    assert A.cov([1, 3], ddof=0) == pytest.approx(0.5)
    assert A.cov([2, 2, 2]) == 0.0
    assert math.isnan(A.cov([4]))
    assert math.isnan(A.cov([-1, 1]))  # zero mean
    with pytest.raises(ValueError, match="ddof"):
        A.cov([1, 2], ddof=2)


# --------------------------------------------------------------------------- mean_ci


def test_mean_ci_hand_case():
    # [1, 2, 3, 4]: mean 2.5, s = sqrt(5/3), t(0.975, 3) = 3.1824 (table) -> half 2.0543
    ci = A.mean_ci([1, 2, 3, 4])
    assert ci.mean == 2.5 and ci.n == 4
    assert ci.half_width == pytest.approx(3.1824 * math.sqrt(5 / 3) / 2, abs=1e-3)
    assert ci.low == pytest.approx(2.5 - ci.half_width) and ci.high == pytest.approx(2.5 + ci.half_width)
    # a wider confidence gives a wider interval
    assert A.mean_ci([1, 2, 3, 4], confidence=0.99).half_width > ci.half_width


def test_mean_ci_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(2000):
        ci = A.mean_ci(rng.normal(10.0, 3.0, size=5))
        hits += ci.low <= 10.0 <= ci.high
    assert 0.93 <= hits / 2000 <= 0.97


def test_mean_ci_single_value_and_bad_input():
    ci = A.mean_ci([3.0])
    assert ci.mean == 3.0 and math.isnan(ci.half_width)
    with pytest.raises(ValueError, match="confidence"):
        A.mean_ci([1, 2], confidence=95)
    with pytest.raises(ValueError, match="at least one"):
        A.mean_ci([])


# --------------------------------------------------------------------------- latency, percentiles


def test_latency_by_size_hand_case():
    flows = pd.DataFrame(
        {"start_s": [1.0, 1.0, 1.0, 1.0, 0.1], "size_pkts": [2, 2, 2, 5, 2], "fct_s": [1.0, 2.0, 3.0, None, 50.0]}
    )
    t = A.latency_by_size(flows, warmup_s=0.5).set_index("size_pkts")
    # size 2 (the warm-up flow left out): 1, 2, 3 -> mean 2, median 2, sd 1, C.O.V. 0.5
    assert t.loc[2, "flows"] == 3 and t.loc[2, "mean_fct_s"] == 2.0 and t.loc[2, "median_fct_s"] == 2.0
    assert t.loc[2, "std_fct_s"] == pytest.approx(1.0) and t.loc[2, "cov_fct_s"] == pytest.approx(0.5)
    assert t.loc[5, "flows"] == 1 and t.loc[5, "finished"] == 0 and math.isnan(t.loc[5, "mean_fct_s"])
    b = A.latency_by_size(flows, bins=[(1, 3), (4, 10)], warmup_s=0.5)
    assert list(b["bucket"]) == ["1-3", "4-10"] and list(b["flows"]) == [3, 1]


def test_percentile_by_class_hand_case():
    n = 1000
    flows = pd.DataFrame(
        {
            "start_s": [0.0] * (n + 3),
            "size_pkts": [10] * n + [1000] * 3,
            "fct_s": list(np.arange(1.0, n + 1)) + [400.0, 420.0, None],
            "class_at_end": ["short"] * n + ["long"] * 3,
        }
    )
    t = A.percentile_by_class(flows).set_index("class")
    # 1..1000: position 0.999 * 999 = 998.001 -> 999 + 0.001 * (1000 - 999)
    assert t.loc["short", "p99.9"] == pytest.approx(999.001)
    assert t.loc["long", "flows"] == 3 and t.loc["long", "unfinished"] == 1
    # between 400 and 420 at 0.999 of the way
    assert t.loc["long", "p99.9"] == pytest.approx(400 + 0.999 * 20)
    by_size = A.percentile_by_class(flows, q=50, by={"short": (5, 20), "long": (900, 1100)}).set_index("class")
    assert by_size.loc["short", "p50"] == pytest.approx(500.5)
    with pytest.raises(ValueError, match="q must be in"):
        A.percentile_by_class(flows, q=101)
    with pytest.raises(ValueError, match="overlaps"):
        A.percentile_by_class(flows, by={"a": (1, 10), "b": (10, 20)})


# --------------------------------------------------------------------------- FavorQueue


def _runs():
    # Five flows carried by both runs (same starts and sizes); fct in run A (DropTail) and B.
    common = {"flow_id": [0, 1, 2, 3, 4], "start_s": [0.0, 0.5, 1.0, 1.5, 2.0], "size_pkts": [2, 2, 10, 10, 10]}
    a = pd.DataFrame(dict(common, fct_s=[1.0, 3.4, 2.0, None, 1.0]))
    b = pd.DataFrame(dict(common, fct_s=[0.6, 0.4, 2.5, 1.0, 1.0]))
    return a, b


def test_delta_i_hand_case():
    a, b = _runs()
    d = A.delta_i(a, b)
    # flow 3 did not finish in A, so it is not compared
    assert list(d["flow_id"]) == [0, 1, 2, 4]
    assert list(d["delta_s"]) == pytest.approx([0.4, 3.0, -0.5, 0.0])
    assert list(A.delta_i(a, b, warmup_s=0.75)["flow_id"]) == [2, 4]


def test_gain_hand_case():
    a, b = _runs()
    g = A.gain(a, b).set_index("size_pkts")
    # size 2: (0.4 + 3.0) / (1.0 + 3.4); both flows faster
    assert g.loc[2, "gain"] == pytest.approx(3.4 / 4.4)
    assert g.loc[2, "gain_pos"] == pytest.approx(3.4 / 4.4) and g.loc[2, "gain_neg"] == 0.0
    assert g.loc[2, "p_faster"] == 1.0
    # size 10: (-0.5 + 0) / (2.0 + 1.0); one slower, one unchanged
    assert g.loc[10, "flows"] == 2
    assert g.loc[10, "gain"] == pytest.approx(-1 / 6) and g.loc[10, "gain_neg"] == pytest.approx(-1 / 6)
    assert g.loc[10, "gain_pos"] == 0.0
    assert (g.loc[10, "p_slower"], g.loc[10, "p_same"], g.loc[10, "p_faster"]) == (0.5, 0.5, 0.0)
    overall = A.gain(a, b, bins=A.ALL_SIZES)
    assert list(overall["bucket"]) == ["all"]
    assert overall["gain"].iloc[0] == pytest.approx(2.9 / 7.4)
    # swapping the runs: the same flows, the gain of A over B
    back = A.gain(b, a, bins=A.ALL_SIZES)["gain"].iloc[0]
    assert back == pytest.approx(-2.9 / (0.6 + 0.4 + 2.5 + 1.0))


def test_delta_i_refuses_runs_with_different_flows():
    a, b = _runs()
    b.loc[2, "start_s"] = 1.25
    with pytest.raises(ValueError, match=r"same flows \(flow 2"):
        A.delta_i(a, b)
    a2, b2 = _runs()
    b2.loc[0, "size_pkts"] = 3
    with pytest.raises(ValueError, match="same flows"):
        A.gain(a2, b2)
    with pytest.raises(ValueError, match="run_b lacks column"):
        A.delta_i(a2, b2.drop(columns="fct_s"))


def test_rto_ratio_hand_case():
    flows = pd.DataFrame(
        {
            "kind": ["tcp"] * 4,
            "start_s": [0.0, 0.0, 0.0, 0.0],
            "size_pkts": [10, 20, 6, None],
            "fct_s": [1.0, 2.0, None, None],
            "retransmits": [2, 4, 0, 9],
            "timeouts": [1, 0, 0, 5],
            "load": [0.5, 0.9, 0.9, 0.9],
        }
    )
    # finished sized flows: 1 / ((10 + 2) + (20 + 4)); the persistent flow never counts
    assert A.rto_ratio(flows) == pytest.approx(1 / 36)
    assert A.rto_ratio(flows, finished_only=False) == pytest.approx(1 / 42)
    per_load = A.rto_ratio(flows, by="load")
    assert per_load[0.5] == pytest.approx(1 / 12) and per_load[0.9] == 0.0


def test_rto_recovery_ratio_hand_case():
    flows = pd.DataFrame(
        {
            "kind": ["tcp"] * 4,
            "start_s": [0.0] * 4,
            "size_pkts": [10, 10, 20, 4],
            "fct_s": [1.0] * 4,
            "timeouts": [1, 2, 0, 1],
            "fast_retransmits": [1, 0, 0, 0],
        }
    )
    t = A.rto_recovery_ratio(flows).set_index("size_pkts")
    assert t.loc[10, "tau"] == pytest.approx(3 / 4)  # (1 + 2) / (1 + 2 + 1 + 0)
    assert math.isnan(t.loc[20, "tau"])  # no recovery at all
    assert t.loc[4, "tau"] == 1.0
    assert A.rto_recovery_ratio(flows, bins=A.ALL_SIZES)["tau"].iloc[0] == pytest.approx(4 / 5)


def test_p_favor_by_size_hand_case():
    flows = pd.DataFrame(
        {
            "kind": ["tcp"] * 3,
            "start_s": [0.0] * 3,
            "size_pkts": [2, 2, 30],
            "fct_s": [1.0] * 3,
            "retransmits": [0, 1, 5],
            "syn_drops": [0, 1, 0],
            "favored_pkts": [4, 5, 14],
        }
    )
    p = A.p_favor_by_size(flows).set_index("size_pkts")
    # size 2 with the handshake counted: (4 + 5) / ((2 + 0 + 2) + (2 + 1 + 2 + 1)) = 9 / 10
    assert p.loc[2, "p_favor"] == pytest.approx(9 / 10)
    # size 30: 14 / (30 + 5 + 2)
    assert p.loc[30, "p_favor"] == pytest.approx(14 / 37)
    # eq. 5 as printed: (4 + 5) / (2 + 3)
    raw = A.p_favor_by_size(flows, count_handshake=False).set_index("size_pkts")
    assert raw.loc[2, "p_favor"] == pytest.approx(9 / 5)


def test_pushout_share_hand_case():
    summary = {
        "queues": [
            {"name": "left->right", "discipline": "favorqueue", "dropped": 10, "pushed_out": 3},
            {"name": "right->left", "discipline": "droptail", "dropped": 0, "pushed_out": 0},
        ]
    }
    t = A.pushout_share(summary).set_index("queue")
    assert t.loc["left->right", "pushout_share"] == pytest.approx(0.3)
    assert math.isnan(t.loc["right->left", "pushout_share"])
    with pytest.raises(ValueError, match="summary must be"):
        A.pushout_share({"flows": []})


def test_syn_loss_ratio_hand_case():
    flows = pd.DataFrame(
        {
            "kind": ["tcp", "tcp", "tcp", "tcp", "udp"],
            "start_s": [0.0, 1.0, 2.0, 3.0, 0.0],
            "syn_drops": [0, 0, 1, 2, 0],
            "run": ["x", "x", "y", "y", "x"],
        }
    )
    # 3 SYNs lost out of 4 + 3 sent (each loss is sent again); the UDP flow has no SYN
    assert A.syn_loss_ratio(flows) == pytest.approx(3 / 7)
    assert A.syn_loss_ratio(flows, warmup_s=2.5) == pytest.approx(2 / 3)
    s = A.syn_loss_ratio(flows, by="run")
    assert s["x"] == 0.0 and s["y"] == pytest.approx(3 / 5)
    # With the core's syn_sent column (a SYN re-sent after a lost SYN-ACK counts as sent).
    flows["syn_sent"] = [1, 2, 2, 3, 0]
    assert A.syn_loss_ratio(flows) == pytest.approx(3 / 8)


def test_active_flows_hand_case():
    flows = pd.DataFrame(
        {"start_s": [0.0, 1.0, 1.5, 3.0], "end_s": [2.0, None, 1.7, 4.0], "source": ["a", "b", "a", "b"]}
    )
    s = A.active_flows(flows, [0.0, 1.0, 1.6, 2.0, 3.5, 10.0])
    assert list(s) == [1, 2, 3, 1, 2, 1]
    d = A.active_flows(flows, [1.6, 3.5], by="source")
    assert list(d["a"]) == [2, 0] and list(d["b"]) == [1, 2]
    with pytest.raises(ValueError, match="times"):
        A.active_flows(flows, ["soon"])


# --------------------------------------------------------------------------- windows over queues


def _queues():
    # One queue sampled every 0.5 s; counters cover the interval ending at t_s, len_* is the
    # queue length at t_s.
    z = [0, 0, 0, 0]
    return pd.DataFrame(
        {
            "t_s": [0.5, 1.0, 1.5, 2.0],
            "queue": ["q"] * 4,
            "len_pkts": [1, 0, 3, 1],
            "len_none": z,
            "len_short": [1, 0, 0, 0],
            "len_long": [0, 0, 3, 1],
            "departures_none": z,
            "departures_short": [2, 4, 0, 6],
            "departures_long": [2, 0, 4, 2],
            "drops_none": z,
            "drops_short": [1, 0, 0, 0],
            "drops_long": [0, 2, 1, 0],
            "marks_none": z,
            "marks_short": z,
            "marks_long": [0, 1, 0, 1],
        }
    )


def test_departure_share_sliding_window():
    d = A.departure_share(_queues(), window_s=1.0, capacity_pkts_s=10.0)
    short = d[d["class"] == "short"].set_index("t_s")
    long_ = d[d["class"] == "long"].set_index("t_s")
    # windows (0, 1], (0.5, 1.5], (1, 2]: short 6, 4, 6; long 2, 4, 6
    assert list(short.index) == [1.0, 1.5, 2.0]
    assert list(short["departures"]) == [6, 4, 6]
    assert list(short["share"]) == pytest.approx([0.75, 0.5, 0.5])
    assert list(long_["share"]) == pytest.approx([0.25, 0.5, 0.5])
    assert short.loc[1.0, "link_fraction"] == pytest.approx(6 / (10 * 1.0))
    assert list(d[d["class"] == "all"]["departures"]) == [8, 8, 12]
    # 1.5 s windows (0, 1.5] and (0.5, 2]: short 6 and 10 packets over 10 pkt/s x 1.5 s
    d15 = A.departure_share(_queues(), window_s=1.5, capacity_pkts_s={"q": 10.0})
    assert list(d15[d15["class"] == "short"]["link_fraction"]) == pytest.approx([6 / 15, 10 / 15])
    assert A.departure_share(_queues(), window_s=1.5, capacity_pkts_s={"other": 10.0}).empty
    # back-to-back windows
    assert sorted(A.departure_share(_queues(), window_s=1.0, step_s=1.0)["t_s"].unique()) == [1.0, 2.0]


def test_drop_mark_rates_hand_case():
    r = A.drop_mark_rates(_queues(), window_s=1.0).set_index(["t_s", "class"])
    # (0, 1]: short arrivals = 6 departed + 1 dropped + (0 - 0) queued = 7
    assert r.loc[(1.0, "short"), "arrivals"] == 7 and r.loc[(1.0, "short"), "drop_rate"] == pytest.approx(1 / 7)
    # long: 2 + 2 + 0 = 4 arrivals, 2 drops, 1 mark
    assert r.loc[(1.0, "long"), "arrivals"] == 4
    assert r.loc[(1.0, "long"), ["drop_rate", "mark_rate", "drop_mark_rate"]].tolist() == pytest.approx(
        [0.5, 0.25, 0.75]
    )
    # (0.5, 1.5]: short 4 + 0 + (0 - 1) = 3; long 4 + 3 + (3 - 0) = 10 with 3 drops, 1 mark
    assert r.loc[(1.5, "short"), "arrivals"] == 3
    assert r.loc[(1.5, "long"), "arrivals"] == 10
    assert r.loc[(1.5, "long"), "drop_mark_rate"] == pytest.approx(0.4)
    assert r.loc[(1.5, "all"), "arrivals"] == 13 and r.loc[(1.5, "all"), "drops"] == 3
    assert math.isnan(r.loc[(1.5, "none"), "drop_rate"])  # no arrivals


def test_queue_windows_reject_a_window_off_the_sampling_grid():
    with pytest.raises(ValueError, match="multiple of the sampling interval"):
        A.drop_mark_rates(_queues(), window_s=0.3)
    with pytest.raises(ValueError, match="window_s must be > 0"):
        A.departure_share(_queues(), window_s=0)
    with pytest.raises(ValueError, match="queues must be a pandas DataFrame"):
        A.departure_share(None, window_s=1.0)


# --------------------------------------------------------------------------- goodput windows, fairness


def _goodput():
    # a 10 s record: flows 1 and 2 short, flow 3 long
    return pd.DataFrame(
        {
            "t_s": [10.0, 10.0, 10.0, 20.0, 20.0, 20.0, 30.0, 30.0, 40.0, 40.0],
            "flow_id": [1, 2, 3, 1, 2, 3, 1, 3, 1, 3],
            "delivered_pkts": [100, 100, 500, 100, 300, 500, 50, 200, 50, 200],
            "class": ["short", "short", "long", "short", "short", "long", "short", "long", "short", "long"],
        }
    )


def test_windowed_goodput_and_fairness_from_the_record():
    g = A.windowed_goodput(_goodput(), window_s=20.0, packet_bytes=1000)
    w1 = g[g["t_s"] == 20.0].set_index("flow_id")
    assert w1.loc[1, "delivered_pkts"] == 200 and w1.loc[1, "goodput_pkts_s"] == 10.0
    assert w1.loc[2, "goodput_pkts_s"] == 20.0 and w1.loc[3, "goodput_pkts_s"] == 50.0
    assert w1.loc[1, "goodput_bps"] == 10.0 * 1000 * 8
    f = A.goodput_fairness(_goodput(), window_s=20.0).set_index(["t_s", "class"])
    # short in (0, 20]: 10 and 20 pkt/s -> 30^2 / (2 * (100 + 400)) = 0.9
    assert f.loc[(20.0, "short"), "jain"] == pytest.approx(0.9)
    assert f.loc[(20.0, "long"), "jain"] == 1.0
    # (20, 40] without the flows table: flow 2 is absent, short has one flow
    assert f.loc[(40.0, "short"), "flows"] == 1 and f.loc[(40.0, "short"), "jain"] == 1.0


def test_goodput_fairness_counts_idle_flows_as_zero():
    flows = pd.DataFrame(
        {
            "flow_id": [1, 2, 3, 4, 5],
            "start_s": [0.0, 0.0, 0.0, 25.0, 0.0],
            "end_s": [None, None, None, 35.0, 15.0],
            "class_at_end": ["short", "short", "long", "long", "short"],
        }
    )
    f = A.goodput_fairness(_goodput(), window_s=20.0, flows=flows).set_index(["t_s", "class"])
    # (0, 20]: short 10, 20 and flow 5 (in the system, never in the record) at 0
    #          -> 30^2 / (3 * 500) = 0.6
    assert f.loc[(20.0, "short"), "flows"] == 3
    assert f.loc[(20.0, "short"), "jain"] == pytest.approx(0.6)
    # (20, 40]: short 5 and flow 2 (active, silent) at 0 -> 1/2; long 20 and flow 4 at 0 -> 1/2
    assert f.loc[(40.0, "short"), "jain"] == pytest.approx(0.5)
    assert f.loc[(40.0, "long"), "flows"] == 2 and f.loc[(40.0, "long"), "jain"] == pytest.approx(0.5)
    assert list(A.goodput_fairness(_goodput(), window_s=20.0, until_s=30.0)["t_s"].unique()) == [20.0]


def test_goodput_classes_from_the_flows_table():
    # the record without a class column (as the core writes it): classes come from flows
    flows = pd.DataFrame(
        {
            "flow_id": [1, 2, 3],
            "start_s": [0.0, 0.0, 0.0],
            "end_s": [None, 22.0, None],
            "class_at_end": ["long", "long", "long"],
            "size_pkts": [10, 12, 5000],
        }
    )
    rec = _goodput().drop(columns="class")
    f = A.goodput_fairness(rec, window_s=20.0, flows=flows).set_index(["t_s", "class"])
    # (0, 20]: all three in class_at_end "long": 10, 20, 50 -> 80^2 / (3 * (100 + 400 + 2500))
    assert f.loc[(20.0, "long"), "jain"] == pytest.approx(6400 / 9000)
    # by size ranges: flows 1 and 2 short, flow 3 long; in (20, 40] flow 2 (ended at 22 s)
    # delivered nothing but was in the system -> short 5 and 0
    by = A.goodput_fairness(rec, window_s=20.0, flows=flows, by={"short": (1, 20), "long": (21, math.inf)})
    by = by.set_index(["t_s", "class"])
    assert by.loc[(20.0, "short"), "jain"] == pytest.approx(0.9)
    assert by.loc[(40.0, "short"), "flows"] == 2 and by.loc[(40.0, "short"), "jain"] == pytest.approx(0.5)
    assert by.loc[(40.0, "long"), "goodput_pkts_s"] == 20.0
    # neither a class column nor flows: one class
    assert set(A.goodput_fairness(rec, window_s=20.0)["class"]) == {"all"}


def test_windowed_goodput_bad_window():
    with pytest.raises(ValueError, match=r"multiple of the record's interval \(10 s\)"):
        A.windowed_goodput(_goodput(), window_s=15.0)
    with pytest.raises(ValueError, match="goodput lacks column"):
        A.windowed_goodput(_goodput().drop(columns="delivered_pkts"))
    with pytest.raises(ValueError, match="by needs flows"):
        A.windowed_goodput(_goodput(), by="source")


def test_foreground_fairness_hand_case():
    flows = pd.DataFrame(
        {
            "start_s": [0.0] * 7,
            "tag": ["foreground"] * 6 + [""],
            "size_pkts": [10, 10, 10, 10, 1000, 1000, 10],
            "fct_s": [1.0, 1.0, 2.0, None, 10.0, 10.0, 50.0],
        }
    )
    t = A.foreground_fairness(flows).set_index("class")
    # size 10: (1 + 1 + 2)^2 / (3 * (1 + 1 + 4)) = 16 / 18; the untagged flow is not foreground
    assert t.loc[10, "jain"] == pytest.approx(8 / 9)
    assert t.loc[10, "connections"] == 4 and t.loc[10, "unfinished"] == 1
    assert t.loc[1000, "jain"] == 1.0
    everyone = A.foreground_fairness(flows, tag=None, by={"short": (1, 20)}).set_index("class")
    assert everyone.loc["short", "connections"] == 5


# --------------------------------------------------------------------------- one real run


@pytest.fixture(scope="module")
def droptail_and_favorqueue():
    import savanna

    base = {
        "seed": 3,
        "duration_s": 8.0,
        "topology": {
            "type": "dumbbell",
            "pairs": 4,
            "bottleneck_queue": {"type": "droptail", "limit_pkts": 8},
            "reverse_queue": {"type": "droptail", "limit_pkts": 8},
        },
        "traffic": [{"type": "poisson", "load": 0.9, "size": {"dist": "pareto", "shape": 1.3, "mean": 30.0}}],
        "sampling": {"interval_s": 0.5, "queues": ["bottleneck"]},
    }
    fq = copy.deepcopy(base)
    fq["topology"]["bottleneck_queue"] = {"type": "favorqueue", "limit_pkts": 8}
    return savanna.run(base), savanna.run(fq)


def test_real_run_favorqueue_invariants(droptail_and_favorqueue):
    dt, fq = droptail_and_favorqueue
    p = A.p_favor_by_size(fq.flows)
    assert len(p) > 3 and p["p_favor"].between(0.0, 1.0).all()
    assert A.p_favor_by_size(dt.flows)["p_favor"].eq(0.0).all()  # DropTail favours nothing
    share = A.pushout_share(fq.summary).set_index("queue")
    assert 0.0 < share.loc["left->right", "pushout_share"] <= 1.0
    assert share["pushout_share"].dropna().between(0.0, 1.0).all()
    assert A.pushout_share(dt.summary)["pushed_out"].eq(0).all()
    for run in (dt, fq):
        assert 0.0 <= A.syn_loss_ratio(run.flows) <= 1.0
        assert A.rto_recovery_ratio(run.flows)["tau"].dropna().between(0.0, 1.0).all()
        assert A.rto_ratio(run.flows) >= 0.0
        n = A.active_flows(run.flows, np.arange(0.0, 8.5, 0.5))
        assert (n >= 0).all() and n.max() <= run.summary["flows_started"]


def test_real_run_gain_is_consistent(droptail_and_favorqueue):
    dt, fq = droptail_and_favorqueue
    d = A.delta_i(dt.flows, fq.flows)
    assert len(d) > 50
    g = A.gain(dt.flows, fq.flows, bins=A.SIZE_BUCKETS)
    assert g["flows"].sum() == len(d)
    nonempty = g[g["flows"] > 0]
    assert (nonempty["gain"] < 1.0).all()  # Tf > 0, so Delta < Td
    assert np.allclose(nonempty["gain"], nonempty["gain_pos"] + nonempty["gain_neg"])
    assert np.allclose(nonempty[["p_faster", "p_slower", "p_same"]].sum(axis=1), 1.0)
    overall = A.gain(dt.flows, fq.flows, bins=A.ALL_SIZES)["gain"].iloc[0]
    assert overall == pytest.approx(d["delta_s"].sum() / d["fct_a_s"].sum())


def test_real_run_queue_windows_conserve_packets(droptail_and_favorqueue):
    _, fq = droptail_and_favorqueue
    r = A.drop_mark_rates(fq.queues, window_s=2.0, step_s=2.0)
    assert sorted(r["t_s"].unique()) == [2.0, 4.0, 6.0, 8.0]
    allc = r[r["class"] == "all"]
    q = fq.summary["queues"][0]
    assert q["name"] == "left->right"
    # back-to-back windows over the whole run add up to the run's totals
    assert allc["arrivals"].sum() == q["arrivals"] and allc["drops"].sum() == q["dropped"]
    assert allc["drop_rate"].between(0.0, 1.0).all()
    s = A.departure_share(fq.queues, window_s=0.5)
    per_class = s[s["class"] != "all"].groupby("t_s")["share"].sum()
    busy = s[(s["class"] == "all") & (s["departures"] > 0)]["t_s"]
    assert np.allclose(per_class.loc[busy], 1.0)


def test_path_utilisation_hand_case_and_a_real_run():
    q = pd.DataFrame(
        {
            "t_s": [1.0, 2.0, 3.0, 1.0, 2.0, 3.0],
            "queue": ["a"] * 3 + ["b"] * 3,
            "utilisation": [0.2, 0.4, 0.6, 1.0, 1.0, 1.0],
        }
    )
    t = A.path_utilisation(q)
    assert t.loc["a", "mean"] == pytest.approx(0.4) and t.loc["a", "std"] == pytest.approx((0.08 / 3) ** 0.5)
    assert t.loc["b", "std"] == 0.0 and t.loc["b", "intervals"] == 3
    assert A.path_utilisation(q, warmup_s=1.5).loc["a", "mean"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="warmup_s"):
        A.path_utilisation(q, warmup_s=-1)
    # The busy fractions of a real run average to the summary's utilisation.
    import savanna

    r = savanna.run(
        {
            "duration_s": 20.0,
            "seed": 2,
            "topology": {"type": "dumbbell", "pairs": 2},
            "traffic": [{"type": "persistent", "count": 2}],
            "sampling": {"interval_s": 1.0, "queues": ["bottleneck"]},
        }
    )
    u = A.path_utilisation(r.queues).loc["left->right", "mean"]
    s = next(x for x in r.summary["queues"] if x["name"] == "left->right")["utilisation"]
    assert u == pytest.approx(s, abs=1e-6)


@pytest.mark.parametrize("handshake_ack", [True, False])
def test_p_favor_denominator_counts_the_handshake_packets_the_run_sent(handshake_ack):
    # A 1-packet flow alone in the network (no other flow starts within 0.5 s of it) meets
    # an empty FavorQueue with every packet, so all are favoured: the SYN, the pure ACK
    # when the run sends one, and the data packet. Told the
    # run's handshake_ack, eq. 5 with the handshake counted gives exactly 1 for the flows
    # that lost nothing; told the other setting it miscounts by one packet per flow.
    import savanna

    sc = {
        "seed": 5,
        "duration_s": 120.0,
        "topology": {
            "type": "dumbbell",
            "pairs": 4,
            "bottleneck_queue": {"type": "favorqueue", "limit_pkts": 8},
            "reverse_queue": {"type": "droptail", "limit_pkts": 8},
        },
        "tcp": {"handshake": True, "handshake_ack": handshake_ack},
        "traffic": [{"type": "poisson", "load": 0.001, "size": {"dist": "fixed", "value": 1}}],
    }
    f = savanna.run(sc).flows.sort_values("start_s")
    gap = f["start_s"].diff()
    f = f[(gap > 0.5) & (gap.shift(-1) > 0.5) & (f["retransmits"] == 0) & (f["syn_drops"] == 0)]
    assert len(f) > 20
    assert (f["favored_pkts"] == 2 + int(handshake_ack)).all()
    right = A.p_favor_by_size(f, handshake_ack=handshake_ack)
    wrong = A.p_favor_by_size(f, handshake_ack=not handshake_ack)
    assert right["p_favor"].iloc[0] == 1.0
    assert wrong["p_favor"].iloc[0] == pytest.approx((2 + int(handshake_ack)) / (2 + int(not handshake_ack)))
