"""savanna.models: the analytical models of the papers through the Python API. Each test
checks a property the model must have (a limit, a value worked by hand, a claim of the
paper, agreement between two independent computations), not a stored output."""

from __future__ import annotations

import math

import numpy as np
import pytest
from savanna import models

RTT = 0.1


# ------------------------------------------------------------------ Padhye et al. 1998


def test_padhye_limits_and_approximation():
    # No loss: the window limit over the RTT.
    assert models.padhye_throughput(0.0, RTT, 0.2, wmax_pkts=20) == pytest.approx(20 / RTT)
    ps = np.array([0.001, 0.005, 0.01, 0.02])
    full = models.padhye_throughput(ps, RTT, 0.2)
    approx = models.padhye_throughput(ps, RTT, 0.2, approx=True)
    assert full.shape == ps.shape and np.all(np.diff(full) < 0)
    # The closed form agrees with the full model at small p (the paper's Fig. 6-7).
    assert np.all(np.abs(approx / full - 1) < 0.15)
    # Small p, no timeouts to speak of: B ~ sqrt(3 / (2 b p)) / RTT.
    p = 1e-5
    assert models.padhye_throughput(p, RTT, 0.2) == pytest.approx(math.sqrt(1.5 / p) / RTT, rel=0.02)


# ------------------------------------------------------------------ Guo & Matta 2001


def test_guo_matta_first_packet_and_limits():
    # Eq. (1) by hand at p = 0.1: RTT 0.9 + 3 * 0.9 * (0.1 + 0.02 + 0.004 + 0.0008 + 0.00016
    # + 0.000032 + 0.0000064).
    lat = models.guo_matta_latency(10, 0.1)
    assert lat.first == pytest.approx(0.09 + 2.7 * 0.1249984, rel=1e-12)
    assert lat.total == pytest.approx(lat.first + lat.slow_start + lat.loss + lat.ca, rel=1e-12)
    # Loss-free: one RTT for the first packet plus log2(d + 1) rounds of slow start.
    for d in (1, 7, 100):
        assert models.guo_matta_latency(d, 0.0).total == pytest.approx(RTT * (1 + math.log2(d + 1)))
    # A very long transfer runs at Padhye's rate (RTO = 4 RTT, b = 1).
    d, p = 1e7, 0.02
    per_pkt = models.guo_matta_latency(d, p).total / d
    assert per_pkt * models.padhye_throughput(p, RTT, 4 * RTT) == pytest.approx(1.0, rel=1e-3)


def test_guo_matta_fig2a_shape():
    # Short flows hardly notice small loss rates and suffer badly at large ones; long flows'
    # latency grows steadily with the loss rate (section II-B).
    t = lambda d, p: models.guo_matta_latency(d, p).total  # noqa: E731
    assert t(10, 1e-3) / t(10, 1e-4) < 1.1
    assert t(10, 0.3) / t(10, 0.03) > 5
    for lo, hi in [(1e-4, 1e-3), (1e-3, 1e-2), (1e-2, 1e-1)]:
        assert t(1e5, hi) / t(1e5, lo) > 2


# ------------------------------------------------------------------ Tokuda et al. 2002


def test_tokuda_rho_limits():
    # Loss-free documents: slow start, 2^r - 1 packets in r rounds.
    rho = models.tokuda_throughput([1, 3, 7, 15], 0.2, 0.0)
    assert rho == pytest.approx([1 / 0.2, 3 / 0.4, 7 / 0.6, 15 / 0.8])
    # p_s = 0: a document of at most K packets never loses a packet, whatever p_l.
    for f in (1, 5, 20):
        assert models.tokuda_throughput(f, 0.2, 0.3, k=20) == pytest.approx(models.tokuda_throughput(f, 0.2, 0.0))
    # Very long documents run at Padhye's rate of the long packets' loss probability.
    for p_l in (0.01, 0.05):
        rho = models.tokuda_throughput(10**6, 0.2, p_l, k=7)
        assert rho == pytest.approx(models.padhye_throughput(p_l, 0.2, 0.8), rel=0.01)
    # One value or many: the same numbers (the array path computes all sizes at once).
    many = models.tokuda_throughput(list(range(1, 60)), 0.2, 0.05, k=7, p_s=0.01)
    one = [models.tokuda_throughput(f, 0.2, 0.05, k=7, p_s=0.01) for f in (1, 8, 59)]
    assert [many[0], many[7], many[58]] == pytest.approx(one, rel=1e-9)


