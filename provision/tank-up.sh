#!/usr/bin/env bash
# The main job: from a fresh clone to a verified tank, in one command.
#
#   bash provision/tank-up.sh                  # variant chosen for this host: cuda where a GPU is, else cpu
#   bash provision/tank-up.sh --variant cpu --jobs 2 --report reports/matrix
#   bash provision/tank-up.sh --dry-run        # print the plan, change nothing
#
# 1. reach the Docker engine (start it if this machine has one that is not running),
# 2. install the host tooling (`puffertank`) in .venv,
# 3. `puffertank doctor`, 4. `puffertank build` the chain, 5. `puffertank matrix` with its report.
# The engine is left running: the tank is meant to be used afterwards.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${PUFFERTANK_VENV:-$REPO/.venv}"
# shellcheck source=provision/engine.sh
source "$REPO/provision/engine.sh"

VARIANT=auto
JOBS=2
REPORT="$REPO/reports/matrix"
DRY_RUN=0
BUILD_ARGS=()

say() { printf '\033[1m[tank-up]\033[0m %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

usage() {
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  cat <<USAGE
Options:
  --variant auto|cpu|cuda   image variant (default auto: cuda when an NVIDIA GPU is present)
  --jobs N                  matrix containers at once (default 2)
  --report DIR              where the matrix writes matrix.json, junit.xml, matrix.html
  --base-image IMG          base OS image for the chain (passed to puffertank build)
  --ca-cert FILE            CA bundle for pip inside builds (passed to puffertank build)
  --dry-run                 print the plan and change nothing
USAGE
}

parse_args() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --variant) VARIANT="${2:?--variant needs a value}"; shift 2 ;;
      --jobs) JOBS="${2:?--jobs needs a value}"; shift 2 ;;
      --report) REPORT="${2:?--report needs a value}"; shift 2 ;;
      --base-image|--ca-cert) BUILD_ARGS+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
      --dry-run) DRY_RUN=1; shift ;;
      -h|--help) usage; exit 0 ;;
      *) usage >&2; die "unknown option $1" ;;
    esac
  done
  case "$VARIANT" in auto|cpu|cuda) ;; *) die "--variant must be auto, cpu or cuda, not $VARIANT" ;; esac
}

run() {
  if [ "$DRY_RUN" -eq 1 ]; then
    printf '[dry-run] %s\n' "$*"
  else
    "$@"
  fi
}

# --variant auto: the host tooling's one rule (pufferlib/tank/variant.py: cuda when an NVIDIA GPU is on the
# PCI bus, else cpu). A GPU whose driver or runtime is broken still means cuda, so doctor and the matrix's
# gpu check report it instead of a quiet switch to cpu. variant.py needs only the standard library.
detect_variant() {
  [ "$VARIANT" != auto ] && return 0
  VARIANT=$(python3 "$REPO/pufferlib/tank/variant.py")
  say "variant for this host: $(python3 "$REPO/pufferlib/tank/variant.py" --explain)"
}

install_host_tooling() {
  command -v python3 >/dev/null || die "python3 is missing; install it: sudo apt-get install -y python3 python3-venv"
  [ -x "$VENV/bin/python" ] || run python3 -m venv "$VENV"
  say "installing the host tooling (pufferlib[tank]) into $VENV"
  run "$VENV/bin/pip" install -q --disable-pip-version-check -c "$REPO/docker/constraints/dev.txt" \
    -c "$REPO/docker/constraints/envs.txt" -e "${REPO}[tank]"
}

main() {
  parse_args "$@"
  cd "$REPO"
  if [ "$DRY_RUN" -eq 1 ]; then
    engine_up || say "[dry-run] would reach or start the Docker engine"
  else
    engine_ensure || die "no Docker engine; provision the host first: sudo provision/setup-host.sh"
    engine_apt_install debootstrap debian-archive-keyring ||
      say "debootstrap or debian-archive-keyring missing: builds need a reachable registry for the base image"
  fi
  detect_variant
  install_host_tooling
  run "$VENV/bin/puffertank" doctor || say "doctor reported failures (see above); going on to build"
  run "$VENV/bin/puffertank" build --variant "$VARIANT" "${BUILD_ARGS[@]}"
  local status=0
  run "$VENV/bin/puffertank" matrix --variant "$VARIANT" --jobs "$JOBS" --report "$REPORT" || status=$?
  if [ "$DRY_RUN" -eq 0 ]; then
    say "report: $REPORT/matrix.html (also matrix.json, junit.xml)"
    [ "$status" -eq 0 ] && say "the tank is verified: puffertank shell  (or: puffertank run -- puffer train ocean/squared)"
  fi
  return "$status"
}

main "$@"
