# shellcheck shell=bash
# Reach a Docker engine, starting one when this machine has none running (sourced, not executed).
#
# Used by tests/run.sh (which stops what it started) and provision/tank-up.sh (which leaves it running).
# On a provisioned box the engine runs under systemd and nothing here acts. On a bare Debian machine
# without systemd (a CI runner, a container) it installs Debian's docker.io and starts dockerd itself.

ENGINE_STARTED_PID=""
# dockerd runs as root, so its log goes where only root can make files: a fixed name in a world-writable
# folder like /tmp could be a symlink planted by another user, and root would write through it.
ENGINE_LOG="${ENGINE_LOG:-/var/log/puffertank-dockerd.log}"

engine_say() { printf '\033[1m[engine]\033[0m %s\n' "$*" >&2; }

engine_up() {
  docker info >/dev/null 2>&1
}

# apt-get install the Debian packages that are missing (root only; a no-op when all are present).
engine_apt_install() {
  local missing=() pkg
  for pkg in "$@"; do
    # Not `dpkg -s`: it succeeds for a removed package whose config files remain.
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    engine_say "missing Debian packages: ${missing[*]}; install them: sudo apt-get install -y ${missing[*]}"
    return 1
  fi
  engine_say "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

engine_ensure() {
  if engine_up; then
    return 0
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    engine_apt_install docker.io || true
    command -v dockerd >/dev/null 2>&1 || {
      engine_say "no Docker engine here. Fix: sudo provision/setup-host.sh --only docker"
      return 1
    }
  fi
  if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then
    engine_say "starting docker.service"
    systemctl start docker
  else
    [ "$(id -u)" -eq 0 ] || { engine_say "the Docker engine is not running; start it: sudo dockerd &"; return 1; }
    engine_say "starting dockerd (log: $ENGINE_LOG)"
    mkdir -p "$(dirname "$ENGINE_LOG")"
    setsid dockerd >"$ENGINE_LOG" 2>&1 &
    ENGINE_STARTED_PID=$!
  fi
  local i
  for i in $(seq 1 60); do
    engine_up && { engine_say "engine ready after ${i}s"; return 0; }
    sleep 1
  done
  engine_say "the engine did not answer within 60 s; see $ENGINE_LOG"
  tail -n 20 "$ENGINE_LOG" >&2 || true
  return 1
}

# Stop the dockerd that engine_ensure started (if any), and wait for it to exit.
engine_stop_started() {
  [ -n "$ENGINE_STARTED_PID" ] || return 0
  engine_say "stopping the dockerd this script started (pid $ENGINE_STARTED_PID)"
  kill "$ENGINE_STARTED_PID" 2>/dev/null || true
  local i
  for i in $(seq 1 30); do
    kill -0 "$ENGINE_STARTED_PID" 2>/dev/null || { ENGINE_STARTED_PID=""; return 0; }
    sleep 1
  done
  kill -9 "$ENGINE_STARTED_PID" 2>/dev/null || true
  ENGINE_STARTED_PID=""
}
