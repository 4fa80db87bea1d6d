# clusterdesk — the Makefile is the contract: `make help` lists what you can run.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

CACHE       := $(CURDIR)/.cache
BIN         := $(CACHE)/bin
SHARED      ?= $(abspath $(CURDIR)/../shared)
FIXTURES    := $(SHARED)/fixtures/real
LISTEN      ?= 127.0.0.1:8080
GO_PKGS     := ./...
# GO_BUILD_FLAGS: every go build and go vet of make (the test scripts use the
# same, scripts/test-build-flags.sh). -trimpath: a compiled package's cache key
# no longer holds the checkout's directory, so a clean clone elsewhere reuses
# the Go build cache instead of compiling the module again for make check, for
# make build and for the tests, each in its own way. internal/testcluster's
# ConsoleBin builds bin/clusterdesk with the same flags, so that it finds make
# build's binary up to date.
GO_BUILD_FLAGS := -trimpath

.PHONY: help
help: ## Show this help
	@grep -hE '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}'

## ---- build ----------------------------------------------------------------

node_modules/.stamp: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

.PHONY: deps
deps: node_modules/.stamp ## Install front-end dependencies (npm ci)

.PHONY: generate
generate: ## Generate Go code from templ files
	go tool templ generate

.PHONY: assets
assets: deps ## Build the JS and CSS bundle into static/dist
	npm run --silent build

.PHONY: build
build: generate assets ## Build bin/clusterdesk
	go build $(GO_BUILD_FLAGS) -o bin/clusterdesk ./cmd/clusterdesk

.PHONY: devcluster
devcluster: ## Build the devcluster tool and the kube-apiserver/controller-manager it runs (first time: minutes)
	cd devcluster && go build $(GO_BUILD_FLAGS) -o $(BIN)/devcluster ./cmd/devcluster
	$(BIN)/devcluster build --bin-dir $(BIN)

# The oldest Kubernetes release the console is tested on: 1.28 serves
# flowcontrol.apiserver.k8s.io v1beta3 and no v1 (devcluster/compat/v1.28).
COMPAT_VERSION := 1.28
COMPAT_KUBE    := v1.28.15

.PHONY: devcluster-compat
devcluster-compat: devcluster ## Build kube-apiserver v1.28.15 into .cache/bin/v1.28 (first time: minutes)
	$(BIN)/devcluster build --bin-dir $(BIN) --version $(COMPAT_VERSION)

## ---- run ------------------------------------------------------------------

.PHONY: run
run: build ## Run the console: on your kubeconfig's cluster, or on a seeded local devcluster (no kubeconfig, or DEMO=1) as its audit webhook, the ledger kept in .cache/run-data
	@if [ -n "$${DEMO:-}" ] || { [ -z "$${KUBECONFIG:-}" ] && [ ! -f "$$HOME/.kube/config" ]; }; then \
	  $(MAKE) --no-print-directory devcluster; \
	  echo "make run: starting a local devcluster with demo data (no kubeconfig given, or DEMO=1)"; \
	  FIXTURES="$(FIXTURES)" scripts/with-devcluster.sh $(CACHE)/devcluster-run --seed \
	    bash -c 'exec bin/clusterdesk --listen $(LISTEN) --kubeconfig "$$DEVCLUSTER_DIR/kubeconfigs/admin.kubeconfig" \
	      --data-dir $(CACHE)/run-data $$(scripts/devcluster-audit-webhook.sh "$$DEVCLUSTER_DIR")'; \
	else \
	  exec bin/clusterdesk --listen $(LISTEN); \
	fi

## ---- test -----------------------------------------------------------------

