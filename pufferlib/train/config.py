"""Training configuration: TOML defaults per environment, then command-line overrides.

For env `family/name` the layers are, later winning:

    config/default.toml -> config/<family>.toml -> config/<family>.<name>.toml
        -> a config file (`puffer train --config FILE`, e.g. a run's config.toml) -> overrides

A config is a dict of sections (`train`, `vec`, `rnn`, `policy`, `env`) of dicts. The keys of
`train`, `vec` and `rnn` are fixed by default.toml, and every value must keep its default's type:
a typo or a bad value is an error that names the key and what would work. Every numeric key's
valid values are declared once, in RANGES below, and checked as each layer is applied (and by
`check`, for a config built in Python); so are train.device's forms (PATTERNS) and the choices of
string keys (CHOICES). `policy` and `env` are free-form keyword arguments of the policy class and the
environment.

Overrides come as `--section.key value` tokens from the command line (dashes or underscores,
`--section.key=value` too, a bare `--train.compile` means true) or as a dict for the Python API:
`{"train.learning_rate": 3e-4}` or `{"train": {"learning_rate": 3e-4}}`.
"""

from __future__ import annotations

import copy
import difflib
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONFIG_DIR = Path(__file__).parent / "configs"
OPEN_SECTIONS = ("policy", "env")
CHOICES = {
    ("vec", "backend"): ("native", "pufferenv", "serial", "multiprocessing", "ray"),
    ("train", "solve_metric"): ("return", "win_rate", "wins", "score"),
    ("train", "precision"): ("fp32", "bf16"),  # precision.py
    ("train", "optimizer"): ("adam", "muon"),  # ppo/optimizer.py
}
PATTERNS = {
    ("train", "device"): (r"auto|cpu|mps|cuda(:\d+)?", "auto, cpu, cuda, cuda:N (a GPU index) or mps"),
}
# The valid values of every numeric key of default.toml (tests/unit/train/test_train_config_ranges.py
# holds every key to one): ">= a", "> a", "<= b", an interval "[a, b]" / "(a, b]" / ..., or "any"
# (any finite number). A key the config lacks (the config of an older run) is not checked.
RANGES = {
    "train.seed": "[0, 4294967295]",  # numpy's seed range
    "train.torch_threads": ">= 0",
    "train.total_timesteps": ">= 1",
    "train.max_seconds": ">= 0",
    "train.solve_window": ">= 1",
    "train.solve_score": "any",
    "train.num_steps": ">= 1",
    "train.learning_rate": "> 0",
    "train.muon_momentum": "[0, 1)",
    "train.muon_adam_lr": "> 0",
    "train.gamma": "(0, 1]",
    "train.gae_lambda": "[0, 1]",
    "train.num_minibatches": ">= 1",
    "train.update_epochs": ">= 1",
    "train.clip_coef": "> 0",
    "train.ent_coef": ">= 0",
    "train.vf_coef": ">= 0",
    "train.max_grad_norm": "> 0",  # the clip scales every gradient by max_grad_norm / norm: 0 learns nothing
    "train.target_kl": ">= 0",
    "train.bptt_horizon": ">= 1",
    "train.checkpoint_interval": ">= 0",
    "train.checkpoint_minutes": ">= 0",
    "train.keep_checkpoints": ">= 0",  # 0 = keep all
    "train.video_interval": ">= 0",  # 0 = no videos
    "train.dist_timeout": "> 0",
    "vec.num_envs": ">= 1",
    "vec.num_workers": ">= 0",
    "vec.batch_size": ">= 0",
    "vec.num_threads": ">= 1",
    "vec.worker_timeout": "> 0",
    "normalize.clip_obs": "> 0",
    "normalize.clip_reward": "> 0",
    "normalize.epsilon": "> 0",
}
TRUE, FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")
MAX_BYTES = 1 << 20  # the most read of a config file (a run's config.toml is about 3 KiB)
ENV_KEY = "env_name"  # top-level key of a config file: the env it was written for (not a setting)

Config = dict[str, dict[str, Any]]


class ConfigError(ValueError):
    """A config file or override names an unknown key or holds a value of the wrong type."""


@dataclass(frozen=True)
class Range:
    """A set of numbers as RANGES writes it: bounds, each open or closed, or none."""

    text: str
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False

    @classmethod
    def parse(cls, text: str) -> Range:
        if text == "any":
            return cls(text)
        one = re.fullmatch(r"(>=|>|<=|<) (\S+)", text)
        if one:
            op, bound = one.group(1), float(one.group(2))
            if op.startswith(">"):
                return cls(text, low=bound, low_open=op == ">")
            return cls(text, high=bound, high_open=op == "<")
        two = re.fullmatch(r"([\[(])(\S+), (\S+)([\])])", text)
        if not two:
            raise ValueError(f"range {text!r}: write >= a, > a, <= b, < b, [a, b] (or open ends) or any")
        return cls(text, float(two.group(2)), float(two.group(3)), two.group(1) == "(", two.group(4) == ")")

    def __contains__(self, value: float) -> bool:
        try:
            if not math.isfinite(value):
                return False
        except OverflowError:  # an int beyond any float
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def describe(self) -> str:
        if self.text == "any":
            return "a finite number"
        return f"in {self.text}" if self.text[0] in "[(" else self.text


