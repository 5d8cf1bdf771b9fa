# The two commands: `make run` (bring the product up) and `make test` (run every test).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run test install migrate seed lint worker celery beat clean

$(STAMP): requirements/base.txt requirements/dev.txt requirements/constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing requirements into $(VENV) (first run takes a minute)..."
	@$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	@$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/dev.txt
	@touch $(STAMP)

install: $(STAMP)

migrate: install
	@$(PY) manage.py migrate --no-input -v 0

seed: migrate
	@$(PY) manage.py seed_demo

run: seed
	@$(PY) manage.py collectstatic --no-input -v 0
	@echo ""
	@echo "  Demo school page:  http://$(HOST):$(PORT)/"
	@echo "  Staff console:     http://$(HOST):$(PORT)/admin/"
	@echo ""
	$(VENV)/bin/daphne -b $(HOST) -p $(PORT) config.asgi:application

test: install
	$(VENV)/bin/pytest

lint: install
	$(VENV)/bin/ruff check .

worker: install
	$(VENV)/bin/celery -A config worker -l info

beat: install
	$(VENV)/bin/celery -A config beat -l info

clean:
	rm -rf $(VENV) staticfiles test-artifacts .pytest_cache
