"""The registry of environment bindings: `family/name` -> how to make it, test it and learn it.

Family modules (one per family, e.g. `atari.py`) state their family once as `Members` (the name, the
`make_env`, the fields every member shares) and call `register()` or `register_catalog()` with its
bindings at import time. Registering is cheap: nothing here imports the environment packages or
torch; `available()` only asks whether the packages are installed, and `make_env()` /
`policy_class()` import them on first use.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from pufferlib import EnvironmentSetupError, PufferEnv


@dataclass(frozen=True)
class SmokeSpec:
    """How the integration matrix exercises a binding: random steps, a time budget (the container's
    hang guard) and the learn check's step budget."""

    steps: int = 256
    seconds: float = 120.0
    learn: bool = False  # run a short training run that must reach `solved`
    # The learn check's budget in agent steps; 0: the binding's train config's total_timesteps (its
    # learning-rate schedule unchanged, as the solved table trains it). Wall time is only a hang guard.
    learn_steps: int = 0
    # Config overrides for the learn check only, as ("section.key", value) pairs: for an env whose own
    # config is not ours to edit (PufferLib 3.0's .ini for pufferlib3/<name>).
    learn_overrides: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Binding:
    name: str  # "family/env"
    make: Callable[..., PufferEnv]  # make(**kwargs) -> a ready PufferEnv; module-level, so picklable
    extra: str  # the pip extra that installs it: pip install 'pufferlib[<extra>]'
    policy: str = "pufferlib.models:Default"  # "module:Class", imported lazily (torch)
    multiagent: bool = False
    requires: tuple[str, ...] = ()  # importable modules the binding needs
    smoke: SmokeSpec = field(default_factory=SmokeSpec)
    solved: float | None = None  # mean episode return that counts as solved
    description: str = ""
    seeding: str = "full"  # or a sentence saying what the env does not honour
    kwargs: dict[str, Any] = field(default_factory=dict)  # bound arguments of `make`
    # Observations that are rendered frames: the shape of one frame, e.g. (84, 84, 3); () for none. The
    # matrix's `render` check then asserts the frames have it and are not blank. The env may report which
    # renderer drew them as `env.render_backend` (a string, or a callable returning one).
    pixels: tuple[int, ...] = ()
    # Made with render_mode "rgb_array", render() returns the frames its own renderer drew (PufferLib 3.0's
    # c_render, on a private Xvfb: ocean/contracts/screen.py); the `render` check draws five and asserts
    # they are (H, W, 3) images, not flat, and change as the env steps.
    draws: bool = False
    native: bool = False  # a C Ocean env: backend native runs vec.num_envs instances in one PufferEnv
    hint: str = ""  # how to make it available when that is not a pip extra
    # Why no install can make it available here (a family catalogued, not bound: dm_lab, kinetix); "": none
    unavailable: str = ""

    @classmethod
    def of(cls, family: str, name: str, make: Callable[..., PufferEnv], **fields: Any) -> Binding:
        """`family/name`, built by `make(name=name)` and installed by the extra named after the family
        (`extra=` where it has another name); `fields` are the rest of the Binding's."""
        fields.setdefault("extra", family)
        return cls(name=f"{family}/{name}", make=make, kwargs={"name": name}, **fields)

    @property
    def family(self) -> str:
        return self.name.split("/", 1)[0]

    @property
    def install_hint(self) -> str:
        if self.hint:
            return self.hint
        return f"pip install 'pufferlib[{self.extra}]'" if self.extra else ""

    def missing(self) -> list[str]:
        """Required modules that are not installed (does not import them)."""
        return [mod for mod in self.requires if importlib.util.find_spec(mod) is None]

    def available(self) -> bool:
        return not self.unavailable and not self.missing()

    def make_env(self, **kwargs: Any) -> PufferEnv:
        if self.unavailable:
            raise EnvironmentSetupError(f"{self.name} is unavailable: {self.unavailable}")
        missing = self.missing()
        if missing:
            raise EnvironmentSetupError(
                f"{self.name} needs {', '.join(missing)}, which is not installed: {self.install_hint} "
                "(or use the PufferTank image, where every family is installed)"
            )
        return self.make(**{**self.kwargs, **kwargs})

    def env_creator(self) -> Callable[..., PufferEnv]:
        """A picklable callable that builds the env (for vector backends)."""
        return functools.partial(self.make, **self.kwargs)

    def policy_class(self) -> type:
        module, _, cls = self.policy.partition(":")
        return getattr(importlib.import_module(module), cls)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "family": self.family,
            "extra": self.extra,
            "available": self.available(),
            "multiagent": self.multiagent,
            "policy": self.policy,
            "solved": self.solved,
            "smoke": asdict(self.smoke),
            "install_hint": self.install_hint,
            "missing": self.missing(),
            "seeding": self.seeding,
            "pixels": list(self.pixels),
            "description": self.description,
            "unavailable": self.unavailable,
        }


_REGISTRY: dict[str, Binding] = {}
# PUFFERLIB_PLUGINS modules that failed to import -> why (their bindings are missing from the registry)
PLUGIN_ERRORS: dict[str, str] = {}
# family -> (every name the family can make, a function that builds the Binding for one of them).
_CATALOGS: dict[str, tuple[tuple[str, ...], Callable[[str], Binding]]] = {}


class UnknownEnvironmentError(LookupError):
    """No binding of that name; the message lists the close matches."""


