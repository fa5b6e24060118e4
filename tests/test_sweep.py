"""Tests of sweeps (savanna.sweep, `savanna sweep`): sweep files and their errors, the grid
they expand to, resuming after a SIGKILL without recomputing or losing a run, failed runs
reported while the others complete, the Dask path giving the same files as the local pool,
relative file names in the base scenario, and the progress bar. Scenarios are tiny (a
two-pair dumbbell, a few simulated seconds) to keep the file fast."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import _savanna_command
from savanna import store
from savanna.sweep import (
    FAIL_HOOK_ENV,
    Job,
    SweepError,
    _Progress,
    load_sweep,
    run_many,
)

BASE_TOML = """\
name = "tiny"
seed = 1
duration_s = 4.0
[topology]
type = "dumbbell"
pairs = 2
bottleneck_rate_mbps = 10.0
bottleneck_queue = { type = "droptail", limit_pkts = 8 }
[[traffic]]
type = "poisson"
name = "web"
load = 0.7
size = { dist = "pareto", shape = 1.3, mean = 20.0 }
[sampling]
interval_s = 0.5
queues = ["bottleneck"]
"""


def base_dict() -> dict:
    import tomllib

    return tomllib.loads(BASE_TOML)


def tiny_jobs(n_seeds: int = 2, queues=("droptail", "favorqueue"), duration_s: float = 4.0):
    jobs = []
    for q in queues:
        for seed in range(1, n_seeds + 1):
            sc = base_dict()
            sc["duration_s"] = duration_s
            sc["seed"] = seed
            sc["topology"]["bottleneck_queue"]["type"] = q
            jobs.append(Job(f"{q}-{seed}", sc, {"qdisc": q, "seed": seed}))
    return jobs


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    """A directory holding base.toml, for sweep files."""
    (tmp_path / "base.toml").write_text(BASE_TOML)
    return tmp_path


def write_sweep(d: Path, text: str, name: str = "s.toml") -> Path:
    p = d / name
    p.write_text(text)
    return p


def _live_processes_in_session(sid: int) -> list:
    ps = subprocess.run(["ps", "-o", "pid=,stat=", "-s", str(sid)], capture_output=True, text=True)
    return [ln for ln in ps.stdout.splitlines() if ln.split() and not ln.split()[1].startswith("Z")]


def file_stamps(run_dir: Path) -> dict:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in sorted(run_dir.iterdir())}


# ---- sweep files -------------------------------------------------------------------------


def test_grid_expands_to_every_point_with_its_fields_set(sweep_dir):
    p = write_sweep(
        sweep_dir,
        """
base = "base.toml"
seeds = [3, 5]
[set]
duration_s = 2.0
[grid]
"traffic[0].load" = [0.5, 0.8]
pairs = { path = "topology.pairs", values = [1, 3] }
[[linked]]
name = "aqm"
values = ["droptail", "red"]
set."topology.bottleneck_queue" = [
  { type = "droptail", limit_pkts = 8 },
  { type = "red", limit_pkts = 30, min_th = 5.0, max_th = 15.0 },
]
""",
    )
    sw = load_sweep(p)
    assert [a.name for a in sw.axes] == ["traffic[0].load", "pairs", "aqm"]
    assert len(sw.jobs) == 2 * 2 * 2 * 2
    seen = set()
    for j in sw.jobs:
        sc, pr = j.scenario, j.params
        assert list(pr) == ["traffic[0].load", "pairs", "aqm", "seed"]
        assert sc["traffic"][0]["load"] == pr["traffic[0].load"]
        assert sc["topology"]["pairs"] == pr["pairs"]
        assert sc["topology"]["bottleneck_queue"]["type"] == pr["aqm"]
        assert sc["seed"] == pr["seed"] and pr["seed"] in (3, 5)
        assert sc["duration_s"] == 2.0
        assert j.base_dir == str(sweep_dir.resolve())
        seen.add(tuple(pr.values()))
    assert len(seen) == 16
    # Linked values replace the table whole.
    assert sw.jobs[0].scenario["topology"]["bottleneck_queue"] == {"type": "droptail", "limit_pkts": 8}
    assert sw.jobs[-1].scenario["topology"]["bottleneck_queue"] == {
        "type": "red",
        "limit_pkts": 30,
        "min_th": 5.0,
        "max_th": 15.0,
    }
    # Run ids: unique, stable across loads, and tied to the scenario.
    ids = [j.run_id for j in sw.jobs]
    assert len(set(ids)) == len(ids)
    assert ids == [j.run_id for j in load_sweep(p).jobs]
    p.write_text(p.read_text().replace("duration_s = 2.0", "duration_s = 3.0"))
    assert not set(ids) & {j.run_id for j in load_sweep(p).jobs}
    # The output directory is relative to the sweep file unless given.
    assert sw.out_dir == Path("out") / "s"
    assert load_sweep(p, out=sweep_dir / "x").out_dir == sweep_dir / "x"


def test_replications_default_seed_and_set_merging(sweep_dir):
    p = write_sweep(
        sweep_dir,
        """
