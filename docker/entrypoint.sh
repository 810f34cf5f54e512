#!/usr/bin/env bash
# PufferTank entrypoint (runs under tini): make HOME usable, print a short banner for interactive sessions
# (versions, whether a GPU is visible), then exec the command. Offline: reads files, never the network,
# and never imports torch (that would add a second to every `docker run`).
# Banner: shown when stdin and stdout are terminals or PUFFERTANK_BANNER=1; PUFFERTANK_QUIET=1 hides it.
set -euo pipefail

# A container started with the host's UID (puffertank run) may not own /home/puffer.
if [ ! -w "${HOME:-/}" ]; then
  HOME="/tmp/home-$(id -u)"
  export HOME
  mkdir -p "$HOME"
fi

site=/opt/venv/lib/python3.11/site-packages

torch_field() {  # torch_field NAME: a value from torch/version.py without importing torch
  sed -n "s/^$1[^=]*= *'\{0,1\}\([^']*\)'\{0,1\}\$/\1/p" "$site/torch/version.py" 2>/dev/null | head -n 1
}

gpu_line() {
  if command -v nvidia-smi >/dev/null 2>&1; then
    local gpus driver_cuda
    gpus=$(timeout 10 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true)
    if [ -n "$gpus" ]; then
      driver_cuda=$(timeout 10 nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)
      echo "GPU: $(echo "$gpus" | wc -l) visible: $(echo "$gpus" | head -n 1) (driver supports CUDA ${driver_cuda:-?})"
      local want=${PUFFERTANK_CUDA_VERSION:-none}
      if [ "$want" != none ] && [ -n "$driver_cuda" ] &&
        [ "$(printf '%s\n%s\n' "$want" "$driver_cuda" | sort -V | head -n 1)" != "$want" ]; then
        echo "WARNING: torch here is built for CUDA $want but the driver supports only CUDA $driver_cuda;"
        echo "         update the driver, or rebuild: puffertank build --variant cuda --torch-index" \
          "https://download.pytorch.org/whl/cu$(echo "$driver_cuda" | tr -d .) --cuda-version $driver_cuda"
      fi
      return
    fi
    echo "GPU: nvidia-smi is present but lists no GPU"
  elif ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
    echo "GPU: NVIDIA device files present, but no nvidia-smi (start with --gpus all / the NVIDIA runtime)"
  else
    echo "GPU: none visible (CPU only)"
  fi
}

banner() {
  local python torch cuda puffer
  python=$(python3 -c 'import platform; print(platform.python_version())' 2>/dev/null || echo '?')
  torch=$(torch_field __version__)
  cuda=$(torch_field cuda)
  if [ "$cuda" = None ]; then cuda=none; fi
  puffer=$(sed -n 's/^Version: //p' "$site"/pufferlib-*.dist-info/METADATA 2>/dev/null | head -n 1)
  echo "PufferTank (${PUFFERTANK_VARIANT:-?}) | Python $python | torch ${torch:-not installed} (CUDA ${cuda:-none})" \
    "| pufferlib ${puffer:-not installed}"
  gpu_line
}

if [ "${PUFFERTANK_QUIET:-0}" != 1 ] && { [ "${PUFFERTANK_BANNER:-0}" = 1 ] || { [ -t 0 ] && [ -t 1 ]; }; }; then
  banner >&2
fi

if [ "$#" -eq 0 ]; then set -- bash; fi
exec "$@"
