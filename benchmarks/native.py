"""The `savanna-native` binary the benchmarks measure, how it is built, and how a run's
time and memory are measured.

The benchmarks time and weigh the core as a user would ship it on its own: Cargo's
`native` profile (the `dist` profile's whole-program optimisation for the simulator, `panic
= "abort"`, dependencies optimised for size) linked statically against the C library
(`-C target-feature=+crt-static`, built for the host triple so that build scripts stay
dynamic) at a fixed address (`-C relocation-model=static`). A static binary maps no shared
libraries, so its resident set is its own code and data; at a fixed address it has no
relocations to apply at startup (a position-independent one reads 83 KB of them and
writes the 53 KB of pointers they patch, about 0.13 MiB resident). Where the C library
has no static archive (`libc.a`), the same profile is built dynamically instead, and the
benchmarks say which one they measured.

Then, where valgrind is installed, the binary is relinked with its code laid out by use: the
functions that runs of the two dumbbell scenarios execute (as callgrind lists them)
are placed together (the linker's `--symbol-ordering-file`). The kernel maps a program's
code in 64 KB blocks around each page a run touches, so scattered code makes most of the
3 MB binary resident though a run executes under 1 MB of it; grouped, about 1.3 MiB less is
resident. The code and what it computes are the same (the profile only orders it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
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


# The runs whose executed functions order the code: the two dumbbell scenarios, whole
# (about 15 s each under callgrind). Shorter runs miss code that only long ones execute:
# a Parquet column that fills more than one page, say, which faults in 64 KB more code.
PROFILE_SCENARIOS = ("dumbbell-droptail.toml", "dumbbell-red.toml")

# Functions the C library runs natively but not under valgrind, which gives its client no
# vDSO: a static program's setup of the vDSO's link map (its symbol lookup, `do_lookup_x`,
# runs under valgrind too). Found with `perf record -e page-faults`: left out, they fault
# in 64 KB of unordered code.
NATIVE_ONLY = ("_dl_new_object", "_dl_add_to_namespace_list", "_dl_setup_hash")


def _cargo(env, target: list[str], link_args: list[str] = ()) -> subprocess.CompletedProcess:
    if link_args:
        cmd = ["cargo", "rustc", *CARGO_ARGS, *target, "--", *link_args]
    else:
        cmd = ["cargo", "build", *CARGO_ARGS, *target]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)


def executed_functions(binary: Path) -> list[str]:
    """Symbols of the functions `binary` executes on the dumbbell scenarios, in the order
    callgrind first lists them, then `NATIVE_ONLY` (empty if valgrind is not installed)."""
    if not shutil.which("valgrind"):
        return []
    import tomllib

    names: dict[str, None] = {}
    with tempfile.TemporaryDirectory(prefix="savanna-profile-") as tmp:
        for base in PROFILE_SCENARIOS:
            sc = tomllib.loads((ROOT / "scenarios" / base).read_text())
            sc.setdefault("tcp", {})["teardown"] = True
            path = Path(tmp) / (base + ".json")
            path.write_text(json.dumps(sc))
            out = Path(tmp) / "callgrind.out"
            p = subprocess.run(
                [
                    "valgrind",
                    "--tool=callgrind",
                    "--demangle=no",
                    "--compress-strings=no",
                    f"--callgrind-out-file={out}",
                    str(binary),
                    str(path),
                    "--out",
                    str(Path(tmp) / "run"),
                    "--quiet",
                ],
                capture_output=True,
                text=True,
            )
            if p.returncode != 0:
                print(
                    "savanna-native: the profiling run failed; the code is not reordered.\n" + p.stderr[-2000:],
                    flush=True,
                )
                return []
            for m in re.finditer(r"^c?fn=(\S+)", out.read_text(), re.M):
                name = re.sub(r"'\d+$", "", m.group(1))
                if not name.startswith("0x"):
                    names.setdefault(name)
    names.update(dict.fromkeys(NATIVE_ONLY))
    return _with_variants(binary, list(names))


# glibc picks among CPU-specific variants of its string and maths functions (memmove's AVX2,
# EVEX or AVX-512 code, say) at startup; valgrind's virtual CPU may pick another than the
# real one will, so every variant of a family used is ordered with it. A family counts as
# used when one of its variants ran or its selector (`strcmp_ifunc`) did.
_VARIANT = re.compile(r"^__([a-z0-9]+?)_(?:sse|ssse|avx|evex|erms|fma|unaligned)")
_SELECTOR = re.compile(r"^([a-z0-9]+)_ifunc$")


def _with_variants(binary: Path, names: list[str]) -> list[str]:
    families = {m.group(1) for n in names if (m := _VARIANT.match(n) or _SELECTOR.match(n))}
    if not families:
        return names
    out = subprocess.run(["nm", str(binary)], capture_output=True, text=True).stdout
    seen = set(names)
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and (m := _VARIANT.match(parts[2])) and m.group(1) in families and parts[2] not in seen:
            seen.add(parts[2])
            names.append(parts[2])
    return names


def build() -> tuple[Path, str]:
    """Build the binary; return its path and how it was built (for `describe`)."""
    env = dict(
        os.environ,
        RUSTFLAGS=(
            os.environ.get("RUSTFLAGS", "") + " -C target-feature=+crt-static -C relocation-model=static"
        ).strip(),
    )
    target = ["--target", host_triple()]
    p = _cargo(env, target)
    if p.returncode == 0:
        path, kind = static_path(), "static"
    else:
        print(
            "savanna-native: the static build failed (no static C library?); measuring a dynamic build.\n"
            + p.stderr[-2000:],
            flush=True,
        )
        env, target = dict(os.environ), []
        _cargo_ok(env, target)
        path, kind = dynamic_path(), "dynamic"
    # The functions a run executes do not depend on their order, so this binary serves for
    # the profile even if a previous build left it ordered.
    order = executed_functions(path)
    if order:
        order_file = path.with_suffix(".order")
        order_file.write_text("\n".join(order) + "\n")
        # Cargo does not see the file's contents: make it relink.
        _touch_binary_source()
        p = _cargo(
            env,
            target,
            ["-C", f"link-arg=-Wl,--symbol-ordering-file={order_file}", "-C", "link-arg=-Wl,--no-warn-symbol-ordering"],
        )
        if p.returncode == 0:
            kind += ", ordered"
            path.with_suffix(".kind").write_text(kind)
            return path, kind
        # The linker is not LLD (older toolchains link with GNU ld).
        print(
            "savanna-native: relinking with the code ordered failed; measuring it unordered.\n" + p.stderr[-2000:],
            flush=True,
        )
        reason = "the linker cannot order symbols"
    else:
        reason = "the profiling run failed" if shutil.which("valgrind") else "no valgrind"
    # Cargo cannot tell an ordered binary (a previous build's) from a plain one: relink.
    _touch_binary_source()
    _cargo_ok(env, target)
    kind += ", not ordered: " + reason
    path.with_suffix(".kind").write_text(kind)
    return path, kind


def _cargo_ok(env, target: list[str]) -> None:
    p = _cargo(env, target)
    if p.returncode != 0:
        raise SystemExit("savanna-native: cargo build failed\n" + p.stderr[-3000:])


def existing() -> tuple[Path, str]:
    """The binary a previous `build()` left (for `--no-build`)."""
    for path, kind in ((static_path(), "static"), (dynamic_path(), "dynamic")):
        if path.exists():
            kind_file = path.with_suffix(".kind")
            return path, kind_file.read_text().strip() if kind_file.exists() else kind
    raise SystemExit("savanna-native has not been built: run without --no-build first")


def describe(kind: str) -> str:
    linked = "statically" if kind.startswith("static") else "dynamically"
    text = f"`savanna-native`, Cargo profile `native`, {linked} linked against the C library"
    if kind.endswith(", ordered"):
        text += ", code ordered by a profiling run (callgrind)"
    elif ", not ordered: " in kind:
        text += ", code not ordered (" + kind.split(", not ordered: ", 1)[1] + ")"
    return text


def _touch_binary_source() -> None:
    os.utime(ROOT / "crates" / "savanna-core" / "src" / "bin" / "savanna-native.rs")


def run_measured(cmd) -> tuple[float, float]:
    """Run `cmd`; return (wall seconds, peak resident set in MiB) of that process alone.
    The peak comes from /usr/bin/time, a small process that forks the command: this
    Python process's own wait4 would also count the forked copy of the interpreter
    before it exec'd (14 MiB reported for an 8 MiB run)."""
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
