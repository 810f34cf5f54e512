"""`puffer play`: real envs driven by a key script (`--keys`) or by a real pseudo-terminal, in a subprocess.
Bad input (an unknown or unplayable env, a key the env lacks, a bad --map, no terminal) is one line on
stderr naming the fix, exit 2, no traceback."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import subprocess
import sys
import termios
from pathlib import Path

import pytest

import pufferlib
from pufferlib import play
from pufferlib.ocean.native import unavailable

ROOT = Path(pufferlib.__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
NATIVE = ("connect4", "squared", "pong", "snake")
pytestmark = pytest.mark.skipif(
    any(unavailable(n) for n in NATIVE), reason="native envs not compiled: puffer build-native"
)
SUMMARY = re.compile(r"played (\S+): (\d+) episodes?, mean return (\S+) \((\d+) steps")


def puffer_play(*argv: str, stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "play", *argv],
        env=ENV,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def played(done: subprocess.CompletedProcess) -> tuple[str, int, str, int]:
    assert done.returncode == 0, done.stderr
    name, episodes, mean, steps = SUMMARY.match(done.stdout.strip().splitlines()[-1]).groups()
    return name, int(episodes), mean, int(steps)


def one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    return done.stderr


def bottom_row(frame: str) -> str:
    """Connect4's lowest board row (the line above the column labels)."""
    lines = frame.splitlines()
    return lines[lines.index("0 1 2 3 4 5 6") - 1]


def test_connect4_keys_drop_pieces_in_their_columns_and_a_four_ends_the_game():
    done = puffer_play("ocean/connect4", "--keys", "3")
    frames = done.stdout.split("\n\n")
    assert bottom_row(frames[0]) == ". . . . . . ."
    assert bottom_row(frames[1]) in (". . . X . . .", ". . . O . . .")
    # the first player drops four in column 0 (moves 1, 3, 5, 7): won, row 0's return is +1 or -1
    done = puffer_play("ocean/connect4", "--keys", "0101010")
    assert played(done) in (("ocean/connect4", 1, "+1.000", 7), ("ocean/connect4", 1, "-1.000", 7))
    assert "episodes 1 (last " in done.stdout.split("\n\n")[-2]
    assert bottom_row(done.stdout.split("\n\n")[-2]) == ". . . . . . ."  # the next game's board


def test_squared_arrows_are_wasd_and_q_stops_the_script():
    by_letter = puffer_play("ocean/squared", "--keys", "wasdq123")
    by_arrow = puffer_play("ocean/squared", "--keys", "<up><left><down><right>")
    assert played(by_letter)[3] == played(by_arrow)[3] == 4
    boards = [[f.splitlines()[:-1] for f in d.stdout.split("\n\n")[1:-1]] for d in (by_letter, by_arrow)]
    assert boards[0] == boards[1] and len(boards[0]) == 4
    assert len(set(map(tuple, boards[0]))) > 1  # the agent moved
    assert "keys: " in by_letter.stdout.splitlines()[0] and "y up-left" in by_letter.stdout


def test_seed_picks_the_layout():
    first = [puffer_play("ocean/snake", "--seed", s, "--keys", "w").stdout for s in ("1", "1", "2")]
    assert first[0] == first[1] and first[0] != first[2]


def test_a_real_time_env_steps_one_per_scripted_key_and_snake_is_small():
    assert played(puffer_play("ocean/pong", "--keys", "ws <up>"))[1:] == (0, "-", 4)
    snake = puffer_play("ocean/snake", "--keys", "d")
    assert "1 snakes" in snake.stdout and played(snake)[3] == 1


def test_a_python_ocean_env_plays_with_index_keys_and_resets_between_episodes():
    name, episodes, _, steps = played(puffer_play("ocean/bandit", "--keys", "0123"))
    assert (name, episodes, steps) == ("ocean/bandit", 4, 4)


def test_your_own_map_replaces_the_envs():
    done = puffer_play("ocean/connect4", "--map", "j=3,<k>=4,space=5", "--keys", "j")
    assert one_error_line(done) and "--map entry '<k>=4'" in done.stderr
    done = puffer_play("ocean/connect4", "--map", "j=3, space=5", "--keys", "j ")
    assert bottom_row(done.stdout.split("\n\n")[1])[6] in "XO" and played(done)[3] == 2
    for bad, why in (("j=7", "0..6"), ("q=1", "not q"), ("j", "KEY=ACTION"), (",", "empty")):
        assert why in one_error_line(puffer_play("ocean/connect4", "--map", bad, "--keys", "j"))


