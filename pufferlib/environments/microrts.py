"""Gym-MicroRTS (microrts/<map>): the MicroRTS real-time strategy game as one native multi-env PufferEnv.

gym-microrts 0.4.3 ships MicroRTS's jars and drives them through JPype: its `JNIGridnetVecClient` steps
`num_envs` games against bots in one Java call. Its Python wrappers are written for gym 0.18 and NumPy
< 1.24 (`np.int`), so this adapter drives the Java client directly, as procgen.py drives gym3: each
game is one agent row (num_agents = num_envs), played as player 0 against a built-in bot.

Gridnet actions: every map cell gets one unit action, MultiDiscrete([6, 4, 4, 4, 4, 7, 49]) per cell
(action type: noop, move, harvest, return, produce, attack; move, harvest, return and produce
directions; the unit type to produce; the attack target, relative, in a 7x7 window), all cells
concatenated: h*w*7 branches. Only the cells holding a unit of ours that can act now are sent.

Observations: a Dict of `obs`, (h, w, 27) uint8 one-hot planes per cell (hit points 0..>=4,
resources 0..>=4, owner none/us/them, unit type none + 7, current action 6), and `action_mask`,
the game's invalid-action masks, one 0/1 per action of every branch (h*w*78). A branch with no
legal action (a cell with no unit of ours, or a parameter its action type does not use) allows
only action 0, so it adds nothing to the log-prob. The emulation's layout (`env.emulated`) is set
as the emulated envs set it, so the trainer and `puffer eval` never sample a masked action.

Reward: gym-microrts' six reward functions weighted as its PPO paper (win/loss 10, resources
gathered 1, workers produced 1, buildings 0.2, attacks 1, combat units 4). A won or lost game is a
terminal, `max_steps` (default 2000) a truncation; games reset themselves in Java, so the
observation that comes with an end is the first of the next game.

Seeding: partial. Maps and starts are fixed and the game is deterministic, but MicroRTS's random
bots (`randomBiasedAI`, `randomAI`) draw from Java's unseeded Random; against the scripted bots
(`workerRushAI`, `lightRushAI`, `passiveAI`, ...) the same actions give the same games.

The games run in a child process of each env (pufferlib.environments.support.child, a fresh interpreter
with a JVM of its own): JPype allows one JVM per process, never restarted, and a JVM does not survive
fork(), so a vector worker forked from a process whose JVM ran would hang in its first Java call.
Rendering needs AWT with a display, so there are no frames here.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from pufferlib import EnvironmentSetupError, PufferEnv
from pufferlib import spaces as pspaces
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog
from pufferlib.environments.support import child
from pufferlib.environments.support.batched import BatchedGames

Policy = "pufferlib.models:Default"
JARS = ("microrts.jar", "Coac.jar", "Droplet.jar", "GRojoA3N.jar", "Izanagi.jar", "MixedBot.jar",
        "RojoBot.jar", "TiamatBot.jar", "UMSBot.jar")  # fmt: skip
JDK_HINT = "apt-get install -y openjdk-17-jre-headless (MicroRTS runs on a JVM; the PufferTank image has one)"
UNIT_ACTION = (6, 4, 4, 4, 4, 7, 49)  # action type, 4 directions, unit type to produce, attack target
PLANES = (5, 5, 3, 8, 6)  # hit points, resources, owner, unit type (+ none), current action
REWARD_WEIGHTS = (10.0, 1.0, 1.0, 0.2, 1.0, 4.0)
# map name -> its file under gym-microrts' microrts/maps
MAPS = {
    "4x4": "maps/4x4/baseTwoWorkers4x4.xml",
    "8x8": "maps/8x8/basesWorkers8x8.xml",
    "10x10": "maps/10x10/basesWorkers10x10.xml",
    "16x16": "maps/16x16/basesWorkers16x16.xml",
    "24x24": "maps/24x24/basesWorkers24x24.xml",
}
# bot name -> the Java class gym_microrts.microrts_ai builds (the ones that need no extra setup)
BOTS = ("randomBiasedAI", "randomAI", "passiveAI", "workerRushAI", "lightRushAI", "coacAI", "naiveMCTSAI")
REGISTERED = ("4x4", "8x8", "10x10")
LEARN = "4x4"  # the learning task (pufferlib/train/configs/microrts.4x4.toml): win against passiveAI
START_TIMEOUT = 120.0  # seconds for the child to start its JVM and the games


def _root() -> Path:
    spec = importlib.util.find_spec("gym_microrts")
    if spec is None or not spec.submodule_search_locations:
        raise EnvironmentSetupError("microrts needs gym-microrts: pip install 'pufferlib[microrts]'")
    return Path(next(iter(spec.submodule_search_locations))) / "microrts"


@functools.cache
def _jvm() -> None:
    """Start the one JVM of this process with MicroRTS's jars (JPype cannot restart it)."""
    import jpype
    from jpype.imports import registerDomain

    if jpype.isJVMStarted():
        return
    try:
        jpype.getDefaultJVMPath()
    except jpype.JVMNotFoundException:
        raise EnvironmentSetupError(
            f"microrts needs a Java runtime, and none was found: {JDK_HINT}"
        ) from None
    registerDomain("ts", alias="tests")
    registerDomain("ai")
    for jar in JARS:
        jpype.addClassPath(str(_root() / jar))
    jpype.startJVM("-Djava.awt.headless=true", convertStrings=False)


