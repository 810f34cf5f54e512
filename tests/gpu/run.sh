#!/usr/bin/env bash
# The prepared check of the CUDA path, for the few minutes a GPU machine is lent (docs/training.md,
# "On a GPU"): $OUT/gpu.json (every step's status, time and figures) and $OUT/gpu.log, in under 8 minutes.
#
#   bash tests/gpu/run.sh --prepare   # here, where pip reaches PyPI: wheels to tests/gpu/wheels, GL loaders to tests/gpu/gl
#   bash tests/gpu/run.sh             # on the GPU machine (the device tool, carrying those two folders)
#   bash tests/gpu/run.sh --dry-run   # on the CPU (CI: tests/unit/repo/test_gpu_dry_run.py): every step that needs no GPU, small
#
#   --only STEP[,STEP...]      run these steps alone          --limit STEP=SECONDS   another timeout for STEP
#   --plant STEP=fail|hang     STEP fails or hangs on purpose (the tests: a failure is recorded, the next step runs)
#
# Each step is a function step_NAME below, run in a process of its own under its timeout (tests/gpu/steps.py's
# STEPS: the timeouts add up to less than 8 minutes); a failure or a timeout is recorded and the next step runs.
# PYTHON (default python3: on the GPU machine, the one with its CUDA torch) runs everything.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
STEPS_PY="$HERE/steps.py"
PYTHON="${PYTHON:-python3}"
KILL_AFTER=3 # seconds between a step's timeout (SIGTERM) and SIGKILL

say() { printf '[gpu] %s\n' "$*"; }

# ---------------------------------------------------------------------------------------------
# The steps: each runs in its own process (run_step), with OUT, GPU_WORK, GPU_DRY_RUN exported.

step_gpu() { "$PYTHON" "$STEPS_PY" gpu; }
step_install() { "$PYTHON" "$STEPS_PY" install; }
step_imports() { "$PYTHON" "$STEPS_PY" imports; }
step_native() { "$PYTHON" "$STEPS_PY" native; }
step_breakout_cuda() { "$PYTHON" "$STEPS_PY" breakout_cuda; }
step_breakout_cpu() { "$PYTHON" "$STEPS_PY" breakout_cpu; }
step_breakout_cuda_compile() { "$PYTHON" "$STEPS_PY" breakout_cuda_compile; }
step_breakout_cuda_bf16() { "$PYTHON" "$STEPS_PY" breakout_cuda_bf16; }
step_cartpole_cuda() { "$PYTHON" "$STEPS_PY" cartpole_cuda; }
step_pixel_cuda() { "$PYTHON" "$STEPS_PY" pixel_cuda; }
step_ddp_nccl() { "$PYTHON" "$STEPS_PY" ddp_nccl; }

