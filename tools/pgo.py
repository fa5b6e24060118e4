"""Profile-guided optimisation of the core: the profile the `dist` builds are compiled with.

`make setup` builds the Python extension (and the benchmarks build `savanna-native`) with
`RUSTFLAGS=-Cprofile-use=target/pgo/merged.profdata`. This script makes that profile: it
builds `savanna-native` instrumented (`-Cprofile-generate`, into `target/pgo-gen`), runs it
on the training set below, and merges what the runs counted with the toolchain's
`llvm-profdata` (rustup's `llvm-tools` component, added when missing). The optimiser then
knows which branches and calls the event loop takes, and lays the hot paths out straight.
Results do not depend on it: a profile changes how the code is arranged, never what it
computes (`tools/golden.py check` compares every output byte for byte).

The profile is remade when the sources, the lock file, the toolchain or this script
change (a stamp beside it records what it was made from), so it always matches the code
it optimises. `SAVANNA_PGO=0` turns it off; so does a toolchain without `llvm-profdata`
(the build is then the plain `dist` one, with a warning).

Training set: every scenario of `scenarios/` (the papers' set-ups: drop-tail, RED,
FavorQueue, RIO with edge classifiers, the web and UDP workloads), cut to a few simulated
seconds, plus FavorQueue's load sweep under the other disciplines the papers compare
(CHOKe, LAS, RuN2C) and the reference dumbbell under SACK with CUBIC, RACK and pacing.

    python3 tools/pgo.py flags     # the RUSTFLAGS to build with (makes the profile if stale)
    python3 tools/pgo.py profile   # make the profile if stale; print its path
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11: no profile (the build goes on without one)
    tomllib = None

ROOT = Path(__file__).resolve().parent.parent
PGO_DIR = ROOT / "target" / "pgo"
PROFILE = PGO_DIR / "merged.profdata"
STAMP = PGO_DIR / "stamp"
GEN_TARGET = ROOT / "target" / "pgo-gen"
SCENARIOS = ROOT / "scenarios"

# How `savanna-native` is built, here and by the benchmarks: with the bindings' package
# selected too, so that Cargo resolves the dependencies' features as for the extension. The
# core then gets the same symbol names in both (they hash the resolved dependencies), and
# the profile, which names functions by symbol, applies to the extension as it does to the
# binary it was recorded from.
NATIVE_BUILD = ["build", "--profile", "dist", "-q", "-p", "savanna-core", "-p", "savanna-py", "--bin", "savanna-native"]

# Simulated seconds per training run: enough for every mechanism to reach its steady
# state (queues full, RIO's averages, the classifiers' thresholds), about 2 s in all.
TRAIN_SECONDS = 30.0
FAST_LINK_SECONDS = 6.0  # scenarios with a 100 Mb/s bottleneck: ten times the packets a second

# Variants of two scenario files: (file, name, change to its table).
VARIANTS: list[tuple[str, str, dict]] = [
    *[
        ("favorqueue-2013-fig03-10mbps.toml", q, {"topology": {"bottleneck_queue": {"type": q, "limit_pkts": 8}}})
        for q in ("choke", "las", "run2c")
    ],
    (
        "dumbbell-droptail.toml",
        "today-tcp",
        {"tcp": {"variant": None, "cc": "cubic", "sack": True, "rack": True, "pacing": True}},
    ),
]


def _log(msg: str) -> None:
    print(f"pgo: {msg}", file=sys.stderr)


def _merge(base: dict, change: dict) -> dict:
    """`base` with `change` applied key by key, tables recursively; None removes a key."""
    out = dict(base)
    for k, v in change.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _sources_digest() -> str:
    """What the profile is made from: the Rust sources, manifests and lock file, the
    training scenarios, this script and the toolchain."""
    h = hashlib.sha256()
    files = [ROOT / "Cargo.toml", ROOT / "Cargo.lock"]
    files += [*ROOT.glob("crates/*/src/**/*.rs"), *ROOT.glob("crates/*/Cargo.toml"), *SCENARIOS.iterdir()]
    named = sorted((str(p.relative_to(ROOT)), p) for p in files if p.is_file())
    for name, p in [*named, ("tools/pgo.py", Path(__file__))]:
        h.update(name.encode() + b"\0" + p.read_bytes() + b"\0")
    h.update(subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout.encode())
    return h.hexdigest()


def llvm_profdata() -> Path | None:
    """The toolchain's own `llvm-profdata` (its profile format matches rustc's LLVM),
    adding rustup's `llvm-tools` component when it is missing; None if unavailable."""
    try:
        sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True)
        host = next(
            ln.split(":", 1)[1].strip()
            for ln in subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout.splitlines()
            if ln.startswith("host:")
        )
    except (OSError, subprocess.CalledProcessError, StopIteration):
        return None
    tool = Path(sysroot.stdout.strip()) / "lib" / "rustlib" / host / "bin" / "llvm-profdata"
    if not tool.is_file() and shutil.which("rustup"):
        _log("adding rustup's llvm-tools component (for llvm-profdata)")
        subprocess.run(["rustup", "component", "add", "llvm-tools"], capture_output=True, text=True)
    return tool if tool.is_file() else None


