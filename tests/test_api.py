"""Tests of the Python API: `savanna.run` inputs (path, TOML text, dict), overrides,
errors, temporary-directory handling, and the record contracts of docs/scenario.md ("What a
run writes"): flows/summary columns, determinism under the seed rule."""

from __future__ import annotations

import pickle
import tempfile
from pathlib import Path

import pandas as pd
import pytest
import savanna
import savanna._core
import savanna.analysis
from conftest import SHORT_S
from savanna import Result, ScenarioError

# flows.parquet columns fixed by the design contract.
FLOW_COLUMNS = {
    "flow_id",
    "src",
    "dst",
    "kind",
    "start_s",
    "end_s",
    "size_bytes",
    "size_pkts",
    "fct_s",
    "data_pkts_sent",
    "retransmits",
    "timeouts",
    "fast_retransmits",
    "drops",
    "ecn_marks",
    "syn_drops",
    "first_data_drop",
    "favored_pkts",
    "class_at_end",
    "path",
}
SUMMARY_KEYS = {
    "sim_seconds",
    "wall_seconds",
    "events",
    "packets_forwarded",
    "flows_started",
    "flows_finished",
    "queues",
}
QUEUE_KEYS = {"enqueued", "dropped", "marked", "pushed_out", "utilisation"}


# ---- module surface ---------------------------------------------------------------------


def test_exports():
    assert callable(savanna.run)
    assert isinstance(savanna.__version__, str) and savanna.__version__
    assert savanna.__version__ == savanna._core.__version__
    assert savanna.ScenarioError is savanna._core.ScenarioError


def test_scenario_error_is_value_error():
    assert issubclass(ScenarioError, ValueError)
    assert ScenarioError.__module__ == "savanna._core"
    e = pickle.loads(pickle.dumps(ScenarioError("queue.red.min_th: must be < max_th")))
    assert isinstance(e, ScenarioError) and "min_th" in str(e)


def test_core_rejects_unknown_format():
    with pytest.raises(ValueError, match="format"):
        savanna._core.validate("", "yaml", ".")


# ---- inputs -----------------------------------------------------------------------------


def _check(r):
    assert isinstance(r, Result)
    assert isinstance(r.flows, pd.DataFrame)
    assert r.queues is None or isinstance(r.queues, pd.DataFrame)
    assert isinstance(r.summary, dict)
    return r


@pytest.mark.filterwarnings("ignore:the simulator wrote no")
def test_run_accepts_path_str_and_pathlib(scenario_path):
    _check(savanna.run(str(scenario_path), duration_s=SHORT_S))
    _check(savanna.run(Path(scenario_path), duration_s=SHORT_S))


@pytest.mark.filterwarnings("ignore:the simulator wrote no")
def test_run_accepts_toml_string(scenario_text, scenario_path):
    _check(savanna.run(scenario_text, duration_s=SHORT_S, base_dir=scenario_path.parent))


@pytest.mark.filterwarnings("ignore:the simulator wrote no")
def test_run_accepts_dict(scenario_dict, scenario_path):
    _check(savanna.run(scenario_dict, duration_s=SHORT_S, base_dir=scenario_path.parent))


@pytest.mark.filterwarnings("ignore:the simulator wrote no")
def test_dict_with_numpy_values(scenario_dict, scenario_path):
    np = pytest.importorskip("numpy")
    # Notebooks build scenario dicts from numpy values; they must encode as plain JSON.
    d = {
        k: (np.int64(v) if type(v) is int else np.float64(v) if type(v) is float else v)
        for k, v in scenario_dict.items()
    }
    r = savanna.run(d, seed=np.int64(5), duration_s=np.float64(SHORT_S), base_dir=scenario_path.parent)
    _check(r)


def test_validate_accepts_all_forms(scenario_path, scenario_text, scenario_dict):
    savanna.validate(scenario_path)
    savanna.validate(scenario_text, base_dir=scenario_path.parent)
    savanna.validate(scenario_dict, base_dir=scenario_path.parent)


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        savanna.run(tmp_path / "nope.toml")
    with pytest.raises(FileNotFoundError):
        savanna.run("scenarios/no-such-file.toml")


def test_toml_syntax_error_raises_scenario_error():
    with pytest.raises(ScenarioError, match=r"invalid TOML.*line 2"):
        savanna.run('name = "x"\nduration_s = \n')


def test_bad_scenario_types():
    with pytest.raises(TypeError):
        savanna.run(42)
    with pytest.raises(TypeError):
        savanna.run(b'name = "x"')
    with pytest.raises(ScenarioError):
        savanna.run({"name": object()})


