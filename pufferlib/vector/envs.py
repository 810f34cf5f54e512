"""The envs of one process over consecutive rows of one buffer: Serial's, a worker's, an actor's.

The vector env checks a whole batch's actions at once (VectorEnv._check_actions); an emulated env
then offers a step that skips its own per-env checks (`checked_step()`, pufferlib.emulation).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import gymnasium

from pufferlib import BUFFER_NAMES, APIUsageError, PufferEnv
from pufferlib.vector.creators import Creators, build_env, check_spec

if TYPE_CHECKING:
    from pufferlib.emulation_base import CheckedStep


def allocate(num_agents: int, obs_space: gymnasium.Space, atn_space: gymnasium.Space) -> SimpleNamespace:
    from pufferlib import allocate_buffers

    return allocate_buffers(num_agents, obs_space, atn_space)


def rows(buf: Any, lo: int, hi: int) -> SimpleNamespace:
    return SimpleNamespace(**{name: getattr(buf, name)[lo:hi] for name in BUFFER_NAMES})


def checked_step(env: PufferEnv) -> CheckedStep | None:
    """How a vector backend steps `env` once the batch's actions are checked: the hook of an env
    class that defines checked_step() (the emulated envs, see pufferlib.emulation_base.CheckedStep), else
    None: env.step(env.actions). Looked up on the class, so that a wrapper forwarding attributes to
    an inner env is stepped through its own step()."""
    return env.checked_step() if hasattr(type(env), "checked_step") else None


class Envs:
    """Consecutive envs of one process over consecutive rows of one buffer (Serial, a worker, an actor).

    Episode ends: an emulated env that finished (`done`) is reset by the next step call instead of
    stepped, consuming no action for its rows; native envs reset themselves.
    """

    def __init__(
        self, creators: Creators, seeds: Sequence[int | None], buf: Any, spec: tuple, first_env_id: int = 0
    ) -> None:
        self.agents = spec[2]
        self.first = first_env_id
        self.envs: list[PufferEnv] = []
        for i, (c, a, k, s) in enumerate(zip(*creators, seeds, strict=True)):
            env_buf = rows(buf, i * self.agents, (i + 1) * self.agents)
            try:
                try:
                    env = build_env(c, a, k, env_buf, s)
                except APIUsageError as e:  # typically its buffers do not fit env 0's layout
                    raise APIUsageError(
                        f"creating env {first_env_id + i}: {e}. Every env of a vector env needs the spaces "
                        "and number of agents of env 0"
                    ) from e
                check_spec(env, spec, first_env_id + i)
            except Exception as e:
                e.add_note(f"while creating env {first_env_id + i}")
                self.close()
                raise
            self.envs.append(env)
        self.actions = buf.actions
        # Each env's action rows of the buffer, as the vector writes them. An env is stepped with these, not
        # with its own `actions` attribute: an env may rebind that to an array of its own (PufferLib 3.0's
        # boids keeps a float copy it overwrites), and would then never see the vector's actions.
        self._action_rows = [
            buf.actions[i * self.agents : (i + 1) * self.agents] for i in range(len(self.envs))
        ]
        # The actions of a whole batch were checked by the vector env (VectorEnv._check_actions), so
        # emulated envs skip their per-env checks. When every env is one agent with the same
        # Discrete action space, a call reads the actions as ints once and hands each env its own.
        hooks = [checked_step(env) for env in self.envs]
        self._steps = [None if hook is None else hook.step for hook in hooks]
        starts = {None if hook is None else hook.discrete_start for hook in hooks}
        self.discrete = None
        if self.agents == 1 and hooks and None not in starts and len(starts) == 1:
            self.discrete, self._shift = self._steps, starts.pop()

    def reset(self, seeds: Sequence[int | None], lo: int = 0, hi: int | None = None) -> list:
        infos: list = []
        for k in range(lo, len(self.envs) if hi is None else hi):
            try:
                got = self.envs[k].reset(seeds[k - lo])[1]
            except Exception as e:
                e.add_note(f"in reset() of env {self.first + k}")
                e.env_id = self.first + k  # type: ignore[attr-defined]
                raise
            if got:
                infos.extend(got if isinstance(got, list) else [got])
        return infos

    def step(self, lo: int = 0, hi: int | None = None, ints: list[int] | None = None) -> list:
        """Step (or reset, when done) envs lo..hi with the actions in the buffer, or for one-agent
        Discrete envs with `ints` when given (their checked values); returns their infos."""
        infos: list = []
        envs = self.envs
        hi = len(envs) if hi is None else hi
        k = lo
        try:
            if self.discrete is not None:
                steps, values = self.discrete, self.actions[lo:hi].tolist() if ints is None else ints
                if self._shift:
                    values = [v + self._shift for v in values]
                for k in range(lo, hi):
                    env = envs[k]
                    got = env.reset()[1] if env.done else steps[k](values[k - lo])
                    if got:
                        infos.extend(got)
                return infos
            steps = self._steps
            for k in range(lo, hi):
                env = envs[k]
                if env.done:
                    got = env.reset()[1]
                elif steps[k] is not None:
                    got = steps[k](self._action_rows[k])
                else:
                    got = env.step(self._action_rows[k])[4]
                if got:
                    infos.extend(got if isinstance(got, list) else [got])
        except Exception as e:
            e.add_note(f"in step() of env {self.first + k}")
            e.env_id = self.first + k  # type: ignore[attr-defined]
            raise
        return infos

    def close(self) -> None:
        for env in self.envs:
            with contextlib.suppress(Exception):  # closing must go on for the other envs
                env.close()
        self.envs = []
