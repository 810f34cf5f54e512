"""The checks the integration matrix runs *inside* the container for one binding.

    python -m pufferlib.smoke ocean/squared --json     # one JSON line per check, as each finishes
    puffer smoke minigrid/MiniGrid-Empty-8x8-v0          # a readable table

Checks, in order: import, make, spaces, reset, step (random valid actions through emulation),
render (bindings with pixel observations: frames of the declared shape, not blank, and which renderer
drew them; skipped for the others), serial and multiprocessing (through pufferlib.vector, 2 envs / 2
workers: every observation in its space, and the same trace from both for the same seed and actions),
policy (the default policy's forward pass), learn (a training run that must reach the solved score within
a budget of agent steps, `SmokeSpec.learn_steps` or the train config's total_timesteps; its wall-time
limit, what is left of the container's budget, is only a hang guard and reports `timeout`, not `fail`)
and gpu (torch CUDA and a policy step on the GPU; skipped with the reason where none).
A check runs its prerequisites (NEEDS) too, selected or not: `--checks step` runs import, make,
spaces, reset and step. A check whose prerequisite failed is skipped with that reason. Exit status 1
if any check failed; 2 for bad arguments (an unknown check, --steps below 1).

What the host relies on (the check names, the JSON line of a result, the GPU-requested variable) is
pufferlib.matrix_protocol; the checks on observation batches are pufferlib.batch_checks, and what a
check says about a missing GPU comes from pufferlib.gpu_probe.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from pufferlib.batch_checks import check_batch, digest, frame_field, frames_of
from pufferlib.gpu_probe import cuda_situation, egl_renderer, egl_situation
from pufferlib.matrix_protocol import BUDGET_ENV, CHECKS, FAILED, GPU_REQUESTED_ENV, Result

# A check runs only if these passed (and runs them first when they were not selected).
NEEDS = {
    "make": ("import",),
    "spaces": ("make",),
    "reset": ("make",),
    "step": ("reset", "spaces"),
    "render": ("reset", "spaces"),
    "serial": ("step",),
    "multiprocessing": ("step",),
    "policy": ("reset",),
    "learn": ("step", "policy"),
    "gpu": ("policy",),
}


def with_prerequisites(checks: tuple[str, ...]) -> tuple[str, ...]:
    """`checks` and every check they need (NEEDS, transitively), in the order of CHECKS."""
    wanted: set[str] = set()
    todo = list(checks)
    while todo:
        check = todo.pop()
        if check not in wanted:
            wanted.add(check)
            todo.extend(NEEDS.get(check, ()))
    return tuple(check for check in CHECKS if check in wanted)


class Skip(Exception):
    """A check that does not apply here (e.g. no GPU); the message says why."""


class TimedOut(Exception):
    """A check's wall-time hang guard fired before its own budget (of steps) ran out; says how far it got."""


HANG_MARGIN = 0.1  # of the container's budget, kept back so the learn check reports before the host kills it


def random_actions(env, rng: np.random.Generator) -> np.ndarray:
    """A batch of valid random actions for every agent row of `env` (or of a vector env)."""
    from pufferlib.spaces import sample_action

    return sample_action(env.single_action_space, rng, getattr(env, "agents_per_batch", env.num_agents))