base = "base.toml"
replications = 3
[set]
seed = 7
topology.bottleneck_queue = { limit_pkts = 12 }
"topology.access_queue" = { type = "droptail", limit_pkts = 50 }
""",
    )
    jobs = load_sweep(p).jobs
    assert [j.params for j in jobs] == [{"seed": 7}, {"seed": 8}, {"seed": 9}]
    # [set] merges tables into the base (bare or quoted dotted keys alike).
    topo = jobs[0].scenario["topology"]
    assert topo["bottleneck_queue"] == {"type": "droptail", "limit_pkts": 12}
    assert topo["access_queue"] == {"type": "droptail", "limit_pkts": 50}
    assert topo["pairs"] == 2
    p = write_sweep(sweep_dir, 'base = "base.toml"\nout = "res"\n')
    sw = load_sweep(p)
    assert [j.params for j in sw.jobs] == [{"seed": 1}]
    assert sw.out_dir == sweep_dir.resolve() / "res"


@pytest.mark.parametrize(
    "body, field",
    [
        ('[grid]\n"traffic[0].load" = [0.5, 1.5]', "grid.traffic[0].load value 1.5"),
        ('[grid]\n"topology.bottlenek_rate_mbps" = [1.0]', "bottlenek_rate_mbps"),
        ('[grid]\n"traffic[2].load" = [0.5]', "grid.traffic[2].load"),
        ('[grid]\n"traffic[0].load" = []', "grid.traffic[0].load: must not be empty"),
        ('[grid]\n"traffic[0].load" = [0.5, 0.5]', "grid.traffic[0].load[1]"),
        ('[grid]\n"traffic[0].load" = [{ a = 1 }]', "grid.traffic[0].load[0]"),
        (
            '[grid]\nqt = { path = "topology.bottleneck_queue.type", values = ["droptail", "fifo"] }',
            "grid.qt value 'fifo'",
        ),
        ('[grid]\nqt = { path = "topology.bottleneck_queue.type", values = ["red"] }', "grid.qt value 'red'"),
        ('[grid]\n"a..b" = [1]', "grid.a..b"),
        ("[grid]\nseed = [1, 2]", "grid.seed"),
        ('[grid]\nsrc = { path = "topology.pairs", values = [1] }', "grid.src"),
        ('[grid]\n"topology.pairs" = [1]\n[set]\n"topology.pairs" = 2', "grid.topology.pairs"),
        ('[[linked]]\nname = "x"\nvalues = [1, 2]\nset."topology.pairs" = [1]', "linked[0].set.topology.pairs"),
        ("seeds = []", "seeds"),
        ("seeds = [1, 1]", "seeds"),
        ("replications = 0", "replications"),
        ("seeds = [1]\nreplications = 2", "seeds"),
        ("bogus = 1", "bogus: unknown key"),
    ],
)
def test_bad_sweep_files_name_the_field(sweep_dir, body, field):
    p = write_sweep(sweep_dir, 'base = "base.toml"\n' + body + "\n")
    with pytest.raises(SweepError) as e:
        load_sweep(p)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{p}: ")
    assert field in msg, msg


def test_missing_base_and_bad_file(sweep_dir, tmp_path):
    with pytest.raises(SweepError, match="base: required"):
        load_sweep(write_sweep(sweep_dir, 'name = "x"\n'))
    with pytest.raises(SweepError, match="no such scenario file"):
        load_sweep(write_sweep(sweep_dir, 'base = "nope.toml"\n'))
    with pytest.raises(SweepError, match="no such sweep file"):
        load_sweep(tmp_path / "absent.toml")
    with pytest.raises(SweepError, match="invalid TOML"):
        load_sweep(write_sweep(sweep_dir, "base = \n"))


def test_cli_sweep_bad_input_is_one_line_exit_2(sweep_dir, cli, expect_error):
    p = write_sweep(sweep_dir, 'base = "base.toml"\n[grid]\n"traffic[0].load" = [0.5, 1.5]\n')
    line = expect_error(cli("sweep", p))
    assert "grid.traffic[0].load value 1.5" in line
    assert not (sweep_dir / "out").exists()
    p = write_sweep(sweep_dir, 'base = "base.toml"\n')
    assert "--workers" in expect_error(cli("sweep", p, "--workers", "0", "--out", sweep_dir / "o"))


def test_relative_file_in_base_scenario_resolves_against_its_directory(tmp_path):
    scen = tmp_path / "scenarios"
    scen.mkdir()
    (scen / "sizes.csv").write_text("size,cdf\n2,0.5\n40,1.0\n")
    (scen / "base.toml").write_text(
        BASE_TOML.replace(
            'size = { dist = "pareto", shape = 1.3, mean = 20.0 }',
            'size = { dist = "empirical", file = "sizes.csv" }',
        )
    )
    sweeps = tmp_path / "sweeps"
    sweeps.mkdir()
    p = write_sweep(sweeps, 'base = "../scenarios/base.toml"\n[grid]\n"topology.pairs" = [1, 2]\n')
    sw = load_sweep(p, out=tmp_path / "out")
    cwd = os.getcwd()
    os.chdir(sweeps)  # neither the current directory nor the sweep's holds sizes.csv
    try:
        report = run_many(sw.jobs, sw.out_dir, workers=1, progress=False)
    finally:
        os.chdir(cwd)
    assert report.failed == {} and len(report.done) == 2
    flows = store.load(sw.out_dir)
    assert len(flows) > 0
    assert set(flows["size_pkts"].unique()) <= set(range(2, 41))


# ---- run_many: resume, failures ----------------------------------------------------------


def test_rerun_skips_completed_runs_and_keeps_their_files(tmp_path):
    jobs = tiny_jobs()
    first = run_many(jobs[:2], tmp_path / "ds", workers=1, progress=False)
    assert first.done == [j.run_id for j in jobs[:2]] and first.skipped == []
    runs = store.completed_runs(tmp_path / "ds")
    stamps = {rid: file_stamps(d) for rid, d in runs.items()}
    second = run_many(jobs, tmp_path / "ds", workers=1, progress=False)
    assert second.skipped == [j.run_id for j in jobs[:2]]
    assert second.done == [j.run_id for j in jobs[2:]]
    for rid, d in store.completed_runs(tmp_path / "ds").items():
        if rid in stamps:
            assert file_stamps(d) == stamps[rid]
    assert sorted(store.completed_runs(tmp_path / "ds")) == sorted(j.run_id for j in jobs)


def test_failed_run_is_reported_and_the_others_complete(tmp_path):
    jobs = tiny_jobs(n_seeds=1, queues=("droptail", "favorqueue", "red"))
    # RED without its thresholds: the core rejects it when the worker runs it.
    bad = jobs[2]
    out = tmp_path / "ds"
    report = run_many(jobs, out, workers=2, progress=False)
    assert report.done == [jobs[0].run_id, jobs[1].run_id]
    assert list(report.failed) == [bad.run_id]
    err = report.failed[bad.run_id]
    assert "topology.bottleneck_queue" in err and "min_th" in err and "\n" not in err
    assert report.params[bad.run_id] == {"qdisc": "red", "seed": 1}
    rec = json.loads((out / "failed" / f"{bad.run_id}.json").read_text())
    assert rec["params"] == bad.params and rec["error"] == err
    assert rec["scenario"] == bad.scenario
    assert sorted(store.completed_runs(out)) == sorted([jobs[0].run_id, jobs[1].run_id])
    # A rerun retries the failed run only; once fixed, it completes and its record goes.
    again = run_many(jobs, out, workers=1, progress=False)
    assert again.skipped == [jobs[0].run_id, jobs[1].run_id]
    assert list(again.failed) == [bad.run_id]
    bad.scenario["topology"]["bottleneck_queue"].update(min_th=3.0, max_th=6.0)
    fixed = run_many(jobs, out, workers=1, progress=False)
    assert fixed.done == [bad.run_id] and fixed.failed == {}
    assert not (out / "failed" / f"{bad.run_id}.json").exists()


def test_cli_sweep_reports_failure_exit_1(sweep_dir, cli):
    p = write_sweep(sweep_dir, 'base = "base.toml"\nseeds = [1, 2]\n[grid]\n"traffic[0].load" = [0.5, 0.8]\n')
    out = sweep_dir / "out"
    env = dict(os.environ, **{FAIL_HOOK_ENV: "traffic[0].load=0.8,seed=2"})
    proc = subprocess.run(
        _savanna_command() + ["sweep", str(p), "--out", str(out), "-j", "1"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    err = proc.stderr.splitlines()
    failed_lines = [ln for ln in err if " failed: " in ln]
    assert len(failed_lines) == 1
    assert "traffic[0].load=0.8" in failed_lines[0] and "seed=2" in failed_lines[0]
    assert FAIL_HOOK_ENV in failed_lines[0]
    assert err[-1].startswith("savanna: error: 1 of 4 runs failed")
    assert "3 done" in proc.stdout and "1 failed" in proc.stdout
    df = store.query(out, 'SELECT "traffic[0].load" AS load, seed FROM summaries ORDER BY load, seed')
    assert list(df.itertuples(index=False, name=None)) == [(0.5, 1), (0.5, 2), (0.8, 1)]
    # Without the injected failure, a rerun completes the missing run only.
    proc = cli("sweep", p, "--out", out, "-q", "-j", "1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
    assert len(store.completed_runs(out)) == 4
    assert not list((out / "failed").glob("*.json"))


def test_sweep_resumes_after_sigkill_without_recomputing_or_losing_a_run(sweep_dir, tmp_path):
    # Runs long enough (a fifth of a second or more each) that the sweep can be killed
    # mid-way. Only the sweep's own process is killed, as the kernel's OOM killer would:
    # its worker processes must end by themselves.
    p = write_sweep(
        sweep_dir,
        """
