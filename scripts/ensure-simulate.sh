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
# renames it into place): scripts/lib.sh, shared with ensure-kube.sh, which also sets up
# Go's module and build caches in ${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-gitops/go/{mod,build}
# Cold: about 2.5 minutes and 1 GB of memory on 2 idle cores; warm: milliseconds.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="${repo_root}/simulate"

log() { echo "ensure-simulate: $*" >&2; }
# shellcheck source=scripts/lib.sh
source "${repo_root}/scripts/lib.sh"

hash="$(
  cd "${mod}"
  { printf '%s\n' go.mod go.sum; find . -name '*.go' ! -name '*_test.go' -type f | LC_ALL=C sort; } |
    while read -r f; do printf '%s\n' "${f}"; cat -- "${f}"; done | sha256sum | cut -c1-16
)"

dest="${cache_root}/simulate/${hash}"
bin="${dest}/simulate"

reuse_or_lock "${cache_root}/simulate" "${bin}" test -x "${bin}"
# -mod=readonly: the committed go.sum is the pin; a build never rewrites it.
go_env "the simulation" -mod=readonly
build_dir "${cache_root}/simulate"

start=$SECONDS
log "building the simulation with $("${go_bin}" version) (a few minutes when cold)"
(
  cd "${mod}"
  "${go_bin}" build -trimpath -ldflags "-s -w" -o "${tmp}/simulate" .
) >&2
[[ -x "${tmp}/simulate" ]] || { log "build did not produce simulate"; exit 1; }

install_build "${dest}"
log "built in $((SECONDS - start))s into ${dest}"
echo "${bin}"
