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
# A first build takes long (README.md gives the measured times); the
# missing binaries build concurrently, and each says on stderr when it
# starts and how long it took.
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

# One build at a time per cache: .ci/run starts this script in the
# background while the unit tests run, and `make test` calls it again; the
# second call waits for the first and then finds the binaries.
# A call that finds what it needs built does not wait for another's build.
have() { [ -x "$out/etcd" ] && [ -x "$out/kube-apiserver" ] && { [ -z "$tofu" ] || [ -x "$tofu_out/tofu" ]; }; }
# macOS has no flock(1): there builds are not serialised, which only
# .ci/run's background build (Linux CI) needs.
if ! have && command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.build.lock"
  flock 9
fi

# The missing binaries build concurrently: on two cores one build leaves a
# core idle while it downloads modules or links. Each says on stderr when it
# starts and how long it took; a failed build fails the script after the
# others end.
started=$SECONDS
elapsed() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
pids=() names=()
build() { # name, then the command; runs in the background
  local name=$1
  shift
  echo "build.sh: building $name (first time only)..." >&2
  (
    t=$SECONDS
    "$@"
    echo "build.sh: $name took $(elapsed $((SECONDS - t)))" >&2
  ) &
  pids+=($!) names+=("$name")
}

build_etcd() {
  (cd "$here/etcd" && CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "-s -w" \
      -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$out/etcd.tmp" "$out/etcd"
}
build_apiserver() {
  local minor pkg=k8s.io/component-base/version
  minor=$(echo "$kube_version" | cut -d. -f2)
  (cd "$here/kube-apiserver" && CGO_ENABLED=0 go build -mod=mod -trimpath \
      -ldflags "-s -w -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor" \
      -o "$out/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
}
# OpenTofu, for the parity tests only; cached on its own, by version, and
# linked beside the cluster binaries, where test/testbed looks for it.
build_tofu() {
  mkdir -p "$tofu_out"
  (cd "$here/tofu" && CGO_ENABLED=0 go build -mod=mod -trimpath \
      -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
      -o "$tofu_out/tofu.tmp" github.com/opentofu/opentofu/cmd/tofu)
  mv "$tofu_out/tofu.tmp" "$tofu_out/tofu"
}

[ -x "$out/etcd" ] || build "etcd $etcd_version" build_etcd
[ -x "$out/kube-apiserver" ] || build "kube-apiserver $kube_version" build_apiserver
if [ -n "$tofu" ] && [ ! -x "$tofu_out/tofu" ]; then
  build "OpenTofu $tofu_version" build_tofu
fi
failed=()
# Guarded: macOS's bash 3.2 calls an empty array unbound under set -u.
if [ ${#pids[@]} -gt 0 ]; then
  for n in "${!pids[@]}"; do
    wait "${pids[$n]}" || failed+=("${names[$n]}")
  done
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "build.sh: failed to build: ${failed[*]}" >&2
  exit 1
fi
if [ -x "$tofu_out/tofu" ]; then
  ln -sfn "$tofu_out/tofu" "$out/tofu"
fi
if [ ${#pids[@]} -gt 0 ]; then
  echo "build.sh: done in $(elapsed $((SECONDS - started))); cached in $cache" >&2
fi

echo "$out"
