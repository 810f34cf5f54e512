"""The steps of tests/gpu/run.sh, the prepared check of the CUDA path (docs/training.md, "On a GPU").

    python tests/gpu/steps.py plan [--only A,B] [--limit STEP=S] [--plant STEP=fail|hang]
    python tests/gpu/steps.py wheels          # the carried wheels, name==version (docker/constraints/)
    python tests/gpu/steps.py begin | finish  # $OUT/gpu.json's header, then its summary (exit 1: a step
                                              # failed or timed out)
    python tests/gpu/steps.py STEP            # one step's work (run.sh runs it under its timeout)
    python tests/gpu/steps.py record STEP STATUS START END EXIT LIMIT   # a step's outcome into gpu.json

run.sh passes OUT (where gpu.json, gpu.log and egl.png go), GPU_WORK (a scratch folder: the install
target, run directories, each step's result), GPU_DRY_RUN (1: on the CPU at small sizes) and PYTHON.
A step writes its figures to $GPU_WORK/results/STEP.json; `record` puts them into gpu.json, rewritten
after every step, so a run cut short still leaves every step it finished.

Module level is the standard library only: `plan`, `record` and `gpu` must run before our package
is installed, and `record` whatever a step did.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUDGET = 480  # seconds: the real run fits 8 minutes because its steps' timeouts add up to less
SHELL_SECONDS = 8  # what run.sh itself spends between steps, at most (begin, record, finish)
SCHEMA = 1


@dataclass(frozen=True)
class Step:
    name: str
    what: str
    timeout: int  # seconds, on the GPU machine: the timeouts of all steps sum to <= BUDGET - SHELL_SECONDS
    gpu_only: bool = False  # the dry run skips it: "skipped: no GPU (dry run)"
    dry_skip: str = ""  # the dry run skips it for this reason, though it needs no GPU
    dry_timeout: int = 150  # the dry run's limit: a loaded 2-core machine, small sizes


STEPS = (
    Step(
        "gpu", "torch sees the GPU: name, memory, CUDA, the driver, a bf16 matrix product", 15, gpu_only=True
    ),
    Step(
        "install",
        "our package --no-deps into a target folder (natives compiled here), the carried wheels",
        45,
    ),
    Step("imports", "the library imports from that folder: trainer, vector, environments, torch", 15),
    Step(
        "native", "every native Ocean env compiles (puffer build-native) and steps (smoke's step check)", 25
    ),
    Step("breakout_cuda", "puffer train ocean/breakout on cuda, 60 s: SPS, score; staging copy per step", 75),
    Step("breakout_cpu", "the same on this machine's CPU cores, 60 s: SPS, score", 72),
    Step(
        "breakout_cuda_compile",
        "the same on cuda with --train.compile, 30 s: SPS, score",
        55,
        dry_skip="torch.compile takes minutes on 2 CPU cores (the CPU path: test_train_compile.py)",
    ),
    Step("breakout_cuda_bf16", "the same on cuda with --train.precision bf16, 30 s: SPS, score", 45),
    Step("cartpole_cuda", "puffer train ocean/cartpole on cuda, 15 s: SPS", 30),
    Step(
        "pixel_cuda", "puffer train atari/pong (84x84 frame stacks, the Atari conv policy) on cuda, 20 s", 40
    ),
    Step(
        "egl", "MuJoCo renders headless through EGL on the NVIDIA driver (InvertedPendulum frames)", 20, True
    ),
    Step("ddp_nccl", "puffer train --nproc-per-node 1: one rank in DDP over NCCL starts, steps, ends", 35),
)
BY_NAME = {step.name: step for step in STEPS}

# The training steps: env, device, seconds, overrides. The dry run trains on the CPU for a few updates
# instead (DRY_SIZES on top: a step budget, so the size does not depend on the machine's load).
TRAIN = {
    "breakout_cuda": ("ocean/breakout", "cuda", 60, {}),
    "breakout_cpu": ("ocean/breakout", "cpu", 60, {}),
    "breakout_cuda_compile": ("ocean/breakout", "cuda", 30, {"train.compile": "true"}),
    "breakout_cuda_bf16": ("ocean/breakout", "cuda", 30, {"train.precision": "bf16"}),
    "cartpole_cuda": ("ocean/cartpole", "cuda", 15, {}),
    # one PufferEnv of 32 ALE games (ale-py's native vector env): frame stacks to the conv policy
    "pixel_cuda": (
        "atari/pong",
        "cuda",
        20,
        {"vec.backend": "native", "vec.num_envs": 1, "env.num_envs": 32},
    ),
}
COMPARE_AT = 30  # seconds: the 30-s variants' scores beside breakout_cuda's return at the same time
SMALL = {"vec.num_envs": 16, "train.num_steps": 16, "train.total_timesteps": 512}
DRY_SIZES = {
    "ocean/breakout": SMALL,
    "ocean/cartpole": SMALL,
    "atari/pong": {"env.num_envs": 4, "train.num_steps": 16, "train.total_timesteps": 64},
}
DDP = ("ocean/cartpole", 15)  # env, seconds
DRY_SECONDS = 60  # the dry run's time budget per training run: a safety net, the step budget ends it first

# Wheels the GPU machine's Python lacks (its package list: /work/.library/device/KINDS.md), at the
# versions docker/constraints/ pins (read from there: one place). numpy is ours (1.26.4, not that
# machine's 2.x): the stack the tests and images run. setuptools builds our package there.
WHEELS = (
    "gymnasium",
    "pettingzoo",
    "Farama-Notifications",
    "tomli_w",
    "numpy",
    "setuptools",
    "ale-py",  # the pixel step
    "mujoco",  # the EGL step, with its glfw and PyOpenGL
    "glfw",
    "PyOpenGL",
)


class StepFailed(Exception):
    """A step's check failed: the message says what it found."""


