"""Tests of the results store (savanna.store, `savanna query`): the partitioned Parquet
dataset written by run_many, the DuckDB views over it (flows, queues, summaries,
summary_queues), typed parameter columns, the DataFrames of load/query checked against
the same runs made one by one with savanna.run, the CLI's table/CSV/JSON output and its
errors, and atomic writes. One tiny dataset (four runs of a two-pair dumbbell) is built
once for the module."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
import savanna
from savanna import store
from savanna.sweep import Job, SweepError, run_many
from test_sweep import base_dict

# A string parameter with characters that must be escaped in a directory name.
ODD = "a/b c=d%e"


def make_jobs():
    jobs = []
    for q in ("droptail", "favorqueue"):
        for load in (0.5, 0.8):
            sc = base_dict()
            sc["topology"]["bottleneck_queue"]["type"] = q
            sc["traffic"][0]["load"] = load
            sc["seed"] = 3
            params = {"qdisc": q, "load": load, "favour": q == "favorqueue", "note": ODD, "seed": 3}
            jobs.append(Job(f"{q}-{load}", sc, params))
    return jobs


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("store") / "ds"
    jobs = make_jobs()
    report = run_many(jobs, out, workers=1, progress=False)
    assert report.failed == {} and len(report.done) == len(jobs)
    return out, jobs


@pytest.fixture(scope="module")
def single_runs(dataset):
    """The same runs made one at a time with savanna.run: run_id -> Result."""
    _out, jobs = dataset
    return {j.run_id: savanna.run(j.scenario) for j in jobs}


def test_layout_is_hive_partitioned_by_the_parameters(dataset):
    out, jobs = dataset
    manifest = json.loads((out / "dataset.json").read_text())
    assert manifest["params"] == [
        {"name": "qdisc", "type": "VARCHAR"},
        {"name": "load", "type": "DOUBLE"},
        {"name": "favour", "type": "BOOLEAN"},
        {"name": "note", "type": "VARCHAR"},
        {"name": "seed", "type": "BIGINT"},
    ]
    runs = store.completed_runs(out)
    assert sorted(runs) == sorted(j.run_id for j in jobs)
    d = runs["favorqueue-0.8"].relative_to(out / "runs")
    assert d.parts == (
        "qdisc=favorqueue",
        "load=0.8",
        "favour=true",
        "note=a%2Fb%20c%3Dd%25e",
        "seed=3",
        "run_id=favorqueue-0.8",
    )
    # The core writes goodput.parquet and network.parquet with queue sampling.
    assert store.tables(out) == ["flows", "goodput", "network", "queues", "summaries", "summary_queues"]


def test_load_flows_is_every_run_with_its_parameters(dataset, single_runs):
    out, jobs = dataset
    flows = store.load(out)
    assert list(flows.columns[:6]) == ["qdisc", "load", "favour", "note", "seed", "run_id"]
    assert flows["load"].dtype == "float64" and flows["seed"].dtype == "int64"
    assert flows["favour"].dtype == bool
    assert set(flows["note"]) == {ODD}
    assert len(flows) == sum(len(r.flows) for r in single_runs.values())
    for j in jobs:
        part = flows[flows["run_id"] == j.run_id]
        for k, v in j.params.items():
            assert (part[k] == v).all(), k
        got = part.drop(columns=list(j.params) + ["run_id"]).reset_index(drop=True)
        want = single_runs[j.run_id].flows
        pd.testing.assert_frame_equal(got, want, check_dtype=False)


def test_queries_agree_with_pandas_over_the_single_runs(dataset, single_runs):
    out, jobs = dataset
    df = store.query(
        out,
        "SELECT qdisc, load, count(*) AS n, avg(fct_s) AS mean_fct, sum(drops) AS drops "
        "FROM flows GROUP BY qdisc, load ORDER BY qdisc, load",
    )
    assert len(df) == len(jobs)
    for row, j in zip(df.itertuples(index=False), sorted(jobs, key=lambda j: (j.params["qdisc"], j.params["load"]))):
        f = single_runs[j.run_id].flows
        assert (row.qdisc, row.load) == (j.params["qdisc"], j.params["load"])
        assert row.n == len(f)
        assert row.mean_fct == pytest.approx(f["fct_s"].mean(), rel=1e-12)
        assert row.drops == f["drops"].sum()
    # Parameters filter like columns (the favoured runs are the FavorQueue ones).
    n = store.query(out, "SELECT count(*) AS n FROM flows WHERE favour AND load > 0.6")["n"][0]
    assert n == len(single_runs["favorqueue-0.8"].flows)


def test_summaries_and_summary_queues(dataset, single_runs):
    out, _jobs = dataset
    s = store.load(out, "summaries")
    assert len(s) == len(single_runs)
    for row in s.itertuples(index=False):
        r = single_runs[row.run_id]
        assert row.flows_started == r.summary["flows_started"] == len(r.flows)
        assert row.events == r.summary["events"]
        assert row.seed == 3
    q = store.query(
        out,
        "SELECT s.run_id, s.dropped, s.departed, t.drops, t.departures FROM summary_queues s "
        "JOIN (SELECT run_id, queue, sum(drops_none + drops_short + drops_long) AS drops, "
        "sum(departures_none + departures_short + departures_long) AS departures "
        "FROM queues GROUP BY run_id, queue) t ON s.run_id = t.run_id AND s.name = t.queue",
    )
    assert len(q) == len(single_runs)  # only the bottleneck is sampled
    assert (q["dropped"] == q["drops"]).all() and (q["departed"] == q["departures"]).all()
    for row in q.itertuples(index=False):
        bq = [x for x in single_runs[row.run_id].summary["queues"] if x["name"] == "left->right"][0]
        assert row.dropped == bq["dropped"]


def test_load_and_query_errors(dataset, tmp_path):
    out, _ = dataset
    with pytest.raises(store.StoreError, match="'nope' is not in the dataset.*flows"):
        store.load(out, "nope")
    with pytest.raises(store.StoreError, match="no such directory"):
        store.query(tmp_path / "absent", "SELECT 1")
    with pytest.raises(store.StoreError, match="not a sweep dataset"):
        store.query(tmp_path, "SELECT 1")
    with pytest.raises(store.StoreError, match=r"^SQL: .*nope"):
        store.query(out, "SELECT nope FROM flows")
    empty = tmp_path / "empty"
    sc = base_dict()
    sc["traffic"][0]["load"] = 2.0  # every run fails
    assert run_many([Job("x", sc, {"p": 1})], empty, workers=1, progress=False).failed
    with pytest.raises(store.StoreError, match="no completed runs"):
        store.query(empty, "SELECT * FROM flows")


def test_cli_query_table_csv_json(dataset, cli):
    out, jobs = dataset
    sql = "SELECT qdisc, load, count(*) AS n FROM flows GROUP BY ALL ORDER BY ALL"
    want = store.query(out, sql)
    proc = cli("query", out, sql)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["qdisc", "load", "n"] and len(lines) == 1 + len(want)
    assert lines[1].split() == ["droptail", "0.5", str(want["n"][0])]
    proc = cli("query", out, sql, "--csv")
    assert proc.returncode == 0, proc.stderr
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(proc.stdout)), want, check_dtype=False)
    proc = cli("query", out, sql, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == want.to_dict(orient="records")
    proc = cli("query", out, "SELECT * FROM flows WHERE false")
    assert proc.returncode == 0 and proc.stdout.strip().endswith("(0 rows)")


def test_cli_query_errors_are_one_line_exit_2(dataset, cli, expect_error, tmp_path):
    out, _ = dataset
    assert "SQL:" in expect_error(cli("query", out, "SELEC 1"))
    assert "no such directory" in expect_error(cli("query", tmp_path / "nope", "SELECT 1"))


def test_dataset_keeps_one_set_of_parameters_and_widens_types(tmp_path):
    sc = base_dict()
    sc["duration_s"] = 1.0
    out = tmp_path / "ds"
    run_many([Job("a", sc, {"x": 1})], out, workers=1, progress=False)
    with pytest.raises(SweepError, match=r"has parameters \['x'\]"):
        run_many([Job("b", sc, {"y": 1})], out, workers=1, progress=False)
    run_many([Job("a", sc, {"x": 1}), Job("b", sc, {"x": 2.5})], out, workers=1, progress=False)
    df = store.load(out, "summaries")
    assert df["x"].dtype == "float64" and list(df["x"]) == [1.0, 2.5]


def test_a_failed_write_leaves_no_run_behind(tmp_path, monkeypatch):
    calls = []
    real = store._write_plain

    def flaky(path, data):
        calls.append(path.name)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(store, "_write_plain", flaky)
    files = {"flows.parquet": b"x", "queues.parquet": b"y", "summary.json": b"{}"}
    with pytest.raises(OSError):
        store.commit_run(tmp_path, "r1", {"p": 1}, ["p"], files)
    assert store.completed_runs(tmp_path) == {}
    assert not (tmp_path / "runs").exists()
    assert not any((tmp_path / ".staging").iterdir())
    monkeypatch.setattr(store, "_write_plain", real)
    d = store.commit_run(tmp_path, "r1", {"p": 1}, ["p"], files)
    assert d == tmp_path / "runs" / "p=1" / "run_id=r1"
    assert {p.name: p.read_bytes() for p in d.iterdir()} == files
    assert store.completed_runs(tmp_path) == {"r1": d}


def test_a_run_is_durable_before_it_becomes_visible(tmp_path, monkeypatch):
    """Every file of a run is synced to disk before the rename that makes the run visible
    (a crash can leave no complete-looking run with missing data)."""
    events = []
    real_sync, real_rename = store._sync_files, store.os.rename

    def sync(directory, names):
        events.append(("sync", Path(directory).parent.name, sorted(names)))
        real_sync(directory, names)

    def rename(src, dst):
        events.append(("rename", Path(src).parent.name))
        real_rename(src, dst)

    monkeypatch.setattr(store, "_sync_files", sync)
    monkeypatch.setattr(store.os, "rename", rename)
    files = {"flows.parquet": b"x", "queues.parquet": b"y", "summary.json": b"{}"}
    store.commit_run(tmp_path, "r1", {"p": 1}, ["p"], files)
    assert events == [("sync", ".staging", sorted(files)), ("rename", ".staging")]


@pytest.mark.parametrize("have_syncfs", [True, False])
def test_sync_files_flushes_each_file_where_there_is_no_syncfs(tmp_path, monkeypatch, have_syncfs):
    """Without syncfs (or if it fails) every file is fsynced; with it, one call covers all."""
    names = ["a.parquet", "summary.json"]
    for n in names:
        (tmp_path / n).write_bytes(b"data")
    fsynced, fs_calls = [], []
    real_fsync = store.os.fsync

    def fsync(fd):
        fsynced.append(fd)
        real_fsync(fd)

    def syncfs(fd):
        fs_calls.append(fd)
        return 0

    monkeypatch.setattr(store.os, "fsync", fsync)
    monkeypatch.setattr(store, "_syncfs", lambda: syncfs if have_syncfs else None)
    store._sync_files(tmp_path, names)
    assert (len(fs_calls), len(fsynced)) == ((1, 0) if have_syncfs else (0, 2))


def test_encoded_values_round_trip(tmp_path):
    values = ["plain", "x y", "a/b", "k=v", "100%", "é", "..", "-1"]
    for i, v in enumerate(values):
        store.commit_run(
            tmp_path, f"r{i}", {"s": v}, ["s"], {"summary.json": b"{}", "t.parquet": store._parquet_bytes([{"i": i}])}
        )
    store.merge_manifest(tmp_path, ["s"], {"s": "VARCHAR"})
    df = store.load(tmp_path, "t")
    assert dict(zip(df["i"], df["s"])) == dict(enumerate(values))


def test_a_query_over_its_memory_cap_still_gives_the_uncapped_answer(dataset, monkeypatch):
    # A cap too small for the query (lists of every flow's FCT, a few hundred thousand
    # values): DuckDB runs out of memory, and the query is run again without the cap.
    out, _jobs = dataset
    sql = (
        "SELECT qdisc, load, list(fct_s ORDER BY flow_id) AS l, list(r) AS pad FROM flows, range(100) t(r) "
        "GROUP BY qdisc, load ORDER BY qdisc, load"
    )
    free = store.query(out, sql, threads=1)
    tried = []
    inner = store._query
    monkeypatch.setattr(store, "_query", lambda o, q, t, m: tried.append(m) or inner(o, q, t, m))
    capped = store.query(out, sql, threads=1, memory_limit="1MB")
    assert tried == ["1MB", None]
    pd.testing.assert_frame_equal(free, capped)
    # Within a workable cap the answer is the same too.
    pd.testing.assert_frame_equal(free, store.query(out, sql, threads=1, memory_limit="512MB"))
