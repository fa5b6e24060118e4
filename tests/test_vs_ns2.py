"""CI-sized smoke test of the ns-2.35 side-by-side comparison (`benchmarks/vs_ns2.py
--quick`): both simulators carry the same flows, and flows that lost nothing in either
finish at the same instant in both (the FCT methods agree, so the per-bucket comparison is
about the models). The full comparison (500 s, three loads, three seeds) is a benchmark:
`python3 benchmarks/vs_ns2.py`. Skipped when `ns` is not installed (`apt-get install ns2`;
the benchmark itself installs it when run as root)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    shutil.which("ns") is None, reason="ns-2.35 (`ns`) not installed: apt-get install -y ns2"
)


def test_quick_comparison_with_ns2(tmp_path):
    out = tmp_path / "vs.md"
    p = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "vs_ns2.py"), "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    md = out.read_text()
    assert "## Speed and memory" in md
    for name in ("dumbbell-droptail load 0.8", "dumbbell-red load 0.8"):
        assert f"### {name}" in md
    rows = re.findall(r"\| flows finished \| (\d+) \| (\d+) \|", md)
    assert len(rows) == 2, rows
    for sv, ns in rows:
        assert int(ns) > 100
        assert abs(int(sv) - int(ns)) <= 0.05 * int(ns), (sv, ns)
    util = re.findall(r"\| bottleneck utilisation \| ([0-9.]+) \| ([0-9.]+) \|", md)
    for row in util:
        assert all(0.2 < float(x) < 1.0 for x in row), row


def test_lossless_flows_finish_at_the_same_instant_in_both(tmp_path):
    """A flow with no loss in either simulator has a deterministic FCT (handshake, slow
    start, transmission and propagation); the two must agree to a few microseconds, which
    checks the ns-2 script's topology, packet sizes, queue placement and FCT reckoning."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import vs_ns2

    sc = vs_ns2.scenario("dumbbell-red.toml", 0.5, 1, 20.0, handshake=True)
    _, _, _, sv = vs_ns2.run_savanna(sc, tmp_path / "sv")
    _, _, _, ns = vs_ns2.run_ns2(vs_ns2.ensure_ns(), sc, sv, tmp_path / "ns.csv", "reuse", True, False)
    j = sv.set_index("flow_id").join(ns.set_index("flow_id"), how="inner", suffixes=("", "_ns"))
    clean = j[(j["retransmits"] == 0) & (j["retransmits_ns"] == 0) & (j["syn_drops"] == 0)]
    # Lossless in both, and alone enough that queueing did not differ: most such flows.
    assert len(clean) > 100
    close = ((clean["fct_s"] - clean["fct_s_ns"]).abs() < 1e-4).mean()
    assert close > 0.8, close
