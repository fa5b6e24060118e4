"""Hostile use of the front ends (issue 18, items 11-14 and the run budget): deep nesting,
Ctrl-C, empty queries, damaged run directories, leftovers of killed runs and sweeps, and
the budget a run is estimated against. One test per rule."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import savanna
from conftest import sigint_default

pytestmark = pytest.mark.needs_core

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
# Long enough that a run is still going when interrupted (about 10 s of wall time).
LONG = SCENARIOS / "favorqueue-2013-fig26-five-hops.toml"


def savanna_cli(*args: str, cwd: Path, timeout: float = 120, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "savanna", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env
    )


def one_error_line(p: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2, p.stderr
    assert len(lines) == 1 and lines[0].startswith("savanna: error: "), p.stderr
    assert "Traceback" not in p.stderr
    return lines[0]


def test_deeply_nested_input_is_one_scenario_error_naming_the_line(tmp_path):
    deep_array = "name = 'x'\n\nx = " + "[" * 1000 + "]" * 1000 + "\n"
    deep_table = "x = " + "{a = " * 1000 + "1" + "}" * 1000 + "\n"
    for text in (deep_array, deep_table):
        with pytest.raises(savanna.ScenarioError, match=r"nested more than \d+ deep \(at line \d+\)"):
            savanna.validate(text)
    d: dict = {}
    inner = d
    for _ in range(5000):
        inner["a"] = {}
        inner = inner["a"]
    with pytest.raises(savanna.ScenarioError, match="nested too deeply"):
        savanna.validate(d)
    f = tmp_path / "deep.toml"
    f.write_text(deep_array)
    line = one_error_line(savanna_cli("validate", str(f), cwd=tmp_path))
    assert "line 3" in line, line


def test_ctrl_c_stops_savanna_run_promptly_and_leaves_nothing(tmp_path):
    code = (
        "import os, signal, threading, time, savanna\n"
        "threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "t0 = time.time()\n"
        "try:\n"
        f"    savanna.run({str(LONG)!r}, out={str(tmp_path / 'out')!r})\n"
        "    print('completed')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', time.time() - t0)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, preexec_fn=sigint_default
    )
    assert p.stdout.startswith("interrupted"), p.stdout + p.stderr
    assert float(p.stdout.split()[1]) < 3.0, p.stdout
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_ctrl_c_on_the_command_line_exits_130_leaving_no_partial(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "savanna", "run", str(LONG), "--out", str(out), "-q"],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
    )
    time.sleep(2.0)
    t0 = time.time()
    proc.send_signal(signal.SIGINT)
    rc = proc.wait(timeout=60)
    assert rc == 130, proc.stderr.read()
    assert time.time() - t0 < 3.0
    assert not out.exists() or not list(out.iterdir()), list(out.iterdir())


def test_a_query_with_no_statement_is_one_error(tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'base = "{SCENARIOS / "dumbbell-droptail.toml"}"\nout = "ds"\n[set]\nduration_s = 0.5\n')
    assert savanna_cli("sweep", str(sweep), "-q", "-j", "1", cwd=tmp_path).returncode == 0
    for sql in ("", ";;;", "-- only a comment", "/* a block comment */ ;"):
        line = one_error_line(savanna_cli("query", "ds", sql, cwd=tmp_path))
        assert "SQL: no statement" in line, line
    ok = savanna_cli("query", "ds", "SELECT count(*) AS n FROM flows", cwd=tmp_path)
    assert ok.returncode == 0 and "n" in ok.stdout


def test_compare_on_a_damaged_run_is_one_error(tmp_path):
    good = tmp_path / "good"
    assert savanna_cli("run", str(SCENARIOS / "dumbbell-droptail.toml"), "--out", str(good), "-q", "--duration", "1",
                       cwd=tmp_path).returncode == 0  # fmt: skip
    damage = {
        "truncated": ("flows.parquet", (good / "flows.parquet").read_bytes()[:200]),
        "malformed": ("summary.json", b'{"flows_started": '),
        "not-an-object": ("summary.json", b"[1, 2]"),
        "foreign": ("summary.json", b'{"a": 1}'),
    }
    for name, (file, data) in damage.items():
        d = tmp_path / name
        d.mkdir()
        for f in good.iterdir():
            (d / f.name).write_bytes(f.read_bytes())
        (d / file).write_bytes(data)
        line = one_error_line(savanna_cli("compare", str(good), str(d), cwd=tmp_path))
        assert name in line, line


def test_leftovers_of_killed_runs_are_swept_and_a_live_runs_kept(tmp_path):
    out = tmp_path / "out"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / f".partial-{dead.pid}-0" / "x").mkdir(parents=True)
    live = out / f".partial-{os.getpid()}-7"
    live.mkdir()
    p = savanna_cli("run", str(SCENARIOS / "dumbbell-droptail.toml"), "--out", str(out), "-q", "--duration", "0.5",
                    cwd=tmp_path)  # fmt: skip
    assert p.returncode == 0, p.stderr
    partials = sorted(x.name for x in out.iterdir() if x.name.startswith(".partial"))
    assert partials == [live.name], partials


def test_an_empty_out_is_an_error(tmp_path):
    line = one_error_line(savanna_cli("run", str(SCENARIOS / "dumbbell-droptail.toml"), "--out", "", cwd=tmp_path))
    assert "--out" in line
    assert not (tmp_path / "out").exists()
    with pytest.raises(savanna.ScenarioError, match="--out"):
        savanna.run(SCENARIOS / "dumbbell-droptail.toml", out="  ")


def test_a_sweep_keeps_its_temporary_files_beside_its_output(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    sweep = tmp_path / "s.toml"
    sweep.write_text(
        f'base = "{SCENARIOS / "dumbbell-droptail.toml"}"\nout = "ds"\nreplications = 2\n[set]\nduration_s = 0.5\n'
    )
    env = dict(os.environ, TMPDIR=str(tmp))
    p = savanna_cli("sweep", str(sweep), "-q", "-j", "1", cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stderr
    assert not [x for x in tmp.rglob("*") if "savanna" in x.name or x.name.startswith(".partial")]
    staging = tmp_path / "ds" / ".staging"
    assert not staging.exists() or not any(staging.iterdir())


def test_a_sweep_too_large_to_list_is_refused_up_front(tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'base = "{SCENARIOS / "dumbbell-droptail.toml"}"\nreplications = 100000000\n')
    t0 = time.time()
    line = one_error_line(savanna_cli("sweep", str(sweep), "--dry-run", cwd=tmp_path))
    assert "replications" in line and time.time() - t0 < 20
    grid = tmp_path / "g.toml"
    grid.write_text(
        f'base = "{SCENARIOS / "dumbbell-droptail.toml"}"\nreplications = 1000\n'
        "[grid]\nduration_s = [" + ", ".join(str(1 + i) for i in range(2000)) + "]\n"
    )
    line = one_error_line(savanna_cli("sweep", str(grid), "--dry-run", cwd=tmp_path))
    assert "2,000,000 runs" in line, line


def test_a_run_over_its_budget_is_refused_and_raising_the_budget_admits_it(tmp_path):
    sc = SCENARIOS / "dumbbell-droptail.toml"
    with pytest.raises(savanna.ScenarioError, match=r"budget of 1\.00e3.*--max-events"):
        savanna.validate(sc, max_events=1e3)
    with pytest.raises(savanna.ScenarioError, match="--max-memory-gb"):
        savanna.validate(sc, max_memory_gb=1e-9)
    with pytest.raises(savanna.ScenarioError, match="max_events"):
        savanna.run(sc, duration_s=1, max_events=-1)
    r = savanna.run(sc, duration_s=1, max_events=1e9, max_memory_gb=1)
    assert len(r.flows) > 0
    line = one_error_line(savanna_cli("run", str(sc), "--max-events", "1000", "--out", "o", cwd=tmp_path))
    assert "events" in line and "--max-events" in line
    assert not (tmp_path / "o").exists()
    p = savanna_cli("run", str(sc), "--max-events", "1e10", "--duration", "1", "--out", "o", "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
