"""pufferlib in the lib image: the checkout's version, imports beside torch, every environment available."""

from __future__ import annotations

import json

import pytest

import pufferlib

pytestmark = pytest.mark.docker


def test_pufferlib_and_torch_import_together(lib_container):
    out = lib_container.run_and_wait(
        ["python", "-c", "import pufferlib, torch, importlib.metadata as m; print(m.version('pufferlib'))"]
    ).stdout
    assert out.strip() == pufferlib.__version__  # pufferlib/_version.py, which pyproject.toml reads


def test_puffer_envs_lists_only_available_environments(lib_container):
    envs = json.loads(lib_container.run_and_wait(["puffer", "envs", "--json"]).stdout)
    assert envs, "no environments registered"
    assert [e["name"] for e in envs if not e["available"]] == []
