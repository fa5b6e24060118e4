"""tools/pgo.py: the optimisation profile's training set, its staleness rule and its off
switch. (That a build with the profile gives byte-identical outputs is what
`tools/golden.py check` shows; building the profile is `make setup`'s job.)"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import savanna

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def pgo():
    spec = importlib.util.spec_from_file_location("savanna_pgo_under_test", ROOT / "tools" / "pgo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_training_scenario_is_one_the_core_accepts(pgo, tmp_path):
    # A refused scenario would make `make setup` build without a profile (a warning only).
    runs = pgo._training_runs(tmp_path)
    assert len(runs) == len(list((ROOT / "scenarios").glob("*.toml"))) + len(pgo.VARIANTS)
    for sc in runs:
        savanna.validate(str(sc))
        table = json.loads(sc.read_text())
        assert table["duration_s"] <= pgo.TRAIN_SECONDS, sc.name


def test_training_variants_change_what_they_name(pgo, tmp_path):
    runs = {p.stem: json.loads(p.read_text()) for p in pgo._training_runs(tmp_path)}
    for q in ("choke", "las", "run2c"):
        assert runs[f"favorqueue-2013-fig03-10mbps-{q}"]["topology"]["bottleneck_queue"]["type"] == q
    tcp = runs["dumbbell-droptail-today-tcp"]["tcp"]
    assert tcp["cc"] == "cubic" and tcp["sack"] and tcp["rack"] and tcp["pacing"]
    assert "variant" not in tcp
    # The base scenario's other keys are kept.
    base = runs["dumbbell-droptail"]["tcp"]
    changed = {"variant", "cc", "sack", "rack", "pacing"}
    assert {k: v for k, v in base.items() if k not in changed} == {k: v for k, v in tcp.items() if k not in changed}


def test_merge_replaces_recursively_and_none_removes(pgo):
    base = {"a": 1, "t": {"x": 1, "y": 2}, "gone": 3}
    out = pgo._merge(base, {"t": {"y": 5, "z": 6}, "gone": None, "b": 2})
    assert out == {"a": 1, "t": {"x": 1, "y": 5, "z": 6}, "b": 2}
    assert base == {"a": 1, "t": {"x": 1, "y": 2}, "gone": 3}  # the base is not changed


def test_a_changed_source_makes_the_profile_stale(pgo, tmp_path, monkeypatch):
    tree = tmp_path / "repo"
    (tree / "crates" / "core" / "src").mkdir(parents=True)
    (tree / "scenarios").mkdir()
    src = tree / "crates" / "core" / "src" / "lib.rs"
    src.write_text("fn a() {}\n")
    (tree / "scenarios" / "s.toml").write_text("x = 1\n")
    monkeypatch.setattr(pgo, "ROOT", tree)
    monkeypatch.setattr(pgo, "SCENARIOS", tree / "scenarios")
    before = pgo._sources_digest()
    assert pgo._sources_digest() == before  # a function of the files only
    src.write_text("fn a() { let _ = 1; }\n")
    assert pgo._sources_digest() != before
    src.write_text("fn a() {}\n")
    assert pgo._sources_digest() == before
    (tree / "scenarios" / "s.toml").write_text("x = 2\n")
    assert pgo._sources_digest() != before


def test_savanna_pgo_0_builds_without_a_profile(pgo, monkeypatch):
    monkeypatch.setenv("SAVANNA_PGO", "0")
    monkeypatch.setenv("RUSTFLAGS", "-Cdebuginfo=1")

    def never():
        raise AssertionError("the profile is not made when PGO is off")

    monkeypatch.setattr(pgo, "make_profile", never)
    assert pgo.rustflags() == "-Cdebuginfo=1"


def test_no_profile_means_the_callers_flags_only(pgo, monkeypatch):
    monkeypatch.delenv("SAVANNA_PGO", raising=False)
    monkeypatch.setenv("RUSTFLAGS", "")
    monkeypatch.setattr(pgo, "make_profile", lambda: None)
    assert pgo.rustflags() == ""

    def broken():
        raise RuntimeError("training run x failed")

    monkeypatch.setattr(pgo, "make_profile", broken)
    assert pgo.rustflags() == ""
    monkeypatch.setattr(pgo, "make_profile", lambda: Path("/p/merged.profdata"))
    assert pgo.rustflags() == "-Cprofile-use=/p/merged.profdata"
