#!/usr/bin/env bash
# Build benchmarks/ns3/build/savanna-ns3 against ns-3 3.44 from PyPI.
#
#   benchmarks/ns3/build.sh [--force]
#
# Creates benchmarks/ns3/.venv if missing, installs the pinned `ns3` wheel there (headers and
# shared libraries only: --no-deps skips cppyy, which only the Python bindings need), and
# compiles savanna_ns3.cc with g++ -O2 -std=c++20. The binary finds the ns-3 libraries through
# a relative rpath ($ORIGIN/...), so it runs without LD_LIBRARY_PATH. Safe to run again: it
# reinstalls nothing that is already there and recompiles only when the source or this script
# changed (or with --force). Needs python3 (>= 3.8, with venv) and g++ (C++20).
set -euo pipefail

NS3_SPEC="ns3==3.44.*"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv"
BUILD="$HERE/build"
SRC="$HERE/savanna_ns3.cc"
BIN="$BUILD/savanna-ns3"
PYTHON="${PYTHON:-python3}"
CXX="${CXX:-g++}"
FORCE=0
if [[ "${1:-}" == "--force" ]]; then FORCE=1; fi

start=$(date +%s.%N)

if [[ ! -x "$VENV/bin/python" ]]; then
    echo "build.sh: creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
VPY="$VENV/bin/python"

installed="$("$VPY" - <<'EOF'
import importlib.metadata as m
try:
    print(m.version("ns3"))
except m.PackageNotFoundError:
    print("")
EOF
)"
if [[ "$installed" != 3.44* ]]; then
    echo "build.sh: installing $NS3_SPEC into $VENV"
    "$VPY" -m pip install --quiet --disable-pip-version-check --no-input --no-deps "$NS3_SPEC" </dev/null
fi

# The wheel's C++ tree: <site-packages>/ns3/{include/ns3/*.h, lib64/libns3.44-*.so}
NS3_ROOT="$("$VPY" - <<'EOF'
import importlib.metadata as m
print(m.distribution("ns3").locate_file("ns3"))
EOF
)"
NS3_INC="$NS3_ROOT/include"
NS3_LIB="$NS3_ROOT/lib64"
if [[ ! -f "$NS3_INC/ns3/core-module.h" || ! -f "$NS3_LIB/libns3.44-core.so" ]]; then
    echo "build.sh: error: no ns-3 3.44 headers/libraries under $NS3_ROOT" >&2
    exit 1
fi

mkdir -p "$BUILD"
if [[ $FORCE -eq 1 || ! -x "$BIN" || "$SRC" -nt "$BIN" || "${BASH_SOURCE[0]}" -nt "$BIN" ]]; then
    # rpath relative to the binary, so the repository can be moved
    RPATH_REL="$("$VPY" -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$NS3_LIB" "$BUILD")"
    echo "build.sh: compiling $BIN"
    # The defines are those the wheel's CMake package exports to users (ns3Targets.cmake):
    # a release build with logging and asserts compiled in.
    "$CXX" -O2 -std=c++20 -o "$BIN.tmp" "$SRC" \
        -DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE \
        -I"$NS3_INC" -L"$NS3_LIB" \
        -lns3.44-traffic-control -lns3.44-point-to-point -lns3.44-internet \
        -lns3.44-network -lns3.44-core \
        -Wl,-rpath,"\$ORIGIN/$RPATH_REL" -Wl,--disable-new-dtags
    mv "$BIN.tmp" "$BIN"
else
    echo "build.sh: $BIN is up to date"
fi

end=$(date +%s.%N)
echo "build.sh: done in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s -> $BIN"
