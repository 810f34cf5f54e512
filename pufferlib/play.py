"""`puffer play ocean/<env>`: play an env by hand in the terminal, one keypress at a time.

An env is playable when it is a registered native or ocean binding, available here, with Discrete or
MultiDiscrete actions (at most len(INDEX_KEYS) joint actions) whose render() returns ANSI text. Keys map
to actions: the shipped native envs have their own maps (KEYMAPS); any other playable env gets the index
keys (0-9, then letters). Turn-based envs step on a keypress; real-time ones (`--fps N`) step on a timer
with the last key pressed held (an env's `idle` action until one is). Every agent row gets the action:
connect4 is two players at one keyboard. The return shown and summed is agent row 0's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import sys
import termios
import time
import tty
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

QUIT = "q"
# Index keys: action i is INDEX_KEYS[i] where an env has no map of its own (q quits, so it is left out).
INDEX_KEYS = "0123456789abcdefghijklmnoprstuvwxyz"
ESCAPES = {"\x1b[A": "up", "\x1b[B": "down", "\x1b[C": "right", "\x1b[D": "left"}
NAMED = {"up", "down", "left", "right", "space"}  # key names longer than one character


@dataclass(frozen=True)
class KeyMap:
    """How a person plays one env: keys -> action (with a word for the legend), timing, game kwargs."""

    keys: dict[str, tuple[int, str]]
    fps: float = 0.0  # > 0: real time, a step every 1/fps s with the last key held; 0: a step per key
    idle: int | None = None  # the real-time action before any key (None: wait for the first key)
    kwargs: dict[str, Any] = field(default_factory=dict)  # game keywords for a playable size


def _keys(*rows: tuple[str, int, str]) -> dict[str, tuple[int, str]]:
    """KEY1/KEY2/..., action, word -> the keys dict (each key of a row gives the same action)."""
    return {key: (action, word) for keys, action, word in rows for key in keys.split("/")}


def _digits(n: int, word: str) -> dict[str, tuple[int, str]]:
    return {INDEX_KEYS[i]: (i, f"{word} {i}") for i in range(n)}


# The shipped native envs' maps; the actions are as each header (<name>/<name>.h) states them.
KEYMAPS: dict[str, KeyMap] = {
    "ocean/squared": KeyMap(
        _keys(
            ("w/up", 2, "up"),
            ("s/down", 3, "down"),
            ("a/left", 0, "left"),
            ("d/right", 1, "right"),
            ("y", 5, "up-left"),
            ("u", 7, "up-right"),
            ("b", 4, "down-left"),
            ("n", 6, "down-right"),
        )
    ),
    "ocean/squared_pl3": KeyMap(
        _keys(
            ("w/up", 2, "up"),
            ("s/down", 1, "down"),
            ("a/left", 3, "left"),
            ("d/right", 4, "right"),
            ("space", 0, "stay"),
        )
    ),
    "ocean/snake": KeyMap(
        _keys(("w/up", 0, "up"), ("s/down", 1, "down"), ("a/left", 2, "left"), ("d/right", 3, "right")),
        kwargs={"width": 24, "height": 12, "num_snakes": 1, "num_food": 4},
    ),
    "ocean/connect4": KeyMap(_digits(7, "column")),  # the board's column labels, 0-6
    "ocean/template": KeyMap(_digits(4, "button")),
    "ocean/cartpole": KeyMap(_keys(("a/left", 0, "push left"), ("d/right", 1, "push right")), fps=10),
    "ocean/breakout": KeyMap(
        _keys(("a/left", 1, "left"), ("d/right", 2, "right"), ("s/space", 0, "stop")), fps=15, idle=0
    ),
    "ocean/pong": KeyMap(
        _keys(("w/up", 1, "up"), ("s/down", 2, "down"), ("space", 0, "stop")), fps=15, idle=0
    ),
}
KEYMAPS["ocean/squared_py"] = KEYMAPS["ocean/squared"]  # the native squared's Python twin: the same game


class PlayError(Exception):
    """Bad input: printed as one line, exit 2."""


def index_keymap(n: int) -> KeyMap:
    """Action i on INDEX_KEYS[i]: the map of a playable env without one of its own."""
    if n > len(INDEX_KEYS):
        raise PlayError(f"{n} actions, more than the {len(INDEX_KEYS)} keys ({INDEX_KEYS}) can play")
    return KeyMap(_digits(n, "action"))


def parse_map(text: str, n: int) -> dict[str, tuple[int, str]]:
    """`--map 'KEY=ACTION,...'` -> keys dict; PlayError naming the bad entry and what is valid."""
    keys: dict[str, tuple[int, str]] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        key, sep, action = entry.partition("=")
        if not sep or not (len(key) == 1 or key in NAMED) or key in (QUIT, ",", "="):
            raise PlayError(
                f"--map entry {entry!r}: write KEY=ACTION, KEY one character (not q) or one of "
                f"{', '.join(sorted(NAMED))}"
            )
        if not action.strip().isdigit() or int(action) >= n:
            raise PlayError(f"--map entry {entry!r}: the action must be an index 0..{n - 1}")
        keys[key] = (int(action), f"action {int(action)}")
    if not keys:
        raise PlayError("--map is empty: write KEY=ACTION,... (e.g. --map 'j=0,k=1')")
    return keys


def script_keys(text: str) -> list[str]:
    """`--keys` text -> key names: each character, or <up>, <down>, <left>, <right>, <space>."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "<":
            end = text.find(">", i)
            name = text[i + 1 : end] if end > 0 else ""
            if name not in NAMED:
                raise PlayError(
                    f"--keys: {text[i : end + 1 if end > 0 else None]!r} is not a key; write a character or "
                    f"one of {', '.join(f'<{n}>' for n in sorted(NAMED))}"
                )
            out.append(name)
            i = end + 1
        else:
            out.append("space" if text[i] == " " else text[i])
            i += 1
    return out


