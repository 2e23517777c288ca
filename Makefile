# Two commands do everything: `make run` and `make test` (see README.md).
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 8000
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: install run test bench migrate clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

migrate: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py setup_periodic_tasks

run: migrate
	@echo ""
	@echo "Fleet is starting on http://127.0.0.1:$(PORT)/  (API under /api/, admin console at /admin/)"
	@echo "Create the first platform admin with:"
	@echo "  $(PY) manage.py bootstrap_admin --email you@example.com --password '<8 to 128 characters>'"
	@echo ""
	PORT=$(PORT) $(VENV)/bin/honcho start web worker beat

test: install
	$(VENV)/bin/pytest $(PYTEST_ARGS)

bench: install
	$(PY) -m bench

clean:
	rm -rf $(VENV) var .pytest_cache
