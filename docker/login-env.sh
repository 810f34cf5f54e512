#!/usr/bin/env bash
# The image's environment for login shells, written from the image's own ENV (the one place those values
# live). Run as root by every stage that sets ENV, after its last ENV line: each run rewrites the file whole
# from the environment the build sees, which holds every earlier stage's ENV too.
#
#   bash docker/login-env.sh --except VARIANT USER_UID   # leave out the stage's build ARGs (also in the env)
#   bash docker/login-env.sh --dry-run                   # print the profile script, write nothing
#
# Login shells (bash -l, su -, an SSH login, docker exec ... bash -l) start from /etc/profile, which resets
# PATH to Debian's, and su - or SSH from an empty environment. /etc/profile.d/puffertank.sh puts the image's
# environment back: each variable unless the session set it, and the image's PATH first with the session's
# other entries after it (a dev container's additions survive). su and login start from login.defs'
# ENV_PATH/ENV_SUPATH: the image's PATH there too.
set -euo pipefail

PROFILE=/etc/profile.d/puffertank.sh
LOGIN_DEFS=/etc/login.defs
# Set per process by the shell or the build, not by the image's ENV.
PROCESS_LOCAL=" HOME HOSTNAME PWD OLDPWD SHLVL TERM _ PATH "

variables() {
  local except=" $* " name
  while IFS= read -r name; do
    case "$PROCESS_LOCAL$except" in *" $name "*) continue ;; esac
    echo "$name"
  done < <(compgen -e | sort)
}

# The single-quoted lines are the profile's own code, expanded at login.
# shellcheck disable=SC2016
profile() {
  local name
  echo "# PufferTank, written by docker/login-env.sh from the image's ENV: its environment for login shells."
  for name in "$@"; do
    printf '%s=${%s-%s}\nexport %s\n' "$name" "$name" "${!name@Q}" "$name"
  done
  printf '%s\n' "puffertank_path=${PATH@Q}" \
    'puffertank_rest=$PATH: puffertank_keep=' \
    'while [ -n "$puffertank_rest" ]; do' \
    '  puffertank_dir=${puffertank_rest%%:*} puffertank_rest=${puffertank_rest#*:}' \
    '  [ -n "$puffertank_dir" ] || continue' \
    '  case ":$puffertank_path:$puffertank_keep:" in *":$puffertank_dir:"*) continue ;; esac' \
    '  puffertank_keep=${puffertank_keep:+$puffertank_keep:}$puffertank_dir' \
    'done' \
    'PATH=$puffertank_path${puffertank_keep:+:$puffertank_keep}' \
    'export PATH' \
    'unset puffertank_path puffertank_rest puffertank_keep puffertank_dir'
}

main() {
  local dry_run=0 except=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --dry-run) dry_run=1 ;;
      --except) shift; except=("$@"); break ;;
      *) echo "login-env: unknown argument $1 (use --dry-run, --except NAME...)" >&2; return 2 ;;
    esac
    shift
  done
  local names
  mapfile -t names < <(variables "${except[@]}")
  if [ "$dry_run" = 1 ]; then profile "${names[@]}"; return; fi
  profile "${names[@]}" > "$PROFILE"
  sh -n "$PROFILE"
  sed -i -E "s|^(ENV_SUPATH[[:space:]]+PATH=).*|\1$PATH|; s|^(ENV_PATH[[:space:]]+PATH=).*|\1$PATH|" "$LOGIN_DEFS"
  grep -q "^ENV_PATH[[:space:]]*PATH=$PATH\$" "$LOGIN_DEFS"
  echo "login-env: $PROFILE carries ${#names[@]} variable(s) and PATH: ${names[*]}"
}

main "$@"
