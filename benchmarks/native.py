"""The `savanna-native` binary the benchmarks measure, how it is built, and how a run's
time and memory are measured.

The benchmarks time and weigh the core as a user would ship it on its own: Cargo's
`native` profile (the `dist` profile's whole-program optimisation for the simulator, `panic
= "abort"`, dependencies optimised for size) linked statically against the C library
(`-C target-feature=+crt-static`, built for the host triple so that build scripts stay
dynamic). A static binary maps no shared libraries, so its resident set is its own code
and data. Where the C library has no static archive (`libc.a`), the same profile is built
dynamically instead, and the benchmarks say which one they measured.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CARGO_ARGS = ["--profile", "native", "-q", "-p", "savanna-core", "--bin", "savanna-native"]


def host_triple() -> str:
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    return next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("host:"))


def static_path() -> Path:
    return ROOT / "target" / host_triple() / "native" / "savanna-native"


def dynamic_path() -> Path:
    return ROOT / "target" / "native" / "savanna-native"


def build() -> tuple[Path, str]:
    """Build the binary; return its path and `"static"` or `"dynamic"`."""
    env = dict(os.environ, RUSTFLAGS=(os.environ.get("RUSTFLAGS", "") + " -C target-feature=+crt-static").strip())
    p = subprocess.run(["cargo", "build", *CARGO_ARGS, "--target", host_triple()], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    if p.returncode == 0:
        return static_path(), "static"
    print("savanna-native: the static build failed (no static C library?); measuring a dynamic build.\n"
          + p.stderr[-2000:], flush=True)
    subprocess.run(["cargo", "build", *CARGO_ARGS], cwd=ROOT, check=True)
    return dynamic_path(), "dynamic"


def existing() -> tuple[Path, str]:
    """The binary a previous `build()` left (for `--no-build`)."""
    if static_path().exists():
        return static_path(), "static"
    if dynamic_path().exists():
        return dynamic_path(), "dynamic"
    raise SystemExit("savanna-native has not been built: run without --no-build first")


def describe(kind: str) -> str:
    return (f"`savanna-native`, Cargo profile `native`, {'statically' if kind == 'static' else 'dynamically'} "
            "linked against the C library")


def run_measured(cmd) -> tuple[float, float]:
    """Run `cmd`; return (wall seconds, peak resident set in MiB) of that process alone.
    The peak comes from /usr/bin/time, a small process that forks the command: this
    Python process's own wait4 would also count the forked copy of the interpreter
    before it exec'd (14 MiB reported for an 8 MiB run)."""
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M"] + [str(c) for c in cmd],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}\n{proc.stderr[-3000:]}")
    return wall, int(proc.stderr.strip().splitlines()[-1]) / 1024.0
