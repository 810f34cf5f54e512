"""MAgent2 (magent2/<env>): grid-world battles and hunts with hundreds of agents per env.

Every agent is one row of a `PettingZooPufferEnv` (battle_v4: 162 rows, gather_v5: 495). Agents
die: a dead agent's row stays, padded (zero observation, reward 0, mask False) until the next
reset; its last live step carries its terminal flag.

Observations are the agent's local view (H, W, C) float32: walls, its team's and the other
teams' presence and hit points (plus minimap channels with `minimap_mode=True`, and id, last action
and reward with `extra_features=True`). Three envs mix agent types with different views and
action counts; PufferLib needs one shared space, so this adapter makes them uniform:

- views are zero-padded around the centre to the largest (adversarial_pursuit: prey 9x9 -> 10x10;
  tiger_deer: deer 3x3 -> 9x9);
- where action counts differ (adversarial_pursuit 13/9, combined_arms 25/9, tiger_deer 9/5), the
  action space is the largest and the observation becomes a Dict of `observation` and
  `action_mask` (1 for the agent's own actions), which the CleanRL policy wrapper and `puffer
  train` honour; an action past an agent's range (only a mask-ignoring sender, e.g. uniform random
  actions) wraps around: agent action = a mod n.

battle, battlefield and gather share one space and stay a plain Box. Seeding: full (MAgent2's C
engine draws the random maps of adversarial_pursuit and tiger_deer from `reset(seed)`; battle,
battlefield and combined_arms start from fixed formations and gather from a fixed layout).
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium
import numpy as np

from pufferlib import PufferEnv
from pufferlib.emulation import PettingZooPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog

Policy = "pufferlib.environments.support.policies:MAgent"
# name -> description. Each is `magent2.environments.<name>` with its own keyword arguments
# (map_size, max_cycles, minimap_mode, extra_features, reward shaping), passed through by make_env.
ENVS = {
    "battle_v4": "two armies of 81 fight (162 agents, 13x13x5 views, 21 actions)",
    "battlefield_v5": "two armies of 12 fight among obstacles (24 agents, 13x13x5 views, 21 actions)",
    "adversarial_pursuit_v4": "25 predators chase 50 prey (75 agents, views padded to 10x10x5, 13 actions)",
    "combined_arms_v6": "melee and ranged units in two armies (162 agents, 13x13x9 views, 25 actions)",
    "gather_v5": "495 omnivores gather food and may fight (15x15x5 views, 33 actions)",
    "tiger_deer_v4": "20 tigers hunt 101 deer (121 agents, views padded to 9x9x5, 9 actions)",
}


class Uniform:
    """A ParallelEnv whose agents share one observation and action space (see the module docstring)."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.metadata = env.metadata
        self.possible_agents = env.possible_agents
        obs = {a: env.observation_space(a) for a in self.possible_agents}
        acts = {a: int(env.action_space(a).n) for a in self.possible_agents}
        self.shape = tuple(max(s.shape[i] for s in obs.values()) for i in range(3))
        self.num_actions = max(acts.values())
        self.masked = len(set(acts.values())) > 1
        self._n = acts
        self._pads = {a: self._pad(s.shape) for a, s in obs.items()}
        self._needs_pad = any(pad is not None for pad in self._pads.values())
        low = min(0.0, *(float(s.low.min()) for s in obs.values()))  # padding is zeros
        high = max(float(s.high.max()) for s in obs.values())
        box = gymnasium.spaces.Box(low, high, self.shape, np.float32)
        if self.masked:
            self._space: gymnasium.Space = gymnasium.spaces.Dict(
                {
                    "observation": box,
                    "action_mask": gymnasium.spaces.Box(0, 1, (self.num_actions,), np.float32),
                }
            )
            self._masks = {a: (np.arange(self.num_actions) < n).astype(np.float32) for a, n in acts.items()}
        else:
            self._space = box
        self._action_space = gymnasium.spaces.Discrete(self.num_actions)

    def _pad(self, shape: tuple[int, ...]) -> tuple | None:
        """The slices of self.shape that centre a view of `shape` (None when it already fits)."""
        if tuple(shape) == self.shape:
            return None
        (h, w, c), (big_h, big_w, _) = shape, self.shape
        top, left = (big_h - h) // 2, (big_w - w) // 2
        return (slice(top, top + h), slice(left, left + w), slice(0, c))

    @property
    def agents(self) -> list:
        return self.env.agents

    def observation_space(self, agent: Any) -> gymnasium.Space:
        return self._space

    def action_space(self, agent: Any) -> gymnasium.Space:
        return self._action_space

    def _obs(self, obs: dict) -> dict:
        if self._needs_pad:
            obs = {a: o if self._pads[a] is None else self._padded(o, self._pads[a]) for a, o in obs.items()}
        if self.masked:
            obs = {a: {"observation": o, "action_mask": self._masks[a]} for a, o in obs.items()}
        return obs

    def _padded(self, view: np.ndarray, where: tuple) -> np.ndarray:
        out = np.zeros(self.shape, np.float32)
        out[where] = view
        return out

    def reset(self, seed: int | None = None, options: dict | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return self._obs(obs), infos

    def step(self, actions: dict):
        if self.masked:
            actions = {a: int(x) % self._n[a] for a, x in actions.items()}
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        return self._obs(obs), rewards, terminations, truncations, infos

    def render(self):
        return self.env.render()

    def close(self) -> None:
        self.env.close()


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """A MAgent2 env by its versioned name; kwargs go to its parallel_env (e.g. map_size=, max_cycles=)."""
    if name not in ENVS:
        raise ValueError(f"Unknown MAgent2 env {name!r}; one of {', '.join(ENVS)}")
    module = importlib.import_module(f"magent2.environments.{name}")
    try:
        env = module.parallel_env(**kwargs)
    except TypeError as e:
        raise ValueError(f"magent2/{name}: invalid options {kwargs}: {e}") from e
    first = env.possible_agents[0]
    obs_space, atn_space = env.observation_space(first), env.action_space(first)
    if any(
        env.observation_space(a) != obs_space or env.action_space(a) != atn_space for a in env.possible_agents
    ):
        env = Uniform(env)
    return PettingZooPufferEnv(env=env, buf=buf, seed=seed)


members = Members(
    "magent2",
    make_env,
    policy=Policy,
    multiagent=True,
    requires=("magent2",),
    smoke=SmokeSpec(steps=64, seconds=180.0),
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


# The registered set (exercised by the integration matrix): the flagship with hundreds of agents and
# one mixed-type env (padding and action masks); the other four are made the same way on demand.
REGISTERED = ("battle_v4", "tiger_deer_v4")


def _binding(name: str) -> Binding:
    return members.bind(
        name,
        description=ENVS[name],
    )


register_catalog(members.family, tuple(ENVS), _binding, registered=REGISTERED)


def bench(name: str = "battle_v4", steps: int = 300, repeats: int = 5) -> None:
    """Print agent-steps/s of a MAgent2 env through PettingZooPufferEnv beside the env alone.

    One run per repeat: the env's own step() is timed inside the emulated run, so "alone" is the
    same steps without the emulation; the difference is what PettingZooPufferEnv costs. Medians.

        python -c "from pufferlib.environments.magent2 import bench; bench()"
    """
    import os
    import statistics
    import time

    rows = []
    for repeat in range(repeats):
        env = make_env(name)
        inner, spent = env.env, [0.0]
        step = inner.step

        def timed(actions, step=step, spent=spent):
            start = time.perf_counter()
            out = step(actions)
            spent[0] += time.perf_counter() - start
            return out

        inner.step = timed
        rng = np.random.default_rng(repeat)
        actions = rng.integers(0, env.single_action_space.n, size=(steps, *env.actions.shape))
        env.reset(seed=repeat)
        agent_steps, start = 0, time.perf_counter()
        for a in actions:
            if env.done:
                env.reset()
                continue
            env.step(a)
            agent_steps += int(env.masks.sum())
        total = time.perf_counter() - start
        env.close()
        rows.append((agent_steps / total, agent_steps / spent[0], (total - spent[0]) / steps * 1e6))
    puffer, alone, overhead = (statistics.median(column) for column in zip(*rows, strict=True))
    load = os.getloadavg()[0]
    print(f"magent2/{name}: {env.num_agents} agents, {steps} steps x {repeats} repeats, load {load:.1f}")
    print(f"  through PettingZooPufferEnv {puffer:10,.0f} agent-steps/s")
    print(f"  the env alone               {alone:10,.0f} agent-steps/s")
    print(f"  emulation                   {overhead:10,.0f} us/step ({1 - puffer / alone:.0%} of the time)")
