# Sourced by ensure-kube.sh and ensure-simulate.sh: what building a Go binary once into
# the user's cache needs, so both build alike. The caller sets `set -euo pipefail` and
# defines `log` (its messages carry the caller's name) before sourcing this.
#
# Everything lives under ${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-gitops: each binary in
# its own directory with a .lock, and Go's module and build caches, shared, in go/{mod,build},
# so a CI cache of the user's cache dir keeps everything.

cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-gitops"

# reuse_or_lock <dir> <path> <test...>: when `test` holds, prints <path> and exits 0.
# Otherwise takes <dir>/.lock (fd 9, held until the script ends), waiting while another
# build holds it, and tests again: that build may have produced what we need.
reuse_or_lock() {
  local dir="$1" out="$2"
  shift 2
  if "$@"; then
    echo "${out}"
    exit 0
  fi
  mkdir -p "${dir}"
  exec 9>"${dir}/.lock"
  if ! flock -n 9; then
    log "another build holds ${dir}/.lock; waiting"
    flock 9
  fi
  # Someone else may have finished the build while we waited.
  if "$@"; then
    echo "${out}"
    exit 0
  fi
}

# go_env <what> <GOFLAGS>: sets go_bin (PATH, else /usr/local/go/bin; exits when neither
# has Go, saying it is needed to build <what>) and exports the shared caches and a static,
# workspace-free build.
go_env() {
  go_bin="$(command -v go || true)"
  if [[ -z "${go_bin}" && -x /usr/local/go/bin/go ]]; then
    go_bin=/usr/local/go/bin/go
  fi
  if [[ -z "${go_bin}" ]]; then
    log "Go is required to build $1 (not on PATH, not in /usr/local/go/bin)"
    exit 1
  fi
  export GOMODCACHE="${cache_root}/go/mod"
  export GOCACHE="${cache_root}/go/build"
  export CGO_ENABLED=0
  export GOFLAGS="$2"
  export GOWORK=off
  mkdir -p "${GOMODCACHE}" "${GOCACHE}"
}

# build_dir <dir>: sets tmp to a fresh <dir>/.build.XXXXXX, removed on exit unless installed.
build_dir() {
  tmp="$(mktemp -d "$1/.build.XXXXXX")"
  trap 'rm -rf "${tmp}"' EXIT
}

# install_build <dest>: moves tmp into place atomically; a stale partial <dest> is replaced.
install_build() {
  rm -rf "$1"
  mv "${tmp}" "$1"
  trap - EXIT
}
