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
lint: fmt-check vet openapi-lint openapi-client ## gofmt check, go vet, the OpenAPI linters and the TypeScript client's build (needs node and npm)
	@echo "lint: ok"

# The OpenAPI document's tools (tools/openapi/package.json, versions pinned
# by its package-lock.json): installed once, again only when the lock file
# changes; npm's cache serves repeated installs without the network.
OPENAPI_DOC   ?= origin/openapi/openapi.json
OPENAPI_TOOLS := tools/openapi
NPM_FLAGS     := --prefer-offline --no-audit --no-fund --no-update-notifier --loglevel=error

$(OPENAPI_TOOLS)/node_modules/.installed: $(OPENAPI_TOOLS)/package.json $(OPENAPI_TOOLS)/package-lock.json
	cd $(OPENAPI_TOOLS) && npm ci $(NPM_FLAGS)
	@touch $@

.PHONY: openapi-lint
openapi-lint: $(OPENAPI_TOOLS)/node_modules/.installed ## lint the OpenAPI document with Redocly (recommended-strict) and Spectral (spectral:oas), warnings fail
	cd $(OPENAPI_TOOLS) && npx --no-install redocly lint --config redocly.yaml --format=stylish $(abspath $(OPENAPI_DOC))
	cd $(OPENAPI_TOOLS) && npx --no-install spectral lint --ruleset .spectral.yaml --fail-severity=warn $(abspath $(OPENAPI_DOC))

.PHONY: openapi-client
openapi-client: $(OPENAPI_TOOLS)/node_modules/.installed ## generate the TypeScript client types from the OpenAPI document and type-check a program against them
	cd $(OPENAPI_TOOLS) && npx --no-install openapi-typescript $(abspath $(OPENAPI_DOC)) -o gen/schema.d.ts --silent
	cd $(OPENAPI_TOOLS) && npx --no-install tsc --noEmit -p .

.PHONY: bench
bench: ## every load scenario and comparison, under 15 minutes; results in bench/results (go run ./bench)
	$(GO) run ./bench

.PHONY: bench-quick
bench-quick: ## each load scenario for a few seconds, checking only correctness counts; results in a temporary directory
	$(GO) run ./bench -quick

.PHONY: build
build: ## build bin/origin and bin/edge
	$(GO) build -o bin/ ./origin ./edge
