"""Training config: default -> family -> env files, then overrides; clear errors for bad keys and values."""

import pytest

from pufferlib.train import config
from pufferlib.train.config import ConfigError


def test_layers_default_family_env():
    files = [p.name for p in config.config_files("ocean/memory")]
    assert files[0] == "default.toml"
    assert "ocean.toml" in files and "ocean.memory.toml" in files
    base, memory, squared = config.defaults(), config.load("ocean/memory"), config.load("ocean/squared")
    assert memory["rnn"]["enabled"] and not squared["rnn"]["enabled"]
    assert not base["rnn"]["enabled"]
    assert set(memory) == set(base)  # files only set keys that exist


def test_every_config_file_loads_and_keeps_types():
    base = config.defaults()
    for path in config.CONFIG_DIR.glob("*.toml"):
        family, _, name = path.stem.partition(".")
        cfg = config.load(f"{family}/{name or 'x'}")
        for section in ("train", "vec", "rnn"):
            for key, value in cfg[section].items():
                assert type(value) is type(base[section][key]), (path.name, section, key)


def test_cli_tokens_dashes_equals_flags_negative_numbers():
    tokens = [
        "--train.learning-rate",
        "3e-4",
        "--vec.num_envs=16",
        "--train.compile",
        "--train.solve-score",
        "-0.01",
    ]
    parsed = config.parse_args(tokens)
    assert parsed == {
        "train.learning_rate": "3e-4",
        "vec.num_envs": "16",
        "train.compile": True,
        "train.solve_score": "-0.01",
    }
    cfg = config.load("ocean/squared", tokens)
    assert cfg["train"]["learning_rate"] == 3e-4
    assert cfg["vec"]["num_envs"] == 16
    assert cfg["train"]["compile"] is True
    assert cfg["train"]["solve_score"] == -0.01


def test_dict_overrides_nested_or_dotted_and_int_spellings():
    cfg = config.load("ocean/squared", {"train": {"total_timesteps": "1e6"}, "vec.num_envs": 4.0})
    assert cfg["train"]["total_timesteps"] == 1_000_000 and isinstance(cfg["train"]["total_timesteps"], int)
    assert cfg["vec"]["num_envs"] == 4


def test_unknown_key_lists_valid_keys_and_close_match():
    with pytest.raises(
        ConfigError, match=r"unknown key train\.learning_rat\. Did you mean train\.learning_rate"
    ) as e:
        config.load("ocean/squared", ["--train.learning-rat", "1"])
    assert "Valid keys in [train]:" in str(e.value) and "num_minibatches" in str(e.value)
    with pytest.raises(ConfigError, match="unknown section 'trian'; sections: train, vec"):
        config.load("ocean/squared", {"trian.seed": 1})


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"train.learning_rate": "fast"}, "train.learning_rate expects a number"),
        ({"vec.num_envs": "2.5"}, "vec.num_envs expects an integer"),
        ({"train.compile": "maybe"}, "train.compile expects true or false"),
        ({"vec.backend": "threads"}, "vec.backend must be one of native, pufferenv, serial, multiprocessing"),
        ({"train.total_timesteps": True}, "train.total_timesteps expects an integer"),
    ],
)
def test_bad_values_name_the_key_and_what_works(override, message):
    with pytest.raises(ConfigError, match=message):
        config.load("ocean/squared", override)


def test_bare_flag_only_for_booleans():
    with pytest.raises(
        ConfigError,
        match=r"vec.num_envs expects an integer like 8 or 1e6, got True \(an option given without a value",
    ):
        config.load("ocean/squared", ["--vec.num-envs", "--train.compile"])


def test_malformed_tokens():
    with pytest.raises(ConfigError, match=r"overrides look like --section\.key value"):
        config.parse_args(["learning_rate", "3"])


def test_open_sections_take_literals_and_keep_file_types():
    cfg = config.load("ocean/password", ["--env.password-length", "6", "--policy.hidden-size", "64"])
    assert cfg["env"]["password_length"] == 6 and cfg["policy"]["hidden_size"] == 64
    cfg = config.load("ocean/password", ["--env.name", "abc", "--env.scale", "0.5", "--env.flag", "true"])
    assert cfg["env"] == {**config.load("ocean/password")["env"], "name": "abc", "scale": 0.5, "flag": True}


def test_print_config_round_trips():
    import tomllib

    cfg = config.load("ocean/memory", ["--train.seed", "7"])
    assert tomllib.loads(config.to_toml(cfg)) == cfg
