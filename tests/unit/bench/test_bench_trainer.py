"""The trainer benchmark compares like with like: ours at CleanRL's settings builds CleanRL's network
(the textbook peer's), and a mean return is read at a step mark only from a run that got there."""

from torch import nn

import pufferlib.environments as environments
from pufferlib.bench import ppo_peer
from pufferlib.bench.trainer import CLEANRL, ENV, at_mark
from pufferlib.train import config, setup


def shape(module: nn.Module) -> tuple[list[tuple[int, ...]], list[str]]:
    """Every parameter's shape and every activation's name, in order."""
    shapes = sorted(tuple(p.shape) for p in module.parameters())
    kinds = nn.Tanh | nn.GELU | nn.ReLU
    activations = sorted(type(m).__name__ for m in module.modules() if isinstance(m, kinds))
    return shapes, activations


def test_ours_at_cleanrl_settings_has_the_textbook_network():
    cfg = config.load(ENV, {k: v for k, v in CLEANRL.items() if k.startswith("policy.")})
    binding = environments.get(ENV)
    env = environments.make(ENV)
    try:
        ours = setup.make_policy(binding, env, cfg)
        obs = env.single_observation_space.shape[0]
        theirs = ppo_peer.Agent(obs, int(env.single_action_space.n))
        assert shape(ours) == shape(theirs)
        # the default policy (one shared trunk, GELU) is a different network: the check can go red
        cfg = config.load(ENV, {"policy.hidden_size": 64})
        assert shape(setup.make_policy(binding, env, cfg)) != shape(theirs)
    finally:
        env.close()


def test_a_mark_is_read_only_from_a_run_that_reached_it():
    curve = [(512 * k, float(k)) for k in range(1, 293)]  # 292 updates of 512 steps: 149,504 steps
    assert at_mark(curve, 60_000) == 117.0  # the last update at or before 60k: 117 x 512 = 59,904
    assert at_mark(curve, 150_000) == 292.0  # less than one update short of the mark: counted
    assert at_mark(curve[:39], 60_000) is None  # a 20k-step run says nothing about 60k
    assert at_mark(curve, 100) is None  # before the first update
