"""What `puffer bench --pufferlib3 --matched` trains: its envs and the geometry both sides are set to.

An entry of `--train-envs` is one of two kinds:

- `cartpole`, `breakout` (MATCHABLE): PufferLib 3.0's `puffer_NAME` beside our own native game
  `ocean/<RAW[NAME].ours>`, at OUR config's geometry for it (`ocean.NAME.toml`);
- `pufferlib3/NAME`: PufferLib 3.0's `puffer_NAME` beside the same C env built here from its sdist
  (`pufferlib3/NAME`, pufferlib/ocean/contracts/catalog.py), at PUFFERLIB 3.0's OWN geometry for it: its
  `NAME.ini` (kept beside the built env) over its `config/default.ini` (PL3_TRAIN, PL3_HIDDEN: what
  its .ini leaves unset, e.g. 1 epoch and 64 steps a row). Agent rows are its `[env] num_envs` envs
  times the env's agents each (snake: 4 maps of 256 snakes, 1024 rows), on both sides.

Our mapped config of `pufferlib3/NAME` (ini.py) reads the same .ini over the same default.ini values, so
`puffer train pufferlib3/NAME` runs this geometry too; it is read here from the .ini, checked for the
shapes both sides can match.
"""

from __future__ import annotations

import inspect
from typing import NamedTuple

from pufferlib.bench import pufferlib3
from pufferlib.ocean.contracts import ini

MATCHABLE = ("cartpole", "breakout")  # one agent row per env, the same game and frameskip on both sides
CATALOG = "pufferlib3/"  # --train-envs pufferlib3/NAME: PufferLib 3.0's own env on both sides
# PufferLib 3.0.0's config/default.ini (ini.PL3_DEFAULTS): the geometry an env's .ini does not set, and its
# Default policy's one hidden layer and width where the .ini's [policy] names none
GEOMETRY_KEYS = ("batch_size", "bptt_horizon", "minibatch_size", "update_epochs")
PL3_TRAIN = {k: ini.PL3_DEFAULTS["train"][k] for k in GEOMETRY_KEYS}
PL3_HIDDEN, PL3_LAYERS = (ini.PL3_DEFAULTS["policy"][k] for k in ("hidden_size", "num_layers"))
BUILD_CATALOG = "python -m pufferlib.ocean.contracts.catalog build"


class Geometry(NamedTuple):
    """What both sides train with: agent rows x steps per rollout, minibatches, epochs, the MLP's size;
    `per_env`: agent rows each env instance steps (many-agent envs: rows = instances x per_env)."""

    rows: int
    steps: int
    minibatches: int
    epochs: int
    hidden: int
    layers: int = PL3_LAYERS
    per_env: int = 1

    @property
    def batch(self) -> int:
        return self.rows * self.steps

    @property
    def minibatch(self) -> int:
        return self.batch // self.minibatches

    @property
    def instances(self) -> int:
        """Env instances: PufferLib 3.0's `env.num_envs`, our `vec.num_envs`."""
        return self.rows // self.per_env


def is_catalog(label: str) -> bool:
    return label.startswith(CATALOG)


def pl3_env(label: str) -> str:
    """PufferLib 3.0's env name without `puffer_`: cartpole, pong."""
    return label.removeprefix(CATALOG)


def binding(label: str) -> str:
    """Our binding trained for `label`: ocean/<our game> or pufferlib3/NAME."""
    return label if is_catalog(label) else f"ocean/{pufferlib3.RAW[label].ours}"


def parse(text: str, flag: str = "--matched --train-envs") -> list[str]:
    """The --train-envs entries; ValueError naming the valid ones for an unknown entry. An entry of a
    catalog not built here is taken (its rows are skipped, saying how to build it: `missing`)."""
    from pufferlib.ocean.contracts import catalog

    chosen = [n for n in text.split(",") if n] if text else []
    known = catalog.read()
    valid = [*MATCHABLE, *(CATALOG + n for n in sorted(known) if known[n]["available"])]
    unknown = [
        n
        for n in chosen
        if n not in MATCHABLE
        and not (is_catalog(n) and pl3_env(n).isidentifier() and (not known or pl3_env(n) in known))
    ]
    if unknown:
        listed = (
            ", ".join(valid) if known else f"{', '.join(MATCHABLE)}, pufferlib3/NAME once {BUILD_CATALOG}"
        )
        raise ValueError(f"{flag}: unknown {', '.join(unknown)}; valid: {listed}")
    return chosen


