#!/usr/bin/env bash
# Builds the release tools from the Go module proxy at pinned versions and
# caches them by version; prints the directory holding them.
set -euo pipefail
GORELEASER_VERSION=v2.15.4
KREW_VERSION=v0.5.0
ACTIONLINT_VERSION=v1.7.12
cache=${CAPTF_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-captf/tools}
out="$cache/goreleaser-$GORELEASER_VERSION-krew-$KREW_VERSION-actionlint-$ACTIONLINT_VERSION"
mkdir -p "$out"
# One build at a time per cache: .ci/run starts this script in the
# background, and make release-check calls it again; the second call waits
# for the first and then finds the tools.
if ! { [ -x "$out/goreleaser" ] && [ -x "$out/krew" ] && [ -x "$out/validate-krew-manifest" ] && [ -x "$out/actionlint" ]; }; then
  exec 9>"$cache/.build.lock"
  flock 9
fi
# The missing tools build concurrently; a failed build fails the script.
pids=()
if [ ! -x "$out/goreleaser" ]; then
  echo "building goreleaser $GORELEASER_VERSION (a few minutes the first time)" >&2
  GOBIN="$out" CGO_ENABLED=0 go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION" &
  pids+=($!)
fi
if [ ! -x "$out/krew" ] || [ ! -x "$out/validate-krew-manifest" ]; then
  echo "building krew $KREW_VERSION" >&2
  GOBIN="$out" CGO_ENABLED=0 go install "sigs.k8s.io/krew/cmd/krew@$KREW_VERSION" "sigs.k8s.io/krew/cmd/validate-krew-manifest@$KREW_VERSION" &
  pids+=($!)
fi
if [ ! -x "$out/actionlint" ]; then
  echo "building actionlint $ACTIONLINT_VERSION" >&2
  GOBIN="$out" CGO_ENABLED=0 go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION" &
  pids+=($!)
fi
status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
[ "$status" = 0 ] || { echo "error: building the release tools failed" >&2; exit 1; }
echo "$out"