# make test is five layers, each test in exactly one of them, all running at
# the same time (scripts/beside.sh, each side's output printed when both end):
# test-unit (no cluster, its consoles' state apart in .cache/test-state-unit);
# the Go integration tests in two lanes, each on its own seeded devcluster
# (scripts/integration-lanes.sh), the second followed by the live-update
# benchmark rounds; and one after the other, on a third one, the browser
# tests (e2e) and the page benchmark's round, with test-compat on a fourth. Each layer also runs alone; test-integration and e2e then start
# their own devcluster.
#
# Why side by side: no layer keeps the 2 cores busy alone. The cluster layers
# mostly wait on API servers, informers, Chromium and polls (stop 57's CI: the
# browser tests used 274 CPU-s in 863 s, each integration lane about 400 in
# 830 s), and the unit layer, run first, kept the cluster layers waiting for
# 7 minutes (438 s) while it used 1.1 cores. The layers need their own
# clusters: e2e/live.spec.ts stops its API server, and Go tests count a
# kind's objects.
.PHONY: test
test: build devcluster devcluster-compat e2e-deps postgres helm helm3 ## Everything, each test once: test-unit beside test-integration (two lanes) beside the browser tests, the benchmark rounds and test-compat, each cluster layer on its own devcluster
	rm -rf $(CACHE)/devcluster-test $(CACHE)/devcluster-test-e2e
	FIXTURES="$(FIXTURES)" \
	  scripts/timed.sh "make test's layers side by side, with their devclusters' start" \
	  scripts/beside.sh "unit layer" $(CACHE)/test-unit.log '$(UNIT_LAYER)' "cluster layers" \
	  env DEVCLUSTER_APISERVERS=$(E2E_APISERVERS) scripts/with-devcluster.sh $(CACHE)/devcluster-test-e2e --seed \
	  scripts/beside.sh e2e $(CACHE)/test-e2e.log '$(BESIDE_INTEGRATION)' test-integration \
	  env CACHE=$(abspath $(CACHE)) INTEGRATION_LANE_B="$(INTEGRATION_LANE_B)" LANE_B_AFTER='$(LANE_B_ROUNDS)' \
	    DEVCLUSTER_APISERVERS=$(TEST_APISERVERS) DEVCLUSTER_STANDBY=1 scripts/integration-lanes.sh

# UNIT_LAYER is make test's unit layer (TEST_UNIT, each part timed), its
# consoles' default ledger apart from the integration layer's, which runs at
# the same time. Its two parts run at the same time too, the rest (fuzz-short,
# the devcluster modules' unit tests; its output in .cache/test-unit-rest.log,
# printed at the end) beside go-test-unit.sh, and both run even when the other
# failed. Why: one after the other they were make test's longest chain (stop
# 57's CI on an idle machine: 1,189 s and then 129 s, while the machine
# averaged 1.44 of its 2 cores).
UNIT_LAYER = export XDG_STATE_HOME=$(abspath $(CACHE))/test-state-unit; rc=0; \
	{ TIMEFORMAT="timed: unit layer, the rest (fuzz, devcluster modules) took %0R s wall, %0U s user + %0S s system CPU"; \
	  time { $(TEST_UNIT_REST); }; } >$(CACHE)/test-unit-rest.log 2>&1 & rest=$$!; \
	TIMEFORMAT="timed: unit layer: go-test-unit.sh took %0R s wall, %0U s user + %0S s system CPU"; \
	time scripts/go-test-unit.sh || rc=1; \
	wait $$rest || rc=1; \
	echo "---- output of the rest of the unit layer ($(CACHE)/test-unit-rest.log) ----"; cat $(CACHE)/test-unit-rest.log; \
	exit $$rc

# INTEGRATION_LANE_B: the integration packages make test runs in its second
# lane, on a devcluster of their own, while the rest run on the first
# (scripts/integration-lanes.sh). Chosen so the lanes take about as long
# (stop 57's CI, the lanes side by side: handlers 477 s, ingest 92, kube 29;
# approver 126, faults 125, fleet 104, cmd/clusterdesk 77, handlers/ledger 55,
# charttest 32, intercept 27, replay 12), none of them needing a second API
# server or the real-world fixtures (lane B's cluster is seeded without them).
INTEGRATION_LANE_B = ./internal/faults ./internal/approver ./internal/fleet ./handlers/ledger \
	./cmd/clusterdesk ./internal/intercept ./charts/charttest ./internal/replay

