"""stable-retro (retro/<game>): Genesis, NES, SNES, Atari 2600, Game Boy ... games through libretro.

Names are stable-retro's game ids, e.g. `retro/Airstriker-Genesis-v0`. stable-retro 1.0.1 knows
~1,000 games (its stable integrations, listed by `puffer envs --all --family retro`), but ships a
ROM for free games only (Airstriker-Genesis-v0): every other game needs its ROM imported once,
`python -m retro.import ROMDIR` (stable-retro 1.0 also names it `stable_retro.import`; ROMDIR is a
folder holding your ROM files, matched by their SHA-1). Until then the game is listed as missing
its ROM, and making it raises an error that says so.

Spaces: the screen, every `downsample`-th pixel (default 2: Genesis 224x320 -> 112x160x3 uint8),
and stable-retro's DISCRETE actions: one id per valid button combination (Airstriker: 126). Each
action is held for `frame_skip` frames (default 4) and their rewards summed. A game over is a
terminal; `max_steps` (default 27,000 steps, i.e. 108,000 frames as in Atari) a truncation. The
game's RAM variables (`score`, `lives`, ...) are the infos. Seeding: full (the emulator is
deterministic; each episode starts from the game's default save state).

One emulator per process: libretro cores keep global state, so stable-retro refuses a second
emulator in a process ("Cannot create multiple emulator instances per process"), which would make
two envs in one process (a Serial vector) impossible, and a fork of a process that has one unable
to make another. So each env runs its emulator in a small child process of its own
(`pufferlib.environments.support.child`, over a socket pair): any number of envs per process.
The child exits when the env closes, or on its own when the parent goes away (end of file on
its socket).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from pufferlib import EnvironmentSetupError, PufferEnv
from pufferlib.emulation import GymnasiumPufferEnv, numeric_items
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog
from pufferlib.environments.support import child

Policy = "pufferlib.models:Convolutional"
IMPORT_HINT = "python -m retro.import ROMDIR"
# The arcade core the image leaves out comes back with the wheel it came in (docker/slim_site.py).
CORE_HINT = "pip install --force-reinstall --no-deps stable-retro (in a derived image or a venv you own)"
SHIPPED = ("Airstriker-Genesis-v0",)  # the games whose ROM stable-retro 1.0.1 ships
START_TIMEOUT = 120.0  # seconds for the child to start its emulator (imports, core load)


def _data_dir() -> Path | None:
    """stable-retro's folder of stable game integrations, found without importing it."""
    spec = importlib.util.find_spec("stable_retro")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "stable"


def games() -> tuple[str, ...]:
    """Every game stable-retro integrates (empty when it is not installed)."""
    root = _data_dir()
    if root is None or not root.is_dir():
        return ()
    return tuple(sorted(p.name for p in root.iterdir() if (p / "data.json").is_file()))


def has_rom(game: str) -> bool:
    """Whether the game's ROM is imported (a rom.<ext> beside its rom.sha)."""
    root = _data_dir()
    folder = root / game if root else None
    if folder is None or not folder.is_dir():
        return False
    return any(p.name.startswith("rom.") and p.name != "rom.sha" for p in folder.iterdir())


@functools.cache
def _cores(data: Path) -> dict[str, Path]:
    """stable-retro's systems and the core library each needs (its cores/*.json), read once."""
    cores = data.parent.parent / "cores"
    table = {}
    for info in cores.glob("*.json"):
        for system, core in json.loads(info.read_text()).items():
            table[system] = cores / f"{core['lib']}_libretro.so"
    return table


def core_missing(game: str) -> str | None:
    """The libretro core a game needs, when it is absent (the image leaves out FinalBurn Neo, the arcade
    core: 74 MB for one game; docs/images.md). The game's system is its metadata's, else its id's suffix."""
    root = _data_dir()
    if root is None:
        return None
    meta = root / game / "metadata.json"
    system = json.loads(meta.read_text()).get("system") if meta.is_file() else None
    system = system or game.removesuffix("-v0").rsplit("-", 1)[-1]
    lib = _cores(root).get(system)
    if lib is None:
        return f"an emulator core for {system} (stable-retro has none)"
    return None if lib.is_file() else f"its emulator core ({lib.name}, left out of this image)"


# ---------------------------------------------------------------------------------------------- child


def serve(fd: int) -> None:
    """The emulator child of a Retro env (pufferlib.environments.support.child runs it)."""
    child.serve(fd, _emulator)


