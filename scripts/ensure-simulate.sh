#!/usr/bin/env bash
# Builds (once) the `simulate` binary: Karpenter v1.13's provisioning scheduler run
# offline (Go module simulate/). `npm run simulate` and the `simulate` test project call
# this; so does .ci/run.
#
# Output: the last line on stdout is the binary's path:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-gitops/simulate/<hash>/simulate
# where <hash> covers go.mod, go.sum and every non-test .go file of the module, so any change
# to the pins or the code builds a new binary and an unchanged tree reuses the old one.
#
# Idempotent, safe to run concurrently (flock), atomic (builds into a temp dir, then
# renames it into place). Go's module and build caches are the ones ensure-kube.sh uses:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-gitops/go/{mod,build}
# Cold: about 2.5 minutes and 1 GB of memory on 2 idle cores; warm: milliseconds.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="${repo_root}/simulate"

log() { echo "ensure-simulate: $*" >&2; }

hash="$(
  cd "${mod}"
  { printf '%s\n' go.mod go.sum; find . -name '*.go' ! -name '*_test.go' -type f | LC_ALL=C sort; } |
    while read -r f; do printf '%s\n' "${f}"; cat -- "${f}"; done | sha256sum | cut -c1-16
)"

cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-gitops"
dest="${cache_root}/simulate/${hash}"
bin="${dest}/simulate"

if [[ -x "${bin}" ]]; then
  echo "${bin}"
  exit 0
fi

mkdir -p "${cache_root}/simulate"
exec 9>"${cache_root}/simulate/.lock"
if ! flock -n 9; then
  log "another build holds ${cache_root}/simulate/.lock; waiting"
  flock 9
fi
if [[ -x "${bin}" ]]; then
  echo "${bin}"
  exit 0
fi

go_bin="$(command -v go || true)"
if [[ -z "${go_bin}" && -x /usr/local/go/bin/go ]]; then
  go_bin=/usr/local/go/bin/go
fi
if [[ -z "${go_bin}" ]]; then
  log "Go is required to build the simulation (not on PATH, not in /usr/local/go/bin)"
  exit 1
fi

export GOMODCACHE="${cache_root}/go/mod"
export GOCACHE="${cache_root}/go/build"
export CGO_ENABLED=0
# -mod=readonly: the committed go.sum is the pin; a build never rewrites it.
export GOFLAGS=-mod=readonly
export GOWORK=off
mkdir -p "${GOMODCACHE}" "${GOCACHE}"

tmp="$(mktemp -d "${cache_root}/simulate/.build.XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT

start=$SECONDS
log "building the simulation with $("${go_bin}" version) (a few minutes when cold)"
(
  cd "${mod}"
  "${go_bin}" build -trimpath -ldflags "-s -w" -o "${tmp}/simulate" .
) >&2
[[ -x "${tmp}/simulate" ]] || { log "build did not produce simulate"; exit 1; }

# Atomic install: a stale partial dest is replaced.
rm -rf "${dest}"
mv "${tmp}" "${dest}"
trap - EXIT
log "built in $((SECONDS - start))s into ${dest}"
echo "${bin}"
