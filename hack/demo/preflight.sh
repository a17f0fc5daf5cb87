#!/usr/bin/env bash
# Checks what `make demo` needs before its first, long build, and stops
# with one line naming what is missing. The demo needs Go (the version
# go.mod asks for, or a Go that fetches it: 1.21 or later with
# GOTOOLCHAIN not local), make and bash; on a first run it builds etcd and
# kube-apiserver from the Go module proxy, so it needs the proxy then. It
# needs no root, no unshare and no terraform: it runs on Linux and macOS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

fail() { echo "make demo: $*" >&2; exit 1; }

want=$(awk '$1 == "go" {print $2; exit}' go.mod)
command -v go >/dev/null 2>&1 || fail "needs Go $want or later on PATH (https://go.dev/dl/)"
# In the module, go picks the toolchain go.mod asks for (downloading it
# when GOTOOLCHAIN allows), and says which it runs.
have=$(go env GOVERSION 2>/dev/null) || fail "go env fails here: $(go env GOVERSION 2>&1 | head -1)"
minor() { echo "${1#go}" | cut -d. -f2 | sed 's/[^0-9].*//'; }
major() { echo "${1#go}" | cut -d. -f1; }
if [ "$(major "$have")" -lt "$(major "$want")" ] ||
   { [ "$(major "$have")" -eq "$(major "$want")" ] && [ "$(minor "$have")" -lt "$(minor "$want")" ]; }; then
  fail "needs Go $want or later; go on PATH is $have (install a newer Go from https://go.dev/dl/, or unset GOTOOLCHAIN=local)"
fi

cache=${CAPTF_TESTBED_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-captf/testbed}
mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ] ||
  fail "cannot write the test-bed cache $cache: set CAPTF_TESTBED_DIR to a writable directory"
required() { awk -v m="$1" '/^[[:space:]]*\/\//{next} {for (i = 1; i < NF; i++) if ($i == m) {print $(i+1); exit}}' "$2"; }
bins="$cache/etcd-$(required go.etcd.io/etcd/server/v3 hack/testbed/etcd/go.mod)-kube-$(required k8s.io/kubernetes hack/testbed/kube-apiserver/go.mod)"
if [ ! -x "$bins/etcd" ] || [ ! -x "$bins/kube-apiserver" ]; then
  case "$(go env GOPROXY)" in
    off|"") fail "the first run builds etcd and kube-apiserver from the Go module proxy, but GOPROXY is off" ;;
  esac
  echo "make demo: the first run builds etcd and kube-apiserver from the Go module proxy (15 to 25 minutes on 2 cores with the plugin, longer on a busy machine; later runs take seconds)" >&2
fi