def register(binding: Binding) -> Binding:
    if "/" not in binding.name:
        raise ValueError(f"binding names are 'family/name', got {binding.name!r}")
    if binding.name in _REGISTRY and _REGISTRY[binding.name] != binding:
        raise ValueError(f"binding {binding.name!r} is already registered")
    _REGISTRY[binding.name] = binding
    return binding


def register_catalog(
    family: str,
    names: tuple[str, ...],
    build: Callable[[str], Binding],
    registered: Iterable[str] = (),
) -> None:
    """Let get()/make() build any of a family's `names` on demand, after registering `build(name)` for
    each of `registered`.

    Families with many near-identical members (57 Atari games, every MiniGrid id) register a
    representative set, which the integration matrix exercises, and catalog the rest: they share
    the registered members' code path and are made the same way.
    """
    for name in registered:
        register(build(name))
    _CATALOGS[family] = (tuple(names), build)


def bindings(family: str | None = None) -> list[Binding]:
    """Every registered binding (optionally of one family), sorted by name."""
    return [b for name, b in sorted(_REGISTRY.items()) if family is None or b.family == family]


def catalog(family: str | None = None) -> list[str]:
    """Every name get() accepts: the registered bindings plus the families' catalogs, sorted."""
    names = set(_REGISTRY)
    for fam, (members, _) in _CATALOGS.items():
        names.update(f"{fam}/{member}" for member in members)
    return sorted(n for n in names if family is None or n.split("/", 1)[0] == family)


@functools.cache
def _catalogued(name: str) -> Binding:
    """Built once, kept out of the registered set (which stays what the matrix exercises)."""
    family, _, member = name.partition("/")
    return _CATALOGS[family][1](member)


def get(name: str) -> Binding:
    if name in _REGISTRY:
        return _REGISTRY[name]
    family, _, member = name.partition("/")
    if family in _CATALOGS and member in _CATALOGS[family][0]:
        return _catalogued(name)
    known = catalog()
    short = name.rsplit("/", 1)[-1].lower()
    # Registered bindings that contain the name come first (e.g. "cartpole" -> CartPole-v1 before
    # the many catalogued bsuite/cartpole/<n> settings), then the closest spellings of any name.
    registered = [n for n in sorted(_REGISTRY) if short and short in n.lower()]
    matches = list(dict.fromkeys(registered + difflib.get_close_matches(name, known, n=5, cutoff=0.5)))[:5]
    if not matches:
        matches = [n for n in known if short and short in n.lower()][:5]
    hint = f" Did you mean: {', '.join(matches)}?" if matches else ""
    failed = "".join(
        f" Plugin {plugin!r} (PUFFERLIB_PLUGINS) failed to import, so its bindings are missing: {why}."
        for plugin, why in PLUGIN_ERRORS.items()
    )
    raise UnknownEnvironmentError(
        f"Unknown environment {name!r}.{hint} `puffer envs --all` lists all {len(known)}.{failed}"
    )


def family_env_creator(family: str) -> Callable[[str], Callable[..., PufferEnv]]:
    """The `env_creator(name)` of a family module, as PufferLib's families have it.

    Each family module binds it once (`env_creator = members.env_creator`, or
    `family_env_creator("ocean")` where the module builds its Bindings itself); calling it gives
    the picklable creator of the registered or catalogued `family/name`, without importing the
    env's packages (they load when the creator is called).
    """

    def env_creator(name: str) -> Callable[..., PufferEnv]:
        return get(f"{family}/{name}").env_creator()

    env_creator.__doc__ = (
        f"The picklable creator of `{family}/<name>` (an UnknownEnvironmentError names close matches)."
    )
    return env_creator


class Members:
    """A family module's facts, stated once: the family's name, its `make_env` and the Binding fields
    all its members share. `bind(name, **fields)` is one member's Binding (its own fields over the
    shared ones); `env_creator` is the module's PufferLib `env_creator(name)`."""

    def __init__(self, family: str, make: Callable[..., PufferEnv], **shared: Any) -> None:
        self.family, self.make, self.shared = family, make, shared
        self.env_creator = family_env_creator(family)

    def bind(self, name: str, kind: type[Binding] = Binding, **fields: Any) -> Binding:
        """`family/name` as a `kind` (Binding or a subclass of it)."""
        return kind.of(self.family, name, self.make, **{**self.shared, **fields})


def _raise_unavailable(family: str, reason: str, name: str, *args: Any, **kwargs: Any) -> PufferEnv:
    raise EnvironmentSetupError(f"{family}/{name} is unavailable: {reason}")


def register_unavailable(
    family: str,
    names: tuple[str, ...],
    reason: str,
    requires: tuple[str, ...],
    describe: Callable[[str], str],
) -> tuple[Callable[..., PufferEnv], Callable[[str], Callable[..., PufferEnv]]]:
    """Catalog a family this image cannot ship, with the reason; give its `make_env` and `env_creator`.

    `puffer envs --all` lists the names with `reason`, and make() raises it (exit 2 from the CLI), so a
    user who asks for the env learns why rather than meeting an ImportError. The family module keeps the
    PufferLib surface (`make_env(name)`, `env_creator(name)`) every family module has.
    """

    make_env = functools.partial(_raise_unavailable, family, reason)  # picklable, like every creator

    def build(name: str) -> Binding:
        return Binding.of(
            family,
            name,
            make_env,
            extra="",
            requires=requires,
            unavailable=reason,
            description=describe(name),
        )

    register_catalog(family, names, build)
    return make_env, family_env_creator(family)


def make(name: str, **kwargs: Any) -> PufferEnv:
    """A ready PufferEnv for a registered binding, e.g. make('ocean/squared')."""
    return get(name).make_env(**kwargs)
