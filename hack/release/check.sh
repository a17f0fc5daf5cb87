#!/usr/bin/env bash
# make release-check: proves offline that the plugin releases and installs.
#  1. goreleaser check (exit 2 would mean deprecated keys)
#  2. a snapshot release of every archive and dist/krew/captf.yaml
#  3. validate-krew-manifest on the generated manifest
#  4. krew install from the archives: linux/amd64, darwin/arm64, windows/amd64
#  5. `kubectl captf version` through kubectl's own plugin discovery
#  6. krew/captf.yaml agrees with the generated manifest
set -euo pipefail
cd "$(dirname "$0")/../.."
tools=$(bash hack/release/tools.sh)
export PATH="$tools:$PATH"

goreleaser check
goreleaser release --snapshot --clean --skip=publish
validate-krew-manifest -manifest dist/krew/captf.yaml -skip-install

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
for platform in linux/amd64 darwin/arm64 windows/amd64; do
  os=${platform%/*} arch=${platform#*/}
  echo "krew install for $os/$arch"
  KREW_ROOT="$root/$os-$arch" KREW_OS=$os KREW_ARCH=$arch \
    krew install --manifest=dist/krew/captf.yaml --archive="dist/kubectl-captf_${os}_${arch}.tar.gz"
done
test -x "$root/windows-amd64/store/captf/"*/kubectl-captf.exe
PATH="$root/linux-amd64/bin:$PATH" kubectl captf version
CAPTF_DIST=dist go test -count=1 ./test/release/
