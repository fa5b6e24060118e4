# Savanna: set up, test, run the demo. Recipes call .venv/bin/... directly, so nothing
# needs activating. `make demo` and `make test` work from a fresh clone.

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
# maturin's build backend runs the `maturin` executable from PATH; with
# --no-build-isolation that is the one installed in the venv.
VPATH_ENV := PATH="$(abspath $(VENV))/bin:$$PATH"

.PHONY: setup build test test-rust test-py demo bench bench-ns3 clean

# The virtual environment itself.
$(VPY):
	$(PYTHON) -m venv $(VENV)

# Python dependencies (numpy, pandas, pyarrow, pytest, maturin): once, and again whenever
# pyproject.toml changes.
$(VENV)/.deps-installed: pyproject.toml | $(VPY)
	$(VPY) -m pip install --upgrade pip
	$(VPY) -m pip install 'maturin>=1.9.4,<2'
	$(VPATH_ENV) $(VPY) -m pip install --no-build-isolation -e '.[test]'
	touch $@

# setup: environment + an up-to-date extension. The editable install builds
# crates/savanna-py with the release profile ([tool.maturin] profile in pyproject.toml)
# and places savanna/_core*.so in python/savanna; cargo makes this a no-op (~1 s) when no
# Rust source changed. It also installs Chromium (Debian's package), with which the tests
# render the reproduction reports headless.
setup: $(VENV)/.deps-installed build
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

build: | $(VENV)/.deps-installed
	$(VPATH_ENV) $(VPY) -m pip install -q --no-build-isolation --no-deps -e .

# Rust unit tests of the core (the bindings crate is tested from Python), then the
# Python tests.
test: setup test-rust test-py

test-rust:
	cargo test --release --workspace --exclude savanna-py

test-py: setup
	$(VPY) -m pytest -q tests

# The main job: every paper's quick reproduction, with its report (out/reproduce/index.html).
demo: setup
	$(VENV)/bin/savanna reproduce all --quick --out out/reproduce

bench: setup
	@if [ -f benchmarks/bench_core.py ]; then \
		$(VPY) benchmarks/bench_core.py; \
	else \
		echo "bench: benchmarks/bench_core.py does not exist yet"; \
	fi

# Savanna side by side with ns-3 3.44 (builds the ns-3 program; ~17 min): a benchmark.
bench-ns3: setup
	$(VPY) benchmarks/vs_ns3.py

clean:
	rm -rf $(VENV) out target/wheels python/savanna/_core*.so