def test_packet_sizes_and_long_share_match_a_sample():
    size = {"dist": "lognormal", "mu": 1.8, "sigma": 1.1}
    mean, pmf = models.packet_sizes(size, 20000)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-4)
    # Draw sizes the way the simulator does: round to the nearest packet, at least 1.
    rng = np.random.default_rng(7)
    s = np.maximum(1, np.floor(rng.lognormal(1.8, 1.1, 400_000) + 0.5))
    assert s.mean() == pytest.approx(mean, rel=0.01)
    for k in (1, 7, 30):
        beyond = np.maximum(s + 2 - k, 0).sum() / (s + 2).sum()
        whole = (s + 2)[s + 2 > k].sum() / (s + 2).sum()
        assert models.long_share(size, k, extra_pkts=2) == pytest.approx(beyond, abs=0.01)
        assert models.long_share(size, k, counting="whole-flow", extra_pkts=2) == pytest.approx(whole, abs=0.01)
    # Fixed 10-packet documents: exactly 3 of 10 packets beyond K = 7 (5 of 12 counting
    # the handshake's two packets).
    fixed = {"dist": "fixed", "value": 10}
    assert list(models.long_share(fixed, [7, 9, 10])) == pytest.approx([0.3, 0.1, 0.0])
    assert models.long_share(fixed, 7, extra_pkts=2) == pytest.approx(5 / 12)
    # Bytes are divided by the MSS.
    assert models.long_share({"dist": "fixed", "value": 14600, "unit": "bytes"}, 7) == pytest.approx(0.3)


def test_tokuda_f_has_an_interior_minimum_and_k_is_its_argmin():
    kw = dict(p_t=0.05, rtt_s=0.08, l_pkts=3000, k_max=150)
    curve = models.tokuda_f(models.TOKUDA_SCENARIO2_SIZES, **kw)
    assert list(curve.k) == list(range(1, 151))
    # p_l = p_t / a_l: the early-drop budget is spent on the long packets only.
    assert np.allclose(curve.p_long * curve.a_long, 0.05)
    best = models.tokuda_k(models.TOKUDA_SCENARIO2_SIZES, **kw)
    assert best.k == int(curve.k[curve.F.idxmin()])
    assert 1 < best.k < 150
    # Fig. 3: F falls to the best K and rises after it.
    assert curve.F.iloc[0] > 1.5 * best.f and curve.F.iloc[-1] > 1.5 * best.f
    # Given K values: the same points.
    some = models.tokuda_f(models.TOKUDA_SCENARIO2_SIZES, ks=[1, best.k], **kw)
    assert list(some.F) == pytest.approx([curve.F.iloc[0], best.f], rel=1e-9)


def test_scenario_criterion_matches_the_api():
    # The K a scenario's criterion gives the classifier is tokuda_k's.
    import savanna

    size = {"dist": "lognormal", "mu": 2.0, "sigma": 1.0}
    crit = {"criterion": "tokuda-f", "p_t": 0.05, "rtt_s": 0.08, "k_max": 100, "l_pkts": 2000}
    scenario = {
        "duration_s": 5.0,
        "topology": {
            "type": "dumbbell",
            "pairs": 2,
            "bottleneck_queue": {"type": "reddiff", "a_long_from": {"size": size, "k": crit}},
        },
        "traffic": [{"type": "poisson", "load": 0.3, "size": size}],
        "sampling": {"interval_s": 1.0, "queues": ["bottleneck"]},
        "classifiers": [{"type": "marking", "node": "left", "k": dict(crit, size=size)}],
    }
    res = savanna.run(scenario)
    want = models.tokuda_k(size, 0.05, 0.08, k_max=100, l_pkts=2000)
    assert set(res.classifiers.threshold) == {float(want.k)}