class Smoke:
    """Runs the checks for one binding, keeping the objects later checks need."""

    def __init__(self, name: str, steps: int | None = None, seed: int = 0) -> None:
        if steps is not None and steps < 1:
            raise ValueError(f"steps must be >= 1, got {steps} (None: the binding's own)")
        self.name = name
        self.seed = seed
        self.steps_override = steps
        self.binding = None
        self.env = None
        self.images: list[str] = []  # set by check_render, taken into its Result
        self.took_steps: int | None = None  # set by check_learn (the steps it trained), likewise
        self.serial_trace: list[bytes] | None = None  # what check_serial saw, for check_multiprocessing
        self.started = time.monotonic()  # the container's budget (BUDGET_ENV) runs from about here

    @property
    def steps(self) -> int:
        return self.steps_override or self.binding.smoke.steps

    def check_import(self) -> str:
        import pufferlib.environments as environments

        self.binding = environments.get(self.name)
        missing = self.binding.missing()
        if missing:
            raise RuntimeError(f"not installed: {', '.join(missing)}; {self.binding.install_hint}")
        import importlib

        for module in self.binding.requires:
            importlib.import_module(module)
        return f"requires {', '.join(self.binding.requires) or 'nothing'}"

    def check_make(self) -> str:
        self.env = self.binding.make_env()
        return f"{type(self.env).__name__}, {self.env.num_agents} agent(s)"

    def check_spaces(self) -> str:
        from gymnasium import spaces

        env = self.env
        obs_space, atn_space = env.single_observation_space, env.single_action_space
        if not isinstance(obs_space, spaces.Box):
            raise AssertionError(f"observation space must be a flat Box, got {obs_space}")
        if not isinstance(atn_space, spaces.MultiDiscrete | spaces.Discrete | spaces.Box):
            raise AssertionError(f"action space must be MultiDiscrete, Discrete or Box, got {atn_space}")
        want = (env.num_agents, *obs_space.shape)
        if env.observations.shape != want or env.observations.dtype != obs_space.dtype:
            raise AssertionError(
                f"observation buffer {env.observations.shape} {env.observations.dtype}, want {want}"
            )
        for buf in ("rewards", "terminals", "truncations", "masks"):
            if getattr(env, buf).shape != (env.num_agents,):
                raise AssertionError(f"{buf} buffer has shape {getattr(env, buf).shape}")
        return f"obs {obs_space.shape} {obs_space.dtype}, actions {atn_space}"

    def check_reset(self) -> str:
        obs, infos = self.env.reset(seed=self.seed)
        self._check_obs(obs, "reset")
        if not isinstance(infos, list):
            raise AssertionError(f"reset infos must be a list, got {type(infos).__name__}")
        return f"{int(self.env.masks.sum())} live agent(s)"

    def _check_obs(self, obs: np.ndarray, where: str) -> None:
        space = self.env.single_observation_space
        live = obs[self.env.masks]
        if not all(space.contains(row) for row in live):
            raise AssertionError(f"{where}: observation outside {space}")

    def check_step(self) -> tuple[str, float]:
        env, rng = self.env, np.random.default_rng(self.seed)
        episodes, agent_steps = 0, 0
        start = time.perf_counter()
        for _ in range(self.steps):
            if env.done:
                env.reset()
                continue
            obs, rewards, _, _, infos = env.step(random_actions(env, rng))
            if not np.all(np.isfinite(rewards)):
                raise AssertionError(f"non-finite reward {rewards}")
            self._check_obs(obs, "step")
            episodes += len(infos)
            agent_steps += int(env.masks.sum())
        seconds = time.perf_counter() - start
        return f"{self.steps} steps, {episodes} episode(s) ended", agent_steps / max(seconds, 1e-9)

    def check_render(self) -> str:
        """Bindings with pixel observations: frames of the declared shape that are not blank, and which
        renderer drew them. Where the host requested GPUs, EGL must also reach the GPU through the NVIDIA
        driver (what MuJoCo and dm_control draw with there): a fail, naming what EGL found, if it cannot."""
        shape = tuple(self.binding.pixels)
        if not shape and self.binding.draws:
            return self._check_drawn()
        if not shape:
            raise Skip(
                "no pixel observations (the binding declares no `pixels` shape) and render() draws none"
            )
        env, rng = self.env, np.random.default_rng(self.seed)
        field = frame_field(env, shape)
        frames = [frames_of(env.reset(seed=self.seed)[0][env.masks], env, field)]
        for _ in range(4):
            if env.done:
                env.reset()
            else:
                env.step(random_actions(env, rng))
            frames.append(frames_of(env.observations[env.masks], env, field))
        for i, frame in enumerate(f for batch in frames for f in batch):
            if frame.shape != shape:
                raise AssertionError(f"frame {i} has shape {frame.shape}, declared {shape}")
            if frame.min() == frame.max():
                raise AssertionError(f"frame {i} is one flat value {frame.min()} (nothing was drawn)")
        backend = getattr(env, "render_backend", None)
        backend = (backend() if callable(backend) else backend) or "not reported by the env"
        count = sum(len(batch) for batch in frames)
        where = f" (the `{field}` field of each observation)" if field else ""
        detail = f"{count} frames {shape} {frames[0].dtype}{where}, none blank; rendered by {backend}"
        self.images = thumbnails(batch[0] for batch in frames)
        requested = os.environ.get(self.GPU_REQUESTED_ENV)
        if requested:
            gpu = egl_renderer()
            if "nvidia" not in gpu.lower():
                raise AssertionError(
                    f"a GPU was requested ({requested}) but EGL does not render on it: {gpu}. "
                    + egl_situation()
                )
            if backend.startswith("MUJOCO_GL") and "nvidia" not in backend.lower():
                raise AssertionError(
                    f"a GPU was requested ({requested}) but the frames were drawn by {backend}"
                )
            detail += f"; EGL renders on the GPU: {gpu}"
        return detail

    def _vector(self, backend_name: str, **kwargs: Any) -> tuple[str, float, list[bytes]]:
        """Step 2 envs through a vector backend with seeded random actions; every live observation
        must lie in the observation space. Returns the detail, agent steps/s and the trace: one
        digest per step of what the envs returned, to compare backends."""
        import pufferlib.vector

        backend = getattr(pufferlib.vector, backend_name)
        vecenv = pufferlib.vector.make(
            self.binding.env_creator(), backend=backend, num_envs=2, seed=self.seed, **kwargs
        )
        trace: list[bytes] = []
        try:
            rng = np.random.default_rng(self.seed)
            vecenv.async_reset(self.seed)
            agent_steps, episodes = 0, 0
            steps = max(self.steps // 2, 8)
            start = time.perf_counter()
            for step in range(steps + 1):
                obs, rewards, terminals, truncations, infos, _, masks = vecenv.recv()
                where = f"{backend_name}, step {step}" if step else f"{backend_name}, reset"
                check_batch(vecenv.single_observation_space, obs, rewards, masks, where)
                trace.append(digest(obs, rewards, terminals, truncations, masks))
                agent_steps += int(np.count_nonzero(masks)) if step else 0
                episodes += len(infos)
                if step < steps:
                    vecenv.send(random_actions(vecenv, rng))
            seconds = time.perf_counter() - start
        finally:
            vecenv.close()
        detail = f"{steps} steps x 2 envs, {episodes} episode(s) ended, observations in their space"
        return detail, agent_steps / max(seconds, 1e-9), trace

    def check_serial(self) -> tuple[str, float]:
        detail, sps, self.serial_trace = self._vector("Serial")
        return detail, sps

    def check_multiprocessing(self) -> tuple[str, float]:
        detail, sps, trace = self._vector("Multiprocessing", num_workers=2, overwork=True)
        if self.serial_trace is None:
            return detail + "; not compared with Serial (serial did not pass)", sps
        if self.binding.seeding != "full":
            return detail + f"; not compared with Serial (seeding {self.binding.seeding})", sps
        differ = next(
            (i for i, (a, b) in enumerate(zip(self.serial_trace, trace, strict=True)) if a != b), None
        )
        if differ is not None:
            where = "the reset" if differ == 0 else f"step {differ}"
            raise AssertionError(
                f"Multiprocessing and Serial differ from {where} on, with the same seed ({self.seed}) and "
                "actions: the env is not reproducible across processes (state shared between envs, or a "
                "random source that ignores the seed)"
            )
        return detail + ", the same trace as Serial", sps

    def _policy(self, device: str = "cpu"):
        import torch

        from pufferlib.frameworks.cleanrl import Policy

        policy = Policy(self.binding.policy_class()(self.env)).to(device)
        obs = torch.from_numpy(self.env.observations).to(device)
        with torch.no_grad():
            action, log_prob, _, value = policy.get_action_and_value(obs)
        if not (torch.isfinite(log_prob).all() and torch.isfinite(value).all()):
            raise AssertionError("non-finite log-prob or value")
        return policy, action

    def _check_drawn(self) -> str:
        """A binding whose render() draws (`draws`): one env made with render_mode "rgb_array" (one C instance
        of a native env, as `puffer eval --video` records), frames drawn at reset and after each of 4 random
        steps: (H, W, 3) images, none one flat colour, not all the same."""
        kwargs = {"num_envs": 1, "num_threads": 1} if self.binding.native else {}
        env = self.binding.make_env(**kwargs, render_mode="rgb_array", seed=self.seed)
        rng = np.random.default_rng(self.seed)
        try:
            env.reset(seed=self.seed)
            frames = [np.asarray(env.render())]
            for _ in range(4):
                env.step(random_actions(env, rng))
                frames.append(np.asarray(env.render()))
        finally:
            env.close()
        for i, frame in enumerate(frames):
            if frame.ndim != 3 or frame.shape[2] != 3:
                raise AssertionError(
                    f"render() {i} returned {frame.shape} {frame.dtype}, not an (H, W, 3) image"
                )
            if frame.min() == frame.max():
                raise AssertionError(f"render() {i} is one flat value {frame.min()} (nothing was drawn)")
        if len({f.tobytes() for f in frames}) == 1:
            raise AssertionError(f"render() drew the same frame {frames[0].shape} at reset and after 4 steps")
        self.images = thumbnails(frames)
        size = frames[0].shape
        return f"{len(frames)} frames {size} drawn by render() (render_mode rgb_array), changing as it steps"

    def check_policy(self) -> str:
        policy, action = self._policy()
        params = sum(p.numel() for p in policy.parameters())
        return f"{self.binding.policy.split(':')[-1]}: {params:,} parameters, actions {tuple(action.shape)}"

    def check_learn(self) -> tuple[str, float]:
        """Train until solved within the step budget. Fails (red) when the budget is spent unsolved; a
        run the hang guard stops first is a `timeout`: a slow or loaded box, not an env that cannot learn."""
        if not self.binding.smoke.learn:
            raise Skip("no learning check for this binding (SmokeSpec.learn is off)")
        from pufferlib.train import config, train

        steps = self.binding.smoke.learn_steps or config.load(self.name)["train"]["total_timesteps"]
        guard = self.hang_guard()
        # One torch thread: the matrix runs cells side by side on shared cores, where the threads a
        # native env's config asks for (one per core) would oversubscribe them and stall each other
        # (ocean/cartpole: 3k SPS beside another cell, 180k alone).
        overrides = {
            **dict(self.binding.smoke.learn_overrides),
            "train.total_timesteps": steps,
            "train.max_seconds": guard,
            "train.torch_threads": 1,
        }
        summary = train(self.name, overrides, quiet=True)
        if summary.get("solve_metric") == "win_rate":  # self-play (train/versus.py)
            what, value = "win rate against a random opponent", summary["score"]
        elif summary.get("solve_metric") == "wins":  # the env's `win` info: against its own bot
            what, value = "win rate against the env's opponent", summary["score"]
        elif summary.get("solve_metric") == "score":  # the env's own `score` (PufferLib's envs log one)
            what, value = "mean score", summary["score"]
        else:
            what, value = "mean return", summary["mean_return"]
        mean = "none (no episode ended)" if value is None else f"{value:.3f}"
        detail = (
            f"{what} {mean} (solved at {summary['solved_score']}) "
            f"after {summary['steps']:,} of {steps:,} steps ({summary['updates']} updates) "
            f"in {summary['seconds']:.1f}s (hang guard {guard:.0f}s; stopped by {summary['stop_reason']})"
        )
        self.took_steps = summary["steps"]
        if summary["solved"]:
            return detail, summary["sps"]
        if summary["stop_reason"] == "time":
            raise TimedOut(f"hang guard: {guard:.0f}s passed before the step budget was spent: {detail}")
        raise AssertionError("not solved within the step budget: " + detail)

    def hang_guard(self) -> float:
        """The learn check's wall-time limit: what is left of the container's budget (BUDGET_ENV, set by
        the host; else the binding's own), less HANG_MARGIN of it, so the check reports before a kill."""
        budget = float(os.environ.get(BUDGET_ENV) or self.binding.smoke.seconds)
        left = budget * (1 - HANG_MARGIN) - (time.monotonic() - self.started)
        return max(left, 1.0)

    GPU_REQUESTED_ENV = GPU_REQUESTED_ENV  # set by the host when it asked for GPUs (matrix_protocol)

    def check_gpu(self) -> str:
        """torch CUDA and a policy step on the GPU. Without a GPU this skips, unless the host requested
        GPUs: then it fails, naming the driver and CUDA versions it found (the usual GPU failure is a driver
        too old for the image's CUDA, and a skip would hide it)."""
        import warnings

        import torch

        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            available = torch.cuda.is_available()
        if not available:
            situation = cuda_situation(said)
            requested = os.environ.get(self.GPU_REQUESTED_ENV)
            if requested:
                raise AssertionError(f"a GPU was requested ({requested}) but torch sees none: {situation}")
            raise Skip(f"no CUDA GPU visible to torch: {situation}")
        _, action = self._policy("cuda")
        name = torch.cuda.get_device_name(0)
        return f"policy step on {name} (CUDA {torch.version.cuda}), actions {tuple(action.shape)}"

    def run(self, checks: tuple[str, ...] = CHECKS) -> Iterator[Result]:
        """Each of `checks` and its prerequisites (with_prerequisites), a Result as each ends."""
        passed: set[str] = set()
        failed: dict[str, str] = {}
        try:
            for check in with_prerequisites(checks):
                blocked = [n for n in NEEDS.get(check, ()) if n not in passed]
                if blocked:
                    why = next((f"{n} failed" for n in blocked if n in failed), f"needs {', '.join(blocked)}")
                    yield Result(self.name, check, "skip", 0.0, why)
                    continue
                result = self._run_one(check)
                if result.status == "pass":
                    passed.add(check)
                elif result.status in FAILED:
                    failed[check] = result.detail
                yield result
        finally:
            if self.env is not None:
                self.env.close()

    def _run_one(self, check: str) -> Result:
        method: Callable = getattr(self, f"check_{check}")
        start = time.perf_counter()
        try:
            out = method()
        except Skip as why:
            return Result(self.name, check, "skip", time.perf_counter() - start, str(why))
        except TimedOut as why:
            took, self.took_steps = self.took_steps, None
            return Result(self.name, check, "timeout", time.perf_counter() - start, str(why), steps=took)
        except Exception as exc:
            tb = traceback.format_exc(limit=6)
            return Result(
                self.name, check, "fail", time.perf_counter() - start, f"{type(exc).__name__}: {exc}\n{tb}"
            )
        detail, sps = out if isinstance(out, tuple) else (out, None)
        images, self.images = self.images, []
        took, self.took_steps = self.took_steps, None
        seconds = time.perf_counter() - start
        return Result(self.name, check, "pass", seconds, detail, sps, images=images, steps=took)


def thumbnails(frames) -> list[str]:
    """Base64 PNGs of `frames` for the matrix report's thumbnail strip (a few KB each)."""
    import base64

    from pufferlib.train.run.video import thumbnail_png

    return [base64.b64encode(thumbnail_png(frame)).decode("ascii") for frame in frames]


def versions() -> dict[str, str]:
    """Versions of the stack inside this environment (for the matrix report)."""
    import importlib.metadata as md
    import platform

    from pufferlib.environments import families

    out = {"python": platform.python_version()}
    for package in ("pufferlib", "torch", "numpy", "gymnasium", "pettingzoo", *families.reported()):
        with contextlib.suppress(md.PackageNotFoundError):
            out[package] = md.version(package)
    try:
        import torch

        out["cuda"] = torch.version.cuda or "none"
        out["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    except ImportError:
        pass
    return out


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("smoke", help="run the matrix checks for one binding in this environment")
    _add_arguments(p)
    p.set_defaults(func=run)


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("env", nargs="?", help="binding name, e.g. ocean/squared")
    p.add_argument(
        "--checks",
        default=",".join(CHECKS),
        help=f"comma-separated subset of {','.join(CHECKS)} (their prerequisites run too)",
    )
    p.add_argument(
        "--steps", type=int, help="random steps (>= 1) for the step/vector checks (default: the binding's)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="one JSON object per line, flushed as each check ends")
    p.add_argument("--versions", action="store_true", help="print the stack's versions as JSON and exit")


def run(args: argparse.Namespace) -> int:
    if args.versions:
        print(json.dumps(versions()))
        return 0
    if not args.env:
        return _fail("give a binding name (see `puffer envs`)")
    checks = tuple(c.strip() for c in args.checks.split(",") if c.strip())
    unknown = [c for c in checks if c not in CHECKS]
    if unknown or not checks:
        return _fail(
            f"unknown check(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(CHECKS)}"
        )
    if args.steps is not None and args.steps < 1:
        return _fail(f"--steps must be >= 1, got {args.steps} (leave it out for the binding's own)")
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    failed = False
    for result in Smoke(args.env, steps=args.steps, seed=args.seed).run(checks):
        failed |= result.status in FAILED
        if args.json:
            print(result.to_line(), flush=True)
        else:
            sps = f"{result.sps:,.0f} sps" if result.sps else ""
            first = result.detail.splitlines()[0] if result.detail else ""
            print(
                f"{result.check:<16} {result.status:<5} {result.seconds:7.2f}s {sps:>12}  {first}", flush=True
            )
    return 1 if failed else 0


def _fail(message: str) -> int:
    print(f"smoke: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pufferlib.smoke", description=__doc__.split("\n")[0])
    _add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
