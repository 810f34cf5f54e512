#!/usr/bin/env bash
# Envs stage, run as the venv's owner: the RL environment packages (pinned in constraints/envs.txt) and
# pufferlib's remaining runtime deps, then a check that every one imports and steps.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi
export PIP_CACHE_DIR=/tmp/pip-cache PIP_PROGRESS_BAR=off

# base.txt too, so nothing here can move torch or setuptools out from under the base stage.
pip install -c "$here/constraints/base.txt" -c "$here/constraints/envs.txt" \
  gymnasium gym pettingzoo pygame-ce pymunk minigrid nle minihack procgen2 ale-py numpy rich ray
pip check
python "$here/check_envs.py"
