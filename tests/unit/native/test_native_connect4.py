"""Native ocean/connect4: the rules against a reference written here, the two players' rows and
masks, illegal moves, autoreset and the log, the action mask as the trainer finds it (never an
illegal move over 10k trained steps), and the testing ladder (seeds, every output written, bad
actions, fuzz, close)."""

import gymnasium
import numpy as np
import pytest
from _native_ladder import Ladder

import pufferlib
import pufferlib.environments
from pufferlib import EnvironmentSetupError
from pufferlib.ocean.native import NativeEnv
from pufferlib.ocean.native.fields import structure

ladder = Ladder("connect4")


@pytest.mark.parametrize(
    "rung",
    [
        "same_seed_identical",
        "threads_identical",
        "seeds_differ",
        "reset_reseeds",
        "actions_refused",
        "every_element_written",
        "episodes_logged",
        "renders",
        "close_frees",
    ],
)
def test_ladder(rung):
    getattr(ladder, rung)()


def test_fuzz_under_asan_and_ubsan(tmp_path):
    ladder.fuzz_clean(tmp_path, iterations=20000)


ROWS, COLS = 6, 7
CELLS = ROWS * COLS
MASK = slice(0, COLS)
BOARD = slice(COLS, COLS + 2 * CELLS)
TO_MOVE = COLS + 2 * CELLS


class Reference:
    """Connect Four as the header specifies it, in plain Python: board[r][c], row 0 at the top."""

    def __init__(self, first: int) -> None:
        self.board = [[0] * COLS for _ in range(ROWS)]
        self.to_move = self.first = first

    def legal(self) -> list[int]:
        return [c for c in range(COLS) if self.board[0][c] == 0]

    def play(self, col: int) -> tuple[list[float], bool]:
        """(rewards of rows 0 and 1, game over) after the player to move drops in `col`."""
        p = self.to_move
        if col not in self.legal():
            rewards = [0.0, 0.0]
            rewards[p] = -1.0
            return rewards, True
        r = max(r for r in range(ROWS) if self.board[r][col] == 0)
        self.board[r][col] = 1 + p
        if self._four(r, col):
            rewards = [0.0, 0.0]
            rewards[p], rewards[1 - p] = 1.0, -1.0
            return rewards, True
        if not self.legal():
            return [0.0, 0.0], True
        self.to_move = 1 - p
        return [0.0, 0.0], False

    def _four(self, r0: int, c0: int) -> bool:
        piece = self.board[r0][c0]
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            count = 1
            for sign in (-1, 1):
                r, c = r0 + sign * dr, c0 + sign * dc
                while 0 <= r < ROWS and 0 <= c < COLS and self.board[r][c] == piece:
                    count, r, c = count + 1, r + sign * dr, c + sign * dc
            if count >= 4:
                return True
        return False

    def observation(self, row: int) -> np.ndarray:
        board = np.array(self.board)
        legal = self.legal()
        mask = (
            [int(c in legal) for c in range(COLS)]
            if self.to_move == row
            else [int(c == legal[0]) for c in range(COLS)]
        )
        return np.concatenate(
            [mask, (board == 1 + row).ravel(), (board == 2 - row).ravel(), [int(self.to_move == row)]]
        ).astype(np.uint8)


def _env(num_envs: int = 1, seed: int = 0) -> NativeEnv:
    return NativeEnv("connect4", num_envs=num_envs, seed=seed)


def _to_move(env: NativeEnv, game: int = 0) -> int:
    return int(env.observations[2 * game + 1, TO_MOVE])


def _play(env: NativeEnv, cols: list[int], game: int = 0) -> tuple[list[tuple], dict]:
    """Drop `cols` in order (whoever is to move); the waiting row sends column 6. Returns each step's
    (rewards, terminals) copies and the episode info of the games that ended."""
    out, info = [], {}
    for col in cols:
        actions = np.full(env.num_agents, 6, np.int32)
        actions[2 * game + _to_move(env, game)] = col
        infos = env.step(actions)[4]
        out.append((env.rewards.copy(), env.terminals.copy()))
        info.update(*infos)
    return out, info


def test_spaces_rows_and_the_mask_layout():
    from pufferlib.frameworks.cleanrl import mask_layout

    env = _env(num_envs=3)
    try:
        assert env.num_agents == 6 and env.single_action_space.n == COLS
        assert env.single_observation_space.shape == (COLS + 2 * CELLS + 1,)
        assert env.single_observation_space.dtype == np.uint8
        layout = mask_layout(env)
        assert layout is not None and layout["action_mask"][1] == (COLS,)
        assert layout["action_mask"][2] == 0  # the byte offset of the mask in a row
    finally:
        env.close()


