#!/usr/bin/env bash
# Base stage, run as the venv's owner: create /opt/venv and install torch (+ the CUDA toolchain for cuda).
# Inputs (build args): VARIANT, TORCH_SPEC, TORCH_INDEX. The CA bundle, when given, is a BuildKit secret.
#   bash docker/install-torch.sh [--strip-with DIR]   # DIR: a Debian root with binutils (slim_site.py)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
strip_root=""
if [ "${1:-}" = --strip-with ]; then strip_root=${2:?--strip-with needs a directory}; fi
marker=$(mktemp)  # files newer than this were installed here

if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi
export PIP_CACHE_DIR=/tmp/pip-cache PIP_PROGRESS_BAR=off

constraints=(-c "$here/constraints/base.txt")
if [ "$VARIANT" = cuda ]; then constraints+=(-c "$here/constraints/cuda.txt"); fi
index=()
if [ -n "${TORCH_INDEX:-}" ]; then index=(--extra-index-url "$TORCH_INDEX"); fi

python3 -m venv /opt/venv
# The wheelhouse holds local wheels (the CPU torch here); pip prefers them when they satisfy TORCH_SPEC.
pip install "${constraints[@]}" "${index[@]}" --find-links "$here/wheelhouse" "$TORCH_SPEC" setuptools
if [ "$VARIANT" = cuda ]; then
  bash "$here/install-cuda-toolchain.sh" "${constraints[@]}"
fi

# The torch wheel carries PyTorch's own C++ test executables (torch/test, and torch/bin's test_* and
# *StoreTest): about 125 MB of the image that nothing runs. Removed here, in the layer that installs them
# (a later layer could only hide them). protoc, torch_shm_manager and the rest of torch/bin stay.
torch_dir=$(python -c 'import importlib.util; print(importlib.util.find_spec("torch").submodule_search_locations[0])')
rm -rf "$torch_dir/test" "$torch_dir"/bin/test_* "$torch_dir"/bin/*StoreTest
# The cpu variant has no C++ compiler, so torch's C++ headers (62 MB) serve nothing there: torch.compile and
# cpp_extension need both (train.compile says so: pufferlib/train/setup.py). The cuda variant keeps them.
if [ "$VARIANT" = cpu ]; then rm -rf "$torch_dir/include"; fi

# The rest of the shrink, as the envs stage does it (docker/slim_site.py: packages' test suites, sympy's and
# networkx's ~50 MB; hard-linked duplicates) and symbol tables (strip --strip-unneeded keeps the dynamic
# symbols the loader and dladdr use): torch's, about 100 MB in the cpu variant; in the cuda variant also
# libtriton.so's debug info, about 0.32 GB in all. NVIDIA's own libraries carry no symbol tables and are
# left alone (slim_site.py's NOT_STRIPPED).
slim=(--newer "$marker")
if [ -n "$strip_root" ]; then slim+=(--strip-root "$strip_root"); fi
python "$here/slim_site.py" "${slim[@]}" /opt/venv
rm -f "$marker"
