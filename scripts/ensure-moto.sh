#!/usr/bin/env bash
# Installs the moto AWS emulator (pinned) into a cached venv if it is not there yet,
# then prints the venv's python path. The infra tests run `python -m moto.server`.
set -euo pipefail
MOTO_VERSION="5.2.5"
constraints="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/moto-constraints.txt"
# The venv is keyed by the constraints file, so changing a pin installs afresh.
venv="${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-gitops/moto-venv-$(sha256sum "$constraints" | cut -c1-12)"
py="$venv/bin/python"
if ! "$py" -c "import moto, sys; sys.exit(0 if moto.__version__ == '$MOTO_VERSION' else 1)" >/dev/null 2>&1; then
  python3 -m venv "$venv" >&2
  "$py" -m pip install --quiet --disable-pip-version-check -c "$constraints" "moto[server]==$MOTO_VERSION" >&2
fi
echo "$py"
