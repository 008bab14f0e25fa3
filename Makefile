# Scriptorium developer entry points. Needs python3 (3.11+), node 20 and npm, Go (1.26) for the Go
# client and a JDK (17) with Maven for the Java client and the OpenSearch cluster tests; Go modules
# and Maven artifacts are fetched on first use and cached (the Go module cache, ~/.m2, and the
# OpenSearch distribution under ~/.cache/scriptorium, /var/cache/scriptorium as root).
# Every target sets up what it needs and is a quick no-op when that is already done.

SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV := .venv
PY := $(VENV)/bin/python
PYTEST := $(VENV)/bin/pytest
RUFF := $(VENV)/bin/ruff
BUF := npx --no -- buf

NODE_STAMP := node_modules/.scriptorium-installed
CLIENT_DIR := clients/node
CLIENT_STAMP := $(CLIENT_DIR)/node_modules/.scriptorium-installed

GO ?= $(shell command -v go || echo /usr/local/go/bin/go)
GO_DIR := clients/go
GO_ENV := GOTOOLCHAIN=local GOFLAGS=-mod=readonly
MVN ?= mvn
JAVA_DIR := clients/java
# Maven runs offline once a run with this pom.xml has fetched everything into ~/.m2.
JAVA_STAMP := $(HOME)/.m2/repository/.scriptorium-$(shell sha1sum $(JAVA_DIR)/pom.xml | cut -c1-12)
MVN_FLAGS = -B -ntp $(if $(wildcard $(JAVA_STAMP)),-o)

LINT_PATHS ?= daemon plugins tests
LABEL ?= local
BENCH_ARGS ?=
# The ranking suite: a folder of git dirs of the corpus repositories and the external sets.
SUITE_REPOS ?= /work/.mirror
SUITE_BENCHMARKS ?= ../shared/benchmarks
SUITE_ARGS ?=
PIP_AUDIT_VERSION := 2.10.1

.PHONY: help venv node browser gen lint test test-unit test-e2e go-test java-test run bench eval eval-suite eval-checks soak audit clean distclean

help:
	@echo "make venv       create .venv and install the project with dev extras"
	@echo "make node       npm ci for buf (repo root) and the Node client"
	@echo "make browser    install Debian's chromium for the console's browser tests, if missing"
	@echo "make gen        regenerate the Python and Go stubs and the Node message types from proto/"
	@echo "make lint       ruff check + format check, import contracts, buf lint, buf breaking, gofmt, go vet"
	@echo "make test       lint, the cluster's distribution, pytest, Node, Go and Java client tests"
	@echo "make test-unit  the unit tier (tests/unit): one module or service in process"
	@echo "make test-e2e   the e2e and browser tiers: a real daemon on loopback"
	@echo "make go-test    the Go client's tests (a real daemon on loopback)"
	@echo "make java-test  the Java client's JUnit tests (a real daemon on loopback)"
	@echo "make run        serve this repository on 127.0.0.1:50051"
	@echo "make bench      run bench/run.py (BENCH_ARGS=...)"
	@echo "make eval       run the evaluation harness (LABEL=$(LABEL))"
	@echo "make eval-suite run the ranking suite (SUITE_REPOS=$(SUITE_REPOS), SUITE_ARGS=...)"
	@echo "make eval-checks run the usage check sets of eval/checks (records under CHECKS_OUT=$(CHECKS_OUT))"
	@echo "make soak       run the slow soak tests"
	@echo "make audit      pip-audit the virtualenv"
	@echo "make clean      remove caches and build output (distclean: also .venv, node_modules)"

venv:
	@scripts/ensure_venv.sh

