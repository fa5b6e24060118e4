"""Tests of ``savanna reproduce tournament`` (issue 6, part 5): registered but left out of
``all``; every discipline's scenario (common buffer, classifier on the edge node, TCP
settings, same flows for every discipline); the web mix's session counts; the per-run
metrics against a direct computation from ``savanna.run``; the ranking rule; and a tiny
end-to-end run (every figure, table and claim in both reports)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import savanna
import savanna.reproduce as rp
from savanna.analysis.stats import jain
from savanna.reproduce import tournament as T
from savanna.reproduce.common import Context, load_scenario, scenarios_dir


def test_registered_but_not_part_of_all(monkeypatch, tmp_path):
    assert "tournament" in rp.papers()
    ran = []

    def fake_one(key, modname, quick, out_dir, workers, progress, cmd, timings):
        ran.append(key)
        zero = ("wall_s", "simulation_s", "analysis_s", "cpu_parent_s", "cpu_workers_s")
        timings.append({"paper": key, "runs": 0, "reused": 0, "peak_rss_bytes": 0} | dict.fromkeys(zero, 0.0))
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "claims.json").write_text(json.dumps({"verdicts": {}}))
        return out_dir / "report.html"

    monkeypatch.setattr(rp, "_one", fake_one)
    written = rp.run("all", quick=True, out=tmp_path, progress=False)
    assert "tournament" not in ran and "tournament" not in written
    assert set(ran) == set(rp.papers()) - {"tournament"} and ran
    ran.clear()
    rp.run("tournament", quick=True, out=tmp_path / "t", progress=False)
    assert ran == ["tournament"]


@pytest.mark.parametrize("workload", list(T.WORKLOADS))
def test_every_discipline_gets_the_common_buffer_and_its_classifier_on_the_edge(workload):
    base = load_scenario(T.WORKLOADS[workload]["scenario"])
    b = T.common_buffer(base)
    scs = {d: T.scenario(workload, d, 0.9, "papers", 3, 50.0) for d in T.DISCS}
    for d, sc in scs.items():
        q = sc["topology"]["bottleneck_queue"]
        assert q["type"] == d
        assert q.get("limit_pkts", q.get("limit_short_pkts", 0) + q.get("limit_long_pkts", 0)) == b, d
        cls = sc.get("classifiers", [])
        if d in T.CLASSIFIER:
            assert [c["type"] for c in cls] == [T.CLASSIFIER[d]]
            assert cls[0]["node"] == T.WORKLOADS[workload]["edge"]
        else:
            assert cls == []
        savanna.validate(sc, base_dir=scenarios_dir())
    # the same flows for every discipline (the seed rule): only the queue and classifier differ
    strip = lambda sc: {k: v for k, v in sc.items() if k not in ("topology", "classifiers")}  # noqa: E731
    assert all(strip(sc) == strip(scs["droptail"]) for sc in scs.values())
    assert scs["droptail"]["seed"] == 3 and scs["droptail"]["tcp"]["ecn"] is False


def test_buffers_are_one_bandwidth_delay_product():
    # 10 Mb/s of 1500 B packets x a mean RTT of 2 (2 x 25 ms + 1 ms); 8 Mb/s of 500 B x 100 ms.
    assert T.common_buffer(load_scenario(T.SC_PARETO)) == round(10e6 / 12000 * 0.102)
    assert T.common_buffer(load_scenario(T.SC_WEB)) == 200


def test_tcp_settings_and_thresholds_scale_with_the_buffer():
    p = T.scenario("pareto", "rio", 0.5, "papers", 1, 10.0)
    t = T.scenario("pareto", "rio", 0.5, "today", 1, 10.0)
    assert (p["tcp"]["init_cwnd"], p["tcp"]["ito_s"]) == (2, 3.0)
    assert (t["tcp"]["init_cwnd"], t["tcp"]["ito_s"]) == (10, 1.0)
    for b in (40, 200):
        rio = T.queue_for("rio", b, 1000.0)
        assert rio["min_th_short"] == pytest.approx(0.15 * b) and rio["max_th_long"] == pytest.approx(0.5 * b)
        drr = T.queue_for("drr", b, 1000.0)
        assert drr["limit_short_pkts"] + drr["limit_long_pkts"] == b
    assert T.queue_for("pi", 85, 2000.0)["q_ref_pkts"] == pytest.approx(30.0)  # 15 ms at 2000 packets/s
    with pytest.raises(ValueError, match="discipline must be one of"):
        T.queue_for("wfq", 10, 1.0)
    with pytest.raises(ValueError, match="workload must be one of"):
        T.scenario("mixed", "red", 0.5, "papers", 1, 10.0)
    with pytest.raises(ValueError, match="tcp must be one of"):
        T.scenario("web", "red", 0.5, "ns3", 1, 10.0)


def test_web_sessions_offer_the_requested_load():
    from savanna.reproduce.guo_matta_2001 import offered_load

    prev = 0
    for load in (0.5, 0.8, 0.95):
        sc = T.scenario("web", "droptail", load, "papers", 1, 10.0)
        web = next(t for t in sc["traffic"] if t["type"] == "web")
        assert web["sessions"] > prev
        prev = web["sessions"]
        # one session is about 0.5% of the link, so rounding moves the load by less than that
        assert abs(offered_load(sc, "clients1") - load) < 0.005


def _direct(res, duration_s, warmup_s, bottleneck):
    f = res.flows
    f = f[
        (f["kind"] == "tcp")
        & (f["source"] != "reverse")
        & (f["start_s"] >= warmup_s)
        & (f["start_s"] < 0.9 * duration_s)
    ]
    s = f[f["size_pkts"] <= T.SHORT_MAX_PKTS]
    done = s[s["fct_s"].notna()]
    lg = f[f["size_pkts"] > T.LONG_MIN_PKTS]
    t = lg["fct_s"].fillna(duration_s - lg["start_s"])
    g = lg["delivered_pkts"] * 1500 * 8 / 1e6 / t
    q = res.queues[(res.queues["queue"] == bottleneck) & (res.queues["t_s"] >= warmup_s)]
    return {
        "short_mean_s": done["fct_s"].mean(),
        "short_p99_s": float(np.percentile(done["fct_s"], 99)),
        "short_unfinished": 1 - len(done) / len(s),
        "jain_short": jain((done["base_rtt_s"] / done["fct_s"]).to_numpy()),
        "long_goodput_mbps": g.mean(),
        "jain_long": jain(g.to_numpy()),
        "utilisation": q["utilisation"].mean(),
    }


def test_run_metrics_match_a_direct_computation(tmp_path):
    ctx = Context(key="tournament", out_dir=tmp_path, quick=True, workers=1, progress=False)
    dur, warm = 40.0, 5.0
    jobs = [
        ctx.job(
            "pareto",
            T.scenario("pareto", d, 0.9, "papers", 1, dur),
            {"disc": d, "load": 0.9, "tcp": "papers", "seed": 1},
        )
        for d in ("droptail", "las")
    ]
    m = T.run_metrics(ctx.run("pareto", jobs), "pareto", dur, warm, 1500).set_index("disc")
    for d in ("droptail", "las"):
        res = savanna.run(T.scenario("pareto", d, 0.9, "papers", 1, dur), base_dir=scenarios_dir())
        want = _direct(res, dur, warm, "left->right")
        for k, v in want.items():
            assert m.loc[d, k] == pytest.approx(v, rel=1e-9), (d, k)
    assert m.loc["las", "short_mean_s"] < m.loc["droptail", "short_mean_s"]


def test_ranking_prefers_low_fct_and_high_goodput():
    rows = []
    for d, fct, gp in (("a", 1.0, 1.0), ("b", 0.5, 2.0), ("c", 2.0, 0.5)):
        r = {"workload": "pareto", "disc": d, "load": 0.9, "tcp": "papers", "n": 2}
        for col, *_ in T.METRICS:
            r[col] = r[col + "_lo"] = r[col + "_hi"] = 0.5
        r["short_mean_s"], r["short_p99_s"], r["long_goodput_mbps"] = fct, fct, gp
        rows.append(r)
    rk = T.ranking(pd.DataFrame(rows), "pareto", 0.9, "papers")
    assert rk["disc"].tolist() == ["b", "a", "c"]
    assert rk.set_index("disc").loc["b", "rank_short_mean_s"] == 1
    assert rk.set_index("disc").loc["b", "rank_jain_long"] == 1  # ties share the best rank


def test_claims_are_declared_with_a_direction_and_documented():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "reproduce.md").read_text()
    ids = [c.id for c in T.CLAIMS]
    assert len(ids) == len(set(ids))
    for c in T.CLAIMS:
        assert c.direction in (">", "<") and c.paper_value is None
        assert f"`{c.id}`" in doc


TINY = T.Plan(
    pareto_loads=(0.5, T.HI_PARETO),
    pareto_duration_s=20.0,
    pareto_warmup_s=4.0,
    web_loads=(T.HI_WEB,),
    web_duration_s=30.0,
    web_warmup_s=5.0,
    reps=2,
)


def test_tiny_tournament_end_to_end(monkeypatch, tmp_path):
    monkeypatch.setattr(T, "plan", lambda quick: TINY)
    written = rp.run("tournament", quick=True, out=tmp_path, workers=2, progress=False)
    assert written == {"tournament": tmp_path / "report.html"}
    md = (tmp_path / "report.md").read_text()
    html = (tmp_path / "report.html").read_text()
    data = json.loads((tmp_path / "claims.json").read_text())
    figs = {f["id"] for f in data["figures"]}
    want = {"overview"} | {f"{w}-{col}" for w in T.WORKLOADS for col, *_ in T.METRICS}
    assert figs == want
    for f in data["figures"]:
        assert (tmp_path / f["png"]).is_file() and (tmp_path / f["svg"]).is_file()
        assert f'id="fig-{f["id"]}"' in html
    assert html.count('src="data:image/png;base64,') == len(want)
    for w in T.WORKLOADS:
        for tcp in T.TCP:
            assert f"Ranking: {T.WORKLOADS[w]['title']}" in md and T.TCP_NAMES[tcp] in md
    assert md.count("## Ranking:") == 4
    assert "## Today's TCP against the papers'" in md and "## Workloads" in md
    for name in T.NAMES.values():
        assert f"| {name} |" in md
    assert [c["id"] for c in data["claims"]] == [c.id for c in T.CLAIMS]
    for c in data["claims"]:
        assert c["n"] == 2 and c["mean"] is not None, c
        assert f'id="claim-{c["id"]}"' in html
    m = pd.read_csv(tmp_path / "metrics.csv")
    assert len(m) == len(T.DISCS) * 2 * (len(TINY.pareto_loads) + len(TINY.web_loads)) * 2
    assert m["utilisation"].between(0, 1).all() and m["short_mean_s"].gt(0).all()
    for bad in ("http://", "https://", "file:"):
        assert bad not in html
