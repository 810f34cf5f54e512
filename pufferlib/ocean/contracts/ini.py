"""A PufferLib `.ini` (`[base]`, `[env]`, `[vec]`, `[train]`, `[policy]`, `[rnn]`, `[sweep*]`) mapped onto our
training config, key by key where the keys mean the same; every other key is listed, once, in `unmapped`.

A PufferLib 3.0 env's .ini is read over PufferLib 3.0's own `config/default.ini` (PL3_DEFAULTS: its
optimizer, rates, coefficients and geometry, which every env's .ini leaves to it), so `puffer train` runs
what its author tuned: Muon at the .ini's rate, 64 steps a row, one epoch. A 4.0 env's .ini is read alone.

Mapped (theirs -> ours):
- `[env] num_envs` (instances in one env object) -> `vec.num_envs` (instances in our one native PufferEnv);
  every other `[env]` key -> `env.<key>` (the game's kwargs).
- `[train]` keys of the same name and meaning (TRAIN_SAME); `optimizer` (muon or adam) -> `train.optimizer`
  (our Muon steps the 2-D weights at `learning_rate` and the rest with Adam at `train.muon_adam_lr`);
  `learning_rate` only where the optimizer is named (a Muon rate is not an Adam rate); `batch_size` and
  `minibatch_size` -> `num_steps` (batch / agent rows; `auto` = `bptt_horizon` steps) and `num_minibatches`
  (batch / minibatch).
- `[base] rnn_name` -> `rnn.enabled` (None -> false); `[policy] hidden_size` -> `policy.hidden_size`, and
  with 3.0's defaults `policy.num_layers = 1` (its Default policy: one hidden layer, 128 wide).
The section is always run natively here (`vec.backend = "native"`): one process steps every instance.
"""

from __future__ import annotations

import ast
import configparser
from pathlib import Path
from typing import Any, NamedTuple

TRAIN_SAME = (
    "total_timesteps",
    "learning_rate",
    "gamma",
    "gae_lambda",
    "update_epochs",
    "clip_coef",
    "vf_coef",
    "ent_coef",
    "max_grad_norm",
    "anneal_lr",
    "seed",
    "bptt_horizon",
    "checkpoint_interval",
    "compile",
)
OPTIMIZERS = ("muon", "adam")  # the [train] optimizer values both sides have
# PufferLib 3.0.0's config/default.ini, the keys mapped here (a test reads them from the pinned sdist).
PL3_DEFAULTS: dict[str, dict[str, Any]] = {
    "train": {
        "optimizer": "muon",
        "learning_rate": 0.015,
        "anneal_lr": True,
        "gamma": 0.995,
        "gae_lambda": 0.90,
        "update_epochs": 1,
        "clip_coef": 0.2,
        "vf_coef": 2.0,
        "max_grad_norm": 1.5,
        "ent_coef": 0.001,
        "batch_size": "auto",
        "minibatch_size": 8192,
        "bptt_horizon": 64,
    },
    "policy": {"hidden_size": 128, "num_layers": 1},  # its models.Default: one hidden layer
}


class Mapped(NamedTuple):
    config: dict[str, dict[str, Any]]  # section -> key -> value, as our config's layers are
    unmapped: list[str]  # "[section] key = value (why)", one line each


def value(text: str) -> Any:
    """An .ini value as Python: numbers, lists, True/False, None (any case), else the text."""
    text = text.strip()
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    try:
        return ast.literal_eval(text)  # numbers (1_000, +0.5, 2e-3) and lists ([8]), as PufferLib reads them
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def read(path: Path) -> dict[str, dict[str, Any]]:
    parser = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=("#", ";"))
    parser.optionxform = str  # keys keep their case
    parser.read_string(path.read_text())
    return {section: {k: value(v) for k, v in parser[section].items()} for section in parser.sections()}


def mapped(path: Path, agents_per_env: int = 1, defaults: dict[str, dict[str, Any]] | None = None) -> Mapped:
    """The config layer `path` gives over `defaults` (PL3_DEFAULTS for a 3.0 env), and what it leaves out
    (see the module docstring)."""
    ini = read(path)
    for section, values in (defaults or {}).items():
        ini[section] = {**values, **ini.get(section, {})}
    config: dict[str, dict[str, Any]] = {"vec": {"backend": "native"}, "train": {}, "env": {}}
    unmapped: list[str] = []

    def skip(section: str, key: str, val: Any, why: str) -> None:
        unmapped.append(f"[{section}] {key} = {val} ({why})")

    for key, val in ini.get("env", {}).items():
        if key == "num_envs":
            config["vec"]["num_envs"] = int(val)
        else:
            config["env"][key] = val
    train = ini.get("train", {})
    optimizer = str(train.get("optimizer", "")).lower()
    for key, val in train.items():
        if key == "optimizer":
            if optimizer in OPTIMIZERS:
                config["train"]["optimizer"] = optimizer
            else:
                skip("train", key, val, f"ours are {' and '.join(OPTIMIZERS)}")
        elif key == "learning_rate" and optimizer not in OPTIMIZERS:
            skip("train", key, val, "for an optimizer not named here: ours stays at its own rate")
        elif key in TRAIN_SAME:
            config["train"][key] = val
        elif key not in ("batch_size", "minibatch_size"):
            skip("train", key, val, "no such setting here")
    rows = config["vec"].get("num_envs", 8) * max(1, agents_per_env)
    horizon = int(train.get("bptt_horizon", 64))
    batch = train.get("batch_size", "auto")
    batch = rows * horizon if batch == "auto" else int(batch)
    if "batch_size" in train or "bptt_horizon" in train:
        config["train"]["num_steps"] = max(1, batch // rows)
    if isinstance(train.get("minibatch_size"), int):
        config["train"]["num_minibatches"] = max(1, batch // train["minibatch_size"])
    for key, val in ini.get("base", {}).items():
        if key == "rnn_name":
            config["rnn"] = {"enabled": val is not None}
        else:
            skip("base", key, val, "named by the binding here")
    for key, val in ini.get("policy", {}).items():
        if key in ("hidden_size", "num_layers"):
            config.setdefault("policy", {})[key] = val
        else:
            skip("policy", key, val, "not a setting of our default policy")
    for key, val in ini.get("vec", {}).items():
        skip("vec", key, val, "one native PufferEnv steps every instance here")
    for key, val in ini.get("rnn", {}).items():
        skip("rnn", key, val, "our LSTM is as wide as policy.hidden_size")
    sweeps = [s for s in ini if s.startswith("sweep")]
    if sweeps:
        unmapped.append(f"[{', '.join(sweeps)}] ({len(sweeps)} sections: use puffer sweep --param)")
    return Mapped({k: v for k, v in config.items() if v}, unmapped)