step_egl() {
  # The GL loaders (libEGL, libGL: GLVND) where the machine lacks them: the carried Debian packages,
  # unpacked into / (the device tool's recipe; only here, never in a dry run, which skips this step).
  if ! ldconfig -p | grep -q 'libEGL\.so\.1'; then
    local debs=("$HERE"/gl/*.deb)
    if [[ ! -e "${debs[0]}" ]]; then
      echo "no libEGL.so.1 here and no loaders in tests/gpu/gl: run --prepare and carry tests/gpu/gl" >&2
      return 1
    fi
    for deb in "${debs[@]}"; do dpkg -x "$deb" /; done
    ldconfig
    echo "unpacked ${#debs[@]} GL loader packages from tests/gpu/gl"
  fi
  "$PYTHON" "$STEPS_PY" egl
}

# ---------------------------------------------------------------------------------------------
# Running them

run_step() {  # NAME LIMIT ACTION: run step_NAME (or skip it, or plant a failure or a hang) and record it
  local name=$1 limit=$2 action=$3 start end rc=0 status
  if [[ $action == skip ]]; then
    "$PYTHON" "$STEPS_PY" record "$name" skipped 0 0 0 "$limit"
    return 0
  fi
  start=$EPOCHREALTIME
  timeout --kill-after="$KILL_AFTER" "$limit" bash "$HERE/run.sh" --step "$name" "$action" \
    </dev/null >"$GPU_WORK/logs/$name.log" 2>&1 || rc=$?
  end=$EPOCHREALTIME
  case $rc in
    0) status=passed ;;
    124 | 137) status=timeout ;;
    *) status=failed ;;
  esac
  { echo "=== $name: $status (exit $rc, limit ${limit} s)"; cat "$GPU_WORK/logs/$name.log"; } >>"$OUT/gpu.log"
  "$PYTHON" "$STEPS_PY" record "$name" "$status" "$start" "$end" "$rc" "$limit"
}

one_step() {  # NAME ACTION: inside run_step's timeout
  local name=$1 action=$2
  case $action in
    fail) echo "planted failure in step $name (--plant $name=fail)" >&2; return 3 ;;
    hang) echo "planted hang in step $name (--plant $name=hang)"; sleep 100000 ;;
    *) "step_$name" ;;
  esac
}

prepare() {
  # What the GPU machine cannot fetch (it reaches no network): the wheels its Python lacks, for
  # CPython 3.12 on x86-64, and the GLVND loaders for EGL (both folders gitignored; name them in `carry`).
  local wheels="$HERE/wheels" gl="$HERE/gl" pins platforms=()
  mapfile -t pins < <("$PYTHON" "$STEPS_PY" wheels)
  for n in 28 27 17; do platforms+=(--platform "manylinux_2_${n}_x86_64"); done
  platforms+=(--platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any)
  rm -rf "$wheels" && mkdir -p "$wheels"
  "$PYTHON" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp "${platforms[@]}" -d "$wheels" "${pins[@]}"
  rm -rf "$gl" && mkdir -p "$gl" /tmp/amd64/partial
  local apt=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
  apt-get "${apt[@]}" update -qq
  (cd "$gl" && apt-get "${apt[@]}" download -qq libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
  say "prepared: $(du -sh "$wheels" | cut -f1) of wheels in $wheels, $(find "$gl" -name '*.deb' | wc -l) GL packages in $gl"
  say "on the GPU machine: bash tests/gpu/run.sh, carrying tests/gpu/wheels and tests/gpu/gl"
}

main() {
  local dry_run=0 plan_args=()
  while (($#)); do
    case $1 in
      --step) one_step "$2" "$3"; return ;;
      --prepare) prepare; return ;;
      --dry-run) dry_run=1; shift ;;
      --only | --limit | --plant)
        (($# >= 2)) || { echo "tests/gpu/run.sh: $1 needs a value" >&2; return 2; }
        plan_args+=("$1" "$2"); shift 2 ;;
      -h | --help) sed -n '2,16p' "$HERE/run.sh"; return 0 ;;
      *) echo "tests/gpu/run.sh: unknown argument $1 (see --help)" >&2; return 2 ;;
    esac
  done
  export PYTHON GPU_DRY_RUN=$dry_run PYTHONUNBUFFERED=1
  local plan
  plan=$("$PYTHON" "$STEPS_PY" plan "${plan_args[@]}") || return 2
  mkdir -p "${OUT:=$REPO/gpu-out}"
  OUT="$(cd "$OUT" && pwd)"
  export OUT
  GPU_WORK="$(mktemp -d "${TMPDIR:-/tmp}/puffer-gpu.XXXXXX")"
  export GPU_WORK PYTHONPATH="$GPU_WORK/site${PYTHONPATH:+:$PYTHONPATH}" # the install step's target first
  trap 'rm -rf "$GPU_WORK"' EXIT
  mkdir -p "$GPU_WORK/logs"
  cd "$GPU_WORK" # not the checkout: `python -m` puts the working folder first on sys.path, before the install
  : >"$OUT/gpu.log"
  "$PYTHON" "$STEPS_PY" begin
  say "$( ((dry_run)) && echo "dry run, on the CPU" || echo "on $(hostname)"): $OUT/gpu.json"
  local name limit action
  while read -r name limit action; do
    run_step "$name" "$limit" "$action"
  done <<<"$plan"
  "$PYTHON" "$STEPS_PY" finish
}

main "$@"
