"""Analysis helpers: FCT by size bucket on a hand-made table, and `savanna compare`."""

import math
import subprocess
import sys

import pandas as pd
from savanna.analysis import fct_by_size


def test_fct_by_size_on_a_hand_made_table():
    flows = pd.DataFrame(
        {
            "start_s": [0.0, 10.0, 10.0, 10.0, 10.0, 20.0],
            "size_pkts": [2.0, 2.0, 3.0, 50.0, 5000.0, None],  # last: persistent
            "fct_s": [9.0, 1.0, 3.0, 4.0, None, None],
            "timeouts": [0, 0, 1, 0, 2, 0],
        }
    )
    t = fct_by_size(flows, warmup_s=5.0).set_index("bucket")
    assert t.loc["1-3", "flows"] == 2 and t.loc["1-3", "finished"] == 2
    assert t.loc["1-3", "mean_fct_s"] == 2.0 and t.loc["1-3", "median_fct_s"] == 2.0
    assert t.loc["1-3", "timeout_share"] == 0.5
    assert t.loc["31-100", "mean_fct_s"] == 4.0
    assert t.loc[">1000", "flows"] == 1 and t.loc[">1000", "finished"] == 0
    assert math.isnan(t.loc[">1000", "mean_fct_s"])
    assert t["flows"].sum() == 4  # the warm-up flow and the persistent flow are left out


def test_compare_command(tmp_path):
    import savanna

    base = {
        "duration_s": 20.0,
        "topology": {"type": "dumbbell", "pairs": 4, "bottleneck_queue": {"type": "droptail", "limit_pkts": 8}},
        "traffic": [{"type": "poisson", "load": 0.7, "size": {"dist": "pareto", "shape": 1.3, "mean": 30.0}}],
    }
    savanna.run(base, out=tmp_path / "a")
    red = dict(
        base,
        topology=dict(
            base["topology"], bottleneck_queue={"type": "red", "limit_pkts": 80, "min_th": 12.0, "max_th": 40.0}
        ),
    )
    savanna.run(red, out=tmp_path / "b")
    md = tmp_path / "r.md"
    p = subprocess.run(
        [sys.executable, "-m", "savanna", "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--markdown", str(md)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    assert "| 11-30 |" in p.stdout and md.read_text() == p.stdout
    p = subprocess.run(
        [sys.executable, "-m", "savanna", "compare", str(tmp_path / "nope")], capture_output=True, text=True
    )
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "not a finished run directory" in p.stderr


def test_result_carries_traces_and_classifier_series():
    import savanna

    sc = {
        "duration_s": 10.0,
        "topology": {
            "type": "dumbbell",
            "pairs": 2,
            "bottleneck_queue": {
                "type": "rio",
                "limit_pkts": 80,
                "min_th_short": 12.0,
                "max_th_short": 28.0,
                "min_th_long": 12.0,
                "max_th_long": 40.0,
            },
        },
        "traffic": [{"type": "poisson", "load": 0.5, "size": {"dist": "fixed", "value": 30}}],
        "classifiers": [{"type": "threshold", "node": "left"}],
        "sampling": {"interval_s": 1.0},
        "trace": {"flows": [0]},
    }
    r = savanna.run(sc)
    assert set(r.traces["flow_id"]) == {0}
    assert {"cwnd_pkts", "srtt_s", "event"} <= set(r.traces.columns)
    assert list(r.classifiers["t_s"]) == [float(t) for t in range(1, 11)]
    assert (r.flows["class_at_end"] != "none").any()
    plain = savanna.run({k: v for k, v in sc.items() if k != "trace"})
    assert plain.traces is None