def test_bad_input_is_one_line_naming_the_fix():
    unknown = one_error_line(puffer_play("ocean/nope", "--keys", "0"))
    assert "Unknown environment 'ocean/nope'" in unknown and "Playable here: " in unknown
    assert "ocean/connect4" in unknown.split("Playable here: ")[1]
    boxed = one_error_line(puffer_play("ocean/continuous", "--keys", "0"))
    assert "Box" in boxed and "ocean/continuous" not in boxed.split("Playable here: ")[1]
    key = one_error_line(puffer_play("ocean/connect4", "--keys", "9"))
    assert "'9' is not a key of ocean/connect4" in key and "6 column 6" in key
    assert "<up>" in one_error_line(puffer_play("ocean/connect4", "--keys", "<upp>"))
    assert "0..1000" in one_error_line(puffer_play("ocean/pong", "--fps", "-1", "--keys", "w"))
    assert "not a terminal" in one_error_line(puffer_play("ocean/connect4"))


def test_parsers_go_red_on_bad_input():
    assert play.script_keys("a<left> ") == ["a", "left", "space"]
    assert play.parse_map("x=1,left=0", 2) == {"x": (1, "action 1"), "left": (0, "action 0")}
    with pytest.raises(play.PlayError, match="36 actions"):
        play.index_keymap(36)
    assert len(play.index_keymap(35).keys) == 35 and "q" not in play.index_keymap(35).keys


def read_until(fd: int, text: str) -> str:
    """What the terminal shows until `text` appears (or the far end closes)."""
    seen = ""
    while text not in seen:
        ready, _, _ = select.select([fd], [], [], 60)
        assert ready, f"no {text!r} within 60 s; saw {seen[-500:]!r}"
        try:
            chunk = os.read(fd, 4096).decode(errors="replace")
        except OSError:  # the far end closed
            break
        if not chunk:
            break
        seen += chunk
    return seen


def controlling_terminal() -> None:
    """In the child (a session leader): stdin's pty becomes its terminal, so Ctrl-C there is its SIGINT."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def terminal_play(*argv: str, script: list[tuple[str, str]]) -> tuple[str, list, list]:
    """`puffer play ARGV` on a real pseudo-terminal (its controlling one): after each `wait` text shows,
    type `keys`. Returns what the terminal showed and its settings before and after."""
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pufferlib.cli", "play", *argv],
        env=ENV,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=controlling_terminal,
    )
    shown = ""
    try:
        for wait, keys in script:
            shown += read_until(master, wait)
            os.write(master, keys.encode())
        shown += read_until(master, " steps;")  # the summary; read on: a full terminal would block the game
        assert proc.wait(timeout=120) == 0, shown
        after = termios.tcgetattr(slave)
    finally:
        proc.kill()
        os.close(master)
        os.close(slave)
    return shown, before, after


def test_a_terminal_plays_by_keypress_and_gets_its_settings_back():
    shown, before, after = terminal_play(
        "ocean/connect4", script=[("step 0", "3"), ("step 1", "\x1b[D"), ("step 1", "x4"), ("step 2", "q")]
    )
    assert "\x1b[H\x1b[2J" in shown and "'x' is not a key here" in shown and "keys: 0 column 0" in shown
    assert "played ocean/connect4: 0 episodes, mean return - (2 steps" in shown
    assert after == before and before[3] & termios.ICANON and before[3] & termios.ECHO


def test_a_real_time_env_steps_on_its_timer_with_the_key_held():
    shown, before, after = terminal_play(
        "ocean/pong", "--fps", "50", script=[("step 0", "w"), ("step 5", "q")]
    )
    assert "key: w up" in shown and after == before


def test_ctrl_c_quits_with_the_summary_and_the_terminal_restored():
    shown, before, after = terminal_play("ocean/squared", script=[("step 0", "w"), ("step 1", "\x03")])
    assert "played ocean/squared: 0 episodes, mean return - (1 steps" in shown and "Traceback" not in shown
    assert after == before


def test_the_terminal_is_restored_when_the_game_raises():
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    with open(os.devnull, "w") as out, pytest.raises(RuntimeError), play.raw_terminal(slave, out):
        assert not termios.tcgetattr(slave)[3] & termios.ICANON  # cbreak inside: keys unbuffered
        raise RuntimeError("the game broke")
    assert termios.tcgetattr(slave) == before
    os.close(master)
    os.close(slave)