_RANGES = {key: Range.parse(text) for key, text in RANGES.items()}


def check_value(section: str, key: str, value: Any, source: str) -> None:
    """ConfigError unless `value` is valid for section.key: within its range (RANGES), one of its
    choices (CHOICES), of its form (PATTERNS), and text that config.toml (UTF-8) can hold."""
    name = f"{section}.{key}"
    valid = _RANGES.get(name)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if valid is not None and number and value not in valid:
        raise ConfigError(f"{source}: {name} must be {valid.describe()}, got {value!r}")
    choices = CHOICES.get((section, key))
    if choices is not None and value not in choices:
        raise ConfigError(f"{source}: {name} must be one of {', '.join(choices)}, got {value!r}")
    pattern = PATTERNS.get((section, key))
    if pattern is not None and isinstance(value, str) and not re.fullmatch(pattern[0], value):
        raise ConfigError(f"{source}: {name} must be one of {pattern[1]}, got {value!r}")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(
                f"{source}: {name} {value!r} is not UTF-8 text (a file name's bytes?), which config.toml "
                "cannot hold: choose a UTF-8 name"
            ) from None


def check(cfg: Config, source: str = "config") -> None:
    """Every value of `cfg` valid (check_value): for a config built in Python rather than by `load`."""
    for section, values in cfg.items():
        if isinstance(values, dict):
            for key, value in values.items():
                check_value(section, key, value, source)


def config_files(env_name: str) -> list[Path]:
    """The files that configure `env_name`, most general first (only those that exist)."""
    family, _, name = env_name.partition("/")
    candidates = [
        CONFIG_DIR / "default.toml",
        CONFIG_DIR / f"{family}.toml",
        CONFIG_DIR / f"{family}.{name}.toml",
    ]
    return [path for path in candidates if path.is_file()]


def built_env_layer(env_name: str) -> list[tuple[str, dict[str, Any]]]:
    """A built env's .ini (`ocean/<name>` by `puffer build-native`, `pufferlib3/<name>` by the catalog), as
    mapped onto our sections when it was built (ocean/contracts/ini.py)."""
    from pufferlib.ocean.contracts import built, catalog

    family, _, name = env_name.partition("/")
    roots = {"ocean": None, catalog.FAMILY: catalog.catalog_home()}
    found = built(roots[family]).get(name) if family in roots else None
    if found is None or not found.config:
        return []
    return [(f"{name}.ini (mapped by puffer build-native from {found.source})", copy.deepcopy(found.config))]


def defaults() -> Config:
    with open(CONFIG_DIR / "default.toml", "rb") as f:
        return tomllib.load(f)


def load(
    env_name: str, overrides: dict[str, Any] | list[str] | None = None, config_file: str | Path | None = None
) -> Config:
    """The resolved config of `env_name`: its files, then `config_file` (a config.toml a run wrote,
    or any TOML of the same sections), then `overrides` (dict or CLI tokens)."""
    cfg = defaults()
    layers = [(str(path), read_file(path)) for path in config_files(env_name)[1:]]
    layers += built_env_layer(env_name)
    layers += [(str(config_file), read_file(config_file))] if config_file else []
    for source, layer in layers:
        layer.pop(ENV_KEY, None)
        for section, values in layer.items():
            if not isinstance(values, dict):
                raise ConfigError(f"{source}: top-level key {section!r} must be a [section]")
            for key, value in values.items():
                set_value(cfg, section, key, value, source=source)
    if isinstance(overrides, list):
        overrides = parse_args(overrides)
    for dotted, value in flatten(overrides or {}).items():
        section, _, key = dotted.partition(".")
        set_value(cfg, section, key, value, source=f"--{dotted}")
    return cfg


def flatten(overrides: dict[str, Any]) -> dict[str, Any]:
    """{"train": {"a": 1}, "vec.b": 2} -> {"train.a": 1, "vec.b": 2}."""
    out: dict[str, Any] = {}
    for key, value in overrides.items():
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def parse_args(tokens: list[str]) -> dict[str, str | bool]:
    """['--train.learning-rate', '3e-4', '--train.compile'] -> {'train.learning_rate': '3e-4', ...}."""
    out: dict[str, str | bool] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not token.startswith("--") or "." not in token:
            raise ConfigError(
                f"unexpected argument {token!r}: overrides look like --section.key value "
                "(e.g. --train.learning-rate 3e-4)"
            )
        name, eq, value = token[2:].partition("=")
        name = name.replace("-", "_")
        if eq:
            out[name] = value
        elif i + 1 < len(tokens) and not _is_option(tokens[i + 1]):
            out[name] = tokens[i + 1]
            i += 1
        else:
            out[name] = True  # a bare flag: only valid for booleans (checked by set_value)
        i += 1
    return out