def _bot(name: str, utt: Any) -> Any:
    from gym_microrts import microrts_ai

    return getattr(microrts_ai, name)(utt)


class MicroRTS(BatchedGames):
    """`num_envs` MicroRTS games on one map, each against `opponent` (a MicroRTS bot)."""

    family = "microrts"

    def __init__(
        self,
        name: str = "8x8",
        num_envs: int = 1,
        buf: Any = None,
        seed: int = 0,
        opponent: str = "workerRushAI",
        max_steps: int = 2000,
        reward_weights: tuple[float, ...] = REWARD_WEIGHTS,
    ) -> None:
        if name not in MAPS:
            raise ValueError(f"Unknown MicroRTS map {name!r}; one of {', '.join(MAPS)}")
        if opponent not in BOTS:
            raise ValueError(f"Unknown MicroRTS bot {opponent!r}; one of {', '.join(BOTS)}")
        if num_envs < 1 or max_steps < 1 or len(reward_weights) != len(REWARD_WEIGHTS):
            raise ValueError(
                f"num_envs and max_steps must be >= 1 and reward_weights {len(REWARD_WEIGHTS)} numbers, "
                f"got {num_envs}, {max_steps}, {reward_weights}"
            )
        self.name = name
        root = _root()
        tree = ET.parse(root / MAPS[name]).getroot()
        self.height, self.width = int(tree.get("height")), int(tree.get("width"))
        cells = self.height * self.width
        self._cells = cells
        self._mask_width = sum(UNIT_ACTION)
        native = gymnasium.spaces.Dict(
            {
                "obs": gymnasium.spaces.Box(0, 1, (self.height, self.width, sum(PLANES)), np.uint8),
                "action_mask": gymnasium.spaces.Box(0, 1, (cells * self._mask_width,), np.uint8),
            }
        )
        action = gymnasium.spaces.MultiDiscrete(np.tile(UNIT_ACTION, cells))
        self.single_observation_space, dtype = pspaces.flat_observation_space(native)
        self.single_action_space = action
        self.emulated = {  # the layout emulated envs record, so masks are found (frameworks.cleanrl)
            "observation_dtype": dtype,
            "emulated_observation_space": native,
            "emulated_action_space": action,
            "flat_observation_dtype": np.dtype(np.uint8),
        }
        self.num_agents = int(num_envs)
        super().__init__(buf)
        self._setup(seed)
        self._struct = self.observations.view(dtype).reshape(self.num_agents)
        self._weights = np.asarray(reward_weights, np.float32)
        self.max_steps = max_steps
        self._steps = np.zeros(self.num_agents, np.int64)
        self._start_client(opponent, max_steps, root)

    def _start_client(self, opponent: str, max_steps: int, root: Path) -> None:
        try:
            self._env = child.Child(
                "pufferlib.environments.microrts:serve",
                (self.name, self.num_agents, opponent, max_steps),
                what=f"microrts/{self.name}",
                timeout=START_TIMEOUT,
            )
        except child.ChildError as e:
            raise EnvironmentSetupError(str(e)) from None
        self.unit_types = self._env.detail

    def _observe(self, raw: np.ndarray, masks: np.ndarray) -> None:
        """Write the one-hot planes and the masks of every game into the observation rows."""
        planes = raw.reshape(self.num_agents, len(PLANES), self._cells)
        planes = np.clip(planes, 0, np.array(PLANES)[None, :, None] - 1)
        offsets = np.cumsum((0, *PLANES))[:-1]
        onehot = np.zeros((self.num_agents, self._cells, sum(PLANES)), np.uint8)
        rows, cells = np.indices((self.num_agents, self._cells))
        for i, offset in enumerate(offsets):
            onehot[rows, cells, planes[:, i] + offset] = 1
        self._struct["obs"] = onehot.reshape(self.num_agents, self.height, self.width, -1)
        masks = masks.reshape(self.num_agents, self._cells, -1)
        self._source = masks[:, :, 0].astype(bool)  # cells with a unit of ours that can act now
        action_masks = masks[:, :, 1:].copy()
        start = 0
        for n in UNIT_ACTION:  # a branch with no legal action allows only action 0
            branch = action_masks[:, :, start : start + n]
            branch[:, :, 0] |= ~branch.any(-1)
            start += n
        self._struct["action_mask"] = action_masks.reshape(self.num_agents, -1)

    def reset(self, seed: int | None = None):
        self._reset_seed(seed)
        self._steps[:] = 0
        self._observe(*self._env.call("reset"))
        return self._started_with(self.observations)

    def step(self, actions):
        if not self._started:
            return self._actions(actions)  # raises: step() before reset()
        actions = np.asarray(actions).reshape(self.num_agents, -1)
        nvec = self.single_action_space.nvec
        if actions.shape[1] != nvec.size or ((actions < 0) | (actions >= nvec)).any():
            from pufferlib import APIUsageError

            raise APIUsageError(
                f"microrts/{self.name}: actions must be {self.num_agents} rows of {nvec.size} integers "
                f"within MultiDiscrete({UNIT_ACTION} per cell), got shape {actions.shape}"
            )
        per_cell = actions.reshape(self.num_agents, self._cells, len(UNIT_ACTION))
        planes, masks, raw, done = self._env.call("step", (per_cell, self._source))
        self._steps += 1
        timeout = done & (self._steps >= self.max_steps)
        self._steps[done] = 0
        self._observe(planes, masks)
        self.rewards[:] = raw @ self._weights
        self.terminals[:] = done & ~timeout
        self.truncations[:] = timeout
        infos = self._stats.step(self.rewards, done, lambda i: {"win": float(raw[i, 0] > 0)})
        return self.observations, self.rewards, self.terminals, self.truncations, infos

    def render(self):
        return None

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None


