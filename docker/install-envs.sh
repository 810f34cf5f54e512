#!/usr/bin/env bash
# Envs stage: the RL environment packages (pinned in constraints/envs.txt) and pufferlib's remaining runtime
# deps, then `pip check`, a shrink of what was installed (slim_site.py), Craftax's texture caches, and a check
# that every family makes, resets and steps.
#
#   bash docker/install-envs.sh                                # install and check, as the venv's owner
#   bash docker/install-envs.sh --as puffer --strip-with DIR --wheels DIR  # what Dockerfile.envs runs, as root
#   bash docker/install-envs.sh --dry-run                      # print the commands only
#
# --as USER (run as root): give USER a folder of its own in the pip cache, then continue as USER. The
# BuildKit cache mount at /tmp/pip-cache is root's (its `mode=`/`uid=` options apply only when a cache is
# first made, and this one may predate them), and pip disables a cache it cannot write: every rebuild
# would download the ~1.2 GB again.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
constraints=(-c "$here/constraints/base.txt" -c "$here/constraints/envs.txt")

# Resolved together. base.txt too, so nothing here can move torch or setuptools out from under the base stage.
# The families' packages (and NO_DEPS below) are those of pufferlib/environments/families.py, the family
# table, which this stage cannot read (only docker/ is mounted): tests/unit/envs/test_families.py goes red when
# a family's package is missing here or unpinned in constraints/envs.txt.
PACKAGES=(
  # today's families and pufferlib's runtime deps
  gymnasium gym pettingzoo pygame-ce pymunk minigrid nle minihack procgen2 ale-py numpy rich ray
  # physics: Box2D wheel (not gymnasium[box2d]), MuJoCo + gymnasium's mujoco extra, dm_control, Meta-World
  Box2D mujoco imageio packaging dm-control metaworld shimmy
  # games, grid worlds and suites (craftax, flax and bsuite follow --no-deps; their runtime deps are named here)
  vizdoom magent2 open-spiel crafter highway-env griddly stable-retro
  jax jaxlib msgpack PyYAML absl-py dm-env immutabledict six termcolor scikit-image pandas scipy
  # researcher tooling
  tensorboard optuna matplotlib tomli-w
  # Ray Tune (`puffer sweep`): its requirements beside ray (pandas above; fsspec is in the base stage)
  pyarrow fsspec pydantic
  # Slime Volleyball (old gym API; cv2 for its drawing), Pokémon Red on PyBoy
  slimevolleygym opencv-python-headless pyboy
  # Gym-MicroRTS's bridge to the JVM (gym-microrts itself follows --no-deps: it requires gym<0.19)
  JPype1
  # Neural MMO's runtime deps (nmmo follows --no-deps; vec-noise and nmmo come as wheels: --wheels)
  ordered-set dill vec-noise
  # Kinetix's runtime deps (kinetix-env and its env packages follow --no-deps; envs.txt says why)
  chex seaborn flatbuffers
)
# Installed without their declared requirements: see "Image size" and "pygame" in constraints/envs.txt.
NO_DEPS=(craftax flax bsuite nmmo)
# gym-microrts requires gym<0.19 (procgen needs 0.26); it needs only JPype1 (above) and its own jars.
NO_DEPS+=(gym-microrts)
# kinetix-env requires its training stack (wandb, distrax, grain, zarr, plain pygame, ...), which its env never
# imports; jax2d, jaxgl and gymnax name flax, whose checkpointing stack the image leaves out.
NO_DEPS+=(kinetix-env jax2d jaxgl gymnax)
# Pulled in by a requirement, then removed in the same layer: imageio-ffmpeg (an ffmpeg binary, 63 MB) is
# required by gym3 (procgen2) for its video recorder alone, which nothing here uses. `pip install
# imageio-ffmpeg` in a container brings it back. envs.txt accepts the `pip check` line this leaves.
UNINSTALL=(imageio-ffmpeg)

DRY_RUN=0
STRIP_ROOT=""
RUN_AS=""
WHEELS=""  # --wheels DIR: wheels built in Dockerfile.envs's nmmo-wheels stage (vec-noise and nmmo are sdists)
run() {
  if [ "$DRY_RUN" = 1 ]; then echo "+ $*"; else "$@"; fi
}

# Root: make USER's folder in the pip cache, then run the rest of this script as USER (setpriv keeps the
# environment; HOME, USER and PIP_CACHE_DIR are set for USER).
continue_as() {
  local user=$1 home cache
  shift
  home=$(getent passwd "$user" | cut -d: -f6)
  cache="${PIP_CACHE_DIR:-/tmp/pip-cache}/$user"
  run install -d -o "$user" -g "$(id -gn "$user")" -m 0755 "$cache"
  if [ "$DRY_RUN" = 1 ]; then echo "+ continue as $user: PIP_CACHE_DIR=$cache $0 $*"; return; fi
  exec setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups \
    env HOME="$home" USER="$user" LOGNAME="$user" PIP_CACHE_DIR="$cache" bash "$0" "$@"
}

