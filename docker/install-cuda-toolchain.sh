#!/usr/bin/env bash
# The CUDA compiler and headers for the cuda variant, from PyPI wheels that match the torch just installed.
#   install-cuda-toolchain.sh [pip args...]   as the venv's owner: pip-install nvcc, crt, cccl (+ ninja)
#   install-cuda-toolchain.sh --link DIR       as root: make DIR (/usr/local/cuda) a merged tree of symlinks
# torch from PyPI (CUDA 13) depends on the cuda-toolkit meta-package, whose extras pin matching components;
# torch from a cu12 index depends on nvidia-*-cu12 wheels, so the compiler comes from those names instead.
set -euo pipefail

site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

if [ "${1:-}" = "--link" ]; then
  dest=${2:?usage: install-cuda-toolchain.sh --link DIR}
  mkdir -p "$dest"
  # cu13 wheels share one prefix (nvidia/cu13); cu12 wheels have one prefix per component.
  for prefix in "$site"/nvidia/*/; do
    for part in bin include lib nvvm; do
      if [ -d "$prefix$part" ]; then
        mkdir -p "$dest/$part"
        cp -rs --remove-destination "$prefix$part/." "$dest/$part/"
      fi
    done
  done
  if [ -d "$dest/lib" ] && [ ! -e "$dest/lib64" ]; then ln -s lib "$dest/lib64"; fi
  # The wheels ship only versioned libraries (libcudart.so.13); the linker's -lcudart needs libcudart.so.
  for versioned in "$dest"/lib/lib*.so.*; do
    plain="${versioned%%.so.*}.so"
    if [ ! -e "$plain" ]; then ln -s "$(basename "$versioned")" "$plain"; fi
  done
  "$dest/bin/nvcc" --version | tail -n 2
  exit 0
fi

cuda=$(python -c 'import torch; print(torch.version.cuda or "")')
if [ -z "$cuda" ]; then
  echo "install-cuda-toolchain: this torch has no CUDA (torch.version.cuda is None); is TORCH_SPEC a cpu build?" >&2
  exit 1
fi
major=${cuda%%.*}
toolkit=$(pip show cuda-toolkit 2>/dev/null | sed -n 's/^Version: //p')
if [ -n "$toolkit" ]; then
  pip install --progress-bar off "$@" "cuda-toolkit[nvcc,cccl]==$toolkit" ninja
else
  pip install --progress-bar off "$@" "nvidia-cuda-nvcc-cu$major==$cuda.*" "nvidia-cuda-cccl-cu$major==$cuda.*" \
    "nvidia-cuda-runtime-cu$major==$cuda.*" ninja
fi

# What nothing in the image loads or links, removed in this layer (the one that installed it), which keeps
# the cuda lib image inside its 8.0 GB budget (docs/images.md, "Budgets"): Triton's static CUPTI archives
# (77 MB; its profiler loads libcupti.so, which stays) and NVRTC's alternative build libnvrtc.alt.so (105 MB;
# torch and cuda-pathfinder load libnvrtc.so). `torch.cuda` and check_base.py run after this.
rm -f "$site"/triton/backends/nvidia/lib/cupti/*_static.a "$site"/nvidia/cu*/lib/libnvrtc.alt.so*
