"""Gymnasium's classic control (classic_control/<id>): CartPole, Acrobot, MountainCar, Pendulum."""

from __future__ import annotations

from typing import Any

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Members, SmokeSpec, register

Policy = "pufferlib.models:Default"
# id -> mean episode return that counts as solved (gymnasium's reward thresholds; Pendulum-v1 has
# none there, -200 is the usual bar for a swing-up that holds the pendulum up)
ENVS: dict[str, float | None] = {
    "CartPole-v1": 475.0,
    "Acrobot-v1": -100.0,
    "MountainCar-v0": -110.0,
    "Pendulum-v1": -200.0,
}


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    import gymnasium

    return GymnasiumPufferEnv(env=gymnasium.make(name, **kwargs), buf=buf, seed=seed)


members = Members("classic_control", make_env, extra="classic", multiagent=False)
env_creator = members.env_creator  # PufferLib's env_creator(name)


for _name, _solved in ENVS.items():
    register(
        members.bind(
            _name,
            smoke=SmokeSpec(steps=256, seconds=120.0, learn=_name == "CartPole-v1"),
            solved=_solved,
            description=f"Gymnasium {_name}",
        )
    )