def test_docs_example_validates():
    # The hash-RED example of docs/disciplines.md (a_l and K both from the sizes) is valid.
    import re
    from pathlib import Path

    import savanna

    text = (Path(__file__).resolve().parent.parent / "docs" / "disciplines.md").read_text()
    section = text[text.index("### RED-based differentiator with a_l and K") :]
    block = re.findall(r"```toml\n(.*?)```", section, re.S)[-1]
    savanna.validate(block)
    # And a wrong key in it is an error naming its field.
    with pytest.raises(savanna.ScenarioError, match=r"classifiers\[0\]\.k\.p_t"):
        savanna.validate(block.replace("p_t = 0.05, rtt_s = 0.08, extra_pkts", "p_t = 1.5, rtt_s = 0.08, extra_pkts"))


# ------------------------------------------------------------------ Matta & Guo 2000


def test_control_boundary_is_alpha_plus_two_beta_below_four_over_n():
    checked = 0
    for n in (1, 3, 20):
        for i in range(1, 13):
            for j in range(1, 13):
                alpha, beta = 4 / n * i / 8, 4 / n * j / 16
                if abs((alpha + 2 * beta) * n / 4 - 1) < 0.03:
                    continue
                want = models.paper_condition(alpha, beta, n)
                assert models.control_stable(alpha, beta, n) == want, (n, alpha, beta)
                assert models.control_stable(alpha, beta, n, method="poles") == want, (n, alpha, beta)
                checked += 1
    assert checked > 300


def test_control_equilibria():
    # Aggregate control, identical gains, unequal starts: q -> B, sum w -> C, and each
    # flow keeps its head start, w_i -> w_i^0 + (C - sum w^0) / N (eq. (4)).
    w0 = [1.0, 2.0, 6.0]
    run = models.control_simulate([0.05] * 3, [0.02] * 3, w0, 40.0, 100.0, 9.0, 4000)
    assert run["q"].shape == (4001, 1) and run["w"].shape == (4001, 3)
    assert run["q"][-1, 0] == pytest.approx(100.0)
    assert run["w"][-1] == pytest.approx(np.array(w0) + (9.0 - sum(w0)) / 3)
    # Individual control: each flow reaches its own B_i and C_i (eq. (7)).
    run = models.control_simulate(
        [0.05, 0.3], [0.02, 0.1], [7.0, 0.0], [0.0, 90.0], [50.0, 30.0], [5.0, 3.0], 3000, individual=True
    )
    assert run["q"][-1] == pytest.approx([50.0, 30.0]) and run["w"][-1] == pytest.approx([5.0, 3.0])
    # Poles of eq. (12) for N identical flows are those of the summed gains.
    assert models.control_poles(0.1, 0.05, n=4) == pytest.approx(models.control_poles([0.1] * 4, [0.05] * 4))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: models.padhye_throughput(1.5, RTT, 0.2), "p:"),
        (lambda: models.padhye_throughput(0.1, -1, 0.2), "rtt_s:"),
        (lambda: models.guo_matta_latency(0, 0.1), "d:"),
        (lambda: models.guo_matta_latency(10, 1.0), "p:"),
        (lambda: models.tokuda_throughput(0, 0.1, 0.05), "sizes:"),
        (lambda: models.tokuda_throughput(5, 0.1, 0.05, b=0.5), "b:"),
        (lambda: models.long_share({"dist": "pareto", "shape": 0.9, "min": 1}, 7), "size:"),
        (lambda: models.long_share({"dist": "pareto", "shape": -1, "min": 1}, 7), "size.shape:"),
        (lambda: models.long_share("pareto", 7), "size:"),
        (lambda: models.long_share({"dist": "fixed", "value": 5}, 7, counting="all"), "counting:"),
        (lambda: models.tokuda_k({"dist": "fixed", "value": 5}, 0.0, 0.1), "p_t:"),
        (lambda: models.tokuda_f({"dist": "fixed", "value": 5}, 0.1, 0.1, ks=[0]), "ks:"),
        (lambda: models.control_stable(0.1, 0.1, 2, method="roots"), "method:"),
        (lambda: models.control_stable([0.1, 0.2], [0.1], None), "alpha, beta:"),
        (lambda: models.control_simulate([0.1], [0.1], [1.0, 2.0], 0.0, 10.0, 1.0, 10), "w0:"),
    ],
)
def test_bad_arguments_name_themselves(call, name):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value).startswith(name), str(e.value)
