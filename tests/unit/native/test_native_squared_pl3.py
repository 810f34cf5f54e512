"""Native ocean/squared_pl3 (PufferLib 3.0's squared rules): the ladder, the rules step for step against
a Python transcription of them, a short training run, and its keyword checks."""

import numpy as np
import pytest
from _native_ladder import Ladder

from pufferlib.ocean.native import NativeEnv
from pufferlib.train import train

ladder = Ladder("squared_pl3")


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
    ladder.fuzz_clean(tmp_path)


def rules(grid: np.ndarray, action: int, tick: int) -> tuple[float, bool, np.ndarray]:
    """One step of PufferLib 3.0's squared from `grid` (0 empty, 1 agent, 2 target) at `tick` steps:
    (reward, terminal, next grid or None when the episode ended)."""
    size = grid.shape[0]
    r, c = (int(v[0]) for v in np.nonzero(grid == 1))
    r += {1: 1, 2: -1}.get(action, 0)
    c += {4: 1, 3: -1}.get(action, 0)
    if tick + 1 > 3 * size or not (0 <= r < size and 0 <= c < size):
        return -1.0, True, None
    if grid[r, c] == 2:
        return 1.0, True, None
    nxt = grid.copy()
    nxt[nxt == 1] = 0
    nxt[r, c] = 1
    return 0.0, False, nxt


@pytest.mark.parametrize("size", [11, 5])
def test_same_rules_as_pufferlib3(size):
    env = NativeEnv("squared_pl3", num_envs=1, size=size)
    obs = env.reset(3)[0][0].copy()
    rng = np.random.default_rng(0)
    tick, ends, hits = 0, 0, 0
    for _ in range(3000):
        assert obs[size // 2, size // 2] == 1 or tick, "an episode starts at the centre"
        assert (obs == 1).sum() == 1 and (obs == 2).sum() == 1
        a = int(rng.integers(5))
        reward, terminal, expect = rules(obs, a, tick)
        new, rewards, terms, truncs, infos = env.step(np.array([a], np.int32))
        assert (rewards[0], bool(terms[0]), bool(truncs[0])) == (reward, terminal, False)
        if terminal:
            assert infos[0]["episode_length"] == tick + 1 and infos[0]["score"] == (reward > 0)
            ends, hits, tick = ends + 1, hits + (reward > 0), 0
        else:
            assert np.array_equal(new[0], expect)
            tick += 1
        obs = new[0].copy()
    assert ends > 50 and hits > 0
    env.close()


def test_trains_past_random_play(tmp_path):
    """Random play hits the target in about half its episodes (mean return -0.02); 1.5M steps of PPO take
    it past 0.2 (seeds 1, 2, 3: 0.60, 0.79, 0.62 on the 2-core box; at 1M, seed 1 reached 0.33 on one
    machine and 0.08 on another: too close to the line). One torch thread: the suite may run beside
    other work."""
    overrides = {"train.total_timesteps": 1_500_000, "train.torch_threads": 1}
    summary = train("ocean/squared_pl3", overrides, checkpoint_dir=tmp_path)
    assert summary["mean_return"] > 0.2, summary


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"size": 10}, "size must be odd"),
        ({"size": 1}, r"size must be in 3\.\.63, got 1"),
        ({"distance_to_target": 2}, "unknown keyword 'distance_to_target'"),
    ],
)
def test_rejects_bad_config(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        NativeEnv("squared_pl3", **kwargs)
