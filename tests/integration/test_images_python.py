"""Python 3.11 from Debian 12, in the venv /opt/venv, first on PATH, with consistent packages."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _repo import REPO

pytestmark = pytest.mark.docker


def test_python_is_311_in_the_venv(lib_container):
    out = lib_container.run_and_wait(
        ["python", "-c", "import json, sys; print(json.dumps([list(sys.version_info[:2]), sys.prefix]))"]
    ).stdout
    assert json.loads(out) == [[3, 11], "/opt/venv"]


DOCKER = REPO / "docker"
# install-envs.sh's own `pip check` filter (check_requirements: less the "# unmet: " lines of
# docker/constraints/envs.txt and lib.txt), run in the image on its real pip: the build's rule, not a
# copy of it.
CHECK = "source /tmp/puffertank-docker/install-envs.sh && check_requirements"


def _check(lib_container, before: str = "") -> Any:
    return lib_container.run_and_wait(
        ["bash", "-c", f"{before}{CHECK}"],
        volumes={str(DOCKER): {"bind": "/tmp/puffertank-docker", "mode": "ro"}},
        expect=None,
    )


def test_pip_check_is_clean(lib_container):
    result = _check(lib_container)
    assert result.exit_code == 0, result
    assert "install-envs: pip check clean" in result.stdout, result


def test_pip_check_goes_red_on_a_requirement_envs_txt_does_not_accept(lib_container):
    """A throwaway container loses a package gymnasium requires: the same filter fails and names it."""
    result = _check(lib_container, "pip uninstall -q -y cloudpickle && ")
    assert result.exit_code == 1, result
    assert "requires cloudpickle, which is not installed" in result.stderr, result
    assert "docker/constraints/envs.txt" in result.stderr, result
