#!/usr/bin/env bash
# Builds the end-to-end test-bed's etcd, kube-apiserver and OpenTofu from the
# Go module proxy and caches them by version, so that a machine that has built them once
# pays nothing the next time. Prints the directory holding both binaries.
#
#   CAPTF_TESTBED_DIR  overrides the cache directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The version a wrapper module requires, whether in a one-line or block require.
required() { awk -v m="$1" '/^[[:space:]]*\/\//{next} {for (i = 1; i < NF; i++) if ($i == m) {print $(i+1); exit}}' "$2"; }
etcd_version=$(required go.etcd.io/etcd/server/v3 "$here/etcd/go.mod")
kube_version=$(required k8s.io/kubernetes "$here/kube-apiserver/go.mod")
tofu_version=$(required github.com/opentofu/opentofu "$here/tofu/go.mod")
cache=${CAPTF_TESTBED_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-captf/testbed}
out="$cache/etcd-$etcd_version-kube-$kube_version"
mkdir -p "$out"

if [ ! -x "$out/etcd" ]; then
  echo "building etcd $etcd_version (about a minute the first time)" >&2
  (cd "$here/etcd" && CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "-s -w" \
      -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$out/etcd.tmp" "$out/etcd"
fi

if [ ! -x "$out/kube-apiserver" ]; then
  echo "building kube-apiserver $kube_version (3-4 minutes the first time)" >&2
  minor=$(echo "$kube_version" | cut -d. -f2)
  pkg=k8s.io/component-base/version
  (cd "$here/kube-apiserver" && CGO_ENABLED=0 go build -mod=mod -trimpath \
      -ldflags "-s -w -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor" \
      -o "$out/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
fi

# OpenTofu, for the parity tests; cached on its own, by version.
tofu_out="$cache/tofu-$tofu_version"
mkdir -p "$tofu_out"
if [ ! -x "$tofu_out/tofu" ]; then
  echo "building OpenTofu $tofu_version (about 3 minutes the first time)" >&2
  (cd "$here/tofu" && CGO_ENABLED=0 go build -mod=mod -trimpath \
      -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
      -o "$tofu_out/tofu.tmp" github.com/opentofu/opentofu/cmd/tofu)
  mv "$tofu_out/tofu.tmp" "$tofu_out/tofu"
fi
ln -sf "$tofu_out/tofu" "$out/tofu"

echo "$out"
