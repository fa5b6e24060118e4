"""CI-sized runs of benchmarks/cubic_model.py: Savanna's CUBIC against RFC 9438's own model.
One random-loss rate (p = 0.01 at RTT 0.1 s, the Reno-friendly region) against the section 5
response function within 20%, and one flow after a single loss against W_cubic(t) within 5%.
The full table (four loss rates, three RTTs) is a benchmark: `python3 benchmarks/cubic_model.py`."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import cubic_model  # noqa: E402


def test_rfc9438_5_mean_window_under_random_loss_matches_the_response_function():
    r = cubic_model.response(0.01, 0.1, epochs=60)
    assert r["region"] == "Reno-friendly"
    assert r["fast_retransmits"] > 30
    assert abs(r["mean_cwnd"] - r["model"]) / r["model"] < 0.20, r


def test_rfc9438_5_mean_window_in_the_cubic_region():
    # RTT 0.5 s, p = 0.005: AVG_W_cubic exceeds AVG_W_est, so the cubic term rules
    r = cubic_model.response(0.005, 0.5, epochs=60)
    assert r["region"] == "cubic"
    assert abs(r["mean_cwnd"] - r["model"]) / r["model"] < 0.20, r


def test_rfc9438_4_2_window_after_one_loss_follows_w_cubic():
    b = cubic_model.one_loss()
    # ssthresh = beta W_max (4.6), and the epoch starts there
    assert abs(b["ssthresh_after"] - int(0.7 * b["w_max"])) <= 1, b
    assert b["timeouts"] == 0 and b["retransmits"] == 1
    assert b["max_abs_err"] < 0.05, b["points"]


def test_rfc9438_5_periodic_loss_in_the_cubic_region_is_the_curve_plus_two_round_trips():
    # RTT 0.5 s, p = 0.01, every 100th packet dropped: section 5.1's AVG_W_cubic is ~26%
    # above the simulated mean; with the detection and recovery round trips its derivation
    # leaves out (avg_w_cubic_two_rtts) the same curve is within a few percent.
    q = cubic_model.response(0.01, 0.5, epochs=40, periodic=True)
    assert q["region"] == "cubic" and q["timeouts"] == 0
    assert (q["mean_cwnd"] - q["model"]) / q["model"] < -0.15, q
    m2 = cubic_model.avg_w_cubic_two_rtts(0.01, 0.5)
    assert abs(q["mean_cwnd"] - m2) / m2 < 0.06, (q, m2)
