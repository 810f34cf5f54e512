#!/usr/bin/env bash
# Envs stage, run as the venv's owner: the RL environment packages (pinned in constraints/envs.txt) and
# pufferlib's remaining runtime deps, then `pip check` and a check that every family makes, resets and steps.
#
#   bash docker/install-envs.sh            # what Dockerfile.envs runs
#   bash docker/install-envs.sh --dry-run  # print the pip commands only
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
constraints=(-c "$here/constraints/base.txt" -c "$here/constraints/envs.txt")

# Resolved together. base.txt too, so nothing here can move torch or setuptools out from under the base stage.
PACKAGES=(
  # today's families and pufferlib's runtime deps
  gymnasium gym pettingzoo pygame-ce pymunk minigrid nle minihack procgen2 ale-py numpy rich ray
  # wave 2a: Box2D wheel (not gymnasium[box2d]), MuJoCo + gymnasium's mujoco extra, dm_control, Meta-World
  Box2D mujoco imageio packaging dm-control metaworld shimmy
  # wave 2b (craftax, flax and bsuite follow --no-deps; their runtime deps are named here)
  vizdoom magent2 open-spiel crafter highway-env griddly stable-retro
  jax jaxlib msgpack PyYAML absl-py dm-env immutabledict six termcolor scikit-image pandas scipy
  # researcher tooling
  tensorboard optuna matplotlib tomli-w
)
# Installed without their declared requirements: see "Image size" and "pygame" in constraints/envs.txt.
NO_DEPS=(craftax flax bsuite)

DRY_RUN=0
run() {
  if [ "$DRY_RUN" = 1 ]; then echo "+ $*"; else "$@"; fi
}

setup_pip() {
  if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi
  export PIP_CACHE_DIR="${PIP_CACHE_DIR:-/tmp/pip-cache}" PIP_PROGRESS_BAR=off
}

install_packages() {
  run pip install "${constraints[@]}" "${PACKAGES[@]}"
  run pip install --no-deps "${constraints[@]}" "${NO_DEPS[@]}"
}

# `pip check`, less the unmet requirements envs.txt accepts on purpose ("# unmet: " lines).
check_requirements() {
  if [ "$DRY_RUN" = 1 ]; then echo "+ pip check (less the '# unmet:' lines of constraints/envs.txt)"; return; fi
  local accepted found unexpected
  accepted=$(sed -n 's/^# unmet: //p' "$here/constraints/envs.txt" | sort)
  found=$(pip check 2>/dev/null | sort || true)  # stdout: one line per broken requirement
  if [ "$found" = "No broken requirements found." ]; then found=""; fi
  unexpected=$(comm -23 <(printf '%s\n' "$found" | sed '/^$/d') <(printf '%s\n' "$accepted"))
  if [ -n "$unexpected" ]; then
    echo "install-envs: pip check found broken requirements:" >&2
    echo "$unexpected" >&2
    echo "install-envs: fix the pins in docker/constraints/envs.txt (or accept a line there as '# unmet: ...')" >&2
    return 1
  fi
  echo "install-envs: pip check clean (less $(printf '%s\n' "$accepted" | sed '/^$/d' | wc -l) accepted line(s))"
}

check_envs() {
  run python "$here/check_envs.py"
}

main() {
  if [ "${1:-}" = "--dry-run" ]; then DRY_RUN=1; fi
  setup_pip
  install_packages
  check_requirements
  check_envs
}

main "$@"