# BESIDE_INTEGRATION is what runs beside the Go integration tests: the compat
# layer (its own devcluster, its output in its own log, printed at the end)
# from the start, and meanwhile, one after the other on the browser tests'
# devcluster, the browser tests and then the page benchmark's round (it needs
# the real-world CRDs, which lane B's cluster lacks). Each runs even when
# another failed, so one CI run reports every failure. Why: the browser tests
# ended ~190 s before the Go integration tests, and the rounds (~150 s, much
# of it a devcluster start and waits) and then the compat layer (~60 s) used
# to run after the integration tests, on cores left half idle.
BESIDE_INTEGRATION = rc=0; \
	{ TIMEFORMAT="timed: compat layer took %0R s wall, %0U s user + %0S s system CPU"; time { $(COMPAT_RUN); }; } >$(CACHE)/test-compat.log 2>&1 & compat=$$!; \
	TIMEFORMAT="timed: browser layer took %0R s wall, %0U s user + %0S s system CPU"; time { $(E2E_RUN); } || rc=1; \
	TIMEFORMAT="timed: page benchmark round took %0R s wall, %0U s user + %0S s system CPU"; time { $(BENCH_PAGES_ROUND); } || rc=1; \
	wait $$compat || rc=1; \
	echo "---- output of the compat layer ($(CACHE)/test-compat.log) ----"; cat $(CACHE)/test-compat.log; \
	exit $$rc

# The integration devcluster runs two kube-apiserver instances (issue 30), so
# the tests of the per-instance load run in CI on the cluster the other
# integration tests use (clients use the kubeconfigs' server, instance 1). The
# browser tests' cluster runs one (no browser test looks at a second instance,
# and each instance costs CPU for the seeded CRDs), as does the compat cluster.
# The second instance is a standby (DEVCLUSTER_STANDBY=1, devcluster up
# --standby): paused once the cluster is ready, resumed only while a test that
# reads it runs (internal/testcluster.APIServers). Running all along it cost
# ~115 CPU-s of the layer's two cores, following every CRD change.
TEST_APISERVERS := 2
E2E_APISERVERS  := 1

# The consoles the tests start keep their default ledger (--data-dir's
# $XDG_STATE_HOME/clusterdesk) under .cache, not in the home directory.
test test-unit test-integration e2e: export XDG_STATE_HOME = $(abspath $(CACHE))/test-state

# The tests' devclusters run their API servers with GOGC=200 (devcluster's
# internal/plane, APIServerGOGCEnv): make test runs five beside each other on
# 2 cores, and a CPU profile of one under the tests spent 23-30% of its CPU
# marking its heap of megabyte CRD schemas. make run and the benchmarks keep
# Go's default, as a real cluster does.
test test-integration e2e test-compat: export DEVCLUSTER_APISERVER_GOGC = 200

.PHONY: test-unit
test-unit: assets postgres helm helm3 ## Unit tests (with the race detector where code runs on several goroutines), every Go benchmark once (timing nothing), every fuzz target for FUZZTIME runs, the devcluster modules' unit tests
	$(TEST_UNIT)

.PHONY: test-integration
test-integration: build devcluster haproxy oauth2-proxy helm helm3 ## Go integration tests and integration benchmarks on a seeded devcluster (its own, unless DEVCLUSTER_DIR has one), then short benchmark rounds
	FIXTURES="$(FIXTURES)" DEVCLUSTER_APISERVERS=$(TEST_APISERVERS) DEVCLUSTER_STANDBY=1 scripts/on-devcluster.sh $(CACHE)/devcluster-test bash -c '$(GO_INTEGRATION) && $(BENCH_ROUNDS)'

