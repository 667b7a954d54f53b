# The platform's commands. `make run` and `make test` set up everything they need.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
PACKAGES := libs/common gateway $(patsubst %/pyproject.toml,%,$(wildcard services/*/pyproject.toml))
STAMP := $(VENV)/.installed-$(shell cat requirements.txt constraints.txt $(addsuffix /pyproject.toml,$(PACKAGES)) | sha1sum | cut -c1-12)

.PHONY: install run test test-fast bench clean

$(STAMP): requirements.txt constraints.txt $(addsuffix /pyproject.toml,$(PACKAGES))
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt -c constraints.txt
	$(BIN)/python -m pip install -q --no-deps $(addprefix -e ,$(PACKAGES))
	rm -f $(VENV)/.installed-*
	touch $@

install: $(STAMP)  ## a virtualenv with pinned dependencies and every package of this repo

run: install  ## the whole platform locally: gateway on http://127.0.0.1:$${GATEWAY_PORT:-8080}
	$(BIN)/feedback dev

test: install  ## the whole test suite against local MongoDB/Kafka-compatible servers it starts
	$(BIN)/pytest

bench: install  ## benchmarks; prints measured figures
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .data .pytest_cache
