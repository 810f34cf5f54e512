"""Containers run as the non-root user puffer (UID/GID 1000 by default), who owns the venv and workspace."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.docker


def test_default_user_is_not_root(lib_container):
    out = lib_container.run_and_wait(["sh", "-c", "id -u; id -g; id -un; echo $HOME"]).stdout.split()
    assert out == ["1000", "1000", "puffer", "/home/puffer"]


def test_user_owns_venv_and_workspace(lib_container):
    out = lib_container.run_and_wait(
        ["stat", "-c", "%u:%g %n", "/opt/venv", "/opt/venv/lib/python3.11/site-packages", "/workspace"]
    ).stdout.splitlines()
    assert [line.split()[0] for line in out] == ["1000:1000"] * 3, out


def test_an_unknown_host_uid_gets_a_writable_home(lib_container):
    # `puffertank run` passes the host's UID:GID, which the image may not know: HOME must still work.
    out = lib_container.run_and_wait(
        ["sh", "-c", "id -u; touch $HOME/x && echo $HOME"], user="4242:4242"
    ).stdout
    assert out.split() == ["4242", "/tmp/home-4242"]
