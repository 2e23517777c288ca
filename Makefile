# Two commands do everything: `make run` and `make test` (see README.md).
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 8000
# Procfile commands (celery, python) resolve to the project's venv.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: install run test lint bench migrate clean

# The Procfile's long-running processes: the web server, one Celery worker per queue (runtime
# calls, deploys, periodic jobs, deliveries), beat and the gateway listener.
PROCESSES := web worker provision periodic delivery beat gateway

# Reinstalled whenever pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

# The Procfile's release step: migrate, then install the periodic jobs (idempotent).
# FLEET_PORT as run gives it: migrate's system checks name the address agents would use.
migrate: install
	FLEET_PORT=$(PORT) DEBUG=$${DEBUG:-true} $(PY) manage.py migrate --noinput
	FLEET_PORT=$(PORT) DEBUG=$${DEBUG:-true} $(PY) manage.py setup_periodic_tasks

# Web, the four workers, beat and the gateway listener under honcho, on the embedded defaults (SQLite
# and a filesystem broker under var/) unless DATABASE_URL / REDIS_URL / CELERY_BROKER_URL are set.
# Agents get 2048 MB unless DEFAULT_RAM_MB says otherwise: OpenClaw needs it (docs/configuration.md).
# DEBUG=true (unless set): generated dev secrets, open /metrics, cookies without Secure. The
# defaults without it are production's.
run: migrate
	@echo ""
	@echo "Fleet is starting on http://127.0.0.1:$(PORT)/  (API under /api/, admin console at /admin/)"
	@echo "Create the first platform admin, in another terminal:"
	@echo "  DEBUG=true $(PY) manage.py bootstrap_admin --email you@example.com --password '<8 to 128 characters>'"
	@echo ""
	@# honcho (fleet/processes.py: with time for a clean stop); Ctrl-C (honcho answers 130) or
	@# SIGTERM (143) is a clean stop, not a failed make target.
	PORT=$(PORT) FLEET_PORT=$(PORT) DEBUG=$${DEBUG:-true} DEFAULT_RAM_MB=$${DEFAULT_RAM_MB:-2048} \
		$(PY) -m fleet.processes start $(PROCESSES); \
		status=$$?; if [ $$status -eq 130 ] || [ $$status -eq 143 ]; then echo "Fleet stopped."; else exit $$status; fi

# Uses DATABASE_URL when set, else SQLite. Extra pytest options: make test PYTEST_ARGS='-x -k auth'
# TEST_WORKERS pytest-xdist processes (0: one process): the modules that start a runtime, a browser
# or sshd run in order on one of them, those that need only the Docker engine on another, the fault
# tests on a third, and the others are shared out (tests/conftest.py). Three on two cores: those
# groups mostly wait on runtimes, engines and private services.
TEST_WORKERS ?= 3
test: install
	$(VENV)/bin/pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# The lint rules and the import layers are in pyproject.toml ([tool.ruff], [tool.importlinter]);
# CI runs this before the tests.
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

# Benchmarks print figures; they are never part of the test suite.
bench: install
	DEBUG=$${DEBUG:-true} $(PY) -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) var .pytest_cache
