# The two commands: `make run` (bring the product up) and `make test` (run every test).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# Where a browser reaches the site (printed by seed_demo and run): 0.0.0.0 listens everywhere, 127.0.0.1 opens it.
BASE_URL ?= http://$(if $(filter 0.0.0.0,$(HOST)),127.0.0.1,$(HOST)):$(PORT)
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run test install migrate seed lint bench evaluate worker celery beat clean

$(STAMP): requirements/base.txt requirements/dev.txt requirements/constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing requirements into $(VENV) (first run takes a minute)..."
	@$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	@$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/dev.txt
	@touch $(STAMP)

install: $(STAMP)

# Development settings for this checkout (DEBUG on, random SECRET_KEY and demo password), written once and
# git-ignored: the settings are production unless told otherwise (config/local_env.py).
.env.local:
	@$(PYTHON) config/local_env.py

migrate: install .env.local
	@$(PY) manage.py migrate --no-input -v 0

seed: migrate
	@$(PY) manage.py seed_demo --base-url $(BASE_URL)

run: seed
	@$(PY) manage.py collectstatic --no-input -v 0
	@echo ""
	@echo "  Demo school page:  $(BASE_URL)/"
	@echo "  Staff console:     $(BASE_URL)/admin/"
	@echo ""
	@echo "  Scheduled work (reminders, sweeper, CRM catch-up) runs inside this process; log lines 'scheduler: ...'"
	@echo ""
	SITE_URL=$${SITE_URL:-$(BASE_URL)} $(VENV)/bin/daphne -b $(HOST) -p $(PORT) config.asgi:application

test: install
	$(VENV)/bin/pytest

# The proof commands (docs/benchmarks.md, docs/evaluation.md), on whatever DATABASE_URL / REDIS_URL are set.
bench: migrate
	$(PY) manage.py bench $(ARGS)

evaluate: migrate
	$(PY) manage.py evaluate $(ARGS)

lint: install
	$(VENV)/bin/ruff check .

worker: install
	$(VENV)/bin/celery -A config worker -l info

beat: install
	$(VENV)/bin/celery -A config beat -l info

clean:
	rm -rf $(VENV) staticfiles test-artifacts .pytest_cache