def _emulator(init: tuple) -> tuple:
    import warnings

    warnings.filterwarnings("ignore", category=DeprecationWarning)  # stable-retro's `retro` alias
    import stable_retro

    game, state, frame_skip, k, max_steps = init
    states = stable_retro.data.list_states(game)
    if state and state not in states:
        raise ValueError(f"no save state {state!r}; {game} has {', '.join(states) or 'none'}")
    env = stable_retro.make(
        game,
        state=state or stable_retro.State.DEFAULT,
        render_mode=None,
        use_restricted_actions=stable_retro.Actions.DISCRETE,
    )
    steps = 0

    def handle(command: str, arg: Any) -> Any:
        nonlocal steps
        if command == "reset":
            obs, _ = env.reset(seed=arg)
            steps = 0
            return np.ascontiguousarray(obs[::k, ::k])
        total, terminated, truncated, info = 0.0, False, False, {}
        for _ in range(frame_skip):
            obs, reward, terminated, truncated, info = env.step(arg)
            total += float(reward)
            if terminated or truncated:
                break
        steps += 1
        truncated = truncated or (not terminated and steps >= max_steps)
        ob = np.ascontiguousarray(obs[::k, ::k])
        return ob, total, bool(terminated), bool(truncated), numeric_items(info)

    height, width, channels = env.observation_space.shape
    return handle, ((-(-height // k), -(-width // k), channels), int(env.action_space.n))


class Retro(gymnasium.Env):
    """One stable-retro game, its emulator in a child process (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(
        self,
        game: str,
        state: str | None = None,
        frame_skip: int = 4,
        downsample: int = 2,
        max_steps: int = 27_000,
    ) -> None:
        if frame_skip < 1 or downsample < 1 or max_steps < 1:
            raise ValueError(
                "frame_skip, downsample and max_steps must be >= 1, "
                f"got {frame_skip}, {downsample}, {max_steps}"
            )
        self.game = game
        try:
            self._child = child.Child(
                "pufferlib.environments.retro:serve",
                (game, state, frame_skip, downsample, max_steps),
                what=f"retro/{game}",
                timeout=START_TIMEOUT,
            )
        except child.ChildError as e:
            raise EnvironmentSetupError(str(e)) from None
        shape, actions = self._child.detail
        self.observation_space = gymnasium.spaces.Box(0, 255, shape, np.uint8)
        self.action_space = gymnasium.spaces.Discrete(actions)
        self._last: np.ndarray | None = None

    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._last = self._child.call("reset", seed)
        return self._last, {}

    def step(self, action):
        self._last, reward, terminated, truncated, info = self._child.call("step", int(action))
        return self._last, reward, terminated, truncated, info

    def render(self):
        return self._last

    def close(self) -> None:
        self._child.close()


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """A stable-retro game; kwargs: state=None (the default save state), frame_skip=4, downsample=2,
    max_steps=27000."""
    if importlib.util.find_spec("stable_retro") is None:
        raise EnvironmentSetupError(f"retro/{name} needs stable-retro: pip install 'pufferlib[retro]'")
    if name not in games():
        raise ValueError(
            f"Unknown stable-retro game {name!r} (e.g. 'Airstriker-Genesis-v0'); `puffer envs --all`"
        )
    core = core_missing(name)
    if core:
        raise EnvironmentSetupError(f"retro/{name} needs {core}: {CORE_HINT}")
    if not has_rom(name):
        raise EnvironmentSetupError(
            f"retro/{name}: its ROM is not imported (stable-retro ships ROMs only for {', '.join(SHIPPED)}). "
            f"Import your copy of the game: {IMPORT_HINT} (ROMDIR: a folder with the ROM file)"
        )
    env = GymnasiumPufferEnv(env=Retro(name, **kwargs), buf=buf, seed=seed)
    env.render_backend = "the game's emulator core (stable-retro, libretro, in software)"
    return env


members = Members(
    "retro", make_env, policy=Policy, requires=("stable_retro",), smoke=SmokeSpec(steps=128, seconds=120.0)
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


@dataclasses.dataclass(frozen=True)
class RetroBinding(Binding):
    """A retro game also needs its emulator core and its ROM: `puffer envs` shows what is missing and the
    command that brings it."""

    def missing(self) -> list[str]:
        missing = super().missing()
        if not missing:
            core = core_missing(self.kwargs["name"])
            missing += [core] if core else []
        if not missing and not has_rom(self.kwargs["name"]):
            missing.append("its ROM")
        return missing

    def make_env(self, **kwargs: Any) -> PufferEnv:
        if not super().missing():  # installed: make_env itself says what to do about a missing ROM
            return self.make(**{**self.kwargs, **kwargs})
        return super().make_env(**kwargs)

    @property
    def install_hint(self) -> str:
        if not super().missing() and core_missing(self.kwargs["name"]):
            return CORE_HINT
        if not super().missing() and not has_rom(self.kwargs["name"]):
            return IMPORT_HINT
        return super().install_hint


def _binding(game: str) -> Binding:
    return members.bind(
        game,
        RetroBinding,
        pixels=(112, 160, 3) if game.endswith("-Genesis-v0") else (),  # Genesis 224x320, every 2nd pixel
        description=f"stable-retro {game} (every 2nd pixel, discrete button combinations, frame skip 4)"
        + ("" if game in SHIPPED else f"; needs its ROM: {IMPORT_HINT}"),
    )


register_catalog(members.family, tuple(sorted({*games(), *SHIPPED})), _binding, registered=SHIPPED)
