"""The environment families, once: the table every other list of families is derived from or checked against.

One row per family module of `pufferlib/environments/` (in registration order): its pip extra, the
packages the envs image installs for it, the distributions whose versions the matrix report shows, and
the build-time check (docker/check_envs.py) that proves it works in the image.

Why a Python module and not a TOML or text file: it is standard library only and lives inside the
package, so it is importable from a checkout and from an install (no package-data entry, no path to
find), and `python pufferlib/environments/families.py image-packages` prints the install list for a shell
with no pufferlib installed (this file alone, loaded by path, as setup.py loads ocean/native/build.py).
What cannot read this module directly is checked against it by tests/unit/envs/test_families.py, which goes
red on any mismatch:

- `pufferlib/environments/__init__.py` imports the family modules from `FAMILIES` (derived);
- `pufferlib.smoke.versions()` reports `reported()` after the core stack (derived);
- pyproject.toml's extras are static: every row's `extra` exists there, names only this row's packages
  (or the core and base-image ones), and `common` holds every extra but those marked `common=False`;
- tests/run.sh runs `venv_steps()` (the script form below) for the families outside `common`;
- docker/install-envs.sh installs `image_packages()` and `no_deps_packages()` (its PACKAGES and
  NO_DEPS arrays, read by bash in the test), and docker/constraints/envs.txt pins each of them;
- docker/check_envs.py has a check named in every row's `checks`;
- every registered binding of a family carries the row's extra.

Those two docker scripts run in the envs stage of the image build, where only docker/ is mounted and
pufferlib is not installed yet: they keep their own lists until Dockerfile.envs mounts this file (and
tank/build/plan.py hashes it into the envs tag); then install-envs.sh can call the script form below.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Family:
    module: str  # pufferlib/environments/<module>.py
    extra: str = ""  # pip install 'pufferlib[<extra>]' ("": nothing beyond pufferlib itself)
    image: tuple[str, ...] = ()  # pip names docker/install-envs.sh installs (resolved together)
    no_deps: tuple[str, ...] = ()  # pip names installed --no-deps (their runtime deps are in `image`)
    reported: tuple[str, ...] = ()  # distributions whose versions the matrix report shows
    checks: tuple[str, ...] = ()  # docker/check_envs.py check names that prove the family in the image
    common: bool = True  # in pyproject's `common` extra (craftax is not: it names plain pygame; nor nmmo)
    # tests/run.sh's pip steps for a family outside `common`, after the main install: one `pip install`
    # argument line each, pinned by docker/constraints/base.txt and envs.txt; {repo} is the checkout
    venv: tuple[str, ...] = ()


FAMILIES: tuple[Family, ...] = (  # a table of data: one row per family
    Family("ocean"),
    Family("ocean_native"),
    Family("classic_control", "classic", checks=("gymnasium (classic control)",)),
    Family("minigrid", "minigrid", ("minigrid",), reported=("minigrid",), checks=("minigrid",)),
    Family(
        "procgen",
        "procgen",
        ("procgen2", "gym"),
        reported=("procgen2",),
        checks=("procgen2 (procgen)", "gym (legacy, for procgen and griddly)"),
    ),
    Family("nethack", "nethack", ("nle",), reported=("nle",), checks=("nle (NetHack)",)),
    Family("minihack", "minihack", ("minihack", "nle"), reported=("minihack",), checks=("minihack",)),
    Family(
        "butterfly",
        "butterfly",
        ("pygame-ce", "pymunk"),
        reported=("pygame-ce",),
        checks=("pettingzoo butterfly",),
    ),
    Family("atari", "atari", ("ale-py",), reported=("ale-py",), checks=("ale-py (Atari)",)),
    Family(
        "box2d", "box2d", ("Box2D",), reported=("Box2D",), checks=("box2d (Box2D, CarRacing on pygame-ce)",)
    ),
    Family(
        "mujoco",
        "mujoco",
        ("mujoco", "imageio", "packaging"),
        reported=("mujoco",),
        checks=("mujoco (gymnasium MuJoCo v5, headless render)",),
    ),
    Family(
        "dm_control",
        "dm_control",
        ("dm-control", "mujoco", "shimmy"),
        reported=("dm_control", "shimmy"),
        checks=("dm_control (suite, headless render)", "shimmy (dm_control adapter)"),
    ),
    Family("metaworld", "metaworld", ("metaworld",), reported=("metaworld",), checks=("metaworld (MT1)",)),
    Family("vizdoom", "vizdoom", ("vizdoom",), reported=("vizdoom",), checks=("vizdoom",)),
    Family("magent2", "magent2", ("magent2",), reported=("magent2",), checks=("magent2",)),
    Family("open_spiel", "open_spiel", ("open-spiel",), reported=("open-spiel",), checks=("open-spiel",)),
    Family("crafter", "crafter", ("crafter",), reported=("crafter",), checks=("crafter",)),
    Family(
        "craftax",
        "craftax",
        ("jax", "jaxlib", "msgpack", "PyYAML"),  # flax's runtime deps (it installs --no-deps)
        no_deps=("craftax", "flax"),
        reported=("craftax", "jax"),
        checks=("craftax (CPU JAX)",),
        common=False,
        venv=("--no-deps craftax",),  # without its plain-pygame requirement (pygame-ce is installed)
    ),
    Family(
        "bsuite",
        "bsuite",
        # bsuite's runtime deps (it installs --no-deps; matplotlib comes with the researcher tooling)
        ("absl-py", "dm-env", "immutabledict", "six", "termcolor", "scikit-image", "pandas", "scipy"),
        no_deps=("bsuite",),
        reported=("bsuite",),
        checks=("bsuite",),
    ),
    Family("highway", "highway", ("highway-env",), reported=("highway-env",), checks=("highway-env",)),
    Family(
        "griddly",
        "griddly",
        ("griddly",),
        reported=("griddly",),
        checks=("griddly (vector and Vulkan sprites)",),
    ),
    Family(
        "retro",
        "retro",
        ("stable-retro",),
        reported=("stable-retro",),
        checks=("stable-retro (Airstriker-Genesis)",),
    ),
    Family(
        "slimevolley",
        "slimevolley",
        ("slimevolleygym", "gym", "opencv-python-headless"),
        reported=("slimevolleygym",),
        checks=("slimevolleygym (Slime Volleyball)",),
    ),
    Family(
        "pokemon_red",
        "pokemon_red",
        ("pyboy",),
        reported=("pyboy",),
        checks=("pyboy (Pokémon Red binding, generated test ROM)",),
    ),
    Family(
        "microrts",
        "microrts",
        ("JPype1",),
        no_deps=("gym-microrts",),  # it requires gym<0.19; it runs on gym 0.26 (only its jars are used)
        reported=("gym-microrts", "JPype1"),
        checks=("gym-microrts (MicroRTS on the JVM, masks)",),
        common=False,  # its gym<0.19 requirement clashes with procgen's gym 0.26: installed --no-deps
        venv=("JPype1", "--no-deps gym-microrts"),
    ),
    Family(
        "nmmo",
        "nmmo",
        # nmmo's runtime deps (it installs --no-deps: it pins numpy, gymnasium, pettingzoo, scipy and its
        # test tools); vec-noise (an sdist with C code) is built into a wheel in Dockerfile.envs
        ("ordered-set", "dill", "vec-noise"),
        no_deps=("nmmo",),
        reported=("nmmo",),
        checks=("nmmo (Neural MMO)",),
        common=False,  # nmmo itself installs --no-deps, after the extra (tests/run.sh)
        # vec-noise built the legacy way (its setup.py fails under PEP 517), nmmo without its pins
        # (numpy==1.23.3, gymnasium==0.29.1, ...), then its runtime deps (the extra)
        venv=(
            "wheel cython",
            "--no-deps --no-use-pep517 vec-noise",
            "--no-deps --no-build-isolation nmmo",
            "-e {repo}[nmmo]",
        ),
    ),
    Family(
        "kinetix",
        "kinetix",
        # kinetix's runtime deps (kinetix-env requires its training stack, which the env never imports: it
        # installs --no-deps, with its env's own packages); seaborn: gymnax imports it; flatbuffers: the
        # jax.export files kinetix_jax.py keeps its programs in
        ("jax", "jaxlib", "chex", "seaborn", "flatbuffers"),
        no_deps=("kinetix-env", "jax2d", "jaxgl", "gymnax", "flax"),
        reported=("kinetix-env", "jax2d"),
        checks=("kinetix-env (Kinetix random levels, exported JAX programs)",),
        common=False,  # kinetix-env and the env packages install --no-deps, after the extra (tests/run.sh)
        venv=("-e {repo}[kinetix]", "--no-deps kinetix-env jax2d jaxgl gymnax"),
    ),
    Family("dm_lab"),  # catalogued as unavailable: no Python 3.11 build (dm_lab.py)
)


def _unique(names) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def modules() -> tuple[str, ...]:
    """The family modules, in registration order."""
    return tuple(f.module for f in FAMILIES)


def image_packages() -> tuple[str, ...]:
    """Every family's packages the envs image installs with their requirements, once each."""
    return _unique(name for f in FAMILIES for name in f.image)


def no_deps_packages() -> tuple[str, ...]:
    """The families' packages the envs image installs without their declared requirements."""
    return _unique(name for f in FAMILIES for name in f.no_deps)


def reported() -> tuple[str, ...]:
    """The distributions whose versions the matrix report shows for the families, once each."""
    return _unique(name for f in FAMILIES for name in f.reported)


def venv_steps(repo: str = str(Path(__file__).resolve().parents[2])) -> tuple[str, ...]:
    """tests/run.sh's pip argument lines for the families outside `common`, in table order."""
    return tuple(step.replace("{repo}", repo) for f in FAMILIES for step in f.venv)


def main(argv: list[str]) -> int:
    """`families.py image-packages|no-deps-packages|modules|venv-steps`: one a line (for shell scripts)."""
    lists = {
        "image-packages": image_packages,
        "no-deps-packages": no_deps_packages,
        "modules": modules,
        "venv-steps": venv_steps,
    }
    if len(argv) != 1 or argv[0] not in lists:
        print(f"usage: families.py {'|'.join(lists)}", file=sys.stderr)
        return 2
    print("\n".join(lists[argv[0]]()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
