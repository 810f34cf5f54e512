#!/usr/bin/env bash
# The test command: everything the tests need, then lint and the whole suite on the real engine.
#
#   bash tests/run.sh                 # what CI runs (.ci/run) on a fresh clone
#   bash tests/run.sh -k vector -x    # extra arguments go to pytest
#
# Installs what is missing (Docker engine, debootstrap, shellcheck; a .venv with the pinned stack),
# starts the Docker engine when none runs and stops it again at the end.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${PUFFERTANK_VENV:-$REPO/.venv}"
# shellcheck source=provision/engine.sh
source "$REPO/provision/engine.sh"

say() { printf '\033[1m[tests]\033[0m %s\n' "$*" >&2; }

install_system_packages() {
  engine_apt_install debootstrap debian-archive-keyring shellcheck ca-certificates
  # the matrix report's browser test drives Debian's Chromium (Playwright's own download is unreachable)
  engine_apt_install chromium
  # Griddly's sprite observations draw through Vulkan: Mesa's lavapipe on the CPU, as in the image
  engine_apt_install mesa-vulkan-drivers
  # the native Ocean envs compile at `pip install -e .` (build_ext.py) and their tests build sanitizer harnesses
  engine_apt_install gcc libc6-dev python3-dev
  # PufferLib 3.0's envs draw into a raylib window: `puffer eval --video` records them on a private Xvfb
  engine_apt_install xvfb
  # Gym-MicroRTS runs MicroRTS on a JVM, as in the image
  engine_apt_install openjdk-17-jre-headless
  # the fleet's registry: the push/pull tests serve Debian's docker-registry on loopback with a config of
  # their own; the package's service (every interface, port 5000) is not wanted on a test machine
  if ! command -v docker-registry >/dev/null; then
    engine_apt_install docker-registry
    if command -v systemctl >/dev/null && systemctl is-active -q docker-registry 2>/dev/null; then
      systemctl disable --now docker-registry
    fi
  fi
  # push --host ssh://: its tests run Debian's sshd on loopback with a config of their own; the package's
  # service (port 22) is not wanted on a test machine
  if [ ! -x /usr/sbin/sshd ]; then
    engine_apt_install openssh-server
    if command -v systemctl >/dev/null && systemctl is-active -q ssh 2>/dev/null; then
      systemctl disable --now ssh
    fi
  fi
}

install_python() {
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating $VENV"
    python3 -m venv "$VENV"
  fi
  say "installing pufferlib with every extra, pinned by docker/constraints/"
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    -c "$REPO/docker/constraints/base.txt" -c "$REPO/docker/constraints/envs.txt" \
    -c "$REPO/docker/constraints/dev.txt" \
    "torch==$(sed -n 's/^torch==//p' "$REPO/docker/constraints/base.txt")" jax jaxlib flax \
    -e "${REPO}[common,tank,dev,ray,sweep,wandb,neptune]"
  # the families outside `common` (craftax, microrts, nmmo, kinetix): their steps, from the family table
  local pins=(-c "$REPO/docker/constraints/base.txt" -c "$REPO/docker/constraints/envs.txt") step args
  while IFS= read -r step; do
    read -ra args <<<"$step"
    "$VENV/bin/pip" install -q --disable-pip-version-check "${pins[@]}" "${args[@]}"
  done < <("$VENV/bin/python" "$REPO/pufferlib/environments/families.py" venv-steps)
  # PufferLib 3.0's sdist (pinned by sha256 in pufferlib/ocean/contracts/catalog.py) and its Ocean catalog,
  # built and audited once per builder version (~2.5 min): tests/unit/native/test_pufferlib3_catalog.py reads
  # it (no network), tests/integration/test_matrix_pufferlib3.py checks the lib image's against it
  "$VENV/bin/python" -m pufferlib.ocean.contracts.catalog fetch >/dev/null
  say "PufferLib 3.0's catalog (built once per builder version)"
  PUFFERTANK_TEST_PL3_HOME=$("$VENV/bin/python" -m pufferlib.ocean.contracts.catalog cached)
  export PUFFERTANK_TEST_PL3_HOME
}

lint() {
  say "lint: ruff, hadolint, shellcheck"
  "$VENV/bin/ruff" check "$REPO"
  "$VENV/bin/ruff" format --check "$REPO" | tail -n 1
  "$VENV/bin/hadolint" "$REPO"/Dockerfile.base "$REPO"/Dockerfile.envs "$REPO"/Dockerfile.lib
  local scripts
  mapfile -t scripts < <(cd "$REPO" && git ls-files '*.sh' .ci/run)
  (cd "$REPO" && shellcheck -x "${scripts[@]}")
}

main() {
  cd "$REPO"
  install_system_packages
  engine_ensure
  trap engine_stop_started EXIT
  install_python
  lint
  say "pytest $*"
  # Strict: a test that would skip real work here (a binding's package missing from .venv, a root-only
  # test without root, a torch.compile error) fails instead (tests/_strict.py). --durations: the
  # slowest tests in CI's log, to keep the run under its hour.
  PUFFERTANK_STRICT=1 "$VENV/bin/pytest" tests --durations=60 "$@"
}

main "$@"
