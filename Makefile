# kubectl-captf. The README's first lines: `make demo` and `make test`.
GO ?= go
BIN := bin/kubectl-captf
VERSION ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo v0.0.0-dev)
LDFLAGS := -s -w -X github.com/captf-io/kubectl-captf/pkg/version.Version=$(VERSION) \
	-X github.com/captf-io/kubectl-captf/pkg/version.Commit=$(shell git rev-parse --short HEAD 2>/dev/null || echo unknown) \
	-X github.com/captf-io/kubectl-captf/pkg/version.Date=$(shell TZ=UTC0 git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null || echo unknown)

.PHONY: build test fuzz unit e2e bench demo demo-stop testbed release-check clean

# The test-bed's Kubernetes: empty for the default (hack/testbed/kube-apiserver,
# v1.37.2), or the minor of an older one hack/testbed keeps a wrapper for:
# `make e2e KUBE=1.34` runs the end-to-end suite against v1.34.4. Every
# target that starts a test-bed (test, e2e, bench, demo) takes it;
# README.md's table says which versions passed.
KUBE ?= $(CAPTF_KUBE)
export CAPTF_KUBE := $(KUBE)
# The test-bed's kubectl (built beside its kube-apiserver) first on PATH,
# for the tests and the benchmark that run kubectl; build.sh has built it
# by then, so this only prints the directory.
KUBECTL_PATH = PATH="$$(bash hack/testbed/build.sh)/bin:$$PATH"

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kubectl-captf

# The whole suite: unit tests, then end-to-end tests against a real
# kube-apiserver and etcd on 127.0.0.1 with locks taken by the real terraform
# and OpenTofu. The first run builds etcd, kube-apiserver and OpenTofu
# (see README.md for the measured cold time); later runs take them from the
# cache. The unit tests run first, so that they overlap with a build that
# .ci/run has started in the background (build.sh waits for it).
#
# Every fuzz target's corpus (its f.Add seeds and testdata/fuzz) runs here as
# ordinary test cases: deterministic, the same on every run. Random fuzzing
# is `make fuzz`, run on its own: a crash it finds is committed to the
# corpus with its fix, and from then on `make test` checks it.
#
# Every test it runs runs: none skips. A test that needs something missing
# (kubectl of the test-bed's version, which hack/testbed/build.sh builds) fails. Everything runs
# with -race, the end-to-end tests included: they then build the plugin
# with -race too, and a race in any plugin process fails them. The tests of
# the release artefacts need a snapshot release: they are built with the
# release tag, which only `make release-check` sets, and fail there if they
# cannot run; `make test` runs test/release's checks of krew/captf.yaml.
test:
	@bash hack/testbed/preflight.sh test
	$(GO) vet ./...
	$(GO) vet -tags release ./test/release/
	$(GO) vet -tags codegen ./pkg/api/...
	$(GO) test -race -count=1 ./pkg/... ./hack/schema/
	$(GO) test -count=1 -tags codegen -run '^TestGeneratedDeepCopyIsUpToDate$$' ./pkg/api/...
	@bash hack/testbed/build.sh --tofu >/dev/null
	CAPTF_TESTBED_TOFU=1 $(KUBECTL_PATH) $(GO) test -race -count=1 -timeout 40m ./test/...

# Random fuzzing, each target for a bounded time (FUZZTIME, 30s by
# default). Not part of `make test`: its result depends on time and load.
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./pkg/runner -run '^$$' -fuzz '^FuzzOwnsPod$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/runner -run '^$$' -fuzz '^FuzzJobName$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/inspect -run '^$$' -fuzz '^FuzzParseLockInfo$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/inspect -run '^$$' -fuzz '^FuzzSplitWho$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/inspect -run '^$$' -fuzz '^FuzzLeaseName$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/inspect/cluster -run '^$$' -fuzz '^FuzzJSONList$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/inspect/cluster -run '^$$' -fuzz '^FuzzItemMeta$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/inspect/cluster -run '^$$' -fuzz '^FuzzProtobufWalk$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/inspect/cluster -run '^$$' -fuzz '^FuzzProtobufList$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/shell -run '^$$' -fuzz '^FuzzQuote$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/cmd -run '^$$' -fuzz '^FuzzIndentCompact$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/encode -run '^$$' -fuzz '^FuzzEncode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/audit -run '^$$' -fuzz '^FuzzNote$$' -fuzztime $(FUZZTIME)
	$(GO) test ./pkg/cmd -run '^$$' -fuzz '^FuzzAdvice$$' -fuzztime $(FUZZTIME)

# The unit tests alone, fast: the DeepCopy freshness check (build tag
# codegen), which builds deepcopy-gen, runs in make test.
unit:
	$(GO) test ./pkg/...

# The end-to-end tests alone, as `make test` runs them (with -race), against
# the default test-bed or the one KUBE names (`make e2e KUBE=1.34`).
e2e:
	@bash hack/testbed/preflight.sh e2e
	@bash hack/testbed/build.sh --tofu >/dev/null
	CAPTF_TESTBED_TOFU=1 $(KUBECTL_PATH) $(GO) test -race -count=1 -timeout 40m -v ./test/e2e/

# Builds (or finds in the cache) the test-bed's etcd, kube-apiserver and
# kubectl, and OpenTofu for the parity tests.
testbed:
	@bash hack/testbed/build.sh --tofu >/dev/null

# The benchmark of docs/benchmarks.md (about an hour on 2 cores with its growth curve and --all-stale cluster; the targets alone, one version: 8 minutes; not part of test).
bench: testbed
	$(KUBECTL_PATH) $(GO) run ./hack/bench

# Proves offline that the plugin releases and installs through krew; tools
# are built from the Go module proxy at pinned versions and cached. Ends
# with test/release's release-tagged tests of the artefacts it built.
release-check:
	bash hack/release/check.sh

# A throw-away cluster with one lock of each verdict; `make demo-stop` ends it.
# It checks what it needs first (hack/demo/preflight.sh), builds etcd and
# kube-apiserver only (the demo needs no OpenTofu, terraform or root) and
# the plugin as `make build` does, versioned.
demo:
	@bash hack/demo/preflight.sh
	@bash hack/testbed/build.sh >/dev/null
	@echo "make demo: building the plugin and the demo's seeder (the first time: several minutes more, silent while Go compiles)" >&2
	@$(MAKE) --no-print-directory build
	$(GO) run ./hack/demo up

demo-stop:
	$(GO) run ./hack/demo down

clean: demo-stop
	rm -rf bin dist
