#!/usr/bin/env bash
# Checks what `make test` and `make e2e` need before their long builds and
# runs, and stops with one line naming everything missing, so that a
# newcomer does not learn it from dozens of failed end-to-end tests ten
# minutes later. The end-to-end tests run the real terraform under
# `unshare --uts` (a runner pod's hostname in the lock's Who: Linux, and
# root or CAP_SYS_ADMIN), and paste every printed command into an
# interactive bash, zsh and fish under script(1). `make unit` needs none
# of these, and `make demo` none of them either.
set -uo pipefail

target=${1:-test}
missing=()
if [ "$(uname -s)" != Linux ]; then
  missing+=("Linux (this is $(uname -s))")
elif ! command -v unshare >/dev/null 2>&1; then
  missing+=("unshare (util-linux)")
elif ! unshare --uts true >/dev/null 2>&1; then
  missing+=("root (unshare --uts is refused here)")
fi
command -v terraform >/dev/null 2>&1 || missing+=("terraform v1.11.4 on PATH")
for tool in zsh fish script; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  list=$(printf '%s, ' "${missing[@]}")
  echo "make $target: needs ${list%, }; \`make unit\` runs the unit tests without them, \`make demo\` the plugin" >&2
  exit 1
fi
