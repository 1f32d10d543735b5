# Engram: two commands for a newcomer — `make demo` and `make test`. Both set up everything:
# the virtual environment, local Kafka and PostgreSQL (no Docker), and the schema.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

include dev/services.mk

.PHONY: install migrate demo test lint unit integration bench schemas clean fuzz faults soak hostile
.PHONY: browser screenshots docs
.PHONY: lock upgrade

# Installs take every distribution from the lock, pinned and checked against its hashes, then
# this project alone: a registry release changes nothing here until `make upgrade` takes it.
LOCKS := requirements/dev.lock requirements/runtime.lock

$(VENV)/.installed: pyproject.toml $(LOCKS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q --require-hashes -r requirements/dev.lock
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $@

install: $(VENV)/.installed

# The locks, made by uv from pyproject.toml's ranges (docs/development.md, "Locked installs"): `make lock`
# after editing the dependencies keeps every pin it can; `make upgrade` takes the newest versions
# the ranges allow, then lints and runs the unit tests (run `make test` before committing it).
# runtime.lock (the Dockerfile's) is resolved within dev.lock, so the two never disagree.
UV_COMPILE := $(BIN)/uv pip compile -q pyproject.toml --generate-hashes --universal \
	--python-version 3.11 --custom-compile-command 'make lock'

lock: install
	$(UV_COMPILE) --extra dev $(UPGRADE) -o requirements/dev.lock
	$(UV_COMPILE) --upgrade -c requirements/dev.lock -o requirements/runtime.lock

upgrade:
	$(MAKE) lock UPGRADE=--upgrade
	$(MAKE) lint unit

migrate: install services-up
	$(BIN)/engram migrate

demo: migrate
	bash dev/demo.sh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pip check
	$(BIN)/check-jsonschema --builtin-schema vendor.compose-spec compose.yaml
	$(BIN)/engram schemas export --check
	$(MKDOCS) build --strict  # not --quiet: it drops the warnings strict counts

# docs/ as a site in site/ (mkdocs.yml; docs/development.md, "The docs site"): strict, so a
# broken link, a page left out of the navigation, a missing ::: reference or a backticked
# repository path that does not exist fails it (make lint builds it the same way).
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs

docs: install
	$(MKDOCS) build --strict

unit: install
	$(BIN)/pytest -q tests/unit

test: migrate lint browser
	$(BIN)/pytest -q

# The inspector's browser tests (tests/browser/) drive Debian's chromium through chromedriver:
# installed here with apt-get when missing, never downloaded by a test.
browser:
	bash dev/browser.sh ensure

# Every inspector page at desktop and phone width into docs/inspector/ (docs/usage.md, "Memory inspector").
screenshots: migrate browser
	ENGRAM_INSPECTOR_SCREENSHOTS=$(CURDIR)/docs/inspector $(BIN)/pytest -q tests/browser

fuzz: install
	ENGRAM_FUZZ_EXAMPLES=10000 $(BIN)/pytest -q -m fuzz tests/fuzz

# The hostile-input suite at full size (make test runs it with 150 inputs): 2,000 hostile inputs
# through the API, `engram ingest` and straight onto the topics; the tally goes to
# .dev/hostile-report.json (docs/reliability.md).
hostile: migrate
	ENGRAM_HOSTILE_INPUTS=$${ENGRAM_HOSTILE_INPUTS:-2000} \
	ENGRAM_HOSTILE_REPORT=$${ENGRAM_HOSTILE_REPORT:-$(CURDIR)/.dev/hostile-report.json} \
	$(BIN)/pytest -q tests/integration/test_hostile_suite.py

# Kills the worker and projector at 24 seeded points and stops this checkout's Kafka broker for
# 30 s (dev/kafka.sh): never point it at a broker others are using.
faults: migrate
	ENGRAM_FAULT_EPISODES=$${ENGRAM_FAULT_EPISODES:-20000} \
	ENGRAM_FAULT_SPANNING_EPISODES=$${ENGRAM_FAULT_SPANNING_EPISODES:-10000} \
	$(BIN)/pytest -q -m faults tests/faults

soak: migrate
	$(BIN)/python bench/soak.py

bench: migrate
	$(BIN)/python bench/throughput.py

schemas: install
	$(BIN)/engram schemas export

clean: services-down
	rm -rf $(VENV) .dev site