class _Engine:
    """The Java side, in the child: JNIGridnetVecClient's games, their planes, masks, rewards and ends."""

    def __init__(self, name: str, num_envs: int, opponent: str, max_steps: int) -> None:
        _jvm()
        from ai.core import AI
        from ai.rewardfunction import (
            AttackRewardFunction,
            ProduceBuildingRewardFunction,
            ProduceCombatUnitRewardFunction,
            ProduceWorkerRewardFunction,
            ResourceGatherRewardFunction,
            RewardFunctionInterface,
            WinLossRewardFunction,
        )
        from jpype.types import JArray
        from rts.units import UnitTypeTable
        from ts import JNIGridnetVecClient

        utt = UnitTypeTable()
        functions = (
            WinLossRewardFunction,
            ResourceGatherRewardFunction,
            ProduceWorkerRewardFunction,
            ProduceBuildingRewardFunction,
            AttackRewardFunction,
            ProduceCombatUnitRewardFunction,
        )
        rewards = JArray(RewardFunctionInterface)([f() for f in functions])
        bots = JArray(AI)([_bot(opponent, utt) for _ in range(num_envs)])
        self.num_envs = num_envs
        self.client = JNIGridnetVecClient(
            0, num_envs, max_steps, rewards, str(_root()), MAPS[name], bots, utt, False
        )
        self.unit_types = len(json.loads(str(self.client.clients[0].sendUTT()))["unitTypes"])

    def _masks(self) -> np.ndarray:
        return np.asarray(self.client.getMasks(0), np.uint8)

    def reset(self) -> tuple[np.ndarray, np.ndarray]:
        responses = self.client.reset([0] * self.num_envs)
        return np.asarray(responses.observation, np.int32), self._masks()

    def step(self, per_cell: np.ndarray, source: np.ndarray) -> tuple:
        from jpype.types import JArray, JInt

        games = []
        for game in range(self.num_envs):
            cells = np.flatnonzero(source[game])
            units = np.concatenate((cells[:, None], per_cell[game, cells]), 1).astype(np.int32)
            games.append(JArray(JArray(JInt))([JArray(JInt)(unit.tolist()) for unit in units]))
        responses = self.client.gameStep(JArray(JArray(JArray(JInt)))(games), [0] * self.num_envs)
        raw = np.asarray(responses.reward, np.float32).reshape(self.num_envs, -1)
        done = np.asarray(responses.done, bool).reshape(self.num_envs, -1)[:, 0]
        return np.asarray(responses.observation, np.int32), self._masks(), raw, done