setup_pip() {
  if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi
  export PIP_CACHE_DIR="${PIP_CACHE_DIR:-/tmp/pip-cache}" PIP_PROGRESS_BAR=off
  if [ "$DRY_RUN" = 0 ] && [ ! -w "$PIP_CACHE_DIR" ]; then
    echo "install-envs: the pip cache $PIP_CACHE_DIR is not writable by $(id -un): downloads are not kept" \
      "(run this script as root with --as USER)" >&2
  fi
}

install_packages() {
  local links=()
  if [ -n "$WHEELS" ]; then links=(--find-links "$WHEELS"); fi
  run pip install "${links[@]}" "${constraints[@]}" "${PACKAGES[@]}"
  run pip install --no-deps "${links[@]}" "${constraints[@]}" "${NO_DEPS[@]}"
  run pip uninstall -q -y "${UNINSTALL[@]}"
}

# `pip check`, less the unmet requirements envs.txt accepts on purpose ("# unmet: " lines).
check_requirements() {
  if [ "$DRY_RUN" = 1 ]; then echo "+ pip check (less the '# unmet:' lines of constraints/*.txt)"; return; fi
  local accepted found unexpected
  # Every layer's file: the lib stage (install-lab.sh) checks again, with lib.txt's lines beside these.
  accepted=$(sed -n 's/^# unmet: //p' "$here"/constraints/*.txt | sort)
  found=$(pip check 2>/dev/null | sort || true)  # stdout: one line per broken requirement
  if [ "$found" = "No broken requirements found." ]; then found=""; fi
  unexpected=$(comm -23 <(printf '%s\n' "$found" | sed '/^$/d') <(printf '%s\n' "$accepted"))
  if [ -n "$unexpected" ]; then
    echo "pip check found broken requirements:" >&2
    echo "$unexpected" >&2
    echo "fix the pins in docker/constraints/envs.txt or lib.txt (or accept a line there as '# unmet: ...')" >&2
    return 1
  fi
  echo "install-envs: pip check clean (less $(printf '%s\n' "$accepted" | sed '/^$/d' | wc -l) accepted line(s))"
}

# Shrink what this stage installed (files newer than the marker; the base stage's are left alone, since
# touching them would copy them into this layer): the packages' own test suites, C/C++ sources, Ray's Java
# jar, symbol tables (strip, from binutils in a throwaway stage: STRIP_ROOT), duplicates as hard links.
# docker/slim_site.py says what and why. check_envs runs afterwards, on what is left.
slim_site() {
  local marker=$1 venv
  venv=$(python -c 'import sys; print(sys.prefix)')
  local strip=()
  if [ -n "$STRIP_ROOT" ]; then strip=(--strip-root "$STRIP_ROOT"); fi
  run python "$here/slim_site.py" --newer "$marker" "${strip[@]}" "$venv"
  if [ "$DRY_RUN" = 0 ]; then echo "install-envs: the venv is $(du -sm "$venv" | cut -f1) MB"; fi
}

# Craftax builds its texture caches in its package folder on first use (a minute of work, and a
# PermissionError for any user who does not own the venv): build them now.
warm_craftax_textures() {
  run python -c 'import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    from craftax.craftax_classic.constants import load_all_textures as classic
    from craftax.craftax.constants import load_all_textures as full
    classic(), full()
print("install-envs: Craftax texture caches built")'
}

check_envs() {
  run python "$here/check_envs.py"
}

main() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --dry-run) DRY_RUN=1 ;;
      --strip-with) STRIP_ROOT=${2:?--strip-with needs a directory}; shift ;;
      --as) RUN_AS=${2:?--as needs a user}; shift ;;
      --wheels) WHEELS=${2:?--wheels needs a directory}; shift ;;
      *) echo "install-envs: unknown argument $1 (use --dry-run, --strip-with DIR, --as USER, --wheels DIR)" >&2; return 2 ;;
    esac
    shift
  done
  if [ -n "$RUN_AS" ] && [ "$(id -u)" = 0 ]; then
    local again=(--strip-with "$STRIP_ROOT")
    if [ -z "$STRIP_ROOT" ]; then again=(); fi
    if [ -n "$WHEELS" ]; then again+=(--wheels "$WHEELS"); fi
    if [ "$DRY_RUN" = 1 ]; then again+=(--dry-run); fi
    continue_as "$RUN_AS" "${again[@]}"
  fi
  local marker
  marker=$(mktemp)  # files newer than this were installed by this stage
  setup_pip
  install_packages
  check_requirements
  slim_site "$marker"
  rm -f "$marker"
  warm_craftax_textures
  check_envs
}

# Sourcing defines the functions without running (tests/unit/images/test_check_envs.py calls them one by one).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