base = "base.toml"
seeds = [1, 2]
[set]
duration_s = 150.0
[grid]
"topology.bottleneck_queue.type" = ["droptail", "favorqueue"]
""",
    )
    sw = load_sweep(p)
    total = len(sw.jobs)
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        _savanna_command() + ["sweep", str(p), "--out", str(out), "-j", "2", "-q"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(store.completed_runs(out)) < 1:
            assert proc.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while _live_processes_in_session(proc.pid):
            assert time.monotonic() < deadline, "worker processes outlived the sweep"
            time.sleep(0.1)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = store.completed_runs(out)
    assert 1 <= len(before) < total, "killed too late to test resuming"
    # Only complete runs are visible: every run directory holds all its files.
    run_dirs = list((out / "runs").rglob("run_id=*"))
    assert sorted(d.name[len("run_id=") :] for d in run_dirs) == sorted(before)
    for d in run_dirs:
        names = {f.name for f in d.iterdir()}
        assert {
            "flows.parquet",
            "queues.parquet",
            "summary.json",
            "summaries.parquet",
            "summary_queues.parquet",
            "params.json",
            "scenario.json",
        } <= names
    stamps = {rid: file_stamps(d) for rid, d in before.items()}
    (out / ".staging" / "leftover-0000").mkdir(parents=True, exist_ok=True)

    report = run_many(sw.jobs, out, workers=1, progress=False)
    assert sorted(report.skipped) == sorted(before)
    assert sorted(report.done) == sorted(set(j.run_id for j in sw.jobs) - set(before))
    assert report.failed == {}
    assert not any((out / ".staging").iterdir())
    after = store.completed_runs(out)
    assert len(after) == total
    for rid, st in stamps.items():
        assert file_stamps(after[rid]) == st, f"run {rid} was rewritten"

    # Identical to a sweep that was never interrupted.
    clean = tmp_path / "clean"
    run_many(sw.jobs, clean, workers=1, progress=False)
    ref = store.completed_runs(clean)
    for rid in after:
        for name in ("flows.parquet", "queues.parquet"):
            assert (after[rid] / name).read_bytes() == (ref[rid] / name).read_bytes()
    pd.testing.assert_frame_equal(store.load(out), store.load(clean))


def test_stale_runs_need_prune(sweep_dir, cli, expect_error):
    p = write_sweep(sweep_dir, 'base = "base.toml"\n[grid]\n"traffic[0].load" = [0.5, 0.6]\n')
    out = sweep_dir / "o"
    assert cli("sweep", p, "--out", out, "-q", "-j", "1").returncode == 0
    p.write_text('base = "base.toml"\n[grid]\n"traffic[0].load" = [0.5]\n')
    assert "--prune" in expect_error(cli("sweep", p, "--out", out, "-q"))
    proc = cli("sweep", p, "--out", out, "-q", "--prune")
    assert proc.returncode == 0, proc.stderr
    assert list(store.load(out, "summaries")["traffic[0].load"]) == [0.5]


def test_dry_run_lists_runs_and_their_state(sweep_dir, cli):
    p = write_sweep(sweep_dir, 'base = "base.toml"\nseeds = [1, 2]\n')
    out = sweep_dir / "o"
    jobs = load_sweep(p).jobs
    run_many(jobs[:1], out, workers=1, progress=False)
    proc = cli("sweep", p, "--out", out, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(jobs[0].run_id in ln and "complete" in ln for ln in lines)
    assert any(jobs[1].run_id in ln and "to run" in ln for ln in lines)
    assert len(store.completed_runs(out)) == 1


def test_run_many_rejects_bad_jobs(tmp_path):
    good = tiny_jobs(n_seeds=1, queues=("droptail",))[0]
    cases = [
        ([good, copy.deepcopy(good)], "used twice"),
        ([Job("../x", good.scenario, {})], "run_id"),
        ([Job("a", good.scenario, {"bad name": 1})], "parameter name"),
        ([Job("a", good.scenario, {"run_id": 1})], "reserved"),
        ([Job("a", good.scenario, {"x": [1]})], "jobs[0].params.x"),
        ([Job("a", good.scenario, {"x": float("nan")})], "finite"),
        ([Job("a", good.scenario, {"x": 1}), Job("b", good.scenario, {"y": 1})], "same parameters"),
    ]
    for jobs, msg in cases:
        with pytest.raises(SweepError, match=msg.replace("[", r"\[").replace("]", r"\]")):
            run_many(jobs, tmp_path / "ds", workers=1, progress=False)
    with pytest.raises(SweepError, match="workers"):
        run_many([good], tmp_path / "ds", workers=0, progress=False)
    assert not store.completed_runs(tmp_path / "ds")


def test_a_locked_dataset_is_refused(tmp_path):
    from savanna.sweep import _Lock

    out = tmp_path / "ds"
    out.mkdir()
    with _Lock(out), pytest.raises(SweepError, match="another sweep"):
        run_many(tiny_jobs(1, ("droptail",)), out, workers=1, progress=False)


# ---- Dask ----------------------------------------------------------------------------------


def test_dask_gives_the_same_results_as_the_local_pool(tmp_path):
    distributed = pytest.importorskip("distributed")
    jobs = tiny_jobs()
    local = run_many(jobs, tmp_path / "local", workers=2, progress=False)
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        dashboard_address=None,
    ) as cluster:
        remote = run_many(jobs, tmp_path / "dask", dask=cluster.scheduler_address, progress=False)
    assert local.failed == {} and remote.failed == {}
    assert sorted(local.done) == sorted(remote.done) == sorted(j.run_id for j in jobs)
    a, b = store.completed_runs(tmp_path / "local"), store.completed_runs(tmp_path / "dask")
    assert {rid: d.relative_to(tmp_path / "local") for rid, d in a.items()} == {
        rid: d.relative_to(tmp_path / "dask") for rid, d in b.items()
    }
    for rid in a:
        for name in ("flows.parquet", "queues.parquet", "params.json"):
            assert (a[rid] / name).read_bytes() == (b[rid] / name).read_bytes(), (rid, name)
    pd.testing.assert_frame_equal(store.load(tmp_path / "local"), store.load(tmp_path / "dask"))
    pd.testing.assert_frame_equal(store.load(tmp_path / "local", "queues"), store.load(tmp_path / "dask", "queues"))


def test_dask_unreachable_is_an_input_error(tmp_path):
    pytest.importorskip("distributed")
    with pytest.raises(SweepError, match="dask: cannot connect to bogus://x"):
        run_many(tiny_jobs(1, ("droptail",)), tmp_path / "ds", dask="bogus://x", progress=False)
    assert not store.completed_runs(tmp_path / "ds")


# ---- progress bar ----------------------------------------------------------------------------


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_shows_runs_done_and_failures_on_a_terminal(monkeypatch):
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    bar = _Progress(total=4, initial=1, enabled=True)
    bar.update(failed=0)
    bar.update(failed=1)
    bar.close()
    text = tty.getvalue()
    assert "3/4" in text and "failed=1" in text
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stderr", plain)
    bar = _Progress(total=4, initial=0, enabled=True)
    bar.update(failed=0)
    bar.close()
    assert plain.getvalue() == ""


# ---- a worker process that dies -------------------------------------------------------------


def test_a_dying_worker_fails_only_its_own_run():
    from savanna.sweep import _results
    from sweep_crash_helper import exit_on_boom

    tasks = [{"run_id": r} for r in ("a", "b", "boom", "c", "d", "e")]
    results = {r["run_id"]: r for r in _results(tasks, 2, None, fn=exit_on_boom)}
    assert sorted(results) == sorted(t["run_id"] for t in tasks)
    assert "died" in results["boom"]["error"]
    for rid in ("a", "b", "c", "d", "e"):
        assert results[rid] == {"run_id": rid, "files": {}}


def test_a_pool_pass_of_more_runs_than_the_start_notice_pipe_holds_completes():
    # Workers announce each run they start through a pipe of 64 KiB (about 800 notices);
    # the parent must read them as results arrive, or every worker blocks on its next
    # announcement and the sweep stalls silently. 3,000 trivial runs in one pool pass.
    code = (
        "import multiprocessing\n"
        "from savanna.sweep import _pool_pass\n"
        "tasks = [{'run_id': f'run-{i:05d}-' + 'x' * 40} for i in range(3000)]\n"
        "got = list(_pool_pass(multiprocessing.get_context('spawn'), tasks, 2, len))\n"
        "print(len(got), sum(got))\n"
    )
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the pool stalled: its start notices were not read")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["3000", "3000"]


# ---- one pool for successive batches ---------------------------------------------------------


def test_shared_pool_reuses_its_workers_across_batches_and_ends_them_after():
    from savanna.sweep import _results, shared_pool
    from sweep_crash_helper import exit_on_boom, worker_pid

    def pids(n):
        return {r["pid"] for r in _results([{"run_id": f"r{i}"} for i in range(n)], 2, None, fn=worker_pid)}

    with shared_pool():
        # (A worker may still be starting while the other takes a whole batch: what holds is
        # that every batch's runs go to the same two processes.)
        first, later = pids(6), pids(6) | pids(6)
        assert len(first | later) <= 2 and first & later
        first |= later
        # A worker that dies breaks the kept pool: the next batch gets fresh workers.
        tasks = [{"run_id": r} for r in ("a", "boom", "b")]
        results = {r["run_id"]: r for r in _results(tasks, 2, None, fn=exit_on_boom)}
        assert "died" in results["boom"]["error"] and "error" not in results["a"]
        third = pids(6)
        assert not third & first
    # Outside the block, each batch has workers of its own, and the kept ones are gone.
    assert not pids(4) & third
    for pid in first | third:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


# ---- runs written in place by local workers (issue 21) ----------------------------------------


def _task(job: Job, out: Path, in_place: bool) -> dict:
    """The task ``run_many`` gives a worker for ``job`` (no base_dir: the current one)."""
    return {
        "run_id": job.run_id,
        "scenario": job.scenario,
        "params": dict(job.params),
        "base_dir": os.getcwd(),
        "tmp_dir": str(out.resolve() / store.STAGING_DIR),
        "in_place": in_place,
    }


def _without_wall_time(name: str, data: bytes):
    """A run file's contents for comparing two runs of one job: the bytes, except that
    the wall time the run took (summary.json's and summaries.parquet's wall_seconds, the
    one thing that differs) is left out."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if name == "summary.json":
        d = json.loads(data)
        assert isinstance(d.pop("wall_seconds"), float)
        return d
    if name == "summaries.parquet":
        t = pq.read_table(pa.BufferReader(data))
        return t.drop_columns(["wall_seconds"]).to_pylist(), t.schema.remove(t.schema.get_field_index("wall_seconds"))
    return data


