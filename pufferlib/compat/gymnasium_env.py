"""to_gymnasium: a single-agent PufferEnv as a gymnasium.Env (passes gymnasium's check_env).

By default the spaces are the PufferEnv's flat ones (what our policies see: a Box observation; a
Discrete, MultiDiscrete or Box action). `structured=True` gives an emulated env's own spaces
instead (nested observations are unpacked from the flat row, nested actions packed into it).
Observations are copies: the PufferEnv overwrites its buffers on the next call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np

from pufferlib import APIUsageError, PufferEnv
from pufferlib import spaces as pspaces
from pufferlib.emulation import nativize


def agent_spaces(
    env: PufferEnv, structured: bool
) -> tuple[gymnasium.Space, gymnasium.Space, Callable, Callable]:
    """(observation space, action space, row -> observation, action -> flat row) of one agent."""
    row_shape = env.actions.shape[1:]
    if not structured:
        return (
            env.single_observation_space,
            env.single_action_space,
            np.array,  # a copy of the row
            lambda action: np.asarray(action).reshape(row_shape),
        )
    if not env.emulated:
        raise APIUsageError(
            f"structured=True needs an emulated env (pufferlib.emulation); {type(env).__name__} is native, "
            "its spaces are already flat: use structured=False"
        )
    obs_space = env.emulated["emulated_observation_space"]
    atn_space = env.emulated["emulated_action_space"]
    struct = env.emulated["observation_dtype"]
    return (
        obs_space,
        atn_space,
        lambda row: nativize(row, obs_space, struct) if struct is not None else np.array(row),
        lambda action: pspaces.flatten_action(action, atn_space).reshape(row_shape),
    )


def merge_infos(infos: Any) -> dict:
    """The PufferEnv's list of info dicts (usually one, at episode end) as one dict."""
    if isinstance(infos, dict):
        return dict(infos)
    merged: dict = {}
    for info in infos or ():
        merged.update(info)
    return merged


def wrapped_attr(env: Any, name: str, default: Any) -> Any:
    """An attribute of the env an emulated PufferEnv wraps (render_mode, metadata), else default."""
    inner = getattr(env, "env", None)
    value = getattr(inner, name, None) if inner is not None else None
    return default if value is None else value


class GymnasiumEnv(gymnasium.Env):
    """A gymnasium.Env over a PufferEnv with one agent row."""

    def __init__(self, env: PufferEnv, structured: bool = False) -> None:
        if int(env.num_agents) != 1:
            raise APIUsageError(
                f"to_gymnasium needs a single-agent env; {type(env).__name__} has {env.num_agents} agent "
                "rows. Use pufferlib.compat.to_pettingzoo(env) for multi-agent envs, or GymnasiumVectorEnv "
                "for a native multi-env"
            )
        self.env = env
        self.observation_space, self.action_space, self._obs, self._act = agent_spaces(env, structured)
        self.metadata = {"render_modes": [], **dict(wrapped_attr(env, "metadata", {}))}
        self.render_mode = wrapped_attr(env, "render_mode", None)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)  # seeds self.np_random, as gymnasium expects of every env
        self.env.reset(seed)
        return self._obs(self.env.observations[0]), {}

    def step(self, action: Any):
        _, rewards, terminals, truncations, infos = self.env.step(self._act(action)[None])
        return (
            self._obs(self.env.observations[0]),
            float(rewards[0]),
            bool(terminals[0]),
            bool(truncations[0]),
            merge_infos(infos),
        )

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


def to_gymnasium(env: PufferEnv, structured: bool = False) -> GymnasiumEnv:
    """A single-agent PufferEnv (any binding's make_env()) as a gymnasium.Env."""
    return GymnasiumEnv(env, structured=structured)
