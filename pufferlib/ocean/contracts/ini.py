"""A PufferLib `.ini` (`[base]`, `[env]`, `[vec]`, `[train]`, `[policy]`, `[rnn]`, `[sweep*]`) mapped onto our
training config, key by key where the keys mean the same; every other key is listed, once, in `unmapped`.

Mapped (theirs -> ours):
- `[env] num_envs` (instances in one env object) -> `vec.num_envs` (instances in our one native PufferEnv);
  every other `[env]` key -> `env.<key>` (the game's kwargs).
- `[train]` keys of the same name and meaning (TRAIN_SAME; `learning_rate` only with `optimizer = adam`: a
  Muon rate, PufferLib 3.0's default, is not an Adam rate); `batch_size` and `minibatch_size` -> `num_steps`
  (batch / agent rows; `auto` = `bptt_horizon` steps) and `num_minibatches` (batch / minibatch).
- `[base] rnn_name` -> `rnn.enabled` (None -> false); `[policy] hidden_size` -> `policy.hidden_size`.
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


def mapped(path: Path, agents_per_env: int = 1) -> Mapped:
    """The config layer `path` gives, and what it leaves out (see the module docstring)."""
    ini = read(path)
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
    adam = str(train.get("optimizer", "muon")).lower() == "adam"  # PufferLib 3.0 defaults to Muon
    for key, val in train.items():
        if key == "learning_rate" and not adam:
            skip("train", key, val, "tuned for PufferLib's Muon optimizer; ours is Adam")
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
        if key == "hidden_size":
            config.setdefault("policy", {})["hidden_size"] = val
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
