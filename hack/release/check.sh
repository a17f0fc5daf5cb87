#!/usr/bin/env bash
# make release-check: proves offline that the plugin releases and installs.
#  1. actionlint on both workflows
#  2. goreleaser check (exit 2 would mean deprecated keys)
#  3. a snapshot release of every archive and dist/krew/captf.yaml, twice,
#     from two copies of the tree: the checksums must be the same
#  4. validate-krew-manifest on the generated manifest, and on krew/captf.yaml
#     filled in by hack/release/krew-manifest.sh (the first krew-index
#     submission), which must carry goreleaser's checksums and install
#  5. krew install from the archives: linux/amd64, darwin/arm64, windows/amd64,
#     each with its completion shim (the .cmd one on Windows only) and the
#     k9s plugins file; the caveat's bash/zsh line makes `kubectl captf <TAB>`
#     work, both with krew's default root (~/.krew) and with KREW_ROOT set
#  6. `kubectl captf version` through kubectl's own plugin discovery; the
#     caveat's rm line removes the shim; the repository's own krew index
#     (plugins/captf.yaml, hack/release/krew-index.sh): krew index add from
#     its git URL, krew install captf/captf, and krew upgrade to the next
#     release, with the archives served on 127.0.0.1
#  7. test/release, with its release-tagged tests (only built here, and
#     failing without CAPTF_DIST and CAPTF_MAKE_BIN, so that none skips):
#     krew/captf.yaml agrees with the generated manifest, every archive
#     holds what docs and krew promise (LICENSE, the completion shim, the
#     k9s plugins file), and the release binary prints the version, commit
#     and date `make build` prints for the same version
set -euo pipefail
cd "$(dirname "$0")/../.."
tools=$(bash hack/release/tools.sh)
export PATH="$tools:$PATH"

# The run: scripts are one-line calls of scripts that have their own tests;
# shellcheck and pyflakes are off so that the result does not depend on
# whether they happen to be installed.
actionlint -shellcheck= -pyflakes= .github/workflows/ci.yml .github/workflows/release.yml
goreleaser check

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

# Reproducibility: the tree as it is now (uncommitted edits included) is
# copied to a/, and a/ to b/ with fresh mtimes; each builds a snapshot at its
# own path, and every archive must come out byte for byte the same. The
# copies also keep the builds apart from edits made while they run.
mkdir "$root/a" "$root/b"
tar -cf - --exclude=./dist --exclude=./bin --exclude=./.demo . | tar -xf - -C "$root/a"
tar -C "$root/a" -cf - . | tar -xmf - -C "$root/b"
for copy in a b; do
  echo "snapshot release in copy $copy"
  # Without a remote, goreleaser's snapshot ignores the git error and
  # builds with no commit and no commit date, so neither the version nor
  # the fixed mtimes are set; a clone has one, a fresh checkout may not.
  git -C "$root/$copy" remote get-url origin >/dev/null 2>&1 ||
    git -C "$root/$copy" remote add origin https://github.com/captf-io/kubectl-captf.git
  (cd "$root/$copy" && goreleaser release --snapshot --clean --skip=publish)
done
if ! diff "$root/a/dist/checksums.txt" "$root/b/dist/checksums.txt"; then
  echo "error: two snapshot builds of the same tree differ (checksums above)" >&2
  exit 1
fi
echo "reproducible: both snapshot builds have the same checksums"
rm -rf dist
cp -a "$root/a/dist" dist

validate-krew-manifest -manifest dist/krew/captf.yaml -skip-install

# The first krew-index submission is krew/captf.yaml filled in by
# hack/release/krew-manifest.sh from the release's checksums.txt
# (docs/releasing.md): for this snapshot it must give every platform
# goreleaser's checksum, validate, and install (krew checks the sha256).
mkdir "$root/filled"
bash hack/release/krew-manifest.sh v9.9.9 dist/checksums.txt >"$root/filled/captf.yaml"
# Each platform's archive and sha256, whatever the manifest's layout.
pairs() { awk '/^[ -]*uri: /{f=$NF; sub(/.*\//,"",f)} /^[ -]*sha256: /{s=$NF; gsub(/"/,"",s); print f, s}' "$1" | sort; }
if ! diff <(pairs dist/krew/captf.yaml) <(pairs "$root/filled/captf.yaml"); then
  echo "error: hack/release/krew-manifest.sh does not fill in goreleaser's checksums" >&2
  exit 1
fi
test "$(pairs "$root/filled/captf.yaml" | wc -l)" = 6
validate-krew-manifest -manifest "$root/filled/captf.yaml" -skip-install
KREW_ROOT="$root/filled-root" KREW_OS=linux KREW_ARCH=amd64 \
  krew install --manifest="$root/filled/captf.yaml" --archive=dist/kubectl-captf_linux_amd64.tar.gz

# linux/amd64 goes twice: where krew puts it by default (~/.krew, under a
# fake HOME, KREW_ROOT unset) and into a KREW_ROOT elsewhere (under another
# fake HOME), so that the caveat's line can be run as it is written in both.
home="$root/home"
home2="$root/home2"
krewroot="$root/krewroot"
mkdir -p "$home" "$home2"
for install in linux/amd64 linux/amd64/KREW_ROOT darwin/arm64 windows/amd64; do
  platform=${install%/KREW_ROOT}
  os=${platform%/*} arch=${platform#*/}
  case $install in
    linux/amd64) krew_root="$home/.krew" ;;
    */KREW_ROOT) krew_root="$krewroot" ;;
    *) krew_root="$root/$os-$arch" ;;
  esac
  echo "krew install for $os/$arch into $krew_root"
  KREW_ROOT="$krew_root" KREW_OS=$os KREW_ARCH=$arch \
    krew install --manifest=dist/krew/captf.yaml --archive="dist/kubectl-captf_${os}_${arch}.tar.gz"
