"""Builds go through a BuildKit-capable docker client found at runtime, not the first `docker` on PATH."""

from __future__ import annotations

import pytest

from pufferlib.tank.build.buildkit import candidate_clis, client_version, find_build_cli, probe_cli

pytestmark = pytest.mark.docker


def test_a_buildkit_client_is_found():
    cli = find_build_cli()
    assert cli.kind in ("buildx", "docker-buildkit")
    if cli.kind == "docker-buildkit":
        assert dict(cli.env) == {"DOCKER_BUILDKIT": "1"}
        assert int(cli.version.split(".")[0]) < 23


def test_clients_without_buildx_from_23_on_are_skipped():
    # e.g. a 28.x client with no buildx plugin: DOCKER_BUILDKIT=1 fails there ("buildx component is missing")
    for path in candidate_clis():
        version = client_version(path) or "0"
        probed = probe_cli(path)
        if probed is not None and probed.kind == "docker-buildkit":
            assert int(version.split(".")[0]) < 23, (path, version)
