"""Native ocean/snake: many snakes per map (one agent row each), their egocentric crops, food,
death and truncation with the autoreset rule, respawn masks, and the testing ladder (seeds, every
output written, bad actions, close)."""

import re

import numpy as np
import pytest
from _native_ladder import NATIVE, Ladder, fuzz

from pufferlib.ocean.native import NativeEnv

EMPTY, FOOD, CORPSE, WALL, SELF, OTHER = range(6)
UP, DOWN, LEFT, RIGHT = range(4)
STEP = {UP: (-1, 0), DOWN: (1, 0), LEFT: (0, -1), RIGHT: (0, 1)}


SMALL = {"width": 16, "height": 12, "num_snakes": 6, "num_food": 10, "vision": 2}
ladder = Ladder("snake", kwargs=SMALL)


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


# The C-only build takes the defaults: PufferLib's map, and a crowded 6x5 one where snakes run out of
# room (respawns and food wait), corpses pile up, episodes are truncated and respawns delayed.
CROWDED = (
    "SNAKE_WIDTH=6",
    "SNAKE_HEIGHT=5",
    "SNAKE_SNAKES=7",
    "SNAKE_FOOD_CELLS=6",
    "SNAKE_VISION=3",
    "SNAKE_MAX_LENGTH=9",
    "SNAKE_MAX_STEPS=40",
    "SNAKE_RESPAWN_DELAY=2",
)


@pytest.mark.parametrize(
    ("defines", "iterations"), [((), 2000), (CROWDED, 20000)], ids=["default", "crowded"]
)
def test_fuzz_under_asan_and_ubsan(tmp_path, defines, iterations):
    run = fuzz(NATIVE / "snake" / "binding.c", tmp_path, iterations, defines=defines)
    assert run.returncode == 0 and run.stdout.startswith("ok"), (run.stdout + run.stderr)[-3000:]
    assert not re.search(r"runtime error|AddressSanitizer", run.stderr), run.stderr[-3000:]


def _env(num_envs: int = 1, seed: int = 0, **kwargs) -> NativeEnv:
    return NativeEnv("snake", num_envs=num_envs, seed=seed, **kwargs)


def _crop(env: NativeEnv, row: int, vision: int) -> np.ndarray:
    side = 2 * vision + 1
    return env.observations[row].reshape(side, side)


def _towards(crop: np.ndarray, tiles: tuple[int, ...]) -> int | None:
    """A direction whose neighbouring cell holds one of `tiles`, or None."""
    v = crop.shape[0] // 2
    for action, (dr, dc) in STEP.items():
        if crop[v + dr, v + dc] in tiles:
            return action
    return None


def test_spaces_and_agent_rows():
    env = _env(num_envs=2, width=12, height=9, num_snakes=3, num_food=4, vision=2)
    try:
        assert env.num_agents == 6 and env.single_action_space.n == 4
        assert env.single_observation_space.shape == (5, 5) and env.single_observation_space.dtype == np.uint8
        assert env.single_observation_space.high.max() == OTHER
        env.reset(seed=0)
        for row in range(6):
            crop = _crop(env, row, 2)
            assert crop[2, 2] == SELF  # the head is always at the centre
        food = sum(int((env.observations[r] == FOOD).sum()) for r in range(6))
        assert food > 0
    finally:
        env.close()


def test_defaults_are_pufferlibs():
    env = _env()
    try:
        assert env.num_agents == 256 and env.single_observation_space.shape == (11, 11)
    finally:
        env.close()


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"width": 2, "height": 2, "num_snakes": 3, "num_food": 2}, "must fit on the width x height map"),
        ({"vision": 40}, "vision must be in 0..32, got 40"),
        ({"num_snakes": 0}, "num_snakes must be in 1..65536"),
        ({"leave_corpse": 2}, "leave_corpse must be in 0..1"),
    ],
)
def test_bad_kwargs_name_the_key_and_range(kwargs, words):
    with pytest.raises(ValueError, match=words):
        _env(**kwargs)


def test_unknown_kwarg_lists_the_valid_ones():
    with pytest.raises(TypeError, match=r"unknown keyword 'vison'.*vision"):
        _env(vison=3)


