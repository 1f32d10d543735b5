# Engram: two commands for a newcomer — `make demo` and `make test`. Both set up everything:
# the virtual environment, local Kafka and PostgreSQL (no Docker), and the schema.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

include dev/services.mk

.PHONY: install migrate demo test lint unit integration bench schemas clean fuzz faults soak

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

migrate: install services-up
	$(BIN)/engram migrate

demo: migrate
	bash dev/demo.sh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/check-jsonschema --builtin-schema vendor.compose-spec compose.yaml
	$(BIN)/engram schemas export --check

unit: install
	$(BIN)/pytest -q tests/unit

test: migrate lint
	$(BIN)/pytest -q

fuzz: install
	ENGRAM_FUZZ_EXAMPLES=10000 $(BIN)/pytest -q -m fuzz tests/fuzz

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
	rm -rf $(VENV) .dev
