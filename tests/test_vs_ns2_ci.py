"""The seed-resampled interval that `benchmarks/vs_ns2.py` prints beside each bucket's median
difference: it must be centred on the true difference when every seed agrees, widen when the
seeds disagree, and say nothing with a single seed."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import vs_ns2  # noqa: E402


def _seeds(k, n, rng, scale=1.0):
    return [rng.exponential(2.0, n) * scale for _ in range(k)]


def test_interval_is_a_point_when_both_simulators_give_the_same_flows():
    rng = np.random.default_rng(1)
    ns = _seeds(5, 300, rng)
    lo, hi = vs_ns2.median_diff_ci(ns, ns)
    assert lo == hi == 0.0


def test_interval_covers_a_uniform_ten_percent_slowdown():
    rng = np.random.default_rng(2)
    ns = _seeds(10, 400, rng)
    sv = [x * 1.10 for x in ns]
    lo, hi = vs_ns2.median_diff_ci(sv, ns)
    assert abs(lo - 0.10) < 1e-9 and abs(hi - 0.10) < 1e-9


def test_interval_widens_when_seeds_disagree():
    rng = np.random.default_rng(3)
    ns = _seeds(10, 400, rng)
    agree = [x * 1.05 for x in ns]
    # Same mean slowdown (5%), but half the seeds at +15% and half at -5%.
    split = [x * (1.15 if i % 2 else 0.95) for i, x in enumerate(ns)]
    lo_a, hi_a = vs_ns2.median_diff_ci(agree, ns)
    lo_s, hi_s = vs_ns2.median_diff_ci(split, ns)
    assert hi_s - lo_s > 0.05 > hi_a - lo_a
    assert lo_s < 0.05 < hi_s


def test_one_seed_gives_no_interval():
    rng = np.random.default_rng(4)
    ns = _seeds(1, 100, rng)
    lo, hi = vs_ns2.median_diff_ci(ns, ns)
    assert lo != lo and hi != hi