# ---------------------------------------------------------------------------------------------
# Where things are


def dry_run() -> bool:
    return os.environ.get("GPU_DRY_RUN", "0") == "1"


def work() -> Path:
    return Path(os.environ["GPU_WORK"])


def out() -> Path:
    return Path(os.environ["OUT"])


def site() -> Path:
    return work() / "site"


def python() -> str:
    return os.environ.get("PYTHON") or sys.executable


def save(name: str, result: dict) -> None:
    folder = work() / "results"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(result, indent=1, default=str))


def cuda_or_cpu(device: str) -> str:
    """The dry run trains on the CPU."""
    return "cpu" if dry_run() else device


# ---------------------------------------------------------------------------------------------
# The plan, the wheels, gpu.json


def plan(args: list[str]) -> int:
    """One line per step to run, in order: NAME LIMIT ACTION (run, skip, fail or hang)."""
    only: set[str] | None = None
    limits: dict[str, int] = {}
    plants: dict[str, str] = {}
    it = iter(args)
    for flag in it:
        value = next(it, None)
        if value is None:
            return usage(f"{flag} needs a value")
        if flag == "--only":
            only = {name.strip() for name in value.split(",") if name.strip()}
            unknown = only - set(BY_NAME)
            if unknown:
                return usage(f"--only: unknown step {', '.join(sorted(unknown))}")
        elif flag in ("--limit", "--plant"):
            name, _, what = value.partition("=")
            if name not in BY_NAME:
                return usage(f"{flag}: unknown step {name!r}")
            if flag == "--limit":
                if not what.isdigit() or int(what) < 1:
                    return usage(f"--limit {value}: give STEP=SECONDS (a whole number >= 1)")
                limits[name] = int(what)
            else:
                if what not in ("fail", "hang"):
                    return usage(f"--plant {value}: give STEP=fail or STEP=hang")
                plants[name] = what
        else:
            return usage(f"unknown option {flag}")
    for step in STEPS:
        if only is not None and step.name not in only:
            continue
        limit = limits.get(step.name) or (step.dry_timeout if dry_run() else step.timeout)
        action = plants.get(step.name) or ("skip" if skip_reason(step) else "run")
        print(step.name, limit, action)
    return 0


def usage(message: str) -> int:
    steps = ", ".join(BY_NAME)
    print(f"tests/gpu/run.sh: {message} (steps: {steps})", file=sys.stderr)
    return 2


def skip_reason(step: Step) -> str:
    if not dry_run():
        return ""
    if step.gpu_only:
        return "no GPU (dry run)"
    return step.dry_skip and f"{step.dry_skip} (dry run)"


def pins() -> dict[str, str]:
    """name (normalised) -> version, from docker/constraints/*.txt."""
    found: dict[str, str] = {}
    for path in sorted((REPO / "docker" / "constraints").glob("*.txt")):
        for line in path.read_text().splitlines():
            m = re.match(r"([A-Za-z0-9_.\-]+)==([^\s;#]+)", line.strip())
            if m:
                found[normal(m.group(1))] = m.group(2)
    return found


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheels() -> int:
    known = pins()
    missing = [name for name in WHEELS if normal(name) not in known]
    if missing:
        print(f"steps.py wheels: no pin in docker/constraints/ for {', '.join(missing)}", file=sys.stderr)
        return 1
    for name in WHEELS:
        print(f"{name}=={known[normal(name)]}")
    return 0


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def report_path() -> Path:
    return out() / "gpu.json"