def missing(label: str) -> str | None:
    """Why our side of `label` cannot train here (None: it can), naming what builds it."""
    if not is_catalog(label):
        return pufferlib3.native_missing(pufferlib3.RAW[label].ours)
    from pufferlib.ocean.contracts import built, catalog

    name, home = pl3_env(label), catalog.catalog_home()
    entry = catalog.read().get(name)
    if entry is None or (entry["available"] and name not in built(home)):
        return (
            f"not built yet (no {label} in the PufferLib 3.0 catalog at {home}): build it with "
            f"`{BUILD_CATALOG}`, or point PUFFER_PL3_HOME at a built one"
        )
    if not entry["available"]:
        why = f"it failed the {entry['rung']} rung of our audit: {entry['finding']}"
        return f"{label} is unavailable here: {why}"
    return None


def geometry(label: str) -> Geometry:
    """The matched geometry of `label` (module docstring); ValueError where PufferLib 3.0 cannot take it.
    A catalog env must be built (`missing` is None)."""
    return _catalog(pl3_env(label)) if is_catalog(label) else _ocean(label)


def _ocean(name: str) -> Geometry:
    """Our config's geometry for ocean/<name>'s native env."""
    from pufferlib import environments
    from pufferlib.train import config

    ours = binding(name)
    cfg = config.load(ours)
    tc, hidden = cfg["train"], cfg["policy"].get("hidden_size")
    if hidden is None:  # the policy class's default width
        hidden = inspect.signature(environments.get(ours).policy_class()).parameters["hidden_size"].default
    g = Geometry(cfg["vec"]["num_envs"], tc["num_steps"], tc["num_minibatches"], tc["update_epochs"], hidden)
    check(g, ours)
    return g


def _catalog(name: str) -> Geometry:
    """PufferLib 3.0's own geometry for puffer_<name>: its .ini over its default.ini's PL3_TRAIN, with
    the agents per env our build probed (manifest.json) at the .ini's [env] keywords."""
    from pufferlib.ocean.contracts import built, catalog

    home = catalog.catalog_home()
    source = f"{CATALOG}{name} ({name}.ini)"
    path = home / name / f"{name}.ini"
    own = ini.read(path) if path.is_file() else {}
    train, policy, env = {**PL3_TRAIN, **own.get("train", {})}, own.get("policy", {}), own.get("env", {})
    other = sorted(set(policy) - {"hidden_size"})
    if other:
        raise ValueError(
            f"{source}: its [policy] sets {', '.join(other)}, which PufferLib "
            "3.0's Default policy (the matched network) does not take: pick another env"
        )
    if "num_envs" not in env:
        raise ValueError(
            f"{source}: its [env] sets no num_envs, so its agent rows are its class's: pick another env"
        )
    per_env = built(home)[name].agents_per_env
    rows, horizon, batch = int(env["num_envs"]) * per_env, train["bptt_horizon"], train["batch_size"]
    steps = horizon if batch == "auto" else batch // rows
    if steps == "auto" or (batch != "auto" and (steps * rows != batch or horizon not in (steps, "auto"))):
        raise ValueError(
            f"{source}: batch_size {batch} is not its {rows} agent rows x bptt_horizon {horizon}, and the "
            "matched geometry is one horizon a row: pick another env"
        )
    batch, minibatch = rows * steps, train["minibatch_size"]
    if minibatch > batch or batch % minibatch:
        raise ValueError(
            f"{source}: minibatch_size {minibatch} does not divide its batch of {batch} agent steps into "
            "whole minibatches: pick another env"
        )
    hidden = policy.get("hidden_size", PL3_HIDDEN)
    g = Geometry(rows, steps, batch // minibatch, train["update_epochs"], hidden, per_env=per_env)
    check(g, source)
    return g


def check(g: Geometry, source: str) -> None:
    """ValueError naming the fix where PufferLib 3.0 cannot train at `g` (its minibatches are whole
    rows of steps; the config of `source` gave it)."""
    if g.rows % g.minibatches == 0:
        return
    if is_catalog(source):
        raise ValueError(
            f"{source}: its {g.rows} agent rows do not split into {g.minibatches} minibatches, and PufferLib "
            "3.0's minibatches are whole rows (it refuses its own config): pick another env"
        )
    raise ValueError(
        f"{source}: vec.num_envs {g.rows} does not split into train.num_minibatches {g.minibatches}, and "
        "PufferLib 3.0's minibatches are whole rows: make vec.num_envs a multiple of it"
    )
