"""Python 3.11 from Debian 12, in the venv /opt/venv, first on PATH, with consistent packages."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.docker


def test_python_is_311_in_the_venv(lib_container):
    out = lib_container.run_and_wait(
        ["python", "-c", "import json, sys; print(json.dumps([list(sys.version_info[:2]), sys.prefix]))"]
    ).stdout
    assert json.loads(out) == [[3, 11], "/opt/venv"]


def test_pip_check_is_clean(lib_container):
    result = lib_container.run_and_wait(["pip", "check"])
    assert "No broken requirements found" in result.stdout
