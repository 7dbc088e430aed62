# Listgate — `make help` lists the targets.
SHELL := /bin/bash
GO    ?= go
PKGS  := ./...

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-8s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: build ## start the whole system: throwaway Postgres (unless LISTGATE_DATABASE_URL is set), demo data, origin and edge
	bin/origin dev

.PHONY: test
test: fmt-check vet ## everything: gofmt check, go vet, go test -race (needs PostgreSQL and Redis binaries)
	@# The race detector changes allocation counts: the allocation tests run without it first.
	$(GO) test -count=1 -run 'Alloc' ./edge/gateway/ ./pkg/apikey/ ./pkg/apierror/ ./pkg/ratelimit/
	$(GO) test -race -count=1 -timeout 12m $(PKGS)

.PHONY: vet
vet: ## go vet
	$(GO) vet $(PKGS)

.PHONY: fmt-check
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

.PHONY: fmt
fmt: ## gofmt -w the tree
	gofmt -w $$(git ls-files '*.go')

.PHONY: lint
lint: fmt-check vet ## gofmt check and go vet
	@echo "lint: ok"

.PHONY: bench
bench: ## every load scenario and comparison, under 15 minutes; results in bench/results (go run ./bench)
	$(GO) run ./bench

.PHONY: bench-quick
bench-quick: ## each load scenario for a few seconds, checking only correctness counts; results in a temporary directory
	$(GO) run ./bench -quick

.PHONY: build
build: ## build bin/origin and bin/edge
	$(GO) build -o bin/ ./origin ./edge
