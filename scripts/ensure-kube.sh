#!/usr/bin/env bash
# Builds (once) the real kube-apiserver, kubectl and etcd used by the API-server
# tests, from the Go modules pinned in test/apiserver/go/{kube,etcd}.
#
# Output: the last line on stdout is the directory holding the three binaries:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-gitops/kube/<k8s-version>-<etcd-version>/bin
#
# Idempotent (does nothing when the binaries exist), safe to run concurrently
# (flock), atomic (builds into a temp dir, then renames it into place).
# Go's module and build caches live under
#   ${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-gitops/go/{mod,build}
# so a CI cache of the user's cache dir keeps everything.
# A cold build takes several minutes on 2 cores; a warm run takes milliseconds.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kube_mod="${repo_root}/test/apiserver/go/kube"
etcd_mod="${repo_root}/test/apiserver/go/etcd"

log() { echo "ensure-kube: $*" >&2; }
# shellcheck source=scripts/lib.sh
source "${repo_root}/scripts/lib.sh"

# Versions come from the pinned go.mod files, so bumping a pin rebuilds.
mod_version() { # <go.mod> <module path>
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1"
}
k8s_version="$(mod_version "${kube_mod}/go.mod" k8s.io/kubernetes)"
etcd_version="$(mod_version "${etcd_mod}/go.mod" go.etcd.io/etcd/server/v3)"
if [[ -z "${k8s_version}" || -z "${etcd_version}" ]]; then
  log "cannot read pinned versions from ${kube_mod}/go.mod and ${etcd_mod}/go.mod"
  exit 1
fi

dest="${cache_root}/kube/${k8s_version}-${etcd_version}"
bin_dir="${dest}/bin"

have_all() {
  [[ -x "${bin_dir}/kube-apiserver" && -x "${bin_dir}/kubectl" && -x "${bin_dir}/etcd" ]]
}

reuse_or_lock "${cache_root}/kube" "${bin_dir}" have_all
go_env kube-apiserver/etcd -mod=mod
build_dir "${cache_root}/kube"
mkdir -p "${tmp}/bin"

minor="${k8s_version#v1.}"
minor="${minor%%.*}"
vpkg=k8s.io/component-base/version
kube_ldflags="-s -w -X ${vpkg}.gitVersion=${k8s_version} -X ${vpkg}.gitMajor=1 -X ${vpkg}.gitMinor=${minor} -X ${vpkg}.gitTreeState=clean"

start=$SECONDS
log "building kube-apiserver + kubectl ${k8s_version} and etcd ${etcd_version} with $("${go_bin}" version) (several minutes when cold)"
(
  cd "${kube_mod}"
  "${go_bin}" build -trimpath -ldflags "${kube_ldflags}" -o "${tmp}/bin/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
) >&2
(
  cd "${etcd_mod}"
  "${go_bin}" build -trimpath -ldflags "-s -w" -o "${tmp}/bin/etcd" .
) >&2

for b in kube-apiserver kubectl etcd; do
  [[ -x "${tmp}/bin/${b}" ]] || { log "build did not produce ${b}"; exit 1; }
done
printf 'kubernetes %s\netcd %s\ngo %s\n' "${k8s_version}" "${etcd_version}" "$("${go_bin}" env GOVERSION)" >"${tmp}/VERSIONS"

install_build "${dest}"
log "built in $((SECONDS - start))s into ${bin_dir}"
echo "${bin_dir}"