def test_random_games_match_the_reference():
    """300 games of random columns (illegal ones included) against the reference: every
    observation, reward and terminal, and the autoreset into the next game (first player alternating)."""
    env = _env()
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=3)
        ref = Reference(_to_move(env))
        games = 0
        while games < 300:
            for row in range(2):
                np.testing.assert_array_equal(env.observations[row], ref.observation(row))
            col = int(rng.integers(0, COLS)) if rng.random() < 0.1 else int(rng.choice(ref.legal()))
            actions = rng.integers(0, COLS, 2).astype(np.int32)
            actions[ref.to_move] = col
            rewards, over = ref.play(col)
            env.step(actions)
            assert env.rewards.tolist() == rewards
            assert env.terminals.tolist() == [over, over] and not env.truncations.any() and env.masks.all()
            if over:
                games += 1
                ref = Reference(1 - ref.first)  # the first player alternates
                assert _to_move(env) == ref.to_move
    finally:
        env.close()


def test_a_vertical_four_wins_and_the_log_counts_it():
    env = _env()
    try:
        env.reset(seed=0)
        first = _to_move(env)
        steps, log = _play(env, [0, 1, 0, 1, 0, 1, 0])
        rewards, terminals = steps[-1]
        assert rewards[first] == 1 and rewards[1 - first] == -1 and terminals.all()
        assert all(not t.any() for _, t in steps[:-1])
        assert _to_move(env) == 1 - first  # the next game is already on, the other player opens
        assert env.observations[:, BOARD].sum() == 0
        assert log["n"] == 1 and log["episode_length"] == 7 and log["first_wins"] == 1
        assert log[f"p{first}_wins"] == 1 and log[f"p{1 - first}_losses"] == 1 and log["illegal"] == 0
        assert log["episode_return"] == log["score"] == (1 if first == 0 else -1)
    finally:
        env.close()


def test_a_full_column_loses_the_game_for_the_player_to_move():
    env = _env()
    try:
        env.reset(seed=0)
        first = _to_move(env)
        _play(env, [3] * 6)  # column 3 full, nobody has four
        mover = _to_move(env)
        assert mover == first and env.observations[2 * 0 + mover, MASK].tolist() == [1, 1, 1, 0, 1, 1, 1]
        [(rewards, terminals)], log = _play(env, [3])
        assert rewards[mover] == -1 and rewards[1 - mover] == 0 and terminals.all()
        assert log["illegal"] == 1 and log[f"p{mover}_losses"] == 1 and log[f"p{1 - mover}_wins"] == 1
    finally:
        env.close()


def test_the_waiting_row_is_present_with_one_placeholder_action_and_is_ignored():
    env = _env()
    try:
        env.reset(seed=0)
        mover = _to_move(env)
        waiting = 1 - mover
        assert env.masks.all()
        assert env.observations[waiting, MASK].tolist() == [1, 0, 0, 0, 0, 0, 0]
        assert env.observations[waiting, TO_MOVE] == 0 and env.observations[mover, TO_MOVE] == 1
        before = env.observations.copy()
        actions = np.zeros(2, np.int32)
        actions[mover], actions[waiting] = 4, 2
        env.step(actions)
        theirs = env.observations[
            waiting, COLS + CELLS : COLS + 2 * CELLS
        ]  # the mover's piece, seen by the other
        board = theirs.reshape(ROWS, COLS)
        assert board[ROWS - 1, 4] == 1 and board.sum() == 1 and not np.array_equal(before, env.observations)
        assert env.observations[mover, MASK].tolist() == [1, 0, 0, 0, 0, 0, 0]  # now it waits
        _play(env, [0] * 6)  # column 0 fills up: the placeholder moves to the lowest legal column
        waiting = 1 - _to_move(env)
        assert env.observations[waiting, MASK].tolist() == [0, 1, 0, 0, 0, 0, 0]
    finally:
        env.close()