def test_a_run_written_in_place_has_the_files_and_bytes_of_a_run_sent_back(tmp_path):
    # Through the local pool, each worker writes its run into the staging area and this
    # process renames the directory; sent back as bytes (as a Dask worker does), this
    # process writes the files. Same names, same bytes, same modes, nothing else.
    jobs = tiny_jobs(n_seeds=1)
    placed = tmp_path / "in_place"
    rep = run_many(jobs, placed, workers=2, progress=False)
    assert rep.failed == {} and sorted(rep.done) == sorted(j.run_id for j in jobs)
    sent = tmp_path / "sent"
    for j in jobs:
        from savanna.sweep import execute

        result = execute(_task(j, sent, in_place=False))
        store.commit_run(sent, j.run_id, j.params, ["qdisc", "seed"], result["files"])
    a, b = store.completed_runs(placed), store.completed_runs(sent)
    assert {r: d.relative_to(placed) for r, d in a.items()} == {r: d.relative_to(sent) for r, d in b.items()}
    for rid in a:
        names = sorted(os.listdir(a[rid]))  # hidden entries too: no staging left inside
        assert names == sorted(os.listdir(b[rid]))
        assert {"params.json", "scenario.json", "summaries.parquet", "flows.parquet"} <= set(names)
        assert a[rid].stat().st_mode == b[rid].stat().st_mode
        for name in names:
            pa_, pb = a[rid] / name, b[rid] / name
            assert pa_.stat().st_mode == pb.stat().st_mode, name
            assert _without_wall_time(name, pa_.read_bytes()) == _without_wall_time(name, pb.read_bytes()), name


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("where", ["before the core runs", "after the core wrote its files"])
def test_a_run_failing_in_place_leaves_nothing_in_staging_or_runs(tmp_path, monkeypatch, workers, where):
    # With one worker the runs share this process, which outlives them: only the worker's
    # own clean-up can remove a failed run's directory. Two make a pool.
    jobs = tiny_jobs(n_seeds=1)
    if where == "before the core runs":
        monkeypatch.setenv(FAIL_HOOK_ENV, "qdisc=favorqueue")
        bad = [j.run_id for j in jobs if j.params["qdisc"] == "favorqueue"]
    else:  # a parameter that a column of flows.parquet would hide: refused once it is written
        jobs = [Job(j.run_id, j.scenario, {**j.params, "fct_s": 1.5}) for j in jobs]
        bad = [j.run_id for j in jobs]
    out = tmp_path / "ds"
    rep = run_many(jobs, out, workers=workers, progress=False)
    assert sorted(rep.failed) == sorted(bad)
    if where == "after the core wrote its files":
        assert all("'fct_s' has the name of a column of flows.parquet" in e for e in rep.failed.values())
    assert sorted(rep.done) == sorted(j.run_id for j in jobs if j.run_id not in bad)
    assert list((out / store.STAGING_DIR).iterdir()) == []
    for rid in bad:
        assert not list((out / store.RUNS_DIR).rglob(f"run_id={rid}"))
        assert (out / store.FAILED_DIR / f"{rid}.json").is_file()


