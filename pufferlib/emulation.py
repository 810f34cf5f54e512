"""Gymnasium and PettingZoo environments as flat, fixed-shape PufferEnvs.

Observations of any nesting are written into one flat row per agent (see pufferlib.spaces);
structured actions arrive as one MultiDiscrete row and are unflattened before the env sees them
(a top-level Discrete or Box action space stays what it is). PettingZoo envs get a fixed
population: `possible_agents` in sorted order, with absent agents padded (zero observation,
reward 0, mask False).

Episode semantics: when an episode ends, `done` is set and the next call must be `reset()`;
`step()` then raises `APIUsageError`. Vector backends (and `PufferEnv.send`) reset on the send
after a done, consuming no action for that slot. Episode statistics (return, length and the
env's own numeric infos, last value seen) are returned in `infos` at episode end only.

Checks of the env's outputs against its declared spaces run once, on the first reset and step;
the per-step checks are constant-time (a flag, a shape compare and one vectorized bound test).
An observation leaf of another numeric dtype than declared (float64 for a float32 Box, as many
hand-written envs return) is cast into the buffer with one warning naming the leaf; only values
the declared dtype cannot represent are refused. An env whose reset() takes no `seed` is reset
without it and seeded through `env.seed(seed)` and its action space, where it has them.
"""

from __future__ import annotations

import contextlib
from numbers import Number
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from pufferlib import APIUsageError, InvalidAgentError
from pufferlib import spaces as pspaces
from pufferlib.emulation_base import CheckedStep, _Emulated, make_object  # noqa: F401  (PufferLib API: emulation.make_object)


def numeric_items(info: Any) -> dict[str, float]:
    """The scalar numbers of an info dict (one level of nesting flattened as 'a/b')."""
    out: dict[str, float] = {}
    if not isinstance(info, dict):
        return out
    for key, value in info.items():
        if isinstance(value, dict):
            for sub, v in numeric_items(value).items():
                out[f"{key}/{sub}"] = v
        elif isinstance(value, bool | Number | np.bool_ | np.number):
            out[str(key)] = float(value)
        elif isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "biuf":
            out[str(key)] = float(value.reshape(()))
    return out


class GymnasiumPufferEnv(_Emulated):
    """A single-agent Gymnasium env as a PufferEnv with flat, fixed-shape buffers.

    `autoreset = True` (pufferlib.compat sets it for same-step vector envs) resets the env inside
    the step that ends an episode, as native envs do: the step keeps its reward and flags, the
    buffer holds the next episode's first observation and the info carries `final_observation`.
    """

    autoreset = False

    def _bind(self, buf: Any, seed: int) -> None:
        spec = getattr(self.env, "spec", None)
        self.name = getattr(spec, "id", None) or type(getattr(self.env, "unwrapped", self.env)).__name__
        self.num_agents = 1
        self._setup(self.env.observation_space, self.env.action_space, buf, seed)

    def reset(self, seed: int | None = None):
        ob, _ = self._reset_env(self._first_seed(seed))
        if not self._initialized:
            self._check_observation(ob)
        self._write(0, ob)
        self.rewards[:] = 0
        self.terminals[:] = False
        self.truncations[:] = False
        self.masks[:] = True
        self._initialized = True
        self.done = False
        self._start_episode()
        return self.observations, []

    def _start_episode(self) -> None:
        self._episode_return = 0.0
        self._episode_length = 0
        self._episode_info: dict[str, float] = {}

    def step(self, action):
        if self._atn_start is None:
            infos = self._step_rows(self._validate_actions(action))
        else:  # a top-level Discrete action: one int
            value = action
            if type(value) is not int:
                try:  # noqa: SIM105 (contextlib.suppress costs more than this whole check)
                    value = value.item()  # a one-element numpy array or scalar
                except (AttributeError, ValueError):
                    pass
            if type(value) is not int or not 0 <= value < self._atn_n or self.done or not self._initialized:
                # not a plain in-range int: accepted as one (e.g. 1.0), or the error says what is wrong
                value = int(self._validate_actions(action).reshape(-1)[0])
            infos = self._step_native(value + self._atn_start)
        return self.observations, self.rewards, self.terminals, self.truncations, infos

    def checked_step(self) -> CheckedStep | None:
        """The public hook of the vector backends: step() without its per-env checks, for actions
        checked for the whole batch (see CheckedStep). For a top-level Discrete action space it
        takes one int, the env's own action. None where a subclass overrides step(): its own
        step() then runs (a subclass that also overrides checked_step offers its own)."""
        if type(self).step is not GymnasiumPufferEnv.step:
            return None
        if self._atn_start is None:
            return CheckedStep(self._step_rows)
        return CheckedStep(self._step_native, self._atn_start)

    def _step_rows(self, actions: np.ndarray) -> list:
        """step() with checked actions: the (1, ...) row of the flat action space."""
        return self._step_native(self._native_action(actions[0]))

    def _step_native(self, action: Any) -> list:
        """Step the env with a checked action in its own space; returns the infos (one dict at an
        episode's end). checked_step() hands it to the vector backends for a Discrete action space."""
        ob, reward, terminated, truncated, info = self.env.step(action)
        view = self._obs_view
        if view is None:
            if not self._first_step_checked:
                self._check_observation(ob)
                self._first_step_checked = True
                self._obs_view = self._fast_observation(ob)
            self._write(0, ob)
        else:
            try:
                view[:] = ob
            except (TypeError, ValueError):  # not the kind of array of the first step: numpy casts
                self._obs_view = None
                self._write(0, ob)
        rewards, terminals, truncations = self._outcome_views
        try:
            rewards[0] = reward
            terminals[0] = terminated
            truncations[0] = truncated
        except (TypeError, ValueError, OverflowError):  # e.g. a reward given as a string: numpy parses it
            self.rewards[0] = reward
            self.terminals[0] = terminated
            self.truncations[0] = truncated
        self._episode_return += float(reward)
        self._episode_length += 1
        if info:
            self._episode_info.update(numeric_items(info))
        if terminated or truncated:
            return self._end_episode()
        return []

    def _end_episode(self) -> list:
        info = {
            **self._episode_info,
            "episode_return": self._episode_return,
            "episode_length": self._episode_length,
        }
        if self.autoreset:  # same-step autoreset: the final observation travels in the info
            info["final_observation"] = self.observations[0].copy()
            self._write(0, self._reset_env(None)[0])
            self._start_episode()
        else:
            self.done = True
        return [info]


