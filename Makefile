# Two commands do all set-up: `make run` (the service) and `make test` (the test suite).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install client node browser redis run worker test lint bench bench-retrieval bench-speed bench-chatmemory bench-load bench-client bench-abuse fuzz

# requirements.txt: what the service runs on; requirements-model.txt: exporting the model (torch);
# requirements-dev.txt: tests and benchmarks.
$(STAMP): requirements.txt requirements-model.txt requirements-dev.txt clients/python/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-model.txt -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -e ./clients/python
	touch $(STAMP)

install: $(STAMP)

# The Python client's generator, ariadne-codegen, in a venv of its own (it needs an older graphql-core and ruff).
CODEGEN_VENV := var/codegen-venv
CODEGEN_STAMP := $(CODEGEN_VENV)/.installed
$(CODEGEN_STAMP): clients/python/requirements-codegen.txt
	test -x $(CODEGEN_VENV)/bin/python || $(PYTHON) -m venv $(CODEGEN_VENV)
	$(CODEGEN_VENV)/bin/python -m pip install --quiet -r clients/python/requirements-codegen.txt
	touch $(CODEGEN_STAMP)

# The TypeScript client's build tools (GraphQL Code Generator, tsc), from its lock file; Node 20+ (Debian's if missing).
TS_CLIENT := clients/typescript
NODE_STAMP := $(TS_CLIENT)/node_modules/.installed
node:
	command -v node >/dev/null && command -v npm >/dev/null || \
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm)

$(NODE_STAMP): $(TS_CLIENT)/package-lock.json | node
	cd $(TS_CLIENT) && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

# Regenerate both clients from the schema snapshot and the operations (clients/python/memory_client/operations):
# the Python client's generated/, and the TypeScript client's src/generated/ and dist/.
client: install $(CODEGEN_STAMP) $(NODE_STAMP)
	$(PY) clients/python/codegen.py
	cd $(TS_CLIENT) && npm run --silent build

# The admin browser test (tests/admin/test_admin_browser.py) drives Debian's chromium + chromedriver.
browser:
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver)

# The Procfile's processes (web: gunicorn, worker: django-q2), supervised; Ctrl-C stops them all.
run: install
	$(PY) manage.py serve

# The background worker alone (the Procfile's `worker`), e.g. on a second machine.
worker: install
	$(PY) manage.py serve worker

# The topology test (tests/ops/test_topology.py) starts Debian's redis-server as the task broker.
redis:
	command -v redis-server >/dev/null || \
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server)

# Two pytest processes (pytest-xdist), one per core. pytest exits 5 when it collects no tests: a failure, not a pass.
test: install browser redis $(CODEGEN_STAMP) $(NODE_STAMP)
	$(PY) -m pytest -n 2 $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$status

# Fuzz the GraphQL API (tests/graphql/test_fuzz.py) with many more cases than `make test` runs:
# FUZZ_EXAMPLES cases per operation (about 20 operations). Asserted: no 5xx, no INTERNAL_ERROR.
FUZZ_EXAMPLES ?= 500
fuzz: install
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest tests/graphql/test_fuzz.py -q -p no:cacheprovider

lint: install
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

# Benchmarks (not part of `make test`): retrieval quality on LoCoMo, then speed and scale, then chatmemory beside us,
# then the Python and TypeScript clients against plain HTTP, then abuse.
bench: bench-retrieval bench-speed bench-chatmemory bench-load bench-client bench-abuse

bench-retrieval: install
	$(PY) -m bench.retrieval

# The first run builds the 10k/100k/1M-message datasets (about 30 minutes); later runs reuse them.
bench-speed: install
	$(PY) -m bench.speed

# Throughput under load (1/8/32 clients, 1 and 2 web processes) on the 1M dataset.
bench-load: install
	$(PY) -m bench.load

# Slow, greedy and racing clients against issue 43's targets (loopback only, about 15 minutes).
bench-abuse: install
	$(PY) -m bench.abuse

# A chatbot turn through the Python client against the plain-HTTP turn, and through the TypeScript client
# against a plain fetch turn in Node (median of 200 each).
bench-client: install node
	$(PY) -m bench.client

# chatmemory 0.2.8 from PyPI in a venv of its own (never in requirements*.txt), timed beside this service.
CHATMEMORY_VENV := var/chatmemory-venv
$(CHATMEMORY_VENV)/bin/python:
	$(PYTHON) -m venv $(CHATMEMORY_VENV)
	$(CHATMEMORY_VENV)/bin/pip install --quiet chatmemory==0.2.8

bench-chatmemory: install $(CHATMEMORY_VENV)/bin/python
	$(PY) -m bench.compare_chatmemory
