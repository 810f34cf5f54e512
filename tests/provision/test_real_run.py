"""A real run of the steps that need no outside repository, then a second run that changes nothing.

Base tools, Debian's docker.io, Debian's non-free source with nvidia-driver resolved (downloaded, not
installed: a container cannot load a kernel module) and the docker group, in one Debian 12 container.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ARGS = (
    "--only",
    "base-tools,nvidia-driver,docker,docker-group",
    "--driver",
    "debian",
    "--docker",
    "debian",
    "--user",
    "researcher",
)


@pytest.fixture(scope="module")
def first_run(module_box):
    made = module_box.sh("useradd --create-home researcher")
    assert made.rc == 0, made
    return module_box.setup(*ARGS, timeout=900)


@pytest.fixture(scope="module")
def second_run(module_box, first_run):
    assert first_run.rc == 0, first_run
    return module_box.setup(*ARGS, timeout=600)


def test_first_run_succeeds_and_reports_changes(first_run) -> None:
    assert first_run.rc == 0, first_run
    for step in ("base-tools", "nvidia-driver", "docker", "docker-group"):
        assert f"{step:<15s} changed" in first_run.out, first_run
    assert "Done: " in first_run.out, first_run


def test_packages_installed(module_box, first_run) -> None:
    pkgs = "git vim tmux htop curl build-essential docker.io"
    res = module_box.sh(f"dpkg-query -W -f='${{Package}} ${{db:Status-Status}}\\n' {pkgs}")
    assert res.rc == 0, res
    for line in res.out.splitlines():
        assert line.endswith(" installed"), res


def test_nonfree_source_and_driver_resolved(module_box, first_run) -> None:
    source = module_box.sh("cat /etc/apt/sources.list.d/puffertank-debian-nonfree.list")
    assert source.rc == 0, source
    assert "signed-by=/usr/share/keyrings/debian-archive-keyring.gpg" in source.out, source
    assert "bookworm contrib non-free non-free-firmware" in source.out, source
    debs = module_box.sh("ls /var/cache/apt/archives/ | grep -E '^nvidia-driver_535\\.'")
    assert debs.rc == 0, f"nvidia-driver 535 was not downloaded:\n{debs}\n{first_run}"
    installed = module_box.sh("dpkg-query -W -f='${db:Status-Status}' nvidia-driver")
    assert installed.out.strip() != "installed", "a container must not install the kernel driver"
    assert "535 branch (CUDA <= 12.2)" in first_run.out, first_run  # the mismatch is spelled out


def test_user_added_to_docker_group(module_box, first_run) -> None:
    res = module_box.sh("id -nG researcher")
    assert "docker" in res.out.split(), res


def test_second_run_changes_nothing(second_run) -> None:
    assert second_run.rc == 0, second_run
    assert "Nothing changed: this host already matches the plan." in second_run.out, second_run
    assert " changed (" not in second_run.out, second_run
