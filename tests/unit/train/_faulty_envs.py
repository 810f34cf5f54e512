"""Bindings that fail mid-run, one way each, for the failure tests (PUFFERLIB_PLUGINS=_faulty_envs
in a subprocess, so the test session's registry stays as shipped):

faulty/crash  raises in step() after FAULT_AFTER steps (default 200): under multiprocessing the
              worker dies and the trainer gets pufferlib.vector's WorkerError
faulty/nan    rewards turn NaN after FAULT_AFTER steps: the next update's loss is NaN
faulty/hang   sleeps for ever in step() after FAULT_AFTER steps: under multiprocessing a hung worker
faulty/sigterm  sends its own process SIGTERM at step FAULT_AFTER (in the trainer's process under the
              serial backend: a stop mid-rollout), or at its first reset with FAULT_AFTER=0 (a stop
              after the run directory was made, before the first update)
"""

import os
import signal
import time

import gymnasium
import numpy as np

from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, register

AFTER = int(os.environ.get("FAULT_AFTER", "200"))


class Countdown(gymnasium.Env):
    """Observation: a random point; reward 1 for action 1; episodes of 8 steps."""

    observation_space = gymnasium.spaces.Box(-1, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, fault: str) -> None:
        self.fault, self.steps, self.t = fault, 0, 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        if self.fault == "sigterm" and AFTER == 0 and self.steps == 0:
            self.steps = -1  # once
            os.kill(os.getpid(), signal.SIGTERM)
        return self.np_random.uniform(-1, 1, 2).astype(np.float32), {}

    def step(self, action):
        self.steps += 1
        self.t += 1
        reward = float(action)
        if self.fault == "sigterm":
            if self.steps == AFTER:
                os.kill(os.getpid(), signal.SIGTERM)
        elif self.steps > AFTER:
            while self.fault == "hang":
                time.sleep(60)
            if self.fault == "crash":
                raise RuntimeError(f"the simulator crashed after {AFTER} steps")
            reward = float("nan")
        return self.np_random.uniform(-1, 1, 2).astype(np.float32), reward, self.t >= 8, False, {}


def make_crash(buf=None, seed=0):
    return GymnasiumPufferEnv(env=Countdown("crash"), buf=buf, seed=seed)


def make_nan(buf=None, seed=0):
    return GymnasiumPufferEnv(env=Countdown("nan"), buf=buf, seed=seed)


def make_hang(buf=None, seed=0):
    return GymnasiumPufferEnv(env=Countdown("hang"), buf=buf, seed=seed)


def make_sigterm(buf=None, seed=0):
    return GymnasiumPufferEnv(env=Countdown("sigterm"), buf=buf, seed=seed)


register(Binding(name="faulty/crash", make=make_crash, extra=""))
register(Binding(name="faulty/nan", make=make_nan, extra=""))
register(Binding(name="faulty/hang", make=make_hang, extra=""))
register(Binding(name="faulty/sigterm", make=make_sigterm, extra=""))