def serve(fd: int) -> None:
    """The child of a MicroRTS env (pufferlib.environments.support.child runs it). MicroRTS prints on stdout
    (map paths, reward arrays), which would mix with the parent's output: the child's goes to /dev/null."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)

    def build(init: tuple) -> tuple:
        engine = _Engine(*init)

        def handle(command: str, arg: Any) -> Any:
            return engine.reset() if command == "reset" else engine.step(*arg)

        return handle, engine.unit_types

    child.serve(fd, build)


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """MicroRTS games on map `name`; kwargs: num_envs=1, opponent="workerRushAI", max_steps=2000,
    reward_weights=REWARD_WEIGHTS."""
    return MicroRTS(name, buf=buf, seed=seed, **kwargs)


members = Members("microrts", make_env, policy=Policy, requires=("gym_microrts", "jpype"))
env_creator = members.env_creator  # PufferLib's env_creator(name)


def _binding(name: str) -> Binding:
    return members.bind(
        name,
        # the learn cell trains to its step budget (the config's total_timesteps); it solved in 90-200 s on
        # a quiet 2-core box, and `seconds` is only the container's hang guard
        smoke=SmokeSpec(steps=128, seconds=480.0 if name == LEARN else 120.0, learn=name == LEARN),
        # full against the scripted workerRushAI the bindings play (a fixed map, a deterministic game:
        # gymnasium's check_env agrees); opponent="randomAI"/"randomBiasedAI" draw from Java's unseeded Random
        seeding="full",
        description=f"Gym-MicroRTS {name} against workerRushAI: gridnet actions, invalid-action masks (JVM)"
        + (" (trains against passiveAI: microrts.4x4.toml)" if name == LEARN else ""),
    )


register_catalog(members.family, tuple(MAPS), _binding, registered=REGISTERED)
