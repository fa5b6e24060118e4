# Savanna: set up, test, run the demo. Recipes call .venv/bin/... directly, so nothing
# needs activating. `make demo` and `make test` work from a fresh clone.

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
# maturin's build backend runs the `maturin` executable from PATH; with
# --no-build-isolation that is the one installed in the venv.
VPATH_ENV := PATH="$(abspath $(VENV))/bin:$$PATH"
# The extension is compiled with the core's optimisation profile (tools/pgo.py: made from
# training runs when the sources change; SAVANNA_PGO=0 builds without it).
PGO_ENV := RUSTFLAGS="$$($(PYTHON) tools/pgo.py flags)"

.PHONY: setup setup-test build lint test test-rust test-py demo bench bench-ns3 clean

# The virtual environment itself.
$(VPY):
	$(PYTHON) -m venv $(VENV)

# Python dependencies (numpy, pandas, pyarrow, pytest, maturin): once, and again whenever
# pyproject.toml changes.
$(VENV)/.deps-installed: pyproject.toml | $(VPY)
	$(VPY) -m pip install --upgrade pip
	$(VPY) -m pip install 'maturin>=1.9.4,<2'
	$(PGO_ENV) $(VPATH_ENV) $(VPY) -m pip install --no-build-isolation -e '.[test]'
	touch $@

# setup: environment + an up-to-date extension. The editable install builds
# crates/savanna-py with the `dist` profile ([tool.maturin] profile in pyproject.toml) and
# the optimisation profile, and places savanna/_core*.so in python/savanna; cargo makes
# this a no-op (~1 s) when no Rust source changed. Needs no root.
setup: $(VENV)/.deps-installed build

# setup-test: also Chromium (Debian's package), with which the tests render the
# reproduction reports headless; installing it is the one step that may need root.
setup-test: setup
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

# The bytecode of the package is compiled here, as a wheel install compiles it: an editable
# install does not, and where PYTHONDONTWRITEBYTECODE is set every `savanna` command would
# compile its modules again (about 15 ms of each `savanna run`).
build: | $(VENV)/.deps-installed
	$(PGO_ENV) $(VPATH_ENV) $(VPY) -m pip install -q --no-build-isolation --no-deps -e .
	PYTHONDONTWRITEBYTECODE= $(VPY) -m compileall -q python/savanna >/dev/null

# Formatter and linter, Rust and Python: any difference or warning fails.
lint: setup
	cargo fmt --all --check
	@! grep -rn --include='*.rs' '.\{121,\}' crates || (echo "Rust lines over 120 columns (above)"; exit 1)
	cargo clippy --release --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests benchmarks tools
	$(VENV)/bin/ruff format --check python tests benchmarks tools

# Lint, the Rust tests of the core (the bindings crate is tested from Python), then the
# Python tests.
test: setup-test lint test-rust test-py

test-rust:
	cargo test --release --workspace --exclude savanna-py

test-py: setup-test
	$(VPY) -m pytest -q tests

# The main job: every paper's quick reproduction, with its report (out/reproduce/index.html).
demo: setup
	$(VENV)/bin/savanna reproduce all --quick --out out/reproduce

# The core's speed on the reference dumbbell (see benchmarks/README.md).
bench: setup
	$(VPY) benchmarks/bench_core.py

# Savanna side by side with ns-3 3.44 (builds the ns-3 program; ~17 min): a benchmark.
bench-ns3: setup
	$(VPY) benchmarks/vs_ns3.py

clean:
	rm -rf $(VENV) out target/wheels python/savanna/_core*.so
