"""Shared pytest fixtures for the Python layer: repository paths, scenario files, and a
helper that runs the installed ``savanna`` command the way a user would."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = REPO_ROOT / "scenarios"

# The scenario the contract tests run (shortened with duration_s): the repository's main
# demo scenario.
MAIN_SCENARIO = SCENARIOS / "dumbbell-droptail.toml"

# Contract tests shorten runs to this many simulated seconds.
SHORT_S = 2.0


@pytest.fixture
def scenario_path() -> Path:
    """A valid scenario file (see MAIN_SCENARIO)."""
    assert MAIN_SCENARIO.is_file(), f"{MAIN_SCENARIO} is missing"
    return MAIN_SCENARIO


@pytest.fixture
def scenario_text(scenario_path: Path) -> str:
    return scenario_path.read_text()


@pytest.fixture
def scenario_dict(scenario_text: str) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    return tomllib.loads(scenario_text)


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text_or_bytes) -> Path: a file in the test's temporary directory."""

    def _write(name: str, content) -> Path:
        p = tmp_path / name
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)
        return p

    return _write


def sigint_default() -> None:
    """preexec_fn for a child the test will Ctrl-C: a shell's background job (CI started
    with `&`) passes SIGINT on as ignored, and Python then installs no KeyboardInterrupt
    handler; put the default back, as an interactive user's shell would have it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _savanna_command() -> list:
    # The console script installed next to this interpreter (what `make` puts in
    # .venv/bin); fall back to `python -m savanna` if it is not there.
    script = Path(sys.executable).parent / "savanna"
    if script.is_file():
        return [str(script)]
    found = shutil.which("savanna")
    if found:
        return [found]
    return [sys.executable, "-m", "savanna"]


@pytest.fixture
def cli():
    """cli(*args) -> CompletedProcess of the `savanna` command (text, captured, no stdin)."""

    def _run(*args, cwd=None, timeout=600) -> subprocess.CompletedProcess:
        env = dict(os.environ)
        env.pop("PYTHONWARNINGS", None)
        return subprocess.run(
            _savanna_command() + [str(a) for a in args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
            timeout=timeout,
        )

    return _run


@pytest.fixture
def expect_error():
    """expect_error(proc, code=2) -> the error line; asserts the CLI error contract."""
    return _expect_error


def _expect_error(proc: subprocess.CompletedProcess, code: int = 2) -> str:
    """The CLI error contract: exit `code`, one `savanna: error:` line, no traceback."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("savanna: error: "), lines[0]
    assert proc.stdout == "", proc.stdout
    return lines[0]
