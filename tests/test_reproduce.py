"""Tests of ``savanna reproduce``: the paper registry and the command's error contract, the
shared machinery (scenario overrides, run ids that change with the scenario, reuse of
completed runs), the FavorQueue 2013 helpers (size law, flow matching, Little's law) and
its quick reproduction end to end: every figure and every claim row in both reports."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import savanna
from conftest import REPO_ROOT
from savanna.reproduce import favorqueue_2013 as fq
from savanna.reproduce import papers, run
from savanna.reproduce.common import Batch, Context, ReproduceError, override, scenario_digest, scenarios_dir

# ---- registry and command line ------------------------------------------------------------


def test_registry_lists_implemented_papers_only():
    keys = papers()
    assert "favorqueue-2013" in keys
    for k in keys:
        assert re.fullmatch(r"[a-z0-9-]+", k)


def test_unknown_paper_is_one_error_line_listing_valid_ones(cli, expect_error, tmp_path):
    line = expect_error(cli("reproduce", "no-such-paper", "--out", tmp_path / "x"))
    assert "no-such-paper" in line and "favorqueue-2013" in line and "all" in line
    assert not (tmp_path / "x").exists()


def test_bad_workers_is_an_input_error(cli, expect_error, tmp_path):
    line = expect_error(cli("reproduce", "favorqueue-2013", "--workers", "0", "--out", tmp_path / "x"))
    assert "--workers" in line


def test_unusable_output_directory_is_an_input_error(cli, expect_error, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    line = expect_error(cli("reproduce", "favorqueue-2013", "--quick", "--out", blocker))
    assert "--out" in line and str(blocker) in line


def test_api_rejects_unknown_paper():
    with pytest.raises(ReproduceError, match="valid: .*favorqueue-2013"):
        run("nope", quick=True)


# ---- shared machinery -------------------------------------------------------------------------


def test_a_batch_goes_to_the_workers_longest_first(tmp_path, monkeypatch):
    from savanna import sweep
    from savanna.reproduce.common import expected_cost

    base = {"duration_s": 10.0, "topology": {"bottleneck_rate_mbps": 10.0}, "traffic": [{"load": 0.5}]}
    longer = override(base, {"duration_s": 20.0})
    faster = override(base, {"topology.bottleneck_rate_mbps": 100.0})
    busier = override(base, {"traffic": [{"load": 0.9}]})
    assert expected_cost(faster) > expected_cost(longer) > expected_cost(busier) > expected_cost(base)
    given = []
    report = sweep.RunReport(out_dir=tmp_path)
    monkeypatch.setattr(sweep, "run_many", lambda jobs, *a, **k: given.extend(jobs) or report)
    ctx = Context(key="t", out_dir=tmp_path, quick=True, progress=False)
    jobs = [ctx.job("e", sc, {"i": i}) for i, sc in enumerate([base, busier, faster, longer])]
    b = ctx.run("e", jobs)
    assert [j.params["i"] for j in given] == [2, 3, 1, 0]
    # The batch keeps the order its experiment gave.
    assert b.run_ids == [j.run_id for j in jobs]


def test_override_sets_dotted_paths_without_touching_the_original():
    sc = {
        "topology": {"bottleneck_queue": {"type": "droptail", "limit_pkts": 8}},
        "traffic": [{"name": "a", "load": 0.5}, {"name": "b", "load": 0.1}],
    }
    new = override(sc, {"topology.bottleneck_queue.type": "favorqueue", "traffic[1].load": 0.3, "tcp.init_cwnd": 10})
    assert new["topology"]["bottleneck_queue"] == {"type": "favorqueue", "limit_pkts": 8}
    assert new["traffic"][1]["load"] == 0.3 and new["tcp"] == {"init_cwnd": 10}
    assert sc["topology"]["bottleneck_queue"]["type"] == "droptail" and sc["traffic"][1]["load"] == 0.1
    with pytest.raises(ReproduceError, match="traffic\\[5\\]"):
        override(sc, {"traffic[5].load": 0.2})


def test_digest_follows_the_scenario_and_the_files_it_reads(tmp_path):
    (tmp_path / "sizes.csv").write_text("size,cdf\n1,0.5\n2,1\n")
    sc = {"seed": 1, "traffic": [{"size": {"dist": "empirical", "file": "sizes.csv"}}]}
    d0 = scenario_digest(sc, tmp_path)
    assert scenario_digest(dict(sc), tmp_path) == d0
    assert scenario_digest({**sc, "seed": 2}, tmp_path) != d0
    (tmp_path / "sizes.csv").write_text("size,cdf\n1,0.4\n2,1\n")
    assert scenario_digest(sc, tmp_path) != d0


TINY = {
    "name": "tiny",
    "duration_s": 3.0,
    "topology": {"type": "dumbbell", "pairs": 2, "bottleneck_queue": {"type": "droptail", "limit_pkts": 8}},
    "traffic": [{"type": "poisson", "name": "forward", "load": 0.3, "size": {"dist": "fixed", "value": 5}}],
}


def test_context_reuses_completed_runs_and_keeps_batches_apart(tmp_path):
    ctx = Context(key="t", out_dir=tmp_path, quick=True, workers=1, progress=False)
    jobs = [ctx.job("exp", override(TINY, {"seed": s}), {"qdisc": "droptail", "rep": s}) for s in (1, 2)]
    b1 = ctx.run("exp", jobs)
    assert (b1.done, b1.skipped) == (2, 0)
    again = ctx.run("exp", jobs)
    assert (again.done, again.skipped) == (0, 2)
    # a changed scenario is a new run, and a batch reads only its own runs
    longer = [ctx.job("exp", override(TINY, {"seed": 1, "duration_s": 4.0}), {"qdisc": "droptail", "rep": 1})]
    b3 = ctx.run("exp", longer)
    assert (b3.done, b3.skipped) == (1, 0)
    assert set(b3.query("DISTINCT run_id")["run_id"]) == {longer[0].run_id}
    n1 = b1.query("count(*) AS n")["n"][0]
    direct = sum(len(savanna.run(j.scenario).flows) for j in jobs)
    assert n1 == direct


def test_a_batch_holding_its_whole_dataset_drops_the_run_filter_with_the_same_rows(tmp_path):
    # issue 21: the run-id list is tested on every row; a batch that holds every run of
    # its dataset selects them all with TRUE (also where an alias qualifies {runs}).
    ctx = Context(key="t", out_dir=tmp_path, quick=True, workers=1, progress=False)
    jobs = [ctx.job("exp", override(TINY, {"seed": s}), {"qdisc": "droptail", "rep": s}) for s in (1, 2)]
    b1 = ctx.run("exp", jobs)
    sql = "SELECT rep, count(*) AS n, sum(f.fct_s) AS t FROM flows f WHERE f.{runs} AND {runs} GROUP BY rep ORDER BY 1"
    assert b1.holds_all() and b1._with_runs(sql).count("TRUE") == 2 and "run_id IN" not in b1._with_runs(sql)
    whole = b1.sql(sql)
    assert list(whole["rep"]) == [1, 2] and (whole["n"] > 0).all()
    part = Batch("exp", b1.dataset, b1.run_ids[:1])
    assert not part.holds_all()
    assert "f.run_id IN (" in part._with_runs(sql) and "AND run_id IN (" in part._with_runs(sql)
    # another batch's run in the dataset: the filter again, and the same rows as before
    ctx.run("exp", [ctx.job("exp", override(TINY, {"seed": 3}), {"qdisc": "droptail", "rep": 3})])
    assert not b1.holds_all()
    pd.testing.assert_frame_equal(b1.sql(sql), whole)
    pd.testing.assert_frame_equal(part.sql(sql), whole[whole["rep"] == 1].reset_index(drop=True))
    assert b1.query("count(*) AS n")["n"][0] == whole["n"].sum()


def test_a_run_identical_to_one_of_another_experiment_is_copied_not_simulated(tmp_path):
    ctx = Context(key="t", out_dir=tmp_path, quick=True, workers=1, progress=False)
    first = ctx.run("a", [ctx.job("a", override(TINY, {"seed": s}), {"rep": s}) for s in (1, 2)])
    # seed 1 is the same simulation under other parameters; seed 3 is new
    second = ctx.run("b", [ctx.job("b", override(TINY, {"seed": s}), {"buf": 8, "rep": s}) for s in (1, 3)])
    assert (second.done, second.skipped) == (1, 1)
    a = first.query("flow_id, fct_s, drops", where="rep = 1").sort_values("flow_id", ignore_index=True)
    b = second.query("flow_id, fct_s, drops, buf", where="rep = 1").sort_values("flow_id", ignore_index=True)
    assert len(a) > 0 and (b["buf"] == 8).all()
    pd.testing.assert_frame_equal(a, b.drop(columns="buf"))
    files = {p.name for p in (tmp_path / "runs" / "b").glob("runs/**/run_id=*/*")}
    assert {"flows.parquet", "summary.json", "summaries.parquet", "params.json", "scenario.json"} <= files
    # a changed scenario is simulated
    other = ctx.run("c", [ctx.job("c", override(TINY, {"seed": 1, "duration_s": 4.0}), {"rep": 1})])
    assert (other.done, other.skipped) == (1, 0)


# ---- FavorQueue 2013 helpers ---------------------------------------------------------------------


def test_size_file_is_the_documented_lomax_law():
    assert (scenarios_dir() / fq.SIZES_CSV).read_text() == fq.size_csv_text()
    pts = fq.lomax_size_cdf()
    # P(size = 1) is P(S < 1.5) for the Lomax law of shape 1.3 and mean 30 (scale 9)
    assert pts[0] == (1.0, pytest.approx(1 - (1 + 1.5 / 9) ** -1.3))
    # each whole size k <= 100 gets exactly P(k - 0.5 <= S < k + 0.5)
    cdf = dict(pts)
    assert cdf[10.5] - cdf[9.5] == pytest.approx((1 + 9.5 / 9) ** -1.3 - (1 + 10.5 / 9) ** -1.3)
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    assert xs == sorted(xs) and ys == sorted(ys) and ys[-1] == 1.0


def test_scenario_files_validate():
    names = [fq.SC_10M, fq.SC_100M, fq.SC_QSIZE, fq.SC_PERSIST, fq.SC_IW10, fq.SC_FIVEHOP]
    for n in names:
        savanna.validate(scenarios_dir() / n)
        text = (scenarios_dir() / n).read_text()
        assert text.startswith("# FavorQueue 2013"), n  # header says what it reproduces


def test_scenarios_take_ns2_handshake_without_the_pure_ack():
    # Section 4: "the ns-2 TCP connection establishment phase ... enabled", ns-2's one-way
    # TCP with syn_: a SYN, its ACK, then data, with no third handshake packet.
    names = [fq.SC_10M, fq.SC_100M, fq.SC_QSIZE, fq.SC_PERSIST, fq.SC_IW10, fq.SC_FIVEHOP]
    for n in names:
        tcp = fq.load_scenario(n)["tcp"]
        assert tcp["handshake"] is True and tcp["handshake_ack"] is False, n
        assert "ns-2 TCP connection" in (scenarios_dir() / n).read_text(), n
    assert fq.handshake_ack() is False  # P(Favor)'s denominator counts no pure ACK


def test_scenarios_differ_only_where_the_paper_says():
    a = fq.load_scenario(fq.SC_10M)
    b = fq.load_scenario(fq.SC_IW10)
    c = fq.load_scenario(fq.SC_100M)
    assert override(a, {"name": b["name"], "tcp.init_cwnd": 10}) == b
    assert c["topology"]["bottleneck_rate_mbps"] == 100.0 and c["topology"]["bottleneck_queue"]["limit_pkts"] == 83


def test_size_bins_cover_every_size_once():
    bins = fq.size_bins()
    assert bins[0] == (1, 1) and math.isinf(bins[-1][1])
    for (lo, hi), (lo2, _) in zip(bins, bins[1:]):
        assert lo <= hi and lo2 == hi + 1


def test_common_finished_keeps_flows_finished_under_every_discipline():
    f = pd.DataFrame(
        {
            "qdisc": ["droptail", "favorqueue", "droptail", "favorqueue", "droptail", "favorqueue"],
            "load": [0.5] * 6,
            "rep": [1] * 6,
            "flow_id": [0, 0, 1, 1, 2, 2],
            "fct_s": [1.0, 0.5, 2.0, None, 3.0, 3.0],
        }
    )
    got = fq.common_finished(f, ("droptail", "favorqueue"))
    assert sorted(set(got["flow_id"])) == [0, 2] and len(got) == 4


def test_common_finished_is_the_inner_merge_with_the_kept_groups_row_for_row():
    # issue 21: a mask replaced the merge; the same frame (rows, order, index, dtypes)
    rng = np.random.default_rng(5)
    n = 3000
    f = pd.DataFrame(
        {
            "qdisc": rng.choice(["droptail", "favorqueue", "choke"], n),
            "load": rng.choice([0.5, 0.8], n),
            "rep": rng.integers(1, 4, n),
            "flow_id": rng.integers(0, 200, n).astype("int32"),
            "fct_s": np.where(rng.random(n) < 0.2, np.nan, rng.random(n)),
        }
    ).drop_duplicates(["qdisc", "load", "rep", "flow_id"])
    for discs, keys in ((("droptail", "favorqueue"), ["load", "rep"]), (("droptail", "favorqueue", "choke"), ["rep"])):
        done = f[f["qdisc"].isin(discs) & f["fct_s"].notna()]
        cnt = done.groupby(keys + ["flow_id"])["qdisc"].nunique()
        ok = cnt[cnt == len(discs)].reset_index()[keys + ["flow_id"]]
        want = done.merge(ok, on=keys + ["flow_id"], how="inner")
        got = fq.common_finished(f, discs, keys)
        assert len(got) > 0
        pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_little_delay_is_length_over_departure_rate():
    # one run: 2 packets queued on average, 1000 packets per second for 10 s -> 2 ms
    q = pd.DataFrame({"l_pkts": [2.0], "dep": [10000], "t_s": [10.0]})
    assert fq.little_delay_ms(q) == pytest.approx(2.0)
    # pooled over runs, weighted by packets: (2*10 + 4*10) / (10000 + 10000) s = 3 ms
    q = pd.DataFrame({"l_pkts": [2.0, 4.0], "dep": [10000, 10000], "t_s": [10.0, 10.0]})
    assert fq.little_delay_ms(q) == pytest.approx(3.0)


def test_claims_are_declared_once_with_a_source():
    ids = [c.id for c in fq.CLAIMS]
    assert len(ids) == len(set(ids))
    assert all(c.source for c in fq.CLAIMS)


# ---- end to end: the quick reproduction --------------------------------------------------------


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("fq-quick")
    script = Path(sys.executable).parent / "savanna"
    cmd = [str(script)] if script.is_file() else [sys.executable, "-m", "savanna"]
    proc = subprocess.run(
        cmd + ["reproduce", "favorqueue-2013", "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    return out, proc


def test_quick_reproduction_writes_every_figure_and_claim(quick_run):
    out, proc = quick_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"favorqueue-2013: {out / 'report.html'}" in proc.stdout
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    data = json.loads((out / "claims.json").read_text())
    # every figure: both files on disk, shown in both reports
    figs = data["figures"]
    assert len(figs) >= 15
    for f in figs:
        assert (out / f["png"]).is_file() and (out / f["svg"]).is_file()
        assert f"]({f['png']})" in md
        assert f'id="fig-{f["id"]}"' in html
    assert html.count('src="data:image/png;base64,') == len(figs)
    # every declared claim: a row in both reports, with our mean and CI over replications
    assert [c["id"] for c in data["claims"]] == [c.id for c in fq.CLAIMS]
    for c in data["claims"]:
        assert f"| {c['id']} |" in md
        assert f'id="claim-{c["id"]}"' in html
        assert c["n"] >= 2 and c["mean"] is not None, c
        assert c["ci_low"] <= c["mean"] <= c["ci_high"]
        assert c["verdict"] in ("reproduced", "same direction", "not reproduced")
    for bad in ("http://", "https://", "file:"):
        assert bad not in html


def test_quick_reproduction_shows_favorqueue_helping_under_load(quick_run):
    # The paper's central result, with the margin it reports: FavorQueue cuts the mean
    # latency at the highest load against DropTail (paper: up to 30%).
    out, proc = quick_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    claims = {c["id"]: c for c in json.loads((out / "claims.json").read_text())["claims"]}
    assert claims["lat-faq-dt-hi"]["ci_low"] > 0
    assert claims["gain-overall"]["mean"] > 0
    assert claims["drop-faq-dt-hi"]["ci_low"] > 0


def test_docs_list_every_claim():
    text = (REPO_ROOT / "docs" / "reproduce.md").read_text()
    missing = [c.id for c in fq.CLAIMS if f"`{c.id}`" not in text]
    assert not missing, missing


def test_all_runs_every_registered_paper_and_writes_an_index(tmp_path, monkeypatch):
    import sys
    import types

    import savanna.reproduce as rp
    from savanna.report import ClaimSpec, judge, save_figure

    def fake_reproduce(ctx):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        jobs = [ctx.job("tiny", override(TINY, {"seed": s}), {"qdisc": "droptail", "rep": s}) for s in (1, 2)]
        b = ctx.run("tiny", jobs)
        per_rep = b.query("rep, avg(fct_s) AS m", where="fct_s IS NOT NULL", group_by="rep")
        fg, ax = plt.subplots()
        ax.plot(per_rep["rep"], per_rep["m"])
        fig = save_figure(fg, ctx.out_dir, "fig01", "Mean FCT", "Per replication.")
        claim = judge(ClaimSpec("fct", "mean FCT below 10 s", direction="<", reference=10.0, unit="s"), per_rep["m"])
        return rp.Outcome("Fake paper", "Intro.", [fig], [claim])

    mod = types.ModuleType("fake_paper_for_tests")
    mod.KEY, mod.TITLE, mod.reproduce = "fake-2000", "A fake paper", fake_reproduce
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    monkeypatch.setattr(rp, "registry", lambda: {"fake-2000": mod.__name__})
    written = rp.run("all", quick=True, out=tmp_path, workers=1, progress=False)
    assert written["fake-2000"] == tmp_path / "fake-2000" / "report.html"
    assert (tmp_path / "fake-2000" / "figures" / "fig01.svg").is_file()
    index = (tmp_path / "index.html").read_text()
    assert 'href="fake-2000/report.html"' in index and "A fake paper" in index
    md = (tmp_path / "index.md").read_text()
    assert "| A fake paper | 1 | 1 | 0 | 0 |" in md
    report = (tmp_path / "fake-2000" / "report.md").read_text()
    assert "savanna reproduce all --quick" in report and "| fct |" in report


def test_reproduce_records_each_papers_simulation_and_analysis_time_and_memory(tmp_path, monkeypatch):
    import sys
    import types

    import savanna.reproduce as rp

    def fake_reproduce(ctx):
        b = ctx.run("tiny", [ctx.job("tiny", override(TINY, {"seed": 1}), {"qdisc": "droptail", "rep": 1})])
        b.query("count(*) AS n")
        return rp.Outcome("Fake paper", "Intro.", [], [])

    mod = types.ModuleType("fake_paper_for_timings")
    mod.KEY, mod.TITLE, mod.reproduce = "fake-2001", "A fake paper", fake_reproduce
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    monkeypatch.setattr(rp, "registry", lambda: {"fake-2001": mod.__name__})
    rp.run("all", quick=True, out=tmp_path, workers=1, progress=False)
    doc = json.loads((tmp_path / "timings.json").read_text())
    (t,) = doc["papers"]
    assert t["paper"] == "fake-2001" and t["runs"] == 1 and t["reused"] == 0
    assert t["simulation_s"] > 0 and t["analysis_s"] >= 0
    assert abs(t["simulation_s"] + t["analysis_s"] - t["wall_s"]) < 1e-2
    # One worker runs in this process: its CPU is this process's; the Python heap alone is
    # well above 10 MB.
    assert t["cpu_parent_s"] > 0 and t["peak_rss_bytes"] > 10e6
    assert doc["peak_rss_bytes"] >= t["peak_rss_bytes"]
    assert "peak memory" in (tmp_path / "index.md").read_text()
    assert "analysis" in (tmp_path / "fake-2001" / "report.md").read_text()
    # A re-run reuses the simulation: no simulation time worth the name, same run count.
    rp.run("all", quick=True, out=tmp_path, workers=1, progress=False)
    (t2,) = json.loads((tmp_path / "timings.json").read_text())["papers"]
    assert t2["reused"] == 1 and t2["simulation_s"] < t["simulation_s"]


def _two_papers(monkeypatch, first, second):
    import sys
    import types

    import savanna.reproduce as rp

    reg = {}
    for key, fn in (("fake-a", first), ("fake-b", second)):
        mod = types.ModuleType(f"fake_paper_{key.replace('-', '_')}")
        mod.KEY, mod.TITLE, mod.reproduce = key, key, fn
        monkeypatch.setitem(sys.modules, mod.__name__, mod)
        reg[key] = mod.__name__
    monkeypatch.setattr(rp, "registry", lambda: reg)
    return rp


def _tiny_batch(ctx):
    b = ctx.run("tiny", [ctx.job("tiny", override(TINY, {"seed": 1}), {"qdisc": "droptail", "rep": 1})])
    return int(b.query("count(*) AS n")["n"].iloc[0])


def test_quick_all_starts_the_next_papers_runs_during_the_previous_papers_analysis(tmp_path, monkeypatch):
    import time

    def first(ctx):
        _tiny_batch(ctx)  # its runs are done: from here on, analysis only
        deadline = time.time() + 60
        while not (tmp_path / "fake-b" / "started").exists() and time.time() < deadline:
            time.sleep(0.05)
        seen = (tmp_path / "fake-b" / "started").exists()
        return rp.Outcome("A", "", [], [], meta={"saw the next paper start": str(seen)})

    def second(ctx):
        (ctx.out_dir / "started").write_text("")
        _tiny_batch(ctx)
        return rp.Outcome("B", "", [], [])

    rp = _two_papers(monkeypatch, first, second)
    t0 = time.time()
    written = rp.run("all", quick=True, out=tmp_path, workers=1, progress=False)
    assert "| saw the next paper start | True |" in (tmp_path / "fake-a" / "report.md").read_text()
    assert time.time() - t0 < 50 and set(written) == {"fake-a", "fake-b", "index"}
    doc = json.loads((tmp_path / "timings.json").read_text())
    assert [t["paper"] for t in doc["papers"]] == ["fake-a", "fake-b"] and doc["peak_rss_bytes"] > 10e6


def test_a_papers_cpu_tail_is_its_analysis_after_its_last_batch(tmp_path, monkeypatch):
    import time

    def first(ctx):
        _tiny_batch(ctx)
        t = time.process_time()
        while time.process_time() - t < 0.6:  # an analysis no run overlaps
            pass
        return rp.Outcome("A", "", [], [])

    def second(ctx):
        return rp.Outcome("B", "", [], [])

    rp = _two_papers(monkeypatch, first, second)
    rp.run("all", quick=True, out=tmp_path, workers=1, progress=False)
    a = json.loads((tmp_path / "timings.json").read_text())["papers"][0]
    # The run (in this process: one worker) comes before the tail, the busy loop in it.
    assert 0.6 <= a["cpu_tail_s"] < a["cpu_parent_s"]


def test_full_all_runs_the_papers_one_after_another(tmp_path, monkeypatch):
    def first(ctx):
        import time

        _tiny_batch(ctx)
        time.sleep(1.5)  # an analysis, with no batch left: when quick mode starts the next paper
        return rp.Outcome("A", "", [], [])

    def second(ctx):
        done = (tmp_path / "fake-a" / "report.md").is_file()
        return rp.Outcome("B", "", [], [], meta={"previous paper done": str(done)})

    rp = _two_papers(monkeypatch, first, second)
    rp.run("all", quick=False, out=tmp_path, workers=1, progress=False)
    assert "| previous paper done | True |" in (tmp_path / "fake-b" / "report.md").read_text()


def test_a_papers_error_in_all_is_the_commands_error(tmp_path, monkeypatch):
    from savanna.reproduce.common import RunFailed

    def bad_input(ctx):
        raise ReproduceError("traffic: no such block")

    def fine(ctx):
        return rp.Outcome("B", "", [], [])

    rp = _two_papers(monkeypatch, bad_input, fine)
    with pytest.raises(ReproduceError, match="traffic: no such block"):
        rp.run("all", quick=True, out=tmp_path / "a", workers=1, progress=False)

    def crash(ctx):
        raise ZeroDivisionError("a bug")

    rp = _two_papers(monkeypatch, fine, crash)
    with pytest.raises(RunFailed, match="fake-b"):
        rp.run("all", quick=True, out=tmp_path / "b", workers=1, progress=False)


def test_memory_watch_counts_the_children_of_the_process(tmp_path):
    import subprocess
    import sys
    import time

    from savanna.reproduce.memwatch import Watch, tree_rss_bytes

    alone = tree_rss_bytes(os.getpid())
    assert alone and alone > 0
    # A child holding 200 MB it has written to (resident, not just reserved).
    code = "b = bytearray(200_000_000); import time; time.sleep(5)"
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        with Watch(interval_s=0.05) as w:
            deadline = time.time() + 60
            while w.peak < alone + 150e6 and time.time() < deadline:
                time.sleep(0.1)
    finally:
        child.kill()
        child.wait()
    assert w.peak >= alone + 150e6


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps_rollup"), reason="Linux /proc only")
def test_proportional_memory_counts_a_page_shared_by_a_forked_child_once():
    # A child holding 200 MB it has written to, which forks a grandchild that shares those
    # pages (copy-on-write, untouched): the sum of resident sets counts them twice, the
    # sum of proportional sets once.
    import subprocess
    import sys
    import time

    from savanna.reproduce import memwatch

    code = (
        "import os, time\n"
        "b = bytearray(200_000_000)\n"
        "if os.fork() == 0:\n"
        "    time.sleep(30); os._exit(0)\n"
        "time.sleep(30)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            rss, pss = memwatch.tree_rss_bytes(child.pid), memwatch.tree_pss_bytes(child.pid)
            if rss and rss > 380e6:
                break
            time.sleep(0.1)
        rss, pss = memwatch.tree_rss_bytes(child.pid), memwatch.tree_pss_bytes(child.pid)
        with memwatch.Watch(child.pid, interval_s=0.05, pss=True) as w:
            time.sleep(0.2)
    finally:
        import psutil

        for p in psutil.Process(child.pid).children(recursive=True):
            p.kill()
        child.kill()
        child.wait()
    assert rss > 380e6, rss  # 200 MB in each of the two processes
    assert 190e6 < pss < 290e6, pss  # the same 200 MB once, plus two interpreters
    assert w.peak >= 380e6 and 190e6 < w.peak_pss < 290e6


def test_memory_of_a_tree_counts_grandchildren_and_agrees_with_psutil():
    import subprocess
    import sys
    import threading
    import time

    import psutil
    from savanna.reproduce import memwatch

    alone = memwatch.tree_rss_bytes(os.getpid())
    # A child whose own child (this process's grandchild) holds 200 MB it has written to.
    inner = "b = bytearray(200_000_000); import time; time.sleep(20)"
    code = f"import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', {inner!r}]); time.sleep(20)"
    # Started by a thread other than the main one (as the pool's workers are).
    started, stop = [], threading.Event()

    def starter():
        started.append(subprocess.Popen([sys.executable, "-c", code]))
        stop.wait(60)

    th = threading.Thread(target=starter)
    th.start()
    while not started:
        time.sleep(0.01)
    child = started[0]
    try:
        deadline = time.time() + 60
        while (memwatch.tree_rss_bytes(os.getpid()) or 0) < alone + 150e6 and time.time() < deadline:
            time.sleep(0.1)
        got = memwatch.tree_rss_bytes(os.getpid())
        me = psutil.Process()
        want = sum(p.memory_info().rss for p in [me, *me.children(recursive=True)])
    finally:
        for p in psutil.Process(child.pid).children(recursive=True):
            p.kill()
        child.kill()
        child.wait()
        stop.set()
        th.join()
    assert got >= alone + 150e6
    assert abs(got - want) < 0.05 * want


def test_batches_run_ahead_of_the_analysis_and_a_query_waits_for_all_runs_of_its_dataset(tmp_path, monkeypatch):
    from savanna.reproduce import common
    from savanna.reproduce.common import Batch, RunFailed

    def batches(ctx):
        first = ctx.run("exp", [ctx.job("exp", override(TINY, {"seed": s}), {"rep": s}) for s in (1, 2)])
        more = ctx.run("exp", [ctx.job("exp", override(TINY, {"seed": 3}), {"rep": 3})])
        both = Batch("exp", first.dataset, first.run_ids + more.run_ids)
        return both.query("rep, count(*) AS n, sum(fct_s) AS s", group_by="rep")

    ahead = Context(key="t", out_dir=tmp_path / "ahead", quick=True, workers=1, progress=False, ahead=True)
    try:
        got = batches(ahead)
        ahead.settle()
    finally:
        ahead.close()
    want = batches(Context(key="t", out_dir=tmp_path / "now", quick=True, workers=1, progress=False))
    assert list(got["rep"]) == [1, 2, 3]
    pd.testing.assert_frame_equal(got, want)
    assert [b.done for b in ahead.batches] == [2, 1]
    # A run that fails ahead is reported where its runs are read (or by settle).
    bad = Context(key="t", out_dir=tmp_path / "bad", quick=True, workers=1, progress=False, ahead=True)
    monkeypatch.setattr(common, "_CORE_STAT", (-1, -1))  # as if the core were rebuilt meanwhile
    try:
        b = bad.run("exp", [bad.job("exp", override(TINY, {"seed": 1}), {"rep": 1})])
        with pytest.raises(RunFailed, match="rebuilt"):
            b.query("count(*) AS n")
        with pytest.raises(RunFailed, match="rebuilt"):
            bad.settle()
    finally:
        bad.close()


def test_a_core_rebuilt_during_a_reproduction_stops_it(tmp_path, monkeypatch):
    from savanna.reproduce import common
    from savanna.reproduce.common import RunFailed

    ctx = Context(key="t", out_dir=tmp_path, quick=True, workers=1, progress=False)
    jobs = [ctx.job("exp", override(TINY, {"seed": 1}), {"qdisc": "droptail", "rep": 1})]
    assert not common.core_changed()
    monkeypatch.setattr(common, "_CORE_STAT", (-1, -1))  # as if the file on disk changed
    with pytest.raises(RunFailed, match="rebuilt"):
        ctx.run("exp", jobs)


def test_store_side_common_mean_fct_matches_the_pandas_definition(quick_run):
    # _common_mean_fct (the 100 Mb/s and buffer-size figures, aggregated in DuckDB one
    # replication at a time) must give the mean FCT of exactly the flows common_finished
    # keeps, per (qdisc, load, rep).
    from savanna import store
    from savanna.reproduce.common import Batch

    out, proc = quick_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    ds = out / "runs" / "loads-100mbps"
    ids = sorted(store.query(ds, "SELECT DISTINCT run_id FROM flows")["run_id"])
    batch = Batch("loads-100mbps", ds, ids)
    warm = fq.plan(True).warmup_100_s
    got = fq._common_mean_fct(batch, ["load"], fq.DISC_100M, f"{{runs}} AND source = 'forward' AND start_s >= {warm}")
    f = store.query(ds, "SELECT qdisc, load, rep, flow_id, fct_s, start_s FROM flows WHERE source = 'forward'")
    want = (
        fq.common_finished(f[f["start_s"] >= warm], fq.DISC_100M)
        .groupby(["qdisc", "load", "rep"])["fct_s"]
        .agg(["mean", "size"])
        .reset_index()
    )
    m = want.merge(got, on=["qdisc", "load", "rep"], how="outer", indicator=True)
    assert (m["_merge"] == "both").all() and len(m) == len(fq.DISC_100M) * len(set(f["load"])) * len(set(f["rep"]))
    assert (m["size"] == m["n"]).all()
    assert np.allclose(m["mean"], m["lat"], rtol=1e-12, atol=0)


def test_reproductions_query_the_store_deterministically(quick_run):
    # Byte-identical claims from the same runs need float aggregates added in one order
    # (one DuckDB thread: with several, the full-mode claims changed in their last digits
    # between analyses) and grouped rows in one order (pandas sums over them later).
    from savanna import store
    from savanna.reproduce.common import Batch, query_store

    out, proc = quick_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    ds = out / "runs" / "loads-10mbps"
    assert int(query_store(ds, "SELECT current_setting('threads') AS t")["t"][0]) == 1
    ids = sorted(store.query(ds, "SELECT DISTINCT run_id FROM flows")["run_id"])
    g = Batch("loads-10mbps", ds, ids).query("qdisc, load, rep, count(*) AS n", group_by="qdisc, load, rep")
    assert len(g) > 1
    assert g.equals(g.sort_values(["qdisc", "load", "rep"]).reset_index(drop=True))


# ---- shared helpers (savanna.reproduce.common) ---------------------------------------------------


def test_ecdf_starts_at_zero_then_gives_the_exact_cdf_at_each_distinct_value():
    from savanna.reproduce.common import ecdf

    x, y = ecdf([3.0, 1.0, 2.0, 2.0])
    assert list(x) == [1.0, 1.0, 2.0, 3.0] and list(y) == [0.0, 0.25, 0.75, 1.0]
    x, y = ecdf([])
    assert len(x) == 0 and len(y) == 0


def test_ecdf_thins_a_large_sample_but_every_point_kept_is_on_the_curve():
    import numpy as np
    from savanna.reproduce.common import ecdf

    v = np.random.default_rng(7).lognormal(size=20_000).round(2)  # many ties
    x, y = ecdf(v, points=500)
    assert y[0] == 0.0 and x[0] == x[1] == v.min()
    x, y = x[1:], y[1:]
    assert len(x) < 1000 and x[-1] == v.max() and y[-1] == 1.0 and np.all(np.diff(x) > 0)
    assert np.array_equal(y, np.array([(v <= xi).mean() for xi in x]))
    assert x[-5:].tolist() == np.unique(v)[-5:].tolist()  # the largest values are all kept


def test_block_finds_a_traffic_block_by_name_and_names_a_missing_one():
    from savanna.reproduce.common import block

    sc = {"name": "s", "traffic": [{"name": "a"}, {"name": "b"}]}
    assert block(sc, "b") == 1
    with pytest.raises(ReproduceError, match="'c' not in scenario s"):
        block(sc, "c")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_release_memory_gives_a_freed_heap_back_to_the_system():
    # What a paper's analysis leaves: many small blocks, freed, which glibc keeps mapped.
    import psutil
    from savanna.reproduce.memwatch import release_memory

    proc = psutil.Process()
    blocks = [np.ones(10) for _ in range(2_000_000)]
    del blocks
    freed = proc.memory_info().rss
    release_memory()
    after = proc.memory_info().rss
    assert after < freed - 100e6  # free() alone kept at least that much


def test_release_memory_starts_no_process(monkeypatch):
    # A child forked from a large analysis counts as a copy of its pages in the reported
    # peak (issue 21): release_memory must find malloc_trim without running ldconfig.
    import subprocess

    from savanna.reproduce import memwatch

    def no_child(*a, **k):
        raise AssertionError("release_memory started a process")

    memwatch._malloc_trim.cache_clear()
    monkeypatch.setattr(subprocess, "Popen", no_child)
    monkeypatch.setattr(os, "fork", no_child)
    memwatch.release_memory()
    if sys.platform.startswith("linux"):
        assert memwatch._malloc_trim() is not None
