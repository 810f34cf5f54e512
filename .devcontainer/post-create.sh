#!/usr/bin/env bash
# Dev container postCreateCommand: a quick smoke check that the tank works as set up. Python imports the
# workspace's pufferlib (not the copy baked into the image), its native Ocean envs compile in place (the
# image's compiled copies sit in the venv, which the workspace shadows), torch loads, and one environment from
# the registry makes, resets and steps through emulation and a policy.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

python - <<'PY'
import pathlib
import sys

import pufferlib
import torch

here = pathlib.Path.cwd().resolve()
source = pathlib.Path(pufferlib.__file__).resolve()
if here not in source.parents:
    sys.exit(f"post-create: pufferlib comes from {source}, not from the workspace {here}: is PYTHONPATH set?")
gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none (CPU only)"
print(f"post-create: Python {sys.version.split()[0]}, pufferlib from {source.parent}, torch {torch.__version__}, GPU: {gpu}")
PY

# About a second per env; `puffer build-native NAME` again after editing one's C.
python -m pufferlib.cli build-native
python -m pufferlib.smoke ocean/squared --checks import,make,spaces,reset,step,policy,gpu
echo "post-create: the tank is ready (uid $(id -u), workspace $(pwd))"
