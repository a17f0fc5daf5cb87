#!/usr/bin/env bash
# Updates the repository's own krew index for a release: plugins/captf.yaml
# on the main branch of REMOTE, krew/captf.yaml filled in for VERSION by
# hack/release/krew-manifest.sh. With it, krew installs the plugin, and
# `kubectl krew upgrade` follows each release, before (and beside) its
# krew-index entry:
#
#   kubectl krew index add captf https://github.com/captf-io/kubectl-captf.git
#   kubectl krew install captf/captf
#
#   hack/release/krew-index.sh vX.Y.Z checksums.txt REMOTE
#
# release.yml runs it with this repository's URL; make release-check with a
# local bare repository, offline.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 vX.Y.Z checksums.txt REMOTE" >&2
  exit 1
fi
version=$1 sums=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") remote=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q --depth 1 --branch main "$remote" "$work/index"
mkdir -p "$work/index/plugins"
bash "$here/krew-manifest.sh" "$version" "$sums" >"$work/index/plugins/captf.yaml"
cd "$work/index"
git add plugins/captf.yaml
if git diff --cached --quiet; then
  echo "plugins/captf.yaml is already $version" >&2
  exit 0
fi
git -c user.name="github-actions[bot]" -c user.email="41898282+github-actions[bot]@users.noreply.github.com" \
  commit -q -m "plugins/captf.yaml: $version, for the repository's krew index"
git push -q origin HEAD:main
echo "plugins/captf.yaml on main is $version" >&2
