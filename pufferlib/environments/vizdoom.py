"""ViZDoom (vizdoom/<scenario>): the Doom scenarios that ship with the vizdoom wheel, headless.

Observation: a Dict of `screen` (the screen buffer, grey by default, downsampled: 60x80x1 uint8
from a 160x120 render with `downsample=2`) and `gamevariables` (the scenario's game variables as
float32, e.g. HEALTH, AMMO2; absent for the scenarios that declare none: my_way_home,
predict_position). Actions: Discrete(1 + buttons): 0 does nothing, i presses the scenario's i-th
button, held for `frame_skip` tics (default 4). The game runs with no window (ViZDoom renders
off-screen, no display or X server needed).

Episode ends: the player's death or the scenario's goal is a terminal; the scenario's
`episode_timeout` is a truncation. Seeding: `reset(seed)` sets ViZDoom's seed (`set_seed`) before
the episode, so one seed gives one episode for a fixed sequence of actions; `reset()` without a
seed continues the game's generator.

ViZDoom's engine writes a `_vizdoom.ini` config and a `_vizdoom/` folder into its working
directory. The env keeps both in a private temporary directory that close() removes: the config
path is set, and the engine is started (in `reset`, once) with that directory as the working
directory. That chdir lasts the ~0.5 s of the engine's start and is process-wide; a module lock
keeps two envs of one process from interleaving it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from typing import Any

import gymnasium
import numpy as np

from pufferlib import PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog

Policy = "pufferlib.environments.support.policies:Doom"
# The single-player scenarios of vizdoom 1.3.2 with only on/off buttons. Left out: deathmatch, cig,
# multi and the full-game configs (doom, freedoom, oblige), which use delta (analog) buttons and/or
# need other players, and the basic_audio/basic_notifications/learning variants of basic.
SCENARIOS = (
    "basic",
    "deadly_corridor",
    "defend_the_center",
    "defend_the_line",
    "health_gathering",
    "health_gathering_supreme",
    "my_way_home",
    "predict_position",
    "rocket_basic",
    "simpler_basic",
    "take_cover",
)
RESOLUTIONS = ("160x120", "200x150", "256x192", "320x240", "640x480")
_CHDIR = threading.Lock()


class Doom(gymnasium.Env):
    """One ViZDoom game of a bundled scenario (see the module docstring for spaces and seeding)."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(
        self,
        scenario: str,
        frame_skip: int = 4,
        grey: bool = True,
        resolution: str = "160x120",
        downsample: int = 2,
    ) -> None:
        import vizdoom as vzd

        if scenario not in SCENARIOS:
            raise ValueError(f"Unknown ViZDoom scenario {scenario!r}; one of {', '.join(SCENARIOS)}")
        if resolution not in RESOLUTIONS:
            raise ValueError(f"resolution must be one of {', '.join(RESOLUTIONS)}, got {resolution!r}")
        if frame_skip < 1 or downsample < 1:
            raise ValueError(f"frame_skip and downsample must be >= 1, got {frame_skip}, {downsample}")
        self.scenario = scenario
        self.frame_skip = frame_skip
        self.downsample = downsample
        self._tmp = tempfile.mkdtemp(prefix="puffer-vizdoom-")
        game = vzd.DoomGame()
        game.set_doom_config_path(os.path.join(self._tmp, "_vizdoom.ini"))
        game.load_config(os.path.join(vzd.scenarios_path, f"{scenario}.cfg"))
        game.set_window_visible(False)
        game.set_mode(vzd.Mode.PLAYER)
        game.set_screen_resolution(getattr(vzd.ScreenResolution, f"RES_{resolution.upper()}"))
        game.set_screen_format(vzd.ScreenFormat.GRAY8 if grey else vzd.ScreenFormat.RGB24)
        game.set_sound_enabled(False)
        self.game = game
        self._started = False
        self.buttons = [b.name for b in game.get_available_buttons()]
        self.variables = [v.name for v in game.get_available_game_variables()]
        width, height = (int(x) for x in resolution.split("x"))
        shape = (-(-height // downsample), -(-width // downsample), 1 if grey else 3)
        spaces = {"screen": gymnasium.spaces.Box(0, 255, shape, np.uint8)}
        if self.variables:
            spaces["gamevariables"] = gymnasium.spaces.Box(
                -np.inf, np.inf, (len(self.variables),), np.float32
            )
        self.observation_space = gymnasium.spaces.Dict(spaces)
        self.action_space = gymnasium.spaces.Discrete(1 + len(self.buttons))
        self._actions = np.eye(1 + len(self.buttons), len(self.buttons), k=-1).tolist()  # row 0: no button
        self._last: dict[str, np.ndarray] | None = None

    def _observe(self) -> dict[str, np.ndarray]:
        state = self.game.get_state()
        if state is None:  # the episode has finished: ViZDoom has no state; keep the last observation
            return self._last
        screen = state.screen_buffer
        if screen.ndim == 2:
            screen = screen[:, :, None]
        else:  # RGB24 arrives channels last (H, W, 3)
            screen = screen.reshape(screen.shape[0], screen.shape[1], 3)
        k = self.downsample
        ob = {"screen": np.ascontiguousarray(screen[::k, ::k])}
        if self.variables:
            ob["gamevariables"] = np.asarray(state.game_variables, dtype=np.float32)
        self._last = ob
        return ob

    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if not self._started:
            if seed is not None:
                self.game.set_seed(int(seed) % 2**31)
            with _CHDIR:  # the engine process starts in (and writes its _vizdoom/ folder to) our temp dir
                cwd = os.getcwd()
                os.chdir(self._tmp)
                try:
                    self.game.init()
                finally:
                    os.chdir(cwd)
            self._started = True
        elif seed is not None:
            self.game.set_seed(int(seed) % 2**31)
        self.game.new_episode()
        return self._observe(), {}

    def step(self, action):
        reward = self.game.make_action(self._actions[int(action)], self.frame_skip)
        finished = self.game.is_episode_finished()
        truncated = finished and self.game.is_episode_timeout_reached()
        ob = self._observe()
        return ob, float(reward), finished and not truncated, truncated, {}

    def render(self):
        return self._last["screen"] if self._last else None

    def close(self) -> None:
        if self.game is not None:
            self.game.close()
            self.game = None
        shutil.rmtree(self._tmp, ignore_errors=True)


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """A ViZDoom scenario; kwargs: frame_skip=4, grey=True, resolution="160x120", downsample=2."""
    env = GymnasiumPufferEnv(env=Doom(name, **kwargs), buf=buf, seed=seed)
    env.render_backend = "ViZDoom's software renderer, off-screen"
    return env


members = Members(
    "vizdoom", make_env, policy=Policy, requires=("vizdoom",), smoke=SmokeSpec(steps=256, seconds=120.0)
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


# The registered set (exercised by the integration matrix); the other scenarios are made the same way.
REGISTERED = ("basic", "deadly_corridor", "health_gathering")


def _binding(scenario: str) -> Binding:
    return members.bind(
        scenario,
        pixels=(60, 80, 1),  # the `screen` field: grey 160x120, every 2nd pixel
        description=f"ViZDoom {scenario} (grey 60x80 screen + game variables, frame skip 4, headless)",
    )


register_catalog(members.family, SCENARIOS, _binding, registered=REGISTERED)
