# Two commands get a newcomer going: `make run` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The release-name parser compiled with mypyc (setup.py), built in place again when its source changes.
PARSER := $(VENV)/.parser-compiled

.PHONY: run test test-quick test-deps install lint bench clean-db settings-doc

$(STAMP): pyproject.toml setup.py
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP) $(PARSER)

$(PARSER): usenet/release_names.py $(STAMP)
	$(PY) setup.py -q build_ext --inplace
	touch $(PARSER)

install: $(STAMP) $(PARSER)

## Start the coordinator: embedded PostgreSQL, migrations, an admin login (its password: cat var/admin-password), gunicorn on 127.0.0.1:8000.
run: $(PARSER)
	$(PY) manage.py serve

## Run the whole test suite (real PostgreSQL, real HTTP, INN2 for integration tests).
test: $(PARSER) test-deps
	$(VENV)/bin/pytest

## The fast loop while working: every test but the slow ones (servers, browsers, chaos, PyPI).
test-quick: $(PARSER)
	$(VENV)/bin/pytest -m "not slow" -q

## Debian packages the integration tests use (INN2, the system PostgreSQL, Chromium).
## As root they are installed when missing; otherwise run `sudo .ci/install-*` once.
test-deps:
	@if [ "$$(id -u)" = 0 ]; then for script in .ci/install-*; do "$$script" || exit 1; done; \
	else echo "note: not root; if INN2, PostgreSQL or Chromium are missing run: sudo sh -c 'for s in .ci/install-*; do \$$s; done'"; fi

lint: $(PARSER)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy coordinator console newznab leases inspections seeding catalog indexer core usenet inspection seed_node simulator

# bench_issue27.py runs bench_call_cost.py, bench_fleet.py at 64 nodes, bench_e2e_index.py, and the goals' lines.
bench: $(PARSER)
	$(PY) bench/bench_lease.py
	$(PY) bench/bench_aggregate.py
	$(PY) bench/bench_planning.py
	$(PY) bench/bench_group_lease.py
	$(PY) bench/bench_dashboard.py
	$(PY) bench/bench_catalog.py
	$(PY) bench/bench_agent.py
	$(PY) bench/bench_reading_cpu.py
	$(PY) bench/bench_held_lane.py
	$(PY) bench/bench_names.py
	$(PY) bench/bench_inspect.py
	$(PY) bench/bench_issue27.py
	$(PY) bench/bench_batch_fixed.py
	$(PY) bench/bench_search.py --releases 1000000

## Write docs/settings.md and .env.example from coordinator/settings.toml (a test fails while either is stale).
settings-doc: $(PARSER)
	$(PY) -m coordinator.environment --markdown docs/settings.md --env-example .env.example

## Remove the embedded database (all local data).
clean-db:
	rm -rf var/pg