def write_report(doc: dict) -> None:
    path = report_path()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    tmp.replace(path)


def begin() -> int:
    write_report(
        {
            "schema": SCHEMA,
            "dry_run": dry_run(),
            "started": now(),
            "finished": None,
            "host": socket.gethostname(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "budget_seconds": BUDGET,
            "timeouts_seconds": sum(step.timeout for step in STEPS),
            "steps": [],
            "summary": None,
        }
    )
    return 0


def record(name: str, status: str, start: str, end: str, code: str, limit: str) -> int:
    """Step NAME's outcome (and its figures, if it saved any) into gpu.json; one line on stdout."""
    doc = json.loads(report_path().read_text())
    step = BY_NAME[name]
    seconds = max(0.0, float(end) - float(start))
    result_file = work() / "results" / f"{name}.json"
    result = json.loads(result_file.read_text()) if result_file.is_file() else {}
    entry = {
        "name": name,
        "what": step.what,
        "status": status,
        "seconds": round(seconds, 2),
        "timeout": int(limit),
        "exit_code": int(code),
    }
    if status == "skipped":
        entry["reason"] = skip_reason(step)
    elif status == "timeout":
        entry["reason"] = f"killed at its timeout of {limit} s"
    elif status == "failed":
        entry["reason"] = result.get("error") or next(iter(last_lines(name, 1)), "no output")
    if status in ("failed", "timeout"):
        entry["log_tail"] = last_lines(name, 20)
    entry["result"] = {k: v for k, v in result.items() if k != "error"}
    doc["steps"] = [s for s in doc["steps"] if s["name"] != name] + [entry]
    write_report(doc)
    shown = f"{status} in {seconds:.1f} s" if status != "skipped" else f"skipped: {entry['reason']}"
    print(f"[gpu] {name}: {shown}", flush=True)
    if status in ("failed", "timeout"):
        for line in entry["log_tail"][-8:]:
            print(f"[gpu]   {line}", flush=True)
    return 0


def last_lines(name: str, count: int) -> list[str]:
    log = work() / "logs" / f"{name}.log"
    if not log.is_file():
        return []
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-count:]


def finish() -> int:
    doc = json.loads(report_path().read_text())
    doc["finished"] = now()
    started = datetime.datetime.fromisoformat(doc["started"])
    doc["seconds"] = round((datetime.datetime.now(datetime.UTC) - started).total_seconds(), 1)
    counts: dict[str, int] = {}
    for entry in doc["steps"]:
        counts[entry["status"]] = counts.get(entry["status"], 0) + 1
    results = {
        entry["name"]: entry.get("result", {}) for entry in doc["steps"] if entry["status"] == "passed"
    }
    summary: dict = {"counts": counts}
    cuda, cpu = results.get("breakout_cuda", {}), results.get("breakout_cpu", {})
    if cuda.get("sps") and cpu.get("sps"):
        summary["breakout_sps_cuda_over_cpu"] = round(cuda["sps"] / cpu["sps"], 2)
    for variant in ("breakout_cuda_compile", "breakout_cuda_bf16"):
        got = results.get(variant, {})
        if got.get("sps") and cuda.get("sps"):
            summary[f"{variant}_sps_over_fp32"] = round(got["sps"] / cuda["sps"], 2)
            summary[f"{variant}_return_at_{COMPARE_AT}s"] = got.get("return_at")
            summary[f"breakout_cuda_return_at_{COMPARE_AT}s"] = cuda.get("return_at")
    doc["summary"] = summary
    write_report(doc)
    said = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    print(f"[gpu] done in {doc['seconds']} s: {said}; {report_path()}", flush=True)
    return 1 if counts.get("failed") or counts.get("timeout") else 0


# ---------------------------------------------------------------------------------------------
# The steps


