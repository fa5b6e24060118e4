"""The `savanna-native` binary the benchmarks measure, how it is built, and how a run's
time and memory are measured.

`savanna-native` is the Rust core alone behind the same command line as `savanna run`:
built with Cargo's `dist` profile (release with whole-program optimisation) and the
optimisation profile that `make setup` builds the extension with (`tools/pgo.py`),
dynamically linked. Nothing is done to the binary for the benchmark's sake: it is compiled
as the extension users run is.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "dist" / "savanna-native"


def _load_pgo():
    spec = importlib.util.spec_from_file_location("savanna_pgo", ROOT / "tools" / "pgo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# The profile (tools/pgo.py) and the build command the extension's profile applies to.
pgo = _load_pgo()


def build() -> tuple[Path, str]:
    """Build (or bring up to date) the binary; return (path, kind)."""
    flags = pgo.rustflags()
    env = {**os.environ, "RUSTFLAGS": flags}
    p = subprocess.run(["cargo", *pgo.NATIVE_BUILD], cwd=ROOT, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit("savanna-native: cargo build failed\n" + p.stderr[-3000:])
    return BINARY, "dist" + (" with PGO" if "-Cprofile-use" in flags else " without PGO")


def existing() -> tuple[Path, str]:
    """The binary a previous `build()` left (for `--no-build`)."""
    if not BINARY.exists():
        raise SystemExit("savanna-native has not been built: run without --no-build first")
    return BINARY, "dist"


def describe(kind: str) -> str:
    return f"`savanna-native`, Cargo profile {kind} (release, fat LTO, one codegen unit)"


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
