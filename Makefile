# The platform's commands. `make run` and `make test` set up everything they need.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
PACKAGES := libs/common libs/devstack libs/testkit gateway $(patsubst %/pyproject.toml,%,$(wildcard services/*/pyproject.toml))
STAMP := $(VENV)/.installed-$(shell cat requirements.txt constraints.txt $(addsuffix /pyproject.toml,$(PACKAGES)) | sha1sum | cut -c1-12)

.PHONY: install run test bench bench-import messages clean

$(STAMP): requirements.txt constraints.txt $(addsuffix /pyproject.toml,$(PACKAGES))
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt -c constraints.txt
	$(BIN)/python -m pip install -q --no-deps $(addprefix -e ,$(PACKAGES))
	rm -f $(VENV)/.installed-*
	touch $@

install: $(STAMP)  ## a virtualenv with pinned dependencies and every package of this repo

run: install  ## the whole platform locally: gateway on http://127.0.0.1:$${GATEWAY_PORT:-8080}
	$(BIN)/feedback-dev

TEST_PROCESSES ?= 3
test: install  ## the whole test suite against local MongoDB/Kafka-compatible servers it starts
	$(BIN)/pytest -n $(TEST_PROCESSES) --dist loadfile

bench: install  ## benchmarks; prints measured figures
	$(BIN)/python bench/run.py $(BENCH)

IMPORT_POSTS ?= 100000
bench-import: install  ## an import of a Canny-shaped file of IMPORT_POSTS posts (and a tenth of it), 5 votes a post, then reads
	$(BIN)/python bench/import_bench.py --posts $(IMPORT_POSTS)

messages: install  ## extract the messages of the code and bring every locale's catalog in step (docs/languages.md)
	$(BIN)/python -m common.catalogs .

clean:
	rm -rf $(VENV) .data .pytest_cache

# The container image of every component (docs/deployment.md). No container engine runs on the
# project's CI machines, so this target is run where Docker is: `make image IMAGE=registry/feedback:tag`.
APP_VERSION := $(shell sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}/\1/p' charts/feedback/Chart.yaml)
IMAGE ?= feedback:$(APP_VERSION)
.PHONY: image
image:  ## build the container image: docker build -t $(IMAGE) .
	docker build -t $(IMAGE) .
