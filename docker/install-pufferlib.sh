#!/usr/bin/env bash
# Lib stage, run as the venv's owner: install pufferlib from the build context (bind-mounted read-only at
# $1) without its dependencies, which the stages below already hold; then check the result.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${1:?usage: install-pufferlib.sh SOURCE_DIR}

# pip builds in the source tree; the bind mount is read-only, so build from a throwaway copy.
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cp -r "$src/pyproject.toml" "$src/pufferlib" "$build/"
if [ -f "$src/README.md" ]; then cp "$src/README.md" "$build/"; else echo "(no README.md)" >"$build/README.md"; fi
find "$build" -name __pycache__ -prune -exec rm -rf {} +
find "$build" -name '*.so' -delete  # native envs built in place on the host; compile them here

pip install --no-deps --no-build-isolation --no-cache-dir --progress-bar off "$build"

python "$here/check_lib.py"
