"""Bad config values are refused when the config is resolved, before anything is made: every numeric
key's range (config.RANGES), train.device's forms, text config.toml can hold, a config file that is
not UTF-8, and a rollout larger than the memory free for it."""

from __future__ import annotations

import math
import tomllib

import pytest

import pufferlib.environments as envs
from pufferlib.train import config, loop, train
from pufferlib.train.config import ConfigError
from pufferlib.train.ppo import rollout
from pufferlib.train.spec import RunSpec


def test_every_numeric_default_has_a_declared_range():
    numeric = {
        f"{section}.{key}"
        for section, values in config.defaults().items()
        for key, value in values.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
    assert numeric - set(config.RANGES) == set(), "declare their valid values in config.RANGES"


def test_every_shipped_config_file_is_in_range():
    for path in sorted(config.CONFIG_DIR.glob("*.toml")):
        for section, values in tomllib.loads(path.read_text()).items():
            for key, value in values.items():
                config.check_value(section, key, value, str(path))


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("train.learning_rate", "-1", r"train\.learning_rate must be > 0, got -1\.0"),
        ("train.learning_rate", "nan", r"train\.learning_rate must be > 0, got nan"),
        ("train.max_seconds", "-5", r"train\.max_seconds must be >= 0, got -5\.0"),
        ("train.checkpoint_interval", "-1", r"train\.checkpoint_interval must be >= 0, got -1"),
        ("train.gamma", "0", r"train\.gamma must be in \(0, 1\], got 0\.0"),
        ("train.gamma", "1.5", r"train\.gamma must be in \(0, 1\], got 1\.5"),
        ("train.gae_lambda", "1.01", r"train\.gae_lambda must be in \[0, 1\], got 1\.01"),
        ("train.clip_coef", "0", r"train\.clip_coef must be > 0"),
        ("train.torch_threads", "-1", r"train\.torch_threads must be >= 0, got -1"),
        ("train.num_steps", "0", r"train\.num_steps must be >= 1, got 0"),
        ("vec.num_envs", "0", r"vec\.num_envs must be >= 1, got 0"),
        ("vec.worker_timeout", "0", r"vec\.worker_timeout must be > 0, got 0\.0"),
        ("vec.worker_timeout", "inf", r"vec\.worker_timeout must be > 0, got inf"),
        ("train.num_minibatches", "0", r"train\.num_minibatches must be >= 1"),
        ("train.update_epochs", "0", r"train\.update_epochs must be >= 1"),
        ("train.ent_coef", "-0.01", r"train\.ent_coef must be >= 0"),
        ("train.vf_coef", "-1", r"train\.vf_coef must be >= 0"),
        ("train.max_grad_norm", "0", r"train\.max_grad_norm must be > 0"),
        ("train.target_kl", "-1", r"train\.target_kl must be >= 0"),
        ("train.seed", "-1", r"train\.seed must be in \[0, 4294967295\]"),
        ("normalize.epsilon", "0", r"normalize\.epsilon must be > 0"),
        ("train.solve_score", "inf", r"train\.solve_score must be a finite number"),
        ("train.device", "banana", r"train\.device must be one of auto, cpu, cuda, cuda:N .* or mps"),
        ("train.device", "cuda:x", r"train\.device must be one of auto, cpu, cuda, cuda:N"),
    ],
)
def test_out_of_range_values_name_the_key_the_value_and_the_range(key, value, message):
    with pytest.raises(ConfigError, match=rf"^--{key}: {message}"):
        config.load("ocean/squared", {key: value})


def test_the_edges_of_the_ranges_and_every_device_form_are_valid():
    edges = {"train.gamma": 1, "train.gae_lambda": 0, "train.max_seconds": 0, "train.target_kl": 0}
    assert config.load("ocean/squared", edges)["train"]["gamma"] == 1.0
    assert config.load("ocean/squared", {"train.gae_lambda": 1})["train"]["gae_lambda"] == 1.0
    for device in ("auto", "cpu", "cuda", "cuda:1", "mps"):
        assert config.load("ocean/squared", {"train.device": device})["train"]["device"] == device


def test_ranges_parse_their_notation():
    assert 0.5 in config.Range.parse("(0, 1]") and 0 not in config.Range.parse("(0, 1]")
    assert 1 in config.Range.parse("(0, 1]") and 1 not in config.Range.parse("[0, 1)")
    assert -3 in config.Range.parse("<= 0") and 0 not in config.Range.parse("< 0")
    assert math.inf not in config.Range.parse("any") and 10**400 not in config.Range.parse(">= 0")
    with pytest.raises(ValueError, match="write >= a"):
        config.Range.parse("0..1")


