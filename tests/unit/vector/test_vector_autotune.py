"""pufferlib.vector.autotune measures real envs, prints what it measured and returns a configuration
that pufferlib.vector.make accepts; bad input is refused naming the argument. No timing asserted."""

import functools

import pytest

import pufferlib.vector
from pufferlib import APIUsageError
from pufferlib.environments import ocean
from pufferlib.vector import physical_cores
from pufferlib.vector.autotune import candidates

squared = functools.partial(ocean.make_env, "squared")


def test_end_to_end_on_a_real_env(capsys):
    config = pufferlib.vector.autotune(squared, batch_size=2, time_per_test=0.05, model_forward_s=0.0001)
    out = capsys.readouterr().out
    assert "Profiled one env" in out and "steps/s" in out and out.count("agent steps/s") >= 3
    assert "(1 agent per env)" in out
    assert f"Fastest: backend={config['backend']}" in out
    assert config["backend"] in ("serial", "multiprocessing") and config["batch_size"] == 2
    with pufferlib.vector.make(squared, **config) as vecenv:  # what it returns, make accepts as is
        vecenv.reset()
        vecenv.step([0] * vecenv.agents_per_batch)
        assert vecenv.agents_per_batch == 2


@pytest.mark.parametrize("cores", [1, 2, 8])
def test_every_candidate_is_a_layout_make_accepts(cores):
    configs = candidates(batch_size=8, max_envs=24, cores=cores)
    assert configs[0] == {"backend": "serial", "num_envs": 8, "batch_size": 8}
    assert any(c.get("zero_copy") is False for c in configs) == (cores > 1)  # async needs 2+ workers
    assert all(c.get("num_workers", 1) <= cores and c["num_envs"] <= 24 for c in configs)
    overwork = cores > physical_cores()  # only to build, here, what a bigger machine would run
    for config in configs:
        with pufferlib.vector.make(squared, **config, overwork=overwork) as vecenv:
            vecenv.reset()
    assert max(c["num_envs"] for c in candidates(batch_size=8, max_envs=16, cores=cores)) <= 16


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"batch_size": 0}, "batch_size must be a positive integer"),
        ({"batch_size": "8"}, "batch_size must be a positive integer"),
        ({"batch_size": 8, "max_envs": 4}, r"max_envs=4 < batch_size=8.*raise max_envs to 8"),
        ({"batch_size": 2, "time_per_test": 0}, "time_per_test must be a finite number > 0"),
        ({"batch_size": 2, "model_forward_s": -1}, "model_forward_s must be a finite number >= 0"),
        ({"batch_size": 2, "max_env_ram_gb": float("nan")}, "max_env_ram_gb must be a finite number > 0"),
        ({"batch_size": 2, "max_batch_vram_gb": 1e-12}, r"a batch of 2 envs holds .* GB of observations"),
    ],
)
def test_bad_input_is_refused_clearly(kwargs, message):
    with pytest.raises(APIUsageError, match=message):
        pufferlib.vector.autotune(squared, **{"time_per_test": 0.01, **kwargs})


def test_a_creator_that_is_not_callable():
    with pytest.raises(APIUsageError, match="env_creator must be a callable"):
        pufferlib.vector.autotune(squared(), batch_size=2)