def test_a_draw_pays_nothing_and_is_logged():
    # Columns filled two at a time, each pair's colours swapped half way up, then column 6: no four.
    order = [0, 1] * 3 + [1, 0] * 3 + [2, 3] * 3 + [3, 2] * 3 + [4, 5] * 3 + [5, 4] * 3 + [6] * 6
    ref = Reference(0)
    for i, col in enumerate(order):
        rewards, over = ref.play(col)
        assert not over or i == len(order) - 1, f"the test's sequence has a win at move {i}"
    assert over and rewards == [0.0, 0.0]
    env = _env()
    try:
        env.reset(seed=0)
        steps, log = _play(env, order)
        rewards, terminals = steps[-1]
        assert rewards.tolist() == [0, 0] and terminals.all()
        assert log["p0_draws"] == log["p1_draws"] == 1 and log["episode_length"] == CELLS
    finally:
        env.close()


def test_the_structure_round_trips_through_the_dict_it_describes():
    """The flat row read through `emulated` (as pufferlib.compat and the policies read it) is the
    observation's Dict: the mask, the two board planes and the turn flag."""
    from pufferlib.emulation import nativize

    env = _env()
    try:
        env.reset(seed=0)
        _play(env, [3, 4])
        e = env.emulated
        assert list(e["emulated_observation_space"]) == ["action_mask", "board", "to_move"]
        for row in range(2):
            ob = nativize(env.observations[row], e["emulated_observation_space"], e["observation_dtype"])
            assert ob["board"].shape == (2, ROWS, COLS) and ob["board"].sum() == 2
            assert ob["to_move"][0] == int(row == _to_move(env)) and ob["action_mask"].shape == (COLS,)
            assert e["emulated_observation_space"].contains(ob)
    finally:
        env.close()


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("action_mask:7 board:2x6x7", "hold 91 elements but a row has 92"),
        ("board:2x6x7 action_mask:7 to_move:1", "in name order"),
        ("action_mask:7 board:2x6xq to_move:1", "bad field 'board:2x6xq'"),
        ("action_mask:7 action_mask:84 to_move:1", "appears twice"),
    ],
)
def test_obs_fields_that_do_not_fit_the_row_are_refused(spec, words):
    box = gymnasium.spaces.Box(0, 1, (92,), np.uint8)
    with pytest.raises(EnvironmentSetupError, match=words):
        structure(spec, box, gymnasium.spaces.Discrete(COLS), "_connect4")


def test_the_trainer_sees_an_env_that_resets_in_the_step():
    """connect4 carries an `emulated` structure, yet the act step must not take it for an emulated
    env (whose done rows are reset-only): every game's first move would go untrained."""
    from pufferlib.emulation import GymnasiumPufferEnv
    from pufferlib.ocean.masked import Masked
    from pufferlib.train import config
    from pufferlib.train.ppo.act import Actor
    from pufferlib.train.ppo.normalize import VecNormalize
    from pufferlib.train.setup import make_policy, make_vecenv

    cfg = config.load("ocean/connect4", {"vec.num_envs": 2})
    binding = pufferlib.environments.get("ocean/connect4")
    vecenv = make_vecenv(binding, cfg)
    emulated = GymnasiumPufferEnv(env=Masked())
    try:
        assert vecenv.driver_env.emulated is not None
        actor = Actor(vecenv, make_policy(binding, vecenv, cfg), "cpu")
        assert not actor.resets_on_send
        assert not VecNormalize(vecenv, obs=False, reward=True).resets_on_send
        assert pufferlib.resets_on_send(emulated)
    finally:
        vecenv.close()
        emulated.close()


def _illegal_games(overrides: dict) -> tuple[dict, list[float]]:
    from pufferlib.train import train

    seen: list[float] = []
    cfg = {"train.total_timesteps": 10_000, "train.stop_when_solved": False, "vec.num_envs": 32, **overrides}
    summary = train(
        "ocean/connect4", cfg, on_update=lambda p: seen.append(p["env_stats"].get("illegal", 0.0))
    )
    return summary, seen


def test_training_never_plays_an_illegal_move():
    """10k trained steps of self-play: every game's `illegal` count is 0 (an illegal move ends the
    game and is logged, so a single one would show in the episode stats)."""
    summary, illegal = _illegal_games({})
    assert summary["steps"] >= 10_000 and summary["episodes"] > 100 and illegal
    assert max(illegal) == 0.0


def test_the_same_run_plays_illegal_moves_when_the_mask_is_ignored(monkeypatch):
    import pufferlib.frameworks.cleanrl as cleanrl

    monkeypatch.setattr(cleanrl, "mask_layout", lambda env: None)
    _, illegal = _illegal_games({})
    assert max(illegal) > 0.0
