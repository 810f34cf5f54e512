"""One convention for both commands: `--version` names the version (and the git revision in a
checkout); `--json` is a flag everywhere (machine-readable stdout), never a file name (that is
`--json-file` or `--out`); `puffertank matrix` has it too."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from _repo import REPO

import pufferlib
from pufferlib.cli import build_parser as puffer_parser
from pufferlib.provenance import git_revision
from pufferlib.tank.build.plan import _project_version
from pufferlib.tank.cli import build_parser as puffertank_parser

BIN = Path(sys.executable).parent


@pytest.mark.parametrize("command", ["puffer", "puffertank"])
def test_version(command):
    out = subprocess.run([str(BIN / command), "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    revision = git_revision()
    assert revision, "the tests run from a git checkout"
    assert out.stdout.strip() == f"{command} {pufferlib.__version__} (git {revision})"


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


@pytest.mark.parametrize("tool", ["puffer", "puffertank"])
def test_json_is_a_flag_everywhere(tool):
    parser = puffer_parser() if tool == "puffer" else puffertank_parser()
    with_json = []
    for name, sub in subcommands(parser).items():
        for action in sub._actions:
            if "--json" in action.option_strings:
                assert action.nargs == 0, f"{tool} {name} --json takes a value: name it --json-file or --out"
                with_json.append(name)
    expected = {
        "puffer": {"envs", "smoke", "train", "eval", "plot", "bench"},
        "puffertank": {"matrix", "doctor"},
    }
    assert set(with_json) >= expected[tool]


def version_sources(pyproject_text: str) -> list[str]:
    """Where pyproject.toml takes the version from: [] unless from pufferlib/_version.py alone."""
    project = tomllib.loads(pyproject_text)
    problems = []
    if "version" in project["project"]:
        problems.append("pyproject.toml keeps a version of its own: make it dynamic")
    attr = project.get("tool", {}).get("setuptools", {}).get("dynamic", {}).get("version", {}).get("attr")
    if attr != "pufferlib._version.__version__":
        problems.append(f"pyproject.toml reads the version from {attr!r}, not pufferlib/_version.py")
    return problems


def test_the_version_is_kept_in_one_place(tmp_path):
    assert re.fullmatch(r"0\.\d+\.\d+", pufferlib.__version__) and pufferlib.__version__ != "0.1.0"
    text = (REPO / "pyproject.toml").read_text()
    assert version_sources(text) == []
    assert _project_version(REPO) == pufferlib.__version__  # the image label reads the same file
    # red on a second copy in pyproject.toml, and on a label that cannot find the file
    copied = text.replace('dynamic = ["version"]', 'version = "0.1.0"\ndynamic = ["version"]')
    assert version_sources(copied) == ["pyproject.toml keeps a version of its own: make it dynamic"]
    assert _project_version(tmp_path) == "0"
