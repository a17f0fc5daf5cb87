#!/usr/bin/env bash
# Prints krew/captf.yaml filled in for a published release, for the first
# krew-index pull request (docs/releasing.md): spec.version, and each
# platform's uri and sha256 from the release's checksums.txt.
#
#   hack/release/krew-manifest.sh v0.1.0 checksums.txt > captf.yaml
#
# It also writes the repository's own krew index, plugins/captf.yaml
# (hack/release/krew-index.sh). krew/captf.yaml's sha256 values are all
# zeros: placeholders, never a valid checksum. make release-check runs this
# on its snapshot and compares the result with the manifest goreleaser
# generates. CAPTF_RELEASE_BASE, for make release-check only, replaces
# https://github.com/captf-io/kubectl-captf/releases/download in each uri
# (a local server on 127.0.0.1).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 vX.Y.Z checksums.txt" >&2
  exit 1
fi
version=$1 sums=$2
if ! [[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "error: $version is not a release version vX.Y.Z (pre-releases stay out of krew-index)" >&2
  exit 1
fi
manifest="$(dirname "$0")/../../krew/captf.yaml"
awk -v v="$version" -v sums="$sums" -v base="${CAPTF_RELEASE_BASE:-}" '
  NR == FNR { sum[$2] = $1; next }
  /^  version: / { print "  version: " v; next }
  /^    uri: / {
    sub(/\/download\/[^\/]+\//, "/download/" v "/")
    file = $0; sub(/.*\//, "", file)
    if (base != "") { print "    uri: " base "/" v "/" file; next }
  }
  /^    sha256: / {
    if (!(file in sum)) { printf "error: %s has no checksum for %s\n", sums, file > "/dev/stderr"; failed = 1; exit 1 }
    printf "    sha256: \"%s\"\n", sum[file]; filled++; next
  }
  { print }
  END { if (!failed && filled == 0) { print "error: no sha256 filled in" > "/dev/stderr"; exit 1 } }
' "$sums" "$manifest"
