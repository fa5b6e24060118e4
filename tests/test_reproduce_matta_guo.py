"""Tests of the Matta & Guo 2000 reproduction (``savanna reproduce matta-guo-2000``): its
scenario files and how the reproduction derives each scheme from them (assignment policies
and their thresholds, shared and isolated queues with the paper's capacity and buffer
splits, the telnet background's classes), its metrics on hand-made inputs (Jain's index per
20 s window with silent sessions counted, window bounds, the linearity measure, active flows
per path), two tiny runs checking the wiring in the simulator, and the quick reproduction
end to end: every figure and every claim row in both reports, and the paper's central
results with their margins."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import savanna
from conftest import REPO_ROOT
from savanna.reproduce import matta_guo_2000 as mg
from savanna.reproduce import papers
from savanna.reproduce.common import ReproduceError, load_scenario, scenarios_dir

# ---- scenarios and schemes ----------------------------------------------------------------------


def test_registered():
    assert "matta-guo-2000" in papers()


def test_scenario_files_validate_and_say_what_they_reproduce():
    for name in mg.SCENARIOS:
        savanna.validate(scenarios_dir() / name)
        text = (scenarios_dir() / name).read_text()
        assert text.startswith("# Matta & Guo 2000"), name
        assert "Left open by the paper" in text or "Everything else" in text, name


def test_udp_policies_take_the_papers_thresholds_from_the_workload():
    # 300 s mean lifetime x 16 kb/s / (8 x 125 B) = 4800 packets; threshold-based: half.
    assert mg.udp_mean_pkts() == pytest.approx(4800.0)
    pp = {pol: mg.udp_scenario(pol, 2, 50.0)["path_policies"] for pol in mg.POLICIES}
    assert pp["load_balanced"] == [{"node": "n4", "policy": "load_balanced", "next_hops": ["n5", "n7"]}]
    assert pp["size_based"][0]["threshold_pkts"] == 4800
    assert pp["threshold"][0]["threshold_pkts"] == 2400
    sc = mg.udp_scenario("threshold", 2, 50.0)
    assert sc["seed"] == 2 and sc["duration_s"] == 50.0
    with pytest.raises(ReproduceError, match="policy"):
        mg.udp_scenario("random", 1, 10.0)


def test_isolation_splits_capacity_and_buffer_as_the_paper_says():
    base = load_scenario(mg.SC_ISO)
    assert mg.iso_scenario("droptail", 1, base["duration_s"]) == base
    iso = mg.iso_scenario("iso60", 1, 100.0)
    q = iso["topology"]["bottleneck_queue"]
    assert q == {"type": "drr", "limit_short_pkts": 200, "limit_long_pkts": 300, "share_short": 0.4, "share_long": 0.6}
    assert iso["classifiers"] == [{"type": "oracle", "node": "left", "threshold": 100}]
    q = mg.iso_scenario("iso40", 1, 100.0)["topology"]["bottleneck_queue"]
    assert (q["limit_long_pkts"], q["share_long"]) == (200, 0.4)
    q = mg.iso_scenario("matched", 1, 100.0, long_share=0.55)["topology"]["bottleneck_queue"]
    assert (q["limit_short_pkts"], q["limit_long_pkts"], q["share_long"]) == (225, 275, 0.55)
    red = mg.iso_scenario("red", 1, 100.0)["topology"]["bottleneck_queue"]
    # Table IV's RED (20 and 245 of 250 packets, 0.2%) scaled to the 500-packet buffer.
    assert (red["min_th"], red["max_th"], red["max_p"], red["limit_pkts"]) == (40.0, 490.0, 0.002, 500)
    for sc in (iso, mg.iso_scenario("red", 1, 100.0)):
        savanna.validate(sc)
    with pytest.raises(ReproduceError, match="long_share"):
        mg.iso_scenario("matched", 1, 100.0)
    with pytest.raises(ReproduceError, match="scheme"):
        mg.iso_scenario("cbq", 1, 100.0)


def test_pipe_scenario_is_table_iii_with_k():
    iso = mg.pipe_scenario("iso", 60, 3, 7, 300.0)
    sh = mg.pipe_scenario("share", 60, 3, 7, 300.0)
    for sc in (iso, sh):
        savanna.validate(sc)
        assert sc["topology"]["bottleneck_rate_mbps"] == pytest.approx(4 * 2.5)  # (1 + k) C_u
        assert sc["topology"]["pairs"] == 60 and sc["seed"] == 7
        blocks = {t["name"]: t for t in sc["traffic"]}
        assert blocks["long"]["sessions"] == blocks["short"]["sessions"] == 60
        assert blocks["telnet-short"]["lifetime_s"] == {"dist": "fixed", "value": 300.0}
    q = iso["topology"]["bottleneck_queue"]
    assert (q["type"], q["limit_short_pkts"], q["limit_long_pkts"]) == ("drr", 50, 150)
    assert q["share_short"] == pytest.approx(0.25) and q["share_long"] == pytest.approx(0.75)
    assert sh["topology"]["bottleneck_queue"] == {"type": "droptail", "limit_pkts": 200} and "classifiers" not in sh
    # The short pipe's telnet flows must stay below the oracle's threshold.
    with pytest.raises(ReproduceError, match="duration_s"):
        mg.pipe_scenario("iso", 30, 1, 1, 1200.0)


def test_buffer_scenario_scales_both_pipes_buffers():
    q = mg.buffer_scenario("iso", 0.2, 1, 100.0)["topology"]["bottleneck_queue"]
    assert (q["limit_short_pkts"], q["limit_long_pkts"]) == (10, 40)
    assert q["share_short"] == pytest.approx(0.2)
    sh = mg.buffer_scenario("share", 3.0, 1, 100.0)
    assert sh["topology"]["bottleneck_queue"]["limit_pkts"] == 750
    assert sh["topology"]["bottleneck_rate_mbps"] == pytest.approx(12.5)


def test_web_schemes_change_only_the_queue_or_the_policy():
    scs = {s: mg.web_scenario(s, 3, 100.0) for s in mg.WEB_SCHEMES}
    assert scs["size"]["path_policies"][0]["policy"] == "size_based"
    assert scs["size"]["path_policies"][0]["threshold_pkts"] == 75
    assert scs["threshold"]["path_policies"][0]["threshold_pkts"] == 32
    red = scs["red-lb"]["topology"]["path_queue"]
    assert (red["type"], red["min_th"], red["max_th"], red["max_p"]) == ("red", 20.0, 245.0, 0.002)
    for s, sc in scs.items():
        savanna.validate(sc)
        rest = {k: v for k, v in sc.items() if k != "path_policies"}
        rest["topology"] = {k: v for k, v in sc["topology"].items() if k != "path_queue"}
        ref = {k: v for k, v in scs["droptail-lb"].items() if k != "path_policies"}
        ref["topology"] = {k: v for k, v in scs["droptail-lb"]["topology"].items() if k != "path_queue"}
        assert rest == ref, s
    # 2 x (5 + 50 + 50 + 5) ms = 220 ms: Table IV's 238-packet product at 5 Mb/s and 576 B.
    t = scs["size"]["topology"]
    rtt = 2 * (2 * t["access_delay_ms"] + 2 * t["path_delay_ms"]) / 1000
    assert t["path_rate_mbps"] * 1e6 * rtt / (576 * 8) == pytest.approx(238, abs=1)


# ---- metrics ------------------------------------------------------------------------------------


def test_window_ends_start_after_the_warmup():
    assert mg.window_ends(100.0, 0.0) == [20.0, 40.0, 60.0, 80.0, 100.0]
    assert mg.window_ends(100.0, 30.0) == [60.0, 80.0, 100.0]
    assert mg.window_ends(90.0, 0.0) == [20.0, 40.0, 60.0, 80.0]


def test_session_windows_count_silent_sessions_as_zero():
    rows = pd.DataFrame(
        {"t_s": [20.0, 20.0, 40.0, 40.0, 40.0], "session": ["a", "b", "a", "b", "c"], "pkts": [20, 20, 10, 10, 10]}
    )
    w = mg.session_windows(rows, ["a", "b", "c"], [20.0, 40.0, 60.0])
    # window 1: (20 + 20)^2 / (3 x 800) = 2/3 (c delivered nothing); window 2: all equal
    assert w["jain"].iloc[0] == pytest.approx(2 / 3)
    assert w["jain"].iloc[1] == pytest.approx(1.0)
    assert math.isnan(w["jain"].iloc[2])  # nobody delivered anything: nothing to compare
    assert list(w["goodput_pkts_s"]) == pytest.approx([2.0, 1.5, 0.0])
    assert w["per_session_pkts_s"].iloc[0] == pytest.approx(2.0 / 3)


def test_linear_r2():
    k = [1, 2, 3, 4, 5]
    assert mg.linear_r2(k, [10 * x + 3 for x in k]) == pytest.approx(1.0)
    assert mg.linear_r2(k, [1, 5, 2, 4, 3]) == pytest.approx(0.09)  # r = 3 / 10
    assert math.isnan(mg.linear_r2([1, 2], [1, 2]))


def test_active_by_path_moves_threshold_flows_at_the_switch_time():
    f = pd.DataFrame({"start_s": [0.0, 0.0, 5.0], "end_s": [10.0, None, 8.0], "path": ["n5", "n7", "n5>n7"]})
    a = mg.active_by_path(f, [1.0, 6.0, 7.5, 9.0, 20.0], move_after_s=2.0)
    assert list(a["path1"]) == [1, 2, 1, 1, 0]
    assert list(a["path2"]) == [1, 1, 2, 1, 1]
    with pytest.raises(ValueError, match="move_after_s"):
        mg.active_by_path(f, [1.0])


def test_model_boundary_and_grid_follow_eq2():
    if not mg.model_available():
        pytest.skip("the installed core predates savanna.models' control functions")
    # beta = alpha / 2 on the boundary N (alpha + 2 beta) = 4 gives alpha = 2 / N
    for n in (1, 4, 10):
        assert mg.boundary_alpha(n) == pytest.approx(2.0 / n, rel=0.01)
    g = mg.stability_grid(5, points=12)
    assert len(g) == 144 and g["stable"].any() and not g["stable"].all()
    j = g[g["judged"]]
    assert (j["stable"] == j["paper"]).all()
    assert (g["paper"] == (5 * (g["alpha"] + 2 * g["beta"]) < 4)).all()


def test_intro_says_when_the_model_is_left_out():
    p = mg.plan(True)
    assert "predates" in mg._intro(p, False) and "iterated with savanna.models" in mg._intro(p, True)


def test_claims_are_declared_once_with_a_source_and_documented():
    ids = [c.id for c in mg.CLAIMS + mg.MODEL_CLAIMS]
    assert len(ids) == len(set(ids))
    assert all(c.source for c in mg.CLAIMS + mg.MODEL_CLAIMS)
    text = (REPO_ROOT / "docs" / "reproduce.md").read_text()
    assert "## Matta & Guo 2000 (`matta-guo-2000`)" in text
    missing = [i for i in ids if f"`{i}`" not in text]
    assert not missing, missing


# ---- tiny runs: the wiring in the simulator -------------------------------------------------------


def test_size_based_policy_puts_short_udp_flows_on_path_1():
    r = savanna.run(mg.udp_scenario("size_based", 4, 120.0))
    f = r.flows
    assert len(f) > 50 and set(f["kind"]) == {"udp"}
    assert (f["path"] == np.where(f["size_pkts"] <= 4800, "n5", "n7")).all()
    assert (f["path"] == "n7").any() and (f["path"] == "n5").any()


def test_isolation_marks_each_class_and_gives_each_its_share():
    sc = mg.pipe_scenario("iso", 60, 3, 1, 60.0)
    r = savanna.run(sc)
    f = r.flows
    tcp = f[f["kind"] == "tcp"]
    done = tcp[tcp["delivered_pkts"] > 0]
    assert (done[done["source"] == "long"]["class_at_end"] == "long").all()
    assert (done[done["source"] == "short"]["class_at_end"] == "short").all()
    tel = f[f["kind"] == "udp"].set_index("source")["class_at_end"]
    assert set(tel["telnet-short"]) == {"short"} and set(tel["telnet-long"]) == {"long"}
    q = r.queues[r.queues["t_s"] > 10]
    dep_short, dep_long = q["departures_short"].sum(), q["departures_long"].sum()
    # 60 short sessions want more than C_u, so both classes stay backlogged and DRR gives
    # the short class its 1 / (1 + k) = 25% of the departures.
    assert dep_short / (dep_short + dep_long) == pytest.approx(0.25, abs=0.03)


# ---- end to end: the quick reproduction ---------------------------------------------------------------


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mg-quick")
    script = Path(sys.executable).parent / "savanna"
    cmd = [str(script)] if script.is_file() else [sys.executable, "-m", "savanna"]
    proc = subprocess.run(
        cmd + ["reproduce", "matta-guo-2000", "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    return out, proc


FIGURES = (
    "table2-udp-utilisation",
    "fig02-udp-active-flows",
    "fig03b-04a-window-dynamics",
    "fig04b-transmission-times",
    "fig06-pipe-n30",
    "fig07-pipe-n60",
    "fig08-buffer",
    "fig10-web-background",
    "fig10-web-fairness-time",
)


def test_quick_reproduction_writes_every_figure_and_claim(quick_run):
    out, proc = quick_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"matta-guo-2000: {out / 'report.html'}" in proc.stdout
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    data = json.loads((out / "claims.json").read_text())
    figs = {f["id"]: f for f in data["figures"]}
    assert set(FIGURES) <= set(figs)
    for f in figs.values():
        assert (out / f["png"]).is_file() and (out / f["svg"]).is_file()
        assert f"]({f['png']})" in md
        assert f'id="fig-{f["id"]}"' in html
    assert html.count('src="data:image/png;base64,') == len(figs)
    if mg.model_available():
        assert {"model-stability", "model-dynamics"} <= set(figs)
    ids = [c["id"] for c in data["claims"]]
    model = [c.id for c in mg.MODEL_CLAIMS] if mg.model_available() else []
    assert ids == [c.id for c in mg.CLAIMS] + model
    for c in data["claims"]:
        assert f"| {c['id']} |" in md
        assert f'id="claim-{c["id"]}"' in html
        # replications for the simulations; the deterministic model is evaluated once
        assert c["n"] == 1 if c["id"] in model else c["n"] >= 2, c
        assert c["mean"] is not None, c
        assert c["ci_low"] <= c["mean"] <= c["ci_high"]
        assert c["verdict"] in ("reproduced", "same direction", "not reproduced")
    assert "Table II: path utilisation" in md
    for bad in ("http://", "https://", "file:"):
        assert bad not in html


def test_quick_reproduction_shows_the_papers_central_results(quick_run):
    out, proc = quick_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    c = {x["id"]: x for x in json.loads((out / "claims.json").read_text())["claims"]}
    # Isolated short sessions are treated alike (Fig. 6(a): "very close to 1")...
    assert c["f6-short-iso-fair"]["ci_low"] > 0.95
    # ... and get more goodput than when long sessions share their queue (Fig. 6(b)).
    assert c["f6-short-goodput-shared"]["ci_low"] > 10
    # Isolation costs no overall goodput (section IV-D: "comparable").
    assert 0.95 < c["f67-goodput-ratio"]["mean"] < 1.05
    # Splitting by size gives short foreground connections more goodput than RED (Fig. 10).
    assert c["f10-short-goodput-size-red"]["mean"] > 1.2
    if mg.model_available():
        # Section II: the iterated model's boundary is eq. (2)'s, and sharing destabilises
        # flows that are stable alone.
        assert c["m2-boundary"]["verdict"] == "reproduced" and c["m2-boundary-n"]["verdict"] == "reproduced"
        assert c["m2-shared-diverges"]["mean"] > 3 and c["m2-isolated-converges"]["mean"] < 0