.PHONY: e2e
e2e: build devcluster e2e-deps ## Browser tests (Playwright, Debian's Chromium) on a seeded devcluster (its own, unless DEVCLUSTER_DIR has one)
	FIXTURES="$(FIXTURES)" DEVCLUSTER_APISERVERS=$(E2E_APISERVERS) scripts/on-devcluster.sh $(CACHE)/devcluster-test-e2e $(E2E_RUN)

# TEST_UNIT: one run of the unit tests (with the race detector in the packages
# that run on several goroutines, scripts/go-test-unit.sh), every Go benchmark
# once in the same test binaries (timing nothing: a benchmark that breaks fails
# here), the fuzz targets, the devcluster modules' unit tests. make test runs
# TEST_UNIT_REST (about 3 minutes, no cluster needed) while the devcluster of
# the next layers comes up (about a minute, much of it CPU: seeding 180
# real-world CRDs into two API servers), so the cores do not idle while it
# starts (fuzz-short's builds use one). Started before go-test-unit.sh instead,
# the idle cluster would cost about 10% of a core for 10 minutes.
TEST_UNIT = scripts/go-test-unit.sh && $(TEST_UNIT_REST)
TEST_UNIT_REST = $(MAKE) --no-print-directory fuzz-short && \
	(cd devcluster && ../scripts/go-test-kept.sh devcluster-unit -count=1 -- ./...) && \
	(cd devcluster/oidc && ../../scripts/go-test-kept.sh devcluster-oidc-unit -count=1 -- ./...)

# GO_INTEGRATION runs only the tests and benchmarks of the files built with the
# integration tag (scripts/go-test-integration.sh), in this module and in
# devcluster's; CLEANUP_BENCH_SIZES=50 makes the cleanup's deletion benchmark
# one round of 50 objects instead of 1,000.
GO_INTEGRATION = CLEANUP_BENCH_SIZES=50 scripts/go-test-integration.sh && scripts/go-test-integration.sh devcluster

# The browser tests' consoles keep their default ledger apart from the
# integration layer's consoles, which run at the same time in make test.
E2E_RUN = XDG_STATE_HOME=$(abspath $(CACHE))/test-state-e2e npm run --silent e2e

# BENCH_ROUNDS: short rounds of the benchmark drivers, timing nothing: the
# live updates' three (BENCH_LIVE_ROUNDS), then the pages' (BENCH_PAGES_ROUND,
# which needs the real-world CRDs seeded).
BENCH_ROUNDS = $(BENCH_LIVE_ROUNDS) && $(BENCH_PAGES_ROUND)
BENCH_LIVE_ROUNDS = go build $(GO_BUILD_FLAGS) -o $(BIN)/clusterdesk-bench ./cmd/clusterdesk-bench && \
	$(BENCH_SHORT) && $(BENCH_REPLICAS_SHORT) && $(BENCH_QUEUE_SHORT)
BENCH_PAGES_ROUND = go build $(GO_BUILD_FLAGS) -o $(BIN)/clusterdesk-bench-pages ./cmd/clusterdesk-bench-pages && { $(BENCH_PAGES_QUICK); }

# LANE_B_ROUNDS: make test runs the live updates' rounds on integration lane
# B's cluster once its Go tests end (scripts/integration-lanes.sh). Why: after
# the browser tests they made the browser tests' side make test's longest
# chain (stop 58's CI: 988 s of browser tests, then 153 s of rounds), while
# lane B ended 415 s before the rest.
LANE_B_ROUNDS = TIMEFORMAT="timed: live-update benchmark rounds took %0R s wall, %0U s user + %0S s system CPU"; time { $(BENCH_LIVE_ROUNDS); }

# BENCH_SHORT is a short round of the live-update benchmark, run by make test so
# that a change breaking it fails CI: 50 tabs (each its own session) for 5 s; it
# fails when a tab does not subscribe or an event misses a tab. No timing is
# asserted (the machine is shared). About 15 s.
BENCH_SHORT = $(BIN)/clusterdesk-bench -clients 50 -duration 5s -stalled=false

