"""DeepMind Lab (dm_lab/<level>): catalogued, unavailable on this stack (Python 3.11), and why.

`puffer envs --all` lists these levels with the reason; make() raises it. The facts (checked with
pip against PyPI and the build's package mirrors, docs/environments.md "DeepMind Lab"):

- PyPI has no `deepmind-lab` distribution at all; DeepMind ships none (its own README builds a wheel
  from source with Bazel).
- `dmlab-gym` (0.1.0, 0.1.1, 0.2.0, the only wheels on the index) all require Python >= 3.13; there is
  no cp311 wheel (`pip download --python-version 3.11 --only-binary=:all: dmlab-gym`: "Ignored the
  following versions that require a different python version").
- A build from source needs Bazel, which fetches its toolchain and about a dozen third-party archives
  (ioquake3's engine, LuaJIT, zlib, libpng, glib, SDL, ...) over the network at build time: no
  self-contained build exists for the image's offline, pinned layers.
"""

from __future__ import annotations

from pufferlib.environments.registry import register_unavailable

REASON = (
    "no Python 3.11 build exists: PyPI has no deepmind-lab, dmlab-gym's wheels need Python >= 3.13, and "
    "the source build runs Bazel, which downloads its dependencies (docs/environments.md, DeepMind Lab)"
)
# A few of DeepMind Lab's own level names (game_scripts/levels), as a user would ask for them.
LEVELS = (
    "seekavoid_arena_01",
    "nav_maze_static_01",
    "nav_maze_random_goal_01",
    "lt_chasm",
    "explore_goal_locations_small",
    "rooms_watermaze",
)


make_env, env_creator = register_unavailable(
    "dm_lab",
    LEVELS,
    REASON,
    requires=("deepmind_lab",),
    describe=lambda name: f"DeepMind Lab level {name} (first-person 3-D; unavailable on Python 3.11)",
)
