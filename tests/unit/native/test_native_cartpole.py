"""Native ocean/cartpole: the ladder, and gymnasium CartPole-v1's dynamics step for step."""

import gymnasium
import numpy as np
import pytest
from _native_ladder import Ladder

from pufferlib.ocean.native import NativeEnv

ladder = Ladder("cartpole")


@pytest.mark.parametrize(
    "rung",
    [
        "same_seed_identical",
        "threads_identical",
        "seeds_differ",
        "reset_reseeds",
        "actions_refused",
        "every_element_written",
        "renders",
        "close_frees",
    ],
)
def test_ladder(rung):
    getattr(ladder, rung)()


def test_fuzz_under_asan_and_ubsan(tmp_path):
    ladder.fuzz_clean(tmp_path)


def test_matches_gymnasium_dynamics():
    """From each of our start states, gymnasium's CartPole-v1 fed the same pushes gives the same states,
    rewards and termination step (ours is float32, gymnasium float64: close, not equal)."""
    env = NativeEnv("cartpole", num_envs=16)
    obs = env.reset(0)[0].copy()
    ref = gymnasium.make("CartPole-v1").unwrapped
    rng = np.random.default_rng(0)
    pushes = rng.integers(0, 2, (500, 16)).astype(np.int32)
    states = [np.array(o, dtype=np.float64) for o in obs]
    ended_at = np.full(16, -1)
    ours = []
    for t in range(500):
        o, r, term, _trunc, _ = env.step(pushes[t])
        assert (r == 1).all()
        ours.append((o.copy(), term.copy()))
    for i in range(16):
        ref.reset(seed=0)
        ref.state = states[i]
        for t in range(500):
            ref_obs, _reward, terminated, _, _ = ref.step(int(pushes[t, i]))
            o, term = ours[t]
            assert terminated == bool(term[i]), f"env {i} step {t}: gymnasium terminated={terminated}"
            if terminated:
                ended_at[i] = t
                break
            assert np.allclose(ref_obs, o[i], atol=1e-4), (i, t, ref_obs, o[i])
    assert (ended_at > 0).all()
    env.close()
