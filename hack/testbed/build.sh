#!/usr/bin/env bash
# Builds the end-to-end test-bed's etcd, kube-apiserver and kubectl (and,
# when asked, OpenTofu) from the Go module proxy and caches them by
# version, so that a machine that has built them once pays nothing the next
# time. Prints the directory holding the binaries.
#
#   build.sh [--tofu]
#
#   --tofu, CAPTF_TESTBED_TOFU=1  also build OpenTofu, which only the parity
#                      tests use (`make test` asks for it; `make demo` does not).
#                      A cached OpenTofu is linked in either way.
#   CAPTF_KUBE         the Kubernetes minor to build, e.g. 1.34: the wrapper
#                      modules kube-apiserver-1.34 and etcd-1.34 beside this
#                      script. Empty (or the default's minor) builds the
#                      default, from kube-apiserver and etcd. test/testbed
#                      passes it on, so `make e2e KUBE=1.34` tests 1.34.
#   CAPTF_TESTBED_DIR  overrides the cache directory.
#
# kubectl is built from the same wrapper module as kube-apiserver, into
# bin/ of the printed directory, which the tests (and .ci/run) put first on
# PATH: they drive the cluster with the kubectl of its version whatever
# kubectl PATH has. One on PATH of exactly that version is copied instead.
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
# The wrapper modules of the chosen Kubernetes: the default's have no suffix.
kube=${CAPTF_KUBE:-}
kube=${kube#v}
default_minor=$(required k8s.io/kubernetes "$here/kube-apiserver/go.mod" | cut -d. -f1,2)
suffix=
if [ -n "$kube" ] && [ "v$kube" != "$default_minor" ]; then
  suffix=-$kube
  if [ ! -f "$here/kube-apiserver$suffix/go.mod" ] || [ ! -f "$here/etcd$suffix/go.mod" ]; then
    echo "build.sh: no test-bed for Kubernetes $kube (CAPTF_KUBE); there is $default_minor (the default) and:" \
      $(cd "$here" && ls -d kube-apiserver-* 2>/dev/null | sed 's/^kube-apiserver-//') >&2
    exit 2
  fi
fi
kube_mod=$here/kube-apiserver$suffix
etcd_mod=$here/etcd$suffix
etcd_version=$(required go.etcd.io/etcd/server/v3 "$etcd_mod/go.mod")
kube_version=$(required k8s.io/kubernetes "$kube_mod/go.mod")
tofu_version=$(required github.com/opentofu/opentofu "$here/tofu/go.mod")
cache=${CAPTF_TESTBED_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-captf/testbed}
out="$cache/etcd-$etcd_version-kube-$kube_version"
tofu_out="$cache/tofu-$tofu_version"
mkdir -p "$out/bin" "$tofu_out"

# One build at a time per version: .ci/run starts this script in the
# background while the unit tests run, and `make test` calls it again; the
# second call waits for the first and then finds the binaries. The cluster
# binaries of one Kubernetes version and OpenTofu have a lock each, taken
# in that order, so two versions build at once without waiting on each other.
# A call that finds what it needs built does not wait for another's build.
# macOS has no flock(1): there builds are not serialised, which only
# .ci/run's background build (Linux CI) needs.
if ! { [ -x "$out/etcd" ] && [ -x "$out/kube-apiserver" ] && [ -x "$out/bin/kubectl" ]; } &&
    command -v flock >/dev/null 2>&1; then
  exec 8>"$out/.build.lock"
  flock 8
fi
if [ -n "$tofu" ] && [ ! -x "$tofu_out/tofu" ] && command -v flock >/dev/null 2>&1; then
  exec 9>"$tofu_out/.build.lock"
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
  (cd "$etcd_mod" && CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "-s -w" \
      -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$out/etcd.tmp" "$out/etcd"
}
# kube-apiserver and kubectl, whichever are missing, in one go build: they
# share most of their packages, which one build compiles once.
build_kube() {
  local cmd minor ldflags="-s -w" tmp="$out/kube.tmp" pkgs=()
  minor=$(echo "$kube_version" | cut -d. -f2)
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  done
  for cmd in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$cmd"); done
  rm -rf "$tmp" && mkdir -p "$tmp"
  (cd "$kube_mod" && CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "$ldflags" \
      -o "$tmp/" "${pkgs[@]}")
  for cmd in "$@"; do
    case $cmd in
      kubectl) mv "$tmp/$cmd" "$out/bin/$cmd" ;;
      *) mv "$tmp/$cmd" "$out/$cmd" ;;
    esac
  done
  rm -rf "$tmp"
}
# OpenTofu, for the parity tests only; cached on its own, by version, and
# linked beside the cluster binaries, where test/testbed looks for it.
build_tofu() {
  (cd "$here/tofu" && CGO_ENABLED=0 go build -mod=mod -trimpath \
      -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
      -o "$tofu_out/tofu.tmp" github.com/opentofu/opentofu/cmd/tofu)
  mv "$tofu_out/tofu.tmp" "$tofu_out/tofu"
}

[ -x "$out/etcd" ] || build "etcd $etcd_version" build_etcd
# A kubectl on PATH of exactly the test-bed's version is taken as it is.
if [ ! -x "$out/bin/kubectl" ] && command -v kubectl >/dev/null &&
  kubectl version --client 2>/dev/null | grep -qx "Client Version: $kube_version"; then
  cp "$(command -v kubectl)" "$out/bin/kubectl.tmp" && mv "$out/bin/kubectl.tmp" "$out/bin/kubectl"
fi
kube_missing=()
[ -x "$out/kube-apiserver" ] || kube_missing+=(kube-apiserver)
[ -x "$out/bin/kubectl" ] || kube_missing+=(kubectl)
if [ ${#kube_missing[@]} -gt 0 ]; then
  build "${kube_missing[*]} $kube_version" build_kube "${kube_missing[@]}"
fi
if [ -n "$tofu" ] && [ ! -x "$tofu_out/tofu" ]; then
  build "OpenTofu $tofu_version" build_tofu
fi
failed=()
# Guarded: macOS's bash 3.2 calls an empty array unbound under set -u.
if [ ${#pids[@]} -gt 0 ]; then
  # A first build is silent for up to half an hour on 2 cores: a line a
  # minute says it is still going, and how long it has taken so far.
  # Its sleep is killed with it: left running, it would hold stdout open,
  # and $(build.sh) would wait for it.
  (
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    while :; do
      sleep 60 &
      nap=$!
      wait "$nap"
      echo "build.sh: still building, $(elapsed $((SECONDS - started))) so far" >&2
    done
  ) >/dev/null &
  heartbeat=$!
  for n in "${!pids[@]}"; do
    wait "${pids[$n]}" || failed+=("${names[$n]}")
  done
  kill "$heartbeat" 2>/dev/null || true
  wait "$heartbeat" 2>/dev/null || true
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