# BENCH_REPLICAS_SHORT is a short round of the replicas benchmark: bin/clusterdesk
# as three replicas behind HAProxy (internal/fleet), 60 tabs spread over them for
# 5 s; it fails when a tab does not subscribe or an event misses a tab. No timing
# is asserted. About 20 s.
BENCH_REPLICAS_SHORT = $(BIN)/clusterdesk-bench -replicas 3 -clients 60 -duration 5s -binary bin/clusterdesk

# BENCH_QUEUE_SHORT is a short round of the CSR queue tabs (issue 27): 20 tabs
# of bin/clusterdesk's Pending tab, newest first, doing what live-csr.js does,
# while CSRs are created and approved 10 times a second for 5 s; it fails when
# a change misses a tab. Refetches are counted, not asserted. About 15 s.
BENCH_QUEUE_SHORT = $(BIN)/clusterdesk-bench -queue-tabs 20 -rate 10 -duration 5s -binary bin/clusterdesk

# COMPAT_RUN starts a second devcluster with kube-apiserver v1.28.15 (demo data,
# no fixtures) and runs the FlowSchema integration tests on it (scripts/test-compat.sh).
COMPAT_RUN = rm -rf $(CACHE)/devcluster-test-$(COMPAT_VERSION); \
	FIXTURES= DEVCLUSTER_APISERVER_VERSION=$(COMPAT_VERSION) DEVCLUSTER_KUBE_VERSION=$(COMPAT_KUBE) \
	  scripts/with-devcluster.sh $(CACHE)/devcluster-test-$(COMPAT_VERSION) --seed scripts/test-compat.sh

.PHONY: test-compat
test-compat: build devcluster-compat ## The FlowSchema integration tests on kube-apiserver v1.28.15 (flowcontrol v1beta3); part of make test
	$(COMPAT_RUN)

# Fuzz targets as package:function. A crasher is written to the package's
# testdata/fuzz/<function>/ and from then on runs in every go test: commit it.
FUZZ_TARGETS := internal/csr:FuzzDecode internal/csr:FuzzCheck internal/docs:FuzzMarkdown \
  internal/live:FuzzReply internal/live:FuzzPublish internal/edit:FuzzParse internal/edit:FuzzBase \
  internal/apf:FuzzClassify handlers/flowschemas:FuzzClassifyForm internal/flowschemaform:FuzzFlowSchemaForm
# An execution count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# fail a target with "context deadline exceeded" when a loaded machine starves its
# workers at the deadline (golang/go#75804, fixed in Go 1.27). 5,000 runs each:
# a short exploration past the seed corpora, which run as tests in the unit
# layer; `make fuzz` is the long run. Why not more: make test runs them beside
# everything else on 2 cores, and at 20,000 runs they took 310 CPU-s of stop
# 58's CI (a /proc sampler; internal/edit's FuzzParse and FuzzBase alone 179),
# about an eighth of all the CPU the tests used.
FUZZTIME    ?= 5000x
FUZZ_LONG   ?= 3m

.PHONY: fuzz-short
fuzz-short: ## Run each fuzz target for FUZZTIME (5,000 runs; part of make test)
	@scripts/fuzz.sh $(FUZZTIME) $(FUZZ_TARGETS)

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZ_LONG (3m)
	$(MAKE) --no-print-directory fuzz-short FUZZTIME=$(FUZZ_LONG)

.PHONY: test-repeat
test-repeat: build devcluster e2e-deps postgres ## Find flaky tests: the unit layer REPEAT (5) times beside LOAD busy loops (one per core), then the integration and browser layers REPEAT_SLOW (2) times; lists every test that failed even once (not part of make test)
	scripts/repeat.sh