done
for store in "$home/.krew/store/captf/"* "$krewroot/store/captf/"* "$root/darwin-arm64/store/captf/"*; do
  test -x "$store/kubectl-captf"
  test -x "$store/kubectl_complete-captf"
  test ! -e "$store/kubectl_complete-captf.cmd"
  cmp docs/k9s/captf.yaml "$store/docs/k9s/captf.yaml"
done
store=$(echo "$root/windows-amd64/store/captf/"*)
test -x "$store/kubectl-captf.exe"
grep -q '^kubectl-captf.exe __complete %\*' "$store/kubectl_complete-captf.cmd"
test ! -e "$store/kubectl_complete-captf"
cmp docs/k9s/captf.yaml "$store/docs/k9s/captf.yaml"

# The caveat's bash/zsh line, run as a user pastes it: without KREW_ROOT it
# fills ~/.krew/bin; with KREW_ROOT, $KREW_ROOT/bin, and nothing in ~/.krew.
caveat=$(sed -n 's/^ *\(cp .*kubectl_complete-captf .*\)$/\1/p' dist/krew/captf.yaml)
test -n "$caveat"
echo "caveat: $caveat"
env -u KREW_ROOT HOME="$home" bash -c "$caveat"
KREW_ROOT="$krewroot" HOME="$home2" bash -c "$caveat"
test -x "$home/.krew/bin/kubectl_complete-captf"
test -x "$krewroot/bin/kubectl_complete-captf"
if [ -e "$home2/.krew" ]; then
  echo "error: with KREW_ROOT set, the caveat's line wrote to ~/.krew" >&2
  exit 1
fi
for bin in "$home/.krew/bin" "$krewroot/bin"; do
  completions=$(HOME="$home" PATH="$bin:$PATH" kubectl __complete captf '')
  if ! grep -q '^locks' <<<"$completions"; then
    echo "error: kubectl __complete captf with $bin on PATH did not offer locks:" >&2
    echo "$completions" >&2
    exit 1
  fi
  PATH="$bin:$PATH" kubectl captf version
done

# The caveat's rm line removes the copied shim, which krew uninstall leaves.
rmline=$(sed -n 's/^ *\(rm .*kubectl_complete-captf\)$/\1/p' dist/krew/captf.yaml)
test -n "$rmline"
env -u KREW_ROOT HOME="$home" bash -c "$rmline"
KREW_ROOT="$krewroot" HOME="$home2" bash -c "$rmline"
if [ -e "$home/.krew/bin/kubectl_complete-captf" ] || [ -e "$krewroot/bin/kubectl_complete-captf" ]; then
  echo "error: the caveat's rm line left the completion shim" >&2
  exit 1
fi

# The repository's own krew index, as the README's first screen installs
# it: hack/release/krew-index.sh writes plugins/captf.yaml to the main
# branch of a bare copy of this repository (release.yml: of the repository
# itself), krew adds it as an index from its git URL, installs captf/captf
# from it, and `krew upgrade` follows the next release. The archives are
# served on 127.0.0.1 where the release's download URLs would be.
mkdir -p "$root/download"
ln -s "$PWD/dist" "$root/download/v9.9.9"
ln -s "$PWD/dist" "$root/download/v9.9.10"
go build -o "$root/serve" ./hack/release/serve
"$root/serve" "$root/download" >"$root/serve.url" &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null || true; rm -rf "$root"' EXIT
for _ in $(seq 50); do [ -s "$root/serve.url" ] && break; sleep 0.1; done
base=$(cat "$root/serve.url")
git init -q --bare "$root/index.git"
git -C "$root/index.git" symbolic-ref HEAD refs/heads/main
git -C "$root/a" push -q "$root/index.git" HEAD:refs/heads/main
CAPTF_RELEASE_BASE="$base" bash hack/release/krew-index.sh v9.9.9 dist/checksums.txt "$root/index.git"
index_root="$root/index-root"
index_env=(env -u KREW_ROOT HOME="$root/index-home" KREW_ROOT="$index_root" KREW_OS=linux KREW_ARCH=amd64 KREW_NO_UPGRADE_CHECK=1)
"${index_env[@]}" krew index add captf "file://$root/index.git"
"${index_env[@]}" krew install captf/captf
"$index_root/bin/kubectl-captf" version
grep -q '^  version: v9.9.9$' "$index_root/receipts/captf.yaml"
CAPTF_RELEASE_BASE="$base" bash hack/release/krew-index.sh v9.9.10 dist/checksums.txt "$root/index.git"
"${index_env[@]}" krew update
"${index_env[@]}" krew upgrade
if ! grep -q '^  version: v9.9.10$' "$index_root/receipts/captf.yaml"; then
  echo "error: krew upgrade did not follow the index to v9.9.10:" >&2
  cat "$index_root/receipts/captf.yaml" >&2
  exit 1
fi
echo "krew index: installed captf/captf v9.9.9 from the repository's index and upgraded it to v9.9.10"
kill "$serve_pid"

# `make build` of the same version, in the copy the snapshot was built from.
version=$(sed -n 's/^  version: //p' dist/krew/captf.yaml)
make -s -C "$root/a" build BIN="$root/make/kubectl-captf" VERSION="$version"
CAPTF_DIST=dist CAPTF_MAKE_BIN="$root/make/kubectl-captf" go test -tags release -count=1 -v ./test/release/
