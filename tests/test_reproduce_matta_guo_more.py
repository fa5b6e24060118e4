"""Tests of Fig. 3(a), added to the Matta & Guo 2000 reproduction by issue 17 item 5
(``savanna.reproduce.matta_guo_2000_more``): the scenario is the paper's set-up (eight
sessions, the three named sizes, a 1.5 Mb/s link, a 64-packet maximum window) and a short
run fills the figure, the table and every claim. The quick reproduction end to end is in
test_reproduce_matta_guo.py (every claim of ``matta_guo_2000.CLAIMS``, these included)."""

from __future__ import annotations

import savanna
from savanna.reproduce import matta_guo_2000 as mg
from savanna.reproduce import matta_guo_2000_more as more
from savanna.reproduce.common import Context, Report, load_scenario, plot_style, scenarios_dir


def test_fig3a_scenario_is_eight_sessions_of_fixed_sizes_on_a_15_mbps_link():
    sc = more.scenario(3, 60.0)
    savanna.validate(sc, base_dir=scenarios_dir())
    sizes = [t["size"]["value"] for t in sc["traffic"]]
    assert len(sizes) == 8 and {20000, 200, 20} <= set(sizes)
    assert all(t["type"] == "closed_loop" and t["sessions"] == 1 for t in sc["traffic"])
    topo = sc["topology"]
    assert topo["bottleneck_rate_mbps"] == 1.5 and topo["pairs"] == 8
    assert sc["tcp"]["max_window"] == 64
    # everything else is Fig. 3(b)'s scenario: its TCP, packet size and delay
    base = load_scenario(mg.SC_ISO)
    assert {k: v for k, v in sc["tcp"].items() if k != "max_window"} == {
        k: v for k, v in base["tcp"].items() if k != "max_window"
    }
    assert sc["packet_bytes"] == base["packet_bytes"] and topo["bottleneck_delay_ms"] == 100.0


def test_a_short_run_fills_the_figure_table_and_claims(tmp_path, monkeypatch):
    monkeypatch.setattr(more, "plan", lambda quick: more.MorePlan(2, 60.0))
    ctx = Context(key="t", out_dir=tmp_path, quick=True, workers=1, progress=False)
    report = Report(more.CLAIMS, tmp_path, plot_style())
    more.reproduce_more(ctx, report)
    assert [f.id for f in report.figures] == ["fig03a-window-dynamics"]
    rows = report.tables[0].rows
    assert [r[0] for r in rows] == list(more.SIZES)
    # the small sessions complete many connections in 60 s, the 20000-packet one none
    assert rows[0][1] > 5 and rows[-1][1] == 0
    for c in report.claims():
        assert c.n == 2, c