def step_gpu() -> dict:
    import torch

    found = {"torch": torch.__version__, "cuda": torch.version.cuda, "available": torch.cuda.is_available()}
    try:
        found["driver"] = " ".join(Path("/proc/driver/nvidia/version").read_text().splitlines()[0].split())
    except OSError:
        found["driver"] = None
    if not found["available"]:
        raise StepFailed(f"torch sees no CUDA GPU: {found}")
    props = torch.cuda.get_device_properties(0)
    found.update(
        name=props.name,
        count=torch.cuda.device_count(),
        capability=f"{props.major}.{props.minor}",
        memory_gib=round(props.total_memory / 2**30, 1),
        multiprocessors=props.multi_processor_count,
        bf16=torch.cuda.is_bf16_supported(including_emulation=False),
    )
    n = 4096
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(20):
        a @ b
    torch.cuda.synchronize()
    found["bf16_matmul_tflops"] = round(20 * 2 * n**3 / (time.perf_counter() - start) / 1e12, 1)
    return found


def step_install() -> dict:
    """The carried wheels, then our package built from a copy of the tree (no build isolation: this
    machine's setuptools, or the carried one first on the path), both --no-deps into the site folder."""
    carried = sorted((REPO / "tests" / "gpu" / "wheels").glob("*.whl"))
    if not carried and not dry_run():
        raise StepFailed(
            "no wheels in tests/gpu/wheels: run `bash tests/gpu/run.sh --prepare` where pip reaches PyPI, "
            "and name tests/gpu/wheels in the device tool's carry"
        )
    target = site()
    target.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(target), PIP_DISABLE_PIP_VERSION_CHECK="1")
    pip = [
        python(),
        "-m",
        "pip",
        "install",
        "--no-index",
        "--no-deps",
        "--no-compile",
        "--target",
        str(target),
    ]
    found: dict = {"site": str(target), "wheels": [w.name for w in carried]}
    if dry_run():  # the wheels are CPython 3.12's, for the GPU machine; this Python has what they hold
        carried, found["wheels"] = [], "not installed (dry run)"
    start = time.perf_counter()
    if carried:
        run([*pip, "--upgrade", *map(str, carried)], env=env, timeout=120)
    found["wheels_seconds"] = round(time.perf_counter() - start, 1)
    source = work() / "src"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(
        REPO / "pufferlib",
        source / "pufferlib",
        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"),
    )
    start = time.perf_counter()
    run([*pip, "--no-build-isolation", "--upgrade", str(source)], env=env, timeout=600)
    found["package_seconds"] = round(time.perf_counter() - start, 1)
    natives = sorted(
        p.name.split(".")[0].lstrip("_") for p in (target / "pufferlib/ocean/native").glob("_*.so")
    )
    sources = sorted(p.parent.name for p in (target / "pufferlib/ocean/native").glob("*/binding.c"))
    found["natives_built"] = natives
    if natives != sources:
        raise StepFailed(f"native envs not compiled by the install: {sorted(set(sources) - set(natives))}")
    return found


def step_imports() -> dict:
    import numpy
    import torch

    import pufferlib
    import pufferlib.environments as envs
    import pufferlib.train
    import pufferlib.vector
    from pufferlib.train.ppo import precision, staging  # noqa: F401

    where = Path(pufferlib.__file__).resolve()
    found = {"pufferlib": str(where), "torch": torch.__version__, "numpy": numpy.__version__}
    for name in ("gymnasium", "pettingzoo", "tomli_w", "rich", "tensorboard"):
        try:
            module = __import__(name)
        except ImportError as e:
            raise StepFailed(f"{name} does not import: {e}") from e
        found[name] = getattr(module, "__version__", "present")
    # what `python -m pufferlib.cli` (every training step) imports: the working folder comes first there
    child = run([python(), "-c", "import pufferlib; print(pufferlib.__file__)"], timeout=60)
    found["pufferlib_in_a_child"] = child.stdout.strip()
    for path in (where, Path(found["pufferlib_in_a_child"]).resolve()):
        if site().is_dir() and site().resolve() not in path.parents:
            raise StepFailed(f"pufferlib imports from {path}, not from the install's {site()}")
    natives = [n for n in envs.catalog() if n.startswith("ocean/") and envs.get(n).native]
    found["native_envs_available"] = [n for n in natives if envs.get(n).available()]
    return found


def step_native() -> dict:
    import pufferlib.environments as envs
    from pufferlib.smoke import Smoke

    start = time.perf_counter()
    done = run([python(), "-m", "pufferlib.cli", "build-native"], timeout=300)
    found: dict = {"compiled": re.findall(r"built (ocean/\S+):", done.stdout)}
    found["compile_seconds"] = round(time.perf_counter() - start, 1)
    stepped, failures = {}, []
    for name in (n for n in envs.catalog() if n.startswith("ocean/") and envs.get(n).native):
        for result in Smoke(name, steps=64).run(("step",)):
            if result.check == "step":
                stepped[name] = {
                    "status": result.status,
                    "sps": round(result.sps or 0),
                    "detail": result.detail,
                }
            if result.status == "fail":
                failures.append(
                    f"{name} {result.check}: {result.detail.splitlines()[0] if result.detail else ''}"
                )
    found["stepped"] = stepped
    if failures or not stepped:
        raise StepFailed("; ".join(failures) or "no native env found")
    return found


