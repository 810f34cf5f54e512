"""`puffertank build` refuses bad input with an error that names the thing and the fix (nothing is built)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.docker


def build(*args: str, env: dict | None = None):
    return subprocess.run(
        [sys.executable, "-m", "pufferlib.tank.cli", "build", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--variant", "gpu"], "invalid choice: 'gpu' (choose from 'auto', 'cpu', 'cuda')"),
        (["--stage", "middle"], "invalid choice: 'middle'"),
    ],
)
def test_bad_choices_are_usage_errors(args, message):
    res = build(*args)
    assert res.returncode == 2
    assert message in res.stderr


def test_missing_ca_file(tmp_path):
    res = build("--ca-cert", str(tmp_path / "nope.pem"))
    assert res.returncode == 2
    assert f"--ca-cert {tmp_path / 'nope.pem'}: no such file" in res.stderr
    assert "Fix:" in res.stderr


def test_ca_file_without_certificates(tmp_path):
    bogus = tmp_path / "bundle.pem"
    bogus.write_text("not a certificate\n")
    res = build("--ca-cert", str(bogus))
    assert res.returncode == 2
    assert "holds no PEM certificate" in res.stderr


def test_empty_wheelhouse(tmp_path):
    res = build("--wheelhouse", str(tmp_path))
    assert res.returncode == 2
    assert "holds no .whl files" in res.stderr


def test_unknown_cuda_version_for_a_custom_index():
    res = build("--variant", "cuda", "--torch-index", "https://example.invalid/simple")
    assert res.returncode == 1
    assert "--cuda-version" in res.stderr


def test_unpullable_non_debian_base_image():
    res = build("--stage", "base", "--base-image", "example.invalid/nothing:1")
    assert res.returncode == 1
    assert (
        "base image example.invalid/nothing:1 is not in the local engine and cannot be pulled" in res.stderr
    )


def test_unreachable_daemon():
    res = build(env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    assert res.returncode == 1
    assert "cannot reach the Docker engine at unix:///nonexistent/docker.sock" in res.stderr


def test_no_source_tree(tmp_path):
    res = build("--source", str(tmp_path))
    assert res.returncode == 1
    assert "no PufferTank source tree" in res.stderr and "--source DIR" in res.stderr