def legend(keys: dict[str, tuple[int, str]]) -> str:
    """One line: the keys of each action, then q."""
    by_action: dict[tuple[int, str], list[str]] = {}
    for key, act in keys.items():
        by_action.setdefault(act, []).append(key)
    parts = [f"{'/'.join(ks)} {word}" for (_, word), ks in sorted(by_action.items())]
    return "keys: " + ", ".join(parts) + ", q quit"


def candidates() -> list[Any]:
    """The registered bindings play may take: native or ocean, available here."""
    import pufferlib.environments as envs

    return [b for b in envs.bindings() if (b.native or b.family == "ocean") and b.available()]


def make(binding: Any, seed: int, kwargs: dict[str, Any]) -> Any:
    """One env of `binding` that renders ANSI text, or PlayError saying why it cannot be played."""
    import gymnasium

    creator = binding.env_creator()
    size = {"num_envs": 1, "num_threads": 1} if binding.native else {}
    try:
        env = creator(**size, **kwargs, render_mode="ansi", seed=seed)
    except TypeError:  # a maker without render_mode (the Python Ocean envs) renders ANSI its own way
        env = creator(**size, **kwargs, seed=seed)
    space = env.single_action_space
    if not isinstance(space, gymnasium.spaces.Discrete | gymnasium.spaces.MultiDiscrete):
        env.close()
        raise PlayError(f"{binding.name} has {space} actions; play takes Discrete or MultiDiscrete ones")
    env.reset(seed=seed)
    try:
        frame = env.render()
    except Exception as e:  # an env without text rendering
        frame = e
    if not isinstance(frame, str):
        env.close()
        raise PlayError(f"{binding.name} draws no ANSI text frame (render() gave {type(frame).__name__})")
    return env


def playable() -> list[str]:
    """The names play takes here: each candidate made once, its actions and its frame checked."""
    names = []
    for b in candidates():
        try:
            env = make(b, 0, KEYMAPS.get(b.name, KeyMap({})).kwargs)
            index_keymap(actions(env))
        except Exception:  # not playable, whatever the reason
            continue
        env.close()
        names.append(b.name)
    return names


def actions(env: Any) -> int:
    """The number of joint actions of one agent row."""
    space = env.single_action_space
    return int(space.n) if hasattr(space, "n") else int(np.prod(space.nvec))


def keypresses(fd: int, timeout: float | None) -> Iterator[str]:
    """The keys pressed on terminal `fd` within `timeout` seconds (None: wait for one)."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return
    data = os.read(fd, 64).decode(errors="replace")
    i = 0
    while i < len(data):
        seq = data[i : i + 3]
        if seq in ESCAPES:
            yield ESCAPES[seq]
            i += 3
            continue
        yield "space" if data[i] == " " else data[i]
        i += 1


@contextmanager
def raw_terminal(fd: int, out: IO[str]) -> Iterator[None]:
    """Keys unbuffered and unechoed (cbreak: Ctrl-C still interrupts), cursor hidden; all restored on
    exit, whatever ends the block."""
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        out.write("\x1b[?25l")
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        out.write("\x1b[?25h\n")
        out.flush()


class Game:
    """One env, its keys and the score: step(action) plays one step, frame() draws the state."""

    def __init__(self, name: str, env: Any, keymap: KeyMap, keys: dict[str, tuple[int, str]]) -> None:
        self.name, self.env, self.keymap, self.keys = name, env, keymap, keys
        self.nvec = getattr(env.single_action_space, "nvec", None)
        self.episode_return = 0.0
        self.returns: list[float] = []  # row 0's return of each finished episode
        self.steps = 0
        self.last = ""

    def step(self, action: int) -> None:
        """Every agent row plays `action`; row 0's reward and episode end are counted."""
        act = np.asarray(np.unravel_index(action, self.nvec)) if self.nvec is not None else action
        self.env.actions[:] = act
        _, rewards, terminals, truncations, _ = self.env.step(self.env.actions)
        self.steps += 1
        self.episode_return += float(rewards[0])
        if terminals[0] or truncations[0]:
            self.returns.append(self.episode_return)
            self.episode_return = 0.0
        if getattr(self.env, "done", False):  # emulated envs wait for reset(); native ones reset themselves
            self.env.reset()

    def frame(self) -> str:
        ended = f" (last {self.returns[-1]:+.3g})" if self.returns else ""
        key = f"  key: {self.last}" if self.last else ""
        status = (
            f"{self.name}  episodes {len(self.returns)}{ended}  return {self.episode_return:+.3g}"
            f"  step {self.steps}{key}"
        )
        return f"{self.env.render().rstrip(chr(10))}\n{status}"

    def summary(self) -> str:
        n = len(self.returns)
        mean = f"{np.mean(self.returns):+.3f}" if n else "-"
        return (
            f"played {self.name}: {n} episode{'' if n == 1 else 's'}, mean return {mean} "
            f"({self.steps} steps; the unfinished episode's return {self.episode_return:+.3g})"
        )