def _training_runs(work: Path) -> list[Path]:
    """Write the training scenarios (JSON) into `work`, beside copies of the files they
    name, and return them."""
    for p in SCENARIOS.iterdir():
        if p.is_file() and p.suffix != ".toml":
            shutil.copy(p, work / p.name)
    runs = []

    def add(name: str, table: dict) -> None:
        rate = float(table.get("topology", {}).get("bottleneck_rate_mbps", 10.0))
        secs = FAST_LINK_SECONDS if rate > 50.0 else TRAIN_SECONDS
        table = {**table, "duration_s": min(float(table.get("duration_s", secs)), secs)}
        path = work / f"{name}.json"
        path.write_text(json.dumps(table), encoding="utf-8")
        runs.append(path)

    tables = {p.name: tomllib.loads(p.read_text(encoding="utf-8")) for p in sorted(SCENARIOS.glob("*.toml"))}
    for name, table in tables.items():
        add(Path(name).stem, table)
    for file, name, change in VARIANTS:
        add(f"{Path(file).stem}-{name}", _merge(tables[file], change))
    return runs


def make_profile() -> Path | None:
    """The profile, made afresh if the stamp says it is stale; None if it cannot be made."""
    if tomllib is None:
        _log("warning: Python 3.11 or newer is needed to read the training scenarios; building without a profile")
        return None
    digest = _sources_digest()
    if PROFILE.is_file() and STAMP.is_file() and STAMP.read_text(encoding="utf-8").strip() == digest:
        return PROFILE
    tool = llvm_profdata()
    if tool is None:
        _log("warning: no llvm-profdata in the Rust toolchain; building without a profile")
        return None
    raw = PGO_DIR / "raw"
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    env = {**os.environ, "RUSTFLAGS": f"-Cprofile-generate={raw}", "CARGO_TARGET_DIR": str(GEN_TARGET)}
    _log("building the instrumented savanna-native (target/pgo-gen)")
    subprocess.run(["cargo", *NATIVE_BUILD], cwd=ROOT, env=env, check=True)
    # Only the training runs' counts go into the profile, not the build scripts'.
    shutil.rmtree(raw)
    raw.mkdir()
    binary = GEN_TARGET / "dist" / "savanna-native"
    with tempfile.TemporaryDirectory(prefix="savanna-pgo-") as tmp:
        work = Path(tmp)
        runs = _training_runs(work)
        _log(f"training on {len(runs)} scenarios")
        for sc in runs:
            p = subprocess.run(
                [str(binary), str(sc), "--out", str(work / "out" / sc.stem), "--quiet"],
                env={**os.environ, "LLVM_PROFILE_FILE": str(raw / "run-%p-%m.profraw")},
                capture_output=True,
                text=True,
            )
            if p.returncode != 0:
                raise RuntimeError(f"training run {sc.name} failed: {p.stderr.strip()[-500:]}")
    tmp_profile = PROFILE.with_suffix(".tmp")
    subprocess.run([str(tool), "merge", "-o", str(tmp_profile), str(raw)], check=True, capture_output=True)
    tmp_profile.replace(PROFILE)
    STAMP.write_text(digest + "\n", encoding="utf-8")
    shutil.rmtree(raw, ignore_errors=True)
    return PROFILE


def rustflags() -> str:
    """RUSTFLAGS for a `dist` build: the caller's, plus the profile when there is one."""
    base = os.environ.get("RUSTFLAGS", "").strip()
    if os.environ.get("SAVANNA_PGO", "1") == "0":
        return base
    try:
        profile = make_profile()
    except (OSError, subprocess.CalledProcessError, RuntimeError) as e:
        _log(f"warning: the profile could not be made ({e}); building without one")
        profile = None
    if profile is None:
        return base
    return f"{base} -Cprofile-use={profile}".strip()


def main(argv: list[str]) -> int:
    if argv == ["flags"]:
        print(rustflags())
        return 0
    if argv == ["profile"]:
        p = make_profile()
        print(p if p else "")
        return 0 if p else 1
    print("usage: python3 tools/pgo.py flags|profile (see the module's docstring)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
