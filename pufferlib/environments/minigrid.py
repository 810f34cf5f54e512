"""MiniGrid (minigrid/<MiniGrid id>): grid worlds with a Dict observation of image, direction, mission.

The mission is free text, which has no fixed shape, so it becomes a fixed-length uint8 array: its
UTF-8 bytes, zero-padded to `mission_length` (default 128; the longest mission of the registered
envs is 81 bytes, LockedRoom's). A longer mission raises an error naming the length to pass, rather
than being cut short. `mission_length=0` drops the mission altogether. `decode_mission` turns the
array back into text.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from pufferlib import APIUsageError, PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog

Policy = "pufferlib.environments.support.policies:MiniGrid"
MISSION_LENGTH = 128
# Every MiniGrid id of minigrid 3.2 except the six WFC ones, whose pattern files the wheel lacks.
ENVS = (
    "MiniGrid-BlockedUnlockPickup-v0",
    "MiniGrid-DistShift1-v0",
    "MiniGrid-DistShift2-v0",
    "MiniGrid-DoorKey-5x5-v0",
    "MiniGrid-DoorKey-6x6-v0",
    "MiniGrid-DoorKey-8x8-v0",
    "MiniGrid-DoorKey-16x16-v0",
    "MiniGrid-Dynamic-Obstacles-5x5-v0",
    "MiniGrid-Dynamic-Obstacles-Random-5x5-v0",
    "MiniGrid-Dynamic-Obstacles-6x6-v0",
    "MiniGrid-Dynamic-Obstacles-Random-6x6-v0",
    "MiniGrid-Dynamic-Obstacles-8x8-v0",
    "MiniGrid-Dynamic-Obstacles-16x16-v0",
    "MiniGrid-Empty-5x5-v0",
    "MiniGrid-Empty-Random-5x5-v0",
    "MiniGrid-Empty-6x6-v0",
    "MiniGrid-Empty-Random-6x6-v0",
    "MiniGrid-Empty-8x8-v0",
    "MiniGrid-Empty-16x16-v0",
    "MiniGrid-Fetch-5x5-N2-v0",
    "MiniGrid-Fetch-6x6-N2-v0",
    "MiniGrid-Fetch-8x8-N3-v0",
    "MiniGrid-FourRooms-v0",
    "MiniGrid-GoToDoor-5x5-v0",
    "MiniGrid-GoToDoor-6x6-v0",
    "MiniGrid-GoToDoor-8x8-v0",
    "MiniGrid-GoToObject-6x6-N2-v0",
    "MiniGrid-GoToObject-8x8-N2-v0",
    "MiniGrid-KeyCorridorS3R1-v0",
    "MiniGrid-KeyCorridorS3R2-v0",
    "MiniGrid-KeyCorridorS3R3-v0",
    "MiniGrid-KeyCorridorS4R3-v0",
    "MiniGrid-KeyCorridorS5R3-v0",
    "MiniGrid-KeyCorridorS6R3-v0",
    "MiniGrid-LavaCrossingS9N1-v0",
    "MiniGrid-LavaCrossingS9N2-v0",
    "MiniGrid-LavaCrossingS9N3-v0",
    "MiniGrid-LavaCrossingS11N5-v0",
    "MiniGrid-LavaGapS5-v0",
    "MiniGrid-LavaGapS6-v0",
    "MiniGrid-LavaGapS7-v0",
    "MiniGrid-LockedRoom-v0",
    "MiniGrid-MemoryS7-v0",
    "MiniGrid-MemoryS9-v0",
    "MiniGrid-MemoryS11-v0",
    "MiniGrid-MemoryS13-v0",
    "MiniGrid-MemoryS13Random-v0",
    "MiniGrid-MemoryS17Random-v0",
    "MiniGrid-MultiRoom-N2-S4-v0",
    "MiniGrid-MultiRoom-N4-S5-v1",
    "MiniGrid-MultiRoom-N6-v0",
    "MiniGrid-ObstructedMaze-1Dl-v0",
    "MiniGrid-ObstructedMaze-1Dlh-v0",
    "MiniGrid-ObstructedMaze-1Dlhb-v0",
    "MiniGrid-ObstructedMaze-2Dl-v0",
    "MiniGrid-ObstructedMaze-2Dlh-v0",
    "MiniGrid-ObstructedMaze-2Dlhb-v1",
    "MiniGrid-ObstructedMaze-1Q-v1",
    "MiniGrid-ObstructedMaze-2Q-v1",
    "MiniGrid-ObstructedMaze-Full-v1",
    "MiniGrid-Playground-v0",
    "MiniGrid-PutNear-6x6-N2-v0",
    "MiniGrid-PutNear-8x8-N3-v0",
    "MiniGrid-RedBlueDoors-6x6-v0",
    "MiniGrid-RedBlueDoors-8x8-v0",
    "MiniGrid-SimpleCrossingS9N1-v0",
    "MiniGrid-SimpleCrossingS9N2-v0",
    "MiniGrid-SimpleCrossingS9N3-v0",
    "MiniGrid-SimpleCrossingS11N5-v0",
    "MiniGrid-Unlock-v0",
    "MiniGrid-UnlockPickup-v0",
)


class MissionBytes(gymnasium.ObservationWrapper):
    """Replaces the `mission` text with its UTF-8 bytes, zero-padded to `length` (0 drops it)."""

    def __init__(self, env: gymnasium.Env, length: int = MISSION_LENGTH) -> None:
        super().__init__(env)
        if length < 0:
            raise ValueError(f"mission_length must be >= 0, got {length}")
        self.length = length
        spaces = {k: v for k, v in env.observation_space.spaces.items() if k != "mission"}
        if length:
            spaces["mission"] = gymnasium.spaces.Box(0, 255, (length,), np.uint8)
        self.observation_space = gymnasium.spaces.Dict(spaces)

    def observation(self, observation: dict) -> dict:
        out = {k: v for k, v in observation.items() if k != "mission"}
        if self.length:
            raw = observation["mission"].encode("utf-8")
            if len(raw) > self.length:
                name = self.spec.id if self.spec else "MiniGrid"
                raise APIUsageError(
                    f"{name}: mission {observation['mission']!r} is {len(raw)} bytes, longer than "
                    f"mission_length={self.length}; pass mission_length={len(raw)} or more (0 drops it)"
                )
            out["mission"] = np.zeros(self.length, np.uint8)
            out["mission"][: len(raw)] = np.frombuffer(raw, np.uint8)
        return out


def decode_mission(array: np.ndarray) -> str:
    """The mission text from its zero-padded byte array."""
    return bytes(np.asarray(array, np.uint8)).rstrip(b"\0").decode("utf-8")


def make_env(
    name: str, buf: Any = None, seed: int = 0, mission_length: int = MISSION_LENGTH, **kwargs: Any
) -> PufferEnv:
    """A MiniGrid env by gymnasium id; kwargs go to gymnasium.make (e.g. agent_view_size=5)."""
    import minigrid  # noqa: F401  (registers the MiniGrid ids with gymnasium)

    env = MissionBytes(gymnasium.make(name, **kwargs), mission_length)
    return GymnasiumPufferEnv(env=env, buf=buf, seed=seed)


members = Members(
    "minigrid", make_env, policy=Policy, requires=("minigrid",), smoke=SmokeSpec(steps=512, seconds=30.0)
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


# The registered set (exercised by the integration matrix): one or two of each kind of task. Every
# other id of ENVS is made the same way on demand (`puffer envs --all` lists them).
REGISTERED = (
    "MiniGrid-DoorKey-5x5-v0",
    "MiniGrid-DoorKey-8x8-v0",
    "MiniGrid-Dynamic-Obstacles-5x5-v0",
    "MiniGrid-Empty-5x5-v0",
    "MiniGrid-Empty-8x8-v0",
    "MiniGrid-Empty-16x16-v0",
    "MiniGrid-Fetch-5x5-N2-v0",
    "MiniGrid-FourRooms-v0",
    "MiniGrid-GoToDoor-5x5-v0",
    "MiniGrid-KeyCorridorS3R1-v0",
    "MiniGrid-LavaGapS5-v0",
    "MiniGrid-MemoryS7-v0",
    "MiniGrid-MultiRoom-N2-S4-v0",
    "MiniGrid-ObstructedMaze-1Dl-v0",
    "MiniGrid-PutNear-6x6-N2-v0",
    "MiniGrid-Unlock-v0",
)


def _binding(name: str) -> Binding:
    return members.bind(
        name,
        description=f"{name} (image 7x7x3, direction, mission as {MISSION_LENGTH} UTF-8 bytes)",
    )


register_catalog(members.family, ENVS, _binding, registered=REGISTERED)
