# phasegate: `make demo` and `make test` work on a fresh machine (Python >= 3.11).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench venv node chromium sandbox clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# The pinned agent CLIs (claude, codex, gemini) used by the end-to-end tests.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch node_modules/.installed

node: node_modules/.installed

# The dashboard's browser test drives Debian's Chromium through Playwright
# (never a browser build of Playwright's own). Installed when missing.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "Installing Debian's chromium (the dashboard's browser test needs it)"; \
		if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq chromium; \
	}

# Claude Code's sandbox, which keeps the provider key from its Bash commands
# (CLAUDE_CODE_SUBPROCESS_ENV_SCRUB), needs bwrap and socat on Linux; the tests
# of it and of Codex under a system bwrap need them. Installed when missing.
sandbox:
	@[ "$$(uname -s)" != Linux ] || { command -v bwrap && command -v socat; } >/dev/null 2>&1 || { \
		echo "Installing Debian's bubblewrap and socat (Claude Code's sandbox tests need them)"; \
		if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq bubblewrap socat; \
	}

demo: $(STAMP)
	$(PY) -m phasegate.demo .demo

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(VENV)/bin/pytest -q

test: $(STAMP) node chromium sandbox lint typecheck
	$(VENV)/bin/pytest -q

bench: $(STAMP)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,bench]'
	$(PY) bench/run.py
	$(PY) bench/startup.py
	$(PY) bench/scale.py
	$(PY) bench/hook_latency.py
	$(PY) bench/parallel.py
	$(PY) bench/tokens.py

clean:
	rm -rf $(VENV) node_modules .pytest_cache .mypy_cache .ruff_cache .demo .bench