.PHONY: e2e-deps
e2e-deps: deps haproxy oauth2-proxy ## Install Debian's Chromium (browser tests) and HAProxy (failover tests) when missing, and oauth2-proxy (proxy-mode browser test)
	@command -v /usr/bin/chromium >/dev/null || { echo "installing chromium from Debian"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The failover tests and the replicas bench run consoles behind a real HAProxy
# (internal/fleet): Debian's, as a team would deploy it.
.PHONY: postgres
postgres: ## Install Debian's PostgreSQL when it is missing (internal/testpg starts a throwaway server for the ledger's tests)
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { echo "installing postgresql from Debian"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }

.PHONY: haproxy
haproxy: ## Install Debian's HAProxy when it is missing (the failover tests' balancer)
	@command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || { echo "installing haproxy from Debian"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null; }

# OAUTH2_PROXY is the real authenticating proxy the proxy-mode browser test puts
# in front of the console (e2e/oauth2-proxy.spec.ts), built from the Go module
# proxy. The version file makes the target idempotent: nothing is built when the
# binary of this version is there.
OAUTH2_PROXY_VERSION := v7.15.6
OAUTH2_PROXY         := $(BIN)/oauth2-proxy

.PHONY: oauth2-proxy
oauth2-proxy: ## Install oauth2-proxy (OAUTH2_PROXY_VERSION, v7.15.6) into .cache/bin with go install, once (first time: minutes; scripts/go-install-tool.sh); part of make test
	@scripts/go-install-tool.sh $(OAUTH2_PROXY) $(OAUTH2_PROXY_VERSION) github.com/oauth2-proxy/oauth2-proxy/v7

# HELM is the helm CLI the chart's tests run (charts/charttest: lint, template,
# the drift from deploy/, the dry run on the devcluster), built from its Go
# module like the control plane: no download at test time beyond the module
# proxy. Installed with go install, not required in go.mod: helm v4 would move
# this module's k8s.io dependencies. The version file makes the target
# idempotent (nothing is built when the binary of this version is there).
HELM_VERSION := v4.3.2
HELM         := $(BIN)/helm

.PHONY: helm
helm: ## Install the helm CLI (HELM_VERSION, v4.3.2) into .cache/bin with go install, once (first time: minutes); part of make test
	@scripts/go-install-tool.sh $(HELM) $(HELM_VERSION) helm.sh/helm/v4/cmd/helm

# HELM3 is helm v3, the other major release people install the chart with:
# charts/charttest lints and renders with both (same assertions). Its newest
# v3 release on the module proxy that the team approves (v3.22.0 is served but
# not approved). Built with go install into a directory of its own (the
# binary is named helm) and moved beside helm v4 as helm3.
HELM3_VERSION := v3.21.4
HELM3         := $(BIN)/helm3
# What helm's own Makefile stamps into a release binary: its version, and the
# Kubernetes version of its k8s.io modules (v0.36.2 in v3.21.4: 1.36) that
# `helm template` and `helm lint` assume without a cluster. Unstamped, helm v3
# assumes 1.20 and refuses the chart's kubeVersion (>=1.28).
HELM3_LDFLAGS := -X helm.sh/helm/v3/internal/version.version=$(HELM3_VERSION) \
  -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=36 \
  -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=36

.PHONY: helm3
helm3: ## Install helm v3 (HELM3_VERSION, v3.21.4) into .cache/bin/helm3 with go install, once (first time: minutes); part of make test
	@scripts/go-install-tool.sh $(HELM3) $(HELM3_VERSION) helm.sh/helm/v3/cmd/helm '$(HELM3_LDFLAGS)'

.PHONY: chart-lint
chart-lint: helm helm3 ## helm lint --strict the chart with its defaults and each example values file, with helm v4 and v3
	@for h in $(HELM) $(HELM3); do $$h lint --strict charts/clusterdesk || exit 1; \
	  for f in charts/clusterdesk/examples/*.yaml; do $$h lint --strict charts/clusterdesk --values $$f || exit 1; done; done

.PHONY: bench-pages
bench-pages: build devcluster ## Page benchmark: 5,000 CSRs, real CRDs, 500 FlowSchemas, 200 webhooks; then the worst shapes (50,000 CSRs with a 5,000 storm, 2,000 CRDs, long names, 200 SANs, 256 KiB annotations) on a second devcluster; pages vs raw LIST/GET, memory, targets (loopback; first run seeds for long)
	go build $(GO_BUILD_FLAGS) -o $(BIN)/clusterdesk-bench-pages ./cmd/clusterdesk-bench-pages
	FIXTURES="$(FIXTURES)" scripts/with-devcluster.sh $(CACHE)/devcluster-bench-pages --seed \
	  bash -c 'main="$$DEVCLUSTER_DIR"; exec scripts/with-devcluster.sh $(CACHE)/devcluster-bench-shapes \
	    env DEVCLUSTER_DIR="$$main" $(BIN)/clusterdesk-bench-pages --binary bin/clusterdesk --shapes-dir $(CACHE)/devcluster-bench-shapes $(BENCH_SHAPES)'

# BENCH_SHAPES overrides the shapes' counts, e.g. BENCH_SHAPES="--shape-crds 300 --shape-csrs 10000 --shape-decided 9000 --shape-storm 1000"
# for a machine that cannot seed 2,000 CRDs (kept between runs in .cache/devcluster-bench-shapes).
BENCH_SHAPES ?=

# BENCH_PAGES_QUICK is bench-pages with tiny counts, run by make test inside its
# devcluster (the main cluster) with a second devcluster for the shapes: it
# fails when a page of the benchmark does not answer. No timing is asserted.
# About 40 s.
BENCH_PAGES_QUICK = main="$$DEVCLUSTER_DIR"; rm -rf $(CACHE)/devcluster-test-shapes; \
	scripts/with-devcluster.sh $(CACHE)/devcluster-test-shapes env DEVCLUSTER_DIR="$$main" \
	  $(BIN)/clusterdesk-bench-pages --quick --binary bin/clusterdesk --shapes-dir $(CACHE)/devcluster-test-shapes

# LEDGER_BENCH_RECORDS is the size of the ledger's benchmark (internal/ledger,
# BenchmarkLedger); make test runs it once with its default of 2,000 entries.
LEDGER_BENCH_RECORDS ?= 1000000

.PHONY: bench-ledger
bench-ledger: postgres ## The ledger's store on SQLite and PostgreSQL: LEDGER_BENCH_RECORDS (1,000,000) worst-shape entries, then one object's history, filtered and per-signer pages, ingestion in batches of 400, bytes per record, start-up; a policy's versions over 50,000 of its decisions
	LEDGER_BENCH_RECORDS=$(LEDGER_BENCH_RECORDS) go test -count=1 -run '^$$' -bench BenchmarkLedger -timeout 90m ./internal/ledger
	POLICY_BENCH_DECISIONS=50000 go test -count=1 -run '^$$' -bench BenchmarkPolicyVersions -timeout 30m ./internal/ledger

# REPLAY_BENCH_WRITES are the sizes of the replay's benchmark (internal/replay,
# BenchmarkReplay); make test's unit layer runs it once at 10,000, and
# BenchmarkIngestWrites (internal/ingest) with one batch of 400 events.
REPLAY_BENCH_WRITES ?= 10000,100000

.PHONY: bench-replay
bench-replay: postgres ## The replay (issue 45) on SQLite and PostgreSQL: REPLAY_BENCH_WRITES (10,000 and 100,000) recorded writes with worst shapes replayed (time, CPU, peak heap and RSS); then the audit webhook's ingest with the shipped policy's traffic, 100,000 events (events/s, recorded writes/s, database MB per 100,000 writes)
	REPLAY_BENCH_WRITES=$(REPLAY_BENCH_WRITES) go test -count=1 -run '^$$' -bench BenchmarkReplay -benchtime 1x -timeout 60m ./internal/replay
	go test -count=1 -run '^$$' -bench BenchmarkIngestWrites -benchtime 250x -timeout 30m ./internal/ingest

.PHONY: bench-whatif
bench-whatif: ## The APF what-if (issue 46): an hour and a day of a busy cluster's traffic (1,000 requests/s over 500 flows, an hour's flood) simulated under the default configuration and a draft (time, CPU, heap); an hour of it written to SQLite and run from there (buckets scanned/s, database GB a day)
	WHATIF_BENCH_SECONDS=3600,86400 go test -count=1 -run '^$$' -bench 'BenchmarkWhatIf$$' -benchtime 1x -timeout 30m ./internal/whatif
	WHATIF_BENCH_SQLITE_SECONDS=3600 go test -count=1 -run '^$$' -bench BenchmarkWhatIfScanSQLite -benchtime 1x -timeout 30m ./internal/whatif

# STORM_NODES is the approver storm's size (issue 47): 1,000 Nodes, each
# asking for a serving certificate (30% two or three times, 10% with a SAN not
# theirs) and 50 requests for a signer no policy names. make test runs
# TestApproverStorm at 1,000 Nodes too (about 100 s) and the benchmark's short
# round at 20; STORM_NODES=100 in make test's environment makes it a 35 s test.
STORM_NODES ?= 1000

.PHONY: bench-approver-storm
bench-approver-storm: devcluster ## The approver in a kubelet storm (issue 47): STORM_NODES (1,000) Nodes' requests within a minute, two replicas, the leader killed once; time until all issued, p50/p99, CPU, heap, API requests, the console's pending queue and home page timed beside the raw LIST while the approver decides; beside the same storm with the approver off (an admin approving once it is in)
	STORM_NODES=$(STORM_NODES) scripts/with-devcluster.sh $(CACHE)/devcluster-bench-storm \
	  go test -tags integration -count=1 -run '^$$' -bench BenchmarkApproverStorm -benchtime 1x -timeout 30m ./internal/approver

.PHONY: bench
bench: build devcluster haproxy bench-pages bench-ledger bench-replay bench-whatif bench-approver-storm ## Live-update benchmark: 1, 100, 1,000 and 5,000 SSE clients (each its own session), then 1,000 tabs over 1 and 3 replicas behind HAProxy, on a fresh devcluster (loopback, ~5 min)
	go build $(GO_BUILD_FLAGS) -o $(BIN)/clusterdesk-bench ./cmd/clusterdesk-bench
	rm -rf $(CACHE)/devcluster-bench
	scripts/with-devcluster.sh $(CACHE)/devcluster-bench \
	  bash -c '$(BIN)/clusterdesk-bench && $(BIN)/clusterdesk-bench -replicas 1,3 -clients 1000 -binary bin/clusterdesk'

# GO_MODULES are the repository's Go modules; each must be gofmt-clean and tidy.
GO_MODULES := . devcluster devcluster/compat/v1.28 devcluster/oidc

.PHONY: check
check: ## Static checks: gofmt, go mod tidy diff, vet, templ generate + git diff (generated code is committed); the tests are make test's
	@unformatted=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "not gofmt-formatted (run gofmt -w):"; echo "$$unformatted"; exit 1; fi
	@for m in $(GO_MODULES); do \
	  (cd $$m && go mod tidy -diff) || { echo "$$m: go.mod/go.sum are not tidy: run go mod tidy there and commit"; exit 1; }; \
	done
	go vet $(GO_BUILD_FLAGS) $(GO_PKGS)
	cd devcluster && go vet $(GO_BUILD_FLAGS) ./...
	cd devcluster/oidc && go vet $(GO_BUILD_FLAGS) ./...
	go tool templ generate
	git diff --exit-code -- '*_templ.go' || { echo "generated templ code is out of date: run make generate and commit"; exit 1; }

.PHONY: clean
clean: ## Remove build output and devcluster state (keeps the built control plane)
	rm -rf bin static/dist $(CACHE)/devcluster-run $(CACHE)/devcluster-test $(CACHE)/devcluster-test-e2e $(CACHE)/devcluster-test-$(COMPAT_VERSION) $(CACHE)/devcluster-test-shapes
