#!/usr/bin/env bash
# Builds the end-to-end test-bed's etcd and kube-apiserver (and, when asked,
# OpenTofu) from the Go module proxy and caches them by version, so that a
# machine that has built them once pays nothing the next time. Prints the
# directory holding the binaries.
#
#   build.sh [--tofu]
#
#   --tofu, CAPTF_TESTBED_TOFU=1  also build OpenTofu, which only the parity
#                      tests use (`make test` asks for it; `make demo` does not).
#                      A cached OpenTofu is linked in either way.
#   CAPTF_TESTBED_DIR  overrides the cache directory.
#
# A first build takes long (measured on a 2-core machine shared with other
# work, module downloads included: etcd 2m03s, kube-apiserver 13m14s,
# OpenTofu 11m11s); each step says on stderr what it builds and how long
# the step before it took.
set -euo pipefail

tofu=${CAPTF_TESTBED_TOFU:-}
for arg in "$@"; do
  case "$arg" in
    --tofu) tofu=1 ;;
    *) echo "usage: build.sh [--tofu]" >&2; exit 2 ;;
  esac
done
case "$tofu" in 1|true|yes) tofu=1 ;; *) tofu= ;; esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The version a wrapper module requires, whether in a one-line or block require.
required() { awk -v m="$1" '/^[[:space:]]*\/\//{next} {for (i = 1; i < NF; i++) if ($i == m) {print $(i+1); exit}}' "$2"; }
etcd_version=$(required go.etcd.io/etcd/server/v3 "$here/etcd/go.mod")
kube_version=$(required k8s.io/kubernetes "$here/kube-apiserver/go.mod")
tofu_version=$(required github.com/opentofu/opentofu "$here/tofu/go.mod")
cache=${CAPTF_TESTBED_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-captf/testbed}
out="$cache/etcd-$etcd_version-kube-$kube_version"
tofu_out="$cache/tofu-$tofu_version"
mkdir -p "$out"

# Progress on stderr: which step runs, and how long the one before took.
started=$SECONDS step_start= step_name=
elapsed() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
step() {
  local now=$SECONDS
  if [ -n "$step_name" ]; then
    echo "build.sh: $step_name took $(elapsed $((now - step_start)))" >&2
  fi
  step_name=$1 step_start=$now
  if [ -n "$step_name" ]; then
    echo "build.sh: building $step_name (first time only; $2 on a 2-core machine, module downloads included)..." >&2
  fi
}
finish() {
  if [ -n "$step_name" ]; then
    step "" ""
    echo "build.sh: done in $(elapsed $((SECONDS - started))); cached in $cache" >&2
  fi
}

if [ ! -x "$out/etcd" ]; then
  step "etcd $etcd_version" "measured 2m03s"
  (cd "$here/etcd" && CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "-s -w" \
      -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$out/etcd.tmp" "$out/etcd"
fi

if [ ! -x "$out/kube-apiserver" ]; then
  step "kube-apiserver $kube_version" "measured 13m14s"
  minor=$(echo "$kube_version" | cut -d. -f2)
  pkg=k8s.io/component-base/version
  (cd "$here/kube-apiserver" && CGO_ENABLED=0 go build -mod=mod -trimpath \
      -ldflags "-s -w -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor" \
      -o "$out/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
fi

# OpenTofu, for the parity tests only; cached on its own, by version, and
# linked beside the cluster binaries, where test/testbed looks for it.
if [ -n "$tofu" ] && [ ! -x "$tofu_out/tofu" ]; then
  step "OpenTofu $tofu_version" "measured 11m11s"
  mkdir -p "$tofu_out"
  (cd "$here/tofu" && CGO_ENABLED=0 go build -mod=mod -trimpath \
      -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
      -o "$tofu_out/tofu.tmp" github.com/opentofu/opentofu/cmd/tofu)
  mv "$tofu_out/tofu.tmp" "$tofu_out/tofu"
fi
if [ -x "$tofu_out/tofu" ]; then
  ln -sfn "$tofu_out/tofu" "$out/tofu"
fi
finish

echo "$out"
