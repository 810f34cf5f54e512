"""The testing ladder of a native Ocean env, as functions each env's test module calls with its name.

    from _native_ladder import Ladder
    ladder = Ladder("cartpole", kwargs={})
    def test_same_seed(): ladder.same_seed_identical()

Every check builds real NativeEnvs (the compiled module) and fails with a message naming what broke.
`fuzz()` compiles tests/native/fuzz.c around the env's binding.c with ASan+UBSan and runs it (no Python).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from _repo import REPO

from pufferlib.ocean.native import NativeEnv, load
from pufferlib.spaces import sample_action

NATIVE = REPO / "pufferlib" / "ocean" / "native"
HARNESS = REPO / "tests" / "native" / "fuzz.c"
SANITIZE = [
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
    "-g",
    "-O1",
]


def compiler() -> str:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    assert cc, "no C compiler (cc, gcc or clang) on PATH: install gcc to run the native envs' fuzz tests"
    return cc


def fuzz(
    binding: Path,
    tmp: Path,
    iterations: int = 20000,
    seed: int = 1,
    defines: tuple[str, ...] = (),
    kwargs: dict[str, Any] | None = None,
):
    """Compile the sanitizer harness around `binding` (a binding.c) and run it with game `kwargs` (as
    PN_KW_<key> variables); returns the completed run."""
    exe = tmp / f"fuzz_{binding.parent.name}"
    build = [compiler(), *SANITIZE, f"-I{NATIVE}", *(f"-D{d}" for d in defines)]
    build += [f'-DPN_BINDING="{binding}"', str(HARNESS), "-lm", "-o", str(exe)]
    subprocess.run(build, check=True, capture_output=True, text=True, timeout=120)
    env = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS": "print_stacktrace=1"}
    env.update({f"PN_KW_{key}": str(value) for key, value in (kwargs or {}).items()})
    return subprocess.run(
        [str(exe), str(iterations), str(seed)], capture_output=True, text=True, timeout=120, env=env
    )


def build_module(binding: Path, tmp: Path, defines: tuple[str, ...] = ()) -> ModuleType:
    """Compile `binding` (a binding.c) as a Python extension in `tmp` and import it (for envs outside
    the package, such as tests/native/broken)."""
    import numpy

    name = re.search(r"#define ENV_NAME (\w+)", binding.read_text()).group(1)
    so = tmp / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}"
    build = [compiler(), "-shared", "-fPIC", "-O1", "-std=c11", "-D_GNU_SOURCE", f"-I{NATIVE}"]
    build += [
        f"-I{sysconfig.get_paths()['include']}",
        f"-I{numpy.get_include()}",
        *(f"-D{d}" for d in defines),
    ]
    subprocess.run(
        [*build, str(binding), "-o", str(so), "-pthread"], check=True, capture_output=True, timeout=120
    )
    spec = importlib.util.spec_from_file_location(name, so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


class Ladder:
    """The checks for native env `name` built with game `kwargs` (defaults when empty)."""

    def __init__(
        self, name: str, kwargs: dict[str, Any] | None = None, num_envs: int = 8, module: Any = None
    ) -> None:
        self.name = name
        self.kwargs = kwargs or {}
        self.num_envs = num_envs
        self.module = module or load(name)

    def make(self, seed: int = 0, num_envs: int | None = None, buf: Any = None, **kw: Any) -> NativeEnv:
        n = num_envs or self.num_envs
        return NativeEnv(self.module, num_envs=n, seed=seed, buf=buf, **{**self.kwargs, **kw})

    def random_actions(self, env: NativeEnv, rng: np.random.Generator) -> np.ndarray:
        actions = sample_action(env.single_action_space, rng, env.num_agents)
        return actions.astype(np.int32).reshape(env.actions.shape)

    def trace(self, seed: int, steps: int = 200, num_threads: int = 1) -> list[np.ndarray]:
        """Observations, rewards, terminals, truncations, masks of each step under seeded random actions."""
        env = self.make(seed, num_threads=num_threads)
        rng = np.random.default_rng(0)
        env.reset(seed)
        out = [env.observations.copy()]
        for _ in range(steps):
            env.step(self.random_actions(env, rng))
            out += [
                a.copy() for a in (env.observations, env.rewards, env.terminals, env.truncations, env.masks)
            ]
        env.close()
        return out

    # ------------------------------------------------------------------------------------ the rungs

    def same_seed_identical(self, steps: int = 200) -> None:
        a, b = self.trace(3, steps), self.trace(3, steps)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert np.array_equal(x, y, equal_nan=True), f"{self.name}: same seed, trace differs at entry {i}"

    def threads_identical(self, steps: int = 100) -> None:
        one, four = self.trace(5, steps), self.trace(5, steps, num_threads=4)
        assert all(np.array_equal(x, y) for x, y in zip(one, four, strict=True)), "4 threads differ from 1"

    def seeds_differ(self, steps: int = 50) -> None:
        a, b = self.trace(1, steps), self.trace(2, steps)
        assert any(not np.array_equal(x, y) for x, y in zip(a, b, strict=True)), (
            f"{self.name}: seeds 1, 2 agree"
        )

    def reset_reseeds(self) -> None:
        env = self.make(7)
        first = env.reset(11)[0].copy()
        for _ in range(5):
            env.step(self.random_actions(env, np.random.default_rng(1)))
        assert np.array_equal(env.reset(11)[0], first), f"{self.name}: reset(11) twice gives different starts"
        env.close()

    def actions_refused(self) -> None:
        """Out-of-range actions raise a ValueError naming the row, value and range; boundaries pass."""
        env = self.make(0)
        env.reset(0)
        sizes = self.module.ACT_SIZES
        for branch, size in enumerate(sizes):
            for value in (-1, size, 2**31 - 1):
                actions = np.zeros(env.actions.shape, np.int32)
                actions.reshape(-1, len(sizes))[2 % env.num_agents, branch] = value
                try:
                    env.step(actions)
                except ValueError as e:
                    msg = str(e)
                    assert f"action {value}" in msg and f"row {2 % env.num_agents}" in msg, msg
                    assert f"0..{size - 1}" in msg, msg
                else:
                    raise AssertionError(f"{self.name}: action {value} (branch {branch}) was accepted")
            for value in (0, size - 1):
                actions = np.zeros(env.actions.shape, np.int32)
                actions.reshape(-1, len(sizes))[:, branch] = value
                env.step(actions)
        env.close()

    def every_element_written(self, steps: int = 300) -> None:
        """Twins with the same seed, one's buffers poisoned (0xFF bytes: NaN floats) before each call,
        the other's zeroed: after every reset and step the two must agree, so nothing was left unwritten."""
        x, y = self.make(9), self.make(9)

        def poison() -> None:
            for name in ("observations", "rewards", "terminals", "truncations", "masks"):
                getattr(x, name).view(np.uint8)[...] = 0xFF  # as float32: NaN
                getattr(y, name).view(np.uint8)[...] = 0

        def same(what: str) -> None:
            for name in ("observations", "rewards", "terminals", "truncations", "masks"):
                a, b = getattr(x, name), getattr(y, name)
                bad = np.flatnonzero(a.view(np.uint8).reshape(-1) != b.view(np.uint8).reshape(-1))
                assert not bad.size, f"{self.name}: {what}: {name} element {bad[0] // a.itemsize} not written"
                if name != "observations" and name != "rewards":
                    assert a.view(np.uint8).max() <= 1, (
                        f"{self.name}: {what}: {name} holds a value other than 0/1"
                    )

        poison()
        x.reset(9)
        y.reset(9)
        same("reset")
        rng = np.random.default_rng(2)
        for t in range(steps):
            actions = self.random_actions(x, rng)
            poison()
            x.step(actions)
            y.step(actions)
            same(f"step {t}")
        x.close()
        y.close()

    def episodes_logged(self, steps: int = 2000) -> list[dict]:
        """Random play ends episodes; infos carry the LOG_FIELDS means and n; vec_log then clears."""
        env = self.make(4, num_envs=16)
        env.reset(4)
        rng = np.random.default_rng(3)
        infos: list[dict] = []
        for _ in range(steps):
            infos += env.step(self.random_actions(env, rng))[4]
        fields = set(self.module.LOG_FIELDS)
        assert infos, f"{self.name}: no episode ended in {steps} random steps of 16 envs"
        for info in infos:
            assert set(info) == fields and info["n"] >= 1, info
            assert all(np.isfinite(v) for v in info.values()), info
        assert self.module.vec_log(env._handle) == {}, "vec_log did not clear"
        env.close()
        return infos

    def renders(self) -> None:
        env = self.make(0)
        env.reset(0)
        rng = np.random.default_rng(0)
        for _ in range(3):
            env.step(self.random_actions(env, rng))
        frame = env.render()
        assert frame.shape == tuple(self.module.RENDER_SHAPE) and frame.dtype == np.uint8, frame.shape
        assert frame.std() > 0, f"{self.name}: the RGB frame is one colour"
        env.render_mode = "ansi"
        text = env.render(env.num_envs - 1)
        assert isinstance(text, str) and text.strip(), f"{self.name}: empty ANSI text"
        env.close()

    def close_frees(self, cycles: int = 1000, num_envs: int = 64, close: bool = True) -> None:
        """1,000 create/step/close cycles; RSS must stay flat (a leaked env set or buffer would show).
        close=False drops each env unclosed: the handle's destructor must free it all the same."""

        def cycle() -> None:
            env = self.make(1, num_envs=num_envs)
            env.reset(1)
            env.step(np.zeros(env.actions.shape, np.int32))
            if close:
                env.close()

        for _ in range(100):
            cycle()
        before = rss_kib()
        for _ in range(cycles):
            cycle()
        grown = rss_kib() - before
        assert grown < 2048, f"{self.name}: RSS grew {grown} KiB over {cycles} create/close cycles"

    def fuzz_clean(self, tmp: Path, iterations: int = 20000, binding: Path | None = None) -> None:
        run = fuzz(binding or NATIVE / self.name / "binding.c", tmp, iterations, kwargs=self.kwargs)
        assert run.returncode == 0 and run.stdout.startswith("ok"), (run.stdout + run.stderr)[-3000:]
        assert not re.search(r"runtime error|AddressSanitizer", run.stderr), run.stderr[-3000:]