def play_script(game: Game, keys: list[str], out: IO[str]) -> None:
    """Each key of the script is one step (real-time envs too), each frame printed; q ends it."""
    for key in keys:
        if key == QUIT:
            break
        if key not in game.keys:
            raise PlayError(f"--keys: {key!r} is not a key of {game.name}; {legend(game.keys)}")
        action, word = game.keys[key]
        game.last = f"{key} {word}"
        game.step(action)
        out.write(game.frame() + "\n\n")


def play_terminal(game: Game, fd: int, fps: float, out: IO[str]) -> None:
    """Keys from terminal `fd` until q: a step per mapped key, or every 1/fps s with the last one held."""

    def draw(note: str = "") -> None:
        out.write(f"\x1b[H\x1b[2J{game.frame()}\n{legend(game.keys)}\n{note}")
        out.flush()

    held = game.keymap.idle if fps > 0 else None
    draw()
    next_tick = time.monotonic() + (1 / fps if fps > 0 else 0)
    while True:
        wait = max(0.0, next_tick - time.monotonic()) if fps > 0 else None
        note = ""
        for key in keypresses(fd, wait):
            if key == QUIT:
                return
            if key not in game.keys:
                note = f"{key!r} is not a key here"
                continue
            action, word = game.keys[key]
            game.last = f"{key} {word}"
            if fps > 0:
                held = action
            else:
                game.step(action)
        if fps > 0 and time.monotonic() >= next_tick:
            next_tick += 1 / fps
            if held is not None:
                game.step(held)
        draw(note)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="play a native or ocean env by hand in the terminal")
    p.add_argument("env", help="e.g. ocean/connect4, ocean/squared, ocean/pong")
    p.add_argument("--seed", type=int, default=0, help="the env's seed (default 0)")
    p.add_argument(
        "--fps",
        type=float,
        help="steps a second on a timer, the last key held (default: the env's; 0: a step per key)",
    )
    p.add_argument(
        "--keys", help="play this key sequence instead of the terminal (characters, <up>, <space>, ...)"
    )
    p.add_argument("--map", dest="keymap", help="your own keys: 'KEY=ACTION,...' (action indices)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except PlayError as e:
        print(f"puffer play: error: {e}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    import pufferlib.environments as envs
    from pufferlib import EnvironmentSetupError

    if args.fps is not None and not 0 <= args.fps <= 1000:
        raise PlayError(f"--fps must be 0..1000, got {args.fps:g} (0: a step per key)")
    if args.keys is None and not sys.stdin.isatty():
        raise PlayError("stdin is not a terminal: play in one, or script the keys with --keys STRING")
    keys = script_keys(args.keys) if args.keys is not None else None
    try:
        binding = envs.get(args.env)
        if binding not in candidates():
            raise PlayError(f"{args.env} is not a native or ocean env available here")
        keymap = KEYMAPS.get(binding.name, KeyMap({}))
        env = make(binding, args.seed, keymap.kwargs)
    except (PlayError, envs.UnknownEnvironmentError, EnvironmentSetupError) as e:
        raise PlayError(
            f"cannot play {args.env}: {str(e).rstrip('.')}. Playable here: {', '.join(playable())}"
        ) from None
    n = actions(env)
    if not keymap.keys:
        keymap = index_keymap(n)
    keymap_keys = parse_map(args.keymap, n) if args.keymap else keymap.keys
    game = Game(binding.name, env, keymap, keymap_keys)
    fps = keymap.fps if args.fps is None else args.fps
    out = sys.stdout
    try:
        if keys is not None:
            out.write(f"{legend(game.keys)}\n{game.frame()}\n\n")
            play_script(game, keys, out)
        else:
            fd = sys.stdin.fileno()
            with raw_terminal(fd, out), contextlib.suppress(KeyboardInterrupt):  # Ctrl-C quits as q does
                play_terminal(game, fd, fps, out)
    finally:
        env.close()
    print(game.summary())
    return 0