node: $(NODE_STAMP) $(CLIENT_STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

$(CLIENT_STAMP): $(CLIENT_DIR)/package.json $(CLIENT_DIR)/package-lock.json
	cd $(CLIENT_DIR) && npm ci --no-audit --no-fund
	@touch $@

# Debian's Chromium for the console's browser tests (playwright-core comes with `make node`).
browser:
	@scripts/ensure_browser.sh

gen: venv
	scripts/gen_stubs.sh daemon
	$(PY) scripts/gen_node_types.py
	GO=$(GO) scripts/gen_go_stubs.sh

# Every check runs even when an earlier one fails; the last line names the failed ones.
lint: venv node
	@failed=""; \
	check() { local name="$$1"; shift; echo "--> $$name: $$*"; "$$@" || failed+=" [$$name]"; }; \
	check "ruff check" $(RUFF) check $(LINT_PATHS); \
	check "ruff format" $(RUFF) format --check $(LINT_PATHS); \
	check "import contracts" $(VENV)/bin/lint-imports --no-cache; \
	check "buf lint" $(BUF) lint; \
	check "buf breaking" scripts/buf_breaking.sh; \
	check "go fmt, vet" env GO=$(GO) scripts/lint_go.sh; \
	if [ -n "$$failed" ]; then echo "lint failed:$$failed"; exit 1; fi; \
	echo "lint passed"

# Every stage runs even when an earlier one fails, so one run shows everything that is broken.
# The clients' daemons serve lexically (SCRIPTORIUM_SEMANTIC=off), as pytest's do
# (tests/conftest.py): vectors made in the background would only take the cores the tests use.
test: venv node browser
	@status=0; summary=""; \
	stage() { \
	  local name="$$1"; shift; \
	  local start=$$SECONDS result=PASS; \
	  echo; echo "==> $$name: $$*"; \
	  "$$@" || { result=FAIL; status=1; }; \
	  summary+="$$(printf '  %-8s %-4s %4ss' "$$name" "$$result" "$$((SECONDS - start))")"$$'\n'; \
	}; \
	stage lint $(MAKE) --no-print-directory lint; \
	stage cluster $(PY) -m tests.support.opensearch_cluster fetch; \
	stage pytest $(PYTEST) -q -m "not slow" tests; \
	stage node env SCRIPTORIUM_SEMANTIC=off npm --prefix $(CLIENT_DIR) test; \
	stage go env SCRIPTORIUM_SEMANTIC=off $(MAKE) --no-print-directory go-test; \
	stage java env SCRIPTORIUM_SEMANTIC=off $(MAKE) --no-print-directory java-test; \
	echo; echo "== make test summary =="; printf '%s' "$$summary"; \
	if [ $$status -eq 0 ]; then echo "all stages passed"; else echo "FAILED"; fi; \
	exit $$status

# The tiers are the folders under tests/ (tests/conftest.py marks each test with its own).
test-unit: venv
	$(PYTEST) -q -m unit

test-e2e: venv node browser
	$(PY) -m tests.support.opensearch_cluster fetch
	$(PYTEST) -q -m "(e2e or browser) and not slow"

# -count=1: the tests talk to a daemon, whose behaviour Go's test cache cannot see.
go-test: venv
	cd $(GO_DIR) && $(GO_ENV) $(GO) test -count=1 ./...

java-test: venv
	cd $(JAVA_DIR) && $(MVN) $(MVN_FLAGS) test
	@touch $(JAVA_STAMP)

run: venv
	$(VENV)/bin/scriptorium serve .

bench: venv
	$(PY) bench/run.py $(BENCH_ARGS)

eval: venv
	$(PY) -m scriptorium eval --config eval/fastapi.toml --label $(LABEL)
	$(PY) -m scriptorium eval --set eval/related.jsonl --config eval/fastapi.toml --label $(LABEL)
	$(PY) -m scriptorium eval --set eval/related-self.jsonl --config eval/self.toml --label $(LABEL)

# Not part of `make test`: it indexes every corpus of the external sets (cached after the first run).
eval-suite: venv
	nice -n 10 $(PY) -m scriptorium eval --suite --repos $(SUITE_REPOS) \
	  --benchmarks $(SUITE_BENCHMARKS) $(SUITE_ARGS)

# The usage check sets (eval/checks/README.md): each repository's git dir under SUITE_REPOS.
CHECKS_OUT ?= eval/runs/checks
eval-checks: venv
	@for check in eval/checks/*.jsonl; do \
	  name=$$(basename $$check .jsonl); \
	  echo "== $$name"; \
	  nice -n 10 $(PY) -m scriptorium eval --suite --repos $(SUITE_REPOS) \
	    --benchmarks $(SUITE_BENCHMARKS) --sets usage --usage-set $$check \
	    --out $(CHECKS_OUT)/$$name $(SUITE_ARGS) || exit 1; \
	done

soak: venv
	@if [ ! -d tests/soak ]; then echo "soak: tests/soak does not exist yet"; exit 1; fi
	$(PYTEST) -q -m slow tests/soak

# pip-audit is installed on demand (exact pin) rather than carried in the dev extras. It prints
# "No known vulnerabilities" even when it could reach no advisory service, so that case fails here.
audit: venv
	@if [ ! -x $(VENV)/bin/pip-audit ] || ! $(VENV)/bin/pip-audit --version | grep -q ' $(PIP_AUDIT_VERSION)$$'; then \
	  echo "installing pip-audit==$(PIP_AUDIT_VERSION) into $(VENV)"; \
	  $(PY) -m pip install --quiet --disable-pip-version-check 'pip-audit==$(PIP_AUDIT_VERSION)' \
	    || { echo "audit: skipped, pip-audit==$(PIP_AUDIT_VERSION) could not be installed"; exit 0; }; \
	fi; \
	log=$$(mktemp); trap 'rm -f "$$log"' EXIT; \
	$(VENV)/bin/pip-audit --skip-editable --progress-spinner off 2>&1 | tee "$$log"; rc=$${PIPESTATUS[0]}; \
	unaudited=$$(grep -c 'could not be audited' "$$log" || true); \
	if [ $$rc -ne 0 ]; then echo "audit: pip-audit exited $$rc (vulnerabilities found, or it failed)"; exit $$rc; fi; \
	if [ "$$unaudited" -gt 0 ]; then \
	  echo "audit: inconclusive, $$unaudited dependencies could not be audited (is the advisory service reachable?)"; \
	  exit 1; \
	fi

clean:
	find . -name __pycache__ -type d -not -path './$(VENV)/*' -not -path '*/node_modules/*' -prune -exec rm -rf {} +
	rm -rf .pytest_cache .ruff_cache build dist *.egg-info $(JAVA_DIR)/target native/target native/.cargo-home

distclean: clean
	rm -rf $(VENV) node_modules $(CLIENT_DIR)/node_modules $(GO_DIR)/.bin
