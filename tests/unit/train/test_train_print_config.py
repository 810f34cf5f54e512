"""`--print-config` is TOML for every value a config can hold (written by tomli-w): strings with quotes
and newlines, inline tables and arrays in the free-form sections, booleans, floats; it loads back equal."""

from __future__ import annotations

import tomllib

import pytest

from pufferlib.cli import main
from pufferlib.train import config


def test_every_value_round_trips(capsys):
    overrides = [
        "--env.foo", "{a=1, b=[1, 2], c={d='x'}}",
        "--env.name", 'say "hi"\nand \\ go',
        "--policy.sizes", "[64, 64]",
        "--policy.scale", "1e-3",
        "--train.device", "cuda:0",
    ]  # fmt: skip
    assert main(["train", "ocean/squared", "--print-config", *overrides]) == 0
    text = capsys.readouterr().out
    loaded = tomllib.loads(text)  # valid TOML, or this raises
    assert loaded.pop("env_name") == "ocean/squared"
    assert loaded == config.load("ocean/squared", overrides)
    assert loaded["env"]["foo"] == {"a": 1, "b": [1, 2], "c": {"d": "x"}}
    assert loaded["env"]["name"] == 'say "hi"\nand \\ go' and loaded["policy"]["sizes"] == [64, 64]


def test_a_value_toml_cannot_hold_is_a_config_error():
    cfg = config.load("ocean/squared")
    cfg["env"]["oops"] = None  # only the Python API can put a None there
    with pytest.raises(config.ConfigError, match="TOML cannot represent"):
        config.to_toml(cfg)


def test_a_broken_config_file_names_the_file(tmp_path, capsys):
    bad = tmp_path / "config.toml"
    bad.write_text("[train]\nseed = \n")
    assert main(["train", "ocean/squared", "--config", str(bad)]) == 2
    assert f"config file {bad}" in capsys.readouterr().err
    assert main(["train", "--config", str(tmp_path / "missing.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad.write_text("[train]\nlearning_rat = 0.1\n")
    assert main(["train", "ocean/squared", "--config", str(bad)]) == 2
    assert "Did you mean train.learning_rate" in capsys.readouterr().err
