"""Tests of the `savanna` command line: version, the one-line error contract (exit 2, no
traceback), the run/validate happy paths, and fast startup (no pandas on the run path)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import savanna
from conftest import SHORT_S
from savanna.cli import format_summary, one_line


def test_version(cli):
    proc = cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"savanna {savanna.__version__}"


def test_no_command_is_usage_error(cli):
    proc = cli()
    assert proc.returncode == 2
    assert "usage:" in proc.stderr


def test_python_dash_m_works():
    proc = subprocess.run([sys.executable, "-m", "savanna", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("savanna ")


# ---- the error contract -----------------------------------------------------------------


def test_run_missing_file(cli, expect_error, tmp_path):
    missing = tmp_path / "no-such-scenario.toml"
    line = expect_error(cli("run", missing, "--out", tmp_path / "out"))
    assert str(missing) in line
    assert not (tmp_path / "out").exists()


def test_validate_missing_file(cli, expect_error, tmp_path):
    expect_error(cli("validate", tmp_path / "nope.toml"))


def test_run_toml_syntax_error(cli, expect_error, write, tmp_path):
    bad = write("bad.toml", 'name = "x"\nduration_s = \n[queue\n')
    line = expect_error(cli("run", bad, "--out", tmp_path / "out"))
    assert "TOML" in line and "line 2" in line


def test_validate_toml_syntax_error(cli, expect_error, write):
    expect_error(cli("validate", write("bad.toml", "a = = 1\n")))


def test_run_json_syntax_error(cli, expect_error, write, tmp_path):
    bad = write("bad.json", '{"name": "x",, }')
    line = expect_error(cli("run", bad, "--out", tmp_path / "out"))
    assert "JSON" in line


def test_run_not_utf8(cli, expect_error, write, tmp_path):
    bad = write("latin1.toml", 'name = "caf\xe9"\n'.encode("latin-1"))
    line = expect_error(cli("run", bad, "--out", tmp_path / "out"))
    assert "UTF-8" in line


def test_run_directory_as_scenario(cli, expect_error, tmp_path):
    expect_error(cli("run", tmp_path, "--out", tmp_path / "out"))


def test_run_unreadable_file(cli, expect_error, write, tmp_path):
    # An OSError other than "not found" (here ENOTDIR; chmod 000 does not stop root).
    p = write("plain-file", "x") / "scenario.toml"
    line = expect_error(cli("run", p, "--out", tmp_path / "out"))
    assert "Not a directory" in line


@pytest.mark.parametrize("args", [["--seed", "-1"], ["--duration", "0"], ["--duration", "nan"], ["--duration", "-3"]])
def test_run_bad_overrides(cli, expect_error, scenario_path, tmp_path, args):
    expect_error(cli("run", scenario_path, "--out", tmp_path / "out", *args))


def test_bad_option_value_is_usage_error(cli, scenario_path):
    proc = cli("run", scenario_path, "--seed", "abc")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_run_invalid_scenario_is_one_line(cli, expect_error, write, tmp_path, scenario_text):
    # Valid TOML, invalid scenario (a misspelt key): the core must reject it, naming it.
    bad = write("typo.toml", "no_such_field_xyz = 1\n" + scenario_text)
    line = expect_error(cli("run", bad, "--out", tmp_path / "out"))
    assert "no_such_field_xyz" in line
    assert not (tmp_path / "out").exists()


def test_run_output_path_is_a_file(cli, expect_error, scenario_path, write):
    # An unusable output path is the user's to fix: exit 2, not a crash.
    blocker = write("file-not-dir", "x")
    expect_error(cli("run", scenario_path, "--out", blocker / "out", "--duration", SHORT_S))


def test_one_line_collapses_parser_diagrams():
    msg = textwrap.dedent(
        """\
        TOML parse error at line 3, column 7
          |
        3 | bad = = 1
          |       ^
        invalid string
        expected `"`, `'`
        """
    )
    assert one_line(msg) == ("TOML parse error at line 3, column 7: invalid string: expected `\"`, `'`")
    assert one_line("queue.red.min_th: must be < max_th") == "queue.red.min_th: must be < max_th"


# ---- happy paths ------------------------------------------------------------------------


def test_run_ok(cli, scenario_path, tmp_path):
    out = tmp_path / "out"
    proc = cli("run", scenario_path, "--out", out, "--seed", "7", "--duration", SHORT_S)
    assert proc.returncode == 0, proc.stderr
    assert "simulated" in proc.stdout and "flows:" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_run_quiet_prints_nothing(cli, scenario_path, tmp_path):
    proc = cli("run", scenario_path, "--out", tmp_path / "o", "--quiet", "--duration", SHORT_S)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


def test_validate_ok(cli, scenario_path):
    proc = cli("validate", scenario_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(": ok")


def test_run_writes_contract_files(cli, scenario_path, tmp_path):
    out = tmp_path / "out"
    proc = cli("run", scenario_path, "--out", out, "--duration", SHORT_S)
    assert proc.returncode == 0, proc.stderr
    assert (out / "flows.parquet").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sim_seconds"] == pytest.approx(SHORT_S)
    assert f"{summary['flows_started']:,} started" in proc.stdout


def test_run_path_does_not_import_pandas(scenario_path, tmp_path):
    code = textwrap.dedent(
        f"""
        import sys
        from savanna.cli import main
        rc = main(["run", {str(scenario_path)!r}, "--out", {str(tmp_path / "o")!r},
                   "--quiet", "--duration", "{SHORT_S}"])
        heavy = sorted(m for m in ("pandas", "pyarrow", "numpy") if m in sys.modules)
        print(rc, ",".join(heavy))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0"], proc.stdout