def _is_option(token: str) -> bool:
    """'--x' is an option; '-1e-3' is a (negative) value."""
    if not token.startswith("-"):
        return False
    try:
        float(token)
        return False
    except ValueError:
        return True


def set_value(cfg: Config, section: str, key: str, value: Any, source: str) -> None:
    """Set cfg[section][key] = value converted to the default's type, or raise ConfigError."""
    key = key.replace("-", "_")
    if section not in cfg:
        raise ConfigError(f"{source}: unknown section {section!r}; sections: {', '.join(cfg)}")
    if not key:
        raise ConfigError(f"{source}: missing key; use --{section}.KEY VALUE")
    if section in OPEN_SECTIONS:
        old = cfg[section].get(key)
        new = _literal(value) if old is None else convert(value, old, f"{section}.{key}", source)
        check_value(section, key, new, source)
        cfg[section][key] = new
        return
    if key not in cfg[section]:
        close = difflib.get_close_matches(key, list(cfg[section]), n=3)
        hint = f" Did you mean {', '.join(f'{section}.{c}' for c in close)}?" if close else ""
        valid = ", ".join(cfg[section])
        raise ConfigError(f"{source}: unknown key {section}.{key}.{hint} Valid keys in [{section}]: {valid}")
    new = convert(value, cfg[section][key], f"{section}.{key}", source)
    new = new.lower() if (section, key) in CHOICES else new
    check_value(section, key, new, source)
    cfg[section][key] = new


def convert(value: Any, default: Any, name: str, source: str) -> Any:
    """`value` (a string from the command line or a TOML value) as the type of `default`."""
    kind = type(default).__name__
    try:
        if isinstance(default, bool):
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in TRUE + FALSE:
                return value.lower() in TRUE
            raise ValueError
        if isinstance(default, int):
            if isinstance(value, bool):
                raise ValueError
            if isinstance(value, str):
                text = value.replace("_", "").strip()
                try:
                    return int(text)
                except ValueError:
                    value = float(text)  # "1e6"
            if float(value).is_integer():
                return int(value)
            raise ValueError
        if isinstance(default, float):
            if isinstance(value, bool):
                raise ValueError
            return float(value.replace("_", "")) if isinstance(value, str) else float(value)
        if isinstance(default, str):
            if not isinstance(value, str):
                raise ValueError
            return value
    except (ValueError, TypeError, OverflowError):
        pass
    else:
        return value
    example = {"bool": "true or false", "int": "an integer like 8 or 1e6", "float": "a number like 3e-4"}
    hint = " (an option given without a value?)" if value is True else ""
    raise ConfigError(f"{source}: {name} expects {example.get(kind, kind)}, got {value!r}{hint}")


def _literal(value: Any) -> Any:
    """A command-line string as the TOML value it spells (6 -> int, 0.5 -> float, true -> bool)."""
    if not isinstance(value, str):
        return value
    try:
        return tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return value


def read_small(path: str | Path, limit: int = MAX_BYTES) -> bytes:
    """The file's bytes, read no further than `limit`: ValueError past it (`--config /dev/zero`
    would otherwise be read until memory runs out)."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(
            f"it is larger than {limit // 1024:,} KiB, more than any config (a device or a data file?): "
            "pass a TOML config file"
        )
    return data


def read_file(path: str | Path) -> dict[str, Any]:
    """A config file's TOML, or ConfigError naming the file and what is wrong with it."""
    try:
        return tomllib.loads(read_small(path).decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {str(path)!r} does not exist") from None
    except UnicodeDecodeError as e:
        raise ConfigError(
            f"config file {path} is not UTF-8 text (byte {e.start}: {e.reason}); TOML files are UTF-8: "
            "re-save it as UTF-8"
        ) from None
    except (OSError, ValueError) as e:  # tomllib.TOMLDecodeError is a ValueError
        raise ConfigError(f"config file {path}: {e}") from None


def env_of(path: str | Path) -> str | None:
    """The env a config file was written for (its top-level `env_name`), if it names one."""
    name = read_file(path).get(ENV_KEY)
    return name if isinstance(name, str) else None


def to_toml(cfg: Config, env_name: str | None = None) -> str:
    """The config as TOML (tomli-w writes every value TOML can hold); with `env_name` first, so that
    `puffer train --config FILE` needs no ENV."""
    try:
        import tomli_w
    except ModuleNotFoundError:
        raise ConfigError("writing TOML needs tomli-w: pip install 'pufferlib[train]'") from None
    data: dict[str, Any] = {ENV_KEY: env_name} if env_name else {}
    try:
        return tomli_w.dumps({**data, **cfg})
    except TypeError as e:  # a value from the Python API that TOML has no type for (None, an object)
        raise ConfigError(f"the config holds a value TOML cannot represent: {e}") from None


def copy_config(cfg: Config) -> Config:
    return copy.deepcopy(cfg)
