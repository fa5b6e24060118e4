"""CI-sized smoke test of the ns-3 side-by-side comparison: build the ns-3 program against
ns-3 3.44 from PyPI, run the 20 s quick comparison, and check that both simulators carried
the same flows to similar ends, and that the diagnostic ns-3 variants (`--recovery-check`:
RFC 6582's duplicate-ACK credit and recovery point restored) still build and run. The full
comparison (500 s, three loads, three seeds) is a
benchmark: `python3 benchmarks/vs_ns3.py`."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quick_comparison_with_ns3(tmp_path):
    subprocess.run(["bash", str(ROOT / "benchmarks" / "ns3" / "build.sh")], check=True, cwd=ROOT)
    out = tmp_path / "vs.md"
    p = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "vs_ns3.py"), "--quick", "--recovery-check", "--out", str(out)],
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
    # Same flow list in both: the numbers of finished flows agree closely.
    for sv, _b, ns in re.findall(r"\| flows finished \| (\d+) \| (\d+) \| (\d+) \|", md):
        assert int(ns) > 100
        assert abs(int(sv) - int(ns)) <= 0.05 * int(ns), (sv, ns)
    # The diagnostic variants ran: their utilisation and drop rate are in the report.
    assert md.count("Recovery check:") == 2
    rows = re.findall(r"\| bottleneck utilisation \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|", md)
    assert len(rows) == 2, rows
    for row in rows:
        assert all(0.2 < float(x) < 1.0 for x in row), row
