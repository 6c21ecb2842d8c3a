# Every target installs what it needs: a fresh machine needs only Python 3.11, pip and gcc.
PYTHON ?= python3
UV_VERSION := 0.13.9
UV := .tools/bin/uv
RUN := $(UV) run --frozen
DATA ?= ../shared/data/beir/scifact

.PHONY: setup demo test lint format unit contract integration e2e golden bench bench-beir bench-grpc bench-ingest crash serve proto clean

$(UV):
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet uv==$(UV_VERSION)

setup: $(UV)
	$(UV) sync --frozen

demo: setup
	$(RUN) retrieval demo

test: setup lint
	$(RUN) pytest

lint: setup
	$(RUN) ruff check .
	$(RUN) ruff format --check .

format: setup
	$(RUN) ruff check --fix .
	$(RUN) ruff format .

unit: setup
	$(RUN) pytest tests/unit

contract: setup
	$(RUN) pytest tests/contract

integration: setup
	$(RUN) pytest tests/integration

e2e: setup
	$(RUN) pytest tests/e2e

bench: setup
	$(RUN) retrieval bench latency

golden: setup
	$(RUN) retrieval golden run

bench-beir: setup
	$(RUN) retrieval bench beir --data $(DATA) $(if $(QUERIES),--queries $(QUERIES)) $(if $(QRELS),--qrels $(QRELS))

bench-ingest: setup
	$(RUN) retrieval bench ingest

crash: setup
	$(RUN) retrieval bench crash $(if $(KILLS),--kills $(KILLS))

serve: setup
	$(RUN) retrieval serve

bench-grpc: setup
	$(RUN) retrieval bench grpc

proto: setup
	$(RUN) python libs/retrieval-proto/generate.py

clean:
	rm -rf .data reports .pytest_cache .ruff_cache
