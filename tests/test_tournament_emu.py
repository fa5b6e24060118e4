"""Tests of the tournament's emulated column (tournament_emu.py, issue 22) that need no
root: when it runs and why not, which disciplines it leaves out, its scenarios, its claims
from given frames, the metrics over run directories, and its table, figures and text from
simulated stand-ins. One optional test emulates for real (root and
SAVANNA_TOURNAMENT_EMULATE=1 only)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import savanna
from savanna.reproduce import tournament as T
from savanna.reproduce import tournament_emu as E
from savanna.reproduce.common import Context, Report, plot_style, scenarios_dir


def test_it_runs_only_when_asked_for_and_as_root():
    ok, why = E.status(env={}, euid=0)
    assert not ok and E.ENV in why and "not asked for" in why
    ok, why = E.status(env={E.ENV: "1"}, euid=1000)
    assert not ok and "not root" in why
    ok, why = E.status(env={E.ENV: "0"}, euid=0)
    assert not ok


def test_the_column_leaves_out_what_emulate_refuses_and_says_why():
    assert "drr" in E.REFUSED and "oracle" in E.REFUSED["drr"]
    assert "dctcp" in E.REFUSED["step"] and "dualpi2" in E.DISCS  # DualPI2 with classic senders
    assert "ect1" in E.COLUMNS_NOT_RUN
    assert set(E.DISCS) | set(E.REFUSED) == set(T.DISCS)
    assert not set(E.DISCS) & set(E.REFUSED)
    for d in E.DISCS:
        sc = E.scenario(d, 0.9, 1, 60.0)
        assert sc == T.scenario("pareto", d, 0.9, "linux", 1, 60.0)
        assert sc["tcp"]["profile"] == "linux" and sc["topology"]["bottleneck_rate_mbps"] == 10.0
        # emulate refuses the classifiers that read a flow's true size
        assert all(c["type"] not in ("oracle", "remaining") for c in sc.get("classifiers", []))
    with pytest.raises(ValueError, match="oracle"):
        E.scenario("drr", 0.9, 1, 60.0)
    for d in ("pfabric", "sppifo", "aifo"):  # behind the remaining-size tagger
        assert T.scenario("pareto", d, 0.9, "linux", 1, 60.0)["classifiers"][0]["type"] == "remaining"
        with pytest.raises(ValueError, match="remaining-size classifier"):
            E.scenario(d, 0.9, 1, 60.0)


def test_degraded_is_vs_linux_rule():
    assert not E.degraded({"achieved_over_configured": 0.999, "delivery_lateness": {"p99_us": 150}})
    assert E.degraded({"achieved_over_configured": 0.98, "delivery_lateness": {"p99_us": 50}})
    assert E.degraded({"achieved_over_configured": 1.0, "delivery_lateness": {"p99_us": 900}})
    assert not E.degraded({"achieved_over_configured": None, "delivery_lateness": {}})


def test_claims_are_declared_with_a_direction_and_documented():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "reproduce.md").read_text()
    ids = [c.id for c in E.CLAIMS]
    assert len(ids) == len(set(ids)) and not set(ids) & {c.id for c in T.CLAIMS}
    for c in E.CLAIMS:
        assert c.direction == ">" and c.paper_value is None
        assert f"`{c.id}`" in doc


def _frame(slow: dict[tuple[str, str], float], p99: dict[tuple[str, str], float] | None = None) -> pd.DataFrame:
    rows = []
    for (d, tcp), v in slow.items():
        rows.append(
            {"workload": "pareto", "disc": d, "tcp": tcp, "load": T.HI_PARETO, "seed": 1}
            | {c: 1.0 for c, *_ in T.METRICS}
            | {"short_slow_mean": v, "short_slow_p99": (p99 or {}).get((d, tcp), v)}
        )
    return pd.DataFrame(rows)


def test_claims_from_given_frames():
    S, M = E.SIM, E.EMU
    slow = {
        ("droptail", S): 10.0,
        ("droptail", M): 12.0,
        ("favorqueue", S): 8.0,  # +20%
        ("favorqueue", M): 9.0,  # +25%: same sign
        ("rio", S): 9.0,  # +10%
        ("rio", M): 13.2,  # -10%: opposite sign
        ("las", S): 5.0,
        ("las", M): 6.0,
        ("red", S): 11.0,  # -10%
        ("red", M): 14.0,  # -17%: same sign
    }
    m = _frame(slow, p99={("droptail", S): 100.0, ("droptail", M): 100.0, ("las", S): 50.0, ("las", M): 80.0})
    s = E.claim_samples(m)
    assert s["emu-favorqueue"] == pytest.approx([25.0])
    assert s["emu-favorqueue-sign"] == pytest.approx([25.0])
    assert s["emu-rio-sign"] == pytest.approx([-10.0])
    assert s["emu-las-sign"] == pytest.approx([20.0])
    assert s["emu-signs"] == pytest.approx([75.0])  # favorqueue, las, red agree; rio does not
    assert s["emu-rank"][0] == pytest.approx(0.9)  # one swap (DropTail, RIO-PS) of five
    rep = Report(E.CLAIMS, Path("."))
    rep.samples.update(s)
    v = {c.id: c.verdict for c in rep.claims()}
    assert v["emu-favorqueue-sign"] == "reproduced" and v["emu-rio-sign"] == "not reproduced"
    assert v["emu-signs"] == "reproduced" and v["emu-rank"] == "reproduced"


def test_claims_are_empty_without_the_emulated_rows():
    m = _frame({("droptail", E.SIM): 10.0, ("favorqueue", E.SIM): 8.0})
    assert all(v == [] for v in E.claim_samples(m).values())


def test_intro_says_why_the_column_did_not_run():
    txt = E.intro(False, "not asked for: it runs only with X", None)
    assert "not run, not asked for" in txt and "DRR" in txt and all(c.id in txt for c in E.CLAIMS)


def test_metrics_table_and_figure_from_run_directories(tmp_path):
    """Simulated runs stand in for emulated ones (the same output files): DirBatch gives
    tournament.run_metrics' rows, and the table, figures and text are written."""
    p = E.EmuPlan(loads=(0.5,), duration_s=6.0, warmup_s=1.0, reps=1, parallel=1)
    runs = []
    for d in ("droptail", "favorqueue"):
        for tcp in (E.SIM, E.EMU):
            out = tmp_path / f"{d}-{tcp}"
            savanna.run(E.scenario(d, 0.5, 1, p.duration_s), out=out, base_dir=scenarios_dir())
            runs.append(({"disc": d, "load": 0.5, "tcp": tcp, "seed": 1}, out))
    b = E.DirBatch(runs)
    sc0 = T.base_scenario("pareto")
    m = T.run_metrics(b, "pareto", p.duration_s, p.warmup_s, sc0)
    assert len(m) == 4 and set(m["tcp"]) == {E.SIM, E.EMU}
    same = m.set_index(["disc", "tcp"])["short_slow_mean"]
    assert same[("droptail", E.SIM)] == pytest.approx(same[("droptail", E.EMU)])
    bk = T.bucket_metrics(b, "pareto", p.duration_s, p.warmup_s, sc0)
    acc = pd.DataFrame(
        [
            {"disc": d, "load": 0.5, "seed": 1, "achieved_over_configured": 1.0, "lateness_p99_us": 90.0}
            | {"degraded": False, "load_avg_before": 3.0, "load_avg_after": 4.0}
            for d in ("droptail", "favorqueue")
        ]
    )
    e = E.Emulated(p, m, bk, acc)
    rep = Report(E.CLAIMS, tmp_path, plot_style(height=None))
    E.table(rep, e)
    E.figures(rep, e)
    assert len(rep.tables) == 1 and [f.id for f in rep.figures] == ["tournament-emulated-buckets-0.5"]
    rows = {r[0]: r for r in rep.tables[0].rows}
    assert rows[T.NAMES["favorqueue"]][6] == "yes" and rows[T.NAMES["droptail"]][-1] == "ok"
    assert (tmp_path / "emulated.csv").is_file()
    txt = E.intro(True, "", e)
    assert "0 of 2 runs degraded" in txt and "load average 3.0 to 4.0" in txt


@pytest.mark.skipif(os.geteuid() != 0 or os.environ.get(E.ENV) != "1", reason=f"emulates: root and {E.ENV}=1 only")
def test_one_emulated_run(tmp_path, monkeypatch):
    monkeypatch.setattr(E, "DISCS", ["droptail"])
    ctx = Context("tournament", tmp_path, quick=True, workers=1, progress=False)
    e = E.run(ctx, E.EmuPlan(loads=(0.5,), duration_s=8.0, warmup_s=1.0, reps=1, parallel=1))
    assert set(e.metrics["tcp"]) == {E.SIM, E.EMU}
    assert np.isfinite(e.accuracy["achieved_over_configured"].astype(float)).all()
    assert not [n for n in os.popen("ip netns list").read().split() if n.startswith(f"sve{os.getpid()}")]
