# kubectl-captf. The README's first lines: `make demo` and `make test`.
GO ?= go
BIN := bin/kubectl-captf

.PHONY: build test unit e2e demo demo-stop testbed clean

build:
	$(GO) build -trimpath -o $(BIN) ./cmd/kubectl-captf

# The whole suite: unit tests, then end-to-end tests against a real
# kube-apiserver and etcd on 127.0.0.1 with locks taken by the real terraform.
# The first run builds etcd and kube-apiserver (about 5 minutes); later runs
# take them from the cache.
test: testbed
	$(GO) vet ./...
	$(GO) test -race -count=1 ./pkg/...
	$(GO) test -count=1 -timeout 30m ./test/...

unit:
	$(GO) test ./pkg/...

e2e: testbed
	$(GO) test -count=1 -timeout 30m -v ./test/e2e/

# Builds (or finds in the cache) the test-bed's etcd and kube-apiserver.
testbed:
	@bash hack/testbed/build.sh >/dev/null

# A throw-away cluster with one lock of each verdict; `make demo-stop` ends it.
demo: testbed
	$(GO) run ./hack/demo up

demo-stop:
	$(GO) run ./hack/demo down

clean: demo-stop
	rm -rf bin dist
