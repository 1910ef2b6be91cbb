# Two commands do all set-up: `make run` (the service) and `make test` (the test suite).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install browser run worker test lint bench bench-retrieval bench-speed

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

# The admin browser test (tests/test_admin_browser.py) drives Debian's chromium + chromedriver.
browser:
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver)

run: install
	$(PY) manage.py serve

worker: install
	$(PY) manage.py qcluster

# pytest exits 5 when it collects no tests: that is a failure, not a pass.
test: install browser
	$(PY) -m pytest $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$status

lint: install
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

# Benchmarks (not part of `make test`): retrieval quality on LoCoMo, then speed and scale.
bench: bench-retrieval bench-speed

bench-retrieval: install
	$(PY) -m bench.retrieval

# The first run builds the 10k/100k/1M-message datasets (about 30 minutes); later runs reuse them.
bench-speed: install
	$(PY) -m bench.speed