@pytest.mark.parametrize(
    "kw",
    [
        {"seed": -1},
        {"seed": 2**64},
        {"seed": True},
        {"seed": 1.5},
        {"duration_s": 0},
        {"duration_s": -1.0},
        {"duration_s": float("inf")},
        {"duration_s": "10"},
    ],
)
def test_bad_overrides(scenario_path, kw):
    with pytest.raises(ScenarioError):
        savanna.run(scenario_path, **kw)


# ---- output directories -----------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:the simulator wrote no")
def test_temporary_output_is_removed(scenario_path, tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    r = savanna.run(scenario_path, duration_s=SHORT_S)
    assert r.out_dir is None
    assert list(scratch.iterdir()) == []


@pytest.mark.filterwarnings("ignore:the simulator wrote no")
def test_temporary_output_removed_on_error(scenario_path, tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    def boom(*a, **k):
        raise RuntimeError("simulated failure")

    monkeypatch.setattr(savanna._core, "run_to_dir", boom)
    with pytest.raises(RuntimeError):
        savanna.run(scenario_path)
    assert list(scratch.iterdir()) == []


@pytest.mark.filterwarnings("ignore:the simulator wrote no")
def test_out_dir_is_kept(scenario_path, tmp_path):
    out = tmp_path / "kept"
    r = savanna.run(scenario_path, duration_s=SHORT_S, out=out)
    assert r.out_dir == out


def test_out_dir_has_contract_files(scenario_path, tmp_path):
    out = tmp_path / "kept"
    r = savanna.run(scenario_path, duration_s=SHORT_S, out=out)
    assert (out / "flows.parquet").is_file()
    assert (out / "summary.json").is_file()
    assert (out / "queues.parquet").is_file() == (r.queues is not None)


# ---- record contracts (need the real simulator) ------------------------------------------


def test_flows_columns(scenario_path):
    r = savanna.run(scenario_path, duration_s=SHORT_S)
    assert len(r.flows) > 0
    missing = FLOW_COLUMNS - set(r.flows.columns)
    assert not missing, f"flows.parquet lacks {sorted(missing)}"
    assert set(r.flows["kind"]) <= {"tcp", "udp"}
    assert set(r.flows["class_at_end"]) <= {"short", "long", "none"}
    assert r.flows["flow_id"].is_unique
    finished = r.flows["end_s"].notna()
    assert (r.flows.loc[finished, "fct_s"] > 0).all()
    assert r.flows.loc[~finished, "fct_s"].isna().all()


def test_result_lists_flows_in_flow_order_though_the_file_has_them_as_they_retired(scenario_path, tmp_path):
    out = tmp_path / "run"
    r = savanna.run(scenario_path, duration_s=20.0, out=out)
    assert len(r.flows) > 100
    assert list(r.flows["flow_id"]) == list(range(len(r.flows)))
    on_disk = pd.read_parquet(out / "flows.parquet")
    assert sorted(on_disk["flow_id"]) == list(r.flows["flow_id"])
    # Short flows that started after a long one retire before it.
    assert not on_disk["flow_id"].is_monotonic_increasing
    pd.testing.assert_frame_equal(on_disk.sort_values("flow_id", ignore_index=True), r.flows)
    pd.testing.assert_frame_equal(savanna.analysis.load_flows(out), r.flows)


def test_summary_keys(scenario_path):
    r = savanna.run(scenario_path, seed=11, duration_s=SHORT_S)
    missing = SUMMARY_KEYS - set(r.summary)
    assert not missing, f"summary.json lacks {sorted(missing)}"
    assert r.summary["seed"] == 11
    assert r.summary["sim_seconds"] == pytest.approx(SHORT_S)
    assert r.summary["events"] > 0
    assert r.summary["flows_started"] == len(r.flows)
    assert r.summary["flows_finished"] == int(r.flows["end_s"].notna().sum())
    assert r.summary["queues"], "no queue totals in summary.json"
    for q in r.summary["queues"]:
        assert not QUEUE_KEYS - set(q), q
        assert 0.0 <= q["utilisation"] <= 1.0


def test_same_seed_same_flows_whatever_the_input_form(scenario_path, scenario_text, scenario_dict):
    a = savanna.run(scenario_path, seed=3, duration_s=SHORT_S).flows
    b = savanna.run(scenario_text, seed=3, duration_s=SHORT_S, base_dir=scenario_path.parent).flows
    c = savanna.run(scenario_dict, seed=3, duration_s=SHORT_S, base_dir=scenario_path.parent).flows
    assert len(a) > 0
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)


def test_core_rejects_invalid_scenario(scenario_text, scenario_path):
    with pytest.raises(ScenarioError, match="no_such_field_xyz"):
        savanna.validate("no_such_field_xyz = 1\n" + scenario_text, base_dir=scenario_path.parent)
