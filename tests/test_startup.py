"""Start-up imports: ``savanna --version`` and ``import savanna`` load no heavy module (the
data stack, the runner, the emulator, the reproduction package), ``savanna run`` loads only
what running needs (no argparse, no TOML parser: its fast argument reader must agree with
argparse), and the public API loaded on first use is the same as before (issue 21). Timing
is not tested here; the figures are ``benchmarks/bench_core.py --startup`` and
``--front-end``."""

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


# What `savanna run` of a valid scenario file does not need: the data stack, and what the
# front end used to import on the way (argparse with re and enum, the TOML parser with
# typing, json, pathlib, shutil, dataclasses): each costs milliseconds of every run.
NOT_FOR_RUN = set(HEAVY) | {
    "argparse",
    "re",
    "enum",
    "tomllib",
    "typing",
    "json",
    "pathlib",
    "shutil",
    "dataclasses",
    "inspect",
}


def test_run_path_imports_only_what_running_needs(tmp_path):
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
    assert not mods & NOT_FOR_RUN, sorted(mods & NOT_FOR_RUN)


# Command lines the fast reader must take (the common forms) and ones it must leave to
# argparse; every one of them must parse as argparse parses it.
FAST = [
    ["run", "s.toml"],
    ["run", "s.toml", "--out", "o", "--quiet"],
    ["run", "-q", "s.toml", "-o", "o", "-v"],
    ["run", "s.json", "--out=o", "--seed", "7", "--duration", "2.5"],
    ["run", "s.toml", "--seed=3", "--duration=1e2", "--max-events", "1e9", "--max-memory-gb=0.5"],
    ["run", "s.toml", "--seed", "1", "--seed", "2", "--out", "a", "--out", "b"],
    ["run", "s.toml", "--out", ""],
    ["run", "s.toml", "--seed", " 5 "],
]
DEFERRED = [
    ["run"],
    ["run", "--help"],
    ["run", "-h"],
    ["run", "s.toml", "t.toml"],
    ["run", "s.toml", "--seed", "x"],
    ["run", "s.toml", "--seed", "-1"],
    ["run", "s.toml", "--duration", "-5"],
    ["run", "s.toml", "--dur", "5"],
    ["run", "s.toml", "-qv"],
    ["run", "s.toml", "-oout"],
    ["run", "s.toml", "-o=out"],
    ["run", "s.toml", "--quiet=yes"],
    ["run", "s.toml", "--out"],
    ["run", "--", "s.toml"],
    ["run", "-", "--out", "o"],
    ["run", "s.toml", "--no-such-option"],
    ["validate", "s.toml"],
    ["sweep", "run"],
    [],
]


def _argparse(argv):
    """argparse's namespace for `argv` as a dict, or the exit code it stopped with."""
    import contextlib
    import io

    from savanna.cli import build_parser

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return vars(build_parser(argv).parse_args(argv))
        except SystemExit as e:
            return e.code


def test_fast_run_reader_agrees_with_argparse_or_leaves_the_line_to_it():
    from savanna.cli import fast_args

    for argv in FAST:
        fast = fast_args(argv)
        assert fast is not None, argv
        assert vars(fast) == _argparse(argv), argv
    for argv in DEFERRED:
        assert fast_args(argv) is None, argv
        _argparse(argv)  # whatever argparse makes of it, it does not crash


def test_syntax_errors_are_worded_the_same_when_the_core_finds_them(tmp_path, cli):
    # The scenario's syntax is checked by the core only; when it rejects the file, the
    # message is still Python's (file, "invalid TOML"/"invalid JSON", line), exit code 2.
    cases = {
        "bad.toml": ('name = "x"\nfoo = [1,\n bar\n', "invalid TOML", "line 3"),
        "bad.json": ('{"name": "x",\n "a": [1,}\n', "invalid JSON", "line 2"),
        "deep.toml": ("name = 'x'\nx = " + "[" * 200 + "]" * 200 + "\n", "arrays or tables nested more than", "line 2"),
    }
    for name, (text, words, line) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        p = cli("run", path, "--out", tmp_path / "out", "--quiet")
        assert p.returncode == 2, p.stderr
        assert p.stderr.startswith(f"savanna: error: {path}: {words}"), p.stderr
        assert line in p.stderr, p.stderr
        assert not (tmp_path / "out" / "summary.json").exists()


def test_quick_exit_still_flushes_what_run_prints_to_a_pipe(tmp_path):
    # The console script ends `run` with os._exit; stdout to a pipe is block-buffered (unless
    # PYTHONUNBUFFERED, removed here), so the summary is lost unless it is flushed first.
    import os
    from pathlib import Path

    from conftest import _savanna_command

    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "dumbbell-droptail.toml"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    cmd = _savanna_command() + ["run", str(scenario), "--out", str(tmp_path / "out"), "--duration", "1"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    assert "flows:" in p.stdout and p.stdout.rstrip().endswith("summary.json"), p.stdout