def test_a_run_already_present_is_kept_and_its_staged_copy_removed(tmp_path):
    from savanna.sweep import execute

    (job,) = tiny_jobs(n_seeds=1, queues=("droptail",))
    out = tmp_path / "ds"
    run_many([job], out, workers=1, progress=False)
    (present,) = store.completed_runs(out).values()
    stamps = file_stamps(present)
    staged = Path(execute(_task(job, out, in_place=True))["dir"])
    assert staged.parent == out.resolve() / store.STAGING_DIR and (staged / "summary.json").is_file()
    assert store.commit_dir(out, job.run_id, job.params, ["qdisc", "seed"], staged) == present
    assert file_stamps(present) == stamps
    assert not staged.exists()


def test_commit_dir_refuses_what_is_not_a_complete_run_in_the_staging_area(tmp_path):
    out = tmp_path / "ds"
    (out / store.STAGING_DIR).mkdir(parents=True)
    # Not in the staging area, or deeper in it: refused and left as it is.
    for mine in (tmp_path / "mine", out / store.STAGING_DIR / "a" / "b"):
        mine.mkdir(parents=True)
        (mine / "summary.json").write_text("{}")
        with pytest.raises(store.StoreError, match="not a run's directory in"):
            store.commit_dir(out, "r1", {"x": 1}, ["x"], mine)
        assert (mine / "summary.json").is_file()
    # In it but incomplete (no summary.json): refused and removed.
    half = out / store.STAGING_DIR / ".partial-1-0"
    half.mkdir()
    (half / "flows.parquet").write_bytes(b"half a run")
    with pytest.raises(store.StoreError, match="no summary.json"):
        store.commit_dir(out, "r1", {"x": 1}, ["x"], half)
    assert not half.exists() and not (out / store.RUNS_DIR).exists()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_dead_workers_leftover_in_staging_is_swept_by_the_next_sweep(tmp_path):
    from savanna.runner import _partial_pid

    out = tmp_path / "ds"
    pid = _dead_pid()
    left = out / store.STAGING_DIR / f".partial-{pid}-0"
    (left / f".partial-{pid}-3").mkdir(parents=True)  # the core's own staging inside
    (left / f".partial-{pid}-3" / "flows.parquet").write_bytes(b"half a run")
    assert _partial_pid(left.name) == pid  # the rule the in-place directories follow
    rep = run_many(tiny_jobs(n_seeds=1, queues=("droptail",)), out, workers=1, progress=False)
    assert rep.failed == {} and len(rep.done) == 1
    assert list((out / store.STAGING_DIR).iterdir()) == []