def train_argv(env: str, device: str, seconds: float, overrides: dict, *flags: str) -> list[str]:
    """`python -m pufferlib.cli train ENV --json` for `seconds` (the dry run: its small size) on `device`."""
    settings = {"train.device": device, "train.stop_when_solved": "false"}
    settings["train.max_seconds"] = DRY_SECONDS if dry_run() else seconds
    settings.update(overrides)
    if dry_run():
        settings.update(DRY_SIZES[env])
    argv = [python(), "-m", "pufferlib.cli", "train", env, "--json", "--no-dashboard", *flags]
    for key, value in settings.items():
        argv += [f"--{key.replace('_', '-')}", str(value)]
    return argv


def train_run(name: str, env: str, device: str, seconds: float, overrides: dict) -> dict:
    """`puffer train ENV --json` with a run directory (its metrics.jsonl gives the return at
    COMPARE_AT seconds); the summary's figures."""
    device = cuda_or_cpu(device)
    run_dir = work() / "runs" / name
    argv = train_argv(env, device, seconds, {**overrides, "train.run_dir": run_dir})
    done = run(argv, timeout=3600)
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    found = {key: summary.get(key) for key in ("env", "device", "steps", "seconds", "sps", "mean_return")}
    found.update(updates=summary.get("updates"), stop_reason=summary.get("stop_reason"))
    found["command"] = " ".join(["puffer", *argv[3:]])
    found["return_at"] = return_at(run_dir / "metrics.jsonl", COMPARE_AT)
    if not summary.get("updates"):
        raise StepFailed(f"no update in {summary.get('seconds')} s: {summary}")
    if not device.startswith(summary.get("device", "?").split(":")[0]):
        raise StepFailed(f"asked for {device}, trained on {summary.get('device')}")
    return found


def return_at(metrics: Path, seconds: float) -> float | None:
    """The mean episode return of the last update at or before `seconds` (None before any)."""
    value = None
    if metrics.is_file():
        for line in metrics.read_text().splitlines():
            row = json.loads(line)
            if row.get("time", 0) <= seconds and row.get("episodic_return") is not None:
                value = round(row["episodic_return"], 3)
    return value


def staging_copy(device: str, repeats: int = 200) -> dict:
    """pufferlib/train/ppo/staging.py's copies of one breakout step (the observation batch, then rewards,
    terminals and truncations in one more), synchronized after each step so that each is timed whole
    (in training they overlap the policy's kernels), beside plain pageable copies of the same arrays."""
    import numpy as np
    import torch

    import pufferlib.environments as envs
    from pufferlib.train import config, setup
    from pufferlib.train.ppo.staging import Staging

    cfg = config.load("ocean/breakout", {"train.device": device})
    vecenv = setup.make_vecenv(envs.get("ocean/breakout"), cfg)
    try:
        vecenv.async_reset(1)
        obs, rewards, terminals, truncations, *_ = vecenv.recv()
    finally:
        vecenv.close()
    obs = np.asarray(obs)
    cuda = device.startswith("cuda")

    def timed(copy) -> float:
        for _ in range(10):
            copy()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            copy()
            if cuda:
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        return round(statistics.median(times) * 1e6, 1)

    staging = Staging(device)

    def staged() -> None:
        staging.tensor(obs)
        staging.stack([rewards, terminals, truncations])

    def pageable() -> None:
        torch.from_numpy(obs).to(device)
        torch.from_numpy(np.stack([np.asarray(a, np.float32) for a in (rewards, terminals, truncations)])).to(
            device
        )

    return {
        "device": device,
        "pinned": staging.pinned,
        "bytes_per_step": int(obs.nbytes + 3 * 4 * len(rewards)),
        "staged_us_per_step": timed(staged),
        "pageable_us_per_step": timed(pageable),
        "repeats": repeats,
    }


def step_train(name: str) -> dict:
    env, device, seconds, extra = TRAIN[name]
    found = train_run(name, env, device, seconds, extra)
    if name == "breakout_cuda":
        found["staging"] = staging_copy(cuda_or_cpu("cuda"))
    return found