def test_walls_kill_and_the_snake_respawns_in_the_same_step():
    """A 1x1 map: every move leaves it. Each step is a whole episode: terminal, reward_death, and the
    observation already the respawned snake's (mask stays 1)."""
    env = _env(width=1, height=1, num_snakes=1, num_food=0, vision=1, reward_death=-2.0)
    try:
        env.reset(seed=0)
        for action in range(4):
            _, _, _, _, infos = env.step(np.array([action]))
            assert env.terminals[0] and not env.truncations[0] and env.masks[0]
            assert env.rewards[0] == -2.0
            assert _crop(env, 0, 1).tolist() == [[WALL] * 3, [WALL, SELF, WALL], [WALL] * 3]
            assert infos == [
                {"episode_return": -2.0, "episode_length": 1.0, "score": 1.0, "died": 1.0, "n": 1}
            ]
    finally:
        env.close()


def test_food_pays_and_grows_then_turning_back_goes_straight():
    """A 1x5 corridor: the snake at its left end eats the food next to it (reward, length 2); a move
    back into its own neck goes straight on instead; running into the end wall leaves a corpse."""
    env = _env(width=5, height=1, num_snakes=1, num_food=1, vision=2, reward_food=0.5)
    try:
        for seed in range(200):  # a start with the snake at column 0 and the food at column 1
            env.reset(seed=seed)
            crop = _crop(env, 0, 2)
            if crop[2, 1] == WALL and crop[2, 3] == FOOD:
                break
        else:
            pytest.fail("no seed puts the snake at column 0 and the food at column 1")
        env.step(np.array([RIGHT]))
        assert env.rewards[0] == 0.5 and not env.terminals[0]
        assert (env.observations[0] == SELF).sum() == 2  # grown by one
        env.step(np.array([LEFT]))  # into the neck: goes right instead (left would be death)
        crop = _crop(env, 0, 2)
        assert not env.terminals[0] and crop[2, 1] == SELF
        for _ in range(5):  # on to the right-hand wall
            env.step(np.array([RIGHT]))
            if env.terminals[0]:
                break
        assert env.terminals[0] and env.rewards[0] == -1.0
        env.render_mode = "ansi"
        assert "%" in env.render()  # the corpse (unless the respawn landed on it: it alternates cells)
    finally:
        env.close()


def test_eating_and_death_against_a_reference_walk():
    """A snake alone on a 6x6 map with food, steered to food when it sees some, else to an empty
    cell, else anywhere, and into a wall now and then: rewards, growth and deaths follow the rules,
    and every death is logged with the snake's length."""
    env = _env(width=6, height=6, num_snakes=1, num_food=3, vision=6, leave_corpse=0)
    rng = np.random.default_rng(1)
    try:
        env.reset(seed=1)
        length, longest, deaths, logged = 1, 1, 0, 0
        for t in range(400):
            crop = _crop(env, 0, 6)
            action = _towards(crop, (WALL,)) if t % 40 == 39 else None
            if action is None:
                action = _towards(crop, (FOOD,))
            if action is None:
                action = _towards(crop, (EMPTY,))
            if action is None:
                action = int(rng.integers(0, 4))
            dr, dc = STEP[action]
            ahead = crop[6 + dr, 6 + dc]
            _, rewards, terminals, _, infos = env.step(np.array([action]))
            logged += sum(info["n"] for info in infos)
            if terminals[0]:
                deaths += 1
                assert rewards[0] == -1.0 and infos[0]["score"] == length
                length = 1
            elif ahead == FOOD:
                assert rewards[0] == pytest.approx(0.1)
                length += 1
                longest = max(longest, length)
            else:
                assert rewards[0] == 0
            assert (env.observations[0] == SELF).sum() == length
        assert longest > 3 and deaths > 3 and logged == deaths
    finally:
        env.close()


def test_truncation_ends_the_episode_without_the_death_penalty():
    env = _env(width=20, height=20, num_snakes=1, num_food=0, vision=1, max_steps=5)
    try:
        env.reset(seed=0)
        for t in range(1, 11):
            action = _towards(_crop(env, 0, 1), (EMPTY,))
            _, rewards, terminals, truncations, infos = env.step(np.array([action]))
            assert not terminals[0] and rewards[0] == 0 and env.masks[0]
            assert truncations[0] == (t % 5 == 0)
            if t % 5 == 0:
                assert infos == [
                    {"episode_return": 0.0, "episode_length": 5.0, "score": 1.0, "died": 0.0, "n": 1}
                ]
    finally:
        env.close()


