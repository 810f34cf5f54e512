#!/usr/bin/env bash
# Envs stage, run as the venv's owner: the RL environment packages (pinned in constraints/envs.txt) and
# pufferlib's remaining runtime deps, then `pip check` and a check that every family makes, resets and steps.
#
#   bash docker/install-envs.sh                              # install and check
#   bash docker/install-envs.sh --strip-with /tmp/strip-tools  # what Dockerfile.envs runs (see strip_libraries)
#   bash docker/install-envs.sh --dry-run                    # print the commands only
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
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
  # Ray Tune (`puffer sweep`): its requirements beside ray (pandas above; fsspec is in the base stage)
  pyarrow fsspec pydantic
)
# Installed without their declared requirements: see "Image size" and "pygame" in constraints/envs.txt.
NO_DEPS=(craftax flax bsuite)

DRY_RUN=0
STRIP_ROOT=""
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

# Shrink the shared libraries this stage installed (not the base stage's: touching those would copy them into
# this layer): --strip-unneeded drops symbol tables and keeps what the loader needs (jaxlib alone: 106 MB).
# Libraries that auditwheel repaired (inside a *.libs folder, or an RPATH into one) are left alone: patchelf
# edited them and strip corrupts that (scipy's openblas: "ELF load command address/offset not page-aligned").
# check_envs runs afterwards, on the stripped files. STRIP_ROOT is a Debian root holding binutils (a build
# stage bind-mounted here), so binutils never lands in the image.
strip_libraries() {
  local marker=$1 site before lib
  if [ -z "$STRIP_ROOT" ]; then return; fi
  if [ "$DRY_RUN" = 1 ]; then echo "+ strip --strip-unneeded <the new shared libraries auditwheel did not edit>"; return; fi
  site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  before=$(du -sm "$site" | cut -f1)
  export LD_LIBRARY_PATH="$STRIP_ROOT/usr/lib/x86_64-linux-gnu"  # binutils' own libraries
  while IFS= read -r -d '' lib; do
    case "$lib" in */*.libs/*) continue ;; esac
    if "$STRIP_ROOT/usr/bin/readelf" -d "$lib" | grep -E '\((RPATH|RUNPATH)\)' | grep -q '\.libs'; then continue; fi
    "$STRIP_ROOT/usr/bin/strip" --strip-unneeded "$lib"
  done < <(find "$site" -type f \( -name '*.so' -o -name '*.so.*' \) -newer "$marker" -print0)
  unset LD_LIBRARY_PATH
  echo "install-envs: stripped the new shared libraries: site-packages $before MB -> $(du -sm "$site" | cut -f1) MB"
}

check_envs() {
  run python "$here/check_envs.py"
}

main() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --dry-run) DRY_RUN=1 ;;
      --strip-with) STRIP_ROOT=${2:?--strip-with needs a directory}; shift ;;
      *) echo "install-envs: unknown argument $1 (use --dry-run, --strip-with DIR)" >&2; return 2 ;;
    esac
    shift
  done
  local marker
  marker=$(mktemp)  # files newer than this were installed by this stage
  setup_pip
  install_packages
  check_requirements
  strip_libraries "$marker"
  rm -f "$marker"
  check_envs
}

# Sourcing defines the functions without running (tests/unit/test_install_envs.py calls them one by one).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
