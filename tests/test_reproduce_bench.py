"""benchmarks/bench_reproduce.py's report (issue 21): each paper's peak memory and the
whole command's as a ratio to the 2 GB target, beside its times."""

from __future__ import annotations

import importlib.util

from conftest import REPO_ROOT


def _bench():
    spec = importlib.util.spec_from_file_location("bench_reproduce", REPO_ROOT / "benchmarks" / "bench_reproduce.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(paper: str, peak: int) -> dict:
    return {
        "paper": paper,
        "wall_s": 100.0,
        "simulation_s": 80.0,
        "analysis_s": 20.0,
        "runs": 10,
        "reused": 0,
        "cpu_workers_s": 120.0,
        "cpu_parent_s": 15.0,
        "peak_rss_bytes": peak,
    }


def test_bench_table_gives_each_peak_as_a_ratio_to_the_2gb_target(capsys):
    bench = _bench()
    rows = [_row("favorqueue-2013", 1_620_000_000), _row("tokuda-2002", 3_000_000_000)]
    free = bench._table("t", rows, (200.0, 270.0, 3_100_000_000, 1_900_000_000), workers=2)
    out = capsys.readouterr().out.splitlines()
    assert "peak/2GB" in out[2]  # a blank line, the title, the header
    fq = next(x for x in out if x.startswith("favorqueue-2013"))
    tk = next(x for x in out if x.startswith("tokuda-2002"))
    whole = next(x for x in out if x.startswith("whole command"))
    assert fq.split()[-1] == "0.81" and fq.split()[-2:-1] == ["GB"]
    assert tk.split()[-1] == "1.50"
    assert whole.split()[-1] == "1.55"
    # the whole command's peak counted each page once (proportional sets), as a ratio too
    pss = next(x for x in out if "each page once" in x)
    assert pss.split()[-3:] == ["1.90", "GB", "0.95"]
    # the free-core estimate: workers' CPU over the workers plus the main process's
    assert free == 2 * (120.0 / 2 + 15.0)
