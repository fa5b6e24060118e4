"""benchmarks/vs_linux_sim.py --rewrite: a stored run's simulated side is re-run with the
simulator as it stands and its emulated side kept, in the .json and in the report."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_rewrite_reruns_the_simulated_side_and_keeps_the_emulated_side(tmp_path):
    stored = json.loads((ROOT / "benchmarks" / "results" / "vs_linux_cubic-sack.json").read_text())
    run = stored["0.8/droptail8/1"]
    run["duration_s"] = 5.0
    emu = json.dumps(run["emu"], sort_keys=True)
    run["sim"]["flows"] = -1  # a stale figure the rewrite must replace
    path = tmp_path / "cubic.json"
    path.write_text(json.dumps({"0.8/droptail8/1": run}))
    cmd = [sys.executable, str(ROOT / "benchmarks" / "vs_linux_sim.py"), "--stack", "cubic-sack"]
    p = subprocess.run([*cmd, "--rewrite", "--stored", str(path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    new = json.loads(path.read_text())["0.8/droptail8/1"]
    assert json.dumps(new["emu"], sort_keys=True) == emu
    assert 50 < new["sim"]["flows"] < 200  # 5 s at load 0.8: about 110 flows
    assert new["duration_s"] == 5.0
    md = path.with_suffix(".md").read_text()
    assert "# Linux cubic with SACK" in md and f"flows {new['sim']['flows']} (finished sim" in md