def test_a_config_file_out_of_range_names_the_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[train]\ngae_lambda = 2.0\n")
    with pytest.raises(ConfigError, match=rf"^{path}: train\.gae_lambda must be in \[0, 1\], got 2\.0"):
        config.load("ocean/squared", config_file=path)


def test_a_config_file_that_is_not_utf8_names_the_file(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes("[train]\n# r\xe9glages\nseed = 2\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=rf"config file {path} is not UTF-8 text .*re-save it as UTF-8"):
        config.load("ocean/squared", config_file=path)


def test_a_run_dir_name_that_is_not_utf8_is_refused_and_nothing_is_made(tmp_path):
    run_dir = tmp_path / "runs" / "\udcff"  # how Python spells the byte 0xff of a file name
    with pytest.raises(ConfigError, match=r"train\.run_dir .* is not UTF-8 text .*choose a UTF-8 name"):
        train("ocean/squared", run_dir=run_dir)
    assert not (tmp_path / "runs").exists()


def test_a_bad_value_through_train_is_refused_before_a_run_dir_is_made(tmp_path):
    with pytest.raises(ConfigError, match=r"train\.learning_rate must be > 0, got -1\.0"):
        train("ocean/squared", {"train.learning_rate": -1}, run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_config_built_in_python_is_checked_by_learn():
    cfg = config.load("ocean/squared")
    cfg["train"]["gamma"] = 2.0
    with pytest.raises(ConfigError, match=r"train\.gamma must be in \(0, 1\], got 2\.0"):
        loop.learn(RunSpec("ocean/squared", cfg))


def test_eval_refuses_a_bad_device(tmp_path):
    from pufferlib.train import evaluate
    from pufferlib.train.run import checkpoint
    from pufferlib.train.setup import make_policy

    cfg = config.load("ocean/squared")
    binding = envs.get("ocean/squared")
    env = binding.make_env()
    try:
        saved = checkpoint.save(tmp_path, binding.name, cfg, make_policy(binding, env, cfg), 0, 1, None)
    finally:
        env.close()
    with pytest.raises(ConfigError, match=r"train\.device must be one of auto, cpu, cuda, cuda:N"):
        evaluate("ocean/squared", saved, episodes=1, overrides=["--train.device", "banana"])


# The rollout's memory: a lower bound from the config before the envs are built, the exact figure
# from the env's spaces before the rollout is allocated.


@pytest.mark.parametrize(("key", "value"), [("train.num_steps", "1e9"), ("vec.num_envs", "1e12")])
def test_a_rollout_beyond_memory_is_refused_with_the_figures(key, value):
    with pytest.raises(ConfigError, match=r"the rollout needs at least [\d,.]+ [KMGTP]iB .* free: lower"):
        train("ocean/squared", {key: value, "train.device": "cpu"})


def test_the_exact_rollout_size_is_checked_before_allocating():
    """Big observations (41 x 41 floats): the lower bound passes, the exact figure does not."""
    from pufferlib.train.ppo import memory

    free = memory.host_available()
    if free is None:
        pytest.skip("this host reports no free memory (no /proc/meminfo)")
    obs_bytes = 41 * 41 * 4
    steps = math.ceil(2 * free / obs_bytes)  # twice the free memory
    cfg = config.load(
        "ocean/squared",
        {"env.distance_to_target": 20, "vec.num_envs": 1, "train.num_steps": steps, "train.device": "cpu"},
    )
    with pytest.raises(
        ConfigError, match=r"the rollout needs [\d,.]+ [KMGTP]iB \(1 agent rows x [\d,]+ steps"
    ):
        loop.learn(RunSpec("ocean/squared", cfg))


def test_the_layout_is_what_is_allocated():
    from pufferlib.train.ppo import memory

    env = envs.make("ocean/squared")
    try:
        exp = rollout.Experience.allocate(env, 3, 5, "cpu", hidden=4, bptt=5)
        obs = (tuple(env.single_observation_space.shape), exp.obs.dtype)
        layout = memory.rollout_layout(3, 5, obs, rollout.action_spec(env.single_action_space), 4, 5)
    finally:
        env.close()
    tensors = [getattr(exp, name) for name in layout]
    assert memory.nbytes(layout) == sum(t.numel() * t.element_size() for t in tensors)
    assert {name: (tuple(t.shape), t.dtype) for name, t in zip(layout, tensors, strict=True)} == layout
