"""`puffertank run`, `shell` and `build` check their own options before they reach for the engine.

With no engine reachable (DOCKER_HOST names no socket), a wrong option must still be the error shown: exit
2, a line naming the option and its valid form, no traceback, and not "cannot reach the Docker engine".
"""

import pytest

from pufferlib.tank.cli import main

CASES = [
    (["run", "-p", "99999", "--", "true"], "--publish '99999': ports are 1-65535"),
    (["run", "-p", "tb", "--", "true"], "--publish 'tb': not a port"),
    (["run", "--user", "bob", "--", "true"], "--user 'bob': not host, image or a numeric UID[:GID]"),
    (["run", "-e", "=x", "--", "true"], "--env '=x': no variable name"),
    (
        ["run", "-e", "PUFFERTANK_TEST_UNSET_VAR", "--", "true"],
        "--env PUFFERTANK_TEST_UNSET_VAR: not set here",
    ),
    (["run", "--shm-size", "lots", "--", "true"], "--shm-size 'lots': not a size"),
    (["shell", "--shm-size", "0"], "--shm-size '0': not a size"),
    (["run", "--timeout", "-5", "--", "true"], "--timeout -5: must be more than 0 seconds"),
    (["shell", "--stop-timeout", "-1"], "--stop-timeout -1: must be 0 seconds or more"),
    (["run", "--workspace", "/nonexistent/ws", "--", "true"], "--workspace /nonexistent/ws: not a directory"),
    (["run", "--socket-ifname", "eth0", "--", "true"], "--socket-ifname eth0 needs --network host"),
    (["run", "-p", "6006", "--network", "none", "--", "true"], "--publish with --network none"),
    (["build", "--uid", "-1"], "--uid must be a positive number (not root): got -1"),
    (["build", "--gid", "0"], "--gid must be a positive number (not root): got 0"),
    (["build", "--ca-cert", "/nonexistent/ca.pem"], "--ca-cert /nonexistent/ca.pem: no such file"),
    (["build", "--wheelhouse", "/nonexistent/wheels"], "--wheelhouse /nonexistent/wheels: no such directory"),
    (["build", "--namespace", "Bad Name"], "--namespace 'Bad Name' is not a valid image repository prefix"),
    (
        ["build", "--variant", "cuda", "--cuda-version", "twelve"],
        "--cuda-version 'twelve' is not MAJOR.MINOR",
    ),
]


@pytest.fixture(autouse=True)
def no_engine(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.delenv("PUFFERTANK_TEST_UNSET_VAR", raising=False)


@pytest.mark.parametrize(("argv", "message"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_a_wrong_option_is_named_before_the_engine_is_asked(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    command = argv[0]
    assert err.startswith(f"puffertank {command}: error: {message}"), err
    assert "\nFix: " in err and "Traceback" not in err
    assert "Docker engine" not in err


def test_good_options_do_reach_for_the_engine(capsys):
    """The control: the same command lines, fixed, fail only for want of the engine."""
    assert (
        main(["run", "-p", "6006", "--user", "1000:1000", "-e", "A=1", "--shm-size", "16g", "--", "true"])
        == 1
    )
    assert "cannot reach the Docker engine at unix:///nonexistent/docker.sock" in capsys.readouterr().err
