"""Neural MMO (nmmo/<config>): a massively multi-agent survival game (PettingZoo), one row per agent.

Ids are nmmo's config presets with every game system on (terrain, resources, combat, NPCs,
progression, items, equipment, professions, the exchange, communication):

- `Small`: 64 agents on a 64x64 map (32x32 playable), 128-tick horizon;
- `Medium`: 128 agents on a 160x160 map (128x128 playable), 1024 ticks (nmmo's `Default`).

`num_agents=` (PLAYER_N) and any other nmmo config attribute (upper case, e.g. `HORIZON=256`,
`NPC_N=8`) may be passed to make_env; they are set on the preset before the env is made.

Spaces: each agent sees a Dict that PufferLib flattens into one uint8 row (29,768 bytes): `Tile`
(225, 3) int16 (the 15x15 tiles around it: row, column, material), `Entity` (100, 31) int16 (the
agents and NPCs in sight), `Inventory` (12, 16), `Market` (384, 16), `Communication` (32, 4),
`Task` (4096,) float16 (the task's embedding), `CurrentTick`, `AgentId`, and `ActionTargets`: one 0/1
mask per action argument (which targets, items, prices and directions are legal now). Actions are
nmmo's nested Dict flattened to MultiDiscrete [3 101 385 127 13 13 101 99 101 5 13 99 13] (attack
style and target, buy, comm token, destroy, give item and target, give-gold price and target, move
direction, sell item and price, use), in the same order as the masks; the default policy
(pufferlib.environments.support.policies:NMMO) masks its logits with them.

Population: agents die (starvation, combat, NPCs) and do not respawn within an episode; a dead
agent's row stays, zeroed and masked (`env.masks` False), until the next reset. The episode ends
when every agent is gone (terminals) or at the horizon (truncations). Reward: nmmo's default task
per agent, survival (TickGE(HORIZON)): 1/HORIZON for each tick alive. Infos at each game's end: the
episode return and length, and nmmo's per-task `task/.../reward` and `.../completed`.

Seeding: full. `reset(seed)` regenerates the map from its fractal and spawns agents from the seed.
nmmo writes the maps it generates to disk: each env gets a temporary folder of its own (removed when
the env is collected, or at exit), not nmmo's default `maps/` under the working directory.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from typing import Any

from pufferlib import APIUsageError, PufferEnv
from pufferlib.emulation import PettingZooPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog

# id -> (nmmo preset class name, description)
ENVS = {
    "Small": ("Small", "64 agents, 64x64 map, 128 ticks, every game system"),
    "Medium": ("Medium", "128 agents, 160x160 map, 1024 ticks, every game system (nmmo's Default)"),
}


def config(name: str, num_agents: int | None = None, **overrides: Any):
    """An nmmo config: the preset `name` with every game system, in a fresh temporary maps folder."""
    import nmmo

    if name not in ENVS:
        raise ValueError(f"Unknown Neural MMO config {name!r}; one of {', '.join(ENVS)}")
    preset = getattr(nmmo.config, ENVS[name][0])
    cls = type(f"PufferNMMO{name}", (preset, nmmo.config.AllGameSystems), {})
    cfg = cls()
    if num_agents is not None:
        if int(num_agents) < 1:
            raise APIUsageError(f"nmmo/{name}: num_agents must be >= 1, got {num_agents}")
        overrides["PLAYER_N"] = int(num_agents)
    for key, value in overrides.items():
        if not key.isupper() or not hasattr(cfg, key):
            raise ValueError(
                f"nmmo/{name}: unknown option {key!r}; pass num_agents= or an nmmo config attribute "
                "in upper case (e.g. HORIZON=256)"
            )
        cfg.set(key, value)
    cfg.set("PATH_MAPS", tempfile.mkdtemp(prefix="pufferlib-nmmo-maps-"))
    return cfg


def make_env(name: str, buf: Any = None, seed: int = 0, **kwargs: Any) -> PufferEnv:
    """A Neural MMO env of preset `name`; kwargs: num_agents= and nmmo config attributes (upper case)."""
    import nmmo

    cfg = config(name, **kwargs)
    try:
        game = nmmo.Env(cfg, seed=seed)
    except BaseException:
        shutil.rmtree(cfg.PATH_MAPS, ignore_errors=True)
        raise
    env = PettingZooPufferEnv(env=game, buf=buf, seed=seed)
    env.maps_dir = cfg.PATH_MAPS
    weakref.finalize(env, shutil.rmtree, cfg.PATH_MAPS, True)  # when the env is collected, or at exit
    return env


members = Members(
    "nmmo",
    make_env,
    policy="pufferlib.environments.support.policies:NMMO",
    multiagent=True,
    requires=("nmmo",),
    hint="pip install 'pufferlib[nmmo]' && pip install --no-deps nmmo==2.1.1 (it pins numpy 1.23; "
    "docs/environments.md, Neural MMO)",
    smoke=SmokeSpec(steps=64, seconds=180.0),
)
env_creator = members.env_creator  # PufferLib's env_creator(name)


def _binding(name: str) -> Binding:
    return members.bind(
        name,
        description=f"Neural MMO: {ENVS[name][1]}",
    )


# The registered set (exercised by the integration matrix): the small preset, 64 agents; Medium is made
# the same way on demand.
REGISTERED = ("Small",)
register_catalog(members.family, tuple(ENVS), _binding, registered=REGISTERED)
