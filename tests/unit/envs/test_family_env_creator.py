"""Every family module has PufferLib's `env_creator(name)`, as docs/compat.md promises.

`from pufferlib.environments.<family> import env_creator` gives the registry's picklable creator of
`<family>/<name>`; no env package is imported until the creator is called.
"""

import importlib
import pickle
import subprocess
import sys

import pytest
from _repo import REPO

import pufferlib.environments as envs

FAMILIES = [module.__name__.rsplit(".", 1)[1] for module in envs.FAMILIES]
COMPAT = REPO / "docs" / "compat.md"


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_module_has_env_creator_and_make_env(family):
    module = importlib.import_module(f"pufferlib.environments.{family}")
    name = envs.catalog(getattr(module, "FAMILY", family))[0]  # ocean_native registers ocean/<name>
    creator = module.env_creator(name.split("/", 1)[1])
    expected = envs.get(name).env_creator()
    assert (creator.func, creator.args, creator.keywords) == (expected.func, expected.args, expected.keywords)
    pickle.dumps(creator)  # for the vector backends' workers
    assert callable(module.make_env)


def test_ocean_env_creator_builds_the_env():
    from pufferlib.environments.ocean import env_creator

    env = pickle.loads(pickle.dumps(env_creator("squared")))()
    obs, _ = env.reset(seed=0)
    assert obs.shape == (1, *env.single_observation_space.shape)
    env.close()


def test_unknown_name_names_the_binding_and_close_matches():
    from pufferlib.environments.ocean import env_creator

    with pytest.raises(envs.UnknownEnvironmentError, match=r"'ocean/squard'.*ocean/squared"):
        env_creator("squard")


def test_import_stays_light():
    code = (
        "import sys; from pufferlib.environments.atari import env_creator; env_creator('breakout'); "
        "print(sorted({'torch', 'ale_py', 'minigrid', 'nle'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_compat_doc_promises_what_the_modules_have():
    row = next(line for line in COMPAT.read_text().splitlines() if "pufferlib.environments.<family>" in line)
    assert "`pufferlib.environments.<family>.make_env(name, ...)`, `env_creator(name)`" in row