class PettingZooPufferEnv(_Emulated):
    """A PettingZoo ParallelEnv as a PufferEnv with a fixed, sorted population of agents."""

    def _bind(self, buf: Any, seed: int) -> None:
        self.name = getattr(self.env, "metadata", {}).get("name") or type(self.env).__name__
        try:
            self.possible_agents = sorted(self.env.possible_agents)
        except TypeError:
            self.possible_agents = list(self.env.possible_agents)
        if not self.possible_agents:
            raise APIUsageError(f"{self.name}: possible_agents is empty")
        first = self.possible_agents[0]
        obs_space, atn_space = self.env.observation_space(first), self.env.action_space(first)
        for agent in self.possible_agents[1:]:
            if self.env.observation_space(agent) != obs_space or self.env.action_space(agent) != atn_space:
                raise APIUsageError(
                    f"{self.name}: agent {agent!r} has different spaces from {first!r}; PufferLib needs "
                    "one shared observation and action space (pad or transform them in a wrapper)"
                )
        self.num_agents = len(self.possible_agents)
        self._index = {agent: i for i, agent in enumerate(self.possible_agents)}
        self._row_cache: dict[tuple, np.ndarray] = {}
        self._setup(obs_space, atn_space, buf, seed)
        self._stacked = None  # the Box observation buffer as one run of its rows' leading axis (a view)
        if self.obs_dtype is None and self.observations.ndim > 1:
            stacked = self.observations.view()
            with contextlib.suppress(AttributeError):  # a buffer that is not contiguous: no fast path
                stacked.shape = (-1, *self.observations.shape[2:])
                self._stacked = stacked
        self._discrete_start = int(atn_space.start) if isinstance(atn_space, spaces.Discrete) else None
        # A Dict of leaves (e.g. observation + action_mask) is written one field at a time for all agents.
        flat_dict = isinstance(obs_space, spaces.Dict) and all(
            isinstance(sub, pspaces.LEAF_SPACES) for sub in obs_space.spaces.values()
        )
        self._dict_keys = [(str(k), k) for k in obs_space.spaces] if flat_dict else None

    @property
    def agents(self) -> list:
        return self.env.agents

    def _rows(self, agents) -> np.ndarray:
        """Buffer rows of `agents` (an iterable of agent ids), cached per sequence of ids: the
        population changes rarely, and envs with hundreds of agents (MAgent2) pay for every lookup."""
        key = tuple(agents)
        rows = self._row_cache.get(key)
        if rows is None:
            missing = [agent for agent in key if agent not in self._index]
            if missing:
                raise InvalidAgentError(missing[0], self.possible_agents, self.name)
            rows = np.fromiter((self._index[agent] for agent in key), np.intp, len(key))
            if len(self._row_cache) >= 256:  # populations that keep changing (deaths): bound the cache
                self._row_cache.clear()
            self._row_cache[key] = rows
        return rows

    def _row_order(self, obs: dict, rows: np.ndarray) -> list[int]:
        """Positions of `obs`'s values in buffer-row order (cached with the rows)."""
        key = ("order", tuple(obs))
        order = self._row_cache.get(key)
        if order is None:
            order = self._row_cache[key] = np.argsort(rows).tolist()
        return order

    def _write_all(self, obs: dict) -> None:
        rows = self._rows(obs)
        self.masks[:] = False
        self.masks[rows] = True
        if self._stacked is not None and len(rows) == self.num_agents and np.ndim(next(iter(obs.values()))):
            # Every agent, Box observations: one copy, straight into the buffer in row order.
            order = self._row_order(obs, rows)
            values = list(obs.values())
            np.concatenate([values[i] for i in order], out=self._stacked)
        elif self.obs_dtype is None and len(rows) > 1:  # Box observations: one bulk write
            values = list(obs.values())
            staged = np.concatenate(values) if np.ndim(values[0]) else np.array(values)
            self.observations[rows] = staged.reshape(len(rows), *self.observations.shape[1:])
        elif self._dict_keys is not None and len(rows) > 1:  # a Dict of leaves: one write per field
            values = list(obs.values())
            for field, key in self._dict_keys:
                self._struct[field][rows] = np.array([ob[key] for ob in values])
        else:
            for i, ob in zip(rows.tolist(), obs.values(), strict=True):
                self._write(i, ob)
        if len(rows) < self.num_agents:
            self.observations[~self.masks] = 0

    def reset(self, seed: int | None = None):
        obs, _ = self._reset_env(self._first_seed(seed))
        if not self._initialized:
            for agent, ob in obs.items():
                self._check_observation(ob, agent)
        self._write_all(obs)
        self.rewards[:] = 0
        self.terminals[:] = False
        self.truncations[:] = False
        self._initialized = True
        self.done = False
        self._episode_returns = np.zeros(self.num_agents, dtype=np.float64)
        self._episode_length = 0
        self._episode_info: dict[Any, dict[str, float]] = {}
        return self.observations, []

    def step(self, actions):
        infos = self._step_rows(self._validate_actions(actions))
        return self.observations, self.rewards, self.terminals, self.truncations, infos

    def checked_step(self) -> CheckedStep | None:
        """The public hook of the vector backends: step() without its per-env checks, for actions
        checked for the whole batch (see CheckedStep). None where a subclass overrides step(): its
        own step() then runs (a subclass that also overrides checked_step offers its own)."""
        if type(self).step is not PettingZooPufferEnv.step:
            return None
        return CheckedStep(self._step_rows)

    def _step_rows(self, actions: np.ndarray) -> list:
        """step() with checked actions, one row per agent of the population; returns the infos."""
        live = list(self.env.agents)
        live_rows = self._rows(live)
        obs, rewards, terminated, truncated, info = self.env.step(self._action_dict(live, live_rows, actions))
        if not self._first_step_checked:
            for agent, ob in obs.items():
                self._check_observation(ob, agent)
            self._first_step_checked = True
        self._write_all(obs)
        self._scatter(self.rewards, rewards)
        self._scatter(self.terminals, terminated)
        self._scatter(self.truncations, truncated)
        self._episode_returns += self.rewards
        self._episode_length += 1
        for agent, agent_info in (info or {}).items():
            if agent_info:
                self._episode_info.setdefault(agent, {}).update(numeric_items(agent_info))

        infos = []
        if not self.env.agents or (live and (self.terminals[live_rows] | self.truncations[live_rows]).all()):
            self.done = True
            per_key: dict[str, list[float]] = {}
            for agent_stats in self._episode_info.values():
                for key, value in agent_stats.items():
                    per_key.setdefault(key, []).append(value)
            stats = {key: float(np.mean(values)) for key, values in per_key.items()}
            infos.append(
                {
                    **stats,
                    "episode_return": float(self._episode_returns.mean()),
                    "episode_length": self._episode_length,
                }
            )
        return infos

    def _action_dict(self, live: list, rows: np.ndarray, actions: np.ndarray) -> dict:
        """{agent: native action} for the live agents; Discrete and Box spaces in one numpy step."""
        if self._discrete_start is not None:
            values = actions[rows].reshape(len(rows), -1)[:, 0] + self._discrete_start
            return dict(zip(live, values.tolist(), strict=True))
        if self._box_bounds is not None:
            native = np.clip(actions[rows], *self._box_bounds).astype(
                self._native_atn_space.dtype, copy=False
            )
            return dict(zip(live, native, strict=True))
        return {agent: self._native_action(actions[i]) for agent, i in zip(live, rows.tolist(), strict=True)}

    def _scatter(self, buffer: np.ndarray, values: dict) -> None:
        """buffer[row of agent] = value for each agent of `values`; 0 for the rows it omits."""
        buffer[:] = 0
        if not values:
            return
        if isinstance(next(iter(values.values())), np.ndarray):  # e.g. 1-element reward arrays
            data = np.array([np.reshape(v, ()) for v in values.values()], dtype=buffer.dtype)
        else:
            data = np.fromiter(values.values(), buffer.dtype, len(values))
        buffer[self._rows(values)] = data


def nativize(sample: np.ndarray, space: gymnasium.Space, struct_dtype: np.dtype | None) -> Any:
    """PufferLib's name: one flat observation row back in the env's own (nested) structure.

    `space` and `struct_dtype` are `env.emulated["emulated_observation_space"]` and
    `["observation_dtype"]`; a Box observation (struct_dtype None) is returned as it is.
    """
    if struct_dtype is None:
        return sample
    struct = np.ascontiguousarray(sample).view(struct_dtype).reshape(-1)[0]
    if not isinstance(space, pspaces.STRUCT_SPACES):
        return pspaces.read_observation(struct, space)[()]
    return pspaces.read_observation(struct, space)


GymPufferEnv = GymnasiumPufferEnv  # PufferLib's older name
