"""benchmarks/ns3_paired.py: the flow-by-flow comparison tells a bimodal bucket's median
shift (the same flows, the same times) from flows that really take longer in one simulator."""

import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import ns3_paired  # noqa: E402


def write_pair(d: Path, sv_fct, ns_fct, tag="cubic-dumbbell-droptail-0.8-1", sv_rto=None, ns_rto=None):
    n = len(sv_fct)
    common = {
        "flow_id": range(n),
        "start_s": [60.0] * n,
        "size_pkts": [200] * n,
        "retransmits": [1] * n,
        "fast_retransmits": [1] * n,
    }
    (d / f"{tag}-B").mkdir(parents=True)
    sv = {**common, "fct_s": sv_fct, "timeouts": sv_rto or [0] * n}
    pd.DataFrame(sv).to_parquet(d / f"{tag}-B" / "flows.parquet")
    pd.DataFrame({**common, "fct_s": ns_fct, "timeouts": ns_rto or [0] * n}).to_csv(d / f"{tag}-ns3.csv", index=False)


def test_a_median_on_a_sparse_stretch_moves_while_each_flow_keeps_its_time(tmp_path):
    # Two modes, 1 s and 3 s, with the median between them: swapping two flows across
    # the gap moves the bucket median by a lot, but the per-flow ratio's median stays 1.
    sv = [1.0] * 51 + [3.0] * 49
    ns = [1.0] * 49 + [3.0] * 51
    write_pair(tmp_path, sv, ns)
    m = ns3_paired.paired(tmp_path, "cubic", "dumbbell-droptail", 0.8, 1, "B", 101, 1000, 50.0)
    assert len(m) == 100
    assert (m["fct_s_sv"].median(), m["fct_s_ns"].median()) == (1.0, 3.0)
    assert m["ratio"].median() == 1.0
    text = "\n".join(ns3_paired.report(m, 101, 1000))
    assert "median 1.000" in text


def test_flows_that_take_longer_in_one_simulator_show_in_the_per_flow_ratio(tmp_path):
    sv = [1.0 + i / 100 for i in range(100)]
    write_pair(tmp_path, sv, [1.2 * x for x in sv])
    m = ns3_paired.paired(tmp_path, "cubic", "dumbbell-droptail", 0.8, 1, "B", 101, 1000, 50.0)
    assert abs(m["ratio"].median() - 1.2) < 1e-9


def test_a_missing_run_is_one_clear_error(tmp_path):
    try:
        ns3_paired.main([str(tmp_path), "--load", "0.8"])
    except SystemExit as e:
        assert "does not exist" in str(e)
    else:
        raise AssertionError("no error for a missing run")
    assert ns3_paired.main([str(tmp_path), "--load", "0.8", "--bucket", "x"]) == 2


def test_a_difference_in_who_takes_a_timeout_shows_in_the_timeout_split(tmp_path):
    # 40 flows time out in both and 40 in neither, each as long in both simulators; 20 take
    # a timeout (and 3 s instead of 1 s) in ns-3 only. The split finds ratio 1 where the
    # timeout experience matches and puts the whole difference in the ns-3-only group.
    sv = [1.0] * 40 + [3.0] * 40 + [1.0] * 20
    ns = [1.0] * 40 + [3.0] * 40 + [3.0] * 20
    sv_rto = [0] * 40 + [1] * 40 + [0] * 20
    ns_rto = [0] * 40 + [1] * 40 + [1] * 20
    write_pair(tmp_path, sv, ns, sv_rto=sv_rto, ns_rto=ns_rto)
    m = ns3_paired.paired(tmp_path, "cubic", "dumbbell-droptail", 0.8, 1, "B", 101, 1000, 50.0)
    split = {name: (n, g) for name, n, g in ns3_paired.timeout_split(m)}
    assert split["no timeout in either"] == (40, 1.0)
    assert split["timeouts in both"] == (40, 1.0)
    assert split["a timeout in ns-3 only"][0] == 20 and abs(split["a timeout in ns-3 only"][1] - 3.0) < 1e-12
    assert split["a timeout in Savanna only"][0] == 0
    text = "\n".join(ns3_paired.report(m, 101, 1000))
    assert "flows with a timeout: Savanna 0.400, ns-3 0.600" in text