def test_respawn_delay_masks_the_dead_row_only():
    """Snake 0 dies at once (a 1-wide map, moving off it); with respawn_delay 3 its row is absent
    (mask 0, zero observation) for 3 steps from its death, then back; snake 1 stays live."""
    env = _env(width=1, height=8, num_snakes=2, num_food=0, vision=1, respawn_delay=3)
    try:
        env.reset(seed=0)
        masks, terminals = [], []
        for t in range(5):
            actions = np.array([LEFT if t == 0 else _towards(_crop(env, 0, 1), (EMPTY,)) or 0, 0])
            actions[1] = _towards(_crop(env, 1, 1), (EMPTY,)) or 0
            env.step(actions)
            masks.append(env.masks.tolist())
            terminals.append(env.terminals.tolist())
            if not env.masks[0]:  # the death step carries the terminal and its penalty, then nothing
                assert not env.observations[0].any() and env.rewards[0] == (-1.0 if t == 0 else 0.0)
        assert [m[0] for m in masks] == [False, False, False, True, True]
        assert [t[0] for t in terminals] == [True, False, False, False, False]
        assert all(m[1] for m in masks)
    finally:
        env.close()


def test_render_and_ansi():
    env = _env(width=16, height=9, num_snakes=3, num_food=5, vision=2)
    try:
        env.reset(seed=0)
        frame = env.render()
        assert frame.shape == (360, 640, 3) and frame.dtype == np.uint8 and frame.std() > 0
        env.render_mode = "ansi"
        text = env.render()
        lines = text.splitlines()
        assert len(lines) == 1 + 9 + 2 and all(len(line) == 18 for line in lines[1:])
        assert "*" in text and sum(ch.isupper() for ch in text) >= 3
    finally:
        env.close()


def test_the_default_policy_reads_the_tiles():
    import torch

    import pufferlib.environments as envs
    from pufferlib.environments.support.policies import Tiles

    binding = envs.get("ocean/snake")
    env = binding.make_env(**SMALL)
    try:
        policy = binding.policy_class()(env)
        assert isinstance(policy, Tiles) and policy.tiles == OTHER + 1 and policy.cells == 25
        env.reset(seed=0)
        logits, value = policy(torch.from_numpy(env.observations))
        assert logits.shape == (6, 4) and value.shape == (6, 1)
        other = env.observations.copy()
        other[:, 0] = (other[:, 0] + 1) % (OTHER + 1)  # one cell's tile changes the features
        assert not torch.equal(policy(torch.from_numpy(other))[0], logits)
    finally:
        env.close()


def test_training_runs_over_rows_that_leave_and_return():
    """A short `puffer train` on crowded maps with delayed respawns: rows go absent (mask 0) and come
    back throughout; only live rows count as steps, and the deaths reach the episode stats."""
    from pufferlib.train import train

    kwargs = {"width": 8, "height": 8, "num_snakes": 6, "num_food": 4, "vision": 2, "respawn_delay": 3}
    absent = []
    overrides = {f"env.{k}": v for k, v in kwargs.items()}
    overrides.update({"train.total_timesteps": 1536, "vec.num_envs": 4, "train.num_steps": 16})
    env = _env(num_envs=4, **kwargs)
    try:  # the same maps under random moves: rows are absent a good part of the time
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in range(64):
            env.step(rng.integers(0, 4, env.num_agents))
            absent.append(1 - env.masks.mean())
    finally:
        env.close()
    assert 0.1 < np.mean(absent) < 0.9
    stats: list[dict] = []
    summary = train("ocean/snake", overrides, on_update=lambda p: stats.append(p["env_stats"]))
    assert summary["steps"] >= 1536 and summary["episodes"] > 20
    assert stats[-1]["died"] == 1.0 and stats[-1]["score"] >= 1


def test_a_one_wide_map_still_kills_sideways_moves():
    """On a 1-cell-wide map a step left from a grown snake leaves the map (death); it must not be
    mistaken for a turn into the neck (whose cell index it would share in row-major order)."""
    env = _env(width=1, height=3, num_snakes=1, num_food=1, vision=1)
    try:
        for seed in range(200):  # the snake at the top, the food below it
            env.reset(seed=seed)
            crop = _crop(env, 0, 1)
            if crop[0, 1] == WALL and crop[2, 1] == FOOD:
                break
        else:
            pytest.fail("no seed puts the snake at the top and the food below it")
        env.step(np.array([DOWN]))
        assert env.rewards[0] == pytest.approx(0.1) and (env.observations[0] == SELF).sum() == 2
        env.step(np.array([LEFT]))
        assert env.terminals[0] and env.rewards[0] == -1.0
    finally:
        env.close()
