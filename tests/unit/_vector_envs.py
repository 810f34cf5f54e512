"""Small envs and process checks for the test_vector_* files (module level, so spawn can pickle them)."""

from __future__ import annotations

import os
import time

import gymnasium
import numpy as np

from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.spaces import sample_action


class Counter(gymnasium.Env):
    """Observation [id, tick, last action]; id is the seed of the last seeded reset: rows say whose they are.

    Reward is the action; the episode is truncated after `horizon` steps. `fail_at` raises in step()
    at that tick; `sleep_s` sleeps in every step (a slow env, for async ordering).
    """

    def __init__(self, horizon: int = 5, fail_at: int | None = None, sleep_s: float = 0.0):
        self.observation_space = gymnasium.spaces.Box(-1e9, 1e9, (3,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(4)
        self.horizon, self.fail_at, self.sleep_s = horizon, fail_at, sleep_s
        self.id = -1

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.id = seed
        self.tick = 0
        return np.array([self.id, 0, -1], np.float32), {}

    def step(self, action):
        self.tick += 1
        if self.fail_at is not None and self.tick == self.fail_at:
            raise RuntimeError(f"counter {self.id} failed on purpose at tick {self.tick}")
        if self.sleep_s:
            time.sleep(self.sleep_s)
        obs = np.array([self.id, self.tick, action], np.float32)
        return obs, float(action), False, self.tick >= self.horizon, {"tick": self.tick}


def counter(buf=None, seed=0, **kwargs) -> GymnasiumPufferEnv:
    return GymnasiumPufferEnv(env=Counter(**kwargs), buf=buf, seed=seed)


def counter_exiting_in_env_3(buf=None, seed=0):
    """Env 3's process exits abruptly (like a crash in native code) at its second step."""
    env = counter(buf=buf, seed=seed)
    if seed == 3:
        env.env.step = lambda action: os._exit(7) if env.env.tick >= 1 else Counter.step(env.env, action)
    return env


def counter_failing_in_env_2(buf=None, seed=0, fail_at=3):
    """Env 2 (seed 2 with make(seed=0)) raises at tick `fail_at`; the others run normally."""
    return counter(buf=buf, seed=seed, fail_at=fail_at if seed == 2 else None)


def broken_creator(buf=None, seed=0):
    raise ValueError(f"cannot build env with seed {seed}")


def _processes():
    """(pid, the fields of /proc/PID/stat after the name, the command line) of every live process,
    not counting zombies nor multiprocessing's own resource tracker / forkserver."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and b"resource_tracker" not in cmd and b"forkserver" not in cmd:
            yield int(entry), fields


def children(pid: int | None = None) -> set[int]:
    """Live child processes of `pid`."""
    pid = os.getpid() if pid is None else pid
    return {child for child, fields in _processes() if int(fields[1]) == pid}


def session(sid: int) -> set[int]:
    """Live processes of session `sid`: a command started with start_new_session, and the workers it
    started, which keep its session even when they outlive it."""
    return {member for member, fields in _processes() if int(fields[3]) == sid}


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def shm_entries() -> set[str]:
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def wait_until(predicate, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def random_actions(env, rng: np.random.Generator) -> np.ndarray:
    """Seeded random actions for every agent row of a PufferEnv or a vector env (pufferlib.spaces)."""
    return sample_action(env.single_action_space, rng, getattr(env, "agents_per_batch", env.num_agents))


def raw_counter(**kwargs) -> Counter:
    """A creator of the raw gymnasium env: the vector backends wrap it themselves."""
    return Counter(**kwargs)


def counter_without_buf(**kwargs) -> GymnasiumPufferEnv:
    """A PufferEnv creator that takes no buf: its rows are copied into the vector's buffer."""
    return GymnasiumPufferEnv(env=Counter(**kwargs), seed=0)


def raw_multiagent():
    from pufferlib.ocean import Multiagent

    return Multiagent(horizon=3)