def step_egl() -> dict:
    vendor = Path("/usr/share/glvnd/egl_vendor.d/10_nvidia.json")
    mounted = Path("/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json")
    if not vendor.exists() and mounted.exists():
        os.environ.setdefault("__EGL_VENDOR_LIBRARY_FILENAMES", str(mounted))
    os.environ["MUJOCO_GL"] = "egl"
    os.environ["PYOPENGL_PLATFORM"] = "egl"
    import numpy as np

    import pufferlib.environments as envs
    from pufferlib.gpu_probe import egl_renderer, egl_situation
    from pufferlib.smoke import random_actions
    from pufferlib.train import config
    from pufferlib.train.run import video

    renderer = egl_renderer()
    found: dict = {
        "renderer": renderer,
        "egl_vendor": os.environ.get("__EGL_VENDOR_LIBRARY_FILENAMES", str(vendor)),
    }
    if "nvidia" not in renderer.lower():
        raise StepFailed(f"EGL does not render on the NVIDIA driver: {renderer}. {egl_situation()}")
    name = "mujoco/InvertedPendulum-v5"
    binding = envs.get(name)
    env, _ = video.recording_env(binding, config.load(name))
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=1)
        frames, times = [], []
        for _ in range(30):
            env.step(random_actions(env, rng))
            start = time.perf_counter()
            frames.append(video.rgb_frame(env, binding))
            times.append(time.perf_counter() - start)
    finally:
        env.close()
    if any(f is None or f.min() == f.max() for f in frames):
        raise StepFailed("a frame is missing or blank")
    found.update(
        env=name,
        frames=len(frames),
        shape=list(frames[0].shape),
        ms_per_frame=round(statistics.median(times) * 1e3, 2),
    )
    from PIL import Image

    Image.fromarray(frames[-1]).save(out() / "egl.png")
    found["image"] = "egl.png"
    return found


def step_ddp_nccl() -> dict:
    env, seconds = DDP
    device = cuda_or_cpu("cuda")
    argv = train_argv(env, device, seconds, {"train.run_dir": ""}, "--nproc-per-node", "1")
    done = run(argv, timeout=3600)
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    backend = "gloo" if device == "cpu" else "nccl"
    found = {key: summary.get(key) for key in ("world_size", "backend", "replicas_identical", "steps", "sps")}
    found.update(updates=summary.get("updates"), device=summary.get("device"))
    found["command"] = " ".join(["puffer", *argv[3:]])
    said = [line for line in done.stderr.splitlines() if "rank 0 of 1" in line]
    found["rank_line"] = said[0] if said else None
    if (
        summary.get("world_size") != 1
        or summary.get("backend") != backend
        or not summary.get("replicas_identical")
    ):
        raise StepFailed(f"expected one rank in DDP over {backend}: {summary}")
    if not summary.get("updates"):
        raise StepFailed(f"no update: {summary}")
    return found


def run(argv: list[str], timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
    """A command, its output to the step's log too; StepFailed (its stderr's end) unless it exits 0."""
    print("$ " + " ".join(argv), flush=True)
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL, cwd=work()
    )
    sys.stdout.write(done.stdout)
    sys.stdout.write(done.stderr)
    sys.stdout.flush()
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise StepFailed(f"exit {done.returncode}: {tail}")
    return done


STEP_FUNCTIONS = {
    "gpu": step_gpu,
    "install": step_install,
    "imports": step_imports,
    "native": step_native,
    "egl": step_egl,
    "ddp_nccl": step_ddp_nccl,
    **{name: (lambda name=name: step_train(name)) for name in TRAIN},
}


def run_step(name: str) -> int:
    """Step NAME: its figures to $GPU_WORK/results/NAME.json; exit 1 (with the error saved) if it failed."""
    try:
        found = STEP_FUNCTIONS[name]()
    except Exception as e:
        traceback.print_exc()
        save(name, {"error": f"{type(e).__name__}: {e}"})
        return 1
    save(name, found)
    print(json.dumps(found, default=str), flush=True)
    return 0


def main(argv: list[str]) -> int:
    if not argv:
        return usage("give a command: plan, wheels, begin, finish, record or a step")
    command, rest = argv[0], argv[1:]
    if command == "plan":
        return plan(rest)
    if command == "wheels":
        return wheels()
    if command == "begin":
        return begin()
    if command == "finish":
        return finish()
    if command == "record":
        return record(*rest)
    if command in STEP_FUNCTIONS:
        return run_step(command)
    return usage(f"unknown command {command!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
