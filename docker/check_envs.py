"""Build-time check of the envs stage: every environment package imports, makes an env, resets and steps.

Runs inside the image during `docker build`, so a broken package or a missing system library fails the
build (naming the package), not a researcher's first run. Offline: the Atari ROMs ship with ale-py.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame-ce: no display in a build


def gymnasium_env(env_id: str, module: str | None = None) -> Callable[[], None]:
    def check() -> None:
        import gymnasium

        if module:
            __import__(module)
        env = gymnasium.make(env_id)
        try:
            env.reset(seed=0)
            env.step(env.action_space.sample())
        finally:
            env.close()

    return check


def procgen() -> None:
    import numpy as np
    from procgen import ProcgenGym3Env

    env = ProcgenGym3Env(num=1, env_name="coinrun")
    env.act(np.zeros(1, dtype=np.int32))
    env.observe()


def butterfly() -> None:
    from pettingzoo.butterfly import pistonball_v6

    env = pistonball_v6.parallel_env()
    try:
        env.reset(seed=0)
        env.step({agent: env.action_space(agent).sample() for agent in env.agents})
    finally:
        env.close()


def gym_legacy() -> None:
    import gym  # procgen's old API needs gym<1

    assert gym.__version__.startswith("0.26"), gym.__version__


CHECKS: dict[str, Callable[[], None]] = {
    "gymnasium (classic control)": gymnasium_env("CartPole-v1"),
    "ale-py (Atari)": gymnasium_env("ALE/Pong-v5", module="ale_py"),
    "minigrid": gymnasium_env("MiniGrid-Empty-5x5-v0", module="minigrid"),
    "nle (NetHack)": gymnasium_env("NetHackScore-v0", module="nle"),
    "minihack": gymnasium_env("MiniHack-Room-5x5-v0", module="minihack"),
    "procgen2 (procgen)": procgen,
    "pettingzoo butterfly": butterfly,
    "gym (legacy, for procgen)": gym_legacy,
    "rich": lambda: __import__("rich.console"),
    "ray (pufferlib.vector.Ray)": lambda: __import__("ray"),
}


def main() -> int:
    failed: list[str] = []
    for name, check in CHECKS.items():
        start = time.perf_counter()
        try:
            check()
        except Exception:
            failed.append(name)
            print(f"check_envs: FAIL {name}\n{traceback.format_exc()}", file=sys.stderr)
        else:
            print(f"check_envs: ok   {name} ({time.perf_counter() - start:.1f} s)")
    if failed:
        print(
            f"check_envs: {len(failed)} environment package(s) broken: {', '.join(failed)}", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