def test_a_worker_killed_mid_run_leaves_nothing_in_staging_once_its_pool_is_gone(tmp_path):
    # A worker is killed (as the OOM killer would) while the core writes its run in place:
    # its directory stays behind. It must be gone before a worker of the next pool starts
    # a run (and at the end), and the run, run again alone, completes.
    import threading

    import psutil
    from savanna.runner import _partial_pid

    jobs = tiny_jobs(n_seeds=2, duration_s=150.0)  # a fifth of a second or more each
    out = tmp_path / "ds"
    staging = out / store.STAGING_DIR
    killed: list[Path] = []
    old_pool: set[int] = set()
    gone_when_the_next_pool_ran: list[bool] = []
    stop = threading.Event()

    def core_running(d: Path) -> bool:
        try:
            return any(p.name.startswith(".partial-") for p in d.iterdir())
        except OSError:  # renamed into place meanwhile
            return False

    def watch():
        while not stop.is_set() and not gone_when_the_next_pool_ran:
            try:
                dirs = {p: _partial_pid(p.name) for p in staging.iterdir()}
            except OSError:
                dirs = {}
            for d, pid in dirs.items():
                if pid is None or pid == os.getpid():
                    continue
                if not killed and core_running(d):
                    old_pool.update(c.pid for c in psutil.Process().children())
                    os.kill(pid, signal.SIGKILL)
                    killed.append(d)
                elif killed and pid not in old_pool:
                    gone_when_the_next_pool_ran.append(not killed[0].exists())
                    break
            time.sleep(0.001)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        rep = run_many(jobs, out, workers=2, progress=False)
    finally:
        stop.set()
        watcher.join()
    assert killed, "no worker was caught mid-run"
    assert gone_when_the_next_pool_ran == [True]
    assert rep.failed == {} and sorted(rep.done) == sorted(j.run_id for j in jobs)
    assert list(staging.iterdir()) == []


def test_a_sweep_that_stops_in_its_own_process_leaves_nothing_in_staging(tmp_path, monkeypatch):
    # The sweep's process stops (here: writing its first run raises; Ctrl-C alike) while
    # the pool's workers hold runs written in place that it will never rename: once the
    # pool is gone, so are they.
    class Stop(Exception):
        pass

    def stop(*args):
        raise Stop

    monkeypatch.setattr(store, "commit_dir", stop)
    out = tmp_path / "ds"
    with pytest.raises(Stop):
        run_many(tiny_jobs(n_seeds=2), out, workers=2, progress=False)
    assert list((out / store.STAGING_DIR).iterdir()) == []
    assert store.completed_runs(out) == {}
