"""`puffertank lab`'s checks before any engine is asked (a busy or impossible port, options that would
leave the lab unreachable: exit 2, no traceback), and how the token reaches the server: a 0600 file owned by
the server's user, in the archive put into the container, never on its command line."""

from __future__ import annotations

import io
import json
import socket
import tarfile

import pytest

from pufferlib.tank import lab
from pufferlib.tank.cli import main


def refused(capsys, *argv: str) -> str:
    assert main(["lab", "--image", "no-such/image:tag", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_a_busy_port_exits_2_naming_it_and_the_option(capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        err = refused(capsys, "--port", str(port))
    assert f"port {port} on 127.0.0.1 is in use" in err and f"--port {port + 1}" in err


def test_a_free_port_passes_the_check():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    lab.check_port("127.0.0.1", port)  # nothing listens there now: no error


@pytest.mark.parametrize("port", ["0", "70000"])
def test_an_impossible_port_exits_2(capsys, port):
    assert f"--port {port}: not a TCP port" in refused(capsys, "--port", port)


@pytest.mark.parametrize("network", ["none", "host"])
def test_a_network_without_published_ports_exits_2(capsys, network):
    assert f"--network {network}" in refused(capsys, "--network", network)


def test_publish_is_refused_for_the_lab(capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert "drop --publish" in refused(capsys, "--port", str(port), "-p", "6006")


def test_the_token_travels_in_a_private_file():
    with tarfile.open(fileobj=io.BytesIO(lab.config_archive("s3cret", 1234, 1235))) as archive:
        folder, config = archive.getmembers()
        settings = json.load(archive.extractfile(config))
    assert folder.isdir() and folder.mode == 0o700 and (folder.uid, folder.gid) == (1234, 1235)
    assert config.name == f"{lab.CONFIG_DIR.strip('/')}/{lab.CONFIG_NAME}"
    assert config.mode == 0o600 and (config.uid, config.gid) == (1234, 1235)
    assert settings["IdentityProvider"]["token"] == "s3cret"
    assert (
        settings["ServerApp"]["port"] == lab.CONTAINER_PORT
        and settings["ServerApp"]["root_dir"] == "/workspace"
    )
