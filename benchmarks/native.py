"""The `savanna-native` binary the benchmarks measure, how it is built, and how a run's
time and memory are measured.

`savanna-native` is the Rust core alone behind the same command line as `savanna run`:
built with Cargo's `dist` profile (release with whole-program optimisation), dynamically
linked, exactly as `cargo build --profile dist -p savanna-core --bin savanna-native` gives it
to a user. Nothing is done to the binary for the benchmark's sake.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CARGO_ARGS = ["build", "--profile", "dist", "-q", "-p", "savanna-core", "--bin", "savanna-native"]
BINARY = ROOT / "target" / "dist" / "savanna-native"


def build() -> tuple[Path, str]:
    """Build (or bring up to date) the binary; return (path, kind)."""
    p = subprocess.run(["cargo", *CARGO_ARGS], cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("savanna-native: cargo build failed\n" + p.stderr[-3000:])
    return BINARY, "dist"


def existing() -> tuple[Path, str]:
    """The binary a previous `build()` left (for `--no-build`)."""
    if not BINARY.exists():
        raise SystemExit("savanna-native has not been built: run without --no-build first")
    return BINARY, "dist"


def describe(kind: str) -> str:
    return f"`savanna-native`, Cargo profile `{kind}` (release, fat LTO, one codegen unit)"


def run_measured(cmd) -> tuple[float, float]:
    """Run `cmd`; return (wall seconds, peak resident set in MiB) of that process alone.
    The peak comes from /usr/bin/time, a small process that forks the command: this
    Python process's own wait4 would also count the forked copy of the interpreter
    before it exec'd."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%M"] + [str(c) for c in cmd],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{proc.stderr[-3000:]}")
    return wall, int(proc.stderr.strip().splitlines()[-1]) / 1024.0