def test_format_summary_lists_queues_and_classes():
    summary = {
        "scenario": "demo",
        "seed": 3,
        "sim_seconds": 100.0,
        "wall_seconds": 2.0,
        "events": 1234567,
        "flows_started": 900,
        "flows_finished": 880,
        "queues": [
            {
                "name": "r1->r2",
                "discipline": "red",
                "arrivals": 1000,
                "enqueued": 950,
                "dropped": 50,
                "marked": 0,
                "pushed_out": 0,
                "utilisation": 0.973,
                "by_class": {
                    "short": {"arrivals": 100, "enqueued": 99, "dropped": 1},
                    "long": {"arrivals": 900, "enqueued": 851, "dropped": 49},
                    "none": {"arrivals": 0},
                },
            }
        ],
    }
    text = format_summary(summary)
    assert "demo  seed 3" in text
    assert "simulated 100 s in 2.00 s wall (50.0x real time), 1,234,567 events" in text
    assert "900 started, 880 finished" in text
    assert "queue r1->r2 (red): utilisation 97.3%, enqueued 950, dropped 50 (5.00%)" in text
    assert "short: enq 99 drop 1; long: enq 851 drop 49" in text


def test_format_summary_folds_quiet_queues():
    busy = {
        "name": "left->right",
        "discipline": "droptail",
        "arrivals": 100,
        "enqueued": 90,
        "dropped": 10,
        "utilisation": 0.9,
    }
    idle = [
        {
            "name": f"src{i}->left",
            "discipline": "droptail",
            "arrivals": 5,
            "enqueued": 5,
            "dropped": 0,
            "utilisation": 0.001 * i,
        }
        for i in range(10)
    ]
    summary = {"scenario": "d", "queues": [busy] + idle}
    text = format_summary(summary)
    assert "queue left->right (droptail): utilisation 90.0%" in text
    assert "src3->left" not in text
    assert "10 other queues: utilisation <= 0.9%, no drops" in text
    full = format_summary(summary, all_queues=True)
    assert "queue src3->left (droptail)" in full and "other queues" not in full
