"""Tests of the figures issue 17 item 5 added to the FavorQueue 2013 reproduction
(``savanna.reproduce.favorqueue_2013_more``): the stochastic model of section 7.2 against
the paper's own equations (6)-(7) and its phases, the fit recovering known parameters, the
size-law scenarios of Figs. 6-7, and the per-flow queueing delay record behind Fig. 17
(``sampling.flow_qdelay``): off by default with flows.parquet unchanged, and on, one wait
per data packet crossing the recorded queue. The quick reproduction end to end is in
test_reproduce.py (every claim of ``favorqueue_2013.CLAIMS``, these included)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import savanna
from savanna.reproduce import favorqueue_2013 as fq
from savanna.reproduce import favorqueue_2013_more as more
from savanna.reproduce.common import load_scenario, scenarios_dir

# ---- §7.2: the stochastic model --------------------------------------------------------------


def eq6(s: int) -> float:
    """P(Favor | Z = 0, S = s) as printed in eq. (6)."""
    if s <= 6:
        return 1.0
    if s <= 10:
        return (s - 1) / s
    if s <= 15:
        return 9 / s
    if s <= 18:
        return (s - 6) / s
    return 12 / s  # 19 <= s <= 31


def eq7(s: int) -> float:
    """P(Favor | Z = 1, S = s) as printed in eq. (7)."""
    return (1 + math.floor(math.log2(s))) / s


def test_slow_start_favoring_is_the_papers_eqs_6_and_7():
    for s in range(1, 32):
        assert more.favored_in_slow_start(s, 0) / s == pytest.approx(eq6(s)), s
        assert more.favored_in_slow_start(s, 1) / s == pytest.approx(eq7(s)), s


def test_model_is_slow_start_below_s1_and_tends_to_the_congestion_avoidance_share():
    s1, s2 = 12, 60
    small = np.arange(1, s1 + 1)
    for pz in (0.25, 0.7):
        got = more.model_p_favor(small, pz, s1, s2)
        want = [(1 - pz) * eq6(s) + pz * eq7(s) for s in small]
        assert got == pytest.approx(want)
        # far beyond s2 almost every packet was sent in congestion avoidance: about 70%
        assert more.model_p_favor(np.array([200_000]), pz, s1, s2)[0] == pytest.approx(more.CA_FAVOR, abs=2e-3)


def test_fast_model_equals_the_direct_sum():
    s = np.arange(1, 400)
    f0, f1 = more._model_tables(400)
    for s1, s2, pz in ((5, 6, 0.3), (10, 80, 0.6), (40, 300, 0.1)):
        fast = (1 - pz) * more._model_zs(f0, s1, [s2], more.CA_FAVOR)[0][1:400] / s
        fast += pz * more._model_zs(f1, s1, [s2], more.CA_FAVOR)[0][1:400] / s
        assert fast == pytest.approx(more.model_p_favor(s, pz, s1, s2))


def one_s2_model(f, s1, s2, ca):
    """The model for one s2 as fit_model computed it before its grid was batched (issue
    21): the reference the batched rows must equal bit for bit (claims.json unchanged)."""
    top = len(f) - 1
    s = np.arange(top + 1, dtype=float)
    n = s2 - s1
    cf = np.concatenate([[0.0], np.cumsum(f)])
    ck = np.concatenate([[0.0], np.cumsum(np.arange(top + 1, dtype=float))])
    hi = np.clip(np.arange(top + 1), s1, s2)
    m = hi - s1
    fav = (cf[hi] - cf[s1]) + ca * (s * m - (ck[hi] - ck[s1])) + (n - m) * f
    return fav / n


def test_model_for_many_s2_at_once_is_row_by_row_the_model_for_each():
    # fit_model's grid takes every s2 of one s1 in one call (issue 21): each row must be
    # the direct sum of that s2, and bit for bit the one-s2 computation it replaced
    s = np.arange(1, 400)
    f0, f1 = more._model_tables(400)
    s1, s2s, pz = 10, np.array([11, 30, 80, 399, 700]), 0.6
    z0 = more._model_zs(f0, s1, s2s, more.CA_FAVOR)
    z1 = more._model_zs(f1, s1, s2s, more.CA_FAVOR)
    assert z0.shape == (len(s2s), 401)
    for i, s2 in enumerate(s2s):
        assert np.array_equal(z0[i], one_s2_model(f0, s1, int(s2), more.CA_FAVOR))
        assert np.array_equal(z1[i], one_s2_model(f1, s1, int(s2), more.CA_FAVOR))
        got = (1 - pz) * z0[i][1:400] / s + pz * z1[i][1:400] / s
        assert got == pytest.approx(more.model_p_favor(s, pz, s1, int(s2)))


def test_fit_recovers_the_parameters_of_a_curve_made_by_the_model():
    rng = np.random.default_rng(3)
    sizes = np.minimum(np.round(9.0 * (rng.pareto(1.3, 40_000))) + 1, 900).astype(int)
    bins = [bn for bn in fq.size_bins() if bn[1] < more.FIT_MAX_PKTS]
    w = more._bin_weights(sizes, bins, 1000)
    truth = (0.4, 14, 90)
    curve = np.concatenate([[0.0], more.model_p_favor(np.arange(1, 1001), *truth)])
    measured = w @ curve
    keep = w.sum(axis=1) > 0
    bins = [bn for bn, k in zip(bins, keep) if k]
    fit = more.fit_model(sizes, measured[keep], bins)
    assert fit["rms"] < 0.5
    assert fit["pz1"] == pytest.approx(0.4, abs=0.05)
    fixed = more.fit_model(sizes, measured[keep], bins, pz1=0.9)
    assert fixed["pz1"] == 0.9 and fixed["rms"] > fit["rms"]


# ---- Figs. 6-7: the size laws ----------------------------------------------------------------


def test_size_law_scenarios_change_only_the_forward_sizes_and_have_the_stated_mean():
    base = fq._scenario(fq.SC_10M, qdisc="choke", seed=2, duration_s=40.0, load=0.55)
    fwd = [t["name"] for t in base["traffic"]].index("forward")
    for mean in more.MEANS:
        sc = more.law_scenario("choke", mean, 0.55, 2, 40.0)
        size = sc["traffic"][fwd].pop("size")
        base_fwd = dict(base["traffic"][fwd])
        base_fwd.pop("size")
        assert sc["traffic"][fwd] == base_fwd
        assert {k: v for k, v in sc.items() if k != "traffic"} == {k: v for k, v in base.items() if k != "traffic"}
        pts = np.array(size["points"])
        # the mean of the empirical law (uniform between its points; the 1e6 cap trims the tail)
        p = np.diff(np.concatenate([[0.0], pts[:, 1]]))
        mid = np.concatenate([[1.0], (pts[:-1, 0] + pts[1:, 0]) / 2])
        assert float(p @ mid) == pytest.approx(mean, rel=0.06)
        savanna.validate(more.law_scenario("choke", mean, 0.55, 2, 40.0), base_dir=scenarios_dir())


# ---- Fig. 17: the per-flow queueing delay record ---------------------------------------------


def _tiny(qdisc: str, buffer: int = 8, **sampling) -> dict:
    sc = load_scenario(fq.SC_10M)
    sc["duration_s"] = 20.0
    sc["topology"]["bottleneck_queue"] = {"type": qdisc, "limit_pkts": buffer}
    sc["traffic"][0]["load"] = 0.8
    sc["sampling"] = {"interval_s": 1.0, "queues": ["bottleneck"], **sampling}
    return sc


def test_flow_qdelay_is_off_by_default_and_leaves_flows_parquet_unchanged(tmp_path):
    a = savanna.run(_tiny("favorqueue"), base_dir=scenarios_dir(), out=tmp_path / "a")
    savanna.run(_tiny("favorqueue", flow_qdelay=False), base_dir=scenarios_dir(), out=tmp_path / "b")
    c = savanna.run(_tiny("favorqueue", flow_qdelay=True), base_dir=scenarios_dir(), out=tmp_path / "c")
    assert (tmp_path / "a" / "flows.parquet").read_bytes() == (tmp_path / "b" / "flows.parquet").read_bytes()
    assert "qdelay_s" not in a.flows.columns
    assert list(c.flows.columns) == list(a.flows.columns) + ["qdelay_s", "qdelay_pkts"]
    # recording changes nothing else
    assert c.flows.drop(columns=["qdelay_s", "qdelay_pkts"]).equals(a.flows)


def test_flow_qdelay_counts_one_wait_per_data_packet_through_the_queue(tmp_path):
    # A buffer nothing overflows: every data packet a flow sends crosses the bottleneck
    # queue once, so each one is one wait; waits are positive when the link is loaded.
    r = savanna.run(_tiny("droptail", buffer=10_000, flow_qdelay=True), base_dir=scenarios_dir(), out=tmp_path / "big")
    f = r.flows[r.flows["source"] == "forward"]
    assert int(f["drops"].sum()) == 0
    done = f[f["fct_s"].notna()]
    assert (done["qdelay_pkts"] == done["data_pkts_sent"]).all()
    assert float(done["qdelay_s"].sum()) > 0
    # reverse flows' data crosses the other direction only: never in this queue
    rev = r.flows[r.flows["source"] == "reverse"]
    assert int(rev["qdelay_pkts"].sum()) == 0
    # the mean wait is no longer than a full buffer's drain at most, and no shorter than 0
    per = done["qdelay_s"] / done["qdelay_pkts"]
    assert (per >= 0).all()


@pytest.mark.parametrize("qdisc", ["droptail", "favorqueue"])
def test_flow_qdelay_adds_up_to_the_queue_length_over_time(qdisc, tmp_path):
    # Forward data only (no handshake, no reverse traffic): every packet through the
    # bottleneck queue is one wait of one flow, so the waits sum to the integral of the
    # number of packets waiting (Little's law, sampled every 1 ms), and there are as many
    # waits as departures, whatever the order FavorQueue serves them in.
    sc = _tiny(qdisc, flow_qdelay=True, interval_s=0.001, goodput_interval_s=0.0)
    sc["traffic"] = [sc["traffic"][0]]
    sc["traffic"][0]["load"] = 0.9
    sc["tcp"]["handshake"] = False
    r = savanna.run(sc, base_dir=scenarios_dir(), out=tmp_path / qdisc)
    q = r.queues
    departures = int(q[[c for c in q.columns if c.startswith("departures_")]].sum().sum())
    assert int(r.flows["qdelay_pkts"].sum()) == departures
    integral = float(q["len_pkts"].mean()) * sc["duration_s"]
    assert float(r.flows["qdelay_s"].sum()) == pytest.approx(integral, rel=0.02)
