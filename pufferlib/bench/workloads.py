"""The envs `puffer bench` times: the same env for every peer, made picklable for worker processes.

The Performance env (`pufferlib.ocean.Performance`) at 0, 10, 100 and 1000 us mean CPU work per
step, with std 0 and 50 % of the mean, and at 0 us with a 64-float observation (the cheap
env: the per-step cost of copying a real observation); MiniGrid DoorKey-8x8; NetHackScore. Our peers step the
registry bindings; gymnasium's vector envs step the raw gymnasium env with the observation our
binding makes (so both see the same observations); PufferLib 2.0.2 steps the Performance env only
(its pins clash with nle and with our gymnasium).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any


def _raw_performance(**kwargs):
    from pufferlib.ocean import Performance

    return Performance(**kwargs)


def _raw_minigrid(name: str):
    import gymnasium
    import minigrid  # noqa: F401  (registers the ids)

    from pufferlib.environments.minigrid import MISSION_LENGTH, MissionBytes

    # the same observation as our binding: image, direction and the mission as bytes
    return MissionBytes(gymnasium.make(name), MISSION_LENGTH)


def _raw_nethack(name: str):
    import gymnasium
    import nle  # noqa: F401

    from pufferlib.environments.nethack import OBSERVATION_KEYS

    return gymnasium.make(name, observation_keys=tuple(OBSERVATION_KEYS), render_mode="ansi")


def _perf_binding(buf=None, seed=0, **kwargs):
    from pufferlib.environments import ocean

    return ocean.make_env("performance", buf=buf, seed=seed, **kwargs)


@dataclass
class Workload:
    name: str
    description: str
    agent_steps: int  # timed agent steps per measurement, the same for every peer
    raw: Any  # a picklable creator of the raw gymnasium env
    binding: str
    requires: tuple[str, ...] = ()
    performance: dict | None = None  # Performance kwargs, for the PufferLib 2.0.2 peer
    ours: Any = None  # a picklable creator of our env (default: the binding's)

    def creator(self):
        if self.ours is None:
            import pufferlib.environments as environments

            self.ours = environments.get(self.binding).env_creator()
        return self.ours


def workloads() -> list[Workload]:
    out = []
    for mean, steps in ((0, 20_000), (10, 20_000), (100, 5_000), (1000, 1_000)):
        for rel in (0.0, 0.5) if mean else (0.0,):
            kw = {"delay_mean": float(mean), "delay_std": mean * rel}
            name = f"perf-{mean}" + ("-std50" if rel else "")
            desc = f"Performance {mean} us" + (f" +- {int(rel * 100)}%" if rel else "")
            raw = functools.partial(_raw_performance, **kw)
            ours = functools.partial(_perf_binding, **kw)
            out.append(Workload(name, desc, steps, raw, "ocean/performance", performance=kw, ours=ours))
    kw = {"delay_mean": 0.0, "delay_std": 0.0, "bandwidth": 64}
    raw, ours = functools.partial(_raw_performance, **kw), functools.partial(_perf_binding, **kw)
    desc = "Performance 0 us, 64 floats"
    out.insert(1, Workload("perf-0-obs64", desc, 20_000, raw, "ocean/performance", performance=kw, ours=ours))
    # A family env: its binding is `<name>/<env id>`, its raw env `raw(env id)`.
    for name, env_id, desc, steps, raw_env, requires in (
        ("minigrid", "MiniGrid-DoorKey-8x8-v0", "MiniGrid DoorKey-8x8", 5_000, _raw_minigrid, ("minigrid",)),
        ("nethack", "NetHackScore-v0", "NetHackScore", 2_000, _raw_nethack, ("nle",)),
    ):
        raw = functools.partial(raw_env, env_id)
        out.append(Workload(name, desc, steps, raw, f"{name}/{env_id}", requires=requires))
    return out
