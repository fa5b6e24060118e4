"""Start-up imports: ``savanna --version`` and ``import savanna`` load no heavy module (the
data stack, the runner, the emulator, the reproduction package), and the public API loaded
on first use is the same as before (issue 21). Timing is not tested here; the figure is
``benchmarks/bench_core.py --startup``."""

from __future__ import annotations

import subprocess
import sys
import textwrap

HEAVY = ("pandas", "pyarrow", "numpy", "matplotlib", "duckdb", "scipy")


def _modules_after(code: str) -> tuple[str, set[str]]:
    """Run `code` in a fresh interpreter; its stdout (less the last line) and the modules
    loaded at the end."""
    script = textwrap.dedent(code) + "\nimport sys\nprint('MODULES', ' '.join(sorted(sys.modules)))\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out, _, mods = proc.stdout.rpartition("MODULES ")
    return out, set(mods.split())


def test_version_imports_neither_pandas_nor_pyarrow():
    out, mods = _modules_after(
        """
        from savanna.cli import main
        try:
            main(["--version"])
        except SystemExit as e:
            assert e.code == 0, e.code
        """
    )
    assert out.startswith("savanna "), out
    assert not mods & set(HEAVY), sorted(mods & set(HEAVY))
    lazy = {"savanna.runner", "savanna.emulate", "savanna.reproduce", "savanna.analysis", "savanna.store"}
    assert not mods & lazy, sorted(mods & lazy)


def test_import_savanna_loads_the_api_on_first_use():
    out, mods = _modules_after(
        """
        import sys
        import savanna
        before = {m for m in ("savanna.runner", "savanna.emulate") if m in sys.modules}
        assert not before, before
        import importlib
        em = importlib.import_module("savanna.emulate")  # the module loaded first...
        assert savanna.emulate is em.emulate, savanna.emulate  # ...the attribute is the function
        from savanna import Result, ScenarioError, __version__, run, validate
        from savanna.runner import Result as R, run as r, validate as v
        assert (Result, run, validate) == (R, r, v)
        assert issubclass(ScenarioError, ValueError) and __version__
        assert set(savanna.__all__) <= set(dir(savanna))
        try:
            savanna.no_such_name
        except AttributeError as e:
            print("missing:", e)
        """
    )
    assert "missing: module 'savanna' has no attribute 'no_such_name'" in out
    assert not mods & {"pandas", "pyarrow"}


def test_help_and_reproduce_still_parse_with_the_lazy_sub_parser(cli):
    help_text = cli("--help")
    assert help_text.returncode == 0, help_text.stderr
    for command in ("run", "emulate", "validate", "compare", "sweep", "query", "reproduce"):
        assert command in help_text.stdout, command
    sub = cli("reproduce", "--help")
    assert sub.returncode == 0, sub.stderr
    assert "PAPER" in sub.stdout
    bad = cli("no-such-command")
    assert bad.returncode == 2 and "reproduce" in bad.stderr


def test_run_path_imports_neither_the_data_stack_nor_dataclasses(tmp_path):
    # `savanna run` whole-process time includes every module it imports before the core
    # starts: dataclasses (with inspect) costs about 4 ms and is not needed. (typing comes
    # with tomllib, which checks a TOML scenario's syntax.)
    from pathlib import Path

    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "dumbbell-droptail.toml"
    out, mods = _modules_after(
        f"""
        from savanna.cli import main
        assert main(["run", {str(scenario)!r}, "--out", {str(tmp_path / "out")!r},
                     "--duration", "1", "--quiet"]) in (0, None)
        """
    )
    assert (tmp_path / "out" / "summary.json").is_file()
    unwanted = set(HEAVY) | {"dataclasses", "inspect"}
    assert not mods & unwanted, sorted(mods & unwanted)
